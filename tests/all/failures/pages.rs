//! Failed workloads on the server's pages and answers, on Postgres and on SQLite: each kind on the
//! run page and in the API with the sizes before it, the overview and series saying which
//! versions failed, failure details escaped wherever they are shown (and in a real browser), and
//! an older agent's run still accepted as it was.

use crate::builders::run_of;
use crate::helpers::chromium::Chromium;
use crate::helpers::forms::{cookie_pair, get, login};
use crate::helpers::{on_both_backends, Backend, TestApp, TestDb};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use slopewatch::config::Config;
use slopewatch::{app, AppState};
use tower::ServiceExt;

/// Detail a compiler could print, or a hostile agent could send: markup, not escape codes.
const HOSTILE: &str = "strtol.c:7:1: error: <script>alert(1)</script>\n\"><img src=x onerror=alert(2)>\n\
                       <b>bold</b> & <a href=\"javascript:alert(3)\">click</a> 'quoted'";

/// A workload measured at `sizes` sizes doubling from 64 KiB (time ∝ size), failing as `failure`
/// says when given.
fn workload(name: &str, sizes: usize, failure: Option<Value>) -> Value {
    let measurements: Vec<Value> = (0..sizes)
        .map(|i| {
            let size = 65536u64 << i;
            let samples: Vec<f64> = (0..5).map(|k| size as f64 * (2.0 + 0.01 * k as f64)).collect();
            json!({"size": size, "samples_ns": samples})
        })
        .collect();
    let mut w = json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:00", "measurements": measurements});
    if let Some(f) = failure {
        w["failure"] = f;
    }
    w
}

fn wrong_result(detail: &str) -> Value {
    json!({"kind": "wrong_result", "size": 65536, "got": "-1", "expected": "9362", "detail": detail})
}

/// Each kind, with the sizes measured before it.
fn every_kind() -> Vec<(&'static str, usize, Value)> {
    vec![
        ("build", 0, json!({"kind": "build_failed", "exit_status": 1, "detail": "build.c:3:1: error: expected ';'"})),
        ("setup", 0, json!({"kind": "setup_failed", "detail": "cannot allocate 1 GiB of input"})),
        ("crash", 4, json!({"kind": "crashed", "size": 1048576, "signal": 11, "detail": "Segmentation fault"})),
        ("hang", 3, json!({"kind": "timed_out", "size": 524288, "limit_ms": 30000, "detail": "no answer in 30 s"})),
        ("count", 0, wrong_result("strtol left the end pointer past the blanks")),
    ]
}

