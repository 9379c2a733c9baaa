//! `/series/{workload}/{toolchain}`: one workload in one lineage across versions; its two charts,
//! the per-version table, and the same numbers as CSV and JSON.

use super::{chart, csv_line, csv_number, csv_response, query_values};
use crate::charts;
use crate::format;
use crate::http::pages::{render, PageResult};
use crate::http::{AppState, Error};
use crate::links;
use crate::store::VersionChoice;
use crate::views::{SeriesView, VersionRow, ALERT_THRESHOLD};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Json;
use serde_json::{json, Value};

/// Reads the series, or says which part of it is unknown.
async fn load(state: &AppState, workload: &str, lineage: &str) -> Result<SeriesView, Error> {
    let (found, versions) = tokio::try_join!(state.store.workload(workload), state.store.series(workload, lineage))?;
    let found = found.ok_or_else(|| Error::NotFound(format!("no workload named {workload:?} has reported")))?;
    if versions.is_empty() {
        return Err(Error::NotFound(format!("workload {workload:?} has no runs with toolchain {lineage:?}")));
    }
    Ok(SeriesView { workload: found.name, lineage: lineage.to_string(), size_unit: found.size_unit, versions })
}

/// A link to compare two toolchain versions, with what it shows.
struct CompareLink {
    text: String,
    href: String,
}

#[derive(askama::Template)]
#[template(path = "dashboard/series.html")]
struct SeriesPage {
    series: SeriesView,
    rows: Vec<VersionRow>,
    shared_size: Option<u64>,
    marked: Option<String>,
    /// How the complexity class changed across versions, in words.
    class_change: Option<String>,
    /// Versions the log-log chart draws.
    shown: Vec<String>,
    slope_alt: String,
    loglog_alt: String,
    loglog_src: String,
    compares: Vec<CompareLink>,
}

impl SeriesPage {
    fn latest(&self) -> &VersionRow {
        self.rows.last().expect("a series has a version")
    }
}

pub(super) async fn page(
    State(state): State<AppState>,
    Path((workload, lineage)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> PageResult {
    let asked = query_values(query.as_deref(), "v");
    let (series, choices) = tokio::try_join!(load(&state, &workload, &lineage), async {
        state.store.workload_versions(&workload).await.map_err(Error::from)
    })?;
    let loglog = series.loglog(&asked);
    let shown: Vec<String> = loglog.lines.iter().map(|l| l.label.clone()).collect();
    let page = SeriesPage {
        rows: series.rows(),
        shared_size: series.shared_size(),
        marked: series.first_over_threshold().map(|i| series.versions[i].version.clone()),
        class_change: series.class_change(),
        slope_alt: charts::slope_description(&series),
        loglog_alt: charts::loglog_description(&loglog),
        loglog_src: links::loglog_svg(&series.workload, &series.lineage, if asked.is_empty() { &[] } else { &shown }),
        compares: compare_links(&series, &choices),
        shown,
        series,
    };
    Ok(render(StatusCode::OK, &page))
}

/// Comparisons worth a click: where the slope crossed, the latest step, and the latest version
/// of each other lineage that measured this workload.
fn compare_links(series: &SeriesView, choices: &[VersionChoice]) -> Vec<CompareLink> {
    let (w, l) = (series.workload.as_str(), series.lineage.as_str());
    let version = |i: usize| series.versions[i].version.as_str();
    let n = series.versions.len();
    let mut out = Vec::new();
    if let Some(m) = series.first_over_threshold().filter(|&m| m > 0) {
        out.push(CompareLink {
            text: format!("{} → {} (where it crossed {ALERT_THRESHOLD})", version(m - 1), version(m)),
            href: links::compare(w, l, version(m - 1), l, version(m)),
        });
    }
    if n >= 2 {
        out.push(CompareLink {
            text: format!("{} → {} (latest step)", version(n - 2), version(n - 1)),
            href: links::compare(w, l, version(n - 2), l, version(n - 1)),
        });
    }
    let mut others: Vec<&VersionChoice> = Vec::new();
    for c in choices.iter().filter(|c| c.lineage != l) {
        // Choices come in version order within each lineage: keep each lineage's last.
        match others.last_mut() {
            Some(last) if last.lineage == c.lineage => *last = c,
            _ => others.push(c),
        }
    }
    for other in others {
        out.push(CompareLink {
            text: format!("{} {} vs {l} {}", other.lineage, other.version, version(n - 1)),
            href: links::compare(w, &other.lineage, &other.version, l, version(n - 1)),
        });
    }
    out
}

pub(super) async fn slope_svg(
    State(state): State<AppState>,
    Path((workload, lineage)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, Error> {
    let series = load(&state, &workload, &lineage).await?;
    chart(&headers, "slope", series, charts::slope_chart).await
}

pub(super) async fn loglog_svg(
    State(state): State<AppState>,
    Path((workload, lineage)): Path<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, Error> {
    let series = load(&state, &workload, &lineage).await?;
    let view = series.loglog(&query_values(query.as_deref(), "v"));
    chart(&headers, "loglog", view, charts::loglog_chart).await
}

pub(super) async fn csv(
    State(state): State<AppState>,
    Path((workload, lineage)): Path<(String, String)>,
) -> Result<Response, Error> {
    let series = load(&state, &workload, &lineage).await?;
    let shared = series.shared_size();
    let mut body = csv_line(
        &[
            "workload",
            "lineage",
            "version",
            "slope",
            "ci_low",
            "ci_high",
            "r2",
            "band",
            "shared_size",
            "median_ns_at_shared_size",
            "ratio_to_previous",
            "runs",
            "hosts",
        ]
        .map(String::from),
    );
    for row in series.rows() {
        body.push_str(&csv_line(&[
            series.workload.clone(),
            series.lineage.clone(),
            row.version,
            row.slope.to_string(),
            row.ci_low.to_string(),
            row.ci_high.to_string(),
            row.r2.to_string(),
            row.band.name().to_string(),
            shared.map(|s| s.to_string()).unwrap_or_default(),
            csv_number(row.median_ns_at_shared_size),
            csv_number(row.ratio_to_previous),
            row.runs.to_string(),
            row.hosts.to_string(),
        ]));
    }
    Ok(csv_response(&format!("{}-{}", series.workload, series.lineage), body))
}

pub(super) async fn json(
    State(state): State<AppState>,
    Path((workload, lineage)): Path<(String, String)>,
) -> Result<Json<Value>, Error> {
    let series = load(&state, &workload, &lineage).await?;
    let versions: Vec<Value> = series
        .rows()
        .into_iter()
        .zip(&series.versions)
        .map(|(row, v)| {
            let mut value = serde_json::to_value(row).expect("rows serialize");
            value["sizes"] = serde_json::to_value(&v.sizes).expect("sizes serialize");
            value
        })
        .collect();
    Ok(Json(json!({
        "workload": series.workload,
        "lineage": series.lineage,
        "size_unit": series.size_unit,
        "alert_threshold": ALERT_THRESHOLD,
        "shared_size": series.shared_size(),
        "first_over_threshold": series.first_over_threshold().map(|i| &series.versions[i].version),
        "versions": versions,
    })))
}
