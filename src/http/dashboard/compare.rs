//! `/compare?workload=W&a=LINEAGE@VERSION&b=LINEAGE@VERSION`: two toolchain versions of one
//! workload, of one lineage or of two, on one log-log chart with the time ratio at each size.

use super::{chart, csv_line, csv_response};
use crate::charts;
use crate::format;
use crate::http::extract::{AppQuery, OnPage};
use crate::http::pages::{render, PageResult};
use crate::http::{AppState, Error};
use crate::links;
use crate::store::{VersionChoice, VersionSummary, WorkloadRow};
use crate::views::{CompareRow, CompareView};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use slopewatch_core::wire::MAX_NAME_CHARS;

#[derive(Deserialize, Default)]
pub(super) struct CompareQuery {
    #[serde(default)]
    workload: String,
    #[serde(default)]
    a: String,
    #[serde(default)]
    b: String,
}

/// The longest `a` or `b`: a lineage and a version of the longest names a run may carry, and the
/// `@` between them.
const MAX_SIDE_CHARS: usize = 2 * MAX_NAME_CHARS + 1;

impl CompareQuery {
    /// Refuses sides longer than any stored toolchain version could be, before any query.
    fn check(&self) -> Result<(), Error> {
        for (name, value) in [("a", &self.a), ("b", &self.b)] {
            let chars = value.chars().count();
            if chars > MAX_SIDE_CHARS {
                return Err(Error::BadRequest(format!(
                    "{name} is {chars} characters; a toolchain version as LINEAGE@VERSION has at most {MAX_SIDE_CHARS}"
                )));
            }
        }
        Ok(())
    }
}

/// One side of a comparison: the toolchain version `value` names, read the way the store has it
/// (`lineage@version` splits at the last `@` unless only another split names a stored version).
/// The splits are matched against the workload's versions, `known`, so a value with many `@`
/// costs one query like any other.
async fn side(
    state: &AppState,
    workload: &str,
    known: &[VersionChoice],
    name: &str,
    value: &str,
) -> Result<VersionSummary, Error> {
    let readings = links::toolchain_version_readings(value);
    let Some(&(lineage, version)) = readings.first() else {
        return Err(Error::BadRequest(format!(
            "{name} must be a toolchain version as LINEAGE@VERSION, e.g. musl-gcc@1.2.5"
        )));
    };
    let stored = readings.iter().find(|(l, v)| known.iter().any(|c| c.lineage == *l && c.version == *v));
    let found = match stored {
        Some((l, v)) => state.store.version_summary(workload, l, v).await?,
        None => None,
    };
    found.ok_or_else(|| Error::NotFound(format!("workload {workload:?} has no runs with {lineage} {version}")))
}

/// Reads both versions, or says which is missing; `known` are the workload's versions.
async fn compare(state: &AppState, q: &CompareQuery, known: &[VersionChoice]) -> Result<CompareView, Error> {
    q.check()?;
    let (workload, a, b) = tokio::join!(
        state.store.workload(&q.workload),
        side(state, &q.workload, known, "a", &q.a),
        side(state, &q.workload, known, "b", &q.b),
    );
    // An unknown workload is the error to report, whatever the sides say.
    let workload =
        workload?.ok_or_else(|| Error::NotFound(format!("no workload named {:?} has reported", q.workload)))?;
    Ok(CompareView { workload: workload.name, size_unit: workload.size_unit, a: a?, b: b? })
}

/// Reads both versions of the workload the query names.
async fn load(state: &AppState, q: &CompareQuery) -> Result<CompareView, Error> {
    q.check()?;
    compare(state, q, &state.store.workload_versions(&q.workload).await?).await
}

#[derive(askama::Template)]
#[template(path = "dashboard/compare.html")]
struct ComparePage {
    workloads: Vec<WorkloadRow>,
    choices: Vec<VersionChoice>,
    query: CompareQuery,
    view: Option<CompareView>,
    rows: Vec<CompareRow>,
    chart_alt: String,
}

impl ComparePage {
    fn choice_value(&self, c: &VersionChoice) -> String {
        links::toolchain_version(&c.lineage, &c.version)
    }

    /// The comparison at the largest size both measured, in one line.
    fn headline(&self) -> Option<String> {
        let (view, row) = (self.view.as_ref()?, self.rows.last()?);
        Some(format!(
            "At {}, {} is {} than {}",
            format::size(row.size, view.size_unit),
            view.label_b(),
            format::ratio(row.ratio),
            view.label_a()
        ))
    }
}

pub(super) async fn page(
    State(state): State<AppState>,
    OnPage(AppQuery(q)): OnPage<AppQuery<CompareQuery>>,
) -> PageResult {
    q.check()?;
    let (workloads, choices) = tokio::try_join!(state.store.workloads(), state.store.workload_versions(&q.workload))?;
    // With only a workload chosen, the form offers its versions; with both sides, the comparison.
    let view = if q.a.is_empty() || q.b.is_empty() { None } else { Some(compare(&state, &q, &choices).await?) };
    let rows = view.as_ref().map(CompareView::rows).unwrap_or_default();
    let chart_alt = view.as_ref().map(|v| charts::loglog_description(&v.loglog())).unwrap_or_default();
    Ok(render(StatusCode::OK, &ComparePage { workloads, choices, query: q, view, rows, chart_alt }))
}

pub(super) async fn svg(
    State(state): State<AppState>,
    AppQuery(q): AppQuery<CompareQuery>,
    headers: HeaderMap,
) -> Result<Response, Error> {
    let view = load(&state, &q).await?;
    chart(&headers, "compare", view.loglog(), charts::loglog_chart).await
}

pub(super) async fn csv(State(state): State<AppState>, AppQuery(q): AppQuery<CompareQuery>) -> Result<Response, Error> {
    let view = load(&state, &q).await?;
    let mut body = csv_line(&["workload", "a", "b", "size", "a_median_ns", "b_median_ns", "ratio"].map(String::from));
    for row in view.rows() {
        body.push_str(&csv_line(&[
            view.workload.clone(),
            view.label_a(),
            view.label_b(),
            row.size.to_string(),
            row.a_median_ns.to_string(),
            row.b_median_ns.to_string(),
            row.ratio.to_string(),
        ]));
    }
    Ok(csv_response(&format!("compare-{}", view.workload), body))
}

pub(super) async fn json(
    State(state): State<AppState>,
    AppQuery(q): AppQuery<CompareQuery>,
) -> Result<Json<Value>, Error> {
    let view = load(&state, &q).await?;
    let side = |v: &crate::store::VersionSummary| {
        json!({"lineage": v.lineage, "version": v.version, "slope": v.slope, "ci_low": v.ci_low, "ci_high": v.ci_high,
               "r2": v.r2, "runs": v.runs})
    };
    Ok(Json(json!({
        "workload": view.workload,
        "size_unit": view.size_unit,
        "a": side(&view.a),
        "b": side(&view.b),
        "slope_delta": view.slope_delta(),
        "sizes": view.rows(),
    })))
}
