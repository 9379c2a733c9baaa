//! Reading version summaries: a workload's series of one metric across a lineage's versions, every
//! summary, the overview's slope history, one version's summary, the versions a workload was built
//! with and the metrics it was measured by. Each read costs the number of summaries shown, never
//! the runs or samples behind them.

use super::db::complexity::decode_complexity;
use super::db::sql;
use super::{decode_json, Store};
use crate::model::{MetricColumn, SizeMedian};
use serde::Serialize;
use slopewatch_core::complexity::{Class, Complexity};
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::verdict::SlopeEvidence;
use slopewatch_core::version::sort_versions;
use slopewatch_core::wire::{Metric, SizeUnit};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// One workload at one toolchain version, summarised over its runs.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VersionSummary {
    pub workload: String,
    /// What the series measures; `sizes` hold its medians (nanoseconds, or instructions).
    #[serde(rename = "measure")]
    pub metric: Metric,
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
    /// The complexity class of `sizes`' medians; `null` only while a store upgraded from before
    /// classes is still classifying its history.
    pub complexity: Option<Complexity>,
    /// The workload's source hash in the version's latest run.
    pub source_hash: Option<String>,
    /// How many distinct sources the summarised runs were built from.
    pub source_count: i64,
    /// The one build every summarised run ran, a hash of its code; `null` when they ran several
    /// or one did not say.
    pub build_hash: Option<String>,
}

#[derive(sqlx::FromRow)]
pub(super) struct SummaryRecord {
    workload: String,
    #[sqlx(try_from = "MetricColumn")]
    metric: Metric,
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
    complexity: Option<String>,
    source_hash: Option<String>,
    source_count: i32,
    build_hash: Option<String>,
}

impl SummaryRecord {
    pub(super) fn into_summary(self) -> Result<VersionSummary, sqlx::Error> {
        let sizes = decode_json(&self.sizes)?;
        Ok(VersionSummary {
            complexity: decode_complexity(self.complexity.as_deref())?,
            workload: self.workload,
            metric: self.metric,
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
            source_hash: self.source_hash,
            source_count: self.source_count.into(),
            build_hash: self.build_hash,
        })
    }
}

pub(super) const SUMMARY_COLUMNS: &str =
    "SELECT w.name AS workload, w.metric, s.lineage, s.version, s.slope, s.slope_min, s.slope_max,
     s.ci_low, s.ci_high, s.r2, s.runs, s.hosts, s.sizes, s.first_seen, s.last_run_at, s.complexity,
     s.source_hash, s.source_count, s.build_hash
     FROM version_summaries s JOIN workloads w ON w.id = s.workload_id";

const SLOPE_COLUMNS: &str = "SELECT w.name AS workload, w.metric, w.size_unit, s.lineage, s.version, s.slope,
     s.ci_low, s.ci_high, s.r2, s.sizes, s.complexity, s.first_seen
     FROM version_summaries s JOIN workloads w ON w.id = s.workload_id";

/// A version's slope and class for one workload, without its per-size medians.
#[derive(Debug, Clone, Serialize)]
pub struct SlopeRow {
    pub workload: String,
    #[serde(rename = "measure")]
    pub metric: Metric,
    pub size_unit: SizeUnit,
    pub lineage: String,
    pub version: String,
    pub slope: f64,
    /// The complexity class: `None` where not worked out, `Some(None)` where unsure.
    pub class: Option<Option<Class>>,
    #[serde(with = "time::serde::rfc3339")]
    pub first_seen: OffsetDateTime,
    /// The slope as the noise rule reads it, and the class with its evidence: what pages band it
    /// by, as the alert rules decide.
    #[serde(skip)]
    pub evidence: SlopeEvidence,
    #[serde(skip)]
    pub complexity: Option<Complexity>,
}

#[derive(sqlx::FromRow)]
struct SlopeRecord {
    workload: String,
    #[sqlx(try_from = "MetricColumn")]
    metric: Metric,
    #[sqlx(try_from = "String")]
    size_unit: SizeUnit,
    lineage: String,
    version: String,
    slope: f64,
    ci_low: f64,
    ci_high: f64,
    r2: f64,
    sizes: String,
    complexity: Option<String>,
    first_seen: OffsetDateTime,
}

/// A toolchain version a workload was measured with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct VersionChoice {
    pub lineage: String,
    pub version: String,
    #[serde(skip)]
    pub first_seen: OffsetDateTime,
}

impl Store {
    /// Every version of one workload's series of `metric` in one toolchain lineage, in version
    /// order.
    pub async fn series(
        &self,
        workload: &str,
        metric: Metric,
        lineage: &str,
    ) -> Result<Vec<VersionSummary>, sqlx::Error> {
        let q = sql(format!("{SUMMARY_COLUMNS} WHERE w.name = $1 AND w.metric = $2 AND s.lineage = $3"))
            .bind(workload)
            .bind(metric.as_str())
            .bind(lineage);
        let records: Vec<SummaryRecord> = self.all(&q).await?;
        let mut rows = records.into_iter().map(SummaryRecord::into_summary).collect::<Result<Vec<_>, _>>()?;
        sort_versions(&mut rows, |r| &r.version, |r| r.first_seen);
        Ok(rows)
    }

    /// Every version summary of every workload, metric and lineage, each series in version order.
    pub async fn all_version_summaries(&self) -> Result<Vec<VersionSummary>, sqlx::Error> {
        let records: Vec<SummaryRecord> = self.all(&sql(SUMMARY_COLUMNS)).await?;
        let mut rows = records.into_iter().map(SummaryRecord::into_summary).collect::<Result<Vec<_>, _>>()?;
        sort_versions(&mut rows, |r| &r.version, |r| r.first_seen);
        rows.sort_by(|a, b| (&a.workload, a.metric, &a.lineage).cmp(&(&b.workload, b.metric, &b.lineage)));
        Ok(rows)
    }

