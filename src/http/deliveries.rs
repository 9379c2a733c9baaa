//! `/deliveries`: the alert outbox, what it still has to send and what it sent or gave up on, with
//! every attempt; a regression's retrospective lists its own deliveries with the same rows.

use super::pages::{render, PageResult};
use super::AppState;
use crate::format;
use crate::model::DeliveryDetail;
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/deliveries", get(page))
}

struct AttemptView {
    attempt: i32,
    at: String,
    http_status: String,
    latency_ms: String,
    error: String,
}

/// One webhook delivery as a page shows it.
pub(super) struct DeliveryView {
    id: String,
    regression_id: i64,
    pub(super) event: String,
    pub(super) target: String,
    pub(super) status: String,
    pub(super) attempts: i32,
    next_attempt: String,
    pub(super) delivered: String,
    pub(super) last_error: String,
    tries: Vec<AttemptView>,
}

pub(super) fn delivery_view(d: &DeliveryDetail) -> DeliveryView {
    let del = &d.delivery;
    DeliveryView {
        id: del.id.to_string(),
        regression_id: del.regression_id,
        event: del.event.clone(),
        target: del.target.clone(),
        status: del.status.clone(),
        attempts: del.attempts,
        next_attempt: if del.status == "pending" { format::timestamp(del.next_attempt_at) } else { String::new() },
        delivered: del.delivered_at.map(format::timestamp).unwrap_or_default(),
        last_error: del.last_error.clone().unwrap_or_default(),
        tries: d
            .attempts
            .iter()
            .map(|a| AttemptView {
                attempt: a.attempt,
                at: format::timestamp(a.at),
                http_status: a.http_status.map(|s| s.to_string()).unwrap_or_else(|| "–".into()),
                latency_ms: format!("{:.0}", a.latency_ms),
                error: a.error.clone().unwrap_or_default(),
            })
            .collect(),
    }
}

#[derive(Template)]
#[template(path = "deliveries.html")]
struct DeliveriesPage {
    pending: Vec<DeliveryView>,
    recent: Vec<DeliveryView>,
    targets: Vec<(String, &'static str)>,
}

/// `GET /deliveries`.
async fn page(State(state): State<AppState>) -> PageResult {
    let (pending, recent) = state.store.deliveries(100).await?;
    let page = DeliveriesPage {
        pending: pending.iter().map(delivery_view).collect(),
        recent: recent.iter().map(delivery_view).collect(),
        targets: state.config.alerts.webhooks.iter().map(|w| (w.name.clone(), w.format.as_str())).collect(),
    };
    Ok(render(StatusCode::OK, &page))
}
