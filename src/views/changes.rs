//! Two toolchain versions across every workload: each series' state at both, what changed (a
//! complexity class step, a failure, a slope over the alert level, nothing), the ratio at the
//! largest size both measured (or predicted where they share none), the cost at the workload's
//! size of interest, and the headline that counts the changes. A toolchain version's page and the
//! all-workloads comparison are both built of it.

use super::ratio::{size_ratio, SizeRatio};
use super::{evidence, failed_in};
use crate::analysis::class_step;
use crate::config::Rules;
use crate::format;
use crate::links;
use crate::model::{RegressionKind, SizeMedian};
use crate::store::{VersionFailures, VersionSummary, WorkloadFailures, WorkloadRow};
use serde::Serialize;
use slopewatch_core::predict::{step_sentence_in, Prediction};
use slopewatch_core::verdict::Verdict;
use slopewatch_core::wire::{FailureKind, Metric, SizeUnit};
use slopewatch_core::workloads::Group;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// A toolchain version: a lineage and one of its versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct VersionAt {
    pub lineage: String,
    pub version: String,
}

impl VersionAt {
    pub fn new(lineage: &str, version: &str) -> VersionAt {
        VersionAt { lineage: lineage.into(), version: version.into() }
    }

    /// `zig-cc-musl 0.16.0`.
    pub fn label(&self) -> String {
        format!("{} {}", self.lineage, self.version)
    }

    /// How `other` is named beside this one: its version alone in the same lineage.
    pub fn name_of(&self, other: &VersionAt) -> String {
        if other.lineage == self.lineage {
            other.version.clone()
        } else {
            other.label()
        }
    }

    fn holds(&self, lineage: &str, version: &str) -> bool {
        self.lineage == lineage && self.version == version
    }
}

/// What changed in one series between the two versions, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Its complexity class stepped up, e.g. O(n) → O(n²), and the evidence shows it: each
    /// version's medians rule out the other's class.
    Worse,
    /// Every run failed it at the later version, not at the earlier one.
    Fails,
    /// No class step shown (a class unsure at either end, or a step within the noise), but its
    /// slope went from under the alert level to over it, as the alert rules' noise rule judges both.
    Steeper,
    /// Counted (instructions, which do not move with the host), its growth unchanged but its count
    /// at the largest size both versions measured more than its cost factor times higher.
    Costlier,
    /// Every run failed it at both.
    StillFails,
    /// Measured at the earlier version only.
    Gone,
    /// Measured at the later version only.
    New,
    /// Every run failed it at the earlier version; some passed at the later one.
    Passes,
    /// Its complexity class stepped down, and the evidence shows it.
    Better,
    /// No class step shown, but its slope came back from over the alert level to under it.
    Flatter,
    /// Counted, its growth unchanged but its count more than its cost factor times lower.
    Cheaper,
    /// None of these: the same class, or a class step within the noise (its text says which).
    Unchanged,
}

/// One series at one of the versions compared.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SeriesState {
    /// The slope over the runs that passed, with its 95% interval; null where every run failed.
    pub slope: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// The complexity class as the API writes it (`n`, `n^2`, `unsure`); null where every run
    /// failed or while a store upgraded from before classes is still classifying.
    pub class: Option<String>,
    /// The version's runs of the workload, passed or failed, and how many failed it.
    pub runs: i64,
    pub failed_runs: i64,
    /// The latest failure's kind, and the failure in one line; null where no run failed it.
    pub failure_kind: Option<FailureKind>,
    pub failure: Option<String>,
    #[serde(skip)]
    pub summary: Option<VersionSummary>,
    #[serde(skip)]
    pub failures: Option<VersionFailures>,
}

impl SeriesState {
    fn of(summary: Option<VersionSummary>, failures: Option<VersionFailures>) -> Option<SeriesState> {
        if summary.is_none() && failures.is_none() {
            return None;
        }
        let s = summary.as_ref();
        let f = failures.as_ref();
        Some(SeriesState {
            slope: s.map(|s| s.slope),
            ci_low: s.map(|s| s.ci_low),
            ci_high: s.map(|s| s.ci_high),
            class: s.and_then(|s| format::class_text(s.complexity.as_ref())),
            runs: f.map_or_else(|| s.map_or(0, |s| s.runs), |f| f.runs),
            failed_runs: f.map_or(0, |f| f.failed_runs),
            failure_kind: f.map(|f| f.kind),
            failure: f.map(|f| f.summary.clone()),
            summary,
            failures,
        })
    }

