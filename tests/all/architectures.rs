//! Series per target architecture: runs of one lineage built for x86-64 and for aarch64 make two
//! series; the aarch64 series' pages, JSON, Markdown notes and webhooks name its architecture, and
//! say its runs were measured under emulation where x86-64 hosts ran them (and not where aarch64
//! hosts did); a name qualified with another architecture is refused; a run sent again is stored
//! once. On Postgres and on SQLite.

use crate::builders::RunShape;
use crate::helpers::webhooks::{body_json, config, wait_for, Alerting, Receiver};
use crate::helpers::{on_both_backends, TestApp};
use axum::http::StatusCode;
use serde_json::Value;
use slopewatch::config::WebhookFormat;
use slopewatch::links;
use slopewatch_core::wire::Metric;
use std::time::Duration;

/// The lineage the runs name.
const NAME: &str = "zig-cc-musl";
/// The lineage its aarch64 builds are stored under.
const AARCH64: &str = "zig-cc-musl (aarch64)";
/// What a page says of runs measured under emulation on x86-64 hosts.
const EMULATED: &str = "measured under emulation on x86_64 hosts: growth (slopes, classes) holds";

/// A run of `lineage` at `version` with one workload of slope `slope` at eight sizes, built for
/// `target` (`x86_64` or `aarch64`) on a host of architecture `host`.
pub fn run(lineage: &str, version: &str, slope: f64, target: &str, host: &str) -> Value {
    let mut run = RunShape::new(lineage, version).slope(slope).sizes(8).samples(5).json();
    run["toolchain"]["target"] = format!("{target}-linux-musl").into();
    run["toolchain"]["compiler"] = format!("zig cc -target {target}-linux-musl").into();
    run["host"]["arch"] = host.into();
    run
}

async fn submit(app: &TestApp, run: &Value) {
    let (status, body) = app.submit(run).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// A page's HTML, or a Markdown file, which must be a 200.
async fn text(app: &TestApp, uri: &str) -> String {
    let (status, body) = app.get(uri).await;
    assert_eq!(status, StatusCode::OK, "{uri}: {body}");
    body.as_str().unwrap_or_else(|| panic!("{uri} answers text: {body}")).to_string()
}

async fn json(app: &TestApp, uri: &str) -> Value {
    let (status, body) = app.get(uri).await;
    assert_eq!(status, StatusCode::OK, "{uri}: {body}");
    body
}

/// Seeds a regression at 0.16.0 of the aarch64 series, measured on hosts of `host` (its slope
/// crossing 1.5: 1.0 at 0.15.0, 2.0 at 0.16.0), beside an x86-64 series of the same lineage that
/// stays linear; answers the regression's id.
pub async fn seed(app: &TestApp, host: &str) -> i64 {
    for (version, slope) in [("0.15.0", 1.0), ("0.16.0", 2.0)] {
        submit(app, &run(NAME, version, 1.0, "x86_64", "x86_64")).await;
        submit(app, &run(NAME, version, slope, "aarch64", host)).await;
    }
    let (_, list) = app.get("/api/v1/regressions").await;
    let regressions = list["regressions"].as_array().unwrap();
    assert_eq!(regressions.len(), 1, "only the aarch64 series regressed: {list}");
    assert_eq!(regressions[0]["regression"]["lineage"], AARCH64, "{list}");
    regressions[0]["regression"]["id"].as_i64().unwrap()
}

#[tokio::test]
async fn each_architecture_is_a_series_of_its_own_and_emulated_runs_are_said_so_everywhere() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        let a = Alerting::new(db, config(&receiver, &[WebhookFormat::Json, WebhookFormat::Slack])).await;
        let app = &a.app;
        let id = seed(app, "x86_64").await;

        // Two series: the x86-64 one under the plain name, linear at both versions; the aarch64
        // one under its qualified name, stepping to quadratic.
        let series = |lineage: &str| links::series_file("workload-0", lineage, Metric::Wall, "data.json");
        let x86 = json(app, &series(NAME)).await;
        let arm = json(app, &series(AARCH64)).await;
        let slopes = |s: &Value| -> Vec<f64> {
            s["versions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| (v["slope"].as_f64().unwrap() * 10.0).round() / 10.0)
                .collect()
        };
        assert_eq!((slopes(&x86), slopes(&arm)), (vec![1.0, 1.0], vec![1.0, 2.0]), "{x86}\n{arm}");
        assert_eq!((x86["arch"].as_str(), x86["emulated_on"].as_array().map(Vec::len)), (Some("x86_64"), Some(0)));
        assert_eq!((arm["arch"].as_str(), &arm["emulated_on"]), (Some("aarch64"), &serde_json::json!(["x86_64"])));

        // The series pages say their architecture; only the emulated one has the caveat.
        let page = text(app, &links::series("workload-0", AARCH64, Metric::Wall)).await;
        assert!(page.contains("Architecture: aarch64") && page.contains(EMULATED), "{page}");
        let page = text(app, &links::series("workload-0", NAME, Metric::Wall)).await;
        assert!(page.contains("Architecture: x86_64") && !page.contains("emulation"), "{page}");

        // The regression: its page, JSON and postmortem.
        let page = text(app, &links::regression(id)).await;
        assert!(page.contains("Architecture: aarch64") && page.contains(EMULATED), "{page}");
        let detail = json(app, &format!("/api/v1/regressions/{id}")).await;
        assert_eq!(
            (detail["arch"].as_str(), &detail["emulated_on"]),
            (Some("aarch64"), &serde_json::json!(["x86_64"]))
        );
        let md = text(app, &format!("/regressions/{id}/postmortem.md")).await;
        assert!(md.contains("- Architecture: aarch64, measured under emulation on x86\\_64 hosts"), "{md}");

        // The version: its page, Markdown note and JSON; the x86-64 version has no caveat.
        let page = text(app, &links::version_page(AARCH64, "0.16.0")).await;
        assert!(page.contains("Architecture: aarch64") && page.contains(EMULATED), "{page}");
        let md = text(app, &links::version_markdown(AARCH64, "0.16.0", None)).await;
        assert!(md.contains("Architecture: aarch64, measured under emulation on x86\\_64 hosts"), "{md}");
        let version = json(app, &links::version_api(AARCH64, "0.16.0")).await;
        assert_eq!(
            (version["arch"].as_str(), &version["emulated_on"]),
            (Some("aarch64"), &serde_json::json!(["x86_64"]))
        );
        let page = text(app, &links::version_page(NAME, "0.16.0")).await;
        assert!(page.contains("Architecture: x86_64") && !page.contains("emulation"), "{page}");

        // Comparing the two architectures says each side's, and that they differ.
        let compare = format!("/compare?a={NAME}%400.16.0&b={}%400.16.0", AARCH64.replace(' ', "%20"));
        let page = text(app, &compare).await;
        assert!(page.contains("zig-cc-musl: Architecture: x86_64."), "{page}");
        assert!(page.contains("zig-cc-musl (aarch64): Architecture: aarch64") && page.contains(EMULATED), "{page}");
        assert!(page.contains("built for different architectures"), "{page}");

        // The webhooks: the JSON carries the architecture, the Slack text names the lineage with it.
        wait_for(Duration::from_secs(20), "both opened alerts", || receiver.delivered().len() >= 2).await;
        let bodies: Vec<Value> = receiver.delivered().iter().map(body_json).collect();
        let opened = bodies.iter().find(|b| b["event"] == "regression.opened").expect("the JSON alert");
        assert_eq!((opened["lineage"].as_str(), opened["arch"].as_str()), (Some(AARCH64), Some("aarch64")), "{opened}");
        let slack = bodies.iter().find_map(|b| b["text"].as_str()).expect("the Slack alert");
        assert!(slack.contains("zig-cc-musl (aarch64) 0.16.0"), "{slack}");

        // Sent again, the aarch64 run is stored once, and opens nothing more.
        let again = run(NAME, "0.17.0", 1.0, "aarch64", "x86_64");
        submit(app, &again).await;
        let (status, body) = app.submit(&again).await;
        assert_eq!((status, &body["created"]), (StatusCode::OK, &Value::Bool(false)), "{body}");
        let arm = json(app, &series(AARCH64)).await;
        assert_eq!(arm["versions"][2]["runs"], 1, "{arm}");
        let (_, list) = app.get("/api/v1/regressions").await;
        assert_eq!(list["regressions"].as_array().unwrap().len(), 1, "{list}");
    })
    .await;
}

