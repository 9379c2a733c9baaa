//! What the dashboard shows, derived from store rows without I/O: slope bands, a series with its
//! per-version table, the overview matrix, open regressions and comparisons. Pages, charts and
//! exports all read these, so a page, its charts and its CSV carry the same numbers.

use crate::store::{SlopeRow, VersionSummary};
use serde::Serialize;
use std::collections::BTreeMap;

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

/// One workload in one toolchain lineage across its versions, in version order.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesView {
    pub workload: String,
    pub lineage: String,
    pub size_unit: String,
    pub versions: Vec<VersionSummary>,
}

/// A version's line of the series table, in raw numbers (pages format them, exports keep them).
#[derive(Debug, Clone, Serialize)]
pub struct VersionRow {
    pub version: String,
    pub slope: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub r2: f64,
    pub band: Band,
    /// Median time at the series' shared size, if this version measured it.
    pub median_ns_at_shared_size: Option<f64>,
    /// This version's time at the shared size over the previous version's.
    pub ratio_to_previous: Option<f64>,
    pub runs: i64,
    pub hosts: i64,
}

impl SeriesView {
    /// The version where the slope went over the threshold and stayed there up to the latest
    /// version, or else the first version ever over it: the one a reader needs to find.
    pub fn first_over_threshold(&self) -> Option<usize> {
        let over = |i: usize| self.versions[i].slope > ALERT_THRESHOLD;
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
        let mut versions = self.versions.iter();
        let first = versions.next()?;
        first
            .sizes
            .iter()
            .rev()
            .map(|s| s.size)
            .find(|&size| self.versions.iter().all(|v| v.sizes.iter().any(|s| s.size == size)))
    }

    pub fn rows(&self) -> Vec<VersionRow> {
        let shared = self.shared_size();
        let mut previous: Option<f64> = None;
        self.versions
            .iter()
            .map(|v| {
                let median = shared.and_then(|size| median_at(v, size));
                let ratio = match (previous, median) {
                    (Some(p), Some(m)) if p > 0.0 => Some(m / p),
                    _ => None,
                };
                previous = median;
                VersionRow {
                    version: v.version.clone(),
                    slope: v.slope,
                    ci_low: v.ci_low,
                    ci_high: v.ci_high,
                    r2: v.r2,
                    band: Band::of(v.slope),
                    median_ns_at_shared_size: median,
                    ratio_to_previous: ratio,
                    runs: v.runs,
                    hosts: v.hosts,
                }
            })
            .collect()
    }

    /// The versions the log-log chart draws: those asked for that exist, or the latest few.
    pub fn chosen_versions(&self, asked: &[String]) -> Vec<&VersionSummary> {
        let chosen: Vec<&VersionSummary> = self.versions.iter().filter(|v| asked.contains(&v.version)).collect();
        if chosen.is_empty() {
            let skip = self.versions.len().saturating_sub(DEFAULT_LOGLOG_VERSIONS);
            self.versions.iter().skip(skip).collect()
        } else {
            chosen
        }
    }

