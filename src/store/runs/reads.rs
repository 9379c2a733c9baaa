//! Reading runs back: the latest runs, and one run whole with its fits and samples.

use crate::model::{stored_failure, MetricColumn};
use crate::store::db::sql;
use crate::store::{decode_json, Store};
use serde::Serialize;
use slopewatch_core::complexity::Complexity;
use slopewatch_core::fit::LocalSlope;
use slopewatch_core::wire::{Failure, Host, Metric, SizeUnit, Toolchain, VersionFrom};
use std::collections::BTreeMap;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

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
    /// What the run measured.
    #[sqlx(try_from = "MetricColumn")]
    #[serde(rename = "measure")]
    pub metric: Metric,
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
    /// What the run measured, and so what every median below is of: `wall` or `cpu` time in
    /// nanoseconds, or instructions counted (`instructions-perf`, `instructions-valgrind`).
    #[serde(rename = "measure")]
    pub metric: Metric,
    pub workloads: Vec<WorkloadDetail>,
}

/// A workload of a run: its fit, or its failure with the sizes measured before it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WorkloadDetail {
    pub name: String,
    #[schema(value_type = String)]
    pub size_unit: SizeUnit,
    pub source_hash: String,
    /// The log-log fit's numbers. For a failed workload they are those of a partial fit over the
    /// sizes measured before the failure (`partial`), or null when it measured too few sizes.
    pub slope: Option<f64>,
    pub intercept: Option<f64>,
    pub r2: Option<f64>,
    pub stderr: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub n_sizes: i32,
    /// The complexity class of the medians, worked out as the run is read; `null` for a failed
    /// workload.
    pub complexity: Option<Complexity>,
    pub local_slopes: Vec<LocalSlope>,
    /// Facts the agent reported about the workload, e.g. `sqlite_version`.
    pub metadata: BTreeMap<String, String>,
    pub measurements: Vec<MeasurementDetail>,
    /// The fit was made on read from a failed workload's sizes: shown, never summarised or
    /// alerted on.
    pub partial: bool,
    /// Why the workload stopped before it was measured fully; null when it passed.
    pub failure: Option<Failure>,
    /// The size its team runs it at, as the run said, in its unit.
    pub size_of_interest: Option<i64>,
    /// The time (or count) predicted there from this run's fit, e.g. "at 4 MiB: ≈ 46 s [41 s, 52
    /// s], predicted past the 256 KiB measured"; null without a size of interest or a fit.
    pub at_size_of_interest: Option<String>,
    /// Where its instructions went at one size, where the agent profiled it (docs/profiles.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<slopewatch_core::profile::Profile>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MeasurementDetail {
    pub size: i64,
    /// The median by the run's metric: of `samples_ns`, or of `instructions` in an instructions
    /// run.
    pub median_ns: f64,
    /// How many samples the median was taken over, kept when the samples themselves are pruned.
    pub samples: i32,
    pub samples_ns: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Vec<i64>>,
}

/// A measurement as stored: its samples and instruction counts still JSON.
#[derive(sqlx::FromRow)]
pub(in crate::store) struct MeasurementRow {
    pub workload_id: i64,
    pub size: i64,
    pub median_ns: f64,
    pub samples: i32,
    pub samples_ns: Option<String>,
    pub instructions: Option<String>,
}

/// A run's own columns with its host and toolchain, as the run page and exports read them.
#[derive(sqlx::FromRow)]
pub(in crate::store) struct RunHeader {
    pub agent_version: String,
    pub started_at: OffsetDateTime,
    pub received_at: OffsetDateTime,
    pub samples_pruned_at: Option<OffsetDateTime>,
    #[sqlx(try_from = "MetricColumn")]
    pub metric: Metric,
    #[sqlx(flatten)]
    pub origin: RunOrigin,
}

/// The host and toolchain a run came from.
#[derive(sqlx::FromRow)]
pub(in crate::store) struct RunOrigin {
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
    #[sqlx(try_from = "String")]
    version_from: VersionFrom,
}

/// The columns `RunHeader` reads, from `RUN_HEADER_FROM`.
pub(in crate::store) const RUN_HEADER_COLUMNS: &str =
    "r.agent_version, r.started_at, r.received_at, r.samples_pruned_at, r.metric,
     h.name AS host_name, h.cpu, h.kernel, h.arch, t.name AS lineage, t.version, t.libc, t.target, t.compiler, t.flags,
     l.version_from";
pub(in crate::store) const RUN_HEADER_FROM: &str = "FROM runs r JOIN hosts h ON h.id = r.host_id
     JOIN toolchains t ON t.id = r.toolchain_id JOIN lineages l ON l.name = t.name";

impl RunOrigin {
    /// The host and toolchain as the agent described them.
    pub(in crate::store) fn into_parts(self) -> (Host, Toolchain) {
        let host = Host { name: self.host_name, cpu: self.cpu, kernel: self.kernel, arch: self.arch };
        let toolchain = Toolchain {
            name: self.lineage,
            version: self.version,
            libc: self.libc,
            target: self.target,
            compiler: self.compiler,
            flags: self.flags,
            version_from: self.version_from,
        };
        (host, toolchain)
    }
}

#[derive(sqlx::FromRow)]
struct FitRecord {
    workload_id: i64,
    name: String,
    #[sqlx(try_from = "String")]
    size_unit: SizeUnit,
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
    profile: Option<String>,
}

