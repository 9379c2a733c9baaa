//! `[auth] require_login_to_read`: without a session or an API token of any scope, a page sends
//! the browser to the login and the API answers 401. The probes, the login, static files, the
//! OpenAPI document and `/metrics` (request counts by route pattern, no names) stay open, and so
//! does run ingest, which checks its own token.

use super::auth::{bearer, token_of};
use super::pages::{self, PageError};
use super::session::{self, Checked};
use super::{AppState, Error};
use axum::body::Body;
use axum::extract::State;
use axum::http::{Method, Request, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

fn is_open(method: &Method, path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/login" | "/logout" | "/metrics" | "/api/v1/openapi.json")
        || path.starts_with("/static/")
        || (method == Method::POST && path == "/api/v1/runs")
}

/// Lets a request through when reading is open to all, or it may read; turns it away otherwise.
pub(super) async fn require_login(State(state): State<AppState>, mut req: Request<Body>, next: Next) -> Response {
    if !state.config.auth.require_login_to_read || is_open(req.method(), req.uri().path()) {
        return next.run(req).await;
    }
    let api = req.uri().path().starts_with("/api/");
    if let Some(secret) = bearer(req.headers()) {
        return match token_of(&state, secret, req.extensions()).await {
            Ok(Some(_)) => next.run(req).await,
            Ok(None) => Error::Unauthorized.into_response(),
            Err(e) if api => Error::from(e).into_response(),
            Err(e) => PageError::from(e).into_response(),
        };
    }
    match session::of_request(&state, req.headers(), req.extensions()).await {
        Ok(Some(found)) => {
            req.extensions_mut().insert(Checked(Some(found)));
            next.run(req).await
        }
        Ok(None) if api => Error::Unauthorized.into_response(),
        Ok(None) if matches!(*req.method(), Method::GET | Method::HEAD) => {
            let (parts, _) = req.into_parts();
            session::to_login(&session::path_and_query(&parts))
        }
        Ok(None) => pages::message(StatusCode::UNAUTHORIZED, "Log in to use this server."),
        Err(e) if api => Error::from(e).into_response(),
        Err(e) => PageError::from(e).into_response(),
    }
}
