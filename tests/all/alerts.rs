//! Alerts end to end: evaluation at ingest, the outbox, and signed webhooks received by a real
//! HTTP server on loopback, on Postgres and on SQLite.

use crate::helpers::webhooks::{assert_signed, body_json, outbox_until, wait_for, Alerting, Receiver, SECRET};
use crate::helpers::{create_token, on_both_backends, TestApp};
use axum::http::StatusCode;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use slopewatch::config::Config;
use slopewatch::config::{AlertSettings, RetryPolicy, Webhook, WebhookFormat};
use slopewatch::store::Scope;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        base: Duration::from_millis(100),
        max_delay: Duration::from_millis(300),
        give_up_after: Duration::from_secs(120),
        poll: Duration::from_millis(40),
        timeout: Duration::from_secs(2),
    }
}

fn config_for(receiver: &Receiver) -> Config {
    Config {
        public_url: Some("https://slopewatch.example".into()),
        alerts: AlertSettings {
            webhooks: vec![Webhook {
                name: "team".into(),
                url: receiver.url().parse().unwrap(),
                secret: SECRET.into(),
                format: WebhookFormat::Json,
            }],
            retry: fast_retry(),
            ..AlertSettings::default()
        },
        ..Config::default()
    }
}

/// A run with named workloads of given slopes; `noise` adds seeded multiplicative jitter.
fn run_with(
    lineage: &str,
    version: &str,
    workloads: &[(&str, f64)],
    sizes: usize,
    noise: Option<&mut rand::rngs::StdRng>,
) -> Value {
    let mut rng = noise;
    let workloads: Vec<Value> = workloads
        .iter()
        .map(|(name, slope)| {
            let measurements: Vec<Value> = (0..sizes)
                .map(|i| {
                    let size = 65536u64 << i;
                    let base = 0.5 * (size as f64).powf(*slope);
                    let samples: Vec<f64> = (0..5)
                        .map(|k| match rng.as_deref_mut() {
                            Some(r) => base * (r.gen_range(-0.2f64..0.2)).exp(),
                            None => base * (1.0 + 0.01 * k as f64),
                        })
                        .collect();
                    json!({"size": size, "samples_ns": samples})
                })
                .collect();
            json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:00", "measurements": measurements})
        })
        .collect();
    crate::builders::run_of(lineage, version, "build-01", workloads)
}

const STRING_WORKLOADS: [&str; 3] = ["strchr-scan", "strspn-scan", "strcspn-scan"];

fn all(slope: f64) -> Vec<(&'static str, f64)> {
    STRING_WORKLOADS.iter().map(|w| (*w, slope)).collect()
}

