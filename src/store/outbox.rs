//! The webhook outbox: deliveries written by a summary pass beside the regression they announce,
//! claimed by senders with row locks that skip locked rows (so replicas share the outbox), and
//! each attempt recorded with what follows from it.

use super::db::{sql, Exec, Tx};
use super::Store;
use crate::model::{AttemptOutcome, DeliveryAttempt, DeliveryDetail, DeliveryRow};
use std::collections::HashMap;
use time::OffsetDateTime;
use uuid::Uuid;

const DELIVERY_COLUMNS: &str = "SELECT id, regression_id, event, target, status, created_at, next_attempt_at, attempts,
     delivered_at, last_error, resent_at, resent_by FROM deliveries";
const ATTEMPT_COLUMNS: &str =
    "SELECT delivery_id, attempt, at, http_status, latency_ms, error, answer FROM delivery_attempts";

/// A delivery claimed by a sender, to send now.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClaimedDelivery {
    pub id: Uuid,
    pub event: String,
    pub target: String,
    pub body: String,
    /// This attempt's number, from 1.
    pub attempts: i32,
    /// Refusals in a row before this attempt.
    pub refusals: i32,
    /// When this round of retries began: the delivery's creation, or its last resend.
    pub since: OffsetDateTime,
}

/// One attempt at sending a claimed delivery, to record.
pub struct NewAttempt<'a> {
    pub at: OffsetDateTime,
    /// The target's answer, when it answered.
    pub http_status: Option<u16>,
    pub latency_ms: f64,
    /// Why it failed, when it did.
    pub error: Option<&'a str>,
    /// The first line of the body of an answer other than 2xx.
    pub answer: Option<&'a str>,
    /// Whether the target refused it (a 3xx, or a 4xx other than 408 and 429).
    pub refusal: bool,
    /// What follows from it.
    pub outcome: AttemptOutcome,
}

/// A delivery to write: one event's body for one target.
pub struct NewDelivery<'a> {
    pub regression_id: i64,
    pub event: &'a str,
    pub target: &'a str,
    pub body: String,
}

/// The outbox as `/deliveries` shows it, each delivery with its attempts.
pub struct Outbox {
    /// Still to send, the next due first.
    pub pending: Vec<DeliveryDetail>,
    /// Refused by their targets, the newest first: they wait for a person to resend them.
    pub refused: Vec<DeliveryDetail>,
    /// Delivered or given up, the newest first.
    pub recent: Vec<DeliveryDetail>,
}

