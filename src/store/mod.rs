//! The database: Postgres for teams, embedded SQLite by default, chosen by the URL's scheme.
//!
//! Methods are named after the domain. Most SQL is the same on both backends and is written once
//! (the `with_pool!` macro expands it for each); where the SQL differs, `postgres.rs` and
//! `sqlite.rs` hold the backend's version under the same name.

pub(crate) mod alerts;
mod dashboard;
mod ingest;
mod postgres;
mod reads;
mod retention;
mod sqlite;
mod summaries;
mod tokens;
mod transfer;

pub use alerts::{
    AttemptOutcome, ClaimedDelivery, DeliveryAttempt, DeliveryDetail, DeliveryRow, RegressionDetail, RegressionEvent,
    RegressionLink, RegressionNote, RegressionRow, RegressionStatus, RegressionWorkload, VersionSizes,
};
pub use dashboard::{HostVersion, SlopeRow, VersionChoice};
pub use ingest::{Arrival, FitReceipt, InsertOutcome, PrunedSamples, RunReceipt};
pub use reads::{
    HostRow, MeasurementDetail, RunDetail, RunListRow, SizeMedian, ToolchainRow, VersionSummary, WorkloadDetail,
    WorkloadRow,
};
pub use retention::PruneReport;
pub use summaries::SUMMARY_WINDOW;
pub use tokens::{Scope, TokenRow};
pub use transfer::{
    EditChange, EditOutcome, RegressionEdit, RunCursor, StoredMeasurement, StoredRun, StoredToken, StoredWorkload,
};

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, QueryBuilder, SqlitePool};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// How long a request waits for a database connection before failing with 503.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a Postgres connection sits idle before it is checked again before use.
const CHECK_IDLE_AFTER: Duration = Duration::from_secs(1);

/// A connection pool on one of the two backends.
#[derive(Clone, Debug)]
pub struct Store {
    backend: Backend,
    /// Writers on SQLite (the run writer's batches, summary passes) take turns here, first come
    /// first served, instead of in SQLite's busy handler, whose sleeps let late arrivals overtake
    /// early ones and stretch the tail latency.
    sqlite_writer: Arc<tokio::sync::Mutex<()>>,
    /// Turns at the passes that take stored runs into their version summaries.
    summaries: Arc<summaries::SummaryTurns>,
    /// On SQLite, where runs wait for the one writer; `None` on Postgres, and in the writer's own
    /// handle on the store.
    run_queue: Option<ingest::RunQueue>,
}

#[derive(Clone, Debug)]
enum Backend {
    Postgres(PgPool),
    Sqlite(SqlitePool),
}

/// Runs `$body` with `$pool` bound to the backend's pool and `$dialect` to its module, so SQL that
/// is the same on both backends is written once.
macro_rules! with_pool {
    ($store:expr, |$pool:ident, $dialect:ident| $body:expr) => {
        match &$store.backend {
            $crate::store::Backend::Postgres($pool) => {
                #[allow(unused_imports)]
                use $crate::store::postgres as $dialect;
                $body
            }
            $crate::store::Backend::Sqlite($pool) => {
                #[allow(unused_imports)]
                use $crate::store::sqlite as $dialect;
                $body
            }
        }
    };
    ($store:expr, |$pool:ident| $body:expr) => {
        with_pool!($store, |$pool, _dialect| $body)
    };
}
pub(crate) use with_pool;

/// Reads a JSON column (a fit's medians, a summary's sizes, a measurement's samples); text that
/// does not parse is a decode error, as a column of the wrong type would be.
pub(crate) fn decode_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, sqlx::Error> {
    serde_json::from_str(text).map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

/// Appends `(id, id, …)`, each id bound, for an `IN` list written once for both backends.
pub(crate) fn push_ids<'q, 'a, DB: sqlx::Database, Id>(
    q: &'q mut QueryBuilder<'a, DB>,
    ids: &[Id],
) -> &'q mut QueryBuilder<'a, DB>
where
    Id: Copy + sqlx::Encode<'a, DB> + sqlx::Type<DB> + 'a,
{
    q.push("(");
    let mut list = q.separated(", ");
    for id in ids {
        list.push_bind(*id);
    }
    q.push(")")
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
        let backend = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
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
            Backend::Postgres(pool)
        } else if url.starts_with("sqlite:") {
            let opts = SqliteConnectOptions::from_str(url)
                .map_err(connect)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .foreign_keys(true)
                .busy_timeout(Duration::from_secs(10))
                // Checkpoints run in the background (`sqlite::checkpoint`), not inside the commit
                // that happens to fill the log, where they stall every writer queued behind it.
                .pragma("wal_autocheckpoint", "0")
                .pragma("journal_size_limit", (64 << 20).to_string());
            let pool = SqlitePoolOptions::new()
                .max_connections(options.max_connections.min(8))
                .acquire_timeout(ACQUIRE_TIMEOUT)
                // A file does not hang up: nothing to check before use.
                .test_before_acquire(false)
                .connect_with(opts)
                .await
                .map_err(connect)?;
            Backend::Sqlite(pool)
        } else {
            return Err(OpenError::UnknownScheme(masked));
        };
        let mut store = Store { backend, sqlite_writer: Arc::default(), summaries: Arc::default(), run_queue: None };
        if let Backend::Sqlite(_) = store.backend {
            let writer = ingest::RunQueue::start(store.clone());
            store.run_queue = Some(writer.map_err(|e| OpenError::Writer { url: masked.clone(), source: e })?);
        }
        Ok(store)
    }

    /// Opens the database and brings its schema up to date.
    pub async fn open_and_migrate(url: &str, options: &OpenOptions) -> Result<Store, OpenError> {
        let store = Store::open(url, options).await?;
        store.migrate().await.map_err(|source| OpenError::Migrate { url: mask_password(url), source })?;
        Ok(store)
    }

    pub async fn migrate(&self) -> Result<(), sqlx::migrate::MigrateError> {
        match &self.backend {
            Backend::Postgres(pool) => sqlx::migrate!("./migrations/postgres").run(pool).await,
            Backend::Sqlite(pool) => sqlx::migrate!("./migrations/sqlite").run(pool).await,
        }
    }

    /// On SQLite, waits for this process's turn to write a run; on Postgres, where writers run
    /// side by side, returns at once.
    async fn writer_turn(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match self.backend {
            Backend::Postgres(_) => None,
            Backend::Sqlite(_) => Some(self.sqlite_writer.lock().await),
        }
    }

    /// Which backend this is, for logs: `postgres` or `sqlite`.
    pub fn backend_name(&self) -> &'static str {
        match &self.backend {
            Backend::Postgres(_) => "postgres",
            Backend::Sqlite(_) => "sqlite",
        }
    }

    /// Succeeds when the database answers a query.
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        with_pool!(self, |pool| sqlx::query("SELECT 1").execute(pool).await.map(drop))
    }

    /// Connections in use and idle, for metrics and readiness.
    pub fn pool_usage(&self) -> (u32, usize) {
        with_pool!(self, |pool| (pool.size(), pool.num_idle()))
    }

    pub async fn close(&self) {
        with_pool!(self, |pool| pool.close().await)
    }
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
