//! Exposure scans of built artifacts, on Postgres and on SQLite: `POST /api/v1/exposures` stores a
//! scan once whatever the retries, refuses a bad one naming the field, and takes ingest tokens
//! only; `GET /api/v1/toolchains/{lineage}/{version}/contracts` answers the catalogue's verdicts at
//! a version; the version's page, JSON and release note list the latest scan of each artifact worst
//! first (in headless Chromium too, names escaped); and a regression or finding names the
//! artifacts whose latest scan reaches a function it names.

use crate::builders::{measurements, run_of};
use crate::helpers::chromium::{output_dir, Chromium};
use crate::helpers::webhooks::{config, Receiver};
use crate::helpers::{on_both_backends, Backend, TestApp, TestDb};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};
use slopewatch::config::WebhookFormat;
use slopewatch_core::exposure::{Breakage, ContractVerdicts, FunctionVerdict};
use slopewatch_core::probe::ProbeState;
use slopewatch_core::wire::FailureKind;

/// An artifact name a page must escape, and how askama writes it (a browser's DOM writes it with
/// `&lt;` and `&gt;`).
const HOSTILE: &str = "api-server<script>x</script>";
const HOSTILE_HTML: &str = "api-server&#60;script&#62;x&#60;/script&#62;";

/// A scan of `artifact` judged by `lineage` `version`, scanned at `at` (a minute of the day).
fn scan(lineage: &str, version: &str, artifact: &str, at: u32, exposed: Vec<Value>, reaches: &[&str]) -> Value {
    json!({
        "scan_id": uuid::Uuid::new_v4(), "agent_version": "0.1.0",
        "scanned_at": format!("2026-12-01T10:{at:02}:00+01:00"),
        "artifact": artifact, "digest": format!("build-id:{}", "1a2b3c".repeat(4)),
        "lineage": lineage, "version": version, "libc": "zig-musl", "linkage": "static",
        "exposed": exposed, "reaches": reaches,
    })
}

/// `strspn` over its contract, called from four sites.
fn strspn(accepted: Option<&str>) -> Value {
    let mut f = json!({"function": "strspn", "breach": "over_contract",
        "verdict": "O(n) against its contract of O(1) (contract.strspn.remaining)", "call_sites": 4,
        "callers": ["jsonTranslateTextToBlob", "sqlite3DecOrHexToI64"]});
    if let Some(reason) = accepted {
        f["accepted"] = json!(reason);
    }
    f
}

