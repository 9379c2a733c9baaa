//! Slopes and complexity classes for the server: one fit per workload of a run (from its samples, or
//! from the medians a pruned run kept), a summary per toolchain version, and whether a class step
//! between two versions' summaries is shown.

use crate::model::{Classified, Medians, SizeMedian, Slope, WorkloadFit, WorkloadSummary};
use slopewatch_core::complexity::{self, Class, Complexity};
use slopewatch_core::fit;
use slopewatch_core::wire::{FieldError, Metric, RunSubmission, WorkloadRun};
use std::collections::{BTreeMap, HashSet};

/// Fits every workload of a validated run that did not fail, from its samples' medians by the
/// run's metric: an instructions run from its counts, any other from its times. A failed
/// workload's partial sizes are stored but never fitted into a version's summary.
pub fn fit_run(run: &RunSubmission) -> Result<Vec<WorkloadFit>, FieldError> {
    let metric = run.metric();
    fit_workloads(run, |_, w| w.measurements.iter().map(|m| (m.size, metric.median(m), m.samples_ns.len())).collect())
}

/// `fit_run` for a run whose raw samples were pruned: `medians[i]` holds what each size of
/// `run.workloads[i]` kept, all a fit needs, so the run fits exactly as it did when its samples
/// were there.
pub fn fit_pruned_run(run: &RunSubmission, medians: &[Medians]) -> Result<Vec<WorkloadFit>, FieldError> {
    fit_workloads(run, |i, _| medians.get(i).cloned().unwrap_or_default())
}

fn fit_workloads(
    run: &RunSubmission,
    medians: impl Fn(usize, &WorkloadRun) -> Medians,
) -> Result<Vec<WorkloadFit>, FieldError> {
    run.workloads
        .iter()
        .enumerate()
        .filter(|(_, w)| w.failure.is_none() && !w.not_provided)
        .map(|(i, w)| fit_medians(i, &w.name, medians(i, w)))
        .collect()
}

/// Fits the `index`th workload of a run from its (size, median, number of samples).
fn fit_medians(index: usize, workload: &str, mut medians: Medians) -> Result<WorkloadFit, FieldError> {
    medians.sort_by_key(|m| m.0);
    let points: Vec<(f64, f64)> = medians.iter().map(|&(s, t, _)| (s as f64, t)).collect();
    let invalid =
        |e: fit::FitError| FieldError { field: format!("workloads[{index}].measurements"), reason: e.to_string() };
    let fit = fit::fit(&points).map_err(invalid)?;
    Ok(WorkloadFit { workload: workload.to_string(), fit, medians })
}

/// The complexity class of (size, median ns) points, as a run's fit or a version's summary holds
/// it; `None` when they cannot be classified (fewer than three, or not all positive), which never
/// happens to the medians of a run that was accepted.
/// A metric's medians are classified as exact where it counts exactly (Valgrind's counts).
pub fn classify(medians: &[(u64, f64)], metric: Metric) -> Option<Complexity> {
    let points: Vec<(f64, f64)> = medians.iter().map(|&(s, t)| (s as f64, t)).collect();
    complexity::classify_with(&points, metric.noise()).ok()
}

/// A step between the named classes of one series at two versions, and whether the evidence shows
/// it: where it does not, the two versions are within the noise of each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassStep {
    pub from: Class,
    pub to: Class,
    pub shown: bool,
}

impl ClassStep {
    /// `O(n) → O(n²)`, or `O(n) → O(n log n), within the noise` where not shown.
    pub fn text(&self) -> String {
        let step = format!("{} → {}", self.from.label(), self.to.label());
        if self.shown {
            step
        } else {
            format!("{step}, within the noise")
        }
    }
}

/// The step between a series' classes at an earlier and a later version, from each version's
/// per-size medians (as its summary holds them) and its class, judged by `complexity::step_shown`
/// with the noise of `metric`; `None` unless both classes are named and differ. Worked out from
/// what is stored whenever it is asked, so stored history reads by the rule as it stands.
pub fn class_step(
    before: &[SizeMedian],
    before_class: Option<&Complexity>,
    after: &[SizeMedian],
    after_class: Option<&Complexity>,
    metric: Metric,
) -> Option<ClassStep> {
    let (from, to) = (before_class?.class?, after_class?.class?);
    if from == to {
        return None;
    }
    let points =
        |sizes: &[SizeMedian]| -> Vec<(f64, f64)> { sizes.iter().map(|m| (m.size as f64, m.median_ns)).collect() };
    let shown = complexity::step_shown(&points(before), from, &points(after), to, metric.noise());
    Some(ClassStep { from, to, shown })
}

