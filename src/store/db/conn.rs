//! SQL written once for both databases: a statement's text with `$n` placeholders and the values
//! bound to it (`Sql`), run on a connection or transaction of whichever database the store opened
//! (`Conn`, `Tx`). Both backends read `$n` as the n-th value. What differs between them is not
//! here but in `backend.rs`.

use super::backend::Backend;
use super::columns::NewRuns;
use super::rows::{ClaimedFit, WindowFit, WindowFitRow};
use slopewatch_core::lineage::LineageVersion;
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgArguments, PgRow};
use sqlx::sqlite::{SqliteArguments, SqliteRow};
use sqlx::{
    Arguments, Connection, Decode, FromRow, PgConnection, PgPool, Postgres, Sqlite, SqliteConnection, SqlitePool,
    Transaction, Type,
};
use std::borrow::Cow;
use std::fmt::Write;
use time::OffsetDateTime;
use tokio::sync::OwnedMutexGuard;
use uuid::Uuid;

/// A value bound to a statement. Each kind keeps its type when it is NULL, as Postgres needs.
#[derive(Debug, Clone)]
pub(in crate::store) enum Value<'a> {
    Bool(Option<bool>),
    I32(Option<i32>),
    I64(Option<i64>),
    F64(Option<f64>),
    Text(Option<Cow<'a, str>>),
    Uuid(Option<Uuid>),
    Time(Option<OffsetDateTime>),
}

/// What can be bound to a statement: a column type the store uses, or `None` of one.
pub(in crate::store) trait Bind<'a> {
    fn value(self) -> Value<'a>;
}

/// A column type the store binds; its `Option` binds NULL of the same type.
pub(in crate::store) trait Scalar<'a>: Sized {
    fn wrap(value: Option<Self>) -> Value<'a>;
}

impl<'a, T: Scalar<'a>> Bind<'a> for T {
    fn value(self) -> Value<'a> {
        T::wrap(Some(self))
    }
}

impl<'a, T: Scalar<'a>> Bind<'a> for Option<T> {
    fn value(self) -> Value<'a> {
        T::wrap(self)
    }
}

impl<'a> Scalar<'a> for bool {
    fn wrap(v: Option<Self>) -> Value<'a> {
        Value::Bool(v)
    }
}

impl<'a> Scalar<'a> for i32 {
    fn wrap(v: Option<Self>) -> Value<'a> {
        Value::I32(v)
    }
}

impl<'a> Scalar<'a> for i64 {
    fn wrap(v: Option<Self>) -> Value<'a> {
        Value::I64(v)
    }
}

impl<'a> Scalar<'a> for f64 {
    fn wrap(v: Option<Self>) -> Value<'a> {
        Value::F64(v)
    }
}

impl<'a> Scalar<'a> for Uuid {
    fn wrap(v: Option<Self>) -> Value<'a> {
        Value::Uuid(v)
    }
}

impl<'a> Scalar<'a> for OffsetDateTime {
    fn wrap(v: Option<Self>) -> Value<'a> {
        Value::Time(v)
    }
}

impl<'a> Scalar<'a> for &'a str {
    fn wrap(v: Option<Self>) -> Value<'a> {
        Value::Text(v.map(Cow::Borrowed))
    }
}

impl<'a> Scalar<'a> for &'a String {
    fn wrap(v: Option<Self>) -> Value<'a> {
        Value::Text(v.map(|s| Cow::Borrowed(s.as_str())))
    }
}

impl<'a> Scalar<'a> for String {
    fn wrap(v: Option<Self>) -> Value<'a> {
        Value::Text(v.map(Cow::Owned))
    }
}

/// A statement and its values. `bind` adds a value for a `$n` already in the text; the `push_*`
/// methods write the placeholders as they add values, for statements built piece by piece.
#[derive(Debug, Clone)]
pub(in crate::store) struct Sql<'a> {
    text: String,
    values: Vec<Value<'a>>,
}

