//! Ingest throughput over real HTTP on loopback: runs shaped like an agent's (12 workloads × 10
//! sizes × 5 samples) posted by concurrent clients, on Postgres and on SQLite side by side, with
//! a raw bulk load of the same rows as the yardstick.
//!
//! `cargo bench --bench ingest -- [--seconds 15] [--clients 1,8,32] [--backends postgres,sqlite]
//! [--history 0,1500] [--cold]`: the tables are analyzed a second into each load, as autovacuum
//! would on a live server; `--cold` leaves them without statistics.
//! (`RUST_LOG=sqlx=debug` logs every statement with its time on stderr)

use slopewatch::config::Config;
use slopewatch::store::{Arrival, OpenOptions, Scope, Store};
use slopewatch::{app, auth, AppState};
use std::sync::Arc;
use std::time::{Duration, Instant};

const WORKLOADS: usize = 12;
const SIZES: usize = 10;
const SAMPLES: usize = 5;

struct Args {
    seconds: u64,
    clients: Vec<usize>,
    backends: Vec<String>,
    postgres: String,
    history: Vec<usize>,
    /// Leave the tables without planner statistics for the whole timed load.
    cold: bool,
}

fn parse_args() -> Args {
    let mut args = Args {
        seconds: 15,
        clients: vec![1, 8, 32],
        backends: vec!["postgres".into(), "sqlite".into()],
        history: vec![0],
        cold: false,
        postgres: std::env::var("SLOPEWATCH_BENCH_POSTGRES")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into()),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--seconds" => args.seconds = value().parse().expect("--seconds takes a number"),
            "--clients" => {
                args.clients = value().split(',').map(|c| c.parse().expect("--clients takes numbers")).collect()
            }
            "--backends" => args.backends = value().split(',').map(String::from).collect(),
            "--postgres" => args.postgres = value(),
            "--history" => {
                args.history = value().split(',').map(|c| c.parse().expect("--history takes numbers")).collect()
            }
            "--cold" => args.cold = true,
            "--bench" => {}
            other => panic!("unknown flag {other}"),
        }
    }
    args
}

/// Distinct run shapes: hosts, lineages and versions cycle with periods 4, 3 and 30.
const SHAPES: usize = 60;

/// A run like the agent sends, with a placeholder run id that `Bodies::next` replaces; a growing
/// version number spreads the summaries over versions.
fn run_body(i: usize) -> Vec<u8> {
    let workloads: Vec<_> = (0..WORKLOADS)
        .map(|w| {
            let measurements: Vec<_> = (0..SIZES)
                .map(|s| {
                    let size = 65536u64 << s;
                    let samples: Vec<f64> =
                        (0..SAMPLES).map(|k| size as f64 * (1.0 + 0.01 * ((k + s + w + i) % 7) as f64)).collect();
                    serde_json::json!({"size": size, "samples_ns": samples})
                })
                .collect();
            serde_json::json!({"name": format!("bench-{w}"), "size_unit": "bytes", "source_hash": "sha256:bench", "measurements": measurements})
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "run_id": uuid::Uuid::nil(),
        "agent_version": "bench",
        "started_at": "2026-11-29T21:00:00Z",
        "host": {"name": format!("bench-host-{}", i % 4), "cpu": "bench", "kernel": "6.1", "arch": "x86_64"},
        "toolchain": {"name": format!("bench-lineage-{}", i % 3), "version": format!("0.{}.0", i % 30),
                      "libc": "musl", "target": "x86_64-linux-musl", "compiler": "cc", "flags": "-O2"},
        "workloads": workloads,
    }))
    .unwrap()
}

/// Stores `runs` runs through the store directly, spread over the same hosts, lineages and
/// versions as the timed load, so each version already has `runs / 30` runs when the clock starts.
async fn preload(store: &Store, bodies: &Bodies, runs: usize) {
    let intake = slopewatch::intake::Intake::new(store.clone(), &Config::default(), Arc::default());
    for i in 0..runs {
        let run = slopewatch_core::wire::RunSubmission::from_json(&bodies.next(i)).unwrap();
        intake.insert_run(&run, &Arrival::now()).await.unwrap();
    }
}

