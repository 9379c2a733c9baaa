//! The ingest and read API, on Postgres and on SQLite.

use crate::builders::RunShape;
use crate::helpers::{on_both_backends, TestApp};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::json;

#[tokio::test]
async fn a_submitted_run_is_stored_with_its_fits() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let mut run = RunShape::new("zig-cc-musl", "0.16.0").slope(2.0).workloads(3).sizes(6).samples(5).json();
        run["workloads"][2]["metadata"] = json!({"sqlite_version": "3.46.0"});
        let (status, body) = app.submit(&run).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["created"], true);
        assert_eq!(body["run_id"], run["run_id"]);
        let fits = body["fits"].as_array().unwrap();
        assert_eq!(fits.len(), 3);
        for fit in fits {
            let slope = fit["slope"].as_f64().unwrap();
            assert!((slope - 2.0).abs() < 0.02, "{fit}");
            assert_eq!(fit["n_sizes"], 6);
        }

        let (status, stored) = app.get(&format!("/api/v1/runs/{}", run["run_id"].as_str().unwrap())).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(stored["toolchain"]["version"], "0.16.0");
        assert_eq!(stored["host"]["name"], "build-01");
        let w = &stored["workloads"][0];
        assert_eq!(w["measurements"].as_array().unwrap().len(), 6);
        assert_eq!(w["measurements"][0]["samples_ns"].as_array().unwrap().len(), 5);
        assert_eq!(w["local_slopes"].as_array().unwrap().len(), 5);
        assert_eq!(stored["workloads"][2]["metadata"]["sqlite_version"], "3.46.0");
    })
    .await;
}

#[tokio::test]
async fn resubmitting_a_run_stores_it_once() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let run = RunShape::new("gcc-glibc", "12.2.0").workloads(2).json();
        assert_eq!(app.submit(&run).await.0, StatusCode::CREATED);
        let (status, body) = app.submit(&run).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["created"], false);
        assert_eq!(body["fits"].as_array().unwrap().len(), 2);
        let (_, runs) = app.get("/api/v1/runs").await;
        assert_eq!(runs["runs"].as_array().unwrap().len(), 1);
        let (_, series) = app.get("/api/v1/series?workload=workload-0&toolchain=gcc-glibc").await;
        assert_eq!(series["versions"][0]["runs"], 1);
    })
    .await;
}

#[tokio::test]
async fn concurrent_duplicates_are_stored_once() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        // The first run adds its host, toolchain build and workloads; the second, of the same
        // build, adds nothing but itself (on Postgres, one statement without a transaction).
        let first = RunShape::new("gcc-glibc", "12.2.0").workloads(4).sizes(6).samples(5).json();
        let second = RunShape::new("gcc-glibc", "12.2.0").workloads(4).sizes(6).samples(5).json();
        for (stored, run) in [&first, &second].into_iter().enumerate() {
            let attempts = (0..8).map(|_| app.submit(run));
            let results = futures_util::future::join_all(attempts).await;
            let created = results.iter().filter(|r| r.0 == StatusCode::CREATED).count();
            let repeated = results.iter().filter(|r| r.0 == StatusCode::OK).count();
            assert_eq!((created, repeated), (1, 7), "{results:?}");
            let ok = results.iter().find(|r| r.0 == StatusCode::OK).unwrap();
            assert_eq!(ok.1["fits"].as_array().unwrap().len(), 4, "a repeat is answered with the stored fits");
            let (_, runs) = app.get("/api/v1/runs").await;
            assert_eq!(runs["runs"].as_array().unwrap().len(), stored + 1);
        }
        // The run is whole: every workload with every size's samples, and taken into its summary.
        let (_, run) = app.get(&format!("/api/v1/runs/{}", second["run_id"].as_str().unwrap())).await;
        let workloads = run["workloads"].as_array().unwrap();
        assert_eq!(workloads.len(), 4, "{run}");
        for w in workloads {
            let measurements = w["measurements"].as_array().unwrap();
            assert_eq!(measurements.len(), 6, "{w}");
            assert!(measurements.iter().all(|m| m["samples_ns"].as_array().unwrap().len() == 5), "{w}");
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let (_, series) = app.get("/api/v1/series?workload=workload-0&toolchain=gcc-glibc").await;
            let runs = series["versions"][0]["runs"].as_u64().unwrap_or(0);
            assert!(runs <= 2, "{series}");
            if runs == 2 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "the second run was never taken in: {series}");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn the_same_run_id_with_other_content_is_a_conflict() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let mut run = RunShape::new("gcc-glibc", "12.2.0").json();
        assert_eq!(app.submit(&run).await.0, StatusCode::CREATED);
        run["toolchain"]["version"] = json!("13.1.0");
        let (status, body) = app.submit(&run).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert!(body["error"]["message"].as_str().unwrap().contains("different content"));
    })
    .await;
}

