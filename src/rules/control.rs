//! A control check (docs/alerts.md, "Attribution"): what a control lineage (a second
//! implementation, `[control] lineages`) says of a regression. Per slope workload, the control's
//! runs on the first bad version's source, measured within the regression's period, on the
//! regression's own hosts where it has any there:
//!
//! - the control held (the rules' noise rule holds its slope under the workload's threshold, or
//!   held it over already before): **toolchain**;
//! - it moved over the threshold too, and the workload's source changed between the last good and
//!   the first bad version: **code**;
//! - it moved too on an unchanged source: **host_or_harness**;
//! - its slope is too noisy for the noise rule to say either way, or there are no such runs:
//!   **unknown**, with what to run to settle it.
//!
//! The control's runs are judged as the rules judge a version: core's noise rule, configured, at
//! the workload's own threshold, on the runs' pooled fit (the medians of their slopes, intervals,
//! r² and sizes). A control run has no class, so under `rule = "class"` it is its slope that is
//! judged, at the threshold.
//!
//! A regression of a control lineage is attributed with the other controls only; with none, it
//! has no control of its own and says so. No database here: the store reads the evidence.

use crate::config::Rules;
use crate::format;
use crate::model::control::{
    ControlCheck, ControlRun, ControlVerdict, Regressed, RegressedWorkload, WorkloadControlCheck,
};
use crate::model::workload_label;
use slopewatch_core::fit::median;
use slopewatch_core::verdict::{SlopeEvidence, Verdict};
use slopewatch_core::wire::Metric;

/// The attribution of `regressed` by the configured `controls`, from the control runs of its
/// period, judged by `rules`.
pub fn check(regressed: &Regressed, controls: &[String], runs: &[ControlRun], rules: &Rules) -> ControlCheck {
    let usable: Vec<&str> = controls.iter().map(String::as_str).filter(|c| *c != regressed.lineage).collect();
    let workloads: Vec<WorkloadControlCheck> =
        regressed.workloads.iter().map(|w| workload(regressed, &usable, runs, w, rules)).collect();
    let source_changed = workloads.iter().any(|w| w.source_changed);
    let mut hosts: Vec<String> = workloads.iter().flat_map(|w| w.hosts.iter().cloned()).collect();
    hosts.sort();
    hosts.dedup();
    let mut labels: Vec<String> = workloads.iter().filter_map(|w| w.control.clone()).collect();
    labels.dedup();
    let control = if labels.is_empty() { usable.first().map(|c| c.to_string()) } else { Some(labels.join(", ")) };
    let known: Vec<ControlVerdict> =
        workloads.iter().map(|w| w.verdict).filter(|v| *v != ControlVerdict::Unknown).collect();
    let (verdict, sentence) = match (workloads.as_slice(), known.first()) {
        ([], _) => (
            ControlVerdict::Unknown,
            "only slopes are attributed: this regression's workloads failed, which the control does not judge".into(),
        ),
        ([one], _) => (one.verdict, one.sentence.clone()),
        (all, first) => {
            let each: Vec<String> =
                all.iter().map(|w| format!("{}: {}", workload_label(&w.workload, w.metric), w.sentence)).collect();
            match first {
                Some(v) if known.iter().all(|k| k == v) => (*v, each.join("; ")),
                Some(_) => {
                    (ControlVerdict::Unknown, format!("the control disagrees across workloads: {}", each.join("; ")))
                }
                None => (ControlVerdict::Unknown, each.join("; ")),
            }
        }
    };
    ControlCheck {
        verdict,
        control,
        sentence,
        source_changed,
        from: regressed.from,
        to: regressed.to,
        hosts,
        workloads,
    }
}

