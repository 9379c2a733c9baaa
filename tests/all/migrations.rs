//! Upgrading a store keeps what it holds: runs written under an earlier schema read back the
//! same, to the bit, after the later migrations, and new runs build on them.

use crate::helpers::{Backend, TestApp, TestDb};
use serde_json::Value;
use slopewatch::store::Scope;
use std::borrow::Cow;

/// Doubles whose decimal forms need all 17 digits, or an exponent, to read back exactly.
const TRICKY: [f64; 8] = [
    0.1,
    1.0 / 3.0,
    9_007_199_254_740_994.0,
    1e300,
    123_456_789.123_456_79,
    46_519_000.0,
    2.225_073_858_507_201e-308,
    std::f64::consts::PI * 1e6,
];

const SIZES: [i64; 3] = [1024, 2048, 4096];
const KEPT: &str = "6f1d3c9e-0000-4000-8000-000000000001";
const PRUNED: &str = "6f1d3c9e-0000-4000-8000-000000000002";

/// The samples of the kept run at each size: tricky numbers, scaled up with the size.
fn samples_at(size_index: usize) -> Vec<f64> {
    TRICKY.iter().map(|t| t * (1 << size_index) as f64).collect()
}

/// The median of `samples_at`, as the old ingest stored it.
fn median_at(size_index: usize) -> f64 {
    slopewatch_core::fit::median(&samples_at(size_index))
}

/// Writes, in the schema of migration 0004, one run with raw samples (instruction counts at the
/// first size only) and one whose samples were pruned, with their fits and version summary.
macro_rules! seed_schema_0004 {
    ($pool:expr) => {{
        let pool = $pool;
        let at = time::macros::datetime!(2026-11-01 12:00 UTC);
        sqlx::query("INSERT INTO hosts (name, cpu, kernel, arch, first_seen) VALUES ('build-01', 'cpu', '6.1', 'x86_64', $1)")
            .bind(at)
            .execute(pool)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO toolchains (name, version, libc, target, compiler, flags, first_seen)
             VALUES ('zig-cc-musl', '0.15.0', 'musl', 'x86_64-linux-musl', 'zig cc', '-O2', $1)",
        )
        .bind(at)
        .execute(pool)
        .await
        .unwrap();
        sqlx::query("INSERT INTO workloads (name, size_unit, first_seen) VALUES ('workload-0', 'bytes', $1)")
            .bind(at)
            .execute(pool)
            .await
            .unwrap();
        for (n, id) in [KEPT, PRUNED].into_iter().enumerate() {
            let id: uuid::Uuid = id.parse().unwrap();
            let pruned = (id.to_string() == PRUNED).then_some(at);
            sqlx::query(
                "INSERT INTO runs (id, content_hash, agent_version, started_at, received_at, host_id, toolchain_id,
                                   sample_count, samples_pruned_at)
                 VALUES ($1, $2, '0.1.0', $3, $4, 1, 1, $5, $6)",
            )
            .bind(id)
            .bind(format!("sha256:{n}"))
            .bind(at)
            .bind(at + time::Duration::minutes(n as i64))
            .bind((SIZES.len() * TRICKY.len()) as i32)
            .bind(pruned)
            .execute(pool)
            .await
            .unwrap();
            sqlx::query(
                "INSERT INTO fits (run_id, workload_id, source_hash, slope, intercept, r2, stderr, ci_low, ci_high,
                                   n_sizes, min_size, max_size, local_slopes, metadata)
                 VALUES ($1, 1, 'sha256:00', 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 3, 1024, 4096, '[]', '{}')",
            )
            .bind(id)
            .execute(pool)
            .await
            .unwrap();
            for (i, size) in SIZES.into_iter().enumerate() {
                sqlx::query(
                    "INSERT INTO measurements (run_id, workload_id, size, median_ns, samples) VALUES ($1, 1, $2, $3, $4)",
                )
                .bind(id)
                .bind(size)
                .bind(median_at(i))
                .bind(TRICKY.len() as i32)
                .execute(pool)
                .await
                .unwrap();
                if pruned.is_some() {
                    continue;
                }
                for (rep, ns) in samples_at(i).into_iter().enumerate() {
                    let instructions = (i == 0).then_some(1_000_000 + rep as i64);
                    sqlx::query(
                        "INSERT INTO samples (run_id, workload_id, size, rep, ns, instructions) VALUES ($1, 1, $2, $3, $4, $5)",
                    )
                    .bind(id)
                    .bind(size)
                    .bind(rep as i32)
                    .bind(ns)
                    .bind(instructions)
                    .execute(pool)
                    .await
                    .unwrap();
                }
            }
        }
        let sizes: Vec<Value> = SIZES
            .iter()
            .enumerate()
            .map(|(i, s)| serde_json::json!({"size": s, "median_ns": median_at(i), "runs": 2}))
            .collect();
        sqlx::query(
            "INSERT INTO version_summaries (workload_id, lineage, version, slope, slope_min, slope_max, ci_low, ci_high,
                                            r2, runs, hosts, host_ids, sizes, first_seen, last_run_at)
             VALUES (1, 'zig-cc-musl', '0.15.0', 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2, 1, '[1]', $1, $2, $2)",
        )
        .bind(Value::Array(sizes).to_string())
        .bind(at)
        .execute(pool)
        .await
        .unwrap();
    }};
}