    /// Every run of the version failed the workload: it has no slope there.
    pub fn failed_every_run(&self) -> bool {
        self.summary.is_none()
    }

    /// As a cell gives it: `O(n²) · k 2.00`, or `✗ wrong result`, with how many runs failed where
    /// only some did.
    pub fn text(&self) -> String {
        let Some(s) = &self.summary else {
            return format!("✗ {}", self.failures.as_ref().map_or("failed", |f| f.label.as_str()));
        };
        let mut text = match format::class_label(s.complexity.as_ref()) {
            Some(class) => format!("{class} · k {}", format::slope(s.slope)),
            None => format!("k {}", format::slope(s.slope)),
        };
        if let Some(f) = &self.failures {
            text.push_str(&format!(" ({}: {})", failed_in(f), f.label));
        }
        text
    }
}

/// A value predicted at a size of interest, with its 95% prediction interval.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
pub struct Predicted {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    /// The size lies past the largest size measured.
    pub extrapolated: bool,
}

impl From<&Prediction> for Predicted {
    fn from(p: &Prediction) -> Predicted {
        Predicted { value: p.time_ns, low: p.low_ns, high: p.high_ns, extrapolated: p.extrapolated() }
    }
}

/// What a workload costs at the size its team runs it at, at both versions.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InterestCost {
    /// In the workload's unit.
    pub size: u64,
    pub before: Option<Predicted>,
    pub after: Option<Predicted>,
    /// In words: "at 4 MiB: ≈ 46 s [41 s, 52 s] at 0.16.0; ≈ 1.5 ms at 0.15.2, about 31,000×".
    pub sentence: String,
}

/// A workload's slope at one version of a lineage; null where it has none there.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TrendSlope {
    pub version: String,
    pub slope: Option<f64>,
    /// Whether the alert rules hold the slope over its threshold there.
    #[serde(skip)]
    pub over: bool,
}

/// The regression or finding, opened at the later version, that holds a workload.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Held {
    pub id: i64,
    pub kind: RegressionKind,
    /// One of the `RegressionStatus` values.
    pub status: String,
    /// Its page on the dashboard.
    pub url: String,
}

/// One workload's series, under one metric, at both versions.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChangeRow {
    pub workload: String,
    /// The metric of the series: its values are nanoseconds, or instructions counted.
    #[serde(rename = "measure")]
    pub metric: Metric,
    /// Whose workload it is: `builtin`, `team` or `contract`.
    pub group: Group,
    #[schema(value_type = String)]
    pub size_unit: SizeUnit,
    /// At the earlier version; null where not measured there.
    pub before: Option<SeriesState>,
    /// At the later version; null where not measured there.
    pub after: Option<SeriesState>,
    pub change: Change,
    /// The change in words: `O(n) → O(n²)`, `wrong result`, `k 1.02 → 1.61`, `unchanged`, or for
    /// a class step the evidence does not show, `O(n) → O(n log n), within the noise`.
    pub change_text: String,
    /// The later slope minus the earlier, where both have one.
    pub slope_delta: Option<f64>,
    /// The later version's median over the earlier's at the largest size both measured, or
    /// predicted at a size both fits cover where they share none.
    pub ratio: Option<SizeRatio>,
    /// The cost at the workload's size of interest, where it has one and a fit to predict from.
    pub at_interest: Option<InterestCost>,
    /// Over its limit at the first version its lineage measured: a finding, not a regression.
    pub finding: bool,
    /// The regression or finding opened at the later version that holds the workload.
    pub held_by: Option<Held>,
    /// The workload's series in the later version's lineage.
    pub series_url: String,
    /// Its slope at each of the later version's lineage's versions, in version order.
    pub trend: Vec<TrendSlope>,
}

impl ChangeRow {
    /// The ratio in words, `31,000× slower at 4 MiB`.
    pub fn ratio_text(&self) -> Option<String> {
        self.ratio.map(|r| r.text(self.metric, self.size_unit))
    }

