//! Version summaries: each version's slope and per-size medians over its latest runs, and the
//! alert rules evaluated on them, brought up to date as runs arrive.
//!
//! A run's ingest transaction marks it pending (`pending_summaries`); after it commits, a summary
//! pass takes it in, together with every other run pending by then, one transaction for all their
//! versions. One pass runs at a time. A run stored while none is running starts one and is
//! answered when it ends, so on an idle server the answer comes with the summaries current. A run
//! stored while a pass is under way is answered at once and taken in by the next pass, which
//! follows after a short pause for more runs to gather (`GATHER`): under load, summaries trail by
//! a fraction of a second, and each pass serves many runs of a version with one summary update,
//! so summary work grows with the number of versions, not with the ingest rate. A pass that fails
//! leaves its runs pending; the server sweeps what is pending at start-up and every few seconds,
//! so a run is taken in once even when the server dies in between.

use super::{alerts, decode_json, push_ids, with_pool, Store};
use crate::analysis::{self, RunFit};
use crate::config::Config;
use sqlx::QueryBuilder;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use time::OffsetDateTime;
use uuid::Uuid;

/// How many of a version's latest runs its summary's medians are taken over. Counts of runs and
/// hosts cover every run; the window keeps the cost of storing a run flat as a version collects
/// runs (a nightly job adds hundreds), and it takes eight wild runs of sixteen to move a median.
pub const SUMMARY_WINDOW: i64 = 16;

/// Most pending runs one transaction of a pass takes in (a backlog found at start-up
/// is taken in a chunk at a time).
const CLAIM_CHUNK: i64 = 500;

/// How long passes after the first of a busy spell wait for runs to gather.
const GATHER: std::time::Duration = std::time::Duration::from_millis(200);

/// Most versions one pass reads pending at a time.
const VERSIONS_PER_PASS: i64 = 200;

/// Who runs summary passes for the runs this process stores.
#[derive(Debug, Default)]
pub(super) struct SummaryTurns {
    /// How many runs this process has stored.
    stored: AtomicU64,
    /// How many of them finished passes covered.
    taken_in: AtomicU64,
    /// Whether a pass (or a chain of them) is under way.
    busy: AtomicBool,
}

impl SummaryTurns {
    /// Counts a run just committed, before it asks for a pass.
    pub fn count_stored(&self) {
        self.stored.fetch_add(1, Ordering::SeqCst);
    }

    fn behind(&self) -> bool {
        self.stored.load(Ordering::SeqCst) > self.taken_in.load(Ordering::SeqCst)
    }

    /// Gives up running passes, unless runs came in that no pass covers and nobody else will
    /// start one: then returns true, still holding the turn.
    fn release(&self) -> bool {
        loop {
            if self.behind() {
                return true;
            }
            self.busy.store(false, Ordering::SeqCst);
            // A run that committed before the store above saw `busy` and left its run to us.
            if !self.behind() || self.busy.swap(true, Ordering::SeqCst) {
                return false;
            }
        }
    }
}

/// Gives the turn back if a pass panics, so the next run starts a pass again.
struct TurnGuard(Option<Arc<SummaryTurns>>);

impl Drop for TurnGuard {
    fn drop(&mut self) {
        if let Some(turns) = self.0.take() {
            turns.busy.store(false, Ordering::SeqCst);
        }
    }
}

/// The row of `version_summaries` for one workload, ready to upsert.
pub(super) struct SummaryRow {
    pub workload_id: i64,
    pub summary: analysis::Summary,
    pub host_ids: Vec<i64>,
    pub first_seen: OffsetDateTime,
    pub last_run_at: OffsetDateTime,
}

impl SummaryRow {
    pub fn sizes_json(&self) -> String {
        let sizes: Vec<_> = self
            .summary
            .sizes
            .iter()
            .map(|&(size, median_ns, runs)| serde_json::json!({"size": size, "median_ns": median_ns, "runs": runs}))
            .collect();
        serde_json::Value::Array(sizes).to_string()
    }

    pub fn host_ids_json(&self) -> String {
        serde_json::to_string(&self.host_ids).expect("ids serialize")
    }
}

