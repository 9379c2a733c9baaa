//! Complexity classes end to end, on Postgres and on SQLite: the API's fits and series versions
//! carry them, the pages name them beside the slope and the step between versions, and the class
//! rule opens a regression on a step up, announced with both classes, while an unsure class opens
//! nothing.

use crate::helpers::webhooks::{body_json, wait_for, Receiver, SECRET};
use crate::helpers::{on_both_backends, TestApp, TestDb};
use axum::http::StatusCode;
use serde_json::{json, Value};
use slopewatch::config::Config;
use slopewatch::config::{AlertRule, AlertSettings, RetryPolicy, Rules, Webhook, WebhookFormat};
use std::time::Duration;
use tokio::sync::watch;

/// A workload's name and its time in ns at a size.
type Workload<'a> = (&'a str, fn(f64) -> f64);

/// A run of one lineage and version whose workloads take `time(n)` ns at `sizes` sizes doubling
/// from 64 KiB, five samples a size within ±0.4% of it.
fn run(lineage: &str, version: &str, workloads: &[Workload<'_>], sizes: usize) -> Value {
    let workloads: Vec<Value> = workloads
        .iter()
        .map(|(name, time)| {
            let measurements = crate::builders::measurements(65536, sizes, time, &crate::builders::SPREAD_FIVE);
            json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:00", "measurements": measurements})
        })
        .collect();
    crate::builders::run_of(lineage, version, "build-01", workloads)
}

fn linear(n: f64) -> f64 {
    3.0 * n
}

fn quadratic(n: f64) -> f64 {
    1e-3 * n * n
}

/// A fixed cost that hides most of the growth: the log-log slope of these over 128× stays far
/// under 1.5, though the growing part is quadratic (and linear before it).
fn fixed_plus_linear(n: f64) -> f64 {
    1e10 + 8e3 * n
}

fn fixed_plus_quadratic(n: f64) -> f64 {
    1e10 + 1e-3 * n * n
}

async fn submit(app: &TestApp, run: &Value) -> Value {
    let (status, body) = app.submit(run).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

async fn page(app: &TestApp, uri: &str) -> String {
    let (status, body) = app.get(uri).await;
    assert_eq!(status, StatusCode::OK, "{uri}: {body}");
    body.as_str().unwrap_or_else(|| panic!("{uri} answers a page")).to_string()
}

#[tokio::test]
async fn run_and_series_answers_carry_the_complexity_of_each_fit_and_each_series_version() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let workloads: [Workload<'_>; 2] = [("scan", linear), ("tokenize", quadratic)];
        let answer = submit(&app, &run("gcc-glibc", "14.2.0", &workloads, 7)).await;
        let class_of = |fits: &[Value], name: &str| {
            let fit = fits.iter().find(|f| f["workload"] == name || f["name"] == name).expect(name);
            fit["complexity"].clone()
        };
        let (_, detail) = app.get(&format!("/api/v1/runs/{}", answer["run_id"].as_str().unwrap())).await;
        let workloads = detail["workloads"].as_array().unwrap();
        assert_eq!(class_of(workloads, "scan")["class"], "n", "{detail}");
        assert_eq!(class_of(workloads, "tokenize")["class"], "n^2", "{detail}");
        let c = class_of(workloads, "tokenize");
        for field in ["weight", "runner_up_weight", "exponent", "exponent_ci_low", "exponent_ci_high"] {
            assert!(c[field].is_f64(), "{field} in {c}");
        }
        assert!(c["runner_up"].is_string(), "{c}");
        assert!((c["exponent"].as_f64().unwrap() - 2.0).abs() < 0.05, "{c}");

        // A second run of the version: the summary's class is that of the medians across runs.
        submit(&app, &run("gcc-glibc", "14.2.0", &workloads_of(quadratic), 7)).await;
        let (_, series) = app.get("/api/v1/series?workload=tokenize&toolchain=gcc-glibc").await;
        let version = &series["versions"][0];
        assert_eq!(version["runs"], 2, "{series}");
        assert_eq!(version["complexity"]["class"], "n^2", "{series}");
        assert!(version["complexity"]["exponent_ci_low"].as_f64().unwrap() > 1.9, "{series}");

        // Four sizes name no class, and give no exponent.
        let answer = submit(&app, &run("gcc-glibc", "15.1.0", &[("scan", linear)], 4)).await;
        let (_, detail) = app.get(&format!("/api/v1/runs/{}", answer["run_id"].as_str().unwrap())).await;
        let c = &detail["workloads"][0]["complexity"];
        assert_eq!(c["class"], "unsure", "{detail}");
        assert!(c["exponent"].is_null() && c["weight"].is_f64(), "{detail}");
    })
    .await;
}

