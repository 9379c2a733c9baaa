//! Regressions, their retrospectives and the webhook outbox.
//!
//! Alert evaluation runs inside the run's ingest transaction (`evaluate_alerts!`), so a run and
//! the regressions and delivery rows it causes are committed together or not at all. The worker
//! claims due deliveries with row locks that skip locked rows, so replicas share the outbox.

use super::{decode_json, with_pool, Store};
use crate::alerts::config::AlertSettings;
use crate::alerts::evaluate::{Current, History, Membership, VersionFit};
use crate::alerts::payload::{self, Event, EventLinks, EventWorkload};
use crate::store::SizeMedian;
use crate::store::TokenRow;
use serde::Serialize;
use std::collections::HashMap;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// What alert evaluation needs to know about the run being stored.
pub(super) struct EvalContext<'a> {
    pub lineage: &'a str,
    pub version: &'a str,
    /// The run's workloads at its version: id, name, summary over the version's runs, first run.
    pub current: Vec<(Current, OffsetDateTime)>,
    pub settings: &'a AlertSettings,
    pub public_url: Option<&'a str>,
    pub now: OffsetDateTime,
}

impl EvalContext<'_> {
    pub fn currents(&self) -> Vec<Current> {
        self.current.iter().map(|(c, _)| c.clone()).collect()
    }

    pub fn name(&self, workload_id: i64) -> &str {
        self.current.iter().find(|(c, _)| c.workload_id == workload_id).map_or("", |(c, _)| c.workload.as_str())
    }

    pub fn first_run(&self, workload_id: i64) -> OffsetDateTime {
        self.current.iter().find(|(c, _)| c.workload_id == workload_id).map_or(self.now, |(_, t)| *t)
    }

    /// The event for a newly opened regression, from what the evaluation has in hand.
    pub fn opened_event(&self, regression_id: i64, plan: &crate::alerts::evaluate::Plan) -> Event {
        let previous_version = previous_version(plan);
        let workloads = plan
            .crossings
            .iter()
            .filter(|c| c.into.is_none())
            .map(|c| {
                let name = self.name(c.workload_id);
                let ratio =
                    c.previous.as_ref().and_then(|(_, p)| crate::alerts::evaluate::time_ratio(&c.fit.sizes, &p.sizes));
                EventWorkload {
                    name: name.to_string(),
                    threshold: self.settings.rules.threshold_for(name),
                    slope: c.fit.slope,
                    ci_low: c.fit.ci_low,
                    ci_high: c.fit.ci_high,
                    previous_slope: c.previous.as_ref().map(|(_, p)| p.slope),
                    time_ratio: ratio.map(|r| r.1),
                    ratio_size: ratio.map(|r| r.0 as i64),
                    series_url: crate::links::absolute(self.public_url, &crate::links::series(name, self.lineage)),
                }
            })
            .collect::<Vec<_>>();
        Event {
            event: payload::OPENED,
            regression_id,
            lineage: self.lineage.to_string(),
            version: self.version.to_string(),
            previous_version: previous_version.clone(),
            regressed_version: self.version.to_string(),
            last_good_version: previous_version,
            magnitude: workloads.iter().filter_map(|w| w.time_ratio).reduce(f64::max),
            workloads,
            links: EventLinks { regression: crate::links::absolute(self.public_url, &crate::links::regression(regression_id)) },
        }
    }
}

/// The last good version of a new regression: the highest version measured before it.
pub(super) fn previous_version(plan: &crate::alerts::evaluate::Plan) -> Option<String> {
    plan.crossings
        .iter()
        .filter(|c| c.into.is_none())
        .filter_map(|c| c.previous.as_ref().map(|(v, _)| v.clone()))
        .max_by(|a, b| slopewatch_core::version::compare(a, b))
}

pub(super) fn version_fit(s: &crate::analysis::Summary) -> VersionFit {
    VersionFit {
        slope: s.slope,
        ci_low: s.ci_low,
        ci_high: s.ci_high,
        r2: s.r2,
        sizes: s.sizes.iter().map(|&(size, median_ns, runs)| SizeMedian { size, median_ns, runs }).collect(),
    }
}

/// Members of the lineage's open regressions, and of any regression opened at the run's version.
pub(super) const MEMBERS_SQL: &str = "SELECT r.id, r.version, r.status, rw.workload_id, rw.fixed_version
     FROM regressions r JOIN regression_workloads rw ON rw.regression_id = r.id
     WHERE r.lineage = $1 AND (r.status IN ('open', 'acknowledged') OR r.version = $2)";

