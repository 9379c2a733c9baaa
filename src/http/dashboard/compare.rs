//! `/compare?workload=W&a=LINEAGE@VERSION&b=LINEAGE@VERSION`: two toolchain versions of one
//! workload's series, of one lineage or of two, on one log-log chart with the ratio at each size.
//! `&measure=` picks the metric; by default wall time where the workload has it. Without a
//! workload, the two versions across every workload, as a version's page shows them.

use super::version::{groups, GroupView};
use super::{chart, csv_line, csv_response};
use crate::charts;
use crate::format;
use crate::http::extract::{AppQuery, OnPage};
use crate::http::pages::{render, PageResult};
use crate::http::{AppState, Error};
use crate::links;
use crate::model::Architecture;
use crate::store::{VersionChoice, VersionSummary};
use crate::views::measure::{self, MeasureLink};
use crate::views::{Changes, CompareRow, CompareView};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use slopewatch_core::wire::{Metric, MAX_NAME_CHARS};

#[derive(Deserialize, Default)]
pub(super) struct CompareQuery {
    #[serde(default)]
    workload: String,
    #[serde(default)]
    a: String,
    #[serde(default)]
    b: String,
    /// The metric to compare by (`Metric::as_str`).
    measure: Option<String>,
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
    metric: Metric,
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
        Some((l, v)) => state.store.version_summary(workload, metric, l, v).await?,
        None => None,
    };
    found.ok_or_else(|| Error::NotFound(format!("workload {workload:?} has no runs with {lineage} {version}")))
}

/// The metric the query compares by, and the metrics the workload has a series of: the one asked
/// for, or by default wall time where the workload has it. `None` for a workload that has
/// reported no series.
async fn metric(state: &AppState, q: &CompareQuery) -> Result<(Option<Metric>, Vec<Metric>), Error> {
    let asked = crate::http::extract::measure(q.measure.as_deref())?;
    let available = state.store.series_metrics(&q.workload, None).await?;
    match (measure::pick(asked, &available), asked) {
        (None, Some(asked)) if !available.is_empty() => Err(Error::NotFound(format!(
            "workload {:?} has no series of {}; it was measured by {}",
            q.workload,
            asked.label(),
            available.iter().map(|m| m.label()).collect::<Vec<_>>().join(", ")
        ))),
        (picked, _) => Ok((picked, available)),
    }
}

/// Reads both versions of the workload's series of `metric`, or says which is missing; `known`
/// are the series' versions.
async fn compare(
    state: &AppState,
    q: &CompareQuery,
    metric: Option<Metric>,
    known: &[VersionChoice],
) -> Result<CompareView, Error> {
    q.check()?;
    // An unknown workload is the error to report, whatever the sides say.
    let unknown = || Error::NotFound(format!("no workload named {:?} has reported", q.workload));
    let metric = metric.ok_or_else(unknown)?;
    let (workload, a, b) = tokio::join!(
        state.store.workload(&q.workload, metric),
        side(state, &q.workload, metric, known, "a", &q.a),
        side(state, &q.workload, metric, known, "b", &q.b),
    );
    let workload = workload?.ok_or_else(unknown)?;
    Ok(CompareView { workload: workload.name, metric, size_unit: workload.size_unit, a: a?, b: b? })
}

/// Reads both versions of the workload the query names: the one workload's comparison that the chart and the exports draw from. They need a workload:
/// every workload at once is the version's JSON, which the refusal names.
async fn load(state: &AppState, q: &CompareQuery) -> Result<CompareView, Error> {
    q.check()?;
    if q.workload.is_empty() {
        return Err(Error::BadRequest(
            "workload is required: the chart and the exports compare one workload's sizes; every workload at \
             once is GET /api/v1/toolchains/{lineage}/{version}?against=VERSION"
                .into(),
        ));
    }
    let (metric, _) = metric(state, q).await?;
    let known = match metric {
        Some(m) => state.store.workload_versions(&q.workload, m).await?,
        None => Vec::new(),
    };
    compare(state, q, metric, &known).await
}

