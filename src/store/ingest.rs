//! Storing runs: each run whole or not at all; then its version's summaries take it in
//! (`summaries.rs`).
//!
//! On Postgres each request stores its own run, side by side with the others. SQLite has one
//! writer, so there runs queue for it (`RunQueue`) and the writer stores every run waiting in one
//! transaction: the lookups, inserts and commit a run would pay alone are shared by all of them
//! (group commit). A batch that fails is stored again one run at a time, so a run that cannot be
//! stored fails alone.

use super::{with_pool, Backend, Store};
use crate::analysis::WorkloadFit;
use crate::config::Config;
use serde::Serialize;
use slopewatch_core::wire::{FieldError, Host, RunSubmission, SizeUnit, Toolchain};
use sqlx::QueryBuilder;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use time::OffsetDateTime;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

/// What happened to a submitted run.
#[derive(Debug)]
pub enum InsertOutcome {
    /// Stored now.
    Created(RunReceipt),
    /// Already stored with the same content; nothing was written.
    Existing(RunReceipt),
    /// The run id is taken by a run with different content.
    Conflict,
    /// The run contradicts what is stored (e.g. a workload's size unit).
    Invalid(FieldError),
}

/// The stored run's id and fits, as answered to the agent.
#[derive(Debug, Clone, Serialize)]
pub struct RunReceipt {
    pub run_id: Uuid,
    pub fits: Vec<FitReceipt>,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct FitReceipt {
    pub workload: String,
    pub slope: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub r2: f64,
    pub n_sizes: i32,
}

/// How a run reaches the store: from an agent just now, or carried over from another store.
#[derive(Debug, Clone)]
pub struct Arrival {
    /// When the run counts as received; also the time of what storing it creates (hosts,
    /// toolchains, workloads first seen, regressions and their events).
    pub received_at: OffsetDateTime,
    /// The digest the run was first submitted with, which resubmissions are compared against;
    /// `None` takes it from the run.
    pub content_hash: Option<String>,
    /// Set for a run whose raw samples were pruned before it was carried over. Such a run comes
    /// with empty sample lists; its fits' medians are what is stored.
    pub pruned: Option<PrunedSamples>,
}

/// What is left to know about raw samples that retention removed.
#[derive(Debug, Clone, Copy)]
pub struct PrunedSamples {
    pub at: OffsetDateTime,
    /// How many samples the run had.
    pub count: i32,
}

impl Arrival {
    /// A run submitted now.
    pub fn now() -> Arrival {
        Arrival { received_at: OffsetDateTime::now_utc(), content_hash: None, pruned: None }
    }
}

/// A run ready to store: what its rows need, owned, so a writer can store it beside others.
pub(super) struct PendingRun {
    run_id: Uuid,
    /// The digest resubmissions are compared against.
    content_hash: String,
    agent_version: String,
    started_at: OffsetDateTime,
    received_at: OffsetDateTime,
    host: Host,
    toolchain: Toolchain,
    /// Each workload's name and size unit, in the submission's order.
    workloads: Vec<(String, SizeUnit)>,
    sample_count: i32,
    samples_pruned_at: Option<OffsetDateTime>,
    /// The run's rows, each `workload_id` the workload's index in `workloads` until the writer
    /// knows the ids.
    fits: FitColumns,
    measurements: MeasurementColumns,
}

/// Fit rows, column by column for batch inserts.
#[derive(Default)]
pub(super) struct FitColumns {
    pub run_id: Vec<Uuid>,
    pub workload_id: Vec<i64>,
    pub source_hash: Vec<String>,
    pub slope: Vec<f64>,
    pub intercept: Vec<f64>,
    pub r2: Vec<f64>,
    pub stderr: Vec<f64>,
    pub ci_low: Vec<f64>,
    pub ci_high: Vec<f64>,
    pub n_sizes: Vec<i32>,
    pub min_size: Vec<i64>,
    pub max_size: Vec<i64>,
    pub local_slopes: Vec<String>,
    pub metadata: Vec<String>,
    /// `[[size, median_ns], …]` by size, which version summaries read.
    pub medians: Vec<String>,
}

/// Measurement rows (one per workload and size), column by column for batch inserts.
#[derive(Default)]
pub(super) struct MeasurementColumns {
    pub run_id: Vec<Uuid>,
    pub workload_id: Vec<i64>,
    pub size: Vec<i64>,
    pub median_ns: Vec<f64>,
    pub samples: Vec<i32>,
    /// The raw samples as a JSON array, in the order taken; `None` for a run carried over
    /// after its samples were pruned.
    pub samples_ns: Vec<Option<String>>,
    /// Instruction counts per sample as a JSON array, when the agent counted them.
    pub instructions: Vec<Option<String>>,
}

/// Run rows, column by column for batch inserts, with each run's version for its pending mark.
#[derive(Default)]
pub(super) struct RunColumns<'a> {
    pub id: Vec<Uuid>,
    pub content_hash: Vec<&'a str>,
    pub agent_version: Vec<&'a str>,
    pub started_at: Vec<OffsetDateTime>,
    pub received_at: Vec<OffsetDateTime>,
    pub host_id: Vec<i64>,
    pub toolchain_id: Vec<i64>,
    pub sample_count: Vec<i32>,
    pub samples_pruned_at: Vec<Option<OffsetDateTime>>,
    pub lineage: Vec<&'a str>,
    pub version: Vec<&'a str>,
}

