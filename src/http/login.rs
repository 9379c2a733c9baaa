//! `/login` and `/logout`: an editor enters a token once and gets a session cookie, or ends it.
//! Failed logins are limited per client address (`throttle.rs`).

use super::extract::{AppForm, ClientAddr, Https, OnPage};
use super::pages::{render, PageResult};
use super::session::{self, csrf_refused, CsrfForm, Editor, LoginError};
use super::AppState;
use crate::auth::Denied;
use askama::Template;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use std::time::Instant;

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/login", get(login_form).post(login)).route("/logout", post(logout))
}

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    csrf: String,
    next: String,
    error: Option<String>,
    user: Option<String>,
}

#[derive(Deserialize)]
struct NextQuery {
    next: Option<String>,
}

async fn login_form(
    State(state): State<AppState>,
    https: Https,
    headers: HeaderMap,
    query: Result<Query<NextQuery>, QueryRejection>,
) -> PageResult {
    // A malformed query only loses where to go afterwards: the login form still answers.
    let next = session::safe_next(query.ok().and_then(|Query(q)| q.next).as_deref());
    let user = session::current(&state, &headers).await?.map(|s| s.name);
    Ok(login_page(https, StatusCode::OK, next, None, user))
}

fn login_page(https: Https, status: StatusCode, next: String, error: Option<String>, user: Option<String>) -> Response {
    let (csrf, cookie) = session::login_form_csrf(https);
    session::with_cookies(render(status, &LoginPage { csrf, next, error, user }), [cookie])
}

#[derive(Deserialize)]
struct LoginForm {
    token: String,
    csrf: String,
    next: Option<String>,
}

async fn login(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    https: Https,
    headers: HeaderMap,
    OnPage(AppForm(f)): OnPage<AppForm<LoginForm>>,
) -> PageResult {
    let next = session::safe_next(f.next.as_deref());
    // Past the limit the token is not even checked, so guessing gains nothing by going faster.
    if let Err(wait) = state.login_throttle.check(client, Instant::now()) {
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        let text = format!("Too many failed logins from your address; try again in {} minutes.", seconds.div_ceil(60));
        let mut page = login_page(https, StatusCode::TOO_MANY_REQUESTS, next, Some(text), None);
        page.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds.max(1)));
        return Ok(page);
    }
    match session::login(&state, https, &headers, &f.csrf, &f.token).await? {
        Ok(cookie) => {
            state.login_throttle.succeeded(client);
            Ok(session::with_cookies(Redirect::to(&next).into_response(), [cookie]))
        }
        Err(e) => {
            if matches!(e, LoginError::Denied(Denied::Unauthenticated)) {
                state.login_throttle.failed(client, Instant::now());
            }
            let (status, text) = match e {
                LoginError::StaleForm => {
                    (StatusCode::FORBIDDEN, "The login form expired; please enter the token again.")
                }
                LoginError::Denied(Denied::Unauthenticated) => (StatusCode::UNAUTHORIZED, "That token is not valid."),
                LoginError::Denied(Denied::Forbidden { .. }) => {
                    (StatusCode::FORBIDDEN, "That token cannot edit: an editor or admin token is needed.")
                }
            };
            Ok(login_page(https, status, next, Some(text.into()), None))
        }
    }
}

async fn logout(
    State(state): State<AppState>,
    https: Https,
    Editor(session): Editor,
    OnPage(AppForm(f)): OnPage<AppForm<CsrfForm>>,
) -> PageResult {
    if let Some(r) = csrf_refused(&session, &f.csrf) {
        return Ok(r);
    }
    let cleared = session::logout(&state, https, &session).await?;
    Ok(session::with_cookies(Redirect::to("/regressions").into_response(), [cleared]))
}
