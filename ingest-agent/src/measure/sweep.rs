//! Times one workload binary at doubling sizes within a time budget, and assembles the run.
//!
//! The sweep has three phases, each a method of `Sweep`:
//! 1. **Rise**: double from a size below the start, stopping at the largest size, after a size
//!    whose median repetition went past the per-size budget, before a size predicted (from the
//!    growth seen so far) to go past it or past what is left of the total budget, or once growth
//!    clearly steeper than the limit makes the next size cost a tenth of the per-size budget. A
//!    size whose repetitions are predicted to be long is repeated 3 times rather than `--reps`.
//! 2. **Descend**: with fewer than [`budget::MIN_SIZES`] sizes, halve below the start until there are
//!    that many, so a quadratic libc costs seconds rather than the minutes a fixed sweep of large
//!    sizes would, and still gets a class (smaller sizes are cheap, even for a quadratic libc).
//! 3. **Widen**: when the sizes are too narrow to tell two classes apart while the slope is
//!    clearly under the limit, measure up to [`WIDEN_SIZES`] more, doubling past the largest
//!    (never past `--max-size`, and only as the budget allows), then halving below the smallest,
//!    until a class is named; a size too long, or one the workload cannot be set up at, ends it.
//!    A workload over the limit or unsure on it is never widened.

use crate::builds::build_hash::build_hash;
use crate::builds::workloads::Workload;
use crate::measure::budget::{self, Budget};
use crate::measure::failure;
use crate::measure::judged::class_worth_widening;
use crate::measure::process::{run_size, Exe, SizeRun, Watch};
use slopewatch_core::verdict::Limits;
use slopewatch_core::wire::{self, Failure, FailureKind, Measurement, Metric, WorkloadRun};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// How far above the slope limit growth between two sizes must be for the rise to stop early.
const STEEP_MARGIN: f64 = 0.2;
/// The share of the per-size budget a size past steep growth may cost before the rise stops.
const STEEP_STOP: f64 = 0.1;

/// The share of the per-size budget past which a repetition counts as long.
const LONG_REP: f64 = 0.1;
/// The repetitions at a size whose repetitions are long.
const LONG_REPS: u32 = 3;

/// How close the growth between two pairs of exactly counted sizes must be for the rise to stop.
const SETTLED: f64 = 0.02;

/// What one counted instruction costs the sweep's budgets, in nominal nanoseconds: about what
/// Valgrind's callgrind takes without cache simulation, 0.4 to 1 billion instructions a second on
/// the hosts measured. A per-size budget of 1 s lets a size count up to a billion.
const NS_PER_COUNTED_INSTRUCTION: f64 = 1.0;

/// How many per-size budgets of real time a counted size may take before it is stopped.
const EXACT_TIMEOUT: u32 = 10;

/// How many per-size budgets of real time a size run under an emulator may take before it is
/// stopped: QEMU's user mode runs a loop some 5 to 20 times slower, and translates each block of
/// code the first time it runs. The per-size budget still holds on the emulated times, so an
/// emulated sweep reaches smaller sizes; its growth is what is compared.
const EMULATED_TIMEOUT: u32 = 20;

/// Most sizes a sweep adds to name a class it could not tell.
pub const WIDEN_SIZES: usize = 3;

/// One workload measured on one toolchain.
#[derive(Debug, Clone)]
pub struct Measured {
    pub run: WorkloadRun,
    /// What the workload computed at each size it reported a result for: compared between
    /// toolchains, kept on this side of the wire.
    pub results: BTreeMap<u64, String>,
    /// Total wall time spent running the workload, warm-ups and set-up included.
    pub elapsed: Duration,
    /// Why the measure cannot count this workload faithfully, when it cannot: it computed a wrong
    /// result under the counter and the right one run natively. Nothing it measured is kept.
    pub unmeasurable: Option<String>,
}

