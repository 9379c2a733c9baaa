//! What a workload costs at the size its team runs it at: a run's size of interest is stored with
//! it, refused when it is no size, carried by an export, and the time predicted there is given
//! on the run page, the series page, first on the regression page, in the API and in the
//! webhook, marked as a prediction past the sizes measured. On Postgres and on SQLite.

use crate::builders::run_of;
use crate::helpers::webhooks::{config, Receiver};
use crate::helpers::{on_both_backends, TestApp};
use serde_json::{json, Value};
use slopewatch::config::WebhookFormat;

/// A run of `version` whose one workload costs `cost(records)` at 6 sizes from 1,000 records,
/// run by its team at 40,000 records.
fn records_run(version: &str, cost: impl Fn(f64) -> f64) -> Value {
    let measurements: Vec<Value> = (0..6)
        .map(|i| {
            let size = 1000u64 << i;
            let t = cost(size as f64);
            json!({"size": size, "samples_ns": [t, t * 1.02, t * 0.98]})
        })
        .collect();
    run_of(
        "zig-cc-musl",
        version,
        "build-01",
        vec![json!({"name": "sqlite-json-each.spaced", "size_unit": "records", "source_hash": "sha256:s0",
                    "measurements": measurements, "size_of_interest": 40000})],
    )
}

async fn page(app: &TestApp, uri: &str) -> String {
    let (status, page) = app.get(uri).await;
    assert_eq!(status, 200, "{uri}: {page}");
    page.as_str().unwrap().to_string()
}

#[tokio::test]
async fn the_time_at_the_size_of_interest_is_predicted_on_every_page_and_in_the_webhook() {
    on_both_backends(|db| async move {
        let app = TestApp::with_config(db, config(&Receiver::reserve(), &[WebhookFormat::Json])).await;
        let (status, answer) = app.submit(&records_run("0.15.2", |n| 1000.0 * n)).await;
        assert_eq!(status, 201, "{answer}");
        let run_id = answer["run_id"].as_str().unwrap().to_string();
        let (status, answer) = app.submit(&records_run("0.16.0", |n| 1000.0 * n + 0.5 * n * n)).await;
        assert_eq!(status, 201, "{answer}");

        // The run: from its own fit, past the 32,000 records it measured.
        let run = page(&app, &format!("/runs/{run_id}")).await;
        assert!(run.contains("At the size you run, at 40,000 records: ≈ 40 ms ["), "{run}");
        assert!(run.contains("predicted past the 32,000 records measured"), "{run}");
        let (_, json) = app.get(&format!("/api/v1/runs/{run_id}")).await;
        assert_eq!(json["workloads"][0]["size_of_interest"], 40000, "{json}");

        // The series: the latest version against the one before.
        let series = page(&app, "/series/sqlite-json-each.spaced/zig-cc-musl").await;
        assert!(series.contains("At the size you run, at 40,000 records: ≈ "), "{series}");
        assert!(series.contains(" at 0.16.0, predicted past the 32,000 records measured; ≈ 40 ms ["), "{series}");

        // The regression: the sentence first, and in the API and the webhook.
        let (_, list) = app.get("/api/v1/regressions").await;
        let id = list["regressions"][0]["regression"]["id"].as_i64().unwrap_or_else(|| panic!("{list}"));
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        let sentence = detail["workloads"][0]["at_size_of_interest"].as_str().unwrap_or_else(|| panic!("{detail}"));
        // 0.5·n² + 1000·n at 40,000 records is 840 ms against 40 ms: about 21×.
        assert!(sentence.starts_with("at 40,000 records: ≈ "), "{sentence}");
        assert!(sentence.contains(" here, predicted past the 32,000 records measured; ≈ 40 ms ["), "{sentence}");
        let ratio: f64 = sentence.rsplit("about ").next().unwrap().trim_end_matches('×').parse().unwrap();
        assert!((15.0..30.0).contains(&ratio), "{sentence}");
        let shown = page(&app, &format!("/regressions/{id}")).await;
        let first = shown.find(sentence).unwrap_or_else(|| panic!("{shown}"));
        assert!(first < shown.find("Last good version").unwrap(), "the cost comes first: {shown}");
        let bodies = app.db.texts("SELECT body FROM deliveries").await;
        let opened: Value = serde_json::from_str(&bodies[0]).unwrap();
        assert_eq!(opened["workloads"][0]["at_size_of_interest"], sentence, "{opened}");
    })
    .await;
}

#[tokio::test]
async fn a_size_of_interest_that_is_no_size_is_refused_and_one_that_is_survives_an_export() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let mut run = records_run("0.15.2", |n| 1000.0 * n);
        run["workloads"][0]["size_of_interest"] = json!(0);
        let (status, answer) = app.submit(&run).await;
        assert_eq!(status, 422, "{answer}");
        assert_eq!(answer["error"]["field"], "workloads[0].size_of_interest", "{answer}");
        run["workloads"][0]["size_of_interest"] = json!(40000);
        let (status, answer) = app.submit(&run).await;
        assert_eq!(status, 201, "{answer}");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("export.jsonl");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_slopewatch"))
            .args(["export", "--output", file.to_str().unwrap()])
            .env("DATABASE_URL", &app.db.url)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = std::fs::read_to_string(&file).unwrap();
        let exported: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let run = exported.iter().find(|r| r["kind"] == "run").unwrap();
        assert_eq!(run["run"]["workloads"][0]["size_of_interest"], 40000, "{text}");
    })
    .await;
}