#[tokio::test]
async fn ingest_requires_a_valid_token_of_the_right_scope() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let body = serde_json::to_vec(&RunShape::new("gcc-glibc", "12.2.0").host("h").json()).unwrap();
        let no_token = Request::post("/api/v1/runs")
            .header("content-type", "application/json")
            .body(Body::from(body.clone()))
            .unwrap();
        assert_eq!(app.send(no_token).await.0, StatusCode::UNAUTHORIZED);
        let forged = format!("sw_{}", "0".repeat(64));
        assert_eq!(app.submit_raw(&forged, body.clone()).await.0, StatusCode::UNAUTHORIZED);
        assert_eq!(app.submit_raw("not-a-token", body.clone()).await.0, StatusCode::UNAUTHORIZED);
        // An editor token is for people, not agents; admins may ingest; revoked tokens may not.
        let (status, refused) = app.submit_raw(&app.editor_token, body.clone()).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(refused["error"]["code"], "forbidden");
        assert_eq!(app.submit_raw(&app.admin_token, body).await.0, StatusCode::CREATED);
        assert!(app.db.store.revoke_token("test-ingest").await.unwrap());
        let other = serde_json::to_vec(&RunShape::new("gcc-glibc", "12.2.0").host("h").json()).unwrap();
        assert_eq!(app.submit_raw(&app.ingest_token, other).await.0, StatusCode::UNAUTHORIZED);
    })
    .await;
}

#[tokio::test]
async fn the_authorization_scheme_is_matched_without_regard_to_case() {
    on_both_backends(|db| async move {
        let mut config = slopewatch::config::Config::default();
        config.auth.require_login_to_read = true;
        let app = TestApp::with_config(db, config).await;
        for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
            let body = serde_json::to_vec(&RunShape::new("gcc-glibc", "12.2.0").host("h").json()).unwrap();
            let submit = Request::post("/api/v1/runs")
                .header("content-type", "application/json")
                .header("authorization", format!("{scheme} {}", app.ingest_token))
                .body(Body::from(body))
                .unwrap();
            let (status, answer) = app.send(submit).await;
            assert_eq!(status, StatusCode::CREATED, "`{scheme} <token>` submits: {answer}");
            let read = Request::get("/api/v1/hosts")
                .header("authorization", format!("{scheme}  {}", app.ingest_token))
                .body(Body::empty())
                .unwrap();
            assert_eq!(app.send(read).await.0, StatusCode::OK, "`{scheme} <token>` reads");
        }
        for malformed in [format!("Bearer{}", app.ingest_token), format!("Basic {}", app.ingest_token)] {
            let read = Request::get("/api/v1/hosts").header("authorization", malformed).body(Body::empty()).unwrap();
            assert_eq!(app.send(read).await.0, StatusCode::UNAUTHORIZED);
        }
    })
    .await;
}