/// One workload's attribution, by the first of the controls with runs to use.
fn workload(
    regressed: &Regressed,
    controls: &[&str],
    runs: &[ControlRun],
    w: &RegressedWorkload,
    rules: &Rules,
) -> WorkloadControlCheck {
    let threshold = rules.threshold_for(&w.name);
    let judge = |runs: &[&ControlRun]| rules.noise().slope(&pooled(runs), threshold);
    let source_changed = matches!((&w.source_before, &w.source_after), (Some(b), Some(a)) if b != a);
    let bad_source = w.source_after.as_deref().or(w.source_before.as_deref());
    let own_hosts: Vec<i64> = regressed.hosts.iter().map(|(id, _)| *id).collect();
    for &control in controls {
        let Some(bad_source) = bad_source else { break };
        let of_control: Vec<&ControlRun> =
            runs.iter().filter(|r| r.lineage == control && r.workload_id == w.workload_id).collect();
        let on_bad: Vec<&ControlRun> = of_control.iter().copied().filter(|r| r.source_hash == bad_source).collect();
        let same: Vec<&ControlRun> = on_bad.iter().copied().filter(|r| own_hosts.contains(&r.host_id)).collect();
        let same_hosts = !same.is_empty();
        let on_bad = if same_hosts { same } else { on_bad };
        let hosts_ok = |r: &&ControlRun| !same_hosts || own_hosts.contains(&r.host_id);
        let since_bad = |r: &&ControlRun| w.bad_first_run.is_none_or(|t| r.started_at >= t);
        let (after, before): (Vec<&ControlRun>, Vec<&ControlRun>) = if source_changed {
            let old = w.source_before.as_deref();
            let before = of_control.iter().copied().filter(|r| Some(r.source_hash.as_str()) == old).filter(hosts_ok);
            (on_bad, before.collect())
        } else {
            let (late, early): (Vec<&ControlRun>, Vec<&ControlRun>) = on_bad.into_iter().partition(since_bad);
            if late.is_empty() {
                (early, Vec::new())
            } else {
                (late, early)
            }
        };
        if after.is_empty() {
            continue;
        }
        let now = pooled(&after);
        let k = now.slope;
        let k_before = (!before.is_empty()).then(|| pooled(&before).slope);
        let over_before = !before.is_empty() && judge(&before) == Verdict::Over;
        let moved = judge(&after) == Verdict::Over && !over_before;
        let verdict = match (judge(&after), moved, source_changed) {
            (Verdict::Unsure, ..) if !over_before => ControlVerdict::Unknown,
            (_, false, _) => ControlVerdict::Toolchain,
            (_, true, true) => ControlVerdict::Code,
            (_, true, false) => ControlVerdict::HostOrHarness,
        };
        let mut versions: Vec<&str> = after.iter().map(|r| r.version.as_str()).collect();
        versions.sort_unstable();
        versions.dedup();
        let label = format!("{control} {}", versions.join("/"));
        let mut hosts: Vec<String> = after.iter().chain(&before).map(|r| r.host.clone()).collect();
        hosts.sort();
        hosts.dedup();
        let from = k_before.filter(|_| moved).map(|b| format!(" (from k {})", format::slope(b))).unwrap_or_default();
        let k_text = format::slope(k);
        let mut sentence = match verdict {
            ControlVerdict::Toolchain if source_changed => {
                format!("control {label} stayed at k {k_text} on the new source: the toolchain changed, not the code")
            }
            ControlVerdict::Toolchain => {
                format!("control {label} stayed at k {k_text} on the same source: the toolchain changed")
            }
            ControlVerdict::Code => {
                format!("control {label} moved too, to k {k_text}{from}, on the changed source: the code changed")
            }
            ControlVerdict::Unknown => format!(
                "control {label} measured k {k_text} [{}, {}] (r² {}, {} sizes), too noisy for the noise rule to say \
                 whether it moved past {}: measure it again to attribute this regression",
                format::slope(now.ci_low),
                format::slope(now.ci_high),
                format::slope(now.r2),
                now.sizes,
                format::slope(threshold),
            ),
            _ => format!(
                "control {label} moved too, to k {k_text}{from}, on the same source: the host or the harness changed"
            ),
        };
        sentence.push_str(&if same_hosts {
            format!(" (measured on {})", hosts.join(", "))
        } else {
            format!(" (measured on {}, none on the regression's hosts {})", hosts.join(", "), host_names(regressed))
        });
        return WorkloadControlCheck {
            workload: w.name.clone(),
            metric: w.metric,
            verdict,
            control: Some(label),
            sentence,
            control_slope: Some(k),
            control_slope_before: k_before,
            control_runs: after.len() + before.len(),
            hosts,
            same_hosts,
            source_changed,
        };
    }
    let mut sentence = match controls.first() {
        Some(control) => format!(
            "no runs of control {control} on {} with the first bad version's source, measured between {} and {}: \
             measure {control} beside {} {} on {} (`slopewatch-agent run --workloads {}{}` with {control} among its \
             toolchains) to attribute it",
            workload_label(&w.name, w.metric),
            format::timestamp(regressed.from),
            format::timestamp(regressed.to),
            regressed.lineage,
            regressed.version,
            host_names(regressed),
            w.name,
            match w.metric {
                Metric::Wall => String::new(),
                other => format!(" --measure {}", other.measure()),
            },
        ),
        None => format!(
            "{} is itself the control and has no control of its own: measure a second implementation beside it to \
             tell the code from the toolchain",
            regressed.lineage
        ),
    };
    if source_changed {
        sentence.push_str(&format!(
            "; {} changed source between {} and {}: without the control, this regression cannot be pinned on the \
             toolchain",
            w.name,
            regressed.previous_version.as_deref().unwrap_or("the versions"),
            regressed.version
        ));
    }
    WorkloadControlCheck {
        workload: w.name.clone(),
        metric: w.metric,
        verdict: ControlVerdict::Unknown,
        control: controls.first().map(|c| c.to_string()),
        sentence,
        control_slope: None,
        control_slope_before: None,
        control_runs: 0,
        hosts: Vec::new(),
        same_hosts: false,
        source_changed,
    }
}

