//! The overview's model: each workload's slope or failure at every lineage's latest version, and
//! the open regressions listed beside it. A cell shows one series: of the metric asked for, or
//! else of wall time where the workload has it in that lineage, else of the metric it has.

use super::{measure, Band};
use crate::store::{FailureRow, SlopeRow};
use serde::Serialize;
use slopewatch_core::version::sort_versions;
use slopewatch_core::wire::{FailureKind, Metric, SizeUnit};
use std::collections::BTreeMap;
use time::OffsetDateTime;

/// The overview: a row per workload, a column per lineage at its latest version.
#[derive(Debug, Clone, Default)]
pub struct Overview {
    pub lineages: Vec<String>,
    pub rows: Vec<OverviewRow>,
    /// Every metric some series is of, in `Metric::ALL` order: what a reader may pick from.
    pub metrics: Vec<Metric>,
}

#[derive(Debug, Clone)]
pub struct OverviewRow {
    pub workload: String,
    pub size_unit: SizeUnit,
    /// One cell per lineage, in the order of `Overview::lineages`; `None` where never measured.
    pub cells: Vec<Option<OverviewCell>>,
}

#[derive(Debug, Clone)]
pub struct OverviewCell {
    pub lineage: String,
    /// The metric of the series the cell shows: the one that decided it.
    pub metric: Metric,
    /// The other metrics the workload has a series of in this lineage.
    pub others: Vec<Metric>,
    pub version: String,
    /// The latest version's slope over the runs that passed; `None` when every run failed.
    pub slope: Option<f64>,
    pub band: Option<Band>,
    /// The complexity class at the latest version, `O(n²)` or `unsure`.
    pub complexity_class: Option<&'static str>,
    pub versions: usize,
    /// Where runs of the latest version failed the workload.
    pub failure: Option<CellFailure>,
}

/// How many of a version's runs failed a workload, and how (the latest failure's kind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellFailure {
    pub kind: FailureKind,
    pub failed_runs: i64,
    pub runs: i64,
}

impl CellFailure {
    /// "failed in 1 of 3 runs".
    pub fn marker(&self) -> String {
        let runs = if self.runs == 1 { "run" } else { "runs" };
        format!("failed in {} of {} {runs}", self.failed_runs, self.runs)
    }
}

impl OverviewCell {
    /// The cell's CSS class: its band, or `failed`.
    pub fn class(&self) -> &'static str {
        self.band.map_or("failed", Band::name)
    }
}

/// A series whose latest version is over the threshold.
#[derive(Debug, Clone, Serialize)]
pub struct OpenRegression {
    /// The stored regression this belongs to, with the team's notes.
    pub id: Option<i64>,
    pub workload: String,
    /// The metric of the series the workload regressed on.
    #[serde(rename = "measure")]
    pub metric: Metric,
    pub lineage: String,
    /// The version where the slope went over the threshold and stayed.
    pub first_bad_version: String,
    /// The version just before it, if there is one.
    pub last_good_version: Option<String>,
    pub latest_version: String,
    pub latest_slope: f64,
    pub good_slope: Option<f64>,
    /// For a workload there for a failure, what broke, e.g. `wrong result at 65536`.
    pub failure: Option<String>,
}

/// Groups the slope history (version-ordered within each series) into series, by workload,
/// metric and lineage.
fn group(history: &[SlopeRow]) -> BTreeMap<(&str, Metric, &str), Vec<&SlopeRow>> {
    let mut series: BTreeMap<(&str, Metric, &str), Vec<&SlopeRow>> = BTreeMap::new();
    for row in history {
        series.entry((&row.workload, row.metric, &row.lineage)).or_default().push(row);
    }
    series
}

/// A version of a series on the overview: its slope where runs passed, its failures.
struct OverviewVersion<'a> {
    version: &'a str,
    size_unit: SizeUnit,
    first_seen: OffsetDateTime,
    slope: Option<f64>,
    class: Option<Option<slopewatch_core::complexity::Class>>,
    failure: Option<&'a FailureRow>,
}

/// The versions of each metric's series of one workload in one lineage.
type Cell<'a> = BTreeMap<Metric, Vec<OverviewVersion<'a>>>;