/// Starts a statement.
pub(in crate::store) fn sql<'a>(text: impl Into<String>) -> Sql<'a> {
    Sql { text: text.into(), values: Vec::new() }
}

impl<'a> Sql<'a> {
    pub fn bind(mut self, value: impl Bind<'a>) -> Self {
        self.values.push(value.value());
        self
    }

    pub fn push(&mut self, text: impl std::fmt::Display) -> &mut Self {
        write!(self.text, "{text}").expect("writing to a String");
        self
    }

    /// Writes a placeholder for `value`.
    pub fn push_bind(&mut self, value: impl Bind<'a>) -> &mut Self {
        self.values.push(value.value());
        let n = self.values.len();
        self.push(format_args!("${n}"))
    }

    /// Writes `($a, $b, …)`, a placeholder for each value: an `IN` list or one row of values.
    pub fn push_tuple<B: Bind<'a>>(&mut self, values: impl IntoIterator<Item = B>) -> &mut Self {
        self.push("(");
        for (i, value) in values.into_iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.push_bind(value);
        }
        self.push(")")
    }

    /// Writes `VALUES (…), (…)`, `row` binding each item's values into its tuple.
    pub fn push_values<T>(&mut self, items: impl IntoIterator<Item = T>, mut row: impl FnMut(&mut Tuple<'_, 'a>, T)) {
        self.push("VALUES ");
        for (i, item) in items.into_iter().enumerate() {
            self.push(if i > 0 { ", (" } else { "(" });
            row(&mut Tuple { sql: self, first: true }, item);
            self.push(")");
        }
    }

    /// Writes `(VALUES ($1, $2), …)` for lineage versions, each bound.
    pub fn push_versions(&mut self, versions: &'a [LineageVersion]) -> &mut Self {
        self.push("(");
        self.push_values(versions, |row, v| {
            row.bind(&v.lineage).bind(&v.version);
        });
        self.push(")")
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    fn postgres(&self) -> Result<PgArguments, sqlx::Error> {
        let mut args = PgArguments::default();
        for value in &self.values {
            match value {
                Value::Bool(v) => args.add(*v),
                Value::I32(v) => args.add(*v),
                Value::I64(v) => args.add(*v),
                Value::F64(v) => args.add(*v),
                Value::Text(v) => args.add(v.as_deref()),
                Value::Uuid(v) => args.add(*v),
                Value::Time(v) => args.add(*v),
            }
            .map_err(sqlx::Error::Encode)?;
        }
        Ok(args)
    }

    fn sqlite(&self) -> Result<SqliteArguments<'a>, sqlx::Error> {
        let mut args = SqliteArguments::default();
        for value in &self.values {
            match value.clone() {
                Value::Bool(v) => args.add(v),
                Value::I32(v) => args.add(v),
                Value::I64(v) => args.add(v),
                Value::F64(v) => args.add(v),
                Value::Text(v) => args.add(v),
                Value::Uuid(v) => args.add(v),
                Value::Time(v) => args.add(v),
            }
            .map_err(sqlx::Error::Encode)?;
        }
        Ok(args)
    }
}

/// One row of a `VALUES` list being written.
pub(in crate::store) struct Tuple<'s, 'a> {
    sql: &'s mut Sql<'a>,
    first: bool,
}

impl<'a> Tuple<'_, 'a> {
    pub fn bind(&mut self, value: impl Bind<'a>) -> &mut Self {
        if !std::mem::take(&mut self.first) {
            self.sql.push(", ");
        }
        self.sql.push_bind(value);
        self
    }
}

/// A row type the store reads, from either database.
pub(in crate::store) trait Record:
    for<'r> FromRow<'r, PgRow> + for<'r> FromRow<'r, SqliteRow> + Send + Unpin
{
}
impl<T: for<'r> FromRow<'r, PgRow> + for<'r> FromRow<'r, SqliteRow> + Send + Unpin> Record for T {}

