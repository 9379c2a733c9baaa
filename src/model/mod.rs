//! The plain values several layers share, the smallest of them here (a version's median per size, a
//! slope). Data and its naming only: no database access, no rules.

mod arch;
mod bisection;
pub mod control;
mod cost_shift;
mod delivery;
mod exposure;
mod failure;
pub mod metric;
mod regression;
mod root_cause;
mod summary;
mod track;

pub use arch::Architecture;
pub use bisection::{Bisection, BisectionStep};
pub use cost_shift::{BrokenContract, WhereCostWent};
pub use delivery::{AttemptOutcome, DeliveryAttempt, DeliveryDetail, DeliveryRow};
pub use exposure::{ArtifactReach, ScannedArtifact};
pub use failure::{failure_facts, stored_failure};
pub use metric::{workload_label, MetricColumn};
pub use regression::{
    with_members, NewEvent, RegressionDetail, RegressionEvent, RegressionKind, RegressionLink, RegressionNote,
    RegressionRow, RegressionStatus, RegressionWorkload, ResolvedMember, StoredMember, StoredRegression, VersionSizes,
};

pub use root_cause::{CauseKind, CausedWorkload, RootCause, RootCauses, Via};
pub use summary::{Beside, Classified, Medians, WorkloadFit, WorkloadSummary};
pub use track::{Reason, Track};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The median time at one size for a version, across its runs; for a series of instructions
/// counted, `median_ns` holds the median count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SizeMedian {
    pub size: u64,
    pub median_ns: f64,
    pub runs: usize,
}

impl SizeMedian {
    /// The time at `size` predicted from a version's per-size medians, with its interval; `None`
    /// where they are too few to fit.
    pub fn predict(sizes: &[SizeMedian], size: u64) -> Option<slopewatch_core::predict::Prediction> {
        let points: Vec<(f64, f64)> = sizes.iter().map(|m| (m.size as f64, m.median_ns)).collect();
        slopewatch_core::predict::predict(&points, size).ok()
    }
}

/// The slope of a fit with its 95% interval and R², as stored on a fit or a version summary.
#[derive(Debug, Clone, Copy, PartialEq, sqlx::FromRow)]
pub struct Slope {
    pub slope: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub r2: f64,
}
