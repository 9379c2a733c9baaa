//! The JSON API under `/api/v1`: run ingest and reads. Each handler's `#[utoipa::path]` is its
//! entry in the OpenAPI document, and registering it with `routes!` is what serves it.

use super::auth::Ingestor;
use super::bodies::Cut;
use super::error::ErrorBody;
use super::extract::AppQuery;
use super::{AppState, Error};
use crate::model::SizeMedian;
use crate::store::{
    Arrival, FitReceipt, HostRow, InsertOutcome, RunDetail, RunListRow, ToolchainRow, VersionFailures, WorkloadRow,
};
use axum::body::Bytes;
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use slopewatch_core::answers::{RunAccepted, WorkloadSlope};
use slopewatch_core::wire::{Metric, RunSubmission};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_runs, submit_run))
        .routes(routes!(get_run))
        .routes(routes!(list_workloads))
        .routes(routes!(list_toolchains))
        .routes(routes!(list_hosts))
        .routes(routes!(get_series))
}

/// One workload's fit as the run's answer gives it.
fn slope_of(f: FitReceipt) -> WorkloadSlope {
    WorkloadSlope {
        workload: f.workload,
        slope: f.slope,
        ci_low: f.ci_low,
        ci_high: f.ci_high,
        r2: f.r2,
        n_sizes: f.n_sizes,
    }
}

/// Stores a run
///
/// The run, its fits, medians, samples and per-version summaries are stored in one transaction,
/// or not at all. Resubmitting a run id with the same content stores nothing and answers 200.
/// Its `measure` (with the `counter` of an `instructions` run) is the metric its series are kept
/// under: slopes of times and of counts, or of perf's and Valgrind's counts, never mix.
#[utoipa::path(
    post,
    path = "/api/v1/runs",
    tag = "runs",
    request_body(content = RunSubmission, content_type = "application/json"),
    security(("bearer" = [])),
    responses(
        (status = 201, description = "Stored", body = RunAccepted),
        (status = 200, description = "Already stored with the same content; nothing was written", body = RunAccepted),
        (status = 401, description = "No valid token", body = ErrorBody),
        (status = 403, description = "The token's scope cannot submit runs", body = ErrorBody),
        (status = 409, description = "The run id was already submitted with different content", body = ErrorBody),
        (status = 408, description = "The body arrived slower than the server's minimum rate (`body_too_slow`)", body = ErrorBody),
        (status = 413, description = "The body is over the server's limit", body = ErrorBody),
        (status = 415, description = "The body is not `application/json`", body = ErrorBody),
        (status = 422, description = "Invalid content: `field` names the path, `reason` the rule", body = ErrorBody),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn submit_run(
    State(state): State<AppState>,
    token: Result<Ingestor, Error>,
    request: Request,
) -> Result<(StatusCode, Json<RunAccepted>), Error> {
    // The token is checked from the headers alone: a client without one is answered before its
    // body is read, so it cannot make the server hold uploads in memory.
    let result = match token {
        Ok(_) => store_run(&state, request).await,
        Err(e) => Err(e),
    };
    match &result {
        Ok((StatusCode::CREATED, _)) => {}
        Ok(_) => state.metrics.record_repeated_run(),
        Err(e) => state.metrics.record_rejection(e.code()),
    }
    result
}

/// A request's body, which must be `application/json` and within its route's body limit.
pub(super) async fn read_json_body(state: &AppState, request: Request) -> Result<Bytes, Error> {
    let is_json = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return Err(Error::UnsupportedMediaType);
    }
    // The route's size and pace are enforced as the body arrives (`bodies`): a cut says which.
    Bytes::from_request(request, state).await.map_err(|rejection| match Cut::behind(&rejection) {
        Some(cut) => cut.into(),
        None => Error::BadRequest(rejection.body_text()),
    })
}

async fn store_run(state: &AppState, request: Request) -> Result<(StatusCode, Json<RunAccepted>), Error> {
    let body = read_json_body(state, request).await?;
    let run = RunSubmission::from_json(&body).map_err(Error::Invalid)?;
    let (status, receipt) = match state.intake.insert_run(&run, &Arrival::now()).await? {
        InsertOutcome::Created(receipt) => (StatusCode::CREATED, receipt),
        InsertOutcome::Existing(receipt) => (StatusCode::OK, receipt),
        InsertOutcome::Conflict => {
            return Err(Error::Conflict(format!("run {} was already submitted with different content", run.run_id)))
        }
        InsertOutcome::Invalid(e) => return Err(Error::Invalid(e)),
    };
    if status == StatusCode::CREATED {
        state.metrics.record_run(run.sample_count());
        tracing::info!(run_id = %run.run_id, toolchain = %run.toolchain.name, version = %run.toolchain.version,
            workloads = run.workloads.len(), samples = run.sample_count(), "run stored");
    }
    Ok((
        status,
        Json(RunAccepted {
            run_id: receipt.run_id,
            created: status == StatusCode::CREATED,
            measure: run.metric(),
            fits: receipt.fits.into_iter().map(slope_of).collect(),
            url: format!("/runs/{}", receipt.run_id),
        }),
    ))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ListRuns {
    /// How many runs, 1 to 1000; 50 when not given.
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
}

/// The latest runs, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunList {
    runs: Vec<RunListRow>,
}

