//! The table of fitted slopes and their verdicts the agent prints at the end: one row per
//! workload and toolchain, fitted and classified with the server's own code.

use crate::measure::gate::{Limits, Verdict};
use slopewatch_core::complexity::{classify_with, Class, Complexity, UNSURE};
use slopewatch_core::fit::{fit, Fit};
use slopewatch_core::format;
use slopewatch_core::predict::{predict, Prediction};
use slopewatch_core::wire::{
    Contract, Failure, FailureKind, Metric, RunSubmission, SizeUnit, WorkloadRun, CONTRACT_PREFIX,
};

/// One line of the slope table.
#[derive(Debug)]
pub struct Row {
    pub toolchain: String,
    /// What its run measured: its medians are counts or nanoseconds by it.
    pub metric: Metric,
    pub workload: String,
    pub fit: Result<Fit, String>,
    /// The complexity class of the same medians, as the server works it out.
    pub complexity: Option<Complexity>,
    pub largest: u64,
    pub unit: SizeUnit,
    /// The median at the largest size, by the metric.
    pub largest_median: f64,
    /// Why the workload failed: it stopped early, or its results differ from other toolchains'.
    pub failure: Option<Failure>,
    /// Whether the failure stopped the sweep, so the fit is of the sizes measured before it; a
    /// result that differs from other toolchains' fails a size that was measured.
    pub partial: bool,
    /// Why its first measurement was unsure, when the gate measured it again.
    pub remeasured: Option<String>,
    /// The class it is held to instead of the limits, when it has a contract.
    pub contract: Option<Contract>,
    /// The libc lacks the function it calls: nothing measured, nothing failed.
    pub not_provided: bool,
    /// The time predicted at the workload's size of interest, from the same fit.
    pub prediction: Option<Prediction>,
}

impl Row {
    /// The verdict on a measured row; a failed one is judged by its failure instead.
    pub fn verdict(&self, limits: &Limits) -> Verdict {
        limits.of(self.contract.as_ref()).judge(self.fit.as_ref().ok(), self.complexity.as_ref())
    }

    /// Whether it is a probe of the contract catalogue, shown in a table of its own.
    pub fn is_probe(&self) -> bool {
        self.workload.starts_with(CONTRACT_PREFIX)
    }

    /// `gcc-glibc/strchr`, or `gcc-glibc [instructions]/strchr` for a measure other than wall.
    pub fn name(&self) -> String {
        format!("{}/{}", self.label(), self.workload)
    }

    /// The toolchain's column: its name, with the measure where it is not wall time.
    pub fn label(&self) -> String {
        toolchain_label(&self.toolchain, self.metric)
    }
}

/// A toolchain's name as a run of `metric` is shown: `gcc-glibc`, `gcc-glibc [instructions]`.
pub fn toolchain_label(toolchain: &str, metric: Metric) -> String {
    match metric {
        Metric::Wall => toolchain.to_string(),
        m => format!("{toolchain} [{}]", m.measure()),
    }
}

/// Fits every workload of every run with the server's own fitting code.
pub fn rows(runs: &[RunSubmission]) -> Vec<Row> {
    runs.iter().flat_map(|run| run.workloads.iter().map(|w| row(&run.toolchain.name, run.metric(), w))).collect()
}

/// One workload's row: the fit and class of its per-size medians by `metric`.
pub fn row(toolchain: &str, metric: Metric, w: &WorkloadRun) -> Row {
    let points: Vec<(f64, f64)> = w.measurements.iter().map(|m| (m.size as f64, metric.median(m))).collect();
    let largest = w.measurements.iter().max_by_key(|m| m.size);
    Row {
        toolchain: toolchain.to_string(),
        metric,
        workload: w.name.clone(),
        fit: fit(&points).map_err(|e| e.to_string()),
        complexity: classify_with(&points, metric.noise()).ok(),
        largest: largest.map_or(0, |m| m.size),
        unit: w.size_unit,
        largest_median: largest.map_or(f64::NAN, |m| metric.median(m)),
        failure: w.failure.clone(),
        partial: w.failure.as_ref().is_some_and(|f| f.size.is_none_or(|s| !w.measurements.iter().any(|m| m.size == s))),
        remeasured: None,
        contract: w.contract.clone(),
        not_provided: w.not_provided,
        // A time is predicted, from a time's fit: a count predicts no time.
        prediction: w.size_of_interest.filter(|_| !metric.is_count()).and_then(|at| predict(&points, at).ok()),
    }
}

