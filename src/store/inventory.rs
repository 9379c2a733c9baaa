//! What has reported: workloads (one row per metric each was measured by), toolchain builds and
//! hosts, with how often and when last, and which toolchain versions each host ran. Each read
//! costs the number of rows shown.

use super::db::sql;
use super::Store;
use crate::model::MetricColumn;
use serde::Serialize;
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::version::sort_versions;
use slopewatch_core::wire::{Metric, SizeUnit, VersionFrom};
use std::collections::HashMap;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A workload measured by one metric: a workload measured two ways has two rows, one per series.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct WorkloadRow {
    pub name: String,
    /// What its series measures.
    #[sqlx(try_from = "MetricColumn")]
    #[serde(rename = "measure")]
    pub metric: Metric,
    #[sqlx(try_from = "String")]
    #[schema(value_type = String)]
    pub size_unit: SizeUnit,
    #[serde(with = "time::serde::rfc3339")]
    pub first_seen: OffsetDateTime,
    /// The size its team runs it at, in its unit, as its latest run of this metric said.
    pub size_of_interest: Option<i64>,
}

/// One toolchain build that has reported, with how often and when last.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct ToolchainRow {
    pub name: String,
    pub version: String,
    pub libc: String,
    pub target: String,
    pub compiler: String,
    pub flags: String,
    /// What `version` counts, fixed for the lineage by its first run: the compiler's releases or
    /// the libc's.
    #[sqlx(try_from = "String")]
    pub version_from: VersionFrom,
    #[serde(with = "time::serde::rfc3339")]
    pub first_seen: OffsetDateTime,
    pub runs: i64,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_run_at: Option<OffsetDateTime>,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct HostRow {
    pub name: String,
    pub cpu: String,
    pub kernel: String,
    pub arch: String,
    #[serde(with = "time::serde::rfc3339")]
    pub first_seen: OffsetDateTime,
    pub runs: i64,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_run_at: Option<OffsetDateTime>,
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

/// When a toolchain build last sent a run.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ToolchainActivity {
    pub lineage: String,
    pub version: String,
    pub first_seen: OffsetDateTime,
    /// `None` for a build whose runs were all removed.
    pub last_run_at: Option<OffsetDateTime>,
}

impl ToolchainActivity {
    /// Every lineage's latest `window` versions among these builds, in version order, oldest
    /// first: what the overview reads the summaries of. A version whose runs are still being
    /// summarised counts, and shows once its summaries are written.
    pub fn latest_versions(builds: &[ToolchainActivity], window: usize) -> Vec<LineageVersion> {
        // A version is first seen when its first build was (builds differ in libc, target, flags).
        let mut first_seen: HashMap<(&str, &str), OffsetDateTime> = HashMap::new();
        for b in builds {
            let seen = first_seen.entry((b.lineage.as_str(), b.version.as_str())).or_insert(b.first_seen);
            *seen = (*seen).min(b.first_seen);
        }
        let mut versions: Vec<((&str, &str), OffsetDateTime)> = first_seen.into_iter().collect();
        sort_versions(&mut versions, |((_, v), _)| v, |(_, seen)| *seen);
        versions.sort_by_key(|((lineage, _), _)| *lineage);
        let mut latest = Vec::new();
        for lineage in versions.chunk_by(|((a, _), _), ((b, _), _)| a == b) {
            let from = lineage.len().saturating_sub(window);
            latest.extend(lineage[from..].iter().map(|((l, v), _)| LineageVersion::new(l.to_string(), v.to_string())));
        }
        latest
    }
}

impl Store {
    /// Every workload under every metric it was measured by, by name and then metric.
    pub async fn workloads(&self) -> Result<Vec<WorkloadRow>, sqlx::Error> {
        let q = sql("SELECT name, metric, size_unit, first_seen, size_of_interest FROM workloads");
        let mut rows: Vec<WorkloadRow> = self.all(&q).await?;
        rows.sort_by(|a, b| (&a.name, a.metric).cmp(&(&b.name, b.metric)));
        Ok(rows)
    }

    /// The workload named `name` as measured by `metric`.
    pub async fn workload(&self, name: &str, metric: Metric) -> Result<Option<WorkloadRow>, sqlx::Error> {
        let q = sql("SELECT name, metric, size_unit, first_seen, size_of_interest FROM workloads
             WHERE name = $1 AND metric = $2");
        self.optional(&q.bind(name).bind(metric.as_str())).await
    }

    /// Every toolchain build that has reported, by lineage and then version order.
    pub async fn toolchains(&self) -> Result<Vec<ToolchainRow>, sqlx::Error> {
        let q = sql("SELECT t.name, t.version, t.libc, t.target, t.compiler, t.flags, l.version_from, t.first_seen,
                    COUNT(r.id) AS runs, MAX(r.received_at) AS last_run_at
             FROM toolchains t JOIN lineages l ON l.name = t.name LEFT JOIN runs r ON r.toolchain_id = t.id
             GROUP BY t.id, t.name, t.version, t.libc, t.target, t.compiler, t.flags, l.version_from, t.first_seen");
        let mut rows: Vec<ToolchainRow> = self.all(&q).await?;
        sort_versions(&mut rows, |r| &r.version, |r| r.first_seen);
        rows.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(rows)
    }

    /// Every toolchain build and when it last sent a run: one look-up per build in the
    /// (toolchain, arrival) index, so the cost follows the builds, never the summaries, runs or
    /// samples stored.
    pub async fn toolchain_activity(&self) -> Result<Vec<ToolchainActivity>, sqlx::Error> {
        let q = sql("SELECT t.name AS lineage, t.version, t.first_seen,
                    (SELECT MAX(r.received_at) FROM runs r WHERE r.toolchain_id = t.id) AS last_run_at
             FROM toolchains t");
        self.all(&q).await
    }

    pub async fn hosts(&self) -> Result<Vec<HostRow>, sqlx::Error> {
        let q = sql("SELECT h.name, h.cpu, h.kernel, h.arch, h.first_seen,
                    COUNT(r.id) AS runs, MAX(r.received_at) AS last_run_at
             FROM hosts h LEFT JOIN runs r ON r.host_id = h.id
             GROUP BY h.id, h.name, h.cpu, h.kernel, h.arch, h.first_seen
             ORDER BY h.name, h.id");
        self.all(&q).await
    }

    /// Which toolchain versions each host name ran, by host, lineage and version order.
    pub async fn host_versions(&self) -> Result<Vec<HostVersion>, sqlx::Error> {
        let q = sql(
            "SELECT h.name AS host, t.name AS lineage, t.version, COUNT(*) AS runs, MAX(r.received_at) AS last_run_at
             FROM runs r JOIN hosts h ON h.id = r.host_id JOIN toolchains t ON t.id = r.toolchain_id
             GROUP BY h.name, t.name, t.version",
        );
        let mut rows: Vec<HostVersion> = self.all(&q).await?;
        sort_versions(&mut rows, |r| &r.version, |r| r.last_run_at);
        rows.sort_by(|a, b| (&a.host, &a.lineage).cmp(&(&b.host, &b.lineage)));
        Ok(rows)
    }
}
