//! `/series/{workload}/{toolchain}`: one workload's series of one metric in one lineage across
//! versions (`?measure=` picks the metric; wall time where the workload has it, by default); its
//! two charts, the per-version table, and the same numbers as CSV and JSON.

use super::{asked_measure, chart, csv_line, csv_number, csv_response, query_values};
use crate::charts;
use crate::format;
use crate::http::pages::{render, PageResult};
use crate::http::session::Reader;
use crate::http::{AppState, Error};
use crate::links;
use crate::model::{Architecture, RegressionRow, RegressionStatus};
use crate::store::VersionChoice;
use crate::views::measure::{self, MeasureLink};
use crate::views::{self, Band, SeriesView, SizeRatio, VersionRow};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Json;
use serde_json::{json, Value};
use slopewatch_core::wire::Metric;

/// The series the page's query asks for, with the metrics the workload has a series of in the
/// lineage.
async fn load(
    state: &AppState,
    workload: &str,
    lineage: &str,
    query: Option<&str>,
) -> Result<(SeriesView, Vec<Metric>), Error> {
    crate::http::series::load(state, workload, lineage, asked_measure(query)?).await
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
    /// Where the workload's own source changed, in words.
    source_changes: Vec<String>,
    regime_changes: Vec<String>,
    unchanged_builds: Vec<String>,
    /// How the top functions' shares of the instructions moved across the versions profiled.
    shares: Option<crate::profiles::SharesAcross>,
    /// Versions the log-log chart draws.
    shown: Vec<String>,
    slope_alt: String,
    loglog_alt: String,
    loglog_src: String,
    compares: Vec<CompareLink>,
    /// The regressions and findings that hold this workload, one line each.
    regressions: Vec<RegressionLine>,
    /// What the latest version costs at the workload's size of interest, against the version
    /// before it.
    cost: Option<String>,
    /// Links to the workload's series of the other metrics it was measured by in this lineage.
    measures: Vec<MeasureLink>,
    /// The architecture of the series, and the hosts that measured it under emulation.
    arch: Architecture,
}

/// A regression or finding of the series, as one line links it.
struct RegressionLine {
    href: String,
    /// e.g. "Finding #3" or "Regression #2".
    title: String,
    status: String,
    status_label: String,
    /// e.g. "0.15.2 → 0.16.0, fixed in 0.17.0" or "over at 0.16.0, the first version measured".
    what: String,
}

impl RegressionLine {
    fn of(r: &RegressionRow) -> RegressionLine {
        let mut what = match &r.previous_version {
            Some(good) => format!("{good} → {}", r.version),
            None => format!("over at {}, the first version measured", r.version),
        };
        if let Some(fixed) = &r.fixed_version {
            what.push_str(&format!(", back under in {fixed}"));
        }
        RegressionLine {
            href: links::regression(r.id),
            title: format!("{} #{}", r.kind().title(), r.id),
            status_label: RegressionStatus::label_of(&r.status).to_string(),
            status: r.status.clone(),
            what,
        }
    }
}

impl SeriesPage {
    /// A file of this series: a chart or an export.
    fn file(&self, file: &str) -> String {
        links::series_file(&self.series.workload, &self.series.lineage, self.series.metric, file)
    }

    /// The page of this series (the form that picks versions sends its query there).
    fn href(&self) -> String {
        links::series(&self.series.workload, &self.series.lineage, self.series.metric)
    }

    /// A median (or a prediction's value) in the series' metric.
    fn value(&self, v: f64) -> String {
        format::value(self.series.metric, v)
    }

    /// The series' ratio of one version to the one before, in its metric's words.
    fn ratio(&self, r: f64) -> String {
        format::ratio_in(self.series.metric, r)
    }

    /// The ratio with its interval, in words: `1.06× slower at 2 MiB (95%: 1.02×–1.10× slower)`.
    fn ratio_said(&self, r: &SizeRatio) -> String {
        r.text(self.series.metric, self.series.size_unit)
    }

    fn latest(&self) -> &VersionRow {
        self.rows.last().expect("a series has a version")
    }

    /// The rows with failures, latest version first, for the list of failures.
    fn failed_rows(&self) -> Vec<&VersionRow> {
        self.rows.iter().rev().filter(|r| r.failures.is_some()).collect()
    }
}

pub(super) async fn page(
    State(state): State<AppState>,
    Path((workload, lineage)): Path<(String, String)>,
    RawQuery(query): RawQuery,
    Reader(session): Reader,
) -> PageResult {
    let asked = query_values(query.as_deref(), "v");
    let (series, available) = load(&state, &workload, &lineage, query.as_deref()).await?;
    let metric = series.metric;
    let (choices, regressions, hosts) = tokio::try_join!(
        state.store.workload_versions(&workload, metric),
        state.store.series_regressions(&workload, metric, &lineage),
        state.store.series_measured_on(&workload, metric, &lineage),
    )?;
    let measures = measure::series_links(&available, metric, |m| links::series(&workload, &lineage, m));
    let versions: Vec<&str> = series.versions.iter().map(|v| v.version.as_str()).collect();
    let profiles = state.store.profiles_at(&lineage, &versions, &[workload.as_str()]).await?;
    let shares = crate::profiles::shares_across(&versions, &profiles);
    let loglog = series.loglog(&asked);
    let shown: Vec<String> = loglog.lines.iter().map(|l| l.label.clone()).collect();
    let mut rows = series.rows();
    for f in rows.iter_mut().filter_map(|r| r.failures.as_mut()) {
        f.detail = crate::views::detail_for(&f.detail, session.is_some());
    }
    let page = SeriesPage {
        rows,
        shared_size: series.shared_size(),
        marked: series.first_over_threshold().map(|i| series.versions[i].version.clone()),
        class_change: series.class_change(),
        source_changes: series.source_changes(),
        regime_changes: series.regime_changes(),
        unchanged_builds: series.unchanged_builds(),
        shares,
        slope_alt: charts::slope_description(&series),
        loglog_alt: charts::loglog_description(&loglog),
        loglog_src: links::loglog_svg(
            &series.workload,
            &series.lineage,
            metric,
            if asked.is_empty() { &[] } else { &shown },
        ),
        compares: compare_links(&series, &choices),
        regressions: regressions.iter().map(RegressionLine::of).collect(),
        cost: series.cost_at_interest(),
        measures,
        arch: Architecture::of(&series.lineage, &hosts),
        shown,
        series,
    };
    Ok(render(StatusCode::OK, &page))
}

