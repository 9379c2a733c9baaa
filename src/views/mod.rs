//! What the dashboard shows, worked out from store rows without I/O, and here the bands a slope is
//! coloured by. Pages, charts and exports all read these, so a page, its charts and its CSV carry
//! the same numbers.

mod banners;
mod changes;
mod compare;
pub mod contracts;
pub mod control;
pub mod exposures;
pub mod found_probes;
mod headline;
mod held;
pub mod measure;
mod overview;
mod ratio;
pub mod regression;
pub mod run;
mod series;
mod version;

pub use banners::{banners, Banner, BannerWorkload};
pub use changes::{Change, ChangeRow, Changes, Held, InterestCost, Predicted, SeriesState, TrendSlope, VersionAt};
pub use compare::{CompareRow, CompareView};
pub use overview::{CellFailure, Column, LineageActivity, Overview, OverviewCell, OverviewRow, PreviousVersion, Since};
pub use ratio::{size_ratio, SizeRatio};
pub use run::fill_in_run;
pub use series::{LogLogLine, LogLogView, SeriesAtVersion, SeriesView, VersionRow};
pub use version::{ControlLine, VersionRegression, VersionView};

use crate::config::Rules;
use crate::store::{VersionFailures, VersionSummary};
use serde::Serialize;
use slopewatch_core::complexity::Complexity;
use slopewatch_core::verdict::{Limits, SlopeEvidence, Verdict};

/// How many of the latest versions the log-log chart draws when none are chosen.
pub const DEFAULT_LOGLOG_VERSIONS: usize = 4;

/// Where a slope falls: linear, worth watching, or a regression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Band {
    Linear,
    Watch,
    Regression,
}

/// The configured alert rules as pages apply them to one workload, so that a page bands a slope
/// exactly as the rules decide it: a regression where they hold its summary over (core's verdict,
/// noise rule included), worth watching above `watch_from` short of that.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Alerting {
    /// What the rules hold the workload's summaries to (no contract: pages judge growth).
    pub limits: Limits,
    /// The workload's slope threshold: its own where configured, else the global one.
    pub threshold: f64,
    /// Whether that threshold is the workload's own (`[alerts.workloads]`).
    pub own: bool,
    pub watch_from: f64,
}

impl Alerting {
    pub fn of(rules: &Rules, workload: &str) -> Alerting {
        Alerting {
            limits: rules.limits(workload, None),
            threshold: rules.threshold_for(workload),
            own: rules.per_workload.contains_key(workload),
            watch_from: rules.watch_from,
        }
    }

    /// The band of a slope with its evidence and class, by the rules' decision.
    pub fn band(&self, slope: &SlopeEvidence, complexity: Option<&Complexity>) -> Band {
        if self.limits.judge(Some(slope), complexity).verdict() == Verdict::Over {
            Band::Regression
        } else if slope.slope > self.watch_from {
            Band::Watch
        } else {
            Band::Linear
        }
    }

    /// The band of a version summary.
    pub fn band_of(&self, s: &VersionSummary) -> Band {
        self.band(&evidence(s), s.complexity.as_ref())
    }
}

/// A version summary's slope as the noise rule reads it.
pub fn evidence(s: &VersionSummary) -> SlopeEvidence {
    SlopeEvidence { slope: s.slope, ci_low: s.ci_low, ci_high: s.ci_high, r2: s.r2, sizes: s.sizes.len() }
}

impl Band {
    /// The band's name, also its CSS class.
    pub fn name(self) -> &'static str {
        match self {
            Band::Linear => "linear",
            Band::Watch => "watch",
            Band::Regression => "regression",
        }
    }

    /// A shape that tells the bands apart without colour.
    pub fn symbol(self) -> &'static str {
        match self {
            Band::Linear => "●",
            Band::Watch => "◆",
            Band::Regression => "▲",
        }
    }
}

/// "failed in 2 of the version's 3 runs, on 1 of 2 hosts", or "in every run" when all did.
pub fn failed_in(f: &VersionFailures) -> String {
    let plural = |n: i64, one: &str| if n == 1 { format!("{n} {one}") } else { format!("{n} {one}s") };
    if f.every_run() {
        format!("failed in every run ({}), on {}", plural(f.runs, "run"), plural(f.hosts, "host"))
    } else {
        format!(
            "failed in {} of the version's {}, on {} of {}",
            f.failed_runs,
            plural(f.runs, "run"),
            f.failed_hosts,
            plural(f.hosts, "host")
        )
    }
}