/// The rows of runs about to be stored, their workloads' ids known.
#[derive(Default)]
pub(super) struct NewRuns<'a> {
    pub runs: RunColumns<'a>,
    pub fits: FitColumns,
    pub measurements: MeasurementColumns,
}

impl<'a> NewRuns<'a> {
    /// Appends `run`'s rows, with its host's, toolchain build's and workloads' ids.
    fn append(&mut self, run: &'a PendingRun, host_id: i64, toolchain_id: i64, workload_ids: &[i64]) {
        let r = &mut self.runs;
        r.id.push(run.run_id);
        r.content_hash.push(&run.content_hash);
        r.agent_version.push(&run.agent_version);
        r.started_at.push(run.started_at);
        r.received_at.push(run.received_at);
        r.host_id.push(host_id);
        r.toolchain_id.push(toolchain_id);
        r.sample_count.push(run.sample_count);
        r.samples_pruned_at.push(run.samples_pruned_at);
        r.lineage.push(&run.toolchain.name);
        r.version.push(&run.toolchain.version);
        self.fits.append(&run.fits, workload_ids);
        self.measurements.append(&run.measurements, workload_ids);
    }
}

impl FitColumns {
    /// Appends a pending run's rows, with `ids` for its workloads' indexes.
    fn append(&mut self, run: &FitColumns, ids: &[i64]) {
        self.run_id.extend_from_slice(&run.run_id);
        self.workload_id.extend(run.workload_id.iter().map(|&i| ids[i as usize]));
        self.source_hash.extend_from_slice(&run.source_hash);
        self.slope.extend_from_slice(&run.slope);
        self.intercept.extend_from_slice(&run.intercept);
        self.r2.extend_from_slice(&run.r2);
        self.stderr.extend_from_slice(&run.stderr);
        self.ci_low.extend_from_slice(&run.ci_low);
        self.ci_high.extend_from_slice(&run.ci_high);
        self.n_sizes.extend_from_slice(&run.n_sizes);
        self.min_size.extend_from_slice(&run.min_size);
        self.max_size.extend_from_slice(&run.max_size);
        self.local_slopes.extend_from_slice(&run.local_slopes);
        self.metadata.extend_from_slice(&run.metadata);
        self.medians.extend_from_slice(&run.medians);
    }
}

impl MeasurementColumns {
    /// Appends a pending run's rows, with `ids` for its workloads' indexes.
    fn append(&mut self, run: &MeasurementColumns, ids: &[i64]) {
        self.run_id.extend_from_slice(&run.run_id);
        self.workload_id.extend(run.workload_id.iter().map(|&i| ids[i as usize]));
        self.size.extend_from_slice(&run.size);
        self.median_ns.extend_from_slice(&run.median_ns);
        self.samples.extend_from_slice(&run.samples);
        self.samples_ns.extend_from_slice(&run.samples_ns);
        self.instructions.extend_from_slice(&run.instructions);
    }
}

impl PendingRun {
    fn new(run: &RunSubmission, fits: &[WorkloadFit], arrival: &Arrival) -> PendingRun {
        let mut pending = PendingRun {
            run_id: run.run_id,
            content_hash: arrival.content_hash.clone().unwrap_or_else(|| run.content_hash()),
            agent_version: run.agent_version.clone(),
            started_at: run.started_at.to_offset(time::UtcOffset::UTC),
            received_at: arrival.received_at,
            host: run.host.clone(),
            toolchain: run.toolchain.clone(),
            workloads: run.workloads.iter().map(|w| (w.name.clone(), w.size_unit)).collect(),
            sample_count: arrival.pruned.map_or(run.sample_count() as i32, |p| p.count),
            samples_pruned_at: arrival.pruned.map(|p| p.at),
            fits: FitColumns::default(),
            measurements: MeasurementColumns::default(),
        };
        for (index, (w, wf)) in run.workloads.iter().zip(fits).enumerate() {
            let index = index as i64;
            let f = &mut pending.fits;
            f.run_id.push(run.run_id);
            f.workload_id.push(index);
            f.source_hash.push(w.source_hash.clone());
            f.slope.push(wf.fit.slope);
            f.intercept.push(wf.fit.intercept);
            f.r2.push(wf.fit.r2);
            f.stderr.push(wf.fit.stderr);
            f.ci_low.push(wf.fit.ci_low);
            f.ci_high.push(wf.fit.ci_high);
            f.n_sizes.push(wf.fit.n as i32);
            f.min_size.push(wf.medians.first().map_or(0, |m| m.0 as i64));
            f.max_size.push(wf.medians.last().map_or(0, |m| m.0 as i64));
            f.local_slopes.push(serde_json::to_string(&wf.fit.local_slopes).expect("local slopes serialize"));
            f.metadata.push(serde_json::to_string(&w.metadata).expect("metadata serializes"));
            let medians: Vec<(u64, f64)> = wf.medians.iter().map(|&(size, median, _)| (size, median)).collect();
            f.medians.push(serde_json::to_string(&medians).expect("medians serialize"));
            for &(size, median, n) in &wf.medians {
                let raw = w.measurements.iter().find(|m| m.size == size);
                let m = &mut pending.measurements;
                m.run_id.push(run.run_id);
                m.workload_id.push(index);
                m.size.push(size as i64);
                m.median_ns.push(median);
                m.samples.push(n as i32);
                let samples_ns = raw.map(|r| &r.samples_ns).filter(|ns| !ns.is_empty());
                m.samples_ns.push(samples_ns.map(|ns| serde_json::to_string(ns).expect("samples serialize")));
                let instructions = raw.and_then(|r| r.instructions.as_ref()).filter(|i| !i.is_empty()).map(|i| {
                    let counts: Vec<i64> = i.iter().map(|&n| n.min(i64::MAX as u64) as i64).collect();
                    serde_json::to_string(&counts).expect("counts serialize")
                });
                m.instructions.push(instructions);
            }
        }
        pending
    }

