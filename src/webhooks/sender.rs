//! The webhook sender: claims due deliveries from the outbox (summary passes write them beside the
//! regressions they announce), signs and sends them, and schedules retries with exponential
//! backoff and jitter until a delivery succeeds or is a day old, or its target has refused it
//! three times in a row. Ingest never waits on it.

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
/// Refusals in a row after which a delivery is refused instead of retried: enough to ride out a
/// target that is being redeployed, few enough not to knock on a closed door for a day.
const REFUSALS: i32 = 3;
/// How much of an answer's body is read to find its first line.
const ANSWER_READ: usize = 4096;
/// How much of that line is kept.
const ANSWER_CHARS: usize = 200;

/// How a target answered an attempt, as far as what follows is concerned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer {
    /// A 2xx.
    Accepted,
    /// A 3xx (redirects are not followed) or a 4xx other than 408 and 429: the target says no.
    Refused,
    /// A 429, with the wait its `Retry-After` asks for when it names one.
    TooMany(Option<Duration>),
    /// A 408, a 5xx or no answer: retried with backoff.
    Failed,
}

impl Answer {
    /// The answer `status` stands for; `retry_after` is the answer's `Retry-After` header.
    pub fn of(status: u16, retry_after: Option<&str>, now: OffsetDateTime) -> Answer {
        match status {
            200..=299 => Answer::Accepted,
            429 => Answer::TooMany(retry_after.and_then(|v| retry_after_wait(v, now))),
            408 => Answer::Failed,
            300..=499 => Answer::Refused,
            _ => Answer::Failed,
        }
    }
}

/// The wait a `Retry-After` value asks for: whole seconds, or an HTTP date (a date past is no
/// wait). `None` when it is neither.
pub fn retry_after_wait(value: &str, now: OffsetDateTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse().ok().map(Duration::from_secs);
    }
    let at = OffsetDateTime::parse(value, &time::format_description::well_known::Rfc2822).ok()?;
    Some((at - now).try_into().unwrap_or(Duration::ZERO))
}

/// What follows from an attempt at `at` that got `answer`: delivered; refused after `REFUSALS`
/// refusals in a row; otherwise another attempt after the backoff, or after the wait a 429 asks
/// for (at least `base`, so that `Retry-After: 0` is no busy loop, and at most `max_delay`),
/// unless that would fall past `give_up_after` from the start of the delivery's retries.
pub fn decide(
    answer: Answer,
    d: &ClaimedDelivery,
    at: OffsetDateTime,
    policy: &RetryPolicy,
    rng: &mut impl Rng,
) -> AttemptOutcome {
    let wait = match answer {
        Answer::Accepted => return AttemptOutcome::Delivered,
        Answer::Refused if d.refusals + 1 >= REFUSALS => return AttemptOutcome::Refused,
        Answer::TooMany(Some(asked)) => asked.max(policy.base).min(policy.max_delay),
        Answer::Refused | Answer::TooMany(None) | Answer::Failed => backoff(policy, d.attempts, rng),
    };
    let next = at + wait;
    if next > d.since + policy.give_up_after {
        AttemptOutcome::GaveUp
    } else {
        AttemptOutcome::RetryAt(next)
    }
}

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
        let claimed = match claimed {
            // Nothing due: the round is done, and it worked.
            Ok(claimed) if claimed.is_empty() => {
                failures.succeeded();
                claimed
            }
            Ok(claimed) => claimed,
            Err(e) => {
                failures.failed(&e);
                Vec::new()
            }
        };
        metrics.record_deliveries_claimed(claimed.len());
        if claimed.is_empty() {
            tokio::select! {
                _ = tokio::time::sleep(settings.retry.poll) => {}
                _ = stop.changed() => {}
            }
            continue;
        }
        let sends = claimed.iter().map(|d| attempt(&store, &settings, &client, &metrics, &failures, d));
        // A round succeeds when its claim and the record of every attempt were written: a claim
        // that works while the records fail does not end the episode, which would log it anew
        // every round.
        if futures_util::future::join_all(sends).await.into_iter().all(|recorded| recorded) {
            failures.succeeded();
        }
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
) -> bool {
    let started = Instant::now();
    let at = OffsetDateTime::now_utc();
    let (http_status, error, answer, body_line) = match settings.webhooks.iter().find(|w| w.name == d.target) {
        None => (None, Some(format!("webhook target {:?} is no longer configured", d.target)), None, None),
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
                Ok(res) if res.status().is_success() => {
                    (Some(res.status().as_u16()), None, Some(Answer::Accepted), None)
                }
                Ok(res) => {
                    let status = res.status();
                    let retry_after = res.headers().get(reqwest::header::RETRY_AFTER).and_then(|v| v.to_str().ok());
                    let answer = Answer::of(status.as_u16(), retry_after, OffsetDateTime::now_utc());
                    (Some(status.as_u16()), Some(format!("HTTP {status}")), Some(answer), first_line(res).await)
                }
                // Without the URL: a Slack webhook URL is itself a secret.
                Err(e) => (None, Some(describe(&e.without_url())), Some(Answer::Failed), None),
            }
        }
    };
    let latency_ms = started.elapsed().as_secs_f64() * 1e3;
    let outcome = match answer {
        // A target no longer configured has nobody to retry for.
        None => AttemptOutcome::GaveUp,
        Some(answer) => decide(answer, d, at, &settings.retry, &mut rand::thread_rng()),
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
    let attempt = NewAttempt {
        at,
        http_status,
        latency_ms,
        error: error.as_deref(),
        answer: body_line.as_deref(),
        refusal: answer == Some(Answer::Refused),
        outcome,
    };
    // When it fails, the claim's lease runs out and the delivery is tried again, under the same id.
    let recorded = store.finish_attempt(d, &attempt).await;
    store.note_write(&recorded);
    match recorded {
        Ok(_) => true,
        Err(e) => {
            tracing::debug!(delivery = %d.id, error = %e, "cannot record a delivery attempt");
            failures.failed(&e);
            false
        }
    }
}