/// A single column's type the store reads, from either database.
pub(in crate::store) trait Column:
    for<'r> Decode<'r, Postgres> + Type<Postgres> + for<'r> Decode<'r, Sqlite> + Type<Sqlite> + Send + Unpin
{
}
impl<T> Column for T where
    T: for<'r> Decode<'r, Postgres> + Type<Postgres> + for<'r> Decode<'r, Sqlite> + Type<Sqlite> + Send + Unpin
{
}

/// A connection of either database, borrowed for a statement.
pub(in crate::store) enum Exec<'c> {
    Postgres(&'c mut PgConnection),
    Sqlite(&'c mut SqliteConnection),
}

impl Exec<'_> {
    /// The same connection, for one more statement.
    pub fn reborrow(&mut self) -> Exec<'_> {
        match self {
            Exec::Postgres(c) => Exec::Postgres(c),
            Exec::Sqlite(c) => Exec::Sqlite(c),
        }
    }

    pub async fn all<T: Record>(self, q: &Sql<'_>) -> Result<Vec<T>, sqlx::Error> {
        match self {
            Exec::Postgres(c) => sqlx::query_as_with(q.text(), q.postgres()?).fetch_all(c).await,
            Exec::Sqlite(c) => sqlx::query_as_with(q.text(), q.sqlite()?).fetch_all(c).await,
        }
    }

    pub async fn optional<T: Record>(self, q: &Sql<'_>) -> Result<Option<T>, sqlx::Error> {
        match self {
            Exec::Postgres(c) => sqlx::query_as_with(q.text(), q.postgres()?).fetch_optional(c).await,
            Exec::Sqlite(c) => sqlx::query_as_with(q.text(), q.sqlite()?).fetch_optional(c).await,
        }
    }

    /// The first column of every row.
    pub async fn column<T: Column>(self, q: &Sql<'_>) -> Result<Vec<T>, sqlx::Error> {
        match self {
            Exec::Postgres(c) => sqlx::query_scalar_with(q.text(), q.postgres()?).fetch_all(c).await,
            Exec::Sqlite(c) => sqlx::query_scalar_with(q.text(), q.sqlite()?).fetch_all(c).await,
        }
    }

    /// The first column of the only row, if there is one.
    pub async fn value<T: Column>(self, q: &Sql<'_>) -> Result<Option<T>, sqlx::Error> {
        match self {
            Exec::Postgres(c) => sqlx::query_scalar_with(q.text(), q.postgres()?).fetch_optional(c).await,
            Exec::Sqlite(c) => sqlx::query_scalar_with(q.text(), q.sqlite()?).fetch_optional(c).await,
        }
    }

    /// Runs the statement; returns how many rows it changed.
    pub async fn execute(self, q: &Sql<'_>) -> Result<u64, sqlx::Error> {
        Ok(match self {
            Exec::Postgres(c) => sqlx::query_with(q.text(), q.postgres()?).execute(c).await?.rows_affected(),
            Exec::Sqlite(c) => sqlx::query_with(q.text(), q.sqlite()?).execute(c).await?.rows_affected(),
        })
    }
}

/// The pool of whichever database the store opened.
#[derive(Clone, Debug)]
pub(in crate::store) enum Pool {
    Postgres(PgPool),
    Sqlite(SqlitePool),
}

impl Pool {
    pub async fn acquire(&self) -> Result<Conn, sqlx::Error> {
        Ok(match self {
            Pool::Postgres(p) => Conn::Postgres(p.acquire().await?),
            Pool::Sqlite(p) => Conn::Sqlite(p.acquire().await?),
        })
    }

