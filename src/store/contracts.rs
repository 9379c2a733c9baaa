//! What the contracts page reads: the catalogue's probes (`contract.*` workloads with a contract in
//! `workload_contracts`), every lineage's versions to pick columns from, and for the chosen
//! columns (toolchain versions) each probe's class, failures and whether the libc provides its
//! function. Each read costs the probes times the columns, from the summaries; only "not provided"
//! reads runs, and then only the latest run of each column that carried contracts.

use super::db::complexity::decode_complexity;
use super::db::sql;
use super::{Store, VersionChoice};
use crate::model::{stored_failure, MetricColumn};
use serde::Deserialize;
use slopewatch_core::complexity::{Class, Complexity};
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::version::sort_versions;
use slopewatch_core::wire::{Failure, Metric, SizeUnit, CONTRACT_PREFIX};
use uuid::Uuid;

/// A probe of the catalogue measured by one metric, as its latest contract states it: a probe
/// measured two ways is two of these, one per series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractProbe {
    pub workload_id: i64,
    /// `contract.FUNCTION.AXIS`.
    pub name: String,
    pub metric: Metric,
    /// What its sizes count, for a failure's size.
    pub size_unit: SizeUnit,
    pub expected: Class,
    /// The function it calls: the contract's, else the name's middle part.
    pub function: String,
    /// What grows: the contract's, else what follows the function in the name.
    pub axis: String,
}

/// A probe's class at one toolchain version, from its summary.
#[derive(Debug, Clone)]
pub struct ProbeSummary {
    pub workload_id: i64,
    pub at: LineageVersion,
    /// `None` while a store upgraded from before classes is still classifying.
    pub complexity: Option<Complexity>,
}

/// A probe's failures at one toolchain version: the latest failure and how many runs failed.
#[derive(Debug, Clone)]
pub struct ProbeFailure {
    pub workload_id: i64,
    pub at: LineageVersion,
    pub failure: Failure,
    pub failed_runs: i64,
    /// Runs of the version that passed the probe.
    pub passed_runs: i64,
}

/// Everything the chosen columns hold of the probes.
#[derive(Debug, Clone, Default)]
pub struct ProbeCells {
    pub summaries: Vec<ProbeSummary>,
    pub failures: Vec<ProbeFailure>,
    /// The probes whose function each column's libc lacks, as its latest run with contracts said.
    pub not_provided: Vec<NotProvided>,
}

/// A probe whose function a column's libc lacks, and the run that said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotProvided {
    pub workload_id: i64,
    pub at: LineageVersion,
    pub run_id: Uuid,
}

#[derive(sqlx::FromRow)]
struct ProbeRecord {
    workload_id: i64,
    name: String,
    #[sqlx(try_from = "MetricColumn")]
    metric: Metric,
    #[sqlx(try_from = "String")]
    size_unit: SizeUnit,
    expected: String,
    contract: String,
}

/// The names a contract gives, whatever else it holds.
#[derive(Deserialize, Default)]
struct Names {
    #[serde(default)]
    function: String,
    #[serde(default)]
    axis: String,
}

impl ProbeRecord {
    /// The probe; `None` for a name outside the catalogue or a class this server does not know.
    fn decode(self) -> Option<ContractProbe> {
        let rest = self.name.strip_prefix(CONTRACT_PREFIX)?;
        let expected = Class::parse(&self.expected)?;
        let names: Names = serde_json::from_str(&self.contract).unwrap_or_default();
        let (name_function, name_axis) = rest.split_once('.').unwrap_or((rest, ""));
        let pick = |given: String, fallback: &str| if given.is_empty() { fallback.to_string() } else { given };
        Some(ContractProbe {
            function: pick(names.function, name_function),
            axis: pick(names.axis, name_axis),
            workload_id: self.workload_id,
            name: self.name,
            metric: self.metric,
            size_unit: self.size_unit,
            expected,
        })
    }
}

