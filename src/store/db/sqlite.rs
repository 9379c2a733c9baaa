//! The SQLite side of what differs (`Backend`): batch inserts as multi-row `VALUES`, a statement
//! per table. SQLite has one writer at a time, so nothing needs a lock of its own.

use super::backend::Backend;
use super::columns::NewRuns;
use super::rows::{ClaimedFit, WindowFitRow};
use slopewatch_core::lineage::LineageVersion;
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};
use uuid::Uuid;

impl Backend for Sqlite {
    const BEGIN_WRITE: &'static str = "BEGIN IMMEDIATE";
    /// In WAL mode a read transaction keeps the snapshot of its first read until it ends.
    const BEGIN_SNAPSHOT: &'static str = "BEGIN";
    const ONE_STATEMENT: bool = false;
    /// Bounds how long a summary transaction keeps the one writer from the runs waiting to be
    /// stored (p99 97 ms at 8 clients with every version in one transaction, 52 ms with 8).
    const SUMMARY_VERSIONS_PER_TX: usize = 8;
    /// SQLite has one writer, so a claiming `UPDATE` already excludes every other worker.
    const SKIP_LOCKED: &'static str = "";

    /// A statement per table, in the caller's transaction. The one writer looked the run ids up
    /// just before, so a taken id is an error here, not a run to skip.
    async fn insert_runs(conn: &mut SqliteConnection, new: &NewRuns<'_>) -> Result<u64, sqlx::Error> {
        let (r, f, m, x) = (&new.runs, &new.fits, &new.measurements, &new.failures);
        let head = "INSERT INTO runs (id, content_hash, agent_version, started_at, received_at, host_id, toolchain_id,
                sample_count, samples_pruned_at, metric) ";
        let stored = insert_chunked(conn, head, r.id.len(), |b, i| {
            b.push_bind(r.id[i])
                .push_bind(r.content_hash[i])
                .push_bind(r.agent_version[i])
                .push_bind(r.started_at[i])
                .push_bind(r.received_at[i])
                .push_bind(r.host_id[i])
                .push_bind(r.toolchain_id[i])
                .push_bind(r.sample_count[i])
                .push_bind(r.samples_pruned_at[i])
                .push_bind(r.metric[i]);
        })
        .await?;
        let head = "INSERT INTO fits (run_id, workload_id, source_hash, slope, intercept, r2, stderr, ci_low, ci_high,
                n_sizes, min_size, max_size, local_slopes, metadata, medians, facts, profile) ";
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
                .push_bind(f.medians[i].as_str())
                .push_bind(f.facts[i].as_str())
                .push_bind(f.profile[i].as_deref());
        })
        .await?;
        let head =
            "INSERT INTO measurements (run_id, workload_id, size, median_ns, samples, samples_ns, instructions) ";
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
        let head = "INSERT INTO failures (run_id, workload_id, source_hash, kind, size, detail, facts, metadata) ";
        insert_chunked(conn, head, x.run_id.len(), |b, i| {
            b.push_bind(x.run_id[i])
                .push_bind(x.workload_id[i])
                .push_bind(x.source_hash[i].as_str())
                .push_bind(x.kind[i])
                .push_bind(x.size[i])
                .push_bind(x.detail[i].as_str())
                .push_bind(x.facts[i].as_str())
                .push_bind(x.metadata[i].as_str());
        })
        .await?;
        let c = &new.contracts;
        let head = "INSERT INTO run_contracts (run_id, workload_id, contract, not_provided, source_hash, metadata,
                size_of_interest) ";
        insert_chunked(conn, head, c.run_id.len(), |b, i| {
            b.push_bind(c.run_id[i])
                .push_bind(c.workload_id[i])
                .push_bind(c.contract[i].as_deref())
                .push_bind(c.not_provided[i])
                .push_bind(c.source_hash[i].as_str())
                .push_bind(c.metadata[i].as_str())
                .push_bind(c.size_of_interest[i]);
        })
        .await?;
        if c.size_of_interest.iter().any(Option::is_some) {
            // The latest run of the batch that names one sets the workload's.
            let mut q = QueryBuilder::new(
                "UPDATE workloads SET size_of_interest = (SELECT rc.size_of_interest FROM run_contracts rc
                 WHERE rc.workload_id = workloads.id AND rc.size_of_interest IS NOT NULL AND rc.run_id IN ",
            );
            push_ids(&mut q, &r.id);
            q.push(" ORDER BY rc.rowid DESC LIMIT 1) WHERE id IN (SELECT workload_id FROM run_contracts WHERE size_of_interest IS NOT NULL AND run_id IN ");
            push_ids(&mut q, &r.id);
            q.push(")");
            q.build().execute(&mut *conn).await?;
        }
        if c.contract.iter().any(Option::is_some) {
            // Later runs of the batch after earlier ones: the latest contract of a workload wins.
            let mut q = QueryBuilder::new(
                "INSERT INTO workload_contracts (workload_id, expected, contract)
                 SELECT workload_id, json_extract(contract, '$.expected'), contract FROM run_contracts
                 WHERE contract IS NOT NULL AND run_id IN ",
            );
            push_ids(&mut q, &r.id);
            q.push(
                " ORDER BY rowid ON CONFLICT (workload_id) DO UPDATE SET expected = excluded.expected, \
                 contract = excluded.contract",
            );
            q.build().execute(&mut *conn).await?;
        }
        let head = "INSERT INTO pending_summaries (run_id, lineage, version) ";
        insert_chunked(conn, head, r.id.len(), |b, i| {
            b.push_bind(r.id[i]).push_bind(r.lineage[i]).push_bind(r.version[i]);
        })
        .await?;
        Ok(stored)
    }

    async fn lock_versions(_conn: &mut SqliteConnection, _versions: &[LineageVersion]) -> Result<(), sqlx::Error> {
        Ok(())
    }

    async fn lock_lineage(_conn: &mut SqliteConnection, _lineage: &str) -> Result<(), sqlx::Error> {
        Ok(())
    }

    async fn claimed_fits(conn: &mut SqliteConnection, claimed: &[Uuid]) -> Result<Vec<ClaimedFit>, sqlx::Error> {
        let mut q = QueryBuilder::new(
        "SELECT r.id AS run_id, t.name AS lineage, t.version, r.host_id, r.started_at, r.received_at, f.workload_id,
                w.name AS workload
         FROM runs r JOIN toolchains t ON t.id = r.toolchain_id JOIN fits f ON f.run_id = r.id
         JOIN workloads w ON w.id = f.workload_id
         WHERE r.id IN ",
    );
        push_ids(&mut q, claimed);
        q.build_query_as().fetch_all(conn).await
    }

    /// Reached through their runs: the unary plus keeps SQLite from going through the workload
    /// index, which reads every run ever stored of those workloads.
    async fn window_fits(
        conn: &mut SqliteConnection,
        run_ids: &[Uuid],
        workload_ids: &[i64],
    ) -> Result<Vec<WindowFitRow>, sqlx::Error> {
        let mut q = QueryBuilder::new(
            "SELECT run_id, workload_id, medians, source_hash, facts, slope, ci_low, ci_high, r2, \
             (SELECT metric FROM workloads WHERE id = fits.workload_id) AS metric FROM fits WHERE run_id IN ",
        );
        push_ids(&mut q, run_ids);
        q.push(" AND +workload_id IN ");
        push_ids(&mut q, workload_ids);
        q.build_query_as().fetch_all(conn).await
    }
}

/// Rows per statement: SQLite allows 32,766 bound values, and a fit binds 18.
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

/// Appends `(id, id, …)`, each id bound, for an `IN` list.
fn push_ids<'q, 'a, Id>(q: &'q mut QueryBuilder<'a, Sqlite>, ids: &[Id]) -> &'q mut QueryBuilder<'a, Sqlite>
where
    Id: Copy + sqlx::Encode<'a, Sqlite> + sqlx::Type<Sqlite> + 'a,
{
    q.push("(");
    let mut list = q.separated(", ");
    for id in ids {
        list.push_bind(*id);
    }
    q.push(")")
}
