//! Storing a run: one transaction for the run, its fits, medians and samples; then its version's
//! summaries take it in (`summaries.rs`).

use super::{with_pool, Store};
use crate::analysis::WorkloadFit;
use crate::config::Config;
use serde::Serialize;
use slopewatch_core::wire::{FieldError, RunSubmission};
use sqlx::QueryBuilder;
use std::collections::HashMap;
use time::OffsetDateTime;
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

/// The rows one run adds, flattened column by column for batch inserts.
#[derive(Default)]
pub(super) struct RunRows {
    pub fits: FitColumns,
    pub measurements: MeasurementColumns,
}

#[derive(Default)]
pub(super) struct FitColumns {
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

#[derive(Default)]
pub(super) struct MeasurementColumns {
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

impl RunRows {
    fn new(run: &RunSubmission, fits: &[WorkloadFit], workload_ids: &HashMap<String, i64>) -> RunRows {
        let mut rows = RunRows::default();
        for (w, wf) in run.workloads.iter().zip(fits) {
            let id = workload_ids[&w.name];
            let f = &mut rows.fits;
            f.workload_id.push(id);
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
                let m = &mut rows.measurements;
                m.workload_id.push(id);
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
        rows
    }
}

enum Step {
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
        let now = arrival.received_at;
        let started_at = run.started_at.to_offset(time::UtcOffset::UTC);
        let content_hash = arrival.content_hash.clone().unwrap_or_else(|| run.content_hash());
        let (h, t) = (&run.host, &run.toolchain);

        let turn = self.writer_turn().await;
        let step = with_pool!(self, |pool, dialect| 'tx: {
            let mut tx = dialect::begin(pool).await?;
            let existing: Option<(String,)> = sqlx::query_as("SELECT content_hash FROM runs WHERE id = $1")
                .bind(run.run_id)
                .fetch_optional(&mut *tx)
                .await?;
            if let Some((hash,)) = existing {
                break 'tx Step::AlreadyThere(hash);
            }

            // Look up first and insert only when missing: an upsert would lock the shared host and
            // toolchain rows and serialize every concurrent ingest from the same machine.
            let select_host = "SELECT id FROM hosts WHERE name = $1 AND cpu = $2 AND kernel = $3 AND arch = $4";
            // At most two turns: after the insert, the row exists (ours, or a concurrent one's).
            let host_id: i64 = loop {
                let found = sqlx::query_scalar(select_host)
                    .bind(&h.name)
                    .bind(&h.cpu)
                    .bind(&h.kernel)
                    .bind(&h.arch)
                    .fetch_optional(&mut *tx)
                    .await?;
                if let Some(id) = found {
                    break id;
                }
                sqlx::query(
                    "INSERT INTO hosts (name, cpu, kernel, arch, first_seen) VALUES ($1, $2, $3, $4, $5)
                     ON CONFLICT (name, cpu, kernel, arch) DO NOTHING",
                )
                .bind(&h.name)
                .bind(&h.cpu)
                .bind(&h.kernel)
                .bind(&h.arch)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            };

            let select_toolchain = "SELECT id FROM toolchains WHERE name = $1 AND version = $2 AND libc = $3
                 AND target = $4 AND compiler = $5 AND flags = $6";
            let toolchain_id: i64 = loop {
                let found = sqlx::query_scalar(select_toolchain)
                    .bind(&t.name)
                    .bind(&t.version)
                    .bind(&t.libc)
                    .bind(&t.target)
                    .bind(&t.compiler)
                    .bind(&t.flags)
                    .fetch_optional(&mut *tx)
                    .await?;
                if let Some(id) = found {
                    break id;
                }
                sqlx::query(
                    "INSERT INTO toolchains (name, version, libc, target, compiler, flags, first_seen)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)
                     ON CONFLICT (name, version, libc, target, compiler, flags) DO NOTHING",
                )
                .bind(&t.name)
                .bind(&t.version)
                .bind(&t.libc)
                .bind(&t.target)
                .bind(&t.compiler)
                .bind(&t.flags)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            };

            let mut q = QueryBuilder::new("SELECT name, id, size_unit FROM workloads WHERE name IN (");
            let mut names = q.separated(", ");
            for w in &run.workloads {
                names.push_bind(&w.name);
            }
            q.push(")");
            let known: Vec<(String, i64, String)> = q.build_query_as().fetch_all(&mut *tx).await?;
            let mut workload_ids = HashMap::new();
            for (name, id, unit) in known {
                let (i, w) = run.workloads.iter().enumerate().find(|(_, w)| w.name == name).expect("selected by name");
                if unit != w.size_unit.as_str() {
                    break 'tx Step::Invalid(FieldError {
                        field: format!("workloads[{i}].size_unit"),
                        reason: format!("workload {name:?} is measured in {unit}, not {}", w.size_unit),
                    });
                }
                workload_ids.insert(name, id);
            }
            let missing: Vec<_> = run.workloads.iter().filter(|w| !workload_ids.contains_key(&w.name)).collect();
            for w in missing {
                sqlx::query(
                    "INSERT INTO workloads (name, size_unit, first_seen) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
                )
                .bind(&w.name).bind(w.size_unit.as_str()).bind(now)
                .execute(&mut *tx)
                .await?;
                let (id, unit): (i64, String) = sqlx::query_as("SELECT id, size_unit FROM workloads WHERE name = $1")
                    .bind(&w.name)
                    .fetch_one(&mut *tx)
                    .await?;
                if unit != w.size_unit.as_str() {
                    break 'tx Step::Invalid(FieldError {
                        field: "workloads".into(),
                        reason: format!("workload {:?} is measured in {unit}, not {}", w.name, w.size_unit),
                    });
                }
                workload_ids.insert(w.name.clone(), id);
            }

            let inserted = sqlx::query(
                "INSERT INTO runs (id, content_hash, agent_version, started_at, received_at, host_id, toolchain_id, sample_count,
                                   samples_pruned_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING",
            )
            .bind(run.run_id)
            .bind(&content_hash)
            .bind(&run.agent_version)
            .bind(started_at)
            .bind(now)
            .bind(host_id)
            .bind(toolchain_id)
            .bind(arrival.pruned.map_or(run.sample_count() as i32, |p| p.count))
            .bind(arrival.pruned.map(|p| p.at))
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if inserted == 0 {
                // A concurrent submission of the same id committed first.
                let (hash,): (String,) = sqlx::query_as("SELECT content_hash FROM runs WHERE id = $1")
                    .bind(run.run_id)
                    .fetch_one(&mut *tx)
                    .await?;
                break 'tx Step::AlreadyThere(hash);
            }

            let rows = RunRows::new(run, fits, &workload_ids);
            dialect::insert_fits(&mut tx, run.run_id, &rows.fits).await?;
            dialect::insert_measurements(&mut tx, run.run_id, &rows.measurements).await?;

            // The version's summaries and alert rules take the run in after it commits, together
            // with the runs stored beside it (`Store::take_in_summaries`).
            sqlx::query("INSERT INTO pending_summaries (run_id, lineage, version) VALUES ($1, $2, $3)")
                .bind(run.run_id)
                .bind(&t.name)
                .bind(&t.version)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            self.summaries.count_stored();
            Step::Stored
        });
        drop(turn);

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
