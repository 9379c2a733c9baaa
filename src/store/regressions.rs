//! Regressions: the list and a regression's page, editors' changes (status, notes, links), and the
//! writes through which a summary pass records what the alert rules decided (`impl Tx`).

use super::db::{sql, Exec, Sql, Tx};
use super::outbox::deliveries_of;
use super::{decode_json, Store};
use crate::alerts::evaluate::{Evidence, History, Membership, Outcomes, Reason, Track, VersionFit};
use crate::alerts::lineage::{Stored, StoredMember, Summary};
use crate::model::{
    RegressionDetail, RegressionEvent, RegressionLink, RegressionNote, RegressionRow, RegressionStatus,
    RegressionWorkload, ResolvedMember, SizeMedian, Slope, VersionSizes,
};
use slopewatch_core::wire::Failure;
use std::collections::HashMap;
use time::OffsetDateTime;

const REGRESSION_COLUMNS: &str = "SELECT id, lineage, version, previous_version, status, magnitude, first_run_at,
     opened_at, acknowledged_at, acknowledged_by, fixed_version, fix_first_run_at, resolved_at, merged_into FROM regressions";

const WORKLOAD_COLUMNS: &str = "SELECT rw.regression_id, w.name AS workload, rw.reason, rw.slope, rw.ci_low,
     rw.ci_high, rw.r2, rw.previous_slope, rw.time_ratio, rw.ratio_size, rw.joined_late, rw.fixed_version,
     rw.fixed_slope, rw.fixed_ratio, rw.failure_kind, rw.failure_size, rw.failure_detail, rw.failure_facts
     FROM regression_workloads rw JOIN workloads w ON w.id = rw.workload_id";

/// A workload's median times by size at one version, for a regression's charts.
#[derive(sqlx::FromRow)]
struct SizesRow {
    workload: String,
    version: String,
    sizes: String,
}

/// A workload of a regression still open, or opened at the version being summarised.
#[derive(sqlx::FromRow)]
struct MemberRow {
    regression_id: i64,
    version: String,
    status: String,
    workload_id: i64,
    reason: String,
    fixed_version: Option<String>,
}

/// A version summary of a workload, as the alert rules read it.
#[derive(sqlx::FromRow)]
struct SummaryRow {
    workload_id: i64,
    workload: String,
    version: String,
    #[sqlx(flatten)]
    slope: Slope,
    sizes: String,
    runs: i32,
    host_ids: String,
    first_seen: OffsetDateTime,
}

/// A version's failures of a workload, as the alert rules read them.
#[derive(sqlx::FromRow)]
struct FailureRow {
    workload_id: i64,
    workload: String,
    version: String,
    runs: i32,
    host_ids: String,
    kind: String,
    size: Option<i64>,
    detail: String,
    facts: String,
    first_seen: OffsetDateTime,
}

/// A regression of a lineage with one of its workloads, as the alert rules read it.
#[derive(sqlx::FromRow)]
struct StoredRow {
    id: i64,
    version: String,
    previous_version: Option<String>,
    status: String,
    fixed_version: Option<String>,
    merged_into: Option<i64>,
    workload_id: Option<i64>,
    reason: Option<String>,
    member_fixed_version: Option<String>,
}

/// A regression opened by a summary pass.
pub struct NewRegression<'a> {
    pub lineage: &'a str,
    pub version: &'a str,
    pub previous_version: Option<String>,
    pub first_run_at: OffsetDateTime,
    pub opened_at: OffsetDateTime,
}

/// A workload joining a regression for its slope or a failure, with its numbers at the
/// regression's version and before.
pub struct NewMember {
    pub regression_id: i64,
    pub track: Track,
    /// The slope at the regression's version; none for a failure.
    pub fit: Option<Slope>,
    /// What broke, for a failure.
    pub failure: Option<Failure>,
    pub previous_slope: Option<f64>,
    /// (size, ratio) of the time now over the time before, at the largest common size.
    pub time_ratio: Option<(u64, f64)>,
    pub joined_at: OffsetDateTime,
    pub joined_late: bool,
}

