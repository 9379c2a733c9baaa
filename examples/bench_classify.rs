//! What complexity classes add to ingest: a run shaped like the agent's (12 workloads × 10 sizes ×
//! 5 samples) fitted as a stored run is (`analysis::fit_run`: slopes; classes are worked out on
//! read), next to the slopes alone, and the 12 summaries a summary pass writes for the run's
//! version, classified (their medians moved) and not (they did not). Prints medians and p99s
//! over many repetitions.
//!
//! cargo run --release --example bench_classify [-- --iterations 2000]

use slopewatch::analysis::{self, RunFit};
use slopewatch::model::Slope;
use slopewatch_core::fit;
use slopewatch_core::wire::RunSubmission;
use std::time::{Duration, Instant};

const WORKLOADS: usize = 12;
const SIZES: usize = 10;
const SAMPLES: usize = 5;

/// A run whose workloads grow from linear to cubic, with ±3% jitter on each sample.
fn run() -> RunSubmission {
    let workloads: Vec<serde_json::Value> = (0..WORKLOADS)
        .map(|w| {
            let k = 1.0 + (w % 3) as f64 * 0.5;
            let measurements: Vec<serde_json::Value> = (0..SIZES)
                .map(|i| {
                    let size = 1024u64 << i;
                    let base = 2e4 + (size as f64).powf(k);
                    let samples: Vec<f64> = (0..SAMPLES)
                        .map(|s| base * (1.0 + 0.03 * (((w * 7 + i * 5 + s * 3) % 5) as f64 - 2.0) / 2.0))
                        .collect();
                    serde_json::json!({"size": size, "samples_ns": samples})
                })
                .collect();
            serde_json::json!({"name": format!("workload-{w}"), "size_unit": "bytes", "measurements": measurements})
        })
        .collect();
    let body = serde_json::json!({
        "run_id": uuid::Uuid::new_v4(), "agent_version": "0.1.0", "started_at": "2026-11-29T21:00:00Z",
        "host": {"name": "bench"}, "toolchain": {"name": "gcc-glibc", "version": "14.2.0"},
        "workloads": workloads,
    });
    RunSubmission::from_json(&serde_json::to_vec(&body).unwrap()).unwrap()
}

/// Median and p99 of `f` over `n` calls.
fn time(n: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    let mut took: Vec<Duration> = (0..n)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    took.sort();
    (took[n / 2], took[n * 99 / 100])
}

fn main() {
    let mut iterations = 2000;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--iterations" => {
                iterations = args.next().and_then(|v| v.parse().ok()).expect("--iterations takes a number")
            }
            other => panic!("unknown flag {other}"),
        }
    }
    let run = run();
    let points: Vec<Vec<(f64, f64)>> =
        run.workloads.iter().map(|w| w.measurements.iter().map(|m| (m.size as f64, m.median_ns())).collect()).collect();
    let slopes = time(iterations, || {
        for p in &points {
            std::hint::black_box(fit::fit(p).unwrap());
        }
    });
    let fitted = time(iterations, || {
        std::hint::black_box(analysis::fit_run(&run).unwrap());
    });
    let fits = analysis::fit_run(&run).unwrap();
    let summarized: Vec<(RunFit, Vec<(u64, f64)>)> = fits
        .iter()
        .map(|f| {
            let slope = Slope { slope: f.fit.slope, ci_low: f.fit.ci_low, ci_high: f.fit.ci_high, r2: f.fit.r2 };
            (RunFit { fit: slope, host_id: 1 }, f.medians.iter().map(|&(s, t, _)| (s, t)).collect())
        })
        .collect();
    let summarize = |stored: bool| {
        time(iterations, || {
            for (fit, medians) in &summarized {
                let mut s = analysis::summarize(std::slice::from_ref(fit), medians).unwrap();
                let known = stored.then(|| (medians.clone(), None));
                analysis::classify_summary(&mut s, known, slopewatch_core::wire::Metric::Wall);
                std::hint::black_box(s);
            }
        })
    };
    let (moved, kept) = (summarize(false), summarize(true));
    let classes: Vec<&str> = summarized
        .iter()
        .map(|(_, m)| {
            analysis::classify(m, slopewatch_core::wire::Metric::Wall)
                .and_then(|c| c.class)
                .map_or(slopewatch_core::complexity::UNSURE, |c| c.as_str())
        })
        .collect();
    println!(
        "{WORKLOADS} workloads × {SIZES} sizes × {SAMPLES} samples, {iterations} repetitions; classes {classes:?}"
    );
    println!("{:<52} {:>10} {:>10}", "", "median", "p99");
    let row = |what: &str, (median, p99): (Duration, Duration)| {
        println!("{what:<52} {:>8.1}µs {:>8.1}µs", median.as_secs_f64() * 1e6, p99.as_secs_f64() * 1e6);
    };
    row("slopes alone (fit::fit × 12)", slopes);
    row("a run's fits as stored (analysis::fit_run)", fitted);
    row("a version's 12 summaries, medians moved (classified)", moved);
    row("a version's 12 summaries, medians where they were", kept);
    row("  classes' share of a summary pass", (moved.0.saturating_sub(kept.0), moved.1.saturating_sub(kept.1)));
}
