//! What moving a store's history to another store reads and writes beyond `insert_run` and the
//! tokens: runs whole in pages, in the order they were received; editors' changes to regressions.

use super::db::sql;
use super::runs::{RunHeader, RUN_HEADER_COLUMNS, RUN_HEADER_FROM};
use super::{decode_json, Store};
use crate::model::{stored_failure, RegressionStatus};
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::profile::Profile;
use slopewatch_core::wire::{Contract, Facts, Failure, Host, Metric, SizeUnit, Toolchain};
use std::collections::{BTreeMap, HashMap};
use time::OffsetDateTime;
use uuid::Uuid;

/// Runs read per page, at most.
const RUNS_PER_PAGE: i64 = 64;
/// Samples read per page, roughly: a page stops taking runs once it has this many (and always
/// takes one), so memory stays bounded whatever the history's size.
const SAMPLES_PER_PAGE: i64 = 200_000;

/// A stored run, whole, as an export carries it.
#[derive(Debug, Clone)]
pub struct StoredRun {
    pub run_id: Uuid,
    pub content_hash: String,
    pub agent_version: String,
    pub started_at: OffsetDateTime,
    pub received_at: OffsetDateTime,
    pub sample_count: i32,
    pub samples_pruned_at: Option<OffsetDateTime>,
    pub host: Host,
    pub toolchain: Toolchain,
    /// What the run measured, as it declared it.
    pub metric: Metric,
    /// In the order the store first saw the workloads, which an import then repeats.
    pub workloads: Vec<StoredWorkload>,
}

#[derive(Debug, Clone)]
pub struct StoredWorkload {
    pub name: String,
    pub size_unit: SizeUnit,
    pub source_hash: String,
    /// What the agent said of the run that the server only keeps (fits only: a failure keeps
    /// none).
    pub facts: Facts,
    /// Where its instructions went, where the agent sent a profile (fits only).
    pub profile: Option<Profile>,
    pub metadata: BTreeMap<String, String>,
    /// By size; for a failed workload, those measured before it failed.
    pub measurements: Vec<StoredMeasurement>,
    /// Why the workload stopped before it was measured fully.
    pub failure: Option<Failure>,
    /// The class it was held to, when it carried a contract.
    pub contract: Option<Contract>,
    /// The toolchain's libc does not provide its function: no measurements, no failure.
    pub not_provided: bool,
    /// The size the team runs it at, in its unit.
    pub size_of_interest: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct StoredMeasurement {
    pub size: i64,
    /// The median by the run's metric: of the times, or of the counts of an instructions run.
    pub median_ns: f64,
    /// How many samples the median was taken over.
    pub samples: i32,
    /// The samples in the order they were taken; empty once pruned.
    pub samples_ns: Vec<f64>,
    /// Instruction counts per sample, when the agent counted them.
    pub instructions: Option<Vec<u64>>,
}

/// Where the previous page of runs ended: its last run's receipt time and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunCursor {
    pub received_at: OffsetDateTime,
    pub run_id: Uuid,
}