impl NewMember {
    /// Binds `$1`–`$14`: the regression, workload and reason, then the numbers at the regression's
    /// version and the one before, then the failure.
    fn bind_numbers<'q>(&self, q: Sql<'q>) -> Sql<'q> {
        let f = self.failure.as_ref();
        q.bind(self.regression_id)
            .bind(self.track.workload_id)
            .bind(self.track.reason.as_str())
            .bind(self.fit.map(|f| f.slope))
            .bind(self.fit.map(|f| f.ci_low))
            .bind(self.fit.map(|f| f.ci_high))
            .bind(self.fit.map(|f| f.r2))
            .bind(self.previous_slope)
            .bind(self.time_ratio.map(|r| r.1))
            .bind(self.time_ratio.map(|r| r.0 as i64))
            .bind(f.map(|f| f.kind.as_str()))
            .bind(f.and_then(|f| f.size).map(|s| s as i64))
            .bind(f.map(|f| f.detail.clone()))
            .bind(f.map(crate::model::failure_facts))
    }
}

/// A workload of a regression back under its threshold (or passing again) at a later version.
pub struct MemberFix<'a> {
    pub regression_id: i64,
    pub track: Track,
    pub version: &'a str,
    /// The slope at the fixing version; none for a failure.
    pub fit: Option<Slope>,
    pub time_ratio: Option<f64>,
    /// When the fixing version was first measured.
    pub first_run_at: OffsetDateTime,
}

