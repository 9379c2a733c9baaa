//! `/`: the slope of every workload at each lineage's latest version, open regressions, and the
//! latest runs.

use crate::format;
use crate::http::pages::{render, PageResult};
use crate::http::AppState;
use crate::links;
use crate::model::RegressionStatus;
use crate::store::RunListRow;
use crate::views::{open_regressions, Band, OpenRegression, Overview, ALERT_THRESHOLD, WATCH_FROM};
use axum::extract::State;
use axum::http::StatusCode;

const LATEST_RUNS: i64 = 12;

#[derive(askama::Template)]
#[template(path = "dashboard/overview.html")]
struct OverviewPage {
    overview: Overview,
    regressions: Vec<OpenRegression>,
    /// Open findings: over at the first version their lineage measured.
    findings: Vec<OpenRegression>,
    runs: Vec<RunListRow>,
}

pub(super) async fn page(State(state): State<AppState>) -> PageResult {
    let (history, failures, runs, open, acknowledged) = tokio::try_join!(
        state.store.slope_history(),
        state.store.failure_history(),
        state.store.recent_runs(LATEST_RUNS),
        state.store.regressions(Some(RegressionStatus::Open)),
        state.store.regressions(Some(RegressionStatus::Acknowledged)),
    )?;
    let stored: Vec<_> = open.into_iter().chain(acknowledged).collect();
    let (regressions, findings) =
        open_regressions(&stored, &history).into_iter().partition(|r| r.last_good_version.is_some());
    let page = OverviewPage { overview: Overview::from_history(&history, &failures), regressions, findings, runs };
    Ok(render(StatusCode::OK, &page))
}