async fn post(app: &TestApp, token: Option<&str>, content_type: &str, body: Vec<u8>) -> (StatusCode, Value) {
    let mut req = Request::post("/api/v1/exposures").header("content-type", content_type);
    if let Some(token) = token {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    app.send(req.body(Body::from(body)).unwrap()).await
}

async fn submit(app: &TestApp, scan: &Value) -> (StatusCode, Value) {
    post(app, Some(&app.ingest_token.clone()), "application/json", serde_json::to_vec(scan).unwrap()).await
}

async fn count(app: &TestApp, table: &str) -> String {
    app.db.texts(&format!("SELECT CAST(COUNT(*) AS TEXT) FROM {table}")).await.remove(0)
}

/// A run of `lineage` `version`: SQLite's JSON workload (quadratic where `bad`, with a profile
/// whose cost went to `c.string.strspn`) and the catalogue's strspn probe, over its O(1) contract
/// where `bad`.
fn run(lineage: &str, version: &str, bad: bool) -> Value {
    let own = if bad { 1_222_500 } else { 100 };
    let profile = json!({"size": 1000, "total": own + 30_000, "functions": [
        {"name": "c.string.strspn", "own": own, "inclusive": own,
         "callers": [{"name": "jsonTranslateTextToBlob", "calls": 3000, "inclusive": own}]}]});
    let cost = move |n: f64| if bad { 1000.0 * n + 0.5 * n * n } else { 1000.0 * n };
    let json_each = json!({"name": "sqlite-json-each.spaced", "size_unit": "records", "source_hash": "sha256:s0",
        "measurements": measurements(1000, 6, cost, &[1.0, 1.02, 0.98]), "profile": profile});
    let probe_cost = move |n: f64| if bad { 10.0 * n } else { 50.0 };
    let probe = json!({"name": "contract.strspn.remaining", "size_unit": "bytes", "source_hash": "sha256:p0",
        "contract": {"expected": "1", "function": "strspn", "axis": "remaining"},
        "measurements": measurements(4096, 6, probe_cost, &[1.0, 1.01, 0.99])});
    run_of(lineage, version, "build-01", vec![json_each, probe])
}

/// Zig 0.15.2 holding strspn and 0.16.0 breaking it (which opens a regression): the versions the
/// scans are judged by.
async fn seed_versions(app: &TestApp) {
    for (version, bad) in [("0.15.2", false), ("0.16.0", true)] {
        let (status, body) = app.submit(&run("zig-cc-musl", version, bad)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
}

/// At 0.16.0: the hostile-named artifact exposed (its older, clean scan submitted after its newer
/// one), a worker whose exposure is accepted, and a clean tool.
async fn seed_scans(app: &TestApp) {
    let newer = scan("zig-cc-musl", "0.16.0", HOSTILE, 30, vec![strspn(None)], &["memcpy", "strspn"]);
    let older = scan("zig-cc-musl", "0.16.0", HOSTILE, 10, vec![], &["memcpy"]);
    let accepted = strspn(Some("only on trusted input, until 0.16.1"));
    let worker = scan("zig-cc-musl", "0.16.0", "worker", 20, vec![accepted], &["strspn"]);
    let clean = scan("zig-cc-musl", "0.16.0", "cli-tool", 20, vec![], &["memcpy"]);
    for s in [newer, older, worker, clean] {
        let (status, body) = submit(app, &s).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
}

#[tokio::test]
async fn a_scan_is_stored_once_and_a_different_one_under_its_id_conflicts() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let s = scan("zig-cc-musl", "0.16.0", "api-server", 0, vec![strspn(None)], &["memcpy", "strspn", "strspn"]);
        let (status, first) = submit(&app, &s).await;
        assert_eq!(status, StatusCode::CREATED, "{first}");
        assert_eq!(first["scan_id"], s["scan_id"]);
        assert_eq!(first["created"], true);
        assert_eq!(first["url"], "/toolchains/zig-cc-musl/0.16.0#artifacts");
        let (status, again) = submit(&app, &s).await;
        assert_eq!((status, &again["created"]), (StatusCode::OK, &json!(false)), "{again}");
        assert_eq!(again["url"], first["url"]);
        assert_eq!(count(&app, "exposure_scans").await, "1");
        assert_eq!(count(&app, "exposure_functions").await, "2", "strspn once, memcpy once");
        let mut changed = s.clone();
        changed["exposed"][0]["call_sites"] = json!(5);
        let (status, conflict) = submit(&app, &changed).await;
        assert_eq!(status, StatusCode::CONFLICT, "{conflict}");
        assert!(conflict["error"]["message"].as_str().unwrap().contains("different content"), "{conflict}");
        assert_eq!(count(&app, "exposure_functions").await, "2", "nothing of it stored");
        assert!(app.metrics().await.contains("slopewatch_exposure_scans_stored_total 1\n"));
    })
    .await;
}

#[tokio::test]
async fn a_bad_scan_is_refused_naming_the_field_and_only_ingest_tokens_may_submit() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let good = scan("zig-cc-musl", "0.16.0", "api-server", 0, vec![strspn(None)], &["strspn"]);
        for (pointer, value, field) in [
            ("/digest", json!("md5:abc"), "digest"),
            ("/artifact", json!(""), "artifact"),
            ("/reaches", json!(["memcpy"]), "exposed[0].function"),
            ("/exposed/0/callers/0", json!("bad\u{7}name"), "exposed[0].callers[0]"),
            ("/linkage", json!("both"), "linkage"),
            ("/scan_id", json!("not-a-uuid"), "scan_id"),
        ] {
            let mut bad = good.clone();
            *bad.pointer_mut(pointer).unwrap() = value;
            let (status, answer) = submit(&app, &bad).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{pointer}: {answer}");
            assert_eq!(answer["error"]["code"], "invalid_field", "{answer}");
            assert_eq!(answer["error"]["field"], field, "{pointer}: {answer}");
        }
        // A scan dated ahead would stay its artifact's latest and hide every later one.
        let mut pinned = good.clone();
        pinned["scanned_at"] = json!("9999-12-31T23:59:59Z");
        let (status, answer) = submit(&app, &pinned).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
        assert_eq!(answer["error"]["field"], "scanned_at", "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains("at most 5 are allowed"), "{answer}");
        let mut skewed = good.clone();
        let soon = time::OffsetDateTime::now_utc() + time::Duration::minutes(2);
        skewed["scanned_at"] = json!(soon.format(&time::format_description::well_known::Rfc3339).unwrap());
        skewed["scan_id"] = json!(uuid::Uuid::new_v4().to_string());
        let (status, answer) = submit(&app, &skewed).await;
        assert_eq!(status, StatusCode::CREATED, "a clock two minutes ahead is a clock: {answer}");
        // A scan received after it is the artifact's latest, though dated earlier: a scan's time
        // is capped at its arrival.
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        let mut real = good.clone();
        real["scan_id"] = json!(uuid::Uuid::new_v4().to_string());
        let now = time::OffsetDateTime::now_utc();
        real["scanned_at"] = json!(now.format(&time::format_description::well_known::Rfc3339).unwrap());
        assert_eq!(submit(&app, &real).await.0, StatusCode::CREATED);
        let latest = app.db.store.version_exposures("zig-cc-musl", "0.16.0", 10).await.unwrap();
        let ids: Vec<String> = latest.iter().map(|a| a.scan_id.to_string()).collect();
        assert_eq!(ids, [real["scan_id"].as_str().unwrap()], "the later arrival is latest");
        let mut unknown = good.clone();
        unknown["exposed"][0]["severity"] = json!("high");
        let (status, answer) = submit(&app, &unknown).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains("severity"), "{answer}");

        let body = serde_json::to_vec(&good).unwrap();
        let (status, answer) = post(&app, None, "application/json", body.clone()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
        let editor = app.editor_token.clone();
        let (status, answer) = post(&app, Some(&editor), "application/json", body.clone()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
        assert_eq!(answer["error"]["message"], "this token has scope editor; this needs ingest");
        let admin = app.admin_token.clone();
        let ingest = app.ingest_token.clone();
        assert_eq!(post(&app, Some(&ingest), "text/plain", body.clone()).await.0, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let mut huge = good.clone();
        huge["agent_version"] = json!("x".repeat(600 * 1024));
        let (status, answer) = post(&app, Some(&ingest), "application/json", serde_json::to_vec(&huge).unwrap()).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains("524288 bytes"), "{answer}");
        assert_eq!(count(&app, "exposure_scans").await, "2", "the two accepted, nothing refused");
        let (status, answer) = post(&app, Some(&admin), "application/json", body).await;
        assert_eq!(status, StatusCode::CREATED, "an admin may submit: {answer}");
    })
    .await;
}

