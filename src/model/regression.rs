//! A regression as it is stored and shown: its status, its workloads, its timeline, notes and
//! links, and everything its page and postmortem read.

use super::{Bisection, DeliveryDetail, MetricColumn, SizeMedian, Track};
use serde::Serialize;
use slopewatch_core::wire::{Failure, Metric, SizeUnit};
use std::collections::HashMap;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A regression's status, as editors set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RegressionStatus {
    Open,
    Acknowledged,
    Fixed,
    FalseAlarm,
}

impl RegressionStatus {
    pub const ALL: [RegressionStatus; 4] =
        [RegressionStatus::Open, RegressionStatus::Acknowledged, RegressionStatus::Fixed, RegressionStatus::FalseAlarm];

    pub fn as_str(self) -> &'static str {
        match self {
            RegressionStatus::Open => "open",
            RegressionStatus::Acknowledged => "acknowledged",
            RegressionStatus::Fixed => "fixed",
            RegressionStatus::FalseAlarm => "false_alarm",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            RegressionStatus::Open => "open",
            RegressionStatus::Acknowledged => "acknowledged",
            RegressionStatus::Fixed => "fixed",
            RegressionStatus::FalseAlarm => "false alarm",
        }
    }

    pub fn parse(s: &str) -> Option<RegressionStatus> {
        RegressionStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Whether the regression is still open, acknowledged or not.
    pub fn is_open(self) -> bool {
        matches!(self, RegressionStatus::Open | RegressionStatus::Acknowledged)
    }

    /// How a stored status reads on a page; an unknown one reads as itself.
    pub fn label_of(status: &str) -> &str {
        match RegressionStatus::parse(status) {
            Some(s) => s.label(),
            None => status,
        }
    }
}

/// As a database column spells it.
impl TryFrom<String> for RegressionStatus {
    type Error = String;

    fn try_from(s: String) -> Result<RegressionStatus, String> {
        RegressionStatus::parse(&s).ok_or_else(|| format!("{s:?} is not a regression status"))
    }
}

/// What a regression is: a step from a version that held (a **regression**, with a last good
/// version to bisect from), or a workload already over its limit or contract at the first version
/// its lineage measured (a **finding**: nothing to regress from, nothing to bisect). Derived from
/// the stored row (a finding has no last good version), so a store from before findings reads
/// its "regressions" with no last good version as findings, under the same numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RegressionKind {
    Regression,
    Finding,
}

impl RegressionKind {
    pub const ALL: [RegressionKind; 2] = [RegressionKind::Regression, RegressionKind::Finding];

    /// The kind of a regression with this last good version.
    pub fn of(previous_version: Option<&str>) -> RegressionKind {
        match previous_version {
            Some(_) => RegressionKind::Regression,
            None => RegressionKind::Finding,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RegressionKind::Regression => "regression",
            RegressionKind::Finding => "finding",
        }
    }

    /// How it reads at the start of a sentence.
    pub fn title(self) -> &'static str {
        match self {
            RegressionKind::Regression => "Regression",
            RegressionKind::Finding => "Finding",
        }
    }

    pub fn parse(s: &str) -> Option<RegressionKind> {
        RegressionKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// A regression as listed and as shown on its page.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct RegressionRow {
    pub id: i64,
    pub lineage: String,
    pub version: String,
    pub previous_version: Option<String>,
    /// One of the `RegressionStatus` values.
    #[schema(value_type = RegressionStatus)]
    pub status: String,
    pub magnitude: Option<f64>,
    #[serde(with = "time::serde::rfc3339")]
    pub first_run_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub opened_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub acknowledged_at: Option<OffsetDateTime>,
    pub acknowledged_by: Option<String>,
    pub fixed_version: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub fix_first_run_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub resolved_at: Option<OffsetDateTime>,
    /// The regression this one turned out to be part of, once versions measured out of order
    /// showed that its workloads regressed with that one; a merged regression leaves the lists.
    pub merged_into: Option<i64>,
}

impl RegressionRow {
    /// A regression, or a finding: over at the first version measured.
    pub fn kind(&self) -> RegressionKind {
        RegressionKind::of(self.previous_version.as_deref())
    }

    /// The versions it is about, in version order: its last good version (none for a finding),
    /// its first bad one, and the one that fixed it, if any.
    pub fn versions(&self) -> Vec<&str> {
        [self.previous_version.as_deref(), Some(self.version.as_str()), self.fixed_version.as_deref()]
            .into_iter()
            .flatten()
            .collect()
    }
}

