//! Times one workload binary at doubling sizes within a time budget, and assembles the run.
//!
//! The sweep has three phases, each a method of [`Sweep`]:
//! 1. **Rise**: double from a size below the start, stopping at the largest size, after a size
//!    whose median repetition went past the per-size budget, before a size predicted (from the
//!    growth seen so far) to go past it or past what is left of the total budget, or once growth
//!    clearly steeper than the limit makes the next size cost a tenth of the per-size budget. A
//!    size whose repetitions are predicted to be long is repeated 3 times rather than `--reps`.
//! 2. **Descend**: with fewer than [`MIN_SIZES`] sizes, halve below the start until there are
//!    that many, so a quadratic libc costs seconds rather than the minutes a fixed sweep of large
//!    sizes would, and still gets a class (smaller sizes are cheap, even for a quadratic libc).
//! 3. **Widen**: when the sizes are too narrow to tell two classes apart while the slope is
//!    clearly under the limit, measure up to [`WIDEN_SIZES`] more, doubling past the largest
//!    (never past `--max-size`, and only as the budget allows), then halving below the smallest,
//!    until a class is named. A workload over the limit or unsure on it is never widened.

use crate::failure;
use crate::gate::Limits;
use crate::report::Progress;
use serde::Deserialize;
use slopewatch_core::complexity;
use slopewatch_core::wire::{self, Failure, FailureKind, Measurement, WorkloadRun};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::build::workloads::Workload;

/// Fewest sizes a workload is measured at, whatever the budget (a valid run needs only
/// [`wire::MIN_SIZES`]): one more than the fewest a class is named from. Steep growth is what
/// stops a sweep early, and `classify` names O(n²) or O(n³) only when the class below is ruled out
/// with the largest size left out too; from five sizes that leaves four, whose exponent interval
/// rests on one degree of freedom and rules out little. On a loaded 2-core machine Zig 0.16.0's
/// quadratic `strchr` and `strspn` read unsure 9 times in 10 at five sizes, O(n²) 16 times in 20
/// at six.
pub const MIN_SIZES: usize = complexity::MIN_SIZES + 1;

/// How far above the slope limit growth between two sizes must be for the rise to stop early.
const STEEP_MARGIN: f64 = 0.2;
/// The share of the per-size budget a size past steep growth may cost before the rise stops.
const STEEP_STOP: f64 = 0.1;

/// The share of the per-size budget past which a repetition counts as long.
const LONG_REP: f64 = 0.1;
/// The repetitions at a size whose repetitions are long.
const LONG_REPS: u32 = 3;

/// Most sizes a sweep adds to name a class it could not tell.
pub const WIDEN_SIZES: usize = 3;

/// How much measuring each workload may cost.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Timed repetitions per size (after one warm-up).
    pub reps: u32,
    /// Doubling stops once one repetition takes longer than this.
    pub per_size: Duration,
    /// The most one workload may take on one toolchain, warm-ups included.
    pub total: Duration,
    /// Overrides every workload's first size.
    pub start: Option<u64>,
    /// Overrides every workload's largest size; widening to name a class never passes it either.
    pub max: Option<u64>,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget { reps: 5, per_size: Duration::from_secs(1), total: Duration::from_secs(60), start: None, max: None }
    }
}

impl Budget {
    /// The (first, max) sizes of the sweep for `w`: the start widened downwards so at least
    /// [`MIN_SIZES`] sizes fit, and the rise begun one size below it, so that the growth is known
    /// before the larger sizes cost (see [`Sweep::rise`]).
    pub fn sizes_for(&self, w: &Workload) -> (u64, u64) {
        let max = self.max.unwrap_or(w.max);
        let mut start = self.start.unwrap_or(w.start).min(max);
        while start > 1 && max / start < 1 << (MIN_SIZES - 2) {
            start /= 2;
        }
        (start.div_ceil(2), max)
    }
}

/// One workload measured on one toolchain.
#[derive(Debug, Clone)]
pub struct Measured {
    pub run: WorkloadRun,
    /// What the workload computed at each size it reported a result for: compared between
    /// toolchains, kept on this side of the wire.
    pub results: BTreeMap<u64, String>,
    /// Total wall time spent running the workload, warm-ups and set-up included.
    pub elapsed: Duration,
}

/// What a workload binary prints: the protocol documented in `c/slopewatch.h`.
#[derive(Debug, Deserialize)]
struct Output {
    size: u64,
    samples_ns: Vec<f64>,
    #[serde(default)]
    instructions: Option<Vec<u64>>,
    #[serde(default)]
    result: Option<String>,
    #[serde(default)]
    meta: BTreeMap<String, String>,
}

