//! Moving the history between stores with `slopewatch export` and `slopewatch import`: the other
//! backend answers the API the same (runs with their controls and profiles, regressions, editors'
//! changes, bisections, tokens, artifacts' exposure scans and found probes), and so does a third store the
//! second is moved to; importing twice stores nothing twice, bad lines are named.

use crate::builders::{found_probe, measurements, RunShape};
use crate::helpers::{on_both_backends, Backend, TestApp, TestDb};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use slopewatch::config::Config;
use slopewatch::config::{AlertSettings, AlertsSection, WebhookFormat, WebhookSection};
use slopewatch::model::RegressionStatus;
use slopewatch::store::Store;
use slopewatch::{app, intake, retention, AppState};
use std::path::Path;
use std::process::{Command, Output};
use time::OffsetDateTime;
use tower::ServiceExt;

fn slopewatch(args: &[&str], db: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_slopewatch")).args(args).env("DATABASE_URL", db).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn export(db: &TestDb, file: &Path) -> String {
    let out = slopewatch(&["export", "--output", file.to_str().unwrap()], &db.url);
    assert!(out.status.success(), "export failed: {}", text(&out.stderr));
    text(&out.stderr)
}

/// Imports `file` into `db` with its tokens, with a config file that names a webhook target.
fn import(db: &TestDb, file: &Path, dir: &Path) -> Output {
    let config = dir.join("import.toml");
    std::fs::write(
        &config,
        "[[webhooks]]\nname = \"ops\"\nurl = \"http://127.0.0.1:9/hook\"\nsecret = \"0123456789abcdef0123\"\n",
    )
    .unwrap();
    let input = file.to_str().unwrap();
    slopewatch(&["import", "--input", input, "--with-tokens", "--config", config.to_str().unwrap()], &db.url)
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

async fn get(router: &axum::Router, uri: &str) -> Value {
    let res = router.clone().oneshot(Request::get(uri).body(Body::empty()).unwrap()).await.unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(status, StatusCode::OK, "{uri}: {}", text(&bytes));
    serde_json::from_slice(&bytes).unwrap()
}

async fn submit(app: &TestApp, lineage: &str, version: &str, host: &str, slope: f64, day: u32) -> String {
    let mut run = RunShape::new(lineage, version).host(host).slope(slope).workloads(3).sizes(8).samples(5).json();
    run["started_at"] = json!(format!("2026-11-{day:02}T21:00:00.{:06}Z", day * 1111));
    run["workloads"][2]["metadata"] = json!({"sqlite_version": "3.46.0"});
    run["workloads"][0]["measurements"][0]["instructions"] = json!([1000, 1001, 1002, 1003, u64::MAX]);
    let w = &mut run["workloads"][1];
    w["build_hash"] = json!(format!("sha256:{}", "ab".repeat(32)));
    w["control"] = json!({"lineage": "musl-gcc", "version": "1.2.3", "medians": [{"size": 65536, "median": 100.0}]});
    w["profile"] = json!({"size": 65536, "total": 1000, "functions": [
        {"name": "strchr", "own": 900, "inclusive": 950, "callers": [{"name": "main", "calls": 3, "inclusive": 950}]}]});
    // The catalogue's probe of strchr, which every version holds.
    let probe = json!({"name": "contract.strchr.remaining", "size_unit": "bytes", "source_hash": "sha256:p0",
        "contract": {"expected": "1", "function": "strchr", "axis": "remaining"},
        "measurements": measurements(4096, 6, |_| 50.0, &[1.0, 1.01, 0.99])});
    run["workloads"].as_array_mut().unwrap().push(probe);
    let (status, body) = app.submit(&run).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    run["run_id"].as_str().unwrap().to_string()
}

async fn regression_id(store: &Store, lineage: &str, version: &str) -> i64 {
    let list = store.regressions(None).await.unwrap();
    let found = list.iter().find(|(r, _)| r.lineage == lineage && r.version == version);
    found.unwrap_or_else(|| panic!("no regression {lineage} {version}")).0.id
}

/// Two lineages over several versions and hosts, through the API: a regression that editors
/// acknowledge and a later version fixes, another they call a false alarm before a version that
/// would have fixed it, notes and links, a bisection, old runs whose raw samples were pruned, and
/// artifacts' exposure scans at the regressed version.
async fn fill(app: &TestApp) -> Vec<String> {
    let store = &app.db.store;
    let mut runs = vec![
        submit(app, "zig-cc-musl", "0.14.0", "build-01", 1.0, 1).await,
        submit(app, "zig-cc-musl", "0.15.0", "build-01", 1.0, 2).await,
        submit(app, "zig-cc-musl", "0.15.0", "build-02", 1.0, 3).await,
        submit(app, "gcc-glibc", "12.2.0", "build-01", 1.0, 4).await,
    ];
    let old = OffsetDateTime::now_utc();
    runs.push(submit(app, "zig-cc-musl", "0.16.0", "build-01", 2.0, 5).await);
    runs.push(submit(app, "zig-cc-musl", "0.16.0", "build-02", 2.0, 6).await);
    let zig = regression_id(store, "zig-cc-musl", "0.16.0").await;
    let now = OffsetDateTime::now_utc;
    assert!(intake::set_regression_status(store, zig, RegressionStatus::Acknowledged, "test-editor", now())
        .await
        .unwrap());
    assert!(store.add_regression_note(zig, "test-editor", "`strchr` measures the rest first.", now()).await.unwrap());
    runs.push(submit(app, "zig-cc-musl", "0.17.0", "build-01", 1.0, 7).await);
    record_bisection(app, zig, &runs[1]).await;
    let issue = "https://example.org/issues/1";
    assert!(intake::add_regression_link(store, zig, "test-admin", "Upstream issue", issue, now()).await.unwrap());
    runs.push(submit(app, "gcc-glibc", "13.1.0", "build-01", 2.0, 8).await);
    let gcc = regression_id(store, "gcc-glibc", "13.1.0").await;
    assert!(intake::set_regression_status(store, gcc, RegressionStatus::FalseAlarm, "test-editor", now())
        .await
        .unwrap());
    runs.push(submit(app, "gcc-glibc", "14.1.0", "build-02", 1.0, 9).await);
    record_scans(app).await;
    record_found_probes(app).await;

    let pruned = retention::prune_received_before(store, old, now()).await.unwrap();
    assert_eq!(pruned.runs, 4);
    let regressions = store.regressions(None).await.unwrap();
    let status = |id| regressions.iter().find(|(r, _)| r.id == id).unwrap().0.status.clone();
    assert_eq!((status(zig), status(gcc)), ("fixed".to_string(), "false_alarm".to_string()));
    runs
}

/// A bisection of regression `id`, whose good end's step names the stored run `run_id`.
async fn record_bisection(app: &TestApp, id: i64, run_id: &str) {
    let bisection = json!({
        "bisection_id": uuid::Uuid::new_v4(), "agent_version": "0.1.0", "started_at": "2026-11-06T08:00:00.123456Z",
        "seconds": 41.0, "host": {"name": "build-07", "cpu": "Test CPU", "kernel": "6.1.0", "arch": "x86_64"},
        "lineage": "zig-cc-musl", "workloads": ["workload-0", "workload-1"], "max_slope": 1.5,
        "good": "0.15.0", "bad": "0.16.0", "candidates": 412, "outcome": "found",
        "first_bad": "0.16.0-dev.1234+abc", "last_good": "0.16.0-dev.1233+def",
        "steps": [
            {"version": "0.15.0", "verdict": "good", "slope": 1.0, "workload": "workload-0", "seconds": 6.0, "run_id": run_id},
            {"version": "0.16.0", "verdict": "bad", "slope": 2.0, "workload": "workload-1", "seconds": 6.5},
            {"version": "0.16.0-dev.1000+ccc", "verdict": "skipped", "seconds": 1.5, "note": "did not build"},
            {"version": "0.16.0-dev.1233+def", "verdict": "good", "slope": 1.02, "seconds": 8.0},
            {"version": "0.16.0-dev.1234+abc", "verdict": "bad", "slope": 1.97, "seconds": 8.0},
        ],
    });
    let post = Request::post(format!("/api/v1/regressions/{id}/bisections"))
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {}", app.ingest_token))
        .body(Body::from(bisection.to_string()))
        .unwrap();
    let (status, body) = app.send(post).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// A scan of `artifact` judged by zig-cc-musl 0.16.0, scanned at `minute` past ten.
fn scan(artifact: &str, minute: u32, exposed: Value, reaches: &[&str]) -> Value {
    json!({
        "scan_id": uuid::Uuid::new_v4(), "agent_version": "0.1.0",
        "scanned_at": format!("2026-12-01T10:{minute:02}:00.123456789+01:00"),
        "artifact": artifact, "digest": format!("build-id:{}", "1a2b3c".repeat(4)),
        "lineage": "zig-cc-musl", "version": "0.16.0", "libc": "zig-musl", "linkage": "static",
        "exposed": exposed, "reaches": reaches,
    })
}

/// At zig-cc-musl 0.16.0: an artifact exposed to strchr (its older, clean scan received after its
/// newer one), one whose exposure is accepted, and a clean one.
async fn record_scans(app: &TestApp) {
    let strchr = |accepted: Option<&str>| {
        json!([{"function": "strchr", "breach": "over_contract", "verdict": "O(n) against its contract of O(1)",
            "call_sites": 4, "referenced": true, "callers": ["parse", "lex"], "accepted": accepted}])
    };
    for s in [
        scan("api-server", 30, strchr(None), &["memcpy", "strchr"]),
        scan("api-server", 10, json!([]), &["memcpy"]),
        scan("worker", 20, strchr(Some("only on trusted input")), &["strchr", "strspn"]),
        scan("cli-tool", 20, json!([]), &[]),
    ] {
        let post = Request::post("/api/v1/exposures")
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {}", app.ingest_token))
            .body(Body::from(s.to_string()))
            .unwrap();
        let (status, body) = app.send(post).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
}

/// Two probes a search found, one of them sent again by another agent (with the admin's token),
/// which keeps its first finding.
async fn record_found_probes(app: &TestApp) {
    let strstr = found_probe("strstr", "needle", "alphabet=1", "zig-cc-musl", "2026-12-02T10:30:00.123456789+01:00");
    let memmem = found_probe("memmem", "haystack", "period=3", "musl-gcc", "2026-12-02T11:00:00Z");
    let mut again = strstr.clone();
    again["toolchain"] = json!("gcc-glibc");
    for (token, probes) in [(&app.ingest_token, vec![strstr]), (&app.admin_token, vec![again, memmem])] {
        let post = Request::post("/api/v1/found-probes")
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {token}"))
            .body(Body::from(json!({ "probes": probes }).to_string()))
            .unwrap();
        let (status, body) = app.send(post).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
}

/// Every API answer a user reads, by URI.
async fn answers(router: &axum::Router, runs: &[String]) -> Vec<(String, Value)> {
    let mut uris: Vec<String> = [
        "/api/v1/runs?limit=1000",
        "/api/v1/workloads",
        "/api/v1/toolchains",
        "/api/v1/hosts",
        "/api/v1/regressions",
        "/api/v1/found-probes",
    ]
    .map(String::from)
    .into();
    uris.extend(runs.iter().map(|id| format!("/api/v1/runs/{id}")));
    for workload in ["workload-0", "workload-1", "workload-2"] {
        for lineage in ["zig-cc-musl", "gcc-glibc"] {
            uris.push(format!("/api/v1/series?workload={workload}&toolchain={lineage}"));
        }
    }
    let list = get(router, "/api/v1/regressions").await;
    for r in list["regressions"].as_array().unwrap() {
        uris.push(format!("/api/v1/regressions/{}", r["regression"]["id"]));
    }
    // Each version's page, with the artifacts scanned at it, and its contract verdicts.
    let toolchains = get(router, "/api/v1/toolchains").await;
    for t in toolchains["toolchains"].as_array().unwrap() {
        let (lineage, version) = (t["name"].as_str().unwrap(), t["version"].as_str().unwrap());
        uris.push(format!("/api/v1/toolchains/{lineage}/{version}"));
        uris.push(format!("/api/v1/toolchains/{lineage}/{version}/contracts"));
    }
    let mut out = Vec::new();
    for uri in uris {
        let answer = get(router, &uri).await;
        out.push((uri, answer));
    }
    out
}

/// Postgres keeps timestamps to the microsecond and SQLite to the nanosecond, so a history moved
/// from SQLite reads back to the microsecond.
fn to_microseconds(v: &mut Value) {
    match v {
        Value::String(s) => {
            let rfc3339 = &time::format_description::well_known::Rfc3339;
            if let Ok(t) = OffsetDateTime::parse(s, rfc3339) {
                *s = t.replace_nanosecond(t.nanosecond() / 1000 * 1000).unwrap().format(rfc3339).unwrap();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(to_microseconds),
        Value::Object(fields) => fields.values_mut().for_each(to_microseconds),
        _ => {}
    }
}

fn without_deliveries(answers: &[(String, Value)]) -> Vec<(String, Value)> {
    answers
        .iter()
        .map(|(uri, v)| {
            let mut v = v.clone();
            if let Some(d) = v.as_object_mut().and_then(|o| o.remove("deliveries")) {
                assert!(d.is_array());
            }
            (uri.clone(), v)
        })
        .collect()
}

fn deliveries(answers: &[(String, Value)]) -> usize {
    answers.iter().filter_map(|(_, v)| v["deliveries"].as_array()).map(Vec::len).sum()
}

/// Moves a history along `path`: filled through the API on the first backend, exported and imported
/// into a fresh store of each next one in turn. Every store answers every read as the first did.
async fn moves_and_reads_the_same(path: &[Backend]) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.jsonl");
    let source = TestApp::with_config(TestDb::new(path[0]).await, webhook_config()).await;
    let runs = fill(&source).await;
    let before = answers(&source.router, &runs).await;
    let bisected = |answers: &[(String, Value)]| {
        answers.iter().filter_map(|(_, v)| v["bisections"].as_array()).map(Vec::len).sum::<usize>()
    };
    let scanned = |answers: &[(String, Value)]| {
        let page = &answers.iter().find(|(uri, _)| uri.ends_with("/zig-cc-musl/0.16.0")).unwrap().1;
        let artifacts = page["artifacts"].as_array().unwrap();
        artifacts.iter().map(|a| format!("{} {} {}", a["artifact"], a["reached"], a["exposed"])).collect::<Vec<_>>()
    };
    assert_eq!(bisected(&before), 1);
    let scans = scanned(&before);
    assert_eq!(scans.len(), 3, "{scans:?}");
    assert!(scans[0].starts_with("\"api-server\" 2 [{"), "the newer scan, though the older came later: {scans:?}");
    assert!(deliveries(&before) > 0, "the source announced its regressions");
    let mut expected = without_deliveries(&before);
    // Postgres keeps microseconds: a history that passed through it reads to the microsecond.
    if path[0] == Backend::Sqlite && path.contains(&Backend::Postgres) {
        expected.iter_mut().for_each(|(_, v)| to_microseconds(v));
    }
    let mut db = source.db;
    for (hop, &to) in path[1..].iter().enumerate() {
        let report = export(&db, &file);
        assert!(
            report.contains(
                "exported 9 runs (4 with raw samples pruned), 4 regression edits and 3 tokens, with 1 bisections, 4 \
                 exposure scans and 2 found probes"
            ),
            "{report}"
        );
        let exported = std::fs::read_to_string(&file).unwrap();
        assert!(exported.contains("\"control\":{\"lineage\":\"musl-gcc\"") && exported.contains("\"profile\":{"));
        let target = TestDb::new(to).await;
        let out = import(&target, &file, dir.path());
        assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
        let summary = text(&out.stdout);
        assert!(summary.contains("imported 9 runs (4 with raw samples pruned), 0 were already there"), "{summary}");
        assert!(summary.contains("applied 4 regression edits") && summary.contains("added 3 tokens"), "{summary}");
        assert!(summary.contains("recorded 1 bisections, 0 were already there"), "{summary}");
        assert!(summary.contains("recorded 4 exposure scans, 0 were already there"), "{summary}");
        assert!(summary.contains("recorded 2 found probes, 0 were already there"), "{summary}");

        let reader = app(AppState::new(target.store.clone(), Config::default()));
        let after = answers(&reader, &runs).await;
        assert_eq!((bisected(&after), scanned(&after)), (1, scans.clone()), "bisections and scans came along");
        assert_eq!(deliveries(&after), 0, "an import records regressions without announcing them again");
        let mut got = without_deliveries(&after);
        if path[0] == Backend::Sqlite && path.contains(&Backend::Postgres) {
            got.iter_mut().for_each(|(_, v)| to_microseconds(v));
        }
        assert_eq!(expected.len(), got.len());
        for ((uri, e), (_, g)) in expected.iter().zip(&got) {
            assert_eq!(e, g, "{uri} reads differently after move {} to {to:?}", hop + 1);
        }
        let pruned = &after.iter().find(|(uri, _)| uri.ends_with(&runs[0])).unwrap().1;
        let workload = pruned["workloads"].as_array().unwrap().iter().find(|w| w["name"] == "workload-0");
        let sizes = &workload.unwrap_or_else(|| panic!("{pruned}"))["measurements"];
        assert!(pruned["samples_pruned_at"].is_string() && sizes[0]["samples"] == 5, "{pruned}");

        let again = import(&target, &file, dir.path());
        assert!(again.status.success(), "{}", text(&again.stderr));
        let summary = text(&again.stdout);
        assert!(summary.contains("imported 0 runs (0 with raw samples pruned), 9 were already there"), "{summary}");
        assert!(summary.contains("applied 0 regression edits, 4 were already there"), "{summary}");
        assert!(summary.contains("recorded 0 bisections, 1 were already there"), "{summary}");
        assert!(summary.contains("recorded 0 exposure scans, 4 were already there"), "{summary}");
        assert!(summary.contains("recorded 0 found probes, 2 were already there"), "{summary}");
        assert!(summary.contains("added 0 tokens, 3 names or hashes were already there"), "{summary}");
        let by = target.texts("SELECT submitted_by FROM found_probes ORDER BY function").await;
        assert_eq!(by, ["test-admin", "test-ingest"], "who found each first came along");
        let twice = without_deliveries(&answers(&reader, &runs).await);
        assert_eq!(twice, without_deliveries(&after), "a second import changes nothing");
        let stored = target.texts("SELECT CAST(COUNT(*) AS TEXT) FROM exposure_functions").await;
        assert_eq!(stored, ["5"], "each function of each scan once");

        // The agents' tokens came along: the source's ingest token submits to the new store.
        if hop + 2 == path.len() {
            let fresh = serde_json::to_vec(
                &RunShape::new("gcc-glibc", "14.1.0").host("build-03").workloads(3).sizes(8).samples(5).json(),
            )
            .unwrap();
            let post = Request::post("/api/v1/runs")
                .header("content-type", "application/json")
                .header("authorization", format!("Bearer {}", source.ingest_token))
                .body(Body::from(fresh))
                .unwrap();
            assert_eq!(reader.clone().oneshot(post).await.unwrap().status(), StatusCode::CREATED);
        }
        db = target;
    }
}

#[tokio::test]
async fn a_sqlite_history_moved_to_postgres_and_on_to_sqlite_reads_the_same() {
    moves_and_reads_the_same(&[Backend::Sqlite, Backend::Postgres, Backend::Sqlite]).await;
}

#[tokio::test]
async fn a_postgres_history_moved_to_sqlite_reads_the_same() {
    moves_and_reads_the_same(&[Backend::Postgres, Backend::Sqlite]).await;
}

/// The export's lines, and `file` rewritten from `lines`.
fn lines(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file).unwrap().lines().map(String::from).collect()
}

fn write(file: &Path, lines: &[String]) {
    std::fs::write(file, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

#[tokio::test]
async fn a_garbled_or_invalid_line_is_named_and_nothing_of_it_is_stored() {
    on_both_backends(|db| async move {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("history.jsonl");
        let source = TestApp::new(db).await;
        let mut runs = Vec::new();
        for (version, host) in [("0.14.0", "build-01"), ("0.15.0", "build-02"), ("0.16.0", "build-03")] {
            runs.push(submit(&source, "zig-cc-musl", version, host, 1.0, 1).await);
        }
        export(&source.db, &file);
        let good = lines(&file);
        // The header, three tokens, three runs, the closing line.
        assert_eq!(good.len(), 8, "{good:?}");
        assert!(good[4].contains(&runs[0]) && good[6].contains(&runs[2]));

        let mut bad = good.clone();
        let half = bad[5].len() / 2;
        bad[5].truncate(half);
        let mut run: Value = serde_json::from_str(&bad[6]).unwrap();
        run["run"]["workloads"][1]["measurements"][2]["samples_ns"][3] = json!(-5.0);
        bad[6] = run.to_string();
        write(&file, &bad);
        let target = TestDb::new(source.db.backend).await;
        let out = import(&target, &file, dir.path());
        assert!(!out.status.success());
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(stdout.contains("rejected line 6: the line is cut short"), "{stdout}");
        assert!(
            stdout.contains(
                "rejected line 7: invalid run: run.workloads[1].measurements[2].samples_ns[3]: must be positive"
            ),
            "{stdout}"
        );
        assert!(stdout.contains("imported 1 runs"), "{stdout}");
        assert!(stderr.contains("2 of 8 lines were rejected"), "{stderr}");
        let reader = app(AppState::new(target.store.clone(), Config::default()));
        get(&reader, &format!("/api/v1/runs/{}", runs[0])).await;
        for id in &runs[1..] {
            assert!(target.store.run(id.parse().unwrap()).await.unwrap().is_none(), "nothing of a rejected run");
        }
        let hosts = get(&reader, "/api/v1/hosts").await.to_string();
        assert!(hosts.contains("build-01") && !hosts.contains("build-03"), "{hosts}");

        // Fixed, the file imports the rest and skips what is there.
        write(&file, &good);
        let out = import(&target, &file, dir.path());
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains("imported 2 runs (0 with raw samples pruned), 1 were already there"));

        // A file cut short: the whole lines before the cut are imported, and the cut is reported.
        let mut cut = good[..7].to_vec();
        cut[6].truncate(100);
        let partial = dir.path().join("cut.jsonl");
        std::fs::write(&partial, cut.join("\n")).unwrap();
        let fresh = TestDb::new(source.db.backend).await;
        let out = import(&fresh, &partial, dir.path());
        assert!(!out.status.success());
        assert!(text(&out.stdout).contains("rejected line 7: the line is cut short"), "{}", text(&out.stdout));
        assert!(text(&out.stdout).contains("imported 2 runs"), "{}", text(&out.stdout));
        write(&partial, &good[..6]);
        let out = import(&TestDb::new(source.db.backend).await, &partial, dir.path());
        assert!(text(&out.stderr).contains("ends without its closing line"), "{}", text(&out.stderr));

        // Anything but an export is refused at its first line.
        std::fs::write(&partial, format!("{}\n", RunShape::new("gcc-glibc", "12.2.0").host("h").json())).unwrap();
        let out = import(&fresh, &partial, dir.path());
        assert!(!out.status.success());
        assert!(text(&out.stderr).contains("line 1: not a slopewatch export"), "{}", text(&out.stderr));
    })
    .await;
}

/// Runs with failed workloads, some of them old enough to be pruned: a crash after four sizes, a
/// build failure with none, a wrong result that opens a regression, a mixed version.
async fn fill_with_failures(app: &TestApp) -> Vec<String> {
    let failing = |mut run: Value, workload: usize, sizes: usize, failure: Value| {
        let w = &mut run["workloads"][workload];
        w["measurements"].as_array_mut().unwrap().truncate(sizes);
        w["failure"] = failure;
        run
    };
    let crash = json!({"kind": "crashed", "size": 1048576, "signal": 11, "detail": "Segmentation fault"});
    let build = json!({"kind": "build_failed", "exit_status": 1, "detail": "w.c:1:1: error: <b>'x'</b> undeclared"});
    let wrong =
        json!({"kind": "wrong_result", "size": 65536, "got": "-1", "expected": "9362", "detail": "end pointer"});
    let runs = [
        RunShape::new("zig-cc-musl", "0.14.0").workloads(3).sizes(8).samples(5).json(),
        failing(RunShape::new("zig-cc-musl", "0.15.0").workloads(3).sizes(8).samples(5).json(), 1, 4, crash),
        failing(
            RunShape::new("zig-cc-musl", "0.15.0").host("build-02").workloads(3).sizes(8).samples(5).json(),
            2,
            0,
            build,
        ),
        RunShape::new("gcc-glibc", "12.2.0").workloads(3).sizes(8).samples(5).json(),
    ];
    let mut ids = Vec::new();
    for mut run in runs {
        run["started_at"] = json!(format!("2026-11-{:02}T21:00:00Z", ids.len() + 1));
        let (status, body) = app.submit(&run).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        ids.push(run["run_id"].as_str().unwrap().to_string());
    }
    let old = OffsetDateTime::now_utc();
    for (day, run) in [
        (
            5,
            failing(
                RunShape::new("zig-cc-musl", "0.16.0").workloads(3).sizes(8).samples(5).json(),
                0,
                0,
                wrong.clone(),
            ),
        ),
        (
            6,
            failing(
                RunShape::new("zig-cc-musl", "0.16.0").host("build-02").workloads(3).sizes(8).samples(5).json(),
                0,
                0,
                wrong,
            ),
        ),
        (7, RunShape::new("zig-cc-musl", "0.16.0").host("build-03").workloads(3).sizes(8).samples(5).json()),
    ] {
        let mut run = run;
        run["started_at"] = json!(format!("2026-11-{day:02}T21:00:00Z"));
        let (status, body) = app.submit(&run).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        ids.push(run["run_id"].as_str().unwrap().to_string());
    }
    let pruned = retention::prune_received_before(&app.db.store, old, OffsetDateTime::now_utc()).await.unwrap();
    assert_eq!(pruned.runs, 4);
    ids
}

/// What a history with failures reads as: the runs, series and regressions, in the API and the
/// dashboard's series exports.
async fn failure_answers(router: &axum::Router, runs: &[String]) -> Vec<(String, Value)> {
    let mut out = answers(router, runs).await;
    for workload in ["workload-0", "workload-1", "workload-2"] {
        let uri = format!("/series/{workload}/zig-cc-musl/data.json");
        let answer = get(router, &uri).await;
        out.push((uri, answer));
    }
    out
}

#[tokio::test]
async fn a_history_with_failures_moved_to_sqlite_and_back_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let source = TestApp::new(TestDb::new(Backend::Postgres).await).await;
    let runs = fill_with_failures(&source).await;
    let expected = without_deliveries(&failure_answers(&source.router, &runs).await);
    let crashed = &expected.iter().find(|(uri, _)| uri.ends_with(&runs[1])).unwrap().1;
    assert!(crashed["samples_pruned_at"].is_string(), "{crashed}");
    let w = &crashed["workloads"][1];
    assert_eq!(w["failure"]["kind"], "crashed", "{crashed}");
    assert!(w["partial"] == true && w["measurements"][3]["samples"] == 5, "pruned, partial sizes kept: {w}");
    let series = &expected.iter().find(|(uri, _)| uri.contains("workload-0&toolchain=zig")).unwrap().1;
    assert_eq!(series["versions"][2]["failures"]["failed_runs"], 2, "{series}");

    let mut db = source.db;
    for (i, to) in [Backend::Sqlite, Backend::Postgres].into_iter().enumerate() {
        let file = dir.path().join(format!("history-{i}.jsonl"));
        let out = slopewatch(&["export", "--output", file.to_str().unwrap()], &db.url);
        assert!(out.status.success(), "export failed: {}", text(&out.stderr));
        let exported = std::fs::read_to_string(&file).unwrap();
        assert!(exported.contains("\"failure\":{\"kind\":\"crashed\""), "the pruned run carries its failure");
        assert!(exported.contains("\"failure\":{\"kind\":\"wrong_result\""), "a whole run carries its failure");
        let target = TestDb::new(to).await;
        let out = import(&target, &file, dir.path());
        assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
        assert!(text(&out.stdout).contains("imported 7 runs (4 with raw samples pruned)"), "{}", text(&out.stdout));
        let reader = app(AppState::new(target.store.clone(), Config::default()));
        let (mut e, mut got) = (expected.clone(), without_deliveries(&failure_answers(&reader, &runs).await));
        e.iter_mut().chain(got.iter_mut()).for_each(|(_, v)| to_microseconds(v));
        for ((uri, e), (_, g)) in e.iter().zip(&got) {
            assert_eq!(e, g, "{uri} reads differently after the move to {to:?}");
        }
        db = target;
    }
}

#[tokio::test]
async fn an_export_written_before_bisections_and_scans_were_carried_still_imports_whole() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("history.jsonl");
    let source = TestApp::new(TestDb::new(Backend::Sqlite).await).await;
    let runs = fill(&source).await;
    export(&source.db, &file);
    // As the format was before: no bisection or scan lines, and no count of them in the closing line.
    let old: Vec<String> = lines(&file)
        .into_iter()
        .filter(|l| !l.contains("\"kind\":\"bisection\"") && !l.contains("\"kind\":\"exposure\""))
        .map(|l| {
            let mut v: Value = serde_json::from_str(&l).unwrap();
            if v["kind"] == "end" {
                assert_eq!(v.as_object_mut().unwrap().remove("bisections"), Some(json!(1)));
                assert_eq!(v.as_object_mut().unwrap().remove("exposures"), Some(json!(4)));
            }
            v.to_string()
        })
        .collect();
    write(&file, &old);
    let target = TestDb::new(Backend::Postgres).await;
    let out = import(&target, &file, dir.path());
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let summary = text(&out.stdout);
    assert!(summary.contains("imported 9 runs") && summary.contains("recorded 0 bisections"), "{summary}");
    assert!(summary.contains("recorded 0 exposure scans"), "{summary}");
    assert!(!summary.contains("rejected"), "{summary}");
    let reader = app(AppState::new(target.store.clone(), Config::default()));
    assert_eq!(answers(&reader, &runs).await.len(), answers(&source.router, &runs).await.len());
}

#[tokio::test]
async fn a_runs_build_hash_control_and_profile_move_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let source = TestApp::new(TestDb::new(Backend::Sqlite).await).await;
    let mut run = RunShape::new("zig", "0.16.0").json();
    let w = &mut run["workloads"][0];
    w["build_hash"] = json!(format!("sha256:{}", "ab".repeat(32)));
    w["control"] = json!({"lineage": "musl-gcc", "version": "1.2.3", "medians": [{"size": 65536, "median": 100.0}]});
    w["profile"] =
        json!({"size": 65536, "total": 1000, "functions": [{"name": "strchr", "own": 900, "inclusive": 950}]});
    let (status, answer) = source.submit(&run).await;
    assert_eq!(status, 201, "{answer}");
    let run_id = answer["run_id"].as_str().unwrap().to_string();
    let file = dir.path().join("history.jsonl");
    export(&source.db, &file);
    let target = TestDb::new(Backend::Postgres).await;
    let out = import(&target, &file, dir.path());
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let reader = app(AppState::new(target.store.clone(), Config::default()));
    let moved = get(&reader, &format!("/api/v1/runs/{run_id}")).await;
    assert_eq!(moved["workloads"][0]["profile"], run["workloads"][0]["profile"], "{moved}");
    let exported = std::fs::read_to_string(&file).unwrap();
    assert!(exported.contains(&format!("\"build_hash\":\"sha256:{}\"", "ab".repeat(32))), "{exported}");
    assert!(exported.contains("\"control\":{\"lineage\":\"musl-gcc\""), "{exported}");
}

#[tokio::test]
async fn an_import_adds_the_exports_tokens_only_when_asked_and_the_export_is_its_owners_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let source = TestApp::new(TestDb::new(Backend::Sqlite).await).await;
    let (status, _) = source.submit(&RunShape::new("zig", "0.16.0").json()).await;
    assert_eq!(status, 201);
    let file = dir.path().join("history.jsonl");
    export(&source.db, &file);
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600,
        "the export is its owner's alone"
    );
    let target = TestDb::new(Backend::Sqlite).await;
    let out = slopewatch(&["import", "--input", file.to_str().unwrap()], &target.url);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("skipped the export's 3 tokens") && said.contains("--with-tokens"), "{said}");
    let reader = app(AppState::new(target.store.clone(), Config::default()));
    let refused = reader
        .clone()
        .oneshot(
            Request::post("/api/v1/runs")
                .header("authorization", format!("Bearer {}", source.ingest_token))
                .header("content-type", "application/json")
                .body(Body::from(RunShape::new("zig", "0.17.0").json().to_string()))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "the source's ingest token came nowhere");
    let out = slopewatch(&["import", "--input", file.to_str().unwrap(), "--with-tokens"], &target.url);
    assert!(text(&out.stdout).contains("added 3 tokens"), "{}", text(&out.stdout));
}
