//! The table of fitted slopes and their verdicts the agent prints at the end: one row per
//! workload and toolchain, as `measure::judged` fitted, classified and judged it.

use crate::measure::judged::Judged;
use slopewatch_core::complexity::{Class, UNSURE};
use slopewatch_core::format;
use slopewatch_core::verdict::Decision;
use slopewatch_core::wire::{Failure, FailureKind};

/// The verdict of a workload the measure could not count faithfully, as a probe's state says it.
pub const UNMEASURABLE: &str = slopewatch_core::probe::UNMEASURABLE;

/// The verdict of a workload whose libc lacks the function it calls, as a probe's state says it.
pub const NOT_PROVIDED: &str = slopewatch_core::probe::NOT_PROVIDED;

/// The verdict of a workload that was not measured and did not fail: its libc lacks the function,
/// or the measure could not count it.
pub fn absent(r: &Judged) -> Option<&'static str> {
    if r.unmeasurable.is_some() {
        Some(UNMEASURABLE)
    } else if r.not_provided {
        Some(NOT_PROVIDED)
    } else {
        None
    }
}

/// A verdict as the table's column says it: `ok`, `OVER 1.5` (the slope limit), `OVER O(n)` (the
/// class limit), `OVER 1.5, O(n)`, `OVER CONTRACT O(1)` or `unsure`.
pub fn verdict(decision: &Decision) -> String {
    match decision {
        Decision::Under => "ok".to_string(),
        Decision::Over(b) => match b.contract {
            Some(expected) => format!("OVER CONTRACT {}", expected.label()),
            None => {
                let over: Vec<String> =
                    b.slope.map(|s| s.to_string()).into_iter().chain(b.class.map(|c| c.label().to_string())).collect();
                format!("OVER {}", over.join(", "))
            }
        },
        Decision::Unsure(_) => "unsure".to_string(),
    }
}

