//! Reading runs, series and what has reported. Every read here costs the number of versions,
//! workloads or rows shown, never the whole history of samples.

use super::{decode_json, with_pool, Store};
use serde::{Deserialize, Serialize};
use slopewatch_core::fit::LocalSlope;
use slopewatch_core::version::sort_versions;
use slopewatch_core::wire::{Host, Toolchain};
use std::collections::BTreeMap;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// The median time at one size for a version, across its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SizeMedian {
    pub size: u64,
    pub median_ns: f64,
    pub runs: usize,
}

/// One workload at one toolchain version, summarised over its runs.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VersionSummary {
    pub workload: String,
    pub lineage: String,
    pub version: String,
    pub slope: f64,
    pub slope_min: f64,
    pub slope_max: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub r2: f64,
    pub runs: i64,
    pub hosts: i64,
    pub sizes: Vec<SizeMedian>,
    #[serde(with = "time::serde::rfc3339")]
    pub first_seen: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub last_run_at: OffsetDateTime,
}

#[derive(sqlx::FromRow)]
pub(super) struct SummaryRecord {
    workload: String,
    lineage: String,
    version: String,
    slope: f64,
    slope_min: f64,
    slope_max: f64,
    ci_low: f64,
    ci_high: f64,
    r2: f64,
    runs: i32,
    hosts: i32,
    sizes: String,
    first_seen: OffsetDateTime,
    last_run_at: OffsetDateTime,
}

impl SummaryRecord {
    pub(super) fn into_summary(self) -> Result<VersionSummary, sqlx::Error> {
        let sizes = decode_json(&self.sizes)?;
        Ok(VersionSummary {
            workload: self.workload,
            lineage: self.lineage,
            version: self.version,
            slope: self.slope,
            slope_min: self.slope_min,
            slope_max: self.slope_max,
            ci_low: self.ci_low,
            ci_high: self.ci_high,
            r2: self.r2,
            runs: self.runs.into(),
            hosts: self.hosts.into(),
            sizes,
            first_seen: self.first_seen,
            last_run_at: self.last_run_at,
        })
    }
}

pub(super) const SUMMARY_COLUMNS: &str =
    "SELECT w.name AS workload, s.lineage, s.version, s.slope, s.slope_min, s.slope_max,
     s.ci_low, s.ci_high, s.r2, s.runs, s.hosts, s.sizes, s.first_seen, s.last_run_at
     FROM version_summaries s JOIN workloads w ON w.id = s.workload_id";

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct WorkloadRow {
    pub name: String,
    pub size_unit: String,
    #[serde(with = "time::serde::rfc3339")]
    pub first_seen: OffsetDateTime,
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

/// A run in a list of runs.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct RunListRow {
    pub id: Uuid,
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    pub host: String,
    pub lineage: String,
    pub version: String,
    pub sample_count: i32,
}

