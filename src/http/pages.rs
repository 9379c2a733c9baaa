//! What every HTML page shares: rendering an askama template into a response, the one error page
//! and the one message page.

use super::Error;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

/// Renders a template; a render failure becomes a generic 500 page and a log line.
pub fn render<T: askama::Template>(status: StatusCode, template: &T) -> Response {
    match template.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "template render failed");
            (StatusCode::INTERNAL_SERVER_ERROR, Html(INTERNAL_ERROR_PAGE)).into_response()
        }
    }
}

const INTERNAL_ERROR_PAGE: &str =
    "<!doctype html><title>Internal error · slopewatch</title><h1>Internal error</h1><p>Something went wrong; it has been logged.</p>";

#[derive(askama::Template)]
#[template(path = "error.html")]
struct MessagePage<'a> {
    status: u16,
    message: &'a str,
}

/// A page that says one thing under its status, e.g. why a form was refused.
pub fn message(status: StatusCode, text: &str) -> Response {
    render(status, &MessagePage { status: status.as_u16(), message: text })
}

/// An error answered as an HTML page: the same status and safe message as the JSON API would give.
pub struct PageError(Error);

impl<E: Into<Error>> From<E> for PageError {
    fn from(e: E) -> Self {
        PageError(e.into())
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        self.0.log();
        message(self.0.status(), &self.0.to_string())
    }
}

/// What a page handler answers.
pub type PageResult = Result<Response, PageError>;