/// A probe of the catalogue measured at 8 sizes from 1 KiB, costing `cost(size)`.
fn probe(name: &str, expected: &str, cost: impl Fn(f64) -> f64) -> Value {
    let mut parts = name.split('.').skip(1);
    let (function, axis) = (parts.next().unwrap(), parts.next().unwrap());
    json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:c0",
           "measurements": measurements(1024, 8, cost, &[1.0, 1.01, 0.99]),
           "contract": {"expected": expected, "function": function, "axis": axis}})
}

/// A probe that failed with `failure` after two sizes.
fn failing(name: &str, expected: &str, failure: Value) -> Value {
    let mut w = probe(name, expected, |_| 900.0);
    w["measurements"].as_array_mut().unwrap().truncate(2);
    w["failure"] = failure;
    w
}

#[tokio::test]
async fn the_contracts_endpoint_answers_each_probe_at_a_version_as_the_contracts_page_judges_it() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let linear = |n: f64| 900.0 + 4.0 * n;
        let workloads = vec![
            probe("contract.strchr.remaining", "1", linear),
            probe("contract.strchr.distance", "n", linear),
            failing(
                "contract.memchr.remaining",
                "1",
                json!({"kind": "crashed", "size": 4096, "signal": 11,
                "detail": "read past its bound of 2 bytes"}),
            ),
            failing(
                "contract.memccpy.bound",
                "n",
                json!({"kind": "wrong_result", "size": 4096, "got": "0x2",
                "expected": "0x1", "detail": "memccpy returned the index of c"}),
            ),
            json!({"name": "contract.rawmemchr.distance", "size_unit": "bytes", "source_hash": "sha256:c0",
                   "measurements": [], "not_provided": true,
                   "contract": {"expected": "n", "function": "rawmemchr", "axis": "distance"}}),
        ];
        let (status, body) = app.submit(&run_of("zig-cc-musl", "0.16.0", "build-01", workloads)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let held = vec![probe("contract.strchr.remaining", "1", |_| 900.0)];
        assert_eq!(app.submit(&run_of("musl-gcc", "1.2.5", "build-01", held)).await.0, StatusCode::CREATED);

        let (status, answer) = app.get("/api/v1/toolchains/zig-cc-musl/0.16.0/contracts").await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let verdicts: ContractVerdicts = serde_json::from_value(answer.clone()).unwrap();
        assert_eq!((verdicts.lineage.as_str(), verdicts.version.as_str()), ("zig-cc-musl", "0.16.0"));
        assert_eq!(verdicts.libc.as_deref(), Some("musl 1.2.5"));
        let standing: Vec<(&str, ProbeState)> =
            verdicts.probes.iter().map(|p| (p.workload.as_str(), p.state)).collect();
        assert_eq!(
            standing,
            [
                ("contract.memccpy.bound", ProbeState::Failed(FailureKind::WrongResult)),
                ("contract.memchr.remaining", ProbeState::Failed(FailureKind::Crashed)),
                ("contract.rawmemchr.distance", ProbeState::NotProvided),
                ("contract.strchr.distance", ProbeState::Held),
                ("contract.strchr.remaining", ProbeState::Over),
            ],
            "{answer}"
        );
        // As agents of the release before read them: a state word, and a failed one's kind beside it.
        let words: Vec<(&str, Option<&str>)> = answer["probes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["state"].as_str().unwrap(), p.get("failure").map(|f| f.as_str().unwrap())))
            .collect();
        assert_eq!(
            words,
            [
                ("failed", Some("wrong_result")),
                ("failed", Some("crashed")),
                ("not_provided", None),
                ("held", None),
                ("over", None),
            ],
            "{answer}"
        );
        let over = verdicts.probes.iter().find(|p| p.workload == "contract.strchr.remaining").unwrap();
        assert_eq!((over.function.as_str(), answer["probes"][4]["expected"].as_str()), ("strchr", Some("1")));
        assert_eq!(answer["probes"][4]["class"], "n", "{answer}");
        // What the agent makes of them, with the memchr probe guarded by an unreadable page.
        let of = |f: &str| FunctionVerdict::of(f, &verdicts.probes, |w| w == "contract.memchr.remaining");
        assert!(matches!(of("strchr"), Some(FunctionVerdict::Breaks { breach: Breakage::OverContract, .. })));
        assert!(matches!(of("memchr"), Some(FunctionVerdict::Breaks { breach: Breakage::ReadsPastBound, .. })));
        assert_eq!(of("rawmemchr"), Some(FunctionVerdict::NotProvided));

        let (_, other) = app.get("/api/v1/toolchains/musl-gcc/1.2.5/contracts").await;
        assert_eq!(other["probes"].as_array().map(Vec::len), Some(1), "only what that version measured: {other}");
        assert_eq!(other["probes"][0]["state"], "held");
        for (uri, says) in [
            ("/api/v1/toolchains/zig-cc-musl/9.9.9/contracts", "zig-cc-musl has no version \"9.9.9\" that reported"),
            ("/api/v1/toolchains/no-such/0.16.0/contracts", "no toolchain lineage named \"no-such\" has reported"),
        ] {
            let (status, answer) = app.get(uri).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{uri}: {answer}");
            assert!(answer["error"]["message"].as_str().unwrap().starts_with(says), "{answer}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_version_lists_the_latest_scan_of_each_artifact_worst_first() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        seed_versions(&app).await;
        seed_scans(&app).await;
        let (status, answer) = app.get("/api/v1/toolchains/zig-cc-musl/0.16.0").await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let artifacts = answer["artifacts"].as_array().unwrap();
        let names: Vec<&str> = artifacts.iter().map(|a| a["artifact"].as_str().unwrap()).collect();
        assert_eq!(names, [HOSTILE, "worker", "cli-tool"], "exposed, then accepted, then clean: {answer}");
        let exposed = &artifacts[0]["exposed"][0];
        assert_eq!((&exposed["function"], &exposed["call_sites"]), (&json!("strspn"), &json!(4)), "{answer}");
        assert_eq!(artifacts[0]["reached"], 2, "the newer scan, though the older came later: {answer}");
        assert_eq!(artifacts[0]["scanned_at"], "2026-12-01T09:30:00Z");
        assert_eq!(artifacts[1]["exposed"][0]["accepted"], "only on trusted input, until 0.16.1");
        assert_eq!(artifacts[2]["exposed"], json!([]));
        let (_, before) = app.get("/api/v1/toolchains/zig-cc-musl/0.15.2").await;
        assert_eq!(before["artifacts"], json!([]), "scans are of the version that judged them");

        let (status, page) = app.get("/toolchains/zig-cc-musl/0.16.0").await;
        assert_eq!(status, StatusCode::OK);
        let page = page.as_str().unwrap();
        let section = &page[page.find("<h2 id=\"artifacts\">Artifacts scanned at this version</h2>").expect(page)..];
        assert!(!page.contains("<script>x</script>"), "names are escaped");
        let escaped = section.find(HOSTILE_HTML).expect(section);
        assert!(escaped < section.find("worker").unwrap() && section.find("worker") < section.find("cli-tool"));
        assert!(section.contains("Exposed: reaches 1 function this version breaks"), "{section}");
        assert!(section.contains("O(n) against its contract of O(1) (contract.strspn.remaining)"), "{section}");
        assert!(section.contains("4 call sites") && section.contains("jsonTranslateTextToBlob, sqlite3DecOrHexToI64"));
        assert!(section.contains("accepted: only on trusted input, until 0.16.1"), "{section}");
        assert!(section.contains("Clean: reaches 1 function of the catalogue, none broken here"), "{section}");
        assert!(section.contains("build-id:1a2b3c1a2b3c…") && section.contains("zig-musl, static"), "{section}");

        let (_, md) = app.get("/toolchains/zig-cc-musl/0.16.0?format=md").await;
        let md = md.as_str().unwrap();
        assert!(md.contains("## Artifacts scanned at this version"), "{md}");
        assert!(md.contains("- **api-server&lt;script&gt;x&lt;/script&gt;**"), "{md}");
        assert!(md.contains("strspn over contract: O(n) against its contract of O(1)"), "{md}");
    })
    .await;
}

#[tokio::test]
async fn a_regression_and_a_finding_name_the_artifacts_that_reach_their_functions() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        seed_versions(&app).await;
        // A lineage whose first version already breaks strspn: a finding.
        assert_eq!(app.submit(&run("zig-next", "0.17.0", true)).await.0, StatusCode::CREATED);
        let exposed = scan("zig-cc-musl", "0.16.0", HOSTILE, 30, vec![strspn(None)], &["memcpy", "strspn"]);
        let worker = scan("zig-cc-musl", "0.15.2", "worker", 0, vec![], &["strspn"]);
        // A tool that reached strspn, and no longer does in its latest scan.
        let was = scan("zig-cc-musl", "0.15.2", "old-tool", 5, vec![], &["strspn"]);
        let now = scan("zig-cc-musl", "0.16.0", "old-tool", 40, vec![], &["memcpy"]);
        let unrelated = scan("zig-cc-musl", "0.16.0", "unrelated", 0, vec![], &["memcpy"]);
        let elsewhere = scan("gcc-glibc", "12.2.0", "glibc-tool", 0, vec![], &["strspn"]);
        let next = scan("zig-next", "0.17.0", "next-tool", 0, vec![strspn(None)], &["strspn"]);
        for s in [exposed, worker, was, now, unrelated, elsewhere, next] {
            assert_eq!(submit(&app, &s).await.0, StatusCode::CREATED);
        }
        let (_, list) = app.get("/api/v1/regressions").await;
        let of = |lineage: &str| {
            let all = list["regressions"].as_array().unwrap();
            let r = all.iter().find(|r| r["regression"]["lineage"] == lineage).unwrap_or_else(|| panic!("{list}"));
            r["regression"]["id"].as_i64().unwrap()
        };
        let (regression, finding) = (of("zig-cc-musl"), of("zig-next"));

        let (_, detail) = app.get(&format!("/api/v1/regressions/{regression}")).await;
        let named = detail["artifacts"].as_array().unwrap_or_else(|| panic!("{detail}"));
        let sentences: Vec<&str> = named.iter().map(|a| a["sentence"].as_str().unwrap()).collect();
        assert_eq!(
            sentences,
            [
                format!("{HOSTILE} reaches strspn (4 call sites: jsonTranslateTextToBlob, sqlite3DecOrHexToI64), scanned at 0.16.0"),
                "worker reaches strspn, scanned at 0.15.2".to_string(),
            ],
            "{detail}"
        );
        assert_eq!(named[0]["breach"], "over_contract");
        assert_eq!(named[1]["breach"], Value::Null, "held where it was scanned");
        assert_eq!(named[1]["version_url"], "/toolchains/zig-cc-musl/0.15.2");

        let (_, page) = app.get(&format!("/regressions/{regression}")).await;
        let page = page.as_str().unwrap();
        let section = &page[page.find("<h2 id=\"artifacts\">Artifacts that reach it</h2>").expect(page)..];
        assert!(section.contains(&format!("{HOSTILE_HTML} reaches strspn (4 call sites")), "{section}");
        assert!(section.contains("over contract there") && section.contains("worker reaches strspn"), "{section}");
        assert!(!page.contains("<script>x</script>") && !page.contains("old-tool") && !page.contains("glibc-tool"));
        let (_, md) = app.get(&format!("/regressions/{regression}/postmortem.md")).await;
        assert!(md.as_str().unwrap().contains("## Artifacts that reach it\n\n- api-server&lt;script&gt;"), "{md}");

        let (_, found) = app.get(&format!("/api/v1/regressions/{finding}")).await;
        assert_eq!(found["kind"], "finding", "{found}");
        assert_eq!(found["artifacts"][0]["sentence"], "next-tool reaches strspn (4 call sites: jsonTranslateTextToBlob, sqlite3DecOrHexToI64), scanned at 0.17.0");
        assert_eq!(found["artifacts"].as_array().map(Vec::len), Some(1), "{found}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_shows_the_artifacts_scanned_at_a_version_and_the_regression_naming_them() {
    let Some(chromium) = Chromium::required() else { return };
    let app = TestApp::new(TestDb::new(Backend::Sqlite).await).await;
    seed_versions(&app).await;
    seed_scans(&app).await;
    let (_, list) = app.get("/api/v1/regressions").await;
    let id = list["regressions"][0]["regression"]["id"].as_i64().unwrap();
    let base = crate::helpers::serve(app.router.clone()).await;
    let (version, regression) = (format!("{base}/toolchains/zig-cc-musl/0.16.0"), format!("{base}/regressions/{id}"));
    let (dom, regression_dom) = tokio::task::spawn_blocking(move || {
        chromium.screenshot(&version, &output_dir().join("version-artifacts.png"), (1280, 2400));
        (chromium.dom(&version), chromium.dom(&regression))
    })
    .await
    .unwrap();
    let section = &dom[dom.find("id=\"artifacts\"").unwrap_or_else(|| panic!("{dom}"))..];
    let first = section.find("<article class=\"sw-artifact sw-artifact-exposed\">").expect(section);
    assert!(section[first..].contains("api-server&lt;script&gt;x&lt;/script&gt;"), "escaped, as text: {section}");
    assert!(!dom.contains("<script>x</script>"), "no script element was injected");
    assert!(section.contains("<code>strspn</code>") && section.contains("over contract"), "{section}");
    assert!(section.contains("sw-artifact-accepted") && section.contains("sw-artifact-clean"), "{section}");
    assert!(regression_dom.contains("id=\"artifacts\">Artifacts that reach it"), "{regression_dom}");
    assert!(regression_dom.contains("api-server&lt;script&gt;x&lt;/script&gt; reaches strspn"), "{regression_dom}");
}

#[tokio::test]
async fn a_version_no_run_reported_but_scanned_against_has_a_page_of_its_scans() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let ahead = scan("zig-cc-musl", "0.17.0", HOSTILE, 0, vec![strspn(None)], &["strspn"]);
        let (status, answer) = submit(&app, &ahead).await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
        let url = answer["url"].as_str().unwrap().split('#').next().unwrap().to_string();
        let (status, page) = app.get(&url).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let page = page.as_str().unwrap();
        assert!(page.contains("No run of zig-cc-musl 0.17.0 has reported"), "{page}");
        assert!(page.contains("<code>strspn</code>") && page.contains(HOSTILE_HTML), "{page}");
        assert!(!page.contains("<script>x"), "escaped: {page}");
        for missing in ["/toolchains/zig-cc-musl/9.9.9", "/api/v1/toolchains/zig-cc-musl/0.17.0"] {
            assert_eq!(app.get(missing).await.0, StatusCode::NOT_FOUND, "{missing}");
        }
    })
    .await;
}

