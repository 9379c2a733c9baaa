//! The regressions and findings that hold a run's workloads: what a run page links to.

use crate::model::RegressionStatus;
use crate::store::db::sql;
use crate::store::Store;
use slopewatch_core::wire::Metric;

/// A workload's series held by a regression (or finding) of its lineage, not merged into
/// another: the regression's range and the member's own fix.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct HeldBy {
    pub workload: String,
    pub regression_id: i64,
    /// The regression's first bad version, and its last good one (none for a finding).
    pub version: String,
    pub previous_version: Option<String>,
    #[sqlx(try_from = "String")]
    pub status: RegressionStatus,
    /// `slope` or `failure`.
    pub reason: String,
    /// The workload crossed at a version after the regression's first bad one.
    pub joined_late: bool,
    /// Where this workload came back under, or passed again.
    pub fixed_version: Option<String>,
}

impl Store {
    /// The regressions and findings of `lineage`, not merged into another, that hold the series
    /// of `metric` of any of `workloads`, by regression and then workload.
    pub async fn regressions_holding(
        &self,
        lineage: &str,
        metric: Metric,
        workloads: &[&str],
    ) -> Result<Vec<HeldBy>, sqlx::Error> {
        if workloads.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = sql("SELECT w.name AS workload, r.id AS regression_id, r.version, r.previous_version, r.status,
                    rw.reason, rw.joined_late, rw.fixed_version
             FROM regressions r JOIN regression_workloads rw ON rw.regression_id = r.id
             JOIN workloads w ON w.id = rw.workload_id
             WHERE r.merged_into IS NULL AND r.lineage = ");
        q.push_bind(lineage).push(" AND w.metric = ").push_bind(metric.as_str()).push(" AND w.name IN ");
        q.push_tuple(workloads.iter().copied());
        q.push(" ORDER BY r.id, w.name, rw.reason");
        self.all(&q).await
    }
}