pub(super) type MemberRow = (i64, String, String, i64, Option<String>);

pub(super) fn memberships(rows: Vec<MemberRow>) -> Vec<Membership> {
    rows.into_iter()
        .map(|(regression_id, version, status, workload_id, fixed_version)| Membership {
            regression_id,
            version,
            open: is_open(&status),
            workload_id,
            fixed: fixed_version.is_some(),
        })
        .collect()
}

fn is_open(status: &str) -> bool {
    matches!(status, "open" | "acknowledged")
}

pub(super) type HistoryRow = (i64, String, f64, f64, f64, f64, String);

pub(super) fn histories(rows: Vec<HistoryRow>) -> Result<Vec<History>, sqlx::Error> {
    rows.into_iter()
        .map(|(workload_id, version, slope, ci_low, ci_high, r2, sizes)| {
            let sizes = decode_json(&sizes)?;
            Ok(History { workload_id, version, fit: VersionFit { slope, ci_low, ci_high, r2, sizes } })
        })
        .collect()
}

/// The members of a regression as a resolved event lists them.
pub(super) const RESOLVED_MEMBERS_SQL: &str =
    "SELECT w.name, r.version, r.previous_version, rw.slope, rw.fixed_slope, rw.fixed_ci_low, rw.fixed_ci_high,
            rw.fixed_ratio, r.magnitude
     FROM regression_workloads rw JOIN regressions r ON r.id = rw.regression_id JOIN workloads w ON w.id = rw.workload_id
     WHERE rw.regression_id = $1 ORDER BY w.name";

pub(super) type ResolvedMemberRow =
    (String, String, Option<String>, f64, Option<f64>, Option<f64>, Option<f64>, Option<f64>, Option<f64>);

pub(super) fn resolved_event(
    ctx: &EvalContext<'_>,
    regression_id: i64,
    rows: Vec<ResolvedMemberRow>,
    sizes_at_fix: &HashMap<String, i64>,
) -> Event {
    let regressed = rows.first().map(|r| r.1.clone()).unwrap_or_default();
    let last_good = rows.first().and_then(|r| r.2.clone());
    let magnitude = rows.first().and_then(|r| r.8);
    let workloads = rows
        .into_iter()
        .map(|(name, _, _, bad_slope, slope, ci_low, ci_high, ratio, _)| EventWorkload {
            threshold: ctx.settings.rules.threshold_for(&name),
            slope: slope.unwrap_or(f64::NAN),
            ci_low: ci_low.unwrap_or(f64::NAN),
            ci_high: ci_high.unwrap_or(f64::NAN),
            previous_slope: Some(bad_slope),
            time_ratio: ratio,
            ratio_size: sizes_at_fix.get(&name).copied(),
            series_url: crate::links::absolute(ctx.public_url, &crate::links::series(&name, ctx.lineage)),
            name,
        })
        .collect();
    Event {
        event: payload::RESOLVED,
        regression_id,
        lineage: ctx.lineage.to_string(),
        version: ctx.version.to_string(),
        previous_version: Some(regressed.clone()),
        regressed_version: regressed,
        last_good_version: last_good,
        magnitude,
        workloads,
        links: EventLinks { regression: crate::links::absolute(ctx.public_url, &crate::links::regression(regression_id)) },
    }
}