    /// The trend's title, which screen readers announce.
    pub fn trend_title(&self, lineage: &str) -> String {
        format!("Slope of {} across {lineage} versions", crate::model::workload_label(&self.workload, self.metric))
    }
}

/// Every workload's series at two toolchain versions, grouped (built-in, the team's, contract
/// probes), worst change first within each group.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Changes {
    /// The version compared against; null for a lineage's first version.
    pub before: Option<VersionAt>,
    pub after: VersionAt,
    pub rows: Vec<ChangeRow>,
    /// The configured alert rules the changes are judged by, as the rules judge versions.
    #[serde(skip)]
    pub rules: Rules,
}

/// A series' summaries and failures at the two versions.
#[derive(Default)]
struct Slot {
    before: (Option<VersionSummary>, Option<VersionFailures>),
    after: (Option<VersionSummary>, Option<VersionFailures>),
}

impl Changes {
    /// The series of `workloads` at `after` against `before`, from the summaries and failures
    /// read at those versions (others are passed over), judged by the alert `rules`.
    pub fn new(
        (before, after): (Option<&VersionAt>, &VersionAt),
        summaries: &[VersionSummary],
        failures: &[WorkloadFailures],
        workloads: &[WorkloadRow],
        rules: &Rules,
    ) -> Changes {
        let at_before = |l: &str, v: &str| before.is_some_and(|b| b.holds(l, v));
        let mut slots: BTreeMap<(&str, Metric), Slot> = BTreeMap::new();
        for s in summaries {
            let slot = || Slot::default();
            if at_before(&s.lineage, &s.version) {
                slots.entry((&s.workload, s.metric)).or_insert_with(slot).before.0 = Some(s.clone());
            }
            if after.holds(&s.lineage, &s.version) {
                slots.entry((&s.workload, s.metric)).or_insert_with(slot).after.0 = Some(s.clone());
            }
        }
        for f in failures {
            if at_before(&f.lineage, &f.failures.version) {
                slots.entry((&f.workload, f.metric)).or_default().before.1 = Some(f.failures.clone());
            }
            if after.holds(&f.lineage, &f.failures.version) {
                slots.entry((&f.workload, f.metric)).or_default().after.1 = Some(f.failures.clone());
            }
        }
        let mut rows: Vec<ChangeRow> = slots
            .into_iter()
            .filter_map(|((workload, metric), slot)| {
                let w = workloads.iter().find(|w| w.name == workload && w.metric == metric)?;
                Some(row(before, after, w, slot, rules))
            })
            .collect();
        sort(&mut rows);
        Changes { before: before.cloned(), after: after.clone(), rows, rules: rules.clone() }
    }

    /// Reads every series whose two versions ran the very same build (the same build hash: the
    /// binary's code and the shared libraries it loaded) as unchanged, "build unchanged since
    /// 0.15.2", whatever its numbers did: the code did not change, so neither did its cost or its
    /// growth, and a difference is the host's. The alert rules open nothing there either
    /// (`[alerts] skip_unchanged_builds`).
    pub fn unchanged_builds(&mut self) {
        let Some(before) = self.before_name() else { return };
        for row in &mut self.rows {
            let build = |s: &Option<SeriesState>| s.as_ref()?.summary.as_ref()?.build_hash.clone();
            if build(&row.after).is_some() && build(&row.before) == build(&row.after) {
                row.change = Change::Unchanged;
                row.change_text = format!("build unchanged since {before}");
            }
        }
        sort(&mut self.rows);
    }

    /// The rows by group, groups in their order, each as sorted.
    pub fn groups(&self) -> Vec<(Group, Vec<&ChangeRow>)> {
        Group::ALL
            .into_iter()
            .map(|g| (g, self.rows.iter().filter(|r| r.group == g).collect::<Vec<_>>()))
            .filter(|(_, rows)| !rows.is_empty())
            .collect()
    }

    /// The later version as the headline names the earlier beside it: its version alone in the
    /// same lineage.
    pub fn before_name(&self) -> Option<String> {
        self.before.as_ref().map(|b| self.after.name_of(b))
    }
}

/// Rows by group, worst change first within each, then by name and measure.
pub(super) fn sort(rows: &mut [ChangeRow]) {
    rows.sort_by(|a, b| (a.group, a.change, &a.workload, a.metric).cmp(&(b.group, b.change, &b.workload, b.metric)));
}

