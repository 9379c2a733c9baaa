//! Times one workload binary at doubling sizes within a time budget, and assembles the run.
//!
//! Doubling stops at the workload's largest size, after a size whose slowest repetition went past
//! the per-size budget, or before a size predicted (from the growth seen so far) to go past it or
//! past what is left of the total budget. With too few sizes, it goes below the start instead, so a
//! quadratic libc costs seconds rather than the minutes a fixed sweep of large sizes would.

use crate::failure;
use crate::report::Progress;
use serde::Deserialize;
use slopewatch_core::wire::{self, Failure, FailureKind, Measurement, WorkloadRun};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::workloads::Workload;

/// Fewest sizes a workload is measured at, whatever the budget.
pub const MIN_SIZES: usize = 4;

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
    /// Overrides every workload's largest size.
    pub max: Option<u64>,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget { reps: 5, per_size: Duration::from_secs(1), total: Duration::from_secs(60), start: None, max: None }
    }
}

impl Budget {
    /// The (start, max) sweep for `w`, widened downwards so at least [`MIN_SIZES`] doublings fit.
    pub fn sizes_for(&self, w: &Workload) -> (u64, u64) {
        let max = self.max.unwrap_or(w.max);
        let mut start = self.start.unwrap_or(w.start).min(max);
        while start > 1 && max / start < 1 << (MIN_SIZES - 1) {
            start /= 2;
        }
        (start, max)
    }
}

/// One workload measured on one toolchain.
#[derive(Debug, Clone)]
pub struct Measured {
    pub run: WorkloadRun,
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
    meta: BTreeMap<String, String>,
}