#[derive(askama::Template)]
#[template(path = "dashboard/compare.html")]
struct ComparePage {
    /// Every workload that has reported, by name, each once.
    workloads: Vec<String>,
    choices: Vec<VersionChoice>,
    query: CompareQuery,
    /// The metric the versions are compared by, once a workload is chosen.
    metric: Option<Metric>,
    /// The metrics the chosen workload has a series of, for the form to pick from.
    available: Vec<Metric>,
    /// Links to compare the same versions by the workload's other metrics.
    measures: Vec<MeasureLink>,
    view: Option<CompareView>,
    rows: Vec<CompareRow>,
    chart_alt: String,
    /// Without a workload: the two versions across every workload, by group, and in one line.
    groups: Vec<GroupView>,
    all_headline: Option<String>,
    before_label: String,
    after_label: String,
    /// B's version page: against A where both are of one lineage.
    version_url: Option<String>,
    same_lineage: bool,
    /// Each lineage compared and its architecture, once where both sides are of one lineage.
    arches: Vec<(String, Architecture)>,
}

impl ComparePage {
    fn choice_value(&self, c: &VersionChoice) -> String {
        links::toolchain_version(&c.lineage, &c.version)
    }

    /// The comparison at the largest size both measured, in one line; where the versions share
    /// no size, at the largest size both fits cover, marked as predicted.
    fn headline(&self) -> Option<String> {
        let view = self.view.as_ref()?;
        let r = view.headline_ratio()?;
        let at = format::size(r.size, view.size_unit);
        // A ratio whose interval holds 1 is no headline: the page says so, and gives it below.
        if r.within_noise {
            return Some(format!(
                "At {at}, {} and {} differ by no more than the noise",
                view.label_b(),
                view.label_a()
            ));
        }
        let ratio = format::ratio_in(view.metric, r.ratio);
        let mut text = if view.metric.is_count() {
            format!("At {at}, {} counts {ratio} instructions than {}", view.label_b(), view.label_a())
        } else {
            format!("At {at}, {} is {ratio} than {}", view.label_b(), view.label_a())
        };
        if r.predicted {
            text.push_str(" (predicted from both fits: the versions share no size measured)");
        }
        if let Some(interval) = format::ratio_interval_in(view.metric, r.low, r.high) {
            text.push_str(&format!(", 95% interval {interval}"));
        }
        Some(text)
    }

    /// The ratio the headline leaves out because its interval holds 1, in words: `B over A: 1.50×
    /// slower at 2 MiB, within the noise (95%: …)`.
    fn noisy_ratio(&self) -> Option<String> {
        let view = self.view.as_ref()?;
        let r = view.headline_ratio().filter(|r| r.within_noise)?;
        Some(format!("B over A: {}", r.text(view.metric, view.size_unit)))
    }

    /// Whether the two sides' lineages are built for different architectures.
    fn architectures_differ(&self) -> bool {
        self.arches.windows(2).any(|w| w[0].1.arch != w[1].1.arch)
    }

    /// Whether the comparison is by `m`.
    fn is_shown(&self, m: &Metric) -> bool {
        self.metric == Some(*m)
    }

    /// A median in the comparison's metric.
    fn value(&self, v: f64) -> String {
        self.metric.map_or_else(String::new, |m| format::value(m, v))
    }

    fn ratio(&self, r: f64) -> String {
        self.metric.map_or_else(String::new, |m| format::ratio_in(m, r))
    }

    /// The comparison's chart or export.
    fn file(&self, view: &CompareView, path: &str) -> String {
        links::compare_at(path, view.link())
    }
}

