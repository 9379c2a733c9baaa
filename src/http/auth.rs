//! Bearer tokens: reading them from `Authorization`, and the extractors that let only ingest
//! tokens submit runs, and ingest or editor tokens record bisections.

use super::{AppState, Error};
use crate::auth::{self, Denied};
use crate::store::{Scope, TokenRow};
use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::HeaderMap;

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

async fn require(parts: &Parts, state: &AppState, needs: Scope) -> Result<TokenRow, Error> {
    let secret = bearer(&parts.headers).ok_or(Error::Unauthorized)?;
    match auth::verify(&state.store, secret, needs).await? {
        Ok(token) => Ok(token),
        Err(Denied::Unauthenticated) => Err(Error::Unauthorized),
        Err(Denied::Forbidden { has, needs }) => Err(Error::Forbidden { has: has.as_str(), needs: needs.as_str() }),
    }
}