/// The migrations up to and including `last`.
fn migrator_until(mut migrator: sqlx::migrate::Migrator, last: i64) -> sqlx::migrate::Migrator {
    migrator.migrations = Cow::Owned(migrator.migrations.iter().filter(|m| m.version <= last).cloned().collect());
    migrator
}

/// Migrates `db` up to and including migration `$last`, then seeds it with `$seed!` on a pool of
/// its backend.
macro_rules! seed_at {
    ($db:expr, $last:expr, $seed:ident) => {{
        match $db.backend {
            Backend::Postgres => {
                let pool = sqlx::PgPool::connect(&$db.url).await.unwrap();
                migrator_until(sqlx::migrate!("./migrations/postgres"), $last).run(&pool).await.unwrap();
                $seed!(&pool);
                pool.close().await;
            }
            Backend::Sqlite => {
                let pool = sqlx::SqlitePool::connect(&$db.url).await.unwrap();
                migrator_until(sqlx::migrate!("./migrations/sqlite"), $last).run(&pool).await.unwrap();
                $seed!(&pool);
                pool.close().await;
            }
        }
    }};
}

async fn seed_at_0004(db: &TestDb) {
    seed_at!(db, 4, seed_schema_0004);
}

#[tokio::test]
async fn raw_samples_and_medians_survive_the_move_into_measurement_rows() {
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        let db = TestDb::unmigrated(backend).await;
        seed_at_0004(&db).await;
        slopewatch::intake::migrate(&db.store).await.unwrap();

        let kept = db.store.run(KEPT.parse().unwrap()).await.unwrap().unwrap();
        let measurements = &kept.workloads[0].measurements;
        assert_eq!(measurements.len(), SIZES.len());
        for (i, m) in measurements.iter().enumerate() {
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&m.samples_ns), bits(&samples_at(i)), "samples at {} read back bit for bit", m.size);
            assert_eq!(m.median_ns.to_bits(), median_at(i).to_bits());
            let counts = (i == 0).then(|| (0..TRICKY.len() as i64).map(|rep| 1_000_000 + rep).collect::<Vec<_>>());
            assert_eq!(m.instructions, counts, "instruction counts at {}", m.size);
        }
        let pruned = db.store.run(PRUNED.parse().unwrap()).await.unwrap().unwrap();
        assert!(pruned.samples_pruned_at.is_some());
        for m in &pruned.workloads[0].measurements {
            assert!(m.samples_ns.is_empty() && m.instructions.is_none(), "{m:?}");
            assert_eq!(m.samples, TRICKY.len() as i32);
        }

        // A new run of the version takes the migrated runs' medians into its summary.
        let app = TestApp::new(db).await;
        let mut run = crate::builders::RunShape::new("zig-cc-musl", "0.15.0").sizes(3).samples(5).json();
        run["host"] = serde_json::json!({"name": "build-01", "cpu": "cpu", "kernel": "6.1", "arch": "x86_64"});
        run["toolchain"] = serde_json::json!({"name": "zig-cc-musl", "version": "0.15.0", "libc": "musl",
            "target": "x86_64-linux-musl", "compiler": "zig cc", "flags": "-O2"});
        for (i, m) in run["workloads"][0]["measurements"].as_array_mut().unwrap().iter_mut().enumerate() {
            m["size"] = SIZES[i].into();
        }
        let (status, body) = app.submit(&run).await;
        assert_eq!(status, 201, "{body}");
        let (_, series) = app.get("/api/v1/series?workload=workload-0&toolchain=zig-cc-musl").await;
        let version = &series["versions"][0];
        assert_eq!((version["runs"].as_i64(), version["hosts"].as_i64()), (Some(3), Some(1)), "{version}");
        for (i, size) in version["sizes"].as_array().unwrap().iter().enumerate() {
            assert_eq!(size["runs"], 3, "{size}");
            // Three runs: two migrated ones with the same median and the new one.
            assert_eq!(size["median_ns"].as_f64().unwrap().to_bits(), median_at(i).to_bits(), "{size}");
        }
    }
}

const CLASSIFIED: &str = "6f1d3c9e-0000-4000-8000-000000000003";