pub(super) async fn page(
    State(state): State<AppState>,
    OnPage(AppQuery(q)): OnPage<AppQuery<CompareQuery>>,
) -> PageResult {
    q.check()?;
    let (rows, (metric, available)) =
        tokio::try_join!(async { state.store.workloads().await.map_err(Error::from) }, metric(&state, &q))?;
    let mut workloads: Vec<String> = rows.into_iter().map(|w| w.name).collect();
    workloads.dedup();
    // Without a workload, every toolchain version is offered; with one, the versions it has.
    let choices = match metric {
        _ if q.workload.is_empty() => state.store.toolchain_versions().await?,
        Some(m) => state.store.workload_versions(&q.workload, m).await?,
        None => Vec::new(),
    };
    let chosen = !q.a.is_empty() && !q.b.is_empty();
    let (all, view) = match (chosen, q.workload.is_empty()) {
        (false, _) => (None, None),
        (true, true) => (Some(crate::http::versions::load_pair(&state, &q.a, &q.b).await?), None),
        (true, false) => (None, Some(compare(&state, &q, metric, &choices).await?)),
    };
    let measures = match &view {
        Some(v) => {
            let pair = compared_by(&state, v, &available).await?;
            measure::series_links(&pair, v.metric, |m| links::compare(links::Comparison { metric: m, ..v.link() }))
        }
        None => Vec::new(),
    };
    let rows = view.as_ref().map(CompareView::rows).unwrap_or_default();
    let chart_alt = view.as_ref().map(|v| charts::loglog_description(&v.loglog())).unwrap_or_default();
    let (groups, all_headline, before_label, after_label) = match &all {
        Some(changes) => (
            groups(changes),
            Some(changes.headline()),
            changes.before.as_ref().map(|b| b.label()).unwrap_or_default(),
            changes.after.label(),
        ),
        None => (Vec::new(), None, String::new(), String::new()),
    };
    let same_lineage = all.as_ref().is_some_and(|c| c.before.as_ref().is_some_and(|b| b.lineage == c.after.lineage));
    let version_url = all.as_ref().map(|c| match c.before.as_ref().filter(|_| same_lineage) {
        Some(b) => links::version_against(&c.after.lineage, &c.after.version, &b.version),
        None => links::version_page(&c.after.lineage, &c.after.version),
    });
    let sides = match (&view, &all) {
        (Some(v), _) => Some([(v.a.lineage.as_str(), v.a.version.as_str()), (&v.b.lineage, &v.b.version)]),
        (None, Some(Changes { before: Some(a), after: b, .. })) => {
            Some([(a.lineage.as_str(), a.version.as_str()), (&b.lineage, &b.version)])
        }
        _ => None,
    };
    let arches = match sides {
        Some(sides) => architectures(&state, sides).await?,
        None => Vec::new(),
    };
    let page = ComparePage {
        arches,
        workloads,
        choices,
        query: q,
        metric,
        available,
        measures,
        view,
        rows,
        chart_alt,
        groups,
        all_headline,
        before_label,
        after_label,
        version_url,
        same_lineage,
    };
    Ok(render(StatusCode::OK, &page))
}

/// The architecture of each side's lineage (`LINEAGE`, `VERSION`), with the hosts that measured
/// that version under emulation; one entry where both sides are of one lineage.
async fn architectures(state: &AppState, [a, b]: [(&str, &str); 2]) -> Result<Vec<(String, Architecture)>, Error> {
    let sides: Vec<(&str, Vec<&str>)> =
        if a.0 == b.0 { vec![(a.0, vec![a.1, b.1])] } else { vec![(a.0, vec![a.1]), (b.0, vec![b.1])] };
    let mut out = Vec::with_capacity(sides.len());
    for (lineage, versions) in sides {
        let hosts = state.store.versions_measured_on(lineage, &versions).await?;
        out.push((lineage.to_string(), Architecture::of(lineage, &hosts)));
    }
    Ok(out)
}

/// Of `available`, the metrics whose series have both of the comparison's versions: those the
/// page may switch to.
async fn compared_by(state: &AppState, view: &CompareView, available: &[Metric]) -> Result<Vec<Metric>, Error> {
    let mut both = Vec::with_capacity(available.len());
    for &m in available {
        let versions = state.store.workload_versions(&view.workload, m).await?;
        let has = |s: &VersionSummary| versions.iter().any(|c| c.lineage == s.lineage && c.version == s.version);
        if m == view.metric || (has(&view.a) && has(&view.b)) {
            both.push(m);
        }
    }
    Ok(both)
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
    let mut body =
        csv_line(&["workload", "a", "b", "size", "a_median_ns", "b_median_ns", "ratio", "measure"].map(String::from));
    for row in view.rows() {
        body.push_str(&csv_line(&[
            view.workload.clone(),
            view.label_a(),
            view.label_b(),
            row.size.to_string(),
            row.a_median_ns.to_string(),
            row.b_median_ns.to_string(),
            row.ratio.to_string(),
            view.metric.as_str().to_string(),
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
        "measure": view.metric,
        "size_unit": view.size_unit,
        "a": side(&view.a),
        "b": side(&view.b),
        "slope_delta": view.slope_delta(),
        "ratio": view.headline_ratio(),
        "sizes": view.rows(),
    })))
}