    /// Every workload's slope at these versions, grouped by workload, metric and lineage, versions
    /// in order. Reads the summaries of these versions only, through the (lineage, version) index.
    pub async fn slope_history(&self, versions: &[LineageVersion]) -> Result<Vec<SlopeRow>, sqlx::Error> {
        if versions.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = sql(format!("{SLOPE_COLUMNS} WHERE (s.lineage, s.version) IN "));
        q.push_versions(versions);
        self.slopes(q).await
    }

    /// `slope_history` of one lineage: its versions' slopes of every workload, the summaries of
    /// that lineage and no others.
    pub async fn lineage_slope_history(&self, lineage: &str) -> Result<Vec<SlopeRow>, sqlx::Error> {
        self.slopes(sql(format!("{SLOPE_COLUMNS} WHERE s.lineage = $1")).bind(lineage)).await
    }

    /// The slope and class at every version of `workloads`' series of `metric` in `lineage`,
    /// grouped by workload, versions in order: what a run page compares its run with.
    pub async fn lineage_slopes(
        &self,
        lineage: &str,
        metric: Metric,
        workloads: &[&str],
    ) -> Result<Vec<SlopeRow>, sqlx::Error> {
        if workloads.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = sql(format!("{SLOPE_COLUMNS} WHERE s.lineage = "));
        q.push_bind(lineage).push(" AND w.metric = ").push_bind(metric.as_str()).push(" AND w.name IN ");
        q.push_tuple(workloads.iter().copied());
        self.slopes(q).await
    }

    /// The `SLOPE_COLUMNS` rows of `q`, grouped by series, each in version order.
    async fn slopes(&self, q: super::db::Sql<'_>) -> Result<Vec<SlopeRow>, sqlx::Error> {
        let records: Vec<SlopeRecord> = self.all(&q).await?;
        let mut rows = records
            .into_iter()
            .map(|r| {
                // Only how many sizes the summary spans: the medians themselves are skipped.
                let sizes = decode_json::<Vec<serde::de::IgnoredAny>>(&r.sizes)?.len();
                let evidence = SlopeEvidence { slope: r.slope, ci_low: r.ci_low, ci_high: r.ci_high, r2: r.r2, sizes };
                let complexity = decode_complexity(r.complexity.as_deref())?;
                Ok(SlopeRow {
                    class: complexity.as_ref().map(|c| c.class),
                    complexity,
                    evidence,
                    workload: r.workload,
                    metric: r.metric,
                    size_unit: r.size_unit,
                    lineage: r.lineage,
                    version: r.version,
                    slope: r.slope,
                    first_seen: r.first_seen,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
        sort_versions(&mut rows, |r| &r.version, |r| r.first_seen);
        rows.sort_by(|a, b| (&a.workload, a.metric, &a.lineage).cmp(&(&b.workload, b.metric, &b.lineage)));
        Ok(rows)
    }

    /// One workload's series of `metric` at one toolchain version, summarised over its runs.
    pub async fn version_summary(
        &self,
        workload: &str,
        metric: Metric,
        lineage: &str,
        version: &str,
    ) -> Result<Option<VersionSummary>, sqlx::Error> {
        let q =
            sql(format!("{SUMMARY_COLUMNS} WHERE w.name = $1 AND w.metric = $2 AND s.lineage = $3 AND s.version = $4"));
        let q = q.bind(workload).bind(metric.as_str()).bind(lineage).bind(version);
        let record: Option<SummaryRecord> = self.optional(&q).await?;
        record.map(SummaryRecord::into_summary).transpose()
    }

    /// Every toolchain version the workload's series of `metric` was measured with, by lineage and
    /// then version order.
    pub async fn workload_versions(&self, workload: &str, metric: Metric) -> Result<Vec<VersionChoice>, sqlx::Error> {
        let q = sql("SELECT s.lineage, s.version, s.first_seen
             FROM version_summaries s JOIN workloads w ON w.id = s.workload_id WHERE w.name = $1 AND w.metric = $2");
        let mut rows: Vec<VersionChoice> = self.all(&q.bind(workload).bind(metric.as_str())).await?;
        sort_versions(&mut rows, |r| &r.version, |r| r.first_seen);
        rows.sort_by(|a, b| a.lineage.cmp(&b.lineage));
        Ok(rows)
    }

    /// The metrics the workload has a series of in `lineage` (a version summary or a failure), in
    /// `Metric::ALL` order; in every lineage without one.
    pub async fn series_metrics(&self, workload: &str, lineage: Option<&str>) -> Result<Vec<Metric>, sqlx::Error> {
        let q = sql("SELECT w.metric FROM workloads w WHERE w.name = $1 AND (
                 EXISTS (SELECT 1 FROM version_summaries s WHERE s.workload_id = w.id AND ($2 IS NULL OR s.lineage = $2))
                 OR EXISTS (SELECT 1 FROM version_failures f WHERE f.workload_id = w.id AND ($2 IS NULL OR f.lineage = $2)))");
        let rows: Vec<(MetricColumn,)> = self.all(&q.bind(workload).bind(lineage)).await?;
        let found: Vec<Metric> =
            rows.into_iter().map(|(m,)| Metric::try_from(m)).collect::<Result<_, _>>().map_err(decode_error)?;
        Ok(Metric::ALL.into_iter().filter(|m| found.contains(m)).collect())
    }
}

/// A column that does not read as its type.
fn decode_error(e: String) -> sqlx::Error {
    sqlx::Error::Decode(e.into())
}
