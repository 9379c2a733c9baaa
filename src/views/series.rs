//! A workload's series of one metric in one lineage: its versions with their summaries and
//! failures, the per-version table, where its class and source changed, what it costs at its size
//! of interest, and its log-log chart's lines.

use super::ratio::{median_at, SizeRatio};
use super::{failed_in, Alerting, Band, DEFAULT_LOGLOG_VERSIONS};
use crate::format;
use crate::store::{VersionFailures, VersionSummary};
use serde::Serialize;
use slopewatch_core::version::sort_versions;
use slopewatch_core::wire::{Metric, SizeUnit};
use std::collections::BTreeMap;
use time::OffsetDateTime;

/// One workload's series of one metric in one toolchain lineage across its versions, in version
/// order.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesView {
    pub workload: String,
    /// What every value of the series is: times in nanoseconds, or instructions counted.
    pub metric: Metric,
    pub lineage: String,
    pub size_unit: SizeUnit,
    /// Every version: those some run passed, with their summary, and those every run failed.
    pub versions: Vec<SeriesAtVersion>,
    /// The size the workload's team runs it at, when its latest run said.
    pub size_of_interest: Option<u64>,
    /// The alert rules as they judge this workload: what its versions are banded by.
    #[serde(skip)]
    pub alerting: Alerting,
}

/// One version of a series: its summary over the runs that passed, its failures, or both.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesAtVersion {
    pub version: String,
    /// `None` when every run of the version failed the workload.
    pub summary: Option<VersionSummary>,
    pub failures: Option<VersionFailures>,
}