#[tokio::test]
async fn bodies_that_are_not_json_or_too_large_are_refused() {
    on_both_backends(|db| async move {
        let config = slopewatch::config::Config { body_limit: 64 * 1024, ..Default::default() };
        let app = TestApp::with_config(db, config).await;
        let form = Request::post("/api/v1/runs")
            .header("content-type", "application/x-www-form-urlencoded")
            .header("authorization", format!("Bearer {}", app.ingest_token))
            .body(Body::from("a=b"))
            .unwrap();
        let (status, body) = app.send(form).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(body["error"]["code"], "unsupported_media_type");

        let huge = RunShape::new("gcc-glibc", "1").host("h").workloads(40).sizes(10).samples(20).json();
        let (status, body) = app.submit(&huge).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
        assert_eq!(body["error"]["code"], "payload_too_large");
        let (_, runs) = app.get("/api/v1/runs").await;
        assert!(runs["runs"].as_array().unwrap().is_empty());
    })
    .await;
}

#[tokio::test]
async fn invalid_runs_get_422_naming_the_field_and_nothing_is_stored() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let cases = [
            ("/workloads/0/measurements/1/samples_ns/0", json!(-1.0), "workloads[0].measurements[1].samples_ns[0]"),
            ("/workloads/0/measurements/1/samples_ns", json!([]), "workloads[0].measurements[1].samples_ns"),
            ("/workloads/0/measurements/1/size", json!("big"), "workloads[0].measurements[1].size"),
            ("/workloads/0/size_unit", json!("parsecs"), "workloads[0].size_unit"),
            ("/workloads/0/name", json!(""), "workloads[0].name"),
            ("/host/name", json!("tab\there"), "host.name"),
            ("/toolchain/version", json!("v".repeat(500)), "toolchain.version"),
            ("/run_id", json!("not-a-uuid"), "run_id"),
            ("/started_at", json!("yesterday"), "started_at"),
        ];
        for (pointer, value, field) in cases {
            let mut run = RunShape::new("gcc-glibc", "12.2.0").host("h").workloads(2).json();
            *run.pointer_mut(pointer).unwrap() = value;
            let (status, body) = app.submit(&run).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{pointer}: {body}");
            assert_eq!(body["error"]["field"], field, "{pointer}: {body}");
            assert!(!body["error"]["reason"].as_str().unwrap().is_empty());
        }
        let mut too_few = RunShape::new("gcc-glibc", "12.2.0").host("h").sizes(2).json();
        too_few["workloads"][0]["name"] = json!("w");
        let (status, body) = app.submit(&too_few).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(body["error"]["reason"].as_str().unwrap().contains("at least 3"), "{body}");

        let (status, body) = app.submit_raw(&app.ingest_token.clone(), b"{\"run_id\": ".to_vec()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");

        let (_, runs) = app.get("/api/v1/runs").await;
        assert!(runs["runs"].as_array().unwrap().is_empty());
        let (_, workloads) = app.get("/api/v1/workloads").await;
        assert!(workloads["workloads"].as_array().unwrap().is_empty(), "{workloads}");
    })
    .await;
}

#[tokio::test]
async fn a_workload_keeps_its_size_unit() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        assert_eq!(app.submit(&RunShape::new("gcc-glibc", "12").host("h").json()).await.0, StatusCode::CREATED);
        let mut run = RunShape::new("gcc-glibc", "13").host("h").json();
        run["workloads"][0]["size_unit"] = json!("records");
        let (status, body) = app.submit(&run).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["error"]["field"], "workloads[0].size_unit");
        let (_, runs) = app.get("/api/v1/runs").await;
        assert_eq!(runs["runs"].as_array().unwrap().len(), 1);
    })
    .await;
}

