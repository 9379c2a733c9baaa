//! Exposure scans as the pages and answers carry them: the latest scan of an artifact at a
//! toolchain version, and an artifact a regression names because its latest scan reaches a
//! function the regression names.

use serde::Serialize;
use slopewatch_core::exposure::{Breakage, ExposedFunction, Linkage};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// The latest scan of one artifact at a toolchain version.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ScannedArtifact {
    pub scan_id: Uuid,
    /// The artifact's file name, e.g. `api-server`.
    pub artifact: String,
    /// `build-id:HEX` or `sha256:HEX`.
    pub digest: String,
    /// The libc found in the artifact, and how it is linked.
    pub libc: String,
    pub linkage: Linkage,
    pub agent_version: String,
    #[serde(with = "time::serde::rfc3339")]
    pub scanned_at: OffsetDateTime,
    /// How many functions of the catalogue it calls or references.
    pub reached: i64,
    /// Those the version breaks, worst first: those not accepted before those a team accepts. Empty
    /// for a clean artifact.
    pub exposed: Vec<ExposedFunction>,
}

impl ScannedArtifact {
    /// Whether it reaches a function the version breaks that no one accepted: the scan failed.
    pub fn fails(&self) -> bool {
        self.exposed.iter().any(|f| f.accepted.is_none())
    }
}

/// An artifact whose latest scan in a regression's lineage reaches a function the regression names.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ArtifactReach {
    pub artifact: String,
    pub digest: String,
    /// The function, as the catalogue names it.
    pub function: String,
    /// The toolchain version the scan was judged by, and when it ran.
    pub version: String,
    #[serde(with = "time::serde::rfc3339")]
    pub scanned_at: OffsetDateTime,
    /// How that version breaks the function; null where the scan found it held there.
    pub breach: Option<Breakage>,
    /// Its call sites and callers, most call sites first, where the scan listed them (for a
    /// function its version breaks); null and empty where it did not.
    pub call_sites: Option<u32>,
    pub referenced: bool,
    pub callers: Vec<String>,
    /// Why a team accepts the exposure, where it does.
    pub accepted: Option<String>,
    /// "api-server reaches strspn (4 call sites: jsonTranslateTextToBlob, sqlite3DecOrHexToI64),
    /// scanned at 0.16.0".
    pub sentence: String,
    /// The page of the version it was scanned at, which lists the scan.
    pub version_url: String,
}