/// A pending run taken in by a pass, one row per workload it measured.
#[derive(sqlx::FromRow)]
pub(super) struct ClaimedFit {
    run_id: Uuid,
    lineage: String,
    version: String,
    host_id: i64,
    started_at: OffsetDateTime,
    received_at: OffsetDateTime,
    workload_id: i64,
    workload: String,
}

/// What the pass adds to one workload's summary: the host and start of each run taken in.
type Additions = HashMap<i64, Vec<(i64, OffsetDateTime)>>;

/// What one pass takes into one version.
#[derive(Default)]
struct VersionBatch {
    additions: Additions,
    workload_ids: HashMap<String, i64>,
    /// The latest arrival among the runs, the time of what the alert rules create.
    now: Option<OffsetDateTime>,
}

/// A fit in a version's window: run, workload, medians, slope, CI and R².
pub(super) type WindowFit = (Uuid, i64, String, f64, f64, f64, f64);
type SummaryInput = (i64, String, f64, f64, f64, f64, i64);

/// A fit that may enter a workload's window: its run's arrival and id, which order the window.
type WindowCandidate = (OffsetDateTime, Uuid, SummaryInput);

/// What the stored summaries keep across runs: every run and host counted, the first and last.
type StoredTotals = (String, String, i64, i32, String, OffsetDateTime, OffsetDateTime);
type SummaryTotals = (i64, i32, String, OffsetDateTime, OffsetDateTime);

#[derive(Default)]
struct WindowInputs {
    fits: Vec<RunFit>,
    medians: Vec<(u64, f64)>,
}

/// The new summaries of the workloads the pass touches: medians over the window, totals carried
/// forward with the runs taken in added.
fn summary_rows(
    inputs: Vec<SummaryInput>,
    totals: Vec<SummaryTotals>,
    additions: &Additions,
) -> Result<Vec<SummaryRow>, sqlx::Error> {
    let mut window: HashMap<i64, WindowInputs> = HashMap::new();
    for (workload_id, medians, slope, ci_low, ci_high, r2, host_id) in inputs {
        let w = window.entry(workload_id).or_default();
        let medians: Vec<(u64, f64)> = decode_json(&medians)?;
        w.medians.extend(medians);
        w.fits.push(RunFit { slope, ci_low, ci_high, r2, host_id });
    }
    let mut totals: HashMap<i64, (usize, Vec<i64>, OffsetDateTime, OffsetDateTime)> = totals
        .into_iter()
        .map(|(id, runs, hosts, first, last)| Ok((id, (runs as usize, decode_json(&hosts)?, first, last))))
        .collect::<Result<_, sqlx::Error>>()?;
    let mut rows = Vec::new();
    for (workload_id, w) in window {
        let Some(mut summary) = analysis::summarize(&w.fits, &w.medians) else { continue };
        let Some(added) = additions.get(&workload_id).filter(|a| !a.is_empty()) else { continue };
        let (mut runs, mut host_ids, mut first_seen, mut last_run_at) =
            totals.remove(&workload_id).unwrap_or((0, Vec::new(), added[0].1, added[0].1));
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
        rows.push(SummaryRow { workload_id, summary, host_ids, first_seen, last_run_at });
    }
    rows.sort_by_key(|r| r.workload_id);
    Ok(rows)
}

impl Store {
    /// Takes a run just stored into its version's summaries: at once, when no pass is under way
    /// (the caller waits for it), or by the pass that follows the one under way (the caller goes
    /// on). Passes then continue in the background until no stored run is left out.
    pub(super) async fn take_in_summaries(&self, config: &Config) {
        if self.summaries.busy.swap(true, Ordering::SeqCst) {
            return;
        }
        // The passes run in a task of their own: a caller that goes away (a client hanging up
        // cancels its request) cannot leave a pass half run and the turn taken for good.
        let (first_done, first) = tokio::sync::oneshot::channel();
        let (store, config) = (self.clone(), config.clone());
        self.spawn_writing(async move {
            let mut turn = TurnGuard(Some(store.summaries.clone()));
            store.summary_pass(&config).await;
            let _ = first_done.send(());
            while store.summaries.release() {
                // Let the runs of a busy spell gather, so a version's summary is worked out once
                // for many of its runs.
                tokio::time::sleep(GATHER).await;
                store.summary_pass(&config).await;
            }
            turn.0 = None;
        });
        let _ = first.await;
    }