/// Longest result a workload may report: a checksum, not a dump.
const MAX_RESULT_CHARS: usize = 128;

/// Measures `w` from its built `binary`; `limits` say when a class is worth more sizes. A workload
/// that breaks (crashes, counts wrong, cannot set up, or runs past its time before enough sizes
/// are measured) comes back with its failure and the sizes measured before it.
pub fn measure(binary: &Path, w: &Workload, budget: &Budget, limits: &Limits, progress: &Progress) -> Measured {
    let (start, max) = budget.sizes_for(w);
    let mut sweep = Sweep {
        binary,
        w,
        budget,
        progress,
        began: Instant::now(),
        done: BTreeMap::new(),
        meta: BTreeMap::new(),
        results: BTreeMap::new(),
        rising: Vec::new(),
        stopped: None,
    };
    let broke = sweep
        .rise(start, max, limits.slope_limit())
        .and_then(|()| sweep.descend(start))
        .and_then(|()| sweep.widen(limits))
        .err();
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
        run: workload_run(w, sweep.done.into_values().collect(), sweep.meta, failure),
        results: sweep.results,
        elapsed: sweep.began.elapsed(),
    }
}

/// One workload's sweep under way: what it runs and what it has measured.
struct Sweep<'a> {
    binary: &'a Path,
    w: &'a Workload,
    budget: &'a Budget,
    progress: &'a Progress,
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
    /// (phase 2) are cheap and tell it as well.
    fn rise(&mut self, start: u64, max: u64, limit: f64) -> Result<(), Box<Failure>> {
        let mut size = start;
        while size <= max && self.affordable(size) {
            match self.take(size, self.left().max(self.budget.per_size)) {
                Ok(typical) => {
                    self.rising.push((size, typical));
                    if typical > self.budget.per_size.as_nanos() as f64 || self.steep_enough(size, limit) {
                        return Ok(());
                    }
                }
                Err(f) if f.kind == FailureKind::TimedOut => {
                    self.stopped = Some(*f);
                    return Ok(());
                }
                Err(f) => return Err(f),
            }
            size = match size.checked_mul(2) {
                Some(s) => s,
                None => return Ok(()),
            };
        }
        Ok(())
    }

    /// Phase 2: halving below the smallest size measured (or `start`) until [`MIN_SIZES`] are.
    /// Smaller sizes are cheap, so each may take the whole budget; one that still runs past it
    /// ends the phase once a slope can be fitted.
    fn descend(&mut self, start: u64) -> Result<(), Box<Failure>> {
        let mut below = self.done.keys().next().copied().unwrap_or(start);
        while self.done.len() < MIN_SIZES && below > 1 {
            below /= 2;
            match self.take(below, self.budget.total.max(self.budget.per_size)) {
                Ok(_) => {}
                Err(f) if f.kind == FailureKind::TimedOut && self.done.len() >= wire::MIN_SIZES => break,
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
            if self.left().is_zero() || !limits.class_worth_widening(&self.medians()) {
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
                    upward = typical <= self.budget.per_size.as_nanos() as f64;
                }
                Ok(_) => {}
                Err(f) if f.kind == FailureKind::TimedOut => break,
                Err(f) => return Err(f),
            }
        }
        Ok(())
    }

    /// Runs the workload at `size` and keeps what it measured; returns its median repetition (not
    /// the slowest: one repetition descheduled on a loaded host must not end the sweep).
    fn take(&mut self, size: u64, timeout: Duration) -> Result<f64, Box<Failure>> {
        let out = run_size(self.binary, self.w, size, self.reps_at(size), timeout, self.progress)?;
        let typical = slopewatch_core::fit::median(&out.samples_ns);
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
        let long =
            predict_rep_ns(&self.rising, size).is_some_and(|ns| ns > self.budget.per_size.as_nanos() as f64 * LONG_REP);
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
                .is_some_and(|next| next > self.budget.per_size.as_nanos() as f64 * STEEP_STOP)
    }

    /// Whether `size` is predicted, from the growth seen so far, to fit the per-size budget and
    /// what is left of the total.
    fn affordable(&self, size: u64) -> bool {
        predict_rep_ns(&self.rising, size).is_none_or(|predicted| {
            predicted <= self.budget.per_size.as_nanos() as f64
                && predicted * f64::from(self.reps_at(size) + 1) <= self.left().as_nanos() as f64
        })
    }

    fn left(&self) -> Duration {
        self.budget.total.saturating_sub(self.began.elapsed())
    }

    /// (size, median time) of every size measured.
    fn medians(&self) -> Vec<(f64, f64)> {
        self.done.values().map(|m| (m.size as f64, m.median_ns())).collect()
    }
}