/// Runs alert evaluation for the run being stored, inside its transaction: opens, extends and
/// resolves regressions and writes their outbox rows. Expands once per backend, like `with_pool!`.
macro_rules! evaluate_alerts {
    ($tx:ident, $dialect:ident, $ctx:expr) => {{
        use $crate::alerts::evaluate;
        use $crate::store::alerts as a;
        let ctx: &a::EvalContext<'_> = $ctx;
        // Runs of different versions of one lineage evaluate one at a time, so a fix never misses
        // the regression a concurrent run is opening.
        $dialect::lock_lineage(&mut $tx, ctx.lineage).await?;
        let member_rows: Vec<a::MemberRow> =
            sqlx::query_as(a::MEMBERS_SQL).bind(ctx.lineage).bind(ctx.version).fetch_all(&mut *$tx).await?;
        let members = a::memberships(member_rows);
        let current = ctx.currents();
        let rules = &ctx.settings.rules;
        if evaluate::needs_history(rules, ctx.version, &current, &members) {
            let mut q = sqlx::QueryBuilder::new(
                "SELECT workload_id, version, slope, ci_low, ci_high, r2, sizes FROM version_summaries
                 WHERE lineage = ",
            );
            q.push_bind(ctx.lineage).push(" AND workload_id IN (");
            let mut ids = q.separated(", ");
            for c in &current {
                ids.push_bind(c.workload_id);
            }
            q.push(")");
            let history = a::histories(q.build_query_as().fetch_all(&mut *$tx).await?)?;
            let plan = evaluate::plan(rules, ctx.version, &current, &members, &history);
            let mut events: Vec<(i64, $crate::alerts::payload::Event)> = Vec::new();

            // Crossings open a regression at this version, join the one already there, or join an
            // earlier open one they were unsure at (`Crossing::into`).
            let mut opened: Option<i64> = None;
            if plan.join.is_none() && plan.crossings.iter().any(|c| c.into.is_none()) {
                let first_run = plan
                    .crossings
                    .iter()
                    .filter(|c| c.into.is_none())
                    .map(|c| ctx.first_run(c.workload_id))
                    .min()
                    .unwrap_or(ctx.now);
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO regressions (lineage, version, previous_version, status, first_run_at, opened_at)
                     VALUES ($1, $2, $3, 'open', $4, $5) RETURNING id",
                )
                .bind(ctx.lineage)
                .bind(ctx.version)
                .bind(a::previous_version(&plan))
                .bind(first_run)
                .bind(ctx.now)
                .fetch_one(&mut *$tx)
                .await?;
                a::insert_event!(&mut *$tx, id, first_run, "first_run", &format!("First run of {}", ctx.version), None::<&str>)?;
                events.push((id, ctx.opened_event(id, &plan)));
                opened = Some(id);
            }
            let mut touched: Vec<i64> = Vec::new();
            for c in &plan.crossings {
                let Some(regression_id) = c.into.or(plan.join).or(opened) else { continue };
                let late = Some(regression_id) != opened;
                let ratio = c.previous.as_ref().and_then(|(_, p)| evaluate::time_ratio(&c.fit.sizes, &p.sizes));
                sqlx::query(
                    "INSERT INTO regression_workloads (regression_id, workload_id, slope, ci_low, ci_high, r2,
                     previous_slope, time_ratio, ratio_size, joined_at, joined_late)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                )
                .bind(regression_id)
                .bind(c.workload_id)
                .bind(c.fit.slope)
                .bind(c.fit.ci_low)
                .bind(c.fit.ci_high)
                .bind(c.fit.r2)
                .bind(c.previous.as_ref().map(|(_, p)| p.slope))
                .bind(ratio.map(|r| r.1))
                .bind(ratio.map(|r| r.0 as i64))
                .bind(ctx.now)
                .bind(late)
                .execute(&mut *$tx)
                .await?;
                let name = ctx.name(c.workload_id);
                let (kind, verb) = if late { ("joined", "joined") } else { ("opened", "crossed") };
                let detail = format!(
                    "{name} {verb} at {}: slope {:.2} (95% CI {:.2}–{:.2}, threshold {:.2})",
                    ctx.version, c.fit.slope, c.fit.ci_low, c.fit.ci_high, rules.threshold_for(name)
                );
                a::insert_event!(&mut *$tx, regression_id, ctx.now, kind, &detail, None::<&str>)?;
                if !touched.contains(&regression_id) {
                    touched.push(regression_id);
                }
            }
            for regression_id in touched {
                sqlx::query(
                    "UPDATE regressions SET magnitude = (SELECT MAX(time_ratio) FROM regression_workloads WHERE regression_id = $1)
                     WHERE id = $1",
                )
                .bind(regression_id)
                .execute(&mut *$tx)
                .await?;
            }

            let mut ratio_sizes: std::collections::HashMap<i64, std::collections::HashMap<String, i64>> = Default::default();
            for f in &plan.fixes {
                let ratio = f.bad.as_ref().and_then(|b| evaluate::time_ratio(&f.fit.sizes, &b.sizes));
                let name = ctx.name(f.workload_id);
                if let Some((size, _)) = ratio {
                    ratio_sizes.entry(f.regression_id).or_default().insert(name.to_string(), size as i64);
                }
                sqlx::query(
                    "UPDATE regression_workloads SET fixed_version = $3, fixed_slope = $4, fixed_ci_low = $5,
                     fixed_ci_high = $6, fixed_ratio = $7 WHERE regression_id = $1 AND workload_id = $2",
                )
                .bind(f.regression_id)
                .bind(f.workload_id)
                .bind(ctx.version)
                .bind(f.fit.slope)
                .bind(f.fit.ci_low)
                .bind(f.fit.ci_high)
                .bind(ratio.map(|r| r.1))
                .execute(&mut *$tx)
                .await?;
                sqlx::query("UPDATE regressions SET fix_first_run_at = $2 WHERE id = $1 AND fix_first_run_at IS NULL")
                    .bind(f.regression_id)
                    .bind(ctx.first_run(f.workload_id))
                    .execute(&mut *$tx)
                    .await?;
                let detail = format!(
                    "{name} back under {:.2} at {}: slope {:.2}",
                    rules.threshold_for(name), ctx.version, f.fit.slope
                );
                a::insert_event!(&mut *$tx, f.regression_id, ctx.now, "fix_seen", &detail, None::<&str>)?;
            }
            for &id in &plan.resolved {
                sqlx::query("UPDATE regressions SET status = 'fixed', fixed_version = $2, resolved_at = $3 WHERE id = $1")
                    .bind(id)
                    .bind(ctx.version)
                    .bind(ctx.now)
                    .execute(&mut *$tx)
                    .await?;
                a::insert_event!(&mut *$tx, id, ctx.now, "resolved", &format!("Resolved by {}", ctx.version), None::<&str>)?;
                let rows: Vec<a::ResolvedMemberRow> =
                    sqlx::query_as(a::RESOLVED_MEMBERS_SQL).bind(id).fetch_all(&mut *$tx).await?;
                let sizes = ratio_sizes.remove(&id).unwrap_or_default();
                events.push((id, a::resolved_event(ctx, id, rows, &sizes)));
            }

            for (regression_id, event) in &events {
                for target in &ctx.settings.webhooks {
                    sqlx::query(
                        "INSERT INTO deliveries (id, regression_id, event, target, body, status, created_at, next_attempt_at, attempts)
                         VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6, 0)",
                    )
                    .bind(uuid::Uuid::new_v4())
                    .bind(*regression_id)
                    .bind(event.event)
                    .bind(&target.name)
                    .bind(event.render(target.format))
                    .bind(ctx.now)
                    .execute(&mut *$tx)
                    .await?;
                }
            }
        }
    }};
}
pub(super) use evaluate_alerts;

