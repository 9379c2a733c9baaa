//! The app over a test database, with tokens of every scope, and request helpers.

use super::db::TestDb;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use slopewatch::config::Config;
use slopewatch::intake::Intake;
use slopewatch::metrics::Metrics;
use slopewatch::store::{Scope, Store};
use slopewatch::{app, auth, AppState};
use std::sync::Arc;
use tower::ServiceExt;

/// The app over a test database, with tokens of every scope.
pub struct TestApp {
    pub db: TestDb,
    pub router: axum::Router,
    pub ingest_token: String,
    pub editor_token: String,
    pub admin_token: String,
    /// The app's metrics, to hand to an outbox worker running beside it.
    pub metrics: Arc<Metrics>,
    /// The app's intake, whose summary passes the tests can run.
    pub intake: Intake,
}

impl TestApp {
    pub async fn new(db: TestDb) -> TestApp {
        Self::with_config(db, Config::default()).await
    }

    pub async fn with_config(db: TestDb, config: Config) -> TestApp {
        let ingest_token = create_token(&db.store, "test-ingest", Scope::Ingest).await;
        let editor_token = create_token(&db.store, "test-editor", Scope::Editor).await;
        let admin_token = create_token(&db.store, "test-admin", Scope::Admin).await;
        let state = AppState::new(db.store.clone(), config);
        let metrics = state.metrics.clone();
        let intake = state.intake.clone();
        let router = app(state);
        TestApp { db, router, ingest_token, editor_token, admin_token, metrics, intake }
    }

    pub async fn send(&self, req: Request<Body>) -> (StatusCode, Value) {
        let res = self.router.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let value =
            serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
        (status, value)
    }

    pub async fn get(&self, uri: &str) -> (StatusCode, Value) {
        self.send(Request::get(uri).body(Body::empty()).unwrap()).await
    }

    /// A GET carrying `Authorization: Bearer <token>` when a token is given.
    pub async fn get_with(&self, uri: &str, token: Option<&str>) -> (StatusCode, Value) {
        let mut req = Request::get(uri);
        if let Some(token) = token {
            req = req.header("authorization", format!("Bearer {token}"));
        }
        self.send(req.body(Body::empty()).unwrap()).await
    }

    /// The text `/metrics` answers, which must be a 200.
    pub async fn metrics(&self) -> String {
        let (status, body) = self.get("/metrics").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body.as_str().expect("metrics are text").to_string()
    }

    /// Posts a run with the ingest token.
    pub async fn submit(&self, body: &Value) -> (StatusCode, Value) {
        self.submit_raw(&self.ingest_token.clone(), serde_json::to_vec(body).unwrap()).await
    }

    pub async fn submit_raw(&self, token: &str, body: Vec<u8>) -> (StatusCode, Value) {
        self.send(
            Request::post("/api/v1/runs")
                .header("content-type", "application/json")
                .header("authorization", format!("Bearer {token}"))
                .body(Body::from(body))
                .unwrap(),
        )
        .await
    }
}

/// Serves `router` on a loopback port as `slopewatch serve` does, with its default timeouts and
/// caps, until the test ends; answers the base URL.
pub async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let limits = slopewatch::config::Limits::default();
    tokio::spawn(async move { slopewatch::http::serve(listener, router, &limits, std::future::pending()).await });
    base
}

pub async fn create_token(store: &Store, name: &str, scope: Scope) -> String {
    let new = auth::generate();
    assert!(store.create_token(name, scope, &new.lookup, &new.hash).await.unwrap());
    new.secret
}
