//! Version summaries as a summary pass reads and writes them: the runs pending a pass, each
//! version's latest runs, the totals kept across runs, and the summaries written back; and the
//! summaries stored without a class, with the class worked out for them. What a summary holds is
//! decided in `analysis` and `intake`, never here.

use super::db::complexity::{decode_complexity, encode_complexity};
use super::db::{sql, Tx};
use super::{decode_json, Store};
use crate::model::{Classified, MetricColumn, SizeMedian, WorkloadSummary};
use slopewatch_core::complexity::Complexity;
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::wire::Metric;
use std::collections::HashMap;
use time::OffsetDateTime;
use uuid::Uuid;

/// A toolchain version with runs pending a summary pass.
#[derive(sqlx::FromRow)]
struct PendingVersion {
    lineage: String,
    version: String,
}

/// A toolchain build of a version being summarised.
#[derive(sqlx::FromRow)]
struct Build {
    id: i64,
    name: String,
    version: String,
}

/// One of a version's latest runs.
#[derive(Debug, Clone, Copy)]
pub struct WindowRun {
    pub run_id: Uuid,
    pub host_id: i64,
    pub received_at: OffsetDateTime,
}

/// A latest run as the lookup reads it, with its toolchain build.
#[derive(sqlx::FromRow)]
struct LatestRun {
    toolchain_id: i64,
    id: Uuid,
    host_id: i64,
    received_at: OffsetDateTime,
}

/// What a stored summary keeps across runs: every run and host counted, the first and last run.
#[derive(Debug, Clone)]
pub struct SummaryTotals {
    pub runs: usize,
    /// Sorted.
    pub host_ids: Vec<i64>,
    pub first_seen: OffsetDateTime,
    pub last_run_at: OffsetDateTime,
    /// The stored summary's class and the medians it was worked out on, so a pass that leaves the
    /// medians where they were keeps it rather than classifying them again.
    pub classified: Option<Classified>,
}

#[derive(sqlx::FromRow)]
struct SummaryTotalsRow {
    lineage: String,
    version: String,
    workload_id: i64,
    runs: i32,
    host_ids: String,
    first_seen: OffsetDateTime,
    last_run_at: OffsetDateTime,
    sizes: String,
    complexity: Option<String>,
}

/// A version summary stored without a class (before classes, migration 0011, or before the model
/// last changed, 0012), with the medians to classify it on.
#[derive(Debug, Clone)]
pub struct UnclassifiedSummary {
    pub workload_id: i64,
    pub at: LineageVersion,
    /// (size, median), by size.
    pub medians: Vec<(u64, f64)>,
    /// What the workload's series measures: how its medians are classified.
    pub metric: Metric,
}

#[derive(sqlx::FromRow)]
struct UnclassifiedRow {
    workload_id: i64,
    lineage: String,
    version: String,
    sizes: String,
    metric: MetricColumn,
}

/// A workload's summary at a version, to write.
pub struct NewSummary<'a> {
    pub at: &'a LineageVersion,
    pub workload_id: i64,
    pub summary: &'a WorkloadSummary,
    pub host_ids: &'a [i64],
    pub first_seen: OffsetDateTime,
    pub last_run_at: OffsetDateTime,
}

impl Store {
    /// How many stored runs their version summaries have not taken in yet.
    pub async fn pending_summaries(&self) -> Result<i64, sqlx::Error> {
        Ok(self.value(&sql("SELECT COUNT(*) FROM pending_summaries")).await?.unwrap_or(0))
    }

    /// Up to `limit` of the toolchain versions with runs pending, sorted.
    pub async fn pending_versions(&self, limit: i64) -> Result<Vec<LineageVersion>, sqlx::Error> {
        let q = sql("SELECT DISTINCT lineage, version FROM pending_summaries ORDER BY lineage, version LIMIT $1");
        let rows: Vec<PendingVersion> = self.all(&q.bind(limit)).await?;
        Ok(rows.into_iter().map(|v| LineageVersion::new(v.lineage, v.version)).collect())
    }

    /// Most versions one summary transaction should cover on this backend.
    pub fn summary_versions_per_tx(&self) -> usize {
        self.pool.summary_versions_per_tx()
    }
}

