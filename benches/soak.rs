//! A day of load, compressed: two replicas of the real server binary on one fresh Postgres
//! database, agents posting runs at a steady rate across lineages and versions (some resent, some
//! lineages turning quadratic so regressions open and webhooks fire), a webhook receiver, readers
//! loading the pages, and retention pruning every minute the history imported as it goes.
//!
//! `cargo bench --bench soak -- [--minutes 20] [--seconds N] [--sample-secs 60] [--rate 2]
//! [--reads 2] [--retention-secs 60] [--postgres URL]`
//!
//! Each sample prints the replicas' memory and CPU, ingest and read latency, the summary lag, the
//! outbox depth and the database size; the end prints each one's growth and the targets, PASS or
//! FAIL. It exits non-zero when a run was not stored exactly once or an alert not delivered once.

use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

const WORKLOADS: usize = 12;
const SIZES: usize = 10;
const SAMPLES: usize = 5;
const LINEAGES: usize = 8;
const HOSTS: usize = 4;
/// Runs of one lineage on one host per version: a lineage moves to its next version every
/// `LINEAGES * HOSTS * RUNS_PER_VERSION` runs.
const RUNS_PER_VERSION: usize = 2;
/// Lineages `0..REGRESSING` turn quadratic for two versions in every eight.
const REGRESSING: usize = 3;
/// One run in this many is sent a second time, to the other replica.
const RESEND_EVERY: usize = 10;
/// Runs per import of old history.
const HISTORY_BATCH: usize = 10;
const SECRET: &str = "soak-bench-webhook-secret-0123456789";

struct Args {
    duration: Duration,
    sample: Duration,
    /// Runs posted per second.
    rate: f64,
    /// Pages read per second.
    reads: f64,
    retention: Duration,
    postgres: String,
}

fn parse_args() -> Args {
    let mut args = Args {
        duration: Duration::from_secs(20 * 60),
        sample: Duration::from_secs(60),
        rate: 2.0,
        reads: 2.0,
        retention: Duration::from_secs(60),
        postgres: std::env::var("SLOPEWATCH_BENCH_POSTGRES")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into()),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        let mut number = |what: &str| -> f64 { value().parse().unwrap_or_else(|_| panic!("{flag} takes {what}")) };
        match flag.as_str() {
            "--minutes" => args.duration = Duration::from_secs_f64(number("minutes") * 60.0),
            "--seconds" => args.duration = Duration::from_secs_f64(number("seconds")),
            "--sample-secs" => args.sample = Duration::from_secs_f64(number("seconds")),
            "--rate" => args.rate = number("runs per second"),
            "--reads" => args.reads = number("reads per second"),
            "--retention-secs" => args.retention = Duration::from_secs(number("seconds") as u64),
            "--postgres" => args.postgres = value(),
            "--bench" => {}
            other => panic!("unknown flag {other}"),
        }
    }
    assert!(args.rate > 0.0 && args.reads > 0.0 && !args.sample.is_zero(), "rates and the sample period must be > 0");
    args
}

/// Lineage `l`'s slope at version `v`: quadratic for two versions in every eight for the
/// regressing lineages, each at a different phase; linear otherwise.
fn slope(l: usize, v: usize) -> f64 {
    if l < REGRESSING && matches!((v + 3 * l) % 8, 4 | 5) {
        2.0
    } else {
        1.0
    }
}

/// Run `i` of the steady stream: its lineage, host and version.
fn place(i: usize) -> (usize, usize, usize) {
    (i % LINEAGES, (i / LINEAGES) % HOSTS, i / (LINEAGES * HOSTS * RUNS_PER_VERSION))
}

/// The newest version every lineage has been sent whole, once run `sent` is on its way.
fn versions_done(sent: usize) -> Option<usize> {
    (sent / (LINEAGES * HOSTS * RUNS_PER_VERSION)).checked_sub(1)
}