/// Appends to a regression's timeline; a macro so it expands for each backend's executor.
macro_rules! insert_event {
    ($executor:expr, $regression_id:expr, $at:expr, $kind:expr, $detail:expr, $actor:expr) => {
        sqlx::query(
            "INSERT INTO regression_events (regression_id, at, kind, detail, actor) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind($regression_id)
        .bind($at)
        .bind($kind)
        .bind($detail)
        .bind($actor)
        .execute($executor)
        .await
        .map(drop)
    };
}
pub(super) use insert_event;

/// A regression's status, as editors set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RegressionStatus {
    Open,
    Acknowledged,
    Fixed,
    FalseAlarm,
}

impl RegressionStatus {
    pub const ALL: [RegressionStatus; 4] =
        [RegressionStatus::Open, RegressionStatus::Acknowledged, RegressionStatus::Fixed, RegressionStatus::FalseAlarm];

    pub fn as_str(self) -> &'static str {
        match self {
            RegressionStatus::Open => "open",
            RegressionStatus::Acknowledged => "acknowledged",
            RegressionStatus::Fixed => "fixed",
            RegressionStatus::FalseAlarm => "false_alarm",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            RegressionStatus::Open => "open",
            RegressionStatus::Acknowledged => "acknowledged",
            RegressionStatus::Fixed => "fixed",
            RegressionStatus::FalseAlarm => "false alarm",
        }
    }

    pub fn parse(s: &str) -> Option<RegressionStatus> {
        RegressionStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// The timeline entry, kind and detail, that an editor setting this status writes.
    pub(super) fn event(self) -> (&'static str, String) {
        match self {
            RegressionStatus::Acknowledged => ("acknowledged", "Acknowledged".to_string()),
            other => ("status", format!("Status set to {}", other.label())),
        }
    }

    /// The status an editor's timeline entry set, if it is such an entry.
    pub(super) fn from_event(kind: &str, detail: &str) -> Option<RegressionStatus> {
        RegressionStatus::ALL.into_iter().find(|s| s.event() == (kind, detail.to_string()))
    }

    /// How a stored status reads on a page; an unknown one reads as itself.
    pub fn label_of(status: &str) -> &str {
        match RegressionStatus::parse(status) {
            Some(s) => s.label(),
            None => status,
        }
    }
}

