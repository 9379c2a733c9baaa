//! The webhook sender: claims due deliveries from the outbox (summary passes write them beside the
//! regressions they announce), signs and sends them, and schedules retries with exponential
//! backoff and jitter until a delivery succeeds or is a day old. Ingest never waits on it.

use super::signing;
use crate::config::{AlertSettings, RetryPolicy};
use crate::episodes::Episode;
use crate::metrics::Metrics;
use crate::model::AttemptOutcome;
use crate::store::{ClaimedDelivery, NewAttempt, Store};
use rand::Rng;
use std::sync::Arc;
use std::time::{Duration, Instant};
use time::OffsetDateTime;
use tokio::sync::watch;

/// Deliveries claimed per round; they are sent concurrently.
const BATCH: i64 = 16;
/// How long past its timeout a claimed delivery stays hidden from other workers.
const LEASE_MARGIN: Duration = Duration::from_secs(30);

/// The wait before attempt `attempt + 1`: `base · 2^(attempt-1)`, capped, then a random share
/// between half and all of it, so targets that come back are not hit by every sender at once.
pub fn backoff(policy: &RetryPolicy, attempt: i32, rng: &mut impl Rng) -> Duration {
    let doublings = attempt.saturating_sub(1).clamp(0, 30) as u32;
    let full = policy.base.saturating_mul(1u32 << doublings).min(policy.max_delay);
    full.mul_f64(rng.gen_range(0.5..=1.0))
}

/// Sends deliveries until `stop` turns true, then finishes the round in flight and returns.
/// Each attempt's outcome is counted in `metrics`.
pub async fn run(store: Store, settings: AlertSettings, metrics: Arc<Metrics>, mut stop: watch::Receiver<bool>) {
    let client = match reqwest::Client::builder()
        .timeout(settings.retry.timeout)
        // A target answers for itself: following redirects would let it point the server elsewhere.
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("slopewatch/", env!("CARGO_PKG_VERSION")))
        .build()
    {
        Ok(client) => client,
        Err(e) => {
            tracing::error!(error = %e, "cannot build the webhook HTTP client; alerts will not be sent");
            return;
        }
    };
    let lease = settings.retry.timeout + LEASE_MARGIN;
    tracing::info!(targets = settings.webhooks.len(), "alert outbox worker started");
    // Claiming is a write: on a full disk it fails every poll, and is logged once until it works.
    let failures = Episode::new("the alert outbox");
    while !*stop.borrow() {
        let now = OffsetDateTime::now_utc();
        let claimed = store.claim_due_deliveries(now, now + lease, BATCH).await;
        store.note_write(&claimed);
        failures.note(&claimed);
        let claimed = claimed.unwrap_or_default();
        metrics.record_deliveries_claimed(claimed.len());
        if claimed.is_empty() {
            tokio::select! {
                _ = tokio::time::sleep(settings.retry.poll) => {}
                _ = stop.changed() => {}
            }
            continue;
        }
        let sends = claimed.iter().map(|d| attempt(&store, &settings, &client, &metrics, &failures, d));
        futures_util::future::join_all(sends).await;
    }
    tracing::info!("alert outbox worker stopped");
}

async fn attempt(
    store: &Store,
    settings: &AlertSettings,
    client: &reqwest::Client,
    metrics: &Metrics,
    failures: &Episode,
    d: &ClaimedDelivery,
) {
    let started = Instant::now();
    let at = OffsetDateTime::now_utc();
    let (http_status, error) = match settings.webhooks.iter().find(|w| w.name == d.target) {
        None => (None, Some(format!("webhook target {:?} is no longer configured", d.target))),
        Some(target) => {
            let timestamp = at.unix_timestamp();
            let sent = client
                .post(target.url.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(signing::DELIVERY_HEADER, d.id.to_string())
                .header(signing::EVENT_HEADER, &d.event)
                .header(signing::TIMESTAMP_HEADER, timestamp.to_string())
                .header(signing::SIGNATURE_HEADER, signing::sign(&target.secret, timestamp, d.body.as_bytes()))
                .body(d.body.clone())
                .send()
                .await;
            match sent {
                Ok(res) if res.status().is_success() => (Some(res.status().as_u16()), None),
                Ok(res) => (Some(res.status().as_u16()), Some(format!("HTTP {}", res.status()))),
                // Without the URL: a Slack webhook URL is itself a secret.
                Err(e) => (None, Some(describe(&e.without_url()))),
            }
        }
    };
    let latency_ms = started.elapsed().as_secs_f64() * 1e3;
    let outcome = match (&error, settings.webhooks.iter().any(|w| w.name == d.target)) {
        (None, _) => AttemptOutcome::Delivered,
        (Some(_), false) => AttemptOutcome::GaveUp,
        (Some(_), true) => {
            let next = at + backoff(&settings.retry, d.attempts, &mut rand::thread_rng());
            if next > d.created_at + settings.retry.give_up_after {
                AttemptOutcome::GaveUp
            } else {
                AttemptOutcome::RetryAt(next)
            }
        }
    };
    metrics.record_webhook_attempt(&outcome);
    match &error {
        None => {
            tracing::info!(delivery = %d.id, target = %d.target, event = %d.event, attempt = d.attempts, latency_ms, "alert delivered")
        }
        Some(e) => {
            tracing::warn!(delivery = %d.id, target = %d.target, event = %d.event, attempt = d.attempts, error = %e, ?outcome, "alert delivery failed")
        }
    }
    let attempt = NewAttempt { at, http_status, latency_ms, error: error.as_deref(), outcome };
    // When it fails, the claim's lease runs out and the delivery is tried again, under the same id.
    let recorded = store.finish_attempt(d, &attempt).await;
    store.note_write(&recorded);
    if let Err(e) = recorded {
        tracing::debug!(delivery = %d.id, error = %e, "cannot record a delivery attempt");
        failures.failed(&e);
    }
}

/// An error and its causes on one line, e.g. "error sending request: connection refused".
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn backoff_doubles_is_capped_and_jittered_downwards() {
        let policy = RetryPolicy {
            base: Duration::from_secs(5),
            max_delay: Duration::from_secs(3600),
            ..RetryPolicy::default()
        };
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for attempt in 1..=20 {
            let full = (Duration::from_secs(5) * 2u32.pow((attempt - 1).min(20) as u32)).min(Duration::from_secs(3600));
            for _ in 0..50 {
                let d = backoff(&policy, attempt, &mut rng);
                assert!(d >= full / 2 && d <= full, "attempt {attempt}: {d:?} vs {full:?}");
            }
        }
    }
}