async fn submit(app: &TestApp, run: &Value) {
    let (status, body) = app.submit(run).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn a_quadratic_version_alerts_once_signed_and_its_fix_resolves_once() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        let a = Alerting::new(db, config_for(&receiver)).await;
        submit(&a.app, &run_with("zig-cc-musl", "0.15.0", &all(1.0), 8, None)).await;
        for _ in 0..3 {
            submit(&a.app, &run_with("zig-cc-musl", "0.16.0", &all(2.0), 8, None)).await;
        }
        wait_for(Duration::from_secs(20), "the opened alert", || !receiver.seen().is_empty()).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let seen = receiver.seen();
        assert_eq!(seen.len(), 1, "repeated runs of the bad version send nothing more: {seen:?}");
        let opened = &seen[0];
        assert_eq!(opened.event, "regression.opened");
        assert_signed(opened);
        let body = body_json(opened);
        assert_eq!(body["event"], "regression.opened");
        assert_eq!((body["lineage"].as_str(), body["version"].as_str()), (Some("zig-cc-musl"), Some("0.16.0")));
        assert_eq!(body["previous_version"], "0.15.0");
        let workloads = body["workloads"].as_array().unwrap();
        assert_eq!(workloads.len(), 3, "strchr, strspn and strcspn regress as one: {body}");
        for w in workloads {
            assert!((w["slope"].as_f64().unwrap() - 2.0).abs() < 0.05, "{w}");
            assert!((w["previous_slope"].as_f64().unwrap() - 1.0).abs() < 0.05, "{w}");
            assert!(w["ci_low"].as_f64().unwrap() < w["slope"].as_f64().unwrap());
            assert_eq!(w["ratio_size"], 65536u64 << 7);
            assert!(w["time_ratio"].as_f64().unwrap() > 1000.0, "{w}");
            assert!(w["series_url"].as_str().unwrap().starts_with("https://slopewatch.example/series/"));
        }
        let id = body["regression_id"].as_i64().unwrap();
        assert_eq!(body["links"]["regression"], format!("https://slopewatch.example/regressions/{id}"));

        submit(&a.app, &run_with("zig-cc-musl", "0.17.0", &all(1.0), 8, None)).await;
        submit(&a.app, &run_with("zig-cc-musl", "0.17.0", &all(1.0), 8, None)).await;
        wait_for(Duration::from_secs(20), "the resolved alert", || receiver.seen().len() >= 2).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let seen = receiver.seen();
        assert_eq!(seen.len(), 2, "{seen:?}");
        let resolved = &seen[1];
        assert_eq!(resolved.event, "regression.resolved");
        assert_ne!(resolved.delivery, opened.delivery);
        assert_signed(resolved);
        let body = body_json(resolved);
        assert_eq!((body["version"].as_str(), body["previous_version"].as_str()), (Some("0.17.0"), Some("0.16.0")));
        assert_eq!(body["regression_id"], id);
        assert!(body["workloads"][0]["time_ratio"].as_f64().unwrap() < 0.01);

        outbox_until(&a.app.db.store, "both deliveries recorded as delivered", |o| o.pending.is_empty()).await;
        let detail = a.app.db.store.regression(id).await.unwrap().unwrap();
        assert_eq!(detail.regression.status, "fixed");
        assert_eq!(detail.regression.fixed_version.as_deref(), Some("0.17.0"));
        assert!(detail.workloads.iter().all(|w| w.fixed_version.as_deref() == Some("0.17.0")));
        assert!(detail.deliveries.iter().all(|d| d.delivery.status == "delivered"));
        assert!(detail.events.iter().any(|e| e.kind == "resolved"));
        assert_eq!(a.app.db.store.regressions(None).await.unwrap().len(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_receiver_that_is_down_gets_the_alert_once_it_comes_up() {
    on_both_backends(|db| async move {
        let receiver = Receiver::reserve();
        let a = Alerting::new(db, config_for(&receiver)).await;
        submit(&a.app, &run_with("gcc-glibc", "13.0.0", &all(1.0), 6, None)).await;
        submit(&a.app, &run_with("gcc-glibc", "14.0.0", &all(2.0), 6, None)).await;
        let store = a.app.db.store.clone();
        let start = Instant::now();
        loop {
            let pending = store.deliveries(10).await.unwrap().pending;
            if pending.first().is_some_and(|d| d.attempts.len() >= 2) {
                let errors: Vec<_> = pending[0].attempts.iter().map(|t| t.error.clone().unwrap_or_default()).collect();
                assert!(errors.iter().all(|e| !e.is_empty() && !e.contains(SECRET)), "{errors:?}");
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "no failed attempts recorded");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        receiver.start().await;
        wait_for(Duration::from_secs(20), "delivery after the receiver came up", || !receiver.delivered().is_empty())
            .await;
        outbox_until(&a.app.db.store, "the delivered row to leave the outbox", |o| o.pending.is_empty()).await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(receiver.seen().len(), 1, "delivered exactly once");
        let recent = store.deliveries(10).await.unwrap().recent;
        assert_eq!(recent.len(), 1);
        assert_eq!(recent[0].delivery.status, "delivered");
        assert!(recent[0].attempts.len() >= 3, "failed attempts and the success are all recorded");
        assert_eq!(recent[0].attempts.last().unwrap().http_status, Some(200));
    })
    .await;
}

/// The value of one sample (`name{labels}`) in a `/metrics` scrape.
fn metric(text: &str, sample: &str) -> Option<f64> {
    text.lines().find_map(|line| line.strip_prefix(sample)?.strip_prefix(' ')?.parse().ok())
}

async fn scrape(app: &TestApp) -> String {
    let (status, body) = app.get("/metrics").await;
    assert_eq!(status, StatusCode::OK);
    body.as_str().expect("metrics are text").to_string()
}

/// Scrapes `/metrics` until `done` holds for the scrape, for at most 20 s; returns that scrape.
async fn scrape_until(app: &TestApp, what: &str, done: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let text = scrape(app).await;
        if done(&text) {
            return text;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "timed out waiting for {what}:\n{text}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

const DELIVERED: &str = r#"slopewatch_webhook_attempts_total{outcome="delivered"}"#;
const FAILED: &str = r#"slopewatch_webhook_attempts_total{outcome="failed"}"#;
const GAVE_UP: &str = r#"slopewatch_webhook_attempts_total{outcome="gave_up"}"#;
const PENDING: &str = "slopewatch_webhook_outbox_pending";

#[tokio::test]
async fn metrics_count_webhook_attempts_by_outcome_and_show_the_outbox_depth() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        receiver.status.store(500, Ordering::SeqCst);
        let a = Alerting::new(db, config_for(&receiver)).await;
        let text = scrape(&a.app).await;
        for sample in [DELIVERED, FAILED, GAVE_UP, PENDING] {
            assert_eq!(metric(&text, sample), Some(0.0), "{sample} starts at 0:\n{text}");
        }

        submit(&a.app, &run_with("gcc-glibc", "13.0.0", &all(1.0), 6, None)).await;
        submit(&a.app, &run_with("gcc-glibc", "14.0.0", &all(2.0), 6, None)).await;
        let text = scrape_until(&a.app, "two failed attempts", |t| metric(t, FAILED) >= Some(2.0)).await;
        assert_eq!(metric(&text, PENDING), Some(1.0), "the failing delivery waits in the outbox:\n{text}");
        assert_eq!(metric(&text, DELIVERED), Some(0.0));

        receiver.status.store(200, Ordering::SeqCst);
        let text = scrape_until(&a.app, "the delivery and an empty outbox", |t| {
            metric(t, DELIVERED) == Some(1.0) && metric(t, PENDING) == Some(0.0)
        })
        .await;
        let answered_500 = receiver.seen().iter().filter(|r| r.answered == 500).count();
        assert_eq!(metric(&text, FAILED), Some(answered_500 as f64), "one count per failed request:\n{text}");
        assert_eq!(metric(&text, GAVE_UP), Some(0.0));
    })
    .await;
}

#[tokio::test]
async fn metrics_count_a_delivery_given_up() {
    on_both_backends(|db| async move {
        let receiver = Receiver::reserve();
        let mut config = config_for(&receiver);
        config.alerts.retry.give_up_after = Duration::ZERO;
        let a = Alerting::new(db, config).await;
        submit(&a.app, &run_with("gcc-glibc", "13.0.0", &all(1.0), 6, None)).await;
        submit(&a.app, &run_with("gcc-glibc", "14.0.0", &all(2.0), 6, None)).await;
        let text = scrape_until(&a.app, "the delivery given up and gone from the outbox", |t| {
            metric(t, GAVE_UP) == Some(1.0) && metric(t, PENDING) == Some(0.0)
        })
        .await;
        assert_eq!(metric(&text, FAILED), Some(0.0), "{text}");
        assert_eq!(metric(&text, DELIVERED), Some(0.0), "{text}");
        let done = a.app.db.store.deliveries(10).await.unwrap().recent;
        assert_eq!(done[0].delivery.status, "failed");
    })
    .await;
}

/// A fresh port on loopback for a server to bind.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn start_server(db_url: &str, config: &std::path::Path, port: u16) -> Server {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_slopewatch"))
        .args(["serve", "--bind", &format!("127.0.0.1:{port}"), "--database-url", db_url, "--config"])
        .arg(config)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let server = Server(child);
    let client = reqwest::Client::new();
    let start = Instant::now();
    while client.get(format!("http://127.0.0.1:{port}/healthz")).send().await.is_err() {
        assert!(start.elapsed() < Duration::from_secs(60), "server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server
}

#[tokio::test]
async fn a_server_restarted_during_retries_still_delivers_exactly_once() {
    on_both_backends(|db| async move {
        let receiver = Receiver::up().await;
        receiver.status.store(503, Ordering::SeqCst);
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("slopewatch.toml");
        std::fs::write(
            &config,
            format!(
                "[alerts]\nretry_base_ms = 150\nretry_max_ms = 300\npoll_ms = 50\n\n\
                 [[webhooks]]\nname = \"team\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\n",
                receiver.url()
            ),
        )
        .unwrap();
        let token = create_token(&db.store, "restart-ingest", Scope::Ingest).await;
        let port = free_port();
        let server = start_server(&db.url, &config, port).await;
        let client = reqwest::Client::new();
        for (version, slope) in [("1.0.0", 1.0), ("1.1.0", 2.0)] {
            let res = client
                .post(format!("http://127.0.0.1:{port}/api/v1/runs"))
                .bearer_auth(&token)
                .json(&run_with("clang-musl", version, &all(slope), 6, None))
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), 201);
        }
        wait_for(Duration::from_secs(20), "two failed attempts", || receiver.seen().len() >= 2).await;
        drop(server);
        // An attempt the killed server sent just before it died may still wait in the receiver's
        // socket; it is answered 503 like the others before the receiver recovers.
        tokio::time::sleep(Duration::from_millis(300)).await;
        receiver.status.store(200, Ordering::SeqCst);
        let failed_before_restart = receiver.seen().len();
        let _server = start_server(&db.url, &config, port).await;
        // A delivery the killed server had claimed waits out its lease (timeout + 30 s) first.
        wait_for(Duration::from_secs(60), "delivery after the restart", || !receiver.delivered().is_empty()).await;
        outbox_until(&db.store, "the delivery recorded by the restarted server", |o| o.pending.is_empty()).await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        let seen = receiver.seen();
        assert_eq!(receiver.delivered().len(), 1, "sent once after the restart: {seen:?}");
        assert_eq!(seen.len(), failed_before_restart + 1, "nothing sent after the success");
        assert!(seen.iter().all(|r| r.delivery == seen[0].delivery), "one delivery id across retries and restarts");
        assert!(seen.iter().all(|r| r.body == seen[0].body), "the same body on every attempt");
        let slopewatch::store::Outbox { pending, recent, .. } = db.store.deliveries(10).await.unwrap();
        assert!(pending.is_empty());
        assert_eq!(recent[0].delivery.status, "delivered");
    })
    .await;
}

/// Noisy runs of one lineage: 4 workloads, 4 to 7 sizes, ±20% jitter per sample, and in a
/// quarter of the fits one size disturbed 2–6× (a frequency drop, a neighbour's burst).
fn noisy_run(rng: &mut rand::rngs::StdRng, lineage: &str, version: &str, slope: f64) -> Value {
    let sizes = rng.gen_range(4..=7);
    let names = ["w-a", "w-b", "w-c", "w-d"];
    let mut run = run_with(lineage, version, &names.map(|n| (n, slope)), sizes, Some(&mut *rng));
    for w in run["workloads"].as_array_mut().unwrap() {
        if rng.gen_bool(0.25) {
            let m = w["measurements"].as_array_mut().unwrap();
            let at = rng.gen_range(0..m.len());
            let factor = rng.gen_range(2.0..6.0);
            for s in m[at]["samples_ns"].as_array_mut().unwrap() {
                *s = json!(s.as_f64().unwrap() * factor);
            }
        }
    }
    run
}

#[tokio::test]
async fn noisy_linear_series_raise_nothing_and_every_quadratic_series_alerts_exactly_once() {
    on_both_backends(|db| async move {
        let receiver = Receiver::reserve();
        let app = TestApp::with_config(db, config_for(&receiver)).await;
        let mut rng = rand::rngs::StdRng::seed_from_u64(20261129);
        let versions: Vec<String> = (0..8).map(|i| format!("1.{i}.0")).collect();
        let mut naive_alarms = 0;
        for lineage in 0..12 {
            for v in &versions {
                let run = noisy_run(&mut rng, &format!("linear-{lineage}"), v, 1.0);
                let (status, body) = app.submit(&run).await;
                assert_eq!(status, StatusCode::CREATED, "{body}");
                naive_alarms +=
                    body["fits"].as_array().unwrap().iter().filter(|f| f["slope"].as_f64().unwrap() > 1.5).count();
            }
        }
        for lineage in 0..4 {
            for (i, v) in versions.iter().enumerate() {
                let slope = if i < 4 { 1.0 } else { 2.0 };
                submit(&app, &noisy_run(&mut rng, &format!("quadratic-{lineage}"), v, slope)).await;
            }
        }
        assert!(naive_alarms > 0, "the corpus has single fits above 1.5 that a bare threshold would alert on");
        let regressions = app.db.store.regressions(None).await.unwrap();
        let lineages: Vec<&str> = regressions.iter().map(|(r, _)| r.lineage.as_str()).collect();
        assert!(lineages.iter().all(|l| l.starts_with("quadratic-")), "noise raised an alert: {lineages:?}");
        for lineage in 0..4 {
            let name = format!("quadratic-{lineage}");
            assert_eq!(lineages.iter().filter(|l| **l == name).count(), 1, "{name} alerts exactly once: {lineages:?}");
        }
        for (r, workloads) in &regressions {
            assert_eq!(r.version, "1.4.0", "at the version that turned quadratic");
            assert_eq!(r.previous_version.as_deref(), Some("1.3.0"));
            assert_eq!(workloads.len(), 4, "all four workloads in one regression");
        }
        let pending = app.db.store.deliveries(100).await.unwrap().pending;
        assert_eq!(pending.len(), 4, "one outbox row per regression opened");
        eprintln!("naive single-fit alarms avoided: {naive_alarms}");
    })
    .await;
}

#[tokio::test]
async fn a_workload_crossing_later_at_the_same_version_joins_the_open_regression() {
    on_both_backends(|db| async move {
        let receiver = Receiver::reserve();
        let app = TestApp::with_config(db, config_for(&receiver)).await;
        submit(&app, &run_with("zig-cc-musl", "0.15.0", &[("strchr-scan", 1.0), ("strspn-scan", 1.0)], 6, None)).await;
        submit(&app, &run_with("zig-cc-musl", "0.16.0", &[("strchr-scan", 2.0), ("strspn-scan", 1.0)], 6, None)).await;
        for _ in 0..2 {
            submit(&app, &run_with("zig-cc-musl", "0.16.0", &[("strspn-scan", 2.0)], 6, None)).await;
        }
        let regressions = app.db.store.regressions(None).await.unwrap();
        assert_eq!(regressions.len(), 1, "{regressions:?}");
        let workloads = &regressions[0].1;
        assert_eq!(workloads.len(), 2);
        let late: Vec<&str> = workloads.iter().filter(|w| w.joined_late).map(|w| w.workload.as_str()).collect();
        assert_eq!(late, ["strspn-scan"]);
        let detail = app.db.store.regression(regressions[0].0.id).await.unwrap().unwrap();
        assert!(detail.events.iter().any(|e| e.kind == "joined"), "the join is noted");
        let pending = app.db.store.deliveries(100).await.unwrap().pending;
        assert_eq!(pending.len(), 1, "joining does not page again");
    })
    .await;
}

#[tokio::test]
async fn per_workload_thresholds_from_the_config_file_override_the_global_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slopewatch.toml");
    std::fs::write(&path, "[alerts]\nthreshold = 1.5\n[alerts.workloads]\n\"strchr-scan\" = 1.3\n").unwrap();
    let cli = <slopewatch::cli::Cli as clap::Parser>::try_parse_from([
        "slopewatch",
        "serve",
        "--config",
        path.to_str().unwrap(),
    ])
    .unwrap();
    let slopewatch::cli::Command::Serve(args) = cli.command else { panic!("serve") };
    let config = Config::from_args(&args).unwrap();
    on_both_backends(|db| {
        let config = config.clone();
        async move {
            let app = TestApp::with_config(db, config).await;
            submit(&app, &run_with("musl-gcc", "1.2.4", &all(1.0), 6, None)).await;
            submit(&app, &run_with("musl-gcc", "1.2.5", &all(1.4), 6, None)).await;
            let regressions = app.db.store.regressions(None).await.unwrap();
            assert_eq!(regressions.len(), 1, "{regressions:?}");
            let names: Vec<&str> = regressions[0].1.iter().map(|w| w.workload.as_str()).collect();
            assert_eq!(names, ["strchr-scan"], "only the workload with the stricter threshold");
        }
    })
    .await;
}
