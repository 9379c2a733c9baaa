//! Retention: removing old runs' raw samples in short transactions. A pruned run keeps its fits,
//! per-size medians and sample counts, which are all that charts, series and summaries read.

use super::db::sql;
use super::Store;
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

/// Runs looked at per transaction.
const RUNS_PER_BATCH: i64 = 64;
/// Samples removed per transaction, roughly: a batch stops taking runs once it has this many
/// (and always takes one), so no transaction holds the write lock for long.
const SAMPLES_PER_BATCH: i64 = 20_000;

/// What pruning removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    /// Runs whose raw samples were removed.
    pub runs: u64,
    /// Samples removed.
    pub samples: u64,
}

impl std::ops::AddAssign for PruneReport {
    fn add_assign(&mut self, other: PruneReport) {
        self.runs += other.runs;
        self.samples += other.samples;
    }
}

/// A run whose samples may be pruned.
#[derive(sqlx::FromRow)]
struct PruneCandidate {
    id: Uuid,
    sample_count: i32,
}

impl Store {
    /// Removes the raw samples of the oldest runs received before `received_before` that still
    /// have them, one bounded batch in one transaction, marking them pruned at `at`. A report of
    /// zero runs means none is left.
    pub async fn prune_samples_batch(
        &self,
        received_before: OffsetDateTime,
        at: OffsetDateTime,
    ) -> Result<PruneReport, sqlx::Error> {
        let mut tx = self.begin().await?;
        let q = sql("SELECT id, sample_count FROM runs WHERE samples_pruned_at IS NULL AND received_at < $1
             ORDER BY received_at LIMIT $2");
        let candidates: Vec<PruneCandidate> = tx.exec().all(&q.bind(received_before).bind(RUNS_PER_BATCH)).await?;
        let mut budget = SAMPLES_PER_BATCH;
        let batch: Vec<PruneCandidate> = candidates
            .into_iter()
            .enumerate()
            .take_while(|(i, run)| {
                let room = *i == 0 || budget >= i64::from(run.sample_count);
                budget -= i64::from(run.sample_count);
                room
            })
            .map(|(_, run)| run)
            .collect();
        if batch.is_empty() {
            return Ok(PruneReport::default());
        }
        let ids = || batch.iter().map(|run| run.id);
        let mut clear = sql("UPDATE measurements SET samples_ns = NULL, instructions = NULL WHERE run_id IN ");
        clear.push_tuple(ids());
        tx.exec().execute(&clear).await?;
        let mut mark = sql("UPDATE runs SET samples_pruned_at = ");
        mark.push_bind(at).push(" WHERE samples_pruned_at IS NULL AND id IN ").push_tuple(ids());
        let runs = tx.exec().execute(&mark).await?;
        tx.commit().await?;
        let samples = batch.iter().map(|run| run.sample_count.max(0) as u64).sum();
        Ok(PruneReport { runs, samples })
    }
}
