//! What the dashboard shows, derived from store rows without I/O: slope bands, a series with its
//! per-version table, the overview matrix, open regressions and comparisons. Pages, charts and
//! exports all read these, so a page, its charts and its CSV carry the same numbers.

pub mod attribution;
pub mod contracts;
mod overview;
pub mod regression;

pub use overview::{open_regressions, CellFailure, OpenRegression, Overview, OverviewCell, OverviewRow};

use crate::format;
use crate::store::{RunDetail, VersionFailures, VersionSummary};
use serde::Serialize;
use slopewatch_core::version::sort_versions;
use slopewatch_core::wire::SizeUnit;
use std::collections::BTreeMap;
use time::OffsetDateTime;

/// Slopes above this raise an alert: doubling the input costs more than 2^1.5 ≈ 2.8× the time.
pub const ALERT_THRESHOLD: f64 = 1.5;
/// Slopes above this are worth watching, though not alarming.
pub const WATCH_FROM: f64 = 1.2;
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

impl Band {
    pub fn of(slope: f64) -> Band {
        if slope > ALERT_THRESHOLD {
            Band::Regression
        } else if slope > WATCH_FROM {
            Band::Watch
        } else {
            Band::Linear
        }
    }

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

/// Fits each failed workload of `run` over the sizes it measured before failing, when they are at
/// least `min_sizes` (the alert rules' minimum), and marks the fit partial. Such a slope is shown
/// with its run only: the store keeps no fit of a failed workload, so no summary or alert sees it.
pub fn fit_partial_slopes(run: &mut RunDetail, min_sizes: usize) {
    for w in run.workloads.iter_mut().filter(|w| w.failure.is_some() && w.slope.is_none()) {
        if w.measurements.len() < min_sizes {
            continue;
        }
        let points: Vec<(f64, f64)> = w.measurements.iter().map(|m| (m.size as f64, m.median_ns)).collect();
        let Ok(fit) = slopewatch_core::fit::fit(&points) else { continue };
        w.slope = Some(fit.slope);
        w.intercept = Some(fit.intercept);
        w.r2 = Some(fit.r2);
        w.stderr = Some(fit.stderr);
        w.ci_low = Some(fit.ci_low);
        w.ci_high = Some(fit.ci_high);
        w.n_sizes = fit.n as i32;
        w.local_slopes = fit.local_slopes;
        w.partial = true;
    }
}

/// One workload in one toolchain lineage across its versions, in version order.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesView {
    pub workload: String,
    pub lineage: String,
    pub size_unit: SizeUnit,
    /// Every version: those some run passed, with their summary, and those every run failed.
    pub versions: Vec<SeriesVersion>,
    /// The size the workload's team runs it at, when its latest run said.
    pub size_of_interest: Option<u64>,
}

/// One version of a series: its summary over the runs that passed, its failures, or both.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesVersion {
    pub version: String,
    /// `None` when every run of the version failed the workload.
    pub summary: Option<VersionSummary>,
    pub failures: Option<VersionFailures>,
}

