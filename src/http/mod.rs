//! The HTTP surface, one module per part of the URL space; here the router (`app`) with its layers,
//! and the state every handler shares (`AppState`).

mod api;
mod auth;
mod bisections;
mod bodies;
mod capabilities;
mod connections;
mod dashboard;
mod deliveries;
pub mod error;
mod exposures;
mod extract;
mod found_probes;
mod health;
mod limits;
mod login;
mod metrics;
pub mod openapi;
pub mod pages;
mod read_gate;
mod regressions;
mod series;
mod server;
mod session;
mod throttle;
mod versions;

pub use error::Error;
pub use server::serve;

use crate::charts;
use crate::config::Config;
use crate::intake::Intake;
use crate::metrics::Metrics;
use crate::session_key::SessionKey;
use crate::store::Store;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, MatchedPath, State};
use axum::http::header::{CONTENT_SECURITY_POLICY, STRICT_TRANSPORT_SECURITY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS};
use axum::http::{HeaderValue, Request};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::Router;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;
use tracing::Span;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// The database, Postgres or SQLite.
    pub store: Store,
    /// Where accepted runs go: stored, then summarised and judged by the alert rules.
    pub intake: Intake,
    /// Settings fixed at start-up.
    pub config: Arc<Config>,
    /// Counters and histograms served at `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Signs session cookies and CSRF tokens: the configured key, else one of this process's own.
    pub session_key: SessionKey,
    /// Failed logins per client address, in this process's memory.
    pub login_throttle: Arc<throttle::LoginThrottle>,
    /// Bisections submitted per token id, in this process's memory.
    pub bisection_quota: Arc<throttle::WindowCount<i64>>,
}

impl AppState {
    /// The state of a server over `store`: its metrics, and the intake that counts in them.
    pub fn new(store: Store, config: Config) -> AppState {
        let metrics = Arc::new(Metrics::default());
        let intake = Intake::new(store.clone(), &config, metrics.clone());
        let session_key = config.auth.session_key.clone().unwrap_or_else(SessionKey::generate);
        let bisection_quota =
            Arc::new(throttle::WindowCount::new(throttle::BISECTIONS_PER_TOKEN, throttle::BISECTION_WINDOW));
        let config = Arc::new(config);
        AppState { store, intake, config, metrics, session_key, login_throttle: Arc::default(), bisection_quota }
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

/// HSTS on every answer to a request that came over TLS (`extract::Https`): a browser that once
/// reached the server over https never falls back to http for a year.
async fn hsts(State(state): State<AppState>, req: Request<Body>, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let https = extract::Https::of(&state, extract::peer(&parts), &parts.headers);
    let mut res = next.run(Request::from_parts(parts, body)).await;
    if https.0 {
        res.headers_mut().insert(STRICT_TRANSPORT_SECURITY, HeaderValue::from_static("max-age=31536000"));
    }
    res
}

/// The whole application as a router, ready to serve or to call in tests with `oneshot`.
pub fn app(state: AppState) -> Router {
    let (documented, _) = openapi::routes().split_for_parts();
    Router::new()
        .merge(documented)
        .merge(dashboard::router())
        .merge(regressions::router())
        .merge(deliveries::router())
        .merge(login::router())
        .nest_service("/static", ServeDir::new(static_dir()))
        .layer(middleware::from_fn_with_state(state.clone(), read_gate::require_login))
        // Each route's body limit and pace are the request limits' (`bodies`), not axum's default.
        .layer(DefaultBodyLimit::disable())
        .layer(CompressionLayer::new())
        .layer(middleware::from_fn_with_state(limits::RequestLimits::new(state.clone()), limits::limit))
        .layer(middleware::from_fn_with_state(state.clone(), track))
        .layer(middleware::from_fn_with_state(state.clone(), hsts))
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
        .layer(SetResponseHeaderLayer::overriding(CONTENT_SECURITY_POLICY, content_security_policy()))
        .layer(SetResponseHeaderLayer::overriding(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
        .layer(SetResponseHeaderLayer::overriding(X_FRAME_OPTIONS, HeaderValue::from_static("DENY")))
        .with_state(state)
}

/// Scripts and styles come from the server's own files, never from inline text a page could have
/// injected into it; the one inline style, the charts' hover rule, is allowed by its hash. No page
/// may be framed, by `frame-ancestors` and by `X-Frame-Options` for older browsers.
fn content_security_policy() -> HeaderValue {
    use base64::Engine;
    let hover = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(charts::HOVER_STYLE));
    let policy = format!(
        "default-src 'self'; script-src 'self'; style-src 'self' 'sha256-{hover}'; img-src 'self'; \
         object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    );
    HeaderValue::from_str(&policy).expect("the policy is ASCII")
}

/// Static assets ship beside the binary's sources; `SLOPEWATCH_STATIC_DIR` points elsewhere
/// (the container image copies them to /usr/share/slopewatch/static).
fn static_dir() -> std::path::PathBuf {
    std::env::var_os("SLOPEWATCH_STATIC_DIR")
        .map(Into::into)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("static"))
}
