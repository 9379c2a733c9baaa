//! Test data: runs as an agent sends them, and histories seeded into an app.

pub mod releases;

use crate::helpers::TestApp;
use axum::http::StatusCode;
use serde_json::Value;

/// A run as an agent sends it, of `workloads` (each `{"name", "size_unit", "measurements", …}`).
pub fn run_of(lineage: &str, version: &str, host: &str, workloads: Vec<Value>) -> Value {
    serde_json::json!({
        "run_id": uuid::Uuid::new_v4(),
        "agent_version": "0.1.0",
        "started_at": "2026-11-29T21:00:00Z",
        "host": {"name": host, "cpu": "Test CPU", "kernel": "6.1.0", "arch": "x86_64"},
        "toolchain": {"name": lineage, "version": version, "libc": "musl 1.2.5", "target": "x86_64-linux-musl",
                      "compiler": "zig cc -target x86_64-linux-musl", "flags": "-O2"},
        "workloads": workloads,
    })
}

/// A found probe as an agent's search submits it: `function` over its O(n) contract along
/// `axis`, growing as O(n²) with inputs of `shape`, found by `toolchain` 0.16.0 at `found_at`.
pub fn found_probe(function: &str, axis: &str, shape: &str, toolchain: &str, found_at: &str) -> Value {
    serde_json::json!({
        "function": function, "axis": axis, "shape": shape,
        "described": format!("a needle a…ab of m bytes in a haystack of a's, for {function}"),
        "contract": {"expected": "n", "function": function, "axis": axis,
                     "broken": "compares the needle again at every byte"},
        "kind": "growth", "class": "n^2", "toolchain": toolchain, "version": "0.16.0", "found_at": found_at,
    })
}

/// Five samples a size within ±0.4% of its cost, as `(0..5).map(|k| 1 + 0.002 · (k − 2))` gives.
pub const SPREAD_FIVE: [f64; 5] = [1.0 - 0.004, 1.0 - 0.002, 1.0, 1.0 + 0.002, 1.0 + 0.004];

/// A workload's measurements as an agent sends them: `sizes` sizes doubling from `first_size`,
/// each with a sample per factor of `spread` times `cost(size)` nanoseconds.
pub fn measurements(first_size: u64, sizes: usize, cost: impl Fn(f64) -> f64, spread: &[f64]) -> Vec<Value> {
    (0..sizes)
        .map(|i| {
            let size = first_size << i;
            let t = cost(size as f64);
            let samples: Vec<f64> = spread.iter().map(|f| t * f).collect();
            serde_json::json!({"size": size, "samples_ns": samples})
        })
        .collect()
}

/// A run shaped like an agent's, of one toolchain build on one host: `workloads` string workloads
/// (`workload-0`, …), `sizes` sizes doubling from 64 KiB (or `first_size`), `samples` samples at
/// each, time = c · size^`slope` with a little deterministic jitter. `RunShape::new` starts from one linear
/// workload at four sizes of three samples, from `build-01`; each setter changes one of them.
#[derive(Debug, Clone, Copy)]
pub struct RunShape<'a> {
    lineage: &'a str,
    version: &'a str,
    host: &'a str,
    slope: f64,
    workloads: usize,
    sizes: usize,
    first_size: u64,
    samples: usize,
}

impl<'a> RunShape<'a> {
    pub fn new(lineage: &'a str, version: &'a str) -> RunShape<'a> {
        RunShape {
            lineage,
            version,
            host: "build-01",
            slope: 1.0,
            workloads: 1,
            sizes: 4,
            first_size: 65536,
            samples: 3,
        }
    }

    pub fn host(self, host: &'a str) -> RunShape<'a> {
        RunShape { host, ..self }
    }

    pub fn slope(self, slope: f64) -> RunShape<'a> {
        RunShape { slope, ..self }
    }

    pub fn workloads(self, workloads: usize) -> RunShape<'a> {
        RunShape { workloads, ..self }
    }

    pub fn sizes(self, sizes: usize) -> RunShape<'a> {
        RunShape { sizes, ..self }
    }

    /// The smallest size, doubled for each size after it (64 KiB unless set).
    pub fn first_size(self, first_size: u64) -> RunShape<'a> {
        RunShape { first_size, ..self }
    }

    pub fn samples(self, samples: usize) -> RunShape<'a> {
        RunShape { samples, ..self }
    }

    /// The run as the agent would send it, with a fresh run id.
    pub fn json(self) -> Value {
        let RunShape { lineage, version, host, slope, workloads, sizes, first_size, samples } = self;
        let workloads: Vec<Value> = (0..workloads)
            .map(|w| {
                let measurements: Vec<Value> = (0..sizes)
                    .map(|i| {
                        let size = first_size << i;
                        let base = 0.5 * (size as f64).powf(slope);
                        let samples: Vec<f64> = (0..samples).map(|k| base * (1.0 + 0.01 * ((k * 7 + i * 3 + w) % 5) as f64)).collect();
                        serde_json::json!({"size": size, "samples_ns": samples})
                    })
                    .collect();
                serde_json::json!({"name": format!("workload-{w}"), "size_unit": "bytes", "source_hash": "sha256:00", "measurements": measurements})
            })
            .collect();
        run_of(lineage, version, host, workloads)
    }
}

/// Two versions of one lineage, the second quadratic on three workloads: answers the id of the
/// regression they open.
pub async fn seed_regression(app: &TestApp) -> i64 {
    for (version, slope) in [("0.15.0", 1.0), ("0.16.0", 2.0)] {
        let (status, body) = app
            .submit(&RunShape::new("zig-cc-musl", version).slope(slope).workloads(3).sizes(8).samples(5).json())
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let (_, list) = app.get_with("/api/v1/regressions", Some(&app.admin_token)).await;
    list["regressions"][0]["regression"]["id"].as_i64().expect("a regression was opened")
}
