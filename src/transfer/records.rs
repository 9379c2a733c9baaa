//! The export format: JSON lines, each an object whose `kind` says what it holds.
//!
//! ```text
//! {"kind":"slopewatch_export","format":1,…}        the header, always first
//! {"kind":"token",…}                               a token's name, scope and hash
//! {"kind":"run","received_at":…,"run":{…}}         a run as submitted (`RunSubmission`)
//! {"kind":"pruned_run",…,"run":{…}}                a run whose raw samples retention removed
//! {"kind":"regression_status"|"regression_note"|"regression_link",…}   an editor's change
//! {"kind":"bisection",…,"bisection":{…}}          a bisection on a regression (`BisectionSubmission`)
//! {"kind":"exposure",…,"scan":{…}}                an artifact's exposure scan (`ExposureSubmission`)
//! {"kind":"found_probe",…,"probe":{…}}            a probe a search found (`FoundProbe`)
//! {"kind":"end","runs":…,…}                        what the file holds, always last
//! ```
//!
//! Runs and editors' changes come in the order they happened, so an import replays history;
//! bisections follow them, once every regression they belong to is there, then exposure scans by
//! receipt, and found probes last. Files written before bisections, scans or found probes were
//! carried have none and no count of them, and import as they did.

use crate::model::RegressionStatus;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use slopewatch_core::bisection::BisectionSubmission;
use slopewatch_core::exposure::ExposureSubmission;
use slopewatch_core::wire::{
    Beside, Contract, Counter, Facts, Failure, FoundProbe, Host, Measure, RunSubmission, SizeUnit, Toolchain,
};
use std::collections::BTreeMap;
use time::OffsetDateTime;
use uuid::Uuid;

/// The version of the format this build writes and the newest it reads.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    SlopewatchExport,
    Token,
    Run,
    PrunedRun,
    RegressionStatus,
    RegressionNote,
    RegressionLink,
    Bisection,
    Exposure,
    FoundProbe,
    End,
}

/// Just the kind of a line, read before the rest.
#[derive(Deserialize)]
pub struct Envelope {
    pub kind: Kind,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub kind: Kind,
    pub format: u32,
    #[serde(with = "time::serde::rfc3339")]
    pub exported_at: OffsetDateTime,
    /// The slopewatch version that wrote the file.
    pub slopewatch: String,
    /// The backend it was read from: `postgres` or `sqlite`.
    pub backend: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenRecord {
    pub kind: Kind,
    pub name: String,
    pub scope: String,
    /// The token's first characters, which find its row.
    pub prefix: String,
    /// SHA-256 of the token, hex; the token itself is never stored.
    pub hash: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_used_at: Option<OffsetDateTime>,
}

/// A run written out: the submission as the agent sent it.
#[derive(Debug, Serialize)]
pub struct RunRecordOut<'a> {
    pub kind: Kind,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    /// The digest the run was submitted with: workload order and the agent's clock offset are
    /// not stored, so it cannot be recomputed from the stored run.
    pub content_hash: &'a str,
    pub run: &'a RunSubmission,
}

/// A run read back: the submission is kept as text for `RunSubmission::from_json`, so an import
/// validates it exactly as ingest does, naming the offending field the same way.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRecordIn<'a> {
    pub kind: Kind,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    pub content_hash: String,
    #[serde(borrow)]
    pub run: &'a RawValue,
}

/// A run whose raw samples were pruned: per size, the median and how many samples it was taken
/// over, which is all its fits and the version summaries were computed from.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrunedRunRecord {
    pub kind: Kind,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    pub content_hash: String,
    #[serde(with = "time::serde::rfc3339")]
    pub samples_pruned_at: OffsetDateTime,
    /// How many samples the run had.
    pub sample_count: u32,
    pub run: PrunedRun,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrunedRun {
    pub run_id: Uuid,
    pub agent_version: String,
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    pub host: Host,
    pub toolchain: Toolchain,
    pub workloads: Vec<PrunedWorkload>,
    /// What the run measured, as a submission declares it: left out for wall time, and absent
    /// from files written before runs declared one. Its medians are counts for `instructions`.
    #[serde(default, skip_serializing_if = "Measure::is_wall")]
    pub measure: Measure,
    /// Which counter counted an `instructions` run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<Counter>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrunedWorkload {
    pub name: String,
    pub size_unit: SizeUnit,
    #[serde(default)]
    pub source_hash: String,
    /// The code it ran; absent in files written before builds were hashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_hash: Option<String>,
    /// The control measured beside it; absent in files written before controls were carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<Beside>,
    /// Where its instructions went; absent in files written before profiles were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<slopewatch_core::profile::Profile>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// For a failed workload, the sizes measured before it failed.
    pub measurements: Vec<Median>,
    /// Why the workload stopped; absent in files written before failures were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// The class it was held to; absent in files written before contracts were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<Contract>,
    /// The toolchain's libc does not provide its function.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_provided: bool,
    /// The size the team runs it at, in its unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_of_interest: Option<u64>,
}

