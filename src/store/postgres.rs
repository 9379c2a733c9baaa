//! The Postgres side of the SQL that differs: batch inserts with `UNNEST` and advisory locks.

use super::ingest::{FitColumns, MeasurementColumns};
use sqlx::{PgPool, Postgres, Transaction};

pub(super) async fn begin(pool: &PgPool) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
    pool.begin().await
}

pub(super) async fn insert_fits(tx: &mut Transaction<'_, Postgres>, f: &FitColumns) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO fits (run_id, workload_id, source_hash, slope, intercept, r2, stderr, ci_low, ci_high,
                           n_sizes, min_size, max_size, local_slopes, metadata, medians)
         SELECT * FROM UNNEST($1::uuid[], $2::bigint[], $3::text[], $4::float8[], $5::float8[], $6::float8[], $7::float8[],
                                  $8::float8[], $9::float8[], $10::int[], $11::bigint[], $12::bigint[], $13::text[], $14::text[],
                                  $15::text[])",
    )
    .bind(&f.run_id)
    .bind(&f.workload_id)
    .bind(&f.source_hash)
    .bind(&f.slope)
    .bind(&f.intercept)
    .bind(&f.r2)
    .bind(&f.stderr)
    .bind(&f.ci_low)
    .bind(&f.ci_high)
    .bind(&f.n_sizes)
    .bind(&f.min_size)
    .bind(&f.max_size)
    .bind(&f.local_slopes)
    .bind(&f.metadata)
    .bind(&f.medians)
    .execute(&mut **tx)
    .await
    .map(drop)
}

pub(super) async fn insert_measurements(
    tx: &mut Transaction<'_, Postgres>,
    m: &MeasurementColumns,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO measurements (run_id, workload_id, size, median_ns, samples, samples_ns, instructions)
         SELECT * FROM UNNEST($1::uuid[], $2::bigint[], $3::bigint[], $4::float8[], $5::int[], $6::text[], $7::text[])",
    )
    .bind(&m.run_id)
    .bind(&m.workload_id)
    .bind(&m.size)
    .bind(&m.median_ns)
    .bind(&m.samples)
    .bind(&m.samples_ns)
    .bind(&m.instructions)
    .execute(&mut **tx)
    .await
    .map(drop)
}

/// Most versions one summary transaction covers: all a pass reads, since writers here do not
/// wait for each other.
pub(super) const SUMMARY_VERSIONS_PER_TX: usize = 200;

/// Holds, until the transaction ends, a lock on each of these toolchain versions' summaries,
/// taken in sorted order (as every holder takes them) so two passes cannot deadlock.
pub(super) async fn lock_versions(
    tx: &mut Transaction<'_, Postgres>,
    versions: &[(String, String)],
) -> Result<(), sqlx::Error> {
    let (lineages, versions): (Vec<&str>, Vec<&str>) = versions.iter().map(|(l, v)| (l.as_str(), v.as_str())).unzip();
    sqlx::query(
        "SELECT pg_advisory_xact_lock(hashtextextended('version' || chr(31) || l || chr(31) || v, 0))
         FROM (SELECT l, v FROM unnest($1::text[], $2::text[]) AS x (l, v) ORDER BY l, v) AS sorted",
    )
    .bind(lineages)
    .bind(versions)
    .execute(&mut **tx)
    .await
    .map(drop)
}

/// Holds, until the transaction ends, a lock on one lineage's alert evaluation.
pub(super) async fn lock_lineage(tx: &mut Transaction<'_, Postgres>, lineage: &str) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('alerts' || chr(31) || $1, 0))")
        .bind(lineage)
        .execute(&mut **tx)
        .await
        .map(drop)
}

/// Lets outbox workers on several replicas claim different rows instead of waiting on each other.
pub(super) const SKIP_LOCKED: &str = " FOR UPDATE SKIP LOCKED";

/// Starts a read-only transaction whose reads all see one snapshot, so rows read by several
/// statements agree with each other.
pub(super) async fn begin_snapshot(pool: &PgPool) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *tx).await?;
    Ok(tx)
}
