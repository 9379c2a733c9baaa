//! Webhook targets that say no, against real receivers on loopback, on Postgres and on SQLite: a
//! redirect or a 4xx other than 408 and 429 is tried three times and the delivery is refused; 408
//! and 5xx keep being retried; a 429 is retried after its `Retry-After`; an editor resends a
//! refused delivery from `/deliveries` under the same id.

use crate::helpers::forms::{cookie_pair, get, hidden, login, post_form};
use crate::helpers::on_both_backends;
use crate::helpers::webhooks::{outbox_until, wait_for, Alerting, Receiver, SECRET};
use axum::http::StatusCode;
use slopewatch::config::{AlertSettings, Config, RetryPolicy, Webhook, WebhookFormat};
use slopewatch::model::DeliveryDetail;
use slopewatch::store::Outbox;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// What a refusing receiver answers: a first line with markup, to be shown escaped, then more.
const REFUSAL_BODY: &str = "  <b>no such hook</b> & no retry\nsecond line, never shown\n";
const REFUSAL_LINE: &str = "<b>no such hook</b> & no retry";

fn retry(max_delay: Duration) -> RetryPolicy {
    RetryPolicy {
        base: Duration::from_millis(100),
        max_delay,
        give_up_after: Duration::from_secs(60),
        poll: Duration::from_millis(40),
        timeout: Duration::from_secs(2),
    }
}

/// One JSON target per receiver, named `target-{i}`.
fn config_for(receivers: &[&Receiver], retry: RetryPolicy) -> Config {
    let webhooks = receivers
        .iter()
        .enumerate()
        .map(|(i, r)| Webhook {
            name: format!("target-{i}"),
            url: r.url().parse().unwrap(),
            secret: SECRET.into(),
            format: WebhookFormat::Json,
        })
        .collect();
    Config { alerts: AlertSettings { webhooks, retry, ..AlertSettings::default() }, ..Config::default() }
}

/// A receiver up on loopback that answers `status` with `headers` and `body`.
async fn answering(status: u16, headers: &[(&'static str, &str)], body: &str) -> Receiver {
    let r = Receiver::up().await;
    r.status.store(status, Ordering::SeqCst);
    *r.headers.lock().unwrap() = headers.iter().map(|(n, v)| (*n, v.to_string())).collect();
    *r.body.lock().unwrap() = body.to_string();
    r
}

/// Opens a regression, which queues one delivery per target.
async fn open_regression(a: &Alerting) {
    crate::builders::seed_regression(&a.app).await;
}

async fn outbox(a: &Alerting) -> Outbox {
    a.app.db.store.deliveries(100).await.unwrap()
}

fn to<'a>(deliveries: &'a [DeliveryDetail], target: &str) -> &'a DeliveryDetail {
    deliveries.iter().find(|d| d.delivery.target == target).unwrap_or_else(|| panic!("no delivery to {target}"))
}

