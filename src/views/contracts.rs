//! The contracts page's model: a row per probe of the catalogue, grouped by function, a column per
//! toolchain version, each cell the probe's standing against its contract (held, over contract,
//! crashed, wrong result, not provided, unsure, another failure, or not measured) on the metric
//! that decided it, and each column's counts of them; and the versions a reader may pick columns
//! from. A probe measured more than one way shows, per cell, the metric asked for, or else wall
//! time where that column has it, else the metric it has there (`measure::pick`).
//!
//! The header a probe's function belongs to is known to the agent's catalogue only, so rows are
//! grouped by function, functions in alphabetical order, and each row names its axis.

use super::measure;
use crate::format;
use crate::links;
use crate::store::contracts::{ContractProbe, NotProvided, ProbeCells, ProbeFailure, ProbeSummary};
use crate::store::VersionChoice;
use slopewatch_core::complexity::Class;
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::probe::{ProbeState, ProbeVerdict};
use slopewatch_core::verdict::{Limits, Verdict};
use slopewatch_core::wire::{FailureKind, Metric};
use std::collections::{BTreeMap, HashMap};

/// Where a probe stands at one toolchain version: its state, or `None` where it was never
/// measured there.
pub type Standing = Option<ProbeState>;

/// How the page shows a standing: core's words and shapes for a state, and its own for one never
/// measured; and the CSS class of its cells and counts.
pub trait Shown: Copy {
    /// The standing in words, the same in a cell, a count and the legend.
    fn word(self) -> &'static str;
    /// The standing in a column's counts, where every other failure counts as one: `failed`.
    fn count_word(self) -> &'static str;
    /// A shape that tells the standings apart without colour.
    fn symbol(self) -> &'static str;
    /// The CSS class of its cells and counts.
    fn css(self) -> &'static str;
}

impl Shown for Standing {
    fn word(self) -> &'static str {
        self.map_or("not measured", ProbeState::word)
    }

    fn count_word(self) -> &'static str {
        self.map_or("not measured", ProbeState::count_word)
    }

    fn symbol(self) -> &'static str {
        self.map_or("–", ProbeState::symbol)
    }

    fn css(self) -> &'static str {
        match self {
            Some(ProbeState::Held) => "held",
            Some(ProbeState::Over) => "over",
            Some(ProbeState::Failed(FailureKind::Crashed)) => "crashed",
            Some(ProbeState::Failed(FailureKind::WrongResult)) => "wrong",
            Some(ProbeState::Failed(_)) => "failed",
            Some(ProbeState::NotProvided) => "not-provided",
            Some(ProbeState::Unsure | ProbeState::Unmeasurable) => "unsure",
            None => "none",
        }
    }
}

/// One probe at one toolchain version.
#[derive(Debug, Clone)]
pub struct ContractCell {
    pub state: Standing,
    /// The class measured, `O(n)` or `unsure`, where the version has a summary.
    pub measured: Option<&'static str>,
    /// The class measured where one is named and the cell is held or over.
    pub class: Option<Class>,
    /// How many runs failed: `in 1 of 3 runs` where the failure is the state, `timed out in 1 of 3
    /// runs` beside a class.
    pub note: Option<String>,
    /// The latest failure in one line, e.g. `crashed at 1 KiB: read past its bound of 2 bytes`.
    pub failure: Option<String>,
    /// The metric of the series that decided the cell; `None` where nothing was measured.
    pub metric: Option<Metric>,
    /// The cell in one line, for its tooltip.
    pub title: String,
    /// The probe's series in the column's lineage, or the run that found the function missing;
    /// `None` where nothing was measured.
    pub href: Option<String>,
}

/// A probe's row: its axis and expected class, a cell per column.
#[derive(Debug, Clone)]
pub struct ProbeRow {
    pub name: String,
    pub axis: String,
    /// The class its contract allows.
    pub expected: Class,
    pub cells: Vec<ContractCell>,
}

/// The probes of one function, by axis.
#[derive(Debug, Clone)]
pub struct FunctionGroup {
    pub function: String,
    pub probes: Vec<ProbeRow>,
}

/// One column: a toolchain version and how many probes stand where.
#[derive(Debug, Clone)]
pub struct ContractColumn {
    pub lineage: String,
    pub version: String,
    counts: HashMap<&'static str, usize>,
}

