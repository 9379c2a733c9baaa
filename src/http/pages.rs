//! Rendering askama templates into responses, and HTML error pages.

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
struct ErrorPage<'a> {
    status: u16,
    message: &'a str,
}

/// An error page for a browser: the same status and safe message as the JSON API would give.
pub fn error_page(error: &super::Error) -> Response {
    error.log();
    let message = error.to_string();
    render(error.status(), &ErrorPage { status: error.status().as_u16(), message: &message })
}