/// The slope table of the loops (the probes have [`crate::output::contracts`]'s), one workload per
/// line, with its verdict: `ok`, `OVER 1.5` (the slope limit), `OVER O(n)` (the
/// class limit), `OVER CONTRACT O(1)` (a workload's own `expect`), `unsure`, or for a failed workload `✗`, the
/// failure and the first line of what it printed. A workload stopped by its failure has the slope
/// of the sizes before it, marked `*`.
pub fn table(rows: &[Judged]) -> String {
    let rows: Vec<&Judged> = rows.iter().filter(|r| !r.is_probe()).collect();
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
            None => absent(r).map_or_else(|| verdict(&r.decision), str::to_string),
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
/// measurement was judged, `re-measured once: gcc-glibc/strchr (unsure at first: R² 0.41)`; and
/// what changed regime at one size (see `slopewatch_core::complexity::RegimeStep`).
pub fn doubts(rows: &[Judged]) -> String {
    let mut unsure = Vec::new();
    let mut settled = Vec::new();
    let mut steps = Vec::new();
    let mut unmeasurable = Vec::new();
    for r in rows {
        if let Some(why) = &r.unmeasurable {
            unmeasurable.push(format!("{} ({why})", r.name()));
        }
        let Some(decision) = r.counted() else { continue };
        if let Some(step) = r.complexity.as_ref().and_then(|c| c.step) {
            steps.push(format!("{} ({})", r.name(), format::regime_step(&step, r.unit)));
        }
        match (decision, &r.remeasured) {
            (Decision::Unsure(_), None) => unsure.push(format!("{} ({})", r.name(), r.decision.doubts())),
            (Decision::Unsure(_), Some(_)) => {
                unsure.push(format!("{} ({}; re-measured once)", r.name(), r.decision.doubts()))
            }
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
    if !unmeasurable.is_empty() {
        out.push_str(&format!("not measurable, left out of the run: {}\n", unmeasurable.join(", ")));
    }
    if !steps.is_empty() {
        out.push_str(&format!(
            "changed regime at one size, judged by the growth on both sides: {}\n",
            steps.join(", ")
        ));
    }
    out
}

/// Where the instructions went in each profiled workload, a line each (a toolchain's workload
/// once, whatever measures judged it), for after the table; empty when nothing was profiled.
pub fn profiles(rows: &[Judged]) -> String {
    let mut out = String::new();
    let mut seen = std::collections::HashSet::new();
    for r in rows {
        let Some(sentence) = r.profile.as_ref().and_then(|p| p.sentence(r.unit)) else { continue };
        if seen.insert((&r.toolchain, &r.workload)) {
            out.push_str(&format!("  {}/{}: {sentence}\n", r.toolchain, r.workload));
        }
    }
    out
}

/// Every failure with all of its detail, for after the table; empty when nothing failed.
pub fn failures(rows: &[Judged]) -> String {
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
pub(crate) fn first_line(f: &Failure) -> Option<String> {
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
mod tests {
    use super::*;
    use crate::measure::judged::tests::{judged, judged_as, judged_by, points};
    use slopewatch_core::verdict::Limits;
    use slopewatch_core::wire::Contract;

    fn sized(f: impl Fn(f64) -> f64, sizes: usize) -> Vec<(f64, f64)> {
        (0..sizes).map(|i| 1024.0 * 2f64.powi(i as i32)).map(|n| (n, f(n))).collect()
    }

    #[test]
    fn the_table_shows_each_workload_s_class_beside_its_slope() {
        let table = table(&[judged("scan", points(|n| 3.0 * n)), judged("tokenize", points(|n| n * n))]);
        let words: Vec<Vec<&str>> = table.lines().map(|l| l.split_whitespace().collect()).collect();
        assert_eq!(words[0][2..4], ["class", "slope"], "{table}");
        assert_eq!(words[1][2..4], ["O(n)", "1.00"], "{table}");
        assert_eq!(words[2][2..4], ["O(n²)", "2.00"], "{table}");
    }

    #[test]
    fn the_verdict_column_says_ok_over_a_limit_or_unsure() {
        let mut disturbed = points(|n| 3.0 * n);
        disturbed[3].1 *= 10.0;
        let verdicts = |limits: &Limits| -> Vec<String> {
            let rows = [
                judged_by("scan", points(|n| 3.0 * n), limits),
                judged_by("tokenize", points(|n| n * n), limits),
                judged_by("erratic", disturbed.clone(), limits),
            ];
            let table = table(&rows);
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
    fn a_clean_slope_is_ok_or_over_and_a_disturbed_one_is_unsure_with_the_reason() {
        let limits = Limits::default();
        assert_eq!(verdict(&judged("scan", sized(|n| 3.0 * n, 6)).decision), "ok");
        assert_eq!(verdict(&judged("tokenize", sized(|n| n * n, 6)).decision), "OVER 1.5");
        let mut disturbed = sized(|n| 3.0 * n, 5);
        disturbed[2].1 *= 10.0;
        let why = judged_by("erratic", disturbed, &limits).decision.doubts();
        assert!(why.starts_with("R² 0."), "{why}");
        assert_eq!(judged("short", sized(|n| 3.0 * n, 3)).decision.doubts(), "3 sizes");
        // Four sizes name no class: unsure under a class limit, whatever the slope.
        let class_only = Limits { max_slope: None, max_class: Some(Class::Linear), ..limits };
        let why = judged_by("four", sized(|n| n * n, 4), &class_only).decision.doubts();
        assert!(why.starts_with("class "), "{why}");
    }

    #[test]
    fn a_contract_is_judged_by_its_class_a_polynomial_step_up_and_not_by_the_slope() {
        let limits = Limits::default();
        let held = |p| judged_as("tokenize", p, Some(Contract::expecting(Class::Constant)), &limits).decision;
        let doubled = |f: fn(f64) -> f64| (0..8).map(|i| 1024.0 * 2f64.powi(i)).map(|n| (n, f(n))).collect::<Vec<_>>();
        assert_eq!(verdict(&held(doubled(|_| 500.0))), "ok");
        assert_eq!(verdict(&held(doubled(|n| 500.0 + 3.0 * n))), "OVER CONTRACT O(1)");
        assert_eq!(verdict(&held(doubled(|n| 500.0 * n.ln()))), "ok", "O(log n) is no break of O(1)");
        let sort = judged_as("sort", doubled(|n| n * n), Some(Contract::expecting(Class::NLogN)), &limits);
        assert_eq!(verdict(&sort.decision), "OVER CONTRACT O(n log n)", "a slope of 2 is under no slope limit here");
    }

    #[test]
    fn after_the_table_each_unsure_workload_is_named_with_why_and_whether_it_was_measured_again() {
        let mut disturbed = points(|n| 3.0 * n);
        disturbed[3].1 *= 10.0;
        assert_eq!(doubts(&[judged("scan", points(|n| 3.0 * n)), judged("tokenize", points(|n| n * n))]), "");
        let once = Judged { remeasured: Some("R² 0.41".into()), ..judged("strchr", points(|n| 3.0 * n)) };
        let twice = Judged { remeasured: Some("R² 0.41".into()), ..judged("erratic", disturbed.clone()) };
        let said = doubts(&[once, twice, judged("strspn", disturbed)]);
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(lines[0], "re-measured once: gcc-glibc/strchr (unsure at first: R² 0.41)");
        assert!(lines[1].starts_with("unsure: gcc-glibc/erratic (R² 0."), "{said}");
        assert!(lines[1].contains("; re-measured once), gcc-glibc/strspn (R² 0."), "{said}");
        assert_eq!(lines.len(), 2);
    }
}