/// Everything stored about one run.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RunDetail {
    pub run_id: Uuid,
    pub agent_version: String,
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    /// When retention removed the run's raw samples: its measurements then keep their medians
    /// and sample counts, with empty `samples_ns`. `None` while the samples are kept.
    #[serde(with = "time::serde::rfc3339::option")]
    pub samples_pruned_at: Option<OffsetDateTime>,
    pub host: slopewatch_core::wire::Host,
    pub toolchain: slopewatch_core::wire::Toolchain,
    pub workloads: Vec<WorkloadDetail>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WorkloadDetail {
    pub name: String,
    pub size_unit: String,
    pub source_hash: String,
    pub slope: f64,
    pub intercept: f64,
    pub r2: f64,
    pub stderr: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub n_sizes: i32,
    pub local_slopes: Vec<LocalSlope>,
    /// Facts the agent reported about the workload, e.g. `sqlite_version`.
    pub metadata: BTreeMap<String, String>,
    pub measurements: Vec<MeasurementDetail>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MeasurementDetail {
    pub size: i64,
    pub median_ns: f64,
    /// How many samples the median was taken over, kept when the samples themselves are pruned.
    pub samples: i32,
    pub samples_ns: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Vec<i64>>,
}

/// (workload id, size, median, sample count, samples as JSON, instruction counts as JSON)
type MeasurementRow = (i64, i64, f64, i32, Option<String>, Option<String>);

/// A run's own columns with its host and toolchain, as the run page and exports read them.
#[derive(sqlx::FromRow)]
pub(super) struct RunHeader {
    pub agent_version: String,
    pub started_at: OffsetDateTime,
    pub received_at: OffsetDateTime,
    pub samples_pruned_at: Option<OffsetDateTime>,
    #[sqlx(flatten)]
    pub origin: RunOrigin,
}

/// The host and toolchain a run came from.
#[derive(sqlx::FromRow)]
pub(super) struct RunOrigin {
    host_name: String,
    cpu: String,
    kernel: String,
    arch: String,
    lineage: String,
    version: String,
    libc: String,
    target: String,
    compiler: String,
    flags: String,
}

/// The columns `RunHeader` reads, from `RUN_HEADER_FROM`.
pub(super) const RUN_HEADER_COLUMNS: &str = "r.agent_version, r.started_at, r.received_at, r.samples_pruned_at,
     h.name AS host_name, h.cpu, h.kernel, h.arch, t.name AS lineage, t.version, t.libc, t.target, t.compiler, t.flags";
pub(super) const RUN_HEADER_FROM: &str =
    "FROM runs r JOIN hosts h ON h.id = r.host_id JOIN toolchains t ON t.id = r.toolchain_id";

impl RunOrigin {
    /// The host and toolchain as the agent described them.
    pub(super) fn into_parts(self) -> (Host, Toolchain) {
        let host = Host { name: self.host_name, cpu: self.cpu, kernel: self.kernel, arch: self.arch };
        let toolchain = Toolchain {
            name: self.lineage,
            version: self.version,
            libc: self.libc,
            target: self.target,
            compiler: self.compiler,
            flags: self.flags,
        };
        (host, toolchain)
    }
}

#[derive(sqlx::FromRow)]
struct FitRecord {
    workload_id: i64,
    name: String,
    size_unit: String,
    source_hash: String,
    slope: f64,
    intercept: f64,
    r2: f64,
    stderr: f64,
    ci_low: f64,
    ci_high: f64,
    n_sizes: i32,
    local_slopes: String,
    metadata: String,
}

impl Store {
    /// Every version of one workload in one toolchain lineage, in version order.
    pub async fn series(&self, workload: &str, lineage: &str) -> Result<Vec<VersionSummary>, sqlx::Error> {
        let sql = format!("{SUMMARY_COLUMNS} WHERE w.name = $1 AND s.lineage = $2");
        let records: Vec<SummaryRecord> =
            with_pool!(self, |pool| sqlx::query_as(&sql).bind(workload).bind(lineage).fetch_all(pool).await?);
        let mut rows = records.into_iter().map(SummaryRecord::into_summary).collect::<Result<Vec<_>, _>>()?;
        sort_versions(&mut rows, |r| &r.version, |r| r.first_seen);
        Ok(rows)
    }

    /// Every version summary of every workload and lineage, each lineage in version order.
    pub async fn all_version_summaries(&self) -> Result<Vec<VersionSummary>, sqlx::Error> {
        let records: Vec<SummaryRecord> =
            with_pool!(self, |pool| sqlx::query_as(SUMMARY_COLUMNS).fetch_all(pool).await?);
        let mut rows = records.into_iter().map(SummaryRecord::into_summary).collect::<Result<Vec<_>, _>>()?;
        sort_versions(&mut rows, |r| &r.version, |r| r.first_seen);
        rows.sort_by(|a, b| (&a.workload, &a.lineage).cmp(&(&b.workload, &b.lineage)));
        Ok(rows)
    }

    pub async fn workloads(&self) -> Result<Vec<WorkloadRow>, sqlx::Error> {
        with_pool!(self, |pool| {
            sqlx::query_as("SELECT name, size_unit, first_seen FROM workloads ORDER BY name").fetch_all(pool).await
        })
    }

    /// Every toolchain build that has reported, by lineage and then version order.
    pub async fn toolchains(&self) -> Result<Vec<ToolchainRow>, sqlx::Error> {
        let mut rows: Vec<ToolchainRow> = with_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT t.name, t.version, t.libc, t.target, t.compiler, t.flags, t.first_seen,
                        COUNT(r.id) AS runs, MAX(r.received_at) AS last_run_at
                 FROM toolchains t LEFT JOIN runs r ON r.toolchain_id = t.id
                 GROUP BY t.id, t.name, t.version, t.libc, t.target, t.compiler, t.flags, t.first_seen",
            )
            .fetch_all(pool)
            .await?
        });
        sort_versions(&mut rows, |r| &r.version, |r| r.first_seen);
        rows.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(rows)
    }

    pub async fn hosts(&self) -> Result<Vec<HostRow>, sqlx::Error> {
        with_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT h.name, h.cpu, h.kernel, h.arch, h.first_seen,
                        COUNT(r.id) AS runs, MAX(r.received_at) AS last_run_at
                 FROM hosts h LEFT JOIN runs r ON r.host_id = h.id
                 GROUP BY h.id, h.name, h.cpu, h.kernel, h.arch, h.first_seen
                 ORDER BY h.name, h.id",
            )
            .fetch_all(pool)
            .await
        })
    }

    /// The most recently received runs.
    pub async fn recent_runs(&self, limit: i64) -> Result<Vec<RunListRow>, sqlx::Error> {
        with_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT r.id, r.started_at, r.received_at, h.name AS host, t.name AS lineage, t.version, r.sample_count
                 FROM runs r JOIN hosts h ON h.id = r.host_id JOIN toolchains t ON t.id = r.toolchain_id
                 ORDER BY r.received_at DESC LIMIT $1",
            )
            .bind(limit)
            .fetch_all(pool)
            .await
        })
    }

    /// One run with its host, toolchain, fits, medians and raw samples; `None` if unknown.
    pub async fn run(&self, run_id: Uuid) -> Result<Option<RunDetail>, sqlx::Error> {
        let (header, fits, medians) = with_pool!(self, |pool| {
            let sql = format!("SELECT {RUN_HEADER_COLUMNS} {RUN_HEADER_FROM} WHERE r.id = $1");
            let header: Option<RunHeader> = sqlx::query_as(&sql).bind(run_id).fetch_optional(pool).await?;
            let Some(header) = header else { return Ok(None) };
            let fits: Vec<FitRecord> = sqlx::query_as(
                "SELECT f.workload_id, w.name, w.size_unit, f.source_hash, f.slope, f.intercept, f.r2, f.stderr,
                        f.ci_low, f.ci_high, f.n_sizes, f.local_slopes, f.metadata
                 FROM fits f JOIN workloads w ON w.id = f.workload_id WHERE f.run_id = $1 ORDER BY w.name",
            )
            .bind(run_id)
            .fetch_all(pool)
            .await?;
            let medians: Vec<MeasurementRow> = sqlx::query_as(
                "SELECT workload_id, size, median_ns, samples, samples_ns, instructions FROM measurements
                 WHERE run_id = $1 ORDER BY workload_id, size",
            )
            .bind(run_id)
            .fetch_all(pool)
            .await?;
            (header, fits, medians)
        });

        let mut workloads = Vec::with_capacity(fits.len());
        for f in fits {
            let measurements = medians
                .iter()
                .filter(|m| m.0 == f.workload_id)
                .map(|(_, size, median_ns, samples, samples_ns, instructions)| {
                    Ok(MeasurementDetail {
                        size: *size,
                        median_ns: *median_ns,
                        samples: *samples,
                        // A pruned run has neither.
                        samples_ns: samples_ns.as_deref().map(decode_json).transpose()?.unwrap_or_default(),
                        instructions: instructions.as_deref().map(decode_json).transpose()?,
                    })
                })
                .collect::<Result<_, sqlx::Error>>()?;
            workloads.push(WorkloadDetail {
                local_slopes: decode_json(&f.local_slopes)?,
                metadata: decode_json(&f.metadata)?,
                name: f.name,
                size_unit: f.size_unit,
                source_hash: f.source_hash,
                slope: f.slope,
                intercept: f.intercept,
                r2: f.r2,
                stderr: f.stderr,
                ci_low: f.ci_low,
                ci_high: f.ci_high,
                n_sizes: f.n_sizes,
                measurements,
            });
        }
        let (host, toolchain) = header.origin.into_parts();
        Ok(Some(RunDetail {
            run_id,
            agent_version: header.agent_version,
            started_at: header.started_at,
            received_at: header.received_at,
            samples_pruned_at: header.samples_pruned_at,
            host,
            toolchain,
            workloads,
        }))
    }
}