/// The value of one sample (`name{labels}`) in a `/metrics` scrape.
fn metric(text: &str, sample: &str) -> Option<f64> {
    text.lines().find_map(|line| line.strip_prefix(sample)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn a_404_a_410_and_a_301_are_tried_three_times_then_refused_with_the_status_and_first_line() {
    on_both_backends(|db| async move {
        let elsewhere = Receiver::up().await;
        let not_found = answering(404, &[], REFUSAL_BODY).await;
        let gone = answering(410, &[], REFUSAL_BODY).await;
        let moved = answering(301, &[("location", &elsewhere.url())], REFUSAL_BODY).await;
        let a = Alerting::new(db, config_for(&[&not_found, &gone, &moved], retry(Duration::from_millis(300)))).await;
        open_regression(&a).await;
        outbox_until(&a.app.db.store, "three refused deliveries", |o| o.refused.len() == 3 && o.pending.is_empty())
            .await;
        // Time for a fourth attempt, were there one.
        tokio::time::sleep(Duration::from_millis(600)).await;
        let outbox = outbox(&a).await;
        for (i, (receiver, status)) in [(&not_found, 404), (&gone, 410), (&moved, 301)].into_iter().enumerate() {
            assert_eq!(receiver.seen().len(), 3, "HTTP {status}: three attempts, no more");
            let d = to(&outbox.refused, &format!("target-{i}"));
            assert_eq!(d.delivery.status, "refused");
            assert_eq!(d.delivery.attempts, 3);
            let ids: Vec<_> = receiver.seen().iter().map(|r| r.delivery.clone()).collect();
            assert!(ids.iter().all(|id| *id == d.delivery.id.to_string()), "one delivery id: {ids:?}");
            assert_eq!(d.attempts.len(), 3);
            for attempt in &d.attempts {
                assert_eq!(attempt.http_status, Some(status));
                assert_eq!(attempt.answer.as_deref(), Some(REFUSAL_LINE));
            }
            let gaps: Vec<_> = d.attempts.windows(2).map(|w| w[1].at - w[0].at).collect();
            assert!(gaps.iter().all(|g| *g >= time::Duration::milliseconds(50)), "backoff between attempts: {gaps:?}");
        }
        assert!(elsewhere.seen().is_empty(), "the redirect is not followed");

        // Open reading does not open the outbox: a target's answers may quote its internals.
        let anonymous = get(&a.app, "/deliveries", "").await;
        assert_eq!(anonymous.status, StatusCode::SEE_OTHER, "{}", anonymous.text);
        assert!(
            anonymous.location.as_deref().is_some_and(|l| l.starts_with("/login?next=")),
            "{:?}",
            anonymous.location
        );
        let id = a.app.db.store.deliveries(1).await.unwrap().refused[0].delivery.regression_id;
        let regression = get(&a.app, &format!("/regressions/{id}"), "").await;
        assert!(regression.text.contains("log in to see the error"), "{}", regression.text);
        assert!(!regression.text.contains("no such hook"), "no answer shown to anyone: {}", regression.text);
        // Its JSON says no more than its page: receivers' errors and answers to editors alone.
        let json = format!("/api/v1/regressions/{id}");
        let editor = a.app.editor_token.clone();
        let ingest = a.app.ingest_token.clone();
        for (token, sees_all) in [(None, false), (Some(ingest.as_str()), false), (Some(editor.as_str()), true)] {
            let (status, answer) = a.app.get_with(&json, token).await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            let text = answer.to_string();
            assert_eq!(text.contains("no such hook"), sees_all, "{token:?}: {text}");
            assert_eq!(text.contains("log in to see the error"), !sees_all, "{token:?}: {text}");
        }
        let session = cookie_pair(&login(&a.app, &a.app.editor_token.clone()).await, "sw_session").unwrap();
        let signed_in = get(&a.app, &format!("/regressions/{id}"), &session).await;
        assert!(!signed_in.text.contains("log in to see the error"), "{}", signed_in.text);
        let signed_in_json = get(&a.app, &json, &session).await;
        assert!(signed_in_json.text.contains("no such hook"), "{}", signed_in_json.text);
        let page = get(&a.app, "/deliveries", &session).await;
        assert_eq!(page.status, StatusCode::OK);
        let refused =
            &page.text[page.text.find("<h2>Refused</h2>").unwrap()..page.text.find("<h2>Recent</h2>").unwrap()];
        assert_eq!(refused.matches("class=\"sw-delivery sw-delivery-refused\"").count(), 3, "{refused}");
        assert!(refused.contains("&#60;b&#62;no such hook&#60;/b&#62; &#38; no retry"), "escaped: {refused}");
        assert!(!page.text.contains("<b>no such hook"), "never unescaped");
        assert!(!page.text.contains("second line"), "the first line only");
        for status in ["404", "410", "301"] {
            assert!(refused.contains(&format!("HTTP {status}")), "{status} shown: {refused}");
        }

        let (_, text) = a.app.get("/metrics").await;
        let text = text.as_str().unwrap();
        assert_eq!(metric(text, r#"slopewatch_webhook_attempts_total{outcome="refused"}"#), Some(3.0), "{text}");
        assert_eq!(metric(text, r#"slopewatch_webhook_attempts_total{outcome="failed"}"#), Some(6.0), "{text}");
        assert_eq!(metric(text, "slopewatch_webhook_outbox_refused"), Some(3.0), "{text}");
        assert_eq!(metric(text, "slopewatch_webhook_outbox_pending"), Some(0.0), "{text}");
    })
    .await;
}

#[tokio::test]
async fn server_errors_and_408_keep_being_retried_past_three_attempts() {
    on_both_backends(|db| async move {
        let failing = answering(500, &[], "internal error\n").await;
        let timeout = answering(408, &[], "request timeout\n").await;
        let a = Alerting::new(db, config_for(&[&failing, &timeout], retry(Duration::from_millis(150)))).await;
        open_regression(&a).await;
        // An attempt is recorded after its receiver answers: wait on the outbox, not on what the
        // receivers saw, or the fifth request may be seen before it is written down.
        let recorded = |o: &Outbox, i: usize| {
            o.pending.iter().any(|d| d.delivery.target == format!("target-{i}") && d.attempts.len() >= 5)
        };
        outbox_until(&a.app.db.store, "five recorded attempts at each", |o| recorded(o, 0) && recorded(o, 1)).await;
        assert!(failing.seen().len() >= 5 && timeout.seen().len() >= 5, "each attempt reached its receiver");
        let outbox = outbox(&a).await;
        assert!(outbox.refused.is_empty(), "nothing refused");
        for (i, status) in [500, 408].into_iter().enumerate() {
            let d = to(&outbox.pending, &format!("target-{i}"));
            assert!(d.attempts.len() >= 5, "{status}: {:?}", d.attempts);
            assert!(d.attempts.iter().all(|t| t.http_status == Some(status)));
        }
    })
    .await;
}

#[tokio::test]
async fn a_429_is_retried_no_sooner_than_its_retry_after_and_no_later_than_max_delay() {
    on_both_backends(|db| async move {
        let asks_2s = answering(429, &[("retry-after", "2")], "slow down\n").await;
        let asks_an_hour = answering(429, &[("retry-after", "3600")], "slow down\n").await;
        let a = Alerting::new(db, config_for(&[&asks_2s, &asks_an_hour], retry(Duration::from_secs(3)))).await;
        open_regression(&a).await;
        wait_for(Duration::from_secs(20), "the first attempts", || {
            !asks_2s.seen().is_empty() && !asks_an_hour.seen().is_empty()
        })
        .await;
        for r in [&asks_2s, &asks_an_hour] {
            r.status.store(200, Ordering::SeqCst);
        }
        outbox_until(&a.app.db.store, "both delivered", |o| o.pending.is_empty()).await;
        let outbox = outbox(&a).await;
        // Never sooner than asked (2 s), nor than max_delay (3 s) where an hour was asked; the
        // upper bound leaves a loaded machine 5 s of room and is still far from the hour.
        for (i, (lowest, highest)) in [(2.0, 8.0), (3.0, 8.0)].into_iter().enumerate() {
            let d = to(&outbox.recent, &format!("target-{i}"));
            assert_eq!(d.delivery.status, "delivered");
            assert_eq!(d.attempts.iter().map(|t| t.http_status).collect::<Vec<_>>(), [Some(429), Some(200)]);
            let waited = (d.attempts[1].at - d.attempts[0].at).as_seconds_f64();
            assert!(waited >= lowest && waited < highest, "target-{i} waited {waited} s, not in [{lowest}, {highest})");
        }
    })
    .await;
}

#[tokio::test]
async fn an_editor_resends_a_refused_delivery_which_is_delivered_once_under_the_same_id() {
    on_both_backends(|db| async move {
        let receiver = answering(404, &[], REFUSAL_BODY).await;
        let a = Alerting::new(db, config_for(&[&receiver], retry(Duration::from_millis(300)))).await;
        open_regression(&a).await;
        outbox_until(&a.app.db.store, "the refused delivery", |o| o.refused.len() == 1).await;
        let refused = outbox(&a).await.refused[0].delivery.clone();
        let resend_uri = format!("/deliveries/{}/resend", refused.id);
        receiver.status.store(200, Ordering::SeqCst);

        let anonymous = get(&a.app, "/deliveries", "").await;
        assert_eq!(anonymous.status, StatusCode::SEE_OTHER, "the outbox needs a login");
        assert!(!anonymous.text.contains(&resend_uri), "no resend form without a login");
        let without_session = post_form(&a.app, &resend_uri, "", &[("csrf", "x")]).await;
        assert_eq!(without_session.status, StatusCode::UNAUTHORIZED);
        let session = cookie_pair(&login(&a.app, &a.app.editor_token.clone()).await, "sw_session").unwrap();
        let page = get(&a.app, "/deliveries", &session).await;
        assert!(page.text.contains(&format!("action=\"{resend_uri}\"")), "{}", page.text);
        let csrf = hidden(&page.text, "csrf");
        let forged = post_form(&a.app, &resend_uri, &session, &[("csrf", "0000")]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let no_csrf = post_form(&a.app, &resend_uri, &session, &[]).await;
        assert_eq!(no_csrf.status, StatusCode::BAD_REQUEST, "{}", no_csrf.text);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(receiver.seen().len(), 3, "refused forms send nothing");
        assert_eq!(outbox(&a).await.refused.len(), 1, "and leave the delivery refused");

        let resent = post_form(&a.app, &resend_uri, &session, &[("csrf", &csrf)]).await;
        assert_eq!(resent.status, StatusCode::SEE_OTHER);
        assert_eq!(resent.location.as_deref(), Some("/deliveries"));
        outbox_until(&a.app.db.store, "the resent delivery delivered", |o| {
            o.pending.is_empty() && o.refused.is_empty()
        })
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let delivered = receiver.delivered();
        assert_eq!(delivered.len(), 1, "delivered once");
        assert_eq!(delivered[0].delivery, refused.id.to_string(), "under the same delivery id");
        let d = outbox(&a).await.recent.into_iter().find(|d| d.delivery.id == refused.id).unwrap();
        assert_eq!(d.delivery.status, "delivered");
        assert_eq!(d.attempts.iter().map(|t| t.attempt).collect::<Vec<_>>(), [1, 2, 3, 4], "attempts numbered on");
        assert_eq!(d.delivery.resent_by.as_deref(), Some("test-editor"));

        let again = post_form(&a.app, &resend_uri, &session, &[("csrf", &csrf)]).await;
        assert_eq!(again.status, StatusCode::NOT_FOUND, "a delivered delivery is not resent");
        assert_eq!(receiver.seen().len(), 4);
    })
    .await;
}
