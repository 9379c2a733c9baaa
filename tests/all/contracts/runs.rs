//! Contracts as the server keeps them: a probe's contract and a function its libc does not
//! provide are stored with the run on both backends, answered the same on a resubmission, and
//! carried whole by an export into another store.

use crate::builders::run_of;
use crate::helpers::{on_both_backends, Backend, TestApp, TestDb};
use serde_json::{json, Value};
use slopewatch::config::{AlertSettings, AlertsSection, Config, WebhookFormat, WebhookSection};
use std::path::Path;
use std::process::Command;

fn probe_run() -> Value {
    let measurements: Vec<Value> =
        (0..6).map(|i| json!({"size": 1024u64 << i, "samples_ns": [900.0 + (1024u64 << i) as f64]})).collect();
    run_of(
        "zig-cc-musl",
        "0.16.0",
        "build-01",
        vec![
            json!({"name": "contract.strchr.remaining", "size_unit": "bytes", "source_hash": "sha256:c0",
                   "measurements": measurements,
                   "contract": {"expected": "1", "function": "strchr", "axis": "remaining",
                                "broken": "reads the whole remaining string",
                                "consequence": "A loop that calls it once per token over n bytes is O(n²)."}}),
            json!({"name": "contract.strlcpy.length", "size_unit": "bytes", "source_hash": "sha256:c0",
                   "measurements": [], "contract": {"expected": "n", "function": "strlcpy", "axis": "length"},
                   "not_provided": true, "metadata": {"libc": "musl"}}),
            json!({"name": "tokenize", "size_unit": "bytes", "source_hash": "sha256:t0",
                   "measurements": measurements, "contract": {"expected": "n"}}),
        ],
    )
}

fn slopewatch(args: &[&str], db: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_slopewatch")).args(args).env("DATABASE_URL", db).output().unwrap()
}

/// The runs of an export file, as the wire writes them.
fn exported_runs(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["kind"] == "run")
        .map(|r| r["run"].clone())
        .collect()
}