/// Per-size medians of a workload measured at seven sizes: linear in the run's fit, quadratic in
/// the version summary, so each row's class shows it was worked out from its own medians.
fn medians_of(quadratic: bool) -> Vec<(i64, f64)> {
    (0..7)
        .map(|i| {
            (
                65536i64 << i,
                if quadratic {
                    1e-3 * (65536.0 * f64::from(1 << i)).powi(2)
                } else {
                    3.0 * 65536.0 * f64::from(1 << i)
                },
            )
        })
        .collect()
}

/// Writes, in the schema of migration 0009, one run with its fit and measurements and its
/// version's summary, as a store stood before complexity classes.
macro_rules! seed_schema_0009 {
    ($pool:expr) => {{
        let pool = $pool;
        let at = time::macros::datetime!(2026-11-01 12:00 UTC);
        for q in [
            "INSERT INTO hosts (name, cpu, kernel, arch, first_seen) VALUES ('build-01', 'cpu', '6.1', 'x86_64', $1)",
            "INSERT INTO toolchains (name, version, libc, target, compiler, flags, first_seen)
             VALUES ('zig-cc-musl', '0.15.0', 'musl', 'x86_64-linux-musl', 'zig cc', '-O2', $1)",
            "INSERT INTO workloads (name, size_unit, first_seen) VALUES ('workload-0', 'bytes', $1)",
        ] {
            sqlx::query(q).bind(at).execute(pool).await.unwrap();
        }
        let id: uuid::Uuid = CLASSIFIED.parse().unwrap();
        sqlx::query(
            "INSERT INTO runs (id, content_hash, agent_version, started_at, received_at, host_id, toolchain_id, sample_count)
             VALUES ($1, 'sha256:3', '0.1.0', $2, $2, 1, 1, 7)",
        )
        .bind(id)
        .bind(at)
        .execute(pool)
        .await
        .unwrap();
        let run_medians = medians_of(false);
        sqlx::query(
            "INSERT INTO fits (run_id, workload_id, source_hash, slope, intercept, r2, stderr, ci_low, ci_high,
                               n_sizes, min_size, max_size, local_slopes, metadata, medians)
             VALUES ($1, 1, 'sha256:00', 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 7, $2, $3, '[]', '{}', $4)",
        )
        .bind(id)
        .bind(run_medians[0].0)
        .bind(run_medians[6].0)
        .bind(serde_json::to_string(&run_medians).unwrap())
        .execute(pool)
        .await
        .unwrap();
        for (size, median) in &run_medians {
            sqlx::query(
                "INSERT INTO measurements (run_id, workload_id, size, median_ns, samples, samples_ns)
                 VALUES ($1, 1, $2, $3, 1, $4)",
            )
            .bind(id)
            .bind(size)
            .bind(median)
            .bind(format!("[{median}]"))
            .execute(pool)
            .await
            .unwrap();
        }
        let sizes: Vec<Value> =
            medians_of(true).iter().map(|(s, m)| serde_json::json!({"size": s, "median_ns": m, "runs": 1})).collect();
        sqlx::query(
            "INSERT INTO version_summaries (workload_id, lineage, version, slope, slope_min, slope_max, ci_low, ci_high,
                                            r2, runs, hosts, host_ids, sizes, first_seen, last_run_at)
             VALUES (1, 'zig-cc-musl', '0.15.0', 2.0, 2.0, 2.0, 2.0, 2.0, 1.0, 1, 1, '[1]', $1, $2, $2)",
        )
        .bind(Value::Array(sizes).to_string())
        .bind(at)
        .execute(pool)
        .await
        .unwrap();
    }};
}

#[tokio::test]
async fn summaries_stored_before_classes_are_classified_on_upgrade_and_fits_on_read() {
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        let db = TestDb::unmigrated(backend).await;
        seed_at!(db, 9, seed_schema_0009);
        slopewatch::intake::migrate(&db.store).await.unwrap();
        assert_eq!(
            slopewatch::intake::classify_unclassified(&db.store).await.unwrap(),
            0,
            "nothing is left to classify"
        );

        let mut run = db.store.run(CLASSIFIED.parse().unwrap()).await.unwrap().unwrap();
        slopewatch::views::fill_in_run(&mut run, slopewatch::config::Rules::default().min_sizes);
        let expected = |quadratic: bool| {
            let points: Vec<(f64, f64)> = medians_of(quadratic).iter().map(|&(s, t)| (s as f64, t)).collect();
            slopewatch_core::complexity::classify(&points).unwrap()
        };
        assert_eq!(run.workloads[0].complexity.as_ref(), Some(&expected(false)));
        let app = TestApp::new(db).await;
        let (_, series) = app.get("/api/v1/series?workload=workload-0&toolchain=zig-cc-musl").await;
        assert_eq!(series["versions"][0]["complexity"]["class"], "n^2", "{series}");
        assert_eq!(series["versions"][0]["complexity"], serde_json::to_value(expected(true)).unwrap());
        let (_, detail) = app.get(&format!("/api/v1/runs/{CLASSIFIED}")).await;
        assert_eq!(detail["workloads"][0]["complexity"]["class"], "n", "{detail}");
    }
}

