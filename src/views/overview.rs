//! The overview's model: each workload's slope or failure at every lineage's latest version, with
//! what it was at the version before and since when its state holds; rows worst first, control
//! lineages' columns first, each column with when its lineage last sent a run. A cell shows one
//! series: of the metric asked for, or else of wall time where the workload has it in that
//! lineage, else of the metric it has. Built from version summaries, never from runs or samples.

use super::{measure, Alerting, Band};
use crate::config::Rules;
use crate::store::{OverviewFailureRow, SlopeRow, ToolchainActivity};
use slopewatch_core::complexity::{Class, Complexity};
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::verdict::SlopeEvidence;
use slopewatch_core::version::sort_versions;
use slopewatch_core::wire::{FailureKind, Metric, SizeUnit};
use std::collections::BTreeMap;
use time::OffsetDateTime;

/// The overview: a row per workload, worst first; a column per lineage at its latest version,
/// control lineages first.
#[derive(Debug, Clone, Default)]
pub struct Overview {
    pub columns: Vec<Column>,
    pub rows: Vec<OverviewRow>,
    /// Every metric some series is of, in `Metric::ALL` order: what a reader may pick from.
    pub metrics: Vec<Metric>,
    /// Lineages that sent runs but have no column yet (their runs are still being summarised, or
    /// hold no series of the metric asked for).
    pub waiting: Vec<LineageActivity>,
}

/// A lineage's column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub lineage: String,
    /// The latest version any of the lineage's shown series reached.
    pub version: String,
    /// A control lineage (`[control] lineages`): the second implementation others are judged by.
    pub control: bool,
    /// When the lineage last sent a run, where the server knows.
    pub activity: Option<LineageActivity>,
}

/// The latest run a lineage sent, and whether runs of it wait to be summarised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineageActivity {
    pub lineage: String,
    /// The version of the lineage's latest run.
    pub version: String,
    pub last_run_at: OffsetDateTime,
    /// Runs of the lineage are stored but not yet in its version summaries.
    pub summarising: bool,
}

#[derive(Debug, Clone)]
pub struct OverviewRow {
    pub workload: String,
    pub size_unit: SizeUnit,
    /// One cell per column, in the order of `Overview::columns`; `None` where never measured.
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
    /// The latest version's band, as the alert rules decide it.
    pub band: Option<Band>,
    /// The workload's own threshold (`[alerts.workloads]`), where it has one.
    pub own_threshold: Option<f64>,
    /// The complexity class at the latest version, `O(n²)` or `unsure`.
    pub complexity_class: Option<&'static str>,
    pub versions: usize,
    /// Where runs of the latest version failed the workload.
    pub failure: Option<CellFailure>,
    /// The version before the latest: what the cell changed from.
    pub previous: Option<PreviousVersion>,
    /// Since when the latest version's state (its class, else its band, or failing) holds: the
    /// first version of the latest stretch in that state, and the state as people read it.
    pub since: Since,
}

/// The version before a cell's latest, as it stood.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviousVersion {
    pub version: String,
    /// `None` when every run of it failed.
    pub slope: Option<f64>,
    /// What every run failed with, when none passed.
    pub failure: Option<FailureKind>,
}

/// Since when a cell's state holds: `O(n²)` since `0.16.0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Since {
    /// `O(n²)`, `unsure`, a band's name where no class was worked out, or `failing`.
    pub state: &'static str,
    pub version: String,
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

    /// What the cell changed from: `was 1.00 at 0.15.2` beside a slope, `was k 1.00 at 1.2.4`
    /// beside a failure, `was ✗ wrong result at 1.2.4` after one; `None` at a series' first version.
    pub fn was(&self) -> Option<String> {
        let p = self.previous.as_ref()?;
        let then = match (p.slope, p.failure) {
            (Some(k), _) if self.slope.is_some() => crate::format::slope(k),
            (Some(k), _) => format!("k {}", crate::format::slope(k)),
            (None, Some(kind)) => format!("✗ {}", kind.label()),
            (None, None) => "failing".into(),
        };
        Some(format!("was {then} at {}", p.version))
    }

    /// How bad the cell is, worst lowest: a failure in any run or a slope over the alert
    /// threshold, then watch, then linear.
    pub fn severity(&self) -> u8 {
        match (&self.failure, self.band) {
            (Some(_), _) | (None, Some(Band::Regression) | None) => 0,
            (None, Some(Band::Watch)) => 1,
            (None, Some(Band::Linear)) => 2,
        }
    }
}

