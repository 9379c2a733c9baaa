//! Exposure scans of built artifacts: `POST /api/v1/exposures`, where an agent stores a scan, and
//! `GET /api/v1/toolchains/{lineage}/{version}/contracts`, the catalogue's verdicts at a version
//! that an agent judges an artifact by without measuring the catalogue itself.

use super::api::read_json_body;
use super::auth::Ingestor;
use super::error::ErrorBody;
use super::extract::AppPath;
use super::{versions, AppState, Error};
use crate::intake::ExposureOutcome;
use crate::links;
use crate::views::contracts::ContractsView;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::Json;
use slopewatch_core::answers::ExposureAccepted;
use slopewatch_core::exposure::{ContractVerdicts, ExposureSubmission};
use slopewatch_core::lineage::LineageVersion;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(super) fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(submit_exposure)).routes(routes!(contract_verdicts))
}

/// Stores an exposure scan
///
/// The scan of one built artifact: the catalogue functions it calls or references, and those of
/// them its toolchain version breaks, with call sites and callers. Stored whole or not at all;
/// resubmitting a scan id with the same content stores nothing and answers 200. The version's page
/// lists the latest scan of each artifact, and a regression names the artifacts whose latest scan
/// reaches a function it names.
#[utoipa::path(
    post,
    path = "/api/v1/exposures",
    tag = "runs",
    request_body(content = ExposureSubmission, content_type = "application/json"),
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Stored", body = ExposureAccepted),
        (status = 200, description = "Already stored with the same content; nothing was written", body = ExposureAccepted),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "The token's scope cannot submit scans", body = ErrorBody),
        (status = 409, description = "The scan id was already submitted with different content", body = ErrorBody),
        (status = 408, description = "The body arrived slower than the server's minimum rate (`body_too_slow`)", body = ErrorBody),
        (status = 413, description = "The body is over 512 KiB, or the server's limit", body = ErrorBody),
        (status = 415, description = "The body is not `application/json`", body = ErrorBody),
        (status = 422, description = "Invalid content: `field` names the path, `reason` the rule", body = ErrorBody),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn submit_exposure(
    State(state): State<AppState>,
    token: Result<Ingestor, Error>,
    request: Request,
) -> Result<(StatusCode, Json<ExposureAccepted>), Error> {
    // As for runs, the token is checked from the headers before the body is read.
    token?;
    // Its body limit, 512 KiB, is the route's own (`bodies::EXPOSURE_LIMIT`).
    let body = read_json_body(&state, request).await?;
    let scan = ExposureSubmission::from_json(&body).map_err(Error::Invalid)?;
    scan.check_scanned_at(time::OffsetDateTime::now_utc()).map_err(Error::Invalid)?;
    let status = match state.intake.record_exposure(&scan).await? {
        ExposureOutcome::Created => StatusCode::CREATED,
        ExposureOutcome::Existing => StatusCode::OK,
        ExposureOutcome::Conflict => {
            return Err(Error::Conflict(format!("scan {} was already submitted with different content", scan.scan_id)))
        }
    };
    if status == StatusCode::CREATED {
        state.metrics.record_exposure_scan();
        tracing::info!(scan_id = %scan.scan_id, artifact = %scan.artifact, lineage = %scan.lineage,
            version = %scan.version, exposed = scan.exposed.len(), reaches = scan.reaches.len(), "exposure scan stored");
    }
    let url = format!("{}#artifacts", links::version_page(&scan.lineage, &scan.version));
    Ok((status, Json(ExposureAccepted { scan_id: scan.scan_id, created: status == StatusCode::CREATED, url })))
}

/// The contract catalogue's verdicts at a toolchain version
///
/// Every contract probe (`contract.FUNCTION.AXIS`) measured at the version, with the class its
/// contract allows, the class measured and where it stands: `held`, `over` (a polynomial step or
/// more above its contract), `failed` (with `failure`: `crashed`, `wrong_result`, …),
/// `not_provided` (the libc lacks the function) or `unsure`; as the contracts page shows the
/// version's column, each probe by wall time where the version has it, else by the metric it has.
/// An agent judges a scanned artifact by these instead of measuring the catalogue itself.
#[utoipa::path(
    get,
    path = "/api/v1/toolchains/{lineage}/{version}/contracts",
    tag = "reads",
    params(
        ("lineage" = String, Path, description = "The toolchain lineage, e.g. `zig-cc-musl`"),
        ("version" = String, Path, description = "One of its versions that reported, e.g. `0.16.0`"),
    ),
    responses(
        (status = 200, description = "Every probe measured at the version, by function and axis", body = ContractVerdicts),
        (status = 404, description = "No such lineage, or no such version of it, has reported", body = ErrorBody),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn contract_verdicts(
    State(state): State<AppState>,
    AppPath((lineage, version)): AppPath<(String, String)>,
) -> Result<Json<ContractVerdicts>, Error> {
    let (probes, all) = tokio::try_join!(state.store.contract_probes(), state.store.toolchain_versions())?;
    versions::reported(&all, &lineage, &version)?;
    let column = [LineageVersion::new(lineage.as_str(), version.as_str())];
    let (cells, libc) =
        tokio::try_join!(state.store.probe_cells(&column), state.store.catalogue_libc(&lineage, &version))?;
    let probes = ContractsView::new(&probes, &column, &cells, None).verdicts(0);
    Ok(Json(ContractVerdicts { lineage, version, libc, probes }))
}
