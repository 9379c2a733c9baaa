//! Times one workload binary at doubling sizes within a time budget, and assembles the run.
//!
//! Doubling stops at the workload's largest size, after a size whose slowest repetition went past
//! the per-size budget, or before a size predicted (from the growth seen so far) to go past it or
//! past what is left of the total budget. With too few sizes, it goes below the start instead, so a
//! quadratic libc costs seconds rather than the minutes a fixed sweep of large sizes would.

use crate::report::Progress;
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use slopewatch_core::wire::{Measurement, WorkloadRun};
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

/// Measures `w` from its built `binary`.
pub fn measure(binary: &Path, w: &Workload, budget: &Budget, progress: &Progress) -> Result<Measured> {
    let (start, max) = budget.sizes_for(w);
    let began = Instant::now();
    let mut done: BTreeMap<u64, Measurement> = BTreeMap::new();
    let mut meta = BTreeMap::new();
    let mut slowest_ns = Vec::<(u64, f64)>::new();

    let mut size = start;
    while size <= max {
        if let Some(predicted) = predict_rep_ns(&slowest_ns, size) {
            let left = budget.total.saturating_sub(began.elapsed()).as_nanos() as f64;
            if predicted > budget.per_size.as_nanos() as f64 || predicted * f64::from(budget.reps + 1) > left {
                break;
            }
        }
        let left = budget.total.saturating_sub(began.elapsed());
        let Some(out) = run_size(binary, w, size, budget.reps, left.max(budget.per_size), progress)? else {
            break;
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
        let out = run_size(binary, w, below, budget.reps, budget.total.max(budget.per_size), progress)?
            .with_context(|| format!("{}: size {below} did not finish within the total budget", w.name))?;
        meta.extend(out.meta.clone());
        done.insert(below, Measurement { size: below, samples_ns: out.samples_ns, instructions: out.instructions });
    }
    if done.len() < slopewatch_core::wire::MIN_SIZES {
        bail!("{}: only {} sizes could be measured", w.name, done.len());
    }
    Ok(Measured {
        run: WorkloadRun {
            name: w.name.clone(),
            size_unit: w.unit,
            source_hash: w.source_hash(),
            metadata: meta,
            failure: None,
            measurements: done.into_values().collect(),
        },
        elapsed: began.elapsed(),
    })
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

/// Runs the binary at one size; `None` when it ran past `timeout` and was killed.
fn run_size(
    binary: &Path,
    w: &Workload,
    size: u64,
    reps: u32,
    timeout: Duration,
    progress: &Progress,
) -> Result<Option<Output>> {
    progress.size_started(&w.name, size, w.unit);
    let mut child = Command::new(binary)
        .arg(size.to_string())
        .arg(reps.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start workload {}", binary.display()))?;
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if began.elapsed() > timeout {
            child.kill().ok();
            child.wait().ok();
            progress.note(&format!("{} at size {size} ran past the budget ({:.1?}) and was stopped", w.name, timeout));
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child.stdout.take().map(|mut s| s.read_to_string(&mut stdout));
    child.stderr.take().map(|mut s| s.read_to_string(&mut stderr));
    if !status.success() {
        bail!("workload {} failed at size {size} ({status}): {}", w.name, stderr.trim());
    }
    let line = stdout.lines().rev().find(|l| l.trim_start().starts_with('{')).unwrap_or("");
    let out: Output = serde_json::from_str(line)
        .with_context(|| format!("workload {} printed no valid JSON line at size {size}: {stdout:?}", w.name))?;
    if out.size != size {
        bail!("workload {} reported size {} for size {size}", w.name, out.size);
    }
    if out.samples_ns.len() != reps as usize || out.samples_ns.iter().any(|&s| !(s.is_finite() && s > 0.0)) {
        bail!("workload {} must print {reps} positive samples, printed {:?}", w.name, out.samples_ns);
    }
    if out.instructions.as_ref().is_some_and(|i| i.len() != reps as usize) {
        bail!("workload {} printed a wrong number of instruction counts", w.name);
    }
    progress.size_done(&w.name, size, slopewatch_core::fit::median(&out.samples_ns));
    Ok(Some(out))
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
