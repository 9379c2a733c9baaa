//! Failures: the failed workloads of the runs a summary pass takes in, the per-version tallies it
//! keeps beside the version summaries (`version_failures`), and the reads of both for pages.

use super::db::{sql, Tx};
use super::{decode_json, Store};
use crate::format;
use crate::model::{stored_failure, MetricColumn};
use serde::Serialize;
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::wire::{Failure, FailureKind, Metric, SizeUnit};
use std::collections::HashMap;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// A failed workload of a run a summary pass took in.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClaimedFailure {
    pub run_id: Uuid,
    pub lineage: String,
    pub version: String,
    pub host_id: i64,
    pub started_at: OffsetDateTime,
    pub received_at: OffsetDateTime,
    pub workload_id: i64,
    pub workload: String,
    pub kind: String,
    pub size: Option<i64>,
    pub detail: String,
    pub facts: String,
}

/// A workload's failures at one version: how many runs failed it, on which hosts, the latest.
#[derive(Debug, Clone, PartialEq)]
pub struct FailureTotals {
    pub runs: usize,
    /// Sorted.
    pub host_ids: Vec<i64>,
    pub run_id: Uuid,
    pub failure: Failure,
    pub first_seen: OffsetDateTime,
    pub last_run_at: OffsetDateTime,
}

#[derive(sqlx::FromRow)]
struct FailureTotalsRow {
    lineage: String,
    version: String,
    workload_id: i64,
    runs: i32,
    host_ids: String,
    run_id: Uuid,
    kind: String,
    size: Option<i64>,
    detail: String,
    facts: String,
    first_seen: OffsetDateTime,
    last_run_at: OffsetDateTime,
}

impl FailureTotalsRow {
    /// The row's version, workload and totals; `None` for a kind this server does not know.
    fn decode(self) -> Result<Option<(LineageVersion, i64, FailureTotals)>, sqlx::Error> {
        let Some(failure) = stored_failure(&self.kind, self.size, &self.detail, &self.facts) else {
            return Ok(None);
        };
        let totals = FailureTotals {
            runs: self.runs as usize,
            host_ids: decode_json(&self.host_ids)?,
            run_id: self.run_id,
            failure,
            first_seen: self.first_seen,
            last_run_at: self.last_run_at,
        };
        Ok(Some((LineageVersion::new(self.lineage, self.version), self.workload_id, totals)))
    }
}

const TOTALS_COLUMNS: &str = "SELECT lineage, version, workload_id, runs, host_ids, run_id, kind, size, detail, facts,
     first_seen, last_run_at FROM version_failures";

/// Failure totals by lineage version, then by workload id.
pub type FailureTotalsByVersion = HashMap<LineageVersion, HashMap<i64, FailureTotals>>;

impl Tx<'_> {
    /// The failed workloads of the claimed runs.
    pub async fn claimed_failures(&mut self, claimed: &[Uuid]) -> Result<Vec<ClaimedFailure>, sqlx::Error> {
        let mut q = sql("SELECT x.run_id, t.name AS lineage, t.version, r.host_id, r.started_at, r.received_at,
                    x.workload_id, w.name AS workload, x.kind, x.size, x.detail, x.facts
             FROM failures x JOIN runs r ON r.id = x.run_id JOIN toolchains t ON t.id = r.toolchain_id
             JOIN workloads w ON w.id = x.workload_id WHERE x.run_id IN ");
        q.push_tuple(claimed.iter().copied());
        self.exec().all(&q).await
    }

    /// The stored failure totals of these workloads at these versions.
    pub async fn failure_totals(
        &mut self,
        versions: &[LineageVersion],
        workload_ids: &[i64],
    ) -> Result<FailureTotalsByVersion, sqlx::Error> {
        let mut totals = FailureTotalsByVersion::new();
        if workload_ids.is_empty() {
            return Ok(totals);
        }
        let mut q = sql(format!("{TOTALS_COLUMNS} WHERE (lineage, version) IN "));
        q.push_versions(versions).push(" AND workload_id IN ").push_tuple(workload_ids.iter().copied());
        let rows: Vec<FailureTotalsRow> = self.exec().all(&q).await?;
        for row in rows {
            if let Some((version, workload_id, t)) = row.decode()? {
                totals.entry(version).or_default().insert(workload_id, t);
            }
        }
        Ok(totals)
    }

    /// Writes failure totals, each replacing the stored one of its workload and version.
    pub async fn upsert_failure_totals(&mut self, totals: &FailureTotalsByVersion) -> Result<(), sqlx::Error> {
        let rows: Vec<(&LineageVersion, &i64, &FailureTotals)> =
            totals.iter().flat_map(|(v, by_workload)| by_workload.iter().map(move |(w, t)| (v, w, t))).collect();
        if rows.is_empty() {
            return Ok(());
        }
        let mut q = sql("INSERT INTO version_failures (workload_id, lineage, version, runs, host_ids, run_id, kind,
             size, detail, facts, first_seen, last_run_at) ");
        q.push_values(rows, |b, (v, &workload_id, t)| {
            b.bind(workload_id)
                .bind(v.lineage.as_str())
                .bind(v.version.as_str())
                .bind(t.runs as i32)
                .bind(serde_json::to_string(&t.host_ids).expect("ids serialize"))
                .bind(t.run_id)
                .bind(t.failure.kind.as_str())
                .bind(t.failure.size.map(|s| s as i64))
                .bind(t.failure.detail.clone())
                .bind(crate::model::failure_facts(&t.failure))
                .bind(t.first_seen)
                .bind(t.last_run_at);
        });
        q.push(
            " ON CONFLICT (workload_id, lineage, version) DO UPDATE SET runs = excluded.runs,
             host_ids = excluded.host_ids, run_id = excluded.run_id, kind = excluded.kind, size = excluded.size,
             detail = excluded.detail, facts = excluded.facts, first_seen = excluded.first_seen,
             last_run_at = excluded.last_run_at",
        );
        self.exec().execute(&q).await.map(drop)
    }
}