/// The slope table of the loops (the probes have [`crate::output::contracts`]'s), one workload per
/// line, with a verdict against `limits`: `ok`, `OVER 1.5` (the slope limit), `OVER O(n)` (the
/// class limit), `OVER CONTRACT O(1)` (a workload's own `expect`), `unsure`, or for a failed workload `✗`, the
/// failure and the first line of what it printed. A workload stopped by its failure has the slope
/// of the sizes before it, marked `*`.
pub fn table(rows: &[Row], limits: &Limits) -> String {
    let rows: Vec<&Row> = rows.iter().filter(|r| !r.is_probe()).collect();
    if rows.is_empty() {
        return String::new();
    }
    // Wide enough for `gcc-glibc [instructions]` and a count of instructions.
    let tw = rows.iter().map(|r| r.label().chars().count()).max().unwrap_or(0).max(20);
    let mw = if rows.iter().any(|r| r.metric.is_count()) { 18 } else { 10 };
    let mut out = format!(
        "{:<tw$} {:<17} {:<10} {:>6} {:>16} {:>6} {:>5} {:>10} {:>mw$}  {}\n",
        "toolchain", "workload", "class", "slope", "95% CI", "R²", "sizes", "largest", "median", "verdict"
    );
    let mut partial = false;
    for r in rows {
        let mark = if r.partial { "*" } else { "" };
        let (slope, ci, r2, n) = match (&r.fit, &r.failure) {
            (Ok(f), _) => (
                format!("{:.2}{mark}", f.slope),
                format!("[{:.2}, {:.2}]", f.ci_low, f.ci_high),
                format!("{:.3}", f.r2),
                f.n.to_string(),
            ),
            (Err(_), Some(_)) => ("-".into(), String::new(), String::new(), String::new()),
            (Err(e), None) => (String::from("-"), e.clone(), String::new(), String::new()),
        };
        partial |= r.partial && r.fit.is_ok();
        let verdict = match &r.failure {
            Some(f) => match first_line(f) {
                Some(line) => format!("✗ {} — {line}", format::failure(f, r.unit)),
                None => format!("✗ {}", format::failure(f, r.unit)),
            },
            None => r.verdict(limits).to_string(),
        };
        let (largest, median) = if r.largest == 0 {
            ("-".into(), "-".into())
        } else {
            (format::size(r.largest, r.unit), format::value(r.metric, r.largest_median))
        };
        let class = r.complexity.as_ref().map_or("-", |c| c.class.map_or(UNSURE, Class::label));
        out.push_str(&format!(
            "{:<tw$} {:<17} {:<10} {:>6} {:>16} {:>6} {:>5} {:>10} {:>mw$}  {}\n",
            r.label(),
            r.workload,
            class,
            slope,
            ci,
            r2,
            n,
            largest,
            median,
            verdict
        ));
    }
    if partial {
        out.push_str("* partial: fitted from the sizes measured before the failure\n");
    }
    out
}

/// What was unsure and what was measured again, for after the table; empty when nothing was:
/// `unsure: gcc-glibc/strchr (R² 0.62; re-measured once)`, and for a workload whose second
/// measurement was judged, `re-measured once: gcc-glibc/strchr (unsure at first: R² 0.41)`.
pub fn doubts(rows: &[Row], limits: &Limits) -> String {
    let mut unsure = Vec::new();
    let mut settled = Vec::new();
    for r in rows.iter().filter(|r| r.failure.is_none() && !r.not_provided) {
        match (r.verdict(limits), &r.remeasured) {
            (Verdict::Unsure(why), None) => unsure.push(format!("{} ({why})", r.name())),
            (Verdict::Unsure(why), Some(_)) => unsure.push(format!("{} ({why}; re-measured once)", r.name())),
            (_, Some(first)) => settled.push(format!("{} (unsure at first: {first})", r.name())),
            (_, None) => {}
        }
    }
    let mut out = String::new();
    if !settled.is_empty() {
        out.push_str(&format!("re-measured once: {}\n", settled.join(", ")));
    }
    if !unsure.is_empty() {
        out.push_str(&format!("unsure: {}\n", unsure.join(", ")));
    }
    out
}

/// Every failure with all of its detail, for after the table; empty when nothing failed.
pub fn failures(rows: &[Row]) -> String {
    let mut out = String::new();
    for r in rows {
        let Some(f) = &r.failure else { continue };
        out.push_str(&format!("  {}/{}: {}\n", r.toolchain, r.workload, format::failure(f, r.unit)));
        for line in f.detail.lines() {
            out.push_str(&format!("      {line}\n"));
        }
    }
    out
}