/// The first line of an answer's body that has any text, without control characters and bounded,
/// so it is safe to store and show; `None` when the body has none or cannot be read.
async fn first_line(mut res: reqwest::Response) -> Option<String> {
    let mut read = Vec::new();
    while read.len() < ANSWER_READ {
        match res.chunk().await {
            Ok(Some(chunk)) => read.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    read.truncate(ANSWER_READ);
    body_line(&read)
}

/// The first line of `body` with any text, as `first_line` keeps it.
fn body_line(body: &[u8]) -> Option<String> {
    String::from_utf8_lossy(body).lines().map(str::trim).find(|l| !l.is_empty()).map(|line| {
        let kept: String = line.chars().filter(|c| !c.is_control()).take(ANSWER_CHARS).collect();
        kept.trim_end().to_string()
    })
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

    #[test]
    fn redirects_and_client_errors_but_408_and_429_are_refusals() {
        let now = OffsetDateTime::UNIX_EPOCH;
        for status in [200, 201, 204] {
            assert_eq!(Answer::of(status, None, now), Answer::Accepted, "{status}");
        }
        for status in [301, 302, 307, 308, 400, 401, 403, 404, 410, 422] {
            assert_eq!(Answer::of(status, None, now), Answer::Refused, "{status}");
        }
        for status in [408, 500, 502, 503, 504] {
            assert_eq!(Answer::of(status, None, now), Answer::Failed, "{status}");
        }
        assert_eq!(Answer::of(429, Some("7"), now), Answer::TooMany(Some(Duration::from_secs(7))));
        assert_eq!(Answer::of(429, None, now), Answer::TooMany(None));
    }

    #[test]
    fn retry_after_takes_seconds_or_an_http_date_and_nothing_else() {
        let now = time::macros::datetime!(2026-12-03 10:00:00 UTC);
        assert_eq!(retry_after_wait(" 120 ", now), Some(Duration::from_secs(120)));
        assert_eq!(retry_after_wait("Thu, 03 Dec 2026 10:00:30 GMT", now), Some(Duration::from_secs(30)));
        assert_eq!(retry_after_wait("Thu, 03 Dec 2026 09:00:00 GMT", now), Some(Duration::ZERO), "a date past");
        for garbage in ["", "-5", "1.5", "soon", "99999999999999999999999"] {
            assert_eq!(retry_after_wait(garbage, now), None, "{garbage:?}");
        }
    }

    fn claimed(attempts: i32, refusals: i32, since: OffsetDateTime) -> ClaimedDelivery {
        ClaimedDelivery {
            id: uuid::Uuid::nil(),
            event: "regression.opened".into(),
            target: "team".into(),
            body: "{}".into(),
            attempts,
            refusals,
            since,
        }
    }

    #[test]
    fn the_third_refusal_in_a_row_refuses_and_earlier_ones_retry_with_backoff() {
        let policy = RetryPolicy::default();
        let at = time::macros::datetime!(2026-12-03 10:00:00 UTC);
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for refusals in 0..2 {
            match decide(Answer::Refused, &claimed(refusals + 1, refusals, at), at, &policy, &mut rng) {
                AttemptOutcome::RetryAt(next) => assert!(next > at && next <= at + policy.base * 2),
                other => panic!("refusal {} gave {other:?}", refusals + 1),
            }
        }
        assert_eq!(decide(Answer::Refused, &claimed(3, 2, at), at, &policy, &mut rng), AttemptOutcome::Refused);
        // Failures keep being retried however many there were.
        assert!(matches!(
            decide(Answer::Failed, &claimed(9, 0, at), at, &policy, &mut rng),
            AttemptOutcome::RetryAt(_)
        ));
    }

    #[test]
    fn a_429_waits_what_it_asks_between_base_and_max_delay_and_gives_up_past_the_window() {
        let policy = RetryPolicy { max_delay: Duration::from_secs(600), ..RetryPolicy::default() };
        let at = time::macros::datetime!(2026-12-03 10:00:00 UTC);
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let asked = |secs| Answer::TooMany(Some(Duration::from_secs(secs)));
        let d = claimed(1, 0, at);
        assert_eq!(decide(asked(90), &d, at, &policy, &mut rng), AttemptOutcome::RetryAt(at + Duration::from_secs(90)));
        assert_eq!(
            decide(asked(86_400), &d, at, &policy, &mut rng),
            AttemptOutcome::RetryAt(at + Duration::from_secs(600)),
            "bounded by max_delay"
        );
        assert_eq!(
            decide(asked(0), &d, at, &policy, &mut rng),
            AttemptOutcome::RetryAt(at + policy.base),
            "at least base"
        );
        let old = claimed(40, 0, at - policy.give_up_after);
        assert_eq!(decide(asked(90), &old, at, &policy, &mut rng), AttemptOutcome::GaveUp);
    }

    #[test]
    fn an_answers_first_line_is_bounded_and_without_control_characters() {
        assert_eq!(
            body_line(b"\r\n  Not found: no such hook\r\nsecond line").as_deref(),
            Some("Not found: no such hook")
        );
        assert_eq!(body_line(b"a\x1b[31mred\x07").as_deref(), Some("a[31mred"));
        assert_eq!(body_line(&[b'x'; 5000]).map(|l| l.len()), Some(ANSWER_CHARS));
        assert_eq!(body_line(b" \n\t\n"), None);
        assert_eq!(body_line(&[0xff, b'o', b'k']).as_deref(), Some("\u{fffd}ok"));
    }
}