    /// The first of the run's workloads whose size unit differs from the one it is stored in, or
    /// is about to be stored in by a run ahead of this one.
    fn unit_conflict(&self, units: &HashMap<String, SizeUnitText>) -> Option<FieldError> {
        self.workloads.iter().enumerate().find_map(|(i, (name, unit))| {
            let stored = units.get(name)?;
            (stored.as_str() != unit.as_str()).then(|| unit_clash(i, name, stored, *unit))
        })
    }
}

/// The error for workload `i` of a run, measured in `unit` where `name` is stored in `stored`.
fn unit_clash(i: usize, name: &str, stored: &str, unit: SizeUnit) -> FieldError {
    FieldError {
        field: format!("workloads[{i}].size_unit"),
        reason: format!("workload {name:?} is measured in {stored}, not {unit}"),
    }
}

/// A workload's size unit as the database spells it.
type SizeUnitText = String;

/// What storing one run came to.
#[derive(Debug)]
pub(super) enum Step {
    Stored,
    AlreadyThere(String),
    Invalid(FieldError),
}

impl RunReceipt {
    /// The receipt of a run just stored, from the fits in hand rather than a read back.
    fn from_fits(run_id: Uuid, fits: &[WorkloadFit]) -> RunReceipt {
        let mut fits: Vec<FitReceipt> = fits
            .iter()
            .map(|f| FitReceipt {
                workload: f.workload.clone(),
                slope: f.fit.slope,
                ci_low: f.fit.ci_low,
                ci_high: f.fit.ci_high,
                r2: f.fit.r2,
                n_sizes: f.fit.n as i32,
            })
            .collect();
        fits.sort_by(|a, b| a.workload.cmp(&b.workload));
        RunReceipt { run_id, fits }
    }
}

/// Most runs one SQLite transaction stores.
const MAX_BATCH: usize = 32;

/// A run waiting for the SQLite writer, and where its outcome goes.
type QueuedRun = (PendingRun, oneshot::Sender<Result<Step, sqlx::Error>>);

/// On SQLite, the runs waiting for the one writer, which takes all of them at its turn.
#[derive(Clone, Debug)]
pub(super) struct RunQueue {
    runs: mpsc::Sender<QueuedRun>,
    /// Runs handed to the writer and not yet answered.
    unanswered: Arc<AtomicUsize>,
    /// The writer's thread, where summary passes run too.
    thread: tokio::runtime::Handle,
}

impl RunQueue {
    /// Starts the writer of `store`'s runs; it stops when the last handle on the queue is gone.
    pub(super) fn start(store: Store) -> std::io::Result<RunQueue> {
        let (runs, mut queue) = mpsc::channel::<QueuedRun>(MAX_BATCH * 4);
        let unanswered = Arc::new(AtomicUsize::new(0));
        let answered = unanswered.clone();
        let writer = async move {
            let mut checkpoints = tokio::time::interval(super::sqlite::CHECKPOINT_EVERY);
            checkpoints.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut checkpoint: Option<tokio::task::JoinHandle<()>> = None;
            loop {
                let first = tokio::select! {
                    first = queue.recv() => match first {
                        Some(first) => first,
                        None => break,
                    },
                    _ = checkpoints.tick() => {
                        if checkpoint.as_ref().is_none_or(|c| c.is_finished()) {
                            let store = store.clone();
                            checkpoint = Some(tokio::spawn(async move { store.checkpoint().await }));
                        }
                        continue;
                    }
                };
                // Runs that arrive while the writer waits for its turn join this batch.
                let turn = store.writer_turn().await;
                let mut batch = vec![first];
                while batch.len() < MAX_BATCH {
                    match queue.try_recv() {
                        Ok(next) => batch.push(next),
                        Err(_) => break,
                    }
                }
                let size = batch.len();
                let (runs, replies): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
                // In a task of its own, so a panic fails this batch's requests, not the writer.
                let writer = store.clone();
                let results = tokio::spawn(async move { writer.write_runs(&runs).await }).await;
                drop(turn);
                if let Ok(results) = results {
                    for (reply, result) in replies.into_iter().zip(results) {
                        // A request that went away before its answer: its run is stored anyway.
                        let _ = reply.send(result);
                    }
                }
                answered.fetch_sub(size, Ordering::SeqCst);
            }
        };
        // On a thread of its own, so the writer's many short waits on the database are not each
        // queued behind the requests being parsed and fitted on the server's threads.
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let thread = runtime.handle().clone();
        std::thread::Builder::new().name("sqlite-writer".into()).spawn(move || runtime.block_on(writer))?;
        Ok(RunQueue { runs, unanswered, thread })
    }