/// A run as the agent sends it: `WORKLOADS` workloads of `SIZES` sizes doubling from 1 KiB,
/// `SAMPLES` samples each, time ∝ size^slope with a little deterministic jitter.
fn run_json(id: Uuid, lineage: &str, version: &str, host: &str, slope: f64) -> serde_json::Value {
    let workloads: Vec<_> = (0..WORKLOADS)
        .map(|w| {
            let measurements: Vec<_> = (0..SIZES)
                .map(|s| {
                    let size = 1024u64 << s;
                    let base = 0.5 * (size as f64).powf(slope);
                    let samples: Vec<f64> =
                        (0..SAMPLES).map(|k| base * (1.0 + 0.01 * ((k * 7 + s * 3 + w) % 5) as f64)).collect();
                    serde_json::json!({"size": size, "samples_ns": samples})
                })
                .collect();
            serde_json::json!({"name": format!("workload-{w}"), "size_unit": "bytes", "source_hash": "sha256:00",
                               "measurements": measurements})
        })
        .collect();
    serde_json::json!({
        "run_id": id,
        "agent_version": "soak",
        "started_at": "2026-11-29T21:00:00Z",
        "host": {"name": host, "cpu": "soak", "kernel": "6.1", "arch": "x86_64"},
        "toolchain": {"name": lineage, "version": version, "libc": "musl", "target": "x86_64-linux-musl",
                      "compiler": "cc", "flags": "-O2"},
        "workloads": workloads,
    })
}

/// A replica: the real `slopewatch serve`, killed when dropped.
struct Replica {
    child: Child,
    url: String,
}