/// A slope regression with one workload, as a store at migration 0009 holds it.
macro_rules! seed_regression_0009 {
    ($pool:expr) => {{
        let pool = $pool;
        let at = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000);
        sqlx::query("INSERT INTO workloads (id, name, size_unit, first_seen) VALUES (1, 'strchr', 'bytes', $1)")
            .bind(at)
            .execute(pool)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO regressions (id, lineage, version, previous_version, status, magnitude, first_run_at, opened_at)
             VALUES (7, 'zig-cc-musl', '0.16.0', '0.15.2', 'open', 9.5, $1, $1)",
        )
        .bind(at)
        .execute(pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO regression_workloads (regression_id, workload_id, slope, ci_low, ci_high, r2, previous_slope,
                                               time_ratio, ratio_size, joined_at, joined_late)
             VALUES (7, 1, 2.01, 1.98, 2.04, 0.999, 1.0, 9.5, 4194304, $1, false)",
        )
        .bind(at)
        .execute(pool)
        .await
        .unwrap();
    }};
}

#[tokio::test]
async fn regressions_from_before_failures_keep_their_workloads_as_slope_members() {
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        let db = TestDb::unmigrated(backend).await;
        seed_at!(db, 9, seed_regression_0009);
        slopewatch::intake::migrate(&db.store).await.unwrap();
        let detail = db.store.regression(7).await.unwrap().unwrap();
        let w = &detail.workloads[0];
        assert_eq!((w.workload.as_str(), w.reason.as_str()), ("strchr", "slope"));
        assert_eq!((w.slope, w.ci_low, w.ci_high, w.previous_slope), (Some(2.01), Some(1.98), Some(2.04), Some(1.0)));
        assert!(w.failure.is_none());

        // The migrated regression resolves by the usual rule when a good version arrives.
        let app = TestApp::new(db).await;
        let mut run = crate::builders::RunShape::new("zig-cc-musl", "0.17.0").sizes(6).json();
        run["workloads"][0]["name"] = "strchr".into();
        let (status, body) = app.submit(&run).await;
        assert_eq!(status, 201, "{body}");
        let r = &app.db.store.regression(7).await.unwrap().unwrap().regression;
        assert_eq!((r.status.as_str(), r.fixed_version.as_deref()), ("fixed", Some("0.17.0")));
    }
}

/// Two lineages with a build each, one a musl-gcc wrapper versioned by its gcc, as a store at
/// migration 0013 holds them.
macro_rules! seed_lineages_0013 {
    ($pool:expr) => {{
        let pool = $pool;
        let at = time::macros::datetime!(2026-11-01 12:00 UTC);
        for q in [
            "INSERT INTO toolchains (name, version, libc, target, compiler, flags, first_seen)
             VALUES ('musl-gcc', '12.2.0', 'musl 1.2.3', 'x86_64-linux-musl', 'musl-gcc', '-O2', $1)",
            "INSERT INTO toolchains (name, version, libc, target, compiler, flags, first_seen)
             VALUES ('zig-cc-musl', '0.15.0', 'musl 1.2.5 (zig 0.15.0)', 'x86_64-linux-musl', 'zig cc', '-O2', $1)",
        ] {
            sqlx::query(q).bind(at).execute(pool).await.unwrap();
        }
    }};
}

#[tokio::test]
async fn lineages_stored_before_the_version_axis_are_marked_compiler_and_keep_it() {
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        let db = TestDb::unmigrated(backend).await;
        seed_at!(db, 13, seed_lineages_0013);
        slopewatch::intake::migrate(&db.store).await.unwrap();
        let app = TestApp::new(db).await;
        let (_, list) = app.get("/api/v1/toolchains").await;
        let axes: Vec<(&str, &str)> = list["toolchains"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap(), t["version_from"].as_str().unwrap()))
            .collect();
        assert_eq!(axes, [("musl-gcc", "compiler"), ("zig-cc-musl", "compiler")], "{list}");

        // The old musl-gcc history is kept apart: musl's version under its name is refused, and
        // starts its own lineage under a new one.
        let mut libc = crate::builders::RunShape::new("musl-gcc", "1.2.3").sizes(6).json();
        libc["toolchain"]["version_from"] = "libc".into();
        let (status, body) = app.submit(&libc).await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["error"]["field"], "toolchain.version_from", "{body}");
        libc["toolchain"]["name"] = "musl-gcc-libc".into();
        let (status, body) = app.submit(&libc).await;
        assert_eq!(status, 201, "{body}");
        let compiler = crate::builders::RunShape::new("musl-gcc", "12.2.0").sizes(6).json();
        assert_eq!(app.submit(&compiler).await.0, 201, "the old lineage goes on as it was");
    }
}