/// Measures `w` from its built `binary`; `limits` say when a class is worth more sizes. A workload
/// that breaks (crashes, counts wrong, cannot set up, or runs past its time before enough sizes
/// are measured) comes back with its failure and the sizes measured before it. `watch` is told
/// each size as it starts and ends.
///
/// Counted under Valgrind (`metric`), every repetition of one binary counts the same: one
/// repetition per size is enough, and five sizes (the fewest a class is named from) rather than
/// six. The rise stops once the counts' growth has settled (see `Sweep::settled`): linear work
/// needs no large sizes. Valgrind runs a loop some 50 to 500 times slower, and the budgets hold
/// on the slowed times.
pub fn measure(
    binary: Exe,
    w: &Workload,
    budget: &Budget,
    limits: &Limits,
    metric: Metric,
    watch: &dyn Watch,
) -> Measured {
    let limits = &limits.of(w.contract.as_ref());
    let (start, max) = budget.sizes_for(w, metric.is_exact());
    let nominal = budget.start.unwrap_or(w.start).min(max);
    let mut sweep = Sweep {
        binary,
        w,
        budget,
        metric,
        fewest: budget::fewest_sizes(metric.is_exact()),
        watch,
        began: Instant::now(),
        done: BTreeMap::new(),
        meta: BTreeMap::new(),
        results: BTreeMap::new(),
        rising: Vec::new(),
        stopped: None,
    };
    let broke = sweep
        .rise(start, nominal, max, limits.slope_limit())
        .and_then(|()| sweep.descend(start))
        .and_then(|()| sweep.widen(limits))
        .err();
    if broke.as_deref().is_some_and(failure::is_not_provided) {
        let run =
            WorkloadRun { not_provided: true, ..workload_run(w, Some(binary.path), Vec::new(), BTreeMap::new(), None) };
        return Measured { run, results: BTreeMap::new(), elapsed: sweep.began.elapsed(), unmeasurable: None };
    }
    if let Some(why) = broke.as_deref().and_then(|f| sweep.unfaithful(f)) {
        let run = workload_run(w, Some(binary.path), Vec::new(), BTreeMap::new(), None);
        return Measured { run, results: BTreeMap::new(), elapsed: sweep.began.elapsed(), unmeasurable: Some(why) };
    }
    let failure = broke.map(|f| *f).or_else(|| {
        (sweep.done.len() < wire::MIN_SIZES).then(|| {
            sweep.stopped.take().unwrap_or_else(|| {
                failure::setup_failed(
                    None,
                    &format!(
                        "only {} sizes fit between {start} and {max}; a slope needs {}",
                        sweep.done.len(),
                        wire::MIN_SIZES
                    ),
                )
            })
        })
    });
    Measured {
        run: workload_run(w, Some(binary.path), sweep.done.into_values().collect(), sweep.meta, failure),
        results: sweep.results,
        elapsed: sweep.began.elapsed(),
        unmeasurable: None,
    }
}

/// One workload's sweep under way: what it runs and what it has measured.
struct Sweep<'a> {
    binary: Exe<'a>,
    w: &'a Workload,
    budget: &'a Budget,
    metric: Metric,
    /// The fewest sizes measured, whatever the budget.
    fewest: usize,
    watch: &'a dyn Watch,
    began: Instant,
    done: BTreeMap<u64, Measurement>,
    meta: BTreeMap<String, String>,
    results: BTreeMap<u64, String>,
    /// The median repetition of each size measured going up, in order: what predictions
    /// extrapolate.
    rising: Vec<(u64, f64)>,
    /// The size that ran past its time and was stopped, should too few sizes be measured without it.
    stopped: Option<Failure>,
}

