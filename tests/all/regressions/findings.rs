//! Findings: a workload already over its limit or its contract at the first version its lineage
//! measured has nothing to regress from. It is a finding, not a regression: listed apart, with no
//! last good version and no bisect command, announced once as `finding.opened` and
//! `finding.resolved`; a version measured before it that held makes it a regression. On Postgres
//! and on SQLite, through the HTTP API, the pages and a real webhook receiver.

use crate::builders::run_of;
use crate::helpers::webhooks::{assert_signed, body_json, config, wait_for, Receiver};
use crate::helpers::{on_both_backends, TestApp};
use serde_json::{json, Value};
use slopewatch::config::WebhookFormat;
use std::time::Duration;
use tokio::sync::watch;

/// A run of `version` on `host` whose one probe, held to O(1), costs `cost(size)` at 8 sizes.
fn probe_at(version: &str, host: &str, cost: impl Fn(f64) -> f64) -> Value {
    let measurements = crate::builders::measurements(1024, 8, cost, &[1.0, 1.01, 0.99]);
    run_of(
        "zig-cc-musl",
        version,
        host,
        vec![json!({"name": "contract.strchr.remaining", "size_unit": "bytes", "source_hash": "sha256:c0",
                    "measurements": measurements,
                    "contract": {"expected": "1", "function": "strchr", "axis": "remaining",
                                 "broken": "reads the whole remaining string",
                                 "consequence": "A loop that calls it once per token over n bytes is O(n²)."}})],
    )
}

fn held(_: f64) -> f64 {
    900.0
}

fn over(n: f64) -> f64 {
    900.0 + 4.0 * n
}

/// The ids of the regressions `GET /api/v1/regressions?…` lists.
async fn listed(app: &TestApp, query: &str) -> Vec<(i64, String)> {
    let (status, list) = app.get(&format!("/api/v1/regressions{query}")).await;
    assert_eq!(status, 200, "{list}");
    let entries = list["regressions"].as_array().unwrap();
    entries.iter().map(|e| (e["regression"]["id"].as_i64().unwrap(), e["kind"].as_str().unwrap().to_string())).collect()
}