/// The series a cell shows, of the metric picked for it.
struct Shown<'a> {
    workload: &'a str,
    lineage: &'a str,
    metric: Metric,
    /// The other metrics the cell has series of.
    others: Vec<Metric>,
    versions: Vec<OverviewVersion<'a>>,
}

impl Overview {
    /// The matrix from the slope history and the versions where workloads failed, which may
    /// have no slope at all (every run failed); each cell of the metric `asked` for (a workload
    /// without a series of it has no row), or else of the cell's default (`measure::pick`).
    pub fn from_history(history: &[SlopeRow], failures: &[FailureRow], asked: Option<Metric>) -> Overview {
        let mut series: BTreeMap<(&str, &str), Cell> = BTreeMap::new();
        for row in history {
            let cell = series.entry((&row.workload, &row.lineage)).or_default();
            cell.entry(row.metric).or_default().push(OverviewVersion {
                version: &row.version,
                size_unit: row.size_unit,
                first_seen: row.first_seen,
                slope: Some(row.slope),
                class: row.class,
                failure: None,
            });
        }
        for f in failures {
            let versions = series.entry((&f.workload, &f.lineage)).or_default().entry(f.metric).or_default();
            match versions.iter_mut().find(|v| v.version == f.version) {
                Some(v) => v.failure = Some(f),
                None => versions.push(OverviewVersion {
                    version: &f.version,
                    size_unit: f.size_unit,
                    first_seen: f.first_seen,
                    slope: None,
                    class: None,
                    failure: Some(f),
                }),
            }
        }
        let mut metrics: Vec<Metric> = series.values().flat_map(|cell| cell.keys().copied()).collect();
        metrics.sort();
        metrics.dedup();
        let mut shown: Vec<Shown> = Vec::new();
        for ((workload, lineage), mut cell) in series {
            let available: Vec<Metric> = cell.keys().copied().collect();
            let Some(metric) = measure::pick(asked, &available) else { continue };
            let versions = cell.remove(&metric).expect("picked among the cell's metrics");
            let others = available.into_iter().filter(|&m| m != metric).collect();
            shown.push(Shown { workload, lineage, metric, others, versions });
        }
        let mut lineages: Vec<String> = shown.iter().map(|s| s.lineage.to_string()).collect();
        lineages.sort();
        lineages.dedup();
        let mut rows: Vec<OverviewRow> = Vec::new();
        for Shown { workload, lineage, metric, others, mut versions } in shown {
            sort_versions(&mut versions, |v| v.version, |v| v.first_seen);
            let latest = versions.last().expect("a series has a version");
            if rows.last().is_none_or(|r| r.workload != workload) {
                rows.push(OverviewRow {
                    workload: workload.to_string(),
                    size_unit: latest.size_unit,
                    cells: vec![None; lineages.len()],
                });
            }
            let column = lineages.iter().position(|l| l.as_str() == lineage).expect("lineage listed");
            let failure = latest.failure.and_then(|f| {
                let kind = FailureKind::parse(&f.kind)?;
                let failed_runs = i64::from(f.failed_runs);
                Some(CellFailure { kind, failed_runs, runs: failed_runs + i64::from(f.passed_runs) })
            });
            rows.last_mut().expect("row pushed").cells[column] = Some(OverviewCell {
                lineage: lineage.to_string(),
                metric,
                others,
                version: latest.version.to_string(),
                slope: latest.slope,
                band: latest.slope.map(Band::of),
                complexity_class: latest.class.map(crate::format::label),
                versions: versions.len(),
                failure,
            });
        }
        Overview { lineages, rows, metrics }
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
            let latest = series.get(&(m.workload.as_str(), m.metric, r.lineage.as_str())).and_then(|v| v.last());
            OpenRegression {
                id: Some(r.id),
                workload: m.workload.clone(),
                metric: m.metric,
                lineage: r.lineage.clone(),
                first_bad_version: r.version.clone(),
                last_good_version: r.previous_version.clone(),
                latest_version: latest.map_or_else(|| r.version.clone(), |l| l.version.clone()),
                latest_slope: latest.map_or(m.slope.unwrap_or(f64::NAN), |l| l.slope),
                good_slope: m.previous_slope,
                failure: m.failure_summary().filter(|_| m.reason == "failure"),
            }
        })
        .collect();
    open.sort_by(|a, b| b.latest_slope.total_cmp(&a.latest_slope));
    open
}

