//! What a regression's "where the cost went" reads: its workloads' profiles at its first bad and
//! last good versions (the latest run's at each that carried one, whatever the measure), and the
//! catalogue's probes at the bad version, to say which functions broke their contracts there.
//! Bounded reads: a regression's workloads at two versions, and one version's probes.

use super::db::complexity::decode_complexity;
use super::db::{sql, Exec, Tx};
use super::{decode_json, Store};
use crate::model::MetricColumn;
use slopewatch_core::complexity::{Class, Complexity};
use slopewatch_core::profile::Profile;
use slopewatch_core::wire::{Metric, CONTRACT_PREFIX};

/// A workload's profile at a version of a lineage.
#[derive(Debug, Clone)]
pub struct StoredProfile {
    pub workload: String,
    pub version: String,
    pub profile: Profile,
}

/// A contract probe's class at one version and the class its contract allows: what the
/// catalogue judges it by.
#[derive(Debug, Clone)]
pub struct ProbeAtVersion {
    pub probe: String,
    pub metric: Metric,
    pub complexity: Option<Complexity>,
    pub expected: Class,
}

#[derive(sqlx::FromRow)]
struct ProfileRow {
    workload: String,
    version: String,
    profile: String,
}

#[derive(sqlx::FromRow)]
struct ProbeAtVersionRow {
    probe: String,
    #[sqlx(try_from = "MetricColumn")]
    metric: Metric,
    complexity: Option<String>,
    expected: String,
}

impl Store {
    /// The latest profile of each of `workloads` at each of `versions` of `lineage`.
    pub async fn profiles_at(
        &self,
        lineage: &str,
        versions: &[&str],
        workloads: &[&str],
    ) -> Result<Vec<StoredProfile>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        profiles_at(conn.exec(), lineage, versions, workloads).await
    }

    /// The catalogue's probes (`contract.*`, found probes among them) at a version of a lineage.
    pub async fn probes_at(&self, lineage: &str, version: &str) -> Result<Vec<ProbeAtVersion>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        probes_at(conn.exec(), lineage, version).await
    }
}

impl Tx<'_> {
    /// `Store::profiles_at`, within the transaction (a regression it is opening).
    pub async fn profiles_at(
        &mut self,
        lineage: &str,
        versions: &[&str],
        workloads: &[&str],
    ) -> Result<Vec<StoredProfile>, sqlx::Error> {
        profiles_at(self.exec(), lineage, versions, workloads).await
    }

    /// `Store::probes_at`, within the transaction.
    pub async fn probes_at(&mut self, lineage: &str, version: &str) -> Result<Vec<ProbeAtVersion>, sqlx::Error> {
        probes_at(self.exec(), lineage, version).await
    }
}

async fn profiles_at(
    exec: Exec<'_>,
    lineage: &str,
    versions: &[&str],
    workloads: &[&str],
) -> Result<Vec<StoredProfile>, sqlx::Error> {
    if versions.is_empty() || workloads.is_empty() {
        return Ok(Vec::new());
    }
    // Through the fits that carry a profile (`fits_with_profiles`), of these workloads' ids.
    let mut q = sql("SELECT w.name AS workload, t.version, f.profile
         FROM fits f JOIN workloads w ON w.id = f.workload_id JOIN runs r ON r.id = f.run_id
         JOIN toolchains t ON t.id = r.toolchain_id
         WHERE f.profile IS NOT NULL AND f.workload_id IN (SELECT id FROM workloads WHERE name IN ");
    q.push_tuple(workloads.iter().copied()).push(") AND t.name = ").push_bind(lineage);
    q.push(" AND t.version IN ").push_tuple(versions.iter().copied());
    q.push(" ORDER BY r.received_at DESC, r.id");
    let rows: Vec<ProfileRow> = exec.all(&q).await?;
    let mut latest: Vec<StoredProfile> = Vec::new();
    for row in rows {
        if latest.iter().any(|p| p.workload == row.workload && p.version == row.version) {
            continue;
        }
        latest.push(StoredProfile {
            profile: decode_json(&row.profile)?,
            workload: row.workload,
            version: row.version,
        });
    }
    Ok(latest)
}

async fn probes_at(exec: Exec<'_>, lineage: &str, version: &str) -> Result<Vec<ProbeAtVersion>, sqlx::Error> {
    let q = sql("SELECT w.name AS probe, w.metric, s.complexity, c.expected
         FROM version_summaries s JOIN workloads w ON w.id = s.workload_id
         JOIN workload_contracts c ON c.workload_id = s.workload_id
         WHERE s.lineage = $1 AND s.version = $2 AND w.name LIKE $3 ORDER BY w.name, w.metric")
    .bind(lineage)
    .bind(version)
    .bind(format!("{CONTRACT_PREFIX}%"));
    let rows: Vec<ProbeAtVersionRow> = exec.all(&q).await?;
    rows.into_iter()
        .filter_map(|r| Some((Class::parse(&r.expected)?, r)))
        .map(|(expected, r)| {
            let complexity = decode_complexity(r.complexity.as_deref())?;
            Ok(ProbeAtVersion { probe: r.probe, metric: r.metric, complexity, expected })
        })
        .collect()
}
