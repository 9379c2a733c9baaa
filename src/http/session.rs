//! Sessions for editors: an `editor` (or `admin`) token entered once becomes a session kept on the
//! server, named by a random id in a signed, HttpOnly, SameSite cookie; every form carries a CSRF
//! token derived from the session. The `Reader` and `Editor` extractors say who may see and who
//! may change a page.
//!
//! The cookie holds `session id . HMAC`. The database keeps only a hash of the id, its token and
//! its expiry, so logging out or revoking the token ends the session, and the key that signs
//! cookies comes from configuration: neither the database nor the key alone makes a session.

use super::extract::Https;
use super::pages::{self, PageError};
use super::AppState;
use crate::auth::{self, Denied};
use crate::session_key::SessionKey;
use crate::store::Scope;
use axum::extract::FromRequestParts;
use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use hmac::{Hmac, Mac};
use rand::RngCore;
use serde::Deserialize;
use sha2::Sha256;
use subtle::ConstantTimeEq;
use time::OffsetDateTime;

pub const SESSION_COOKIE: &str = "sw_session";
const LOGIN_CSRF_COOKIE: &str = "sw_login_csrf";
/// How long a login lasts.
const SESSION_TTL: time::Duration = time::Duration::days(14);

/// A logged-in editor.
#[derive(Debug, Clone)]
pub struct Session {
    /// The token's name, recorded as the author of notes and changes.
    pub name: String,
    /// The CSRF token every form of this session carries.
    pub csrf: String,
    /// The hash the session is stored under, to end it.
    id_hash: String,
}

/// A request's session as the request limits or the read gate found it, so handlers need not look
/// it up again.
#[derive(Clone)]
pub struct Checked(pub Option<Session>);

fn hmac_hex(key: &SessionKey, parts: &[&str]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).expect("HMAC takes keys of any length");
    for p in parts {
        mac.update(p.as_bytes());
        mac.update(b"|");
    }
    hex::encode(mac.finalize().into_bytes())
}

fn equal(a: &str, b: &str) -> bool {
    bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

fn random_hex(bytes: usize) -> String {
    let mut random = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut random);
    hex::encode(random)
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// `; Secure` for a request that came over TLS (`Https`): behind https the cookie must never travel
/// in clear; over plain http it could not be set at all.
fn secure(https: Https) -> &'static str {
    if https.0 {
        "; Secure"
    } else {
        ""
    }
}

/// Whether the request carries a session cookie at all, valid or not.
pub fn carries_cookie(headers: &HeaderMap) -> bool {
    cookie(headers, SESSION_COOKIE).is_some()
}

/// The session of a request, if its cookie is valid, the session has not ended and its token
/// still allows editing.
pub async fn current(state: &AppState, headers: &HeaderMap) -> Result<Option<Session>, sqlx::Error> {
    let Some(value) = cookie(headers, SESSION_COOKIE) else { return Ok(None) };
    let Some((id, sig)) = value.split_once('.') else { return Ok(None) };
    if !equal(&hmac_hex(&state.session_key, &["session", id]), sig) {
        return Ok(None);
    }
    let id_hash = auth::hash(id);
    let Some(token) = state.store.session_token(&id_hash).await? else { return Ok(None) };
    if !token.scope.0.allows(Scope::Editor) {
        return Ok(None);
    }
    Ok(Some(Session { name: token.name, csrf: hmac_hex(&state.session_key, &["csrf", id]), id_hash }))
}

/// A form that carries nothing but its CSRF token.
#[derive(Deserialize)]
pub struct CsrfForm {
    pub csrf: String,
}

/// Checks the CSRF token a form sent against the session's: for a forged or stale form, `Some`
/// page that refuses it.
pub fn csrf_refused(session: &Session, sent: &str) -> Option<Response> {
    if equal(&session.csrf, sent) {
        None
    } else {
        Some(pages::message(
            StatusCode::FORBIDDEN,
            "This form is stale or was not sent from slopewatch; reload the page and try again.",
        ))
    }
}

/// Why a login attempt failed.
pub enum LoginError {
    /// The login form's own CSRF check failed (stale or forged form).
    StaleForm,
    Denied(Denied),
}

