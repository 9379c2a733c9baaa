//! Probes a search found (`contract.FUNCTION.AXIS~SHAPE`): `POST /api/v1/found-probes`, where an
//! agent stores those its search found, and `GET /api/v1/found-probes`, the team's, which every
//! agent of the team runs beside the catalogue's own probes.

use super::api::read_json_body;
use super::auth::Ingestor;
use super::error::ErrorBody;
use super::{AppState, Error};
use crate::store::StoredFoundProbe;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::Json;
use slopewatch_core::answers::FoundProbesAccepted;
use slopewatch_core::wire::FoundProbes;
use time::OffsetDateTime;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(super) fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_found_probes, submit_found_probes))
}

/// Stores probes a search found
///
/// Each a function, an axis and an input shape whose cost broke the function's contract: data
/// the agent's generators build the input from, never code. Stored all together or not at all,
/// by function, axis and shape: a probe already stored keeps its first finding (the toolchain,
/// version and time of the search that found it first, and who sent it), and answers 200 when
/// none was new. Agents then submit runs of each under its name, `contract.FUNCTION.AXIS~SHAPE`.
#[utoipa::path(
    post,
    path = "/api/v1/found-probes",
    tag = "runs",
    request_body(content = FoundProbes, content_type = "application/json"),
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Stored; `new` of them were not stored before", body = FoundProbesAccepted),
        (status = 200, description = "Every probe was already stored; nothing was written", body = FoundProbesAccepted),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "The token's scope cannot submit probes", body = ErrorBody),
        (status = 408, description = "The body arrived slower than the server's minimum rate (`body_too_slow`)", body = ErrorBody),
        (status = 413, description = "The body is over 1 MiB, or the server's limit", body = ErrorBody),
        (status = 415, description = "The body is not `application/json`", body = ErrorBody),
        (status = 422, description = "Invalid content: `field` names the path, `reason` the rule", body = ErrorBody),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn submit_found_probes(
    State(state): State<AppState>,
    token: Result<Ingestor, Error>,
    request: Request,
) -> Result<(StatusCode, Json<FoundProbesAccepted>), Error> {
    // As for runs, the token is checked from the headers before the body is read.
    let Ingestor(token) = token?;
    // Its body limit, 1 MiB, is the route's own (`bodies::FOUND_PROBES_LIMIT`).
    let body = read_json_body(&state, request).await?;
    let found = FoundProbes::parse(&body).map_err(Error::Invalid)?;
    let received_at = OffsetDateTime::now_utc();
    let probes: Vec<StoredFoundProbe> = found
        .probes
        .into_iter()
        .map(|probe| StoredFoundProbe { probe, submitted_by: token.name.clone(), received_at })
        .collect();
    let new = state.store.insert_found_probes(&probes).await?;
    // At most `MAX_FOUND_PROBES` of them, which a u32 holds.
    let answer = FoundProbesAccepted { stored: probes.len() as u32, new: new as u32 };
    if new > 0 {
        tracing::info!(token = %token.name, stored = answer.stored, new = answer.new, "found probes stored");
    }
    let status = if new > 0 { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(answer)))
}

/// The team's found probes
///
/// Every probe a search of the team found and submitted, by function, axis and shape, each as it
/// was first found. An agent runs them as it runs the catalogue's probes.
#[utoipa::path(
    get,
    path = "/api/v1/found-probes",
    tag = "reads",
    responses(
        (status = 200, description = "Every found probe, by function, axis and shape", body = FoundProbes),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn list_found_probes(State(state): State<AppState>) -> Result<Json<FoundProbes>, Error> {
    let probes = state.store.found_probes().await?.into_iter().map(|s| s.probe).collect();
    Ok(Json(FoundProbes { probes }))
}