impl ContractColumn {
    /// How many of the column's probes stand where `standing` does (every failure but a crash or
    /// a wrong result counting as one).
    pub fn count(&self, standing: Standing) -> usize {
        self.counts.get(standing.css()).copied().unwrap_or(0)
    }

    /// The counts to show: those of [`ProbeState::COUNTED`] always, the others where not nought.
    pub fn counts(&self) -> Vec<(Standing, usize)> {
        let others = [Some(ProbeState::Unsure), Some(ProbeState::Failed(FailureKind::TimedOut)), None];
        let mut shown: Vec<(Standing, usize)> =
            ProbeState::COUNTED.iter().map(|&s| (Some(s), self.count(Some(s)))).collect();
        shown.extend(others.iter().map(|&s| (s, self.count(s))).filter(|&(_, n)| n > 0));
        shown
    }

    /// How many of the column's probes break their contract or their function.
    pub fn breaks(&self) -> usize {
        ProbeState::COUNTED.iter().filter(|s| s.is_break()).map(|&s| self.count(Some(s))).sum()
    }
}

/// The contracts matrix.
#[derive(Debug, Clone)]
pub struct ContractsView {
    pub columns: Vec<ContractColumn>,
    pub functions: Vec<FunctionGroup>,
    /// Every metric some probe was measured by, in `Metric::ALL` order.
    pub metrics: Vec<Metric>,
}

impl ContractsView {
    /// The matrix of `probes` (one per name and metric) at `columns` from what the store holds of
    /// them there, each cell of the metric `asked` for or of its default.
    pub fn new(
        probes: &[ContractProbe],
        columns: &[LineageVersion],
        cells: &ProbeCells,
        asked: Option<Metric>,
    ) -> ContractsView {
        let summaries: HashMap<(i64, &LineageVersion), &ProbeSummary> =
            cells.summaries.iter().map(|s| ((s.workload_id, &s.at), s)).collect();
        let failures: HashMap<(i64, &LineageVersion), &ProbeFailure> =
            cells.failures.iter().map(|f| ((f.workload_id, &f.at), f)).collect();
        let missing: HashMap<(i64, &LineageVersion), &NotProvided> =
            cells.not_provided.iter().map(|n| ((n.workload_id, &n.at), n)).collect();
        let mut columns: Vec<ContractColumn> = columns
            .iter()
            .map(|at| ContractColumn {
                lineage: at.lineage.clone(),
                version: at.version.clone(),
                counts: HashMap::new(),
            })
            .collect();
        let mut metrics: Vec<Metric> = probes.iter().map(|p| p.metric).collect();
        metrics.sort();
        metrics.dedup();
        // A probe's series under each metric, in `Metric::ALL` order, by name.
        let mut by_name: BTreeMap<&str, Vec<&ContractProbe>> = BTreeMap::new();
        for probe in probes {
            by_name.entry(&probe.name).or_default().push(probe);
        }
        let mut by_function: BTreeMap<&str, Vec<ProbeRow>> = BTreeMap::new();
        for mut series in by_name.into_values() {
            series.sort_by_key(|p| p.metric);
            let shown = measure::pick(asked, &series.iter().map(|p| p.metric).collect::<Vec<_>>())
                .and_then(|m| series.iter().find(|p| p.metric == m))
                .unwrap_or(&series[0]);
            let cells: Vec<ContractCell> = columns
                .iter_mut()
                .map(|column| {
                    let at = LineageVersion::new(column.lineage.clone(), column.version.clone());
                    let measured = |p: &ContractProbe| {
                        let key = (p.workload_id, &at);
                        summaries.contains_key(&key) || failures.contains_key(&key) || missing.contains_key(&key)
                    };
                    let here: Vec<Metric> = series.iter().filter(|p| measured(p)).map(|p| p.metric).collect();
                    let probe = measure::pick(asked, &here).and_then(|m| series.iter().find(|p| p.metric == m));
                    let cell = match probe {
                        Some(probe) => {
                            let key = (probe.workload_id, &at);
                            cell(
                                probe,
                                &at,
                                summaries.get(&key).copied(),
                                failures.get(&key).copied(),
                                missing.get(&key).copied(),
                            )
                        }
                        None => cell(shown, &at, None, None, None),
                    };
                    *column.counts.entry(cell.state.css()).or_default() += 1;
                    cell
                })
                .collect();
            by_function.entry(&shown.function).or_default().push(ProbeRow {
                name: shown.name.clone(),
                axis: shown.axis.clone(),
                expected: shown.expected,
                cells,
            });
        }
        let functions = by_function
            .into_iter()
            .map(|(function, mut probes)| {
                probes.sort_by(|a, b| (&a.axis, &a.name).cmp(&(&b.axis, &b.name)));
                FunctionGroup { function: function.to_string(), probes }
            })
            .collect();
        ContractsView { columns, functions, metrics }
    }

