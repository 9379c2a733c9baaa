//! `GET /api/v1/capabilities`: what this server accepts in a run, so that an agent sends what fits
//! instead of learning it from refusals.

use super::AppState;
use axum::Json;
use slopewatch_core::answers::Capabilities;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(capabilities))
}

/// What this server accepts
///
/// The parts of a run this server accepts beyond those every release took, and its version. An
/// agent reads them before it sends a run, leaves out what is not listed, and keeps back a run
/// that cannot do without it. A server that answers 404 here is of the release before
/// capabilities: it accepts `failures`, `contracts`, `sizes_of_interest`, `measures` and
/// `version_axes`.
#[utoipa::path(
    get,
    path = "/api/v1/capabilities",
    tag = "runs",
    responses((status = 200, description = "What the server accepts", body = Capabilities))
)]
async fn capabilities() -> Json<Capabilities> {
    Json(Capabilities::of_this_release(env!("CARGO_PKG_VERSION")))
}
