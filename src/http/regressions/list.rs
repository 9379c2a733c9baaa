//! The list of regressions and findings: `/regressions` and `GET /api/v1/regressions`, each
//! narrowed by status and by kind.

use super::super::error::ErrorBody;
use super::super::extract::{AppQuery, OnPage};
use super::super::pages::{self, PageResult};
use super::super::session::Reader;
use super::super::{AppState, Error};
use super::{num, Choice};
use crate::format;
use crate::model::{workload_label, RegressionKind, RegressionRow, RegressionStatus, RegressionWorkload};
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

struct ListRow {
    id: i64,
    /// `regression` or `finding`.
    kind: &'static str,
    status: String,
    status_label: String,
    lineage: String,
    previous_version: String,
    version: String,
    workloads: String,
    max_slope: String,
    magnitude: String,
    opened: String,
    fixed_version: String,
}

#[derive(Template)]
#[template(path = "regressions.html")]
struct ListPage {
    rows: Vec<ListRow>,
    filters: Vec<Choice>,
    all_selected: bool,
    kinds: Vec<Choice>,
    /// The query that keeps the chosen status when a kind is picked, and the other way round.
    status_query: String,
    kind_query: String,
    user: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct ListQuery {
    /// Only regressions with this status.
    #[param(value_type = Option<RegressionStatus>)]
    status: Option<String>,
    /// Only regressions (`regression`: a step from a last good version) or only findings
    /// (`finding`: over at the first version measured).
    #[param(value_type = Option<RegressionKind>)]
    kind: Option<String>,
}

fn parse_kind(q: &ListQuery) -> Result<Option<RegressionKind>, Error> {
    match q.kind.as_deref().filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => RegressionKind::parse(s)
            .map(Some)
            .ok_or_else(|| Error::BadRequest(format!("kind must be regression or finding; not {s:?}"))),
    }
}

fn parse_status(q: &ListQuery) -> Result<Option<RegressionStatus>, Error> {
    match q.status.as_deref().filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => RegressionStatus::parse(s).map(Some).ok_or_else(|| {
            Error::BadRequest(format!("status must be one of open, acknowledged, fixed, false_alarm; not {s:?}"))
        }),
    }
}

/// `GET /regressions`: every regression, newest first, optionally of one status.
pub(super) async fn list(
    State(state): State<AppState>,
    Reader(session): Reader,
    OnPage(AppQuery(query)): OnPage<AppQuery<ListQuery>>,
) -> PageResult {
    let status = parse_status(&query)?;
    let kind = parse_kind(&query)?;
    let rows = state
        .store
        .regressions_of(status, kind)
        .await?
        .into_iter()
        .map(|(r, members)| ListRow {
            kind: r.kind().as_str(),
            status_label: RegressionStatus::label_of(&r.status).to_string(),
            status: r.status,
            id: r.id,
            lineage: r.lineage,
            previous_version: r.previous_version.unwrap_or_else(|| "–".into()),
            version: r.version,
            workloads: members.iter().map(|m| workload_label(&m.workload, m.metric)).collect::<Vec<_>>().join(", "),
            max_slope: num(members.iter().filter_map(|m| m.slope).reduce(f64::max), 2),
            magnitude: r.magnitude.map_or_else(|| "–".into(), format::factor),
            opened: format::timestamp(r.opened_at),
            fixed_version: r.fixed_version.unwrap_or_default(),
        })
        .collect();
    let filters = RegressionStatus::ALL
        .into_iter()
        .map(|s| Choice { value: s.as_str(), label: s.label(), selected: status == Some(s) })
        .collect();
    let kinds = RegressionKind::ALL
        .into_iter()
        .map(|k| Choice {
            value: k.as_str(),
            label: if k == RegressionKind::Finding { "findings" } else { "regressions" },
            selected: kind == Some(k),
        })
        .collect();
    let page = ListPage {
        rows,
        filters,
        all_selected: status.is_none(),
        kinds,
        status_query: status.map(|s| format!("&status={}", s.as_str())).unwrap_or_default(),
        kind_query: kind.map(|k| format!("&kind={}", k.as_str())).unwrap_or_default(),
        user: session.map(|s| s.name),
    };
    Ok(pages::render(StatusCode::OK, &page))
}

/// Every regression, newest first, each with its workloads.
#[derive(Debug, Serialize, ToSchema)]
pub struct RegressionList {
    regressions: Vec<RegressionEntry>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RegressionEntry {
    /// A regression (a step from a last good version) or a finding (over at the first version
    /// its lineage measured).
    kind: RegressionKind,
    regression: RegressionRow,
    workloads: Vec<RegressionWorkload>,
}

/// Lists regressions
///
/// Newest first, at most 500, each with the workloads that crossed the threshold. Findings
/// (over at the first version measured, so with no last good version) are listed with them;
/// `kind` picks one or the other.
#[utoipa::path(
    get,
    path = "/api/v1/regressions",
    tag = "regressions",
    params(ListQuery),
    responses(
        (status = 200, description = "The regressions, newest first", body = RegressionList),
        (status = 400, description = "`status` is not a regression status, or `kind` not a kind", body = ErrorBody),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
pub(super) async fn list_json(
    State(state): State<AppState>,
    AppQuery(query): AppQuery<ListQuery>,
) -> Result<Json<RegressionList>, Error> {
    let (status, kind) = (parse_status(&query)?, parse_kind(&query)?);
    let regressions = state.store.regressions_of(status, kind).await?;
    let regressions = regressions.into_iter().map(|(regression, workloads)| RegressionEntry {
        kind: regression.kind(),
        regression,
        workloads,
    });
    Ok(Json(RegressionList { regressions: regressions.collect() }))
}
