//! Retention: old runs lose their raw samples and nothing else, on demand, at start-up and
//! periodically, on Postgres and on SQLite.

use crate::builders::RunShape;
use crate::helpers::{on_both_backends, TestApp, TestDb};
use axum::http::StatusCode;
use serde_json::Value;
use slopewatch::config::Config;
use slopewatch::intake::Intake;
use slopewatch::retention;
use slopewatch::store::{Arrival, InsertOutcome, Store};
use slopewatch_core::wire::RunSubmission;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use time::OffsetDateTime;

const SERIES: [&str; 4] = [
    "/api/v1/series?workload=workload-0&toolchain=zig-cc-musl",
    "/api/v1/series?workload=workload-1&toolchain=zig-cc-musl",
    "/api/v1/toolchains",
    "/api/v1/runs?limit=100",
];

async fn submit(app: &TestApp, run: &Value) -> String {
    let (status, body) = app.submit(run).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    run["run_id"].as_str().unwrap().to_string()
}

async fn answers(app: &TestApp, uris: &[String]) -> Vec<Value> {
    let mut out = Vec::new();
    for uri in uris {
        let (status, body) = app.get(uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}: {body}");
        out.push(body);
    }
    out
}

/// A run detail without what pruning changes.
fn without_samples(mut run: Value) -> Value {
    run.as_object_mut().unwrap().remove("samples_pruned_at");
    for w in run["workloads"].as_array_mut().unwrap() {
        for m in w["measurements"].as_array_mut().unwrap() {
            m.as_object_mut().unwrap().remove("samples_ns");
        }
    }
    run
}

async fn page(app: &TestApp, run_id: &str) -> String {
    let (status, body) = app.get(&format!("/runs/{run_id}")).await;
    assert_eq!(status, StatusCode::OK);
    body.as_str().unwrap().to_string()
}

#[tokio::test]
async fn pruning_removes_old_raw_samples_and_keeps_fits_medians_and_summaries() {
    on_both_backends(|db| async move {
        let control = TestApp::new(TestDb::new(db.backend).await).await;
        let app = TestApp::new(db).await;
        let runs: Vec<Value> = [("0.15.0", 1.0), ("0.16.0", 2.0), ("0.16.0", 2.0), ("0.17.0", 1.0), ("0.16.0", 2.0)]
            .into_iter()
            .enumerate()
            .map(|(i, (version, slope))| {
                RunShape::new("zig-cc-musl", version)
                    .host(&format!("build-0{i}"))
                    .slope(slope)
                    .workloads(2)
                    .sizes(6)
                    .samples(5)
                    .json()
            })
            .collect();
        let mut ids = Vec::new();
        for run in &runs[..2] {
            ids.push(submit(&app, run).await);
        }
        let cutoff = OffsetDateTime::now_utc();
        for run in &runs[2..4] {
            ids.push(submit(&app, run).await);
        }
        let mut uris: Vec<String> = SERIES.map(String::from).into();
        uris.extend(ids.iter().map(|id| format!("/api/v1/runs/{id}")));
        let before = answers(&app, &uris).await;

        let report = retention::prune_received_before(&app.db.store, cutoff, OffsetDateTime::now_utc()).await.unwrap();
        assert_eq!((report.runs, report.samples), (2, 2 * 2 * 6 * 5));
        let after = answers(&app, &uris).await;
        assert_eq!(before[..SERIES.len()], after[..SERIES.len()], "series, toolchains and runs read the same");
        for (i, (b, a)) in before[SERIES.len()..].iter().zip(&after[SERIES.len()..]).enumerate() {
            if i < 2 {
                assert!(a["samples_pruned_at"].is_string(), "{a}");
                for m in a["workloads"].as_array().unwrap().iter().flat_map(|w| w["measurements"].as_array().unwrap()) {
                    assert_eq!((m["samples_ns"].as_array().unwrap().len(), m["samples"].as_i64()), (0, Some(5)));
                }
                assert_eq!(without_samples(b.clone()), without_samples(a.clone()), "fits and medians are kept");
            } else {
                assert_eq!(b, a, "a newer run keeps its samples");
                assert!(a["samples_pruned_at"].is_null());
                assert_eq!(a["workloads"][0]["measurements"][0]["samples_ns"].as_array().unwrap().len(), 5);
            }
        }
        let pruned_page = page(&app, &ids[0]).await;
        assert!(pruned_page.contains("Raw samples pruned") && pruned_page.contains("pruned (5 samples)"));
        let kept_page = page(&app, &ids[3]).await;
        assert!(!kept_page.contains("Raw samples pruned") && !kept_page.contains("pruned ("));
        let again = retention::prune_received_before(&app.db.store, cutoff, OffsetDateTime::now_utc()).await.unwrap();
        assert_eq!(again.runs, 0, "nothing is pruned twice");

        // A later run of a version whose older runs were pruned summarises as if they were not.
        submit(&app, &runs[4]).await;
        for run in &runs {
            submit(&control, run).await;
        }
        for uri in &SERIES[..2] {
            assert_eq!(app.get(uri).await.1, control.get(uri).await.1, "{uri}");
        }
    })
    .await;
}

