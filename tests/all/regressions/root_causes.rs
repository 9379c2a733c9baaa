//! Root causes: a regression's workloads grouped under the functions that broke at its version,
//! a team's own first, the unattributed apart, told first on its page (in Chromium), in its JSON,
//! webhooks (one Slack line per cause), postmortem, version page, release note and the overview;
//! a workload that joins later is announced only for a cause it brings. On Postgres and SQLite.
//! The real agent's Zig 0.15.2 → 0.16.0 story is in `zig`.

use crate::builders::{measurements, run_of};
use crate::helpers::chromium::Chromium;
use crate::helpers::webhooks::{config, Receiver};
use crate::helpers::{on_both_backends, serve, TestApp};
use serde_json::{json, Value};
use slopewatch::config::WebhookFormat;

/// A profile at 1,000 records, `function` taking `own` of `total` instructions.
fn profile(total: u64, function: &str, own: u64) -> Value {
    json!({"size": 1000, "total": total, "functions": [
        {"name": function, "own": own, "inclusive": own},
        {"name": "main", "own": total - own, "inclusive": total}]})
}

/// A workload of records costing `cost`, with `profile` where it has one.
fn records(name: &str, cost: fn(f64) -> f64, profile: Option<Value>) -> Value {
    let mut w = json!({"name": name, "size_unit": "records", "source_hash": "sha256:s0",
                       "measurements": measurements(1000, 6, cost, &[1.0, 1.02, 0.98])});
    if let Some(p) = profile {
        w["profile"] = p;
    }
    w
}

/// The catalogue's probe of `function` on its remaining bytes, O(1) by contract, over it when
/// `over`.
fn probe(function: &str, over: bool) -> Value {
    let cost = if over { |n: f64| 10.0 * n } else { |_: f64| 50.0 };
    json!({"name": format!("contract.{function}.remaining"), "size_unit": "bytes", "source_hash": "sha256:p0",
           "contract": {"expected": "1", "function": function, "axis": "remaining",
                        "broken": "reads the whole remaining string"},
           "measurements": measurements(4096, 6, cost, &[1.0, 1.01, 0.99])})
}

/// A probe of `function`'s bound that fails at the bad version as `failure` says.
fn failing_probe(name: &str, function: &str, failure: Option<Value>) -> Value {
    let mut w = json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:p0",
           "contract": {"expected": "1", "function": function, "axis": "bound"},
           "measurements": measurements(4096, 6, |_| 50.0, &[1.0, 1.01, 0.99])});
    if let Some(f) = failure {
        w["failure"] = f;
    }
    w
}

fn linear(n: f64) -> f64 {
    1000.0 * n
}

fn quadratic(n: f64) -> f64 {
    1000.0 * n + 0.5 * n * n
}

/// The two versions: at 0.16.0 strspn reads the whole remaining string (its probe, its loop, the
/// SQLite JSON path and the team's tokenizer trace to it), memccpy gives a wrong result, strncmp
/// reads past its bound, and a team's parser went quadratic in qsort, which broke nothing.
fn story(version: &str) -> Value {
    let bad = version == "0.16.0";
    let cost = if bad { quadratic } else { linear };
    let (total, strspn) = if bad { (1_252_600, 1_222_500) } else { (25_600, 100) };
    let wrong = json!({"kind": "wrong_result", "size": 8192, "got": "0", "expected": "32",
                       "detail": "wrong result: 0 hits, expected 32"});
    let crashed = json!({"kind": "crashed", "size": 128, "signal": 11, "detail": "read past its bound of 127 bytes"});
    run_of(
        "zig-cc-musl",
        version,
        "build-01",
        vec![
            records("sqlite-json-each.spaced", cost, Some(profile(total, "c.string.strspn", strspn))),
            records("tokens", cost, Some(profile(total, "strspn", strspn * 9 / 10))),
            records("parser", cost, Some(profile(total, "qsort", strspn))),
            records("strspn", cost, None),
            probe("strspn", bad),
            failing_probe("contract.memccpy.bound", "memccpy", bad.then_some(wrong)),
            failing_probe("contract.strncmp.bound", "strncmp", bad.then_some(crashed)),
        ],
    )
}

/// The regression at 0.16.0 after 0.15.2 as its JSON has it.
async fn regression(app: &TestApp) -> (i64, Value) {
    let (_, list) = app.get("/api/v1/regressions").await;
    let r = list["regressions"].as_array().unwrap().iter().find(|r| r["regression"]["previous_version"] == "0.15.2");
    let id = r.and_then(|r| r["regression"]["id"].as_i64()).unwrap_or_else(|| panic!("{list}"));
    (id, app.get(&format!("/api/v1/regressions/{id}")).await.1)
}

