//! Probes a search found, on Postgres and on SQLite: `POST /api/v1/found-probes` takes ingest
//! tokens only, refuses a bad submission naming the field and storing nothing of it, and keeps a
//! probe's first finding when another agent finds it again; `GET /api/v1/found-probes` answers
//! them all by function, axis and shape, behind the read gate; and the contracts page lists them
//! with their words, escaped, linked to their series once runs of them report (in headless
//! Chromium too).

use crate::builders::{found_probe, measurements, run_of};
use crate::helpers::chromium::{output_dir, Chromium};
use crate::helpers::{on_both_backends, Backend, TestApp, TestDb};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};
use slopewatch::config::Config;

const FOUND_AT: &str = "2026-12-02T10:30:00+01:00";

async fn post(app: &TestApp, token: Option<&str>, content_type: &str, body: &Value) -> (StatusCode, Value) {
    let mut req = Request::post("/api/v1/found-probes").header("content-type", content_type);
    if let Some(token) = token {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    app.send(req.body(Body::from(serde_json::to_vec(body).unwrap())).unwrap()).await
}

async fn submit(app: &TestApp, probes: Vec<Value>) -> (StatusCode, Value) {
    post(app, Some(&app.ingest_token.clone()), "application/json", &json!({ "probes": probes })).await
}

async fn stored(app: &TestApp) -> String {
    app.db.texts("SELECT CAST(COUNT(*) AS TEXT) FROM found_probes").await.remove(0)
}

#[tokio::test]
async fn submitting_found_probes_needs_an_ingest_token() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let body = json!({"probes": [found_probe("strstr", "needle", "alphabet=1", "zig-cc-musl", FOUND_AT)]});
        let (status, answer) = post(&app, None, "application/json", &body).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
        assert_eq!(answer["error"]["code"], "unauthorized", "{answer}");
        let (status, answer) = post(&app, Some("sw_not-a-token"), "application/json", &body).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
        let editor = app.editor_token.clone();
        let (status, answer) = post(&app, Some(&editor), "application/json", &body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
        assert_eq!(answer["error"]["message"], "this token has scope editor; this needs ingest");
        assert_eq!(stored(&app).await, "0", "nothing refused was stored");
        let admin = app.admin_token.clone();
        let (status, answer) = post(&app, Some(&admin), "application/json", &body).await;
        assert_eq!(status, StatusCode::CREATED, "an admin may submit: {answer}");
    })
    .await;
}

#[tokio::test]
async fn a_bad_found_probe_is_refused_naming_the_field_and_none_of_its_submission_is_stored() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let good = found_probe("strstr", "needle", "alphabet=1", "zig-cc-musl", FOUND_AT);
        for (pointer, value, field) in [
            ("/shape", json!("alphabet;rm -rf"), "probes[1].shape"),
            ("/function", json!("str str"), "probes[1].function"),
            ("/described", json!(" "), "probes[1].described"),
            ("/contract/axis", json!("haystack"), "probes[1].contract"),
            ("/kind", json!("wrong"), "probes[1].class"),
            ("/toolchain", json!(""), "probes[1].toolchain"),
        ] {
            let mut bad = good.clone();
            *bad.pointer_mut(pointer).unwrap() = value;
            let first = found_probe("strspn", "remaining", "set=1", "zig-cc-musl", FOUND_AT);
            let (status, answer) = submit(&app, vec![first, bad]).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{pointer}: {answer}");
            assert_eq!(answer["error"]["code"], "invalid_field", "{answer}");
            assert_eq!(answer["error"]["field"], field, "{pointer}: {answer}");
        }
        let (status, answer) = submit(&app, vec![good.clone(), good.clone()]).await;
        assert_eq!((status, &answer["error"]["field"]), (StatusCode::UNPROCESSABLE_ENTITY, &json!("probes[1]")));
        let (status, answer) = submit(&app, vec![]).await;
        assert_eq!((status, &answer["error"]["field"]), (StatusCode::UNPROCESSABLE_ENTITY, &json!("probes")));
        let mut unknown = good.clone();
        unknown["severity"] = json!("high");
        let (status, answer) = submit(&app, vec![unknown]).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains("severity"), "{answer}");
        let ingest = app.ingest_token.clone();
        let (status, _) = post(&app, Some(&ingest), "text/plain", &json!({"probes": [good]})).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(stored(&app).await, "0", "the good probe beside a bad one was not stored either");
    })
    .await;
}