async fn page(app: &TestApp, uri: &str) -> String {
    let (status, page) = app.get(uri).await;
    assert_eq!(status, 200, "{uri}: {page}");
    page.as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_first_version_already_over_its_contract_is_a_finding_announced_once_and_not_a_regression() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        let formats = [WebhookFormat::Json, WebhookFormat::Slack];
        let app = TestApp::with_config(db, config(&receiver, &formats)).await;
        let (_stop, stopped) = watch::channel(false);
        let settings = config(&receiver, &formats).alerts;
        tokio::spawn(slopewatch::webhooks::sender::run(app.db.store.clone(), settings, app.metrics.clone(), stopped));

        // The lineage's first version already breaks the contract, measured by two hosts.
        for host in ["build-01", "build-02"] {
            let (status, answer) = app.submit(&probe_at("0.16.0", host, over)).await;
            assert_eq!(status, 201, "{answer}");
        }
        assert_eq!(listed(&app, "").await, [(1, "finding".to_string())]);
        assert_eq!(listed(&app, "?kind=finding").await, [(1, "finding".to_string())]);
        assert!(listed(&app, "?kind=regression").await.is_empty(), "a finding is not a regression");
        let (status, answer) = app.get("/api/v1/regressions?kind=bogus").await;
        assert_eq!(status, 400);
        assert!(
            answer["error"]["message"].as_str().unwrap().contains("kind must be regression or finding"),
            "{answer}"
        );

        let (_, detail) = app.get("/api/v1/regressions/1").await;
        assert_eq!(detail["kind"], "finding", "{detail}");
        assert_eq!(detail["regression"]["previous_version"], Value::Null);
        assert_eq!(detail["bisect_command"], Value::Null, "nothing to bisect: {detail}");
        assert_eq!(detail["bisect_command_explicit"], Value::Null);

        let shown = page(&app, "/regressions/1").await;
        assert!(shown.contains("Finding #1: zig-cc-musl"), "{shown}");
        assert!(shown.contains("the first version of zig-cc-musl measured: nothing to regress from"), "{shown}");
        assert!(!shown.contains("slopewatch-agent bisect") && !shown.contains("Last good version"), "{shown}");
        let list = page(&app, "/regressions").await;
        assert!(list.contains("finding</span> at <code>0.16.0</code>, the first version measured"), "{list}");
        let none = page(&app, "/regressions?kind=regression").await;
        assert!(
            none.contains("No regressions or findings of this kind.") && !none.contains("/regressions/1\""),
            "{none}"
        );
        let overview = page(&app, "/").await;
        let findings = overview.split("id=\"findings\"").nth(1).unwrap_or_else(|| panic!("{overview}"));
        let findings = findings.split("<table class=\"matrix\">").next().unwrap();
        assert!(findings.contains("contract.strchr.remaining over its limit"), "{overview}");
        assert!(findings.contains("href=\"/regressions/1\">finding #1</a>"), "{overview}");
        let open = overview.split("id=\"regressions\"").nth(1).unwrap().split("id=\"findings\"").next().unwrap();
        assert!(open.contains("No open regressions"), "the finding is not an open regression: {overview}");
        let series = page(&app, "/series/contract.strchr.remaining/zig-cc-musl").await;
        assert!(series.contains("Finding #1</a>") && series.contains("over at 0.16.0, the first version measured"));
        let markdown = page(&app, "/regressions/1/postmortem.md").await;
        assert!(markdown.starts_with("# Finding #1: zig-cc-musl 0.16.0"), "{markdown}");

        // Back within the contract at the next version: the finding is resolved.
        let (status, _) = app.submit(&probe_at("0.17.0", "build-01", held)).await;
        assert_eq!(status, 201);
        // Broken again after a version that held: that is a regression, with a good end.
        let (status, _) = app.submit(&probe_at("0.18.0", "build-01", over)).await;
        assert_eq!(status, 201);
        assert_eq!(listed(&app, "?kind=regression").await, [(2, "regression".to_string())]);
        let (_, detail) = app.get("/api/v1/regressions/2").await;
        assert_eq!(detail["regression"]["previous_version"], "0.17.0");
        assert!(detail["bisect_command"].as_str().unwrap().contains("bisect --regression 2"), "{detail}");

        // Each event once per target, signed: the finding opened and resolved, then the regression.
        wait_for(Duration::from_secs(20), "the announcements", || receiver.delivered().len() >= 6).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let seen = receiver.delivered();
        seen.iter().for_each(assert_signed);
        let mut events: Vec<(String, i64)> = seen
            .iter()
            .map(body_json)
            .filter(|b| b.get("event").is_some())
            .map(|b| (b["event"].as_str().unwrap().to_string(), b["regression_id"].as_i64().unwrap()))
            .collect();
        events.sort();
        let expected = [("finding.opened", 1), ("finding.resolved", 1), ("regression.opened", 2)];
        assert_eq!(events, expected.map(|(e, id)| (e.to_string(), id)), "{seen:?}");
        let slack: Vec<String> =
            seen.iter().map(body_json).filter_map(|b| b["text"].as_str().map(str::to_string)).collect();
        assert_eq!(slack.len(), 3, "{slack:?}");
        assert!(
            slack
                .iter()
                .any(|t| t.starts_with(":mag: *Finding in zig-cc-musl 0.16.0*: over at the first version measured")
                    && t.contains("Open the finding")),
            "{slack:?}"
        );
        assert!(slack.iter().any(|t| t.contains("the finding of 0.16.0 is resolved")), "{slack:?}");
    })
    .await;
}

#[tokio::test]
async fn a_finding_becomes_a_regression_when_a_version_measured_before_it_turns_out_to_have_held() {
    on_both_backends(|db| async move {
        let receiver = Receiver::reserve();
        let app = TestApp::with_config(db, config(&receiver, &[WebhookFormat::Json])).await;
        let (status, _) = app.submit(&probe_at("0.16.0", "build-01", over)).await;
        assert_eq!(status, 201);
        assert_eq!(listed(&app, "").await, [(1, "finding".to_string())]);
        // The older release, backfilled, held: the finding has a good end now, under its number.
        let (status, _) = app.submit(&probe_at("0.15.2", "build-01", held)).await;
        assert_eq!(status, 201);
        assert_eq!(listed(&app, "").await, [(1, "regression".to_string())]);
        let bodies = app.db.texts("SELECT body FROM deliveries").await;
        let events: Vec<Value> = bodies.iter().map(|b| serde_json::from_str(b).unwrap()).collect();
        let mut names: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
        names.sort();
        assert_eq!(names, ["finding.opened", "regression.opened"], "{bodies:?}");
        let opened = events.iter().find(|e| e["event"] == "regression.opened").unwrap();
        assert_eq!(opened["last_good_version"], "0.15.2");
        assert_eq!(opened["changes"], json!([{"field": "previous_version", "from": null, "to": "0.15.2"}]));
        let finding = events.iter().find(|e| e["event"] == "finding.opened").unwrap();
        let sentence = finding["workloads"][0]["contract_break"].as_str().unwrap();
        assert!(
            sentence.ends_with("held to O(1). A loop that calls it once per token over n bytes is O(n²)."),
            "{sentence}"
        );
    })
    .await;
}
