//! Reading one series as a request names it, for the series page and its files and for the API:
//! the workload and lineage from the path or the query, the metric from `?measure=`.

use super::{AppState, Error};
use crate::views::measure;
use crate::views::{Alerting, SeriesView};
use slopewatch_core::wire::Metric;

/// The series of `workload` in `lineage` by the metric `asked` for (by default wall time where
/// the workload has it, else the metric it has: `measure::pick`), with the metrics the workload
/// has a series of there; or which part of it is unknown.
pub(super) async fn load(
    state: &AppState,
    workload: &str,
    lineage: &str,
    asked: Option<Metric>,
) -> Result<(SeriesView, Vec<Metric>), Error> {
    let available = state.store.series_metrics(workload, Some(lineage)).await?;
    let Some(metric) = measure::pick(asked, &available) else {
        if available.is_empty() {
            if state.store.series_metrics(workload, None).await?.is_empty() {
                return Err(Error::NotFound(format!("no workload named {workload:?} has reported")));
            }
            return Err(Error::NotFound(format!("workload {workload:?} has no runs with toolchain {lineage:?}")));
        }
        let measured: Vec<&str> = available.iter().map(|m| m.label()).collect();
        let asked = asked.map_or("", Metric::label);
        return Err(Error::NotFound(format!(
            "workload {workload:?} has no series of {asked} with toolchain {lineage:?}; it was measured by {}",
            measured.join(", ")
        )));
    };
    let (found, summaries, failures) = tokio::try_join!(
        state.store.workload(workload, metric),
        state.store.series(workload, metric, lineage),
        state.store.series_failures(workload, metric, lineage)
    )?;
    let found = found.ok_or_else(|| Error::NotFound(format!("no workload named {workload:?} has reported")))?;
    let alerting = Alerting::of(&state.config.alerts.rules, &found.name);
    let mut view =
        SeriesView::new(found.name, metric, lineage.to_string(), found.size_unit, summaries, failures, alerting);
    view.size_of_interest = found.size_of_interest.and_then(|s| u64::try_from(s).ok());
    Ok((view, available))
}