/// The runs' pooled fit: the median of each of their slopes, interval bounds, r² and sizes.
fn pooled(runs: &[&ControlRun]) -> SlopeEvidence {
    let of = |f: fn(&SlopeEvidence) -> f64| median(&runs.iter().map(|r| f(&r.evidence)).collect::<Vec<_>>());
    SlopeEvidence {
        slope: of(|e| e.slope),
        ci_low: of(|e| e.ci_low),
        ci_high: of(|e| e.ci_high),
        r2: of(|e| e.r2),
        sizes: of(|e| e.sizes as f64).floor() as usize,
    }
}

fn host_names(regressed: &Regressed) -> String {
    let names: Vec<&str> = regressed.hosts.iter().map(|(_, n)| n.as_str()).collect();
    if names.is_empty() {
        "its hosts".into()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    fn regressed(before: &str, after: &str) -> Regressed {
        Regressed {
            lineage: "zig-cc-musl".into(),
            version: "0.16.0".into(),
            previous_version: Some("0.15.2".into()),
            from: datetime!(2026-11-01 0:00 UTC),
            to: datetime!(2026-11-03 0:00 UTC),
            hosts: vec![(1, "build-01".into())],
            workloads: vec![RegressedWorkload {
                workload_id: 7,
                name: "strchr".into(),
                metric: Metric::Wall,
                source_before: Some(before.into()),
                source_after: Some(after.into()),
                bad_first_run: Some(datetime!(2026-11-02 0:00 UTC)),
            }],
        }
    }

    fn run(source: &str, slope: f64, host: i64, day: u8) -> ControlRun {
        ControlRun {
            lineage: "musl-gcc".into(),
            version: "1.2.3".into(),
            host_id: host,
            host: format!("build-0{host}"),
            started_at: datetime!(2026-11-01 12:00 UTC).replace_day(day).unwrap(),
            workload_id: 7,
            source_hash: source.into(),
            evidence: SlopeEvidence { slope, ci_low: slope - 0.05, ci_high: slope + 0.05, r2: 0.999, sizes: 5 },
        }
    }

    fn verdict(r: &Regressed, runs: &[ControlRun]) -> ControlCheck {
        check(r, &["musl-gcc".to_string()], runs, &Rules::default())
    }

    #[test]
    fn a_control_that_held_blames_the_toolchain_and_one_that_moved_the_code_or_the_host() {
        let held = verdict(&regressed("a", "a"), &[run("a", 1.0, 1, 1), run("a", 1.01, 1, 2)]);
        assert_eq!(held.verdict, ControlVerdict::Toolchain);
        assert!(held.sentence.starts_with("control musl-gcc 1.2.3 stayed at k 1.01 on the same source: the toolchain"));
        assert_eq!(held.hosts, ["build-01"]);
        let code = verdict(&regressed("a", "b"), &[run("a", 1.0, 1, 1), run("b", 2.0, 1, 2)]);
        assert_eq!(code.verdict, ControlVerdict::Code);
        assert!(
            code.sentence.contains("moved too, to k 2.00 (from k 1.00), on the changed source"),
            "{}",
            code.sentence
        );
        let host = verdict(&regressed("a", "a"), &[run("a", 1.0, 1, 1), run("a", 2.0, 1, 2)]);
        assert_eq!(host.verdict, ControlVerdict::HostOrHarness);
        let always = verdict(&regressed("a", "a"), &[run("a", 2.0, 1, 1), run("a", 2.0, 1, 2)]);
        assert_eq!(always.verdict, ControlVerdict::Toolchain, "over before and after: the control did not move");
    }

    #[test]
    fn the_control_is_judged_by_the_configured_noise_rule_and_threshold() {
        let r = regressed("a", "a");
        // Over the threshold by its point estimate, but its interval reaches far below it: the
        // noise rule cannot say it moved, so neither can the attribution.
        let mut wide = run("a", 1.6, 1, 2);
        wide.evidence.ci_low = 1.0;
        let noisy = verdict(&r, &[run("a", 1.0, 1, 1), wide]);
        assert_eq!(noisy.verdict, ControlVerdict::Unknown, "{}", noisy.sentence);
        assert!(noisy.sentence.contains("too noisy for the noise rule to say whether it moved past 1.50"));
        let mut few = run("a", 2.0, 1, 2);
        few.evidence.sizes = 3;
        assert_eq!(verdict(&r, &[run("a", 1.0, 1, 1), few]).verdict, ControlVerdict::Unknown, "three sizes");
        // The workload's own threshold, as configured, decides whether the control moved.
        let runs = [run("a", 1.0, 1, 1), run("a", 1.4, 1, 2)];
        assert_eq!(verdict(&r, &runs).verdict, ControlVerdict::Toolchain);
        let tuned = Rules { per_workload: [("strchr".to_string(), 1.3)].into(), ..Rules::default() };
        let moved = check(&r, &["musl-gcc".to_string()], &runs, &tuned);
        assert_eq!(moved.verdict, ControlVerdict::HostOrHarness, "{}", moved.sentence);
    }

    #[test]
    fn runs_on_the_regressions_hosts_come_first_and_others_are_named() {
        let r = regressed("a", "a");
        let mixed = verdict(&r, &[run("a", 2.0, 2, 2), run("a", 1.0, 1, 2)]);
        assert_eq!((mixed.verdict, mixed.hosts.clone()), (ControlVerdict::Toolchain, vec!["build-01".to_string()]));
        let other = verdict(&r, &[run("a", 1.0, 2, 2)]);
        assert!(other.sentence.ends_with("(measured on build-02, none on the regression's hosts build-01)"));
        assert!(!other.workloads[0].same_hosts);
    }

    #[test]
    fn without_control_runs_it_says_what_to_run_and_that_a_changed_source_cannot_be_pinned() {
        let none = verdict(&regressed("a", "b"), &[run("a", 1.0, 1, 1)]);
        assert_eq!(none.verdict, ControlVerdict::Unknown);
        assert!(none.sentence.contains("measure musl-gcc beside zig-cc-musl 0.16.0 on build-01"), "{}", none.sentence);
        assert!(none.sentence.contains("strchr changed source between 0.15.2 and 0.16.0: without the control"));
        let mut own = regressed("a", "a");
        own.lineage = "musl-gcc".into();
        let own = verdict(&own, &[run("a", 1.0, 1, 1)]);
        assert_eq!((own.verdict, own.control.clone()), (ControlVerdict::Unknown, None));
        assert!(own.sentence.starts_with("musl-gcc is itself the control and has no control of its own"));
    }
}