#[cfg(test)]
mod tests {
    use super::*;
    use slopewatch_core::wire::Metric;

    fn slope_row(workload: &str, lineage: &str, version: &str, slope: f64) -> SlopeRow {
        SlopeRow {
            workload: workload.into(),
            metric: Metric::Wall,
            size_unit: SizeUnit::Bytes,
            lineage: lineage.into(),
            version: version.into(),
            slope,
            class: None,
            first_seen: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn failure_row(lineage: &str, version: &str, failed_runs: i32, passed_runs: i32) -> FailureRow {
        FailureRow {
            workload: "strchr".into(),
            metric: Metric::Wall,
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
    fn the_overview_has_a_cell_per_lineage_at_its_latest_version() {
        let history = vec![
            slope_row("memchr", "gcc-glibc", "12", 1.0),
            slope_row("strchr", "gcc-glibc", "12", 1.0),
            slope_row("strchr", "zig-cc-musl", "0.14.1", 1.0),
            slope_row("strchr", "zig-cc-musl", "0.15.2", 1.05),
            slope_row("strchr", "zig-cc-musl", "0.16.0", 2.0),
        ];
        let o = Overview::from_history(&history, &[], None);
        assert_eq!(o.lineages, ["gcc-glibc", "zig-cc-musl"]);
        assert_eq!(o.rows.len(), 2);
        assert!(o.rows[0].cells[1].is_none(), "memchr was never built with zig");
        let cell = o.rows[1].cells[1].as_ref().unwrap();
        assert_eq!((cell.version.as_str(), cell.band, cell.versions), ("0.16.0", Some(Band::Regression), 3));
    }

    #[test]
    fn each_cell_shows_wall_time_where_its_workload_has_it_or_the_metric_asked_for() {
        let counted = |workload: &str, slope: f64| SlopeRow {
            metric: Metric::InstructionsValgrind,
            ..slope_row(workload, "zig-cc-musl", "0.16.0", slope)
        };
        let history =
            vec![counted("memchr", 1.0), slope_row("strchr", "zig-cc-musl", "0.16.0", 1.0), counted("strchr", 2.0)];
        let o = Overview::from_history(&history, &[], None);
        assert_eq!(o.metrics, [Metric::Wall, Metric::InstructionsValgrind]);
        let cell = |o: &Overview, row: usize| o.rows[row].cells[0].clone().unwrap();
        let strchr = cell(&o, 1);
        assert_eq!(
            (strchr.metric, strchr.slope, strchr.others.clone()),
            (Metric::Wall, Some(1.0), vec![Metric::InstructionsValgrind])
        );
        assert_eq!(cell(&o, 0).metric, Metric::InstructionsValgrind, "memchr has no wall series: its count decides");
        let asked = Overview::from_history(&history, &[], Some(Metric::InstructionsValgrind));
        assert_eq!((cell(&asked, 1).metric, cell(&asked, 1).slope), (Metric::InstructionsValgrind, Some(2.0)));
        let wall = Overview::from_history(&history, &[], Some(Metric::Wall));
        assert_eq!(
            wall.rows.iter().map(|r| r.workload.as_str()).collect::<Vec<_>>(),
            ["strchr"],
            "memchr has no wall row"
        );
    }

    #[test]
    fn the_overview_shows_a_version_every_run_failed_instead_of_its_slope() {
        let history = vec![
            slope_row("strchr", "gcc-glibc", "12", 1.0),
            slope_row("strchr", "gcc-glibc", "13", 1.0),
            slope_row("strchr", "musl-gcc", "1.2.4", 1.0),
        ];
        let failures = [failure_row("gcc-glibc", "13", 1, 2), failure_row("musl-gcc", "1.2.5", 2, 0)];
        let o = Overview::from_history(&history, &failures, None);
        let gcc = o.rows[0].cells[0].as_ref().unwrap();
        assert_eq!((gcc.slope, gcc.class()), (Some(1.0), "linear"));
        assert_eq!(gcc.failure.as_ref().unwrap().marker(), "failed in 1 of 3 runs");
        let musl = o.rows[0].cells[1].as_ref().unwrap();
        assert_eq!((musl.version.as_str(), musl.slope, musl.class(), musl.versions), ("1.2.5", None, "failed", 2));
        assert_eq!(musl.failure.as_ref().unwrap().kind.label(), "wrong result");
    }
}
