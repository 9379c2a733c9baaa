//! The server's reads as the agent reads them: the toolchain list (`GET /api/v1/toolchains`), a
//! series (`GET /api/v1/series`) and a regression (`GET /api/v1/regressions/{id}`).
//!
//! The server builds these answers from many stored rows, in types that are its store's rows
//! (`sqlx::FromRow`) or made of them; moving them here would bring the store's row shapes into the
//! crate the agent links. So each type here is a reader's view instead: named after the schema it
//! reads, with exactly the fields the agent uses, every other field skipped. `tests/all/wire.rs` shows
//! that the answers of a real server, on both backends, and those recorded from the release before
//! capabilities read with them.

use crate::complexity::Complexity;
use serde::Deserialize;

/// The toolchain builds a server has runs of (schema `ToolchainList`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolchainList {
    pub toolchains: Vec<ToolchainRow>,
}

/// One toolchain build (schema `ToolchainRow`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolchainRow {
    /// The lineage.
    pub name: String,
    pub version: String,
}

/// One workload's slope at every version of a lineage (schema `Series`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Series {
    pub versions: Vec<SeriesVersion>,
}

/// One version of a series (schema `SeriesVersion`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SeriesVersion {
    pub version: String,
    /// None where every run of the version failed the workload.
    pub slope: Option<f64>,
    pub complexity: Option<Complexity>,
}

/// A regression with its workloads (schema `RegressionAnswer`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RegressionAnswer {
    pub regression: RegressionRow,
    pub workloads: Vec<RegressionWorkload>,
}

/// The regression itself (schema `RegressionRow`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RegressionRow {
    pub lineage: String,
    /// The first bad version.
    pub version: String,
    /// The last good version; none for a finding, over at the first version its lineage measured.
    pub previous_version: Option<String>,
}

/// One workload of a regression (schema `RegressionWorkload`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RegressionWorkload {
    pub workload: String,
}