    async fn write(&self, run: PendingRun) -> Result<Step, sqlx::Error> {
        let (reply, answer) = oneshot::channel();
        self.unanswered.fetch_add(1, Ordering::SeqCst);
        if self.runs.send((run, reply)).await.is_err() {
            self.unanswered.fetch_sub(1, Ordering::SeqCst);
            return Err(sqlx::Error::WorkerCrashed);
        }
        answer.await.map_err(|_| sqlx::Error::WorkerCrashed)?
    }
}

/// The columns that identify a host, and a toolchain build.
const HOST_KEY: &[&str] = &["name", "cpu", "kernel", "arch"];
const TOOLCHAIN_KEY: &[&str] = &["name", "version", "libc", "target", "compiler", "flags"];

/// A host's or toolchain build's identifying values, in its key's column order.
type Key<'a> = Vec<&'a str>;

fn host_key(host: &Host) -> Key<'_> {
    vec![&host.name, &host.cpu, &host.kernel, &host.arch]
}

fn toolchain_key(t: &Toolchain) -> Key<'_> {
    vec![&t.name, &t.version, &t.libc, &t.target, &t.compiler, &t.flags]
}

/// What a row of `select_stored` found: a run, a workload, a host or a toolchain build.
const RUN: i32 = 0;
const WORKLOAD: i32 = 1;
const HOST: i32 = 2;
const TOOLCHAIN: i32 = 3;

/// A row of `select_stored`: what it found, the index of what was looked up, its id, and two
/// texts (a run's content hash; a workload's name and unit).
type FoundRow = (i32, i32, Option<i64>, Option<String>, Option<String>);

/// One statement looking up, each arm by index: the runs stored under `run_ids`, the workloads
/// named, and the hosts and toolchain builds keyed.
fn select_stored<'a, DB: sqlx::Database>(
    run_ids: &[Uuid],
    names: &[&'a str],
    hosts: &[Key<'a>],
    toolchains: &[Key<'a>],
) -> QueryBuilder<'a, DB>
where
    &'a str: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    Uuid: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
{
    // Every arm spells out its columns' types, as Postgres matches them arm by arm.
    let mut q = QueryBuilder::new("");
    let arm = |q: &mut QueryBuilder<'a, DB>, select: std::fmt::Arguments| {
        if !q.sql().is_empty() {
            q.push(" UNION ALL ");
        }
        q.push(select);
    };
    for (k, id) in run_ids.iter().enumerate() {
        arm(
            &mut q,
            format_args!(
                "SELECT {RUN}, {k}, CAST(NULL AS BIGINT), content_hash, CAST(NULL AS TEXT) FROM runs WHERE id = "
            ),
        );
        q.push_bind(*id);
    }
    if !names.is_empty() {
        arm(&mut q, format_args!("SELECT {WORKLOAD}, 0, id, name, size_unit FROM workloads WHERE name IN ("));
        let mut list = q.separated(", ");
        for name in names {
            list.push_bind(*name);
        }
        q.push(")");
    }
    for (kind, table, columns, keys) in
        [(HOST, "hosts", HOST_KEY, hosts), (TOOLCHAIN, "toolchains", TOOLCHAIN_KEY, toolchains)]
    {
        for (k, key) in keys.iter().enumerate() {
            arm(
                &mut q,
                format_args!("SELECT {kind}, {k}, id, CAST(NULL AS TEXT), CAST(NULL AS TEXT) FROM {table} WHERE "),
            );
            for (c, (column, value)) in columns.iter().zip(key).enumerate() {
                q.push(if c > 0 { " AND " } else { "" }).push(column).push(" = ").push_bind(*value);
            }
        }
    }
    q
}

/// What the database holds of a batch's runs and of the rows they refer to.
struct Stored<'a> {
    /// The content hash of the run stored under each of the batch's run ids, by the run's index.
    hashes: Vec<Option<String>>,
    /// Each stored workload's id and unit, by name.
    workloads: HashMap<String, (i64, SizeUnitText)>,
    hosts: HashMap<Key<'a>, i64>,
    toolchains: HashMap<Key<'a>, i64>,
}

