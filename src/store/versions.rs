//! What a toolchain version's page and the all-workloads comparison read: every workload's version
//! summary and failures at the versions compared, and the regressions opened or fixed at a
//! version. Each read costs the summaries shown (workloads × versions), never the runs or samples
//! behind them, so the pages do not slow as history grows.

use super::db::sql;
use super::failures::{SeriesFailureRow, SERIES_FAILURE_COLUMNS};
use super::regressions::{read_members, REGRESSION_COLUMNS, WORKLOAD_COLUMNS};
use super::series::{SummaryRecord, SUMMARY_COLUMNS};
use super::{Store, VersionFailures, VersionSummary};
use crate::model::{with_members, RegressionRow, RegressionWorkload};
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::wire::Metric;

/// A workload's failures at one toolchain version, with the series they belong to.
#[derive(Debug, Clone)]
pub struct WorkloadFailures {
    pub workload: String,
    pub metric: Metric,
    pub lineage: String,
    pub failures: VersionFailures,
}

impl Store {
    /// Every workload's summary, under every metric, at each toolchain version of `at`.
    pub async fn summaries_at(&self, at: &[LineageVersion]) -> Result<Vec<VersionSummary>, sqlx::Error> {
        if at.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = sql(format!("{SUMMARY_COLUMNS} WHERE (s.lineage, s.version) IN "));
        q.push_versions(at);
        let records: Vec<SummaryRecord> = self.all(&q).await?;
        records.into_iter().map(SummaryRecord::into_summary).collect()
    }

    /// Every workload's failures, under every metric, at each toolchain version of `at` that has
    /// any, counted among the version's runs that passed it too.
    pub async fn failures_at(&self, at: &[LineageVersion]) -> Result<Vec<WorkloadFailures>, sqlx::Error> {
        if at.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = sql(format!("{SERIES_FAILURE_COLUMNS} WHERE (f.lineage, f.version) IN "));
        q.push_versions(at);
        let rows: Vec<SeriesFailureRow> = self.all(&q).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let (workload, metric, lineage) = (row.workload.clone(), row.metric, row.lineage.clone());
            if let Some(failures) = row.decode()? {
                out.push(WorkloadFailures { workload, metric, lineage, failures });
            }
        }
        Ok(out)
    }

    /// The regressions and findings of `lineage` opened at `version` or fixed by it, and its
    /// findings still open (whichever version opened them), none merged into another, oldest
    /// first, each with its workloads.
    pub async fn version_regressions(
        &self,
        lineage: &str,
        version: &str,
    ) -> Result<Vec<(RegressionRow, Vec<RegressionWorkload>)>, sqlx::Error> {
        let filter = "lineage = $1 AND merged_into IS NULL AND (version = $2 OR fixed_version = $2
             OR (previous_version IS NULL AND status IN ('open', 'acknowledged')))";
        let mut conn = self.pool.acquire().await?;
        let q = sql(format!("{REGRESSION_COLUMNS} WHERE {filter} ORDER BY id"));
        let rows: Vec<RegressionRow> = conn.exec().all(&q.bind(lineage).bind(version)).await?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let q = sql(format!(
            "{WORKLOAD_COLUMNS} WHERE rw.regression_id IN (SELECT id FROM regressions WHERE {filter})
             ORDER BY w.name, w.metric"
        ));
        let members = read_members(conn.exec(), &q.bind(lineage).bind(version)).await?;
        Ok(with_members(rows, members))
    }
}
