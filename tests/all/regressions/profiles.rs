//! Where the cost went: runs carry profiles, and a regression compares the first bad version's
//! with the last good version's at one size, sums it up in one sentence that names the function
//! and, where its catalogue probe broke its contract at that version, the contract; on the page
//! (escaped), in the JSON, in the webhook and in the postmortem. A bad profile alone is labelled;
//! a malformed profile is refused with its field. On Postgres and on SQLite.

use crate::builders::{measurements, run_of};
use crate::helpers::webhooks::{config, Receiver};
use crate::helpers::{on_both_backends, TestApp};
use serde_json::{json, Value};
use slopewatch::config::WebhookFormat;

/// A profile at 1,000 records of `total` instructions, `strspn` taking `strspn` of them.
fn profile(total: u64, strspn: u64) -> Value {
    json!({"size": 1000, "total": total, "functions": [
        {"name": "c.string.strspn", "file": "/zig/lib/c/string.zig", "own": strspn, "inclusive": strspn,
         "callers": [{"name": "jsonTranslateTextToBlob", "calls": 3000, "inclusive": strspn, "site": "/s/sqlite3.c:210"}]},
        {"name": "printf_core<script>", "own": 6900, "inclusive": 7000}]})
}

/// A run of `version`: the JSON workload costing `cost(records)` with `profile`, and (at a bad
/// version) the catalogue's strspn probe, linear against its O(1) contract.
fn run(version: &str, cost: impl Fn(f64) -> f64, profile: Option<Value>, probe_over: bool) -> Value {
    let mut json_each = json!({"name": "sqlite-json-each.spaced", "size_unit": "records", "source_hash": "sha256:s0",
                               "measurements": measurements(1000, 6, cost, &[1.0, 1.02, 0.98])});
    if let Some(p) = profile {
        json_each["profile"] = p;
    }
    let probe_cost = |n: f64| if probe_over { 10.0 * n } else { 50.0 };
    let probe = json!({"name": "contract.strspn.remaining", "size_unit": "bytes", "source_hash": "sha256:p0",
        "contract": {"expected": "1", "function": "strspn", "axis": "remaining"},
        "measurements": measurements(4096, 6, probe_cost, &[1.0, 1.01, 0.99])});
    run_of("zig-cc-musl", version, "build-01", vec![json_each, probe])
}

#[tokio::test]
async fn the_regression_says_where_the_cost_went_and_which_contract_broke() {
    on_both_backends(|db| async move {
        let app = TestApp::with_config(db, config(&Receiver::reserve(), &[WebhookFormat::Json])).await;
        let good = run("0.15.2", |n| 1000.0 * n, Some(profile(25_600, 100)), false);
        let bad = run("0.16.0", |n| 1000.0 * n + 0.5 * n * n, Some(profile(1_252_600, 1_222_500)), true);
        let mut run_id = String::new();
        for r in [good, bad] {
            let (status, answer) = app.submit(&r).await;
            assert_eq!(status, 201, "{answer}");
            run_id = answer["run_id"].as_str().unwrap().to_string();
        }
        // The bad run's page and JSON carry its profile.
        let (_, run_page) = app.get(&format!("/runs/{run_id}")).await;
        assert!(run_page.as_str().unwrap().contains("Where its instructions went: 97.6 % of the 1.25M instructions at 1,000 records are in c.string.strspn"), "{run_page}");
        let (_, run_json) = app.get(&format!("/api/v1/runs/{run_id}")).await;
        let carried = run_json["workloads"].as_array().unwrap().iter().find(|w| w["name"] == "sqlite-json-each.spaced").unwrap();
        assert_eq!(carried["profile"]["total"], 1_252_600, "{carried}");
        // The series tables how the top functions' shares moved across the versions.
        let (_, series) = app.get("/series/sqlite-json-each.spaced/zig-cc-musl").await;
        let series = series.as_str().unwrap();
        assert!(series.contains("Where the instructions went, by version"), "{series}");
        let row = series.lines().find(|l| l.contains("<code>c.string.strspn</code>")).unwrap_or_else(|| panic!("{series}"));
        assert!(row.contains(">0.4 %</td>") && row.contains(">97.6 %</td>"), "{row}");
        let (_, list) = app.get("/api/v1/regressions").await;
        let r = list["regressions"].as_array().unwrap().iter().find(|r| r["regression"]["previous_version"] == "0.15.2");
        let id = r.and_then(|r| r["regression"]["id"].as_i64()).unwrap_or_else(|| panic!("{list}"));
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        let went = &detail["where_cost_went"][0];
        let sentence = "99.6 % of the added instructions are in c.string.strspn (called from jsonTranslateTextToBlob, sqlite3.c:210)";
        assert_eq!(went["shift"]["sentence"], sentence, "{detail}");
        assert_eq!((&went["good_version"], &went["shift"]["function"]), (&json!("0.15.2"), &json!("strspn")), "{went}");
        assert_eq!(went["contract"]["sentence"], "strspn broke its O(1) contract at 0.16.0", "{went}");
        assert_eq!(went["contract"]["series_url"], "/series/contract.strspn.remaining/zig-cc-musl", "{went}");

        let (_, page) = app.get(&format!("/regressions/{id}")).await;
        let page = page.as_str().unwrap();
        let section = page.find("<h2 id=\"where-the-cost-went\">").unwrap_or_else(|| panic!("{page}"));
        assert!(section < page.find("<h2>Before and after</h2>").unwrap(), "the section comes above the charts");
        assert!(page.contains(sentence) && page.contains(">strspn broke its O(1) contract at 0.16.0</a>"), "{page}");
        assert!(page.contains("printf_core&lt;script&gt;") && !page.contains("printf_core<script>"), "names are escaped");
        assert!(page.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"sw-cost-bars\""), "the bars are drawn");

        let bodies = app.db.texts("SELECT body FROM deliveries").await;
        let opened: Vec<Value> = bodies.iter().map(|b| serde_json::from_str(b).unwrap()).collect();
        let carried = opened.iter().flat_map(|e| e["workloads"].as_array().cloned().unwrap_or_default());
        let carried: Vec<Value> = carried.filter(|w| w["name"] == "sqlite-json-each.spaced").collect();
        assert!(
            carried.iter().any(|w| w["where_cost_went"] == format!("{sentence}; strspn broke its O(1) contract at 0.16.0")),
            "{bodies:?}"
        );
        let (_, md) = app.get(&format!("/regressions/{id}/postmortem.md")).await;
        let md = md.as_str().unwrap();
        assert!(md.contains("## Where the cost went") && md.contains("(0.16.0 against 0.15.2)"), "{md}");
    })
    .await;
}

