//! Test support: a fresh database per test on each backend, the app, and request helpers.
#![allow(dead_code)]

pub mod chromium;
pub mod devtools;
pub mod forms;
pub mod process;
pub mod releases;
pub mod tmpfs;
pub mod webhooks;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use slopewatch::config::Config;
use slopewatch::intake::Intake;
use slopewatch::metrics::Metrics;
use slopewatch::store::{OpenOptions, Scope, Store};
use slopewatch::{app, auth, AppState};
use std::future::Future;
use std::sync::Arc;
use tower::ServiceExt;

/// Where the test Postgres server is; each test gets its own database on it.
pub fn postgres_admin_url() -> String {
    std::env::var("SLOPEWATCH_TEST_POSTGRES").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// A migrated, empty database that is deleted when dropped.
pub struct TestDb {
    pub url: String,
    pub store: Store,
    pub backend: Backend,
    pg_name: Option<String>,
    _dir: Option<tempfile::TempDir>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

impl TestDb {
    pub async fn new(backend: Backend) -> TestDb {
        TestDb::create(backend, true).await
    }

    /// A database no migration has touched yet (SQLite's file exists, empty).
    pub async fn unmigrated(backend: Backend) -> TestDb {
        TestDb::create(backend, false).await
    }

    async fn create(backend: Backend, migrate: bool) -> TestDb {
        let open = |url: String| async move {
            let options = OpenOptions::default();
            if migrate {
                slopewatch::intake::open_and_migrate(&url, &options).await.unwrap()
            } else {
                Store::open(&url, &options).await.unwrap()
            }
        };
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let url = format!("sqlite://{}", dir.path().join("test.db").display());
                let store = open(url.clone()).await;
                TestDb { url, store, backend, pg_name: None, _dir: Some(dir) }
            }
            Backend::Postgres => {
                let name = format!("slopewatch_test_{}", uuid::Uuid::new_v4().simple());
                let admin = sqlx::PgPool::connect(&postgres_admin_url())
                    .await
                    .expect("Postgres must be running for the tests (see .ci/run)");
                sqlx::query(&format!("CREATE DATABASE {name}")).execute(&admin).await.unwrap();
                admin.close().await;
                let mut url = url::Url::parse(&postgres_admin_url()).unwrap();
                url.set_path(&name);
                let url = url.to_string();
                let store = open(url.clone()).await;
                TestDb { url, store, backend, pg_name: Some(name), _dir: None }
            }
        }
    }
}

impl TestDb {
    /// Runs SQL statements (several, separated by `;`) on the database behind the store's back.
    pub async fn execute(&self, sql: &str) {
        match self.backend {
            Backend::Postgres => {
                let pool = sqlx::PgPool::connect(&self.url).await.unwrap();
                sqlx::raw_sql(sql).execute(&pool).await.unwrap();
                pool.close().await;
            }
            Backend::Sqlite => {
                let pool = sqlx::SqlitePool::connect(&self.url).await.unwrap();
                sqlx::raw_sql(sql).execute(&pool).await.unwrap();
                pool.close().await;
            }
        }
    }

    /// The first column of every row a query gives, as text, read behind the store's back.
    pub async fn texts(&self, sql: &str) -> Vec<String> {
        match self.backend {
            Backend::Postgres => {
                let pool = sqlx::PgPool::connect(&self.url).await.unwrap();
                let rows: Vec<(String,)> = sqlx::query_as(sql).fetch_all(&pool).await.unwrap();
                pool.close().await;
                rows.into_iter().map(|r| r.0).collect()
            }
            Backend::Sqlite => {
                let pool = sqlx::SqlitePool::connect(&self.url).await.unwrap();
                let rows: Vec<(String,)> = sqlx::query_as(sql).fetch_all(&pool).await.unwrap();
                pool.close().await;
                rows.into_iter().map(|r| r.0).collect()
            }
        }
    }

