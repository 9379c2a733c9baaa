//! What the alert rules read of a lineage in a summary pass: its open regressions' members, its
//! versions, every version summary and failure, and every regression it has. `intake` turns them
//! into the rules' tracks.

use super::db::complexity::decode_complexity;
use super::db::{sql, Tx};
use super::decode_json;
use crate::model::{MetricColumn, Reason, RegressionStatus, SizeMedian, Slope, StoredMember, StoredRegression, Track};
use slopewatch_core::complexity::{Class, Complexity};
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::wire::{Contract, Failure, Metric, SizeUnit};
use std::collections::HashMap;
use time::OffsetDateTime;

/// A workload of a regression still open, or opened at the version being summarised.
#[derive(sqlx::FromRow)]
struct LineageMemberRow {
    regression_id: i64,
    version: String,
    #[sqlx(try_from = "String")]
    status: RegressionStatus,
    workload_id: i64,
    reason: String,
    fixed_version: Option<String>,
}

/// A workload of a regression of the lineage still open, or opened at the version being
/// summarised.
#[derive(Debug, Clone)]
pub struct LineageMember {
    pub regression_id: i64,
    /// The regression's first bad version.
    pub version: String,
    pub status: RegressionStatus,
    pub track: Track,
    /// Where the workload was fixed, if it was.
    pub fixed_version: Option<String>,
}

/// A version summary of a workload, as the alert rules read it.
#[derive(sqlx::FromRow)]
struct LineageSummaryRow {
    workload_id: i64,
    workload: String,
    #[sqlx(try_from = "MetricColumn")]
    metric: Metric,
    #[sqlx(try_from = "String")]
    size_unit: SizeUnit,
    version: String,
    #[sqlx(flatten)]
    slope: Slope,
    sizes: String,
    runs: i32,
    host_ids: String,
    first_seen: OffsetDateTime,
    complexity: Option<String>,
    /// The class the workload is held to, when it has a contract.
    expected: Option<String>,
    source_hash: Option<String>,
    build_hash: Option<String>,
    beside_sizes: Option<String>,
    beside_lineage: Option<String>,
}

/// A workload's latest contract, still JSON.
#[derive(sqlx::FromRow)]
struct WorkloadContractRow {
    workload_id: i64,
    contract: String,
}

/// A version summary of a workload of the lineage, with its workload's name, metric and unit.
#[derive(Debug, Clone)]
pub struct LineageSummary {
    pub workload_id: i64,
    pub workload: String,
    pub metric: Metric,
    pub size_unit: SizeUnit,
    pub version: String,
    pub slope: Slope,
    pub sizes: Vec<SizeMedian>,
    /// The runs that passed the workload, and their hosts.
    pub runs: usize,
    pub host_ids: Vec<i64>,
    pub first_seen: OffsetDateTime,
    pub complexity: Option<Complexity>,
    /// The class the workload is held to, when it has a contract.
    pub expected: Option<Class>,
    /// The workload's source in the version's latest run, and the one build its runs ran.
    pub source_hash: Option<String>,
    pub build_hash: Option<String>,
    /// The workload's time over the control measured beside it, by size, and the control lineage.
    pub beside: Option<(String, Vec<SizeMedian>)>,
}

/// A version's failures of a workload, as the alert rules read them.
#[derive(sqlx::FromRow)]
struct LineageFailureRow {
    workload_id: i64,
    workload: String,
    #[sqlx(try_from = "MetricColumn")]
    metric: Metric,
    #[sqlx(try_from = "String")]
    size_unit: SizeUnit,
    version: String,
    runs: i32,
    host_ids: String,
    kind: String,
    size: Option<i64>,
    detail: String,
    facts: String,
    first_seen: OffsetDateTime,
}

/// A version's failures of a workload of the lineage, with its workload's name, metric and unit.
#[derive(Debug, Clone)]
pub struct LineageFailure {
    pub workload_id: i64,
    pub workload: String,
    pub metric: Metric,
    pub size_unit: SizeUnit,
    pub version: String,
    /// The runs that failed the workload, and their hosts.
    pub runs: usize,
    pub host_ids: Vec<i64>,
    /// The latest failure, as stored.
    pub failure: Option<Failure>,
    pub first_seen: OffsetDateTime,
}

/// A regression of a lineage with one of its workloads, as the alert rules read it.
#[derive(sqlx::FromRow)]
struct LineageRegressionRow {
    id: i64,
    version: String,
    previous_version: Option<String>,
    #[sqlx(try_from = "String")]
    status: RegressionStatus,
    fixed_version: Option<String>,
    merged_into: Option<i64>,
    workload_id: Option<i64>,
    reason: Option<String>,
    member_fixed_version: Option<String>,
}