#[tokio::test]
async fn regressions_from_before_bisections_take_bisections_after_the_upgrade() {
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        let db = TestDb::unmigrated(backend).await;
        seed_at!(db, 14, seed_regression_0009);
        slopewatch::intake::migrate(&db.store).await.unwrap();
        assert!(db.store.regression(7).await.unwrap().unwrap().bisections.is_empty());
        let app = TestApp::new(db).await;
        let id = uuid::Uuid::new_v4();
        let bisection = serde_json::json!({
            "bisection_id": id, "agent_version": "0.1.0", "started_at": "2026-11-30T08:00:00Z", "seconds": 3.0,
            "host": {"name": "build-01"}, "lineage": "zig-cc-musl", "workloads": ["strchr"], "max_slope": 1.5,
            "good": "0.15.2", "bad": "0.16.0", "candidates": 2, "outcome": "bad_is_good",
            "steps": [{"version": "0.16.0", "verdict": "good", "slope": 1.0, "seconds": 3.0}],
        });
        let req = axum::http::Request::post("/api/v1/regressions/7/bisections")
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {}", app.ingest_token))
            .body(axum::body::Body::from(bisection.to_string()))
            .unwrap();
        let (status, body) = app.send(req).await;
        assert_eq!(status, 201, "{body}");
        let detail = app.db.store.regression(7).await.unwrap().unwrap();
        assert_eq!(detail.bisections.len(), 1);
        assert_eq!(detail.bisections[0].summary(), "the bad end 0.16.0 measured good: nothing to search (1 step, 3 s)");
    }
}

/// The timeline of regression 7 as a store at migration 0015 holds it: a status an editor set, an
/// acknowledgement, a link and an entry the rules wrote, all as text.
macro_rules! seed_timeline_0015 {
    ($pool:expr) => {{
        let pool = $pool;
        seed_regression_0009!(pool);
        let at = time::OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_001);
        let entries = [
            ("first_run", "First run of 0.16.0", None),
            ("acknowledged", "Acknowledged", Some("test-editor")),
            ("link", "Linked upstream", Some("test-editor")),
            ("status", "Status set to false alarm", Some("test-editor")),
        ];
        for (minute, (kind, detail, actor)) in entries.into_iter().enumerate() {
            sqlx::query(
                "INSERT INTO regression_events (regression_id, at, kind, detail, actor) VALUES (7, $1, $2, $3, $4)",
            )
            .bind(at + time::Duration::minutes(minute as i64))
            .bind(kind)
            .bind(detail)
            .bind(actor)
            .execute(pool)
            .await
            .unwrap();
        }
    }};
}

#[tokio::test]
async fn statuses_editors_set_before_the_upgrade_still_move_with_the_history() {
    use slopewatch::model::RegressionStatus;
    use slopewatch::store::EditChange;
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        let db = TestDb::unmigrated(backend).await;
        seed_at!(db, 15, seed_timeline_0015);
        slopewatch::intake::migrate(&db.store).await.unwrap();
        let statuses: Vec<RegressionStatus> = db
            .store
            .regression_edits()
            .await
            .unwrap()
            .into_iter()
            .filter_map(|e| match e.change {
                EditChange::Status(status) => Some(status),
                _ => None,
            })
            .collect();
        assert_eq!(statuses, [RegressionStatus::Acknowledged, RegressionStatus::FalseAlarm]);
    }
}

/// Regression 7 as a store from before findings holds a first version that was already over: a
/// "regression" with no last good version.
macro_rules! seed_first_version_over_0016 {
    ($pool:expr) => {{
        let pool = $pool;
        seed_regression_0009!(pool);
        sqlx::query("UPDATE regressions SET previous_version = NULL WHERE id = 7").execute(pool).await.unwrap();
    }};
}

#[tokio::test]
async fn a_regression_with_no_last_good_version_stored_before_findings_reads_as_a_finding_under_its_number() {
    use slopewatch::model::RegressionKind;
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        let db = TestDb::unmigrated(backend).await;
        seed_at!(db, 16, seed_first_version_over_0016);
        slopewatch::intake::migrate(&db.store).await.unwrap();
        let row = db.store.regression_row(7).await.unwrap().unwrap();
        assert_eq!(row.kind(), RegressionKind::Finding);
        let findings = db.store.regressions_of(None, Some(RegressionKind::Finding)).await.unwrap();
        assert_eq!(findings.iter().map(|(r, _)| r.id).collect::<Vec<_>>(), [7]);
        assert!(db.store.regressions_of(None, Some(RegressionKind::Regression)).await.unwrap().is_empty());
        let app = TestApp::new(db).await;
        let (status, page) = app.get("/regressions/7").await;
        assert_eq!(status, 200);
        let page = page.as_str().unwrap().to_string();
        assert!(page.contains("Finding #7: zig-cc-musl") && !page.contains("slopewatch-agent bisect"), "{page}");
        let (_, list) = app.get("/api/v1/regressions?kind=finding").await;
        assert_eq!(list["regressions"][0]["regression"]["id"], 7, "{list}");
        assert_eq!(list["regressions"][0]["kind"], "finding", "{list}");
    }
}

