//! A lineage's version axis: its versions count the compiler's releases or the libc's, as its
//! first run set, and a run of the other axis is refused whole. Shown in the API and on the
//! toolchains page, and carried by export and import.

use crate::builders::RunShape;
use crate::helpers::{on_both_backends, Backend, TestApp, TestDb};
use axum::body::Body;
use axum::http::Request;
use futures_util::future::join_all;
use http_body_util::BodyExt;
use serde_json::Value;
use slopewatch::config::Config;
use slopewatch::{app, retention, AppState};
use std::path::Path;
use std::process::{Command, Output};
use time::OffsetDateTime;
use tower::ServiceExt;

/// A musl-gcc run versioned by musl, as the agent sends it by default.
fn libc_run(lineage: &str, version: &str, host: &str) -> Value {
    let mut run = RunShape::new(lineage, version).host(host).sizes(6).json();
    run["toolchain"]["libc"] = "musl 1.2.3".into();
    run["toolchain"]["compiler"] = "musl-gcc".into();
    run["toolchain"]["version_from"] = "libc".into();
    run
}

/// A musl-gcc run versioned by the gcc it wraps, as agents sent it before the axis existed.
fn compiler_run(lineage: &str, version: &str, host: &str) -> Value {
    let mut run = RunShape::new(lineage, version).host(host).sizes(6).json();
    run["toolchain"]["libc"] = "musl 1.2.3".into();
    run["toolchain"]["compiler"] = "musl-gcc".into();
    run
}

/// Each toolchain build as `(lineage, version, version_from)`.
async fn builds(app: &TestApp) -> Vec<(String, String, String)> {
    builds_of(&app.router).await
}

async fn builds_of(router: &axum::Router) -> Vec<(String, String, String)> {
    let request = Request::get("/api/v1/toolchains").body(Body::empty()).unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let list: Value = serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap();
    let field = |t: &Value, name: &str| t[name].as_str().unwrap_or_else(|| panic!("{name} in {t}")).to_string();
    list["toolchains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (field(t, "name"), field(t, "version"), field(t, "version_from")))
        .collect()
}

/// Everything a refused run could have left behind: runs, hosts, workloads and builds.
async fn stored(app: &TestApp) -> Vec<Value> {
    let mut all = Vec::new();
    for uri in ["/api/v1/runs?limit=1000", "/api/v1/hosts", "/api/v1/workloads", "/api/v1/toolchains"] {
        let (status, body) = app.get(uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
        all.push(body);
    }
    all
}

fn axis_of(builds: &[(String, String, String)], lineage: &str) -> Vec<String> {
    builds.iter().filter(|(name, _, _)| name == lineage).map(|(_, _, axis)| axis.clone()).collect()
}

#[tokio::test]
async fn a_run_of_the_other_axis_is_refused_whole_with_what_to_do_and_nothing_is_stored() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let (status, body) = app.submit(&compiler_run("musl-gcc", "12.2.0", "build-01")).await;
        assert_eq!(status, 201, "{body}");
        let before = stored(&app).await;

        // A new host and a new workload, so a half-stored run would show.
        let mut libc = libc_run("musl-gcc", "1.2.3", "build-new");
        libc["workloads"][0]["name"] = "fresh-workload".into();
        let (status, body) = app.submit(&libc).await;
        assert_eq!(status, 422, "{body}");
        let error = &body["error"];
        assert_eq!(
            (error["code"].as_str(), error["field"].as_str()),
            (Some("invalid_field"), Some("toolchain.version_from"))
        );
        let reason = error["reason"].as_str().unwrap();
        for advice in
            ["\"musl-gcc-libc\"", "version_from = \"compiler\"", "--version-from musl-gcc=compiler", "\"1.2.3\""]
        {
            assert!(reason.contains(advice), "{advice} in {reason}");
        }
        assert_eq!(stored(&app).await, before, "the refused run left nothing behind");

        // Under a new name the libc axis starts its own lineage, which then refuses the other axis.
        let (status, body) = app.submit(&libc_run("musl-gcc-libc", "1.2.3", "build-01")).await;
        assert_eq!(status, 201, "{body}");
        let libc_id = libc_run_id(&app).await;
        let (status, body) = app.submit(&compiler_run("musl-gcc-libc", "12.2.0", "build-01")).await;
        assert_eq!(status, 422, "{body}");
        assert!(body["error"]["reason"].as_str().unwrap().contains("version_from = \"libc\""), "{body}");

        let builds = builds(&app).await;
        assert_eq!(axis_of(&builds, "musl-gcc"), ["compiler"]);
        assert_eq!(axis_of(&builds, "musl-gcc-libc"), ["libc"]);
        let (_, detail) = app.get(&format!("/api/v1/runs/{libc_id}")).await;
        assert_eq!(detail["toolchain"]["version_from"], "libc", "{detail}");
    })
    .await;
}

