//! A version whose workload ran the very build the version before ran did not change: on wall
//! time it opens nothing whatever its time did, and its pages say "build unchanged"; with another
//! build the same numbers open a regression. On a count, a rise past the cost factor at the same
//! growth opens a cost regression that the slope rule does not, and resolves once the count is
//! back. On Postgres and on SQLite.

use crate::builders::{measurements, run_of, SPREAD_FIVE};
use crate::helpers::{on_both_backends, TestApp};
use axum::http::StatusCode;
use serde_json::{json, Value};

/// A workload of `cost(size)` ns (or instructions) at six sizes from 64 KiB, built as `build`.
fn workload(build: &str, cost: impl Fn(f64) -> f64) -> Value {
    json!({"name": "strchr", "size_unit": "bytes", "source_hash": "sha256:00",
           "build_hash": format!("sha256:{build:0>64}"), "measurements": measurements(65536, 6, cost, &SPREAD_FIVE)})
}

async fn submit(app: &TestApp, run: Value) {
    let (status, body) = app.submit(&run).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

async fn versions_opened(app: &TestApp) -> Vec<(String, Vec<String>)> {
    let (_, list) = app.get("/api/v1/regressions").await;
    list["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let reasons = r["workloads"].as_array().unwrap().iter().map(|w| w["reason"].as_str().unwrap().to_string());
            (r["regression"]["version"].as_str().unwrap().to_string(), reasons.collect())
        })
        .collect()
}

#[tokio::test]
async fn a_byte_identical_build_opens_nothing_even_where_its_time_went_quadratic() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        submit(&app, run_of("zig", "0.15.2", "b1", vec![workload("a1", |n| n)])).await;
        // The same binary, timed on a host that made it look quadratic.
        submit(&app, run_of("zig", "0.16.0", "b1", vec![workload("a1", |n| n * n / 65536.0)])).await;
        assert!(versions_opened(&app).await.is_empty(), "an unchanged build opens nothing");
        let (_, v) = app.get("/api/v1/toolchains/zig/0.16.0").await;
        let row = &v["workloads"][0];
        assert_eq!(
            (&row["change"], &row["change_text"]),
            (&json!("unchanged"), &json!("build unchanged since 0.15.2")),
            "{v}"
        );
        let (_, page) = app.get("/series/strchr/zig").await;
        assert!(page.as_str().unwrap().contains("Build unchanged since 0.15.2 at 0.16.0"));
        // Another build, the same numbers: a regression.
        submit(&app, run_of("zig", "0.17.0", "b1", vec![workload("a2", |n| n * n / 65536.0)])).await;
        submit(&app, run_of("zig", "0.18.0", "b1", vec![workload("a3", |n| n)])).await;
        submit(&app, run_of("zig", "0.19.0", "b1", vec![workload("a4", |n| n * n / 65536.0)])).await;
        assert_eq!(versions_opened(&app).await, [("0.19.0".to_string(), vec!["slope".to_string()])]);
    })
    .await;
}

/// An instructions run of `workload`s.
fn counted(version: &str, workloads: Vec<Value>) -> Value {
    let mut run = run_of("zig", version, "b1", workloads);
    run["measure"] = json!("instructions");
    run["counter"] = json!("valgrind");
    for w in run["workloads"].as_array_mut().unwrap() {
        for m in w["measurements"].as_array_mut().unwrap() {
            let count = m["samples_ns"][2].as_f64().unwrap().round() as u64;
            m["samples_ns"] = json!([1000.0]);
            m["instructions"] = json!([count]);
        }
    }
    run
}

