//! A summary pass: claims pending runs, reads each touched version's window of latest runs, asks
//! `analysis` for the new summaries, writes them, and has the alert rules judge each version
//! (`regressions.rs`), all in one transaction per group of versions.

use super::regressions::{self, Judged};
use super::{PassSummary, Settings};
use crate::analysis::{self, RunFit};
use crate::episodes::Episode;
use crate::metrics::Metrics;
use crate::rules::evaluate::Outcomes;
use crate::store::{add_failures, NewSummary, Store, SummaryTotals, WindowFit};
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::wire::Metric;
use std::collections::{BTreeMap, HashMap, VecDeque};
use time::OffsetDateTime;
use uuid::Uuid;

/// How many of a version's latest runs its summary's medians are taken over. Counts of runs and
/// hosts cover every run; the window keeps the cost of storing a run flat as a version collects
/// runs (a nightly job adds hundreds), and it takes eight wild runs of sixteen to move a median.
pub const SUMMARY_WINDOW: i64 = 16;

/// Most pending runs one transaction of a pass takes in (a backlog found at start-up is taken in
/// a chunk at a time).
const CLAIM_CHUNK: i64 = 500;

/// Most versions one pass reads pending at a time.
const VERSIONS_PER_PASS: i64 = 200;

/// Takes every pending run into its version's summaries and alert rules; returns how many runs
/// were taken in. Each transaction covers several versions; when one fails, its versions are tried
/// one at a time, so a version that fails does not hold back the others, and the first error is
/// returned once all were tried. The runs each committed transaction took in are counted in
/// `metrics`.
pub(super) async fn summarize_pending(
    store: &Store,
    settings: &Settings,
    metrics: &Metrics,
    failures: &Episode,
) -> Result<usize, sqlx::Error> {
    let mut taken = 0;
    loop {
        let versions = store.pending_versions(VERSIONS_PER_PASS).await?;
        if versions.is_empty() {
            return Ok(taken);
        }
        let mut full = versions.len() == VERSIONS_PER_PASS as usize;
        let mut first_error = None;
        let mut chunks: VecDeque<&[LineageVersion]> = versions.chunks(store.summary_versions_per_tx()).collect();
        while let Some(chunk) = chunks.pop_front() {
            let outcome = summarize_versions(store, chunk, settings).await;
            store.note_write(&outcome);
            match outcome {
                Ok(n) => {
                    metrics.record_summary_claims(n);
                    taken += n;
                    full |= n == CLAIM_CHUNK as usize;
                }
                Err(e) if chunk.len() > 1 => {
                    // While passes keep failing (a full disk), the episode's first line said so.
                    if !failures.failing() {
                        tracing::warn!(error = %e, versions = chunk.len(), "a summary pass failed; trying each version alone");
                    }
                    for alone in chunk.chunks(1).rev() {
                        chunks.push_front(alone);
                    }
                }
                Err(e) => {
                    let LineageVersion { lineage, version } = &chunk[0];
                    if !failures.failing() {
                        tracing::error!(error = %e, lineage, version, "cannot update the version's summaries");
                    }
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        if !full {
            return Ok(taken);
        }
    }
}

/// How many runs passed a workload at a version, and on which hosts.
type PassedRuns = (usize, Vec<i64>);

/// What one pass takes into one version.
#[derive(Default)]
struct VersionBatch {
    /// Per workload, the host and start of each run taken in.
    additions: HashMap<i64, Vec<(i64, OffsetDateTime)>>,
    /// The name of each workload (one per metric) the runs measured, by id.
    workloads: HashMap<i64, String>,
    /// The latest arrival among the runs, the time of what the alert rules create.
    now: Option<OffsetDateTime>,
}

/// A run's fit that may enter its version's window, with the run's arrival and host.
struct WindowCandidate {
    received_at: OffsetDateTime,
    fit: WindowFit,
    host_id: i64,
}

/// Takes up to `CLAIM_CHUNK` pending runs of these versions (sorted, distinct) into their
/// summaries in one transaction; returns how many.
async fn summarize_versions(
    store: &Store,
    versions: &[LineageVersion],
    settings: &Settings,
) -> Result<usize, sqlx::Error> {
    let started = std::time::Instant::now();
    let mut tx = store.begin_writing().await?;
    // One pass at a time per version, across processes too: each claims its own runs, and the
    // summary it writes includes every run claimed before it.
    tx.lock_versions(versions).await?;
    let claimed = tx.claim_pending(versions, CLAIM_CHUNK).await?;
    if claimed.is_empty() {
        return Ok(0);
    }

    let fits = tx.claimed_fits(&claimed).await?;
    let failures = tx.claimed_failures(&claimed).await?;
    let mut batches: BTreeMap<LineageVersion, VersionBatch> = BTreeMap::new();
    let mut claimed_runs: Vec<(LineageVersion, Uuid, i64, OffsetDateTime)> = Vec::new();
    for f in fits {
        let version = LineageVersion::new(f.lineage, f.version);
        claimed_runs.push((version.clone(), f.run_id, f.host_id, f.received_at));
        let b = batches.entry(version).or_default();
        b.additions.entry(f.workload_id).or_default().push((f.host_id, f.started_at));
        b.workloads.insert(f.workload_id, f.workload);
        b.now = b.now.max(Some(f.received_at));
    }
    for f in &failures {
        let b = batches.entry(LineageVersion::new(f.lineage.clone(), f.version.clone())).or_default();
        b.workloads.insert(f.workload_id, f.workload.clone());
        b.now = b.now.max(Some(f.received_at));
    }
    let touched: Vec<LineageVersion> = batches.keys().cloned().collect();
    let mut ids: Vec<i64> = batches.values().flat_map(|b| b.workloads.keys().copied()).collect();
    ids.sort_unstable();
    ids.dedup();

    // Each version's window: its latest runs by arrival, merged here across its builds. The runs
    // taken in are candidates too: a workload that only runs older than the version's latest
    // measured still gets a window, of its own latest runs among them.
    let mut windows = tx.version_windows(&touched, SUMMARY_WINDOW).await?;
    let mut window_runs: HashMap<Uuid, (usize, i64, OffsetDateTime)> = HashMap::new();
    for (k, runs) in windows.iter_mut().enumerate() {
        runs.sort_unstable_by_key(|r| std::cmp::Reverse((r.received_at, r.run_id)));
        for r in runs.iter().take(SUMMARY_WINDOW as usize) {
            window_runs.insert(r.run_id, (k, r.host_id, r.received_at));
        }
    }
    let position: HashMap<&LineageVersion, usize> = touched.iter().enumerate().map(|(k, v)| (v, k)).collect();
    for (version, run_id, host_id, received_at) in claimed_runs {
        window_runs.insert(run_id, (position[&version], host_id, received_at));
    }
    let run_ids: Vec<Uuid> = window_runs.keys().copied().collect();
    let window = tx.window_fits(&run_ids, &ids).await?;
    let mut totals = tx.summary_totals(&touched, &ids).await?;
    let mut failure_totals = tx.failure_totals(&touched, &ids).await?;
    add_failures(&mut failure_totals, &failures);
    tx.upsert_failure_totals(&failure_totals).await?;
    // The runs and hosts that passed each workload, before this pass's runs are added to them.
    let mut passed: HashMap<LineageVersion, HashMap<i64, PassedRuns>> = totals
        .iter()
        .map(|(k, by_workload)| {
            (k.clone(), by_workload.iter().map(|(w, t)| (*w, (t.runs, t.host_ids.clone()))).collect())
        })
        .collect();

    // Per version and workload, the fits of its latest `SUMMARY_WINDOW` runs.
    let mut candidates: HashMap<(usize, i64), Vec<WindowCandidate>> = HashMap::new();
    for fit in window {
        let (k, host_id, received_at) = window_runs[&fit.run_id];
        candidates.entry((k, fit.workload_id)).or_default().push(WindowCandidate { received_at, fit, host_id });
    }
    let mut inputs: Vec<Vec<WindowCandidate>> = touched.iter().map(|_| Vec::new()).collect();
    for ((k, _), mut fits) in candidates {
        fits.sort_unstable_by_key(|c| std::cmp::Reverse((c.received_at, c.fit.run_id)));
        inputs[k].extend(fits.into_iter().take(SUMMARY_WINDOW as usize));
    }
    let summaries: Vec<Vec<PassSummary>> = batches
        .iter()
        .zip(inputs)
        .map(|((key, batch), inputs)| summary_rows(inputs, totals.remove(key).unwrap_or_default(), &batch.additions))
        .collect();

    let mut rows = Vec::new();
    for (at, version_rows) in touched.iter().zip(&summaries) {
        rows.extend(version_rows.iter().map(|row| NewSummary {
            at,
            workload_id: row.workload_id,
            summary: &row.summary,
            host_ids: &row.host_ids,
            first_seen: row.first_seen,
            last_run_at: row.last_run_at,
        }));
    }
    tx.upsert_summaries(&rows).await?;

    // Versions in sorted order, each taking its lineage's lock after every version lock is held:
    // no pass waits for a version lock while holding a lineage lock.
    for ((at, batch), rows) in batches.iter().zip(&summaries) {
        let mut passed = passed.remove(at).unwrap_or_default();
        for row in rows {
            passed.insert(row.workload_id, (row.summary.runs, row.host_ids.clone()));
        }
        let failed = failure_totals.remove(at).unwrap_or_default();
        let mut outcomes: Vec<(i64, Outcomes)> = batch
            .workloads
            .keys()
            .map(|&id| {
                let (runs, hosts) = passed.get(&id).cloned().unwrap_or_default();
                let o = match failed.get(&id) {
                    Some(f) => Outcomes::new(runs, &hosts, f.runs, &f.host_ids, Some(f.failure.clone())),
                    None => Outcomes::new(runs, &hosts, 0, &[], None),
                };
                (id, o)
            })
            .collect();
        outcomes.sort_by_key(|(id, _)| *id);
        let judged = Judged {
            at,
            rows,
            outcomes: &outcomes,
            workloads: &batch.workloads,
            now: batch.now.unwrap_or_else(OffsetDateTime::now_utc),
        };
        regressions::judge(&mut tx, &judged, settings).await?;
    }
    tx.commit().await?;
    tracing::debug!(
        runs = claimed.len(),
        versions = versions.len(),
        elapsed_us = started.elapsed().as_micros() as u64,
        "summary pass"
    );
    Ok(claimed.len())
}

/// The new summaries of the workloads the pass touches at one version: medians over the window,
/// totals carried forward with the runs taken in added.
fn summary_rows(
    window: Vec<WindowCandidate>,
    mut totals: HashMap<i64, SummaryTotals>,
    additions: &HashMap<i64, Vec<(i64, OffsetDateTime)>>,
) -> Vec<PassSummary> {
    #[derive(Default)]
    struct Inputs {
        fits: Vec<RunFit>,
        medians: Vec<(u64, f64)>,
        metric: Metric,
        /// Latest first, each once.
        sources: Vec<String>,
        /// Each run's build, where it sent one.
        builds: Vec<Option<String>>,
        /// Latest first: each run's control lineage and its time over the control's by size.
        beside: Vec<(String, Vec<(u64, f64)>)>,
    }
    let mut by_workload: HashMap<i64, Inputs> = HashMap::new();
    // Latest first, as each version's window is sorted.
    for WindowCandidate { fit, host_id, .. } in window {
        let w = by_workload.entry(fit.workload_id).or_default();
        w.metric = fit.metric;
        if let Some(c) = &fit.facts.control {
            let ratios = fit.medians.iter().filter_map(|&(size, t)| Some((size, t / c.at(size)?))).collect();
            w.beside.push((c.lineage.clone(), ratios));
        }
        w.medians.extend(fit.medians);
        w.fits.push(RunFit { fit: fit.slope, host_id });
        if !w.sources.contains(&fit.source_hash) {
            w.sources.push(fit.source_hash);
        }
        w.builds.push(fit.facts.build_hash);
    }
    let mut rows = Vec::new();
    for (workload_id, w) in by_workload {
        let Some(mut summary) = analysis::summarize(&w.fits, &w.medians) else { continue };
        summary.source_count = w.sources.len();
        summary.source_hash = w.sources.into_iter().next();
        summary.build_hash = sole_build(w.builds);
        summary.beside = beside(w.beside);
        let Some(added) = additions.get(&workload_id).filter(|a| !a.is_empty()) else { continue };
        let SummaryTotals { mut runs, mut host_ids, mut first_seen, mut last_run_at, classified } =
            totals.remove(&workload_id).unwrap_or(SummaryTotals {
                runs: 0,
                host_ids: Vec::new(),
                first_seen: added[0].1,
                last_run_at: added[0].1,
                classified: None,
            });
        analysis::classify_summary(&mut summary, classified, w.metric);
        for &(host_id, started_at) in added {
            runs += 1;
            if let Err(at) = host_ids.binary_search(&host_id) {
                host_ids.insert(at, host_id);
            }
            first_seen = first_seen.min(started_at);
            last_run_at = last_run_at.max(started_at);
        }
        summary.runs = runs;
        summary.hosts = host_ids.len();
        rows.push(PassSummary { workload_id, metric: w.metric, summary, host_ids, first_seen, last_run_at });
    }
    rows.sort_by_key(|r| r.workload_id);
    rows
}

/// The one build every run ran, when they all said and agreed.
fn sole_build(builds: Vec<Option<String>>) -> Option<String> {
    let mut builds = builds.into_iter();
    let first = builds.next()??;
    builds.all(|b| b.as_ref() == Some(&first)).then_some(first)
}

/// The workload's time over its control's at each size, the median over the runs measured
/// against the latest run's control lineage (latest first in `runs`).
fn beside(runs: Vec<(String, Vec<(u64, f64)>)>) -> Option<crate::model::Beside> {
    let lineage = runs.first()?.0.clone();
    let mut by_size: std::collections::BTreeMap<u64, Vec<f64>> = std::collections::BTreeMap::new();
    for (_, ratios) in runs.iter().filter(|(l, _)| *l == lineage) {
        for &(size, ratio) in ratios.iter().filter(|(_, r)| r.is_finite() && *r > 0.0) {
            by_size.entry(size).or_default().push(ratio);
        }
    }
    let sizes: Vec<(u64, f64, usize)> =
        by_size.into_iter().map(|(size, ratios)| (size, slopewatch_core::fit::median(&ratios), ratios.len())).collect();
    (!sizes.is_empty()).then_some(crate::model::Beside { lineage, sizes })
}
