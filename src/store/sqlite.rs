//! The SQLite side of the SQL that differs: batch inserts as multi-row `VALUES`, a statement per
//! table.
//!
//! SQLite has one writer at a time, so a version needs no lock of its own.

use super::ingest::NewRuns;
use super::push_ids;
use super::summaries::{ClaimedFit, WindowFit};
use sqlx::{Connection, QueryBuilder, Sqlite, SqliteConnection, SqlitePool, Transaction};
use uuid::Uuid;

/// Starts a write transaction holding the write lock from the start: a deferred one that reads
/// first cannot upgrade to a writer while another connection writes, and fails instead of waiting.
pub(super) async fn begin(pool: &SqlitePool) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
    pool.begin_with("BEGIN IMMEDIATE").await
}

/// Starts a write transaction on a connection already in hand, as `begin` does.
pub(super) async fn begin_on(conn: &mut SqliteConnection) -> Result<Transaction<'_, Sqlite>, sqlx::Error> {
    conn.begin_with("BEGIN IMMEDIATE").await
}

/// `insert_runs` takes a statement per table, so it runs in a transaction.
pub(super) const ONE_STATEMENT: bool = false;

/// Rows per statement: SQLite allows 32,766 bound values, and a fit binds 15.
const ROWS_PER_STATEMENT: usize = 2000;

/// Inserts `rows` rows, `push_row` binding each, as few multi-row statements; returns how many
/// rows were inserted.
async fn insert_chunked<'a, F>(
    conn: &mut SqliteConnection,
    head: &str,
    rows: usize,
    mut push_row: F,
) -> Result<u64, sqlx::Error>
where
    F: FnMut(&mut sqlx::query_builder::Separated<'_, 'a, Sqlite, &'static str>, usize),
{
    let mut inserted = 0;
    let mut start = 0;
    while start < rows {
        let end = (start + ROWS_PER_STATEMENT).min(rows);
        let mut q = QueryBuilder::<'a, Sqlite>::new(head);
        q.push_values(start..end, |mut b, i| push_row(&mut b, i));
        inserted += q.build().execute(&mut *conn).await?.rows_affected();
        start = end;
    }
    Ok(inserted)
}

/// Stores the runs with their fits, measurements and pending marks, a statement per table, in the
/// caller's transaction; returns how many runs it stored. The one writer looked the run ids up
/// just before, so a taken id is an error here, not a run to skip.
pub(super) async fn insert_runs(conn: &mut SqliteConnection, new: &NewRuns<'_>) -> Result<u64, sqlx::Error> {
    let (r, f, m) = (&new.runs, &new.fits, &new.measurements);
    let head = "INSERT INTO runs (id, content_hash, agent_version, started_at, received_at, host_id, toolchain_id,
                sample_count, samples_pruned_at) ";
    let stored = insert_chunked(conn, head, r.id.len(), |b, i| {
        b.push_bind(r.id[i])
            .push_bind(r.content_hash[i])
            .push_bind(r.agent_version[i])
            .push_bind(r.started_at[i])
            .push_bind(r.received_at[i])
            .push_bind(r.host_id[i])
            .push_bind(r.toolchain_id[i])
            .push_bind(r.sample_count[i])
            .push_bind(r.samples_pruned_at[i]);
    })
    .await?;
    let head = "INSERT INTO fits (run_id, workload_id, source_hash, slope, intercept, r2, stderr, ci_low, ci_high,
                n_sizes, min_size, max_size, local_slopes, metadata, medians) ";
    insert_chunked(conn, head, f.run_id.len(), |b, i| {
        b.push_bind(f.run_id[i])
            .push_bind(f.workload_id[i])
            .push_bind(f.source_hash[i].as_str())
            .push_bind(f.slope[i])
            .push_bind(f.intercept[i])
            .push_bind(f.r2[i])
            .push_bind(f.stderr[i])
            .push_bind(f.ci_low[i])
            .push_bind(f.ci_high[i])
            .push_bind(f.n_sizes[i])
            .push_bind(f.min_size[i])
            .push_bind(f.max_size[i])
            .push_bind(f.local_slopes[i].as_str())
            .push_bind(f.metadata[i].as_str())
            .push_bind(f.medians[i].as_str());
    })
    .await?;
    let head = "INSERT INTO measurements (run_id, workload_id, size, median_ns, samples, samples_ns, instructions) ";
    insert_chunked(conn, head, m.run_id.len(), |b, i| {
        b.push_bind(m.run_id[i])
            .push_bind(m.workload_id[i])
            .push_bind(m.size[i])
            .push_bind(m.median_ns[i])
            .push_bind(m.samples[i])
            .push_bind(m.samples_ns[i].as_deref())
            .push_bind(m.instructions[i].as_deref());
    })
    .await?;
    let head = "INSERT INTO pending_summaries (run_id, lineage, version) ";
    insert_chunked(conn, head, r.id.len(), |b, i| {
        b.push_bind(r.id[i]).push_bind(r.lineage[i]).push_bind(r.version[i]);
    })
    .await?;
    Ok(stored)
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

