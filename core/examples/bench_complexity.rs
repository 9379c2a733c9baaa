//! Complexity classification cost: µs per `classify` (every class fitted, and the exponent with
//! its interval) on series from the labelled corpus's generator at 5, 8 and 12 sizes, and what
//! one run of 12 workloads at 8 sizes adds to ingest.
//!
//! cargo run --release -p slopewatch-core --example bench_complexity
//!
//! Each series is timed several times and its fastest time kept, so other work on the machine
//! shows as little as it can; the figures are the mean and the largest of those over the series.

// The generator is the corpus test's own; the labels and targets it also holds are not used here.
#[allow(dead_code)]
#[path = "../tests/all/complexity_corpus/corpus.rs"]
mod corpus;

use corpus::{Rng, Shape};
use slopewatch_core::complexity::classify;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Series timed at each size count: every shape alike.
const SERIES: usize = 16 * Shape::ALL.len();

/// Timings of each series, the fastest kept.
const REPEATS: usize = 15;

const WORKLOADS_PER_RUN: f64 = 12.0;

fn main() {
    let mut rng = Rng::new(corpus::SEED);
    println!("{:>6} {:>14} {:>14}", "sizes", "µs / classify", "slowest µs");
    let mut per_run = None;
    for count in [5, 8, 12] {
        let series: Vec<_> =
            (0..SERIES).map(|i| corpus::series(Shape::ALL[i % Shape::ALL.len()], count, &mut rng)).collect();
        let fastest: Vec<Duration> = series
            .iter()
            .map(|points| {
                (0..REPEATS)
                    .map(|_| {
                        let start = Instant::now();
                        black_box(classify(black_box(points)).unwrap());
                        start.elapsed()
                    })
                    .min()
                    .unwrap()
            })
            .collect();
        let mean = fastest.iter().sum::<Duration>().as_secs_f64() * 1e6 / SERIES as f64;
        let slowest = fastest.iter().max().unwrap().as_secs_f64() * 1e6;
        println!("{count:>6} {mean:>14.1} {slowest:>14.1}");
        if count == 8 {
            per_run = Some(mean * WORKLOADS_PER_RUN);
        }
    }
    if let Some(us) = per_run {
        println!("a run of 12 workloads at 8 sizes: {:.3} ms", us / 1e3);
    }
}