/// A store at migration 0019, from before metrics: the run, fit, measurements and version
/// summary of the 0009 seed, a contract on its workload, and a regression holding it.
macro_rules! seed_before_metrics_0019 {
    ($pool:expr) => {{
        let pool = $pool;
        seed_schema_0009!(pool);
        let at = time::macros::datetime!(2026-11-01 12:00 UTC);
        let id: uuid::Uuid = CLASSIFIED.parse().unwrap();
        for q in [
            "INSERT INTO lineages (name, version_from, first_seen) VALUES ('zig-cc-musl', 'compiler', $1)",
            "INSERT INTO regressions (id, lineage, version, status, first_run_at, opened_at)
             VALUES (7, 'zig-cc-musl', '0.15.0', 'open', $1, $1)",
            "INSERT INTO regression_workloads (regression_id, workload_id, slope, ci_low, ci_high, r2, joined_at,
                                               joined_late)
             VALUES (7, 1, 2.0, 2.0, 2.0, 1.0, $1, false)",
            "INSERT INTO workload_contracts (workload_id, expected, contract) VALUES (1, 'n', '{\"expected\":\"n\"}')",
        ] {
            sqlx::query(q).bind(at).execute(pool).await.unwrap();
        }
        sqlx::query(
            "INSERT INTO run_contracts (run_id, workload_id, contract, not_provided, source_hash, metadata)
             VALUES ($1, 1, '{\"expected\":\"n\"}', false, 'sha256:00', '{}')",
        )
        .bind(id)
        .execute(pool)
        .await
        .unwrap();
    }};
}

#[tokio::test]
async fn a_store_from_before_metrics_reads_as_wall_time_and_takes_counted_runs_beside_it() {
    use slopewatch_core::wire::Metric;
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        let db = TestDb::unmigrated(backend).await;
        seed_at!(db, 19, seed_before_metrics_0019);
        slopewatch::intake::migrate(&db.store).await.unwrap();
        assert_eq!(db.texts("SELECT metric FROM workloads").await, ["wall"]);
        assert_eq!(db.texts("SELECT metric FROM runs").await, ["wall"]);
        if backend == Backend::Sqlite {
            assert!(
                db.texts("SELECT \"table\" FROM pragma_foreign_key_check").await.is_empty(),
                "every reference kept"
            );
        }
        assert_eq!(db.store.run(CLASSIFIED.parse().unwrap()).await.unwrap().unwrap().metric, Metric::Wall);
        assert_eq!(db.store.regression(7).await.unwrap().unwrap().workloads[0].metric, Metric::Wall);

        // Wall runs go on in the old series; a counted run of the same workload starts its own.
        let app = TestApp::new(db).await;
        let wall = crate::builders::RunShape::new("zig-cc-musl", "0.15.0").sizes(6).slope(2.0).json();
        let mut counted = crate::builders::RunShape::new("zig-cc-musl", "0.15.0").sizes(6).slope(2.0).json();
        counted["measure"] = "instructions".into();
        counted["counter"] = "perf".into();
        for m in counted["workloads"][0]["measurements"].as_array_mut().unwrap() {
            let (n, size) = (m["samples_ns"].as_array().unwrap().len() as u64, m["size"].as_u64().unwrap());
            m["instructions"] = serde_json::json!((0..n).map(|k| 3 * size + k).collect::<Vec<u64>>());
        }
        for body in [&wall, &counted] {
            let (status, answer) = app.submit(body).await;
            assert_eq!(status, 201, "{answer}");
        }
        let (_, series) = app.get("/api/v1/series?workload=workload-0&toolchain=zig-cc-musl").await;
        assert_eq!(series["measure"], "wall", "{series}");
        assert_eq!(series["measures"], serde_json::json!(["wall", "instructions-perf"]), "{series}");
        assert_eq!(series["versions"][0]["runs"], 2, "the migrated run and the new one: {series}");
        let uri = "/api/v1/series?workload=workload-0&toolchain=zig-cc-musl&measure=instructions-perf";
        let (_, counted) = app.get(uri).await;
        assert_eq!(counted["versions"][0]["runs"], 1, "{counted}");
        let k = counted["versions"][0]["slope"].as_f64().unwrap();
        assert!((k - 1.0).abs() < 0.01, "fitted from the linear counts, not the quadratic times: {counted}");
        let ids = app.db.texts("SELECT CAST(id AS TEXT) || ':' || metric FROM workloads ORDER BY id").await;
        assert_eq!(ids, ["1:wall", "2:instructions-perf"], "the old workload keeps its id");
    }
}