#[tokio::test]
async fn a_run_s_contracts_and_unprovided_functions_are_stored_whole_and_carried_by_an_export() {
    on_both_backends(|db| async move {
        let backend = db.backend;
        let app = TestApp::new(db).await;
        let run = probe_run();
        let (status, answer) = app.submit(&run).await;
        assert_eq!(status, 201, "{answer}");
        let (status, _) = app.submit(&run).await;
        assert_eq!(status, 200, "a resubmission is the same run, contracts and all");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("export.jsonl");
        let out = slopewatch(&["export", "--output", file.to_str().unwrap()], &app.db.url);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let runs = exported_runs(&file);
        assert_eq!(runs.len(), 1);
        let by_name = |name: &str| runs[0]["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).cloned();
        let original = |name: &str| run["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).cloned();
        for name in ["contract.strchr.remaining", "contract.strlcpy.length", "tokenize"] {
            let (stored, sent) = (by_name(name).unwrap(), original(name).unwrap());
            assert_eq!(stored["contract"], sent["contract"], "{name} on {backend:?}");
            assert_eq!(stored["not_provided"], sent["not_provided"], "{name} on {backend:?}");
        }
        assert_eq!(by_name("contract.strlcpy.length").unwrap()["metadata"]["libc"], "musl");

        // Into the other backend: the same run, answered as a repeat when the agent sends it again.
        let to = if backend == Backend::Postgres { Backend::Sqlite } else { Backend::Postgres };
        let other = TestApp::new(TestDb::new(to).await).await;
        let out = slopewatch(&["import", "--input", file.to_str().unwrap()], &other.db.url);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let (status, answer) = other.submit(&run).await;
        assert_eq!(status, 200, "the imported run is the run the agent sent: {answer}");
    })
    .await;
}

/// A run of `version` whose one probe costs `cost(size)` at 8 sizes from 1 KiB, held to O(1).
fn probe_at(version: &str, cost: impl Fn(f64) -> f64) -> Value {
    let measurements = crate::builders::measurements(1024, 8, cost, &[1.0, 1.01, 0.99]);
    run_of(
        "zig-cc-musl",
        version,
        "build-01",
        vec![json!({"name": "contract.strchr.remaining", "size_unit": "bytes", "source_hash": "sha256:c0",
                    "measurements": measurements,
                    "contract": {"expected": "1", "function": "strchr", "axis": "remaining",
                                 "broken": "reads the whole remaining string",
                                 "consequence": "A loop that calls it once per token over n bytes is O(n²)."}})],
    )
}

fn webhook_config() -> Config {
    let target = WebhookSection {
        name: "ops".into(),
        url: "http://127.0.0.1:9/hook".into(),
        secret: "0123456789abcdef0123".into(),
        format: WebhookFormat::Json,
    };
    let alerts = AlertSettings::from_file(&AlertsSection::default(), &[target]).unwrap();
    Config { alerts, ..Config::default() }
}

const SENTENCE: &str = "strchr now reads the whole remaining string: cost ∝ remaining^";

#[tokio::test]
async fn a_version_that_takes_a_probe_over_its_contract_opens_a_regression_under_any_slope_threshold() {
    on_both_backends(|db| async move {
        let app = TestApp::with_config(db, webhook_config()).await;
        let (status, answer) = app.submit(&probe_at("0.15.2", |_| 900.0)).await;
        assert_eq!(status, 201, "{answer}");
        let (_, list) = app.get("/api/v1/regressions").await;
        assert_eq!(list["regressions"].as_array().unwrap().len(), 0, "held: {list}");
        // Linear growth: a slope of 1, under the threshold of 1.5, but O(n) against O(1).
        let (status, answer) = app.submit(&probe_at("0.16.0", |n| 900.0 + 4.0 * n)).await;
        assert_eq!(status, 201, "{answer}");
        let (_, list) = app.get("/api/v1/regressions").await;
        let regressions = list["regressions"].as_array().unwrap();
        assert_eq!(regressions.len(), 1, "{list}");
        let r = &regressions[0];
        assert_eq!(r["regression"]["version"], "0.16.0", "{list}");
        let w = &r["workloads"][0];
        assert_eq!(w["workload"], "contract.strchr.remaining", "{list}");
        assert_eq!((&w["class_before"], &w["class_after"]), (&json!("1"), &json!("n")), "{list}");
        // The page, the API and the webhook say what the break means.
        let sentence = w["contract_break"].as_str().unwrap_or_else(|| panic!("{list}"));
        assert!(sentence.starts_with(SENTENCE), "{sentence}");
        assert!(
            sentence.ends_with(", O(1) at 0.15.2. A loop that calls it once per token over n bytes is O(n²)."),
            "{sentence}"
        );
        let id = r["regression"]["id"].as_i64().unwrap();
        let (status, page) = app.get(&format!("/regressions/{id}")).await;
        assert_eq!(status, 200);
        let page = page.as_str().unwrap().to_string();
        assert!(page.contains("Contract broken") && page.contains(SENTENCE), "{page}");
        assert!(page.contains("broke its contract at 0.16.0: O(n) against its contract of O(1) (was O(1))"), "{page}");
        let bodies = app.db.texts("SELECT body FROM deliveries").await;
        let opened: Vec<Value> = bodies.iter().map(|b| serde_json::from_str(b).unwrap()).collect();
        let event = opened.iter().find(|e| e["event"] == "regression.opened").unwrap_or_else(|| panic!("{bodies:?}"));
        assert!(event["workloads"][0]["contract_break"].as_str().unwrap().starts_with(SENTENCE), "{event}");
        // Back to O(1) at the next version: fixed.
        let (status, _) = app.submit(&probe_at("0.17.0", |_| 900.0)).await;
        assert_eq!(status, 201);
        let (_, list) = app.get("/api/v1/regressions?status=open").await;
        assert_eq!(list["regressions"].as_array().unwrap().len(), 0, "resolved at 0.17.0: {list}");
    })
    .await;
}