#[tokio::test]
async fn series_lists_versions_in_version_order_with_medians() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        for (version, slope) in [
            ("0.16.0", 2.0),
            ("0.9.0", 1.0),
            ("0.17.0-dev.12+abc", 1.9),
            ("0.10.0", 1.0),
            ("0.16.0", 2.1),
            ("0.17.0", 1.0),
        ] {
            let (status, body) = app
                .submit(&RunShape::new("zig-cc-musl", version).host("h").slope(slope).workloads(2).sizes(5).json())
                .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        let (status, series) = app.get("/api/v1/series?workload=workload-1&toolchain=zig-cc-musl").await;
        assert_eq!(status, StatusCode::OK);
        let versions: Vec<&str> =
            series["versions"].as_array().unwrap().iter().map(|v| v["version"].as_str().unwrap()).collect();
        assert_eq!(versions, ["0.9.0", "0.10.0", "0.16.0", "0.17.0-dev.12+abc", "0.17.0"]);
        let v16 = &series["versions"][2];
        assert_eq!(v16["runs"], 2);
        assert_eq!(v16["hosts"], 1);
        let slope = v16["slope"].as_f64().unwrap();
        assert!((slope - 2.05).abs() < 0.02, "median of 2.0 and 2.1: {slope}");
        assert!(v16["ci_low"].as_f64().unwrap() <= slope && slope <= v16["ci_high"].as_f64().unwrap());
        assert!(v16["r2"].as_f64().unwrap() > 0.99);
        let sizes = v16["sizes"].as_array().unwrap();
        assert_eq!(sizes.len(), 5);
        assert_eq!(sizes[0]["size"], 65536);
        assert_eq!(sizes[0]["runs"], 2);

        let (status, body) = app.get("/api/v1/series?workload=workload-1&toolchain=nope").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        let (status, _) = app.get("/api/v1/series?workload=workload-1").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
    })
    .await;
}

#[tokio::test]
async fn a_version_counts_every_run_and_takes_medians_over_its_latest_runs() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let window = slopewatch::intake::SUMMARY_WINDOW as usize;
        for i in 0..8 {
            let run = RunShape::new("gcc-glibc", "12.2.0")
                .host(&format!("early-{}", i % 2))
                .slope(2.0)
                .sizes(3)
                .samples(1)
                .json();
            assert_eq!(app.submit(&run).await.0, StatusCode::CREATED);
        }
        for _ in 0..window {
            assert_eq!(
                app.submit(&RunShape::new("gcc-glibc", "12.2.0").host("late").sizes(3).samples(1).json()).await.0,
                StatusCode::CREATED
            );
        }
        let (status, series) = app.get("/api/v1/series?workload=workload-0&toolchain=gcc-glibc").await;
        assert_eq!(status, StatusCode::OK, "{series}");
        let v = &series["versions"][0];
        assert_eq!(v["runs"], window + 8, "every run counts: {v}");
        assert_eq!(v["hosts"], 3, "every host counts: {v}");
        assert_eq!(v["sizes"][0]["runs"], window, "medians come from the latest runs: {v}");
        assert!(v["slope_max"].as_f64().unwrap() < 1.5, "the early runs left the window: {v}");
    })
    .await;
}

#[tokio::test]
async fn reads_list_what_has_reported() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        app.submit(&RunShape::new("gcc-glibc", "12.2.0").workloads(2).json()).await;
        app.submit(&RunShape::new("musl-gcc", "1.2.3").host("build-02").workloads(3).json()).await;
        let (_, w) = app.get("/api/v1/workloads").await;
        assert_eq!(w["workloads"].as_array().unwrap().len(), 3);
        assert_eq!(w["workloads"][0]["size_unit"], "bytes");
        let (_, t) = app.get("/api/v1/toolchains").await;
        let names: Vec<_> = t["toolchains"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["gcc-glibc", "musl-gcc"]);
        assert_eq!(t["toolchains"][0]["runs"], 1);
        let (_, h) = app.get("/api/v1/hosts").await;
        assert_eq!(h["hosts"].as_array().unwrap().len(), 2);
        let (status, _) = app.get("/api/v1/runs/not-a-uuid").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let (status, _) = app.get(&format!("/api/v1/runs/{}", uuid::Uuid::new_v4())).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    })
    .await;
}

#[tokio::test]
async fn health_and_readiness_answer() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        assert_eq!(app.get("/healthz").await.0, StatusCode::OK);
        let (status, body) = app.get("/readyz").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["status"], "ready");
        app.db.store.close().await;
        let (status, body) = app.get("/readyz").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(body["status"], "unavailable");
    })
    .await;
}

