//! Regressions: the list and a regression's page, editors' changes (status, notes, links), and the
//! writes through which a summary pass records what the alert rules decided (`impl Tx`).

use super::bisections::bisections_of;
use super::db::complexity::decode_complexity;
use super::db::{sql, Exec, Sql, Tx};
use super::outbox::deliveries_of;
use super::{decode_json, Store};
use crate::model::{
    with_members, Architecture, MetricColumn, NewEvent, RegressionDetail, RegressionEvent, RegressionKind,
    RegressionLink, RegressionNote, RegressionRow, RegressionStatus, RegressionWorkload, ResolvedMember, SizeMedian,
    Slope, Track, VersionSizes,
};
use slopewatch_core::predict::step_sentence_in;
use slopewatch_core::wire::{Contract, Failure, Metric};
use time::OffsetDateTime;

pub(super) const REGRESSION_COLUMNS: &str = "SELECT id, lineage, version, previous_version, status, magnitude, first_run_at,
     opened_at, acknowledged_at, acknowledged_by, fixed_version, fix_first_run_at, resolved_at, merged_into FROM regressions";

/// A regression's workloads, with their version summaries' complexity and workload source at its
/// last good and first bad versions.
pub(super) const WORKLOAD_COLUMNS: &str =
    "SELECT rw.regression_id, w.name AS workload, w.metric, rw.reason, rw.slope, rw.ci_low,
     rw.ci_high, rw.r2, rw.previous_slope, rw.time_ratio, rw.ratio_size, rw.joined_late, rw.fixed_version,
     rw.fixed_slope, rw.fixed_ratio, rw.failure_kind, rw.failure_size, rw.failure_detail, rw.failure_facts,
     sb.complexity AS complexity_before, sa.complexity AS complexity_after,
     sb.source_hash AS source_before, sa.source_hash AS source_after, wc.contract, rr.previous_version,
     w.size_unit, w.size_of_interest
     FROM regression_workloads rw JOIN workloads w ON w.id = rw.workload_id
     JOIN regressions rr ON rr.id = rw.regression_id
     LEFT JOIN workload_contracts wc ON wc.workload_id = rw.workload_id
     LEFT JOIN version_summaries sa
       ON sa.workload_id = rw.workload_id AND sa.lineage = rr.lineage AND sa.version = rr.version
     LEFT JOIN version_summaries sb
       ON sb.workload_id = rw.workload_id AND sb.lineage = rr.lineage AND sb.version = rr.previous_version";

/// A row of `WORKLOAD_COLUMNS`, its complexities still JSON.
#[derive(sqlx::FromRow)]
struct WorkloadRecord {
    #[sqlx(flatten)]
    member: RegressionWorkload,
    complexity_before: Option<String>,
    complexity_after: Option<String>,
    source_before: Option<String>,
    source_after: Option<String>,
    /// The workload's contract, JSON, when it has one.
    contract: Option<String>,
    previous_version: Option<String>,
}

impl WorkloadRecord {
    fn decode(self) -> Result<RegressionWorkload, sqlx::Error> {
        let class =
            |text: Option<String>| decode_complexity(text.as_deref()).map(|c| crate::format::class_text(c.as_ref()));
        let after = decode_complexity(self.complexity_after.as_deref())?;
        let contract: Option<Contract> = self.contract.as_deref().map(decode_json).transpose()?;
        let contract_break = contract.as_ref().filter(|_| self.member.reason == "slope").map(|c| {
            let exponent = after.as_ref().and_then(|a| a.exponent);
            crate::format::contract_break(c, exponent, self.previous_version.as_deref())
        });
        Ok(RegressionWorkload {
            contract_break,
            contract,
            class_before: class(self.complexity_before)?,
            class_after: crate::format::class_text(after.as_ref()),
            source_changed: matches!((&self.source_before, &self.source_after), (Some(b), Some(a)) if b != a),
            ..self.member.with_failure()
        })
    }
}

/// What the workload costs at its size of interest at the regression's version, against its last
/// good version: the sentence its page puts first. `None` without a size of interest or a fit.
fn at_size_of_interest(w: &RegressionWorkload, r: &RegressionRow, sizes: &[VersionSizes]) -> Option<String> {
    let at = u64::try_from(w.size_of_interest?).ok()?;
    let unit = w.size_unit;
    let at_version = |version: &str| {
        let s = sizes.iter().find(|s| s.workload == w.workload && s.metric == w.metric && s.version == version)?;
        SizeMedian::predict(&s.sizes, at)
    };
    let bad = at_version(&r.version)?;
    let good = r.previous_version.as_deref().and_then(|v| at_version(v).map(|p| (p, v)));
    Some(step_sentence_in(&bad, good.as_ref().map(|(p, v)| (p, *v)), unit, w.metric))
}

