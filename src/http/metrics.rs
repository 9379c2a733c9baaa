//! `/metrics`: the server's counters and gauges for Prometheus to scrape.

use super::AppState;
use crate::metrics::Gauges;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;

/// Prometheus metrics
///
/// Requests by route and status with latency, runs and samples ingested, rejections by reason,
/// webhook attempts by outcome, the alert outbox's depth and refused deliveries and database pool use, in the Prometheus
/// text format.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses((status = 200, description = "Prometheus text format 0.0.4", body = String, content_type = "text/plain"))
)]
pub(super) async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    // A scrape still answers when the database does not; only the database's gauges are then missing.
    let counted = |count: Result<i64, sqlx::Error>, what: &str| match count {
        Ok(n) => Some(n),
        Err(e) => {
            tracing::warn!(error = %e, "cannot count {what} for metrics");
            None
        }
    };
    let outbox_pending = counted(state.store.pending_deliveries().await, "the alert outbox");
    let outbox_refused = counted(state.store.refused_deliveries().await, "the refused deliveries");
    let summaries_pending = counted(state.store.pending_summaries().await, "the runs pending a summary pass");
    let body = state.metrics.render(&Gauges {
        pool: state.store.pool_usage(),
        outbox_pending,
        outbox_refused,
        summaries_pending,
        runs_queued: state.store.queued_runs(),
        storage_errors: state.store.write_health().fault_counts().map(|(f, n)| (f.kind(), n)).to_vec(),
    });
    ([(CONTENT_TYPE, "text/plain; version=0.0.4")], body)
}
