//! What a control lineage says of a regression: whether the toolchain, the code, or the host or
//! harness moved (docs/alerts.md, "Attribution"), and the evidence it is worked out from. Plain
//! values: the store reads the evidence, `rules::control` decides.

use serde::Serialize;
use slopewatch_core::verdict::SlopeEvidence;
use slopewatch_core::wire::Metric;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// Who moved, by the control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = Verdict)]
pub enum ControlVerdict {
    /// The control held: the toolchain changed.
    Toolchain,
    /// The control moved too, on a changed source: the code changed.
    Code,
    /// The control moved too, on the same source: the host or the harness.
    HostOrHarness,
    /// No control data (or none that agrees across the workloads): the sentence says what to run.
    Unknown,
}

impl ControlVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ControlVerdict::Toolchain => "toolchain",
            ControlVerdict::Code => "code",
            ControlVerdict::HostOrHarness => "host_or_harness",
            ControlVerdict::Unknown => "unknown",
        }
    }

    /// How it reads on a page.
    pub fn label(self) -> &'static str {
        match self {
            ControlVerdict::Toolchain => "the toolchain",
            ControlVerdict::Code => "the code",
            ControlVerdict::HostOrHarness => "the host or the harness",
            ControlVerdict::Unknown => "unknown",
        }
    }
}

/// A regression's attribution: one verdict with its reasoning in a sentence, and each slope
/// workload's own.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = Attribution)]
pub struct ControlCheck {
    pub verdict: ControlVerdict,
    /// The control as it was used, lineage and versions (`musl-gcc 1.2.3`); the lineage alone
    /// when it has no runs to use; null when the regression's lineage is the only control.
    pub control: Option<String>,
    pub sentence: String,
    /// Some workload's source differs between the last good and the first bad version.
    pub source_changed: bool,
    /// The control's runs counted were measured (started) within this period: from the last good
    /// version's first run to the first bad version's latest run.
    #[serde(with = "time::serde::rfc3339")]
    pub from: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub to: OffsetDateTime,
    /// The hosts whose control runs were used, sorted.
    pub hosts: Vec<String>,
    pub workloads: Vec<WorkloadControlCheck>,
}

/// One slope workload's attribution.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = WorkloadAttribution)]
pub struct WorkloadControlCheck {
    pub workload: String,
    /// The metric of the workload's series; the control's runs are of the same metric.
    #[serde(rename = "measure")]
    pub metric: Metric,
    pub verdict: ControlVerdict,
    pub control: Option<String>,
    pub sentence: String,
    /// The control's slope (median over its runs used) on the first bad version's source, and on
    /// the last good version's where that differs or the runs came before the bad version.
    pub control_slope: Option<f64>,
    pub control_slope_before: Option<f64>,
    /// How many control runs were used.
    pub control_runs: usize,
    /// The hosts of those runs; `same_hosts` is false when none ran on the regression's own
    /// hosts and runs of other hosts were used.
    pub hosts: Vec<String>,
    pub same_hosts: bool,
    pub source_changed: bool,
}

/// What the store holds of a regression for its attribution: its versions, the period, its hosts
/// and its slope workloads' sources.
#[derive(Debug, Clone)]
pub struct Regressed {
    pub lineage: String,
    pub version: String,
    pub previous_version: Option<String>,
    pub from: OffsetDateTime,
    pub to: OffsetDateTime,
    /// The hosts that measured the last good and the first bad version, by id.
    pub hosts: Vec<(i64, String)>,
    pub workloads: Vec<RegressedWorkload>,
}

/// A slope workload of a regression, with its source at the last good and first bad versions.
#[derive(Debug, Clone)]
pub struct RegressedWorkload {
    /// The workload as measured by `metric`: the control's fits of the same id are of it too.
    pub workload_id: i64,
    pub name: String,
    pub metric: Metric,
    pub source_before: Option<String>,
    pub source_after: Option<String>,
    /// The first bad version's first run: control runs before it are the "before" side.
    pub bad_first_run: Option<OffsetDateTime>,
}

/// One control run's fit of one workload, within a regression's period.
#[derive(Debug, Clone)]
pub struct ControlRun {
    pub lineage: String,
    pub version: String,
    pub host_id: i64,
    pub host: String,
    pub started_at: OffsetDateTime,
    pub workload_id: i64,
    pub source_hash: String,
    /// The run's fit, as the noise rule reads it.
    pub evidence: SlopeEvidence,
}
