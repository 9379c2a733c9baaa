//! A webhook receiver on loopback for alert tests: records every signed request it gets.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;
use slopewatch::config::Config;
use slopewatch::config::{AlertSettings, RetryPolicy, Webhook, WebhookFormat};
use slopewatch::store::{Outbox, Store};
use slopewatch::webhooks::signing;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

use super::{TestApp, TestDb};

pub const SECRET: &str = "test-webhook-secret-0123456789";

/// One request the receiver got, and what it answered.
#[derive(Clone, Debug)]
pub struct Received {
    pub delivery: String,
    pub event: String,
    pub timestamp: String,
    pub signature: String,
    pub body: Vec<u8>,
    pub answered: u16,
}

/// A webhook receiver on 127.0.0.1 that records every request and answers `status`, with
/// `headers` and `body`.
#[derive(Clone)]
pub struct Receiver {
    pub port: u16,
    pub seen: Arc<Mutex<Vec<Received>>>,
    pub status: Arc<AtomicU16>,
    pub headers: Arc<Mutex<Vec<(&'static str, String)>>>,
    pub body: Arc<Mutex<String>>,
}

impl Receiver {
    /// A port that nothing listens on yet: the receiver is down until `start`.
    pub fn reserve() -> Receiver {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        Receiver {
            port,
            seen: Default::default(),
            status: Arc::new(AtomicU16::new(200)),
            headers: Default::default(),
            body: Default::default(),
        }
    }

    pub async fn up() -> Receiver {
        let r = Receiver::reserve();
        r.start().await;
        r
    }

    pub async fn start(&self) {
        let this = self.clone();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port)).await.unwrap();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let this = this.clone();
                async move {
                    let h = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
                    let answered = this.status.load(Ordering::SeqCst);
                    this.seen.lock().unwrap().push(Received {
                        delivery: h(signing::DELIVERY_HEADER),
                        event: h(signing::EVENT_HEADER),
                        timestamp: h(signing::TIMESTAMP_HEADER),
                        signature: h(signing::SIGNATURE_HEADER),
                        body: body.to_vec(),
                        answered,
                    });
                    let mut reply = axum::http::Response::builder().status(StatusCode::from_u16(answered).unwrap());
                    for (name, value) in this.headers.lock().unwrap().iter() {
                        reply = reply.header(*name, value);
                    }
                    reply.body(axum::body::Body::from(this.body.lock().unwrap().clone())).unwrap()
                }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    pub fn seen(&self) -> Vec<Received> {
        self.seen.lock().unwrap().clone()
    }

    /// Requests answered with success, one per delivery id.
    pub fn delivered(&self) -> Vec<Received> {
        self.seen().into_iter().filter(|r| (200..300).contains(&r.answered)).collect()
    }
}

/// A server configuration that sends every alert to `receiver`, once per format, retrying fast.
pub fn config(receiver: &Receiver, formats: &[WebhookFormat]) -> Config {
    let webhooks = formats
        .iter()
        .enumerate()
        .map(|(i, &format)| Webhook {
            name: format!("target-{i}"),
            url: receiver.url().parse().unwrap(),
            secret: SECRET.into(),
            format,
        })
        .collect();
    let retry = RetryPolicy {
        base: Duration::from_millis(100),
        max_delay: Duration::from_millis(300),
        give_up_after: Duration::from_secs(60),
        poll: Duration::from_millis(40),
        timeout: Duration::from_secs(2),
    };
    Config { alerts: AlertSettings { webhooks, retry, ..AlertSettings::default() }, ..Config::default() }
}

/// Waits until `done` holds, for at most `limit`.
pub async fn wait_for(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Waits, for at most 20 s, until `done` holds for the outbox. An attempt is recorded after
/// its receiver answered: what the receiver saw says nothing yet about what the outbox holds.
pub async fn outbox_until(store: &Store, what: &str, done: impl Fn(&Outbox) -> bool) {
    let start = Instant::now();
    while !done(&store.deliveries(100).await.unwrap()) {
        assert!(start.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

pub fn body_json(r: &Received) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

/// Checks the signature of a request, and that a tampered body fails it.
pub fn assert_signed(r: &Received) {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    signing::verify(SECRET, &r.timestamp, &r.signature, &r.body, now, 300).expect("the signature verifies");
    let mut tampered = r.body.clone();
    let at = tampered.len() / 2;
    tampered[at] ^= 1;
    assert!(signing::verify(SECRET, &r.timestamp, &r.signature, &tampered, now, 300).is_err(), "a tampered body fails");
}

/// The app plus an outbox worker running in this process until dropped.
pub struct Alerting {
    pub app: TestApp,
    stop: watch::Sender<bool>,
}

impl Alerting {
    pub async fn new(db: TestDb, config: Config) -> Alerting {
        let (stop, stopped) = watch::channel(false);
        let settings = config.alerts.clone();
        let app = TestApp::with_config(db, config).await;
        tokio::spawn(slopewatch::webhooks::sender::run(app.db.store.clone(), settings, app.metrics.clone(), stopped));
        Alerting { app, stop }
    }
}

impl Drop for Alerting {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}
