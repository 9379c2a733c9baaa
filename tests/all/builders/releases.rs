//! Three releases of one lineage and a control, as the version page tests read them: zig-cc-musl
//! 0.14.1 and 0.15.2 linear, 0.16.0 taking six built-in workloads quadratic (one of them, `strstr`,
//! swept at sizes 0.15.2 did not measure), giving a wrong result on one, breaking a contract probe
//! (O(1) → O(n)); a team workload over the limit from the first version (a finding); musl-gcc
//! 1.2.5 linear throughout, the control.

use super::run_of;
use crate::helpers::TestApp;
use axum::http::StatusCode;
use serde_json::{json, Value};

pub const LINEAGE: &str = "zig-cc-musl";
pub const CONTROL: &str = "musl-gcc";
pub const VERSIONS: [&str; 3] = ["0.14.1", "0.15.2", "0.16.0"];
/// The built-in workloads 0.16.0 makes quadratic.
pub const QUADRATIC: [&str; 6] = ["strchr", "strspn", "strcspn", "strpbrk", "sscanf", "strstr"];
/// The built-in workloads that stay linear, and the team's own that does.
pub const LINEAR: [&str; 4] = ["memchr", "strtol", "strtod", "sqlite-insert"];
/// A team workload whose name a page must escape.
pub const ODD_NAME: &str = "<b>tok</b>|_x_";
/// What 0.16.0 answers against 0.15.2.
pub const HEADLINE: &str = "zig-cc-musl 0.16.0 against 0.15.2: 6 workloads went O(n) → O(n²), 1 went O(1) → O(n), \
     1 gives a wrong result, 7 unchanged; 1 finding.";

fn linear(n: f64) -> f64 {
    3.0 * n
}

fn quadratic(n: f64) -> f64 {
    n * n / 2000.0
}

fn flat(_: f64) -> f64 {
    900.0
}

/// A workload measured at `count` sizes doubling from `first`, costing `cost(size)`.
pub fn measured(name: &str, unit: &str, first: u64, count: usize, cost: fn(f64) -> f64) -> Value {
    let measurements: Vec<Value> = (0..count)
        .map(|i| {
            let size = first << i;
            let t = cost(size as f64);
            json!({"size": size, "samples_ns": [t, t * 1.01, t * 0.99]})
        })
        .collect();
    json!({"name": name, "size_unit": unit, "source_hash": "sha256:5e", "measurements": measurements})
}

/// Every workload of one version of the lineage (`control`: of musl-gcc 1.2.5).
fn workloads(version: &str, control: bool) -> Vec<Value> {
    let new = version == "0.16.0" && !control;
    let mut all = Vec::new();
    for name in QUADRATIC {
        let (first, cost): (u64, fn(f64) -> f64) = match (new, name) {
            (true, "strstr") => (96 << 10, quadratic),
            (true, _) => (64 << 10, quadratic),
            (false, _) => (64 << 10, linear),
        };
        let mut w = measured(name, "bytes", first, 6, cost);
        if name == "strchr" {
            w["size_of_interest"] = json!(4 << 20);
        }
        all.push(w);
    }
    for name in LINEAR {
        let unit = if name.starts_with("sqlite") { "records" } else { "bytes" };
        all.push(measured(name, unit, if unit == "records" { 1000 } else { 64 << 10 }, 6, linear));
    }
    let mut wrong = measured("strchrnul", "bytes", 64 << 10, 6, linear);
    if new {
        wrong["measurements"] = json!([]);
        wrong["failure"] = json!({"kind": "wrong_result", "size": 65536, "got": "-1", "expected": "9362",
                                  "detail": "strchrnul returned NULL"});
    }
    all.push(wrong);
    let mut probe = measured("contract.strchr.remaining", "bytes", 1024, 8, if new { linear } else { flat });
    probe["contract"] = json!({"expected": "1", "function": "strchr", "axis": "remaining"});
    all.push(probe);
    all.push(measured("next-token", "bytes", 64 << 10, 6, linear));
    all.push(measured(ODD_NAME, "bytes", 64 << 10, 6, linear));
    if !control {
        all.push(measured("json-scan", "records", 1000, 6, quadratic));
    }
    all
}

/// Submits the three releases, oldest first, and the control.
pub async fn seed(app: &TestApp) {
    for version in VERSIONS {
        let (status, body) = app.submit(&run_of(LINEAGE, version, "build-01", workloads(version, false))).await;
        assert_eq!(status, StatusCode::CREATED, "{version}: {body}");
    }
    let (status, body) = app.submit(&run_of(CONTROL, "1.2.5", "build-02", workloads("1.2.5", true))).await;
    assert_eq!(status, StatusCode::CREATED, "control: {body}");
}

/// The id of the regression the alert rules opened at 0.16.0.
pub async fn regression_at_0_16(app: &TestApp) -> i64 {
    let (status, list) = app.get("/api/v1/regressions?kind=regression").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let entries = list["regressions"].as_array().unwrap();
    let at = entries.iter().find(|e| e["regression"]["version"] == "0.16.0").unwrap_or_else(|| panic!("{list}"));
    at["regression"]["id"].as_i64().unwrap()
}