#[tokio::test]
async fn metrics_count_requests_runs_and_rejections() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        app.submit(&RunShape::new("gcc-glibc", "12").host("h").workloads(2).json()).await;
        let mut bad = RunShape::new("gcc-glibc", "12").host("h").workloads(2).json();
        bad["workloads"][0]["name"] = json!("");
        app.submit(&bad).await;
        app.submit_raw("nope", b"{}".to_vec()).await;
        let text = app.metrics().await;
        assert!(
            text.contains(r#"slopewatch_http_requests_total{route="/api/v1/runs",method="POST",status="201"} 1"#),
            "{text}"
        );
        assert!(text.contains(r#"slopewatch_http_requests_total{route="/api/v1/runs",method="POST",status="422"} 1"#));
        assert!(text.contains(r#"slopewatch_ingest_rejections_total{reason="invalid_field"} 1"#));
        assert!(text.contains(r#"slopewatch_ingest_rejections_total{reason="unauthorized"} 1"#));
        assert!(text.contains("slopewatch_runs_ingested_total 1"));
        assert!(text.contains("slopewatch_samples_ingested_total 24"));
        assert!(text.contains("slopewatch_db_pool_connections"));
    })
    .await;
}

#[tokio::test]
async fn runs_stored_together_are_each_counted_once() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let runs: Vec<_> = (0..24)
            .map(|i| RunShape::new("gcc-glibc", "12.2.0").host(&format!("build-{}", i % 3)).workloads(2).json())
            .collect();
        let results = futures_util::future::join_all(runs.iter().map(|r| app.submit(r))).await;
        assert!(results.iter().all(|r| r.0 == StatusCode::CREATED), "{results:?}");
        // Runs answered while a summary pass was under way are taken in by the pass after it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        for workload in ["workload-0", "workload-1"] {
            loop {
                let (_, series) = app.get(&format!("/api/v1/series?workload={workload}&toolchain=gcc-glibc")).await;
                let v = &series["versions"][0];
                let runs = v["runs"].as_u64().unwrap_or(0);
                assert!(runs <= 24, "no run counted twice: {v}");
                if runs == 24 {
                    assert_eq!(v["hosts"], 3, "{v}");
                    break;
                }
                assert!(std::time::Instant::now() < deadline, "summaries stopped short: {v}");
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
        assert_eq!(app.db.store.pending_summaries().await.unwrap(), 0);
    })
    .await;
}

/// Runs that arrive while the database is busy wait together (on SQLite, for its one writer,
/// which then stores them in one transaction); each still gets the answer it would get alone:
/// a repeat is 200, a changed repeat 409, a workload in a second unit 422 with nothing of that
/// run left behind, and the others are stored and counted.
#[tokio::test]
async fn runs_that_wait_together_each_get_their_own_answer() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let mut fresh: Vec<serde_json::Value> = (0..4)
            .map(|i| RunShape::new("gcc-glibc", "12.2.0").host(&format!("fresh-{i}")).workloads(2).json())
            .collect();
        let repeat = fresh[0].clone();
        let mut changed = fresh[1].clone();
        changed["agent_version"] = "0.2.0".into();
        let mut bytes = RunShape::new("clang", "18.1.0").host("bytes-host").json();
        bytes["workloads"][0]["name"] = "new-workload".into();
        let mut records = bytes.clone();
        records["run_id"] = uuid::Uuid::new_v4().to_string().into();
        records["host"]["name"] = "records-host".into();
        records["workloads"][0]["size_unit"] = "records".into();
        fresh.extend([repeat, changed, bytes, records]);
        let bodies = fresh;

        // On SQLite, another connection holds the write lock until every run is with the writer
        // (after the token's first use, which writes its last-used time, is behind us).
        assert_eq!(app.submit(&json!({})).await.0, StatusCode::UNPROCESSABLE_ENTITY);
        let lock = match app.db.backend {
            crate::helpers::Backend::Sqlite => {
                use sqlx::Connection;
                let mut conn = sqlx::SqliteConnection::connect(&app.db.url).await.unwrap();
                sqlx::query("BEGIN IMMEDIATE").execute(&mut conn).await.unwrap();
                Some(conn)
            }
            crate::helpers::Backend::Postgres => None,
        };
        let (results, ()) = tokio::join!(futures_util::future::join_all(bodies.iter().map(|b| app.submit(b))), async {
            if let Some(mut conn) = lock {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
                while app.db.store.queued_runs() < bodies.len() {
                    assert!(std::time::Instant::now() < deadline, "runs never reached the writer");
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                let metrics = app.metrics().await;
                let queued = format!("\nslopewatch_runs_queued {}\n", bodies.len());
                assert!(metrics.contains(&queued), "{metrics}");
                sqlx::query("COMMIT").execute(&mut conn).await.unwrap();
            }
        });
        let statuses: Vec<StatusCode> = results.iter().map(|r| r.0).collect();
        assert!(statuses[2..4].iter().all(|s| *s == StatusCode::CREATED), "{results:?}");
        let mut pair = [statuses[0], statuses[4]];
        pair.sort();
        assert_eq!(pair, [StatusCode::OK, StatusCode::CREATED], "a run and its repeat: {results:?}");
        let mut pair = [statuses[1], statuses[5]];
        pair.sort();
        assert_eq!(pair, [StatusCode::CREATED, StatusCode::CONFLICT], "a run and a changed repeat: {results:?}");
        let mut pair = [statuses[6], statuses[7]];
        pair.sort();
        assert_eq!(pair, [StatusCode::CREATED, StatusCode::UNPROCESSABLE_ENTITY], "two units: {results:?}");
        let (refused, stored_unit, gone_host) = if statuses[6] == StatusCode::CREATED {
            (7, "bytes", "records-host")
        } else {
            (6, "records", "bytes-host")
        };
        assert_eq!(results[refused].1["error"]["field"], "workloads[0].size_unit", "{results:?}");

        let (_, hosts) = app.get("/api/v1/hosts").await;
        let names: Vec<&str> = hosts["hosts"].as_array().unwrap().iter().map(|h| h["name"].as_str().unwrap()).collect();
        assert_eq!(names.len(), 5, "{hosts}");
        assert!(!names.contains(&gone_host), "the refused run's host was not kept: {hosts}");
        let (_, workloads) = app.get("/api/v1/workloads").await;
        let new = workloads["workloads"].as_array().unwrap().iter().find(|w| w["name"] == "new-workload").unwrap();
        assert_eq!(new["size_unit"], stored_unit, "{workloads}");
        let (_, runs) = app.get("/api/v1/runs").await;
        assert_eq!(runs["runs"].as_array().unwrap().len(), 5, "{runs}");
        app.intake.summarize_pending().await.unwrap();
        let (_, series) = app.get("/api/v1/series?workload=workload-1&toolchain=gcc-glibc").await;
        assert_eq!(series["versions"][0]["runs"], 4, "{series}");
        assert_eq!(app.db.store.queued_runs(), 0);
    })
    .await;
}