/// Each regression of `rows` with its workloads among `members`, in the order of `rows`.
pub fn with_members(
    rows: Vec<RegressionRow>,
    members: Vec<RegressionWorkload>,
) -> Vec<(RegressionRow, Vec<RegressionWorkload>)> {
    let mut by_regression: HashMap<i64, Vec<RegressionWorkload>> = HashMap::new();
    members.into_iter().for_each(|m| by_regression.entry(m.regression_id).or_default().push(m));
    rows.into_iter()
        .map(|r| {
            let members = by_regression.remove(&r.id).unwrap_or_default();
            (r, members)
        })
        .collect()
}

/// One workload of a regression, there for its slope or for a failure, with its numbers before,
/// at and after.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct RegressionWorkload {
    pub regression_id: i64,
    pub workload: String,
    /// The metric of the series it was found on: its slopes, ratios and sizes are of that metric.
    #[sqlx(try_from = "MetricColumn")]
    #[serde(rename = "measure")]
    pub metric: Metric,
    /// `slope` or `failure`.
    pub reason: String,
    /// The slope at the regression's version; none for a failure.
    pub slope: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub r2: Option<f64>,
    pub previous_slope: Option<f64>,
    /// The time (or count, for a count metric) at the regression's version over that at the last
    /// good one, at `ratio_size`, the largest size both measured.
    pub time_ratio: Option<f64>,
    pub ratio_size: Option<i64>,
    pub joined_late: bool,
    pub fixed_version: Option<String>,
    pub fixed_slope: Option<f64>,
    pub fixed_ratio: Option<f64>,
    #[serde(skip)]
    pub failure_kind: Option<String>,
    #[serde(skip)]
    pub failure_size: Option<i64>,
    #[serde(skip)]
    pub failure_detail: Option<String>,
    #[serde(skip)]
    pub failure_facts: Option<String>,
    /// What broke at the regression's version, for a failure (the version's latest failure).
    #[sqlx(skip)]
    #[schema(value_type = Option<Object>)]
    pub failure: Option<Failure>,
    /// The complexity class at the last good version and at the first bad one, as the version
    /// summaries hold them now (`"n"`, `"n^2"`, … or `"unsure"`); `null` where a version has no
    /// class.
    #[sqlx(skip)]
    pub class_before: Option<String>,
    #[sqlx(skip)]
    pub class_after: Option<String>,
    /// Whether the workload's own source (its latest run's) differs between the last good and
    /// the first bad version: the regression may then be the workload's doing.
    #[sqlx(skip)]
    #[serde(default)]
    pub source_changed: bool,
    /// For a workload held to a contract, what its break means and costs a caller, e.g.
    /// "strcspn now reads the whole remaining string: cost ∝ remaining^1.00, O(1) at 0.15.2. A
    /// loop that calls it once per token over n bytes is O(n²)."
    #[sqlx(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contract_break: Option<String>,
    /// The contract it is held to, where it has one: what its root cause says of a break.
    #[sqlx(skip)]
    #[serde(skip)]
    pub contract: Option<slopewatch_core::wire::Contract>,
    /// The workload's unit, as stored: what `ratio_size`, `size_of_interest` and a failure's size
    /// count.
    #[serde(skip)]
    #[sqlx(try_from = "String")]
    pub size_unit: SizeUnit,
    /// The size its team runs it at, in its unit, as its latest run said; none when no run gave one.
    pub size_of_interest: Option<i64>,
    /// What it costs there at the regression's version, against the last good one, predicted from
    /// each version's fit with its 95% prediction interval, e.g. "at 40,000 records: ≈ 5.4 min
    /// [4.6 min, 6.3 min] here, predicted past the 20,000 records measured; ≈ 40 ms at 0.15.2,
    /// about 8,100×".
    #[sqlx(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_size_of_interest: Option<String>,
}

impl RegressionWorkload {
    /// Fills `failure` from the stored columns.
    pub fn with_failure(mut self) -> RegressionWorkload {
        if let Some(kind) = &self.failure_kind {
            let (detail, facts) = (self.failure_detail.as_deref().unwrap_or(""), self.failure_facts.as_deref());
            self.failure = super::stored_failure(kind, self.failure_size, detail, facts.unwrap_or("{}"));
        }
        self
    }

    pub fn is_failure(&self) -> bool {
        self.reason == "failure"
    }

    /// Whether it is there for what it costs.
    pub fn is_cost(&self) -> bool {
        self.reason == "cost"
    }

    /// For a cost, the change in words: "cost 4.20× at 64 KiB, O(n) both"; a time's is its time
    /// over the control measured beside it.
    pub fn cost_change(&self) -> Option<String> {
        let size = u64::try_from(self.ratio_size?).ok().filter(|_| self.is_cost())?;
        let label = |c: Option<&str>| c.and_then(crate::format::class_label_of_text);
        let (before, after) = (label(self.class_before.as_deref()), label(self.class_after.as_deref()));
        let change = crate::format::cost_change(self.time_ratio?, size, self.size_unit, before, after);
        Some(if self.metric.is_count() { change } else { format!("{change}, over the control beside it") })
    }