    pub fn probes(&self) -> usize {
        self.functions.iter().map(|f| f.probes.len()).sum()
    }

    /// Each probe's standing at the `column`-th column, as `GET
    /// /api/v1/toolchains/{lineage}/{version}/contracts` answers it: a crash or a wrong result is
    /// a failure of that kind, and a probe not measured there is left out.
    pub fn verdicts(&self, column: usize) -> Vec<ProbeVerdict> {
        let mut out = Vec::new();
        for group in &self.functions {
            for probe in &group.probes {
                let Some(cell) = probe.cells.get(column) else { continue };
                let Some(state) = cell.state else { continue };
                out.push(ProbeVerdict {
                    workload: probe.name.clone(),
                    function: group.function.clone(),
                    expected: probe.expected,
                    class: cell.class,
                    state,
                });
            }
        }
        out
    }
}

/// The failure in one line: its summary and the first line of its detail, which for a guarded
/// probe says which bound it read past.
fn failure_line(probe: &ContractProbe, f: &ProbeFailure) -> String {
    let summary = format::failure(&f.failure, probe.size_unit);
    match f.failure.detail.lines().map(str::trim).find(|l| !l.is_empty()) {
        Some(line) => {
            let line: String = line.chars().take(200).collect();
            format!("{summary} ({line})")
        }
        None => summary,
    }
}

/// "in 1 of 3 runs".
fn in_runs(failure: &ProbeFailure) -> String {
    let runs = failure.failed_runs + failure.passed_runs;
    format!("in {} of {} {}", failure.failed_runs, runs, if runs == 1 { "run" } else { "runs" })
}

/// One probe at one version. A crash or a wrong answer in any run is the cell's state, since
/// either breaks the function whatever its class; otherwise the class against the contract;
/// then a function the libc lacks; then another failure of every run.
fn cell(
    probe: &ContractProbe,
    at: &LineageVersion,
    summary: Option<&ProbeSummary>,
    failure: Option<&ProbeFailure>,
    missing: Option<&NotProvided>,
) -> ContractCell {
    let measured = summary.map(|s| format::class_label(s.complexity.as_ref()).unwrap_or(format::label(None)));
    let standing = summary.map(|s| Limits::contract(probe.expected).judge(None, s.complexity.as_ref()).verdict());
    let kind = failure.map(|f| f.failure.kind);
    let state = match (kind, standing, missing) {
        (Some(kind @ (FailureKind::Crashed | FailureKind::WrongResult)), _, _) => Some(ProbeState::Failed(kind)),
        (_, Some(Verdict::Over), _) => Some(ProbeState::Over),
        (_, Some(Verdict::Under), _) => Some(ProbeState::Held),
        (_, Some(Verdict::Unsure), _) => Some(ProbeState::Unsure),
        (_, None, Some(_)) => Some(ProbeState::NotProvided),
        (Some(kind), None, None) => Some(ProbeState::Failed(kind)),
        (None, None, None) => None,
    };
    let measured_at = summary.is_some() || failure.is_some() || missing.is_some();
    let href = match (summary.is_some() || failure.is_some(), missing) {
        (true, _) => Some(links::series(&probe.name, &at.lineage, probe.metric)),
        (false, Some(m)) => Some(links::run(&m.run_id)),
        (false, None) => None,
    };
    // A failure that is the cell's state needs only its count; one beside a class, its kind too.
    let note = failure.map(|f| match state {
        Some(ProbeState::Failed(_)) => in_runs(f),
        _ => format!("{} {}", f.failure.kind.label(), in_runs(f)),
    });
    let by = if measured_at { format!(" ({})", probe.metric.label()) } else { String::new() };
    let mut title = format!("{} · {} {}{by}: {}", probe.name, at.lineage, at.version, state.word());
    match (measured, missing) {
        (Some(m), _) => title.push_str(&format!(", {m} against {}", probe.expected.label())),
        (None, Some(_)) if state == Some(ProbeState::NotProvided) => {
            title.push_str(", as the version's latest run says")
        }
        _ => {}
    }
    if let Some(f) = failure {
        title.push_str(&format!("; {}, {}", failure_line(probe, f), in_runs(f)));
    }
    let metric = measured_at.then_some(probe.metric);
    let class = summary
        .and_then(|s| s.complexity.as_ref()?.class)
        .filter(|_| matches!(state, Some(ProbeState::Held | ProbeState::Over)));
    ContractCell { state, measured, class, note, failure: failure.map(|f| failure_line(probe, f)), metric, title, href }
}