impl Store {
    /// Regressions, newest first, with their workloads; `status` narrows the list. Merged ones
    /// are not listed: they live on in the one they were merged into.
    pub async fn regressions(
        &self,
        status: Option<RegressionStatus>,
    ) -> Result<Vec<(RegressionRow, Vec<RegressionWorkload>)>, sqlx::Error> {
        let status = status.map(RegressionStatus::as_str);
        let mut conn = self.pool.acquire().await?;
        let q = sql(format!(
            "{REGRESSION_COLUMNS} WHERE ($1 IS NULL OR status = $1) AND merged_into IS NULL
             ORDER BY opened_at DESC, id DESC LIMIT 500"
        ));
        let rows: Vec<RegressionRow> = conn.exec().all(&q.bind(status)).await?;
        let q = sql(format!(
            "{WORKLOAD_COLUMNS} WHERE rw.regression_id IN (SELECT id FROM regressions
             WHERE ($1 IS NULL OR status = $1) AND merged_into IS NULL ORDER BY opened_at DESC, id DESC LIMIT 500)
             ORDER BY w.name"
        ));
        let members: Vec<RegressionWorkload> = conn.exec().all(&q.bind(status)).await?;
        let members = members.into_iter().map(RegressionWorkload::with_failure);
        let mut by_regression: HashMap<i64, Vec<RegressionWorkload>> = HashMap::new();
        for m in members {
            by_regression.entry(m.regression_id).or_default().push(m);
        }
        Ok(rows
            .into_iter()
            .map(|r| {
                let members = by_regression.remove(&r.id).unwrap_or_default();
                (r, members)
            })
            .collect())
    }

    /// One regression with its timeline, notes, links, deliveries and the sizes behind its charts.
    pub async fn regression(&self, id: i64) -> Result<Option<RegressionDetail>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        let q = sql(format!("{REGRESSION_COLUMNS} WHERE id = $1")).bind(id);
        let Some(regression) = conn.exec().optional::<RegressionRow>(&q).await? else { return Ok(None) };
        let q = sql(format!("{WORKLOAD_COLUMNS} WHERE rw.regression_id = $1 ORDER BY w.name, rw.reason DESC")).bind(id);
        let workloads: Vec<RegressionWorkload> = conn.exec().all(&q).await?;
        let workloads: Vec<RegressionWorkload> = workloads.into_iter().map(RegressionWorkload::with_failure).collect();
        let q = sql("SELECT at, kind, detail, actor FROM regression_events WHERE regression_id = $1 ORDER BY at, id");
        let events: Vec<RegressionEvent> = conn.exec().all(&q.bind(id)).await?;
        let q = sql("SELECT id, at, author, body FROM regression_notes WHERE regression_id = $1 ORDER BY at, id");
        let notes: Vec<RegressionNote> = conn.exec().all(&q.bind(id)).await?;
        let q = sql("SELECT id, at, author, title, url FROM regression_links WHERE regression_id = $1 ORDER BY at, id");
        let links: Vec<RegressionLink> = conn.exec().all(&q.bind(id)).await?;
        let deliveries = deliveries_of(conn.exec(), id).await?;
        let q = sql(
            "SELECT w.name AS workload, s.version, s.sizes FROM version_summaries s JOIN workloads w ON w.id = s.workload_id
             WHERE s.lineage = $1 AND s.workload_id IN (SELECT workload_id FROM regression_workloads WHERE regression_id = $2)
               AND (s.version = $3 OR s.version = $4 OR s.version = $5)
             ORDER BY w.name, s.first_seen, s.version",
        )
        .bind(&regression.lineage)
        .bind(id)
        .bind(&regression.version)
        .bind(regression.previous_version.as_deref().unwrap_or(""))
        .bind(regression.fixed_version.as_deref().unwrap_or(""));
        let sizes: Vec<SizesRow> = conn.exec().all(&q).await?;
        let sizes = sizes
            .into_iter()
            .map(|row| {
                Ok(VersionSizes { workload: row.workload, version: row.version, sizes: decode_json(&row.sizes)? })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
        Ok(Some(RegressionDetail { regression, workloads, events, notes, links, deliveries, sizes }))
    }

    /// Sets a regression's status at `now`; `Ok(false)` when there is no such regression.
    pub async fn set_regression_status(
        &self,
        id: i64,
        status: RegressionStatus,
        actor: &str,
        now: OffsetDateTime,
    ) -> Result<bool, sqlx::Error> {
        let mut tx = self.begin().await?;
        let current: Option<String> =
            tx.exec().value(&sql("SELECT status FROM regressions WHERE id = $1").bind(id)).await?;
        let Some(current) = current else { return Ok(false) };
        if current == status.as_str() {
            return Ok(true);
        }
        let q = if status == RegressionStatus::Acknowledged {
            sql("UPDATE regressions SET status = $2, acknowledged_at = COALESCE(acknowledged_at, $3),
                 acknowledged_by = COALESCE(acknowledged_by, $4) WHERE id = $1")
            .bind(id)
            .bind(status.as_str())
            .bind(now)
            .bind(actor)
        } else {
            sql("UPDATE regressions SET status = $2 WHERE id = $1").bind(id).bind(status.as_str())
        };
        tx.exec().execute(&q).await?;
        let (kind, detail) = status.event();
        append_event(tx.exec(), id, now, kind, &detail, Some(actor)).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Adds a Markdown note written at `now`; `Ok(false)` when there is no such regression.
    pub async fn add_regression_note(
        &self,
        id: i64,
        author: &str,
        body: &str,
        now: OffsetDateTime,
    ) -> Result<bool, sqlx::Error> {
        let q = sql("INSERT INTO regression_notes (regression_id, at, author, body)
             SELECT id, $2, $3, $4 FROM regressions WHERE id = $1");
        Ok(self.execute(&q.bind(id).bind(now).bind(author).bind(body)).await? == 1)
    }

    /// Adds a link (an upstream issue, the fixing change) at `now`; `Ok(false)` when there is no
    /// such regression.
    pub async fn add_regression_link(
        &self,
        id: i64,
        author: &str,
        title: &str,
        url: &str,
        now: OffsetDateTime,
    ) -> Result<bool, sqlx::Error> {
        let mut tx = self.begin().await?;
        let q = sql("INSERT INTO regression_links (regression_id, at, author, title, url)
             SELECT id, $2, $3, $4, $5 FROM regressions WHERE id = $1");
        let inserted = tx.exec().execute(&q.bind(id).bind(now).bind(author).bind(title).bind(url)).await?;
        if inserted == 1 {
            append_event(tx.exec(), id, now, "link", &format!("Linked {title}"), Some(author)).await?;
        }
        tx.commit().await?;
        Ok(inserted == 1)
    }
}

/// Appends to a regression's timeline.
async fn append_event(
    on: Exec<'_>,
    regression_id: i64,
    at: OffsetDateTime,
    kind: &str,
    detail: &str,
    actor: Option<&str>,
) -> Result<(), sqlx::Error> {
    let q = sql("INSERT INTO regression_events (regression_id, at, kind, detail, actor) VALUES ($1, $2, $3, $4, $5)");
    on.execute(&q.bind(regression_id).bind(at).bind(kind).bind(detail).bind(actor)).await.map(drop)
}

impl Tx<'_> {
    /// The workloads of the lineage's open regressions, and of any regression opened at
    /// `version` (repeated runs of that version must not alert again).
    pub async fn lineage_members(&mut self, lineage: &str, version: &str) -> Result<Vec<Membership>, sqlx::Error> {
        let q = sql("SELECT r.id AS regression_id, r.version, r.status, rw.workload_id, rw.reason, rw.fixed_version
             FROM regressions r JOIN regression_workloads rw ON rw.regression_id = r.id
             WHERE r.lineage = $1 AND r.merged_into IS NULL AND (r.status IN ('open', 'acknowledged') OR r.version = $2)");
        let rows: Vec<MemberRow> = self.exec().all(&q.bind(lineage).bind(version)).await?;
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                Some(Membership {
                    regression_id: row.regression_id,
                    version: row.version,
                    open: matches!(row.status.as_str(), "open" | "acknowledged"),
                    track: Track { workload_id: row.workload_id, reason: Reason::parse(&row.reason)? },
                    fixed: row.fixed_version.is_some(),
                })
            })
            .collect())
    }

    /// Whether the lineage has any regression, whatever its status.
    pub async fn lineage_has_regressions(&mut self, lineage: &str) -> Result<bool, sqlx::Error> {
        let q = sql("SELECT 1 FROM regressions WHERE lineage = $1 LIMIT 1").bind(lineage);
        Ok(self.exec().value::<i32>(&q).await?.is_some())
    }

    /// The versions of the lineage at which these workloads have summaries or failures.
    pub async fn lineage_versions(&mut self, lineage: &str, workload_ids: &[i64]) -> Result<Vec<String>, sqlx::Error> {
        let mut q = sql("SELECT version FROM version_summaries WHERE workload_id IN ");
        q.push_tuple(workload_ids.iter().copied()).push(" AND lineage = ").push_bind(lineage);
        q.push(" UNION SELECT version FROM version_failures WHERE workload_id IN ");
        q.push_tuple(workload_ids.iter().copied()).push(" AND lineage = ").push_bind(lineage);
        self.exec().column(&q).await
    }

    /// Every version summary of the lineage, with its workload's name: a slope track for each
    /// summary, and a failure track for each version that measured a workload at all.
    pub async fn lineage_summaries(&mut self, lineage: &str) -> Result<Vec<Summary>, sqlx::Error> {
        let q = sql("SELECT s.workload_id, w.name AS workload, s.version, s.slope, s.ci_low, s.ci_high, s.r2, s.sizes,
                    s.runs, s.host_ids, s.first_seen
             FROM version_summaries s JOIN workloads w ON w.id = s.workload_id WHERE s.lineage = $1");
        let rows: Vec<SummaryRow> = self.exec().all(&q.bind(lineage)).await?;
        let q =
            sql("SELECT f.workload_id, w.name AS workload, f.version, f.runs, f.host_ids, f.kind, f.size, f.detail,
                    f.facts, f.first_seen
             FROM version_failures f JOIN workloads w ON w.id = f.workload_id WHERE f.lineage = $1");
        let failures: Vec<FailureRow> = self.exec().all(&q.bind(lineage)).await?;
        // Per (workload, version), how its runs fared.
        struct Tally {
            workload: String,
            first_seen: OffsetDateTime,
            passed: (usize, Vec<i64>),
            failed: (usize, Vec<i64>),
            failure: Option<Failure>,
        }
        let mut tallies: HashMap<(i64, String), Tally> = HashMap::new();
        let mut summaries = Vec::with_capacity(rows.len() * 2);
        for row in rows {
            let sizes: Vec<SizeMedian> = decode_json(&row.sizes)?;
            let passed = (row.runs as usize, decode_json(&row.host_ids)?);
            let tally = Tally {
                workload: row.workload.clone(),
                first_seen: row.first_seen,
                passed,
                failed: (0, Vec::new()),
                failure: None,
            };
            tallies.insert((row.workload_id, row.version.clone()), tally);
            let evidence = Evidence::Slope(VersionFit::new(row.slope, sizes));
            let history = History { track: Track::slope(row.workload_id), version: row.version, evidence };
            summaries.push(Summary { history, workload: row.workload, first_seen: row.first_seen });
        }
        for row in failures {
            let failed = (row.runs as usize, decode_json(&row.host_ids)?);
            let failure = crate::model::stored_failure(&row.kind, row.size, &row.detail, &row.facts);
            let t = tallies.entry((row.workload_id, row.version)).or_insert_with(|| Tally {
                workload: row.workload,
                first_seen: row.first_seen,
                passed: (0, Vec::new()),
                failed: (0, Vec::new()),
                failure: None,
            });
            t.first_seen = t.first_seen.min(row.first_seen);
            t.failed = failed;
            t.failure = failure;
        }
        for ((workload_id, version), t) in tallies {
            let outcomes = Outcomes::new(t.passed.0, &t.passed.1, t.failed.0, &t.failed.1, t.failure);
            let history =
                History { track: Track::failure(workload_id), version, evidence: Evidence::Outcomes(outcomes) };
            summaries.push(Summary { history, workload: t.workload, first_seen: t.first_seen });
        }
        // In a fixed order, so a regression lists its workloads by name whatever the maps did.
        summaries.sort_by(|a, b| (&a.workload, a.history.track).cmp(&(&b.workload, b.history.track)));
        Ok(summaries)
    }

    /// Every regression of the lineage, whatever its status, with its workloads.
    pub async fn lineage_regressions(&mut self, lineage: &str) -> Result<Vec<Stored>, sqlx::Error> {
        let q =
            sql("SELECT r.id, r.version, r.previous_version, r.status, r.fixed_version, r.merged_into, rw.workload_id,
                    rw.reason, rw.fixed_version AS member_fixed_version
             FROM regressions r LEFT JOIN regression_workloads rw ON rw.regression_id = r.id
             WHERE r.lineage = $1 ORDER BY r.id");
        let rows: Vec<StoredRow> = self.exec().all(&q.bind(lineage)).await?;
        let mut stored: Vec<Stored> = Vec::new();
        for row in rows {
            if stored.last().is_none_or(|s| s.id != row.id) {
                stored.push(Stored {
                    id: row.id,
                    version: row.version,
                    previous_version: row.previous_version,
                    status: row.status,
                    fixed_version: row.fixed_version,
                    merged_into: row.merged_into,
                    members: Vec::new(),
                });
            }
            let reason = row.reason.as_deref().and_then(Reason::parse);
            if let (Some(workload_id), Some(reason), Some(s)) = (row.workload_id, reason, stored.last_mut()) {
                let track = Track { workload_id, reason };
                s.members.push(StoredMember { track, fixed_version: row.member_fixed_version });
            }
        }
        Ok(stored)
    }

    /// Moves a regression's first bad and last good versions.
    pub async fn move_regression(
        &mut self,
        id: i64,
        version: &str,
        previous_version: Option<&str>,
        first_run_at: OffsetDateTime,
    ) -> Result<(), sqlx::Error> {
        let q = sql("UPDATE regressions SET version = $2, previous_version = $3, first_run_at = $4 WHERE id = $1");
        self.exec().execute(&q.bind(id).bind(version).bind(previous_version).bind(first_run_at)).await.map(drop)
    }

    /// Merges a regression into another (`Some`), or takes it out again (`None`).
    pub async fn merge_regression(&mut self, id: i64, into: Option<i64>) -> Result<(), sqlx::Error> {
        let q = sql("UPDATE regressions SET merged_into = $2 WHERE id = $1");
        self.exec().execute(&q.bind(id).bind(into)).await.map(drop)
    }

    /// Moves the version that fixed a resolved regression.
    pub async fn move_fix(&mut self, id: i64, version: &str, first_run_at: OffsetDateTime) -> Result<(), sqlx::Error> {
        let q = sql("UPDATE regressions SET fixed_version = $2, fix_first_run_at = $3 WHERE id = $1");
        self.exec().execute(&q.bind(id).bind(version).bind(first_run_at)).await.map(drop)
    }

    /// Reopens a regression the rules had resolved.
    pub async fn reopen_regression(&mut self, id: i64) -> Result<(), sqlx::Error> {
        let q = sql("UPDATE regressions SET status = 'open', fixed_version = NULL, fix_first_run_at = NULL,
             resolved_at = NULL WHERE id = $1");
        self.exec().execute(&q.bind(id)).await.map(drop)
    }

    /// Forgets a member's fix.
    pub async fn clear_fix(&mut self, id: i64, track: Track) -> Result<(), sqlx::Error> {
        let q = sql("UPDATE regression_workloads SET fixed_version = NULL, fixed_slope = NULL, fixed_ci_low = NULL,
             fixed_ci_high = NULL, fixed_ratio = NULL WHERE regression_id = $1 AND workload_id = $2 AND reason = $3");
        self.exec().execute(&q.bind(id).bind(track.workload_id).bind(track.reason.as_str())).await.map(drop)
    }

    /// Takes a member out of a regression.
    pub async fn remove_regression_member(&mut self, id: i64, track: Track) -> Result<(), sqlx::Error> {
        let q = sql("DELETE FROM regression_workloads WHERE regression_id = $1 AND workload_id = $2 AND reason = $3");
        self.exec().execute(&q.bind(id).bind(track.workload_id).bind(track.reason.as_str())).await.map(drop)
    }

    /// Sets a member's numbers at the regression's (moved) version and the one before.
    pub async fn refresh_regression_member(&mut self, m: &NewMember) -> Result<(), sqlx::Error> {
        let q = sql("UPDATE regression_workloads SET slope = $4, ci_low = $5, ci_high = $6, r2 = $7,
             previous_slope = $8, time_ratio = $9, ratio_size = $10, failure_kind = $11, failure_size = $12,
             failure_detail = $13, failure_facts = $14
             WHERE regression_id = $1 AND workload_id = $2 AND reason = $3");
        self.exec().execute(&m.bind_numbers(q)).await.map(drop)
    }

    /// Opens a regression; returns its id.
    pub async fn open_regression(&mut self, r: &NewRegression<'_>) -> Result<i64, sqlx::Error> {
        let q = sql("INSERT INTO regressions (lineage, version, previous_version, status, first_run_at, opened_at)
             VALUES ($1, $2, $3, 'open', $4, $5) RETURNING id")
        .bind(r.lineage)
        .bind(r.version)
        .bind(r.previous_version.as_deref())
        .bind(r.first_run_at)
        .bind(r.opened_at);
        self.exec().value(&q).await?.ok_or(sqlx::Error::RowNotFound)
    }

    /// Adds a workload to a regression.
    pub async fn add_regression_member(&mut self, m: &NewMember) -> Result<(), sqlx::Error> {
        let q = sql("INSERT INTO regression_workloads (regression_id, workload_id, reason, slope, ci_low, ci_high, r2,
             previous_slope, time_ratio, ratio_size, failure_kind, failure_size, failure_detail, failure_facts,
             joined_at, joined_late)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)");
        self.exec().execute(&m.bind_numbers(q).bind(m.joined_at).bind(m.joined_late)).await.map(drop)
    }

    /// Sets a regression's magnitude to the largest time ratio among its workloads.
    pub async fn update_magnitude(&mut self, regression_id: i64) -> Result<(), sqlx::Error> {
        let q = sql("UPDATE regressions SET magnitude = (SELECT MAX(time_ratio) FROM regression_workloads WHERE regression_id = $1)
             WHERE id = $1");
        self.exec().execute(&q.bind(regression_id)).await.map(drop)
    }

    /// Records that a workload of a regression is back under its threshold.
    pub async fn record_fix(&mut self, f: &MemberFix<'_>) -> Result<(), sqlx::Error> {
        let q = sql("UPDATE regression_workloads SET fixed_version = $4, fixed_slope = $5, fixed_ci_low = $6,
             fixed_ci_high = $7, fixed_ratio = $8 WHERE regression_id = $1 AND workload_id = $2 AND reason = $3")
        .bind(f.regression_id)
        .bind(f.track.workload_id)
        .bind(f.track.reason.as_str())
        .bind(f.version)
        .bind(f.fit.map(|f| f.slope))
        .bind(f.fit.map(|f| f.ci_low))
        .bind(f.fit.map(|f| f.ci_high))
        .bind(f.time_ratio);
        self.exec().execute(&q).await?;
        let q = sql("UPDATE regressions SET fix_first_run_at = $2 WHERE id = $1 AND fix_first_run_at IS NULL");
        self.exec().execute(&q.bind(f.regression_id).bind(f.first_run_at)).await.map(drop)
    }

    /// Marks a regression fixed by `version`.
    pub async fn resolve_regression(&mut self, id: i64, version: &str, now: OffsetDateTime) -> Result<(), sqlx::Error> {
        let q = sql("UPDATE regressions SET status = 'fixed', fixed_version = $2, resolved_at = $3 WHERE id = $1");
        self.exec().execute(&q.bind(id).bind(version).bind(now)).await.map(drop)
    }

    /// The workloads of a regression, as its resolved event lists them, by name.
    pub async fn resolved_members(&mut self, regression_id: i64) -> Result<Vec<ResolvedMember>, sqlx::Error> {
        let q =
            sql("SELECT w.name, rw.reason, r.version, r.previous_version, rw.slope, rw.fixed_slope, rw.fixed_ci_low,
                    rw.fixed_ci_high, rw.fixed_ratio, r.magnitude
             FROM regression_workloads rw JOIN regressions r ON r.id = rw.regression_id
             JOIN workloads w ON w.id = rw.workload_id
             WHERE rw.regression_id = $1 ORDER BY w.name");
        self.exec().all(&q.bind(regression_id)).await
    }

    /// Appends to a regression's timeline, written by the rules (no editor).
    pub async fn append_event(
        &mut self,
        regression_id: i64,
        at: OffsetDateTime,
        kind: &str,
        detail: &str,
    ) -> Result<(), sqlx::Error> {
        append_event(self.exec(), regression_id, at, kind, detail, None).await
    }
}
