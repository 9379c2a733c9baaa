//! Bearer tokens: reading them from `Authorization`, looking them up once per request
//! (`Identified`), and the extractors that let ingest and bisect tokens submit runs, and bisect
//! or editor tokens (and, deprecated, ingest tokens) record bisections.

use super::{AppState, Error};
use crate::auth::{self, Denied};
use crate::store::{Scope, TokenRow};
use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap};

/// A request carrying a token that may submit runs.
pub struct Ingestor(pub TokenRow);

impl FromRequestParts<AppState> for Ingestor {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        require(parts, state, Scope::Ingest).await.map(Ingestor)
    }
}

/// A request carrying a token that may record a bisection: a bisect token, as the agent that
/// bisected has, an editor's, or an ingest token, which may until the release after the one that
/// brought the bisect scope (`deprecated`).
pub struct BisectionSubmitter {
    pub token: TokenRow,
    /// An ingest token: accepted for now, with a warning in the answer and the log.
    pub deprecated: bool,
}

impl FromRequestParts<AppState> for BisectionSubmitter {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let token = identified(parts, state).await?.ok_or(Error::Unauthorized)?;
        // Every scope may, for now; a scope added later says here whether it may.
        let deprecated = match token.scope.0 {
            Scope::Bisect | Scope::Editor | Scope::Admin => false,
            Scope::Ingest => true,
        };
        Ok(BisectionSubmitter { token, deprecated })
    }
}

/// Whether a reader sees what the pages show editors alone (webhook errors, failures' whole
/// detail): a logged-in session, or a bearer token of editor scope or above.
pub(super) struct SeesAll(pub(super) bool);

impl FromRequestParts<AppState> for SeesAll {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        if let Some(secret) = bearer(&parts.headers) {
            let token = token_of(state, secret, &parts.extensions).await?;
            return Ok(SeesAll(token.is_some_and(|t| t.scope.0.allows(Scope::Editor))));
        }
        let session = super::session::of_request(state, &parts.headers, &parts.extensions).await?;
        Ok(SeesAll(session.is_some()))
    }
}

/// The token of `Authorization: Bearer <token>`. Authentication schemes are case-insensitive
/// (RFC 9110), so `bearer` and `BEARER` are the same scheme.
pub(super) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim_start().split_once([' ', '\t'])?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The stored token a request's bearer header named, as the request limits looked it up (`None`:
/// no such token), so that the read gate and the handlers do not ask the store again.
#[derive(Clone)]
pub(super) struct Identified(pub(super) Option<TokenRow>);

/// The stored token `secret`, the request's bearer token, names: as already identified, or from
/// the store.
pub(super) async fn token_of(
    state: &AppState,
    secret: &str,
    extensions: &Extensions,
) -> Result<Option<TokenRow>, sqlx::Error> {
    match extensions.get::<Identified>() {
        Some(Identified(token)) => Ok(token.clone()),
        None => auth::identify(&state.store, secret).await,
    }
}

/// The stored token the request's bearer header names, whatever its scope (`None`: no such token).
async fn identified(parts: &Parts, state: &AppState) -> Result<Option<TokenRow>, Error> {
    let secret = bearer(&parts.headers).ok_or(Error::Unauthorized)?;
    Ok(token_of(state, secret, &parts.extensions).await?)
}

async fn require(parts: &Parts, state: &AppState, needs: Scope) -> Result<TokenRow, Error> {
    match auth::judge(identified(parts, state).await?, needs) {
        Ok(token) => Ok(token),
        Err(Denied::Unauthenticated) => Err(Error::Unauthorized),
        Err(Denied::Forbidden { has, needs }) => Err(Error::Forbidden { has: has.as_str(), needs: needs.as_str() }),
    }
}
