//! `/healthz` and `/readyz`: liveness and readiness probes.

use super::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(healthz)).routes(routes!(readyz))
}

/// Whether the database answers, and whether its writes succeed.
#[derive(Debug, Serialize, ToSchema)]
pub struct Readiness {
    status: ReadyStatus,
    /// The backend: `postgres` or `sqlite`.
    database: &'static str,
    /// The outcome of the server's latest write: `ok`, or `failing: ` and why (`storage full`,
    /// `storage I/O error`, `database locked by another process`, `storage read-only`, `database
    /// out of resources`). Reads go on while writes fail, and replicas on one database all see the
    /// same fault, so this does not change the status code.
    #[schema(example = "failing: storage full")]
    writes: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
enum ReadyStatus {
    Ready,
    Unavailable,
}

/// Liveness
///
/// Answers while the process is up, without touching the database, and closes the connection:
/// it skips every cap, so it must not keep a connection alive past its header deadline.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    responses((status = 200, description = "The process is up", body = String, content_type = "text/plain", example = "ok"))
)]
async fn healthz() -> ([(axum::http::header::HeaderName, &'static str); 1], &'static str) {
    ([(axum::http::header::CONNECTION, "close")], "ok")
}

/// Readiness
///
/// Answers 200 when the database answers a query, 503 when it does not; the body says whether
/// the latest write succeeded.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    responses(
        (status = 200, description = "The database answers", body = Readiness),
        (status = 503, description = "The database does not answer", body = Readiness),
    )
)]
async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Readiness>) {
    let database = state.store.backend_name();
    let writes = match state.store.write_health().failing() {
        None => "ok".to_string(),
        Some(fault) => format!("failing: {}", fault.describe()),
    };
    match state.store.ping().await {
        Ok(()) => (StatusCode::OK, Json(Readiness { status: ReadyStatus::Ready, database, writes })),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            (StatusCode::SERVICE_UNAVAILABLE, Json(Readiness { status: ReadyStatus::Unavailable, database, writes }))
        }
    }
}