#[tokio::test]
async fn the_webhook_of_an_opened_regression_names_the_artifacts_that_reach_it() {
    on_both_backends(|db| async move {
        let formats = [WebhookFormat::Json, WebhookFormat::Slack];
        let app = TestApp::with_config(db, config(&Receiver::reserve(), &formats)).await;
        // Scanned before the regression opens: at 0.15.2, where strspn held.
        let worker = scan("zig-cc-musl", "0.15.2", "worker", 0, vec![], &["memcpy", "strspn"]);
        let unrelated = scan("zig-cc-musl", "0.15.2", "cli-tool", 0, vec![], &["memcpy"]);
        for s in [worker, unrelated] {
            assert_eq!(submit(&app, &s).await.0, StatusCode::CREATED);
        }
        seed_versions(&app).await;
        let bodies = app.db.texts("SELECT body FROM deliveries").await;
        let events: Vec<Value> = bodies.iter().map(|b| serde_json::from_str(b).unwrap()).collect();
        let opened = events.iter().find(|e| e["event"] == "regression.opened");
        let opened = opened.unwrap_or_else(|| panic!("no regression.opened: {bodies:?}"));
        let artifacts = opened["artifacts"].as_array().unwrap_or_else(|| panic!("{opened:#}"));
        assert_eq!(artifacts.len(), 1, "only the artifact reaching strspn: {artifacts:?}");
        assert_eq!(artifacts[0], "worker reaches strspn, scanned at 0.15.2", "{opened:#}");
        let slack = events.iter().filter_map(|e| e["text"].as_str()).find(|t| t.contains("Slope regression"));
        let slack = slack.unwrap_or_else(|| panic!("no Slack message: {bodies:?}"));
        assert!(slack.contains(":package: Artifacts that reach it: worker reaches strspn"), "{slack}");
    })
    .await;
}

