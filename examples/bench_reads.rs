//! Dashboard read benchmark: builds a history of runs through the store, then times the
//! overview, the series page, each chart and the comparison, at the full history and at a tenth
//! of it, and prints medians, p99s and the growth ratio. The history grows in samples (more runs
//! of 30 versions) or, with `--grow versions`, in versions (one run of each of `--versions`
//! versions against a tenth as many).
//!
//! cargo run --release --example bench_reads -- \
//!     --database-url postgres://postgres@127.0.0.1/postgres --samples 1000000
//! cargo run --release --example bench_reads -- --grow versions --versions 200
//!
//! On Postgres it creates its own database beside the one in the URL and drops it afterwards;
//! with `sqlite://` it uses a temporary file.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use futures_util::stream::{self, StreamExt};
use http_body_util::BodyExt;
use slopewatch::config::Config;
use slopewatch::store::{Arrival, OpenOptions, Store};
use slopewatch::{app, AppState};
use slopewatch_core::wire::RunSubmission;
use std::time::{Duration, Instant};
use tower::ServiceExt;

const LINEAGES: [&str; 3] = ["zig-cc-musl", "musl-gcc", "gcc-glibc"];
/// Versions per lineage when the history grows in samples.
const VERSIONS: usize = 30;
const WORKLOADS: usize = 12;
const SIZES: usize = 8;
const REPS: usize = 6;
const ITERATIONS: usize = 100;

struct Args {
    database_url: String,
    samples: usize,
    /// Grow the history in versions rather than in samples.
    grow_versions: bool,
    versions: usize,
}

fn args() -> Args {
    let mut args = Args {
        database_url: "postgres://postgres@127.0.0.1/postgres".into(),
        samples: 1_000_000,
        grow_versions: false,
        versions: 200,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--database-url" => args.database_url = value,
            "--samples" => args.samples = value.parse().expect("--samples is a number"),
            "--versions" => args.versions = value.parse().expect("--versions is a number"),
            "--grow" => match value.as_str() {
                "samples" => args.grow_versions = false,
                "versions" => args.grow_versions = true,
                other => panic!("--grow takes samples or versions, not {other}"),
            },
            other => {
                panic!("unknown flag {other}; use --database-url URL --samples N --grow samples|versions --versions N")
            }
        }
    }
    args
}

/// A database of its own, removed on drop.
struct BenchDb {
    url: String,
    admin: Option<(String, String)>,
    _dir: Option<tempfile::TempDir>,
}

impl BenchDb {
    async fn create(base: &str) -> BenchDb {
        if base.starts_with("sqlite:") {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}", dir.path().join("bench.db").display());
            return BenchDb { url, admin: None, _dir: Some(dir) };
        }
        let name = format!("slopewatch_bench_{}", uuid::Uuid::new_v4().simple());
        let admin = sqlx::PgPool::connect(base).await.expect("connect to Postgres");
        sqlx::query(&format!("CREATE DATABASE {name}")).execute(&admin).await.unwrap();
        admin.close().await;
        let mut url = url::Url::parse(base).unwrap();
        url.set_path(&name);
        BenchDb { url: url.to_string(), admin: Some((base.to_string(), name)), _dir: None }
    }

    async fn drop_database(self) {
        if let Some((base, name)) = self.admin {
            let admin = sqlx::PgPool::connect(&base).await.unwrap();
            sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&admin).await.unwrap();
        }
    }
}

/// One agent-shaped run: every workload at SIZES doubling sizes, REPS samples each. Zig's
/// string workloads turn quadratic from version 20 on; everything else stays linear.
fn run(lineage: &str, version: usize, rep: usize) -> RunSubmission {
    let quadratic = lineage == "zig-cc-musl" && version >= 20;
    let workloads: Vec<serde_json::Value> = (0..WORKLOADS)
        .map(|w| {
            let slope = if quadratic && w % 3 == 0 { 2.0 } else { 1.0 + 0.004 * ((version + w) % 5) as f64 };
            let measurements: Vec<serde_json::Value> = (0..SIZES)
                .map(|i| {
                    let size = 65536u64 << i;
                    let base = 0.4 * (size as f64).powf(slope);
                    let samples: Vec<f64> =
                        (0..REPS).map(|k| base * (1.0 + 0.01 * ((k * 7 + i * 3 + w + rep) % 5) as f64)).collect();
                    serde_json::json!({"size": size, "samples_ns": samples})
                })
                .collect();
            serde_json::json!({"name": format!("workload-{w:02}"), "size_unit": "bytes",
                               "source_hash": "sha256:00", "measurements": measurements})
        })
        .collect();
    let body = serde_json::json!({
        "run_id": uuid::Uuid::new_v4(),
        "agent_version": "0.1.0",
        "started_at": "2026-11-29T21:00:00Z",
        "host": {"name": format!("build-{:02}", rep % 4), "cpu": "Bench CPU", "kernel": "6.1.0", "arch": "x86_64"},
        "toolchain": {"name": lineage, "version": format!("0.{version}.0"), "libc": "libc", "target": "x86_64-linux",
                      "compiler": "cc", "flags": "-O2"},
        "workloads": workloads,
    });
    RunSubmission::from_json(&serde_json::to_vec(&body).unwrap()).expect("a valid run")
}