/// The id of the latest musl-gcc-libc run.
async fn libc_run_id(app: &TestApp) -> String {
    let (_, list) = app.get("/api/v1/runs?limit=1000").await;
    let run = list["runs"].as_array().unwrap().iter().find(|r| r["lineage"] == "musl-gcc-libc").unwrap();
    run["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_run_without_the_field_is_stored_on_the_compiler_axis_and_resubmits_as_the_same_run() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let run = RunShape::new("gcc-glibc", "12.2.0").sizes(6).json();
        assert!(run["toolchain"].get("version_from").is_none());
        assert_eq!(app.submit(&run).await.0, 201);
        assert_eq!(builds(&app).await, [("gcc-glibc".into(), "12.2.0".into(), "compiler".into())]);
        let (_, detail) = app.get(&format!("/api/v1/runs/{}", run["run_id"].as_str().unwrap())).await;
        assert!(detail["toolchain"].get("version_from").is_none(), "absent means compiler: {detail}");
        let (status, body) = app.submit(&run).await;
        assert_eq!(status, 200, "the same run, not a conflicting one: {body}");
        let (status, _) = app.submit(&libc_run("gcc-glibc", "2.36", "build-01")).await;
        assert_eq!(status, 422);
    })
    .await;
}

#[tokio::test]
async fn runs_arriving_together_never_start_a_lineage_on_both_axes() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let runs: Vec<Value> = (0..8)
            .map(|i| {
                let host = format!("build-{i}");
                if i % 2 == 0 {
                    libc_run("racing", &format!("1.2.{i}"), &host)
                } else {
                    compiler_run("racing", &format!("12.{i}.0"), &host)
                }
            })
            .collect();
        let answers = join_all(runs.iter().map(|r| app.submit(r))).await;
        let builds = builds(&app).await;
        let axes = axis_of(&builds, "racing");
        assert!(!axes.is_empty() && axes.iter().all(|a| *a == axes[0]), "one axis: {builds:?}");
        for (run, (status, body)) in runs.iter().zip(&answers) {
            let axis = run["toolchain"]["version_from"].as_str().unwrap_or("compiler");
            let expected = if axis == axes[0] { 201 } else { 422 };
            assert_eq!(status.as_u16(), expected, "{axis} against a lineage on {}: {body}", axes[0]);
        }
    })
    .await;
}

#[tokio::test]
async fn the_toolchains_page_says_what_each_version_counts() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        assert_eq!(app.submit(&libc_run("musl-gcc-libc", "1.2.3", "build-01")).await.0, 201);
        assert_eq!(app.submit(&RunShape::new("gcc-glibc", "12.2.0").sizes(6).json()).await.0, 201);
        let (status, page) = app.get("/toolchains").await;
        assert_eq!(status, 200);
        let page = page.as_str().unwrap();
        let shown = |version: &str, source: &str| {
            format!(r#"{version}</a> <span class="muted version-from">({source})</span>"#)
        };
        assert!(page.contains(&shown("1.2.3", "libc musl")), "{page}");
        assert!(page.contains(&shown("12.2.0", "compiler")), "{page}");
    })
    .await;
}

fn slopewatch(args: &[&str], db: &str) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_slopewatch")).args(args).env("DATABASE_URL", db).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// The toolchain builds of a fresh store of `to` once `file` is imported into it.
async fn imported_builds(file: &Path, to: Backend) -> Vec<(String, String, String)> {
    let db = TestDb::new(to).await;
    slopewatch(&["import", "--input", file.to_str().unwrap()], &db.url);
    builds_of(&app(AppState::new(db.store.clone(), Config::default()))).await
}

#[tokio::test]
async fn export_and_import_carry_the_axis_and_files_written_before_it_import_as_compiler() {
    for (from, to) in [(Backend::Sqlite, Backend::Postgres), (Backend::Postgres, Backend::Sqlite)] {
        eprintln!("-- from {from:?} to {to:?}");
        let source = TestApp::new(TestDb::new(from).await).await;
        assert_eq!(source.submit(&libc_run("musl-gcc-libc", "1.2.3", "build-01")).await.0, 201);
        let cutoff = OffsetDateTime::now_utc();
        assert_eq!(source.submit(&libc_run("musl-gcc-libc", "1.2.4", "build-01")).await.0, 201);
        assert_eq!(source.submit(&compiler_run("musl-gcc", "12.2.0", "build-01")).await.0, 201);
        // The first run goes out as a pruned run, which carries its toolchain on its own path.
        let pruned = retention::prune_received_before(&source.db.store, cutoff, OffsetDateTime::now_utc()).await;
        assert_eq!(pruned.unwrap().runs, 1);

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("history.jsonl");
        slopewatch(&["export", "--output", file.to_str().unwrap()], &source.db.url);
        let text = std::fs::read_to_string(&file).unwrap();
        let libc_lines = text.lines().filter(|l| l.contains(r#""version_from":"libc""#)).count();
        assert_eq!(libc_lines, 2, "{text}");

        let expected = builds(&source).await;
        assert_eq!(axis_of(&expected, "musl-gcc-libc"), ["libc", "libc"]);
        assert_eq!(imported_builds(&file, to).await, expected);

        // A file written before the axis existed has no such field: its lineages are compiler.
        let older = dir.path().join("older.jsonl");
        std::fs::write(&older, text.replace(r#","version_from":"libc""#, "")).unwrap();
        assert_eq!(axis_of(&imported_builds(&older, to).await, "musl-gcc-libc"), ["compiler", "compiler"]);
    }
}