/// A summary pass that fails (the database refuses the summary write here) leaves the run stored
/// and pending; a later pass takes it in once.
#[tokio::test]
async fn a_run_whose_summary_pass_fails_is_kept_and_taken_in_once_later() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        app.db.refuse_summaries(true).await;
        let run = RunShape::new("gcc-glibc", "12.2.0").workloads(2).json();
        let (status, receipt) = app.submit(&run).await;
        assert_eq!(status, StatusCode::CREATED, "{receipt}");
        let (status, _) = app.get(&format!("/api/v1/runs/{}", run["run_id"].as_str().unwrap())).await;
        assert_eq!(status, StatusCode::OK);
        let (status, series) = app.get("/api/v1/series?workload=workload-0&toolchain=gcc-glibc").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "no summary yet: {series}");
        assert_eq!(app.db.store.pending_summaries().await.unwrap(), 1);
        let metrics = app.metrics().await;
        assert!(metrics.contains("\nslopewatch_summaries_pending 1\n"), "{metrics}");

        app.db.refuse_summaries(false).await;
        assert_eq!(app.intake.summarize_pending().await.unwrap(), 1);
        assert_eq!(app.intake.summarize_pending().await.unwrap(), 0, "taken in once");
        let metrics = app.metrics().await;
        assert!(metrics.contains("\nslopewatch_summaries_pending 0\n"), "{metrics}");
        let (_, series) = app.get("/api/v1/series?workload=workload-0&toolchain=gcc-glibc").await;
        assert_eq!(series["versions"][0]["runs"], 1, "{series}");

        let next = RunShape::new("gcc-glibc", "12.2.0").workloads(2).json();
        assert_eq!(app.submit(&next).await.0, StatusCode::CREATED);
        let (_, series) = app.get("/api/v1/series?workload=workload-0&toolchain=gcc-glibc").await;
        assert_eq!(series["versions"][0]["runs"], 2, "{series}");
    })
    .await;
}

