//! Bisections recorded on regressions: each stored whole with its steps and the webhook deliveries
//! announcing it, in one transaction, or not at all; and read back for a regression's page.

use super::db::{sql, Exec};
use super::outbox::NewDelivery;
use super::{decode_json, Store};
use crate::model::{Bisection, BisectionStep};
use slopewatch_core::bisection::{BisectionSubmission, Outcome, StepVerdict};
use slopewatch_core::complexity::Class;
use slopewatch_core::wire::Host;
use std::collections::HashMap;
use time::OffsetDateTime;
use uuid::Uuid;

/// A bisection as an export carries it: its regression by lineage and version, and the hash it
/// was submitted with.
#[derive(Debug, Clone)]
pub struct StoredBisection {
    pub lineage: String,
    pub version: String,
    pub content_hash: String,
    pub bisection: Bisection,
}

#[derive(sqlx::FromRow)]
struct BisectedRegression {
    id: i64,
    lineage: String,
    version: String,
}

#[derive(sqlx::FromRow)]
struct HashRow {
    id: Uuid,
    content_hash: String,
}

/// What storing a bisection did.
#[derive(Debug, PartialEq, Eq)]
pub enum BisectionWrite {
    /// Stored now, with its deliveries.
    Stored,
    /// Its id was already stored, on this regression and with this content hash; nothing was
    /// written.
    AlreadyThere { regression_id: i64, content_hash: String },
    /// Its id is new, but the regression already holds a bisection of the same content key, this
    /// one; nothing was written.
    SameContent { bisection_id: Uuid },
}

#[derive(sqlx::FromRow)]
struct BisectionRecord {
    id: Uuid,
    regression_id: i64,
    agent_version: String,
    started_at: OffsetDateTime,
    received_at: OffsetDateTime,
    seconds: f64,
    host_name: String,
    host_cpu: String,
    host_kernel: String,
    host_arch: String,
    lineage: String,
    workloads: String,
    max_slope: f64,
    max_class: Option<String>,
    good: String,
    bad: String,
    candidates: i64,
    outcome: String,
    first_bad: Option<String>,
    last_good: Option<String>,
}

#[derive(sqlx::FromRow)]
struct StepRecord {
    bisection_id: Uuid,
    position: i32,
    version: String,
    verdict: String,
    slope: Option<f64>,
    workload: Option<String>,
    seconds: f64,
    run_id: Option<Uuid>,
    stored_run: Option<Uuid>,
    note: Option<String>,
}

#[derive(sqlx::FromRow)]
struct StoredKey {
    regression_id: i64,
    content_hash: String,
}

fn unknown(what: &str, value: &str) -> sqlx::Error {
    sqlx::Error::Decode(format!("unknown bisection {what} {value:?}").into())
}

impl Store {
    /// Every bisection, in the order they were received, for an export.
    pub async fn stored_bisections(&self) -> Result<Vec<StoredBisection>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        let q = sql("SELECT id, lineage, version FROM regressions
             WHERE id IN (SELECT regression_id FROM bisections) ORDER BY id");
        let regressions: Vec<BisectedRegression> = conn.exec().all(&q).await?;
        let hashes: Vec<HashRow> = conn.exec().all(&sql("SELECT id, content_hash FROM bisections")).await?;
        let mut hashes: HashMap<Uuid, String> = hashes.into_iter().map(|h| (h.id, h.content_hash)).collect();
        let mut stored = Vec::new();
        for r in regressions {
            for bisection in bisections_of(conn.exec(), r.id).await? {
                stored.push(StoredBisection {
                    lineage: r.lineage.clone(),
                    version: r.version.clone(),
                    content_hash: hashes.remove(&bisection.bisection_id).unwrap_or_default(),
                    bisection,
                });
            }
        }
        stored.sort_by_key(|s| (s.bisection.received_at, s.bisection.bisection_id));
        Ok(stored)
    }

    /// The regression of a lineage and version, found as editors' changes carried between stores
    /// are.
    pub async fn regression_at(&self, lineage: &str, version: &str) -> Result<Option<i64>, sqlx::Error> {
        self.value(&sql("SELECT id FROM regressions WHERE lineage = $1 AND version = $2").bind(lineage).bind(version))
            .await
    }