#[tokio::test]
async fn runs_measured_on_hosts_of_their_own_architecture_carry_no_caveat() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        // `arm64` is how some systems name aarch64: the same architecture, measured natively.
        let id = seed(&app, "arm64").await;
        let page = text(&app, &links::regression(id)).await;
        assert!(page.contains("Architecture: aarch64") && !page.contains("emulation"), "{page}");
        let detail = json(&app, &format!("/api/v1/regressions/{id}")).await;
        assert_eq!((detail["arch"].as_str(), &detail["emulated_on"]), (Some("aarch64"), &serde_json::json!([])));
        let md = text(&app, &format!("/regressions/{id}/postmortem.md")).await;
        assert!(md.contains("- Architecture: aarch64.\n"), "{md}");
        let page = text(&app, &links::series("workload-0", AARCH64, Metric::Wall)).await;
        assert!(page.contains("Architecture: aarch64") && !page.contains("emulation"), "{page}");
    })
    .await;
}

#[tokio::test]
async fn a_name_qualified_with_another_architecture_is_refused() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let (status, body) = app.submit(&run("foo (aarch64)", "1.0", 1.0, "x86_64", "x86_64")).await;
        assert_eq!(
            (status, body["error"]["field"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("toolchain.name"))
        );
        assert!(body.to_string().contains("aarch64"), "the refusal names the architecture: {body}");
        // Qualified with its own architecture, the name is the lineage it would be stored under.
        submit(&app, &run("foo (aarch64)", "1.0", 1.0, "aarch64", "aarch64")).await;
        submit(&app, &run("foo", "1.0", 1.0, "aarch64", "aarch64")).await;
        let series = json(&app, &links::series_file("workload-0", "foo (aarch64)", Metric::Wall, "data.json")).await;
        assert_eq!(series["versions"][0]["runs"], 2, "{series}");
        let (status, _) = app.get(&links::series("workload-0", "foo", Metric::Wall)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "nothing joined the x86-64 series");
    })
    .await;
}