    /// Starts a transaction that writes (`Backend::BEGIN_WRITE`).
    pub async fn begin(&self) -> Result<Tx<'static>, sqlx::Error> {
        Ok(Tx::new(match self {
            Pool::Postgres(p) => TxInner::Postgres(p.begin_with(Postgres::BEGIN_WRITE).await?),
            Pool::Sqlite(p) => TxInner::Sqlite(p.begin_with(Sqlite::BEGIN_WRITE).await?),
        }))
    }

    /// `FOR UPDATE SKIP LOCKED` where the backend has it (`Backend::SKIP_LOCKED`).
    pub fn skip_locked(&self) -> &'static str {
        match self {
            Pool::Postgres(_) => Postgres::SKIP_LOCKED,
            Pool::Sqlite(_) => Sqlite::SKIP_LOCKED,
        }
    }

    /// Most versions one summary transaction covers (`Backend::SUMMARY_VERSIONS_PER_TX`).
    pub fn summary_versions_per_tx(&self) -> usize {
        match self {
            Pool::Postgres(_) => Postgres::SUMMARY_VERSIONS_PER_TX,
            Pool::Sqlite(_) => Sqlite::SUMMARY_VERSIONS_PER_TX,
        }
    }

    /// Starts a transaction whose reads all see one snapshot (`Backend::BEGIN_SNAPSHOT`).
    pub async fn begin_snapshot(&self) -> Result<Tx<'static>, sqlx::Error> {
        Ok(Tx::new(match self {
            Pool::Postgres(p) => TxInner::Postgres(p.begin_with(Postgres::BEGIN_SNAPSHOT).await?),
            Pool::Sqlite(p) => TxInner::Sqlite(p.begin_with(Sqlite::BEGIN_SNAPSHOT).await?),
        }))
    }
}

/// A connection taken from the store's pool.
pub(in crate::store) enum Conn {
    Postgres(PoolConnection<Postgres>),
    Sqlite(PoolConnection<Sqlite>),
}

impl Conn {
    pub fn exec(&mut self) -> Exec<'_> {
        match self {
            Conn::Postgres(c) => Exec::Postgres(c),
            Conn::Sqlite(c) => Exec::Sqlite(c),
        }
    }

    /// Starts a transaction that writes on this connection (`Backend::BEGIN_WRITE`).
    pub async fn begin(&mut self) -> Result<Tx<'_>, sqlx::Error> {
        Ok(Tx::new(match self {
            Conn::Postgres(c) => TxInner::Postgres(c.begin_with(Postgres::BEGIN_WRITE).await?),
            Conn::Sqlite(c) => TxInner::Sqlite(c.begin_with(Sqlite::BEGIN_WRITE).await?),
        }))
    }

    /// Whether `insert_runs` stores a lone run whole in one statement (`Backend::ONE_STATEMENT`).
    pub fn one_statement(&self) -> bool {
        match self {
            Conn::Postgres(_) => Postgres::ONE_STATEMENT,
            Conn::Sqlite(_) => Sqlite::ONE_STATEMENT,
        }
    }

    /// `Backend::insert_runs`, outside a transaction.
    pub async fn insert_runs(&mut self, new: &NewRuns<'_>) -> Result<u64, sqlx::Error> {
        match self {
            Conn::Postgres(c) => Postgres::insert_runs(c, new).await,
            Conn::Sqlite(c) => Sqlite::insert_runs(c, new).await,
        }
    }
}

enum TxInner<'c> {
    Postgres(Transaction<'c, Postgres>),
    Sqlite(Transaction<'c, Sqlite>),
}

/// A transaction on either database. Dropped without `commit`, it rolls back.
pub struct Tx<'c> {
    inner: TxInner<'c>,
    /// On SQLite, the writer's turn (`Store::begin_writing`), held until the transaction ends.
    turn: Option<OwnedMutexGuard<()>>,
}

impl<'c> Tx<'c> {
    fn new(inner: TxInner<'c>) -> Tx<'c> {
        Tx { inner, turn: None }
    }

    pub(in crate::store) fn with_turn(mut self, turn: Option<OwnedMutexGuard<()>>) -> Tx<'c> {
        self.turn = turn;
        self
    }