/// Checks the login form and the token, and answers the `Set-Cookie` header of the new session.
pub async fn login(
    state: &AppState,
    https: Https,
    headers: &HeaderMap,
    form_csrf: &str,
    token: &str,
) -> Result<Result<HeaderValue, LoginError>, sqlx::Error> {
    let Some(expected) = cookie(headers, LOGIN_CSRF_COOKIE) else { return Ok(Err(LoginError::StaleForm)) };
    if !equal(&expected, form_csrf) {
        return Ok(Err(LoginError::StaleForm));
    }
    let token = match auth::verify(&state.store, token.trim(), Scope::Editor).await? {
        Ok(token) => token,
        Err(denied) => return Ok(Err(LoginError::Denied(denied))),
    };
    let id = random_hex(32);
    state.store.create_session(&auth::hash(&id), token.id, OffsetDateTime::now_utc() + SESSION_TTL).await?;
    let sig = hmac_hex(&state.session_key, &["session", &id]);
    let value = format!(
        "{SESSION_COOKIE}={id}.{sig}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{}",
        SESSION_TTL.whole_seconds(),
        secure(https)
    );
    Ok(Ok(HeaderValue::from_str(&value).expect("cookie is ASCII")))
}

/// A fresh login-form CSRF value and the cookie that carries it (double submit).
pub fn login_form_csrf(https: Https) -> (String, HeaderValue) {
    let nonce = random_hex(16);
    let value =
        format!("{LOGIN_CSRF_COOKIE}={nonce}; Path=/login; HttpOnly; SameSite=Strict; Max-Age=3600{}", secure(https));
    (nonce, HeaderValue::from_str(&value).expect("cookie is ASCII"))
}

/// Ends `session` on the server and answers the `Set-Cookie` header that clears its cookie.
pub async fn logout(state: &AppState, https: Https, session: &Session) -> Result<HeaderValue, sqlx::Error> {
    state.store.end_session(&session.id_hash).await?;
    let value = format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{}", secure(https));
    Ok(HeaderValue::from_str(&value).expect("cookie is ASCII"))
}

/// Sends the browser to the login page, and back to `next` afterwards.
pub fn to_login(next: &str) -> Response {
    let query: String = url::form_urlencoded::Serializer::new(String::new()).append_pair("next", next).finish();
    Redirect::to(&format!("/login?{query}")).into_response()
}

/// Where to go after logging in: a path on this server, else the regressions page. It must be
/// visible ASCII that resolves on this server, and start with one `/` (`//host` and `/\host` are
/// other hosts to a browser), and so must its percent-decoded form, with no control character,
/// space or backslash, which browsers drop or turn into `/` before they resolve a `Location`.
pub fn safe_next(next: Option<&str>) -> String {
    const DEFAULT: &str = "/regressions";
    let path_here = |s: &str| {
        s.starts_with('/')
            && !s.starts_with("//")
            && !s.chars().any(|c| c.is_control() || c.is_whitespace() || c == '\\')
    };
    let resolves_here = |s: &str| {
        let base = url::Url::parse("http://slopewatch.invalid/").expect("a valid URL");
        base.join(s).is_ok_and(|u| u.origin() == base.origin())
    };
    match next {
        Some(n)
            if n.len() <= 2048
                && n.bytes().all(|b| b.is_ascii_graphic())
                && path_here(n)
                && path_here(&percent_encoding::percent_decode_str(n).decode_utf8_lossy())
                && resolves_here(n) =>
        {
            n.to_string()
        }
        _ => DEFAULT.to_string(),
    }
}

pub(super) fn path_and_query(parts: &Parts) -> String {
    parts.uri.path_and_query().map_or_else(|| "/".to_string(), |pq| pq.as_str().to_string())
}

fn unavailable(e: sqlx::Error) -> Response {
    PageError::from(e).into_response()
}

/// The session of a request that may read, if it has one (the read gate has already turned away
/// those who may not).
pub struct Reader(pub Option<Session>);

impl FromRequestParts<AppState> for Reader {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        session_of(parts, state).await.map(Reader)
    }
}

async fn session_of(parts: &Parts, state: &AppState) -> Result<Option<Session>, Response> {
    of_request(state, &parts.headers, &parts.extensions).await.map_err(unavailable)
}

/// The session of a request with these headers: as already checked (`Checked`), or from the store.
pub async fn of_request(
    state: &AppState,
    headers: &HeaderMap,
    extensions: &axum::http::Extensions,
) -> Result<Option<Session>, sqlx::Error> {
    match extensions.get::<Checked>() {
        Some(Checked(session)) => Ok(session.clone()),
        None => current(state, headers).await,
    }
}

/// A request from a logged-in editor; others are sent to the login page.
pub struct Editor(pub Session);

impl FromRequestParts<AppState> for Editor {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        match session_of(parts, state).await? {
            Some(session) => Ok(Editor(session)),
            None if parts.method == axum::http::Method::GET => Err(to_login(&path_and_query(parts))),
            None => Err((StatusCode::UNAUTHORIZED, "log in as an editor to change regressions").into_response()),
        }
    }
}

/// Adds `Set-Cookie` headers to a response.
pub fn with_cookies(mut response: Response, cookies: impl IntoIterator<Item = HeaderValue>) -> Response {
    for c in cookies {
        response.headers_mut().append(SET_COOKIE, c);
    }
    response
}