async fn page(app: &TestApp, uri: &str) -> (StatusCode, String) {
    let res = app.router.clone().oneshot(Request::get(uri).body(Body::empty()).unwrap()).await.unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

async fn html(app: &TestApp, uri: &str) -> String {
    let (status, body) = page(app, uri).await;
    assert_eq!(status, StatusCode::OK, "{uri}: {body}");
    body
}

async fn submit(app: &TestApp, run: &Value) -> String {
    let (status, body) = app.submit(run).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    run["run_id"].as_str().unwrap().to_string()
}

/// Checks `page` shows `HOSTILE` escaped (by name or by number) and none of its markup.
fn assert_escaped(uri: &str, page: &str) {
    let escaped = ["&lt;script&gt;alert(1)&lt;/script&gt;", "&#60;script&#62;alert(1)&#60;/script&#62;"];
    assert!(escaped.iter().any(|e| page.contains(e)), "{uri} shows the detail escaped: {page}");
    for raw in ["<script>alert(1)", "<img src=x", "<b>bold", "href=\"javascript:"] {
        assert!(!page.contains(raw), "{uri} carries {raw:?} unescaped");
    }
}

#[tokio::test]
async fn each_kind_of_failure_is_stored_and_shown_with_the_sizes_before_it() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let mut workloads = vec![workload("clean", 5, None)];
        workloads.extend(every_kind().into_iter().map(|(name, sizes, f)| workload(name, sizes, Some(f))));
        let id = submit(&app, &run_of("gcc-glibc", "12.2.0", "build-01", workloads)).await;

        let (status, run) = app.get(&format!("/api/v1/runs/{id}")).await;
        assert_eq!(status, StatusCode::OK, "{run}");
        let by_name = |name: &str| run["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).cloned();
        let clean = by_name("clean").expect("the clean workload");
        assert!(clean["failure"].is_null() && clean["slope"].is_f64() && clean["partial"] == false, "{clean}");
        for (name, sizes, failure) in every_kind() {
            let w = by_name(name).unwrap_or_else(|| panic!("{name} is in the run: {run}"));
            assert_eq!(w["failure"], failure, "{name} reads back as sent");
            assert_eq!(w["measurements"].as_array().unwrap().len(), sizes, "{name}: the sizes before the failure");
            // The alert rules' minimum is 4 sizes: only the crash measured enough for a slope.
            if sizes >= 4 {
                assert!(w["partial"] == true && (w["slope"].as_f64().unwrap() - 1.0).abs() < 0.05, "{w}");
            } else {
                assert!(w["partial"] == false && w["slope"].is_null(), "{name}: no slope from {sizes} sizes: {w}");
            }
        }

        let body = html(&app, &format!("/runs/{id}")).await;
        for label in ["✗</span> build failed", "✗</span> setup failed", "✗</span> crashed", "✗</span> timed out"]
        {
            assert!(body.contains(label), "the run page shows {label:?}");
        }
        assert!(body.contains("✗</span> wrong result"));
        assert!(body.contains("5 of 6 workloads failed"), "the run page says how many failed");
        assert!(body.contains("<dt>Got</dt><dd class=\"mono\">-1</dd>"), "got and expected are shown");
        assert!(body.contains("<dt>Expected</dt><dd class=\"mono\">9362</dd>"));
        assert!(body.contains("<dt>Signal</dt><dd class=\"mono\">11</dd>"), "the signal is shown");
        assert!(body.contains("<dt>Exit status</dt><dd class=\"mono\">1</dd>"), "the exit status is shown");
        assert!(body.contains("<dt>Time limit</dt>"), "the time limit is shown");
        assert!(body.contains("at 1 MiB"), "the size it crashed at");
        assert!(body.contains("<pre class=\"failure-detail\">Segmentation fault</pre>"), "the detail in a pre");
        assert!(body.contains("k 1.00 · partial"), "the crash's partial slope is marked partial");
        assert!(body.contains("3 sizes measured before the failure: too few for a slope (at least 4)"));
        assert!(body.contains("No size was measured before the failure."));

        // A partial slope never reaches the version's summaries.
        app.intake.summarize_pending().await.unwrap();
        let (status, series) = app.get("/api/v1/series?workload=crash&toolchain=gcc-glibc").await;
        assert_eq!(status, StatusCode::OK, "{series}");
        let v = &series["versions"][0];
        assert!(v["slope"].is_null() && v["runs"] == 0, "no summary of a failed workload: {v}");
        assert_eq!(v["failures"]["kind"], "crashed");
        assert_eq!((v["failures"]["failed_runs"].clone(), v["failures"]["runs"].clone()), (json!(1), json!(1)));
    })
    .await;
}