#[tokio::test]
async fn a_bad_profile_alone_is_labelled_and_a_malformed_one_is_refused() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let (status, _) = app.submit(&run("0.15.2", |n| 1000.0 * n, None, false)).await;
        assert_eq!(status, 201);
        let bad = run("0.16.0", |n| 1000.0 * n + 0.5 * n * n, Some(profile(1_252_600, 1_222_500)), false);
        assert_eq!(app.submit(&bad).await.0, 201);
        let (_, list) = app.get("/api/v1/regressions").await;
        let id = list["regressions"][0]["regression"]["id"].as_i64().unwrap();
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        let went = &detail["where_cost_went"][0];
        assert_eq!(went["good_version"], Value::Null, "{went}");
        assert!(went["shift"]["sentence"]
            .as_str()
            .unwrap()
            .starts_with("97.6 % of the instructions at 1,000 records are in"));
        assert!(went.get("contract").is_none(), "the probe held: {went}");
        let (_, page) = app.get(&format!("/regressions/{id}")).await;
        assert!(page
            .as_str()
            .unwrap()
            .contains("0.16.0 alone, profiled at 1,000 records: the last good version has no profile"));

        for (field, value) in [
            ("/workloads/0/profile/functions/0/name", json!("str\u{7}spn")),
            ("/workloads/0/profile/functions/0/own", json!(9_999_999_999u64)),
            ("/workloads/0/profile/size", json!(0)),
        ] {
            let mut r = run("0.17.0", |n| 1000.0 * n, Some(profile(1000, 900)), false);
            *r.pointer_mut(field).unwrap() = value;
            let (status, answer) = app.submit(&r).await;
            assert_eq!(status, 422, "{field}: {answer}");
            assert!(answer["error"]["field"].as_str().unwrap().starts_with("workloads[0].profile"), "{answer}");
        }
    })
    .await;
}

#[tokio::test]
async fn chromium_shows_where_the_cost_went_above_the_charts() {
    use crate::helpers::chromium::{output_dir, Chromium};
    use crate::helpers::{Backend, TestDb};
    let Some(chromium) = Chromium::required() else { return };
    let app = TestApp::new(TestDb::new(Backend::Sqlite).await).await;
    let good = run("0.15.2", |n| 1000.0 * n, Some(profile(25_600, 100)), false);
    let bad = run("0.16.0", |n| 1000.0 * n + 0.5 * n * n, Some(profile(1_252_600, 1_222_500)), true);
    for r in [good, bad] {
        assert_eq!(app.submit(&r).await.0, 201);
    }
    let (_, list) = app.get("/api/v1/regressions").await;
    let r = list["regressions"].as_array().unwrap().iter().find(|r| r["regression"]["previous_version"] == "0.15.2");
    let id = r.and_then(|r| r["regression"]["id"].as_i64()).unwrap();
    let url = format!("{}/regressions/{id}", crate::helpers::serve(app.router.clone()).await);
    let dom = tokio::task::spawn_blocking(move || {
        chromium.screenshot(&url, &output_dir().join("where-the-cost-went.png"), (1280, 1600));
        chromium.dom(&url)
    })
    .await
    .unwrap();
    let section = dom.find("id=\"where-the-cost-went\"").unwrap_or_else(|| panic!("{dom}"));
    assert!(section < dom.find("Before and after").unwrap(), "above the charts");
    assert!(dom.contains("99.6 % of the added instructions are in c.string.strspn"), "{dom}");
    assert!(dom.contains("class=\"sw-cost-bars\"") && dom.contains("printf_core&lt;script&gt;"), "{dom}");
}