#[tokio::test]
async fn found_probes_read_back_in_order_and_one_found_again_keeps_its_first_finding() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let strstr = found_probe("strstr", "needle", "alphabet=2,mismatch=last", "zig-cc-musl", FOUND_AT);
        let earlier = found_probe("strstr", "needle", "alphabet=1", "zig-cc-musl", FOUND_AT);
        let strspn = json!({
            "function": "strspn", "axis": "remaining", "shape": "set=1,high=1",
            "described": "a set of one byte ≥ 0x80 against a string of it",
            "contract": {"expected": "1", "function": "strspn", "axis": "remaining"},
            "kind": "bound", "toolchain": "musl-gcc", "found_at": "2026-12-01T08:00:00Z",
        });
        let (status, answer) = submit(&app, vec![strstr.clone(), strspn.clone(), earlier.clone()]).await;
        assert_eq!((status, &answer), (StatusCode::CREATED, &json!({"stored": 3, "new": 3})));

        let (status, listed) = app.get("/api/v1/found-probes").await;
        assert_eq!(status, StatusCode::OK, "{listed}");
        let names: Vec<String> = listed["probes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| format!("{}.{}~{}", p["function"].as_str().unwrap(), p["axis"], p["shape"]))
            .collect();
        assert_eq!(
            names,
            [
                "strspn.\"remaining\"~\"set=1,high=1\"",
                "strstr.\"needle\"~\"alphabet=1\"",
                "strstr.\"needle\"~\"alphabet=2,mismatch=last\""
            ],
            "by function, axis and shape: {listed}"
        );
        let mut expected = strstr.clone();
        expected["found_at"] = json!("2026-12-02T09:30:00Z");
        assert_eq!(listed["probes"][2], expected, "as sent, its time in UTC");
        assert_eq!(listed["probes"][0], strspn, "a bound break has no class and no version");

        // A second agent of the team finds one of them again, against another toolchain, with
        // another described text, beside one of its own.
        let mut again = strstr.clone();
        again["toolchain"] = json!("musl-gcc");
        again["version"] = json!("1.2.5");
        again["described"] = json!("found again");
        again["found_at"] = json!("2026-12-05T10:00:00Z");
        let second = create_token(&app, "second-agent").await;
        let memmem = found_probe("memmem", "haystack", "period=3", "musl-gcc", "2026-12-05T10:00:00Z");
        let body = json!({"probes": [again.clone(), memmem]});
        let (status, answer) = post(&app, Some(&second), "application/json", &body).await;
        assert_eq!((status, &answer), (StatusCode::CREATED, &json!({"stored": 2, "new": 1})));
        let (status, answer) = post(&app, Some(&second), "application/json", &json!({"probes": [again]})).await;
        assert_eq!((status, &answer), (StatusCode::OK, &json!({"stored": 1, "new": 0})), "nothing new");

        let (_, listed) = app.get("/api/v1/found-probes").await;
        assert_eq!(listed["probes"].as_array().map(Vec::len), Some(4), "{listed}");
        assert_eq!(listed["probes"][3], expected, "the first finding is kept whole: {listed}");
        let by = app.db.texts("SELECT submitted_by FROM found_probes ORDER BY function, axis, shape").await;
        assert_eq!(by, ["second-agent", "test-ingest", "test-ingest", "test-ingest"]);
    })
    .await;
}

/// A token of ingest scope named `name`.
async fn create_token(app: &TestApp, name: &str) -> String {
    crate::helpers::create_token(&app.db.store, name, slopewatch::store::Scope::Ingest).await
}

#[tokio::test]
async fn reading_found_probes_needs_a_token_where_reading_needs_a_login() {
    let mut config = Config::default();
    config.auth.require_login_to_read = true;
    let app = TestApp::with_config(TestDb::new(Backend::Sqlite).await, config).await;
    let probe = found_probe("strstr", "needle", "alphabet=1", "zig-cc-musl", FOUND_AT);
    assert_eq!(submit(&app, vec![probe]).await.0, StatusCode::CREATED);
    let (status, answer) = app.get("/api/v1/found-probes").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    let (status, answer) = app.get_with("/api/v1/found-probes", Some(&app.ingest_token.clone())).await;
    assert_eq!(status, StatusCode::OK, "an agent's token reads them: {answer}");
    assert_eq!(answer["probes"][0]["shape"], "alphabet=1");
}