const OUTBOX_PENDING: &str = "6f1d3c9e-0000-4000-8000-0000000000a1";
const OUTBOX_FAILED: &str = "6f1d3c9e-0000-4000-8000-0000000000a2";

/// A regression with a pending delivery and a failed one, each with attempts, as a store at
/// migration 0020 holds them.
macro_rules! seed_outbox_0020 {
    ($pool:expr) => {{
        let pool = $pool;
        let at = time::macros::datetime!(2026-11-01 12:00 UTC);
        sqlx::query(
            "INSERT INTO regressions (id, lineage, version, status, first_run_at, opened_at)
             VALUES (7, 'zig-cc-musl', '0.16.0', 'open', $1, $1)",
        )
        .bind(at)
        .execute(pool)
        .await
        .unwrap();
        for (id, status) in [(OUTBOX_PENDING, "pending"), (OUTBOX_FAILED, "failed")] {
            let id: uuid::Uuid = id.parse().unwrap();
            sqlx::query(
                "INSERT INTO deliveries (id, regression_id, event, target, body, status, created_at, next_attempt_at,
                                         attempts, last_error)
                 VALUES ($1, 7, 'regression.opened', 'team', '{}', $2, $3, $3, 2, 'HTTP 500')",
            )
            .bind(id)
            .bind(status)
            .bind(at)
            .execute(pool)
            .await
            .unwrap();
            for attempt in 1..=2 {
                sqlx::query(
                    "INSERT INTO delivery_attempts (delivery_id, attempt, at, http_status, latency_ms, error)
                     VALUES ($1, $2, $3, 500, 1.5, 'HTTP 500')",
                )
                .bind(id)
                .bind(attempt)
                .bind(at)
                .execute(pool)
                .await
                .unwrap();
            }
        }
    }};
}

#[tokio::test]
async fn deliveries_and_their_attempts_survive_the_upgrade_that_adds_refusals() {
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        let db = TestDb::unmigrated(backend).await;
        seed_at!(db, 20, seed_outbox_0020);
        slopewatch::intake::migrate(&db.store).await.unwrap();
        if backend == Backend::Sqlite {
            assert!(
                db.texts("SELECT \"table\" FROM pragma_foreign_key_check").await.is_empty(),
                "every reference kept"
            );
        }
        let deliveries = db.store.regression(7).await.unwrap().unwrap().deliveries;
        let kept: Vec<_> = deliveries
            .iter()
            .map(|d| (d.delivery.id.to_string(), d.delivery.status.clone(), d.attempts.len()))
            .collect();
        assert_eq!(
            kept,
            [
                (OUTBOX_PENDING.to_string(), "pending".to_string(), 2),
                (OUTBOX_FAILED.to_string(), "failed".to_string(), 2)
            ]
        );
        assert!(deliveries.iter().flat_map(|d| &d.attempts).all(|a| a.http_status == Some(500) && a.answer.is_none()));

        // The failed one can be resent, and a delivery can now be refused.
        let now = time::OffsetDateTime::now_utc();
        assert!(db.store.resend_delivery(OUTBOX_FAILED.parse().unwrap(), "test-editor", now).await.unwrap());
        db.execute(&format!(
            "UPDATE deliveries SET status = 'refused' WHERE id = {}",
            id_literal(backend, OUTBOX_PENDING)
        ))
        .await;
        assert_eq!(db.store.refused_deliveries().await.unwrap(), 1);
        assert_eq!(db.store.pending_deliveries().await.unwrap(), 1);
    }
}

/// A UUID as a literal of the backend's column type.
fn id_literal(backend: Backend, id: &str) -> String {
    match backend {
        Backend::Postgres => format!("'{id}'"),
        Backend::Sqlite => format!("X'{}'", id.replace('-', "")),
    }
}

/// The token secret of seeded token `n`: well formed, so the store can find it by its prefix.
fn seeded_secret(n: u32) -> String {
    format!("sw_{n:064x}")
}

/// Tokens and a session as a store at migration 0028 holds them: three tokens, the third revoked,
/// and a session of the second, the editor.
macro_rules! seed_tokens_0028 {
    ($pool:expr) => {{
        let pool = $pool;
        let now = time::OffsetDateTime::now_utc();
        for (n, name, scope) in [(1, "agent-01", "ingest"), (2, "alice", "editor"), (3, "retired", "admin")] {
            let secret = seeded_secret(n);
            sqlx::query("INSERT INTO tokens (name, scope, prefix, hash, created_at) VALUES ($1, $2, $3, $4, $5)")
                .bind(name)
                .bind(scope)
                .bind(&secret[3..15])
                .bind(slopewatch::auth::hash(&secret))
                .bind(now)
                .execute(pool)
                .await
                .unwrap();
        }
        sqlx::query("DELETE FROM tokens WHERE name = 'retired'").execute(pool).await.unwrap();
        sqlx::query(
            "INSERT INTO sessions (id_hash, token_id, created_at, expires_at) VALUES ('alice-session', 2, $1, $2)",
        )
        .bind(now)
        .bind(now.unix_timestamp() + 3600)
        .execute(pool)
        .await
        .unwrap();
    }};
}