/// Lists the latest runs
#[utoipa::path(
    get,
    path = "/api/v1/runs",
    tag = "reads",
    params(ListRuns),
    responses(
        (status = 200, description = "The latest runs, newest first", body = RunList),
        (status = 400, description = "`limit` is not a number from 1 to 1000", body = ErrorBody),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn list_runs(State(state): State<AppState>, AppQuery(q): AppQuery<ListRuns>) -> Result<Json<RunList>, Error> {
    let limit = q.limit.unwrap_or(50);
    if !(1..=1000).contains(&limit) {
        return Err(Error::BadRequest("limit must be between 1 and 1000".into()));
    }
    Ok(Json(RunList { runs: state.store.recent_runs(limit).await? }))
}

/// One run
///
/// Host, toolchain, every workload's fit with its local slopes, per-size medians and raw samples.
#[utoipa::path(
    get,
    path = "/api/v1/runs/{id}",
    tag = "reads",
    params(("id" = Uuid, Path, description = "The run id")),
    responses(
        (status = 200, description = "The run", body = RunDetail),
        (status = 400, description = "The id is not a UUID", body = ErrorBody),
        (status = 404, description = "No such run", body = ErrorBody),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn get_run(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<RunDetail>, Error> {
    let run_id = Uuid::parse_str(&id).map_err(|_| Error::BadRequest(format!("{id:?} is not a run id (a UUID)")))?;
    let mut run = state.store.run(run_id).await?.ok_or_else(|| Error::NotFound(format!("no run {run_id}")))?;
    crate::views::fill_in_run(&mut run, state.config.alerts.rules.min_sizes);
    Ok(Json(run))
}

/// Every workload that has reported, by name and then metric: a workload measured by two metrics
/// is listed twice, once per series.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkloadList {
    workloads: Vec<WorkloadRow>,
}

/// Lists workloads with their metrics and size units
#[utoipa::path(
    get,
    path = "/api/v1/workloads",
    tag = "reads",
    responses(
        (status = 200, description = "Every workload under each metric it was measured by, by name", body = WorkloadList),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn list_workloads(State(state): State<AppState>) -> Result<Json<WorkloadList>, Error> {
    Ok(Json(WorkloadList { workloads: state.store.workloads().await? }))
}

/// Every toolchain build that has reported, by lineage and then version order.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolchainList {
    toolchains: Vec<ToolchainRow>,
}

/// Lists toolchain builds with run counts
#[utoipa::path(
    get,
    path = "/api/v1/toolchains",
    tag = "reads",
    responses(
        (status = 200, description = "Every toolchain build, by lineage and version", body = ToolchainList),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn list_toolchains(State(state): State<AppState>) -> Result<Json<ToolchainList>, Error> {
    Ok(Json(ToolchainList { toolchains: state.store.toolchains().await? }))
}

/// Every host that has reported, by name.
#[derive(Debug, Serialize, ToSchema)]
pub struct HostList {
    hosts: Vec<HostRow>,
}

/// Lists hosts with run counts
#[utoipa::path(
    get,
    path = "/api/v1/hosts",
    tag = "reads",
    responses(
        (status = 200, description = "Every host, by name", body = HostList),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn list_hosts(State(state): State<AppState>) -> Result<Json<HostList>, Error> {
    Ok(Json(HostList { hosts: state.store.hosts().await? }))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct SeriesQuery {
    /// The workload, e.g. `strchr`.
    workload: String,
    /// The toolchain lineage, e.g. `zig-cc-musl`.
    toolchain: String,
    /// The metric of the series: `wall`, `cpu`, `instructions-perf` or `instructions-valgrind`.
    /// When not given, wall time where the workload has it in the lineage, else the metric it has.
    #[param(value_type = Option<Metric>)]
    measure: Option<String>,
}

/// One workload's slope at every version of one toolchain lineage, by one metric.
#[derive(Debug, Serialize, ToSchema)]
pub struct Series {
    workload: String,
    toolchain: String,
    /// The metric of the series: its sizes' medians are nanoseconds of wall or CPU time, or
    /// instructions counted.
    measure: Metric,
    /// Every metric the workload has a series of in this lineage, each `?measure=` may ask for.
    measures: Vec<Metric>,
    /// In version order (semver-aware; other strings follow in first-seen order).
    versions: Vec<SeriesVersion>,
}

/// One version of a series: its summary over the runs that passed the workload and, where runs
/// failed it, the failures. A version every run failed has null slope numbers and no sizes.
#[derive(Debug, Serialize, ToSchema)]
pub struct SeriesVersion {
    workload: String,
    lineage: String,
    version: String,
    slope: Option<f64>,
    slope_min: Option<f64>,
    slope_max: Option<f64>,
    ci_low: Option<f64>,
    ci_high: Option<f64>,
    r2: Option<f64>,
    /// The runs that passed the workload, and their hosts.
    runs: i64,
    hosts: i64,
    sizes: Vec<SizeMedian>,
    #[serde(with = "time::serde::rfc3339")]
    first_seen: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    last_run_at: OffsetDateTime,
    /// How many of the version's runs and hosts failed the workload, and the latest failure;
    /// null when none did.
    failures: Option<VersionFailures>,
    /// The complexity class of `sizes`' medians; null where every run failed, or while a store
    /// upgraded from before classes is still classifying its history.
    complexity: Option<slopewatch_core::complexity::Complexity>,
    /// The workload's source hash in the version's latest run; null where every run failed.
    source_hash: Option<String>,
    /// How many distinct workload sources the version's summarised runs were built from.
    source_count: i64,
    /// Whether the latest run built another workload source than the latest run of the measured
    /// version before: a step here may be the workload's own.
    source_changed: bool,
}

impl SeriesVersion {
    fn of(workload: &str, lineage: &str, v: crate::views::SeriesAtVersion, source_changed: bool) -> SeriesVersion {
        let s = v.summary.as_ref();
        let f = v.failures.as_ref();
        let first_seen = [s.map(|s| s.first_seen), f.map(|f| f.first_seen)].into_iter().flatten().min();
        let last_run_at = [s.map(|s| s.last_run_at), f.map(|f| f.last_failed_at)].into_iter().flatten().max();
        SeriesVersion {
            workload: workload.to_string(),
            lineage: lineage.to_string(),
            slope: s.map(|s| s.slope),
            slope_min: s.map(|s| s.slope_min),
            slope_max: s.map(|s| s.slope_max),
            ci_low: s.map(|s| s.ci_low),
            ci_high: s.map(|s| s.ci_high),
            r2: s.map(|s| s.r2),
            runs: s.map_or(0, |s| s.runs),
            hosts: s.map_or(0, |s| s.hosts),
            first_seen: first_seen.unwrap_or(OffsetDateTime::UNIX_EPOCH),
            last_run_at: last_run_at.unwrap_or(OffsetDateTime::UNIX_EPOCH),
            complexity: s.and_then(|s| s.complexity.clone()),
            source_hash: s.and_then(|s| s.source_hash.clone()),
            source_count: s.map_or(0, |s| s.source_count),
            source_changed,
            sizes: v.summary.map(|s| s.sizes).unwrap_or_default(),
            failures: v.failures,
            version: v.version,
        }
    }
}

/// A workload's slope across a lineage's versions
#[utoipa::path(
    get,
    path = "/api/v1/series",
    tag = "reads",
    params(SeriesQuery),
    responses(
        (status = 200, description = "Every version's summary, in version order", body = Series),
        (status = 400, description = "`workload` or `toolchain` is missing, or `measure` names no metric", body = ErrorBody),
        (status = 404, description = "No runs of that workload with that lineage, by that metric where one is asked for", body = ErrorBody),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn get_series(State(state): State<AppState>, AppQuery(q): AppQuery<SeriesQuery>) -> Result<Json<Series>, Error> {
    let asked = super::extract::measure(q.measure.as_deref())?;
    let (view, measures) = super::series::load(&state, &q.workload, &q.toolchain, asked).await?;
    let steps = view.source_steps();
    let measure = view.metric;
    let versions = view
        .versions
        .into_iter()
        .enumerate()
        .map(|(i, v)| SeriesVersion::of(&q.workload, &q.toolchain, v, steps.contains(&i)))
        .collect();
    Ok(Json(Series { workload: q.workload, toolchain: q.toolchain, measure, measures, versions }))
}
