//! A measured workload judged: its per-size medians fitted and classified with the server's own
//! code, and core's verdict against the limits in force (its contract's, where it has one). The
//! tables and the report only format these records; nothing in `output` decides.

use slopewatch_core::complexity::{classify_with, Class, Complexity, Noise};
use slopewatch_core::fit::{fit, Fit};
use slopewatch_core::predict::{predict, Prediction};
use slopewatch_core::probe::ProbeState;
use slopewatch_core::verdict::{Decision, Limits, SlopeEvidence, Verdict};
use slopewatch_core::wire::{Contract, Failure, Metric, RunSubmission, SizeUnit, WorkloadRun, CONTRACT_PREFIX};

/// One workload measured with one toolchain, by one metric, and judged.
#[derive(Debug)]
pub struct Judged {
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
    /// Why the measure could not count it faithfully: nothing measured, nothing failed, and
    /// nothing sent.
    pub unmeasurable: Option<String>,
    /// The time predicted at the workload's size of interest, from the same fit.
    pub prediction: Option<Prediction>,
    /// The verdict on what was measured, against the limits it was judged by. A failed workload
    /// is judged by its failure instead, wherever a verdict is shown or counted.
    pub decision: Decision,
    /// Where its instructions went at one size, where it was profiled.
    pub profile: Option<slopewatch_core::profile::Profile>,
}

impl Judged {
    /// The fit, class and verdict of `w`'s per-size medians by `metric`, measured with
    /// `toolchain` and judged by `limits` (or its contract).
    pub fn new(toolchain: &str, metric: Metric, w: &WorkloadRun, limits: &Limits) -> Judged {
        let points: Vec<(f64, f64)> = w.measurements.iter().map(|m| (m.size as f64, metric.median(m))).collect();
        let largest = w.measurements.iter().max_by_key(|m| m.size);
        let fit = fit(&points).map_err(|e| e.to_string());
        let complexity = classify_with(&points, metric.noise()).ok();
        let decision = limits
            .of(w.contract.as_ref())
            .judge(fit.as_ref().ok().map(SlopeEvidence::from).as_ref(), complexity.as_ref());
        Judged {
            toolchain: toolchain.to_string(),
            metric,
            workload: w.name.clone(),
            fit,
            complexity,
            largest: largest.map_or(0, |m| m.size),
            unit: w.size_unit,
            largest_median: largest.map_or(f64::NAN, |m| metric.median(m)),
            failure: w.failure.clone(),
            partial: w
                .failure
                .as_ref()
                .is_some_and(|f| f.size.is_none_or(|s| !w.measurements.iter().any(|m| m.size == s))),
            remeasured: None,
            contract: w.contract.clone(),
            not_provided: w.not_provided,
            unmeasurable: None,
            // A time is predicted, from a time's fit: a count predicts no time.
            prediction: w.size_of_interest.filter(|_| !metric.is_count()).and_then(|at| predict(&points, at).ok()),
            decision,
            profile: w.profile.clone(),
        }
    }

    /// `w`, which `metric` could not count faithfully, for `why`.
    pub fn unmeasurable(toolchain: &str, metric: Metric, w: &WorkloadRun, why: String) -> Judged {
        Judged { unmeasurable: Some(why), ..Judged::new(toolchain, metric, w, &Limits::default()) }
    }

    /// The decision, where one counts: none for a workload that failed (judged by its failure
    /// instead), whose libc lacks the function or that the measure could not count (nothing was
    /// measured, so nothing is unsure).
    pub fn counted(&self) -> Option<&Decision> {
        (self.failure.is_none() && !self.not_provided && self.unmeasurable.is_none()).then_some(&self.decision)
    }

    /// Over its limit, class or contract, and measured in full or in part without failing.
    pub fn is_over(&self) -> bool {
        self.counted().is_some_and(|d| d.verdict() == Verdict::Over)
    }

    /// Whether it is a probe of the contract catalogue, shown in a table of its own.
    pub fn is_probe(&self) -> bool {
        self.workload.starts_with(CONTRACT_PREFIX)
    }

    /// The class its medians name, where they name one.
    pub fn class(&self) -> Option<Class> {
        self.complexity.as_ref().and_then(|c| c.class)
    }

