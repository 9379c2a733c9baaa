//! What a batch of runs needs to know before it is stored, found in one statement: whether each
//! run id is taken, the ids, units and metrics of the workloads, hosts and toolchain builds it
//! names, and the version axis of its lineages.

use crate::model::MetricColumn;
use crate::store::db::columns::{NewRuns, PendingRun, VersionFromText};
use crate::store::db::{sql, Sql};
use slopewatch_core::wire::{Host, Metric, SizeUnit, Toolchain};
use std::collections::{HashMap, HashSet};
use time::OffsetDateTime;
use uuid::Uuid;

/// The columns that identify a host, and a toolchain build.
pub(super) const HOST_KEY: &[&str] = &["name", "cpu", "kernel", "arch"];
pub(super) const TOOLCHAIN_KEY: &[&str] = &["name", "version", "libc", "target", "compiler", "flags"];

/// A host's or toolchain build's identifying values, in its key's column order.
pub(super) type Key<'a> = Vec<&'a str>;

pub(super) fn host_key(host: &Host) -> Key<'_> {
    vec![&host.name, &host.cpu, &host.kernel, &host.arch]
}

pub(super) fn toolchain_key(t: &Toolchain) -> Key<'_> {
    vec![&t.name, &t.version, &t.libc, &t.target, &t.compiler, &t.flags]
}

/// What a row of `select_stored` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FoundKind {
    Run,
    Workload,
    Host,
    Toolchain,
    Lineage,
}

impl FoundKind {
    fn as_str(self) -> &'static str {
        match self {
            FoundKind::Run => "run",
            FoundKind::Workload => "workload",
            FoundKind::Host => "host",
            FoundKind::Toolchain => "toolchain",
            FoundKind::Lineage => "lineage",
        }
    }
}

impl TryFrom<String> for FoundKind {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        [FoundKind::Run, FoundKind::Workload, FoundKind::Host, FoundKind::Toolchain, FoundKind::Lineage]
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or(s)
    }
}

/// A row of `select_stored`.
#[derive(sqlx::FromRow)]
pub(super) struct Found {
    #[sqlx(try_from = "String")]
    kind: FoundKind,
    /// The index of what was looked up, in its list.
    at: i32,
    id: Option<i64>,
    /// A run's content hash, or a workload's or lineage's name.
    text: Option<String>,
    /// A workload's size unit, or a lineage's version axis.
    unit: Option<String>,
    /// A workload's metric.
    metric: Option<MetricColumn>,
}

/// One statement looking up, each arm by index: the runs stored under `run_ids`, the workloads
/// named (under every metric), the lineages named, and the hosts and toolchain builds keyed.
pub(super) fn select_stored<'a>(
    run_ids: &[Uuid],
    names: &[&'a str],
    lineages: &[&'a str],
    hosts: &[Key<'a>],
    toolchains: &[Key<'a>],
) -> Sql<'a> {
    // Every arm spells out its columns' types, as Postgres matches them arm by arm.
    let mut q = sql("");
    let arm = |q: &mut Sql<'a>, kind: FoundKind, at: usize, rest: &str| {
        if !q.text().is_empty() {
            q.push(" UNION ALL ");
        }
        q.push(format_args!("SELECT CAST('{}' AS TEXT) AS kind, {at} AS at, {rest}", kind.as_str()));
    };
    for (k, id) in run_ids.iter().enumerate() {
        let rest = "CAST(NULL AS BIGINT) AS id, content_hash AS text, CAST(NULL AS TEXT) AS unit,
             CAST(NULL AS TEXT) AS metric FROM runs WHERE id = ";
        arm(&mut q, FoundKind::Run, k, rest);
        q.push_bind(*id);
    }
    if !names.is_empty() {
        let rest = "id, name AS text, size_unit AS unit, metric FROM workloads WHERE name IN ";
        arm(&mut q, FoundKind::Workload, 0, rest);
        q.push_tuple(names.iter().copied());
    }
    if !lineages.is_empty() {
        let rest = "CAST(NULL AS BIGINT) AS id, name AS text, version_from AS unit, CAST(NULL AS TEXT) AS metric
             FROM lineages WHERE name IN ";
        arm(&mut q, FoundKind::Lineage, 0, rest);
        q.push_tuple(lineages.iter().copied());
    }
    for (kind, table, columns, keys) in
        [(FoundKind::Host, "hosts", HOST_KEY, hosts), (FoundKind::Toolchain, "toolchains", TOOLCHAIN_KEY, toolchains)]
    {
        for (k, key) in keys.iter().enumerate() {
            let rest = format!(
                "id, CAST(NULL AS TEXT) AS text, CAST(NULL AS TEXT) AS unit, CAST(NULL AS TEXT) AS metric
                 FROM {table} WHERE "
            );
            arm(&mut q, kind, k, &rest);
            for (c, (column, value)) in columns.iter().zip(key).enumerate() {
                q.push(if c > 0 { " AND " } else { "" }).push(column).push(" = ").push_bind(*value);
            }
        }
    }
    q
}

/// What the database holds of a batch's runs and of the rows they refer to.
pub(super) struct BatchLookup<'a> {
    /// The content hash of the run stored under each of the batch's run ids, by the run's index.
    pub hashes: Vec<Option<String>>,
    /// Each stored workload's id, by name and metric.
    pub workloads: HashMap<(String, Metric), i64>,
    /// Each stored workload's size unit, by name: the same under every metric.
    pub units: HashMap<String, SizeUnit>,
    /// Each stored lineage's version axis, by name.
    pub lineages: HashMap<String, VersionFromText>,
    pub hosts: HashMap<Key<'a>, i64>,
    pub toolchains: HashMap<Key<'a>, i64>,
}