impl<'a> Stored<'a> {
    fn new(runs: usize) -> Stored<'a> {
        Stored {
            hashes: vec![None; runs],
            workloads: HashMap::new(),
            hosts: HashMap::new(),
            toolchains: HashMap::new(),
        }
    }

    /// Takes in the rows a `select_stored` for `hosts` and `toolchains` found.
    fn read(&mut self, rows: Vec<FoundRow>, hosts: &[Key<'a>], toolchains: &[Key<'a>]) {
        for (kind, k, id, a, b) in rows {
            let k = k as usize;
            match (kind, id, a, b) {
                (RUN, _, hash, _) => self.hashes[k] = hash,
                (WORKLOAD, Some(id), Some(name), Some(unit)) => drop(self.workloads.insert(name, (id, unit))),
                (HOST, Some(id), _, _) => drop(self.hosts.insert(hosts[k].clone(), id)),
                (TOOLCHAIN, Some(id), _, _) => drop(self.toolchains.insert(toolchains[k].clone(), id)),
                _ => {}
            }
        }
    }

    /// The rows of `runs`, with the ids of the hosts, toolchain builds and workloads they name.
    fn rows(&self, runs: &[&'a PendingRun]) -> Result<NewRuns<'a>, sqlx::Error> {
        let mut rows = NewRuns::default();
        for run in runs {
            let host_id = self.hosts.get(&host_key(&run.host));
            let toolchain_id = self.toolchains.get(&toolchain_key(&run.toolchain));
            let workload_ids: Option<Vec<i64>> =
                run.workloads.iter().map(|(name, _)| self.workloads.get(name).map(|w| w.0)).collect();
            let (Some(&host_id), Some(&toolchain_id), Some(workload_ids)) = (host_id, toolchain_id, workload_ids)
            else {
                return Err(sqlx::Error::RowNotFound);
            };
            rows.append(run, host_id, toolchain_id, &workload_ids);
        }
        Ok(rows)
    }
}

/// Of `keys`, each with when the first run naming it arrived, the distinct ones `stored` lacks.
fn unstored<'a>(
    keys: impl Iterator<Item = (Key<'a>, OffsetDateTime)>,
    stored: &HashMap<Key<'a>, i64>,
) -> Vec<(Key<'a>, OffsetDateTime)> {
    first_of_each(keys, |(k, _)| k.clone()).into_iter().filter(|(k, _)| !stored.contains_key(k)).collect()
}

/// Inserts each of `keys`, first seen at its time, into `table` unless a concurrent writer got
/// there first.
fn insert_keyed<'a, DB: sqlx::Database>(
    table: &str,
    columns: &[&str],
    keys: &[(Key<'a>, OffsetDateTime)],
) -> QueryBuilder<'a, DB>
where
    &'a str: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    OffsetDateTime: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
{
    let columns = columns.join(", ");
    let mut q = QueryBuilder::new(format!("INSERT INTO {table} ({columns}, first_seen) "));
    q.push_values(keys, |mut row, (key, at)| {
        for value in key.iter() {
            row.push_bind(*value);
        }
        row.push_bind(*at);
    });
    q.push(format_args!(" ON CONFLICT ({columns}) DO NOTHING"));
    q
}

impl Store {
    /// Stores a validated run and its fits whole, or not at all; then its version's summaries take
    /// it in, with the regressions and alert deliveries it causes under `config`'s rules (before
    /// this returns when no summary pass was under way, by the next pass when one was).
    pub async fn insert_run(
        &self,
        run: &RunSubmission,
        fits: &[WorkloadFit],
        config: &Config,
    ) -> Result<InsertOutcome, sqlx::Error> {
        self.insert_run_as(run, fits, config, &Arrival::now()).await
    }

    /// `insert_run` for a run that arrives as `arrival` says, e.g. from another store's export.
    pub async fn insert_run_as(
        &self,
        run: &RunSubmission,
        fits: &[WorkloadFit],
        config: &Config,
        arrival: &Arrival,
    ) -> Result<InsertOutcome, sqlx::Error> {
        let pending = PendingRun::new(run, fits, arrival);
        let content_hash = pending.content_hash.clone();
        let step = match &self.run_queue {
            Some(queue) => queue.write(pending).await?,
            None => self.write_runs(std::slice::from_ref(&pending)).await.pop().expect("one outcome per run")?,
        };
        Ok(match step {
            Step::Stored => {
                self.take_in_summaries(config).await;
                InsertOutcome::Created(RunReceipt::from_fits(run.run_id, fits))
            }
            Step::AlreadyThere(hash) if hash == content_hash => {
                InsertOutcome::Existing(self.run_receipt(run.run_id).await?)
            }
            Step::AlreadyThere(_) => InsertOutcome::Conflict,
            Step::Invalid(e) => InsertOutcome::Invalid(e),
        })
    }

    /// Stores `runs` in one transaction; when that fails, or a concurrent writer got in its way,
    /// one transaction per run, so each run's outcome is its own.
    async fn write_runs(&self, runs: &[PendingRun]) -> Vec<Result<Step, sqlx::Error>> {
        let started = std::time::Instant::now();
        let error = match self.write_batch(runs).await {
            Ok(Some(steps)) => {
                tracing::debug!(runs = runs.len(), elapsed_us = started.elapsed().as_micros() as u64, "runs written");
                return steps.into_iter().map(Ok).collect();
            }
            Err(e) if runs.len() == 1 => return vec![Err(e)],
            Ok(None) => None,
            Err(e) => Some(e),
        };
        tracing::warn!(runs = runs.len(), error = error.map(|e| e.to_string()), "storing a batch of runs one by one");
        let mut outcomes = Vec::with_capacity(runs.len());
        for run in runs {
            let outcome = self.write_batch(std::slice::from_ref(run)).await;
            outcomes.push(outcome.map(|steps| steps.and_then(|mut s| s.pop()).expect("a lone run has its outcome")));
        }
        outcomes
    }

    /// Stores each of `runs` that is new and consistent with what is stored, all in one
    /// transaction (on Postgres, a lone run that adds no host, toolchain build or workload in one
    /// statement); returns each run's outcome in order, or `None` when a concurrent writer
    /// changed the rows the batch depends on (Postgres only; never for a lone run).
    async fn write_batch(&self, runs: &[PendingRun]) -> Result<Option<Vec<Step>>, sqlx::Error> {
        let run_ids: Vec<Uuid> = runs.iter().map(|r| r.run_id).collect();
        let names: Vec<&str> = runs
            .iter()
            .flat_map(|r| r.workloads.iter().map(|(n, _)| n.as_str()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let host_keys: Vec<Key> = first_of_each(runs.iter().map(|r| host_key(&r.host)), |k| k.clone());
        let toolchain_keys: Vec<Key> = first_of_each(runs.iter().map(|r| toolchain_key(&r.toolchain)), |k| k.clone());
        let stored_steps = with_pool!(self, |pool, dialect| 'write: {
            let mut conn = pool.acquire().await?;
            // Everything the batch needs to know, in one statement. On Postgres, a lone run that
            // adds no host, toolchain build or workload is then written by one more.
            let mut stored = Stored::new(runs.len());
            let mut found = select_stored(&run_ids, &names, &host_keys, &toolchain_keys);
            stored.read(found.build_query_as().fetch_all(&mut *conn).await?, &host_keys, &toolchain_keys);

            // Each run's outcome unless it is to be stored, judged in order as if the runs came
            // one after another: a run id taken earlier in the batch is already there, and a
            // workload's unit is the first one it was stored in.
            let mut units: HashMap<String, SizeUnitText> =
                stored.workloads.iter().map(|(name, (_, unit))| (name.clone(), unit.clone())).collect();
            let mut steps: Vec<Option<Step>> = Vec::with_capacity(runs.len());
            let mut taken: HashMap<Uuid, &str> = HashMap::new();
            for (run, hash) in runs.iter().zip(&stored.hashes) {
                let step = if let Some(hash) = hash {
                    Some(Step::AlreadyThere(hash.clone()))
                } else if let Some(hash) = taken.get(&run.run_id) {
                    Some(Step::AlreadyThere(hash.to_string()))
                } else if let Some(e) = run.unit_conflict(&units) {
                    Some(Step::Invalid(e))
                } else {
                    for (name, unit) in &run.workloads {
                        units.entry(name.clone()).or_insert_with(|| unit.as_str().to_string());
                    }
                    taken.insert(run.run_id, &run.content_hash);
                    None
                };
                steps.push(step);
            }
            let to_store: Vec<&PendingRun> =
                runs.iter().zip(&steps).filter(|(_, s)| s.is_none()).map(|(r, _)| r).collect();
            if to_store.is_empty() {
                break 'write Some(steps.into_iter().map(|s| s.expect("every run judged")).collect());
            }

            // Hosts, toolchain builds and workloads the runs to store name and the database lacks,
            // each first seen when the first run naming it arrived.
            let new_hosts = unstored(to_store.iter().map(|r| (host_key(&r.host), r.received_at)), &stored.hosts);
            let new_toolchains =
                unstored(to_store.iter().map(|r| (toolchain_key(&r.toolchain), r.received_at)), &stored.toolchains);
            let new_workloads: Vec<(&str, &str, OffsetDateTime)> = first_of_each(
                to_store.iter().flat_map(|r| r.workloads.iter().map(move |(name, _)| (name.as_str(), r.received_at))),
                |&(name, _)| name,
            )
            .into_iter()
            .filter(|(name, _)| !stored.workloads.contains_key(*name))
            .map(|(name, at)| (name, units[name].as_str(), at))
            .collect();

            let adds_nothing = new_hosts.is_empty() && new_toolchains.is_empty() && new_workloads.is_empty();
            let inserted = if dialect::ONE_STATEMENT && to_store.len() == 1 && adds_nothing {
                dialect::insert_runs(&mut conn, &stored.rows(&to_store)?).await?
            } else {
                let mut tx = dialect::begin_on(&mut conn).await?;
                // Inserted only when missing, since an upsert would lock the shared rows and
                // serialize concurrent ingests from one machine.
                if !new_hosts.is_empty() {
                    insert_keyed("hosts", HOST_KEY, &new_hosts).build().execute(&mut *tx).await?;
                }
                if !new_toolchains.is_empty() {
                    insert_keyed("toolchains", TOOLCHAIN_KEY, &new_toolchains).build().execute(&mut *tx).await?;
                }
                if !new_workloads.is_empty() {
                    let mut q = QueryBuilder::new("INSERT INTO workloads (name, size_unit, first_seen) ");
                    q.push_values(&new_workloads, |mut row, (name, unit, at)| {
                        row.push_bind(*name).push_bind(*unit).push_bind(*at);
                    });
                    q.push(" ON CONFLICT (name) DO NOTHING");
                    q.build().execute(&mut *tx).await?;
                }
                if !adds_nothing {
                    // Each row exists now, inserted here or by a concurrent writer (Postgres).
                    let names: Vec<&str> = new_workloads.iter().map(|&(name, _, _)| name).collect();
                    let hosts: Vec<Key> = new_hosts.into_iter().map(|(k, _)| k).collect();
                    let toolchains: Vec<Key> = new_toolchains.into_iter().map(|(k, _)| k).collect();
                    let mut found = select_stored(&[], &names, &hosts, &toolchains);
                    stored.read(found.build_query_as().fetch_all(&mut *tx).await?, &hosts, &toolchains);
                }
                for &(name, unit, _) in &new_workloads {
                    let Some((_, stored_unit)) = stored.workloads.get(name).filter(|(_, u)| u != unit) else {
                        continue;
                    };
                    // A concurrent writer created the workload in another unit (Postgres).
                    if runs.len() > 1 {
                        break 'write None;
                    }
                    let run = to_store[0];
                    let i = run.workloads.iter().position(|(n, _)| n == name).expect("the run's workload");
                    break 'write Some(vec![Step::Invalid(unit_clash(i, name, stored_unit, run.workloads[i].1))]);
                }
                let inserted = dialect::insert_runs(&mut tx, &stored.rows(&to_store)?).await?;
                if inserted == to_store.len() as u64 {
                    tx.commit().await?;
                }
                inserted
            };
            if inserted != to_store.len() as u64 {
                // A concurrent submission of the same id got there first (Postgres), and nothing
                // of this batch was kept.
                if runs.len() > 1 {
                    break 'write None;
                }
                let (hash,): (String,) = sqlx::query_as("SELECT content_hash FROM runs WHERE id = $1")
                    .bind(runs[0].run_id)
                    .fetch_one(&mut *conn)
                    .await?;
                break 'write Some(vec![Step::AlreadyThere(hash)]);
            }
            // The versions' summaries and alert rules take the runs in after they commit, together
            // with the runs stored beside them (`Store::take_in_summaries`).
            for _ in &to_store {
                self.summaries.count_stored();
            }
            Some(steps.into_iter().map(|s| s.unwrap_or(Step::Stored)).collect())
        });
        Ok(stored_steps)
    }

    /// Copies SQLite's write-ahead log into the database file (`sqlite::checkpoint`).
    async fn checkpoint(&self) {
        if let Backend::Sqlite(pool) = &self.backend {
            if pool.is_closed() {
                return;
            }
            if let Err(e) = super::sqlite::checkpoint(pool, &self.sqlite_writer, super::sqlite::LOG_LIMIT).await {
                tracing::warn!(error = %e, "cannot checkpoint the SQLite log; it is tried again in a second");
            }
        }
    }

    /// Runs `task` where this store's writes run best: on SQLite, on the writer's thread.
    pub(super) fn spawn_writing(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        match &self.run_queue {
            Some(queue) => drop(queue.thread.spawn(task)),
            None => drop(tokio::spawn(task)),
        }
    }

    /// How many runs the SQLite writer holds, waiting or being written (none on Postgres).
    pub fn queued_runs(&self) -> usize {
        self.run_queue.as_ref().map_or(0, |queue| queue.unanswered.load(Ordering::SeqCst))
    }

    /// The fits of a stored run, as answered to the agent.
    pub async fn run_receipt(&self, run_id: Uuid) -> Result<RunReceipt, sqlx::Error> {
        let fits = with_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT w.name AS workload, f.slope, f.ci_low, f.ci_high, f.r2, f.n_sizes
                 FROM fits f JOIN workloads w ON w.id = f.workload_id WHERE f.run_id = $1 ORDER BY w.name",
            )
            .bind(run_id)
            .fetch_all(pool)
            .await?
        });
        Ok(RunReceipt { run_id, fits })
    }
}