impl SeriesAtVersion {
    pub fn slope(&self) -> Option<f64> {
        self.summary.as_ref().map(|s| s.slope)
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
    /// Median at the series' shared size, if this version measured it, in the series' metric
    /// (nanoseconds, or instructions).
    pub median_ns_at_shared_size: Option<f64>,
    /// This version's median at the shared size over the previous version's.
    pub ratio_to_previous: Option<f64>,
    /// That ratio with its 95% interval, from both versions' spread about their fits there
    /// (`within_noise` where it holds 1); a count's interval is the ratio itself.
    pub ratio_interval: Option<SizeRatio>,
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

    /// Where a version's cost changes regime at one size (`slopewatch_core::complexity::RegimeStep`),
    /// in words: "at 0.16.0 the cost jumps 33.0× at 16 KiB". Its class is that of the growth on both
    /// sides of the jump, so a jump alone is no class change.
    pub fn regime_changes(&self) -> Vec<String> {
        self.versions
            .iter()
            .filter_map(|v| {
                let step = v.summary.as_ref()?.complexity.as_ref()?.step?;
                let how = slopewatch_core::format::regime_step(&step, self.size_unit);
                Some(format!("at {} the cost {how}", v.version))
            })
            .collect()
    }

    /// Where a version ran the very build the measured version before it ran (the same build
    /// hash): "build unchanged since 0.15.2 at 0.16.0", naming the first version of that build.
    /// Nothing there can have changed what the code costs, and the alert rules open nothing.
    pub fn unchanged_builds(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let mut since: Option<(&str, &str)> = None;
        for v in &self.versions {
            let Some(hash) = v.summary.as_ref().and_then(|s| s.build_hash.as_deref()) else {
                since = None;
                continue;
            };
            match since {
                Some((first, build)) if build == hash => {
                    notes.push(format!("build unchanged since {first} at {}", v.version));
                }
                _ => since = Some((&v.version, hash)),
            }
        }
        notes
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

    /// The series of `metric` from its summaries (in version order) and the failures of its
    /// versions, judged by `alerting`.
    pub fn new(
        workload: String,
        metric: Metric,
        lineage: String,
        size_unit: SizeUnit,
        summaries: Vec<VersionSummary>,
        failures: Vec<VersionFailures>,
        alerting: Alerting,
    ) -> SeriesView {
        let mut failures: BTreeMap<String, VersionFailures> =
            failures.into_iter().map(|f| (f.version.clone(), f)).collect();
        let mut versions: Vec<(SeriesAtVersion, OffsetDateTime)> = summaries
            .into_iter()
            .map(|s| {
                let failed = failures.remove(&s.version);
                let first_seen = failed.as_ref().map_or(s.first_seen, |f| f.first_seen.min(s.first_seen));
                (SeriesAtVersion { version: s.version.clone(), summary: Some(s), failures: failed }, first_seen)
            })
            .collect();
        versions.extend(failures.into_values().map(|f| {
            let first_seen = f.first_seen;
            (SeriesAtVersion { version: f.version.clone(), summary: None, failures: Some(f) }, first_seen)
        }));
        sort_versions(&mut versions, |(v, _)| &v.version, |(_, first_seen)| *first_seen);
        SeriesView {
            workload,
            metric,
            lineage,
            size_unit,
            versions: versions.into_iter().map(|(v, _)| v).collect(),
            size_of_interest: None,
            alerting,
        }
    }

    /// What the latest measured version costs at the size of interest, against the measured
    /// version before it, predicted from each version's per-size medians in the series' metric:
    /// "at 4 MiB: ≈ 46 s [41 s, 52 s] here, …; ≈ 1.5 ms at 0.15.2, about 31,000×". `None` without
    /// a size of interest.
    pub fn cost_at_interest(&self) -> Option<String> {
        use slopewatch_core::predict::step_sentence_in;
        let at = self.size_of_interest?;
        let fitted = |s: &VersionSummary| crate::model::SizeMedian::predict(&s.sizes, at);
        let measured: Vec<(usize, &VersionSummary)> = self.measured().collect();
        let &(last, latest) = measured.last()?;
        let bad = fitted(latest)?;
        let before =
            measured.iter().rev().nth(1).and_then(|&(i, s)| Some((fitted(s)?, self.versions[i].version.as_str())));
        let sentence = step_sentence_in(&bad, before.as_ref().map(|(p, v)| (p, *v)), self.size_unit, self.metric);
        Some(sentence.replacen(" here", &format!(" at {}", self.versions[last].version), 1))
    }

    /// The versions some run passed, with their places among all versions.
    pub fn measured(&self) -> impl Iterator<Item = (usize, &VersionSummary)> {
        self.versions.iter().enumerate().filter_map(|(i, v)| Some((i, v.summary.as_ref()?)))
    }

    /// The versions with failures, with their places among all versions.
    pub fn failed(&self) -> impl Iterator<Item = (usize, &SeriesAtVersion, &VersionFailures)> {
        self.versions.iter().enumerate().filter_map(|(i, v)| Some((i, v, v.failures.as_ref()?)))
    }

    /// The version where the slope went over the threshold (as the alert rules decide it) and
    /// stayed there up to the latest version, or else the first version ever over it: the one a
    /// reader needs to find.
    pub fn first_over_threshold(&self) -> Option<usize> {
        let over =
            |i: usize| self.versions[i].summary.as_ref().is_some_and(|s| self.alerting.band_of(s) == Band::Regression);
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
        let mut previous: Option<(f64, &VersionSummary)> = None;
        self.versions
            .iter()
            .map(|v| {
                let s = v.summary.as_ref();
                let median = s.zip(shared).and_then(|(s, size)| median_at(s, size));
                let (ratio, interval) = match (previous, median, s, shared) {
                    (Some((p, before)), Some(m), Some(after), Some(size)) if p > 0.0 => {
                        (Some(m / p), Some(SizeRatio::new(size, (p, m), (before, after), false)))
                    }
                    _ => (None, None),
                };
                if let (Some(m), Some(s)) = (median, s) {
                    previous = Some((m, s));
                }
                let f = v.failures.as_ref();
                VersionRow {
                    version: v.version.clone(),
                    slope: s.map(|s| s.slope),
                    ci_low: s.map(|s| s.ci_low),
                    ci_high: s.map(|s| s.ci_high),
                    r2: s.map(|s| s.r2),
                    band: s.map(|s| self.alerting.band_of(s)),
                    median_ns_at_shared_size: median,
                    ratio_to_previous: ratio,
                    ratio_interval: interval,
                    runs: f.map_or_else(|| s.map_or(0, |s| s.runs), |f| f.runs),
                    hosts: f.map_or_else(|| s.map_or(0, |s| s.hosts), |f| f.hosts),
                    failures: v.failures.clone(),
                    class: format::class_label(s.and_then(|s| s.complexity.as_ref())),
                }
            })
            .collect()
    }

    /// The versions the log-log chart draws: those asked for that exist, or the latest few.
    pub fn chosen_versions(&self, asked: &[String]) -> Vec<&SeriesAtVersion> {
        let chosen: Vec<&SeriesAtVersion> = self.versions.iter().filter(|v| asked.contains(&v.version)).collect();
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
            title: format!("{} vs size: {} · {}", format::sentence(self.metric.label()), self.workload, self.lineage),
            metric: self.metric,
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

/// Lines of median time (or count) against size, for a log-log chart.
#[derive(Debug, Clone, Serialize)]
pub struct LogLogView {
    pub title: String,
    /// What the lines' values are, which the vertical axis names.
    pub metric: Metric,
    pub size_unit: SizeUnit,
    pub lines: Vec<LogLogLine>,
    /// Chosen versions every run failed, which have no line: what the legend says of each.
    pub failed_every_run: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LogLogLine {
    pub label: String,
    pub slope: f64,
    /// (size, median), by size, in the view's metric.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Rules;
    use crate::views::tests::{complexity, failures, series, summary};

    #[test]
    fn a_change_of_the_workload_s_own_source_is_named_at_its_version() {
        let mut versions = vec![
            summary("gcc-glibc", "13.2.0", 1.0, 6),
            summary("gcc-glibc", "14.1.0", 1.0, 6),
            summary("gcc-glibc", "14.2.0", 2.0, 6),
        ];
        let series = |versions: Vec<VersionSummary>| {
            SeriesView::new(
                "strchr".into(),
                Metric::Wall,
                "gcc-glibc".into(),
                SizeUnit::Bytes,
                versions,
                Vec::new(),
                Alerting::of(&Rules::default(), "strchr"),
            )
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
    fn a_ratio_to_the_previous_version_carries_its_interval_and_says_when_it_is_within_the_noise() {
        let mut s = series(&[("1", 1.0), ("2", 1.0), ("3", 1.0)]);
        // Version 2 scatters ±20% about its line and is 5% slower at the shared size; version 3
        // is three times slower on a clean line.
        for (i, m) in s.versions[1].summary.as_mut().unwrap().sizes.iter_mut().enumerate() {
            m.median_ns *= if i % 2 == 0 { 1.2 } else { 0.8 };
        }
        s.versions[1].summary.as_mut().unwrap().sizes.last_mut().unwrap().median_ns *= 1.05 / 1.2;
        for m in &mut s.versions[2].summary.as_mut().unwrap().sizes {
            m.median_ns *= 3.0 * 1.05;
        }
        let rows = s.rows();
        assert!(rows[0].ratio_interval.is_none());
        let noisy = rows[1].ratio_interval.unwrap();
        assert!((noisy.ratio - 1.05).abs() < 1e-9 && noisy.within_noise, "{noisy:?}");
        let slower = rows[2].ratio_interval.unwrap();
        assert!((slower.ratio - 3.0).abs() < 1e-9 && !slower.within_noise && slower.low > 1.0, "{slower:?}");
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
    fn a_series_holds_versions_every_run_failed_in_version_order() {
        let summaries = vec![summary("zig-cc-musl", "0.14.1", 1.0, 5), summary("zig-cc-musl", "0.16.0", 1.0, 5)];
        let s = SeriesView::new(
            "strchr".into(),
            Metric::Wall,
            "zig-cc-musl".into(),
            SizeUnit::Bytes,
            summaries,
            vec![failures("0.15.2", 2, 2), failures("0.16.0", 1, 4)],
            Alerting::of(&Rules::default(), "strchr"),
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
}
