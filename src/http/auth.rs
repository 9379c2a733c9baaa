//! Bearer tokens: reading them from `Authorization`, looking them up once per request
//! (`Identified`), and the extractors that let only ingest tokens submit runs, and ingest or
//! editor tokens record bisections.

use super::{AppState, Error};
use crate::auth::{self, Denied};
use crate::store::{Scope, TokenRow};
use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap};

/// A request carrying a token that may submit runs.
pub struct Ingestor(#[allow(dead_code)] pub TokenRow);

impl FromRequestParts<AppState> for Ingestor {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        require(parts, state, Scope::Ingest).await.map(Ingestor)
    }
}

/// A request carrying a token that may record a bisection: an ingest token, as the agent that
/// bisected has, or an editor's.
pub struct BisectionSubmitter(#[allow(dead_code)] pub TokenRow);

impl FromRequestParts<AppState> for BisectionSubmitter {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        match require(parts, state, Scope::Ingest).await {
            Err(Error::Forbidden { .. }) => require(parts, state, Scope::Editor).await.map(BisectionSubmitter),
            other => other.map(BisectionSubmitter),
        }
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

async fn require(parts: &Parts, state: &AppState, needs: Scope) -> Result<TokenRow, Error> {
    let secret = bearer(&parts.headers).ok_or(Error::Unauthorized)?;
    match auth::judge(token_of(state, secret, &parts.extensions).await?, needs) {
        Ok(token) => Ok(token),
        Err(Denied::Unauthenticated) => Err(Error::Unauthorized),
        Err(Denied::Forbidden { has, needs }) => Err(Error::Forbidden { has: has.as_str(), needs: needs.as_str() }),
    }
}