#[tokio::test]
async fn tokens_and_sessions_survive_the_upgrade_that_adds_the_bisect_scope() {
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        let db = TestDb::unmigrated(backend).await;
        seed_at!(db, 28, seed_tokens_0028);
        slopewatch::intake::migrate(&db.store).await.unwrap();
        if backend == Backend::Sqlite {
            assert!(
                db.texts("SELECT \"table\" FROM pragma_foreign_key_check").await.is_empty(),
                "every reference kept"
            );
        }
        let session = db.store.session_token("alice-session").await.unwrap().expect("the session survives");
        assert_eq!((session.id, session.name.as_str(), session.scope.0), (2, "alice", Scope::Editor));
        let agent = slopewatch::auth::identify(&db.store, &seeded_secret(1)).await.unwrap().expect("the token works");
        assert_eq!((agent.id, agent.scope.0), (1, Scope::Ingest));
        assert!(slopewatch::auth::identify(&db.store, &seeded_secret(3)).await.unwrap().is_none());

        assert!(db.store.create_token("bisector", Scope::Bisect, "0123456789ab", "new-hash").await.unwrap());
        let tokens = db.store.list_tokens().await.unwrap();
        let ids: Vec<(i64, &str, Scope)> = tokens.iter().map(|t| (t.id, t.name.as_str(), t.scope.0)).collect();
        assert_eq!(
            ids,
            [(1, "agent-01", Scope::Ingest), (2, "alice", Scope::Editor), (4, "bisector", Scope::Bisect)],
            "a bisect token is taken, under an id the revoked token never had"
        );
        let index = match backend {
            Backend::Postgres => "SELECT indexname FROM pg_indexes WHERE indexname = 'tokens_by_prefix'",
            Backend::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'tokens_by_prefix'",
        };
        assert_eq!(db.texts(index).await.len(), 1, "tokens are still found by prefix through the index");
    }
}

/// Sets the build hash and the control of the kept run's fit, as a store at migration 29 keeps
/// them, in columns of their own; the pruned run's fit keeps neither.
macro_rules! facts_in_columns_0029 {
    ($pool:expr) => {{
        sqlx::query("UPDATE fits SET build_hash = $1, control = $2 WHERE run_id = $3")
            .bind(format!("sha256:{}", "0a".repeat(32)))
            .bind(r#"{"lineage":"musl-gcc","version":"1.2.5","medians":[{"size":1024,"median":0.1},{"size":2048,"median":1e300}]}"#)
            .bind(KEPT.parse::<uuid::Uuid>().unwrap())
            .execute($pool)
            .await
            .unwrap();
    }};
}

#[tokio::test]
async fn build_hashes_and_controls_move_into_a_fits_facts_whole() {
    use slopewatch_core::wire::{Beside, BesideMedian, Facts};
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        let db = TestDb::unmigrated(backend).await;
        seed_at_0004(&db).await;
        seed_at!(db, 29, facts_in_columns_0029);
        slopewatch::intake::migrate(&db.store).await.unwrap();
        let facts = db.texts("SELECT facts FROM fits ORDER BY run_id").await;
        let read: Vec<Facts> = facts.iter().map(|f| serde_json::from_str(f).unwrap()).collect();
        let control = Beside {
            lineage: "musl-gcc".into(),
            version: "1.2.5".into(),
            medians: vec![BesideMedian { size: 1024, median: 0.1 }, BesideMedian { size: 2048, median: 1e300 }],
        };
        assert_eq!(read.len(), 2, "{facts:?}");
        assert_eq!(read[0].build_hash, Some(format!("sha256:{}", "0a".repeat(32))), "{facts:?}");
        assert_eq!(read[0].control, Some(control), "{facts:?}");
        assert_eq!(read[1], Facts::default(), "{facts:?}");
        assert_eq!(facts[1], "{}", "a fit without either keeps an empty object, not nulls");
        let columns = match backend {
            Backend::Postgres => "SELECT column_name FROM information_schema.columns WHERE table_name = 'fits'",
            Backend::Sqlite => "SELECT name FROM pragma_table_info('fits')",
        };
        let columns = db.texts(columns).await;
        assert!(!columns.iter().any(|c| c == "build_hash" || c == "control"), "{columns:?}");
    }
}