impl Sweep<'_> {
    /// Phase 1: doubling from `start` while `max` and the budget allow, and until growth clearly
    /// steeper than `limit` makes the next size cost more than the verdict needs: the sizes below
    /// (phase 2) are cheap and tell it as well. A size below the `nominal` start that the
    /// workload cannot be set up at (too small for its input) is passed over, as the widening
    /// passes it: the sweep chose it, not the workload.
    fn rise(&mut self, start: u64, nominal: u64, max: u64, limit: f64) -> Result<(), Box<Failure>> {
        let mut size = start;
        while size <= max && self.affordable(size) {
            match self.take(size, self.left().max(self.budget.per_size)) {
                Ok(typical) => {
                    self.rising.push((size, typical));
                    if typical > self.per_size_ns() || self.steep_enough(size, limit) || self.settled() {
                        return Ok(());
                    }
                }
                Err(f) if f.kind == FailureKind::TimedOut => {
                    self.stopped = Some(*f);
                    return Ok(());
                }
                Err(f) if size < nominal && self.done.is_empty() && too_small(&f) => {}
                Err(f) => return Err(f),
            }
            size = match size.checked_mul(2) {
                Some(s) => s,
                None => return Ok(()),
            };
        }
        Ok(())
    }

    /// Phase 2: halving below the smallest size measured (or `start`) until the fewest sizes are.
    /// Smaller sizes are cheap, so each may take the whole budget; one that still runs past it
    /// ends the phase once a slope can be fitted.
    fn descend(&mut self, start: u64) -> Result<(), Box<Failure>> {
        let mut below = self.done.keys().next().copied().unwrap_or(start);
        while self.done.len() < self.fewest && below > 1 {
            below /= 2;
            match self.take(below, self.budget.total.max(self.budget.per_size)) {
                Ok(_) => {}
                Err(f) if f.kind == FailureKind::TimedOut && self.done.len() >= wire::MIN_SIZES => break,
                // Below every size measured, a refusal to set up is the input too small.
                Err(f) if too_small(&f) && self.done.len() >= wire::MIN_SIZES => break,
                Err(f) => return Err(f),
            }
        }
        Ok(())
    }

    /// Phase 3: up to [`WIDEN_SIZES`] sizes more while `limits` find the class worth it, upwards
    /// first (not past a size that was stopped), then downwards; each within what is left of the
    /// total budget.
    fn widen(&mut self, limits: &Limits) -> Result<(), Box<Failure>> {
        let mut upward = self.stopped.is_none();
        for _ in 0..WIDEN_SIZES {
            if self.left().is_zero() || !class_worth_widening(limits, &self.medians(), self.metric.noise()) {
                break;
            }
            let (Some(&smallest), Some(&largest)) = (self.done.keys().next(), self.done.keys().next_back()) else {
                break;
            };
            upward &= self.affordable(largest.saturating_mul(2));
            let Some(size) = next_wider(smallest, largest, self.budget.max, upward) else { break };
            upward &= size > largest;
            match self.take(size, self.left()) {
                Ok(typical) if upward => {
                    self.rising.push((size, typical));
                    upward = typical <= self.per_size_ns();
                }
                Ok(_) => {}
                // A size the workload cannot be set up at (too small for its input) ends the
                // widening, as a size that runs too long does: the sizes measured stand.
                Err(f) if f.kind == FailureKind::TimedOut || too_small(&f) => break,
                Err(f) => return Err(f),
            }
        }
        Ok(())
    }

    /// Runs the workload at `size` and keeps what it measured; returns its median repetition (not
    /// the slowest: one repetition descheduled on a loaded host must not end the sweep).
    ///
    /// For exact counts, the cost that steers the sweep is the count at a nominal
    /// [`NS_PER_COUNTED_INSTRUCTION`], not Valgrind's time: the sizes a sweep reaches then follow
    /// from the counts alone, the same on a busy host as on a quiet one, and so does the verdict.
    /// The size's timeout stays in real time, with room for a slow host.
    fn take(&mut self, size: u64, timeout: Duration) -> Result<f64, Box<Failure>> {
        let reps = self.reps_at(size);
        let timeout = match (self.metric.is_exact(), self.binary.emulated()) {
            (true, _) => timeout.max(self.budget.per_size * EXACT_TIMEOUT),
            (false, true) => timeout.max(self.budget.per_size * EMULATED_TIMEOUT),
            (false, false) => timeout,
        };
        let at =
            SizeRun { binary: self.binary, w: self.w, size, reps, timeout, watch: self.watch, metric: self.metric };
        let out = run_size(&at)?;
        let typical = match (&out.instructions, self.metric.is_exact()) {
            (Some(counts), true) => {
                let counts: Vec<f64> = counts.iter().map(|&c| c as f64 * NS_PER_COUNTED_INSTRUCTION).collect();
                slopewatch_core::fit::median(&counts)
            }
            _ => slopewatch_core::fit::median(&out.samples_ns),
        };
        self.meta.extend(out.meta);
        if let Some(result) = out.result {
            self.results.insert(size, result);
        }
        self.done.insert(size, Measurement { size, samples_ns: out.samples_ns, instructions: out.instructions });
        Ok(typical)
    }

    /// The repetitions at `size`: fewer (at most [`LONG_REPS`]) where one is predicted to take more
    /// than [`LONG_REP`] of the per-size budget. A long repetition varies little relative to its
    /// length, and its median of three is as good as one of five where one costs a quarter second.
    fn reps_at(&self, size: u64) -> u32 {
        if self.metric.is_exact() {
            return 1;
        }
        let long = predict_rep_ns(&self.rising, size).is_some_and(|ns| ns > self.per_size_ns() * LONG_REP);
        if long {
            self.budget.reps.min(LONG_REPS)
        } else {
            self.budget.reps
        }
    }

    /// Whether the last two sizes rising grew clearly steeper than `limit` and the next size would
    /// take more than [`STEEP_STOP`] of the per-size budget.
    fn steep_enough(&self, size: u64, limit: f64) -> bool {
        local_growth(&self.rising).is_some_and(|k| k >= limit + STEEP_MARGIN)
            && predict_rep_ns(&self.rising, size.saturating_mul(2))
                .is_some_and(|next| next > self.per_size_ns() * STEEP_STOP)
    }

    /// Why the counter, not the libc, is at fault for `broke`, when it is: under Valgrind the
    /// workload counted wrong or crashed, and run natively at the same size it runs right.
    /// Valgrind emulates the CPU, not always as the CPU computes (its x87 floating point is 64-bit,
    /// and it stops at an instruction it does not know), so what it runs may not be what
    /// production runs.
    fn unfaithful(&self, broke: &Failure) -> Option<String> {
        let size = broke.size?;
        let counter_may_be_at_fault = matches!(broke.kind, FailureKind::WrongResult | FailureKind::Crashed);
        if self.metric != Metric::InstructionsValgrind || !counter_may_be_at_fault {
            return None;
        }
        let native = SizeRun {
            binary: self.binary,
            w: self.w,
            size,
            reps: 1,
            timeout: self.budget.per_size * EXACT_TIMEOUT,
            watch: self.watch,
            metric: Metric::Cpu,
        };
        run_size(&native).ok()?;
        Some(format!(
            "{} under Valgrind at {}, right when run natively: Valgrind does not run it as the CPU does",
            broke.kind.label(),
            slopewatch_core::format::size(size, self.w.unit)
        ))
    }

    /// Whether exact counts have shown all the rise can: the fewest sizes are measured, and the
    /// growth between the last two pairs of sizes is the same to [`SETTLED`]. A count has no
    /// noise to rise above, so larger sizes would only cost more; growth still bending upwards (a
    /// quadratic term under a linear one) keeps the rise going until the budget stops it.
    fn settled(&self) -> bool {
        if !self.metric.is_exact() || self.done.len() < self.fewest {
            return false;
        }
        let top: Vec<(u64, f64)> = self.done.values().rev().take(3).map(|m| (m.size, self.metric.median(m))).collect();
        match top[..] {
            [(s2, c2), (s1, c1), (s0, c0)] => {
                let k = |(sa, ca): (u64, f64), (sb, cb): (u64, f64)| (cb / ca).ln() / (sb as f64 / sa as f64).ln();
                (k((s1, c1), (s2, c2)) - k((s0, c0), (s1, c1))).abs() < SETTLED
            }
            _ => false,
        }
    }

    /// Whether `size` is predicted, from the growth seen so far, to fit the per-size budget and
    /// what is left of the total.
    fn affordable(&self, size: u64) -> bool {
        predict_rep_ns(&self.rising, size).is_none_or(|predicted| {
            predicted <= self.per_size_ns()
                && predicted * f64::from(self.reps_at(size) + 1) <= self.left().as_nanos() as f64
        })
    }

    /// The per-size budget, in nanoseconds of a repetition.
    fn per_size_ns(&self) -> f64 {
        self.budget.per_size.as_nanos() as f64
    }

    fn left(&self) -> Duration {
        self.budget.total.saturating_sub(self.began.elapsed())
    }

    /// (size, median) of every size measured, by the run's metric: what its class is named from.
    fn medians(&self) -> Vec<(f64, f64)> {
        self.done.values().map(|m| (m.size as f64, self.metric.median(m))).collect()
    }
}

