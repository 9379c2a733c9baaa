//! Bisections recorded on a regression: the endpoint's answers and idempotency on Postgres and
//! SQLite, the regression's JSON, page (in a real browser) and Markdown postmortem, and the
//! `regression.bisected` webhook delivered once to a real listener whatever the retries.

use crate::builders::seed_regression;
use crate::helpers::chromium::{browser, output_dir, Chromium};
use crate::helpers::forms::get;
use crate::helpers::webhooks::{assert_signed, body_json, wait_for, Receiver};
use crate::helpers::{on_both_backends, TestApp, TestDb};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};
use slopewatch::config::Config;
use slopewatch::config::WebhookFormat;
use std::time::Duration;
use tokio::sync::watch;
use uuid::Uuid;

const FIRST_BAD: &str = "0.16.0-dev.1234+abc";

/// A found bisection of the seeded regression: seven steps, measured ends first, one skipped with
/// markup in its note; the good end's step names `run_id`.
pub(super) fn bisection(id: Uuid, run_id: Uuid) -> Value {
    let step = |version: &str, verdict: &str, slope: Option<f64>, seconds: f64| {
        json!({"version": version, "verdict": verdict, "slope": slope, "workload": slope.map(|_| "workload-0"),
               "seconds": seconds})
    };
    let mut steps = vec![
        step("0.15.0", "good", Some(1.0), 6.0),
        step("0.16.0", "bad", Some(2.01), 6.5),
        step("0.16.0-dev.2000+bbb", "bad", Some(1.99), 5.0),
        step("0.16.0-dev.500+aaa", "good", Some(1.01), 6.0),
        step("0.16.0-dev.1000+ccc", "skipped", None, 1.5),
        step("0.16.0-dev.1233+def", "good", Some(1.02), 8.0),
        step(FIRST_BAD, "bad", Some(1.97), 8.0),
    ];
    steps[0]["run_id"] = json!(run_id);
    steps[1]["run_id"] = json!(Uuid::new_v4());
    steps[4]["note"] = json!("did not build: <script>alert(1)</script>");
    json!({
        "bisection_id": id,
        "agent_version": "0.1.0",
        "started_at": "2026-11-30T08:00:00Z",
        "seconds": 41.0,
        "host": {"name": "build-07", "cpu": "Test CPU", "kernel": "6.1.0", "arch": "x86_64"},
        "lineage": "zig-cc-musl",
        "workloads": ["workload-0"],
        "max_slope": 1.5,
        "good": "0.15.0",
        "bad": "0.16.0",
        "candidates": 412,
        "outcome": "found",
        "first_bad": FIRST_BAD,
        "last_good": "0.16.0-dev.1233+def",
        "steps": steps,
    })
}

/// The versions of the steps in the order they are shown, with their measuring order.
const IN_VERSION_ORDER: [(&str, i64); 7] = [
    ("0.15.0", 1),
    ("0.16.0-dev.500+aaa", 4),
    ("0.16.0-dev.1000+ccc", 5),
    ("0.16.0-dev.1233+def", 6),
    (FIRST_BAD, 7),
    ("0.16.0-dev.2000+bbb", 3),
    ("0.16.0", 2),
];

