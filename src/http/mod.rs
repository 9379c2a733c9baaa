//! The HTTP surface: the JSON API, health checks, and the dashboard's pages and charts.

mod api;
mod auth;
mod dashboard;
pub mod error;
mod extract;
mod health;
pub mod openapi;
pub mod pages;
mod regressions;
mod session;

pub use error::Error;

use crate::config::Config;
use crate::metrics::{Gauges, Metrics};
use crate::store::Store;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, MatchedPath, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::Request;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;
use tower_http::trace::TraceLayer;
use tracing::Span;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// The database, Postgres or SQLite.
    pub store: Store,
    /// Settings fixed at start-up.
    pub config: Arc<Config>,
    /// Counters and histograms served at `/metrics`.
    pub metrics: Arc<Metrics>,
}

impl AppState {
    pub fn new(store: Store, config: Config) -> AppState {
        AppState { store, config: Arc::new(config), metrics: Arc::default() }
    }
}

/// Counts every request by route and status, and times it.
async fn track(State(state): State<AppState>, req: Request<Body>, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string()).unwrap_or_default();
    let method = req.method().to_string();
    let start = Instant::now();
    let res = next.run(req).await;
    state.metrics.record_request(&route, &method, res.status().as_u16(), start.elapsed());
    res
}

/// Prometheus metrics
///
/// Requests by route and status with latency, runs and samples ingested, rejections by reason,
/// webhook attempts by outcome, the alert outbox's depth and database pool use, in the Prometheus
/// text format.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses((status = 200, description = "Prometheus text format 0.0.4", body = String, content_type = "text/plain"))
)]
async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    // A scrape still answers when the database does not; only the database's gauges are then missing.
    let counted = |count: Result<i64, sqlx::Error>, what: &str| match count {
        Ok(n) => Some(n),
        Err(e) => {
            tracing::warn!(error = %e, "cannot count {what} for metrics");
            None
        }
    };
    let outbox_pending = counted(state.store.pending_deliveries().await, "the alert outbox");
    let summaries_pending = counted(state.store.pending_summaries().await, "the runs pending a summary pass");
    let body = state.metrics.render(&Gauges {
        pool: state.store.pool_usage(),
        outbox_pending,
        summaries_pending,
        runs_queued: state.store.queued_runs(),
    });
    ([(CONTENT_TYPE, "text/plain; version=0.0.4")], body)
}

/// The whole application as a router, ready to serve or to call in tests with `oneshot`.
pub fn app(state: AppState) -> Router {
    let body_limit = state.config.body_limit;
    let (documented, _) = openapi::routes().split_for_parts();
    Router::new()
        .merge(documented)
        .merge(regressions::router())
        .merge(dashboard::router())
        .nest_service("/static", ServeDir::new(static_dir()))
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(CompressionLayer::new())
        .layer(middleware::from_fn_with_state(state.clone(), track))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|req: &Request<_>| {
                    let route = req.extensions().get::<MatchedPath>().map(MatchedPath::as_str).unwrap_or("");
                    tracing::info_span!("request", method = %req.method(), route, status = tracing::field::Empty)
                })
                .on_request(())
                .on_response(|res: &axum::response::Response, latency: Duration, span: &Span| {
                    span.record("status", res.status().as_u16());
                    tracing::info!(status = res.status().as_u16(), latency_ms = latency.as_secs_f64() * 1e3, "served");
                })
                .on_failure(()),
        )
        .with_state(state)
}

/// Static assets ship beside the binary's sources; `SLOPEWATCH_STATIC_DIR` points elsewhere
/// (the container image copies them to /usr/share/slopewatch/static).
fn static_dir() -> std::path::PathBuf {
    std::env::var_os("SLOPEWATCH_STATIC_DIR")
        .map(Into::into)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("static"))
}