    /// The log-log chart of the chosen versions.
    pub fn loglog(&self, asked: &[String]) -> LogLogView {
        LogLogView {
            title: format!("Time vs size: {} · {}", self.workload, self.lineage),
            size_unit: self.size_unit.clone(),
            lines: self.chosen_versions(asked).into_iter().map(|v| LogLogLine::of(&v.version, v)).collect(),
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
    pub size_unit: String,
    pub lines: Vec<LogLogLine>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LogLogLine {
    pub label: String,
    pub slope: f64,
    /// (size, median ns), by size.
    pub points: Vec<(u64, f64)>,
}

impl LogLogLine {
    pub fn of(label: &str, v: &VersionSummary) -> LogLogLine {
        LogLogLine {
            label: label.to_string(),
            slope: v.slope,
            points: v.sizes.iter().map(|s| (s.size, s.median_ns)).collect(),
        }
    }
}

/// The overview: a row per workload, a column per lineage at its latest version.
#[derive(Debug, Clone, Default)]
pub struct Overview {
    pub lineages: Vec<String>,
    pub rows: Vec<OverviewRow>,
}

#[derive(Debug, Clone)]
pub struct OverviewRow {
    pub workload: String,
    pub size_unit: String,
    /// One cell per lineage, in the order of `Overview::lineages`; `None` where never measured.
    pub cells: Vec<Option<OverviewCell>>,
}

#[derive(Debug, Clone)]
pub struct OverviewCell {
    pub lineage: String,
    pub version: String,
    pub slope: f64,
    pub band: Band,
    pub versions: usize,
}

/// A series whose latest version is over the threshold.
#[derive(Debug, Clone, Serialize)]
pub struct OpenRegression {
    /// The stored regression this belongs to, with the team's notes.
    pub id: Option<i64>,
    pub workload: String,
    pub lineage: String,
    /// The version where the slope went over the threshold and stayed.
    pub first_bad_version: String,
    /// The version just before it, if there is one.
    pub last_good_version: Option<String>,
    pub latest_version: String,
    pub latest_slope: f64,
    pub good_slope: Option<f64>,
}

/// Groups the slope history (version-ordered within each workload and lineage) into series.
fn group(history: &[SlopeRow]) -> BTreeMap<(&str, &str), Vec<&SlopeRow>> {
    let mut series: BTreeMap<(&str, &str), Vec<&SlopeRow>> = BTreeMap::new();
    for row in history {
        series.entry((&row.workload, &row.lineage)).or_default().push(row);
    }
    series
}

impl Overview {
    pub fn from_history(history: &[SlopeRow]) -> Overview {
        let series = group(history);
        let mut lineages: Vec<String> = series.keys().map(|(_, l)| l.to_string()).collect();
        lineages.sort();
        lineages.dedup();
        let mut rows: Vec<OverviewRow> = Vec::new();
        for ((workload, lineage), versions) in &series {
            let latest = versions.last().expect("a series has a version");
            if rows.last().is_none_or(|r| r.workload != *workload) {
                rows.push(OverviewRow {
                    workload: workload.to_string(),
                    size_unit: latest.size_unit.clone(),
                    cells: vec![None; lineages.len()],
                });
            }
            let column = lineages.iter().position(|l| l.as_str() == *lineage).expect("lineage listed");
            rows.last_mut().expect("row pushed").cells[column] = Some(OverviewCell {
                lineage: lineage.to_string(),
                version: latest.version.clone(),
                slope: latest.slope,
                band: Band::of(latest.slope),
                versions: versions.len(),
            });
        }
        Overview { lineages, rows }
    }
}

/// The stored open regressions, one line per workload, with each series' latest version from
/// the history; worst first.
pub fn open_regressions(
    stored: &[(crate::model::RegressionRow, Vec<crate::model::RegressionWorkload>)],
    history: &[SlopeRow],
) -> Vec<OpenRegression> {
    let series = group(history);
    let mut open: Vec<OpenRegression> = stored
        .iter()
        .flat_map(|(r, members)| members.iter().map(move |m| (r, m)))
        .map(|(r, m)| {
            let latest = series.get(&(m.workload.as_str(), r.lineage.as_str())).and_then(|v| v.last());
            OpenRegression {
                id: Some(r.id),
                workload: m.workload.clone(),
                lineage: r.lineage.clone(),
                first_bad_version: r.version.clone(),
                last_good_version: r.previous_version.clone(),
                latest_version: latest.map_or_else(|| r.version.clone(), |l| l.version.clone()),
                latest_slope: latest.map_or(m.slope.unwrap_or(f64::NAN), |l| l.slope),
                good_slope: m.previous_slope,
            }
        })
        .collect();
    open.sort_by(|a, b| b.latest_slope.total_cmp(&a.latest_slope));
    open
}

/// Two toolchain versions of one workload side by side; of one lineage or of two.
#[derive(Debug, Clone)]
pub struct CompareView {
    pub workload: String,
    pub size_unit: String,
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
            size_unit: self.size_unit.clone(),
            lines: vec![LogLogLine::of(&self.label_a(), &self.a), LogLogLine::of(&self.label_b(), &self.b)],
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::SizeMedian;
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
        }
    }

    pub(crate) fn series(slopes: &[(&str, f64)]) -> SeriesView {
        SeriesView {
            workload: "strchr".into(),
            lineage: "zig-cc-musl".into(),
            size_unit: "bytes".into(),
            versions: slopes.iter().map(|&(v, k)| summary("zig-cc-musl", v, k, 5)).collect(),
        }
    }

    fn slope_row(workload: &str, lineage: &str, version: &str, slope: f64) -> SlopeRow {
        SlopeRow {
            workload: workload.into(),
            size_unit: "bytes".into(),
            lineage: lineage.into(),
            version: version.into(),
            slope,
            first_seen: OffsetDateTime::UNIX_EPOCH,
        }
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
        s.versions[1].sizes.pop();
        let shared = s.shared_size().unwrap();
        assert_eq!(shared, 65536 << 3);
        let rows = s.rows();
        assert_eq!(rows[0].ratio_to_previous, None);
        let expected = (shared as f64).powf(2.0) / shared as f64;
        assert!((rows[1].ratio_to_previous.unwrap() / expected - 1.0).abs() < 1e-9);
        assert_eq!(rows[1].band, Band::Regression);
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
        let o = Overview::from_history(&history);
        assert_eq!(o.lineages, ["gcc-glibc", "zig-cc-musl"]);
        assert_eq!(o.rows.len(), 2);
        assert!(o.rows[0].cells[1].is_none(), "memchr was never built with zig");
        let cell = o.rows[1].cells[1].as_ref().unwrap();
        assert_eq!((cell.version.as_str(), cell.band, cell.versions), ("0.16.0", Band::Regression, 3));
    }

    #[test]
    fn a_comparison_gives_ratios_at_shared_sizes_and_the_slope_delta() {
        let c = CompareView {
            workload: "strchr".into(),
            size_unit: "bytes".into(),
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