/// Whether `f` is a workload refusing to set up at a size, as one below what its input needs does
/// (a libc that lacks the function refuses too, but at every size: that is not a size too small).
fn too_small(f: &Failure) -> bool {
    f.kind == FailureKind::SetupFailed && !failure::is_not_provided(f)
}

/// The next size to widen a sweep of `smallest..=largest` by: double the largest when going
/// `upward` and `max` allows, else half the smallest while above 1.
fn next_wider(smallest: u64, largest: u64, max: Option<u64>, upward: bool) -> Option<u64> {
    let up = largest.checked_mul(2).filter(|&s| upward && max.is_none_or(|m| s <= m));
    up.or((smallest > 1).then_some(smallest / 2))
}

/// A workload that could not be built: its failure and no measurements.
pub fn unbuilt(w: &Workload, failure: Failure) -> WorkloadRun {
    workload_run(w, None, Vec::new(), BTreeMap::new(), Some(failure))
}

/// The run of `w` from the `binary` it ran, when one was built. Its build hash is the binary's,
/// but for a workload built by its own command: a team's command may run anything.
fn workload_run(
    w: &Workload,
    binary: Option<&Path>,
    measurements: Vec<Measurement>,
    metadata: BTreeMap<String, String>,
    failure: Option<Failure>,
) -> WorkloadRun {
    WorkloadRun {
        build_hash: binary.filter(|_| w.command().is_none()).and_then(build_hash),
        metadata,
        failure,
        contract: w.contract.clone(),
        size_of_interest: w.at,
        ..WorkloadRun::new(w.name.clone(), w.unit, w.source_hash(), measurements)
    }
}