/// One series' row from its slot.
fn row(before: Option<&VersionAt>, after: &VersionAt, w: &WorkloadRow, slot: Slot, rules: &Rules) -> ChangeRow {
    let b = SeriesState::of(slot.before.0, slot.before.1);
    let a = SeriesState::of(slot.after.0, slot.after.1);
    let sb = b.as_ref().and_then(|b| b.summary.as_ref());
    let sa = a.as_ref().and_then(|a| a.summary.as_ref());
    let ratio = sb.zip(sa).and_then(|(b, a)| size_ratio(b, a));
    let (change, change_text) = change((b.as_ref(), a.as_ref()), after, ratio.as_ref(), w.size_unit, rules);
    let size_unit = w.size_unit;
    let at_interest = w.size_of_interest.and_then(|s| u64::try_from(s).ok()).and_then(|size| {
        let pa = SizeMedian::predict(&sa?.sizes, size)?;
        let pb = sb.and_then(|s| SizeMedian::predict(&s.sizes, size));
        let before_name = before.map(|b| after.name_of(b)).unwrap_or_default();
        let sentence = step_sentence_in(&pa, pb.as_ref().map(|p| (p, before_name.as_str())), size_unit, w.metric)
            .replacen(" here", &format!(" at {}", after.version), 1);
        Some(InterestCost { size, before: pb.as_ref().map(Predicted::from), after: Some((&pa).into()), sentence })
    });
    ChangeRow {
        group: Group::of(&w.name),
        series_url: links::series(&w.name, &after.lineage, w.metric),
        workload: w.name.clone(),
        metric: w.metric,
        size_unit,
        slope_delta: sb.zip(sa).map(|(b, a)| a.slope - b.slope),
        ratio,
        at_interest,
        before: b,
        after: a,
        change,
        change_text,
        finding: false,
        held_by: None,
        trend: Vec::new(),
    }
}

/// What changed from `before` to `after`, and in words. A class step counts only where the
/// evidence shows it (`analysis::class_step`), and a slope as the alert rules judge it: steeper
/// where the later version is over the workload's threshold and the earlier was not (a crossing),
/// flatter where the earlier was over and the later is under; a step within the noise leaves the
/// workload unchanged, and says so in its text. `ratio` is the two versions' at the largest size
/// both measured, which a count's change of cost is judged by, by the configured factor.
fn change(
    (before, after): (Option<&SeriesState>, Option<&SeriesState>),
    at: &VersionAt,
    ratio: Option<&SizeRatio>,
    unit: SizeUnit,
    rules: &Rules,
) -> (Change, String) {
    let failure = |s: &SeriesState| s.failures.as_ref().map_or_else(|| "failed".to_string(), |f| f.label.clone());
    match (before, after) {
        (_, None) => (Change::Gone, format!("not measured at {}", at.version)),
        (None, Some(_)) => (Change::New, "new".into()),
        (Some(b), Some(a)) if a.failed_every_run() => {
            if b.failed_every_run() {
                (Change::StillFails, format!("still fails: {}", failure(a)))
            } else {
                (Change::Fails, failure(a))
            }
        }
        (Some(b), Some(_)) if b.failed_every_run() => (Change::Passes, "passes again".into()),
        (Some(b), Some(a)) => {
            let (sb, sa) = (b.summary.as_ref().expect("measured"), a.summary.as_ref().expect("measured"));
            let slopes = format!("k {} → {}", format::slope(sb.slope), format::slope(sa.slope));
            let step = class_step(&sb.sizes, sb.complexity.as_ref(), &sa.sizes, sa.complexity.as_ref(), sa.metric);
            let verdict = |s: &VersionSummary| rules.noise().slope(&evidence(s), rules.threshold_for(&s.workload));
            match (step, verdict(sb), verdict(sa)) {
                (Some(step), ..) if step.shown => {
                    (if step.to > step.from { Change::Worse } else { Change::Better }, step.text())
                }
                (_, Verdict::Under, Verdict::Over) => (Change::Steeper, slopes),
                (_, Verdict::Over, Verdict::Under) => (Change::Flatter, slopes),
                (step, ..) => match ratio.and_then(|r| cost_change(sb, sa, r, unit, rules)) {
                    Some(cost) => cost,
                    None => (Change::Unchanged, step.map_or_else(|| "unchanged".into(), |s| s.text())),
                },
            }
        }
    }
}