/// The first of `items` for each distinct `key`, in order.
fn first_of_each<T, K: Eq + std::hash::Hash>(items: impl Iterator<Item = T>, key: impl Fn(&T) -> K) -> Vec<T> {
    let mut seen = HashSet::new();
    items.filter(|item| seen.insert(key(item))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::OpenOptions;
    use serde_json::{json, Value};

    async fn sqlite_store(dir: &tempfile::TempDir) -> Store {
        let url = format!("sqlite://{}", dir.path().join("runs.db").display());
        Store::open_and_migrate(&url, &OpenOptions::default()).await.unwrap()
    }

    fn body(host: &str, workload: &str, unit: &str) -> Value {
        let measurements: Vec<Value> = (0..4)
            .map(|i| {
                let size = 1024u64 << i;
                json!({"size": size, "samples_ns": [size as f64, size as f64 * 1.01]})
            })
            .collect();
        json!({
            "run_id": Uuid::new_v4(), "agent_version": "0.1.0", "started_at": "2026-11-29T21:00:00Z",
            "host": {"name": host}, "toolchain": {"name": "gcc-glibc", "version": "12.2.0"},
            "workloads": [{"name": workload, "size_unit": unit, "measurements": measurements}],
        })
    }

    fn pending(body: &Value) -> PendingRun {
        let run = RunSubmission::from_json(&serde_json::to_vec(body).unwrap()).unwrap();
        let fits = crate::analysis::fit_run(&run).unwrap();
        PendingRun::new(&run, &fits, &Arrival::now())
    }

    async fn query<T: Send + Unpin + for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>>(
        store: &Store,
        sql: &str,
    ) -> Vec<T> {
        let Backend::Sqlite(pool) = &store.backend else { unreachable!("a SQLite store") };
        sqlx::query_as(sql).fetch_all(pool).await.unwrap()
    }

    #[tokio::test]
    async fn a_batch_answers_each_run_as_if_they_came_one_after_another() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite_store(&dir).await;
        let outcomes = store.write_runs(&[pending(&body("stored-host", "strchr", "bytes"))]).await;
        assert!(matches!(outcomes[..], [Ok(Step::Stored)]), "{outcomes:?}");

        let a = body("host-a", "fresh", "bytes");
        let mut a_changed = a.clone();
        a_changed["agent_version"] = "0.2.0".into();
        let batch = [
            pending(&a),
            pending(&a),
            pending(&a_changed),
            pending(&body("host-b", "strchr", "bytes")),
            // `fresh` is measured in bytes by the first run of the batch, `strchr` by the stored one.
            pending(&body("host-c", "fresh", "records")),
            pending(&body("host-d", "strchr", "items")),
        ];
        let outcomes = store.write_runs(&batch).await;
        let steps: Vec<&Step> = outcomes.iter().map(|o| o.as_ref().unwrap()).collect();
        assert!(matches!(steps[0], Step::Stored), "{steps:?}");
        for repeat in [steps[1], steps[2]] {
            assert!(matches!(repeat, Step::AlreadyThere(hash) if *hash == batch[0].content_hash), "{steps:?}");
        }
        assert!(matches!(steps[3], Step::Stored), "{steps:?}");
        for (refused, stored_unit) in [(steps[4], "bytes"), (steps[5], "bytes")] {
            let Step::Invalid(e) = refused else { panic!("{steps:?}") };
            assert_eq!(e.field, "workloads[0].size_unit");
            assert!(e.reason.contains(&format!("measured in {stored_unit}")), "{e:?}");
        }

        // The refused runs left nothing behind: not their hosts, not their units.
        let hosts: Vec<(String,)> = query(&store, "SELECT name FROM hosts ORDER BY name").await;
        let hosts: Vec<&str> = hosts.iter().map(|h| h.0.as_str()).collect();
        assert_eq!(hosts, ["host-a", "host-b", "stored-host"]);
        let workloads: Vec<(String, String)> =
            query(&store, "SELECT name, size_unit FROM workloads ORDER BY name").await;
        assert_eq!(workloads, [("fresh".into(), "bytes".into()), ("strchr".into(), "bytes".into())]);
        let runs: Vec<(i64, i64, i64)> = query(
            &store,
            "SELECT (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM measurements), (SELECT COUNT(*) FROM pending_summaries)",
        )
        .await;
        assert_eq!(runs, [(3, 12, 3)], "three runs of one workload at four sizes, each pending once");
    }

    #[tokio::test]
    async fn the_log_is_copied_into_the_database_file_in_the_background() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite_store(&dir).await;
        let file = dir.path().join("runs.db");
        let size_before = std::fs::metadata(&file).unwrap().len();
        // More rows than the pages the migrations left fit, so the copy must grow the file (the
        // first copy may run before `size_before` is taken).
        let batch: Vec<PendingRun> = (0..32).map(|i| pending(&body(&format!("host-{i}"), "strchr", "bytes"))).collect();
        assert!(store.write_runs(&batch).await.iter().all(|o| matches!(o, Ok(Step::Stored))));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::fs::metadata(&file).unwrap().len() <= size_before {
            assert!(std::time::Instant::now() < deadline, "the log was never copied into the database file");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    #[tokio::test]
    async fn a_run_the_database_refuses_fails_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite_store(&dir).await;
        let Backend::Sqlite(pool) = &store.backend else { unreachable!("a SQLite store") };
        sqlx::query(
            "CREATE TRIGGER refuse BEFORE INSERT ON runs WHEN NEW.agent_version = 'refused'
             BEGIN SELECT RAISE(ABORT, 'refused'); END",
        )
        .execute(pool)
        .await
        .unwrap();
        let mut refused = body("host-b", "strchr", "bytes");
        refused["agent_version"] = "refused".into();
        let batch = [
            pending(&body("host-a", "strchr", "bytes")),
            pending(&refused),
            pending(&body("host-c", "strchr", "bytes")),
        ];
        let outcomes = store.write_runs(&batch).await;
        assert!(matches!(outcomes[..], [Ok(Step::Stored), Err(_), Ok(Step::Stored)]), "{outcomes:?}");
        let hosts: Vec<(String,)> = query(&store, "SELECT name FROM hosts ORDER BY name").await;
        assert_eq!(hosts, [("host-a".to_string(),), ("host-c".to_string(),)]);
    }
}