/// A failed workload of a run, its failure still as stored.
#[derive(sqlx::FromRow)]
struct RunFailureRecord {
    workload_id: i64,
    name: String,
    #[sqlx(try_from = "String")]
    size_unit: SizeUnit,
    source_hash: String,
    kind: String,
    size: Option<i64>,
    detail: String,
    facts: String,
    metadata: String,
}

impl Store {
    /// The most recently received runs.
    pub async fn recent_runs(&self, limit: i64) -> Result<Vec<RunListRow>, sqlx::Error> {
        let q = sql("SELECT r.id, r.started_at, r.received_at, h.name AS host, t.name AS lineage, t.version, r.metric,
                    r.sample_count
             FROM runs r JOIN hosts h ON h.id = r.host_id JOIN toolchains t ON t.id = r.toolchain_id
             ORDER BY r.received_at DESC LIMIT $1");
        self.all(&q.bind(limit)).await
    }

    /// One run with its host, toolchain, fits, failures, medians and raw samples; `None` if unknown.
    /// A failed workload comes without a fit: the store keeps none for it. What is worked out from
    /// the numbers (classes, the cost at a size of interest, a failed workload's partial fit) is
    /// not stored, and not filled in here (`views::fill_in_run`).
    pub async fn run(&self, run_id: Uuid) -> Result<Option<RunDetail>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        let q = sql(format!("SELECT {RUN_HEADER_COLUMNS} {RUN_HEADER_FROM} WHERE r.id = $1")).bind(run_id);
        let Some(header) = conn.exec().optional::<RunHeader>(&q).await? else { return Ok(None) };
        let q = sql("SELECT f.workload_id, w.name, w.size_unit, f.source_hash, f.slope, f.intercept, f.r2, f.stderr,
                    f.ci_low, f.ci_high, f.n_sizes, f.local_slopes, f.metadata, f.profile
             FROM fits f JOIN workloads w ON w.id = f.workload_id WHERE f.run_id = $1 ORDER BY w.name");
        let fits: Vec<FitRecord> = conn.exec().all(&q.bind(run_id)).await?;
        let q = sql("SELECT x.workload_id, w.name, w.size_unit, x.source_hash, x.kind, x.size, x.detail, x.facts,
                    x.metadata
             FROM failures x JOIN workloads w ON w.id = x.workload_id WHERE x.run_id = $1");
        let failures: Vec<RunFailureRecord> = conn.exec().all(&q.bind(run_id)).await?;
        let q = sql("SELECT workload_id, size, median_ns, samples, samples_ns, instructions FROM measurements
             WHERE run_id = $1 ORDER BY workload_id, size");
        let medians: Vec<MeasurementRow> = conn.exec().all(&q.bind(run_id)).await?;
        let q = sql("SELECT workload_id, size_of_interest FROM run_contracts
             WHERE run_id = $1 AND size_of_interest IS NOT NULL");
        let interests: Vec<(i64, i64)> = conn.exec().all(&q.bind(run_id)).await?;
        drop(conn);
        let interest = |workload_id: i64| interests.iter().find(|(w, _)| *w == workload_id).map(|(_, s)| *s);

        let measured = |workload_id: i64| {
            medians
                .iter()
                .filter(|m| m.workload_id == workload_id)
                .map(|m| {
                    Ok(MeasurementDetail {
                        size: m.size,
                        median_ns: m.median_ns,
                        samples: m.samples,
                        // A pruned run has neither.
                        samples_ns: m.samples_ns.as_deref().map(decode_json).transpose()?.unwrap_or_default(),
                        instructions: m.instructions.as_deref().map(decode_json).transpose()?,
                    })
                })
                .collect::<Result<Vec<_>, sqlx::Error>>()
        };
        let mut workloads = Vec::with_capacity(fits.len() + failures.len());
        for f in fits {
            let measurements = measured(f.workload_id)?;
            workloads.push(WorkloadDetail {
                size_of_interest: interest(f.workload_id),
                at_size_of_interest: None,
                complexity: None,
                local_slopes: decode_json(&f.local_slopes)?,
                metadata: decode_json(&f.metadata)?,
                measurements,
                name: f.name,
                size_unit: f.size_unit,
                source_hash: f.source_hash,
                slope: Some(f.slope),
                intercept: Some(f.intercept),
                r2: Some(f.r2),
                stderr: Some(f.stderr),
                ci_low: Some(f.ci_low),
                ci_high: Some(f.ci_high),
                n_sizes: f.n_sizes,
                partial: false,
                failure: None,
                profile: f.profile.as_deref().map(decode_json).transpose()?,
            });
        }
        for x in failures {
            let measurements = measured(x.workload_id)?;
            workloads.push(WorkloadDetail {
                complexity: None,
                failure: stored_failure(&x.kind, x.size, &x.detail, &x.facts),
                metadata: decode_json(&x.metadata)?,
                n_sizes: measurements.len() as i32,
                measurements,
                name: x.name,
                size_unit: x.size_unit,
                source_hash: x.source_hash,
                slope: None,
                intercept: None,
                r2: None,
                stderr: None,
                ci_low: None,
                ci_high: None,
                local_slopes: Vec::new(),
                partial: false,
                size_of_interest: interest(x.workload_id),
                at_size_of_interest: None,
                profile: None,
            });
        }
        workloads.sort_by(|a, b| a.name.cmp(&b.name));
        let (host, toolchain) = header.origin.into_parts();
        Ok(Some(RunDetail {
            run_id,
            agent_version: header.agent_version,
            started_at: header.started_at,
            received_at: header.received_at,
            samples_pruned_at: header.samples_pruned_at,
            metric: header.metric,
            host,
            toolchain,
            workloads,
        }))
    }
}