/// The runs `claimed` by a summary pass, one row per workload each measured.
pub(super) async fn claimed_fits(
    tx: &mut Transaction<'_, Sqlite>,
    claimed: &[Uuid],
) -> Result<Vec<ClaimedFit>, sqlx::Error> {
    let mut q = QueryBuilder::new(
        "SELECT r.id AS run_id, t.name AS lineage, t.version, r.host_id, r.started_at, r.received_at, f.workload_id,
                w.name AS workload
         FROM runs r JOIN toolchains t ON t.id = r.toolchain_id JOIN fits f ON f.run_id = r.id
         JOIN workloads w ON w.id = f.workload_id
         WHERE r.id IN ",
    );
    push_ids(&mut q, claimed);
    q.build_query_as().fetch_all(&mut **tx).await
}

/// The fits of `run_ids` for `workload_ids`, reached through their runs: the unary plus keeps
/// SQLite from going through the workload index, which reads every run ever stored of those
/// workloads.
pub(super) async fn window_fits(
    tx: &mut Transaction<'_, Sqlite>,
    run_ids: &[Uuid],
    workload_ids: &[i64],
) -> Result<Vec<WindowFit>, sqlx::Error> {
    let mut q =
        QueryBuilder::new("SELECT run_id, workload_id, medians, slope, ci_low, ci_high, r2 FROM fits WHERE run_id IN ");
    push_ids(&mut q, run_ids);
    q.push(" AND +workload_id IN ");
    push_ids(&mut q, workload_ids);
    q.build_query_as().fetch_all(&mut **tx).await
}

/// SQLite has one writer, so a claiming `UPDATE` already excludes every other worker.
pub(super) const SKIP_LOCKED: &str = "";

/// How often the log is copied into the database file.
pub(super) const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Log frames (pages) past which the log is made to start over: 16,384 pages, 64 MiB.
pub(super) const LOG_LIMIT: i64 = 16_384;

/// Copies the write-ahead log into the database file beside the writers, which go on appending.
///
/// The log starts over only at a write that finds all of it copied, which never happens while
/// runs keep arriving. So once it passes `log_limit` frames, the copy is repeated while each pass still
/// finds many frames appended during the one before, and what is left is copied during
/// `writer`'s turn: a pause of a few frames, after which the next write starts the log over.
pub(super) async fn checkpoint(
    pool: &SqlitePool,
    writer: &tokio::sync::Mutex<()>,
    log_limit: i64,
) -> Result<(), sqlx::Error> {
    let passive = || sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(pool);
    let (_, mut log, _) = passive().await?;
    if log <= log_limit {
        return Ok(());
    }
    for _ in 0..4 {
        let before = log;
        (_, log, _) = passive().await?;
        if log - before < 256 {
            break;
        }
    }
    let _turn = writer.lock().await;
    let started = std::time::Instant::now();
    let (_, log, copied) = passive().await?;
    tracing::debug!(log, copied, elapsed_us = started.elapsed().as_micros() as u64, "log copied for a restart");
    Ok(())
}

/// Starts a transaction whose reads all see one snapshot: in WAL mode a read transaction keeps
/// the snapshot of its first read until it ends.
pub(super) async fn begin_snapshot(pool: &SqlitePool) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
    pool.begin().await
}