/// The line of the detail worth a glance: a compiler's first error rather than its "In function"
/// preamble, otherwise the first line that the summary does not already say. Long lines are cut.
fn first_line(f: &Failure) -> Option<String> {
    let line = match f.kind {
        FailureKind::BuildFailed => f.detail.lines().find(|l| l.contains("error")),
        _ => None,
    }
    .or_else(|| f.detail.lines().find(|l| !l.trim().is_empty() && !l.starts_with("wrong result: ")))?;
    let line = line.trim();
    Some(match line.char_indices().nth(100) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use slopewatch_core::complexity::classify;

    /// Six doubling sizes from 1024 and the time `f` gives each.
    pub(crate) fn points(f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
        (0..6).map(|i| f64::from(1024 << i)).map(|n| (n, f(n))).collect()
    }

    /// The row of gcc-glibc's `workload` measured at the (size, median) `p`.
    pub(crate) fn row(workload: &str, p: Vec<(f64, f64)>) -> Row {
        Row {
            toolchain: "gcc-glibc".into(),
            workload: workload.into(),
            fit: fit(&p).map_err(|e| e.to_string()),
            complexity: classify(&p).ok(),
            largest: p.last().unwrap().0 as u64,
            unit: SizeUnit::Bytes,
            metric: Metric::Wall,
            largest_median: p.last().unwrap().1,
            failure: None,
            partial: false,
            remeasured: None,
            contract: None,
            not_provided: false,
            prediction: None,
        }
    }

    #[test]
    fn the_table_shows_each_workload_s_class_beside_its_slope() {
        let table = table(&[row("scan", points(|n| 3.0 * n)), row("tokenize", points(|n| n * n))], &Limits::default());
        let words: Vec<Vec<&str>> = table.lines().map(|l| l.split_whitespace().collect()).collect();
        assert_eq!(words[0][2..4], ["class", "slope"], "{table}");
        assert_eq!(words[1][2..4], ["O(n)", "1.00"], "{table}");
        assert_eq!(words[2][2..4], ["O(n²)", "2.00"], "{table}");
    }

    #[test]
    fn the_verdict_column_says_ok_over_a_limit_or_unsure() {
        let mut disturbed = points(|n| 3.0 * n);
        disturbed[3].1 *= 10.0;
        let rows =
            [row("scan", points(|n| 3.0 * n)), row("tokenize", points(|n| n * n)), row("erratic", disturbed.clone())];
        let verdicts = |limits: &Limits| -> Vec<String> {
            let table = table(&rows, limits);
            table.lines().skip(1).map(|l| l.rsplit_once("  ").unwrap().1.to_string()).collect()
        };
        assert_eq!(verdicts(&Limits::default()), ["ok", "OVER 1.5", "unsure"]);
        let class_only = Limits { max_slope: None, max_class: Some(Class::Linear), ..Limits::default() };
        let class_gated = verdicts(&class_only);
        assert_eq!(class_gated[..2], ["ok", "OVER O(n)"]);
        let both = Limits { max_class: Some(Class::Linear), ..Limits::default() };
        assert_eq!(verdicts(&both)[1], "OVER 1.5, O(n)");
        let lenient = Limits { max_class: Some(Class::Quadratic), ..class_only };
        assert_eq!(verdicts(&lenient)[..2], ["ok", "ok"]);
    }

    #[test]
    fn after_the_table_each_unsure_workload_is_named_with_why_and_whether_it_was_measured_again() {
        let mut disturbed = points(|n| 3.0 * n);
        disturbed[3].1 *= 10.0;
        let limits = Limits::default();
        assert_eq!(doubts(&[row("scan", points(|n| 3.0 * n)), row("tokenize", points(|n| n * n))], &limits), "");
        let once = Row { remeasured: Some("R² 0.41".into()), ..row("strchr", points(|n| 3.0 * n)) };
        let twice = Row { remeasured: Some("R² 0.41".into()), ..row("erratic", disturbed.clone()) };
        let said = doubts(&[once, twice, row("strspn", disturbed)], &limits);
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(lines[0], "re-measured once: gcc-glibc/strchr (unsure at first: R² 0.41)");
        assert!(lines[1].starts_with("unsure: gcc-glibc/erratic (R² 0."), "{said}");
        assert!(lines[1].contains("; re-measured once), gcc-glibc/strspn (R² 0."), "{said}");
        assert_eq!(lines.len(), 2);
    }
}