impl Replica {
    fn start(database_url: &str, config: &Path, log: &Path) -> Replica {
        let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let out = std::fs::File::create(log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_slopewatch"))
            .args(["serve", "--bind", &addr.to_string(), "--database-url", database_url, "--log-format", "json"])
            .arg("--config")
            .arg(config)
            .env("RUST_LOG", "warn")
            .env_remove("SLOPEWATCH_CONFIG")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap();
        let mut replica = Replica { child, url: format!("http://{addr}") };
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(addr).is_err() {
            if let Ok(Some(status)) = replica.child.try_wait() {
                panic!("a replica exited with {status}: {}", std::fs::read_to_string(log).unwrap_or_default());
            }
            assert!(Instant::now() < deadline, "a replica did not start: {}", log.display());
            std::thread::sleep(Duration::from_millis(50));
        }
        replica
    }

    /// Resident memory, MiB (`VmRSS`).
    fn rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let kib = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next());
        kib.and_then(|k| k.parse::<f64>().ok()).unwrap_or(f64::NAN) / 1024.0
    }

    /// CPU time used so far, seconds (user and system, from `/proc/PID/stat`).
    fn cpu_secs(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
        let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        // utime and stime, fields 14 and 15 of the line (counted here from the field after the
        // command name), in clock ticks: 100 a second on Linux.
        (ticks(11) + ticks(12)) / 100.0
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Webhook deliveries received, by `X-Slopewatch-Delivery` id.
type Received = Arc<Mutex<BTreeMap<String, u32>>>;

async fn start_receiver() -> (String, Received) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let received: Received = Arc::default();
    let counted = received.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap| {
            let counted = counted.clone();
            async move {
                let id = headers.get(slopewatch::webhooks::signing::DELIVERY_HEADER);
                let id = id.and_then(|v| v.to_str().ok()).unwrap_or("(none)").to_string();
                *counted.lock().unwrap().entry(id).or_default() += 1;
                axum::http::StatusCode::OK
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/hook"), received)
}

/// Latencies of the current sample period, and what the load did overall.
#[derive(Default)]
struct Load {
    ingest: Mutex<Vec<Duration>>,
    reads: Mutex<Vec<Duration>>,
    /// Every run id answered 201 or 200.
    stored: Mutex<BTreeSet<Uuid>>,
    sent: AtomicUsize,
    resent: AtomicUsize,
    /// Resends answered other than 200, first sends answered 200 without a retry, and runs
    /// given up after their retries: each one a run not stored exactly once as far as the client knows.
    wrong_answers: AtomicUsize,
    ingest_errors: AtomicUsize,
    read_errors: AtomicUsize,
    regressions: Mutex<Vec<i64>>,
}

/// Posts `body` to the replicas starting with `first`, moving on to the other on a failure, as a
/// load balancer would; answers whether it was stored (201, or 200 after a retry or for a resend).
async fn post_run(
    c: &reqwest::Client,
    urls: &[String],
    first: usize,
    token: &str,
    body: &[u8],
    resend: bool,
    load: &Load,
) -> bool {
    for attempt in 0..6 {
        let url = &urls[(first + attempt) % urls.len()];
        let t = Instant::now();
        let res = c
            .post(format!("{url}/api/v1/runs"))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body.to_vec())
            .send()
            .await;
        let status = res.as_ref().map_or(0, |r| r.status().as_u16());
        match status {
            201 | 200 => {
                load.ingest.lock().unwrap().push(t.elapsed());
                // A retried upload may have been stored by the attempt that failed; a resend must have been.
                let as_expected = if resend { status == 200 } else { status == 201 || attempt > 0 };
                if !as_expected {
                    load.wrong_answers.fetch_add(1, Ordering::Relaxed);
                }
                return true;
            }
            _ => {
                load.ingest_errors.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    load.wrong_answers.fetch_add(1, Ordering::Relaxed);
    false
}

/// The agents: `rate` runs a second, each to the next replica in turn, one in `RESEND_EVERY`
/// sent again (same id, same content) to the other, until `until`.
async fn agents(urls: Vec<String>, token: String, rate: f64, until: Instant, load: Arc<Load>) {
    let c = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // At most this many uploads in flight: a server falling behind slows the agents down.
    let slots = Arc::new(tokio::sync::Semaphore::new(8));
    let mut i = 0;
    let mut tasks = tokio::task::JoinSet::new();
    while Instant::now() < until {
        tick.tick().await;
        let permit = slots.clone().acquire_owned().await.unwrap();
        let (l, h, v) = place(i);
        let id = Uuid::new_v4();
        let run = run_json(id, &format!("lineage-{l}"), &format!("1.{v}.0"), &format!("host-{h}"), slope(l, v));
        let body = serde_json::to_vec(&run).unwrap();
        let (c, urls, token, load) = (c.clone(), urls.clone(), token.clone(), load.clone());
        load.sent.store(i + 1, Ordering::Relaxed);
        tasks.spawn(async move {
            if post_run(&c, &urls, i, &token, &body, false, &load).await {
                load.stored.lock().unwrap().insert(id);
                if i % RESEND_EVERY == 0 {
                    load.resent.fetch_add(1, Ordering::Relaxed);
                    post_run(&c, &urls, i + 1, &token, &body, true, &load).await;
                }
            }
            drop(permit);
        });
        while tasks.try_join_next().is_some() {}
        i += 1;
    }
    while tasks.join_next().await.is_some() {}
}

/// The readers: `rate` page loads a second over the overview, series pages, comparisons of a
/// lineage's last two versions and regression pages, alternating replicas, until `until`.
async fn readers(urls: Vec<String>, rate: f64, until: Instant, load: Arc<Load>) {
    let c = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut i = 0usize;
    while Instant::now() < until {
        tick.tick().await;
        let (l, w) = (i / 4 % LINEAGES, i / 4 % WORKLOADS);
        let regression = {
            let ids = load.regressions.lock().unwrap();
            (!ids.is_empty()).then(|| ids[i / 4 % ids.len()])
        };
        let path = match (i % 4, versions_done(load.sent.load(Ordering::Relaxed)), regression) {
            (1, _, _) => format!("/series/workload-{w}/lineage-{l}"),
            (2, Some(v), _) if v >= 1 => {
                format!("/compare?workload=workload-{w}&a=lineage-{l}%401.{}.0&b=lineage-{l}%401.{v}.0", v - 1)
            }
            (3, _, Some(id)) => format!("/regressions/{id}"),
            _ => "/".to_string(),
        };
        let t = Instant::now();
        let res = c.get(format!("{}{path}", urls[i % urls.len()])).send().await;
        let read = match res {
            Ok(res) if res.status() == 200 => res.bytes().await.is_ok(),
            _ => false,
        };
        if read {
            load.reads.lock().unwrap().push(t.elapsed());
        } else {
            load.read_errors.fetch_add(1, Ordering::Relaxed);
        }
        i += 1;
    }
}

/// Old history, imported with `slopewatch import` as when moving a server: runs received three
/// days ago, which the next retention pass prunes. Answers the ids imported.
fn import_history(database_url: &str, dir: &Path, batch: usize) -> Vec<Uuid> {
    let received = time::OffsetDateTime::now_utc() - time::Duration::days(3);
    let rfc3339 = |t: time::OffsetDateTime| t.format(&time::format_description::well_known::Rfc3339).unwrap();
    let mut lines =
        vec![serde_json::json!({"kind": "slopewatch_export", "format": 1, "exported_at": rfc3339(received),
                                             "slopewatch": env!("CARGO_PKG_VERSION"), "backend": "postgres"})];
    let ids: Vec<Uuid> = (0..HISTORY_BATCH).map(|_| Uuid::new_v4()).collect();
    for (k, id) in ids.iter().enumerate() {
        let run = run_json(*id, "history", &format!("0.{batch}.0"), &format!("host-{}", k % HOSTS), 1.0);
        let digest = hex::encode(Sha256::digest(serde_json::to_vec(&run).unwrap()));
        lines.push(serde_json::json!({"kind": "run", "received_at": rfc3339(received),
                                      "content_hash": format!("sha256:{digest}"), "run": run}));
    }
    lines.push(
        serde_json::json!({"kind": "end", "runs": ids.len(), "pruned_runs": 0, "regression_edits": 0, "tokens": 0}),
    );
    let file = dir.join(format!("history-{batch}.jsonl"));
    std::fs::write(&file, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_slopewatch"))
        .args(["import", "--database-url", database_url, "--input"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "import failed: {}", String::from_utf8_lossy(&out.stderr));
    ids
}

/// A gauge or counter's value in a `/metrics` text.
fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(f64::NAN)
}

async fn scrape(c: &reqwest::Client, url: &str) -> String {
    match c.get(format!("{url}/metrics")).send().await {
        Ok(res) => res.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

#[path = "soak/report.rs"]
mod report;
use report::{Sample, Series};

#[tokio::main]
async fn main() {
    let args = parse_args();
    let dir = tempfile::tempdir().unwrap();
    let name = format!("slopewatch_soak_{}", Uuid::new_v4().simple());
    let admin = sqlx::PgPool::connect(&args.postgres).await.expect("Postgres must be running");
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&admin).await.unwrap();
    let mut url = url::Url::parse(&args.postgres).unwrap();
    url.set_path(&name);
    let database_url = url.to_string();
    let soaked = tokio::spawn(async move { soak(&args, &database_url, dir.path()).await }).await;
    // Dropped whatever happened, a panic included.
    sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&admin).await.unwrap();
    match soaked {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(panic) => std::panic::resume_unwind(panic.into_panic()),
    }
}

/// The soak on a fresh database; answers whether every run was stored once and every alert
/// delivered once.
async fn soak(args: &Args, database_url: &str, dir: &Path) -> bool {
    let (hook, received) = start_receiver().await;
    let config = dir.join("soak.toml");
    std::fs::write(
        &config,
        format!(
            "[alerts]\nretry_base_ms = 200\nretry_max_ms = 2000\npoll_ms = 200\ntimeout_ms = 5000\n\n\
             [retention]\nsamples_days = 1\nevery_secs = {}\n\n\
             [[webhooks]]\nname = \"soak\"\nurl = \"{hook}\"\nsecret = \"{SECRET}\"\n",
            args.retention.as_secs()
        ),
    )
    .unwrap();
    // The first replica migrates the new database; the second finds it done.
    let replicas: Vec<Replica> =
        (0..2).map(|r| Replica::start(database_url, &config, &dir.join(format!("replica-{r}.log")))).collect();
    let urls: Vec<String> = replicas.iter().map(|r| r.url.clone()).collect();
    let token = token(database_url);
    let db = sqlx::postgres::PgPoolOptions::new().max_connections(2).connect(database_url).await.unwrap();

    println!(
        "soak: 2 replicas on one Postgres, {:.0} s sampled every {:.0} s; agents {} runs/s ({WORKLOADS} workloads × {SIZES} \
         sizes × {SAMPLES} samples, {LINEAGES} lineages × {HOSTS} hosts, a new version each {} runs, {REGRESSING} lineages \
         turning quadratic, 1 run in {RESEND_EVERY} resent), readers {} pages/s, retention every {} s over {HISTORY_BATCH} \
         runs of 3-day-old history imported each sample",
        args.duration.as_secs_f64(),
        args.sample.as_secs_f64(),
        args.rate,
        LINEAGES * HOSTS * RUNS_PER_VERSION,
        args.reads,
        args.retention.as_secs(),
    );
    println!("{}", Sample::header());
    let start = Instant::now();
    let until = start + args.duration;
    let load = Arc::new(Load::default());
    let agents = tokio::spawn(agents(urls.clone(), token, args.rate, until, load.clone()));
    let readers = tokio::spawn(readers(urls.clone(), args.reads, until, load.clone()));
    let c = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let mut samples = Vec::new();
    let mut imported: Vec<(Instant, Uuid)> = Vec::new();
    let mut cpu: Vec<f64> = replicas.iter().map(Replica::cpu_secs).collect();
    let mut last = start;
    while last < until {
        let next = (last + args.sample).min(until);
        let batch = samples.len();
        let (url, history) = (database_url.to_string(), dir.to_path_buf());
        let ids = tokio::task::spawn_blocking(move || import_history(&url, &history, batch)).await.unwrap();
        imported.extend(ids.into_iter().map(|id| (Instant::now(), id)));
        tokio::time::sleep_until(next.into()).await;
        let now = Instant::now();
        let period = now.duration_since(last).as_secs_f64();
        last = now;
        let cpu_now: Vec<f64> = replicas.iter().map(Replica::cpu_secs).collect();
        let texts = [scrape(&c, &urls[0]).await, scrape(&c, &urls[1]).await];
        let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM regressions ORDER BY id").fetch_all(&db).await.unwrap();
        *load.regressions.lock().unwrap() = ids;
        let db_bytes: i64 =
            sqlx::query_scalar("SELECT pg_database_size(current_database())").fetch_one(&db).await.unwrap();
        let sample = Sample {
            minute: now.duration_since(start).as_secs_f64() / 60.0,
            rss: replicas.iter().map(Replica::rss_mib).collect(),
            cpu_percent: 100.0 * cpu_now.iter().zip(&cpu).map(|(a, b)| a - b).sum::<f64>() / period,
            runs: std::mem::take(&mut *load.ingest.lock().unwrap()),
            reads: std::mem::take(&mut *load.reads.lock().unwrap()),
            summary_lag: metric(&texts[0], "slopewatch_summaries_pending"),
            outbox: metric(&texts[0], "slopewatch_webhook_outbox_pending"),
            db_mib: db_bytes as f64 / (1024.0 * 1024.0),
            pruned: texts.iter().map(|t| metric(t, "slopewatch_retention_runs_pruned_total")).sum(),
            hooks: received.lock().unwrap().values().sum::<u32>() as usize,
        };
        cpu = cpu_now;
        println!("{}", sample.row());
        samples.push(sample);
    }
    agents.await.unwrap();
    readers.await.unwrap();
    let texts = [scrape(&c, &urls[0]).await, scrape(&c, &urls[1]).await];
    let lag_after = metric(&texts[0], "slopewatch_summaries_pending");
    let drained = drain(&c, &urls[0]).await;
    let passes: f64 = texts.iter().map(|t| metric(t, "slopewatch_retention_passes_total")).sum();
    // A run imported more than two periods before the end has had a pass since.
    let due: BTreeSet<Uuid> =
        imported.iter().filter(|(at, _)| at.elapsed() > 2 * args.retention).map(|(_, id)| *id).collect();
    let pruned: BTreeSet<Uuid> = sqlx::query_scalar("SELECT id FROM runs WHERE samples_pruned_at IS NOT NULL")
        .fetch_all(&db)
        .await
        .unwrap()
        .into_iter()
        .collect();
    let imported: BTreeSet<Uuid> = imported.into_iter().map(|(_, id)| id).collect();
    let stored: Vec<Uuid> = sqlx::query_scalar("SELECT id FROM runs").fetch_all(&db).await.unwrap();
    let deliveries: Vec<report::Delivery> = sqlx::query_as(
        "SELECT d.id::text AS id, d.status, d.event, (SELECT count(*) FROM delivery_attempts a WHERE a.delivery_id = d.id) AS attempts
         FROM deliveries d",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    db.close().await;
    drop(replicas);
    let series = Series::of(&samples);
    series.print_growth();
    let load = Arc::try_unwrap(load).ok().unwrap();
    let received = received.lock().unwrap().clone();
    let outcome = report::Outcome {
        sent: load.sent.load(Ordering::Relaxed),
        resent: load.resent.load(Ordering::Relaxed),
        wrong_answers: load.wrong_answers.into_inner(),
        ingest_errors: load.ingest_errors.into_inner(),
        read_errors: load.read_errors.into_inner(),
        stored_by_clients: load.stored.into_inner().unwrap(),
        imported,
        stored,
        due_for_pruning: due,
        pruned,
        passes,
        lag_after,
        drained,
        max_lag_allowed: args.rate * 60.0,
        deliveries,
        received,
    };
    outcome.print_targets(&series)
}

/// Creates an ingest token with the server's CLI; answers the secret.
fn token(database_url: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_slopewatch"))
        .args(["token", "create", "--name", "soak-agents", "--scope", "ingest"])
        .env("DATABASE_URL", database_url)
        .output()
        .unwrap();
    assert!(out.status.success(), "token create: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().last().unwrap().trim().to_string()
}

/// Waits, at most a minute, for the summaries and the outbox to empty once the load has stopped;
/// answers how long it took, `None` if they did not.
async fn drain(c: &reqwest::Client, url: &str) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        let text = scrape(c, url).await;
        if metric(&text, "slopewatch_summaries_pending") == 0.0
            && metric(&text, "slopewatch_webhook_outbox_pending") == 0.0
        {
            // A delivery sent twice would arrive within a few polls.
            tokio::time::sleep(Duration::from_secs(2)).await;
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    None
}