/// A regression as listed and as shown on its page.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct RegressionRow {
    pub id: i64,
    pub lineage: String,
    pub version: String,
    pub previous_version: Option<String>,
    pub status: String,
    pub magnitude: Option<f64>,
    #[serde(with = "time::serde::rfc3339")]
    pub first_run_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub opened_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub acknowledged_at: Option<OffsetDateTime>,
    pub acknowledged_by: Option<String>,
    pub fixed_version: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub fix_first_run_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub resolved_at: Option<OffsetDateTime>,
}

/// One workload of a regression, with its numbers before, at and after.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct RegressionWorkload {
    pub regression_id: i64,
    pub workload: String,
    pub slope: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub r2: f64,
    pub previous_slope: Option<f64>,
    pub time_ratio: Option<f64>,
    pub ratio_size: Option<i64>,
    pub joined_late: bool,
    pub fixed_version: Option<String>,
    pub fixed_slope: Option<f64>,
    pub fixed_ratio: Option<f64>,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct RegressionEvent {
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub kind: String,
    pub detail: String,
    pub actor: Option<String>,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct RegressionNote {
    pub id: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub author: String,
    pub body: String,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct RegressionLink {
    pub id: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub author: String,
    pub title: String,
    pub url: String,
}

/// A row of the outbox.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct DeliveryRow {
    pub id: Uuid,
    pub regression_id: i64,
    pub event: String,
    pub target: String,
    pub status: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub next_attempt_at: OffsetDateTime,
    pub attempts: i32,
    #[serde(with = "time::serde::rfc3339::option")]
    pub delivered_at: Option<OffsetDateTime>,
    pub last_error: Option<String>,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct DeliveryAttempt {
    pub delivery_id: Uuid,
    pub attempt: i32,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    pub http_status: Option<i32>,
    pub latency_ms: f64,
    pub error: Option<String>,
}

/// A delivery with its attempts, oldest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeliveryDetail {
    pub delivery: DeliveryRow,
    pub attempts: Vec<DeliveryAttempt>,
}

/// Median times by size of one workload at one version, for before/after charts.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VersionSizes {
    pub workload: String,
    pub version: String,
    pub sizes: Vec<SizeMedian>,
}

/// Everything on a regression's page.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RegressionDetail {
    pub regression: RegressionRow,
    pub workloads: Vec<RegressionWorkload>,
    pub events: Vec<RegressionEvent>,
    pub notes: Vec<RegressionNote>,
    pub links: Vec<RegressionLink>,
    pub deliveries: Vec<DeliveryDetail>,
    pub sizes: Vec<VersionSizes>,
}

/// A delivery claimed by a worker, to send now.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClaimedDelivery {
    pub id: Uuid,
    pub event: String,
    pub target: String,
    pub body: String,
    /// This attempt's number, from 1.
    pub attempts: i32,
    pub created_at: OffsetDateTime,
}

/// What became of a delivery attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AttemptOutcome {
    Delivered,
    RetryAt(OffsetDateTime),
    GaveUp,
}

const REGRESSION_COLUMNS: &str = "SELECT id, lineage, version, previous_version, status, magnitude, first_run_at,
     opened_at, acknowledged_at, acknowledged_by, fixed_version, fix_first_run_at, resolved_at FROM regressions";

const WORKLOAD_COLUMNS: &str = "SELECT rw.regression_id, w.name AS workload, rw.slope, rw.ci_low, rw.ci_high, rw.r2,
     rw.previous_slope, rw.time_ratio, rw.ratio_size, rw.joined_late, rw.fixed_version, rw.fixed_slope, rw.fixed_ratio
     FROM regression_workloads rw JOIN workloads w ON w.id = rw.workload_id";

const DELIVERY_COLUMNS: &str = "SELECT id, regression_id, event, target, status, created_at, next_attempt_at, attempts,
     delivered_at, last_error FROM deliveries";

/// The session-signing key's row in `settings`.
const SESSION_KEY: &str = "session_key";

