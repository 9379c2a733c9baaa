//! Failures are data, end to end: the real agent builds the string workloads with gcc and with a
//! shim libc whose `strtol` breaks C11's end-pointer rule and whose `strchr` crashes on long
//! strings, submits the runs to a real server on both backends, and the server stores both
//! failures, opens one regression for them announced once (signed, in JSON and Slack), and
//! resolves it when a later version's libc is fixed.

use crate::helpers::process::agent_binary;
use crate::helpers::webhooks::{assert_signed, body_json, config, wait_for, Receiver};
use crate::helpers::{on_both_backends, serve, TestApp};
use serde_json::Value;
use slopewatch::config::WebhookFormat;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::sync::watch;

const LINEAGE: &str = "shim-libc";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("ingest-agent/tests/fixtures").join(name)
}

/// The runs of three versions of one lineage, measured once for both backends: 1.0 with the
/// host's libc, 1.1 with the broken shims linked ahead of it, 1.2 with the host's libc again.
struct Measured {
    _dir: tempfile::TempDir,
    runs: Vec<(&'static str, PathBuf)>,
}

fn measured() -> &'static Measured {
    static MEASURED: OnceLock<Measured> = OnceLock::new();
    MEASURED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let mut shims = Vec::new();
        for name in ["bad_endptr_strtol.c", "crashing_strchr.c"] {
            let obj = dir.path().join(name.replace(".c", ".o"));
            let ok = Command::new("gcc").args(["-O2", "-c"]).arg(fixture(name)).arg("-o").arg(&obj).status().unwrap();
            assert!(ok.success(), "cannot build {name}");
            shims.push(obj.display().to_string());
        }
        let mut runs = Vec::new();
        for (version, cc) in [("1.0", "gcc".to_string()), ("1.1", format!("gcc {}", shims.join(" "))), ("1.2", "gcc".into())] {
            let config = dir.path().join(format!("agent-{version}.toml"));
            let toml = format!(
                "[[toolchains]]\nname = \"{LINEAGE}\"\ncc = \"{cc}\"\nversion = \"{version}\"\nlibc = \"glibc (shim test)\"\n"
            );
            std::fs::write(&config, toml).unwrap();
            let out = dir.path().join(format!("run-{version}.json"));
            let result = Command::new(agent_binary())
                .args(["measure", "--workloads", "strtol,strchr,memchr", "--max-size", "256K", "--reps", "3"])
                .arg("--config")
                .arg(&config)
                .arg("--cache-dir")
                .arg(dir.path().join("cache"))
                .arg("--out")
                .arg(&out)
                .env_remove("SLOPEWATCH_CONFIG")
                .output()
                .unwrap();
            let text = format!("{}{}", String::from_utf8_lossy(&result.stdout), String::from_utf8_lossy(&result.stderr));
            eprintln!("--- measure {version}\n{text}");
            let broken = version == "1.1";
            assert_eq!(result.status.code(), Some(if broken { 1 } else { 0 }), "{text}");
            if broken {
                assert!(text.contains("✗ wrong result") && text.contains("✗ crashed"), "{text}");
            }
            runs.push((version, out));
        }
        Measured { _dir: dir, runs }
    })
}

/// The app over `db` sending its alerts to a receiver, one target per format, and an outbox
/// worker that runs until the returned sender is dropped.
async fn alerting(db: crate::helpers::TestDb, formats: &[WebhookFormat]) -> (Receiver, TestApp, watch::Sender<bool>) {
    let receiver = Receiver::up().await;
    let app = TestApp::with_config(db, config(&receiver, formats)).await;
    let (stop, stopped) = watch::channel(false);
    let settings = config(&receiver, formats).alerts;
    tokio::spawn(slopewatch::webhooks::sender::run(app.db.store.clone(), settings, app.metrics.clone(), stopped));
    (receiver, app, stop)
}

