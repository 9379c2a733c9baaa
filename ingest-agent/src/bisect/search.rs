//! The search: both ends measured first, then the range halved like `git bisect`, each candidate
//! built and measured at the sizes where the bad end's growth showed, and judged; a candidate that
//! cannot be built or run, or stays unsure when measured again, is skipped.

use super::candidates::Candidates;
use crate::builds::cache::BuildCache;
use crate::builds::error::{one_line, BuildError};
use crate::builds::toolchain;
use crate::builds::workloads::Workload;
use crate::config::ToolchainSpec;
use crate::measure::judged::Judged;
use crate::measure::process::Exe;
use crate::measure::progress::{self, Progress};
use crate::measure::{self, Budget};
use anyhow::{bail, Context, Result};
use slopewatch_core::bisection::{BisectionSubmission, Outcome, Step, StepVerdict};
use slopewatch_core::complexity::Class;
use slopewatch_core::verdict::{Decision, Limits};
use slopewatch_core::wire::{Metric, RunSubmission, WorkloadRun};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;
use uuid::Uuid;

/// The next candidate to measure strictly between `lo` (good) and `hi` (bad): the middle one, or
/// the nearest to it not yet skipped, alternating above and below. `None` when every candidate
/// between is skipped (or there is none).
pub fn next_candidate(lo: usize, hi: usize, skipped: &BTreeSet<usize>) -> Option<usize> {
    if hi <= lo + 1 {
        return None;
    }
    let mid = lo + (hi - lo) / 2;
    (0..hi - lo).flat_map(|d| [mid + d, mid.wrapping_sub(d)]).find(|&i| i > lo && i < hi && !skipped.contains(&i))
}

/// What one candidate measured to.
#[derive(Debug)]
struct CandidateOutcome {
    verdict: StepVerdict,
    /// The steepest slope and its workload.
    slope: Option<(f64, String)>,
    note: Option<String>,
    run: Option<RunSubmission>,
}

/// Everything a bisection needs besides its candidates.
pub struct BisectPlan<'a> {
    /// The lineage's name, as the agent configures it (`zig-cc-musl`).
    pub lineage: String,
    /// The architecture of its series, when known (a regression's, or `--lineage 'NAME (ARCH)'`):
    /// every candidate must build for it. Unknown, the first candidate judged sets it.
    pub arch: Option<String>,
    /// What runs the candidates' binaries, when given (`--runner`).
    pub runner: Vec<String>,
    pub workloads: Vec<Workload>,
    pub good: String,
    pub bad: String,
    pub max_slope: f64,
    /// The most complex class allowed, when the class is judged too.
    pub max_class: Option<Class>,
    pub budget: Budget,
    /// What every candidate is measured and judged by.
    pub metric: Metric,
    pub cache: &'a BuildCache,
    pub scratch: PathBuf,
    pub flags: Vec<String>,
}

