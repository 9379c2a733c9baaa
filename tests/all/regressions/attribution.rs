//! Attribution by a control lineage (`[control] lineages`): when a regression opens, the control's
//! runs of the same workload and source, measured within the regression's period on its hosts,
//! say whether the toolchain, the code or the host moved. On Postgres and on SQLite, through the
//! HTTP API, the page, the postmortem and a real webhook receiver.

use crate::builders::run_of;
use crate::helpers::webhooks::{assert_signed, body_json, config, wait_for, Receiver};
use crate::helpers::{on_both_backends, TestApp};
use serde_json::{json, Value};
use slopewatch::config::{Config, WebhookFormat};
use std::time::Duration;
use tokio::sync::watch;

const CONTROL: &str = "musl-gcc";
const LINEAGE: &str = "zig-cc-musl";

/// A run of workload `scan` of `source`, time ∝ size^`slope`, measured at `started`.
fn run(lineage: &str, version: &str, source: &str, slope: f64, started: &str) -> Value {
    let measurements = crate::builders::measurements(65536, 6, |n| 0.5 * n.powf(slope), &[1.0, 1.01, 0.99]);
    let workload = json!({"name": "scan", "size_unit": "bytes", "source_hash": source, "measurements": measurements});
    let mut run = run_of(lineage, version, "build-01", vec![workload]);
    run["started_at"] = json!(started);
    run
}

fn control(slope: f64, source: &str, started: &str) -> Value {
    run(CONTROL, "1.2.3", source, slope, started)
}

const BEFORE: &str = "2026-11-20T10:00:00Z";
const AFTER: &str = "2026-11-21T10:00:00Z";

/// A server with `musl-gcc` as its control, alerting `receiver` in JSON and Slack, and its sender.
async fn server(db: crate::helpers::TestDb, receiver: &Receiver) -> (TestApp, watch::Sender<bool>) {
    let formats = [WebhookFormat::Json, WebhookFormat::Slack];
    let config = Config { controls: vec![CONTROL.into()], ..config(receiver, &formats) };
    let settings = config.alerts.clone();
    let app = TestApp::with_config(db, config).await;
    let (stop, stopped) = watch::channel(false);
    tokio::spawn(slopewatch::webhooks::sender::run(app.db.store.clone(), settings, app.metrics.clone(), stopped));
    (app, stop)
}

async fn submit_all(app: &TestApp, runs: &[Value]) {
    for r in runs {
        let (status, answer) = app.submit(r).await;
        assert_eq!(status, 201, "{answer}");
    }
}

async fn page(app: &TestApp, uri: &str) -> String {
    let (status, page) = app.get(uri).await;
    assert_eq!(status, 200, "{uri}: {page}");
    page.as_str().unwrap().to_string()
}

/// The JSON bodies and the Slack texts of the deliveries, once `n` have arrived.
async fn delivered(receiver: &Receiver, n: usize) -> (Vec<Value>, Vec<String>) {
    wait_for(Duration::from_secs(20), "the announcements", || receiver.delivered().len() >= n).await;
    let seen = receiver.delivered();
    seen.iter().for_each(assert_signed);
    let bodies: Vec<Value> = seen.iter().map(body_json).collect();
    let json = bodies.iter().filter(|b| b.get("event").is_some()).cloned().collect();
    let slack = bodies.iter().filter_map(|b| b["text"].as_str().map(str::to_string)).collect();
    (json, slack)
}

#[tokio::test]
async fn a_control_that_held_on_the_same_source_pins_the_regression_on_the_toolchain() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        let (app, _stop) = server(db, &receiver).await;
        submit_all(
            &app,
            &[
                control(1.0, "sha256:s0", BEFORE),
                run(LINEAGE, "0.15.2", "sha256:s0", 1.0, BEFORE),
                control(1.0, "sha256:s0", AFTER),
                run(LINEAGE, "0.16.0", "sha256:s0", 2.0, AFTER),
            ],
        )
        .await;
        let (json, slack) = delivered(&receiver, 2).await;
        assert_eq!(json.len(), 1, "{json:?}");
        let a = &json[0]["attribution"];
        assert_eq!(json[0]["event"], "regression.opened");
        assert_eq!(a["verdict"], "toolchain", "{a}");
        assert_eq!(a["control"], "musl-gcc 1.2.3");
        let sentence = a["sentence"].as_str().unwrap();
        assert!(
            sentence.starts_with("control musl-gcc 1.2.3 stayed at k 1.00 on the same source: the toolchain changed"),
            "{sentence}"
        );
        assert!(sentence.contains("(measured on build-01)"), "{sentence}");
        assert_eq!(a["hosts"], json!(["build-01"]));
        assert!(slack[0].contains(":scales: Control musl-gcc 1.2.3 stayed at k 1.00 on the same source"), "{slack:?}");

        let shown = page(&app, "/regressions/1").await;
        assert!(
            shown.contains("Who moved: the toolchain.</strong> Control musl-gcc 1.2.3 stayed at k 1.00"),
            "{shown}"
        );
        assert!(shown.contains("2026-11-20 10:00 UTC to 2026-11-21 10:00 UTC"), "{shown}");
        let (_, detail) = app.get("/api/v1/regressions/1").await;
        assert_eq!(detail["attribution"]["verdict"], "toolchain", "{detail}");
        let markdown = page(&app, "/regressions/1/postmortem.md").await;
        assert!(markdown.contains("## Attribution\n\n**Who moved: the toolchain.**"), "{markdown}");
    })
    .await;
}