    /// What broke, in one line with its size in the workload's unit, for a failure that the
    /// server can read.
    pub fn failure_summary(&self) -> Option<String> {
        self.failure.as_ref().map(|f| crate::format::failure(f, self.size_unit))
    }

    /// The size the ratio was taken at, in the workload's unit: `128 KiB`.
    pub fn ratio_size_text(&self) -> Option<String> {
        let size = u64::try_from(self.ratio_size?).ok()?;
        Some(crate::format::size(size, self.size_unit))
    }

    /// The class step as people read it, `O(n) → O(n²)`, when both classes are known.
    pub fn class_step(&self) -> Option<String> {
        crate::format::class_step_of_text(self.class_before.as_deref(), self.class_after.as_deref())
    }
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct RegressionEvent {
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub kind: String,
    pub detail: String,
    pub actor: Option<String>,
}

/// A timeline entry to write: its kind, its wording (`rules::timeline` writes both) and the
/// status it sets, for an entry that records one.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub kind: &'static str,
    pub detail: String,
    pub status: Option<RegressionStatus>,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct RegressionNote {
    pub id: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub author: String,
    pub body: String,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct RegressionLink {
    pub id: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub author: String,
    pub title: String,
    pub url: String,
}

/// A workload of a resolved regression, as the resolved event lists it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ResolvedMember {
    pub workload_id: i64,
    pub name: String,
    #[sqlx(try_from = "MetricColumn")]
    pub metric: Metric,
    #[sqlx(try_from = "String")]
    pub size_unit: SizeUnit,
    /// `slope` or `failure`.
    pub reason: String,
    /// The regression's version, and the last good one before it.
    pub version: String,
    pub previous_version: Option<String>,
    /// The slope at the regression's version; none for a failure.
    pub slope: Option<f64>,
    pub fixed_slope: Option<f64>,
    pub fixed_ci_low: Option<f64>,
    pub fixed_ci_high: Option<f64>,
    pub fixed_ratio: Option<f64>,
    pub magnitude: Option<f64>,
}

/// Median times (or counts) by size of one workload's series at one version, for before/after
/// charts.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VersionSizes {
    pub workload: String,
    #[serde(rename = "measure")]
    pub metric: Metric,
    pub version: String,
    pub sizes: Vec<SizeMedian>,
}

/// Everything on a regression's page.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RegressionDetail {
    pub regression: RegressionRow,
    pub workloads: Vec<RegressionWorkload>,
    pub events: Vec<RegressionEvent>,
    pub notes: Vec<RegressionNote>,
    pub links: Vec<RegressionLink>,
    pub deliveries: Vec<DeliveryDetail>,
    pub sizes: Vec<VersionSizes>,
    /// The bisections recorded on it, oldest first, each with its steps in version order.
    pub bisections: Vec<Bisection>,
    /// What the control lineages say moved, worked out when read (docs/alerts.md,
    /// "Attribution"); absent when no control is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribution: Option<super::control::ControlCheck>,
    /// Where the cost went, per workload with a profile at the first bad version, worked out when
    /// read (docs/profiles.md); empty where no run carried a profile.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub where_cost_went: Vec<super::WhereCostWent>,
    /// The stored artifacts whose latest exposure scan in the lineage (at whichever version it was
    /// scanned last) reaches a function the regression names: one of its contract probes', or the
    /// one its cost went to. Worked out when read; those whose scan found the function broken and
    /// not accepted first.
    pub artifacts: Vec<super::ArtifactReach>,
    /// Its workloads under the functions that broke at its version, worst first, and those that
    /// trace to none (docs/alerts.md, "Root causes"); worked out when read.
    #[serde(flatten)]
    pub causes: super::RootCauses,
    /// The architecture of the lineage, and the hosts that measured its versions here under
    /// emulation (worked out when read).
    #[serde(flatten)]
    pub arch: super::Architecture,
}

/// A regression as the store holds it, with its workloads, as the alert rules compare it with the
/// regressions they derive.
#[derive(Debug, Clone)]
pub struct StoredRegression {
    pub id: i64,
    pub version: String,
    pub previous_version: Option<String>,
    pub status: RegressionStatus,
    pub fixed_version: Option<String>,
    /// The regression it was merged into, if it was.
    pub merged_into: Option<i64>,
    pub members: Vec<StoredMember>,
}

/// A workload of a stored regression, and where it was fixed.
#[derive(Debug, Clone)]
pub struct StoredMember {
    pub track: Track,
    pub fixed_version: Option<String>,
}

impl StoredRegression {
    pub fn is_open(&self) -> bool {
        self.status.is_open()
    }

    /// Whether the regression holds `track`.
    pub fn has(&self, track: Track) -> bool {
        self.members.iter().any(|m| m.track == track)
    }
}