/// A change an editor made to a regression, found by its lineage and version (ids differ
/// between stores).
#[derive(Debug, Clone, PartialEq)]
pub struct RegressionEdit {
    /// The regression's lineage and first bad version.
    pub regression: LineageVersion,
    pub at: OffsetDateTime,
    /// The editor's token name.
    pub actor: String,
    pub change: EditChange,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EditChange {
    Status(RegressionStatus),
    Note { body: String },
    Link { title: String, url: String },
}

#[derive(sqlx::FromRow)]
struct RunHead {
    id: Uuid,
    content_hash: String,
    sample_count: i32,
    #[sqlx(flatten)]
    header: RunHeader,
}

/// A run's workload as an export carries it, its metadata still JSON.
#[derive(sqlx::FromRow)]
struct FitRow {
    run_id: Uuid,
    workload_id: i64,
    name: String,
    #[sqlx(try_from = "String")]
    size_unit: SizeUnit,
    source_hash: String,
    facts: String,
    profile: Option<String>,
    metadata: String,
}

/// A failed workload of a run as an export carries it, its failure and metadata still as stored.
#[derive(sqlx::FromRow)]
struct ExportedFailureRow {
    run_id: Uuid,
    workload_id: i64,
    name: String,
    #[sqlx(try_from = "String")]
    size_unit: SizeUnit,
    source_hash: String,
    metadata: String,
    kind: String,
    size: Option<i64>,
    detail: String,
    facts: String,
}

/// A workload's contract, or its function not provided, as stored: the contract still JSON.
#[derive(sqlx::FromRow)]
struct ExportedContractRow {
    run_id: Uuid,
    workload_id: i64,
    name: String,
    #[sqlx(try_from = "String")]
    size_unit: SizeUnit,
    contract: Option<String>,
    not_provided: bool,
    source_hash: String,
    metadata: String,
    size_of_interest: Option<i64>,
}

/// A measurement of a run as stored: its samples and instruction counts still JSON.
#[derive(sqlx::FromRow)]
struct ExportedMeasurementRow {
    run_id: Uuid,
    workload_id: i64,
    size: i64,
    median_ns: f64,
    samples: i32,
    samples_ns: Option<String>,
    instructions: Option<String>,
}

/// A status an editor set, with the regression it belongs to.
#[derive(sqlx::FromRow)]
struct StatusRow {
    lineage: String,
    version: String,
    at: OffsetDateTime,
    actor: String,
    #[sqlx(try_from = "String")]
    status: RegressionStatus,
}

/// A note or a link, with the regression it belongs to.
#[derive(sqlx::FromRow)]
struct EditRow {
    lineage: String,
    version: String,
    at: OffsetDateTime,
    actor: String,
    /// A link's title; empty for a note.
    kind: String,
    /// A note's body, a link's URL.
    detail: String,
}

/// When a regression was opened.
#[derive(sqlx::FromRow)]
struct Opening {
    lineage: String,
    version: String,
    opened_at: OffsetDateTime,
}

impl Store {
    /// The next runs after `after` (from the first when `None`) by receipt time, whole, read in
    /// one snapshot; empty when there are no more.
    pub async fn runs_page(&self, after: Option<RunCursor>) -> Result<Vec<StoredRun>, sqlx::Error> {
        let mut tx = self.pool.begin_snapshot().await?;
        let mut q = sql(format!("SELECT r.id, r.content_hash, r.sample_count, {RUN_HEADER_COLUMNS} {RUN_HEADER_FROM}"));
        if let Some(c) = after {
            q.push(" WHERE r.received_at > ").push_bind(c.received_at);
            q.push(" OR (r.received_at = ").push_bind(c.received_at);
            q.push(" AND r.id > ").push_bind(c.run_id).push(")");
        }
        q.push(" ORDER BY r.received_at, r.id LIMIT ").push_bind(RUNS_PER_PAGE);
        let mut heads: Vec<RunHead> = tx.exec().all(&q).await?;
        let mut budget = SAMPLES_PER_PAGE;
        let keep = heads
            .iter()
            .enumerate()
            .take_while(|&(i, h)| {
                let stored = if h.header.samples_pruned_at.is_some() { 0 } else { i64::from(h.sample_count) };
                let room = i == 0 || budget >= stored;
                budget -= stored;
                room
            })
            .count();
        heads.truncate(keep);
        if heads.is_empty() {
            return Ok(Vec::new());
        }
        let ids = || heads.iter().map(|h| h.id);
        let mut q =
            sql("SELECT f.run_id, f.workload_id, w.name, w.size_unit, f.source_hash, f.facts, f.profile, f.metadata
             FROM fits f JOIN workloads w ON w.id = f.workload_id WHERE f.run_id IN ");
        q.push_tuple(ids()).push(" ORDER BY f.run_id, f.workload_id");
        let fits: Vec<FitRow> = tx.exec().all(&q).await?;
        let mut q =
            sql("SELECT x.run_id, x.workload_id, w.name, w.size_unit, x.source_hash, x.metadata, x.kind, x.size,
                    x.detail, x.facts
             FROM failures x JOIN workloads w ON w.id = x.workload_id WHERE x.run_id IN ");
        q.push_tuple(ids()).push(" ORDER BY x.run_id, x.workload_id");
        let failures: Vec<ExportedFailureRow> = tx.exec().all(&q).await?;
        let mut q = sql("SELECT run_id, workload_id, size, median_ns, samples, samples_ns, instructions
             FROM measurements WHERE run_id IN ");
        q.push_tuple(ids()).push(" ORDER BY run_id, workload_id, size");
        let measurements: Vec<ExportedMeasurementRow> = tx.exec().all(&q).await?;
        let mut q = sql("SELECT c.run_id, c.workload_id, w.name, w.size_unit, c.contract, c.not_provided,
                    c.source_hash, c.metadata, c.size_of_interest
             FROM run_contracts c JOIN workloads w ON w.id = c.workload_id WHERE c.run_id IN ");
        q.push_tuple(ids()).push(" ORDER BY c.run_id, c.workload_id");
        let contracts: Vec<ExportedContractRow> = tx.exec().all(&q).await?;
        tx.commit().await?;
        assemble(heads, fits, failures, measurements, contracts)
    }

    /// Every change editors made to regressions (statuses, notes, links), oldest first. There are
    /// as many as people wrote, so they are read at once.
    pub async fn regression_edits(&self) -> Result<Vec<RegressionEdit>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        let statuses: Vec<StatusRow> = conn
            .exec()
            .all(&sql("SELECT r.lineage, r.version, e.at, e.actor, e.status
                 FROM regression_events e JOIN regressions r ON r.id = e.regression_id
                 WHERE e.actor IS NOT NULL AND e.status IS NOT NULL ORDER BY e.at, e.id"))
            .await?;
        let notes: Vec<EditRow> = conn
            .exec()
            .all(&sql(
                "SELECT r.lineage, r.version, n.at, n.author AS actor, CAST('' AS TEXT) AS kind, n.body AS detail
                 FROM regression_notes n JOIN regressions r ON r.id = n.regression_id ORDER BY n.at, n.id",
            ))
            .await?;
        let links: Vec<EditRow> = conn
            .exec()
            .all(&sql("SELECT r.lineage, r.version, l.at, l.author AS actor, l.title AS kind, l.url AS detail
                 FROM regression_links l JOIN regressions r ON r.id = l.regression_id ORDER BY l.at, l.id"))
            .await?;
        drop(conn);
        let mut edits: Vec<RegressionEdit> = Vec::with_capacity(statuses.len() + notes.len() + links.len());
        let edit = |lineage, version, at, actor, change| RegressionEdit {
            regression: LineageVersion::new(lineage, version),
            at,
            actor,
            change,
        };
        for row in statuses {
            edits.push(edit(row.lineage, row.version, row.at, row.actor, EditChange::Status(row.status)));
        }
        for row in notes {
            edits.push(edit(row.lineage, row.version, row.at, row.actor, EditChange::Note { body: row.detail }));
        }
        for row in links {
            let change = EditChange::Link { title: row.kind, url: row.detail };
            edits.push(edit(row.lineage, row.version, row.at, row.actor, change));
        }
        edits.sort_by_key(|e| e.at);
        Ok(edits)
    }

    /// When each regression was opened, by lineage and version: an edit can only follow that.
    pub async fn regression_openings(&self) -> Result<HashMap<LineageVersion, OffsetDateTime>, sqlx::Error> {
        let rows: Vec<Opening> = self.all(&sql("SELECT lineage, version, opened_at FROM regressions")).await?;
        Ok(rows.into_iter().map(|r| (LineageVersion::new(r.lineage, r.version), r.opened_at)).collect())
    }

    /// The id of the regression of this lineage and first bad version, if this store has it.
    pub async fn regression_id(&self, regression: &LineageVersion) -> Result<Option<i64>, sqlx::Error> {
        let q = sql("SELECT id FROM regressions WHERE lineage = $1 AND version = $2");
        self.value::<i64>(&q.bind(&regression.lineage).bind(&regression.version)).await
    }

    /// Whether regression `id` holds `edit` already: the same change, at the same time, by the
    /// same editor.
    pub async fn has_regression_edit(&self, id: i64, edit: &RegressionEdit) -> Result<bool, sqlx::Error> {
        let q = match &edit.change {
            EditChange::Status(status) => sql("SELECT 1 FROM regression_events
                 WHERE regression_id = $1 AND at = $2 AND actor = $3 AND status = $4")
            .bind(id)
            .bind(edit.at)
            .bind(&edit.actor)
            .bind(status.as_str()),
            EditChange::Note { body } => {
                sql("SELECT 1 FROM regression_notes WHERE regression_id = $1 AND at = $2 AND author = $3 AND body = $4")
                    .bind(id)
                    .bind(edit.at)
                    .bind(&edit.actor)
                    .bind(body)
            }
            EditChange::Link { url, .. } => {
                sql("SELECT 1 FROM regression_links WHERE regression_id = $1 AND at = $2 AND author = $3 AND url = $4")
                    .bind(id)
                    .bind(edit.at)
                    .bind(&edit.actor)
                    .bind(url)
            }
        };
        Ok(self.value::<i32>(&q).await?.is_some())
    }
}

/// Puts the rows of a page of runs together, run by run, workload by workload.
fn assemble(
    heads: Vec<RunHead>,
    fits: Vec<FitRow>,
    failures: Vec<ExportedFailureRow>,
    measurements: Vec<ExportedMeasurementRow>,
    contracts: Vec<ExportedContractRow>,
) -> Result<Vec<StoredRun>, sqlx::Error> {
    let mut sizes: HashMap<(Uuid, i64), Vec<StoredMeasurement>> = HashMap::new();
    for m in measurements {
        sizes.entry((m.run_id, m.workload_id)).or_default().push(StoredMeasurement {
            size: m.size,
            median_ns: m.median_ns,
            samples: m.samples,
            samples_ns: m.samples_ns.as_deref().map(decode_json).transpose()?.unwrap_or_default(),
            instructions: m.instructions.as_deref().map(decode_json).transpose()?,
        });
    }
    let mut workloads: HashMap<Uuid, Vec<(i64, StoredWorkload)>> = HashMap::new();
    for f in fits {
        workloads.entry(f.run_id).or_default().push((
            f.workload_id,
            StoredWorkload {
                metadata: decode_json(&f.metadata)?,
                measurements: sizes.remove(&(f.run_id, f.workload_id)).unwrap_or_default(),
                name: f.name,
                size_unit: f.size_unit,
                source_hash: f.source_hash,
                facts: decode_json(&f.facts)?,
                profile: f.profile.as_deref().map(decode_json).transpose()?,
                failure: None,
                contract: None,
                not_provided: false,
                size_of_interest: None,
            },
        ));
    }
    for x in failures {
        // A kind this server does not know cannot be written back as a failure; leaving the
        // workload out keeps the rest of the run.
        let Some(failure) = stored_failure(&x.kind, x.size, &x.detail, &x.facts) else { continue };
        workloads.entry(x.run_id).or_default().push((
            x.workload_id,
            StoredWorkload {
                metadata: decode_json(&x.metadata)?,
                measurements: sizes.remove(&(x.run_id, x.workload_id)).unwrap_or_default(),
                name: x.name,
                size_unit: x.size_unit,
                source_hash: x.source_hash,
                facts: Facts::default(),
                profile: None,
                failure: Some(failure),
                contract: None,
                not_provided: false,
                size_of_interest: None,
            },
        ));
    }
    for c in contracts {
        let contract = c.contract.as_deref().map(decode_json).transpose()?;
        let list = workloads.entry(c.run_id).or_default();
        match list.iter_mut().find(|(id, _)| *id == c.workload_id) {
            Some((_, w)) => {
                w.contract = contract;
                w.size_of_interest = c.size_of_interest.map(|s| s as u64);
            }
            None if c.not_provided => list.push((
                c.workload_id,
                StoredWorkload {
                    metadata: decode_json(&c.metadata)?,
                    measurements: Vec::new(),
                    name: c.name,
                    size_unit: c.size_unit,
                    source_hash: c.source_hash,
                    facts: Facts::default(),
                    profile: None,
                    failure: None,
                    contract,
                    not_provided: true,
                    size_of_interest: c.size_of_interest.map(|s| s as u64),
                },
            )),
            // The workload's failure was of a kind this server does not know, and left out.
            None => {}
        }
    }
    for list in workloads.values_mut() {
        list.sort_by_key(|(id, _)| *id);
    }
    Ok(heads
        .into_iter()
        .map(|h| {
            let (host, toolchain) = h.header.origin.into_parts();
            StoredRun {
                run_id: h.id,
                workloads: workloads.remove(&h.id).unwrap_or_default().into_iter().map(|(_, w)| w).collect(),
                content_hash: h.content_hash,
                agent_version: h.header.agent_version,
                started_at: h.header.started_at,
                received_at: h.header.received_at,
                sample_count: h.sample_count,
                samples_pruned_at: h.header.samples_pruned_at,
                metric: h.header.metric,
                host,
                toolchain,
            }
        })
        .collect())
}
