//! Storing runs, each whole or not at all, and marked pending for its version's summaries.
//!
//! On Postgres each request stores its own run, side by side with the others. On SQLite runs
//! queue for the one writer (`db/sqlite_writer.rs`), which stores every run waiting in one
//! transaction. A batch that fails is stored again one run at a time, so a run that cannot be
//! stored fails alone.

mod held;
mod lookup;
mod reads;

pub use held::HeldBy;
pub use reads::{MeasurementDetail, RunDetail, RunListRow, WorkloadDetail};
pub(super) use reads::{RunHeader, RUN_HEADER_COLUMNS, RUN_HEADER_FROM};

use super::db::columns::{axis_clash, unit_clash, Arrival, PendingRun, Step, VersionFromText};
use super::db::sql;
use super::Store;
use crate::model::WorkloadFit;
use lookup::{
    first_of_each, host_key, insert_keyed, select_stored, toolchain_key, unstored, BatchLookup, Key, HOST_KEY,
    TOOLCHAIN_KEY,
};
use serde::Serialize;
use slopewatch_core::wire::{FieldError, Metric, RunSubmission, SizeUnit};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::Ordering;
use time::OffsetDateTime;
use uuid::Uuid;

/// A workload a batch stores first, under its metric, in the unit its first run gave.
struct NewWorkload<'a> {
    name: &'a str,
    metric: Metric,
    unit: SizeUnit,
    first_seen: OffsetDateTime,
}

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
    /// Stores a validated run, arriving as `arrival` says, and its fits whole, or not at all, and
    /// marks it pending for its version's summaries (which `intake` brings up to date).
    pub async fn insert_run(
        &self,
        run: &RunSubmission,
        fits: &[WorkloadFit],
        arrival: &Arrival,
    ) -> Result<InsertOutcome, sqlx::Error> {
        let pending = PendingRun::new(run, fits, arrival);
        let content_hash = pending.content_hash.clone();
        let step = match &self.run_queue {
            Some(queue) => queue.write(pending).await,
            None => self.write_runs(std::slice::from_ref(&pending)).await.pop().expect("one outcome per run"),
        };
        self.note_write(&step);
        let step = step?;
        Ok(match step {
            Step::Stored => InsertOutcome::Created(RunReceipt::from_fits(run.run_id, fits)),
            Step::AlreadyThere(hash) if hash == content_hash => {
                InsertOutcome::Existing(self.run_receipt(run.run_id).await?)
            }
            Step::AlreadyThere(_) => InsertOutcome::Conflict,
            Step::Invalid(e) => InsertOutcome::Invalid(e),
        })
    }

    /// Stores `runs` in one transaction; when that fails, or a concurrent writer got in its way,
    /// one transaction per run, so each run's outcome is its own.
    pub(super) async fn write_runs(&self, runs: &[PendingRun]) -> Vec<Result<Step, sqlx::Error>> {
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
        let lineages: Vec<&str> =
            runs.iter().map(|r| r.toolchain.name.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
        let host_keys: Vec<Key> = first_of_each(runs.iter().map(|r| host_key(&r.host)), |k| k.clone());
        let toolchain_keys: Vec<Key> = first_of_each(runs.iter().map(|r| toolchain_key(&r.toolchain)), |k| k.clone());
        let mut conn = self.pool.acquire().await?;
        let steps = 'write: {
            // Everything the batch needs to know, in one statement. On Postgres, a lone run that
            // adds no host, toolchain build or workload is then written by one more.
            let mut stored = BatchLookup::new(runs.len());
            let found = select_stored(&run_ids, &names, &lineages, &host_keys, &toolchain_keys);
            stored.read(conn.exec().all(&found).await?, &host_keys, &toolchain_keys)?;

            // Each run's outcome unless it is to be stored, judged in order as if the runs came
            // one after another: a run id taken earlier in the batch is already there, a workload's
            // unit is the first one it was stored in, and a lineage's version axis that of its
            // first run.
            let mut units: HashMap<String, SizeUnit> = stored.units.clone();
            let mut axes: HashMap<String, VersionFromText> = stored.lineages.clone();
            let mut steps: Vec<Option<Step>> = Vec::with_capacity(runs.len());
            let mut taken: HashMap<Uuid, &str> = HashMap::new();
            for (run, hash) in runs.iter().zip(&stored.hashes) {
                let step = if let Some(hash) = hash {
                    Some(Step::AlreadyThere(hash.clone()))
                } else if let Some(hash) = taken.get(&run.run_id) {
                    Some(Step::AlreadyThere(hash.to_string()))
                } else if let Some(e) = run.axis_conflict(&axes).or_else(|| run.unit_conflict(&units)) {
                    Some(Step::Invalid(e))
                } else {
                    for (name, unit) in &run.workloads {
                        units.entry(name.clone()).or_insert(*unit);
                    }
                    let axis = run.toolchain.version_from.as_str();
                    axes.entry(run.toolchain.name.clone()).or_insert_with(|| axis.to_string());
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

            // Lineages, hosts, toolchain builds and workloads (by name and metric) the runs to store
            // name and the database lacks, each first seen when the first run naming it arrived.
            let new_lineages: Vec<(&str, &str, OffsetDateTime)> = first_of_each(
                to_store.iter().map(|r| (r.toolchain.name.as_str(), r.toolchain.version_from.as_str(), r.received_at)),
                |&(name, _, _)| name,
            )
            .into_iter()
            .filter(|(name, _, _)| !stored.lineages.contains_key(*name))
            .collect();
            let new_hosts = unstored(to_store.iter().map(|r| (host_key(&r.host), r.received_at)), &stored.hosts);
            let new_toolchains =
                unstored(to_store.iter().map(|r| (toolchain_key(&r.toolchain), r.received_at)), &stored.toolchains);
            let new_workloads: Vec<NewWorkload> = first_of_each(
                to_store
                    .iter()
                    .flat_map(|r| r.workloads.iter().map(move |(name, _)| (name.as_str(), r.metric, r.received_at))),
                |&(name, metric, _)| (name, metric),
            )
            .into_iter()
            .filter(|&(name, metric, _)| !stored.workloads.contains_key(&(name.to_string(), metric)))
            .map(|(name, metric, first_seen)| NewWorkload { name, metric, unit: units[name], first_seen })
            .collect();

            let adds_nothing = new_lineages.is_empty()
                && new_hosts.is_empty()
                && new_toolchains.is_empty()
                && new_workloads.is_empty();
            let inserted = if conn.one_statement() && to_store.len() == 1 && adds_nothing {
                conn.insert_runs(&stored.rows(&to_store)?).await?
            } else {
                let mut tx = conn.begin().await?;
                // Inserted only when missing, since an upsert would lock the shared rows and
                // serialize concurrent ingests from one machine.
                if !new_lineages.is_empty() {
                    let mut q = sql("INSERT INTO lineages (name, version_from, first_seen) ");
                    q.push_values(&new_lineages, |row, &(name, axis, at)| {
                        row.bind(name).bind(axis).bind(at);
                    });
                    q.push(" ON CONFLICT (name) DO NOTHING");
                    tx.exec().execute(&q).await?;
                }
                if !new_hosts.is_empty() {
                    tx.exec().execute(&insert_keyed("hosts", HOST_KEY, &new_hosts)).await?;
                }
                if !new_toolchains.is_empty() {
                    tx.exec().execute(&insert_keyed("toolchains", TOOLCHAIN_KEY, &new_toolchains)).await?;
                }
                if !new_workloads.is_empty() {
                    let mut q = sql("INSERT INTO workloads (name, metric, size_unit, first_seen) ");
                    q.push_values(&new_workloads, |row, w| {
                        row.bind(w.name).bind(w.metric.as_str()).bind(w.unit.as_str()).bind(w.first_seen);
                    });
                    q.push(" ON CONFLICT (name, metric) DO NOTHING");
                    tx.exec().execute(&q).await?;
                }
                if !adds_nothing {
                    // Each row exists now, inserted here or by a concurrent writer (Postgres).
                    let names: Vec<&str> = new_workloads.iter().map(|w| w.name).collect();
                    let lineages: Vec<&str> = new_lineages.iter().map(|&(name, _, _)| name).collect();
                    let hosts: Vec<Key> = new_hosts.into_iter().map(|(k, _)| k).collect();
                    let toolchains: Vec<Key> = new_toolchains.into_iter().map(|(k, _)| k).collect();
                    let found = select_stored(&[], &names, &lineages, &hosts, &toolchains);
                    stored.read(tx.exec().all(&found).await?, &hosts, &toolchains)?;
                }
                for &(name, axis, _) in &new_lineages {
                    let Some(stored_axis) = stored.lineages.get(name).filter(|a| a.as_str() != axis) else {
                        continue;
                    };
                    // A concurrent writer started the lineage on the other axis (Postgres).
                    if runs.len() > 1 {
                        break 'write None;
                    }
                    break 'write Some(vec![Step::Invalid(axis_clash(&to_store[0].toolchain, stored_axis))]);
                }
                for w in &new_workloads {
                    let Some(&stored_unit) = stored.units.get(w.name).filter(|&&u| u != w.unit) else {
                        continue;
                    };
                    // A concurrent writer created the workload in another unit (Postgres).
                    if runs.len() > 1 {
                        break 'write None;
                    }
                    let run = to_store[0];
                    let i = run.workloads.iter().position(|(n, _)| n == w.name).expect("the run's workload");
                    break 'write Some(vec![Step::Invalid(unit_clash(i, w.name, stored_unit, run.workloads[i].1))]);
                }
                let inserted = tx.insert_runs(&stored.rows(&to_store)?).await?;
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
                let q = sql("SELECT content_hash FROM runs WHERE id = $1").bind(runs[0].run_id);
                let hash = conn.exec().value(&q).await?.ok_or(sqlx::Error::RowNotFound)?;
                break 'write Some(vec![Step::AlreadyThere(hash)]);
            }
            // Counted once committed and before any writer hears back, so a summary pass that
            // starts after an answer covers the run (`Store::runs_stored`).
            self.stored.fetch_add(to_store.len() as u64, Ordering::SeqCst);
            Some(steps.into_iter().map(|s| s.unwrap_or(Step::Stored)).collect())
        };
        Ok(steps)
    }

    /// How many runs this process has stored, counted as each commits, before its writer is
    /// answered: a pass over what is pending that starts after this is read covers them all.
    pub fn runs_stored(&self) -> u64 {
        self.stored.load(Ordering::SeqCst)
    }

    /// The fits of a stored run, as answered to the agent.
    pub async fn run_receipt(&self, run_id: Uuid) -> Result<RunReceipt, sqlx::Error> {
        let q = sql("SELECT w.name AS workload, f.slope, f.ci_low, f.ci_high, f.r2, f.n_sizes
             FROM fits f JOIN workloads w ON w.id = f.workload_id WHERE f.run_id = $1 ORDER BY w.name")
        .bind(run_id);
        Ok(RunReceipt { run_id, fits: self.all(&q).await? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::db::columns::Arrival;
    use crate::store::db::Pool;
    use crate::store::OpenOptions;
    use serde_json::{json, Value};

    async fn sqlite_store(dir: &tempfile::TempDir) -> Store {
        let url = format!("sqlite://{}", dir.path().join("runs.db").display());
        let store = Store::open(&url, &OpenOptions::default()).await.unwrap();
        store.migrate_schema().await.unwrap();
        store
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
        let Pool::Sqlite(pool) = &store.pool else { unreachable!("a SQLite store") };
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
        let Pool::Sqlite(pool) = &store.pool else { unreachable!("a SQLite store") };
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