/// A found probe whose described text a page must escape, submitted; and a run of it by
/// zig-cc-musl 0.16.0, over its O(n) contract.
async fn seed_found(app: &TestApp) -> Value {
    let mut probe = found_probe("strstr", "needle", "alphabet=1,mismatch=last", "zig-cc-musl", FOUND_AT);
    probe["described"] = json!("a needle <b>a…ab</b> of m bytes in a haystack of a's");
    assert_eq!(submit(app, vec![probe.clone()]).await.0, StatusCode::CREATED);
    let other = found_probe("memmem", "haystack", "period=3", "musl-gcc", FOUND_AT);
    assert_eq!(submit(app, vec![other]).await.0, StatusCode::CREATED);
    let name = "contract.strstr.needle~alphabet=1,mismatch=last";
    let run = json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:c0",
        "measurements": measurements(1024, 8, |n| 900.0 + 0.01 * n * n, &[1.0, 1.01, 0.99]),
        "contract": {"expected": "n", "function": "strstr", "axis": "needle"}});
    let (status, body) = app.submit(&run_of("zig-cc-musl", "0.16.0", "build-01", vec![run])).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    probe
}

#[tokio::test]
async fn the_contracts_page_lists_found_probes_in_words_linked_to_their_series() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let (_, empty) = app.get("/contracts").await;
        assert!(empty.as_str().unwrap().contains("No search has found a break yet"), "{empty}");
        seed_found(&app).await;
        let (status, page) = app.get("/contracts").await;
        assert_eq!(status, StatusCode::OK);
        let page = page.as_str().unwrap();
        let section = &page[page.find("<h2 id=\"found\">Found by searches</h2>").expect(page)..];
        assert!(!page.contains("<b>a…ab</b>"), "the described text is escaped: {section}");
        assert!(section.contains("a needle &#60;b&#62;a…ab&#60;/b&#62; of m bytes"), "{section}");
        assert!(section.contains("<code>strstr</code> along needle: grew as O(n²), against its contract of O(n)"));
        assert!(section.contains("A break means <code>strstr</code> compares the needle again at every byte."));
        assert!(section.contains("Found by a search against zig-cc-musl 0.16.0, 2026-12-02 09:30 UTC."), "{section}");
        let series = "/series/contract.strstr.needle~alphabet%3D1%2Cmismatch%3Dlast/zig-cc-musl";
        assert!(section.contains(&format!("<a href=\"{series}\">")), "linked to its series: {section}");
        let (status, _) = app.get(series).await;
        assert_eq!(status, StatusCode::OK, "{series} is its series' page");
        assert!(section.contains("contract.memmem.haystack~period=3</p>"), "no runs of it, no link: {section}");
        assert!(section.find("memmem") < section.find("strstr"), "by function: {section}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_shows_a_submitted_found_probe_on_the_contracts_page() {
    let Some(chromium) = Chromium::required() else { return };
    let app = TestApp::new(TestDb::new(Backend::Sqlite).await).await;
    seed_found(&app).await;
    let base = crate::helpers::serve(app.router.clone()).await;
    let url = format!("{base}/contracts");
    let dom = tokio::task::spawn_blocking(move || {
        chromium.screenshot(&url, &output_dir().join("contracts-found-probes.png"), (1280, 1600));
        chromium.dom(&url)
    })
    .await
    .unwrap();
    let section = &dom[dom.find("id=\"found\"").unwrap_or_else(|| panic!("{dom}"))..];
    assert!(section.contains("a needle &lt;b&gt;a…ab&lt;/b&gt; of m bytes in a haystack of a's"), "{section}");
    assert!(!dom.contains("<b>a…ab</b>"), "no element was injected");
    assert!(section.contains("grew as O(n²), against its contract of O(n)"), "{section}");
    assert!(section.contains("Found by a search against zig-cc-musl 0.16.0, 2026-12-02 09:30 UTC."), "{section}");
    assert!(section.contains("contract.strstr.needle~alphabet=1,mismatch=last</a>"), "{section}");
}