#[derive(sqlx::FromRow)]
struct ContractSummaryRecord {
    workload_id: i64,
    lineage: String,
    version: String,
    complexity: Option<String>,
}

#[derive(sqlx::FromRow)]
struct NotProvidedRecord {
    lineage: String,
    version: String,
    workload_id: i64,
    run_id: Uuid,
}

#[derive(sqlx::FromRow)]
struct ContractFailureRecord {
    workload_id: i64,
    lineage: String,
    version: String,
    kind: String,
    size: Option<i64>,
    detail: String,
    facts: String,
    failed_runs: i32,
    passed_runs: i32,
}

impl Store {
    /// Every probe of the catalogue that has a contract, under each metric it was measured by, by
    /// name and then metric.
    pub async fn contract_probes(&self) -> Result<Vec<ContractProbe>, sqlx::Error> {
        let q = sql("SELECT w.id AS workload_id, w.name, w.metric, w.size_unit, c.expected, c.contract
             FROM workload_contracts c JOIN workloads w ON w.id = c.workload_id
             WHERE w.name LIKE 'contract.%' ORDER BY w.name, w.metric");
        let records: Vec<ProbeRecord> = self.all(&q).await?;
        Ok(records.into_iter().filter_map(ProbeRecord::decode).collect())
    }

    /// Every version of every lineage that has reported, by lineage and then version order: one row
    /// per toolchain version, from the toolchain builds, never the runs.
    pub async fn toolchain_versions(&self) -> Result<Vec<VersionChoice>, sqlx::Error> {
        let q = sql(
            "SELECT name AS lineage, version, MIN(first_seen) AS first_seen FROM toolchains GROUP BY name, version",
        );
        let mut rows: Vec<VersionChoice> = self.all(&q).await?;
        sort_versions(&mut rows, |r| &r.version, |r| r.first_seen);
        rows.sort_by(|a, b| a.lineage.cmp(&b.lineage));
        Ok(rows)
    }

    /// The libc named by the latest run of `version` of `lineage` that carried contract probes, or
    /// else by its latest run; `None` where it has none.
    pub async fn catalogue_libc(&self, lineage: &str, version: &str) -> Result<Option<String>, sqlx::Error> {
        let latest = |carrying: &str| {
            format!(
                "(SELECT t.libc FROM runs r JOIN toolchains t ON t.id = r.toolchain_id
                  WHERE t.name = $1 AND t.version = $2{carrying} ORDER BY r.received_at DESC, r.id DESC LIMIT 1)"
            )
        };
        let contracts = latest(" AND EXISTS (SELECT 1 FROM run_contracts x WHERE x.run_id = r.id)");
        let q = sql(format!("SELECT COALESCE({contracts}, {})", latest(""))).bind(lineage).bind(version);
        Ok(self.value::<Option<String>>(&q).await?.flatten())
    }

    /// The probes' summaries, failures and functions not provided at each of `columns`.
    pub async fn probe_cells(&self, columns: &[LineageVersion]) -> Result<ProbeCells, sqlx::Error> {
        if columns.is_empty() {
            return Ok(ProbeCells::default());
        }
        let (summaries, failures, not_provided) =
            tokio::try_join!(self.probe_summaries(columns), self.probe_failures(columns), self.not_provided(columns),)?;
        Ok(ProbeCells { summaries, failures, not_provided })
    }

