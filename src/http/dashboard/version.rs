//! `/toolchains/{lineage}/{version}`: a toolchain version across every workload, against the
//! version before it (`?against=` another) and the control lineages, with the regressions and
//! findings opened there at the top, and the artifacts scanned at it below; `?format=md` gives it
//! as a Markdown release note. The rows' view here is the one `/compare` shows for two versions
//! without a workload.

use crate::charts;
use crate::http::extract::{AppPath, AppQuery, OnPage};
use crate::http::pages::{render, PageResult};
use crate::http::versions;
use crate::http::{AppState, Error};
use crate::links;
use crate::views::exposures::ArtifactView;
use crate::views::{Change, ChangeRow, Changes, VersionRegression, VersionView};
use axum::extract::State;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::Deserialize;

/// One group of workloads (built-in, the team's, contract probes) as a table shows it.
pub(super) struct GroupView {
    pub(super) title: &'static str,
    pub(super) id: &'static str,
    pub(super) rows: Vec<RowView>,
}

/// One workload's row, its numbers in words.
pub(super) struct RowView {
    pub(super) workload: String,
    pub(super) measure: &'static str,
    pub(super) series_url: String,
    pub(super) before: String,
    pub(super) after: String,
    /// The band the change is drawn in: `regression`, `failed`, `linear` or `same`.
    pub(super) band: &'static str,
    pub(super) change: String,
    pub(super) ratio: String,
    /// The ratio's interval holds 1: it is shown muted, as no change.
    pub(super) ratio_within_noise: bool,
    pub(super) interest: String,
    /// The slope across the lineage's versions, an inline SVG with its text alternative; empty
    /// where the workload has no slope at any version.
    pub(super) trend: String,
    pub(super) finding: bool,
    /// The regression or finding that holds it: its title and page.
    pub(super) held: Option<(String, String)>,
}

impl RowView {
    fn new(row: &ChangeRow, changes: &Changes) -> RowView {
        let after = &changes.after;
        let mut marked = vec![after.version.as_str()];
        if let Some(b) = changes.before.as_ref().filter(|b| b.lineage == after.lineage) {
            marked.push(&b.version);
        }
        let dash = || "–".to_string();
        RowView {
            workload: row.workload.clone(),
            measure: row.metric.label(),
            series_url: row.series_url.clone(),
            before: row.before.as_ref().map_or_else(dash, |s| s.text()),
            after: row.after.as_ref().map_or_else(dash, |s| s.text()),
            band: match row.change {
                Change::Fails | Change::StillFails => "failed",
                Change::Worse | Change::Steeper | Change::Costlier => "regression",
                Change::Better | Change::Flatter | Change::Passes | Change::Cheaper => "linear",
                Change::New | Change::Gone | Change::Unchanged => "same",
            },
            change: row.change_text.clone(),
            ratio: row.ratio_text().unwrap_or_else(dash),
            ratio_within_noise: row.ratio.is_some_and(|r| r.within_noise),
            interest: row.at_interest.as_ref().map_or_else(dash, |c| c.sentence.clone()),
            trend: charts::trend_svg(
                &row.trend_title(&after.lineage),
                &row.trend,
                &marked,
                changes.rules.threshold_for(&row.workload),
            )
            .unwrap_or_default(),
            finding: row.finding,
            held: row.held_by.as_ref().map(|h| (format!("{} #{}", h.kind.title(), h.id), h.url.clone())),
        }
    }
}

/// The rows of `changes` by group, as the tables show them.
pub(super) fn groups(changes: &Changes) -> Vec<GroupView> {
    changes
        .groups()
        .into_iter()
        .map(|(group, rows)| GroupView {
            title: group.title(),
            id: group.as_str(),
            rows: rows.into_iter().map(|r| RowView::new(r, changes)).collect(),
        })
        .collect()
}

#[derive(Deserialize)]
pub(super) struct PageQuery {
    against: Option<String>,
    /// `md` for the Markdown release note; `html`, or none, for the page.
    format: Option<String>,
}

/// Another version of the lineage to compare against, as the picker offers it.
struct Against {
    version: String,
    selected: bool,
}

