//! Regressions and findings: the retrospective at `/regressions/{id}` with its editing forms and
//! Markdown export, and the same as JSON under `/api/v1/regressions/{id}`; the list is in `list`.

mod cost_view;
mod list;

use super::auth::SeesAll;
use super::bisections::{bisect_commands, bisection_view, server_url, BisectCommands, BisectionView, RegressionAnswer};
use super::deliveries::{delivery_view, DeliveryView};
use super::error::ErrorBody;
use super::extract::{AppForm, OnPage, RegressionId};
use super::pages::{self, PageResult};
use super::session::{csrf_refused, CsrfForm, Editor, Reader, Session};
use super::{AppState, Error};
use crate::charts::{before_after_chart, Failed, VersionLine};
use crate::format;
use crate::intake;
use crate::model::{workload_label, Architecture, RegressionDetail, RegressionKind, RegressionStatus};
use crate::views::regression::causes::{self, CauseView, CausedView};
use crate::views::regression::{edits, markdown, postmortem};
use askama::Template;
use axum::extract::State;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Json, Router};
use cost_view::CostView;
use serde::Deserialize;
use time::OffsetDateTime;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/regressions", get(list::list))
        .route("/regressions/{id}", get(detail))
        .route("/regressions/{id}/postmortem.md", get(export))
        .route("/regressions/{id}/status", post(set_status))
        .route("/regressions/{id}/acknowledge", post(acknowledge))
        .route("/regressions/{id}/notes", post(add_note))
        .route("/regressions/{id}/links", post(add_link))
}

/// The regressions as JSON, documented in the OpenAPI document.
pub(super) fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list::list_json))
        .routes(routes!(detail_json))
        .merge(super::bisections::api_router())
}

pub(super) fn num(v: Option<f64>, digits: usize) -> String {
    v.filter(|v| v.is_finite()).map_or_else(|| "–".to_string(), |v| format!("{v:.digits$}"))
}

fn not_found(id: i64) -> Error {
    Error::NotFound(format!("no regression #{id}"))
}

async fn load(state: &AppState, id: i64) -> Result<RegressionDetail, Error> {
    let mut d = state.store.regression(id).await?.ok_or_else(|| not_found(id))?;
    d.attribution = crate::views::control::of(&state.store, id, &state.config).await?;
    let traced = crate::profiles::of(&state.store, &d.regression, &d.workloads).await?;
    let workloads = d.workloads.iter().map(|w| w.workload.as_str());
    let (lineage, shown) = (&d.regression.lineage, crate::views::exposures::REACHES_SHOWN);
    d.artifacts = crate::profiles::reaching(&mut &state.store, lineage, workloads, &traced.shifts, shown).await?;
    d.where_cost_went = traced.shifts;
    d.causes = crate::causes::of(&d, &traced.broken);
    let r = &d.regression;
    d.arch = Architecture::of(&r.lineage, &state.store.versions_measured_on(&r.lineage, &r.versions()).await?);
    Ok(d)
}

pub(super) struct Choice {
    pub value: &'static str,
    pub label: &'static str,
    pub selected: bool,
}

struct NumberRow {
    workload: String,
    /// The metric the workload was found on.
    measure: &'static str,
    series_url: String,
    previous_slope: String,
    slope: String,
    ci: String,
    r2: String,
    ratio: String,
    ratio_size: String,
    fixed: String,
    joined_late: bool,
    /// For a failure: what broke, in one line, and the detail the agent sent.
    failure: String,
    detail: String,
    /// `O(n) → O(n²)`, or empty.
    class_step: String,
    /// The workload's own source differs between the two versions.
    source_changed: bool,
    /// What a broken contract means and costs a caller; empty without a contract.
    contract_break: String,
    /// For a workload there for its cost, the change: "cost 4.20× at 64 KiB, O(n) both".
    cost: String,
}

struct TimelineRow {
    at: String,
    what: String,
    actor: String,
}

struct ChartView {
    workload: String,
    svg: String,
}

struct NoteView {
    at: String,
    author: String,
    html: String,
}