    /// Where it stands as a probe of its contract: its libc lacks the function, the measure could
    /// not count it, it failed, or else its class is held or over, or unsure where none is named.
    pub fn probe_state(&self) -> ProbeState {
        if self.not_provided {
            return ProbeState::NotProvided;
        }
        if self.unmeasurable.is_some() {
            return ProbeState::Unmeasurable;
        }
        if let Some(f) = &self.failure {
            return ProbeState::Failed(f.kind);
        }
        match (self.decision.verdict(), self.class()) {
            (Verdict::Over, Some(_)) => ProbeState::Over,
            (Verdict::Under, Some(_)) => ProbeState::Held,
            _ => ProbeState::Unsure,
        }
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

/// Every workload of every run, judged by `limits`.
pub fn judge_all(runs: &[RunSubmission], limits: &Limits) -> Vec<Judged> {
    runs.iter()
        .flat_map(|run| run.workloads.iter().map(|w| Judged::new(&run.toolchain.name, run.metric(), w, limits)))
        .collect()
}

/// Whether measuring more sizes could name a class for `points` of (size, median), judged by
/// `limits`: the class is unsure while the slope is clearly under the limit (or, under a
/// contract, whatever the slope). A workload over the limit, or unsure on it, is not worth it:
/// its verdict needs no class, and on a quadratic libc every size more is expensive. `noise` says
/// whether the points are exact counts.
pub fn class_worth_widening(limits: &Limits, points: &[(f64, f64)], noise: Noise) -> bool {
    let unsure = || classify_with(points, noise).is_ok_and(|c| c.class.is_none());
    if limits.contract.is_some() {
        return unsure();
    }
    let Ok(fit) = fit(points) else { return false };
    limits.noise.slope(&SlopeEvidence::from(&fit), limits.slope_limit()) == Verdict::Under && unsure()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use slopewatch_core::complexity::{classify, Class};
    use slopewatch_core::wire::Measurement;

    /// Six doubling sizes from 1024 and the time `f` gives each.
    pub(crate) fn points(f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
        (0..6).map(|i| f64::from(1024 << i)).map(|n| (n, f(n))).collect()
    }

    /// gcc-glibc's `workload` measured at the (size, median) `p`, judged by `limits`.
    pub(crate) fn judged_by(workload: &str, p: Vec<(f64, f64)>, limits: &Limits) -> Judged {
        judged_as(workload, p, None, limits)
    }

    /// As [`judged_by`], held to `contract`.
    pub(crate) fn judged_as(workload: &str, p: Vec<(f64, f64)>, contract: Option<Contract>, limits: &Limits) -> Judged {
        let measurements =
            p.iter().map(|&(n, t)| Measurement { size: n as u64, samples_ns: vec![t], instructions: None }).collect();
        let w =
            WorkloadRun { contract, ..WorkloadRun::new(workload.into(), SizeUnit::Bytes, String::new(), measurements) };
        Judged::new("gcc-glibc", Metric::Wall, &w, limits)
    }

    /// As [`judged_by`], at the default limit.
    pub(crate) fn judged(workload: &str, p: Vec<(f64, f64)>) -> Judged {
        judged_by(workload, p, &Limits::default())
    }

    fn sized(f: impl Fn(f64) -> f64, sizes: usize, step: f64) -> Vec<(f64, f64)> {
        (0..sizes).map(|i| 1024.0 * step.powi(i as i32)).map(|n| (n, f(n))).collect()
    }

    #[test]
    fn a_record_carries_the_fit_the_class_and_the_verdict_of_its_medians() {
        let quadratic = judged("tokenize", points(|n| n * n));
        assert!((quadratic.fit.as_ref().unwrap().slope - 2.0).abs() < 1e-9);
        assert_eq!(quadratic.complexity.as_ref().and_then(|c| c.class), Some(Class::Quadratic));
        assert!(quadratic.is_over());
        let held = judged_as(
            "contract.strchr.remaining",
            sized(|_| 500.0, 8, 2.0),
            Some(Contract::expecting(Class::Constant)),
            &Limits::default(),
        );
        assert_eq!(held.decision, Decision::Under, "judged by its contract, not the slope limit");
        assert!(held.is_probe());
        assert_eq!(held.name(), "gcc-glibc/contract.strchr.remaining");
    }

    #[test]
    fn only_an_unsure_class_under_the_slope_limit_is_worth_more_sizes() {
        let limits = Limits::default();
        // A fixed cost plus linear work over 2×, with 3% noise: too narrow to tell n from n log n.
        let mut narrow = sized(|n| 2000.0 + 3.0 * n, 5, 2f64.powf(0.25));
        narrow.iter_mut().zip([1.0, 1.03, 0.98, 1.02, 0.99]).for_each(|(p, noise)| p.1 *= noise);
        assert!(classify(&narrow).unwrap().class.is_none());
        assert!(class_worth_widening(&limits, &narrow, Noise::Measured));
        // Three sizes more, doubling past the largest, tell them apart.
        let largest = narrow[4].0;
        narrow.extend((1..=3).map(|i| largest * 2f64.powi(i)).map(|n| (n, 2000.0 + 3.0 * n)));
        assert_eq!(classify(&narrow).unwrap().class, Some(Class::Linear));
        assert!(!class_worth_widening(&limits, &narrow, Noise::Measured));
        assert!(!class_worth_widening(&limits, &sized(|n| 3.0 * n, 6, 2.0), Noise::Measured), "already named");
        assert!(!class_worth_widening(&limits, &sized(|n| n * n, 4, 2.0), Noise::Measured), "over the slope limit");
        let mut disturbed = sized(|n| 3.0 * n, 5, 2.0);
        disturbed[2].1 *= 10.0;
        assert!(!class_worth_widening(&limits, &disturbed, Noise::Measured), "unsure on the slope");
    }
}