async fn post(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    content_type: &str,
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let mut req = Request::post(path).header("content-type", content_type);
    if let Some(token) = token {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    app.send(req.body(Body::from(body)).unwrap()).await
}

pub(super) async fn submit(app: &TestApp, regression: i64, token: &str, body: &Value) -> (StatusCode, Value) {
    let path = format!("/api/v1/regressions/{regression}/bisections");
    post(app, &path, Some(token), "application/json", serde_json::to_vec(body).unwrap()).await
}

/// A token of scope `bisect`, named `test-bisect`, as agents that bisect are given.
pub(super) async fn bisect_token(app: &TestApp) -> String {
    crate::helpers::create_token(&app.db.store, "test-bisect", slopewatch::store::Scope::Bisect).await
}

/// A run of the regression's good version under a known id, for a step to link to.
pub(super) async fn stored_run(app: &TestApp) -> Uuid {
    let id = Uuid::new_v4();
    let mut run = crate::builders::RunShape::new("zig-cc-musl", "0.15.0").workloads(3).sizes(8).samples(5).json();
    run["run_id"] = json!(id);
    let (status, body) = app.submit(&run).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    id
}

fn public(config: Config) -> Config {
    Config { public_url: Some("https://sw.example".into()), ..config }
}

#[tokio::test]
async fn a_bisection_is_stored_once_retries_answer_200_and_other_content_under_its_id_409() {
    on_both_backends(|db| async move {
        let app = TestApp::with_config(db, public(Config::default())).await;
        let bisector = bisect_token(&app).await;
        let id = seed_regression(&app).await;
        let run_id = stored_run(&app).await;
        let b = bisection(Uuid::new_v4(), run_id);
        let path = format!("/api/v1/regressions/{id}/bisections");
        let bytes = serde_json::to_vec(&b).unwrap();

        let revoked =
            crate::helpers::create_token(&app.db.store, "retired-agent", slopewatch::store::Scope::Ingest).await;
        assert!(app.db.store.revoke_token("retired-agent").await.unwrap());
        let unknown = slopewatch::auth::generate().secret;
        for token in [None, Some("sw_not-a-token"), Some(unknown.as_str()), Some(revoked.as_str())] {
            let (status, body) = post(&app, &path, token, "application/json", bytes.clone()).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{token:?}: {body}");
        }
        let (status, _) = post(&app, &path, Some(&bisector), "text/plain", bytes.clone()).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

        let (status, created) = submit(&app, id, &bisector, &b).await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        let bisection_id = b["bisection_id"].as_str().unwrap();
        assert_eq!(
            created,
            json!({"bisection_id": bisection_id, "regression_id": id,
                   "url": format!("/regressions/{id}#bisection-{bisection_id}")})
        );
        for _ in 0..2 {
            let (status, again) = submit(&app, id, &bisector, &b).await;
            assert_eq!((status, &again), (StatusCode::OK, &created), "a retry stores nothing and answers the same");
        }
        let mut changed = b.clone();
        changed["seconds"] = json!(42.0);
        let (status, body) = submit(&app, id, &bisector, &changed).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");

        let mut by_hand = bisection(Uuid::new_v4(), run_id);
        by_hand["host"]["name"] = json!("laptop-3");
        let (status, body) = submit(&app, id, &app.editor_token, &by_hand).await;
        assert_eq!(status, StatusCode::CREATED, "an editor's token records bisections too: {body}");

        let (status, body) = submit(&app, id + 1000, &bisector, &bisection(Uuid::new_v4(), run_id)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        let mut other = bisection(Uuid::new_v4(), run_id);
        other["lineage"] = json!("gcc-glibc");
        let (status, body) = submit(&app, id, &bisector, &other).await;
        assert_eq!((status, body["error"]["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("lineage")));
        let mut broken = bisection(Uuid::new_v4(), run_id);
        broken["steps"][1]["slope"] = Value::Null;
        let (status, body) = submit(&app, id, &bisector, &broken).await;
        assert_eq!(
            (status, body["error"]["field"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("steps[1].slope")),
            "{body}"
        );

        let (status, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        assert_eq!(status, StatusCode::OK, "{detail}");
        let bisections = detail["bisections"].as_array().unwrap();
        assert_eq!(bisections.len(), 2, "the retries and refusals stored nothing: {detail}");
        let first = &bisections[0];
        assert_eq!(first["bisection_id"], bisection_id);
        assert_eq!((first["outcome"].as_str(), first["first_bad"].as_str()), (Some("found"), Some(FIRST_BAD)));
        let steps: Vec<(&str, i64)> = first["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["version"].as_str().unwrap(), s["position"].as_i64().unwrap()))
            .collect();
        assert_eq!(steps, IN_VERSION_ORDER, "steps in version order, dev builds between their releases");
        assert_eq!(first["steps"][0]["run_stored"], true);
        assert_eq!(first["steps"][6]["run_stored"], false, "a run this server does not hold is not linked");
        assert_eq!(first["steps"][2]["note"], "did not build: <script>alert(1)</script>");
        assert_eq!(
            detail["bisect_command"],
            format!(
                "slopewatch-agent bisect --regression {id} --server https://sw.example --token \"$SLOPEWATCH_TOKEN\" \
                 --candidates candidates.txt --max-slope 1.5 --workloads workload-0,workload-1,workload-2"
            )
        );
        assert_eq!(
            detail["bisect_command_explicit"],
            "slopewatch-agent bisect --good 0.15.0 --bad 0.16.0 --lineage zig-cc-musl \
             --workloads workload-0,workload-1,workload-2 --max-slope 1.5 --candidates candidates.txt"
        );
    })
    .await;
}

#[tokio::test]
async fn the_page_shows_the_bisection_its_steps_and_the_command_in_a_browser() {
    let app = TestApp::new(TestDb::new(crate::helpers::Backend::Sqlite).await).await;
    let bisector = bisect_token(&app).await;
    let id = seed_regression(&app).await;
    let run_id = stored_run(&app).await;
    let (status, body) = submit(&app, id, &bisector, &bisection(Uuid::new_v4(), run_id)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let base = crate::helpers::serve(app.router.clone()).await;
    let chromium =
        Chromium::new(browser().expect("Chromium is needed: `apt-get install chromium` or set SLOPEWATCH_CHROMIUM"));
    let url = format!("{base}/regressions/{id}");
    let shot = output_dir().join("regression-bisected.png");
    let dom = tokio::task::spawn_blocking(move || {
        chromium.screenshot(&url, &shot, (1280, 2400));
        chromium.dom(&url)
    })
    .await
    .unwrap();

    assert!(dom.contains("Bisection on build-07: bisected to 0.16.0-dev.1234+abc in 7 steps, 41 s"), "{dom}");
    let steps = &dom[dom.find("sw-bisection-steps").expect("the steps table")..];
    let mut at = 0;
    for (version, position) in IN_VERSION_ORDER {
        let cell = format!("<code>{version}</code>");
        let found = steps[at..].find(&cell).unwrap_or_else(|| panic!("{version} after the one before: {steps}"));
        at += found + cell.len();
        let row_end = at + steps[at..].find("</tr>").unwrap();
        assert!(steps[at..row_end].contains(&format!("<td class=\"num\">{position}</td>")), "{version}: # {position}");
    }
    assert!(steps.contains(&format!("<a href=\"/runs/{run_id}\"><code>0.15.0</code></a>")), "{steps}");
    assert!(steps.contains("<td><code>0.16.0</code></td>"), "no link to a run the server does not hold");
    assert!(steps.contains("did not build: &lt;script&gt;alert(1)&lt;/script&gt;"), "the note is text");
    assert!(!dom.contains("<script>alert(1)"), "no markup from the agent reaches the page");
    assert!(
        dom.contains(&format!(
            "slopewatch-agent bisect --regression {id} --server {base} --token \"$SLOPEWATCH_TOKEN\" \
             --candidates candidates.txt --max-slope 1.5 --workloads workload-0,workload-1,workload-2"
        )),
        "the command names this server: {dom}"
    );
    assert!(dom.contains("slopewatch-agent bisect --good 0.15.0 --bad 0.16.0 --lineage zig-cc-musl"), "{dom}");
    assert!(dom.contains("VERSION=CC COMMAND"));
}

#[tokio::test]
async fn the_markdown_postmortem_has_a_bisection_section() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let bisector = bisect_token(&app).await;
        let id = seed_regression(&app).await;
        let before = get(&app, &format!("/regressions/{id}/postmortem.md"), "").await.text;
        assert!(!before.contains("## Bisection"), "{before}");
        let run_id = stored_run(&app).await;
        let (status, body) = submit(&app, id, &bisector, &bisection(Uuid::new_v4(), run_id)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");

        let md = get(&app, &format!("/regressions/{id}/postmortem.md"), "").await.text;
        let section = &md[md.find("\n## Bisection\n").expect("a Bisection section")..];
        assert!(section.contains("\nBisected to 0.16.0-dev.1234+abc in 7 steps, 41 s.\n"), "{section}");
        assert!(section.contains("- Range: 0.15.0 → 0.16.0, 412 candidates"), "{section}");
        assert!(section.contains("- First bad: 0.16.0-dev.1234+abc, last good: 0.16.0-dev.1233+def"), "{section}");
        assert!(section.contains("| 0.16.0-dev.500+aaa | good | 1.01 | workload-0 | 6.0 | 4 |  |"), "{section}");
        assert!(section.contains("| 0.16.0-dev.1000+ccc | skipped | – | – | 1.5 | 5 | did not build: &lt;script&gt;alert(1)&lt;/script&gt; |"), "{section}");
        let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| 0.1")).map(|l| l.split(" | ").next().unwrap()).collect();
        let expected: Vec<String> = IN_VERSION_ORDER.iter().map(|(v, _)| format!("| {v}")).collect();
        assert_eq!(rows, expected);
        assert!(md.contains(": Bisection on build-07: bisected to 0.16.0-dev.1234+abc in 7 steps, 41 s"), "timeline: {md}");
    })
    .await;
}

#[tokio::test]
async fn regression_bisected_is_delivered_once_signed_in_both_formats_despite_retries() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        let config = public(crate::helpers::webhooks::config(&receiver, &[WebhookFormat::Json, WebhookFormat::Slack]));
        let settings = config.alerts.clone();
        let app = TestApp::with_config(db, config).await;
        let bisector = bisect_token(&app).await;
        let (stop, stopped) = watch::channel(false);
        tokio::spawn(slopewatch::webhooks::sender::run(app.db.store.clone(), settings, app.metrics.clone(), stopped));

        let id = seed_regression(&app).await;
        let b = bisection(Uuid::new_v4(), Uuid::new_v4());
        for expected in [StatusCode::CREATED, StatusCode::OK, StatusCode::OK] {
            assert_eq!(submit(&app, id, &bisector, &b).await.0, expected);
        }
        let bisected =
            || receiver.delivered().into_iter().filter(|r| r.event == "regression.bisected").collect::<Vec<_>>();
        wait_for(Duration::from_secs(20), "regression.bisected to both targets", || bisected().len() >= 2).await;
        assert_eq!(submit(&app, id, &bisector, &b).await.0, StatusCode::OK, "a retry after delivery");
        tokio::time::sleep(Duration::from_millis(600)).await;
        let seen = bisected();
        assert_eq!(seen.len(), 2, "once per target: {seen:?}");
        assert_ne!(seen[0].delivery, seen[1].delivery);
        for r in &seen {
            assert_signed(r);
        }
        let bodies: Vec<Value> = seen.iter().map(body_json).collect();
        let json = bodies.iter().find(|b| b.get("event").is_some()).expect("the json body");
        assert_eq!(json["event"], "regression.bisected");
        assert_eq!(json["regression_id"], id);
        let facts = &json["bisection"];
        assert_eq!(facts["bisection_id"], b["bisection_id"]);
        assert_eq!((facts["outcome"].as_str(), facts["first_bad"].as_str()), (Some("found"), Some(FIRST_BAD)));
        assert_eq!(facts["last_good"], "0.16.0-dev.1233+def");
        assert_eq!((facts["steps"].as_u64(), facts["skipped"].as_u64()), (Some(7), Some(1)));
        assert_eq!((facts["good"].as_str(), facts["bad"].as_str()), (Some("0.15.0"), Some("0.16.0")));
        assert_eq!((facts["seconds"].as_f64(), facts["workloads"].clone()), (Some(41.0), json!(["workload-0"])));
        assert_eq!(json["links"]["regression"], format!("https://sw.example/regressions/{id}"));
        let slack = bodies.iter().find_map(|b| b["text"].as_str()).expect("the slack body");
        assert!(slack.starts_with(&format!(":mag: *Regression #{id} in zig-cc-musl 0.16.0 bisected*")), "{slack}");
        assert!(slack.contains("\nbisected to 0.16.0-dev.1234+abc in 7 steps (41 s), last good 0.16.0-dev.1233+def\n"));

        let detail = app.db.store.regression(id).await.unwrap().unwrap();
        let rows = detail.deliveries.iter().filter(|d| d.delivery.event == "regression.bisected").count();
        assert_eq!(rows, 2, "one delivery row per target, none for the retries");
        let _ = stop.send(true);
    })
    .await;
}