/// The next size to widen a sweep of `smallest..=largest` by: double the largest when going
/// `upward` and `max` allows, else half the smallest while above 1.
fn next_wider(smallest: u64, largest: u64, max: Option<u64>, upward: bool) -> Option<u64> {
    let up = largest.checked_mul(2).filter(|&s| upward && max.is_none_or(|m| s <= m));
    up.or((smallest > 1).then_some(smallest / 2))
}

/// A workload that could not be built: its failure and no measurements.
pub fn unbuilt(w: &Workload, failure: Failure) -> WorkloadRun {
    workload_run(w, Vec::new(), BTreeMap::new(), Some(failure))
}

fn workload_run(
    w: &Workload,
    measurements: Vec<Measurement>,
    metadata: BTreeMap<String, String>,
    failure: Option<Failure>,
) -> WorkloadRun {
    WorkloadRun {
        name: w.name.clone(),
        size_unit: w.unit,
        source_hash: w.source_hash(),
        measurements,
        metadata,
        failure,
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

/// Runs the workload at one size: the harness binary, which repeats the work itself, or a command
/// workload's program once per repetition. A `timed_out` failure when it ran past `timeout` and
/// was killed.
fn run_size(
    binary: &Path,
    w: &Workload,
    size: u64,
    reps: u32,
    timeout: Duration,
    progress: &Progress,
) -> Result<Output, Box<Failure>> {
    progress.size_started(&w.name, size, w.unit);
    let deadline = (Instant::now() + timeout, timeout);
    let out = match w.command() {
        Some(c) => run_command(c, binary, w, size, reps, deadline, progress)?,
        None => run_harness(binary, w, size, reps, deadline, progress)?,
    };
    if out
        .result
        .as_ref()
        .is_some_and(|r| r.is_empty() || r.chars().count() > MAX_RESULT_CHARS || r.chars().any(char::is_control))
    {
        return Err(Box::new(failure::setup_failed(
            Some(size),
            &format!("must print a result of 1 to {MAX_RESULT_CHARS} printable characters, printed {:?}", out.result),
        )));
    }
    progress.size_done(&w.name, size, slopewatch_core::fit::median(&out.samples_ns));
    Ok(out)
}

/// The harness binary at `size`: one process that warms up, repeats `reps` times and prints its
/// JSON line.
fn run_harness(
    binary: &Path,
    w: &Workload,
    size: u64,
    reps: u32,
    deadline: (Instant, Duration),
    progress: &Progress,
) -> Result<Output, Box<Failure>> {
    let setup_failed = |why: String| Box::new(failure::setup_failed(Some(size), &why));
    let mut cmd = Command::new(binary);
    cmd.arg(size.to_string()).arg(reps.to_string());
    let done = run_process(cmd, w, size, deadline, progress)?;
    let line = done.stdout.lines().rev().find(|l| l.trim_start().starts_with('{')).unwrap_or("");
    let out: Output = serde_json::from_str(line)
        .map_err(|e| setup_failed(format!("printed no valid JSON line ({e}): {:?}", done.stdout)))?;
    if out.size != size {
        return Err(setup_failed(format!("reported size {} for size {size}", out.size)));
    }
    if out.samples_ns.len() != reps as usize || out.samples_ns.iter().any(|&s| !(s.is_finite() && s > 0.0)) {
        return Err(setup_failed(format!("must print {reps} positive samples, printed {:?}", out.samples_ns)));
    }
    if out.instructions.as_ref().is_some_and(|i| i.len() != reps as usize) {
        return Err(setup_failed("printed a wrong number of instruction counts".to_string()));
    }
    Ok(out)
}

/// A command workload's program at `size`: one warm-up run, then `reps` timed ones, each timed by
/// the `slopewatch_ns=` it prints or else by its wall time (start-up included: a fixed cost the
/// fit sees at every size). Every repetition must time itself the same way and agree on its result.
fn run_command(
    c: &crate::build::command::CommandWorkload,
    out: &Path,
    w: &Workload,
    size: u64,
    reps: u32,
    deadline: (Instant, Duration),
    progress: &Progress,
) -> Result<Output, Box<Failure>> {
    let setup_failed = |why: String| Box::new(failure::setup_failed(Some(size), &why));
    let argv = c.argv(out, size);
    let mut samples = Vec::with_capacity(reps as usize);
    let mut reported = None;
    let mut result: Option<String> = None;
    for rep in 0..=reps {
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).current_dir(c.dir()).env("SLOPEWATCH_SIZE", size.to_string());
        let done = run_process(cmd, w, size, deadline, progress)?;
        let printed = crate::build::command::Printed::read(&done.stdout).map_err(setup_failed)?;
        if rep == 0 {
            reported = Some(printed.ns.is_some());
        } else if reported != Some(printed.ns.is_some()) {
            return Err(setup_failed("printed slopewatch_ns= in some repetitions and not in others".into()));
        } else {
            samples.push(printed.ns.unwrap_or(done.wall.as_nanos() as f64).max(1.0));
        }
        match (&result, printed.result) {
            (Some(a), Some(b)) if *a != b => {
                return Err(setup_failed(format!("printed slopewatch_result={a} and then {b} at one size")))
            }
            (_, Some(b)) => result = Some(b),
            _ => {}
        }
    }
    let timing = if reported == Some(true) { "slopewatch_ns" } else { "wall time" };
    let meta = BTreeMap::from([("timing".to_string(), timing.to_string())]);
    Ok(Output { size, samples_ns: samples, instructions: None, result, meta })
}

/// How a process ended and what it printed.
struct Finished {
    stdout: String,
    wall: Duration,
}

/// Runs `cmd` to its end, killing it at `deadline` (a `timed_out` failure naming `timeout`, the
/// size's time); an unsuccessful exit is the workload's failure, with what it printed on stderr.
/// The wall time runs from the spawn to the moment the process exited, not to when it was seen.
fn run_process(
    mut cmd: Command,
    w: &Workload,
    size: u64,
    (deadline, timeout): (Instant, Duration),
    progress: &Progress,
) -> Result<Finished, Box<Failure>> {
    let setup_failed = |why: String| Box::new(failure::setup_failed(Some(size), &why));
    let began = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| setup_failed(format!("cannot start the workload: {e}")))?;
    // Read while it runs, so a workload that prints more than a pipe holds is not blocked by it.
    let stdout = read_in_background(child.stdout.take());
    let stderr = read_in_background(child.stderr.take());
    let exited = exit_watch(child.id());
    let ended = match exited.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(ended) => ended,
        Err(_) => {
            child.kill().ok();
            child.wait().ok();
            progress.note(&format!("{} at size {size} ran past the budget ({timeout:.1?}) and was stopped", w.name));
            return Err(Box::new(failure::timed_out(size, timeout)));
        }
    };
    let status = child.wait().map_err(|e| setup_failed(format!("cannot wait for the workload: {e}")))?;
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if !status.success() {
        return Err(Box::new(failure::exited(status, &stderr, size)));
    }
    Ok(Finished { stdout, wall: ended.saturating_duration_since(began) })
}