/// Request bodies built before the clock starts (agents serialize on their own machines), each
/// request getting a fresh run id written over the placeholder.
struct Bodies {
    shapes: Vec<(Vec<u8>, usize)>,
}

impl Bodies {
    fn new() -> Bodies {
        let placeholder = uuid::Uuid::nil().to_string();
        let shapes = (0..SHAPES)
            .map(|i| {
                let body = run_body(i);
                let at = body.windows(placeholder.len()).position(|w| w == placeholder.as_bytes()).unwrap();
                (body, at)
            })
            .collect();
        Bodies { shapes }
    }

    fn next(&self, i: usize) -> Vec<u8> {
        let (template, at) = &self.shapes[i % SHAPES];
        let mut body = template.clone();
        body[*at..*at + 36].copy_from_slice(uuid::Uuid::new_v4().to_string().as_bytes());
        body
    }
}

struct Outcome {
    runs: usize,
    errors: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

async fn load(base: &str, token: &str, clients: usize, seconds: u64, bodies: Arc<Bodies>) -> Outcome {
    let client = reqwest::Client::builder().pool_max_idle_per_host(clients).build().unwrap();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (client, url, token) = (client.clone(), format!("{base}/api/v1/runs"), token.to_string());
            let bodies = bodies.clone();
            tokio::spawn(async move {
                let (mut latencies, mut errors, mut i) = (Vec::new(), 0, c * 7);
                while Instant::now() < deadline {
                    let body = bodies.next(i);
                    i += 1;
                    let t = Instant::now();
                    let res = client
                        .post(&url)
                        .bearer_auth(&token)
                        .header("content-type", "application/json")
                        .body(body)
                        .send()
                        .await;
                    match res {
                        Ok(r) if r.status() == 201 => latencies.push(t.elapsed()),
                        _ => errors += 1,
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut out = Outcome { runs: 0, errors: 0, elapsed: Duration::ZERO, latencies: Vec::new() };
    for t in tasks {
        let (lat, err) = t.await.unwrap();
        out.runs += lat.len();
        out.errors += err;
        out.latencies.extend(lat);
    }
    out.elapsed = start.elapsed();
    out.latencies.sort();
    out
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

/// A fresh database for one backend; returns its URL and a clean-up for Postgres.
async fn fresh_database(backend: &str, admin: &str, dir: &std::path::Path) -> (String, Option<String>) {
    match backend {
        "sqlite" => (format!("sqlite://{}", dir.join(format!("bench-{}.db", uuid::Uuid::new_v4())).display()), None),
        "postgres" => {
            let name = format!("slopewatch_bench_{}", uuid::Uuid::new_v4().simple());
            let pool = sqlx::PgPool::connect(admin).await.expect("Postgres must be running");
            sqlx::query(&format!("CREATE DATABASE {name}")).execute(&pool).await.unwrap();
            let mut url = url::Url::parse(admin).unwrap();
            url.set_path(&name);
            (url.to_string(), Some(name))
        }
        other => panic!("unknown backend {other}"),
    }
}

/// Gathers planner statistics, as autovacuum does.
async fn analyze_tables(url: &str) {
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        sqlx::query("ANALYZE").execute(&pool).await.unwrap();
        pool.close().await;
    } else {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        sqlx::query("ANALYZE").execute(&pool).await.unwrap();
        pool.close().await;
    }
}

async fn drop_database(admin: &str, name: &str) {
    let pool = sqlx::PgPool::connect(admin).await.unwrap();
    sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&pool).await.unwrap();
}

/// One run's sample rows as `COPY` text.
fn copy_rows(run: usize) -> String {
    let id = uuid::Uuid::new_v4();
    let mut buf = String::new();
    for i in 0..WORKLOADS * SIZES * SAMPLES {
        buf.push_str(&format!("{id}\t{}\t{}\t{}\t{}\n", i / 50, 65536u64 << (i / 5 % 10), i % 5, 1e6 + run as f64));
    }
    buf
}

/// One run's sample rows as one multi-row insert into SQLite table `table`.
async fn insert_sqlite_rows(tx: &mut sqlx::SqliteConnection, table: &str, run: usize) {
    let id = uuid::Uuid::new_v4();
    let mut q = sqlx::QueryBuilder::new(format!("INSERT INTO {table} (run_id, workload_id, size, rep, ns) "));
    q.push_values(0..WORKLOADS * SIZES * SAMPLES, |mut b, i| {
        b.push_bind(id)
            .push_bind((i / 50) as i64)
            .push_bind((65536u64 << (i / 5 % 10)) as i64)
            .push_bind((i % 5) as i32)
            .push_bind(1e6 + run as f64);
    });
    q.build().execute(tx).await.unwrap();
}

/// The same rows again, loaded as runs arrive: each run's rows in a transaction of its own
/// (`COPY` on Postgres, one multi-row insert on SQLite), `clients` runs at a time. What storing
/// runs one by one, durably, costs before any of the API's work.
async fn raw_per_run_load(url: &str, runs: usize, clients: usize) -> Duration {
    if url.starts_with("postgres") {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        sqlx::query("CREATE TABLE raw_runs (run_id uuid, workload_id bigint, size bigint, rep int, ns float8)")
            .execute(&pool)
            .await
            .unwrap();
        let shapes: Arc<Vec<String>> = Arc::new((0..SHAPES).map(copy_rows).collect());
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let start = Instant::now();
        let tasks: Vec<_> = (0..clients)
            .map(|_| {
                let (pool, next, shapes) = (pool.clone(), next.clone(), shapes.clone());
                tokio::spawn(async move {
                    loop {
                        let run = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if run >= runs {
                            break;
                        }
                        let mut tx = pool.begin().await.unwrap();
                        let mut copy = tx.copy_in_raw("COPY raw_runs FROM STDIN").await.unwrap();
                        copy.send(shapes[run % SHAPES].as_bytes()).await.unwrap();
                        copy.finish().await.unwrap();
                        tx.commit().await.unwrap();
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        start.elapsed()
    } else {
        // As the store's own connections: WAL, and no fsync at each commit.
        let options = <sqlx::sqlite::SqliteConnectOptions as std::str::FromStr>::from_str(url)
            .unwrap()
            .synchronous(sqlx::sqlite::SqliteSynchronous::Normal);
        let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
        sqlx::query("CREATE TABLE raw_runs (run_id blob, workload_id integer, size integer, rep integer, ns real)")
            .execute(&pool)
            .await
            .unwrap();
        let start = Instant::now();
        for run in 0..runs {
            let mut tx = pool.begin().await.unwrap();
            insert_sqlite_rows(&mut tx, "raw_runs", run).await;
            tx.commit().await.unwrap();
        }
        start.elapsed()
    }
}

/// The same rows as `runs` API submissions, loaded with the backend's fastest bulk path:
/// `COPY` on Postgres, one transaction of multi-row inserts on SQLite.
async fn raw_bulk_load(url: &str, runs: usize) -> Duration {
    if url.starts_with("postgres") {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        sqlx::query("CREATE TABLE raw_samples (run_id uuid, workload_id bigint, size bigint, rep int, ns float8)")
            .execute(&pool)
            .await
            .unwrap();
        let shapes: Vec<String> = (0..SHAPES).map(copy_rows).collect();
        let mut conn = pool.acquire().await.unwrap();
        let start = Instant::now();
        let mut copy = conn.copy_in_raw("COPY raw_samples FROM STDIN").await.unwrap();
        let mut buf = String::new();
        for r in 0..runs {
            buf.push_str(&shapes[r % SHAPES]);
            if buf.len() > 1 << 20 {
                copy.send(std::mem::take(&mut buf).into_bytes()).await.unwrap();
            }
        }
        copy.send(buf.into_bytes()).await.unwrap();
        copy.finish().await.unwrap();
        start.elapsed()
    } else {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        sqlx::query("CREATE TABLE raw_samples (run_id blob, workload_id integer, size integer, rep integer, ns real)")
            .execute(&pool)
            .await
            .unwrap();
        let start = Instant::now();
        let mut tx = pool.begin().await.unwrap();
        for run in 0..runs {
            insert_sqlite_rows(&mut tx, "raw_samples", run).await;
        }
        tx.commit().await.unwrap();
        start.elapsed()
    }
}

#[tokio::main]
async fn main() {
    // RUST_LOG=sqlx=debug shows every statement with its time, to find where a run's time goes.
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_default_env() {
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    }
    let args = parse_args();
    let dir = tempfile::tempdir().unwrap();
    let bodies = Arc::new(Bodies::new());
    println!(
        "ingest over HTTP on loopback: runs of {WORKLOADS} workloads × {SIZES} sizes × {SAMPLES} samples, {} s per point, {}",
        args.seconds,
        if args.cold { "tables never analyzed" } else { "tables analyzed 1 s in" }
    );
    println!(
        "{:<9} {:>7} {:>8} {:>9} {:>11} {:>8} {:>8} {:>7} {:>12} {:>8} {:>13} {:>7}",
        "backend",
        "clients",
        "history",
        "runs/s",
        "samples/s",
        "p50 ms",
        "p99 ms",
        "errors",
        "bulk runs/s",
        "api/bulk",
        "per-run tx/s",
        "api/tx"
    );
    for backend in &args.backends {
        for (&clients, &history) in args.clients.iter().flat_map(|c| args.history.iter().map(move |h| (c, h))) {
            let (url, pg_name) = fresh_database(backend, &args.postgres, dir.path()).await;
            let store = slopewatch::intake::open_and_migrate(&url, &OpenOptions { max_connections: 16 }).await.unwrap();
            preload(&store, &bodies, history).await;
            let new = auth::generate();
            store.create_token("bench", Scope::Ingest, &new.lookup, &new.hash).await.unwrap();
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            let router = app(AppState::new(store.clone(), Config::default()));
            let limits = slopewatch::config::Limits::default();
            let server = tokio::spawn(async move {
                slopewatch::http::serve(listener, router, &limits, std::future::pending()).await.unwrap()
            });

            // A database a few seconds old has no planner statistics, so Postgres plans the
            // summary passes' lookups by run id as scans of whole tables. Autovacuum analyzes a
            // live server's tables within a minute of its first runs; here, a second into the load.
            let analyze = (!args.cold).then(|| {
                let url = url.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    analyze_tables(&url).await
                })
            });
            let out = load(&base, &new.secret, clients, args.seconds, bodies.clone()).await;
            if let Some(analyze) = analyze {
                analyze.await.unwrap();
            }
            server.abort();
            store.close().await;
            let runs_per_s = out.runs as f64 / out.elapsed.as_secs_f64();
            let bulk = raw_bulk_load(&url, out.runs.max(1)).await;
            let bulk_runs_per_s = out.runs.max(1) as f64 / bulk.as_secs_f64();
            let per_run = raw_per_run_load(&url, out.runs.max(1), clients).await;
            let per_run_per_s = out.runs.max(1) as f64 / per_run.as_secs_f64();
            println!(
                "{:<9} {:>7} {:>8} {:>9.1} {:>11.0} {:>8.1} {:>8.1} {:>7} {:>12.1} {:>8.2} {:>13.1} {:>7.2}",
                backend,
                clients,
                history,
                runs_per_s,
                runs_per_s * (WORKLOADS * SIZES * SAMPLES) as f64,
                percentile(&out.latencies, 0.5),
                percentile(&out.latencies, 0.99),
                out.errors,
                bulk_runs_per_s,
                runs_per_s / bulk_runs_per_s,
                per_run_per_s,
                runs_per_s / per_run_per_s,
            );
            if let Some(name) = pg_name {
                drop_database(&args.postgres, &name).await;
            }
        }
    }
}
