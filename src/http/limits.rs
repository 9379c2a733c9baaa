//! What one request may take: a place among the requests handled at once, and time. Beyond
//! either, the answer is 503 with `Retry-After`, which agents retry.

use super::Error;
use crate::config::Limits;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// The places and the deadline shared by every request to one app.
#[derive(Clone)]
pub(super) struct RequestLimits {
    places: Arc<Semaphore>,
    timeout: Duration,
}

impl RequestLimits {
    pub(super) fn new(limits: &Limits) -> RequestLimits {
        RequestLimits {
            places: Arc::new(Semaphore::new(limits.max_concurrent_requests)),
            timeout: limits.request_timeout,
        }
    }
}

/// Liveness answers whatever the load, so a busy server is not restarted for being busy;
/// readiness (`/readyz`) takes a place like any request, and a full server is not ready.
const ALWAYS_ANSWERED: &str = "/healthz";

pub(super) async fn limit(State(limits): State<RequestLimits>, req: Request, next: Next) -> Response {
    let _place = if req.uri().path() == ALWAYS_ANSWERED {
        None
    } else {
        match limits.places.clone().try_acquire_owned() {
            Ok(place) => Some(place),
            Err(_) => {
                return Error::Busy("the server is handling as many requests as it may; retry shortly".into())
                    .into_response()
            }
        }
    };
    match tokio::time::timeout(limits.timeout, next.run(req)).await {
        Ok(response) => response,
        Err(_) => {
            let secs = limits.timeout.as_secs_f64();
            tracing::warn!(timeout_s = secs, "request cut off at the request timeout");
            Error::Busy(format!("the request took longer than the server's limit of {secs} s; retry")).into_response()
        }
    }
}