impl ClaimedFailure {
    /// The failure as the agent sent it; `None` for a kind this server does not know.
    pub fn failure(&self) -> Option<Failure> {
        stored_failure(&self.kind, self.size, &self.detail, &self.facts)
    }
}

/// Adds the failures a pass took in to the stored totals: runs and hosts counted, the latest
/// failure (by start, then run id) kept.
pub fn add_failures(totals: &mut FailureTotalsByVersion, claimed: &[ClaimedFailure]) {
    for c in claimed {
        let Some(failure) = c.failure() else { continue };
        let at = totals.entry(LineageVersion::new(c.lineage.clone(), c.version.clone())).or_default();
        let t = at.entry(c.workload_id).or_insert_with(|| FailureTotals {
            runs: 0,
            host_ids: Vec::new(),
            run_id: c.run_id,
            failure: failure.clone(),
            first_seen: c.started_at,
            last_run_at: c.started_at,
        });
        t.runs += 1;
        if let Err(i) = t.host_ids.binary_search(&c.host_id) {
            t.host_ids.insert(i, c.host_id);
        }
        t.first_seen = t.first_seen.min(c.started_at);
        if (c.started_at, c.run_id) >= (t.last_run_at, t.run_id) {
            t.last_run_at = c.started_at;
            t.run_id = c.run_id;
            t.failure = failure;
        }
    }
}

/// A workload's failures at one version of a lineage, beside its summary: how many of the
/// version's runs and hosts failed it, and the latest failure.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VersionFailures {
    pub version: String,
    /// The version's runs of the workload, passed or failed.
    pub runs: i64,
    /// Of those, the runs that failed it.
    pub failed_runs: i64,
    /// The hosts those runs came from.
    pub hosts: i64,
    /// Of those, the hosts it failed on.
    pub failed_hosts: i64,
    /// The latest failure.
    pub kind: FailureKind,
    /// The kind for people, e.g. `wrong result`.
    pub label: String,
    /// The input size it failed at; none when it failed before any size ran.
    pub size: Option<u64>,
    pub detail: String,
    pub exit_status: Option<i32>,
    pub signal: Option<i32>,
    pub limit_ms: Option<u64>,
    pub got: Option<String>,
    pub expected: Option<String>,
    /// One line, e.g. `wrong result at 64 KiB: got -1, expected 9362`.
    pub summary: String,
    /// The run the latest failure is from.
    pub run_id: Uuid,
    #[serde(with = "time::serde::rfc3339")]
    pub first_seen: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub last_failed_at: OffsetDateTime,
}

impl VersionFailures {
    /// Every run of the version failed the workload: it has no slope there.
    pub fn every_run(&self) -> bool {
        self.failed_runs >= self.runs
    }

    /// The failure as the agent sent it.
    pub fn failure(&self) -> Failure {
        Failure {
            kind: self.kind,
            size: self.size,
            detail: self.detail.clone(),
            exit_status: self.exit_status,
            signal: self.signal,
            limit_ms: self.limit_ms,
            got: self.got.clone(),
            expected: self.expected.clone(),
        }
    }
}