impl Store {
    /// Regressions, newest first, with their workloads; `status` narrows the list.
    pub async fn regressions(
        &self,
        status: Option<RegressionStatus>,
    ) -> Result<Vec<(RegressionRow, Vec<RegressionWorkload>)>, sqlx::Error> {
        let (rows, members) = with_pool!(self, |pool| {
            let rows: Vec<RegressionRow> = sqlx::query_as(&format!(
                "{REGRESSION_COLUMNS} WHERE ($1 IS NULL OR status = $1) ORDER BY opened_at DESC, id DESC LIMIT 500"
            ))
            .bind(status.map(RegressionStatus::as_str))
            .fetch_all(pool)
            .await?;
            let members: Vec<RegressionWorkload> = sqlx::query_as(&format!(
                "{WORKLOAD_COLUMNS} WHERE rw.regression_id IN (SELECT id FROM regressions
                 WHERE ($1 IS NULL OR status = $1) ORDER BY opened_at DESC, id DESC LIMIT 500) ORDER BY w.name"
            ))
            .bind(status.map(RegressionStatus::as_str))
            .fetch_all(pool)
            .await?;
            (rows, members)
        });
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
        let detail = with_pool!(self, |pool| {
            let regression: Option<RegressionRow> =
                sqlx::query_as(&format!("{REGRESSION_COLUMNS} WHERE id = $1")).bind(id).fetch_optional(pool).await?;
            let Some(regression) = regression else { return Ok(None) };
            let workloads: Vec<RegressionWorkload> =
                sqlx::query_as(&format!("{WORKLOAD_COLUMNS} WHERE rw.regression_id = $1 ORDER BY w.name"))
                    .bind(id)
                    .fetch_all(pool)
                    .await?;
            let events: Vec<RegressionEvent> = sqlx::query_as(
                "SELECT at, kind, detail, actor FROM regression_events WHERE regression_id = $1 ORDER BY at, id",
            )
            .bind(id)
            .fetch_all(pool)
            .await?;
            let notes: Vec<RegressionNote> = sqlx::query_as(
                "SELECT id, at, author, body FROM regression_notes WHERE regression_id = $1 ORDER BY at, id",
            )
            .bind(id)
            .fetch_all(pool)
            .await?;
            let links: Vec<RegressionLink> = sqlx::query_as(
                "SELECT id, at, author, title, url FROM regression_links WHERE regression_id = $1 ORDER BY at, id",
            )
            .bind(id)
            .fetch_all(pool)
            .await?;
            let deliveries: Vec<DeliveryRow> =
                sqlx::query_as(&format!("{DELIVERY_COLUMNS} WHERE regression_id = $1 ORDER BY created_at, target"))
                    .bind(id)
                    .fetch_all(pool)
                    .await?;
            let attempts: Vec<DeliveryAttempt> = sqlx::query_as(
                "SELECT a.delivery_id, a.attempt, a.at, a.http_status, a.latency_ms, a.error
                 FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
                 WHERE d.regression_id = $1 ORDER BY a.attempt",
            )
            .bind(id)
            .fetch_all(pool)
            .await?;
            let sizes: Vec<(String, String, String)> = sqlx::query_as(
                "SELECT w.name, s.version, s.sizes FROM version_summaries s JOIN workloads w ON w.id = s.workload_id
                 WHERE s.lineage = $1 AND s.workload_id IN (SELECT workload_id FROM regression_workloads WHERE regression_id = $2)
                   AND (s.version = $3 OR s.version = $4 OR s.version = $5)
                 ORDER BY w.name, s.first_seen, s.version",
            )
            .bind(&regression.lineage)
            .bind(id)
            .bind(&regression.version)
            .bind(regression.previous_version.as_deref().unwrap_or(""))
            .bind(regression.fixed_version.as_deref().unwrap_or(""))
            .fetch_all(pool)
            .await?;
            let sizes = sizes
                .into_iter()
                .map(|(workload, version, sizes)| {
                    let sizes = decode_json(&sizes)?;
                    Ok(VersionSizes { workload, version, sizes })
                })
                .collect::<Result<Vec<_>, sqlx::Error>>()?;
            let deliveries = with_attempts(deliveries, attempts);
            RegressionDetail { regression, workloads, events, notes, links, deliveries, sizes }
        });
        Ok(Some(detail))
    }

    /// Deliveries still to send, and the most recent `limit` others, each with its attempts.
    pub async fn deliveries(&self, limit: i64) -> Result<(Vec<DeliveryDetail>, Vec<DeliveryDetail>), sqlx::Error> {
        let (pending, done, attempts) = with_pool!(self, |pool| {
            let pending: Vec<DeliveryRow> =
                sqlx::query_as(&format!("{DELIVERY_COLUMNS} WHERE status = 'pending' ORDER BY next_attempt_at"))
                    .fetch_all(pool)
                    .await?;
            let done: Vec<DeliveryRow> = sqlx::query_as(&format!(
                "{DELIVERY_COLUMNS} WHERE status <> 'pending' ORDER BY created_at DESC LIMIT $1"
            ))
            .bind(limit)
            .fetch_all(pool)
            .await?;
            let attempts: Vec<DeliveryAttempt> = sqlx::query_as(
                "SELECT delivery_id, attempt, at, http_status, latency_ms, error FROM delivery_attempts
                 WHERE delivery_id IN (SELECT id FROM deliveries WHERE status = 'pending')
                    OR delivery_id IN (SELECT id FROM deliveries WHERE status <> 'pending' ORDER BY created_at DESC LIMIT $1)
                 ORDER BY attempt",
            )
            .bind(limit)
            .fetch_all(pool)
            .await?;
            (pending, done, attempts)
        });
        let (pending_ids, attempts): (Vec<_>, Vec<_>) = {
            let ids: Vec<Uuid> = pending.iter().map(|d| d.id).collect();
            attempts.into_iter().partition(|a| ids.contains(&a.delivery_id))
        };
        Ok((with_attempts(pending, pending_ids), with_attempts(done, attempts)))
    }

    /// How many deliveries wait in the outbox, due or not; counted on the partial index of pending rows.
    pub async fn pending_deliveries(&self) -> Result<i64, sqlx::Error> {
        with_pool!(self, |pool| {
            sqlx::query_scalar("SELECT COUNT(*) FROM deliveries WHERE status = 'pending'").fetch_one(pool).await
        })
    }

    /// Claims up to `limit` due deliveries for one attempt each: they are pushed to `lease_until`,
    /// so no other worker takes them while this one sends, and a worker that dies mid-send only
    /// delays them until then.
    pub async fn claim_due_deliveries(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: i64,
    ) -> Result<Vec<ClaimedDelivery>, sqlx::Error> {
        with_pool!(self, |pool, dialect| {
            sqlx::query_as(&format!(
                "UPDATE deliveries SET next_attempt_at = $1, attempts = attempts + 1
                 WHERE id IN (SELECT id FROM deliveries WHERE status = 'pending' AND next_attempt_at <= $2
                              ORDER BY next_attempt_at LIMIT $3{})
                 RETURNING id, event, target, body, attempts, created_at",
                dialect::SKIP_LOCKED
            ))
            .bind(lease_until)
            .bind(now)
            .bind(limit)
            .fetch_all(pool)
            .await
        })
    }

    /// Records an attempt and what follows from it, together.
    #[allow(clippy::too_many_arguments)]
    pub async fn finish_attempt(
        &self,
        delivery: &ClaimedDelivery,
        at: OffsetDateTime,
        http_status: Option<u16>,
        latency_ms: f64,
        error: Option<&str>,
        outcome: AttemptOutcome,
    ) -> Result<(), sqlx::Error> {
        let (status, next, delivered_at) = match outcome {
            AttemptOutcome::Delivered => ("delivered", at, Some(at)),
            AttemptOutcome::RetryAt(next) => ("pending", next, None),
            AttemptOutcome::GaveUp => ("failed", at, None),
        };
        with_pool!(self, |pool, dialect| {
            let mut tx = dialect::begin(pool).await?;
            sqlx::query(
                "INSERT INTO delivery_attempts (delivery_id, attempt, at, http_status, latency_ms, error)
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (delivery_id, attempt) DO NOTHING",
            )
            .bind(delivery.id)
            .bind(delivery.attempts)
            .bind(at)
            .bind(http_status.map(i32::from))
            .bind(latency_ms)
            .bind(error)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "UPDATE deliveries SET status = $2, next_attempt_at = $3, delivered_at = $4, last_error = $5
                 WHERE id = $1 AND status = 'pending'",
            )
            .bind(delivery.id)
            .bind(status)
            .bind(next)
            .bind(delivered_at)
            .bind(error)
            .execute(&mut *tx)
            .await?;
            tx.commit().await
        })
    }

    /// Sets a regression's status at `now`; `Ok(false)` when there is no such regression.
    pub async fn set_regression_status(
        &self,
        id: i64,
        status: RegressionStatus,
        actor: &str,
        now: OffsetDateTime,
    ) -> Result<bool, sqlx::Error> {
        with_pool!(self, |pool, dialect| {
            let mut tx = dialect::begin(pool).await?;
            let current: Option<String> = sqlx::query_scalar("SELECT status FROM regressions WHERE id = $1")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
            let Some(current) = current else { return Ok(false) };
            if current == status.as_str() {
                return Ok(true);
            }
            if status == RegressionStatus::Acknowledged {
                sqlx::query(
                    "UPDATE regressions SET status = $2, acknowledged_at = COALESCE(acknowledged_at, $3),
                     acknowledged_by = COALESCE(acknowledged_by, $4) WHERE id = $1",
                )
                .bind(id)
                .bind(status.as_str())
                .bind(now)
                .bind(actor)
                .execute(&mut *tx)
                .await?;
            } else {
                sqlx::query("UPDATE regressions SET status = $2 WHERE id = $1")
                    .bind(id)
                    .bind(status.as_str())
                    .execute(&mut *tx)
                    .await?;
            }
            let (kind, detail) = status.event();
            insert_event!(&mut *tx, id, now, kind, &detail, Some(actor))?;
            tx.commit().await?;
            Ok(true)
        })
    }

    /// Adds a Markdown note written at `now`; `Ok(false)` when there is no such regression.
    pub async fn add_regression_note(
        &self,
        id: i64,
        author: &str,
        body: &str,
        now: OffsetDateTime,
    ) -> Result<bool, sqlx::Error> {
        let inserted = with_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO regression_notes (regression_id, at, author, body)
                 SELECT id, $2, $3, $4 FROM regressions WHERE id = $1",
            )
            .bind(id)
            .bind(now)
            .bind(author)
            .bind(body)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(inserted == 1)
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
        with_pool!(self, |pool, dialect| {
            let mut tx = dialect::begin(pool).await?;
            let inserted = sqlx::query(
                "INSERT INTO regression_links (regression_id, at, author, title, url)
                 SELECT id, $2, $3, $4, $5 FROM regressions WHERE id = $1",
            )
            .bind(id)
            .bind(now)
            .bind(author)
            .bind(title)
            .bind(url)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if inserted == 1 {
                insert_event!(&mut *tx, id, now, "link", &format!("Linked {title}"), Some(author))?;
            }
            tx.commit().await?;
            Ok(inserted == 1)
        })
    }

    /// The key that signs session cookies: generated on first use and kept, so that restarts and
    /// replicas agree on it.
    pub async fn session_key(&self) -> Result<String, sqlx::Error> {
        let fresh = crate::auth::generate().secret;
        with_pool!(self, |pool| {
            sqlx::query("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING")
                .bind(SESSION_KEY)
                .bind(&fresh)
                .execute(pool)
                .await?;
            sqlx::query_scalar("SELECT value FROM settings WHERE key = $1").bind(SESSION_KEY).fetch_one(pool).await
        })
    }

    /// A token by id, to check that a session's token has not been revoked.
    pub async fn token_by_id(&self, id: i64) -> Result<Option<TokenRow>, sqlx::Error> {
        with_pool!(self, |pool| {
            sqlx::query_as("SELECT id, name, scope, created_at, last_used_at, hash FROM tokens WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await
        })
    }
}

