//! The database: Postgres for teams, embedded SQLite by default, chosen by the URL's scheme.
//!
//! One file per subject, each holding that subject's queries as methods named after the domain,
//! over the SQL plumbing in `db/`. The store reads and writes; it never decides: it returns rows
//! and values (size units and lineage versions already decoded into their types), and `intake` and
//! `views` turn them into the rules' types and ask the rules.

mod bisections;
pub mod contracts;
mod control;
mod db;
mod exposures;
mod failures;
mod found_probes;
mod inventory;
mod lineage;
mod measured_on;
mod outbox;
mod profiles;
mod regressions;
mod retention;
mod runs;
mod series;
mod sessions;
mod summaries;
mod tokens;
mod transfer;
mod versions;

pub use bisections::{BisectionWrite, StoredBisection};
pub use db::columns::{Arrival, PrunedSamples};
pub use db::faults::{StorageFault, WriteHealth};
pub use db::rows::{ClaimedFit, WindowFit};
pub use db::single_server::{LockError, ServerLock};
pub use db::Tx;
pub use exposures::{ExposureWrite, ScanCursor, StoredReach, StoredScan};
pub use failures::{
    add_failures, ClaimedFailure, FailureTotals, FailureTotalsByVersion, OverviewFailureRow, VersionFailures,
};
pub use found_probes::StoredFoundProbe;
pub use inventory::{HostRow, HostVersion, ToolchainActivity, ToolchainRow, WorkloadRow};
pub use lineage::{LineageFailure, LineageMember, LineageSummary};
pub use outbox::{ClaimedDelivery, NewAttempt, NewDelivery, Outbox};
pub use profiles::{ProbeAtVersion, StoredProfile};
pub use regressions::{FixedMember, NewMember, NewRegression};
pub use retention::PruneReport;
pub use runs::{
    FitReceipt, HeldBy, InsertOutcome, MeasurementDetail, RunDetail, RunListRow, RunReceipt, WorkloadDetail,
};
pub use series::{SlopeRow, VersionChoice, VersionSummary};
pub use summaries::{NewSummary, SummaryTotals, WindowRun};
pub use tokens::{Scope, StoredToken, TokenRow};
pub use transfer::{EditChange, RegressionEdit, RunCursor, StoredMeasurement, StoredRun, StoredWorkload};
pub use versions::WorkloadFailures;

use db::sqlite_writer;
use db::{decode_json, Column, Pool, Record, Sql};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use std::str::FromStr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// How long a request waits for a database connection before failing with 503.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a Postgres connection sits idle before it is checked again before use.
const CHECK_IDLE_AFTER: Duration = Duration::from_secs(1);

/// A connection pool on one of the two backends.
#[derive(Clone)]
pub struct Store {
    pool: Pool,
    /// Writers on SQLite (the run writer's batches, summary passes) take turns here, first come
    /// first served, instead of in SQLite's busy handler, whose sleeps let late arrivals overtake
    /// early ones and stretch the tail latency.
    sqlite_writer: Arc<Mutex<()>>,
    /// On SQLite, where runs wait for the one writer; `None` on Postgres, and in the writer's own
    /// handle on the store.
    run_queue: Option<sqlite_writer::RunQueue>,
    /// How many runs this process has stored (`Store::runs_stored`).
    stored: Arc<AtomicU64>,
    /// The latest write's outcome and the storage faults so far, for health checks and metrics.
    write_health: Arc<WriteHealth>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("backend", &self.backend_name()).finish_non_exhaustive()
    }
}

/// Why the store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("unsupported database URL {0}: use postgres://… or sqlite://…")]
    UnknownScheme(String),
    #[error("cannot open database {url}: {source}")]
    Connect { url: String, source: sqlx::Error },
    #[error("cannot start the writer of database {url}: {source}")]
    Writer { url: String, source: std::io::Error },
    #[error("cannot migrate database {url}: {source}")]
    Migrate { url: String, source: sqlx::migrate::MigrateError },
}

/// Options for opening the store.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    pub max_connections: u32,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions { max_connections: 16 }
    }
}

