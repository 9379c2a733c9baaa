//! `/deliveries`: the alert outbox, what it still has to send, what its targets refused and what
//! it sent or gave up on, with every attempt, and the form that resends a refused or failed
//! delivery; a regression's retrospective lists its own deliveries with the same rows.

use super::extract::{AppForm, OnPage};
use super::pages::{render, PageResult};
use super::session::{csrf_refused, CsrfForm, Editor, Session};
use super::{AppState, Error};
use crate::format;
use crate::model::DeliveryDetail;
use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::Router;
use time::OffsetDateTime;
use uuid::Uuid;

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/deliveries", get(page)).route("/deliveries/{id}/resend", post(resend))
}

struct AttemptView {
    attempt: i32,
    at: String,
    http_status: String,
    latency_ms: String,
    error: String,
    answer: String,
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
    /// The first line of the body of the last answer other than 2xx.
    last_answer: String,
    /// Who resent it last, and when.
    resent: String,
    /// Whether a person may resend it: refused or failed.
    resendable: bool,
    tries: Vec<AttemptView>,
}

/// `d` as its reader may see it (`views::regression::for_anyone` cuts what only editors may).
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
        last_answer: d.attempts.iter().rev().find_map(|a| a.answer.clone()).unwrap_or_default(),
        resent: match (&del.resent_by, del.resent_at) {
            (Some(by), Some(at)) => format!("{by} at {}", format::timestamp(at)),
            _ => String::new(),
        },
        resendable: del.status == "refused" || del.status == "failed",
        tries: d
            .attempts
            .iter()
            .map(|a| AttemptView {
                attempt: a.attempt,
                at: format::timestamp(a.at),
                http_status: a.http_status.map(|s| s.to_string()).unwrap_or_else(|| "–".into()),
                latency_ms: format!("{:.0}", a.latency_ms),
                error: a.error.clone().unwrap_or_default(),
                answer: a.answer.clone().unwrap_or_default(),
            })
            .collect(),
    }
}

#[derive(Template)]
#[template(path = "deliveries.html")]
struct DeliveriesPage {
    pending: Vec<DeliveryView>,
    refused: Vec<DeliveryView>,
    recent: Vec<DeliveryView>,
    targets: Vec<(String, &'static str)>,
    /// The editor's session, for the resend forms; without one the page says how to log in.
    editor: Option<Session>,
}

/// `GET /deliveries`: for a signed-in session only, even where reading is open to all, since a
/// target's error answers may quote its addresses and internals; without one, the login.
async fn page(State(state): State<AppState>, Editor(session): Editor) -> PageResult {
    let editor = Some(session);
    let outbox = state.store.deliveries(100).await?;
    let page = DeliveriesPage {
        pending: outbox.pending.iter().map(delivery_view).collect(),
        refused: outbox.refused.iter().map(delivery_view).collect(),
        recent: outbox.recent.iter().map(delivery_view).collect(),
        targets: state.config.alerts.webhooks.iter().map(|w| (w.name.clone(), w.format.as_str())).collect(),
        editor,
    };
    Ok(render(StatusCode::OK, &page))
}

/// `POST /deliveries/{id}/resend`: an editor puts a refused or failed delivery back in the
/// outbox, due now, under the same id.
async fn resend(
    State(state): State<AppState>,
    Editor(session): Editor,
    Path(raw): Path<String>,
    OnPage(AppForm(f)): OnPage<AppForm<CsrfForm>>,
) -> PageResult {
    if let Some(r) = csrf_refused(&session, &f.csrf) {
        return Ok(r);
    }
    let missing = || Error::NotFound(format!("no refused or failed delivery {raw:?}"));
    let id: Uuid = raw.parse().map_err(|_| missing())?;
    if !state.store.resend_delivery(id, &session.name, OffsetDateTime::now_utc()).await? {
        return Err(missing().into());
    }
    tracing::info!(delivery = %id, by = %session.name, "alert delivery resent");
    Ok(Redirect::to("/deliveries").into_response())
}