/// Each lineage at its latest version, from `versions` in lineage and then version order.
pub fn latest_columns(versions: &[VersionChoice]) -> Vec<LineageVersion> {
    let mut latest: Vec<LineageVersion> = Vec::new();
    for v in versions {
        match latest.last_mut() {
            Some(last) if last.lineage == v.lineage => last.version = v.version.clone(),
            _ => latest.push(LineageVersion::new(v.lineage.clone(), v.version.clone())),
        }
    }
    latest
}

/// A lineage's versions to pick columns from.
#[derive(Debug, Clone)]
pub struct LineagePicker {
    pub lineage: String,
    pub versions: Vec<PickedVersion>,
    /// Its two latest versions side by side, when it has two.
    pub latest_pair: Option<PairLink>,
}

/// A link to two versions of a lineage side by side.
#[derive(Debug, Clone)]
pub struct PairLink {
    /// `0.15.2 beside 0.16.0`.
    pub text: String,
    pub href: String,
}

#[derive(Debug, Clone)]
pub struct PickedVersion {
    pub version: String,
    /// `lineage@version`, as `v` takes it.
    pub value: String,
    pub shown: bool,
}

/// The picker of every lineage in `versions` (lineage and then version order), with `shown`
/// ticked; its links keep the metric `asked` for.
pub fn pickers(versions: &[VersionChoice], shown: &[LineageVersion], asked: Option<Metric>) -> Vec<LineagePicker> {
    let mut out: Vec<LineagePicker> = Vec::new();
    for v in versions {
        if out.last().is_none_or(|p| p.lineage != v.lineage) {
            out.push(LineagePicker { lineage: v.lineage.clone(), versions: Vec::new(), latest_pair: None });
        }
        let picker = out.last_mut().expect("pushed");
        picker.versions.push(PickedVersion {
            version: v.version.clone(),
            value: links::toolchain_version(&v.lineage, &v.version),
            shown: shown.iter().any(|s| s.lineage == v.lineage && s.version == v.version),
        });
    }
    for picker in &mut out {
        if let [.., before, last] = picker.versions.as_slice() {
            let pair = [
                LineageVersion::new(picker.lineage.clone(), before.version.clone()),
                LineageVersion::new(picker.lineage.clone(), last.version.clone()),
            ];
            let text = format!("{} beside {}", before.version, last.version);
            picker.latest_pair = Some(PairLink { text, href: links::contracts(&pair, asked) });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::tests::complexity;
    use slopewatch_core::complexity::Class;
    use slopewatch_core::wire::{Failure, SizeUnit};
    use time::OffsetDateTime;

    fn probe(id: i64, function: &str, axis: &str, expected: Class) -> ContractProbe {
        ContractProbe {
            workload_id: id,
            name: format!("contract.{function}.{axis}"),
            metric: Metric::Wall,
            size_unit: SizeUnit::Bytes,
            expected,
            function: function.into(),
            axis: axis.into(),
        }
    }

    fn at(version: &str) -> LineageVersion {
        LineageVersion::new("zig-cc-musl", version)
    }

    fn summary(id: i64, version: &str, class: Option<Class>) -> ProbeSummary {
        ProbeSummary { workload_id: id, at: at(version), complexity: Some(complexity(class)) }
    }

    fn failure(id: i64, version: &str, kind: FailureKind, failed_runs: i64, passed_runs: i64) -> ProbeFailure {
        let failure = Failure {
            kind,
            size: Some(1024),
            detail: "read past its bound of 2 bytes".into(),
            exit_status: None,
            signal: Some(11),
            limit_ms: None,
            got: None,
            expected: None,
        };
        ProbeFailure { workload_id: id, at: at(version), failure, failed_runs, passed_runs }
    }

    #[test]
    fn each_cell_says_where_its_probe_stands_and_each_column_counts_them() {
        let probes = [
            probe(1, "strchr", "remaining", Class::Constant),
            probe(2, "strchr", "distance", Class::Linear),
            probe(3, "memchr", "remaining", Class::Constant),
            probe(4, "strlcpy", "length", Class::Linear),
            probe(5, "memccpy", "bound", Class::Linear),
            probe(6, "strstr", "needle", Class::Linear),
        ];
        let columns = [at("0.15.2"), at("0.16.0")];
        let cells = ProbeCells {
            summaries: vec![
                summary(1, "0.15.2", Some(Class::Constant)),
                summary(1, "0.16.0", Some(Class::Linear)),
                summary(2, "0.16.0", Some(Class::Linear)),
                summary(3, "0.15.2", Some(Class::Log)),
                summary(3, "0.16.0", Some(Class::Constant)),
                summary(6, "0.16.0", None),
            ],
            failures: vec![
                failure(3, "0.16.0", FailureKind::Crashed, 1, 2),
                failure(5, "0.16.0", FailureKind::WrongResult, 2, 0),
                failure(6, "0.15.2", FailureKind::TimedOut, 1, 0),
            ],
            not_provided: vec![NotProvided { workload_id: 4, at: at("0.16.0"), run_id: uuid::Uuid::nil() }],
        };
        let view = ContractsView::new(&probes, &columns, &cells, None);
        let functions: Vec<&str> = view.functions.iter().map(|f| f.function.as_str()).collect();
        assert_eq!(functions, ["memccpy", "memchr", "strchr", "strlcpy", "strstr"], "alphabetical");
        let strchr = &view.functions[2];
        let axes: Vec<&str> = strchr.probes.iter().map(|p| p.axis.as_str()).collect();
        assert_eq!(axes, ["distance", "remaining"]);
        let remaining = &strchr.probes[1];
        assert_eq!(remaining.expected, Class::Constant);
        let (old, new) = (&remaining.cells[0], &remaining.cells[1]);
        assert_eq!((old.state, old.measured), (Some(ProbeState::Held), Some("O(1)")));
        assert_eq!((new.state, new.measured), (Some(ProbeState::Over), Some("O(n)")));
        assert_eq!(new.href.as_deref(), Some("/series/contract.strchr.remaining/zig-cc-musl"));
        assert_eq!(strchr.probes[0].cells[0].state, None);
        assert_eq!(strchr.probes[0].cells[0].href, None, "no series to link to");

        let memchr = &view.functions[1].probes[0];
        assert_eq!(memchr.cells[0].state, Some(ProbeState::Held), "O(log n) is no break of O(1)");
        let crashed = &memchr.cells[1];
        assert_eq!(
            (crashed.state, crashed.measured),
            (Some(ProbeState::Failed(FailureKind::Crashed)), Some("O(1)")),
            "a crash in any run"
        );
        assert_eq!(crashed.note.as_deref(), Some("in 1 of 3 runs"));
        assert!(
            crashed.title.starts_with(
                "contract.memchr.remaining · zig-cc-musl 0.16.0 (wall time): crashed, O(1) against O(1); crashed at 1 KiB"
            ),
            "{}",
            crashed.title
        );
        assert!(crashed.failure.as_deref().unwrap().contains("read past its bound of 2 bytes"));
        assert_eq!(view.functions[0].probes[0].cells[1].state, Some(ProbeState::Failed(FailureKind::WrongResult)));
        let strlcpy = &view.functions[3].probes[0].cells[1];
        assert_eq!(strlcpy.state, Some(ProbeState::NotProvided));
        assert_eq!(strlcpy.href.as_deref(), Some("/runs/00000000-0000-0000-0000-000000000000"));
        let strstr = &view.functions[4].probes[0];
        assert_eq!(strstr.cells[0].state, Some(ProbeState::Failed(FailureKind::TimedOut)));
        assert_eq!((strstr.cells[1].state, strstr.cells[1].measured), (Some(ProbeState::Unsure), Some("unsure")));

        let (c0, c1) = (&view.columns[0], &view.columns[1]);
        assert_eq!((c0.count(Some(ProbeState::Held)), c0.count(None), c0.breaks()), (2, 3, 0));
        let counted: Vec<(&str, usize)> = c1.counts().into_iter().map(|(s, n)| (s.count_word(), n)).collect();
        assert_eq!(
            counted,
            [
                ("held", 1),
                ("over contract", 1),
                ("crashed", 1),
                ("wrong result", 1),
                ("not provided", 1),
                ("unsure", 1)
            ]
        );
        assert_eq!(c1.breaks(), 3);
        assert_eq!(view.probes(), 6);
    }

    #[test]
    fn a_probe_measured_two_ways_shows_per_cell_the_metric_that_decided_it() {
        let counted = ContractProbe {
            workload_id: 2,
            metric: Metric::InstructionsValgrind,
            ..probe(1, "strchr", "remaining", Class::Constant)
        };
        let probes = [probe(1, "strchr", "remaining", Class::Constant), counted];
        let columns = [at("0.15.2"), at("0.16.0")];
        let cells = ProbeCells {
            summaries: vec![
                summary(1, "0.15.2", Some(Class::Constant)),
                summary(2, "0.15.2", Some(Class::Linear)),
                summary(2, "0.16.0", Some(Class::Linear)),
            ],
            ..ProbeCells::default()
        };
        let shown = |asked| {
            let view = ContractsView::new(&probes, &columns, &cells, asked);
            assert_eq!(view.probes(), 1, "one row per probe, whatever it was measured by");
            assert_eq!(view.metrics, [Metric::Wall, Metric::InstructionsValgrind]);
            view.functions[0].probes[0].cells.iter().map(|c| (c.state, c.metric)).collect::<Vec<_>>()
        };
        assert_eq!(
            shown(None),
            [
                (Some(ProbeState::Held), Some(Metric::Wall)),
                (Some(ProbeState::Over), Some(Metric::InstructionsValgrind))
            ],
            "wall time where the version has it, else the count"
        );
        assert_eq!(
            shown(Some(Metric::InstructionsValgrind)),
            [
                (Some(ProbeState::Over), Some(Metric::InstructionsValgrind)),
                (Some(ProbeState::Over), Some(Metric::InstructionsValgrind))
            ]
        );
        assert_eq!(shown(Some(Metric::Wall)), [(Some(ProbeState::Held), Some(Metric::Wall)), (None, None)]);
        let view = ContractsView::new(&probes, &columns, &cells, None);
        let cell = &view.functions[0].probes[0].cells[1];
        assert_eq!(
            cell.href.as_deref(),
            Some("/series/contract.strchr.remaining/zig-cc-musl?measure=instructions-valgrind")
        );
        assert!(cell.title.contains("0.16.0 (instructions (Valgrind)): over contract"), "{}", cell.title);
    }

    fn choice(lineage: &str, version: &str) -> VersionChoice {
        VersionChoice { lineage: lineage.into(), version: version.into(), first_seen: OffsetDateTime::UNIX_EPOCH }
    }

    #[test]
    fn each_lineage_shows_at_its_latest_version_and_offers_its_two_latest_side_by_side() {
        let versions = [
            choice("gcc-glibc", "12.2.0"),
            choice("zig-cc-musl", "0.14.1"),
            choice("zig-cc-musl", "0.15.2"),
            choice("zig-cc-musl", "0.16.0"),
        ];
        let latest = latest_columns(&versions);
        assert_eq!(latest, [LineageVersion::new("gcc-glibc", "12.2.0"), at("0.16.0")]);
        let pickers = pickers(&versions, &latest, None);
        assert_eq!(pickers.len(), 2);
        assert!(pickers[0].latest_pair.is_none());
        let zig = &pickers[1];
        let shown: Vec<bool> = zig.versions.iter().map(|v| v.shown).collect();
        assert_eq!(shown, [false, false, true]);
        assert_eq!(zig.versions[0].value, "zig-cc-musl@0.14.1");
        let pair = zig.latest_pair.as_ref().unwrap();
        assert_eq!(pair.text, "0.15.2 beside 0.16.0");
        assert_eq!(pair.href, "/contracts?v=zig-cc-musl%400.15.2&v=zig-cc-musl%400.16.0");
    }
}