#[tokio::test]
async fn the_overview_and_series_say_which_versions_failed_and_how_often() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let clean = |name| workload(name, 5, None);
        let failing = |name| workload(name, 0, Some(wrong_result("wrong end pointer")));
        // musl: strtol passes at 1.2.4 and fails in every run of 1.2.5.
        submit(&app, &run_of("musl-gcc", "1.2.4", "build-01", vec![clean("strtol")])).await;
        submit(&app, &run_of("musl-gcc", "1.2.5", "build-01", vec![failing("strtol")])).await;
        submit(&app, &run_of("musl-gcc", "1.2.5", "build-02", vec![failing("strtol")])).await;
        // zig: 0.16.0 fails on one of its two hosts.
        submit(&app, &run_of("zig-cc-musl", "0.15.2", "build-01", vec![clean("strtol")])).await;
        submit(&app, &run_of("zig-cc-musl", "0.16.0", "build-01", vec![clean("strtol")])).await;
        submit(&app, &run_of("zig-cc-musl", "0.16.0", "build-02", vec![failing("strtol")])).await;
        app.intake.summarize_pending().await.unwrap();

        let overview = html(&app, "/").await;
        let cells: Vec<&str> =
            overview.split("<td class=\"cell ").skip(1).map(|c| &c[..c.find("</td>").unwrap()]).collect();
        assert_eq!(cells.len(), 2, "{overview}");
        assert!(cells[0].starts_with("failed\""), "musl's cell is a failure: {}", cells[0]);
        assert!(cells[0].contains("✗</span> wrong result") && cells[0].contains("1.2.5"), "{}", cells[0]);
        let slope_line = cells[0].split("<span class=\"k\">").nth(1).unwrap().split("</span>\n").next().unwrap();
        assert!(!slope_line.contains("1.00"), "no slope instead of the failure: {}", cells[0]);
        assert!(cells[0].contains("was k 1.00 at 1.2.4"), "but what it was before: {}", cells[0]);
        assert!(cells[0].contains("failing since <span class=\"mono\">1.2.5</span>"), "{}", cells[0]);
        assert!(cells[1].starts_with("linear\""), "zig's cell keeps its slope: {}", cells[1]);
        assert!(cells[1].contains("failed in 1 of 2 runs"), "and says a run failed: {}", cells[1]);

        let series = html(&app, "/series/strtol/zig-cc-musl").await;
        assert!(
            series.contains("failed in 1 of the version&#39;s 2 runs, on 1 of 2 hosts")
                || series.contains("failed in 1 of the version's 2 runs, on 1 of 2 hosts"),
            "{series}"
        );
        assert!(series.contains("<h2 id=\"failures\">Failures</h2>") && series.contains("wrong end pointer"));
        let musl = html(&app, "/series/strtol/musl-gcc").await;
        assert!(musl.contains("<span class=\"band failed\"><span aria-hidden=\"true\">✗</span> wrong result</span>"));
        let summary =
            "at the latest version <strong class=\"mono\">1.2.5</strong> (failed in every run (2 runs), on 2 hosts)";
        assert!(musl.contains(summary), "the page's summary says every run failed: {musl}");
        assert!(musl.contains("A red ✗ along the top marks a version"), "the slope chart's caption says so");

        // Both charts mark the failed version, in their drawing and in their text alternatives.
        let (_, slope_svg) = page(&app, "/series/strtol/musl-gcc/slope.svg").await;
        assert!(slope_svg.contains("failed: runs of the version failed the workload"), "the legend: {slope_svg}");
        assert!(
            slope_svg.contains("Marked ✗ as failed: 1.2.5 (wrong result, failed in every run (2 runs), on 2 hosts).")
        );
        let (_, loglog_svg) = page(&app, "/series/strtol/musl-gcc/loglog.svg").await;
        assert!(loglog_svg.contains("1.2.5: ✗ wrong result, failed in every run"), "the log-log legend: {loglog_svg}");
        assert!(loglog_svg.contains("No line, every run failed: 1.2.5"), "{loglog_svg}");
        let (status, only_failed) = page(&app, "/series/strtol/musl-gcc/loglog.svg?v=1.2.5").await;
        assert_eq!(status, StatusCode::OK, "a chart of a version every run failed: {only_failed}");
        assert!(only_failed.contains("1.2.5: ✗ wrong result"), "{only_failed}");
        let (_, zig_loglog) = page(&app, "/series/strtol/zig-cc-musl/loglog.svg").await;
        assert!(zig_loglog.contains("✗ wrong result in 1 of 2 runs"), "{zig_loglog}");
        assert!(series.contains("1 of 2 runs") && series.contains("alt=\"Log-log slope"), "alt texts present");

        // Exports carry the failures per version.
        let (_, csv) = page(&app, "/series/strtol/musl-gcc/data.csv").await;
        let mut lines = csv.lines();
        let header = lines.next().unwrap();
        assert!(
            header.ends_with(
                "runs,hosts,failed_runs,failed_hosts,failure_kind,failure_size,failure,failure_detail,measure"
            ),
            "{header}"
        );
        let last = lines.last().unwrap();
        assert!(last.contains(",failed,") && last.contains(",2,2,2,2,wrong_result,65536,"), "{last}");
        let (_, data) = app.get("/series/strtol/zig-cc-musl/data.json").await;
        let v = &data["versions"][1];
        assert_eq!((v["failures"]["failed_runs"].clone(), v["failures"]["runs"].clone()), (json!(1), json!(2)));
        assert_eq!((v["failures"]["failed_hosts"].clone(), v["failures"]["hosts"].clone()), (json!(1), json!(2)));
        assert!(v["slope"].is_f64() && data["versions"][0]["failures"].is_null(), "{data}");

        // The API's series: a version every run failed is there, without a slope.
        let (_, api) = app.get("/api/v1/series?workload=strtol&toolchain=musl-gcc").await;
        let versions = api["versions"].as_array().unwrap();
        assert_eq!(versions.len(), 2, "{api}");
        assert!(versions[0]["failures"].is_null() && versions[0]["slope"].is_f64());
        let failed = &versions[1];
        assert_eq!(failed["version"], "1.2.5");
        assert!(failed["slope"].is_null() && failed["runs"] == 0, "{failed}");
        let f = &failed["failures"];
        assert_eq!((f["runs"].clone(), f["failed_runs"].clone(), f["hosts"].clone()), (json!(2), json!(2), json!(2)));
        assert_eq!(
            (f["kind"].clone(), f["size"].clone(), f["got"].clone()),
            (json!("wrong_result"), json!(65536), json!("-1"))
        );
        assert_eq!(f["detail"], "wrong end pointer");
    })
    .await;
}