    /// Stores a validated bisection on a regression, with its steps and `deliveries`, unless its id
    /// is already stored (then the stored record's regression and content hash are answered for
    /// the caller to compare), or the regression holds one of the same `content_key` (then its
    /// id is answered); in either case nothing is written.
    pub async fn insert_bisection(
        &self,
        regression_id: i64,
        b: &BisectionSubmission,
        content_hash: &str,
        content_key: &str,
        received_at: OffsetDateTime,
        deliveries: &[NewDelivery<'_>],
    ) -> Result<BisectionWrite, sqlx::Error> {
        let mut tx = self.begin_writing().await?;
        let workloads = serde_json::to_string(&b.workloads).expect("names serialize");
        let q = sql("INSERT INTO bisections (id, regression_id, content_hash, content_key, agent_version, started_at,
                received_at, seconds, host_name, host_cpu, host_kernel, host_arch, lineage, workloads, max_slope,
                max_class, good, bad, candidates, outcome, first_bad, last_good)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
                $22)
             ON CONFLICT DO NOTHING")
        .bind(b.bisection_id)
        .bind(regression_id)
        .bind(content_hash)
        .bind(content_key)
        .bind(&b.agent_version)
        .bind(b.started_at)
        .bind(received_at)
        .bind(b.seconds)
        .bind(&b.host.name)
        .bind(&b.host.cpu)
        .bind(&b.host.kernel)
        .bind(&b.host.arch)
        .bind(&b.lineage)
        .bind(workloads)
        .bind(b.max_slope)
        .bind(b.max_class.map(|c| c.as_str()))
        .bind(&b.good)
        .bind(&b.bad)
        .bind(i64::from(b.candidates))
        .bind(b.outcome.as_str())
        .bind(b.first_bad.as_deref())
        .bind(b.last_good.as_deref());
        // Nothing inserted: the id is taken (checked first, so that a retry of a record is told
        // from another under its id), or the regression holds the same content (a unique index).
        if tx.exec().execute(&q).await? == 0 {
            let q = sql("SELECT regression_id, content_hash FROM bisections WHERE id = $1").bind(b.bisection_id);
            if let Some(stored) = tx.exec().optional::<StoredKey>(&q).await? {
                return Ok(BisectionWrite::AlreadyThere {
                    regression_id: stored.regression_id,
                    content_hash: stored.content_hash,
                });
            }
            let q = sql("SELECT id FROM bisections WHERE regression_id = $1 AND content_key = $2")
                .bind(regression_id)
                .bind(content_key);
            let bisection_id: Uuid = tx.exec().value(&q).await?.ok_or(sqlx::Error::RowNotFound)?;
            return Ok(BisectionWrite::SameContent { bisection_id });
        }
        if !b.steps.is_empty() {
            let mut q =
                sql("INSERT INTO bisection_steps (bisection_id, position, version, verdict, slope, workload, seconds,
                    run_id, note) ");
            q.push_values(b.steps.iter().enumerate(), |row, (i, s)| {
                row.bind(b.bisection_id)
                    .bind(i as i32 + 1)
                    .bind(&s.version)
                    .bind(s.verdict.as_str())
                    .bind(s.slope)
                    .bind(s.workload.as_deref())
                    .bind(s.seconds)
                    .bind(s.run_id)
                    .bind(s.note.as_deref());
            });
            tx.exec().execute(&q).await?;
        }
        tx.enqueue_deliveries(deliveries, received_at).await?;
        tx.commit().await?;
        Ok(BisectionWrite::Stored)
    }
}

/// A regression's bisections, oldest first, each with its steps in version order.
pub(super) async fn bisections_of(mut on: Exec<'_>, regression_id: i64) -> Result<Vec<Bisection>, sqlx::Error> {
    let q = sql(
        "SELECT id, regression_id, agent_version, started_at, received_at, seconds, host_name, host_cpu, host_kernel,
            host_arch, lineage, workloads, max_slope, max_class, good, bad, candidates, outcome, first_bad, last_good
         FROM bisections WHERE regression_id = $1 ORDER BY received_at, id",
    )
    .bind(regression_id);
    let records: Vec<BisectionRecord> = on.reborrow().all(&q).await?;
    if records.is_empty() {
        return Ok(Vec::new());
    }
    let q = sql("SELECT s.bisection_id, s.position, s.version, s.verdict, s.slope, s.workload, s.seconds, s.run_id,
            r.id AS stored_run, s.note
         FROM bisection_steps s JOIN bisections b ON b.id = s.bisection_id LEFT JOIN runs r ON r.id = s.run_id
         WHERE b.regression_id = $1 ORDER BY s.position")
    .bind(regression_id);
    let mut steps: HashMap<Uuid, Vec<BisectionStep>> = HashMap::new();
    for s in on.all::<StepRecord>(&q).await? {
        let verdict = StepVerdict::parse(&s.verdict).ok_or_else(|| unknown("verdict", &s.verdict))?;
        steps.entry(s.bisection_id).or_default().push(BisectionStep {
            position: s.position,
            version: s.version,
            verdict,
            slope: s.slope,
            workload: s.workload,
            seconds: s.seconds,
            run_id: s.run_id,
            run_stored: s.stored_run.is_some(),
            note: s.note,
        });
    }
    records
        .into_iter()
        .map(|r| {
            let outcome = Outcome::parse(&r.outcome).ok_or_else(|| unknown("outcome", &r.outcome))?;
            let mut b = Bisection {
                bisection_id: r.id,
                regression_id: r.regression_id,
                agent_version: r.agent_version,
                started_at: r.started_at,
                received_at: r.received_at,
                seconds: r.seconds,
                host: Host { name: r.host_name, cpu: r.host_cpu, kernel: r.host_kernel, arch: r.host_arch },
                lineage: r.lineage,
                workloads: decode_json(&r.workloads)?,
                max_slope: r.max_slope,
                max_class: match &r.max_class {
                    Some(c) => Some(Class::parse(c).ok_or_else(|| unknown("max_class", c))?),
                    None => None,
                },
                good: r.good,
                bad: r.bad,
                candidates: r.candidates,
                outcome,
                first_bad: r.first_bad,
                last_good: r.last_good,
                steps: steps.remove(&r.id).unwrap_or_default(),
            };
            b.sort_steps();
            Ok(b)
        })
        .collect()
}