impl Store {
    /// Deliveries still to send, and the most recent `limit` refused ones and others.
    pub async fn deliveries(&self, limit: i64) -> Result<Outbox, sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        let q = sql(format!("{DELIVERY_COLUMNS} WHERE status = 'pending' ORDER BY next_attempt_at"));
        let pending: Vec<DeliveryRow> = conn.exec().all(&q).await?;
        let q = sql(format!("{DELIVERY_COLUMNS} WHERE status = 'refused' ORDER BY created_at DESC LIMIT $1"));
        let refused: Vec<DeliveryRow> = conn.exec().all(&q.bind(limit)).await?;
        let q = sql(format!(
            "{DELIVERY_COLUMNS} WHERE status IN ('delivered', 'failed') ORDER BY created_at DESC LIMIT $1"
        ));
        let recent: Vec<DeliveryRow> = conn.exec().all(&q.bind(limit)).await?;
        let q = sql(format!(
            "{ATTEMPT_COLUMNS} WHERE delivery_id IN (SELECT id FROM deliveries WHERE status = 'pending')
                OR delivery_id IN (SELECT id FROM deliveries WHERE status = 'refused' ORDER BY created_at DESC LIMIT $1)
                OR delivery_id IN (SELECT id FROM deliveries WHERE status IN ('delivered', 'failed')
                                   ORDER BY created_at DESC LIMIT $1)
             ORDER BY attempt"
        ));
        let attempts: Vec<DeliveryAttempt> = conn.exec().all(&q.bind(limit)).await?;
        let mut by_delivery = by_delivery(attempts);
        Ok(Outbox {
            pending: with_attempts(pending, &mut by_delivery),
            refused: with_attempts(refused, &mut by_delivery),
            recent: with_attempts(recent, &mut by_delivery),
        })
    }

    /// How many deliveries wait in the outbox, due or not; counted on the partial index of pending rows.
    pub async fn pending_deliveries(&self) -> Result<i64, sqlx::Error> {
        let count = self.value(&sql("SELECT COUNT(*) FROM deliveries WHERE status = 'pending'")).await?;
        Ok(count.unwrap_or(0))
    }

    /// Claims up to `limit` due deliveries for one attempt each: they are pushed to `lease_until`,
    /// so no other sender takes them while this one sends, and a sender that dies mid-send only
    /// delays them until then. A target hears of a regression in the order its events happened:
    /// a delivery waits while an earlier one of its regression to its target is still pending
    /// (opened before resolved, even when one pass decides both). A refused delivery does not
    /// hold the later ones back: like a failed one it is settled until a person resends it, and
    /// the target has said it does not take this event, so holding the rest would silence it for
    /// good. A resent delivery is pending again, and later ones still pending wait for it.
    pub async fn claim_due_deliveries(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: i64,
    ) -> Result<Vec<ClaimedDelivery>, sqlx::Error> {
        let q = sql(format!(
            "UPDATE deliveries SET next_attempt_at = $1, attempts = attempts + 1
             WHERE id IN (SELECT id FROM deliveries d WHERE status = 'pending' AND next_attempt_at <= $2
                            AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.regression_id = d.regression_id
                                            AND e.target = d.target AND e.status = 'pending'
                                            AND e.created_at < d.created_at)
                          ORDER BY next_attempt_at, created_at LIMIT $3{})
             RETURNING id, event, target, body, attempts, refusals, COALESCE(resent_at, created_at) AS since",
            self.pool.skip_locked()
        ));
        self.all(&q.bind(lease_until).bind(now).bind(limit)).await
    }

    /// Records an attempt and what follows from it, together.
    pub async fn finish_attempt(
        &self,
        delivery: &ClaimedDelivery,
        attempt: &NewAttempt<'_>,
    ) -> Result<(), sqlx::Error> {
        let NewAttempt { at, http_status, latency_ms, error, answer, refusal, outcome } = *attempt;
        let (status, next, delivered_at) = match outcome {
            AttemptOutcome::Delivered => ("delivered", at, Some(at)),
            AttemptOutcome::RetryAt(next) => ("pending", next, None),
            AttemptOutcome::GaveUp => ("failed", at, None),
            AttemptOutcome::Refused => ("refused", at, None),
        };
        let mut tx = self.begin().await?;
        let q = sql("INSERT INTO delivery_attempts (delivery_id, attempt, at, http_status, latency_ms, error, answer)
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (delivery_id, attempt) DO NOTHING")
        .bind(delivery.id)
        .bind(delivery.attempts)
        .bind(at)
        .bind(http_status.map(i32::from))
        .bind(latency_ms)
        .bind(error)
        .bind(answer);
        tx.exec().execute(&q).await?;
        let q = sql("UPDATE deliveries SET status = $2, next_attempt_at = $3, delivered_at = $4, last_error = $5,
                    refusals = CASE WHEN $6 THEN refusals + 1 ELSE 0 END
             WHERE id = $1 AND status = 'pending'")
        .bind(delivery.id)
        .bind(status)
        .bind(next)
        .bind(delivered_at)
        .bind(error)
        .bind(refusal);
        tx.exec().execute(&q).await?;
        tx.commit().await
    }

    /// Puts a refused or failed delivery back in the outbox, due at `now`, for `by`: the same
    /// delivery under the same id, its attempts numbered on from the last. Its retries run for
    /// the usual time from now. False when there is no such delivery, or it is not refused or
    /// failed (pending or delivered already).
    pub async fn resend_delivery(&self, id: Uuid, by: &str, now: OffsetDateTime) -> Result<bool, sqlx::Error> {
        let q = sql("UPDATE deliveries SET status = 'pending', next_attempt_at = $2, resent_at = $2, resent_by = $3
             WHERE id = $1 AND status IN ('refused', 'failed')")
        .bind(id)
        .bind(now)
        .bind(by);
        Ok(self.execute(&q).await? == 1)
    }

    /// How many deliveries their targets refused and nobody has resent.
    pub async fn refused_deliveries(&self) -> Result<i64, sqlx::Error> {
        let count = self.value(&sql("SELECT COUNT(*) FROM deliveries WHERE status = 'refused'")).await?;
        Ok(count.unwrap_or(0))
    }
}

impl Tx<'_> {
    /// Whether `event` was ever queued for the regression, for any target.
    pub async fn announced(&mut self, regression_id: i64, event: &str) -> Result<bool, sqlx::Error> {
        let q = sql("SELECT COUNT(*) FROM deliveries WHERE regression_id = $1 AND event = $2")
            .bind(regression_id)
            .bind(event);
        let n: Option<i64> = self.exec().value(&q).await?;
        Ok(n.unwrap_or(0) > 0)
    }

    /// Writes deliveries to the outbox, due at once, in the order given: each is created a
    /// microsecond after the one before, so the order holds among the deliveries of one pass.
    pub async fn enqueue_deliveries(
        &mut self,
        deliveries: &[NewDelivery<'_>],
        now: OffsetDateTime,
    ) -> Result<(), sqlx::Error> {
        for (i, d) in deliveries.iter().enumerate() {
            let now = now + time::Duration::microseconds(i as i64);
            let q = sql("INSERT INTO deliveries (id, regression_id, event, target, body, status, created_at, next_attempt_at, attempts)
                 VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6, 0)")
            .bind(Uuid::new_v4())
            .bind(d.regression_id)
            .bind(d.event)
            .bind(d.target)
            .bind(d.body.as_str())
            .bind(now);
            self.exec().execute(&q).await?;
        }
        Ok(())
    }
}

/// A regression's deliveries, each with its attempts.
pub(super) async fn deliveries_of(mut on: Exec<'_>, regression_id: i64) -> Result<Vec<DeliveryDetail>, sqlx::Error> {
    let q = sql(format!("{DELIVERY_COLUMNS} WHERE regression_id = $1 ORDER BY created_at, target")).bind(regression_id);
    let deliveries: Vec<DeliveryRow> = on.reborrow().all(&q).await?;
    let q = sql(format!(
        "{ATTEMPT_COLUMNS} WHERE delivery_id IN (SELECT id FROM deliveries WHERE regression_id = $1) ORDER BY attempt"
    ));
    let attempts: Vec<DeliveryAttempt> = on.all(&q.bind(regression_id)).await?;
    Ok(with_attempts(deliveries, &mut by_delivery(attempts)))
}

fn by_delivery(attempts: Vec<DeliveryAttempt>) -> HashMap<Uuid, Vec<DeliveryAttempt>> {
    let mut by_delivery: HashMap<Uuid, Vec<DeliveryAttempt>> = HashMap::new();
    for a in attempts {
        by_delivery.entry(a.delivery_id).or_default().push(a);
    }
    by_delivery
}

fn with_attempts(
    deliveries: Vec<DeliveryRow>,
    by_delivery: &mut HashMap<Uuid, Vec<DeliveryAttempt>>,
) -> Vec<DeliveryDetail> {
    deliveries
        .into_iter()
        .map(|d| DeliveryDetail { attempts: by_delivery.remove(&d.id).unwrap_or_default(), delivery: d })
        .collect()
}