#[tokio::test]
async fn a_hostile_failure_detail_is_escaped_on_run_series_and_regression_pages() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        submit(&app, &run_of("musl-gcc", "1.2.4", "build-01", vec![workload("strtol", 5, None)])).await;
        let bad = vec![workload("strtol", 0, Some(wrong_result(HOSTILE)))];
        let id = submit(&app, &run_of("musl-gcc", "1.2.5", "build-01", bad)).await;
        app.intake.summarize_pending().await.unwrap();

        let regressions = app.db.store.regressions(None).await.unwrap();
        let (regression, members) = regressions.first().expect("the failure opened a regression");
        assert_eq!(members[0].reason, "failure");
        for uri in [format!("/runs/{id}"), "/series/strtol/musl-gcc".into(), format!("/regressions/{}", regression.id)]
        {
            let anonymous = html(&app, &uri).await;
            assert_escaped(&uri, &anonymous);
            assert!(anonymous.contains("2 more lines: log in to see them") && !anonymous.contains("bold"), "{uri}");
            let session = cookie_pair(&login(&app, &app.editor_token.clone()).await, "sw_session").unwrap();
            let signed_in = get(&app, &uri, &session).await.text;
            assert_escaped(&uri, &signed_in);
            assert!(signed_in.contains("&#60;b&#62;bold&#60;/b&#62;"), "a signed-in reader sees it whole: {uri}");
        }
        let (_, csv) = page(&app, "/series/strtol/musl-gcc/data.csv").await;
        assert!(csv.contains("\"strtol.c:7:1: error: <script>"), "CSV quotes the detail whole: {csv}");
        let (_, svg) = page(&app, "/series/strtol/musl-gcc/slope.svg").await;
        assert!(!svg.contains("<script>alert"), "the chart escapes what it says of the failure");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_failure_detail_runs_no_script_in_a_real_browser() {
    let Some(chromium) = Chromium::required() else { return };
    let db = TestDb::new(Backend::Sqlite).await;
    let test = TestApp::new(db).await;
    submit(&test, &run_of("musl-gcc", "1.2.4", "build-01", vec![workload("strtol", 5, None)])).await;
    // The page's script, if it ran, would leave its mark in the DOM.
    // On one line, as a reader who is not signed in sees only a detail's first line; the line after
    // it, with a build path, is for signed-in readers.
    let detail = format!(
        "{} <script>document.body.setAttribute('data-pwned','1')</script>\n/home/ci/build/strtol.c: in function",
        HOSTILE.replace('\n', " ")
    );
    let bad = vec![workload("strtol", 0, Some(wrong_result(&detail)))];
    let id = submit(&test, &run_of("musl-gcc", "1.2.5", "build-01", bad)).await;
    test.intake.summarize_pending().await.unwrap();
    let base = crate::helpers::serve(app(AppState::new(test.db.store.clone(), Config::default()))).await;

    for path in [format!("/runs/{id}"), "/series/strtol/musl-gcc".to_string()] {
        let dom = chromium.dom(&format!("{base}{path}"));
        assert!(dom.contains("strtol.c:7:1: error: &lt;script&gt;alert(1)&lt;/script&gt;"), "{path}: {dom}");
        assert!(!dom.contains("data-pwned=\"1\""), "{path}: the detail's script ran");
        assert!(dom.contains("setAttribute('data-pwned','1')"), "{path}: the script is shown as text");
        assert!(!dom.contains("<img src=\"x\"") && !dom.contains("<b>bold</b>"), "{path}: markup became elements");
        assert!(dom.contains("✗"), "{path} shows the failure");
        assert!(!dom.contains("/home/ci/build") && dom.contains("1 more line: log in to see it"), "{path}: {dom}");
    }
}

#[tokio::test]
async fn a_run_from_the_0_1_agent_is_accepted_and_stored_as_sent() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run-agent-0.1.json");
        let sent: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let id = submit(&app, &sent).await;
        let (status, run) = app.get(&format!("/api/v1/runs/{id}")).await;
        assert_eq!(status, StatusCode::OK, "{run}");
        assert_eq!(run["agent_version"], sent["agent_version"]);
        let mut names: Vec<&str> =
            sent["workloads"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
        names.sort_unstable();
        let stored = run["workloads"].as_array().unwrap();
        assert_eq!(stored.iter().map(|w| w["name"].as_str().unwrap()).collect::<Vec<_>>(), names);
        for w in stored {
            let original = sent["workloads"].as_array().unwrap().iter().find(|o| o["name"] == w["name"]).unwrap();
            assert!(w["failure"].is_null() && w["partial"] == false && w["slope"].is_f64(), "{w}");
            let sizes: Vec<&Value> = original["measurements"].as_array().unwrap().iter().map(|m| &m["size"]).collect();
            let got: Vec<&Value> = w["measurements"].as_array().unwrap().iter().map(|m| &m["size"]).collect();
            assert_eq!(got, sizes, "{}: every size stored", w["name"]);
            for (m, o) in w["measurements"].as_array().unwrap().iter().zip(original["measurements"].as_array().unwrap())
            {
                assert_eq!(m["samples_ns"], o["samples_ns"], "{}: samples as sent", w["name"]);
            }
        }
        let (status, again) = app.submit(&sent).await;
        assert_eq!(status, StatusCode::OK, "a resubmission is the same run: {again}");
    })
    .await;
}