impl PrunedWorkload {
    /// A workload of `measurements` and nothing more, as `WorkloadRun::new`.
    pub fn new(name: String, size_unit: SizeUnit, source_hash: String, measurements: Vec<Median>) -> PrunedWorkload {
        PrunedWorkload {
            name,
            size_unit,
            source_hash,
            build_hash: None,
            control: None,
            profile: None,
            metadata: BTreeMap::new(),
            measurements,
            failure: None,
            contract: None,
            not_provided: false,
            size_of_interest: None,
        }
    }

    /// Its facts, as `WorkloadRun::facts`: a pruned record carries them as a submission does.
    pub fn facts(&self) -> Facts {
        Facts { build_hash: self.build_hash.clone(), control: self.control.clone() }
    }

    /// The workload with `facts` for its own.
    pub fn with_facts(self, facts: Facts) -> PrunedWorkload {
        let Facts { build_hash, control } = facts;
        PrunedWorkload { build_hash, control, ..self }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Median {
    pub size: u64,
    /// The median by the run's measure: nanoseconds, or instructions counted.
    pub median_ns: f64,
    pub samples: u32,
}

/// Which regression an editor's change was made to: lineage and version identify it in any store.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusRecord {
    pub kind: Kind,
    pub lineage: String,
    pub version: String,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    /// The editor's token name.
    pub actor: String,
    pub status: RegressionStatus,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteRecord {
    pub kind: Kind,
    pub lineage: String,
    pub version: String,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub author: String,
    pub body: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkRecord {
    pub kind: Kind,
    pub lineage: String,
    pub version: String,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub author: String,
    pub title: String,
    pub url: String,
}

/// A bisection written out: the record as the agent sent it, on the regression of `lineage` and
/// `version` (ids differ between stores).
#[derive(Debug, Serialize)]
pub struct BisectionRecordOut<'a> {
    pub kind: Kind,
    pub lineage: &'a str,
    pub version: &'a str,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    /// The digest it was submitted with, which a resubmission is compared with.
    pub content_hash: &'a str,
    pub bisection: &'a BisectionSubmission,
}

/// A bisection read back, the record kept as text for `BisectionSubmission::from_json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BisectionRecordIn<'a> {
    pub kind: Kind,
    pub lineage: String,
    pub version: String,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    pub content_hash: String,
    #[serde(borrow)]
    pub bisection: &'a RawValue,
}

/// An exposure scan written out: the scan as the store keeps it, with the digest it was submitted
/// with, which a resubmission is compared with.
#[derive(Debug, Serialize)]
pub struct ExposureRecordOut<'a> {
    pub kind: Kind,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    pub content_hash: &'a str,
    pub scan: &'a ExposureSubmission,
}

/// An exposure scan read back, the scan kept as text for `ExposureSubmission::from_json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExposureRecordIn<'a> {
    pub kind: Kind,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    pub content_hash: String,
    #[serde(borrow)]
    pub scan: &'a RawValue,
}

/// A found probe, as first found, with the name of the token that sent it and when it arrived.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FoundProbeRecord {
    pub kind: Kind,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    pub submitted_by: String,
    pub probe: FoundProbe,
}

/// The last line: what the file holds, so an import can tell a whole file from a cut one.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct End {
    pub kind: Kind,
    pub runs: u64,
    pub pruned_runs: u64,
    pub regression_edits: u64,
    pub tokens: u64,
    /// Absent from files written before bisections were carried, and from files without any.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bisections: u64,
    /// Absent from files written before exposure scans were carried, and from files without any.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub exposures: u64,
    /// Absent from files written before found probes were carried, and from files without any.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub found_probes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