/// Runs the bisection, both ends first, then halving, and returns its record. `on_step` sees each
/// step as it is decided, with the candidate's run (to print it, or to submit the run and return
/// its id).
pub fn bisect(
    plan: &BisectPlan,
    candidates: &Candidates,
    mut on_step: impl FnMut(&Step, Option<&RunSubmission>) -> Option<Uuid>,
) -> Result<BisectionSubmission> {
    let versions = candidates.versions();
    let index = |v: &str, which: &str| {
        versions.iter().position(|c| c == v).with_context(|| {
            format!("the {which} version {v} is not among the candidates; list it, so it can be measured first")
        })
    };
    let (good, bad) = (index(&plan.good, "good")?, index(&plan.bad, "bad")?);
    if good >= bad {
        bail!("the good version {} must come before the bad version {} among the candidates", plan.good, plan.bad);
    }
    let started_at = time::OffsetDateTime::now_utc();
    let began = Instant::now();
    let judge = Judge {
        plan,
        candidates,
        limits: Limits { max_slope: Some(plan.max_slope), max_class: plan.max_class, ..Limits::default() },
        // Both ends, then one candidate per halving.
        progress: Progress::new(progress::Plan {
            toolchains: 2 + (usize::BITS - (bad - good - 1).leading_zeros()) as usize,
            workloads: plan.workloads.len(),
            per_workload: plan.budget.total,
            last_pace: None,
        }),
        steps: Cell::new(0),
        arch: RefCell::new(plan.arch.clone()),
    };
    let mut steps: Vec<Step> = Vec::new();
    let mut sizes: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut step = |i: usize,
                    sizes: &BTreeMap<String, (u64, u64)>,
                    steps: &mut Vec<Step>|
     -> (StepVerdict, Option<RunSubmission>) {
        let t = Instant::now();
        let judged = judge.judge(i, &versions[i], sizes);
        let step = Step {
            version: versions[i].clone(),
            verdict: judged.verdict,
            slope: judged.slope.as_ref().map(|(k, _)| *k),
            workload: judged.slope.as_ref().map(|(_, w)| w.clone()),
            seconds: t.elapsed().as_secs_f64(),
            run_id: None,
            note: judged.note.clone(),
        };
        let run_id = on_step(&step, judged.run.as_ref());
        steps.push(Step { run_id, ..step });
        (judged.verdict, judged.run)
    };

    let (good_verdict, _) = step(good, &sizes, &mut steps);
    let (bad_verdict, bad_run) = step(bad, &sizes, &mut steps);
    if let Some(run) = &bad_run {
        // The sizes where the bad end's growth showed are the ones that tell good from bad.
        for w in &run.workloads {
            let (Some(lo), Some(hi)) = (w.measurements.first(), w.measurements.last()) else { continue };
            sizes.insert(w.name.clone(), (lo.size.min(hi.size), lo.size.max(hi.size)));
        }
    }
    let outcome = match (good_verdict, bad_verdict) {
        (StepVerdict::Bad, _) => Some(Outcome::GoodIsBad),
        (_, StepVerdict::Good) => Some(Outcome::BadIsGood),
        (StepVerdict::Skipped, _) | (_, StepVerdict::Skipped) => {
            bail!(
                "an end of the range could not be judged ({}); fix it or pick other ends",
                steps
                    .iter()
                    .filter(|s| s.verdict == StepVerdict::Skipped)
                    .map(|s| format!("{}: {}", s.version, s.note.as_deref().unwrap_or("skipped")))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
        _ => None,
    };
    let (mut lo, mut hi) = (good, bad);
    let mut skipped = BTreeSet::new();
    if outcome.is_none() {
        while let Some(i) = next_candidate(lo, hi, &skipped) {
            match step(i, &sizes, &mut steps).0 {
                StepVerdict::Good => lo = i,
                StepVerdict::Bad => hi = i,
                StepVerdict::Skipped => {
                    skipped.insert(i);
                }
            }
        }
    }
    let arch = judge.arch.take().unwrap_or_else(|| slopewatch_core::arch::DEFAULT.to_string());
    drop(judge);
    let outcome = outcome.unwrap_or(if hi == lo + 1 { Outcome::Found } else { Outcome::Inconclusive });
    let found = outcome == Outcome::Found;
    let record = BisectionSubmission {
        bisection_id: Uuid::new_v4(),
        agent_version: crate::AGENT_VERSION.to_string(),
        started_at,
        seconds: began.elapsed().as_secs_f64(),
        host: crate::host::detect(),
        lineage: slopewatch_core::arch::series_lineage(&plan.lineage, &arch),
        workloads: plan.workloads.iter().map(|w| w.name.clone()).collect(),
        max_slope: plan.max_slope,
        max_class: plan.max_class,
        good: plan.good.clone(),
        bad: plan.bad.clone(),
        candidates: (bad - good + 1) as u32,
        outcome,
        first_bad: found.then(|| versions[hi].clone()),
        last_good: found.then(|| versions[lo].clone()),
        steps,
    };
    record.validate().context("the bisection's record is invalid")?;
    Ok(record)
}

/// What judging a candidate takes besides which one it is: the plan and candidates, the limits
/// a workload is judged by, and the progress display.
struct Judge<'a> {
    plan: &'a BisectPlan<'a>,
    candidates: &'a Candidates,
    limits: Limits,
    progress: Progress,
    /// Candidates judged so far, for the progress display's counter.
    steps: Cell<usize>,
    /// The architecture every candidate must build for: the plan's, else the first candidate's.
    arch: RefCell<Option<String>>,
}

impl Judge<'_> {
    /// Builds and measures candidate `i`, `version`, on every workload (where `sizes` has a
    /// workload's, at those sizes), stopping at the first one over the limit. An unsure verdict is
    /// measured once more; still unsure, or a candidate that cannot be built or run, is skipped
    /// with the reason.
    fn judge(&self, i: usize, version: &str, sizes: &BTreeMap<String, (u64, u64)>) -> CandidateOutcome {
        let Judge { plan, candidates, limits, progress, steps, arch } = self;
        let skipped =
            |note: String| CandidateOutcome { verdict: StepVerdict::Skipped, slope: None, note: Some(note), run: None };
        steps.set(steps.get() + 1);
        progress.toolchain(steps.get(), &plan.lineage, Some(version));
        let command = match candidates.command(i) {
            Ok(c) => c,
            Err(e) => return skipped(e),
        };
        let spec = match ToolchainSpec::for_bisect(&plan.lineage, &command, &plan.flags, version) {
            Ok(s) => ToolchainSpec { runner: plan.runner.clone(), ..s },
            Err(e) => return skipped(format!("{e:#}")),
        };
        let tc = match toolchain::detect(&spec, &plan.scratch) {
            Ok(tc) => tc,
            Err(e) => return skipped(one_line(&format!("{e:#}"))),
        };
        match arch.borrow_mut().get_or_insert_with(|| tc.arch.clone()) {
            arch if *arch != tc.arch => {
                return skipped(format!("it builds for {}, and the series bisected is {arch}'s", tc.arch))
            }
            _ => {}
        }
        let started_at = time::OffsetDateTime::now_utc();
        let mut measured: Vec<WorkloadRun> = Vec::new();
        let mut steepest: Option<(f64, String)> = None;
        let mut verdict = StepVerdict::Good;
        let mut notes = Vec::new();
        for w in &plan.workloads {
            progress.workload(&w.name, !plan.cache.cached(&tc, w));
            let bin = match plan.cache.binary(&tc, w) {
                Ok(b) => b,
                Err(BuildError::Compiler(e)) => {
                    return skipped(format!("{} failed to build: {}", w.name, one_line(&e.output)))
                }
                Err(e) => return skipped(format!("{}: {e}", w.name)),
            };
            let budget = match sizes.get(&w.name) {
                Some(&(start, max)) => Budget { start: Some(start), max: Some(max), ..plan.budget.clone() },
                None => plan.budget.clone(),
            };
            let metric = plan.metric;
            let mut run = measure::measure(Exe::of(&bin, &tc), w, &budget, limits, metric, progress).run;
            let mut row = Judged::new(&plan.lineage, metric, &run, limits);
            // Exact counts come out the same a second time.
            if matches!(row.counted(), Some(Decision::Unsure(_))) && !metric.is_exact() {
                run = measure::measure(Exe::of(&bin, &tc), w, &budget, limits, metric, progress).run;
                row = Judged::new(&plan.lineage, metric, &run, limits);
            }
            progress.workload_done();
            if let Some(f) = &run.failure {
                return skipped(format!("{}: {}", w.name, slopewatch_core::format::failure(f, w.unit)));
            }
            if let Ok(fit) = &row.fit {
                if steepest.as_ref().is_none_or(|(k, _)| fit.slope > *k) {
                    steepest = Some((fit.slope, w.name.clone()));
                }
            }
            match row.counted() {
                Some(Decision::Over(_)) => verdict = StepVerdict::Bad,
                Some(Decision::Under) | None => {}
                Some(Decision::Unsure(_)) => {
                    notes.push(format!("{} unsure after measuring twice ({})", w.name, row.decision.doubts()));
                    if verdict == StepVerdict::Good {
                        verdict = StepVerdict::Skipped;
                    }
                }
            }
            measured.push(run);
            if verdict == StepVerdict::Bad {
                break;
            }
        }
        let run = RunSubmission {
            run_id: Uuid::new_v4(),
            agent_version: crate::AGENT_VERSION.to_string(),
            started_at,
            host: crate::host::detect(),
            toolchain: tc.wire(),
            workloads: measured,
            measure: plan.metric.measure(),
            counter: plan.metric.counter(),
        };
        let note = (verdict == StepVerdict::Skipped).then(|| notes.join("; "));
        CandidateOutcome { verdict, slope: steepest, note, run: run.validate().is_ok().then_some(run) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_halves_and_steps_around_skipped_candidates() {
        let none = BTreeSet::new();
        assert_eq!(next_candidate(0, 31, &none), Some(15));
        assert_eq!(next_candidate(15, 31, &none), Some(23));
        assert_eq!(next_candidate(18, 19, &none), None);
        let skipped = BTreeSet::from([15]);
        assert_eq!(next_candidate(0, 31, &skipped), Some(16));
        let skipped = BTreeSet::from([15, 16]);
        assert_eq!(next_candidate(0, 31, &skipped), Some(14));
        let all = BTreeSet::from([1, 2]);
        assert_eq!(next_candidate(0, 3, &all), None);
    }

    #[test]
    fn a_32_build_range_with_one_broken_build_takes_at_most_8_measurements() {
        // Builds from 19 on are bad; 15 cannot be built.
        let (mut lo, mut hi, mut skipped, mut measured) = (0, 31, BTreeSet::new(), 2);
        while let Some(i) = next_candidate(lo, hi, &skipped) {
            measured += 1;
            match i {
                15 => {
                    skipped.insert(i);
                }
                i if i >= 19 => hi = i,
                i => lo = i,
            }
        }
        assert_eq!((lo, hi), (18, 19));
        assert!(measured <= 8, "{measured}");
    }
}