#[derive(askama::Template)]
#[template(path = "dashboard/version.html")]
struct VersionPage {
    view: VersionView,
    headline: String,
    groups: Vec<GroupView>,
    /// The columns' headings: the version compared against, and this one.
    before_label: String,
    after_label: String,
    open: Vec<VersionRegression>,
    /// Those not open, or fixed by this version.
    others: Vec<VersionRegression>,
    choices: Vec<Against>,
    markdown_url: String,
    api_url: String,
    /// Both versions side by side on `/compare`, where there is a version before.
    compare_url: Option<String>,
    previous: Option<(String, String)>,
    next: Option<(String, String)>,
    /// The latest scan of each artifact judged by this version, worst first.
    artifacts: Vec<ArtifactView>,
    scanned_lineage: String,
    scanned_version: String,
}

/// A version no run has reported, but that artifacts were scanned against: the page lists them.
#[derive(askama::Template)]
#[template(path = "dashboard/version_scanned.html")]
struct ScannedOnlyPage {
    artifacts: Vec<ArtifactView>,
    scanned_lineage: String,
    scanned_version: String,
}

pub(super) async fn page(
    State(state): State<AppState>,
    OnPage(AppPath((lineage, version))): OnPage<AppPath<(String, String)>>,
    OnPage(AppQuery(q)): OnPage<AppQuery<PageQuery>>,
) -> PageResult {
    let markdown = match q.format.as_deref() {
        None | Some("html") => false,
        Some("md") => true,
        Some(other) => {
            let shown: String = other.chars().take(16).collect();
            return Err(Error::BadRequest(format!("format is html or md, not {shown:?}")).into());
        }
    };
    let view = match versions::load(&state, &lineage, &version, q.against.as_deref()).await {
        Ok(view) => view,
        // Not reported, but scanned against: the page of its scans, so a scan's link leads somewhere.
        Err(Error::NotFound(why)) if !markdown => {
            let artifacts = versions::scanned(&state, &lineage, &version).await?;
            if artifacts.is_empty() {
                return Err(Error::NotFound(why).into());
            }
            let page = ScannedOnlyPage {
                artifacts: artifacts.iter().map(ArtifactView::new).collect(),
                scanned_lineage: lineage,
                scanned_version: version,
            };
            return Ok(render(StatusCode::OK, &page));
        }
        Err(e) => return Err(e.into()),
    };
    let asked = view.changes.before.as_ref().map(|b| b.version.as_str()).filter(|_| view.against_asked);
    if markdown {
        let name: String = format!("{lineage}-{version}")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' })
            .collect();
        let headers = [
            (CONTENT_TYPE, "text/markdown; charset=utf-8".to_string()),
            (CONTENT_DISPOSITION, format!("attachment; filename=\"{name}.md\"")),
        ];
        return Ok((headers, view.markdown(state.config.public_url.as_deref())).into_response());
    }
    let at = view.at().clone();
    let link = |v: &str| (v.to_string(), links::version_page(&lineage, v));
    let (previous, next) = view.neighbours();
    let page = VersionPage {
        headline: view.changes.headline(),
        groups: groups(&view.changes),
        before_label: view.changes.before_name().unwrap_or_else(|| "before".into()),
        after_label: at.version.clone(),
        open: view.open_regressions().cloned().collect(),
        others: view.regressions.iter().filter(|r| !r.open).cloned().collect(),
        choices: view
            .versions
            .iter()
            .filter(|v| **v != at.version)
            .map(|v| Against {
                version: v.clone(),
                selected: view.changes.before.as_ref().is_some_and(|b| b.version == *v),
            })
            .collect(),
        markdown_url: links::version_markdown(&at.lineage, &at.version, asked),
        api_url: links::version_api(&at.lineage, &at.version),
        compare_url: view
            .changes
            .before
            .as_ref()
            .map(|b| links::compare_versions((&b.lineage, &b.version), (&at.lineage, &at.version))),
        previous: previous.map(link),
        next: next.map(link),
        artifacts: view.artifacts.iter().map(ArtifactView::new).collect(),
        scanned_lineage: at.lineage.clone(),
        scanned_version: at.version.clone(),
        view,
    };
    Ok(render(StatusCode::OK, &page))
}
