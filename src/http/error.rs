//! One error type for every handler: a status, a stable code, and a message safe to show.
//!
//! 5xx answers say nothing internal; the log line carries the detail.

use crate::store::StorageFault;
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
pub use slopewatch_core::answers::ErrorBody;
use slopewatch_core::answers::ErrorDetail;
use slopewatch_core::wire::FieldError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("a valid API token is required: send `Authorization: Bearer <token>`")]
    Unauthorized,
    #[error("this token has scope {has}; this needs {needs}")]
    Forbidden { has: &'static str, needs: &'static str },
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("request body is larger than the limit of {0} bytes")]
    PayloadTooLarge(usize),
    /// The body arrived slower than the server's minimum rate; the message says how slow.
    #[error("{0}")]
    BodyTooSlow(String),
    #[error("request body must be JSON: send `Content-Type: application/json`")]
    UnsupportedMediaType,
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Invalid(FieldError),
    #[error("the database is unavailable; try again shortly")]
    Unavailable(#[source] sqlx::Error),
    /// The database cannot write for now (`StorageFault`): full, an I/O error, locked, read-only.
    #[error("the database cannot store this now ({}); nothing was stored, try again later", .0.describe())]
    Storage(StorageFault, #[source] sqlx::Error),
    /// The server is at one of its limits (connections, requests at once, the request timeout).
    #[error("{0}")]
    Busy(String),
    /// The caller is past its own limit (`message` says which) for `retry_after` more seconds.
    #[error("{message}")]
    TooManyRequests { message: String, retry_after: u64 },
    #[error("internal error")]
    Database(#[source] sqlx::Error),
    #[error("internal error")]
    Internal(#[from] anyhow::Error),
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        if let Some(fault) = StorageFault::of(&e) {
            return Error::Storage(fault, e);
        }
        match e {
            // The database is down or saturated: say so and let the client retry, quickly.
            sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::PoolClosed => Error::Unavailable(e),
            sqlx::Error::Database(ref d) if d.code().is_some_and(|c| is_unavailable_sqlstate(&c)) => {
                Error::Unavailable(e)
            }
            e => Error::Database(e),
        }
    }
}

/// Postgres error codes that mean the server is going away, not there yet or full of clients, not
/// that the query was wrong: connection exceptions (class 08), shutdown or start-up (57P01 to
/// 57P03) and too many connections (53300).
fn is_unavailable_sqlstate(code: &str) -> bool {
    code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03" | "53300")
}

impl Error {
    pub fn status(&self) -> StatusCode {
        match self {
            Error::Unauthorized => StatusCode::UNAUTHORIZED,
            Error::Forbidden { .. } => StatusCode::FORBIDDEN,
            Error::NotFound(_) => StatusCode::NOT_FOUND,
            Error::Conflict(_) => StatusCode::CONFLICT,
            Error::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Error::BodyTooSlow(_) => StatusCode::REQUEST_TIMEOUT,
            Error::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Error::BadRequest(_) => StatusCode::BAD_REQUEST,
            Error::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Error::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Error::Unavailable(_) | Error::Busy(_) | Error::Storage(..) => StatusCode::SERVICE_UNAVAILABLE,
            Error::Database(_) | Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            Error::Unauthorized => "unauthorized",
            Error::Forbidden { .. } => "forbidden",
            Error::NotFound(_) => "not_found",
            Error::Conflict(_) => "conflict",
            Error::PayloadTooLarge(_) => "payload_too_large",
            Error::BodyTooSlow(_) => "body_too_slow",
            Error::UnsupportedMediaType => "unsupported_media_type",
            Error::BadRequest(_) => "bad_request",
            Error::Invalid(_) => "invalid_field",
            Error::TooManyRequests { .. } => "too_many_requests",
            Error::Unavailable(_) | Error::Busy(_) => "unavailable",
            Error::Storage(fault, _) => fault.code(),
            Error::Database(_) | Error::Internal(_) => "internal",
        }
    }

    /// Logs what a client is not told.
    pub fn log(&self) {
        if self.status().is_server_error() {
            match self {
                Error::Unavailable(e) | Error::Database(e) => tracing::error!(error = %e, "database error"),
                Error::Storage(fault, e) => tracing::error!(error = %e, fault = fault.kind(), "storage error"),
                Error::Internal(e) => tracing::error!(error = format!("{e:#}"), "internal error"),
                _ => {}
            }
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        self.log();
        let status = self.status();
        let (field, reason) = match &self {
            Error::Invalid(e) => (Some(e.field.clone()), Some(e.reason.clone())),
            _ => (None, None),
        };
        let error =
            ErrorDetail { status: status.as_u16(), code: self.code().into(), message: self.to_string(), field, reason };
        let mut response = (status, Json(ErrorBody { error })).into_response();
        let retry_after = match &self {
            // The moment passes quickly: a request or a connection ends every few milliseconds.
            Error::Busy(_) => Some(1),
            Error::Storage(fault, _) => Some(fault.retry_after_secs()),
            Error::TooManyRequests { retry_after, .. } => Some(*retry_after),
            _ => None,
        };
        if let Some(secs) = retry_after {
            response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}
