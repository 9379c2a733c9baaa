//! The JSON API under `/api/v1`: run ingest and reads.

use super::auth::Ingestor;
use super::{AppState, Error};
use crate::analysis;
use crate::store::InsertOutcome;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use slopewatch_core::wire::RunSubmission;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/runs", get(list_runs).post(submit_run))
        .route("/api/v1/runs/{id}", get(get_run))
        .route("/api/v1/workloads", get(list_workloads))
        .route("/api/v1/toolchains", get(list_toolchains))
        .route("/api/v1/hosts", get(list_hosts))
        .route("/api/v1/series", get(get_series))
}

/// `POST /api/v1/runs`: stores a run whole, or answers why not.
async fn submit_run(
    State(state): State<AppState>,
    token: Result<Ingestor, Error>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>), Error> {
    let result = match token {
        Ok(_) => store_run(&state, &headers, body).await,
        Err(e) => Err(e),
    };
    match &result {
        Ok((StatusCode::CREATED, _)) => {}
        Ok(_) => state.metrics.record_repeated_run(),
        Err(e) => state.metrics.record_rejection(e.code()),
    }
    result
}

async fn store_run(
    state: &AppState,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>), Error> {
    let is_json = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return Err(Error::UnsupportedMediaType);
    }
    let body = body.map_err(|rejection| match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => Error::PayloadTooLarge(state.config.body_limit),
        _ => Error::BadRequest(rejection.body_text()),
    })?;
    let run = RunSubmission::from_json(&body).map_err(Error::Invalid)?;
    let fits = analysis::fit_run(&run).map_err(Error::Invalid)?;
    let (status, receipt) = match state.store.insert_run(&run, &fits, &state.config).await? {
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
        Json(json!({
            "run_id": receipt.run_id,
            "created": status == StatusCode::CREATED,
            "fits": receipt.fits,
            "url": format!("/runs/{}", receipt.run_id),
        })),
    ))
}

#[derive(Deserialize)]
struct ListRuns {
    limit: Option<i64>,
}

async fn list_runs(
    State(state): State<AppState>,
    query: Result<Query<ListRuns>, QueryRejection>,
) -> Result<Json<Value>, Error> {
    let Query(q) = query.map_err(|e| Error::BadRequest(e.body_text()))?;
    let limit = q.limit.unwrap_or(50);
    if !(1..=1000).contains(&limit) {
        return Err(Error::BadRequest("limit must be between 1 and 1000".into()));
    }
    Ok(Json(json!({ "runs": state.store.recent_runs(limit).await? })))
}

async fn get_run(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>, Error> {
    let run_id = Uuid::parse_str(&id).map_err(|_| Error::BadRequest(format!("{id:?} is not a run id (a UUID)")))?;
    let run = state.store.run(run_id).await?.ok_or_else(|| Error::NotFound(format!("no run {run_id}")))?;
    Ok(Json(serde_json::to_value(run).map_err(anyhow::Error::from)?))
}

async fn list_workloads(State(state): State<AppState>) -> Result<Json<Value>, Error> {
    Ok(Json(json!({ "workloads": state.store.workloads().await? })))
}

async fn list_toolchains(State(state): State<AppState>) -> Result<Json<Value>, Error> {
    Ok(Json(json!({ "toolchains": state.store.toolchains().await? })))
}

async fn list_hosts(State(state): State<AppState>) -> Result<Json<Value>, Error> {
    Ok(Json(json!({ "hosts": state.store.hosts().await? })))
}

#[derive(Deserialize)]
struct SeriesQuery {
    workload: String,
    toolchain: String,
}

/// `GET /api/v1/series?workload=W&toolchain=T`: every version's slope, in version order.
async fn get_series(
    State(state): State<AppState>,
    query: Result<Query<SeriesQuery>, QueryRejection>,
) -> Result<Json<Value>, Error> {
    let Query(q) = query.map_err(|e| Error::BadRequest(e.body_text()))?;
    let versions = state.store.series(&q.workload, &q.toolchain).await?;
    if versions.is_empty() {
        return Err(Error::NotFound(format!("no runs of workload {:?} with toolchain {:?}", q.workload, q.toolchain)));
    }
    Ok(Json(json!({ "workload": q.workload, "toolchain": q.toolchain, "versions": versions })))
}
