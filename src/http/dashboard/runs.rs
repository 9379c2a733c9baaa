//! `/runs/{id}`: one run whole: host, toolchain, agent, and per workload its fit and class, the
//! same workload at the version before, the regression its version opened or lies in, local
//! slopes, medians and raw samples (folded), or a note where retention removed them.

use crate::config::Rules;
use crate::format;
use crate::http::pages::{render, PageResult};
use crate::http::session::Reader;
use crate::http::{AppState, Error};
use crate::links;
use crate::store::{RunDetail, WorkloadDetail};
use crate::views::run::{context, HoldingRegression, RunContext};
use crate::views::{fill_in_run, Alerting, Band};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use slopewatch_core::verdict::SlopeEvidence;
use slopewatch_core::wire::Failure;
use uuid::Uuid;

#[derive(askama::Template)]
#[template(path = "dashboard/run.html")]
struct RunPage {
    run: RunDetail,
    /// Beside each workload, in the order of `run.workloads`: its class, previous version and
    /// regression.
    context: Vec<RunContext>,
    /// Sizes a failed workload needs before its partial slope is shown.
    min_sizes: usize,
    /// The configured alert rules a workload's fit is banded by.
    rules: Rules,
}

/// One measured size of a workload, as the table shows it.
struct SizeRow {
    size: String,
    /// The median by the run's metric.
    median: String,
    /// The local slope from this size to the next.
    local_slope: String,
    samples: String,
}

impl RunPage {
    /// The band of a workload's fit in this run, as the alert rules would judge it as a version
    /// summary; `None` without a fit.
    fn band(&self, w: &WorkloadDetail) -> Option<Band> {
        let evidence = SlopeEvidence {
            slope: w.slope?,
            ci_low: w.ci_low?,
            ci_high: w.ci_high?,
            r2: w.r2?,
            sizes: usize::try_from(w.n_sizes).unwrap_or_default(),
        };
        Some(Alerting::of(&self.rules, &w.name).band(&evidence, w.complexity.as_ref()))
    }

    /// What a failure adds to its kind: got and expected, the signal or exit status, the limit.
    fn failure_facts(&self, f: &Failure) -> Vec<(&'static str, String)> {
        let mut facts = Vec::new();
        if let Some(got) = &f.got {
            facts.push(("Got", got.clone()));
        }
        if let Some(expected) = &f.expected {
            facts.push(("Expected", expected.clone()));
        }
        if let Some(signal) = f.signal {
            facts.push(("Signal", signal.to_string()));
        }
        if let Some(code) = f.exit_status {
            facts.push(("Exit status", code.to_string()));
        }
        if let Some(ms) = f.limit_ms {
            facts.push(("Time limit", format::duration(ms as f64 * 1e6)));
        }
        facts
    }

    /// What the page says beside the `i`th workload (from 0).
    fn beside(&self, i: usize) -> Option<&RunContext> {
        self.context.get(i)
    }

    /// Each regression or finding the run's version opened, once: for the facts at the top.
    fn opened(&self) -> Vec<&HoldingRegression> {
        let mut opened: Vec<&HoldingRegression> =
            self.context.iter().filter_map(|c| c.regression.as_ref()).filter(|r| r.opened_here).collect();
        opened.sort_by(|a, b| a.url.cmp(&b.url));
        opened.dedup_by(|a, b| a.url == b.url);
        opened
    }

    fn failed(&self) -> usize {
        self.run.workloads.iter().filter(|w| w.failure.is_some()).count()
    }

    /// Where a failed workload stopped, e.g. `at 128 KiB`, or before its first size.
    fn failed_at(&self, w: &WorkloadDetail, f: &Failure) -> String {
        match f.size {
            Some(size) => format!("at {}", format::size(size, w.size_unit)),
            None => "before any size ran".into(),
        }
    }

    /// When the raw samples were pruned, for the note that says so.
    fn pruned_on(&self) -> Option<String> {
        self.run.samples_pruned_at.map(format::timestamp)
    }

    fn size_rows(&self, w: &WorkloadDetail) -> Vec<SizeRow> {
        w.measurements
            .iter()
            .enumerate()
            .map(|(i, m)| SizeRow {
                size: format::size(m.size.max(0) as u64, w.size_unit),
                median: format::value(self.run.metric, m.median_ns),
                local_slope: w.local_slopes.get(i).map_or_else(|| "—".into(), |l| format::slope(l.slope)),
                samples: match (&m.instructions, self.run.metric.is_count()) {
                    _ if self.run.samples_pruned_at.is_some() => format!("pruned ({} samples)", m.samples),
                    // The counts the median is of, each with the time of its repetition.
                    (Some(counts), true) => counts
                        .iter()
                        .zip(&m.samples_ns)
                        .map(|(&c, &ns)| format!("{} ({})", format::count(c as f64), format::duration(ns)))
                        .collect::<Vec<_>>()
                        .join(", "),
                    _ => m.samples_ns.iter().map(|&ns| format::duration(ns)).collect::<Vec<_>>().join(", "),
                },
            })
            .collect()
    }
}

pub(super) async fn page(State(state): State<AppState>, Path(id): Path<String>, Reader(session): Reader) -> PageResult {
    let run_id = Uuid::parse_str(&id).map_err(|_| Error::BadRequest(format!("{id:?} is not a run id (a UUID)")))?;
    let mut run = state.store.run(run_id).await?.ok_or_else(|| Error::NotFound(format!("no run {run_id}")))?;
    for f in run.workloads.iter_mut().filter_map(|w| w.failure.as_mut()) {
        f.detail = crate::views::detail_for(&f.detail, session.is_some());
    }
    let min_sizes = state.config.alerts.rules.min_sizes;
    fill_in_run(&mut run, min_sizes);
    let names: Vec<&str> = run.workloads.iter().map(|w| w.name.as_str()).collect();
    let (lineage, metric) = (run.toolchain.name.as_str(), run.metric);
    let (slopes, held) = tokio::try_join!(
        state.store.lineage_slopes(lineage, metric, &names),
        state.store.regressions_holding(lineage, metric, &names),
    )?;
    let context = context(&run, &slopes, &held);
    let rules = state.config.alerts.rules.clone();
    Ok(render(StatusCode::OK, &RunPage { run, context, min_sizes, rules }))
}
