//! Reads the dashboard's pages need beyond the API's: the slope history for the overview, one
//! version's summary for comparisons, the versions a workload was built with, and what each host
//! ran. Each is one query whose cost is the number of summaries or toolchain builds, never samples.

use super::reads::{SummaryRecord, SUMMARY_COLUMNS};
use super::{with_pool, Store, VersionSummary, WorkloadRow};
use serde::Serialize;
use slopewatch_core::version::sort_versions;
use time::OffsetDateTime;

/// A version's slope for one workload, without its per-size medians.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct SlopeRow {
    pub workload: String,
    pub size_unit: String,
    pub lineage: String,
    pub version: String,
    pub slope: f64,
    #[serde(with = "time::serde::rfc3339")]
    pub first_seen: OffsetDateTime,
}

/// A toolchain version a workload was measured with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct VersionChoice {
    pub lineage: String,
    pub version: String,
    #[serde(skip)]
    pub first_seen: OffsetDateTime,
}

/// A toolchain version a host ran, how often and when last.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct HostVersion {
    pub host: String,
    pub lineage: String,
    pub version: String,
    pub runs: i64,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_run_at: Option<OffsetDateTime>,
}

impl Store {
    /// Every workload's slope at every version, grouped by workload and lineage, versions in order.
    pub async fn slope_history(&self) -> Result<Vec<SlopeRow>, sqlx::Error> {
        let mut rows: Vec<SlopeRow> = with_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT w.name AS workload, w.size_unit, s.lineage, s.version, s.slope, s.first_seen
                 FROM version_summaries s JOIN workloads w ON w.id = s.workload_id",
            )
            .fetch_all(pool)
            .await?
        });
        sort_versions(&mut rows, |r| &r.version, |r| r.first_seen);
        rows.sort_by(|a, b| (&a.workload, &a.lineage).cmp(&(&b.workload, &b.lineage)));
        Ok(rows)
    }

    pub async fn workload(&self, name: &str) -> Result<Option<WorkloadRow>, sqlx::Error> {
        with_pool!(self, |pool| {
            sqlx::query_as("SELECT name, size_unit, first_seen FROM workloads WHERE name = $1")
                .bind(name)
                .fetch_optional(pool)
                .await
        })
    }

    /// One workload at one toolchain version, summarised over its runs.
    pub async fn version_summary(
        &self,
        workload: &str,
        lineage: &str,
        version: &str,
    ) -> Result<Option<VersionSummary>, sqlx::Error> {
        let sql = format!("{SUMMARY_COLUMNS} WHERE w.name = $1 AND s.lineage = $2 AND s.version = $3");
        let record: Option<SummaryRecord> = with_pool!(self, |pool| {
            sqlx::query_as(&sql).bind(workload).bind(lineage).bind(version).fetch_optional(pool).await?
        });
        record.map(SummaryRecord::into_summary).transpose()
    }

    /// Every toolchain version the workload was measured with, by lineage and then version order.
    pub async fn workload_versions(&self, workload: &str) -> Result<Vec<VersionChoice>, sqlx::Error> {
        let mut rows: Vec<VersionChoice> = with_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT s.lineage, s.version, s.first_seen
                 FROM version_summaries s JOIN workloads w ON w.id = s.workload_id WHERE w.name = $1",
            )
            .bind(workload)
            .fetch_all(pool)
            .await?
        });
        sort_versions(&mut rows, |r| &r.version, |r| r.first_seen);
        rows.sort_by(|a, b| a.lineage.cmp(&b.lineage));
        Ok(rows)
    }

    /// Which toolchain versions each host name ran, by host, lineage and version order.
    pub async fn host_versions(&self) -> Result<Vec<HostVersion>, sqlx::Error> {
        let mut rows: Vec<HostVersion> = with_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT h.name AS host, t.name AS lineage, t.version, COUNT(*) AS runs, MAX(r.received_at) AS last_run_at
                 FROM runs r JOIN hosts h ON h.id = r.host_id JOIN toolchains t ON t.id = r.toolchain_id
                 GROUP BY h.name, t.name, t.version",
            )
            .fetch_all(pool)
            .await?
        });
        sort_versions(&mut rows, |r| &r.version, |r| r.last_run_at);
        rows.sort_by(|a, b| (&a.host, &a.lineage).cmp(&(&b.host, &b.lineage)));
        Ok(rows)
    }
}
