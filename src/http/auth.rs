//! Bearer-token extractors for the API.

use super::{AppState, Error};
use crate::auth::{self, Denied};
use crate::store::{Scope, TokenRow};
use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

/// A request carrying a token that may submit runs.
pub struct Ingestor(#[allow(dead_code)] pub TokenRow);

impl FromRequestParts<AppState> for Ingestor {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        require(parts, state, Scope::Ingest).await.map(Ingestor)
    }
}

async fn require(parts: &Parts, state: &AppState, needs: Scope) -> Result<TokenRow, Error> {
    let secret = parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
        .ok_or(Error::Unauthorized)?;
    match auth::verify(&state.store, secret, needs).await? {
        Ok(token) => Ok(token),
        Err(Denied::Unauthenticated) => Err(Error::Unauthorized),
        Err(Denied::Forbidden { has, needs }) => Err(Error::Forbidden { has: has.as_str(), needs: needs.as_str() }),
    }
}
