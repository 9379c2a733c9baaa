//! The Postgres side of what differs (`Backend`): whole runs inserted in one statement with
//! `UNNEST`, advisory locks, and summary lookups the planner cannot turn into scans.

use super::backend::Backend;
use super::columns::NewRuns;
use super::rows::{ClaimedFit, WindowFitRow};
use slopewatch_core::lineage::LineageVersion;
use sqlx::{PgConnection, Postgres};
use uuid::Uuid;

impl Backend for Postgres {
    const BEGIN_WRITE: &'static str = "BEGIN";
    const BEGIN_SNAPSHOT: &'static str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";
    const ONE_STATEMENT: bool = true;
    /// All a pass reads, since writers here do not wait for each other.
    const SUMMARY_VERSIONS_PER_TX: usize = 200;
    const SKIP_LOCKED: &'static str = " FOR UPDATE SKIP LOCKED";

    /// In one statement: a run whose id a concurrent writer took leaves no rows.
    async fn insert_runs(conn: &mut PgConnection, new: &NewRuns<'_>) -> Result<u64, sqlx::Error> {
        let (r, f, m, x, c) = (&new.runs, &new.fits, &new.measurements, &new.failures, &new.contracts);
        let (stored,): (i64,) = sqlx::query_as(
            "WITH run AS (
             INSERT INTO runs (id, content_hash, agent_version, started_at, received_at, host_id, toolchain_id,
                               sample_count, samples_pruned_at, metric)
             SELECT * FROM UNNEST($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[],
                                  $6::bigint[], $7::bigint[], $8::int[], $9::timestamptz[], $49::text[])
             ON CONFLICT (id) DO NOTHING
             RETURNING id
         ), pending AS (
             INSERT INTO pending_summaries (run_id, lineage, version)
             SELECT * FROM UNNEST($1::uuid[], $10::text[], $11::text[]) AS p (run_id, lineage, version)
             WHERE p.run_id IN (SELECT id FROM run)
         ), fit AS (
             INSERT INTO fits (run_id, workload_id, source_hash, slope, intercept, r2, stderr, ci_low, ci_high,
                               n_sizes, min_size, max_size, local_slopes, metadata, medians, facts, profile)
             SELECT * FROM UNNEST($12::uuid[], $13::bigint[], $14::text[], $15::float8[], $16::float8[],
                                  $17::float8[], $18::float8[], $19::float8[], $20::float8[], $21::int[],
                                  $22::bigint[], $23::bigint[], $24::text[], $25::text[], $26::text[],
                                  $50::text[], $51::text[])
                 AS f (run_id, workload_id, source_hash, slope, intercept, r2, stderr, ci_low, ci_high,
                       n_sizes, min_size, max_size, local_slopes, metadata, medians, facts, profile)
             WHERE f.run_id IN (SELECT id FROM run)
         ), measurement AS (
             INSERT INTO measurements (run_id, workload_id, size, median_ns, samples, samples_ns, instructions)
             SELECT * FROM UNNEST($27::uuid[], $28::bigint[], $29::bigint[], $30::float8[], $31::int[],
                                  $32::text[], $33::text[])
                 AS m (run_id, workload_id, size, median_ns, samples, samples_ns, instructions)
             WHERE m.run_id IN (SELECT id FROM run)
         ), failure AS (
             INSERT INTO failures (run_id, workload_id, source_hash, kind, size, detail, facts, metadata)
             SELECT * FROM UNNEST($34::uuid[], $35::bigint[], $36::text[], $37::text[], $38::bigint[],
                                  $39::text[], $40::text[], $41::text[])
                 AS x (run_id, workload_id, source_hash, kind, size, detail, facts, metadata)
             WHERE x.run_id IN (SELECT id FROM run)
         ), contract AS (
             INSERT INTO run_contracts (run_id, workload_id, contract, not_provided, source_hash, metadata,
                                        size_of_interest)
             SELECT * FROM UNNEST($42::uuid[], $43::bigint[], $44::text[], $45::bool[], $46::text[], $47::text[],
                                  $48::bigint[])
                 AS c (run_id, workload_id, contract, not_provided, source_hash, metadata, size_of_interest)
             WHERE c.run_id IN (SELECT id FROM run)
         ), interest AS (
             UPDATE workloads w SET size_of_interest = s.size_of_interest
             FROM (SELECT DISTINCT ON (i.workload_id) i.workload_id, i.size_of_interest
                   FROM UNNEST($42::uuid[], $43::bigint[], $48::bigint[]) WITH ORDINALITY
                       AS i (run_id, workload_id, size_of_interest, n)
                   WHERE i.size_of_interest IS NOT NULL AND i.run_id IN (SELECT id FROM run)
                   ORDER BY i.workload_id, i.n DESC) s
             WHERE w.id = s.workload_id
         ), expectation AS (
             INSERT INTO workload_contracts (workload_id, expected, contract)
             SELECT DISTINCT ON (e.workload_id) e.workload_id, e.contract::jsonb ->> 'expected', e.contract
             FROM UNNEST($42::uuid[], $43::bigint[], $44::text[]) WITH ORDINALITY AS e (run_id, workload_id, contract, n)
             WHERE e.contract IS NOT NULL AND e.run_id IN (SELECT id FROM run)
             ORDER BY e.workload_id, e.n DESC
             ON CONFLICT (workload_id) DO UPDATE SET expected = EXCLUDED.expected, contract = EXCLUDED.contract
         )
         SELECT COUNT(*) FROM run",
        )
        .bind(&r.id)
        .bind(&r.content_hash)
        .bind(&r.agent_version)
        .bind(&r.started_at)
        .bind(&r.received_at)
        .bind(&r.host_id)
        .bind(&r.toolchain_id)
        .bind(&r.sample_count)
        .bind(&r.samples_pruned_at)
        .bind(&r.lineage)
        .bind(&r.version)
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
        .bind(&m.run_id)
        .bind(&m.workload_id)
        .bind(&m.size)
        .bind(&m.median_ns)
        .bind(&m.samples)
        .bind(&m.samples_ns)
        .bind(&m.instructions)
        .bind(&x.run_id)
        .bind(&x.workload_id)
        .bind(&x.source_hash)
        .bind(&x.kind)
        .bind(&x.size)
        .bind(&x.detail)
        .bind(&x.facts)
        .bind(&x.metadata)
        .bind(&c.run_id)
        .bind(&c.workload_id)
        .bind(&c.contract)
        .bind(&c.not_provided)
        .bind(&c.source_hash)
        .bind(&c.metadata)
        .bind(&c.size_of_interest)
        .bind(&r.metric)
        .bind(&f.facts)
        .bind(&f.profile)
        .fetch_one(conn)
        .await?;
        Ok(stored as u64)
    }

    async fn lock_versions(conn: &mut PgConnection, versions: &[LineageVersion]) -> Result<(), sqlx::Error> {
        let (lineages, versions): (Vec<&str>, Vec<&str>) =
            versions.iter().map(|v| (v.lineage.as_str(), v.version.as_str())).unzip();
        sqlx::query(
            "SELECT pg_advisory_xact_lock(hashtextextended('version' || chr(31) || l || chr(31) || v, 0))
         FROM (SELECT l, v FROM unnest($1::text[], $2::text[]) AS x (l, v) ORDER BY l, v) AS sorted",
        )
        .bind(lineages)
        .bind(versions)
        .execute(conn)
        .await
        .map(drop)
    }

    async fn lock_lineage(conn: &mut PgConnection, lineage: &str) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('alerts' || chr(31) || $1, 0))")
            .bind(lineage)
            .execute(conn)
            .await
            .map(drop)
    }

    /// Through a primary-key lookup per run (see `window_fits`).
    async fn claimed_fits(conn: &mut PgConnection, claimed: &[Uuid]) -> Result<Vec<ClaimedFit>, sqlx::Error> {
        sqlx::query_as(
        "SELECT r.id AS run_id, t.name AS lineage, t.version, r.host_id, r.started_at, r.received_at, f.workload_id,
                w.name AS workload
         FROM UNNEST($1::uuid[]) AS c (id)
         CROSS JOIN LATERAL (SELECT id, toolchain_id, host_id, started_at, received_at FROM runs
                             WHERE id = c.id OFFSET 0) AS r
         JOIN toolchains t ON t.id = r.toolchain_id
         CROSS JOIN LATERAL (SELECT workload_id FROM fits WHERE run_id = r.id OFFSET 0) AS f
         JOIN workloads w ON w.id = f.workload_id",
    )
    .bind(claimed)
    .fetch_all(conn)
    .await
    }

    /// One primary-key lookup per run. A plain `IN` list lets Postgres, on tables it holds no
    /// statistics for yet (a new database, or one an import has just filled), scan every fit ever
    /// stored instead; the subquery it cannot flatten keeps the lookups.
    async fn window_fits(
        conn: &mut PgConnection,
        run_ids: &[Uuid],
        workload_ids: &[i64],
    ) -> Result<Vec<WindowFitRow>, sqlx::Error> {
        sqlx::query_as(
            "SELECT f.run_id, f.workload_id, f.medians, f.source_hash, f.facts, f.slope, f.ci_low, f.ci_high, f.r2,
                (SELECT metric FROM workloads WHERE id = f.workload_id) AS metric
         FROM UNNEST($1::uuid[]) AS r (id),
              LATERAL (SELECT run_id, workload_id, medians, source_hash, facts, slope, ci_low, ci_high, r2 FROM fits
                       WHERE run_id = r.id AND workload_id = ANY($2) OFFSET 0) AS f",
        )
        .bind(run_ids)
        .bind(workload_ids)
        .fetch_all(conn)
        .await
    }
}
