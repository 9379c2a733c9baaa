//! What a regression's attribution reads: its slope workloads' sources and the period their
//! versions were measured in (from their version summaries), and the control lineages' fits of
//! those workloads measured within that period. Bounded reads: the regression's own rows by key,
//! then the control's runs through the (toolchain, started) index, limited to the period.

use super::db::{sql, Exec, Tx};
use super::{decode_json, Store};
use crate::model::control::{ControlRun, Regressed, RegressedWorkload};
use crate::model::MetricColumn;
use slopewatch_core::verdict::SlopeEvidence;
use slopewatch_core::wire::Metric;
use time::OffsetDateTime;

/// Most control runs one attribution reads: the latest of the period.
const CONTROL_RUNS: i64 = 2000;

#[derive(sqlx::FromRow)]
struct ControlMemberRow {
    lineage: String,
    version: String,
    previous_version: Option<String>,
    workload_id: i64,
    workload: String,
    #[sqlx(try_from = "MetricColumn")]
    metric: Metric,
    source_before: Option<String>,
    source_after: Option<String>,
    good_first: Option<OffsetDateTime>,
    bad_first: Option<OffsetDateTime>,
    bad_last: Option<OffsetDateTime>,
    hosts_before: Option<String>,
    hosts_after: Option<String>,
}

#[derive(sqlx::FromRow)]
struct HostName {
    id: i64,
    name: String,
}

#[derive(sqlx::FromRow)]
struct ControlRow {
    lineage: String,
    version: String,
    host_id: i64,
    host: String,
    started_at: OffsetDateTime,
    workload_id: i64,
    source_hash: String,
    slope: f64,
    ci_low: f64,
    ci_high: f64,
    r2: f64,
    n_sizes: i32,
}

impl Store {
    /// The evidence for regression `id`'s attribution by `controls`; `None` when there is no
    /// such regression, or it has no version summary to give it a period.
    pub async fn control_evidence(
        &self,
        id: i64,
        controls: &[String],
    ) -> Result<Option<(Regressed, Vec<ControlRun>)>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        evidence(conn.exec(), id, controls).await
    }
}

impl Tx<'_> {
    /// `Store::control_evidence`, within the transaction (a regression it just opened).
    pub async fn control_evidence(
        &mut self,
        id: i64,
        controls: &[String],
    ) -> Result<Option<(Regressed, Vec<ControlRun>)>, sqlx::Error> {
        evidence(self.exec(), id, controls).await
    }
}

async fn evidence(
    mut exec: Exec<'_>,
    id: i64,
    controls: &[String],
) -> Result<Option<(Regressed, Vec<ControlRun>)>, sqlx::Error> {
    let q =
        sql("SELECT rr.lineage, rr.version, rr.previous_version, w.id AS workload_id, w.name AS workload, w.metric,
                sb.source_hash AS source_before, sa.source_hash AS source_after, sb.first_seen AS good_first,
                sa.first_seen AS bad_first, sa.last_run_at AS bad_last, sb.host_ids AS hosts_before,
                sa.host_ids AS hosts_after
         FROM regressions rr JOIN regression_workloads rw ON rw.regression_id = rr.id
         JOIN workloads w ON w.id = rw.workload_id
         LEFT JOIN version_summaries sa
           ON sa.workload_id = rw.workload_id AND sa.lineage = rr.lineage AND sa.version = rr.version
         LEFT JOIN version_summaries sb
           ON sb.workload_id = rw.workload_id AND sb.lineage = rr.lineage AND sb.version = rr.previous_version
         WHERE rr.id = $1 AND rw.reason = 'slope' ORDER BY w.name, w.metric")
        .bind(id);
    let rows: Vec<ControlMemberRow> = exec.reborrow().all(&q).await?;
    let Some(first) = rows.first() else { return Ok(None) };
    let from = rows.iter().filter_map(|r| r.good_first.or(r.bad_first)).min();
    let to = rows.iter().filter_map(|r| r.bad_last).max();
    let (Some(from), Some(to)) = (from, to) else { return Ok(None) };
    let mut host_ids: Vec<i64> = Vec::new();
    for r in &rows {
        for ids in [&r.hosts_before, &r.hosts_after].into_iter().flatten() {
            host_ids.extend(decode_json::<Vec<i64>>(ids)?);
        }
    }
    host_ids.sort_unstable();
    host_ids.dedup();
    let hosts: Vec<HostName> = if host_ids.is_empty() {
        Vec::new()
    } else {
        let mut q = sql("SELECT id, name FROM hosts WHERE id IN ");
        q.push_tuple(host_ids.iter().copied()).push(" ORDER BY name, id");
        exec.reborrow().all(&q).await?
    };
    let mut regressed = Regressed {
        lineage: first.lineage.clone(),
        version: first.version.clone(),
        previous_version: first.previous_version.clone(),
        from,
        to,
        hosts: hosts.into_iter().map(|h| (h.id, h.name)).collect(),
        workloads: Vec::new(),
    };
    let workload_ids: Vec<i64> = rows.iter().map(|r| r.workload_id).collect();
    regressed.workloads = rows
        .into_iter()
        .map(|r| RegressedWorkload {
            workload_id: r.workload_id,
            name: r.workload,
            metric: r.metric,
            source_before: r.source_before,
            source_after: r.source_after,
            bad_first_run: r.bad_first,
        })
        .collect();
    let controls: Vec<&String> = controls.iter().filter(|c| **c != regressed.lineage).collect();
    if controls.is_empty() {
        return Ok(Some((regressed, Vec::new())));
    }
    let mut q = sql("SELECT t.name AS lineage, t.version, h.id AS host_id, h.name AS host, r.started_at,
                f.workload_id, f.source_hash, f.slope, f.ci_low, f.ci_high, f.r2, f.n_sizes
         FROM toolchains t JOIN runs r ON r.toolchain_id = t.id
         JOIN fits f ON f.run_id = r.id JOIN hosts h ON h.id = r.host_id
         WHERE t.name IN ");
    q.push_tuple(controls.iter().map(|c| c.as_str()));
    q.push(" AND f.workload_id IN ").push_tuple(workload_ids);
    q.push(" AND r.started_at >= ").push_bind(from).push(" AND r.started_at <= ").push_bind(to);
    q.push(" ORDER BY r.started_at DESC, r.id LIMIT ").push_bind(CONTROL_RUNS);
    let runs: Vec<ControlRow> = exec.all(&q).await?;
    let runs = runs
        .into_iter()
        .map(|r| ControlRun {
            lineage: r.lineage,
            version: r.version,
            host_id: r.host_id,
            host: r.host,
            started_at: r.started_at,
            workload_id: r.workload_id,
            source_hash: r.source_hash,
            evidence: SlopeEvidence {
                slope: r.slope,
                ci_low: r.ci_low,
                ci_high: r.ci_high,
                r2: r.r2,
                sizes: usize::try_from(r.n_sizes).unwrap_or(0),
            },
        })
        .collect();
    Ok(Some((regressed, runs)))
}