    /// One pass over everything pending. Every run counted before it starts has committed, so the
    /// pass covers it; a failed pass is logged and its runs stay pending for the sweep.
    async fn summary_pass(&self, config: &Config) {
        let upto = self.summaries.stored.load(Ordering::SeqCst);
        if let Err(e) = self.summarize_pending(config).await {
            tracing::error!(error = %e, "cannot bring version summaries up to date; the runs stay pending");
        }
        self.summaries.taken_in.fetch_max(upto, Ordering::SeqCst);
    }

    /// How many stored runs their version summaries have not taken in yet.
    pub async fn pending_summaries(&self) -> Result<i64, sqlx::Error> {
        with_pool!(self, |pool| sqlx::query_scalar("SELECT COUNT(*) FROM pending_summaries").fetch_one(pool).await)
    }

    /// Takes every pending run into its version's summaries and alert rules; returns how many runs
    /// were taken in. Each transaction covers several versions; when one fails, its versions are
    /// tried one at a time, so a version that fails does not hold back the others, and the first
    /// error is returned once all were tried.
    pub async fn summarize_pending(&self, config: &Config) -> Result<usize, sqlx::Error> {
        let mut taken = 0;
        loop {
            let versions: Vec<(String, String)> = with_pool!(self, |pool| {
                sqlx::query_as(
                    "SELECT DISTINCT lineage, version FROM pending_summaries ORDER BY lineage, version LIMIT $1",
                )
                .bind(VERSIONS_PER_PASS)
                .fetch_all(pool)
                .await?
            });
            if versions.is_empty() {
                return Ok(taken);
            }
            let mut full = versions.len() == VERSIONS_PER_PASS as usize;
            let mut first_error = None;
            let per_tx = with_pool!(self, |_pool, dialect| dialect::SUMMARY_VERSIONS_PER_TX);
            let mut chunks: VecDeque<&[(String, String)]> = versions.chunks(per_tx).collect();
            while let Some(chunk) = chunks.pop_front() {
                match self.summarize_versions(chunk, config).await {
                    Ok(n) => {
                        taken += n;
                        full |= n == CLAIM_CHUNK as usize;
                    }
                    Err(e) if chunk.len() > 1 => {
                        tracing::warn!(error = %e, versions = chunk.len(), "a summary pass failed; trying each version alone");
                        for alone in chunk.chunks(1).rev() {
                            chunks.push_front(alone);
                        }
                    }
                    Err(e) => {
                        let (lineage, version) = &chunk[0];
                        tracing::error!(error = %e, lineage, version, "cannot update the version's summaries");
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

    /// Takes up to `CLAIM_CHUNK` pending runs of these versions (sorted, distinct) into their
    /// summaries in one transaction; returns how many.
    async fn summarize_versions(&self, versions: &[(String, String)], config: &Config) -> Result<usize, sqlx::Error> {
        let turn = self.writer_turn().await;
        let started = std::time::Instant::now();
        let taken = with_pool!(self, |pool, dialect| 'tx: {
            let mut tx = dialect::begin(pool).await?;
            // One pass at a time per version, across processes too: each claims its own runs, and
            // the summary it writes includes every run claimed before it.
            dialect::lock_versions(&mut tx, versions).await?;
            let mut q = QueryBuilder::new(
                "DELETE FROM pending_summaries WHERE run_id IN (
                     SELECT run_id FROM pending_summaries WHERE (lineage, version) IN ",
            );
            push_versions(&mut q, versions);
            q.push(" LIMIT ").push_bind(CLAIM_CHUNK).push(") RETURNING run_id");
            let claimed: Vec<Uuid> = q.build_query_scalar().fetch_all(&mut *tx).await?;
            if claimed.is_empty() {
                break 'tx 0;
            }

            let fits: Vec<ClaimedFit> = dialect::claimed_fits(&mut tx, &claimed).await?;
            let mut batches: BTreeMap<(String, String), VersionBatch> = BTreeMap::new();
            let mut claimed_runs: Vec<((String, String), Uuid, i64, OffsetDateTime)> = Vec::new();
            for f in fits {
                claimed_runs.push(((f.lineage.clone(), f.version.clone()), f.run_id, f.host_id, f.received_at));
                let b = batches.entry((f.lineage, f.version)).or_default();
                b.additions.entry(f.workload_id).or_default().push((f.host_id, f.started_at));
                b.workload_ids.insert(f.workload, f.workload_id);
                b.now = b.now.max(Some(f.received_at));
            }
            let touched: Vec<(String, String)> = batches.keys().cloned().collect();
            let mut ids: Vec<i64> = batches.values().flat_map(|b| b.additions.keys().copied()).collect();
            ids.sort_unstable();
            ids.dedup();

            // Each version's window: its latest runs by arrival, taken per toolchain build through
            // the (toolchain, arrival) index, which stops after a window's worth instead of sorting
            // every run the version ever had, then merged here.
            let mut q = QueryBuilder::new("SELECT id, name, version FROM toolchains WHERE (name, version) IN ");
            push_versions(&mut q, &touched);
            let builds: Vec<(i64, String, String)> = q.build_query_as().fetch_all(&mut *tx).await?;
            let position: HashMap<&(String, String), usize> = touched.iter().enumerate().map(|(k, v)| (v, k)).collect();
            let mut version_of = HashMap::new();
            let mut q = QueryBuilder::new("");
            for (i, (id, lineage, version)) in builds.into_iter().enumerate() {
                version_of.insert(id, position[&(lineage, version)]);
                if i > 0 {
                    q.push(" UNION ALL ");
                }
                q.push(format_args!(
                    "SELECT * FROM (SELECT r.toolchain_id, r.id, r.host_id, r.received_at FROM runs r
                     WHERE r.toolchain_id = {id} ORDER BY r.received_at DESC, r.id DESC LIMIT {SUMMARY_WINDOW}) AS b{i}"
                ));
            }
            let latest: Vec<(i64, Uuid, i64, OffsetDateTime)> = q.build_query_as().fetch_all(&mut *tx).await?;
            let mut windows: Vec<Vec<(OffsetDateTime, Uuid, i64)>> = vec![Vec::new(); touched.len()];
            for (toolchain_id, run_id, host_id, received_at) in latest {
                windows[version_of[&toolchain_id]].push((received_at, run_id, host_id));
            }
            // The runs taken in are candidates too: a workload that only runs older than the
            // version's latest measured still gets a window, of its own latest runs among them.
            let mut window_runs: HashMap<Uuid, (usize, i64, OffsetDateTime)> = HashMap::new();
            for (k, runs) in windows.iter_mut().enumerate() {
                runs.sort_unstable_by_key(|&(received_at, run_id, _)| std::cmp::Reverse((received_at, run_id)));
                for &(received_at, run_id, host_id) in runs.iter().take(SUMMARY_WINDOW as usize) {
                    window_runs.insert(run_id, (k, host_id, received_at));
                }
            }
            for (version, run_id, host_id, received_at) in claimed_runs {
                window_runs.insert(run_id, (position[&version], host_id, received_at));
            }
            let run_ids: Vec<Uuid> = window_runs.keys().copied().collect();
            let window: Vec<WindowFit> = dialect::window_fits(&mut tx, &run_ids, &ids).await?;

            let mut q = QueryBuilder::new(
                "SELECT lineage, version, workload_id, runs, host_ids, first_seen, last_run_at FROM version_summaries
                 WHERE (lineage, version) IN ",
            );
            push_versions(&mut q, &touched);
            q.push(" AND workload_id IN ");
            push_ids(&mut q, &ids);
            let stored: Vec<StoredTotals> = q.build_query_as().fetch_all(&mut *tx).await?;

            // Per version and workload, the fits of its latest `SUMMARY_WINDOW` runs.
            let mut candidates: HashMap<(usize, i64), Vec<WindowCandidate>> = HashMap::new();
            for (run_id, workload_id, medians, slope, ci_low, ci_high, r2) in window {
                let (k, host_id, received_at) = window_runs[&run_id];
                let fit = (workload_id, medians, slope, ci_low, ci_high, r2, host_id);
                candidates.entry((k, workload_id)).or_default().push((received_at, run_id, fit));
            }
            let mut inputs: Vec<Vec<SummaryInput>> = touched.iter().map(|_| Vec::new()).collect();
            for ((k, _), mut fits) in candidates {
                fits.sort_unstable_by_key(|&(received_at, run_id, _)| std::cmp::Reverse((received_at, run_id)));
                inputs[k].extend(fits.into_iter().take(SUMMARY_WINDOW as usize).map(|(_, _, fit)| fit));
            }
            let mut totals: HashMap<(String, String), Vec<SummaryTotals>> = HashMap::new();
            for (lineage, version, workload_id, runs, hosts, first, last) in stored {
                totals.entry((lineage, version)).or_default().push((workload_id, runs, hosts, first, last));
            }
            let mut summaries = Vec::new();
            for ((key, batch), inputs) in batches.iter().zip(inputs) {
                let rows = summary_rows(inputs, totals.remove(key).unwrap_or_default(), &batch.additions)?;
                summaries.push(rows);
            }

            let mut q = QueryBuilder::new(
                "INSERT INTO version_summaries (workload_id, lineage, version, slope, slope_min, slope_max,
                 ci_low, ci_high, r2, runs, hosts, host_ids, sizes, first_seen, last_run_at) ",
            );
            let mut rows: Vec<(&(String, String), &SummaryRow)> = Vec::new();
            for (key, version_rows) in touched.iter().zip(&summaries) {
                rows.extend(version_rows.iter().map(|row| (key, row)));
            }
            if !rows.is_empty() {
                q.push_values(rows, |mut b, ((lineage, version), row)| {
                    let s = &row.summary;
                    b.push_bind(row.workload_id)
                        .push_bind(lineage.clone())
                        .push_bind(version.clone())
                        .push_bind(s.slope)
                        .push_bind(s.slope_min)
                        .push_bind(s.slope_max)
                        .push_bind(s.ci_low)
                        .push_bind(s.ci_high)
                        .push_bind(s.r2)
                        .push_bind(s.runs as i32)
                        .push_bind(s.hosts as i32)
                        .push_bind(row.host_ids_json())
                        .push_bind(row.sizes_json())
                        .push_bind(row.first_seen)
                        .push_bind(row.last_run_at);
                });
                q.push(
                    " ON CONFLICT (workload_id, lineage, version) DO UPDATE SET slope = excluded.slope,
                     slope_min = excluded.slope_min, slope_max = excluded.slope_max, ci_low = excluded.ci_low,
                     ci_high = excluded.ci_high, r2 = excluded.r2, runs = excluded.runs, hosts = excluded.hosts,
                     host_ids = excluded.host_ids, sizes = excluded.sizes, first_seen = excluded.first_seen,
                     last_run_at = excluded.last_run_at",
                );
                q.build().execute(&mut *tx).await?;
            }

            // Versions in sorted order, each taking its lineage's lock after every version lock is
            // held: no pass waits for a version lock while holding a lineage lock.
            for (((lineage, version), batch), rows) in batches.iter().zip(&summaries) {
                let ctx = alerts::EvalContext {
                    lineage,
                    version,
                    current: alerts::currents(rows, &batch.workload_ids),
                    settings: &config.alerts,
                    public_url: config.public_url.as_deref(),
                    now: batch.now.unwrap_or_else(OffsetDateTime::now_utc),
                };
                alerts::evaluate_alerts!(tx, dialect, &ctx);
            }
            tx.commit().await?;
            claimed.len()
        });
        drop(turn);
        tracing::debug!(
            runs = taken,
            versions = versions.len(),
            elapsed_us = started.elapsed().as_micros() as u64,
            "summary pass"
        );
        Ok(taken)
    }
}

/// Appends `(VALUES ($1, $2), …)` for (lineage, version) pairs, each bound.
fn push_versions<'a, DB: sqlx::Database>(q: &mut QueryBuilder<'a, DB>, versions: &[(String, String)])
where
    String: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
{
    q.push("(VALUES ");
    for (i, (lineage, version)) in versions.iter().enumerate() {
        q.push(if i == 0 { "(" } else { ", (" });
        q.push_bind(lineage.clone()).push(", ").push_bind(version.clone()).push(")");
    }
    q.push(")");
}
