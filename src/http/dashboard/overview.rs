//! `/`: the slope of every workload at each lineage's latest version, open regressions, and the
//! latest runs.

use super::{links, PageResult};
use crate::format;
use crate::http::pages::render;
use crate::http::AppState;
use crate::store::RunListRow;
use crate::views::{derived_regressions, Band, OpenRegression, Overview, ALERT_THRESHOLD, WATCH_FROM};
use axum::extract::State;
use axum::http::StatusCode;

const LATEST_RUNS: i64 = 12;

#[derive(askama::Template)]
#[template(path = "dashboard/overview.html")]
struct OverviewPage {
    overview: Overview,
    regressions: Vec<OpenRegression>,
    runs: Vec<RunListRow>,
}

pub(super) async fn page(State(state): State<AppState>) -> PageResult {
    let (history, runs) = tokio::try_join!(state.store.slope_history(), state.store.recent_runs(LATEST_RUNS))?;
    let page = OverviewPage {
        overview: Overview::from_history(&history),
        // Derived from the history until regressions are stored with what the team learned.
        regressions: derived_regressions(&history),
        runs,
    };
    Ok(render(StatusCode::OK, &page))
}