impl SeriesVersion {
    pub fn slope(&self) -> Option<f64> {
        self.summary.as_ref().map(|s| s.slope)
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

/// A version's line of the series table, in raw numbers (pages format them, exports keep them).
#[derive(Debug, Clone, Serialize)]
pub struct VersionRow {
    pub version: String,
    /// The slope and its numbers over the runs that passed; null where every run failed.
    pub slope: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub r2: Option<f64>,
    pub band: Option<Band>,
    /// Median time at the series' shared size, if this version measured it.
    pub median_ns_at_shared_size: Option<f64>,
    /// This version's time at the shared size over the previous version's.
    pub ratio_to_previous: Option<f64>,
    /// The version's runs and hosts, passed or failed.
    pub runs: i64,
    pub hosts: i64,
    /// Where some runs failed the workload: how many, and the latest failure.
    pub failures: Option<VersionFailures>,
    /// The complexity class, `O(n²)` or `unsure`; `None` where not worked out.
    pub class: Option<&'static str>,
}

impl SeriesView {
    /// How the complexity class changed across versions, in words: "O(n) through 0.15.2, O(n²)
    /// from 0.16.0". Unsure versions are passed over; `None` unless two named classes follow each
    /// other.
    pub fn class_change(&self) -> Option<String> {
        let mut spans: Vec<(&'static str, &str, &str)> = Vec::new();
        for v in &self.versions {
            let Some(class) = v.summary.as_ref().and_then(|s| s.complexity.as_ref()).and_then(|c| c.class) else {
                continue;
            };
            match spans.last_mut() {
                Some(span) if span.0 == class.label() => span.2 = &v.version,
                _ => spans.push((class.label(), &v.version, &v.version)),
            }
        }
        if spans.len() < 2 {
            return None;
        }
        let last = spans.len() - 1;
        let parts: Vec<String> = spans
            .iter()
            .enumerate()
            .map(|(i, &(label, from, through))| match (i, i == last) {
                (0, _) => format!("{label} through {through}"),
                (_, true) => format!("{label} from {from}"),
                _ if from == through => format!("{label} at {from}"),
                _ => format!("{label} from {from} through {through}"),
            })
            .collect();
        Some(parts.join(", "))
    }

    /// Where the workload's own source changed: each version whose latest run built another
    /// source than the latest run of the version before it, and each version measured on more
    /// than one source, in words ("workload source changed at 0.16.0"). A regression at such a
    /// version may be the workload's own doing rather than the toolchain's.
    pub fn source_changes(&self) -> Vec<String> {
        let steps = self.source_steps();
        let mut notes = Vec::new();
        for (i, v) in self.versions.iter().enumerate() {
            if steps.contains(&i) {
                notes.push(format!("workload source changed at {}", v.version));
            }
            if let Some(s) = v.summary.as_ref().filter(|s| s.source_count > 1) {
                notes.push(format!("{} measured on {} workload sources", v.version, s.source_count));
            }
        }
        notes
    }

    /// The indices of the versions whose latest run built another workload source than the latest
    /// run of the measured version before them.
    pub fn source_steps(&self) -> Vec<usize> {
        let mut steps = Vec::new();
        let mut previous: Option<&str> = None;
        for (i, v) in self.versions.iter().enumerate() {
            let Some(hash) = v.summary.as_ref().and_then(|s| s.source_hash.as_deref()) else { continue };
            if previous.is_some_and(|p| p != hash) {
                steps.push(i);
            }
            previous = Some(hash);
        }
        steps
    }

    /// The series from its summaries (in version order) and the failures of its versions.
    pub fn new(
        workload: String,
        lineage: String,
        size_unit: SizeUnit,
        summaries: Vec<VersionSummary>,
        failures: Vec<VersionFailures>,
    ) -> SeriesView {
        let mut failures: BTreeMap<String, VersionFailures> =
            failures.into_iter().map(|f| (f.version.clone(), f)).collect();
        let mut versions: Vec<(SeriesVersion, OffsetDateTime)> = summaries
            .into_iter()
            .map(|s| {
                let failed = failures.remove(&s.version);
                let first_seen = failed.as_ref().map_or(s.first_seen, |f| f.first_seen.min(s.first_seen));
                (SeriesVersion { version: s.version.clone(), summary: Some(s), failures: failed }, first_seen)
            })
            .collect();
        versions.extend(failures.into_values().map(|f| {
            let first_seen = f.first_seen;
            (SeriesVersion { version: f.version.clone(), summary: None, failures: Some(f) }, first_seen)
        }));
        sort_versions(&mut versions, |(v, _)| &v.version, |(_, first_seen)| *first_seen);
        SeriesView {
            workload,
            lineage,
            size_unit,
            versions: versions.into_iter().map(|(v, _)| v).collect(),
            size_of_interest: None,
        }
    }

    /// The versions some run passed, with their places among all versions.
    /// What the latest measured version costs at the size of interest, against the measured
    /// version before it, predicted from each version's per-size medians: "at 4 MiB: ≈ 46 s [41
    /// s, 52 s] here, …; ≈ 1.5 ms at 0.15.2, about 31,000×". `None` without a size of interest.
    pub fn cost_at_interest(&self) -> Option<String> {
        use slopewatch_core::predict::step_sentence;
        let at = self.size_of_interest?;
        let fitted = |s: &VersionSummary| crate::model::SizeMedian::predict(&s.sizes, at);
        let measured: Vec<(usize, &VersionSummary)> = self.measured().collect();
        let &(last, latest) = measured.last()?;
        let bad = fitted(latest)?;
        let before =
            measured.iter().rev().nth(1).and_then(|&(i, s)| Some((fitted(s)?, self.versions[i].version.as_str())));
        let sentence = step_sentence(&bad, before.as_ref().map(|(p, v)| (p, *v)), self.size_unit);
        Some(sentence.replacen(" here", &format!(" at {}", self.versions[last].version), 1))
    }

    pub fn measured(&self) -> impl Iterator<Item = (usize, &VersionSummary)> {
        self.versions.iter().enumerate().filter_map(|(i, v)| Some((i, v.summary.as_ref()?)))
    }

    /// The versions with failures, with their places among all versions.
    pub fn failed(&self) -> impl Iterator<Item = (usize, &SeriesVersion, &VersionFailures)> {
        self.versions.iter().enumerate().filter_map(|(i, v)| Some((i, v, v.failures.as_ref()?)))
    }

    /// The version where the slope went over the threshold and stayed there up to the latest
    /// version, or else the first version ever over it: the one a reader needs to find.
    pub fn first_over_threshold(&self) -> Option<usize> {
        let over = |i: usize| self.versions[i].slope().is_some_and(|k| k > ALERT_THRESHOLD);
        let n = self.versions.len();
        if n > 0 && over(n - 1) {
            let mut i = n - 1;
            while i > 0 && over(i - 1) {
                i -= 1;
            }
            return Some(i);
        }
        (0..n).find(|&i| over(i))
    }

    /// The largest size every version measured, where their times compare like for like.
    pub fn shared_size(&self) -> Option<u64> {
        let (_, first) = self.measured().next()?;
        first
            .sizes
            .iter()
            .rev()
            .map(|s| s.size)
            .find(|&size| self.measured().all(|(_, v)| v.sizes.iter().any(|s| s.size == size)))
    }

    pub fn rows(&self) -> Vec<VersionRow> {
        let shared = self.shared_size();
        let mut previous: Option<f64> = None;
        self.versions
            .iter()
            .map(|v| {
                let s = v.summary.as_ref();
                let median = s.zip(shared).and_then(|(s, size)| median_at(s, size));
                let ratio = match (previous, median) {
                    (Some(p), Some(m)) if p > 0.0 => Some(m / p),
                    _ => None,
                };
                if median.is_some() {
                    previous = median;
                }
                let f = v.failures.as_ref();
                VersionRow {
                    version: v.version.clone(),
                    slope: s.map(|s| s.slope),
                    ci_low: s.map(|s| s.ci_low),
                    ci_high: s.map(|s| s.ci_high),
                    r2: s.map(|s| s.r2),
                    band: s.map(|s| Band::of(s.slope)),
                    median_ns_at_shared_size: median,
                    ratio_to_previous: ratio,
                    runs: f.map_or_else(|| s.map_or(0, |s| s.runs), |f| f.runs),
                    hosts: f.map_or_else(|| s.map_or(0, |s| s.hosts), |f| f.hosts),
                    failures: v.failures.clone(),
                    class: format::class_label(s.and_then(|s| s.complexity.as_ref())),
                }
            })
            .collect()
    }

    /// The versions the log-log chart draws: those asked for that exist, or the latest few.
    pub fn chosen_versions(&self, asked: &[String]) -> Vec<&SeriesVersion> {
        let chosen: Vec<&SeriesVersion> = self.versions.iter().filter(|v| asked.contains(&v.version)).collect();
        if chosen.is_empty() {
            let skip = self.versions.len().saturating_sub(DEFAULT_LOGLOG_VERSIONS);
            self.versions.iter().skip(skip).collect()
        } else {
            chosen
        }
    }

    /// The log-log chart of the chosen versions: a line for each that some run measured, marked
    /// where runs failed, and a note for each that every run failed.
    pub fn loglog(&self, asked: &[String]) -> LogLogView {
        let chosen = self.chosen_versions(asked);
        let failed_every_run = chosen
            .iter()
            .filter(|v| v.summary.is_none())
            .filter_map(|v| {
                Some(format!("{}: ✗ {}, {}", v.version, v.failures.as_ref()?.label, failed_in(v.failures.as_ref()?)))
            })
            .collect();
        LogLogView {
            title: format!("Time vs size: {} · {}", self.workload, self.lineage),
            size_unit: self.size_unit,
            lines: chosen
                .into_iter()
                .filter_map(|v| {
                    let mut line = LogLogLine::of(&v.version, v.summary.as_ref()?);
                    line.failed =
                        v.failures.as_ref().map(|f| format!("✗ {} in {} of {} runs", f.label, f.failed_runs, f.runs));
                    Some(line)
                })
                .collect(),
            failed_every_run,
        }
    }
}

fn median_at(v: &VersionSummary, size: u64) -> Option<f64> {
    v.sizes.iter().find(|s| s.size == size).map(|s| s.median_ns)
}

/// Lines of median time against size, for a log-log chart.
#[derive(Debug, Clone, Serialize)]
pub struct LogLogView {
    pub title: String,
    pub size_unit: SizeUnit,
    pub lines: Vec<LogLogLine>,
    /// Chosen versions every run failed, which have no line: what the legend says of each.
    pub failed_every_run: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LogLogLine {
    pub label: String,
    pub slope: f64,
    /// (size, median ns), by size.
    pub points: Vec<(u64, f64)>,
    /// Where some of the version's runs failed, what the legend adds, e.g. `✗ crashed in 1 of 3 runs`.
    pub failed: Option<String>,
}

impl LogLogLine {
    pub fn of(label: &str, v: &VersionSummary) -> LogLogLine {
        LogLogLine {
            label: label.to_string(),
            slope: v.slope,
            points: v.sizes.iter().map(|s| (s.size, s.median_ns)).collect(),
            failed: None,
        }
    }
}

/// Two toolchain versions of one workload side by side; of one lineage or of two.
#[derive(Debug, Clone)]
pub struct CompareView {
    pub workload: String,
    pub size_unit: SizeUnit,
    pub a: VersionSummary,
    pub b: VersionSummary,
}

/// The two versions' times at a size both measured.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub size: u64,
    pub a_median_ns: f64,
    pub b_median_ns: f64,
    /// b's time over a's: above 1, b is slower.
    pub ratio: f64,
}

impl CompareView {
    pub fn label_a(&self) -> String {
        format!("{} {}", self.a.lineage, self.a.version)
    }

    pub fn label_b(&self) -> String {
        format!("{} {}", self.b.lineage, self.b.version)
    }

    /// b's slope minus a's.
    pub fn slope_delta(&self) -> f64 {
        self.b.slope - self.a.slope
    }

    /// The complexity class from a to b, `O(n) → O(n²)`, when both were worked out.
    pub fn class_step(&self) -> Option<String> {
        format::class_step(self.a.complexity.as_ref(), self.b.complexity.as_ref())
    }

    pub fn rows(&self) -> Vec<CompareRow> {
        self.a
            .sizes
            .iter()
            .filter_map(|sa| {
                let b = median_at(&self.b, sa.size)?;
                Some(CompareRow { size: sa.size, a_median_ns: sa.median_ns, b_median_ns: b, ratio: b / sa.median_ns })
            })
            .collect()
    }

    pub fn loglog(&self) -> LogLogView {
        LogLogView {
            title: format!("{}: {} vs {}", self.workload, self.label_a(), self.label_b()),
            size_unit: self.size_unit,
            lines: vec![LogLogLine::of(&self.label_a(), &self.a), LogLogLine::of(&self.label_b(), &self.b)],
            failed_every_run: Vec::new(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::SizeMedian;
    use crate::store::{FailureRow, SlopeRow};
    use slopewatch_core::wire::FailureKind;
    use time::OffsetDateTime;

    /// A version whose time is `size^slope` at sizes doubling from 64 KiB.
    pub(crate) fn summary(lineage: &str, version: &str, slope: f64, sizes: usize) -> VersionSummary {
        VersionSummary {
            workload: "strchr".into(),
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
            source_count: 1,
        }
    }

    pub(crate) fn series(slopes: &[(&str, f64)]) -> SeriesView {
        SeriesView {
            workload: "strchr".into(),
            lineage: "zig-cc-musl".into(),
            size_unit: SizeUnit::Bytes,
            size_of_interest: None,
            versions: slopes
                .iter()
                .map(|&(v, k)| SeriesVersion {
                    version: v.into(),
                    summary: Some(summary("zig-cc-musl", v, k, 5)),
                    failures: None,
                })
                .collect(),
        }
    }

    fn slope_row(workload: &str, lineage: &str, version: &str, slope: f64) -> SlopeRow {
        SlopeRow {
            workload: workload.into(),
            size_unit: SizeUnit::Bytes,
            lineage: lineage.into(),
            version: version.into(),
            slope,
            class: None,
            first_seen: OffsetDateTime::UNIX_EPOCH,
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
        }
    }

    #[test]
    fn a_change_of_the_workload_s_own_source_is_named_at_its_version() {
        let mut versions = vec![
            summary("gcc-glibc", "13.2.0", 1.0, 6),
            summary("gcc-glibc", "14.1.0", 1.0, 6),
            summary("gcc-glibc", "14.2.0", 2.0, 6),
        ];
        let series = |versions: Vec<VersionSummary>| {
            SeriesView::new("strchr".into(), "gcc-glibc".into(), SizeUnit::Bytes, versions, Vec::new())
        };
        assert!(series(versions.clone()).source_changes().is_empty(), "one source throughout");
        versions[2].source_hash = Some("d4e5f6".into());
        versions[1].source_count = 2;
        assert_eq!(
            series(versions).source_changes(),
            ["14.1.0 measured on 2 workload sources", "workload source changed at 14.2.0"]
        );
    }

    #[test]
    fn the_class_change_names_where_each_class_begins_and_ends() {
        use slopewatch_core::complexity::Class;
        let mut s = series(&[("0.14.0", 1.0), ("0.15.0", 1.0), ("0.15.2", 1.0), ("0.16.0", 2.0), ("0.17.0", 2.0)]);
        let classes = [Some(Class::Linear), None, Some(Class::Linear), Some(Class::Quadratic), Some(Class::Quadratic)];
        for (v, c) in s.versions.iter_mut().zip(classes) {
            v.summary.as_mut().unwrap().complexity = Some(complexity(c));
        }
        assert_eq!(s.class_change().as_deref(), Some("O(n) through 0.15.2, O(n²) from 0.16.0"));
        assert_eq!(s.rows()[1].class, Some("unsure"));
        s.versions[4].summary.as_mut().unwrap().complexity = Some(complexity(Some(Class::Linear)));
        assert_eq!(s.class_change().as_deref(), Some("O(n) through 0.15.2, O(n²) at 0.16.0, O(n) from 0.17.0"));
        for v in &mut s.versions {
            v.summary.as_mut().unwrap().complexity = Some(complexity(Some(Class::Linear)));
        }
        assert_eq!(s.class_change(), None, "no change to state");
    }

    #[test]
    fn bands_split_at_watch_and_alert_levels() {
        assert_eq!(Band::of(1.0), Band::Linear);
        assert_eq!(Band::of(1.2), Band::Linear);
        assert_eq!(Band::of(1.3), Band::Watch);
        assert_eq!(Band::of(1.5), Band::Watch);
        assert_eq!(Band::of(1.51), Band::Regression);
    }

    #[test]
    fn the_marked_version_is_where_the_current_streak_over_the_threshold_began() {
        let s = series(&[("1", 1.0), ("2", 2.0), ("3", 1.0), ("4", 2.0), ("5", 2.1)]);
        assert_eq!(s.first_over_threshold(), Some(3));
        let recovered = series(&[("1", 1.0), ("2", 2.0), ("3", 1.0)]);
        assert_eq!(recovered.first_over_threshold(), Some(1));
        assert_eq!(series(&[("1", 1.0)]).first_over_threshold(), None);
        assert_eq!(series(&[("1", 1.9), ("2", 2.0)]).first_over_threshold(), Some(0));
    }

    #[test]
    fn rows_compare_each_version_at_the_largest_shared_size() {
        let mut s = series(&[("1", 1.0), ("2", 2.0)]);
        s.versions[1].summary.as_mut().unwrap().sizes.pop();
        let shared = s.shared_size().unwrap();
        assert_eq!(shared, 65536 << 3);
        let rows = s.rows();
        assert_eq!(rows[0].ratio_to_previous, None);
        let expected = (shared as f64).powf(2.0) / shared as f64;
        assert!((rows[1].ratio_to_previous.unwrap() / expected - 1.0).abs() < 1e-9);
        assert_eq!(rows[1].band, Some(Band::Regression));
    }

    #[test]
    fn the_loglog_chart_draws_the_latest_versions_unless_others_are_chosen() {
        let s = series(&[("1", 1.0), ("2", 1.0), ("3", 1.0), ("4", 1.0), ("5", 1.0), ("6", 2.0)]);
        let default: Vec<_> = s.loglog(&[]).lines.into_iter().map(|l| l.label).collect();
        assert_eq!(default, ["3", "4", "5", "6"]);
        let chosen: Vec<_> =
            s.loglog(&["1".into(), "6".into(), "nope".into()]).lines.into_iter().map(|l| l.label).collect();
        assert_eq!(chosen, ["1", "6"]);
    }

    #[test]
    fn the_overview_has_a_cell_per_lineage_at_its_latest_version() {
        let history = vec![
            slope_row("memchr", "gcc-glibc", "12", 1.0),
            slope_row("strchr", "gcc-glibc", "12", 1.0),
            slope_row("strchr", "zig-cc-musl", "0.14.1", 1.0),
            slope_row("strchr", "zig-cc-musl", "0.15.2", 1.05),
            slope_row("strchr", "zig-cc-musl", "0.16.0", 2.0),
        ];
        let o = Overview::from_history(&history, &[]);
        assert_eq!(o.lineages, ["gcc-glibc", "zig-cc-musl"]);
        assert_eq!(o.rows.len(), 2);
        assert!(o.rows[0].cells[1].is_none(), "memchr was never built with zig");
        let cell = o.rows[1].cells[1].as_ref().unwrap();
        assert_eq!((cell.version.as_str(), cell.band, cell.versions), ("0.16.0", Some(Band::Regression), 3));
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
            summary: "wrong result at 65536: got -1, expected 9362".into(),
            run_id: uuid::Uuid::nil(),
            first_seen: OffsetDateTime::UNIX_EPOCH,
            last_failed_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn failure_row(lineage: &str, version: &str, failed_runs: i32, passed_runs: i32) -> FailureRow {
        FailureRow {
            workload: "strchr".into(),
            size_unit: SizeUnit::Bytes,
            lineage: lineage.into(),
            version: version.into(),
            kind: "wrong_result".into(),
            failed_runs,
            passed_runs,
            first_seen: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn the_overview_shows_a_version_every_run_failed_instead_of_its_slope() {
        let history = vec![
            slope_row("strchr", "gcc-glibc", "12", 1.0),
            slope_row("strchr", "gcc-glibc", "13", 1.0),
            slope_row("strchr", "musl-gcc", "1.2.4", 1.0),
        ];
        let failures = [failure_row("gcc-glibc", "13", 1, 2), failure_row("musl-gcc", "1.2.5", 2, 0)];
        let o = Overview::from_history(&history, &failures);
        let gcc = o.rows[0].cells[0].as_ref().unwrap();
        assert_eq!((gcc.slope, gcc.class()), (Some(1.0), "linear"));
        assert_eq!(gcc.failure.as_ref().unwrap().marker(), "failed in 1 of 3 runs");
        let musl = o.rows[0].cells[1].as_ref().unwrap();
        assert_eq!((musl.version.as_str(), musl.slope, musl.class(), musl.versions), ("1.2.5", None, "failed", 2));
        assert_eq!(musl.failure.as_ref().unwrap().kind.label(), "wrong result");
    }

    #[test]
    fn a_series_holds_versions_every_run_failed_in_version_order() {
        let summaries = vec![summary("zig-cc-musl", "0.14.1", 1.0, 5), summary("zig-cc-musl", "0.16.0", 1.0, 5)];
        let s = SeriesView::new(
            "strchr".into(),
            "zig-cc-musl".into(),
            SizeUnit::Bytes,
            summaries,
            vec![failures("0.15.2", 2, 2), failures("0.16.0", 1, 4)],
        );
        let order: Vec<&str> = s.versions.iter().map(|v| v.version.as_str()).collect();
        assert_eq!(order, ["0.14.1", "0.15.2", "0.16.0"]);
        let rows = s.rows();
        assert_eq!((rows[1].slope, rows[1].band, rows[1].runs), (None, None, 2));
        assert_eq!(failed_in(rows[1].failures.as_ref().unwrap()), "failed in every run (2 runs), on 2 hosts");
        assert_eq!(
            failed_in(rows[2].failures.as_ref().unwrap()),
            "failed in 1 of the version's 4 runs, on 1 of 2 hosts"
        );
        assert!(rows[2].ratio_to_previous.is_some(), "compared with the last version that measured it");
        let view = s.loglog(&[]);
        assert_eq!(view.lines.len(), 2);
        assert_eq!(view.lines[1].failed.as_deref(), Some("✗ wrong result in 1 of 4 runs"));
        assert_eq!(view.failed_every_run, ["0.15.2: ✗ wrong result, failed in every run (2 runs), on 2 hosts"]);
    }

    #[test]
    fn a_comparison_gives_ratios_at_shared_sizes_and_the_slope_delta() {
        let c = CompareView {
            workload: "strchr".into(),
            size_unit: SizeUnit::Bytes,
            a: summary("musl-gcc", "1.2.5", 1.0, 4),
            b: summary("zig-cc-musl", "0.16.0", 2.0, 3),
        };
        let rows = c.rows();
        assert_eq!(rows.len(), 3);
        assert!((rows[0].ratio - 65536.0).abs() < 1e-6);
        assert!((c.slope_delta() - 1.0).abs() < 1e-12);
        assert_eq!(c.loglog().lines.len(), 2);
    }
}