struct LinkView {
    title: String,
    url: String,
    author: String,
    at: String,
}

#[derive(Template)]
#[template(path = "regressions_detail.html")]
struct DetailPage {
    id: i64,
    /// `Regression` or `Finding`.
    kind: &'static str,
    finding: bool,
    lineage: String,
    /// The lineage's architecture, and the hosts that measured it under emulation.
    arch: Architecture,
    version: String,
    previous_version: String,
    fixed_version: String,
    merged_into: Option<i64>,
    status: String,
    status_label: String,
    magnitude: String,
    /// Its workloads under their root causes, worst first, the phrase that sums them up, and
    /// the workloads that trace to none.
    causes: Vec<CauseView>,
    causes_headline: String,
    unattributed: Vec<CausedView>,
    numbers: Vec<NumberRow>,
    /// Per workload with a size of interest: what it costs there, bad version against good.
    costs: Vec<(String, String)>,
    /// Some workload's own source differs between the two versions.
    source_changed: bool,
    /// What the control lineages say moved; none without a control configured.
    attribution: Option<crate::views::control::ControlCheckView>,
    timeline: Vec<TimelineRow>,
    charts: Vec<ChartView>,
    /// Where the cost went, per profiled workload.
    costs_went: Vec<CostView>,
    /// The stored artifacts that reach a function it names.
    artifacts: Vec<crate::model::ArtifactReach>,
    deliveries: Vec<DeliveryView>,
    notes: Vec<NoteView>,
    links: Vec<LinkView>,
    bisections: Vec<BisectionView>,
    commands: BisectCommands,
    statuses: Vec<Choice>,
    editor: Option<Session>,
    login_url: String,
}