impl Tx<'_> {
    /// Takes up to `limit` runs pending for these versions off the pending list; returns their ids.
    pub async fn claim_pending(&mut self, versions: &[LineageVersion], limit: i64) -> Result<Vec<Uuid>, sqlx::Error> {
        let mut q = sql("DELETE FROM pending_summaries WHERE run_id IN (
                 SELECT run_id FROM pending_summaries WHERE (lineage, version) IN ");
        q.push_versions(versions).push(" LIMIT ").push_bind(limit).push(") RETURNING run_id");
        self.exec().column(&q).await
    }

    /// Each version's latest `window` runs by arrival, by the version's position in `versions`.
    /// They are taken per toolchain build through the (toolchain, arrival) index, which stops
    /// after a window's worth instead of sorting every run the version ever had.
    pub async fn version_windows(
        &mut self,
        versions: &[LineageVersion],
        window: i64,
    ) -> Result<Vec<Vec<WindowRun>>, sqlx::Error> {
        let mut q = sql("SELECT id, name, version FROM toolchains WHERE (name, version) IN ");
        q.push_versions(versions);
        let builds: Vec<Build> = self.exec().all(&q).await?;
        let mut windows = vec![Vec::new(); versions.len()];
        if builds.is_empty() {
            return Ok(windows);
        }
        let position: HashMap<(&str, &str), usize> =
            versions.iter().enumerate().map(|(k, v)| ((v.lineage.as_str(), v.version.as_str()), k)).collect();
        let mut version_of = HashMap::new();
        let mut q = sql("");
        for (i, build) in builds.iter().enumerate() {
            version_of.insert(build.id, position[&(build.name.as_str(), build.version.as_str())]);
            if i > 0 {
                q.push(" UNION ALL ");
            }
            q.push(format_args!(
                "SELECT * FROM (SELECT r.toolchain_id, r.id, r.host_id, r.received_at FROM runs r
                 WHERE r.toolchain_id = {} ORDER BY r.received_at DESC, r.id DESC LIMIT {window}) AS b{i}",
                build.id
            ));
        }
        let latest: Vec<LatestRun> = self.exec().all(&q).await?;
        for run in latest {
            let window = WindowRun { run_id: run.id, host_id: run.host_id, received_at: run.received_at };
            windows[version_of[&run.toolchain_id]].push(window);
        }
        Ok(windows)
    }

    /// The stored totals of these workloads' summaries at these versions.
    pub async fn summary_totals(
        &mut self,
        versions: &[LineageVersion],
        workload_ids: &[i64],
    ) -> Result<HashMap<LineageVersion, HashMap<i64, SummaryTotals>>, sqlx::Error> {
        let mut q =
            sql("SELECT lineage, version, workload_id, runs, host_ids, first_seen, last_run_at, sizes, complexity
             FROM version_summaries WHERE (lineage, version) IN ");
        q.push_versions(versions).push(" AND workload_id IN ").push_tuple(workload_ids.iter().copied());
        let rows: Vec<SummaryTotalsRow> = self.exec().all(&q).await?;
        let mut totals: HashMap<LineageVersion, HashMap<i64, SummaryTotals>> = HashMap::new();
        for row in rows {
            let classified = match row.complexity.as_deref() {
                Some(text) => {
                    let sizes: Vec<SizeMedian> = decode_json(&row.sizes)?;
                    Some((sizes.iter().map(|s| (s.size, s.median_ns)).collect(), decode_complexity(Some(text))?))
                }
                None => None,
            };
            let stored = SummaryTotals {
                runs: row.runs as usize,
                host_ids: decode_json(&row.host_ids)?,
                first_seen: row.first_seen,
                last_run_at: row.last_run_at,
                classified,
            };
            totals.entry(LineageVersion::new(row.lineage, row.version)).or_default().insert(row.workload_id, stored);
        }
        Ok(totals)
    }

    /// Writes the summaries, each replacing the stored one of its workload and version.
    pub async fn upsert_summaries(&mut self, rows: &[NewSummary<'_>]) -> Result<(), sqlx::Error> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut q = sql("INSERT INTO version_summaries (workload_id, lineage, version, slope, slope_min, slope_max,
             ci_low, ci_high, r2, runs, hosts, host_ids, sizes, first_seen, last_run_at, complexity, source_hash,
             source_count, build_hash, beside_sizes, beside_lineage) ");
        q.push_values(rows, |b, row| {
            let s = row.summary;

            b.bind(row.workload_id)
                .bind(row.at.lineage.as_str())
                .bind(row.at.version.as_str())
                .bind(s.slope)
                .bind(s.slope_min)
                .bind(s.slope_max)
                .bind(s.ci_low)
                .bind(s.ci_high)
                .bind(s.r2)
                .bind(s.runs as i32)
                .bind(s.hosts as i32)
                .bind(serde_json::to_string(row.host_ids).expect("ids serialize"))
                .bind(sizes_json(&s.sizes))
                .bind(row.first_seen)
                .bind(row.last_run_at)
                .bind(encode_complexity(s.complexity.as_ref()))
                .bind(s.source_hash.as_deref())
                .bind(s.source_count.max(1) as i32)
                .bind(s.build_hash.as_deref())
                .bind(s.beside.as_ref().map(|b| sizes_json(&b.sizes)))
                .bind(s.beside.as_ref().map(|b| b.lineage.as_str()));
        });
        q.push(
            " ON CONFLICT (workload_id, lineage, version) DO UPDATE SET slope = excluded.slope,
             slope_min = excluded.slope_min, slope_max = excluded.slope_max, ci_low = excluded.ci_low,
             ci_high = excluded.ci_high, r2 = excluded.r2, runs = excluded.runs, hosts = excluded.hosts,
             host_ids = excluded.host_ids, sizes = excluded.sizes, first_seen = excluded.first_seen,
             last_run_at = excluded.last_run_at, complexity = excluded.complexity,
             source_hash = excluded.source_hash, source_count = excluded.source_count,
             build_hash = excluded.build_hash, beside_sizes = excluded.beside_sizes,
             beside_lineage = excluded.beside_lineage",
        );
        self.exec().execute(&q).await.map(drop)
    }
}