impl<'a> BatchLookup<'a> {
    pub fn new(runs: usize) -> BatchLookup<'a> {
        BatchLookup {
            hashes: vec![None; runs],
            workloads: HashMap::new(),
            units: HashMap::new(),
            lineages: HashMap::new(),
            hosts: HashMap::new(),
            toolchains: HashMap::new(),
        }
    }

    /// Takes in the rows a `select_stored` for `hosts` and `toolchains` found; a workload's unit
    /// and metric are decoded here, as the column the unit shares with a lineage's version axis
    /// is text.
    pub fn read(&mut self, rows: Vec<Found>, hosts: &[Key<'a>], toolchains: &[Key<'a>]) -> Result<(), sqlx::Error> {
        for row in rows {
            let k = row.at as usize;
            match (row.kind, row.id, row.text, row.unit) {
                (FoundKind::Run, _, hash, _) => self.hashes[k] = hash,
                (FoundKind::Workload, Some(id), Some(name), Some(unit)) => {
                    let decode = |e: String| sqlx::Error::Decode(e.into());
                    let unit = SizeUnit::try_from(unit).map_err(decode)?;
                    let metric = row.metric.ok_or_else(|| decode("a workload without a metric".into()))?;
                    let metric = Metric::try_from(metric).map_err(decode)?;
                    self.units.insert(name.clone(), unit);
                    self.workloads.insert((name, metric), id);
                }
                (FoundKind::Lineage, _, Some(name), Some(axis)) => {
                    self.lineages.insert(name, axis);
                }
                (FoundKind::Host, Some(id), _, _) => {
                    self.hosts.insert(hosts[k].clone(), id);
                }
                (FoundKind::Toolchain, Some(id), _, _) => {
                    self.toolchains.insert(toolchains[k].clone(), id);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The rows of `runs`, with the ids of the hosts, toolchain builds and workloads they name.
    pub fn rows(&self, runs: &[&'a PendingRun]) -> Result<NewRuns<'a>, sqlx::Error> {
        let mut rows = NewRuns::default();
        for run in runs {
            let host_id = self.hosts.get(&host_key(&run.host));
            let toolchain_id = self.toolchains.get(&toolchain_key(&run.toolchain));
            let workload_ids: Option<Vec<i64>> = run
                .workloads
                .iter()
                .map(|(name, _)| self.workloads.get(&(name.clone(), run.metric)).copied())
                .collect();
            let (Some(&host_id), Some(&toolchain_id), Some(workload_ids)) = (host_id, toolchain_id, workload_ids)
            else {
                return Err(sqlx::Error::RowNotFound);
            };
            rows.append(run, host_id, toolchain_id, &workload_ids);
        }
        Ok(rows)
    }
}

/// Of `keys`, each with when the first run naming it arrived, the distinct ones `stored` lacks.
pub(super) fn unstored<'a>(
    keys: impl Iterator<Item = (Key<'a>, OffsetDateTime)>,
    stored: &HashMap<Key<'a>, i64>,
) -> Vec<(Key<'a>, OffsetDateTime)> {
    first_of_each(keys, |(k, _)| k.clone()).into_iter().filter(|(k, _)| !stored.contains_key(k)).collect()
}

/// Inserts each of `keys`, first seen at its time, into `table` unless a concurrent writer got
/// there first.
pub(super) fn insert_keyed<'a>(table: &str, columns: &[&str], keys: &'a [(Key<'a>, OffsetDateTime)]) -> Sql<'a> {
    let columns = columns.join(", ");
    let mut q = sql(format!("INSERT INTO {table} ({columns}, first_seen) "));
    q.push_values(keys, |row, (key, at)| {
        for value in key {
            row.bind(*value);
        }
        row.bind(*at);
    });
    q.push(format_args!(" ON CONFLICT ({columns}) DO NOTHING"));
    q
}

/// The first of `items` for each distinct `key`, in order.
pub(super) fn first_of_each<T, K: Eq + std::hash::Hash>(
    items: impl Iterator<Item = T>,
    key: impl Fn(&T) -> K,
) -> Vec<T> {
    let mut seen = HashSet::new();
    items.filter(|item| seen.insert(key(item))).collect()
}