/// Submits a run file with the agent, as a build host does.
fn submit(server: &str, token: &str, file: &Path, spool: &Path) {
    let out = Command::new(agent_binary())
        .args(["submit", "--server", server, "--token", token, "--retry-base", "10ms"])
        .arg(file)
        .arg("--spool-dir")
        .arg(spool)
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains(" stored at /runs/"), "{text}");
    assert!(!text.contains("does not accept failures"), "this server takes failures whole: {text}");
    // A run stored with failed workloads says how many, so it reads apart from one not delivered.
    let run: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let workloads = run["workloads"].as_array().unwrap();
    let failed = workloads.iter().filter(|w| !w["failure"].is_null()).count();
    match failed {
        0 => assert!(!text.contains("workloads failed"), "{text}"),
        n => assert!(text.contains(&format!("({n} of {} workloads failed)", workloads.len())), "{text}"),
    }
}

fn workload<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap_or(&Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_and_a_crashing_libc_are_stored_alerted_once_and_resolved_by_the_fixed_one() {
    let runs = &measured().runs;
    // What the agent wrote: both failures with their facts, the sizes before the crash kept.
    let bad: Value = serde_json::from_slice(&std::fs::read(&runs[1].1).unwrap()).unwrap();
    let strtol = &workload(&bad, "strtol")["failure"];
    assert_eq!(strtol["kind"], "wrong_result", "{bad}");
    assert_eq!(strtol["got"], "-1", "the loop stops at the first strtol that moved end past nothing: {strtol}");
    let strchr = workload(&bad, "strchr");
    assert_eq!(strchr["failure"]["kind"], "crashed", "{bad}");
    assert_eq!(strchr["failure"]["signal"], 11);
    assert!(strchr["failure"]["size"].as_u64().unwrap() > 100_000);
    assert!(!strchr["measurements"].as_array().unwrap().is_empty(), "the sizes below the crash are kept");
    assert!(workload(&bad, "memchr").get("failure").is_none());
    let run_id = bad["run_id"].as_str().unwrap().to_string();

    on_both_backends(|db| {
        let run_id = run_id.clone();
        async move {
            let (receiver, app, _outbox) = alerting(db, &[WebhookFormat::Json, WebhookFormat::Slack]).await;
            let base = serve(app.router.clone()).await;
            let spool = tempfile::tempdir().unwrap();
            let token = app.ingest_token.clone();

            for (version, file) in &runs[..2] {
                let (base, token, file, spool) =
                    (base.clone(), token.clone(), file.clone(), spool.path().to_path_buf());
                tokio::task::spawn_blocking(move || submit(&base, &token, &file, &spool)).await.unwrap();
                eprintln!("submitted {version}");
            }

            // The run is stored with both failures, the passing workload fitted as usual.
            let (status, stored) = app.get(&format!("/api/v1/runs/{run_id}")).await;
            assert_eq!(status, 200, "{stored}");
            let stored_text = stored.to_string();
            assert!(stored_text.contains("wrong_result") && stored_text.contains("crashed"), "{stored}");

            // One regression at 1.1 after 1.0, its two workloads there for failures.
            let regressions = app.db.store.regressions(None).await.unwrap();
            assert_eq!(regressions.len(), 1, "{regressions:?}");
            let (r, members) = &regressions[0];
            assert_eq!(
                (r.lineage.as_str(), r.version.as_str(), r.previous_version.as_deref()),
                (LINEAGE, "1.1", Some("1.0"))
            );
            let mut failing: Vec<(&str, &str, Option<&str>)> = members
                .iter()
                .map(|m| (m.workload.as_str(), m.reason.as_str(), m.failure.as_ref().map(|f| f.kind.as_str())))
                .collect();
            failing.sort();
            assert_eq!(failing, [("strchr", "failure", Some("crashed")), ("strtol", "failure", Some("wrong_result"))]);

            // The overview's cells and the series page say so.
            let overview = app.get("/").await.1;
            let overview = overview.as_str().unwrap_or_default();
            for kind in ["wrong result", "crashed"] {
                assert!(overview.contains(&format!("✗</span> {kind}")), "the overview shows ✗ {kind}: {overview}");
            }
            let series = app.get(&format!("/series/strtol/{LINEAGE}")).await.1;
            let series = series.as_str().unwrap_or_default();
            assert!(series.contains("<h2 id=\"failures\">Failures</h2>"), "{series}");
            assert!(series.contains("failed in every run") && series.contains("got -1"), "{series}");

            // Announced once per target, signed, with each failure's kind and detail.
            wait_for(Duration::from_secs(20), "the opening", || receiver.delivered().len() >= 2).await;
            let (base2, token2, file, spool2) =
                (base.clone(), token.clone(), runs[2].1.clone(), spool.path().to_path_buf());
            tokio::task::spawn_blocking(move || submit(&base2, &token2, &file, &spool2)).await.unwrap();
            wait_for(Duration::from_secs(20), "the resolution", || receiver.delivered().len() >= 4).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            let seen = receiver.delivered();
            assert_eq!(seen.len(), 4, "one opening and one resolution per target: {seen:?}");
            seen.iter().for_each(assert_signed);
            let json: Vec<Value> = seen.iter().map(body_json).filter(|b| b.get("event").is_some()).collect();
            let events: Vec<&str> = json.iter().map(|b| b["event"].as_str().unwrap()).collect();
            assert_eq!(events, ["regression.opened", "regression.resolved"]);
            let opened = &json[0];
            let kinds: Vec<(&str, &str)> = opened["workloads"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| (w["reason"].as_str().unwrap(), w["failure"]["kind"].as_str().unwrap()))
                .collect();
            assert_eq!(kinds, [("failure", "crashed"), ("failure", "wrong_result")]);
            let slack: Vec<String> =
                seen.iter().map(body_json).filter_map(|b| b["text"].as_str().map(str::to_string)).collect();
            assert!(slack[0].starts_with(&format!(":rotating_light: *Failure in {LINEAGE} 1.1*")), "{slack:?}");
            // One line per root cause: each loop's own function, and how it broke.
            assert!(slack[0].contains("• `strtol` gives a wrong result (wrong result at "), "{slack:?}");
            assert!(slack[0].contains("• `strchr` crashes (crashed at "), "{slack:?}");

            // Resolved by the fixed libc.
            let regressions = app.db.store.regressions(None).await.unwrap();
            let r = &regressions[0].0;
            assert_eq!((r.status.as_str(), r.fixed_version.as_deref()), ("fixed", Some("1.2")));
            let page = app.get(&format!("/regressions/{}", r.id)).await.1;
            let page = page.as_str().unwrap_or_default();
            assert!(page.contains("✗</span> wrong result") && page.contains("passes at 1.2"), "{page}");
            let (_, md) = app.get(&format!("/regressions/{}/postmortem.md", r.id)).await;
            let md = md.as_str().unwrap_or_default();
            assert!(md.contains("## Failures") && md.contains("strtol: wrong result"), "{md}");
        }
    })
    .await;
}

/// `strtol` measured at six sizes growing as `size^slope`, failing with `failure` when given.
fn strtol(slope: f64, sizes: usize, failure: Option<Value>) -> Value {
    let measurements = crate::builders::measurements(65536, sizes, |n| 0.5 * n.powf(slope), &[1.0, 1.01, 0.99]);
    let mut w = serde_json::json!({"name": "strtol", "size_unit": "bytes", "measurements": measurements});
    if let Some(f) = failure {
        w["failure"] = f;
    }
    w
}

fn wrong_result() -> Value {
    serde_json::json!({"kind": "wrong_result", "size": 4194304, "got": "-1", "expected": "599186",
                       "detail": "wrong result: -1 hits, expected 599186"})
}

/// The events delivered so far, in order, by their `event` field (the JSON target's bodies).
fn events(receiver: &Receiver) -> Vec<String> {
    receiver.delivered().iter().map(body_json).filter_map(|b| b["event"].as_str().map(str::to_string)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flaky_host_pages_once_and_partial_sizes_never_judge_a_slope() {
    on_both_backends(|db| async move {
        let (receiver, app, _outbox) = alerting(db, &[WebhookFormat::Json]).await;
        let post = |version: &'static str, host: &'static str, workload: Value| {
            let app = &app;
            async move {
                let (status, body) = app.submit(&crate::builders::run_of("flaky", version, host, vec![workload])).await;
                assert_eq!(status, 201, "{body}");
            }
        };
        post("1.0", "host-a", strtol(1.0, 6, None)).await;
        post("1.0", "host-b", strtol(1.0, 6, None)).await;
        // host-a fails 1.1 first, with sizes that read quadratic before the failure: every run of
        // 1.1 so far failed, so a failure regression opens; the partial slope opens nothing.
        post("1.1", "host-a", strtol(2.0, 4, Some(wrong_result()))).await;
        wait_for(Duration::from_secs(20), "the opening", || !events(&receiver).is_empty()).await;
        let regressions = app.db.store.regressions(None).await.unwrap();
        assert_eq!(regressions.len(), 1);
        let members: Vec<&str> = regressions[0].1.iter().map(|m| m.reason.as_str()).collect();
        assert_eq!(members, ["failure"], "partial sizes never judge a slope");
        // host-b passes 1.1, then 1.2 fails on host-a only: mixed versions decide nothing.
        post("1.1", "host-b", strtol(1.0, 6, None)).await;
        post("1.2", "host-a", strtol(1.0, 2, Some(wrong_result()))).await;
        post("1.2", "host-b", strtol(1.0, 6, None)).await;
        let r = &app.db.store.regressions(None).await.unwrap()[0].0;
        assert_eq!((r.version.as_str(), r.status.as_str()), ("1.1", "open"), "still open, not paged again");
        // Every run of 1.3 passes: resolved.
        post("1.3", "host-a", strtol(1.0, 6, None)).await;
        wait_for(Duration::from_secs(20), "the resolution", || events(&receiver).len() >= 2).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(events(&receiver), ["regression.opened", "regression.resolved"]);
        let r = &app.db.store.regressions(None).await.unwrap()[0].0;
        assert_eq!((r.status.as_str(), r.fixed_version.as_deref()), ("fixed", Some("1.3")));
        // The page says on how many runs and hosts it failed.
        let detail = app.db.store.regression(r.id).await.unwrap().unwrap();
        let opened = detail.events.iter().find(|e| e.kind == "opened").unwrap();
        assert_eq!(
            opened.detail,
            "strtol failed at 1.1: wrong result at 4 MiB: got -1, expected 599186 (failed in 1 of 1 runs, on 1 of 1 hosts)"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_version_measured_late_opens_its_regression_already_resolved() {
    on_both_backends(|db| async move {
        let (receiver, app, _outbox) = alerting(db, &[WebhookFormat::Json]).await;
        for (version, workload) in [
            ("1.0", strtol(1.0, 6, None)),
            ("1.2", strtol(1.0, 6, None)),
            ("1.1", strtol(1.0, 0, Some(wrong_result()))),
        ] {
            let (status, body) = app.submit(&crate::builders::run_of("late", version, "host-a", vec![workload])).await;
            assert_eq!(status, 201, "{body}");
        }
        wait_for(Duration::from_secs(20), "both events", || events(&receiver).len() >= 2).await;
        assert_eq!(events(&receiver), ["regression.opened", "regression.resolved"]);
        let r = &app.db.store.regressions(None).await.unwrap()[0].0;
        assert_eq!(
            (r.version.as_str(), r.previous_version.as_deref(), r.fixed_version.as_deref()),
            ("1.1", Some("1.0"), Some("1.2"))
        );
    })
    .await;
}