fn workloads_of(time: fn(f64) -> f64) -> [Workload<'static>; 1] {
    [("tokenize", time)]
}

#[tokio::test]
async fn pages_name_the_class_beside_the_slope_and_the_step_between_versions() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        submit(&app, &run("zig-cc-musl", "0.15.2", &[("strchr-scan", linear)], 7)).await;
        submit(&app, &run("zig-cc-musl", "0.16.0", &[("strchr-scan", quadratic)], 7)).await;

        let overview = page(&app, "/").await;
        assert!(overview.contains(r#"<span class="class">O(n²)</span> · k 2.00"#), "{overview}");

        let series = page(&app, "/series/strchr-scan/zig-cc-musl").await;
        assert!(series.contains("O(n) through 0.15.2, O(n²) from 0.16.0"), "{series}");
        assert!(
            series.contains(r#"<td class="class">O(n)</td>"#) && series.contains(r#"<td class="class">O(n²)</td>"#)
        );
        // The chart's text alternative says it too, and the chart labels each version.
        assert!(series.contains("Complexity class: O(n) through 0.15.2, O(n²) from 0.16.0."), "{series}");
        let chart = page(&app, "/series/strchr-scan/zig-cc-musl/slope.svg").await;
        assert!(chart.contains("\nO(n)\n</text>") && chart.contains("\nO(n²)\n</text>"), "{chart}");

        let compare = page(&app, "/compare?workload=strchr-scan&a=zig-cc-musl@0.15.2&b=zig-cc-musl@0.16.0").await;
        assert!(compare.contains(r#"<strong class="class-step">O(n) → O(n²)</strong>"#), "{compare}");

        let (_, list) = app.get("/api/v1/regressions").await;
        let id = list["regressions"][0]["regression"]["id"].as_i64().unwrap_or_else(|| panic!("one opened: {list}"));
        let w = &list["regressions"][0]["workloads"][0];
        assert_eq!((&w["class_before"], &w["class_after"]), (&json!("n"), &json!("n^2")), "{list}");
        let regression = page(&app, &format!("/regressions/{id}")).await;
        assert!(regression.contains(r#"<td class="class-step">O(n) → O(n²)</td>"#), "{regression}");
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        let w = &detail["workloads"][0];
        assert_eq!((&w["class_before"], &w["class_after"]), (&json!("n"), &json!("n^2")), "{detail}");
    })
    .await;
}

/// The app plus an outbox worker sending to `receiver`, under `rule`.
struct Alerting {
    app: TestApp,
    stop: watch::Sender<bool>,
}

impl Alerting {
    async fn new(db: TestDb, receiver: &Receiver, rule: AlertRule) -> Alerting {
        let retry = RetryPolicy {
            base: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
            give_up_after: Duration::from_secs(60),
            poll: Duration::from_millis(40),
            timeout: Duration::from_secs(2),
        };
        let webhooks = vec![Webhook {
            name: "team".into(),
            url: receiver.url().parse().unwrap(),
            secret: SECRET.into(),
            format: WebhookFormat::Json,
        }];
        let alerts = AlertSettings { rules: Rules { rule, ..Rules::default() }, webhooks, retry };
        let config = Config { alerts: alerts.clone(), ..Config::default() };
        let (stop, stopped) = watch::channel(false);
        let app = TestApp::with_config(db, config).await;
        tokio::spawn(slopewatch::webhooks::sender::run(app.db.store.clone(), alerts, app.metrics.clone(), stopped));
        Alerting { app, stop }
    }
}

impl Drop for Alerting {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

#[tokio::test]
async fn a_class_step_under_the_slope_threshold_opens_a_regression_by_the_class_rule_announced_with_both_classes() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        let a = Alerting::new(db, &receiver, AlertRule::Class).await;
        submit(&a.app, &run("musl-gcc", "1.2.4", &[("json-insert", fixed_plus_linear)], 8)).await;
        let answer = submit(&a.app, &run("musl-gcc", "1.2.5", &[("json-insert", fixed_plus_quadratic)], 8)).await;
        let fit = &answer["fits"][0];
        assert!(fit["slope"].as_f64().unwrap() < 1.0, "the slope alone would not alert: {fit}");
        assert!(fit.get("complexity").is_none(), "the answer to a stored run does not wait for classes: {fit}");
        let (_, stored) = a.app.get(&format!("/api/v1/runs/{}", answer["run_id"].as_str().unwrap())).await;
        assert_eq!(stored["workloads"][0]["complexity"]["class"], "n^2", "classified on read: {stored}");

        wait_for(Duration::from_secs(20), "the opened alert", || !receiver.seen().is_empty()).await;
        let seen = receiver.seen();
        assert_eq!(seen[0].event, "regression.opened");
        let body = body_json(&seen[0]);
        assert_eq!((body["version"].as_str(), body["previous_version"].as_str()), (Some("1.2.5"), Some("1.2.4")));
        let w = &body["workloads"][0];
        assert_eq!((&w["class_before"], &w["class_after"]), (&json!("n"), &json!("n^2")), "{body}");

        let id = body["regression_id"].as_i64().unwrap();
        let detail = a.app.db.store.regression(id).await.unwrap().unwrap();
        assert!(detail.events.iter().any(|e| e.detail.ends_with(", O(n) → O(n²)")), "{:?}", detail.events);

        // Back to linear: the class rule resolves it, and says so with both classes.
        submit(&a.app, &run("musl-gcc", "1.2.6", &[("json-insert", fixed_plus_linear)], 8)).await;
        wait_for(Duration::from_secs(20), "the resolved alert", || receiver.seen().len() >= 2).await;
        let resolved = body_json(&receiver.seen()[1]);
        assert_eq!(resolved["event"], "regression.resolved", "{resolved}");
        let w = &resolved["workloads"][0];
        assert_eq!((&w["class_before"], &w["class_after"]), (&json!("n^2"), &json!("n")), "{resolved}");
    })
    .await;
}

#[tokio::test]
async fn the_slope_rule_ignores_a_class_step_it_cannot_see() {
    let db = TestDb::new(crate::helpers::Backend::Sqlite).await;
    let receiver = Receiver::up().await;
    let a = Alerting::new(db, &receiver, AlertRule::Slope).await;
    submit(&a.app, &run("musl-gcc", "1.2.4", &[("json-insert", fixed_plus_linear)], 8)).await;
    submit(&a.app, &run("musl-gcc", "1.2.5", &[("json-insert", fixed_plus_quadratic)], 8)).await;
    assert!(a.app.db.store.regressions(None).await.unwrap().is_empty(), "the default rule is today's");
}

#[tokio::test]
async fn an_unsure_class_never_opens_a_regression() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        let a = Alerting::new(db, &receiver, AlertRule::Class).await;
        // Quadratic growth over four sizes: the slope rule would open a regression (it trusts four
        // sizes), but four sizes never name a class.
        submit(&a.app, &run("gcc-glibc", "13.0.0", &[("sscanf-parse", linear)], 4)).await;
        let answer = submit(&a.app, &run("gcc-glibc", "14.0.0", &[("sscanf-parse", quadratic)], 4)).await;
        let (_, series) = a.app.get("/api/v1/series?workload=sscanf-parse&toolchain=gcc-glibc").await;
        assert_eq!(series["versions"][1]["complexity"]["class"], "unsure", "{series}");
        assert!((answer["fits"][0]["slope"].as_f64().unwrap() - 2.0).abs() < 0.05, "{answer}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(a.app.db.store.regressions(None).await.unwrap().is_empty());
        assert!(receiver.seen().is_empty());
    })
    .await;
}
