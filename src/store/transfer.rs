//! What moving a store's history to another store reads and writes beyond `insert_run`: runs
//! whole in pages, in the order they were received; editors' changes to regressions; tokens.

use super::reads::{RunHeader, RUN_HEADER_COLUMNS, RUN_HEADER_FROM};
use super::{decode_json, push_ids, with_pool, RegressionStatus, Store};
use slopewatch_core::wire::{Host, Toolchain};
use sqlx::QueryBuilder;
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
    /// In the order the store first saw the workloads, which an import then repeats.
    pub workloads: Vec<StoredWorkload>,
}

#[derive(Debug, Clone)]
pub struct StoredWorkload {
    pub name: String,
    pub size_unit: String,
    pub source_hash: String,
    pub metadata: BTreeMap<String, String>,
    /// By size.
    pub measurements: Vec<StoredMeasurement>,
}

#[derive(Debug, Clone)]
pub struct StoredMeasurement {
    pub size: i64,
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
    pub lineage: String,
    pub version: String,
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

/// What became of an edit applied to this store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditOutcome {
    Applied,
    /// The same edit, at the same time by the same editor, is already there.
    AlreadyThere,
    /// This store has no regression of that lineage and version.
    NoRegression,
}

/// A token's stored form: its name, scope and hash, never the token.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct StoredToken {
    pub name: String,
    pub scope: String,
    pub prefix: String,
    pub hash: String,
    pub created_at: OffsetDateTime,
    pub last_used_at: Option<OffsetDateTime>,
}

#[derive(sqlx::FromRow)]
struct RunHead {
    id: Uuid,
    content_hash: String,
    sample_count: i32,
    #[sqlx(flatten)]
    header: RunHeader,
}

type FitRow = (Uuid, i64, String, String, String, String);
/// (run, workload id, size, median, sample count, samples as JSON, instruction counts as JSON)
type MeasurementRow = (Uuid, i64, i64, f64, i32, Option<String>, Option<String>);

impl Store {
    /// The next runs after `after` (from the first when `None`) by receipt time, whole, read in
    /// one snapshot; empty when there are no more.
    pub async fn runs_page(&self, after: Option<RunCursor>) -> Result<Vec<StoredRun>, sqlx::Error> {
        let (heads, fits, measurements) = with_pool!(self, |pool, dialect| {
            let mut tx = dialect::begin_snapshot(pool).await?;
            let mut q = QueryBuilder::new(format!(
                "SELECT r.id, r.content_hash, r.sample_count, {RUN_HEADER_COLUMNS} {RUN_HEADER_FROM}"
            ));
            if let Some(c) = after {
                q.push(" WHERE r.received_at > ").push_bind(c.received_at);
                q.push(" OR (r.received_at = ").push_bind(c.received_at);
                q.push(" AND r.id > ").push_bind(c.run_id).push(")");
            }
            q.push(" ORDER BY r.received_at, r.id LIMIT ").push_bind(RUNS_PER_PAGE);
            let mut heads: Vec<RunHead> = q.build_query_as().fetch_all(&mut *tx).await?;
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
            let ids: Vec<Uuid> = heads.iter().map(|h| h.id).collect();
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let mut fits = QueryBuilder::new(
                "SELECT f.run_id, f.workload_id, w.name, w.size_unit, f.source_hash, f.metadata
                 FROM fits f JOIN workloads w ON w.id = f.workload_id WHERE f.run_id IN ",
            );
            push_ids(&mut fits, &ids).push(" ORDER BY f.run_id, f.workload_id");
            let fits: Vec<FitRow> = fits.build_query_as().fetch_all(&mut *tx).await?;
            let mut measurements = QueryBuilder::new(
                "SELECT run_id, workload_id, size, median_ns, samples, samples_ns, instructions
                 FROM measurements WHERE run_id IN ",
            );
            push_ids(&mut measurements, &ids).push(" ORDER BY run_id, workload_id, size");
            let measurements: Vec<MeasurementRow> = measurements.build_query_as().fetch_all(&mut *tx).await?;
            tx.commit().await?;
            (heads, fits, measurements)
        });
        assemble(heads, fits, measurements)
    }