impl Tx<'_> {
    /// Up to `limit` version summaries stored without a class.
    pub async fn unclassified_summaries(&mut self, limit: i64) -> Result<Vec<UnclassifiedSummary>, sqlx::Error> {
        let q = sql("SELECT workload_id, lineage, version, sizes,
                    (SELECT metric FROM workloads WHERE id = workload_id) AS metric
             FROM version_summaries WHERE complexity IS NULL LIMIT $1")
        .bind(limit);
        let rows: Vec<UnclassifiedRow> = self.exec().all(&q).await?;
        rows.into_iter()
            .map(|row| {
                let sizes: Vec<SizeMedian> = decode_json(&row.sizes)?;
                Ok(UnclassifiedSummary {
                    workload_id: row.workload_id,
                    at: LineageVersion::new(row.lineage, row.version),
                    medians: sizes.iter().map(|s| (s.size, s.median_ns)).collect(),
                    metric: Metric::try_from(row.metric).map_err(|e| sqlx::Error::Decode(e.into()))?,
                })
            })
            .collect()
    }

    /// Gives a summary stored without a class the class worked out for it, `None` for one that
    /// cannot be classified; a summary that has a class by now keeps it.
    pub async fn set_summary_class(
        &mut self,
        summary: &UnclassifiedSummary,
        complexity: Option<&Complexity>,
    ) -> Result<(), sqlx::Error> {
        let q = sql("UPDATE version_summaries SET complexity = $1
             WHERE workload_id = $2 AND lineage = $3 AND version = $4 AND complexity IS NULL")
        .bind(encode_complexity(complexity))
        .bind(summary.workload_id)
        .bind(summary.at.lineage.as_str())
        .bind(summary.at.version.as_str());
        self.exec().execute(&q).await.map(drop)
    }
}

/// `(size, median, runs)` by size as a summary stores them: `[{"size", "median_ns", "runs"}, …]`.
fn sizes_json(sizes: &[(u64, f64, usize)]) -> String {
    let sizes: Vec<_> = sizes
        .iter()
        .map(|&(size, median_ns, runs)| serde_json::json!({"size": size, "median_ns": median_ns, "runs": runs}))
        .collect();
    serde_json::Value::Array(sizes).to_string()
}
