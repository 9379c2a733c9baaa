//! What differs between Postgres and SQLite, in one place. Every other query is written once
//! (`conn.rs`) and runs on both; a query whose SQL must differ becomes a method here, with its
//! Postgres version in `postgres.rs` and its SQLite version in `sqlite.rs`, and a dispatching
//! method on `Conn` or `Tx` in `conn.rs`.

use super::columns::NewRuns;
use super::rows::{ClaimedFit, WindowFitRow};
use slopewatch_core::lineage::LineageVersion;
use uuid::Uuid;

pub(in crate::store) trait Backend: sqlx::Database {
    /// The statement that starts a transaction that writes. SQLite's takes the write lock at
    /// once: a deferred transaction that reads first cannot upgrade to a writer while another
    /// connection writes, and fails instead of waiting.
    const BEGIN_WRITE: &'static str;

    /// The statement that starts a read-only transaction whose reads all see one snapshot, so
    /// rows read by several statements agree with each other.
    const BEGIN_SNAPSHOT: &'static str;

    /// Whether `insert_runs` writes its runs whole in one statement, so that a lone run adding no
    /// host, toolchain build or workload needs no transaction around it.
    const ONE_STATEMENT: bool;

    /// Most versions one summary transaction covers, which bounds how long it holds the writer.
    const SUMMARY_VERSIONS_PER_TX: usize;

    /// Appended to a claiming subquery, so outbox workers on several replicas claim different
    /// rows instead of waiting on each other.
    const SKIP_LOCKED: &'static str;

    /// Stores the runs with their fits, measurements and pending marks; returns how many runs it
    /// stored. A run whose id a concurrent writer took leaves no rows.
    async fn insert_runs(conn: &mut Self::Connection, new: &NewRuns<'_>) -> Result<u64, sqlx::Error>;

    /// Holds, until the transaction ends, a lock on each of these toolchain versions' summaries,
    /// taken in sorted order (as every holder takes them) so two passes cannot deadlock.
    async fn lock_versions(conn: &mut Self::Connection, versions: &[LineageVersion]) -> Result<(), sqlx::Error>;

    /// Holds, until the transaction ends, a lock on one lineage's regressions, so a fix never
    /// misses the regression a concurrent pass is opening.
    async fn lock_lineage(conn: &mut Self::Connection, lineage: &str) -> Result<(), sqlx::Error>;

    /// The runs `claimed` by a summary pass, one row per workload each measured.
    async fn claimed_fits(conn: &mut Self::Connection, claimed: &[Uuid]) -> Result<Vec<ClaimedFit>, sqlx::Error>;

    /// The fits of `run_ids` for `workload_ids`, looked up run by run.
    async fn window_fits(
        conn: &mut Self::Connection,
        run_ids: &[Uuid],
        workload_ids: &[i64],
    ) -> Result<Vec<WindowFitRow>, sqlx::Error>;
}