impl Tx<'_> {
    /// The contract each of `workload_ids` is held to, for those with one.
    pub async fn workload_contracts(&mut self, workload_ids: &[i64]) -> Result<HashMap<i64, Contract>, sqlx::Error> {
        if workload_ids.is_empty() {
            return Ok(HashMap::new());
        }
        let mut q = sql("SELECT workload_id, contract FROM workload_contracts WHERE workload_id IN ");
        q.push_tuple(workload_ids.iter().copied());
        let rows: Vec<WorkloadContractRow> = self.exec().all(&q).await?;
        rows.into_iter().map(|r| Ok((r.workload_id, decode_json(&r.contract)?))).collect()
    }

    /// The size of interest and unit of each of `workload_ids` that has one, by id.
    pub async fn sizes_of_interest(
        &mut self,
        workload_ids: &[i64],
    ) -> Result<HashMap<i64, (u64, SizeUnit)>, sqlx::Error> {
        if workload_ids.is_empty() {
            return Ok(HashMap::new());
        }
        let mut q = sql("SELECT id, size_unit, size_of_interest FROM workloads
             WHERE size_of_interest IS NOT NULL AND id IN ");
        q.push_tuple(workload_ids.iter().copied());
        let rows: Vec<(i64, String, i64)> = self.exec().all(&q).await?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, unit, size)| Some((id, (u64::try_from(size).ok()?, SizeUnit::parse(&unit)?))))
            .collect())
    }

    /// The workloads of `at`'s lineage's open regressions, and of any regression opened at its
    /// version (repeated runs of that version must not alert again).
    pub async fn lineage_members(&mut self, at: &LineageVersion) -> Result<Vec<LineageMember>, sqlx::Error> {
        let q = sql("SELECT r.id AS regression_id, r.version, r.status, rw.workload_id, rw.reason, rw.fixed_version
             FROM regressions r JOIN regression_workloads rw ON rw.regression_id = r.id
             WHERE r.lineage = $1 AND r.merged_into IS NULL AND (r.status IN ('open', 'acknowledged') OR r.version = $2)");
        let rows: Vec<LineageMemberRow> = self.exec().all(&q.bind(&at.lineage).bind(&at.version)).await?;
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                Some(LineageMember {
                    regression_id: row.regression_id,
                    version: row.version,
                    status: row.status,
                    track: Track { workload_id: row.workload_id, reason: Reason::parse(&row.reason)? },
                    fixed_version: row.fixed_version,
                })
            })
            .collect())
    }

    /// Whether the lineage has any regression, whatever its status.
    pub async fn lineage_has_regressions(&mut self, lineage: &str) -> Result<bool, sqlx::Error> {
        let q = sql("SELECT 1 FROM regressions WHERE lineage = $1 LIMIT 1").bind(lineage);
        Ok(self.exec().value::<i32>(&q).await?.is_some())
    }

    /// Every version the lineage has a build of, measured or still pending: read from the builds
    /// (a row per toolchain build), so it costs the lineage's versions, never its summaries.
    pub async fn lineage_versions(&mut self, lineage: &str) -> Result<Vec<String>, sqlx::Error> {
        let q = sql("SELECT DISTINCT version FROM toolchains WHERE name = $1").bind(lineage);
        self.exec().column(&q).await
    }

    /// Every version summary of the lineage, with its workload's name, metric and unit.
    pub async fn lineage_summaries(&mut self, lineage: &str) -> Result<Vec<LineageSummary>, sqlx::Error> {
        let q = sql(LINEAGE_SUMMARY_COLUMNS).bind(lineage);
        let rows: Vec<LineageSummaryRow> = self.exec().all(&q).await?;
        decode_summaries(rows)
    }

    /// The summaries of `workload_ids` at one version of a lineage, as `lineage_summaries` reads
    /// them.
    pub async fn lineage_summaries_at(
        &mut self,
        at: &LineageVersion,
        workload_ids: &[i64],
    ) -> Result<Vec<LineageSummary>, sqlx::Error> {
        if workload_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = sql(LINEAGE_SUMMARY_COLUMNS);
        q.push(" AND s.version = $2 AND s.workload_id IN ");
        let mut q = q.bind(&at.lineage).bind(&at.version);
        q.push_tuple(workload_ids.iter().copied());
        let rows: Vec<LineageSummaryRow> = self.exec().all(&q).await?;
        decode_summaries(rows)
    }

    /// Every version's failures of a workload in the lineage, with its name, metric and unit.
    pub async fn lineage_failures(&mut self, lineage: &str) -> Result<Vec<LineageFailure>, sqlx::Error> {
        let q =
            sql("SELECT f.workload_id, w.name AS workload, w.metric, w.size_unit, f.version, f.runs, f.host_ids, f.kind, f.size, f.detail,
                    f.facts, f.first_seen
             FROM version_failures f JOIN workloads w ON w.id = f.workload_id WHERE f.lineage = $1");
        let rows: Vec<LineageFailureRow> = self.exec().all(&q.bind(lineage)).await?;
        rows.into_iter()
            .map(|row| {
                Ok(LineageFailure {
                    host_ids: decode_json(&row.host_ids)?,
                    failure: crate::model::stored_failure(&row.kind, row.size, &row.detail, &row.facts),
                    workload_id: row.workload_id,
                    workload: row.workload,
                    metric: row.metric,
                    size_unit: row.size_unit,
                    version: row.version,
                    runs: row.runs as usize,
                    first_seen: row.first_seen,
                })
            })
            .collect()
    }

    /// Every regression of the lineage, whatever its status, with its workloads.
    pub async fn lineage_regressions(&mut self, lineage: &str) -> Result<Vec<StoredRegression>, sqlx::Error> {
        let q =
            sql("SELECT r.id, r.version, r.previous_version, r.status, r.fixed_version, r.merged_into, rw.workload_id,
                    rw.reason, rw.fixed_version AS member_fixed_version
             FROM regressions r LEFT JOIN regression_workloads rw ON rw.regression_id = r.id
             WHERE r.lineage = $1 ORDER BY r.id");
        let rows: Vec<LineageRegressionRow> = self.exec().all(&q.bind(lineage)).await?;
        let mut stored: Vec<StoredRegression> = Vec::new();
        for row in rows {
            if stored.last().is_none_or(|s| s.id != row.id) {
                stored.push(StoredRegression {
                    id: row.id,
                    version: row.version,
                    previous_version: row.previous_version,
                    status: row.status,
                    fixed_version: row.fixed_version,
                    merged_into: row.merged_into,
                    members: Vec::new(),
                });
            }
            let reason = row.reason.as_deref().and_then(Reason::parse);
            if let (Some(workload_id), Some(reason), Some(s)) = (row.workload_id, reason, stored.last_mut()) {
                let track = Track { workload_id, reason };
                s.members.push(StoredMember { track, fixed_version: row.member_fixed_version });
            }
        }
        Ok(stored)
    }
}

/// A class as a contract stores it.
fn decode_class(text: &str) -> Result<Class, sqlx::Error> {
    Class::parse(text).ok_or_else(|| sqlx::Error::Decode(format!("{text:?} is not a class").into()))
}

/// A lineage's version summaries as the alert rules read them; `$1` is the lineage.
const LINEAGE_SUMMARY_COLUMNS: &str = "SELECT s.workload_id, w.name AS workload, w.metric, w.size_unit, s.version,
     s.slope, s.ci_low, s.ci_high, s.r2, s.sizes, s.runs, s.host_ids, s.first_seen, s.complexity, c.expected,
     s.source_hash, s.build_hash, s.beside_sizes, s.beside_lineage
     FROM version_summaries s JOIN workloads w ON w.id = s.workload_id
     LEFT JOIN workload_contracts c ON c.workload_id = s.workload_id WHERE s.lineage = $1";

fn decode_summaries(rows: Vec<LineageSummaryRow>) -> Result<Vec<LineageSummary>, sqlx::Error> {
    rows.into_iter()
        .map(|row| {
            Ok(LineageSummary {
                sizes: decode_json(&row.sizes)?,
                host_ids: decode_json(&row.host_ids)?,
                complexity: decode_complexity(row.complexity.as_deref())?,
                expected: row.expected.as_deref().map(decode_class).transpose()?,
                workload_id: row.workload_id,
                workload: row.workload,
                metric: row.metric,
                size_unit: row.size_unit,
                version: row.version,
                slope: row.slope,
                runs: row.runs as usize,
                first_seen: row.first_seen,
                beside: match (row.beside_lineage, row.beside_sizes.as_deref()) {
                    (Some(lineage), Some(sizes)) => Some((lineage, decode_json(sizes)?)),
                    _ => None,
                },
                source_hash: row.source_hash,
                build_hash: row.build_hash,
            })
        })
        .collect()
}