    /// Makes the database refuse every write of a version summary (a trigger raises), or stops.
    pub async fn refuse_summaries(&self, refuse: bool) {
        let sql = match (self.backend, refuse) {
            (Backend::Postgres, true) => {
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN RAISE EXCEPTION 'summaries are down'; END $$;
                 CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON version_summaries
                 FOR EACH ROW EXECUTE FUNCTION refuse();"
            }
            (Backend::Postgres, false) => "DROP TRIGGER refuse ON version_summaries; DROP FUNCTION refuse();",
            (Backend::Sqlite, true) => {
                "CREATE TRIGGER refuse_insert BEFORE INSERT ON version_summaries
                 BEGIN SELECT RAISE(ABORT, 'summaries are down'); END;
                 CREATE TRIGGER refuse_update BEFORE UPDATE ON version_summaries
                 BEGIN SELECT RAISE(ABORT, 'summaries are down'); END;"
            }
            (Backend::Sqlite, false) => "DROP TRIGGER refuse_insert; DROP TRIGGER refuse_update;",
        };
        self.execute(sql).await;
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(name) = self.pg_name.take() {
            // The test's runtime is blocked in this drop, so its pool cannot be closed from here;
            // a thread with its own runtime drops the database, ending those connections by force.
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                rt.block_on(async move {
                    if let Ok(admin) = sqlx::PgPool::connect(&postgres_admin_url()).await {
                        let _ =
                            sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&admin).await;
                    }
                });
            })
            .join()
            .ok();
        }
    }
}

/// Runs the same test body on Postgres and on SQLite.
pub async fn on_both_backends<F, Fut>(test: F)
where
    F: Fn(TestDb) -> Fut,
    Fut: Future<Output = ()>,
{
    for backend in [Backend::Postgres, Backend::Sqlite] {
        eprintln!("-- on {backend:?}");
        test(TestDb::new(backend).await).await;
    }
}

/// The app over a test database, with tokens of every scope.
pub struct TestApp {
    pub db: TestDb,
    pub router: axum::Router,
    pub ingest_token: String,
    pub editor_token: String,
    pub admin_token: String,
    /// The app's metrics, to hand to an outbox worker running beside it.
    pub metrics: Arc<Metrics>,
    /// The app's intake, whose summary passes the tests can run.
    pub intake: Intake,
}

impl TestApp {
    pub async fn new(db: TestDb) -> TestApp {
        Self::with_config(db, Config::default()).await
    }

    pub async fn with_config(db: TestDb, config: Config) -> TestApp {
        let ingest_token = create_token(&db.store, "test-ingest", Scope::Ingest).await;
        let editor_token = create_token(&db.store, "test-editor", Scope::Editor).await;
        let admin_token = create_token(&db.store, "test-admin", Scope::Admin).await;
        let state = AppState::new(db.store.clone(), config);
        let metrics = state.metrics.clone();
        let intake = state.intake.clone();
        let router = app(state);
        TestApp { db, router, ingest_token, editor_token, admin_token, metrics, intake }
    }

    pub async fn send(&self, req: Request<Body>) -> (StatusCode, Value) {
        let res = self.router.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let value =
            serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
        (status, value)
    }

    pub async fn get(&self, uri: &str) -> (StatusCode, Value) {
        self.send(Request::get(uri).body(Body::empty()).unwrap()).await
    }

    /// A GET carrying `Authorization: Bearer <token>` when a token is given.
    pub async fn get_with(&self, uri: &str, token: Option<&str>) -> (StatusCode, Value) {
        let mut req = Request::get(uri);
        if let Some(token) = token {
            req = req.header("authorization", format!("Bearer {token}"));
        }
        self.send(req.body(Body::empty()).unwrap()).await
    }

    /// The text `/metrics` answers, which must be a 200.
    pub async fn metrics(&self) -> String {
        let (status, body) = self.get("/metrics").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body.as_str().expect("metrics are text").to_string()
    }

    /// Posts a run with the ingest token.
    pub async fn submit(&self, body: &Value) -> (StatusCode, Value) {
        self.submit_raw(&self.ingest_token.clone(), serde_json::to_vec(body).unwrap()).await
    }

    pub async fn submit_raw(&self, token: &str, body: Vec<u8>) -> (StatusCode, Value) {
        self.send(
            Request::post("/api/v1/runs")
                .header("content-type", "application/json")
                .header("authorization", format!("Bearer {token}"))
                .body(Body::from(body))
                .unwrap(),
        )
        .await
    }
}

/// Serves `router` on a loopback port as `slopewatch serve` does, with its default timeouts and
/// caps, until the test ends; answers the base URL.
pub async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let limits = slopewatch::config::Limits::default();
    tokio::spawn(async move { slopewatch::http::serve(listener, router, &limits, std::future::pending()).await });
    base
}

pub async fn create_token(store: &Store, name: &str, scope: Scope) -> String {
    let new = auth::generate();
    assert!(store.create_token(name, scope, &new.lookup, &new.hash).await.unwrap());
    new.secret
}

