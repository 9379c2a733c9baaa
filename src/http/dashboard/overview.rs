//! `/`: the slope of every workload at each lineage's latest version, open regressions, and the
//! latest runs. Each cell says the metric that decided it; `?measure=` shows one metric only.

use super::asked_measure;
use crate::format;
use crate::http::pages::{render, PageResult};
use crate::http::AppState;
use crate::links;
use crate::model::RegressionStatus;
use crate::store::RunListRow;
use crate::views::measure::{self, MeasureLink};
use crate::views::{open_regressions, Band, OpenRegression, Overview, OverviewCell, ALERT_THRESHOLD, WATCH_FROM};
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use slopewatch_core::wire::Metric;

const LATEST_RUNS: i64 = 12;

/// How many of each lineage's latest versions the overview reads: enough for each cell's latest
/// version and the change before it, and bounded, so the page costs the same however long the
/// history grows. A workload measured in none of them has left the overview; its series keeps it.
const OVERVIEW_VERSIONS: usize = 8;

#[derive(askama::Template)]
#[template(path = "dashboard/overview.html")]
struct OverviewPage {
    overview: Overview,
    regressions: Vec<OpenRegression>,
    /// Open findings: over at the first version their lineage measured.
    findings: Vec<OpenRegression>,
    runs: Vec<RunListRow>,
    /// The metric asked for; `None` shows each cell's default.
    asked: Option<Metric>,
    /// Links to show the matrix by one metric, or each cell by its default.
    measures: Vec<MeasureLink>,
}

impl OverviewPage {
    /// Whether the cells say their metric: when series of more than one were measured.
    fn metric_shown(&self) -> bool {
        self.overview.metrics.len() > 1
    }

    /// What a cell's tooltip adds of the workload's other metrics in its lineage.
    fn also(&self, cell: &OverviewCell) -> String {
        if cell.others.is_empty() {
            return String::new();
        }
        let others: Vec<&str> = cell.others.iter().map(|m| m.label()).collect();
        format!("; also measured by {}", others.join(", "))
    }

    /// The comparison of an open regression's last good and first bad versions.
    fn compare(&self, r: &OpenRegression, good: &str) -> String {
        let (lineage, bad) = (r.lineage.as_str(), r.first_bad_version.as_str());
        links::compare(links::Comparison {
            workload: &r.workload,
            metric: r.metric,
            a: (lineage, good),
            b: (lineage, bad),
        })
    }
}

pub(super) async fn page(State(state): State<AppState>, RawQuery(query): RawQuery) -> PageResult {
    let asked = asked_measure(query.as_deref())?;
    let versions = state.store.recent_versions(OVERVIEW_VERSIONS).await?;
    let (history, failures, runs, open, acknowledged) = tokio::try_join!(
        state.store.slope_history(&versions),
        state.store.failure_history(&versions),
        state.store.recent_runs(LATEST_RUNS),
        state.store.regressions(Some(RegressionStatus::Open)),
        state.store.regressions(Some(RegressionStatus::Acknowledged)),
    )?;
    let stored: Vec<_> = open.into_iter().chain(acknowledged).collect();
    let (regressions, findings) =
        open_regressions(&stored, &history).into_iter().partition(|r| r.last_good_version.is_some());
    let overview = Overview::from_history(&history, &failures, asked);
    let measures = measure::page_links(&overview.metrics, asked, |m| links::measured("/", m));
    let page = OverviewPage { overview, regressions, findings, runs, asked, measures };
    Ok(render(StatusCode::OK, &page))
}