impl OverviewRow {
    /// The row's worst cell's severity.
    pub fn severity(&self) -> u8 {
        self.cells.iter().flatten().map(OverviewCell::severity).min().unwrap_or(u8::MAX)
    }
}

/// A version of a series on the overview: its slope where runs passed, its failures.
struct OverviewVersion<'a> {
    version: &'a str,
    size_unit: SizeUnit,
    first_seen: OffsetDateTime,
    slope: Option<f64>,
    class: Option<Option<Class>>,
    /// The slope's evidence and class, where runs passed: what its band is decided by.
    judged: Option<(&'a SlopeEvidence, Option<&'a Complexity>)>,
    failure: Option<&'a OverviewFailureRow>,
}

impl OverviewVersion<'_> {
    /// What "since when" follows: the class where one was worked out, else the band; failing
    /// where every run failed.
    fn state(&self, alerting: &Alerting) -> &'static str {
        match (self.judged, self.class) {
            (None, _) => "failing",
            (Some(_), Some(class)) => crate::format::label(class),
            (Some(_), None) => self.band(alerting).map_or("failing", Band::name),
        }
    }

    /// The band the alert rules put the slope in; `None` where every run failed.
    fn band(&self, alerting: &Alerting) -> Option<Band> {
        self.judged.map(|(evidence, complexity)| alerting.band(evidence, complexity))
    }

    fn failure_kind(&self) -> Option<FailureKind> {
        self.failure.and_then(|f| FailureKind::parse(&f.kind))
    }
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
    /// without a series of it has no row), or else of the cell's default (`measure::pick`). The
    /// `controls` lineages' columns come first, in their order; the others by name. Cells are
    /// banded as the alert `rules` decide.
    pub fn from_history(
        history: &[SlopeRow],
        failures: &[OverviewFailureRow],
        asked: Option<Metric>,
        controls: &[String],
        rules: &Rules,
    ) -> Overview {
        let mut series: BTreeMap<(&str, &str), Cell> = BTreeMap::new();
        for row in history {
            let cell = series.entry((&row.workload, &row.lineage)).or_default();
            cell.entry(row.metric).or_default().push(OverviewVersion {
                version: &row.version,
                size_unit: row.size_unit,
                first_seen: row.first_seen,
                slope: Some(row.slope),
                class: row.class,
                judged: Some((&row.evidence, row.complexity.as_ref())),
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
                    judged: None,
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
            let mut versions = cell.remove(&metric).expect("picked among the cell's metrics");
            sort_versions(&mut versions, |v| v.version, |v| v.first_seen);
            let others = available.into_iter().filter(|&m| m != metric).collect();
            shown.push(Shown { workload, lineage, metric, others, versions });
        }
        let columns = columns(&shown, controls);
        let mut rows: Vec<OverviewRow> = Vec::new();
        for s in &shown {
            if rows.last().is_none_or(|r| r.workload != s.workload) {
                rows.push(OverviewRow {
                    workload: s.workload.to_string(),
                    size_unit: s.versions.last().expect("a series has a version").size_unit,
                    cells: vec![None; columns.len()],
                });
            }
            let column = columns.iter().position(|c| c.lineage == s.lineage).expect("lineage listed");
            rows.last_mut().expect("row pushed").cells[column] = Some(cell(s, &Alerting::of(rules, s.workload)));
        }
        rows.sort_by(|a, b| (a.severity(), &a.workload).cmp(&(b.severity(), &b.workload)));
        Overview { columns, rows, metrics, waiting: Vec::new() }
    }

    /// Says when each lineage last sent a run, from each toolchain build's latest run and the
    /// versions whose runs wait to be summarised; a lineage with runs but no column is waiting.
    pub fn with_activity(mut self, builds: &[ToolchainActivity], pending: &[LineageVersion]) -> Overview {
        let mut latest: BTreeMap<&str, LineageActivity> = BTreeMap::new();
        for b in builds {
            let Some(at) = b.last_run_at else { continue };
            let newer = latest.get(b.lineage.as_str()).is_none_or(|a| a.last_run_at < at);
            if newer {
                let summarising = pending.iter().any(|p| p.lineage == b.lineage);
                let activity = LineageActivity {
                    lineage: b.lineage.clone(),
                    version: b.version.clone(),
                    last_run_at: at,
                    summarising,
                };
                latest.insert(&b.lineage, activity);
            }
        }
        for column in &mut self.columns {
            column.activity = latest.remove(column.lineage.as_str());
        }
        self.waiting = latest.into_values().collect();
        self
    }
}

/// A column per lineage shown, controls first in their order, then the rest by name; each at the
/// latest version of its series.
fn columns(shown: &[Shown], controls: &[String]) -> Vec<Column> {
    let mut versions: BTreeMap<&str, Vec<&OverviewVersion>> = BTreeMap::new();
    for s in shown {
        versions.entry(s.lineage).or_default().push(s.versions.last().expect("a series has a version"));
    }
    let mut columns: Vec<Column> = versions
        .into_iter()
        .map(|(lineage, mut latest)| {
            sort_versions(&mut latest, |v| v.version, |v| v.first_seen);
            Column {
                lineage: lineage.to_string(),
                version: latest.last().expect("a lineage has a series").version.to_string(),
                control: controls.iter().any(|c| c == lineage),
                activity: None,
            }
        })
        .collect();
    let rank = |c: &Column| controls.iter().position(|l| *l == c.lineage).unwrap_or(controls.len());
    columns.sort_by_key(|c| rank(c));
    columns
}

/// A cell from its series' versions, in version order, banded by its workload's `alerting`.
fn cell(s: &Shown, alerting: &Alerting) -> OverviewCell {
    let latest = s.versions.last().expect("a series has a version");
    let failure = latest.failure.and_then(|f| {
        let kind = FailureKind::parse(&f.kind)?;
        let failed_runs = i64::from(f.failed_runs);
        Some(CellFailure { kind, failed_runs, runs: failed_runs + i64::from(f.passed_runs) })
    });
    let previous = s.versions.len().checked_sub(2).map(|i| &s.versions[i]).map(|p| PreviousVersion {
        version: p.version.to_string(),
        slope: p.slope,
        failure: p.slope.is_none().then(|| p.failure_kind()).flatten(),
    });
    let state = latest.state(alerting);
    let held = s.versions.iter().rev().take_while(|v| v.state(alerting) == state).last().unwrap_or(latest);
    OverviewCell {
        lineage: s.lineage.to_string(),
        metric: s.metric,
        others: s.others.clone(),
        version: latest.version.to_string(),
        slope: latest.slope,
        band: latest.band(alerting),
        own_threshold: alerting.own.then_some(alerting.threshold),
        complexity_class: latest.class.map(crate::format::label),
        versions: s.versions.len(),
        failure,
        previous,
        since: Since { state, version: held.version.to_string() },
    }
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
            evidence: SlopeEvidence { slope, ci_low: slope - 0.05, ci_high: slope + 0.05, r2: 0.999, sizes: 5 },
            complexity: None,
        }
    }

    fn failure_row(lineage: &str, version: &str, failed_runs: i32, passed_runs: i32) -> OverviewFailureRow {
        OverviewFailureRow {
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
    fn the_overview_has_a_cell_per_lineage_at_its_latest_version_worst_rows_first() {
        let history = vec![
            slope_row("memchr", "gcc-glibc", "12", 1.0),
            slope_row("strchr", "gcc-glibc", "12", 1.0),
            slope_row("strchr", "zig-cc-musl", "0.14.1", 1.0),
            slope_row("strchr", "zig-cc-musl", "0.15.2", 1.05),
            slope_row("strchr", "zig-cc-musl", "0.16.0", 2.0),
        ];
        let o = Overview::from_history(&history, &[], None, &[], &Rules::default());
        let columns: Vec<(&str, &str)> = o.columns.iter().map(|c| (c.lineage.as_str(), c.version.as_str())).collect();
        assert_eq!(columns, [("gcc-glibc", "12"), ("zig-cc-musl", "0.16.0")]);
        let rows: Vec<&str> = o.rows.iter().map(|r| r.workload.as_str()).collect();
        assert_eq!(rows, ["strchr", "memchr"], "the quadratic row first");
        assert!(o.rows[1].cells[1].is_none(), "memchr was never built with zig");
        let cell = o.rows[0].cells[1].as_ref().unwrap();
        assert_eq!((cell.version.as_str(), cell.band, cell.versions), ("0.16.0", Some(Band::Regression), 3));
        assert_eq!(cell.was().as_deref(), Some("was 1.05 at 0.15.2"));
        assert_eq!(cell.since, Since { state: "regression", version: "0.16.0".into() });
        let gcc = o.rows[0].cells[0].as_ref().unwrap();
        assert_eq!((gcc.was(), &gcc.since), (None, &Since { state: "linear", version: "12".into() }));
    }

    #[test]
    fn rows_go_failing_and_over_then_watch_then_linear_and_control_columns_first() {
        let history = vec![
            slope_row("a-linear", "zig-cc-musl", "0.16.0", 1.0),
            slope_row("b-watch", "zig-cc-musl", "0.16.0", 1.3),
            slope_row("c-over", "zig-cc-musl", "0.16.0", 1.9),
            slope_row("d-linear", "musl-gcc", "1.2.5", 1.0),
            slope_row("strchr", "zig-cc-musl", "0.16.0", 1.0),
        ];
        let failures = [failure_row("musl-gcc", "1.2.5", 1, 2)];
        let controls = ["musl-gcc".to_string(), "not-measured".to_string()];
        let o = Overview::from_history(&history, &failures, None, &controls, &Rules::default());
        let rows: Vec<(&str, u8)> = o.rows.iter().map(|r| (r.workload.as_str(), r.severity())).collect();
        assert_eq!(rows, [("c-over", 0), ("strchr", 0), ("b-watch", 1), ("a-linear", 2), ("d-linear", 2)]);
        let columns: Vec<(&str, bool)> = o.columns.iter().map(|c| (c.lineage.as_str(), c.control)).collect();
        assert_eq!(columns, [("musl-gcc", true), ("zig-cc-musl", false)]);
    }

    #[test]
    fn a_cell_says_since_which_version_its_class_holds() {
        use slopewatch_core::complexity::Class;
        let classed = |version: &str, slope: f64, class: Option<Class>| SlopeRow {
            class: Some(class),
            ..slope_row("strchr", "zig-cc-musl", version, slope)
        };
        let history = vec![
            classed("0.13.0", 2.0, Some(Class::Quadratic)),
            classed("0.14.1", 1.0, Some(Class::Linear)),
            classed("0.15.2", 1.0, Some(Class::Linear)),
            classed("0.16.0", 1.1, Some(Class::Linear)),
        ];
        let o = Overview::from_history(&history, &[], None, &[], &Rules::default());
        let cell = o.rows[0].cells[0].as_ref().unwrap();
        assert_eq!(cell.since, Since { state: "O(n)", version: "0.14.1".into() });
        assert_eq!(cell.was().as_deref(), Some("was 1.00 at 0.15.2"));
    }

    #[test]
    fn each_column_says_when_its_lineage_last_sent_a_run() {
        let at = |s: i64| OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(s);
        let build = |lineage: &str, version: &str, last: Option<i64>| ToolchainActivity {
            lineage: lineage.into(),
            version: version.into(),
            first_seen: OffsetDateTime::UNIX_EPOCH,
            last_run_at: last.map(at),
        };
        let history = vec![slope_row("strchr", "zig-cc-musl", "0.15.2", 1.0)];
        let builds = [
            build("zig-cc-musl", "0.15.2", Some(100)),
            build("zig-cc-musl", "0.16.0", Some(200)),
            build("musl-gcc", "1.2.5", Some(150)),
            build("gone", "1", None),
        ];
        let pending = [LineageVersion::new("zig-cc-musl", "0.16.0")];
        let o = Overview::from_history(&history, &[], None, &[], &Rules::default()).with_activity(&builds, &pending);
        let zig = o.columns[0].activity.as_ref().unwrap();
        assert_eq!((zig.version.as_str(), zig.last_run_at, zig.summarising), ("0.16.0", at(200), true));
        let waiting: Vec<(&str, bool)> = o.waiting.iter().map(|w| (w.lineage.as_str(), w.summarising)).collect();
        assert_eq!(waiting, [("musl-gcc", false)], "a lineage with runs and no column waits");
    }

    #[test]
    fn each_cell_shows_wall_time_where_its_workload_has_it_or_the_metric_asked_for() {
        let counted = |workload: &str, slope: f64| SlopeRow {
            metric: Metric::InstructionsValgrind,
            ..slope_row(workload, "zig-cc-musl", "0.16.0", slope)
        };
        let history =
            vec![counted("memchr", 1.0), slope_row("strchr", "zig-cc-musl", "0.16.0", 1.0), counted("strchr", 2.0)];
        let o = Overview::from_history(&history, &[], None, &[], &Rules::default());
        assert_eq!(o.metrics, [Metric::Wall, Metric::InstructionsValgrind]);
        let cell = |o: &Overview, row: usize| o.rows[row].cells[0].clone().unwrap();
        let strchr = cell(&o, 1);
        assert_eq!(
            (strchr.metric, strchr.slope, strchr.others.clone()),
            (Metric::Wall, Some(1.0), vec![Metric::InstructionsValgrind])
        );
        assert_eq!(cell(&o, 0).metric, Metric::InstructionsValgrind, "memchr has no wall series: its count decides");
        let asked = Overview::from_history(&history, &[], Some(Metric::InstructionsValgrind), &[], &Rules::default());
        assert_eq!(asked.rows[0].workload, "strchr", "its count is over the threshold: worst first");
        assert_eq!((cell(&asked, 0).metric, cell(&asked, 0).slope), (Metric::InstructionsValgrind, Some(2.0)));
        let wall = Overview::from_history(&history, &[], Some(Metric::Wall), &[], &Rules::default());
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
        let o = Overview::from_history(&history, &failures, None, &[], &Rules::default());
        let gcc = o.rows[0].cells[0].as_ref().unwrap();
        assert_eq!((gcc.slope, gcc.class()), (Some(1.0), "linear"));
        assert_eq!(gcc.failure.as_ref().unwrap().marker(), "failed in 1 of 3 runs");
        let musl = o.rows[0].cells[1].as_ref().unwrap();
        assert_eq!((musl.version.as_str(), musl.slope, musl.class(), musl.versions), ("1.2.5", None, "failed", 2));
        assert_eq!(musl.failure.as_ref().unwrap().kind.label(), "wrong result");
        assert_eq!(musl.was().as_deref(), Some("was k 1.00 at 1.2.4"));
        assert_eq!(musl.since, Since { state: "failing", version: "1.2.5".into() });

        let mended = [history, vec![slope_row("strchr", "musl-gcc", "1.2.6", 1.0)]].concat();
        let o = Overview::from_history(&mended, &failures, None, &[], &Rules::default());
        let musl = o.rows[0].cells[1].as_ref().unwrap();
        assert_eq!(musl.was().as_deref(), Some("was ✗ wrong result at 1.2.5"));
        assert_eq!(musl.since, Since { state: "linear", version: "1.2.6".into() });
    }
}