    async fn probe_summaries(&self, columns: &[LineageVersion]) -> Result<Vec<ProbeSummary>, sqlx::Error> {
        let mut q = sql("SELECT s.workload_id, s.lineage, s.version, s.complexity
             FROM workload_contracts c JOIN version_summaries s ON s.workload_id = c.workload_id
             WHERE (s.lineage, s.version) IN ");
        q.push_versions(columns);
        let records: Vec<ContractSummaryRecord> = self.all(&q).await?;
        records
            .into_iter()
            .map(|r| {
                Ok(ProbeSummary {
                    complexity: decode_complexity(r.complexity.as_deref())?,
                    workload_id: r.workload_id,
                    at: LineageVersion::new(r.lineage, r.version),
                })
            })
            .collect()
    }

    async fn probe_failures(&self, columns: &[LineageVersion]) -> Result<Vec<ProbeFailure>, sqlx::Error> {
        let mut q = sql("SELECT f.workload_id, f.lineage, f.version, f.kind, f.size, f.detail, f.facts,
                    f.runs AS failed_runs, COALESCE(s.runs, 0) AS passed_runs
             FROM workload_contracts c JOIN version_failures f ON f.workload_id = c.workload_id
             LEFT JOIN version_summaries s
               ON s.workload_id = f.workload_id AND s.lineage = f.lineage AND s.version = f.version
             WHERE (f.lineage, f.version) IN ");
        q.push_versions(columns);
        let records: Vec<ContractFailureRecord> = self.all(&q).await?;
        Ok(records
            .into_iter()
            .filter_map(|r| {
                Some(ProbeFailure {
                    failure: stored_failure(&r.kind, r.size, &r.detail, &r.facts)?,
                    workload_id: r.workload_id,
                    at: LineageVersion::new(r.lineage, r.version),
                    failed_runs: r.failed_runs.into(),
                    passed_runs: r.passed_runs.into(),
                })
            })
            .collect())
    }

    /// The workloads whose function the libc of each column does not provide, as the column's
    /// latest run that carried contracts says: one statement, reading that one run per column.
    async fn not_provided(&self, columns: &[LineageVersion]) -> Result<Vec<NotProvided>, sqlx::Error> {
        let mut q = sql("SELECT t.name AS lineage, t.version, rc.workload_id, rc.run_id
             FROM run_contracts rc JOIN runs r ON r.id = rc.run_id JOIN toolchains t ON t.id = r.toolchain_id
             WHERE rc.not_provided AND rc.run_id IN (");
        for (i, at) in columns.iter().enumerate() {
            q.push(if i > 0 { ", " } else { "" });
            q.push(
                "(SELECT l.id FROM runs l JOIN toolchains lt ON lt.id = l.toolchain_id
                  WHERE EXISTS (SELECT 1 FROM run_contracts x WHERE x.run_id = l.id) AND lt.name = ",
            );
            q.push_bind(at.lineage.as_str()).push(" AND lt.version = ").push_bind(at.version.as_str());
            q.push(" ORDER BY l.received_at DESC, l.id DESC LIMIT 1)");
        }
        q.push(")");
        let records: Vec<NotProvidedRecord> = self.all(&q).await?;
        Ok(records
            .into_iter()
            .map(|r| NotProvided {
                workload_id: r.workload_id,
                at: LineageVersion::new(r.lineage, r.version),
                run_id: r.run_id,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str, contract: &str) -> ProbeRecord {
        ProbeRecord {
            workload_id: 1,
            name: name.into(),
            metric: Metric::Wall,
            size_unit: SizeUnit::Bytes,
            expected: "1".into(),
            contract: contract.into(),
        }
    }

    #[test]
    fn a_probe_is_named_by_its_contract_or_else_by_its_name() {
        let named = record("contract.strchr.remaining", r#"{"expected":"1","function":"strchr","axis":"remaining"}"#);
        let p = named.decode().unwrap();
        assert_eq!((p.function.as_str(), p.axis.as_str(), p.expected), ("strchr", "remaining", Class::Constant));
        let bare = record("contract.sscanf.remaining_width", r#"{"expected":"1"}"#).decode().unwrap();
        assert_eq!((bare.function.as_str(), bare.axis.as_str()), ("sscanf", "remaining_width"));
        assert!(record("next-token", r#"{"expected":"1"}"#).decode().is_none(), "a team's own workload");
        assert!(record("Contract.x.y", "{}").decode().is_none(), "SQLite's LIKE ignores case; the prefix does not");
    }
}