    /// Every change editors made to regressions (statuses, notes, links), oldest first. There are
    /// as many as people wrote, so they are read at once.
    pub async fn regression_edits(&self) -> Result<Vec<RegressionEdit>, sqlx::Error> {
        type Row = (String, String, OffsetDateTime, String, String, String);
        let (statuses, notes, links) = with_pool!(self, |pool| {
            // (lineage, version, at, editor, kind, detail)
            let statuses: Vec<Row> = sqlx::query_as(
                "SELECT r.lineage, r.version, e.at, e.actor, e.kind, e.detail
                 FROM regression_events e JOIN regressions r ON r.id = e.regression_id
                 WHERE e.actor IS NOT NULL AND e.kind IN ('acknowledged', 'status') ORDER BY e.at, e.id",
            )
            .fetch_all(pool)
            .await?;
            let notes: Vec<(String, String, OffsetDateTime, String, String)> = sqlx::query_as(
                "SELECT r.lineage, r.version, n.at, n.author, n.body
                 FROM regression_notes n JOIN regressions r ON r.id = n.regression_id ORDER BY n.at, n.id",
            )
            .fetch_all(pool)
            .await?;
            // (lineage, version, at, editor, title, url)
            let links: Vec<Row> = sqlx::query_as(
                "SELECT r.lineage, r.version, l.at, l.author, l.title, l.url
                 FROM regression_links l JOIN regressions r ON r.id = l.regression_id ORDER BY l.at, l.id",
            )
            .fetch_all(pool)
            .await?;
            (statuses, notes, links)
        });
        let mut edits: Vec<RegressionEdit> = Vec::with_capacity(statuses.len() + notes.len() + links.len());
        for (lineage, version, at, actor, kind, detail) in statuses {
            // Only the entries an editor's status change wrote.
            if let Some(status) = RegressionStatus::from_event(&kind, &detail) {
                edits.push(RegressionEdit { lineage, version, at, actor, change: EditChange::Status(status) });
            }
        }
        for (lineage, version, at, actor, body) in notes {
            edits.push(RegressionEdit { lineage, version, at, actor, change: EditChange::Note { body } });
        }
        for (lineage, version, at, actor, title, url) in links {
            edits.push(RegressionEdit { lineage, version, at, actor, change: EditChange::Link { title, url } });
        }
        edits.sort_by_key(|e| e.at);
        Ok(edits)
    }

    /// When each regression was opened, by lineage and version: an edit can only follow that.
    pub async fn regression_openings(&self) -> Result<HashMap<(String, String), OffsetDateTime>, sqlx::Error> {
        let rows: Vec<(String, String, OffsetDateTime)> = with_pool!(self, |pool| {
            sqlx::query_as("SELECT lineage, version, opened_at FROM regressions").fetch_all(pool).await?
        });
        Ok(rows.into_iter().map(|(lineage, version, at)| ((lineage, version), at)).collect())
    }