/// A change of cost between two counted versions: their count at the largest size both measured
/// (`r`, from `size_ratio`) moved more than the workload's cost factor (the cost rule's, compared
/// as the rule compares it), in words: "cost 4.20× at 64 KiB, O(n) both". Growth is what the rest
/// of the page judges, because a time moves with the host; a count does not, so there a linear
/// workload made several times more expensive is a change too. `None` for times, within the
/// factor, and with the cost rule off.
fn cost_change(
    before: &VersionSummary,
    after: &VersionSummary,
    r: &SizeRatio,
    unit: SizeUnit,
    rules: &Rules,
) -> Option<(Change, String)> {
    let factor = rules.cost_factor_for(&after.workload)?;
    if !after.metric.is_count() {
        return None;
    }
    let change = if r.ratio > factor {
        Change::Costlier
    } else if r.ratio < 1.0 / factor {
        Change::Cheaper
    } else {
        return None;
    };
    let (b, a) = (format::class_label(before.complexity.as_ref()), format::class_label(after.complexity.as_ref()));
    Some((change, format::cost_change(r.ratio, r.size, unit, b, a)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SizeMedian;
    use crate::views::tests::{complexity, failures, summary};
    use slopewatch_core::complexity::Class;
    use time::OffsetDateTime;

    fn workload(name: &str) -> WorkloadRow {
        WorkloadRow {
            name: name.into(),
            metric: Metric::Wall,
            size_unit: SizeUnit::Bytes,
            first_seen: OffsetDateTime::UNIX_EPOCH,
            size_of_interest: None,
        }
    }

    /// `name` at `version` of zig-cc-musl with slope `k` and class `class`.
    fn at(name: &str, version: &str, k: f64, class: Option<Class>) -> VersionSummary {
        let mut s = summary("zig-cc-musl", version, k, 5);
        s.workload = name.into();
        s.complexity = Some(complexity(class));
        s
    }

    fn failed(name: &str, version: &str, kind: FailureKind) -> WorkloadFailures {
        let mut f = failures(version, 2, 2);
        f.kind = kind;
        f.label = kind.label().into();
        WorkloadFailures { workload: name.into(), metric: Metric::Wall, lineage: "zig-cc-musl".into(), failures: f }
    }

    #[test]
    fn each_workload_s_change_is_named_and_counted_in_one_headline() {
        let (old, new) = (VersionAt::new("zig-cc-musl", "0.15.2"), VersionAt::new("zig-cc-musl", "0.16.0"));
        let (n, n2) = (Some(Class::Linear), Some(Class::Quadratic));
        let summaries = vec![
            at("strchr", "0.15.2", 1.0, n),
            at("strchr", "0.16.0", 2.0, n2),
            at("strspn", "0.15.2", 1.0, n),
            at("strspn", "0.16.0", 2.0, n2),
            at("strchrnul", "0.15.2", 1.0, n),
            at("memchr", "0.15.2", 1.0, n),
            at("memchr", "0.16.0", 1.01, n),
            // Unsure at the later version, but over the alert level: steeper, without a class step.
            at("strstr", "0.15.2", 1.0, n),
            at("strstr", "0.16.0", 1.7, None),
            at("sscanf", "0.16.0", 1.0, n),
            at("strtol", "0.15.2", 1.0, n),
            at("strtol", "0.16.0", 1.0, n),
            at("strtod", "0.16.0", 1.0, n),
            // Another lineage's summary is of neither version.
            summary("musl-gcc", "0.16.0", 1.0, 5),
        ];
        let fails = vec![
            failed("strchrnul", "0.16.0", FailureKind::WrongResult),
            failed("strtod", "0.15.2", FailureKind::Crashed),
            failed("strtol", "0.14.1", FailureKind::Crashed),
        ];
        let all = summaries;
        let names = ["strchr", "strspn", "strchrnul", "memchr", "strstr", "sscanf", "strtol", "strtod"];
        let rows: Vec<WorkloadRow> = names.iter().map(|n| workload(n)).collect();
        let changes = Changes::new((Some(&old), &new), &all, &fails, &rows, &Rules::default());
        let change = |name: &str| {
            let r = changes.rows.iter().find(|r| r.workload == name).unwrap();
            (r.change, r.change_text.as_str())
        };
        assert_eq!(change("strchr"), (Change::Worse, "O(n) → O(n²)"));
        assert_eq!(change("strchrnul"), (Change::Fails, "wrong result"));
        assert_eq!(change("memchr"), (Change::Unchanged, "unchanged"));
        assert_eq!(change("strstr"), (Change::Steeper, "k 1.00 → 1.70"));
        assert_eq!(change("sscanf"), (Change::New, "new"));
        assert_eq!(change("strtod"), (Change::Passes, "passes again"));
        assert_eq!(change("strtol"), (Change::Unchanged, "unchanged"));
        assert_eq!(changes.rows[0].change, Change::Worse, "worst first");
        assert_eq!(
            changes.headline(),
            "zig-cc-musl 0.16.0 against 0.15.2: 2 workloads went O(n) → O(n²), 1 gives a wrong result, \
             1 went over k 1.5 without a class step, 1 new, 1 passes again, 2 unchanged."
        );
        let wrong = changes.rows.iter().find(|r| r.workload == "strchrnul").unwrap();
        assert_eq!(wrong.after.as_ref().unwrap().text(), "✗ wrong result");
        assert!(wrong.ratio.is_none() && wrong.slope_delta.is_none());
        let strchr = changes.rows.iter().find(|r| r.workload == "strchr").unwrap();
        assert_eq!(strchr.before.as_ref().unwrap().text(), "O(n) · k 1.00");
        assert_eq!(strchr.ratio.map(|r| (r.size, r.predicted)), Some((65536 << 4, false)));

        // Against nothing, the first version says how many it measured.
        let first = Changes::new((None, &old), &all, &fails, &rows, &Rules::default());
        assert_eq!(first.headline(), "zig-cc-musl 0.15.2, the first version measured: 7 workloads.");
        // Against another lineage, it is named.
        let control = VersionAt::new("musl-gcc", "0.16.0");
        let mut musl = all.clone();
        let mut strchr = at("strchr", "0.16.0", 1.0, n);
        strchr.lineage = "musl-gcc".into();
        musl.push(strchr);
        let across = Changes::new((Some(&control), &new), &musl, &[], &rows, &Rules::default());
        assert_eq!(
            across.headline(),
            "zig-cc-musl 0.16.0 against musl-gcc 0.16.0: 1 workload went O(n) → O(n²), 6 new."
        );
    }

    #[test]
    fn a_count_that_grows_alike_but_costs_more_is_a_change_of_cost_and_a_time_is_not() {
        let (old, new) = (VersionAt::new("zig-cc-musl", "0.15.2"), VersionAt::new("zig-cc-musl", "0.16.0"));
        let n = Some(Class::Linear);
        let counted = |name: &str, version: &str, scale: f64, metric: Metric| {
            let mut s = at(name, version, 1.0, n);
            s.metric = metric;
            s.sizes.iter_mut().for_each(|m| m.median_ns *= scale);
            s
        };
        let valgrind = Metric::InstructionsValgrind;
        let summaries = vec![
            counted("memcpy", "0.15.2", 1.0, valgrind),
            counted("memcpy", "0.16.0", 4.2, valgrind),
            counted("strlen", "0.15.2", 3.0, valgrind),
            counted("strlen", "0.16.0", 1.0, valgrind),
            counted("strchr", "0.15.2", 1.0, valgrind),
            counted("strchr", "0.16.0", 1.4, valgrind),
            counted("memcpy", "0.15.2", 1.0, Metric::Wall),
            counted("memcpy", "0.16.0", 4.2, Metric::Wall),
        ];
        let mut rows: Vec<WorkloadRow> = ["memcpy", "strlen", "strchr"].iter().map(|w| workload(w)).collect();
        rows.extend(["memcpy", "strlen", "strchr"].iter().map(|w| WorkloadRow { metric: valgrind, ..workload(w) }));
        let changes = Changes::new((Some(&old), &new), &summaries, &[], &rows, &Rules::default());
        let change = |name: &str, metric: Metric| {
            let r = changes.rows.iter().find(|r| r.workload == name && r.metric == metric).unwrap();
            (r.change, r.change_text.as_str())
        };
        assert_eq!(change("memcpy", valgrind), (Change::Costlier, "cost 4.20× at 1 MiB, O(n) both"));
        assert_eq!(change("strlen", valgrind), (Change::Cheaper, "cost 0.333× at 1 MiB, O(n) both"));
        assert_eq!(change("strchr", valgrind), (Change::Unchanged, "unchanged"), "under the factor");
        assert_eq!(change("memcpy", Metric::Wall), (Change::Unchanged, "unchanged"), "a time moves with its host");
        assert_eq!(
            changes.headline(),
            "zig-cc-musl 0.16.0 against 0.15.2: 1 workload costs more (more than 1.5×), 1 costs less (more than 1.5×), \
             2 unchanged."
        );
    }

    #[test]
    fn a_class_step_or_a_crossing_within_the_noise_is_unchanged_and_left_out_of_the_headline() {
        let (old, new) = (VersionAt::new("same-gcc", "1.0.0"), VersionAt::new("same-gcc", "1.0.1"));
        // contract.memrchr.bound measured twice with one binary: named O(n), then O(n log n) on the
        // largest size's raised median.
        let measured = |version: &str, class: Class, medians: [f64; 10]| {
            let mut s = at("contract.memrchr.bound", version, 1.0, Some(class));
            s.lineage = "same-gcc".into();
            s.sizes = medians
                .iter()
                .enumerate()
                .map(|(i, &median_ns)| SizeMedian { size: 128 << i, median_ns, runs: 1 })
                .collect();
            s
        };
        let first =
            measured("1.0.0", Class::Linear, [90.0, 90.0, 131.0, 231.0, 421.0, 801.0, 1562.0, 3095.0, 6219.0, 13199.0]);
        let second =
            measured("1.0.1", Class::NLogN, [90.0, 90.0, 130.0, 221.0, 411.0, 791.0, 1542.0, 3045.0, 6160.0, 15223.0]);
        // A slope over the alert level whose interval reaches well under it.
        let mut wide = at("sqlite-json-each", "1.0.1", 1.6, Some(Class::NLogN));
        (wide.lineage, wide.ci_low, wide.ci_high) = ("same-gcc".into(), 1.1, 2.1);
        let mut narrow = at("sqlite-json-each", "1.0.0", 1.3, Some(Class::NLogN));
        narrow.lineage = "same-gcc".into();
        let rows = [workload("contract.memrchr.bound"), workload("sqlite-json-each")];
        let changes = Changes::new((Some(&old), &new), &[first, second, narrow, wide], &[], &rows, &Rules::default());
        let text: Vec<(Change, &str)> = changes.rows.iter().map(|r| (r.change, r.change_text.as_str())).collect();
        assert_eq!(
            text,
            [(Change::Unchanged, "unchanged"), (Change::Unchanged, "O(n) → O(n log n), within the noise")],
            "built-in workloads first, then contract probes"
        );
        assert_eq!(changes.headline(), "same-gcc 1.0.1 against 1.0.0: 2 workloads unchanged.");
    }

    #[test]
    fn one_workload_agrees_with_a_singular_verb_and_a_missing_one_is_not_measured() {
        let (old, new) = (VersionAt::new("gcc", "13"), VersionAt::new("gcc", "14"));
        let mut gone = at("strchr", "13", 1.0, Some(Class::Linear));
        gone.lineage = "gcc".into();
        let mut crashed = failed("memchr", "14", FailureKind::Crashed);
        crashed.lineage = "gcc".into();
        let mut held = at("memchr", "13", 1.0, Some(Class::Linear));
        held.lineage = "gcc".into();
        let rows = [workload("strchr"), workload("memchr")];
        let changes = Changes::new((Some(&old), &new), &[gone, held], &[crashed], &rows, &Rules::default());
        assert_eq!(changes.headline(), "gcc 14 against 13: 1 workload crashes, 1 not measured.");
        assert_eq!(changes.rows.iter().find(|r| r.workload == "strchr").unwrap().change_text, "not measured at 14");
    }
}