impl Store {
    /// Opens the database at `url` without touching its schema.
    pub async fn open(url: &str, options: &OpenOptions) -> Result<Store, OpenError> {
        let masked = mask_password(url);
        let connect = |source| OpenError::Connect { url: masked.clone(), source };
        let pool = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let opts = PgConnectOptions::from_str(url).map_err(connect)?;
            let pool = PgPoolOptions::new()
                .max_connections(options.max_connections)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                // Every connection is checked as it goes back to the pool; one is checked again
                // before use only after sitting idle, long enough for the database to have
                // restarted under it, instead of one more round trip for every statement.
                .test_before_acquire(false)
                .before_acquire(|conn, meta| {
                    Box::pin(async move {
                        if meta.idle_for >= CHECK_IDLE_AFTER {
                            sqlx::Connection::ping(conn).await?;
                        }
                        Ok(true)
                    })
                })
                .connect_with(opts)
                .await
                .map_err(connect)?;
            Pool::Postgres(pool)
        } else if url.starts_with("sqlite:") {
            let opts = SqliteConnectOptions::from_str(url)
                .map_err(connect)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .foreign_keys(true)
                .busy_timeout(Duration::from_secs(10))
                // Checkpoints run in the background (`db/sqlite_writer.rs`), not inside the commit
                // that happens to fill the log, where they stall every writer queued behind it.
                .pragma("wal_autocheckpoint", "0")
                .pragma("journal_size_limit", (64 << 20).to_string());
            let pool = SqlitePoolOptions::new()
                .max_connections(options.max_connections.min(8))
                .acquire_timeout(ACQUIRE_TIMEOUT)
                // A file does not hang up: nothing to check before use.
                .test_before_acquire(false)
                // A COMMIT that fails for lack of space or an I/O error can leave sqlx believing
                // the connection is still in a transaction after SQLite rolled it back itself, so
                // that every later BEGIN on it fails. Such a connection is closed, not pooled, and
                // the pool opens a fresh one: the writer carries on once the fault passes. The
                // ping waits for the rollback a dropped transaction queued.
                .after_release(|conn, _| {
                    Box::pin(async move {
                        sqlx::Connection::ping(&mut *conn).await?;
                        let clean = !sqlx::Connection::is_in_transaction(&*conn);
                        if !clean {
                            tracing::warn!("closing a SQLite connection left inside a failed transaction");
                        }
                        Ok(clean)
                    })
                })
                .connect_with(opts)
                .await
                .map_err(connect)?;
            Pool::Sqlite(pool)
        } else {
            return Err(OpenError::UnknownScheme(masked));
        };
        let mut store = Store {
            pool,
            sqlite_writer: Arc::default(),
            run_queue: None,
            stored: Arc::default(),
            write_health: Arc::default(),
        };
        if let Pool::Sqlite(pool) = &store.pool {
            // The writer's own handle has no queue, so the writer stops once the last handle that
            // can hand it runs is gone.
            let writer = store.clone();
            let write: sqlite_writer::WriteRuns = Arc::new(move |runs| {
                Box::pin({
                    let writer = writer.clone();
                    async move { writer.write_runs(&runs).await }
                })
            });
            let queue = sqlite_writer::RunQueue::start(pool.clone(), store.sqlite_writer.clone(), write);
            store.run_queue = Some(queue.map_err(|e| OpenError::Writer { url: masked.clone(), source: e })?);
        }
        Ok(store)
    }

    /// Applies the migrations not applied yet. On Postgres the migrator holds an advisory lock
    /// (`pg_advisory_lock`, keyed by the database's name) from before it reads what is applied
    /// until it is done, so replicas starting at once on a new database migrate one after the
    /// other: the first applies everything, the others find nothing left to do. What a migration
    /// leaves to work out (the classes of summaries stored without one) is `intake::migrate`'s.
    pub async fn migrate_schema(&self) -> Result<(), sqlx::migrate::MigrateError> {
        match &self.pool {
            Pool::Postgres(pool) => sqlx::migrate!("./migrations/postgres").run(pool).await,
            Pool::Sqlite(pool) => sqlx::migrate!("./migrations/sqlite").run(pool).await,
        }
    }

    /// Starts a transaction that writes.
    async fn begin(&self) -> Result<Tx<'static>, sqlx::Error> {
        self.pool.begin().await
    }

    /// Starts a transaction that writes, after waiting for this process's turn at SQLite's one
    /// writer (held until the transaction ends); on Postgres, where writers run side by side, at
    /// once.
    pub async fn begin_writing(&self) -> Result<Tx<'static>, sqlx::Error> {
        let turn = match self.pool {
            Pool::Postgres(_) => None,
            Pool::Sqlite(_) => Some(self.sqlite_writer.clone().lock_owned().await),
        };
        Ok(self.pool.begin().await?.with_turn(turn))
    }

    /// Runs `task` where this store's writes run best: on SQLite, on the writer's thread.
    pub fn spawn_writing(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        match &self.run_queue {
            Some(queue) => queue.spawn(task),
            None => drop(tokio::spawn(task)),
        }
    }

    /// How many runs the SQLite writer holds, waiting or being written (none on Postgres).
    pub fn queued_runs(&self) -> usize {
        self.run_queue.as_ref().map_or(0, |queue| queue.unanswered())
    }

    /// Which backend this is, for logs: `postgres` or `sqlite`.
    pub fn backend_name(&self) -> &'static str {
        match &self.pool {
            Pool::Postgres(_) => "postgres",
            Pool::Sqlite(_) => "sqlite",
        }
    }

    /// Succeeds when the database answers a query.
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        self.execute(&db::sql("SELECT 1")).await.map(drop)
    }

    /// The latest write's outcome and the storage faults counted so far.
    pub fn write_health(&self) -> &WriteHealth {
        &self.write_health
    }

    /// Notes the outcome of a write (`WriteHealth::note`): the store's own writes of runs, the
    /// outbox and retention note theirs, and the intake notes its summary passes'.
    pub fn note_write<T>(&self, outcome: &Result<T, sqlx::Error>) {
        self.write_health.note(outcome);
    }

    /// The most connections the pool opens.
    pub fn pool_limit(&self) -> u32 {
        match &self.pool {
            Pool::Postgres(pool) => pool.options().get_max_connections(),
            Pool::Sqlite(pool) => pool.options().get_max_connections(),
        }
    }

    /// Connections in use and idle, for metrics and readiness.
    pub fn pool_usage(&self) -> (u32, usize) {
        match &self.pool {
            Pool::Postgres(pool) => (pool.size(), pool.num_idle()),
            Pool::Sqlite(pool) => (pool.size(), pool.num_idle()),
        }
    }

    pub async fn close(&self) {
        match &self.pool {
            Pool::Postgres(pool) => pool.close().await,
            Pool::Sqlite(pool) => pool.close().await,
        }
    }

    /// Every row of a statement, on a connection of the pool.
    async fn all<T: Record>(&self, q: &Sql<'_>) -> Result<Vec<T>, sqlx::Error> {
        self.pool.acquire().await?.exec().all(q).await
    }

    async fn optional<T: Record>(&self, q: &Sql<'_>) -> Result<Option<T>, sqlx::Error> {
        self.pool.acquire().await?.exec().optional(q).await
    }

    /// The first column of the only row, if there is one.
    async fn value<T: Column>(&self, q: &Sql<'_>) -> Result<Option<T>, sqlx::Error> {
        self.pool.acquire().await?.exec().value(q).await
    }

    /// Runs a statement; returns how many rows it changed.
    async fn execute(&self, q: &Sql<'_>) -> Result<u64, sqlx::Error> {
        self.pool.acquire().await?.exec().execute(q).await
    }
}

/// The file of a SQLite database URL; `None` for Postgres and in-memory databases.
pub fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    let opts = SqliteConnectOptions::from_str(url).ok().filter(|_| url.starts_with("sqlite:"))?;
    let file = opts.get_filename();
    // sqlx names an in-memory database `file:sqlx-in-memory-N`, not `:memory:`.
    let in_memory = url.contains(":memory:") || url.contains("mode=memory");
    (!file.as_os_str().is_empty() && !in_memory).then(|| file.to_path_buf())
}

/// `postgres://user:secret@host/db` → `postgres://user:***@host/db`, for logs and errors.
pub fn mask_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked_in_urls() {
        assert_eq!(mask_password("postgres://sw:hunter2@db:5432/sw"), "postgres://sw:***@db:5432/sw");
        assert_eq!(mask_password("sqlite://slopewatch.db"), "sqlite://slopewatch.db");
    }
}