fn functions(detail: &Value) -> Vec<&str> {
    detail["root_causes"].as_array().unwrap().iter().map(|c| c["function"].as_str().unwrap()).collect()
}

fn workloads(cause: &Value) -> Vec<&str> {
    cause["workloads"].as_array().unwrap().iter().map(|w| w["workload"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_regression_is_told_by_its_causes_first_everywhere() {
    on_both_backends(|db| {
        async move {
            let formats = [WebhookFormat::Json, WebhookFormat::Slack];
            let app = TestApp::with_config(db, config(&Receiver::reserve(), &formats)).await;
            for version in ["0.15.2", "0.16.0"] {
                let (status, answer) = app.submit(&story(version)).await;
                assert_eq!(status, 201, "{answer}");
            }
            let (id, detail) = regression(&app).await;
            assert_eq!(functions(&detail), ["strspn", "memccpy", "strncmp"], "{detail}");
            let strspn = &detail["root_causes"][0];
            assert_eq!(
                workloads(strspn),
                ["tokens", "sqlite-json-each.spaced", "strspn", "contract.strspn.remaining"],
                "the team's own first: {strspn}"
            );
            assert_eq!((&strspn["break"], &strspn["reaches_team"]), (&json!("over_contract"), &json!(true)));
            assert_eq!(strspn["sentence"], "reads the whole remaining string (O(1) → O(n))");
            assert_eq!(strspn["probe_url"], "/series/contract.strspn.remaining/zig-cc-musl");
            assert_eq!(
                (&strspn["workloads"][0]["group"], &strspn["workloads"][0]["via"]),
                (&json!("team"), &json!("profile"))
            );
            assert_eq!(detail["root_causes"][1]["break"], "wrong_result");
            assert_eq!(detail["root_causes"][2]["break"], "read_past_bound");
            let unattributed: Vec<&str> =
                detail["unattributed"].as_array().unwrap().iter().map(|w| w["workload"].as_str().unwrap()).collect();
            assert_eq!(unattributed, ["parser"], "qsort broke no contract: never forced under a cause");

            // The webhooks: the causes in the JSON, one Slack line per cause.
            let bodies = app.db.texts("SELECT body FROM deliveries").await;
            let bodies: Vec<Value> = bodies.iter().map(|b| serde_json::from_str(b).unwrap()).collect();
            let event =
                bodies.iter().find(|b| b["event"] == "regression.opened").unwrap_or_else(|| panic!("{bodies:?}"));
            assert_eq!(functions(event), ["strspn", "memccpy", "strncmp"], "{event}");
            let slack = bodies.iter().find_map(|b| b["text"].as_str()).unwrap_or_else(|| panic!("{bodies:?}"));
            let causes: Vec<&str> = slack.lines().filter(|l| l.starts_with("• `")).collect();
            assert_eq!(causes.len(), 4, "three causes and the one workload that traces to none: {slack}");
            assert!(
                causes[0]
                    .starts_with("• `strspn` reads the whole remaining string (O(1) → O(n)): 4 workloads, `tokens`"),
                "{slack}"
            );
            assert!(
                causes[1].starts_with("• `memccpy` gives a wrong result (wrong result at 8 KiB: got 0, expected 32)"),
                "{slack}"
            );
            assert!(slack.contains("Traced to no cause:\n• `parser`: slope "), "{slack}");

            // The page opens with them, the flat table below; so does the postmortem.
            let (_, page) = app.get(&format!("/regressions/{id}")).await;
            let page = page.as_str().unwrap();
            let causes_at = page.find("<h2 id=\"root-causes\">").unwrap_or_else(|| panic!("{page}"));
            assert!(causes_at < page.find("<h2>Numbers</h2>").unwrap(), "the causes come first");
            assert!(page.contains("broke 3 functions; 2 workloads trace to strspn"), "{page}");
            let (_, md) = app.get(&format!("/regressions/{id}/postmortem.md")).await;
            let md = md.as_str().unwrap();
            assert!(md.find("## Root causes").unwrap() < md.find("## Timeline").unwrap(), "{md}");
            assert!(
                md.contains("- strspn reads the whole remaining string (O(1) → O(n)): 4 workloads, tokens, "),
                "{md}"
            );
            assert!(md.contains("- Traced to no cause: parser"), "{md}");

            // The version page, its release note and the overview's banner say them too.
            let (_, version) = app.get("/toolchains/zig-cc-musl/0.16.0").await;
            let version = version.as_str().unwrap();
            assert!(version.contains("it broke 3 functions; 2 workloads trace to strspn"), "{version}");
            assert!(
                version.contains("<li>strspn reads the whole remaining string (O(1) → O(n)): 4 workloads"),
                "{version}"
            );
            let (_, note) = app.get("/toolchains/zig-cc-musl/0.16.0?format=md").await;
            assert!(note.as_str().unwrap().contains("    - memccpy gives a wrong result"), "{note}");
            let (_, json) = app.get("/api/v1/toolchains/zig-cc-musl/0.16.0").await;
            let listed = json["regressions"].as_array().unwrap().iter().find(|r| r["id"] == id).unwrap();
            assert_eq!(listed["root_causes"][0]["function"], "strspn", "{listed}");
            let (_, overview) = app.get("/").await;
            assert!(overview
                .as_str()
                .unwrap()
                .contains("<span class=\"causes\">broke 3 functions; 2 workloads trace to strspn</span>"));

            // In a real browser, the causes are the first thing under the heading.
            if let Some(chromium) = Chromium::required() {
                let url = format!("{}/regressions/{id}", serve(app.router.clone()).await);
                let dom = tokio::task::spawn_blocking(move || chromium.dom(&url)).await.unwrap();
                let first_h2 = dom.find("<h2").unwrap();
                assert!(dom[first_h2..].starts_with("<h2 id=\"root-causes\">Root causes</h2>"), "{dom}");
                assert_eq!(dom.matches("<li class=\"sw-cause ").count(), 3, "{dom}");
                assert!(
                    dom.contains("<a class=\"sw-cause-probe\" href=\"/series/contract.strspn.remaining/zig-cc-musl\">")
                );
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_workload_that_joins_later_is_announced_only_for_a_cause_it_brings() {
    on_both_backends(|db| async move {
        let app = TestApp::with_config(db, config(&Receiver::reserve(), &[WebhookFormat::Json])).await;
        let (total, own) = (1_252_600, 1_222_500);
        let json_each = |cost| records("sqlite-json-each.spaced", cost, Some(profile(total, "strspn", own)));
        for (version, cost, over) in [("0.15.2", linear as fn(f64) -> f64, false), ("0.16.0", quadratic, true)] {
            let run = run_of("zig-cc-musl", version, "build-01", vec![json_each(cost), probe("strspn", over)]);
            assert_eq!(app.submit(&run).await.0, 201);
        }
        let events = || async {
            let bodies = app.db.texts("SELECT body FROM deliveries").await;
            bodies.iter().map(|b| serde_json::from_str::<Value>(b).unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(events().await.len(), 1, "opened");
        // Another of the team's SQLite paths, later, at the same version: strspn again.
        let arrow = records("sqlite-json-arrow.pretty", quadratic, Some(profile(total, "strspn", own)));
        for version_run in [
            run_of("zig-cc-musl", "0.15.2", "build-02", vec![records("sqlite-json-arrow.pretty", linear, None)]),
            run_of("zig-cc-musl", "0.16.0", "build-02", vec![arrow]),
        ] {
            assert_eq!(app.submit(&version_run).await.0, 201);
        }
        let (_, detail) = regression(&app).await;
        assert_eq!(workloads(&detail["root_causes"][0]).len(), 3, "it joined strspn: {detail}");
        assert_eq!(events().await.len(), 1, "no announcement for a workload of a known cause");
        // Then one whose cost went to strcspn, whose probe broke too: a new cause, announced once.
        let like = records("sqlite-like.long-text", quadratic, Some(profile(total, "strcspn", own)));
        for version_run in [
            run_of(
                "zig-cc-musl",
                "0.15.2",
                "build-03",
                vec![records("sqlite-like.long-text", linear, None), probe("strcspn", false)],
            ),
            run_of("zig-cc-musl", "0.16.0", "build-03", vec![like, probe("strcspn", true)]),
        ] {
            assert_eq!(app.submit(&version_run).await.0, 201);
        }
        let events = events().await;
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[1]["event"], "regression.updated");
        let changes = events[1]["changes"].as_array().unwrap();
        assert_eq!(changes[0]["field"], "workloads", "which joined: {changes:?}");
        assert_eq!(changes[1], json!({"field": "root_causes", "from": "strspn", "to": "strspn, strcspn"}));
        assert_eq!(functions(&events[1]), ["strspn", "strcspn"]);
    })
    .await;
}