    /// Applies an editor's change carried over from another store, as of its own time, unless
    /// it is already there.
    pub async fn apply_regression_edit(&self, edit: &RegressionEdit) -> Result<EditOutcome, sqlx::Error> {
        let id: Option<i64> = with_pool!(self, |pool| {
            sqlx::query_scalar("SELECT id FROM regressions WHERE lineage = $1 AND version = $2")
                .bind(&edit.lineage)
                .bind(&edit.version)
                .fetch_optional(pool)
                .await?
        });
        let Some(id) = id else { return Ok(EditOutcome::NoRegression) };
        let present: Option<i32> = with_pool!(self, |pool| {
            let q = match &edit.change {
                EditChange::Status(status) => {
                    let (kind, detail) = status.event();
                    sqlx::query_scalar(
                        "SELECT 1 FROM regression_events
                         WHERE regression_id = $1 AND at = $2 AND actor = $3 AND kind = $4 AND detail = $5",
                    )
                    .bind(id)
                    .bind(edit.at)
                    .bind(&edit.actor)
                    .bind(kind)
                    .bind(detail)
                }
                EditChange::Note { body } => sqlx::query_scalar(
                    "SELECT 1 FROM regression_notes WHERE regression_id = $1 AND at = $2 AND author = $3 AND body = $4",
                )
                .bind(id)
                .bind(edit.at)
                .bind(&edit.actor)
                .bind(body.clone()),
                EditChange::Link { url, .. } => sqlx::query_scalar(
                    "SELECT 1 FROM regression_links WHERE regression_id = $1 AND at = $2 AND author = $3 AND url = $4",
                )
                .bind(id)
                .bind(edit.at)
                .bind(&edit.actor)
                .bind(url.clone()),
            };
            q.fetch_optional(pool).await?
        });
        if present.is_some() {
            return Ok(EditOutcome::AlreadyThere);
        }
        let applied = match &edit.change {
            EditChange::Status(status) => self.set_regression_status(id, *status, &edit.actor, edit.at).await?,
            EditChange::Note { body } => self.add_regression_note(id, &edit.actor, body, edit.at).await?,
            EditChange::Link { title, url } => self.add_regression_link(id, &edit.actor, title, url, edit.at).await?,
        };
        Ok(if applied { EditOutcome::Applied } else { EditOutcome::NoRegression })
    }

    /// Every token's stored form, by name.
    pub async fn stored_tokens(&self) -> Result<Vec<StoredToken>, sqlx::Error> {
        with_pool!(self, |pool| {
            sqlx::query_as("SELECT name, scope, prefix, hash, created_at, last_used_at FROM tokens ORDER BY name")
                .fetch_all(pool)
                .await
        })
    }

    /// Adds a token carried over from another store; `Ok(false)` when its name or hash is taken.
    pub async fn add_stored_token(&self, t: &StoredToken) -> Result<bool, sqlx::Error> {
        let inserted = with_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO tokens (name, scope, prefix, hash, created_at, last_used_at)
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            )
            .bind(&t.name)
            .bind(&t.scope)
            .bind(&t.prefix)
            .bind(&t.hash)
            .bind(t.created_at)
            .bind(t.last_used_at)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(inserted == 1)
    }
}

/// Puts the rows of a page of runs together, run by run, workload by workload.
fn assemble(
    heads: Vec<RunHead>,
    fits: Vec<FitRow>,
    measurements: Vec<MeasurementRow>,
) -> Result<Vec<StoredRun>, sqlx::Error> {
    let mut sizes: HashMap<(Uuid, i64), Vec<StoredMeasurement>> = HashMap::new();
    for (run_id, workload_id, size, median_ns, n, samples_ns, instructions) in measurements {
        sizes.entry((run_id, workload_id)).or_default().push(StoredMeasurement {
            size,
            median_ns,
            samples: n,
            samples_ns: samples_ns.as_deref().map(decode_json).transpose()?.unwrap_or_default(),
            instructions: instructions.as_deref().map(decode_json).transpose()?,
        });
    }
    let mut workloads: HashMap<Uuid, Vec<StoredWorkload>> = HashMap::new();
    for (run_id, workload_id, name, size_unit, source_hash, metadata) in fits {
        let metadata = decode_json(&metadata)?;
        workloads.entry(run_id).or_default().push(StoredWorkload {
            name,
            size_unit,
            source_hash,
            metadata,
            measurements: sizes.remove(&(run_id, workload_id)).unwrap_or_default(),
        });
    }
    Ok(heads
        .into_iter()
        .map(|h| {
            let (host, toolchain) = h.header.origin.into_parts();
            StoredRun {
                run_id: h.id,
                workloads: workloads.remove(&h.id).unwrap_or_default(),
                content_hash: h.content_hash,
                agent_version: h.header.agent_version,
                started_at: h.header.started_at,
                received_at: h.header.received_at,
                sample_count: h.sample_count,
                samples_pruned_at: h.header.samples_pruned_at,
                host,
                toolchain,
            }
        })
        .collect())
}