    pub(in crate::store) fn exec(&mut self) -> Exec<'_> {
        match &mut self.inner {
            TxInner::Postgres(tx) => Exec::Postgres(tx),
            TxInner::Sqlite(tx) => Exec::Sqlite(tx),
        }
    }

    pub async fn commit(self) -> Result<(), sqlx::Error> {
        match self.inner {
            TxInner::Postgres(tx) => tx.commit().await?,
            TxInner::Sqlite(tx) => tx.commit().await?,
        }
        drop(self.turn);
        Ok(())
    }

    /// `Backend::insert_runs`, inside this transaction.
    pub(in crate::store) async fn insert_runs(&mut self, new: &NewRuns<'_>) -> Result<u64, sqlx::Error> {
        match &mut self.inner {
            TxInner::Postgres(tx) => Postgres::insert_runs(tx, new).await,
            TxInner::Sqlite(tx) => Sqlite::insert_runs(tx, new).await,
        }
    }

    /// Holds, until the transaction ends, each of these toolchain versions' summaries
    /// (`Backend::lock_versions`).
    pub async fn lock_versions(&mut self, versions: &[LineageVersion]) -> Result<(), sqlx::Error> {
        match &mut self.inner {
            TxInner::Postgres(tx) => Postgres::lock_versions(tx, versions).await,
            TxInner::Sqlite(tx) => Sqlite::lock_versions(tx, versions).await,
        }
    }

    /// Holds, until the transaction ends, one lineage's regressions (`Backend::lock_lineage`).
    pub async fn lock_lineage(&mut self, lineage: &str) -> Result<(), sqlx::Error> {
        match &mut self.inner {
            TxInner::Postgres(tx) => Postgres::lock_lineage(tx, lineage).await,
            TxInner::Sqlite(tx) => Sqlite::lock_lineage(tx, lineage).await,
        }
    }

    /// The claimed runs, one row per workload each measured (`Backend::claimed_fits`).
    pub async fn claimed_fits(&mut self, claimed: &[Uuid]) -> Result<Vec<ClaimedFit>, sqlx::Error> {
        match &mut self.inner {
            TxInner::Postgres(tx) => Postgres::claimed_fits(tx, claimed).await,
            TxInner::Sqlite(tx) => Sqlite::claimed_fits(tx, claimed).await,
        }
    }

    /// The fits of `run_ids` for `workload_ids` (`Backend::window_fits`).
    pub async fn window_fits(&mut self, run_ids: &[Uuid], workload_ids: &[i64]) -> Result<Vec<WindowFit>, sqlx::Error> {
        let rows = match &mut self.inner {
            TxInner::Postgres(tx) => Postgres::window_fits(tx, run_ids, workload_ids).await?,
            TxInner::Sqlite(tx) => Sqlite::window_fits(tx, run_ids, workload_ids).await?,
        };
        rows.into_iter().map(WindowFitRow::decode).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_built_piece_by_piece_number_their_placeholders_in_order() {
        let versions = [LineageVersion::new("gcc", "12"), LineageVersion::new("zig", "0.16.0")];
        let mut q = sql("SELECT 1 FROM t WHERE a = $1").bind(7i64);
        q.push(" AND b IN ").push_tuple([1i32, 2]).push(" AND (l, v) IN ").push_versions(&versions);
        q.push(" AND c = ").push_bind(None::<&str>);
        assert_eq!(
            q.text(),
            "SELECT 1 FROM t WHERE a = $1 AND b IN ($2, $3) AND (l, v) IN (VALUES ($4, $5), ($6, $7)) AND c = $8"
        );
        assert_eq!(q.values.len(), 8);
        assert!(matches!(q.values[7], Value::Text(None)), "a NULL keeps its type");
    }
}
