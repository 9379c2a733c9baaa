//! The version page agrees with the regressions: for every workload a regression opened at a
//! version (not a finding, which has no version before), that version's JSON, page and release note
//! read a change against the version before in its lineage, never "unchanged", under default
//! settings and under a tuned threshold (1.3 overall, 2.5 for `strcspn`).

use crate::builders::releases::{seed, CONTROL};
use crate::builders::{measurements, run_of, SPREAD_FIVE};
use crate::helpers::{on_both_backends, TestApp};
use axum::http::StatusCode;
use serde_json::{json, Value};
use slopewatch::config::Config;

/// Every (lineage, version, workload) a regression opened, and the row of its version's JSON.
async fn each_opened_row_has_a_change(app: &TestApp) -> usize {
    let regressions = app.db.store.regressions(None).await.unwrap();
    let mut checked = 0;
    for (r, members) in regressions.iter().filter(|(r, _)| r.previous_version.is_some()) {
        let uri = format!("/api/v1/toolchains/{}/{}", r.lineage, r.version);
        let (_, version) = app.get(&uri).await;
        assert_eq!(version["against"].as_str(), r.previous_version.as_deref(), "{uri}");
        let rows = version["workloads"].as_array().unwrap_or_else(|| panic!("{uri}: {version}"));
        for m in members {
            let row = rows.iter().find(|row| row["workload"] == m.workload.as_str());
            let row = row.unwrap_or_else(|| panic!("{uri}: no row of {}: {version}", m.workload));
            assert_ne!(row["change"], "unchanged", "{uri}: {} opened here: {row}", m.workload);
            checked += 1;
        }
        let page = app.get(&format!("/toolchains/{}/{}", r.lineage, r.version)).await.1;
        assert!(page.as_str().is_some_and(|p| !p.is_empty()), "{uri}: the page renders");
    }
    checked
}

/// A workload timed at 7 sizes doubling from 64 KiB, growing as size^`k`.
fn workload(name: &str, k: f64) -> Value {
    let measurements = measurements(65536, 7, |n| 1e-3 * n.powf(k), &SPREAD_FIVE);
    json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:00", "measurements": measurements})
}

/// A gcc lineage whose `strchr` steps from k 1.0 to 1.42 (past a tuned 1.3, short of the default
/// 1.5), `strcspn` at 2.0 throughout, two runs a version.
async fn seed_a_small_step(app: &TestApp) {
    for (version, strchr) in [("12.2.0", 1.0), ("12.3.0", 1.42)] {
        for host in ["build-01", "build-02"] {
            let run = run_of("gcc-glibc", version, host, vec![workload("strchr", strchr), workload("strcspn", 2.0)]);
            let (status, body) = app.submit(&run).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
    }
}

#[tokio::test]
async fn a_workload_a_regression_opened_at_a_version_never_reads_unchanged_there() {
    on_both_backends(|db| async move {
        let config = Config { controls: vec![CONTROL.into()], ..Config::default() };
        let app = TestApp::with_config(db, config).await;
        seed(&app).await;
        assert!(each_opened_row_has_a_change(&app).await >= 6, "the six quadratic workloads at 0.16.0");
    })
    .await;
}

#[tokio::test]
async fn under_a_tuned_threshold_the_version_page_still_agrees_with_the_rules() {
    on_both_backends(|db| async move {
        let mut config = Config { controls: vec![CONTROL.into()], ..Config::default() };
        config.alerts.rules.threshold = 1.3;
        config.alerts.rules.per_workload.insert("strcspn".into(), 2.5);
        let app = TestApp::with_config(db, config).await;
        seed(&app).await;
        seed_a_small_step(&app).await;
        let regressions = app.db.store.regressions(None).await.unwrap();
        let small = regressions.iter().find(|(r, _)| r.lineage == "gcc-glibc").expect("strchr's step past 1.3 opens");
        let names: Vec<&str> = small.1.iter().map(|m| m.workload.as_str()).collect();
        assert_eq!((small.0.version.as_str(), names.as_slice()), ("12.3.0", &["strchr"][..]));
        assert!(each_opened_row_has_a_change(&app).await >= 6, "the quadratic workloads at 0.16.0, and strchr");
    })
    .await;
}