/// Measures `w` from its built `binary`. A workload that breaks (crashes, counts wrong, cannot set
/// up, or runs past its time before enough sizes are measured) comes back with its failure and the
/// sizes measured before it.
pub fn measure(binary: &Path, w: &Workload, budget: &Budget, progress: &Progress) -> Measured {
    let (start, max) = budget.sizes_for(w);
    let began = Instant::now();
    let mut done: BTreeMap<u64, Measurement> = BTreeMap::new();
    let mut meta = BTreeMap::new();
    let mut slowest_ns = Vec::<(u64, f64)>::new();
    let measured = |done: BTreeMap<u64, Measurement>, meta, failure| Measured {
        run: workload_run(w, done.into_values().collect(), meta, failure),
        elapsed: began.elapsed(),
    };
    // The size that ran past its time and was stopped, should too few sizes be measured without it.
    let mut stopped = None;

    let mut size = start;
    while size <= max {
        if let Some(predicted) = predict_rep_ns(&slowest_ns, size) {
            let left = budget.total.saturating_sub(began.elapsed()).as_nanos() as f64;
            if predicted > budget.per_size.as_nanos() as f64 || predicted * f64::from(budget.reps + 1) > left {
                break;
            }
        }
        let left = budget.total.saturating_sub(began.elapsed());
        let out = match run_size(binary, w, size, budget.reps, left.max(budget.per_size), progress) {
            Ok(out) => out,
            Err(f) if f.kind == FailureKind::TimedOut => {
                stopped = Some(*f);
                break;
            }
            Err(f) => return measured(done, meta, Some(*f)),
        };
        let slowest = out.samples_ns.iter().cloned().fold(0.0, f64::max);
        meta.extend(out.meta.clone());
        slowest_ns.push((size, slowest));
        done.insert(size, Measurement { size, samples_ns: out.samples_ns, instructions: out.instructions });
        if slowest > budget.per_size.as_nanos() as f64 {
            break;
        }
        size = match size.checked_mul(2) {
            Some(s) => s,
            None => break,
        };
    }

    // Too few sizes fit the budget: smaller ones are cheaper, so go below the start.
    let mut below = done.keys().next().copied().unwrap_or(start);
    while done.len() < MIN_SIZES && below > 1 {
        below /= 2;
        match run_size(binary, w, below, budget.reps, budget.total.max(budget.per_size), progress) {
            Ok(out) => {
                meta.extend(out.meta.clone());
                done.insert(
                    below,
                    Measurement { size: below, samples_ns: out.samples_ns, instructions: out.instructions },
                );
            }
            Err(f) if f.kind == FailureKind::TimedOut && done.len() >= wire::MIN_SIZES => break,
            Err(f) => return measured(done, meta, Some(*f)),
        }
    }
    let failure = (done.len() < wire::MIN_SIZES).then(|| {
        stopped.unwrap_or_else(|| {
            failure::setup_failed(
                None,
                &format!("only {} sizes fit between {start} and {max}; a slope needs {}", done.len(), wire::MIN_SIZES),
            )
        })
    });
    measured(done, meta, failure)
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

/// The expected slowest repetition at `size`, extrapolating the growth between the last two sizes
/// (never assumed better than linear, so a noisy flat start cannot hide a steep end).
fn predict_rep_ns(seen: &[(u64, f64)], size: u64) -> Option<f64> {
    let &(last_size, last_ns) = seen.last()?;
    let k = match seen {
        [.., (s0, t0), (s1, t1)] if *t0 > 0.0 => ((t1 / t0).ln() / (*s1 as f64 / *s0 as f64).ln()).max(1.0),
        _ => 1.0,
    };
    Some(last_ns * (size as f64 / last_size as f64).powf(k))
}

/// Runs the binary at one size; a `timed_out` failure when it ran past `timeout` and was killed.
fn run_size(
    binary: &Path,
    w: &Workload,
    size: u64,
    reps: u32,
    timeout: Duration,
    progress: &Progress,
) -> Result<Output, Box<Failure>> {
    progress.size_started(&w.name, size, w.unit);
    let setup_failed = |why: String| Box::new(failure::setup_failed(Some(size), &why));
    let mut child = Command::new(binary)
        .arg(size.to_string())
        .arg(reps.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| setup_failed(format!("cannot start the workload: {e}")))?;
    // Read while it runs, so a workload that prints more than a pipe holds is not blocked by it.
    let stdout = read_in_background(child.stdout.take());
    let stderr = read_in_background(child.stderr.take());
    let began = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => {
                child.kill().ok();
                child.wait().ok();
                return Err(setup_failed(format!("cannot wait for the workload: {e}")));
            }
        }
        if began.elapsed() > timeout {
            child.kill().ok();
            child.wait().ok();
            progress.note(&format!("{} at size {size} ran past the budget ({:.1?}) and was stopped", w.name, timeout));
            return Err(Box::new(failure::timed_out(size, timeout)));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if !status.success() {
        return Err(Box::new(failure::exited(status, &stderr, size)));
    }
    let line = stdout.lines().rev().find(|l| l.trim_start().starts_with('{')).unwrap_or("");
    let out: Output = serde_json::from_str(line)
        .map_err(|e| setup_failed(format!("printed no valid JSON line ({e}): {stdout:?}")))?;
    if out.size != size {
        return Err(setup_failed(format!("reported size {} for size {size}", out.size)));
    }
    if out.samples_ns.len() != reps as usize || out.samples_ns.iter().any(|&s| !(s.is_finite() && s > 0.0)) {
        return Err(setup_failed(format!("must print {reps} positive samples, printed {:?}", out.samples_ns)));
    }
    if out.instructions.as_ref().is_some_and(|i| i.len() != reps as usize) {
        return Err(setup_failed("printed a wrong number of instruction counts".to_string()));
    }
    progress.size_done(&w.name, size, slopewatch_core::fit::median(&out.samples_ns));
    Ok(out)
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
    fn sweeps_always_span_at_least_four_sizes() {
        let w = crate::workloads::builtin().remove(0);
        let b = Budget { max: Some(100_000), start: Some(64 * 1024), ..Budget::default() };
        let (start, max) = b.sizes_for(&w);
        assert!(max / start >= 8, "{start}..{max}");
        assert_eq!(Budget::default().sizes_for(&w), (64 * 1024, 4 * 1024 * 1024));
    }
}