/// A pass may take in more runs of a version than its window holds; a workload that only the
/// older of them measured is still counted and summarized.
#[tokio::test]
async fn a_workload_only_older_runs_measured_is_counted_when_many_are_taken_in_at_once() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        app.db.refuse_summaries(true).await;
        let named = |name: &str| {
            let mut run = RunShape::new("gcc-glibc", "12.2.0").json();
            run["workloads"][0]["name"] = json!(name);
            run
        };
        for _ in 0..4 {
            assert_eq!(app.submit(&named("early")).await.0, StatusCode::CREATED);
        }
        for _ in 0..slopewatch::intake::SUMMARY_WINDOW {
            assert_eq!(app.submit(&named("late")).await.0, StatusCode::CREATED);
        }
        app.db.refuse_summaries(false).await;
        assert_eq!(app.intake.summarize_pending().await.unwrap(), 20);
        for (workload, runs) in [("early", 4), ("late", 16)] {
            let (status, series) = app.get(&format!("/api/v1/series?workload={workload}&toolchain=gcc-glibc")).await;
            assert_eq!(status, StatusCode::OK, "{workload}: {series}");
            assert_eq!(series["versions"][0]["runs"], runs, "{series}");
            assert_eq!(series["versions"][0]["sizes"][0]["runs"], runs, "{series}");
        }
    })
    .await;
}

/// A client that hangs up while its run's summary pass waits (here on another transaction's
/// version lock) does not stop the pass, and later runs are answered with current summaries.
#[tokio::test]
async fn a_request_cancelled_during_its_summary_pass_leaves_passes_working() {
    let db = crate::helpers::TestDb::new(crate::helpers::Backend::Postgres).await;
    let app = TestApp::new(db).await;
    let pool = sqlx::PgPool::connect(&app.db.url).await.unwrap();
    let mut holder = pool.begin().await.unwrap();
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('version' || chr(31) || $1 || chr(31) || $2, 0))")
        .bind("gcc-glibc")
        .bind("12.2.0")
        .execute(&mut *holder)
        .await
        .unwrap();
    let first = RunShape::new("gcc-glibc", "12.2.0").json();
    let mut submit = Box::pin(app.submit(&first));
    // Hang up once the run is stored and its pass waits for the lock.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        tokio::select! {
            answer = &mut submit => panic!("answered while its pass waited for the lock: {answer:?}"),
            _ = tokio::time::sleep(std::time::Duration::from_millis(20)) => {}
        }
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        if waiting > 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the run's pass never reached the lock");
    }
    assert_eq!(app.db.store.pending_summaries().await.unwrap(), 1);
    drop(submit);
    holder.commit().await.unwrap();

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while app.db.store.pending_summaries().await.unwrap() > 0 {
        assert!(std::time::Instant::now() < deadline, "the cancelled request's pass never finished");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let next = RunShape::new("gcc-glibc", "12.2.0").json();
    assert_eq!(app.submit(&next).await.0, StatusCode::CREATED);
    let (_, series) = app.get("/api/v1/series?workload=workload-0&toolchain=gcc-glibc").await;
    assert_eq!(series["versions"][0]["runs"], 2, "counted when answered: {series}");
    pool.close().await;
}