/// End to end with the real agent: Zig 0.16.0's catalogue run for strspn stored, a program built
/// with it scanned with the server's verdicts and `--submit`, and the version page in Chromium
/// listing the artifact as exposed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_s_submitted_scan_shows_as_exposed_on_the_version_page() {
    let zig = std::path::Path::new("/opt/slopewatch-zig/0.16.0/ziglang/zig");
    if !zig.is_file() {
        eprintln!("note: Zig 0.16.0 is not installed (scripts/install-test-deps); skipped");
        return;
    }
    let Some(chromium) = Chromium::required() else { return };
    let app = TestApp::new(TestDb::new(Backend::Sqlite).await).await;
    let token = app.ingest_token.clone();
    let base = crate::helpers::serve(app.router.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ingest-agent/tests/fixtures/exposed.c");
    let artifact = dir.path().join("tokenizer");
    let toolchain = format!("zig-cc-musl={} cc -target x86_64-linux-musl", zig.display());
    let (agent, dir_path) = (crate::helpers::process::agent_binary(), dir.path().to_path_buf());
    let (base2, token2) = (base.clone(), token.clone());
    let (scan_status, answer) = tokio::task::spawn_blocking(move || {
        let built = std::process::Command::new(zig)
            .args(["cc", "-target", "x86_64-linux-musl", "-O2", "-g"])
            .arg(&source)
            .arg("-o")
            .arg(&artifact)
            .output()
            .unwrap();
        assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
        let common = |c: &mut std::process::Command, cache: &str| {
            c.args(["--toolchain", &toolchain, "--measure", "instructions", "--server", &base2, "--token", &token2])
                .arg("--cache-dir")
                .arg(dir_path.join(cache))
                .arg("--spool-dir")
                .arg(dir_path.join("spool"));
        };
        let mut run = std::process::Command::new(&agent);
        run.args(["run", "--workloads", "contract.strspn.*"]);
        common(&mut run, "cache");
        let ran = run.output().unwrap();
        assert!(ran.status.code().is_some_and(|c| c == 0 || c == 1), "{}", String::from_utf8_lossy(&ran.stderr));
        let mut scan = std::process::Command::new(&agent);
        scan.arg("exposure").arg(&artifact).args(["--format", "json", "--submit"]);
        // Another cache than the run's: the verdicts must come from the server.
        common(&mut scan, "scan-cache");
        let out = scan.output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {said}"));
        (out.status.code(), (answer, said))
    })
    .await
    .unwrap();
    let (answer, said) = answer;
    assert_eq!(scan_status, Some(1), "{said}");
    let from = answer["artifacts"][0]["judged_by"]["verdicts_from"].to_string();
    assert!(from.contains(&base), "strspn's verdicts come from the server: {from} {said}");
    assert!(said.contains("scan of tokenizer stored"), "{said}");
    let version = format!("{base}/toolchains/zig-cc-musl/0.16.0");
    let dom = tokio::task::spawn_blocking(move || chromium.dom(&version)).await.unwrap();
    let section = &dom[dom.find("id=\"artifacts\"").unwrap_or_else(|| panic!("{dom}"))..];
    let exposed = section.find("<article class=\"sw-artifact sw-artifact-exposed\">").expect(section);
    assert!(section[exposed..].contains("tokenizer") && section.contains("<code>strspn</code>"), "{section}");
}