/// Comparisons worth a click: where the slope crossed, the latest step, and the latest version
/// of each other lineage that measured this workload.
fn compare_links(series: &SeriesView, choices: &[VersionChoice]) -> Vec<CompareLink> {
    let (w, l, metric) = (series.workload.as_str(), series.lineage.as_str(), series.metric);
    let compare = |a: (&str, &str), b: (&str, &str)| links::compare(links::Comparison { workload: w, metric, a, b });
    // Only versions some run measured compare: one every run failed has no times.
    let measured: Vec<usize> = series.measured().map(|(i, _)| i).collect();
    let version = |j: usize| series.versions[measured[j]].version.as_str();
    let n = measured.len();
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    let crossed = series.first_over_threshold().and_then(|m| measured.iter().position(|&i| i == m));
    if let Some(m) = crossed.filter(|&m| m > 0) {
        out.push(CompareLink {
            text: format!("{} → {} (where it crossed {})", version(m - 1), version(m), series.alerting.threshold),
            href: compare((l, version(m - 1)), (l, version(m))),
        });
    }
    if n >= 2 {
        out.push(CompareLink {
            text: format!("{} → {} (latest step)", version(n - 2), version(n - 1)),
            href: compare((l, version(n - 2)), (l, version(n - 1))),
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
            href: compare((&other.lineage, &other.version), (l, version(n - 1))),
        });
    }
    out
}

pub(super) async fn slope_svg(
    State(state): State<AppState>,
    Path((workload, lineage)): Path<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, Error> {
    let (series, _) = load(&state, &workload, &lineage, query.as_deref()).await?;
    chart(&headers, "slope", series, charts::slope_chart).await
}

pub(super) async fn loglog_svg(
    State(state): State<AppState>,
    Path((workload, lineage)): Path<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, Error> {
    let (series, _) = load(&state, &workload, &lineage, query.as_deref()).await?;
    let view = series.loglog(&query_values(query.as_deref(), "v"));
    chart(&headers, "loglog", view, charts::loglog_chart).await
}

pub(super) async fn csv(
    State(state): State<AppState>,
    Path((workload, lineage)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let (series, _) = load(&state, &workload, &lineage, query.as_deref()).await?;
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
            "failed_runs",
            "failed_hosts",
            "failure_kind",
            "failure_size",
            "failure",
            "failure_detail",
            "measure",
        ]
        .map(String::from),
    );
    for row in series.rows() {
        let f = row.failures.as_ref();
        body.push_str(&csv_line(&[
            series.workload.clone(),
            series.lineage.clone(),
            row.version.clone(),
            csv_number(row.slope),
            csv_number(row.ci_low),
            csv_number(row.ci_high),
            csv_number(row.r2),
            row.band.map_or(if f.is_some() { "failed" } else { "" }, Band::name).to_string(),
            shared.map(|s| s.to_string()).unwrap_or_default(),
            csv_number(row.median_ns_at_shared_size),
            csv_number(row.ratio_to_previous),
            row.runs.to_string(),
            row.hosts.to_string(),
            f.map_or(0, |f| f.failed_runs).to_string(),
            f.map_or(0, |f| f.failed_hosts).to_string(),
            f.map(|f| f.kind.as_str().to_string()).unwrap_or_default(),
            f.and_then(|f| f.size).map(|s| s.to_string()).unwrap_or_default(),
            f.map(|f| f.summary.clone()).unwrap_or_default(),
            f.map(|f| f.detail.clone()).unwrap_or_default(),
            series.metric.as_str().to_string(),
        ]));
    }
    let name = match series.metric {
        Metric::Wall => format!("{}-{}", series.workload, series.lineage),
        metric => format!("{}-{}-{metric}", series.workload, series.lineage),
    };
    Ok(csv_response(&name, body))
}

pub(super) async fn json(
    State(state): State<AppState>,
    Path((workload, lineage)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, Error> {
    let (series, _) = load(&state, &workload, &lineage, query.as_deref()).await?;
    let hosts = state.store.series_measured_on(&series.workload, series.metric, &series.lineage).await?;
    let arch = Architecture::of(&series.lineage, &hosts);
    let versions: Vec<Value> = series
        .rows()
        .into_iter()
        .zip(&series.versions)
        .map(|(row, v)| {
            let mut value = serde_json::to_value(row).expect("rows serialize");
            let sizes = v.summary.as_ref().map(|s| s.sizes.as_slice()).unwrap_or_default();
            value["sizes"] = serde_json::to_value(sizes).expect("sizes serialize");
            value
        })
        .collect();
    Ok(Json(json!({
        "workload": series.workload,
        "measure": series.metric,
        "lineage": series.lineage,
        "arch": arch.arch,
        "emulated_on": arch.emulated_on,
        "size_unit": series.size_unit,
        "alert_threshold": series.alerting.threshold,
        "shared_size": series.shared_size(),
        "first_over_threshold": series.first_over_threshold().map(|i| &series.versions[i].version),
        "versions": versions,
    })))
}