/// Sends the moment process `pid` exits. The process is left unreaped (`WNOWAIT`), so its `Child`
/// still owns it: killing it after a timeout can never reach a process that reused the pid.
fn exit_watch(pid: u32) -> std::sync::mpsc::Receiver<Instant> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // SAFETY: an all-zero siginfo_t is valid, and `info` is writable and outlives the call.
        // Should waitid fail, the moment is reported at once and `Child::wait` tells the rest.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT);
        }
        tx.send(Instant::now()).ok();
    });
    rx
}

/// Most of a workload's output kept: its JSON line with a thousand samples fits many times over.
const MAX_OUTPUT_BYTES: u64 = 1 << 20;

/// Reads a child's pipe to the end on a thread of its own, keeping the first [`MAX_OUTPUT_BYTES`].
fn read_in_background(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            pipe.by_ref().take(MAX_OUTPUT_BYTES).read_to_end(&mut bytes).ok();
            std::io::copy(&mut pipe, &mut std::io::sink()).ok();
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
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
    fn sweeps_always_span_enough_sizes_to_name_a_steep_class() {
        let w = crate::build::workloads::builtin().remove(0);
        let b = Budget { max: Some(100_000), start: Some(64 * 1024), ..Budget::default() };
        let (start, max) = b.sizes_for(&w);
        assert_eq!((start, max), (2048, 100_000), "32× at least: six sizes");
        assert_eq!(Budget::default().sizes_for(&w), (32 * 1024, 4 * 1024 * 1024), "a size below the start");
        let tiny = Budget { max: Some(8), ..Budget::default() };
        assert_eq!(tiny.sizes_for(&w), (1, 8), "never below 1");
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