/// Stores `run` as if received `days_ago` days ago.
async fn store_old_run(store: &Store, run: &Value, days_ago: i64) -> uuid::Uuid {
    let run = RunSubmission::from_json(&serde_json::to_vec(run).unwrap()).unwrap();
    let arrival = Arrival { received_at: OffsetDateTime::now_utc() - time::Duration::days(days_ago), ..Arrival::now() };
    let intake = Intake::new(store.clone(), &Config::default(), Arc::default());
    let outcome = intake.insert_run(&run, &arrival).await.unwrap();
    assert!(matches!(outcome, InsertOutcome::Created(_)));
    run.run_id
}

async fn is_pruned(store: &Store, id: uuid::Uuid) -> bool {
    store.run(id).await.unwrap().unwrap().samples_pruned_at.is_some()
}

fn slopewatch(args: &[&str], db: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_slopewatch"))
        .args(args)
        .env("DATABASE_URL", db)
        .env_remove("SLOPEWATCH_RETAIN_SAMPLES_DAYS")
        .output()
        .unwrap()
}

#[tokio::test]
async fn the_prune_command_prints_what_it_removed() {
    on_both_backends(|db| async move {
        let old =
            store_old_run(&db.store, &RunShape::new("gcc-glibc", "12.2.0").host("h").workloads(2).json(), 30).await;
        let young =
            store_old_run(&db.store, &RunShape::new("gcc-glibc", "12.2.0").host("h").workloads(2).json(), 3).await;
        let out = slopewatch(&["prune", "--samples-days", "7"], &db.url);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("removed the raw samples of 1 runs") && stdout.contains("(24 samples)"), "{stdout}");
        assert!(is_pruned(&db.store, old).await && !is_pruned(&db.store, young).await);
        let again = slopewatch(&["prune", "--samples-days", "7"], &db.url);
        assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to prune"));

        let unset = slopewatch(&["prune"], &db.url);
        assert!(!unset.status.success());
        assert!(String::from_utf8_lossy(&unset.stderr).contains("--samples-days"));
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("slopewatch.toml");
        std::fs::write(&config, "[retention]\nsamples_days = 2\n").unwrap();
        let from_file = slopewatch(&["prune", "--config", config.to_str().unwrap()], &db.url);
        assert!(from_file.status.success(), "{}", String::from_utf8_lossy(&from_file.stderr));
        assert!(is_pruned(&db.store, young).await, "the config file's age applies");
    })
    .await;
}

#[tokio::test]
async fn the_server_prunes_at_start_up_and_then_periodically() {
    let db = TestDb::new(crate::helpers::Backend::Sqlite).await;
    let old = store_old_run(&db.store, &RunShape::new("gcc-glibc", "12.2.0").host("h").workloads(2).json(), 30).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_slopewatch"))
        .args(["serve", "--bind", &format!("127.0.0.1:{port}"), "--retain-samples-days", "7"])
        .env("DATABASE_URL", &db.url)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !is_pruned(&db.store, old).await {
        assert!(Instant::now() < deadline, "the server did not prune at start-up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    assert!(child.wait().unwrap().success());

    on_both_backends(|db| async move {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let metrics = std::sync::Arc::new(slopewatch::metrics::Metrics::default());
        let task = tokio::spawn(retention::run(db.store.clone(), 7, Duration::from_millis(100), metrics, stopped));
        let young =
            store_old_run(&db.store, &RunShape::new("gcc-glibc", "12.2.0").host("h").workloads(2).json(), 1).await;
        let aged =
            store_old_run(&db.store, &RunShape::new("gcc-glibc", "12.2.0").host("h").workloads(2).json(), 8).await;
        let deadline = Instant::now() + Duration::from_secs(30);
        while !is_pruned(&db.store, aged).await {
            assert!(Instant::now() < deadline, "a run that arrived old was not pruned on a later pass");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(!is_pruned(&db.store, young).await);
        stop.send(true).unwrap();
        task.await.unwrap();
    })
    .await;
}

/// Servers sharing a database claim each retention period: of several claiming at once one gets
/// it, nobody else within the period, and one again once it is over.
#[tokio::test]
async fn one_of_several_servers_claims_each_retention_period() {
    on_both_backends(|db| async move {
        let now = OffsetDateTime::now_utc();
        let hour = time::Duration::HOUR;
        let at_once = (0..4).map(|i| {
            let (store, holder) = (db.store.clone(), format!("replica-{i}:1"));
            tokio::spawn(async move { store.claim_task("retention", &holder, now, now - hour).await.unwrap() })
        });
        let mut won = 0;
        for claim in at_once {
            won += usize::from(claim.await.unwrap());
        }
        assert_eq!(won, 1, "one of the servers claiming at once runs the pass");
        let later = now + time::Duration::minutes(55);
        assert!(!db.store.claim_task("retention", "replica-9:1", later, later - hour).await.unwrap());
        assert!(db.store.claim_task("other", "replica-9:1", later, later - hour).await.unwrap(), "tasks apart");
        let next = now + hour;
        assert!(db.store.claim_task("retention", "replica-9:1", next, next - hour).await.unwrap());
    })
    .await;
}