/// `GET /regressions/{id}`: the retrospective.
async fn detail(
    State(state): State<AppState>,
    Reader(session): Reader,
    OnPage(RegressionId(id)): OnPage<RegressionId>,
    headers: HeaderMap,
) -> PageResult {
    let d = load(&state, id).await?;
    let d = if session.is_some() { d } else { crate::views::regression::for_anyone(d) };
    let r = &d.regression;
    let commands = bisect_commands(&d, &server_url(&state, &headers), &state.config.alerts.rules);
    let public_url = state.config.public_url.as_deref();
    let numbers: Vec<NumberRow> = d
        .workloads
        .iter()
        .map(|w| NumberRow {
            workload: w.workload.clone(),
            measure: w.metric.label(),
            series_url: crate::links::absolute(public_url, &crate::links::series(&w.workload, &r.lineage, w.metric)),
            previous_slope: num(w.previous_slope, 2),
            slope: num(w.slope, 2),
            ci: match (w.ci_low, w.ci_high) {
                (Some(low), Some(high)) => format!("{low:.2}–{high:.2}"),
                _ => "–".into(),
            },
            r2: num(w.r2, 3),
            ratio: w.time_ratio.map_or_else(|| "–".into(), format::factor),
            ratio_size: w.ratio_size_text().unwrap_or_else(|| "–".into()),
            fixed: match (&w.fixed_version, w.fixed_slope) {
                (Some(v), Some(s)) => format!("{s:.2} at {v}"),
                (Some(v), None) if w.is_failure() => format!("passes at {v}"),
                _ => "–".into(),
            },
            joined_late: w.joined_late,
            failure: match (w.failure_summary(), w.is_failure()) {
                (Some(f), _) => f,
                (None, true) => "failed".into(),
                (None, false) => String::new(),
            },
            detail: w.failure.as_ref().map(|f| f.detail.clone()).unwrap_or_default(),
            class_step: w.class_step().unwrap_or_else(|| "–".into()),
            source_changed: w.source_changed,
            contract_break: w.contract_break.clone().unwrap_or_default(),
            cost: w.cost_change().unwrap_or_default(),
        })
        .collect();
    let (causes, unattributed) = causes::views(&d.causes, &r.lineage, public_url);
    let versions = r.versions();
    let charts = d
        .workloads
        .iter()
        .filter_map(|w| {
            let lines: Vec<VersionLine<'_>> = versions
                .iter()
                .filter_map(|v| {
                    let sizes = d
                        .sizes
                        .iter()
                        .find(|s| s.workload == w.workload && s.metric == w.metric && s.version == *v)
                        .map(|s| s.sizes.as_slice());
                    // A failure is of the regression's version: the ✗ marks it there.
                    let failed = (w.is_failure() && *v == r.version).then(|| Failed {
                        size: w.failure.as_ref().and_then(|f| f.size),
                        what: w.failure_summary().unwrap_or_else(|| "failed".into()),
                    });
                    (sizes.is_some() || failed.is_some()).then(|| VersionLine {
                        label: v,
                        sizes: sizes.unwrap_or_default(),
                        failed,
                    })
                })
                .collect();
            let label = workload_label(&w.workload, w.metric);
            before_after_chart(&label, w.metric, w.size_unit, &lines).map(|svg| ChartView { workload: label, svg })
        })
        .collect();
    let page = DetailPage {
        id: r.id,
        kind: r.kind().title(),
        finding: r.kind() == RegressionKind::Finding,
        lineage: r.lineage.clone(),
        arch: d.arch.clone(),
        version: r.version.clone(),
        previous_version: r.previous_version.clone().unwrap_or_else(|| "none measured".into()),
        fixed_version: r.fixed_version.clone().unwrap_or_default(),
        merged_into: r.merged_into,
        status: r.status.clone(),
        status_label: RegressionStatus::label_of(&r.status).to_string(),
        magnitude: r.magnitude.map_or_else(|| "–".into(), format::factor),
        source_changed: numbers.iter().any(|n| n.source_changed),
        attribution: d.attribution.as_ref().map(crate::views::control::ControlCheckView::new),
        costs: d
            .workloads
            .iter()
            .filter_map(|w| w.at_size_of_interest.clone().map(|c| (workload_label(&w.workload, w.metric), c)))
            .collect(),
        numbers,
        causes_headline: d.causes.headline().unwrap_or_default(),
        causes,
        unattributed,
        timeline: postmortem::timeline(&d)
            .into_iter()
            .map(|m| TimelineRow { at: format::timestamp(m.at), what: m.what, actor: m.actor.unwrap_or_default() })
            .collect(),
        charts,
        costs_went: d
            .where_cost_went
            .iter()
            .map(|w| {
                let unit = d
                    .workloads
                    .iter()
                    .find(|m| m.workload == w.workload)
                    .map_or(slopewatch_core::wire::SizeUnit::Bytes, |m| m.size_unit);
                CostView::new(w, unit, public_url)
            })
            .collect(),
        artifacts: d.artifacts.clone(),
        deliveries: d.deliveries.iter().map(delivery_view).collect(),
        notes: d
            .notes
            .iter()
            .map(|n| NoteView {
                at: format::timestamp(n.at),
                author: n.author.clone(),
                html: markdown::render(&n.body),
            })
            .collect(),
        links: d
            .links
            .iter()
            .map(|l| LinkView {
                title: l.title.clone(),
                url: l.url.clone(),
                author: l.author.clone(),
                at: format::timestamp(l.at),
            })
            .collect(),
        bisections: d.bisections.iter().map(bisection_view).collect(),
        commands,
        statuses: RegressionStatus::ALL
            .into_iter()
            .map(|s| Choice { value: s.as_str(), label: s.label(), selected: s.as_str() == r.status })
            .collect(),
        editor: session,
        login_url: format!("/login?next=%2Fregressions%2F{}", r.id),
    };
    Ok(pages::render(StatusCode::OK, &page))
}

/// `GET /regressions/{id}/postmortem.md`: the postmortem as a Markdown file.
async fn export(State(state): State<AppState>, OnPage(RegressionId(id)): OnPage<RegressionId>) -> PageResult {
    let d = load(&state, id).await?;
    let headers = [
        (CONTENT_TYPE, "text/markdown; charset=utf-8".to_string()),
        (CONTENT_DISPOSITION, format!("attachment; filename=\"regression-{id}.md\"")),
    ];
    Ok((headers, postmortem::export(&d)).into_response())
}