/// A failure's detail as a reader sees it on a page: whole for a signed-in reader; for anyone
/// else (where reading is open to all) its first line, and how many more a login shows, since the
/// rest (a compiler's output, a crash's report) may quote build paths and host names.
pub fn detail_for(detail: &str, signed_in: bool) -> String {
    let mut lines = detail.trim_end().lines();
    let first = lines.next().unwrap_or_default();
    let more = lines.count();
    match (signed_in, more) {
        (true, _) | (false, 0) => detail.to_string(),
        (false, 1) => format!("{first}\n… 1 more line: log in to see it"),
        (false, n) => format!("{first}\n… {n} more lines: log in to see them"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::SizeMedian;
    use crate::store::VersionSummary;
    use slopewatch_core::wire::{FailureKind, Metric, SizeUnit};
    use time::OffsetDateTime;

    /// A version whose time is `size^slope` at sizes doubling from 64 KiB.
    pub(crate) fn summary(lineage: &str, version: &str, slope: f64, sizes: usize) -> VersionSummary {
        VersionSummary {
            workload: "strchr".into(),
            metric: Metric::Wall,
            lineage: lineage.into(),
            version: version.into(),
            slope,
            slope_min: slope - 0.01,
            slope_max: slope + 0.01,
            ci_low: slope - 0.05,
            ci_high: slope + 0.05,
            r2: 0.999,
            runs: 3,
            hosts: 1,
            sizes: (0..sizes)
                .map(|i| {
                    let size = 65536u64 << i;
                    SizeMedian { size, median_ns: (size as f64).powf(slope), runs: 3 }
                })
                .collect(),
            first_seen: OffsetDateTime::UNIX_EPOCH,
            last_run_at: OffsetDateTime::UNIX_EPOCH,
            complexity: None,
            source_hash: Some("a1b2c3".into()),
            build_hash: None,
            source_count: 1,
        }
    }

    pub(crate) fn series(slopes: &[(&str, f64)]) -> SeriesView {
        SeriesView {
            workload: "strchr".into(),
            metric: Metric::Wall,
            lineage: "zig-cc-musl".into(),
            size_unit: SizeUnit::Bytes,
            size_of_interest: None,
            alerting: Alerting::of(&Rules::default(), "strchr"),
            versions: slopes
                .iter()
                .map(|&(v, k)| SeriesAtVersion {
                    version: v.into(),
                    summary: Some(summary("zig-cc-musl", v, k, 5)),
                    failures: None,
                })
                .collect(),
        }
    }

    /// A complexity naming `class` (unsure for `None`).
    pub(crate) fn complexity(
        class: Option<slopewatch_core::complexity::Class>,
    ) -> slopewatch_core::complexity::Complexity {
        use slopewatch_core::complexity::{Class, Complexity};
        Complexity {
            class,
            best: class.unwrap_or(Class::Linear),
            weight: 0.9,
            runner_up: Class::NLogN,
            runner_up_weight: 0.1,
            exponent: Some(1.0),
            exponent_ci_low: Some(0.9),
            exponent_ci_high: Some(1.1),
            step: None,
        }
    }

    pub(crate) fn failures(version: &str, failed_runs: i64, runs: i64) -> VersionFailures {
        VersionFailures {
            version: version.into(),
            runs,
            failed_runs,
            hosts: 2,
            failed_hosts: 1,
            kind: FailureKind::WrongResult,
            label: "wrong result".into(),
            size: Some(65536),
            detail: "<b>end pointer</b>".into(),
            exit_status: None,
            signal: None,
            limit_ms: None,
            got: Some("-1".into()),
            expected: Some("9362".into()),
            summary: "wrong result at 64 KiB: got -1, expected 9362".into(),
            run_id: uuid::Uuid::nil(),
            first_seen: OffsetDateTime::UNIX_EPOCH,
            last_failed_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn a_band_is_a_regression_exactly_where_the_rules_hold_the_slope_over() {
        let rules = Rules { threshold: 1.3, per_workload: [("strcspn".to_string(), 2.5)].into(), ..Rules::default() };
        let (strchr, strcspn) = (Alerting::of(&rules, "strchr"), Alerting::of(&rules, "strcspn"));
        let band = |a: Alerting, k: f64| a.band_of(&summary("gcc-glibc", "12.3.0", k, 5));
        assert_eq!(band(strchr, 1.0), Band::Linear);
        assert_eq!(band(strchr, 1.25), Band::Watch);
        assert_eq!(band(strchr, 1.42), Band::Regression);
        assert_eq!(band(strcspn, 2.0), Band::Watch, "its own threshold is 2.5");
        assert!(strcspn.own && !strchr.own);
        let mut wide = summary("gcc-glibc", "12.3.0", 1.42, 5);
        wide.ci_low = 1.0;
        assert_eq!(strchr.band_of(&wide), Band::Watch, "unsure under the noise rule: not a regression");
    }

    #[test]
    fn a_reader_who_is_not_signed_in_sees_a_failure_s_first_line() {
        let detail = "crashed at 4 KiB\n/home/ci/build/x.c:3: note\n/home/ci/build/y.c:9: more";
        assert_eq!(detail_for(detail, true), detail);
        assert_eq!(detail_for(detail, false), "crashed at 4 KiB\n… 2 more lines: log in to see them");
        assert_eq!(detail_for("one line\n", false), "one line\n");
        assert_eq!(detail_for("a\nb", false), "a\n… 1 more line: log in to see it");
    }
}