/// Failures of workloads at versions of lineages, with the runs and hosts of the same version that
/// passed them: `SeriesFailureRow`s, narrowed by a `WHERE` on `w` (the workload) and `f`.
pub(super) const SERIES_FAILURE_COLUMNS: &str =
    "SELECT w.name AS workload, w.metric, f.lineage, f.version, f.runs AS failed_runs,
            COALESCE(s.runs, 0) AS passed_runs, f.host_ids, COALESCE(s.host_ids, '[]') AS passed_host_ids, f.run_id,
            f.kind, f.size, w.size_unit, f.detail, f.facts, f.first_seen, f.last_run_at
     FROM version_failures f JOIN workloads w ON w.id = f.workload_id
     LEFT JOIN version_summaries s
       ON s.workload_id = f.workload_id AND s.lineage = f.lineage AND s.version = f.version";

/// A workload's failures at one version, beside the runs and hosts that passed it.
#[derive(sqlx::FromRow)]
pub(super) struct SeriesFailureRow {
    pub(super) workload: String,
    #[sqlx(try_from = "MetricColumn")]
    pub(super) metric: Metric,
    pub(super) lineage: String,
    version: String,
    failed_runs: i32,
    passed_runs: i32,
    host_ids: String,
    passed_host_ids: String,
    run_id: Uuid,
    kind: String,
    size: Option<i64>,
    #[sqlx(try_from = "String")]
    size_unit: SizeUnit,
    detail: String,
    facts: String,
    first_seen: OffsetDateTime,
    last_run_at: OffsetDateTime,
}

impl SeriesFailureRow {
    /// The failures as pages read them; `None` for a kind this server does not know.
    pub(super) fn decode(self) -> Result<Option<VersionFailures>, sqlx::Error> {
        let Some(failure) = stored_failure(&self.kind, self.size, &self.detail, &self.facts) else { return Ok(None) };
        let failed_hosts: Vec<i64> = decode_json(&self.host_ids)?;
        let mut hosts: Vec<i64> = decode_json(&self.passed_host_ids)?;
        hosts.extend(&failed_hosts);
        hosts.sort_unstable();
        hosts.dedup();
        Ok(Some(VersionFailures {
            runs: i64::from(self.failed_runs) + i64::from(self.passed_runs),
            failed_runs: self.failed_runs.into(),
            hosts: hosts.len() as i64,
            failed_hosts: failed_hosts.len() as i64,
            label: failure.kind.label().to_string(),
            summary: format::failure(&failure, self.size_unit),
            kind: failure.kind,
            size: failure.size,
            detail: failure.detail,
            exit_status: failure.exit_status,
            signal: failure.signal,
            limit_ms: failure.limit_ms,
            got: failure.got,
            expected: failure.expected,
            run_id: self.run_id,
            version: self.version,
            first_seen: self.first_seen,
            last_failed_at: self.last_run_at,
        }))
    }
}

/// A version of a lineage where a workload failed, for the overview: the latest failure's kind.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct OverviewFailureRow {
    pub workload: String,
    #[sqlx(try_from = "MetricColumn")]
    pub metric: Metric,
    #[sqlx(try_from = "String")]
    pub size_unit: SizeUnit,
    pub lineage: String,
    pub version: String,
    pub kind: String,
    pub failed_runs: i32,
    /// Runs of the version that passed the workload.
    pub passed_runs: i32,
    pub first_seen: OffsetDateTime,
}

impl Store {
    /// The failures of one workload's series of `metric` at each version of one lineage that has
    /// any, counted among the version's runs and hosts that passed it too; in no particular order.
    pub async fn series_failures(
        &self,
        workload: &str,
        metric: Metric,
        lineage: &str,
    ) -> Result<Vec<VersionFailures>, sqlx::Error> {
        let q = sql(format!("{SERIES_FAILURE_COLUMNS} WHERE w.name = $1 AND w.metric = $2 AND f.lineage = $3"));
        let rows: Vec<SeriesFailureRow> = self.all(&q.bind(workload).bind(metric.as_str()).bind(lineage)).await?;
        Ok(rows
            .into_iter()
            .map(SeriesFailureRow::decode)
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .flatten()
            .collect())
    }

    /// Every workload that failed at one of these versions, with how many of its runs did. Reads
    /// these versions' failures only, through the (lineage, version) index.
    pub async fn failure_history(&self, versions: &[LineageVersion]) -> Result<Vec<OverviewFailureRow>, sqlx::Error> {
        if versions.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = sql(
            "SELECT w.name AS workload, w.metric, w.size_unit, f.lineage, f.version, f.kind, f.runs AS failed_runs,
                    COALESCE(s.runs, 0) AS passed_runs, f.first_seen
             FROM version_failures f JOIN workloads w ON w.id = f.workload_id
             LEFT JOIN version_summaries s
               ON s.workload_id = f.workload_id AND s.lineage = f.lineage AND s.version = f.version
             WHERE (f.lineage, f.version) IN ",
        );
        q.push_versions(versions);
        self.all(&q).await
    }
}