/// The expected median repetition at `size`, extrapolating the growth between the last two sizes
/// (never assumed better than linear, so a noisy flat start cannot hide a steep end).
fn predict_rep_ns(seen: &[(u64, f64)], size: u64) -> Option<f64> {
    let &(last_size, last_ns) = seen.last()?;
    let k = local_growth(seen).map_or(1.0, |k| k.max(1.0));
    Some(last_ns * (size as f64 / last_size as f64).powf(k))
}

/// The growth exponent between the last two sizes of `seen`, when there are two.
fn local_growth(seen: &[(u64, f64)]) -> Option<f64> {
    match seen {
        [.., (s0, t0), (s1, t1)] if *t0 > 0.0 => Some((t1 / t0).ln() / (*s1 as f64 / *s0 as f64).ln()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prediction_extrapolates_the_observed_growth() {
        let quad = [(1000, 1.0e6), (2000, 4.0e6)];
        assert!((predict_rep_ns(&quad, 4000).unwrap() - 16.0e6).abs() < 1.0);
        let flat = [(1000, 1.0e6), (2000, 1.0e6)];
        assert!((predict_rep_ns(&flat, 4000).unwrap() - 2.0e6).abs() < 1.0, "never better than linear");
        assert_eq!(predict_rep_ns(&[], 4000), None);
    }

    #[test]
    fn widening_doubles_past_the_largest_size_until_max_or_the_budget_stops_it_then_halves() {
        assert_eq!(next_wider(64, 1024, None, true), Some(2048));
        assert_eq!(next_wider(64, 1024, Some(2048), true), Some(2048));
        assert_eq!(next_wider(64, 1024, Some(1024), true), Some(32), "--max-size is never passed");
        assert_eq!(next_wider(64, 1024, None, false), Some(32), "the budget stopped the way up");
        assert_eq!(next_wider(1, 1024, Some(1024), true), None, "nothing below 1");
        assert_eq!(next_wider(2, u64::MAX, None, true), Some(1));
    }
}