/// After an edit, back to the retrospective; `found` is false when there was no regression to edit.
fn back_to(id: i64, found: bool) -> PageResult {
    if !found {
        return Err(not_found(id).into());
    }
    Ok(Redirect::to(&crate::links::regression(id)).into_response())
}

#[derive(Deserialize)]
struct StatusForm {
    csrf: String,
    status: String,
}

async fn set_status(
    State(state): State<AppState>,
    Editor(session): Editor,
    OnPage(RegressionId(id)): OnPage<RegressionId>,
    OnPage(AppForm(f)): OnPage<AppForm<StatusForm>>,
) -> PageResult {
    if let Some(r) = csrf_refused(&session, &f.csrf) {
        return Ok(r);
    }
    let status = RegressionStatus::parse(&f.status)
        .ok_or_else(|| Error::BadRequest(format!("unknown status {:?}", f.status)))?;
    let now = OffsetDateTime::now_utc();
    back_to(id, intake::set_regression_status(&state.store, id, status, &session.name, now).await?)
}

async fn acknowledge(
    State(state): State<AppState>,
    Editor(session): Editor,
    OnPage(RegressionId(id)): OnPage<RegressionId>,
    OnPage(AppForm(f)): OnPage<AppForm<CsrfForm>>,
) -> PageResult {
    if let Some(r) = csrf_refused(&session, &f.csrf) {
        return Ok(r);
    }
    let now = OffsetDateTime::now_utc();
    let status = RegressionStatus::Acknowledged;
    back_to(id, intake::set_regression_status(&state.store, id, status, &session.name, now).await?)
}

#[derive(Deserialize)]
struct NoteForm {
    csrf: String,
    body: String,
}

async fn add_note(
    State(state): State<AppState>,
    Editor(session): Editor,
    OnPage(RegressionId(id)): OnPage<RegressionId>,
    OnPage(AppForm(f)): OnPage<AppForm<NoteForm>>,
) -> PageResult {
    if let Some(r) = csrf_refused(&session, &f.csrf) {
        return Ok(r);
    }
    let body = edits::note(&f.body).map_err(Error::BadRequest)?;
    back_to(id, state.store.add_regression_note(id, &session.name, body, OffsetDateTime::now_utc()).await?)
}

#[derive(Deserialize)]
struct LinkForm {
    csrf: String,
    title: String,
    url: String,
}

async fn add_link(
    State(state): State<AppState>,
    Editor(session): Editor,
    OnPage(RegressionId(id)): OnPage<RegressionId>,
    OnPage(AppForm(f)): OnPage<AppForm<LinkForm>>,
) -> PageResult {
    if let Some(r) = csrf_refused(&session, &f.csrf) {
        return Ok(r);
    }
    let (title, url) = edits::link(&f.title, &f.url).map_err(Error::BadRequest)?;
    let now = OffsetDateTime::now_utc();
    back_to(id, intake::add_regression_link(&state.store, id, &session.name, title, url, now).await?)
}

/// One regression
///
/// With its workloads, timeline, notes, links, webhook deliveries and their attempts, the
/// per-size medians behind its before/after charts, its bisections and the command to run one.
#[utoipa::path(
    get,
    path = "/api/v1/regressions/{id}",
    tag = "regressions",
    params(("id" = i64, Path, description = "The regression's number")),
    responses(
        (status = 200, description = "The regression", body = RegressionAnswer),
        (status = 404, description = "No such regression", body = ErrorBody),
        (status = 503, description = "The database is unavailable; retry", body = ErrorBody),
    )
)]
async fn detail_json(
    State(state): State<AppState>,
    SeesAll(all): SeesAll,
    RegressionId(id): RegressionId,
    headers: HeaderMap,
) -> Result<Json<RegressionAnswer>, Error> {
    let detail = load(&state, id).await?;
    let detail = if all { detail } else { crate::views::regression::for_anyone(detail) };
    Ok(Json(RegressionAnswer::new(detail, &state, &headers)))
}
