//! The HTTP surface: the JSON API, health checks, and the dashboard's pages and charts.

mod api;
mod auth;
mod dashboard;
pub mod error;
mod health;
pub mod pages;

pub use error::Error;

use crate::config::Config;
use crate::store::Store;
use axum::extract::{DefaultBodyLimit, MatchedPath};
use axum::http::Request;
use axum::Router;
use std::sync::Arc;
use std::time::Duration;
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
}

/// The whole application as a router, ready to serve or to call in tests with `oneshot`.
pub fn app(state: AppState) -> Router {
    let body_limit = state.config.body_limit;
    Router::new()
        .merge(api::router())
        .merge(health::router())
        .merge(dashboard::router())
        .nest_service("/static", ServeDir::new(static_dir()))
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(CompressionLayer::new())
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
