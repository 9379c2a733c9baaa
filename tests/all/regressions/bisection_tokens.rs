//! Who may record a bisection, how often, and how often the same one: the `bisect` scope, which
//! submits runs too; ingest tokens, accepted for now with a warning; editors; the quota per token
//! (429 with `Retry-After`); and a search sent again under a new id, which is the stored one and
//! queues no second `regression.bisected`. On Postgres and SQLite.

use super::bisections::{bisect_token, bisection, stored_run, submit};
use crate::builders::seed_regression;
use crate::helpers::{on_both_backends, TestApp};
use axum::body::Body;
use axum::http::header::RETRY_AFTER;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use slopewatch::auth::Denied;
use slopewatch::config::WebhookFormat;
use slopewatch::store::Scope;
use tower::ServiceExt;
use uuid::Uuid;

/// The `regression.bisected` deliveries queued for regression `id`, read from the deliveries table.
async fn bisected_deliveries(app: &TestApp, id: i64) -> usize {
    let detail = app.db.store.regression(id).await.unwrap().unwrap();
    detail.deliveries.iter().filter(|d| d.delivery.event == "regression.bisected").count()
}

/// The stored bisections of regression `id`, by id.
async fn stored_ids(app: &TestApp, id: i64) -> Vec<String> {
    let (status, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    detail["bisections"].as_array().unwrap().iter().map(|b| b["bisection_id"].as_str().unwrap().into()).collect()
}

#[tokio::test]
async fn a_bisect_token_submits_runs_and_bisections_an_ingest_token_is_warned_and_an_editor_still_may() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let bisector = bisect_token(&app).await;
        let id = seed_regression(&app).await;
        let run_id = stored_run(&app).await;

        let mut run = crate::builders::RunShape::new("zig-cc-musl", "0.16.0-dev.1234+abc").workloads(3).json();
        run["run_id"] = json!(Uuid::new_v4());
        let (status, body) = app.submit_raw(&bisector, serde_json::to_vec(&run).unwrap()).await;
        assert_eq!(status, StatusCode::CREATED, "a bisect token submits the runs it measures: {body}");

        let (status, body) = submit(&app, id, &bisector, &bisection(Uuid::new_v4(), run_id)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body.get("warning"), None, "nothing to warn a bisect token of: {body}");

        let mut from_ci = bisection(Uuid::new_v4(), run_id);
        from_ci["host"]["name"] = json!("ci-runner-2");
        let (status, body) = submit(&app, id, &app.ingest_token, &from_ci).await;
        assert_eq!(status, StatusCode::CREATED, "an ingest token still records, for this release: {body}");
        let warning = body["warning"].as_str().expect("the answer warns an ingest token");
        assert!(warning.contains("until the next release") && warning.contains("--scope bisect"), "{warning}");

        let mut by_hand = bisection(Uuid::new_v4(), run_id);
        by_hand["host"]["name"] = json!("laptop-3");
        let (status, body) = submit(&app, id, &app.editor_token, &by_hand).await;
        assert_eq!(status, StatusCode::CREATED, "an editor records bisections as before: {body}");
        assert_eq!(body.get("warning"), None, "{body}");

        assert_eq!(stored_ids(&app, id).await.len(), 3, "each of them stored");
        let login = slopewatch::auth::verify(&app.db.store, &bisector, Scope::Editor).await.unwrap();
        assert!(
            matches!(login, Err(Denied::Forbidden { has: Scope::Bisect, .. })),
            "a bisect token cannot sign in to edit: {:?}",
            login.map(|t| t.name)
        );
    })
    .await;
}

#[tokio::test]
async fn the_same_search_under_a_new_id_answers_the_stored_one_and_announces_nothing_more() {
    on_both_backends(|db| async move {
        let receiver = crate::helpers::webhooks::Receiver::up().await;
        let app = TestApp::with_config(db, crate::helpers::webhooks::config(&receiver, &[WebhookFormat::Json])).await;
        let bisector = bisect_token(&app).await;
        let id = seed_regression(&app).await;
        let run_id = stored_run(&app).await;
        let first = bisection(Uuid::new_v4(), run_id);
        let (status, created) = submit(&app, id, &bisector, &first).await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        assert_eq!(bisected_deliveries(&app, id).await, 1);

        // Run again: a new id, start and timings, and new runs for the steps; the same findings.
        let mut again = first.clone();
        again["bisection_id"] = json!(Uuid::new_v4());
        again["started_at"] = json!("2026-12-01T09:30:00Z");
        again["seconds"] = json!(57.5);
        for step in again["steps"].as_array_mut().unwrap() {
            step["seconds"] = json!(step["seconds"].as_f64().unwrap() + 1.0);
            step["run_id"] = json!(Uuid::new_v4());
        }
        let (status, answer) = submit(&app, id, &bisector, &again).await;
        assert_eq!((status, &answer), (StatusCode::OK, &created), "the stored bisection's id and url");
        assert_eq!(stored_ids(&app, id).await, [first["bisection_id"].as_str().unwrap()], "nothing stored");
        assert_eq!(bisected_deliveries(&app, id).await, 1, "no second regression.bisected");

        let mut different = again.clone();
        different["steps"][3]["slope"] = json!(1.03);
        let (status, body) = submit(&app, id, &bisector, &different).await;
        assert_eq!(status, StatusCode::CREATED, "another measurement is another bisection: {body}");
        assert_eq!(body["bisection_id"], again["bisection_id"]);
        assert_eq!(stored_ids(&app, id).await.len(), 2);
        assert_eq!(bisected_deliveries(&app, id).await, 2);

        let mut changed = first.clone();
        changed["host"]["name"] = json!("build-08");
        let (status, body) = submit(&app, id, &bisector, &changed).await;
        assert_eq!(status, StatusCode::CONFLICT, "a stored id with other content is still refused: {body}");
    })
    .await;
}

#[tokio::test]
async fn a_token_past_its_bisection_quota_gets_429_with_retry_after_and_others_do_not() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let bisector = bisect_token(&app).await;
        let id = seed_regression(&app).await;
        let b = bisection(Uuid::new_v4(), Uuid::new_v4());
        let path = format!("/api/v1/regressions/{id}/bisections");
        let send = |token: String| {
            let req = Request::post(&path)
                .header("content-type", "application/json")
                .header("authorization", format!("Bearer {token}"))
                .body(Body::from(serde_json::to_vec(&b).unwrap()))
                .unwrap();
            app.router.clone().oneshot(req)
        };
        // Requests without a valid token spend nothing.
        for _ in 0..40 {
            assert_eq!(send(slopewatch::auth::generate().secret).await.unwrap().status(), StatusCode::UNAUTHORIZED);
        }
        for i in 0..30 {
            let expected = if i == 0 { StatusCode::CREATED } else { StatusCode::OK };
            assert_eq!(send(bisector.clone()).await.unwrap().status(), expected, "submission {i}");
        }
        let refused = send(bisector.clone()).await.unwrap();
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        let wait: u64 = refused.headers()[RETRY_AFTER].to_str().unwrap().parse().unwrap();
        assert!((590..=600).contains(&wait), "until the first leaves the 10-minute window: {wait}");
        let body: Value = serde_json::from_slice(&refused.into_body().collect().await.unwrap().to_bytes()).unwrap();
        assert_eq!(body["error"]["code"], "too_many_requests", "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("\"test-bisect\"") && message.contains("30 bisections"), "{message}");

        assert_eq!(send(app.editor_token.clone()).await.unwrap().status(), StatusCode::OK, "another token's quota");
        assert_eq!(stored_ids(&app, id).await.len(), 1);
    })
    .await;
}
