//! Storage that fails under the real server binary, on real small file systems: a SQLite database
//! on a tmpfs, and a Postgres database in a tablespace on a tmpfs, each filled during ingest and
//! freed again. A write that fails for lack of space is answered 503 `storage_full` with
//! `Retry-After`, never 500; reads and `/readyz` go on and say writes are failing; no run is stored
//! partly or twice; the agent's run spooled during the fault is delivered once afterwards; and
//! once space is back, ingest, the health check and the summary passes recover by themselves,
//! without a restart, having logged the episode once. On SQLite also a write lock held by another
//! process.
//!
//! Mounting a tmpfs needs root (CI runs as root); without it each test is skipped with a note.

use crate::builders::RunShape;
use crate::helpers::postgres_admin_url;
use crate::helpers::process::{agent_binary, create_token, free_addr, Server};
use crate::helpers::tmpfs::Tmpfs;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Workloads and sizes of each run the tests post: about 60 KB of JSON, 32 measurement rows.
const WORKLOADS: usize = 4;
const SIZES: usize = 8;

/// Most runs posted to fill the spare room before the fault must have shown.
const MOST_RUNS: usize = 400;

fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap()
}

/// One answer to a posted run.
struct Answer {
    status: u16,
    retry_after: Option<String>,
    body: Value,
}

struct Ingest {
    url: String,
    token: String,
    c: reqwest::Client,
    /// Every run posted, by id, with the status it was answered.
    answered: BTreeMap<String, u16>,
}

impl Ingest {
    async fn post(&mut self, version: &str) -> Answer {
        let run = RunShape::new("gcc-glibc", version).workloads(WORKLOADS).sizes(SIZES).samples(20).json();
        let id = run["run_id"].as_str().unwrap().to_string();
        let res = self.c.post(format!("{}/api/v1/runs", self.url)).bearer_auth(&self.token).json(&run).send();
        let res = res.await.unwrap();
        let status = res.status().as_u16();
        let retry_after = res.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
        let body = res.json().await.unwrap_or(Value::Null);
        assert!(status == 201 || status == 503, "run {id} answered {status}: {body}");
        self.answered.insert(id, status);
        Answer { status, retry_after, body }
    }

    /// Posts runs until one is refused; panics if none is within `MOST_RUNS`.
    async fn until_refused(&mut self) -> Answer {
        for i in 0..MOST_RUNS {
            let answer = self.post(&format!("12.{}", i % 3)).await;
            if answer.status == 503 {
                return answer;
            }
        }
        panic!("{MOST_RUNS} runs were stored on a full file system");
    }