fn with_attempts(deliveries: Vec<DeliveryRow>, attempts: Vec<DeliveryAttempt>) -> Vec<DeliveryDetail> {
    let mut by_delivery: HashMap<Uuid, Vec<DeliveryAttempt>> = HashMap::new();
    for a in attempts {
        by_delivery.entry(a.delivery_id).or_default().push(a);
    }
    deliveries
        .into_iter()
        .map(|d| DeliveryDetail { attempts: by_delivery.remove(&d.id).unwrap_or_default(), delivery: d })
        .collect()
}

/// The run's workloads at its version, as alert evaluation sees them.
pub(super) fn currents(
    summaries: &[super::summaries::SummaryRow],
    workload_ids: &HashMap<String, i64>,
) -> Vec<(Current, OffsetDateTime)> {
    summaries
        .iter()
        .filter_map(|row| {
            let name = workload_ids.iter().find(|(_, &id)| id == row.workload_id)?.0;
            let current =
                Current { workload_id: row.workload_id, workload: name.clone(), fit: version_fit(&row.summary) };
            Some((current, row.first_seen))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_an_editor_sets_is_read_back_from_its_timeline_entry() {
        for status in RegressionStatus::ALL {
            let (kind, detail) = status.event();
            assert_eq!(RegressionStatus::from_event(kind, &detail), Some(status));
        }
        assert_eq!(RegressionStatus::from_event("link", "Linked upstream"), None);
    }
}