#[tokio::test]
async fn a_control_that_moved_with_a_changed_source_pins_it_on_the_code() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        let (app, _stop) = server(db, &receiver).await;
        submit_all(
            &app,
            &[
                control(1.0, "sha256:s0", BEFORE),
                run(LINEAGE, "0.15.2", "sha256:s0", 1.0, BEFORE),
                control(2.0, "sha256:s1", AFTER),
                run(LINEAGE, "0.16.0", "sha256:s1", 2.0, AFTER),
            ],
        )
        .await;
        let (json, slack) = delivered(&receiver, 2).await;
        let a = &json[0]["attribution"];
        assert_eq!(a["verdict"], "code", "{a}");
        assert_eq!(a["source_changed"], true);
        let sentence = a["sentence"].as_str().unwrap();
        assert!(
            sentence.starts_with(
                "control musl-gcc 1.2.3 moved too, to k 2.00 (from k 1.00), on the changed source: the code changed"
            ),
            "{sentence}"
        );
        assert!(slack[0].contains("on the changed source: the code changed"), "{slack:?}");
        let shown = page(&app, "/regressions/1").await;
        assert!(shown.contains("Who moved: the code.</strong>"), "{shown}");
        // The control's own series is no regression: it has none of its own here.
        let (_, list) = app.get("/api/v1/regressions").await;
        assert_eq!(list["regressions"].as_array().unwrap().len(), 1, "{list}");
    })
    .await;
}

#[tokio::test]
async fn without_control_runs_it_says_what_to_run_and_a_late_control_run_updates_the_page_without_a_second_alert() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        let (app, _stop) = server(db, &receiver).await;
        submit_all(
            &app,
            &[run(LINEAGE, "0.15.2", "sha256:s0", 1.0, BEFORE), run(LINEAGE, "0.16.0", "sha256:s0", 2.0, AFTER)],
        )
        .await;
        let (json, slack) = delivered(&receiver, 2).await;
        let a = &json[0]["attribution"];
        assert_eq!(a["verdict"], "unknown", "{a}");
        assert_eq!(a["control"], "musl-gcc");
        let sentence = a["sentence"].as_str().unwrap();
        assert!(sentence.starts_with("no runs of control musl-gcc on scan with the first bad version's source"));
        assert!(sentence.contains("measure musl-gcc beside zig-cc-musl 0.16.0 on build-01"), "{sentence}");
        assert!(slack[0].contains(":scales: No runs of control musl-gcc on scan"), "{slack:?}");
        let shown = page(&app, "/regressions/1").await;
        assert!(shown.contains("Who moved: unknown.</strong> No runs of control musl-gcc"), "{shown}");

        // The control's run measured beside the bad version arrives late (it waited in a spool).
        submit_all(&app, &[control(1.0, "sha256:s0", AFTER)]).await;
        let shown = page(&app, "/regressions/1").await;
        assert!(
            shown.contains("Who moved: the toolchain.</strong> Control musl-gcc 1.2.3 stayed at k 1.00"),
            "{shown}"
        );
        let (_, detail) = app.get("/api/v1/regressions/1").await;
        assert_eq!(detail["attribution"]["verdict"], "toolchain", "{detail}");
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(receiver.delivered().len(), 2, "no second alert: {:?}", receiver.delivered());
    })
    .await;
}

#[tokio::test]
async fn a_changed_source_without_control_data_cannot_be_pinned_on_the_toolchain_and_the_control_has_no_control() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        let (app, _stop) = server(db, &receiver).await;
        submit_all(
            &app,
            &[
                run(LINEAGE, "0.15.2", "sha256:s0", 1.0, BEFORE),
                run(LINEAGE, "0.16.0", "sha256:s1", 2.0, AFTER),
                // Too late for the period: measured after the bad version's latest run.
                control(1.0, "sha256:s1", "2026-11-25T10:00:00Z"),
                // The control regresses itself.
                run(CONTROL, "1.2.3", "sha256:s0", 1.0, BEFORE),
                run(CONTROL, "1.2.4", "sha256:s0", 2.0, AFTER),
            ],
        )
        .await;
        let (_, detail) = app.get("/api/v1/regressions/1").await;
        let sentence = detail["attribution"]["sentence"].as_str().unwrap();
        assert_eq!(detail["attribution"]["verdict"], "unknown", "{detail}");
        assert!(
            sentence.ends_with(
                "scan changed source between 0.15.2 and 0.16.0: without the control, this regression cannot be \
                 pinned on the toolchain"
            ),
            "{sentence}"
        );
        let (_, own) = app.get("/api/v1/regressions/2").await;
        assert_eq!(own["regression"]["lineage"], CONTROL, "{own}");
        assert_eq!(own["attribution"]["verdict"], "unknown");
        assert_eq!(own["attribution"]["control"], Value::Null);
        let sentence = own["attribution"]["sentence"].as_str().unwrap();
        assert!(sentence.starts_with("musl-gcc is itself the control and has no control of its own"), "{sentence}");
        let (json, _) = delivered(&receiver, 4).await;
        assert!(json.iter().all(|e| e["attribution"]["verdict"] == "unknown"), "{json:?}");
    })
    .await;
}
