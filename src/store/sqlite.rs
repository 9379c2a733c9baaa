//! The SQLite side of the SQL that differs: batch inserts as multi-row `VALUES`.
//!
//! SQLite has one writer at a time, so a version needs no lock of its own.

use super::ingest::{FitColumns, MeasurementColumns};
use sqlx::{QueryBuilder, Sqlite, SqlitePool, Transaction};
use uuid::Uuid;

/// Starts a write transaction holding the write lock from the start: a deferred one that reads
/// first cannot upgrade to a writer while another connection writes, and fails instead of waiting.
pub(super) async fn begin(pool: &SqlitePool) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
    pool.begin_with("BEGIN IMMEDIATE").await
}

/// Rows per statement: SQLite allows 32,766 bound values, and a fit binds 15.
const ROWS_PER_STATEMENT: usize = 2000;

async fn insert_chunked<F>(
    tx: &mut Transaction<'_, Sqlite>,
    head: &str,
    rows: usize,
    mut push_row: F,
) -> Result<(), sqlx::Error>
where
    F: FnMut(&mut sqlx::query_builder::Separated<'_, '_, Sqlite, &'static str>, usize),
{
    let mut start = 0;
    while start < rows {
        let end = (start + ROWS_PER_STATEMENT).min(rows);
        let mut q = QueryBuilder::<Sqlite>::new(head);
        q.push_values(start..end, |mut b, i| push_row(&mut b, i));
        q.build().execute(&mut **tx).await?;
        start = end;
    }
    Ok(())
}

pub(super) async fn insert_fits(
    tx: &mut Transaction<'_, Sqlite>,
    run_id: Uuid,
    f: &FitColumns,
) -> Result<(), sqlx::Error> {
    let head = "INSERT INTO fits (run_id, workload_id, source_hash, slope, intercept, r2, stderr, ci_low, ci_high,
                n_sizes, min_size, max_size, local_slopes, metadata, medians) ";
    insert_chunked(tx, head, f.workload_id.len(), |b, i| {
        b.push_bind(run_id)
            .push_bind(f.workload_id[i])
            .push_bind(f.source_hash[i].clone())
            .push_bind(f.slope[i])
            .push_bind(f.intercept[i])
            .push_bind(f.r2[i])
            .push_bind(f.stderr[i])
            .push_bind(f.ci_low[i])
            .push_bind(f.ci_high[i])
            .push_bind(f.n_sizes[i])
            .push_bind(f.min_size[i])
            .push_bind(f.max_size[i])
            .push_bind(f.local_slopes[i].clone())
            .push_bind(f.metadata[i].clone())
            .push_bind(f.medians[i].clone());
    })
    .await
}

pub(super) async fn insert_measurements(
    tx: &mut Transaction<'_, Sqlite>,
    run_id: Uuid,
    m: &MeasurementColumns,
) -> Result<(), sqlx::Error> {
    let head = "INSERT INTO measurements (run_id, workload_id, size, median_ns, samples, samples_ns, instructions) ";
    insert_chunked(tx, head, m.workload_id.len(), |b, i| {
        b.push_bind(run_id)
            .push_bind(m.workload_id[i])
            .push_bind(m.size[i])
            .push_bind(m.median_ns[i])
            .push_bind(m.samples[i])
            .push_bind(m.samples_ns[i].clone())
            .push_bind(m.instructions[i].clone());
    })
    .await
}

/// Most versions one summary transaction covers, which bounds how long it keeps the one writer
/// from the runs waiting to be stored (p99 97 ms at 8 clients with every version in one
/// transaction, 52 ms with 8).
pub(super) const SUMMARY_VERSIONS_PER_TX: usize = 8;

pub(super) async fn lock_versions(
    _tx: &mut Transaction<'_, Sqlite>,
    _versions: &[(String, String)],
) -> Result<(), sqlx::Error> {
    Ok(())
}

pub(super) async fn lock_lineage(_tx: &mut Transaction<'_, Sqlite>, _lineage: &str) -> Result<(), sqlx::Error> {
    Ok(())
}

/// SQLite has one writer, so a claiming `UPDATE` already excludes every other worker.
pub(super) const SKIP_LOCKED: &str = "";

/// Starts a transaction whose reads all see one snapshot: in WAL mode a read transaction keeps
/// the snapshot of its first read until it ends.
pub(super) async fn begin_snapshot(pool: &SqlitePool) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
    pool.begin().await
}
