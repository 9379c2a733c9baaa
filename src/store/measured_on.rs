//! Which architectures the hosts behind a page had: read from the host ids each version summary
//! and failure total keeps of its runs, then those hosts' rows. Each read costs the summaries the
//! page shows (and the few hosts they name), never the runs behind them, so a page that says its
//! runs were emulated does not slow as history grows.

use super::db::{sql, Sql};
use super::{decode_json, Store};
use slopewatch_core::wire::Metric;

impl Store {
    /// The architectures, as the hosts sent them, of the hosts that measured one workload's
    /// series of `metric` in `lineage`, at any version, passing or failing; sorted, each once.
    pub async fn series_measured_on(
        &self,
        workload: &str,
        metric: Metric,
        lineage: &str,
    ) -> Result<Vec<String>, sqlx::Error> {
        let q = sql("SELECT s.host_ids FROM version_summaries s JOIN workloads w ON w.id = s.workload_id
             WHERE w.name = $1 AND w.metric = $2 AND s.lineage = $3
             UNION ALL
             SELECT f.host_ids FROM version_failures f JOIN workloads w ON w.id = f.workload_id
             WHERE w.name = $1 AND w.metric = $2 AND f.lineage = $3")
        .bind(workload)
        .bind(metric.as_str())
        .bind(lineage);
        self.host_archs(q).await
    }

    /// The architectures, as the hosts sent them, of the hosts that measured any workload of
    /// `lineage` at `versions`, passing or failing; sorted, each once.
    pub async fn versions_measured_on(&self, lineage: &str, versions: &[&str]) -> Result<Vec<String>, sqlx::Error> {
        if versions.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = sql("SELECT host_ids FROM version_summaries WHERE lineage = $1 AND version IN ").bind(lineage);
        q.push_tuple(versions.iter().copied());
        q.push(" UNION ALL SELECT host_ids FROM version_failures WHERE lineage = $1 AND version IN ");
        q.push_tuple(versions.iter().copied());
        self.host_archs(q).await
    }

    /// The architectures of the hosts named by the JSON arrays of ids `host_ids` selects.
    async fn host_archs(&self, host_ids: Sql<'_>) -> Result<Vec<String>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        let lists: Vec<String> = conn.exec().column(&host_ids).await?;
        let mut ids: Vec<i64> = Vec::new();
        for list in &lists {
            ids.extend(decode_json::<Vec<i64>>(list)?);
        }
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = sql("SELECT DISTINCT arch FROM hosts WHERE id IN ");
        q.push_tuple(ids).push(" ORDER BY arch");
        conn.exec().column(&q).await
    }
}