    /// Posts a run every half second until one is stored, within `limit`; answers how long it took.
    async fn until_stored(&mut self, limit: Duration) -> Duration {
        let started = Instant::now();
        while started.elapsed() < limit {
            if self.post("12.0").await.status == 201 {
                return started.elapsed();
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        panic!("no run was stored within {limit:?} of the fault passing");
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let res = self.c.get(format!("{}{path}", self.url)).send().await.unwrap();
        let status = res.status().as_u16();
        let text = res.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    async fn readyz(&self) -> (u16, String) {
        let (status, body) = self.get("/readyz").await;
        (status, body["writes"].as_str().unwrap_or_default().to_string())
    }

    /// A metric's value in `/metrics`, 0 when absent.
    async fn metric(&self, series: &str) -> f64 {
        let (_, text) = self.get("/metrics").await;
        let text = text.as_str().unwrap().to_string();
        text.lines().find_map(|l| l.strip_prefix(series).and_then(|rest| rest.trim().parse().ok())).unwrap_or(0.0)
    }

    fn stored(&self) -> Vec<&String> {
        self.answered.iter().filter(|(_, s)| **s == 201).map(|(id, _)| id).collect()
    }

    fn refused(&self) -> Vec<&String> {
        self.answered.iter().filter(|(_, s)| **s == 503).map(|(id, _)| id).collect()
    }
}

fn assert_refused_as(answer: &Answer, code: &str) {
    assert_eq!(answer.status, 503, "{}", answer.body);
    assert_eq!(answer.body["error"]["code"], code, "{}", answer.body);
    let message = answer.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("nothing was stored"), "{message}");
    for internal in ["sqlx", "SQLITE", "could not extend", "No space left", "sqlite", "postgres"] {
        assert!(!message.contains(internal), "the answer leaks {internal:?}: {message}");
    }
    let secs: u64 = answer.retry_after.as_deref().expect("Retry-After").parse().unwrap();
    assert!((1..=60).contains(&secs), "Retry-After {secs}");
}

/// The agent submits one run with a single attempt: a 503 leaves it in the spool (exit 75).
fn agent_submit(url: &str, token: &str, file: &Path, spool: &Path) -> Output {
    Command::new(agent_binary())
        .args(["submit", "--server", url, "--token", token, "--attempts", "1"])
        .arg(file)
        .arg("--spool-dir")
        .arg(spool)
        .env_remove("SLOPEWATCH_SPOOL_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn agent_flush(url: &str, token: &str, spool: &Path) -> Output {
    Command::new(agent_binary())
        .args(["flush", "--server", url, "--token", token])
        .arg("--spool-dir")
        .arg(spool)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Lines of the server's JSON log whose message contains `text`.
fn log_lines(server: &Server, text: &str) -> usize {
    server.log_text().lines().filter(|l| l.contains(text)).count()
}

/// The counts the store holds, read behind the server's back: runs, distinct run ids, and each
/// run's measurement rows.
async fn stored_counts(url: &str) -> (i64, i64, BTreeMap<String, i64>) {
    let q_runs = "SELECT COUNT(*), COUNT(DISTINCT id) FROM runs";
    let q_rows = "SELECT CAST(run_id AS TEXT), COUNT(*) FROM measurements GROUP BY run_id";
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        let (runs, ids): (i64, i64) = sqlx::query_as(q_runs).fetch_one(&pool).await.unwrap();
        // SQLite keeps ids as 16-byte blobs; compare them as uuids.
        let rows: Vec<(uuid::Uuid, i64)> =
            sqlx::query_as("SELECT run_id, COUNT(*) FROM measurements GROUP BY run_id").fetch_all(&pool).await.unwrap();
        pool.close().await;
        (runs, ids, rows.into_iter().map(|(id, n)| (id.to_string(), n)).collect())
    } else {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        let (runs, ids): (i64, i64) = sqlx::query_as(q_runs).fetch_one(&pool).await.unwrap();
        let rows: Vec<(String, i64)> = sqlx::query_as(q_rows).fetch_all(&pool).await.unwrap();
        pool.close().await;
        (runs, ids, rows.into_iter().collect())
    }
}

/// Fills `fs` under a running server at `database_url`, then frees it, and checks everything the
/// module's header promises. `spare` is the room left when filling.
async fn fill_and_free(database_url: &str, fs: &Tmpfs, spare: u64) -> (Server, Ingest) {
    let work = tempfile::tempdir().unwrap();
    let token = create_token(database_url, "storage-faults", "ingest");
    let server = Server::start(database_url, &free_addr(), None, &work.path().join("server.log"));
    let mut ingest = Ingest { url: server.url(), token: token.clone(), c: client(), answered: BTreeMap::new() };
    for v in ["12.0", "12.1", "12.2"] {
        assert_eq!(ingest.post(v).await.status, 201, "runs are stored while there is room");
    }
    assert_eq!(ingest.readyz().await, (200, "ok".to_string()));

    fs.fill_leaving(spare);
    let refused = ingest.until_refused().await;
    assert_refused_as(&refused, "storage_full");
    // More runs while the disk stays full: each is stored or refused, none meets a broken writer.
    for _ in 0..5 {
        ingest.post("12.1").await;
    }
    let (status, writes) = ingest.readyz().await;
    assert_eq!((status, writes.as_str()), (200, "failing: storage full"), "the database answers; writes fail");
    assert!(ingest.metric("slopewatch_storage_errors_total{kind=\"full\"}").await >= 1.0);
    let (status, runs) = ingest.get("/api/v1/runs").await;
    assert_eq!(status, 200, "reads go on while the disk is full: {runs}");
    let (status, page) = ingest.get("/").await;
    assert_eq!(status, 200, "{page}");

    // The agent keeps its run for later rather than losing it.
    let agent_dir = tempfile::tempdir().unwrap();
    let run = RunShape::new("gcc-glibc", "12.0").host("agent-host").workloads(WORKLOADS).sizes(SIZES).json();
    let agent_run = run["run_id"].as_str().unwrap().to_string();
    let file = agent_dir.path().join("run.json");
    std::fs::write(&file, serde_json::to_vec(&run).unwrap()).unwrap();
    let spool = agent_dir.path().join("spool");
    let out = agent_submit(&ingest.url, &token, &file, &spool);
    assert_eq!(out.status.code(), Some(75), "kept for later: {}", said(&out));

    fs.free();
    let recovered = ingest.until_stored(Duration::from_secs(30)).await;
    eprintln!("{database_url}: ingest back {:.1} s after space was freed", recovered.as_secs_f64());
    assert_eq!(ingest.readyz().await, (200, "ok".to_string()), "a successful write clears the failing state");
    let out = agent_flush(&ingest.url, &token, &spool);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert!(said(&out).contains(&format!("run {agent_run} stored")), "{}", said(&out));
    let out = agent_flush(&ingest.url, &token, &spool);
    assert!(!said(&out).contains(&agent_run), "delivered once: {}", said(&out));

    // Every run answered 201 is stored whole, every run answered 503 not at all, none twice.
    let (runs, ids, rows) = stored_counts(database_url).await;
    assert_eq!(runs, ids, "no run is stored twice");
    let expected: Vec<&String> = ingest.stored().into_iter().chain([&agent_run]).collect();
    assert_eq!(runs as usize, expected.len(), "{} stored, {} refused", expected.len(), ingest.refused().len());
    for id in &expected {
        assert_eq!(rows.get(*id), Some(&((WORKLOADS * SIZES) as i64)), "run {id} is stored whole");
    }
    for id in ingest.refused() {
        assert!(!rows.contains_key(id), "run {id} answered 503 left rows behind");
    }

    // Runs left pending by failed summary passes are taken in by the sweep (every 10 s).
    let started = Instant::now();
    while ingest.metric("slopewatch_summaries_pending").await > 0.0 {
        assert!(started.elapsed() < Duration::from_secs(30), "runs stay pending after the fault passed");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!(
        "{database_url}: {} runs stored, {} refused with 503, the agent's run delivered once",
        expected.len(),
        ingest.refused().len()
    );
    for episode in ["summary passes failing", "SQLite log checkpoints failing", "retention passes failing"] {
        assert!(log_lines(&server, episode) <= 1, "{episode:?} is logged once an episode:\n{}", server.log_text());
    }
    assert_eq!(log_lines(&server, "\"status\":500"), 0, "no request was answered 500:\n{}", server.log_text());
    drop(work);
    (server, ingest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_under_sqlite_is_a_503_and_ingest_recovers_by_itself() {
    let Some(fs) = Tmpfs::mount(6 << 20, "") else { return };
    let url = format!("sqlite://{}", fs.path().join("slopewatch.db").display());
    let (server, _ingest) = fill_and_free(&url, &fs, 64 << 10).await;
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_lock_held_by_another_process_is_a_503_and_the_writer_carries_on() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("slopewatch.db").display());
    let token = create_token(&url, "lock", "ingest");
    let server = Server::start(&url, &free_addr(), None, &dir.path().join("server.log"));
    let mut ingest = Ingest { url: server.url(), token, c: client(), answered: BTreeMap::new() };
    assert_eq!(ingest.post("12.0").await.status, 201);

    // Another process's write transaction, held past the server's 10 s busy timeout.
    use sqlx::Connection;
    let mut other = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::query("BEGIN IMMEDIATE").execute(&mut other).await.unwrap();
    let answer = ingest.post("12.1").await;
    assert_refused_as(&answer, "storage_locked");
    assert_eq!(answer.retry_after.as_deref(), Some("1"));
    assert_eq!(ingest.readyz().await, (200, "failing: database locked by another process".to_string()));
    sqlx::query("ROLLBACK").execute(&mut other).await.unwrap();
    other.close().await.unwrap();

    ingest.until_stored(Duration::from_secs(15)).await;
    assert_eq!(ingest.readyz().await.1, "ok");
    assert!(ingest.metric("slopewatch_storage_errors_total{kind=\"locked\"}").await >= 1.0);
}

/// A Postgres tablespace on a tmpfs the `postgres` user owns, and a database in it; dropped in
/// order (database, tablespace, file system) when the test ends, however it ends.
struct PgOnTmpfs {
    name: String,
    url: String,
    fs: Option<Tmpfs>,
}

impl PgOnTmpfs {
    async fn create(size: usize) -> Option<PgOnTmpfs> {
        let ids = |flag: &str| -> Option<String> {
            let out = Command::new("id").args([flag, "postgres"]).output().ok()?;
            out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        };
        let (Some(uid), Some(gid)) = (ids("-u"), ids("-g")) else {
            eprintln!("note: no postgres user on this machine; skipped");
            return None;
        };
        let fs = Tmpfs::mount(size, &format!(",mode=0700,uid={uid},gid={gid}"))?;
        let name = format!("slopewatch_full_{}", uuid::Uuid::new_v4().simple());
        let admin = sqlx::PgPool::connect(&postgres_admin_url()).await.expect("Postgres must be running");
        let location = fs.path().display().to_string();
        let made = sqlx::query(&format!("CREATE TABLESPACE {name} LOCATION '{location}'")).execute(&admin).await;
        if let Err(e) = made {
            eprintln!("note: the test Postgres cannot use a tablespace here ({e}); skipped");
            return None;
        }
        let mut url = url::Url::parse(&postgres_admin_url()).unwrap();
        url.set_path(&name);
        let pg = PgOnTmpfs { name: name.clone(), url: url.to_string(), fs: Some(fs) };
        sqlx::query(&format!("CREATE DATABASE {name} TABLESPACE {name}")).execute(&admin).await.unwrap();
        admin.close().await;
        Some(pg)
    }
}

impl Drop for PgOnTmpfs {
    fn drop(&mut self) {
        let name = self.name.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                if let Ok(admin) = sqlx::PgPool::connect(&postgres_admin_url()).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&admin).await;
                    let _ = sqlx::query(&format!("DROP TABLESPACE IF EXISTS {name}")).execute(&admin).await;
                }
            });
        })
        .join()
        .ok();
        drop(self.fs.take());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_tablespace_under_postgres_is_a_503_and_ingest_recovers_by_itself() {
    let Some(pg) = PgOnTmpfs::create(40 << 20).await else { return };
    let (server, _ingest) = fill_and_free(&pg.url, pg.fs.as_ref().unwrap(), 0).await;
    drop(server);
}
