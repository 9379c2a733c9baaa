//! `/contracts`: every probe of the contract catalogue against the class it is expected to cost, a
//! column per toolchain version (each lineage at its latest, or exactly the versions picked with
//! `?v=LINEAGE@VERSION&v=…`), with each column's counts above the matrix. Each cell says the
//! metric that decided it; `?measure=` shows one metric only. Below the matrix, the probes the
//! team's searches found, each with its shape in words and the search that found it.

use super::{asked_measure, query_values};
use crate::http::pages::{render, PageResult};
use crate::http::{AppState, Error};
use crate::links;
use crate::store::VersionChoice;
use crate::views::contracts::{latest_columns, pickers, ContractsView, LineagePicker, Shown as _, Standing};
use crate::views::found_probes::{self, FoundProbeRow};
use crate::views::measure::{self, MeasureLink};
use axum::extract::{RawQuery, State as AppStateOf};
use axum::http::StatusCode;
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::probe::ProbeState;
use slopewatch_core::wire::{FailureKind, Metric, MAX_NAME_CHARS};

/// The most columns one page shows: each costs a share of every read.
pub const MAX_COLUMNS: usize = 16;

/// The longest `v`: a lineage and a version of the longest names a run may carry, and the `@`.
const MAX_VALUE_CHARS: usize = 2 * MAX_NAME_CHARS + 1;

#[derive(askama::Template)]
#[template(path = "contracts.html")]
struct ContractsPage {
    view: ContractsView,
    pickers: Vec<LineagePicker>,
    /// Whether the columns were picked rather than each lineage's latest version.
    picked: bool,
    /// Every standing a cell may have, for the legend.
    legend: Vec<Standing>,
    /// The metric asked for; `None` shows each cell's default.
    asked: Option<Metric>,
    /// Links to show the matrix by one metric, or each cell by its default.
    measures: Vec<MeasureLink>,
    /// The probes the team's searches found, by function, axis and shape.
    found: Vec<FoundProbeRow>,
}

impl ContractsPage {
    /// `/contracts` with no columns picked: each lineage's latest version.
    fn latest_href(&self) -> String {
        links::contracts(&[], self.asked)
    }

    /// Whether the cells say their metric: when probes were measured by more than one.
    fn metric_shown(&self) -> bool {
        self.view.metrics.len() > 1
    }
}

/// The toolchain versions `asked` names, in the order asked, each once; a value that is not
/// `LINEAGE@VERSION` is refused, one naming no version that has reported is not found. A value is
/// read the way the reported versions have it, since lineages and versions may both hold `@`.
fn columns(asked: &[String], known: &[VersionChoice]) -> Result<Vec<LineageVersion>, Error> {
    if asked.len() > MAX_COLUMNS {
        return Err(Error::BadRequest(format!(
            "{} versions were asked for; the page shows at most {MAX_COLUMNS} side by side",
            asked.len()
        )));
    }
    let mut columns: Vec<LineageVersion> = Vec::new();
    for value in asked {
        let chars = value.chars().count();
        if chars > MAX_VALUE_CHARS {
            return Err(Error::BadRequest(format!(
                "v is {chars} characters; a toolchain version as LINEAGE@VERSION has at most {MAX_VALUE_CHARS}"
            )));
        }
        let readings = links::toolchain_version_readings(value);
        let Some(&(lineage, version)) = readings.first() else {
            return Err(Error::BadRequest(format!(
                "v must be a toolchain version as LINEAGE@VERSION, e.g. zig-cc-musl@0.16.0; got {value:?}"
            )));
        };
        let stored = readings.iter().find(|(l, v)| known.iter().any(|c| c.lineage == *l && c.version == *v));
        let Some(&(lineage, version)) = stored else {
            return Err(Error::NotFound(format!("no runs of toolchain {lineage} at version {version} have reported")));
        };
        let column = LineageVersion::new(lineage, version);
        if !columns.contains(&column) {
            columns.push(column);
        }
    }
    Ok(columns)
}

pub(super) async fn page(AppStateOf(state): AppStateOf<AppState>, RawQuery(query): RawQuery) -> PageResult {
    let metric = asked_measure(query.as_deref())?;
    let asked = query_values(query.as_deref(), "v");
    let (probes, versions, found) =
        tokio::try_join!(state.store.contract_probes(), state.store.toolchain_versions(), state.store.found_probes())?;
    let picked = !asked.is_empty();
    let columns = if picked { columns(&asked, &versions)? } else { latest_columns(&versions) };
    let cells = if probes.is_empty() { Default::default() } else { state.store.probe_cells(&columns).await? };
    let view = ContractsView::new(&probes, &columns, &cells, metric);
    let shown = if picked { columns.clone() } else { Vec::new() };
    let measures = measure::page_links(&view.metrics, metric, |m| links::contracts(&shown, m));
    let page = ContractsPage {
        found: found_probes::rows(&found, &view),
        pickers: pickers(&versions, &columns, metric),
        view,
        asked: metric,
        measures,
        picked,
        legend: vec![
            Some(ProbeState::Held),
            Some(ProbeState::Over),
            Some(ProbeState::Failed(FailureKind::Crashed)),
            Some(ProbeState::Failed(FailureKind::WrongResult)),
            Some(ProbeState::NotProvided),
            Some(ProbeState::Unsure),
            Some(ProbeState::Failed(FailureKind::TimedOut)),
            None,
        ],
    };
    Ok(render(StatusCode::OK, &page))
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::OffsetDateTime;

    fn known() -> Vec<VersionChoice> {
        [("zig-cc-musl", "0.15.2"), ("zig-cc-musl", "0.16.0"), ("b@c", "2")]
            .into_iter()
            .map(|(l, v)| VersionChoice {
                lineage: l.into(),
                version: v.into(),
                first_seen: OffsetDateTime::UNIX_EPOCH,
            })
            .collect()
    }

    #[test]
    fn picked_columns_are_read_as_the_reported_versions_have_them_and_kept_in_order() {
        let asked = ["zig-cc-musl@0.16.0", "b@c@2", "zig-cc-musl@0.15.2", "zig-cc-musl@0.16.0"].map(String::from);
        let got = columns(&asked, &known()).unwrap();
        let want = [
            LineageVersion::new("zig-cc-musl", "0.16.0"),
            LineageVersion::new("b@c", "2"),
            LineageVersion::new("zig-cc-musl", "0.15.2"),
        ];
        assert_eq!(got, want, "in the order asked, each once");
    }

    #[test]
    fn a_value_that_is_no_toolchain_version_is_refused_and_an_unknown_one_not_found() {
        let status = |v: &str| columns(&[v.to_string()], &known()).unwrap_err().status();
        assert_eq!(status("zig-cc-musl"), StatusCode::BAD_REQUEST);
        assert_eq!(status("@0.16.0"), StatusCode::BAD_REQUEST);
        assert_eq!(status(&"x".repeat(MAX_VALUE_CHARS + 1)), StatusCode::BAD_REQUEST);
        assert_eq!(status("zig-cc-musl@9.9.9"), StatusCode::NOT_FOUND);
        let many: Vec<String> = (0..=MAX_COLUMNS).map(|_| "zig-cc-musl@0.16.0".to_string()).collect();
        assert_eq!(columns(&many, &known()).unwrap_err().status(), StatusCode::BAD_REQUEST);
    }
}
