//! `/`: the verdict first (a banner per open regression and finding), then the slope of every
//! workload at each lineage's latest version, worst rows first, and the latest runs. Each cell says
//! the metric that decided it; `?measure=` shows one metric only. With nothing stored it says what
//! to run.

use super::asked_measure;
use crate::config::{AlertRule, Rules};
use crate::format;
use crate::http::pages::{render, PageResult};
use crate::http::AppState;
use crate::links;
use crate::model::RegressionStatus;
use crate::store::{RunListRow, ToolchainActivity};
use crate::views::measure::{self, MeasureLink};
use crate::views::{banners, Band, Banner, BannerWorkload, Overview, OverviewCell};
use axum::extract::{RawQuery, State};
use axum::http::header::HOST;
use axum::http::{HeaderMap, StatusCode};
use slopewatch_core::wire::Metric;
use time::OffsetDateTime;

const LATEST_RUNS: i64 = 12;
/// Most toolchain versions with runs waiting to be summarised that the page asks about.
const PENDING_VERSIONS: i64 = 100;

/// How many of each lineage's latest versions the overview reads: enough for each cell's latest
/// version and the change before it, and bounded, so the page costs the same however long the
/// history grows. A workload measured in none of them has left the overview; its series keeps it.
const OVERVIEW_VERSIONS: usize = 8;

#[derive(askama::Template)]
#[template(path = "dashboard/overview.html")]
struct OverviewPage {
    overview: Overview,
    /// Open and acknowledged regressions, one banner each, newest first.
    regressions: Vec<Banner>,
    /// Open findings: over at the first version their lineage measured.
    findings: Vec<Banner>,
    runs: Vec<RunListRow>,
    /// The metric asked for; `None` shows each cell's default.
    asked: Option<Metric>,
    /// Links to show the matrix by one metric, or each cell by its default.
    measures: Vec<MeasureLink>,
    /// What relative times are counted from.
    now: OffsetDateTime,
    /// This server's address as an agent reaches it, for the commands an empty store shows.
    server_url: String,
    /// The configured alert rules the cells are banded by, and the legend names.
    rules: Rules,
}

impl OverviewPage {
    /// What the regression band means under the configured rule.
    fn regression_rule(&self) -> String {
        let t = self.rules.threshold;
        let own = if self.rules.per_workload.is_empty() { "" } else { " (or the workload's own threshold)" };
        let rule = match self.rules.rule {
            AlertRule::Slope => format!("k > {t}{own}"),
            AlertRule::Class => "a class of O(n²) or O(n³)".to_string(),
            AlertRule::Either => format!("k > {t}{own} or a class of O(n²) or O(n³)"),
        };
        format!("{rule}, as the alert rules decide it: the 95% interval, the fit and its sizes bear it out")
    }

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

    /// Whether the cell's latest version is older than its column's: the workload was not
    /// measured at the lineage's latest version.
    fn behind(&self, cell: &OverviewCell) -> bool {
        self.overview.columns.iter().any(|c| c.lineage == cell.lineage && c.version != cell.version)
    }

    /// `3 min ago`.
    fn ago(&self, then: &OffsetDateTime) -> String {
        format::ago(*then, self.now)
    }

    /// The comparison of a banner's last good and first bad versions of one of its workloads that
    /// regressed by its slope.
    fn compare(&self, b: &Banner, w: &BannerWorkload) -> Option<String> {
        let good = b.previous_version.as_deref().filter(|_| !w.failed)?;
        Some(links::compare(links::Comparison {
            workload: &w.workload,
            metric: w.metric,
            a: (&b.lineage, good),
            b: (&b.lineage, &b.version),
        }))
    }
}

pub(super) async fn page(State(state): State<AppState>, headers: HeaderMap, RawQuery(query): RawQuery) -> PageResult {
    let asked = asked_measure(query.as_deref())?;
    // The builds give both each lineage's latest versions and each column's last run.
    let builds = state.store.toolchain_activity().await?;
    let versions = ToolchainActivity::latest_versions(&builds, OVERVIEW_VERSIONS);
    let (history, failures, runs, open, acknowledged, pending) = tokio::try_join!(
        state.store.slope_history(&versions),
        state.store.failure_history(&versions),
        state.store.recent_runs(LATEST_RUNS),
        state.store.regressions(Some(RegressionStatus::Open)),
        state.store.regressions(Some(RegressionStatus::Acknowledged)),
        state.store.pending_versions(PENDING_VERSIONS),
    )?;
    let stored: Vec<_> = open.into_iter().chain(acknowledged).collect();
    let (mut regressions, mut findings) = banners(&stored);
    for b in regressions.iter_mut().chain(&mut findings) {
        let Some((r, members)) = stored.iter().find(|(r, _)| r.id == b.id) else { continue };
        b.causes = crate::causes::read(&state.store, r, members, None).await?.headline();
    }
    let overview =
        Overview::from_history(&history, &failures, asked, &state.config.controls, &state.config.alerts.rules)
            .with_activity(&builds, &pending);
    let measures = measure::page_links(&overview.metrics, asked, |m| links::measured("/", m));
    let server_url = server_url(state.config.public_url.as_deref(), &headers);
    let now = OffsetDateTime::now_utc();
    let rules = state.config.alerts.rules.clone();
    let page = OverviewPage { overview, regressions, findings, runs, asked, measures, now, server_url, rules };
    Ok(render(StatusCode::OK, &page))
}

/// The configured public URL, else `http://` and the `Host` the browser asked for when it is a
/// plain host name or address with a port, else a placeholder.
fn server_url(public_url: Option<&str>, headers: &HeaderMap) -> String {
    if let Some(url) = public_url {
        return url.trim_end_matches('/').to_string();
    }
    let host = headers.get(HOST).and_then(|h| h.to_str().ok()).filter(|h| {
        !h.is_empty() && h.len() <= 255 && h.chars().all(|c| c.is_ascii_alphanumeric() || ".-:[]".contains(c))
    });
    host.map_or_else(|| "URL-OF-THIS-SERVER".to_string(), |h| format!("http://{h}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_commands_name_this_server_as_the_browser_reached_it() {
        let with_host = |h: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(HOST, HeaderValue::from_static(h));
            headers
        };
        assert_eq!(server_url(None, &with_host("127.0.0.1:3000")), "http://127.0.0.1:3000");
        assert_eq!(server_url(Some("https://sw.example/"), &with_host("x")), "https://sw.example");
        assert_eq!(server_url(None, &with_host("a b\"<")), "URL-OF-THIS-SERVER");
        assert_eq!(server_url(None, &HeaderMap::new()), "URL-OF-THIS-SERVER");
    }
}