/// Every row of a `WORKLOAD_COLUMNS` query, decoded.
pub(super) async fn read_members(exec: Exec<'_>, q: &Sql<'_>) -> Result<Vec<RegressionWorkload>, sqlx::Error> {
    let records: Vec<WorkloadRecord> = exec.all(q).await?;
    records.into_iter().map(WorkloadRecord::decode).collect()
}

/// A workload's median times (or counts) by size at one version, for a regression's charts.
#[derive(sqlx::FromRow)]
struct SizesRow {
    workload: String,
    #[sqlx(try_from = "MetricColumn")]
    metric: Metric,
    version: String,
    sizes: String,
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
pub struct FixedMember<'a> {
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
        self.regressions_of(status, None).await
    }

    /// The newest 500 regressions not merged into another, of one status and one kind (a finding
    /// has no last good version) where given, each with its workloads.
    pub async fn regressions_of(
        &self,
        status: Option<RegressionStatus>,
        kind: Option<RegressionKind>,
    ) -> Result<Vec<(RegressionRow, Vec<RegressionWorkload>)>, sqlx::Error> {
        let status = status.map(RegressionStatus::as_str);
        let kind = kind.map(RegressionKind::as_str);
        let filter = "($1 IS NULL OR status = $1) AND merged_into IS NULL
             AND ($2 IS NULL OR (CASE WHEN previous_version IS NULL THEN 'finding' ELSE 'regression' END) = $2)";
        let mut conn = self.pool.acquire().await?;
        let q = sql(format!("{REGRESSION_COLUMNS} WHERE {filter} ORDER BY opened_at DESC, id DESC LIMIT 500"));
        let rows: Vec<RegressionRow> = conn.exec().all(&q.bind(status).bind(kind)).await?;
        let q = sql(format!(
            "{WORKLOAD_COLUMNS} WHERE rw.regression_id IN (SELECT id FROM regressions
             WHERE {filter} ORDER BY opened_at DESC, id DESC LIMIT 500)
             ORDER BY w.name, w.metric"
        ));
        let members = read_members(conn.exec(), &q.bind(status).bind(kind)).await?;
        Ok(with_members(rows, members))
    }

    /// The regressions and findings (not merged into another) that hold `workload`'s series of
    /// `metric` in `lineage`, oldest first: what the series page links to.
    pub async fn series_regressions(
        &self,
        workload: &str,
        metric: Metric,
        lineage: &str,
    ) -> Result<Vec<RegressionRow>, sqlx::Error> {
        let q = sql(format!(
            "{REGRESSION_COLUMNS} WHERE lineage = $1 AND merged_into IS NULL AND id IN
             (SELECT rw.regression_id FROM regression_workloads rw JOIN workloads w ON w.id = rw.workload_id
              WHERE w.name = $2 AND w.metric = $3) ORDER BY id"
        ));
        self.pool.acquire().await?.exec().all(&q.bind(lineage).bind(workload).bind(metric.as_str())).await
    }

    /// A regression's own row, without what hangs off it.
    pub async fn regression_row(&self, id: i64) -> Result<Option<RegressionRow>, sqlx::Error> {
        self.optional(&sql(format!("{REGRESSION_COLUMNS} WHERE id = $1")).bind(id)).await
    }

    /// One regression with its timeline, notes, links, deliveries and the sizes behind its charts.
    pub async fn regression(&self, id: i64) -> Result<Option<RegressionDetail>, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        let q = sql(format!("{REGRESSION_COLUMNS} WHERE id = $1")).bind(id);
        let Some(regression) = conn.exec().optional::<RegressionRow>(&q).await? else { return Ok(None) };
        let q =
            sql(format!("{WORKLOAD_COLUMNS} WHERE rw.regression_id = $1 ORDER BY w.name, w.metric, rw.reason DESC"))
                .bind(id);
        let workloads = read_members(conn.exec(), &q).await?;
        let q = sql("SELECT at, kind, detail, actor FROM regression_events WHERE regression_id = $1 ORDER BY at, id");
        let events: Vec<RegressionEvent> = conn.exec().all(&q.bind(id)).await?;
        let q = sql("SELECT id, at, author, body FROM regression_notes WHERE regression_id = $1 ORDER BY at, id");
        let notes: Vec<RegressionNote> = conn.exec().all(&q.bind(id)).await?;
        let q = sql("SELECT id, at, author, title, url FROM regression_links WHERE regression_id = $1 ORDER BY at, id");
        let links: Vec<RegressionLink> = conn.exec().all(&q.bind(id)).await?;
        let deliveries = deliveries_of(conn.exec(), id).await?;
        let bisections = bisections_of(conn.exec(), id).await?;
        let q = sql(
            "SELECT w.name AS workload, w.metric, s.version, s.sizes
             FROM version_summaries s JOIN workloads w ON w.id = s.workload_id
             WHERE s.lineage = $1 AND s.workload_id IN (SELECT workload_id FROM regression_workloads WHERE regression_id = $2)
               AND (s.version = $3 OR s.version = $4 OR s.version = $5)
             ORDER BY w.name, w.metric, s.first_seen, s.version",
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
                Ok(VersionSizes {
                    workload: row.workload,
                    metric: row.metric,
                    version: row.version,
                    sizes: decode_json(&row.sizes)?,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
        let mut workloads = workloads;
        for w in &mut workloads {
            w.at_size_of_interest = at_size_of_interest(w, &regression, &sizes);
        }
        Ok(Some(RegressionDetail {
            // Its name says the architecture; the hosts that measured it are added when read.
            arch: Architecture::of(&regression.lineage, &[]),
            regression,
            workloads,
            events,
            notes,
            links,
            deliveries,
            sizes,
            bisections,
            attribution: None,
            where_cost_went: Vec::new(),
            artifacts: Vec::new(),
            causes: Default::default(),
        }))
    }

    /// Sets a regression's status at `now`, with `event` on its timeline when the status changes;
    /// `Ok(false)` when there is no such regression.
    pub async fn set_regression_status(
        &self,
        id: i64,
        status: RegressionStatus,
        actor: &str,
        now: OffsetDateTime,
        event: &NewEvent,
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
        append_event(tx.exec(), id, now, event, Some(actor)).await?;
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

    /// Adds a link (an upstream issue, the fixing change) at `now`, with `event` on the
    /// regression's timeline; `Ok(false)` when there is no such regression.
    pub async fn add_regression_link(
        &self,
        id: i64,
        author: &str,
        title: &str,
        url: &str,
        now: OffsetDateTime,
        event: &NewEvent,
    ) -> Result<bool, sqlx::Error> {
        let mut tx = self.begin().await?;
        let q = sql("INSERT INTO regression_links (regression_id, at, author, title, url)
             SELECT id, $2, $3, $4, $5 FROM regressions WHERE id = $1");
        let inserted = tx.exec().execute(&q.bind(id).bind(now).bind(author).bind(title).bind(url)).await?;
        if inserted == 1 {
            append_event(tx.exec(), id, now, event, Some(author)).await?;
        }
        tx.commit().await?;
        Ok(inserted == 1)
    }
}

/// Appends to a regression's timeline: the entry's kind and wording, and the status it sets.
async fn append_event(
    on: Exec<'_>,
    regression_id: i64,
    at: OffsetDateTime,
    event: &NewEvent,
    actor: Option<&str>,
) -> Result<(), sqlx::Error> {
    let q = sql("INSERT INTO regression_events (regression_id, at, kind, detail, status, actor)
         VALUES ($1, $2, $3, $4, $5, $6)")
    .bind(regression_id)
    .bind(at)
    .bind(event.kind)
    .bind(event.detail.as_str())
    .bind(event.status.map(RegressionStatus::as_str))
    .bind(actor);
    on.execute(&q).await.map(drop)
}

impl Tx<'_> {
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
    pub async fn record_fix(&mut self, f: &FixedMember<'_>) -> Result<(), sqlx::Error> {
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
        let q = sql(
            "SELECT rw.workload_id, w.name, w.metric, w.size_unit, rw.reason, r.version, r.previous_version, rw.slope,
                    rw.fixed_slope, rw.fixed_ci_low, rw.fixed_ci_high, rw.fixed_ratio, r.magnitude
             FROM regression_workloads rw JOIN regressions r ON r.id = rw.regression_id
             JOIN workloads w ON w.id = rw.workload_id
             WHERE rw.regression_id = $1 ORDER BY w.name, w.metric",
        );
        self.exec().all(&q.bind(regression_id)).await
    }

    /// Appends to a regression's timeline, written by the rules (no editor).
    pub async fn append_event(
        &mut self,
        regression_id: i64,
        at: OffsetDateTime,
        event: &NewEvent,
    ) -> Result<(), sqlx::Error> {
        append_event(self.exec(), regression_id, at, event, None).await
    }
}