async fn fill(store: &Store, versions: usize, runs_per_version: usize) -> usize {
    let jobs: Vec<(&str, usize, usize)> = LINEAGES
        .iter()
        .flat_map(|&l| (0..versions).flat_map(move |v| (0..runs_per_version).map(move |r| (l, v, r))))
        .collect();
    let total = jobs.len();
    let intake = &slopewatch::intake::Intake::new(store.clone(), &Config::default(), Default::default());
    stream::iter(jobs)
        .map(|(l, v, r)| async move {
            let submission = run(l, v, r);
            intake.insert_run(&submission, &Arrival::now()).await.unwrap();
        })
        .buffer_unordered(8)
        .collect::<Vec<()>>()
        .await;
    // Runs stored while a pass was under way wait for the next; take them in before timing.
    intake.summarize_pending().await.unwrap();
    total
}

/// Median and p99 of ITERATIONS requests after a warm-up.
async fn time(router: &axum::Router, uri: &str) -> (Duration, Duration) {
    let get = || async {
        let res = router.clone().oneshot(Request::get(uri).body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{uri}");
        res.into_body().collect().await.unwrap();
    };
    for _ in 0..3 {
        get().await;
    }
    let mut times = Vec::with_capacity(ITERATIONS);
    for _ in 0..ITERATIONS {
        let began = Instant::now();
        get().await;
        times.push(began.elapsed());
    }
    times.sort();
    (times[times.len() / 2], times[(times.len() * 99 / 100).min(times.len() - 1)])
}

const PAGE_NAMES: [&str; 8] = [
    "overview /",
    "series page",
    "slope chart",
    "log-log chart",
    "compare page",
    "compare chart",
    "series CSV",
    "series API",
];

/// The pages timed, comparing the last version of two lineages.
fn pages(versions: usize) -> [String; 8] {
    let last = versions - 1;
    let pair = format!("workload=workload-00&a=musl-gcc%400.{last}.0&b=zig-cc-musl%400.{last}.0");
    [
        "/".into(),
        "/series/workload-00/zig-cc-musl".into(),
        "/series/workload-00/zig-cc-musl/slope.svg".into(),
        "/series/workload-00/zig-cc-musl/loglog.svg".into(),
        format!("/compare?{pair}"),
        format!("/compare/chart.svg?{pair}"),
        "/series/workload-00/zig-cc-musl/data.csv".into(),
        "/api/v1/series?workload=workload-00&toolchain=zig-cc-musl".into(),
    ]
}

async fn measure_at(base_url: &str, versions: usize, runs_per_version: usize) -> (usize, Vec<(Duration, Duration)>) {
    let db = BenchDb::create(base_url).await;
    let store = slopewatch::intake::open_and_migrate(&db.url, &OpenOptions::default()).await.unwrap();
    let began = Instant::now();
    let runs = fill(&store, versions, runs_per_version).await;
    let samples = runs * WORKLOADS * SIZES * REPS;
    eprintln!("{} runs, {samples} samples stored in {:.1?} on {}", runs, began.elapsed(), store.backend_name());
    if db.admin.is_some() {
        // Statistics as autovacuum would leave them, and no vacuum racing the measurements.
        let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
        sqlx::query("VACUUM ANALYZE").execute(&pool).await.unwrap();
        pool.close().await;
    }
    let router = app(AppState::new(store.clone(), Config::default()));
    let mut results = Vec::new();
    for uri in pages(versions) {
        results.push(time(&router, &uri).await);
    }
    store.close().await;
    db.drop_database().await;
    (samples, results)
}

#[tokio::main]
async fn main() {
    let args = args();
    let per_version = |samples: usize| {
        let per_run_set = LINEAGES.len() * VERSIONS * WORKLOADS * SIZES * REPS;
        ((samples as f64 / per_run_set as f64).round() as usize).max(1)
    };
    let ((large_n, large), (small_n, small)) = if args.grow_versions {
        let small_versions = (args.versions / 10).max(2);
        (
            measure_at(&args.database_url, args.versions, 1).await,
            measure_at(&args.database_url, small_versions, 1).await,
        )
    } else {
        (
            measure_at(&args.database_url, VERSIONS, per_version(args.samples)).await,
            measure_at(&args.database_url, VERSIONS, per_version(args.samples / 10)).await,
        )
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    // The growth as a log-log slope, as the product fits workloads: 0 is flat, 1 linear in history.
    let slope =
        |small: Duration, large: Duration| (ms(large) / ms(small)).ln() / (large_n as f64 / small_n as f64).ln();
    println!(
        "\n{:<15} {:>22} {:>22} {:>9} {:>7}",
        "",
        format!("{small_n} samples"),
        format!("{large_n} samples"),
        "growth",
        "slope"
    );
    println!(
        "{:<15} {:>10} {:>11} {:>10} {:>11} {:>9} {:>7}",
        "request", "median ms", "p99 ms", "median ms", "p99 ms", "(median)", ""
    );
    for (i, name) in PAGE_NAMES.iter().enumerate() {
        let (s, l) = (small[i], large[i]);
        println!(
            "{:<15} {:>10.2} {:>11.2} {:>10.2} {:>11.2} {:>8.2}x {:>7.2}",
            name,
            ms(s.0),
            ms(s.1),
            ms(l.0),
            ms(l.1),
            ms(l.0) / ms(s.0),
            slope(s.0, l.0)
        );
    }
}