#[tokio::test]
async fn a_count_four_times_dearer_at_the_same_growth_opens_a_cost_regression_that_resolves_when_it_is_back() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        submit(&app, counted("1.0.0", vec![workload("b1", |n| n)])).await;
        submit(&app, counted("1.1.0", vec![workload("b2", |n| 1.2 * n)])).await;
        assert!(versions_opened(&app).await.is_empty(), "1.2× is within the factor");
        submit(&app, counted("1.2.0", vec![workload("b3", |n| 4.2 * n)])).await;
        assert_eq!(versions_opened(&app).await, [("1.2.0".to_string(), vec!["cost".to_string()])]);
        let (_, list) = app.get("/api/v1/regressions").await;
        let r = &list["regressions"][0];
        let id = r["regression"]["id"].as_i64().unwrap();
        assert_eq!(r["regression"]["previous_version"], "1.1.0");
        let m = &r["workloads"][0];
        assert!((m["time_ratio"].as_f64().unwrap() - 3.5).abs() < 0.01, "4.2 against 1.2: {m}");
        assert_eq!(m["ratio_size"], 65536 << 5);
        let (_, page) = app.get(&format!("/regressions/{id}")).await;
        assert!(page.as_str().unwrap().contains("cost 3.50× at 2 MiB, O(n) both"), "{page}");
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        let opened = detail["events"].as_array().unwrap().iter().find(|e| e["kind"] == "opened").unwrap();
        assert_eq!(opened["detail"], "strchr [instructions (Valgrind)] rose in cost at 1.2.0: cost 3.50× at 2 MiB, O(n) both (more than 1.50× the version before)");
        // 2× its last good version's cost is not back; 1.3× is.
        submit(&app, counted("1.3.0", vec![workload("b4", |n| 2.4 * n)])).await;
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        assert_eq!(detail["regression"]["status"], "open");
        submit(&app, counted("1.4.0", vec![workload("b5", |n| 1.5 * n)])).await;
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        assert_eq!((&detail["regression"]["status"], &detail["regression"]["fixed_version"]), (&json!("fixed"), &json!("1.4.0")), "{detail}");
    })
    .await;
}

/// A wall-time workload of `cost(size)` ns with the control measured beside it at `control(size)`.
fn timed_beside(build: &str, cost: impl Fn(f64) -> f64, control: impl Fn(f64) -> f64) -> Value {
    let mut w = workload(build, cost);
    let medians: Vec<Value> =
        (0..6).map(|i| 65536u64 << i).map(|size| json!({"size": size, "median": control(size as f64)})).collect();
    w["control"] = json!({"lineage": "musl-gcc", "version": "1.2.3", "medians": medians});
    w
}

#[tokio::test]
async fn on_times_a_cost_is_judged_over_the_control_beside_it_and_only_when_asked() {
    on_both_backends(|db| async move {
        let rules = slopewatch::config::Rules { cost_on_times: true, ..Default::default() };
        let config = slopewatch::config::Config {
            alerts: slopewatch::config::AlertSettings { rules, ..Default::default() },
            ..Default::default()
        };
        let app = TestApp::with_config(db, config).await;
        submit(&app, run_of("zig", "1.0.0", "b1", vec![timed_beside("c1", |n| n, |n| n / 4.0)])).await;
        // A host three times slower slows the control as much: no change of cost.
        submit(&app, run_of("zig", "1.1.0", "b2", vec![timed_beside("c2", |n| 3.0 * n, |n| 0.75 * n)])).await;
        assert!(versions_opened(&app).await.is_empty(), "the host's slowdown divides out");
        // The same host, the workload 4.2× dearer beside an unchanged control.
        submit(&app, run_of("zig", "1.2.0", "b2", vec![timed_beside("c3", |n| 12.6 * n, |n| 0.75 * n)])).await;
        assert_eq!(versions_opened(&app).await, [("1.2.0".to_string(), vec!["cost".to_string()])]);
        let (_, list) = app.get("/api/v1/regressions").await;
        let ratio = list["regressions"][0]["workloads"][0]["time_ratio"].as_f64().unwrap();
        assert!((ratio - 4.2).abs() < 0.05, "{list}");
        let id = list["regressions"][0]["regression"]["id"].as_i64().unwrap();
        let (_, page) = app.get(&format!("/regressions/{id}")).await;
        assert!(page.as_str().unwrap().contains("cost 4.20× at 2 MiB, O(n) both, over the control beside it"));
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        let opened = detail["events"].as_array().unwrap().iter().find(|e| e["kind"] == "opened").unwrap();
        assert!(opened["detail"].as_str().unwrap().contains(", over musl-gcc beside it"), "{opened}");
        // Without a control beside, a time is judged by its growth alone.
        submit(&app, run_of("gcc", "1.0.0", "b1", vec![workload("d1", |n| n)])).await;
        submit(&app, run_of("gcc", "1.1.0", "b1", vec![workload("d2", |n| 4.2 * n)])).await;
        assert_eq!(versions_opened(&app).await.len(), 1, "nothing at gcc 1.1.0");
    })
    .await;
}

#[tokio::test]
async fn without_cost_on_times_a_time_beside_its_control_is_judged_by_growth_alone() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        submit(&app, run_of("zig", "1.0.0", "b1", vec![timed_beside("c1", |n| n, |n| n / 4.0)])).await;
        submit(&app, run_of("zig", "1.2.0", "b1", vec![timed_beside("c3", |n| 4.2 * n, |n| n / 4.0)])).await;
        assert!(versions_opened(&app).await.is_empty(), "off unless asked");
    })
    .await;
}