/// One run's fit of a workload, as read back to summarise a version.
#[derive(Debug, Clone)]
pub struct RunFit {
    pub fit: Slope,
    pub host_id: i64,
}

/// Works out the class of a summary's medians, unless `stored` holds the class of these very
/// medians already: a pass that adds a run without moving them (or takes in only a failure) keeps
/// the stored class, and classifying stays the work of summaries that moved.
pub fn classify_summary(summary: &mut WorkloadSummary, stored: Option<Classified>, metric: Metric) {
    let medians: Vec<(u64, f64)> = summary.sizes.iter().map(|&(s, t, _)| (s, t)).collect();
    summary.complexity = match stored {
        Some((classified, complexity)) if classified == medians => complexity,
        _ => classify(&medians, metric),
    };
}

/// Summarises the fits and per-size medians of every run of one workload at one version; the
/// summary is not classified yet (`classify_summary`).
pub fn summarize(fits: &[RunFit], medians: &[(u64, f64)]) -> Option<WorkloadSummary> {
    let slopes: Vec<f64> = fits.iter().map(|f| f.fit.slope).collect();
    let spread = fit::spread(&slopes)?;
    let collect = |g: fn(&RunFit) -> f64| fits.iter().map(g).collect::<Vec<f64>>();
    let mut by_size: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for &(size, ns) in medians {
        by_size.entry(size).or_default().push(ns);
    }
    let sizes: Vec<(u64, f64, usize)> = by_size.into_iter().map(|(s, v)| (s, fit::median(&v), v.len())).collect();
    Some(WorkloadSummary {
        complexity: None,
        source_hash: None,
        build_hash: None,
        beside: None,
        source_count: 0,
        slope: spread.median,
        slope_min: spread.min,
        slope_max: spread.max,
        ci_low: fit::median(&collect(|f| f.fit.ci_low)),
        ci_high: fit::median(&collect(|f| f.fit.ci_high)),
        r2: fit::median(&collect(|f| f.fit.r2)),
        runs: fits.len(),
        hosts: fits.iter().map(|f| f.host_id).collect::<HashSet<_>>().len(),
        sizes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_fit(slope: f64, host_id: i64) -> RunFit {
        RunFit { fit: Slope { slope, ci_low: slope - 0.1, ci_high: slope + 0.1, r2: 0.99 }, host_id }
    }

    #[test]
    fn an_instructions_run_is_fitted_from_its_counts_and_any_other_from_its_times() {
        let measurements: Vec<serde_json::Value> = (0..5)
            .map(|i| {
                let size = 1024u64 << i;
                serde_json::json!({"size": size, "samples_ns": [size as f64, size as f64 * 1.01],
                                   "instructions": [size * size, size * size + 2]})
            })
            .collect();
        let mut body = serde_json::json!({
            "run_id": uuid::Uuid::new_v4(), "agent_version": "0.1.0", "started_at": "2026-11-29T21:00:00Z",
            "host": {"name": "h"}, "toolchain": {"name": "gcc-glibc", "version": "12.2.0"},
            "workloads": [{"name": "w", "size_unit": "bytes", "measurements": measurements}],
        });
        let fit = |body: &serde_json::Value| {
            let run = RunSubmission::from_json(&serde_json::to_vec(body).unwrap()).unwrap();
            fit_run(&run).unwrap().remove(0)
        };
        let timed = fit(&body);
        assert!((timed.fit.slope - 1.0).abs() < 1e-6, "{timed:?}");
        body["measure"] = "instructions".into();
        body["counter"] = "perf".into();
        let counted = fit(&body);
        assert!((counted.fit.slope - 2.0).abs() < 1e-6, "{counted:?}");
        assert_eq!(counted.medians[0], (1024, 1024.0 * 1024.0 + 1.0, 2), "the median of the counts");
    }

    #[test]
    fn a_version_summary_takes_medians_across_runs() {
        let fits = [run_fit(1.0, 1), run_fit(1.1, 1), run_fit(2.0, 2)];
        let medians = [(1024, 10.0), (2048, 20.0), (1024, 12.0), (2048, 30.0), (4096, 40.0)];
        let s = summarize(&fits, &medians).unwrap();
        assert_eq!(s.slope, 1.1);
        assert_eq!((s.slope_min, s.slope_max), (1.0, 2.0));
        assert!((s.ci_low - 1.0).abs() < 1e-12 && (s.ci_high - 1.2).abs() < 1e-12);
        assert_eq!((s.runs, s.hosts), (3, 2));
        assert_eq!(s.sizes, vec![(1024, 11.0, 2), (2048, 25.0, 2), (4096, 40.0, 1)]);
        assert_eq!(s.complexity, None, "not classified until asked");
        assert!(summarize(&[], &[]).is_none());
    }

    #[test]
    fn a_version_summary_is_classified_on_its_medians_across_runs() {
        let fits = [run_fit(2.0, 1), run_fit(2.0, 2)];
        let medians: Vec<(u64, f64)> =
            (0..7).flat_map(|i| [(1024u64 << i, (1024f64 * (1 << i) as f64).powi(2)), (1024 << i, 1e9)]).collect();
        // Per size, one run quadratic and one flat at 1e9: the summary classifies their medians.
        let mut s = summarize(&fits, &medians).unwrap();
        let across: Vec<(u64, f64)> = s.sizes.iter().map(|&(size, t, _)| (size, t)).collect();
        classify_summary(&mut s, None, Metric::Wall);
        assert_eq!(s.complexity, classify(&across, Metric::Wall));
        let quadratic: Vec<(u64, f64)> = (0..7).map(|i| (1024u64 << i, ((1024u64 << i) as f64).powi(2))).collect();
        let mut q = summarize(&fits, &quadratic).unwrap();
        classify_summary(&mut q, None, Metric::Wall);
        assert_eq!(q.complexity.as_ref().unwrap().class, Some(slopewatch_core::complexity::Class::Quadratic));

        // A stored class of the same medians is kept, whatever it says; one of other medians is not.
        let stored = classify(&across, Metric::Wall);
        classify_summary(&mut q, Some((quadratic.clone(), stored.clone())), Metric::Wall);
        assert_eq!(q.complexity, stored, "kept: the medians did not move");
        classify_summary(&mut q, Some((across, stored.clone())), Metric::Wall);
        assert_eq!(q.complexity.as_ref().unwrap().class, Some(slopewatch_core::complexity::Class::Quadratic));
    }

    #[test]
    fn a_class_step_is_judged_between_two_named_classes_and_said_within_the_noise_where_not_shown() {
        let medians = |cost: fn(f64) -> f64| -> Vec<SizeMedian> {
            (0..6)
                .map(|i| 65536u64 << i)
                .map(|size| SizeMedian { size, median_ns: cost(size as f64), runs: 1 })
                .collect()
        };
        let (linear, quadratic) = (medians(|n| 3.0 * n), medians(|n| n * n / 2000.0));
        let class_of =
            |m: &[SizeMedian]| classify(&m.iter().map(|m| (m.size, m.median_ns)).collect::<Vec<_>>(), Metric::Wall);
        let (cl, cq) = (class_of(&linear), class_of(&quadratic));
        let step = class_step(&linear, cl.as_ref(), &quadratic, cq.as_ref(), Metric::Wall).unwrap();
        assert_eq!(step, ClassStep { from: Class::Linear, to: Class::Quadratic, shown: true });
        assert_eq!(step.text(), "O(n) → O(n²)");
        // The same medians, their classes read as a step: not shown.
        let mut as_n_log_n = cl.clone().unwrap();
        as_n_log_n.class = Some(Class::NLogN);
        let noise = class_step(&linear, cl.as_ref(), &linear, Some(&as_n_log_n), Metric::Wall).unwrap();
        assert_eq!(noise.text(), "O(n) → O(n log n), within the noise");
        // No step between a class and itself, an unsure class or a missing one.
        let unsure = Complexity { class: None, ..as_n_log_n };
        assert_eq!(class_step(&linear, cl.as_ref(), &linear, cl.as_ref(), Metric::Wall), None);
        assert_eq!(class_step(&linear, cl.as_ref(), &quadratic, Some(&unsure), Metric::Wall), None);
        assert_eq!(class_step(&linear, None, &quadratic, cq.as_ref(), Metric::Wall), None);
    }
}