/// A run as an agent sends it, of `workloads` (each `{"name", "size_unit", "measurements", …}`).
pub fn run_of(lineage: &str, version: &str, host: &str, workloads: Vec<Value>) -> Value {
    serde_json::json!({
        "run_id": uuid::Uuid::new_v4(),
        "agent_version": "0.1.0",
        "started_at": "2026-11-29T21:00:00Z",
        "host": {"name": host, "cpu": "Test CPU", "kernel": "6.1.0", "arch": "x86_64"},
        "toolchain": {"name": lineage, "version": version, "libc": "musl 1.2.5", "target": "x86_64-linux-musl",
                      "compiler": "zig cc -target x86_64-linux-musl", "flags": "-O2"},
        "workloads": workloads,
    })
}

/// Five samples a size within ±0.4% of its cost, as `(0..5).map(|k| 1 + 0.002 · (k − 2))` gives.
pub const SPREAD_FIVE: [f64; 5] = [1.0 - 0.004, 1.0 - 0.002, 1.0, 1.0 + 0.002, 1.0 + 0.004];

/// A workload's measurements as an agent sends them: `sizes` sizes doubling from `first_size`,
/// each with a sample per factor of `spread` times `cost(size)` nanoseconds.
pub fn measurements(first_size: u64, sizes: usize, cost: impl Fn(f64) -> f64, spread: &[f64]) -> Vec<Value> {
    (0..sizes)
        .map(|i| {
            let size = first_size << i;
            let t = cost(size as f64);
            let samples: Vec<f64> = spread.iter().map(|f| t * f).collect();
            serde_json::json!({"size": size, "samples_ns": samples})
        })
        .collect()
}

/// A run shaped like an agent's, of one toolchain build on one host: `workloads` string workloads
/// (`workload-0`, …), `sizes` sizes doubling from 64 KiB (or `first_size`), `samples` samples at
/// each, time = c · size^`slope` with a little deterministic jitter. `RunShape::new` starts from one linear
/// workload at four sizes of three samples, from `build-01`; each setter changes one of them.
#[derive(Debug, Clone, Copy)]
pub struct RunShape<'a> {
    lineage: &'a str,
    version: &'a str,
    host: &'a str,
    slope: f64,
    workloads: usize,
    sizes: usize,
    first_size: u64,
    samples: usize,
}

impl<'a> RunShape<'a> {
    pub fn new(lineage: &'a str, version: &'a str) -> RunShape<'a> {
        RunShape {
            lineage,
            version,
            host: "build-01",
            slope: 1.0,
            workloads: 1,
            sizes: 4,
            first_size: 65536,
            samples: 3,
        }
    }

    pub fn host(self, host: &'a str) -> RunShape<'a> {
        RunShape { host, ..self }
    }

    pub fn slope(self, slope: f64) -> RunShape<'a> {
        RunShape { slope, ..self }
    }

    pub fn workloads(self, workloads: usize) -> RunShape<'a> {
        RunShape { workloads, ..self }
    }

    pub fn sizes(self, sizes: usize) -> RunShape<'a> {
        RunShape { sizes, ..self }
    }

    /// The smallest size, doubled for each size after it (64 KiB unless set).
    pub fn first_size(self, first_size: u64) -> RunShape<'a> {
        RunShape { first_size, ..self }
    }

    pub fn samples(self, samples: usize) -> RunShape<'a> {
        RunShape { samples, ..self }
    }

    /// The run as the agent would send it, with a fresh run id.
    pub fn json(self) -> Value {
        let RunShape { lineage, version, host, slope, workloads, sizes, first_size, samples } = self;
        let workloads: Vec<Value> = (0..workloads)
            .map(|w| {
                let measurements: Vec<Value> = (0..sizes)
                    .map(|i| {
                        let size = first_size << i;
                        let base = 0.5 * (size as f64).powf(slope);
                        let samples: Vec<f64> = (0..samples).map(|k| base * (1.0 + 0.01 * ((k * 7 + i * 3 + w) % 5) as f64)).collect();
                        serde_json::json!({"size": size, "samples_ns": samples})
                    })
                    .collect();
                serde_json::json!({"name": format!("workload-{w}"), "size_unit": "bytes", "source_hash": "sha256:00", "measurements": measurements})
            })
            .collect();
        run_of(lineage, version, host, workloads)
    }
}
