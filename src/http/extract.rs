//! Extractors whose rejections answer in the app's error format: `AppQuery`, `AppForm` (and path
//! extractors such as a regression's id) with the JSON error body, or wrapped in `OnPage` as a page.

use super::pages::PageError;
use super::Error;
use axum::extract::rejection::{FormRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;

/// The query string, deserialized.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(Error))]
pub struct AppQuery<T>(pub T);

/// A form body (`application/x-www-form-urlencoded`), deserialized.
#[derive(FromRequest)]
#[from_request(via(axum::Form), rejection(Error))]
pub struct AppForm<T>(pub T);

// A malformed query, form or path is the client's mistake whatever axum would answer (415 and 422
// among them): one status, with axum's own text as the reason.
impl From<QueryRejection> for Error {
    fn from(rejection: QueryRejection) -> Self {
        Error::BadRequest(rejection.body_text())
    }
}

impl From<FormRejection> for Error {
    fn from(rejection: FormRejection) -> Self {
        Error::BadRequest(rejection.body_text())
    }
}

impl From<PathRejection> for Error {
    fn from(rejection: PathRejection) -> Self {
        Error::BadRequest(rejection.body_text())
    }
}

/// One of the extractors above in a page handler: its rejection answers as the error page.
pub struct OnPage<X>(pub X);

impl<S, X> FromRequestParts<S> for OnPage<X>
where
    S: Send + Sync,
    X: FromRequestParts<S, Rejection = Error>,
{
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, PageError> {
        Ok(OnPage(X::from_request_parts(parts, state).await?))
    }
}

impl<S, X> FromRequest<S> for OnPage<X>
where
    S: Send + Sync,
    X: FromRequest<S, Rejection = Error>,
{
    type Rejection = PageError;

    async fn from_request(req: Request, state: &S) -> Result<Self, PageError> {
        Ok(OnPage(X::from_request(req, state).await?))
    }
}
