//! Faults under load, through the real server binary on loopback: the server killed with SIGKILL
//! while agents stream runs into it, Postgres stopped under load, and a webhook receiver that
//! hangs and then fails. Each test is bounded in time and prints its figures.
//!
//! `scripts/fault-scenarios` runs the long versions (a 30 s outage, a receiver hanging 30 s):
//! `SLOPEWATCH_OUTAGE_SECS` and `SLOPEWATCH_HANG_SECS` set the durations.

use crate::builders::RunShape;
use crate::helpers::process::{agent_binary, create_token, free_addr, get_json, PrivatePostgres, Server};
use crate::helpers::{Backend, TestDb};
use serde_json::Value;
use slopewatch::webhooks::signing;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn client() -> reqwest::Client {
    // Far longer than any answer should take, so a hang shows up as a latency, not a client error.
    reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap()
}

async fn post_run(c: &reqwest::Client, url: &str, token: &str, run: &Value) -> (u16, Value, Duration) {
    let started = Instant::now();
    let res = c.post(format!("{url}/api/v1/runs")).bearer_auth(token).json(run).send().await.unwrap();
    let status = res.status().as_u16();
    let body = res.json().await.unwrap_or(Value::Null);
    (status, body, started.elapsed())
}

fn env_secs(name: &str, default: u64) -> Duration {
    Duration::from_secs(std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default))
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs.get(xs.len() / 2).copied().unwrap_or_default()
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

// ---- kill -9 mid-ingest ------------------------------------------------------------------------

const AGENTS: usize = 4;
const RUNS_PER_AGENT: usize = 12;

/// One agent's runs, written as `measure --out` writes them: distinct ids, three versions.
fn write_agent_runs(dir: &Path, agent: usize) -> Vec<(PathBuf, Value)> {
    (0..RUNS_PER_AGENT)
        .map(|i| {
            let run = RunShape::new("gcc-glibc", &format!("12.{}", i % 3))
                .host(&format!("host-{agent}"))
                .workloads(6)
                .sizes(8)
                .samples(20)
                .json();
            let path = dir.join(format!("run-{i:02}.json"));
            std::fs::write(&path, serde_json::to_vec_pretty(&run).unwrap()).unwrap();
            (path, run)
        })
        .collect()
}

fn wait_for(child: &mut Child, limit: Duration) -> i32 {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        assert!(Instant::now() < deadline, "an agent did not finish within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn spooled(spool: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(spool)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
        .unwrap_or_default()
}

/// The stored run is the submitted one: host, toolchain, every workload, every size, every sample.
fn assert_whole(id: &str, sent: &Value, stored: &Value) {
    assert_eq!(stored["host"]["name"], sent["host"]["name"], "{id}");
    assert_eq!(stored["toolchain"]["version"], sent["toolchain"]["version"], "{id}");
    let stored_workloads: BTreeMap<&str, &Value> =
        stored["workloads"].as_array().unwrap().iter().map(|w| (w["name"].as_str().unwrap(), w)).collect();
    let sent_workloads = sent["workloads"].as_array().unwrap();
    assert_eq!(stored_workloads.len(), sent_workloads.len(), "run {id}: every workload is stored");
    for w in sent_workloads {
        let name = w["name"].as_str().unwrap();
        let kept = stored_workloads.get(name).unwrap_or_else(|| panic!("run {id}: workload {name} missing"));
        let sent_ms = w["measurements"].as_array().unwrap();
        let kept_ms = kept["measurements"].as_array().unwrap();
        assert_eq!(kept_ms.len(), sent_ms.len(), "run {id} {name}: every size is stored");
        for (s, k) in sent_ms.iter().zip(kept_ms) {
            assert_eq!(k["size"], s["size"], "run {id} {name}");
            assert_eq!(k["samples_ns"], s["samples_ns"], "run {id} {name} size {}: every sample, exactly", s["size"]);
        }
    }
}

async fn kill_9_mid_ingest(backend: Backend) {
    let db = TestDb::new(backend).await;
    let dir = tempfile::tempdir().unwrap();
    let token = create_token(&db.url, "agents", "ingest");
    let addr = free_addr();
    let log = dir.path().join("server.log");
    let mut server = Server::start(&db.url, &addr, None, &log);
    let url = server.url();

    let mut submitted: HashMap<String, Value> = HashMap::new();
    let mut agents = Vec::new();
    for a in 0..AGENTS {
        let agent_dir = dir.path().join(format!("agent-{a}"));
        std::fs::create_dir_all(&agent_dir).unwrap();
        let runs = write_agent_runs(&agent_dir, a);
        let files: Vec<&PathBuf> = runs.iter().map(|(p, _)| p).collect();
        for (_, run) in &runs {
            submitted.insert(run["run_id"].as_str().unwrap().to_string(), run.clone());
        }
        let out = std::fs::File::create(agent_dir.join("agent.log")).unwrap();
        let child = Command::new(agent_binary())
            .arg("submit")
            .args(&files)
            .args(["--server", &url, "--token", &token, "--attempts", "3", "--retry-base", "200ms"])
            .arg("--spool-dir")
            .arg(agent_dir.join("spool"))
            .env_remove("SLOPEWATCH_SPOOL_DIR")
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        agents.push((agent_dir, child));
    }
    let total = AGENTS * RUNS_PER_AGENT;

    // Kill once a quarter of the runs are in, while every agent is still sending.
    let c = client();
    let deadline = Instant::now() + Duration::from_secs(120);
    let stored_before_kill = loop {
        let (_, list) = get_json(&c, &format!("{url}/api/v1/runs?limit=1000")).await;
        let n = list["runs"].as_array().map_or(0, Vec::len);
        if n >= total / 4 {
            break n;
        }
        assert!(Instant::now() < deadline, "agents stored only {n} runs");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    server.kill_9();
    // Down long enough for some agents to give up and keep runs in their spools.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let _server = Server::start(&db.url, &addr, None, &log);

    let (mut spooled_exits, mut failed_attempts) = (0, 0);
    for (agent_dir, mut child) in agents {
        let code = wait_for(&mut child, Duration::from_secs(180));
        let said = std::fs::read_to_string(agent_dir.join("agent.log")).unwrap();
        assert!(code == 0 || code == 75, "agent exit {code}: {said}");
        spooled_exits += usize::from(code == 75);
        failed_attempts += said.matches("failed (").count();
        let flush = Command::new(agent_binary())
            .args(["flush", "--server", &url, "--token", &token])
            .arg("--spool-dir")
            .arg(agent_dir.join("spool"))
            .output()
            .unwrap();
        let flushed = String::from_utf8_lossy(&flush.stdout);
        assert_eq!(flush.status.code(), Some(0), "{flushed}{}", String::from_utf8_lossy(&flush.stderr));
        assert!(spooled(&agent_dir.join("spool")).is_empty(), "the spool is empty once flushed");
        assert!(!agent_dir.join("spool/rejected").exists(), "no run was refused: {said}");
    }
    eprintln!(
        "{backend:?}: {stored_before_kill}/{total} runs stored when the server was killed; \
         {failed_attempts} failed attempts, {spooled_exits} agents kept runs for later"
    );
    assert!(failed_attempts > 0, "the kill landed while agents were sending");

    let (status, list) = get_json(&c, &format!("{url}/api/v1/runs?limit=1000")).await;
    assert_eq!(status, 200);
    let listed: Vec<&Value> = list["runs"].as_array().unwrap().iter().collect();
    let ids: HashSet<&str> = listed.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(listed.len(), total, "every run stored, none twice");
    assert_eq!(ids.len(), total);
    for r in &listed {
        let id = r["id"].as_str().unwrap();
        let sent = submitted.get(id).unwrap_or_else(|| panic!("run {id} was never submitted"));
        let samples: usize = sent["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|w| w["measurements"].as_array().unwrap())
            .map(|m| m["samples_ns"].as_array().unwrap().len())
            .sum();
        assert_eq!(r["sample_count"].as_u64(), Some(samples as u64), "run {id}");
        let (status, stored) = get_json(&c, &format!("{url}/api/v1/runs/{id}")).await;
        assert_eq!(status, 200, "{id}");
        assert_whole(id, sent, &stored);
    }

    // The per-version summaries count each run once: none half-applied, none applied twice.
    let mut expected: BTreeMap<(String, String), i64> = BTreeMap::new();
    for run in submitted.values() {
        for w in run["workloads"].as_array().unwrap() {
            let key =
                (w["name"].as_str().unwrap().to_string(), run["toolchain"]["version"].as_str().unwrap().to_string());
            *expected.entry(key).or_default() += 1;
        }
    }
    // The last runs may be answered while a summary pass is under way; the next pass takes them in.
    let workloads: HashSet<&String> = expected.keys().map(|(w, _)| w).collect();
    let deadline = Instant::now() + Duration::from_secs(15);
    for w in workloads {
        loop {
            let (status, series) = get_json(&c, &format!("{url}/api/v1/series?workload={w}&toolchain=gcc-glibc")).await;
            assert_eq!(status, 200);
            let mut behind = None;
            for v in series["versions"].as_array().unwrap() {
                let version = v["version"].as_str().unwrap().to_string();
                let want = expected[&(w.clone(), version.clone())];
                let runs = v["runs"].as_i64().unwrap();
                assert!(runs <= want, "{w} {version}: {runs} runs counted, {want} stored");
                if runs < want {
                    behind = Some(format!("{w} {version}: {runs} of {want}"));
                }
            }
            let versions = expected.keys().filter(|(name, _)| name == w).count();
            if series["versions"].as_array().unwrap().len() < versions {
                behind = Some(format!("{w}: a version without a summary"));
            }
            match behind {
                None => break,
                Some(at) => assert!(Instant::now() < deadline, "summaries stopped short at {at}"),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_ingest_loses_no_run_and_stores_none_twice_on_sqlite() {
    kill_9_mid_ingest(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_ingest_loses_no_run_and_stores_none_twice_on_postgres() {
    kill_9_mid_ingest(Backend::Postgres).await;
}

// ---- Postgres stopped under load ---------------------------------------------------------------

/// One answer the server gave while the test ran.
#[derive(Debug, Clone)]
struct Answer {
    sent: Instant,
    latency: Duration,
    status: u16,
    code: String,
    run_id: Option<String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_stopped_under_load_gets_fast_503s_and_the_server_recovers_by_itself() {
    let Some(pg) = PrivatePostgres::start() else { return };
    let pg = Arc::new(pg);
    let outage = env_secs("SLOPEWATCH_OUTAGE_SECS", 8);
    let dir = tempfile::tempdir().unwrap();
    let token = create_token(&pg.url(), "load", "ingest");
    let mut server = Server::start(&pg.url(), &free_addr(), None, &dir.path().join("server.log"));
    let (url, pid) = (server.url(), server.pid());

    let stop = Arc::new(AtomicBool::new(false));
    let answers: Arc<Mutex<Vec<Answer>>> = Arc::default();
    let ready: Arc<Mutex<Vec<Answer>>> = Arc::default();
    let mut tasks = Vec::new();
    for worker in 0..6 {
        let (url, token, stop, answers) = (url.clone(), token.clone(), stop.clone(), answers.clone());
        tasks.push(tokio::spawn(async move {
            let c = client();
            while !stop.load(Ordering::SeqCst) {
                let run = RunShape::new("gcc-glibc", "12.2.0")
                    .host(&format!("load-{worker}"))
                    .workloads(3)
                    .sizes(6)
                    .samples(5)
                    .json();
                let sent = Instant::now();
                let (status, body, latency) = post_run(&c, &url, &token, &run).await;
                let code = body["error"]["code"].as_str().unwrap_or_default().to_string();
                let run_id = run["run_id"].as_str().map(str::to_string);
                answers.lock().unwrap().push(Answer { sent, latency, status, code, run_id });
                // Paced like agents that retry, so the outage is no busy loop and the run list
                // below stays within one page.
                tokio::time::sleep(Duration::from_millis(if status == 201 { 50 } else { 100 })).await;
            }
        }));
    }
    // Several readiness probes, so some are sent and answered inside the outage even though each
    // waits out the pool's acquire timeout.
    for probe in 0..3 {
        let (url, stop, ready) = (url.clone(), stop.clone(), ready.clone());
        tasks.push(tokio::spawn(async move {
            let c = client();
            tokio::time::sleep(Duration::from_secs(probe)).await;
            while !stop.load(Ordering::SeqCst) {
                let sent = Instant::now();
                let status = c.get(format!("{url}/readyz")).send().await.unwrap().status().as_u16();
                ready.lock().unwrap().push(Answer {
                    sent,
                    latency: sent.elapsed(),
                    status,
                    code: String::new(),
                    run_id: None,
                });
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }));
    }

    tokio::time::sleep(Duration::from_secs(2)).await;
    let stopping = Instant::now();
    let p = pg.clone();
    tokio::task::spawn_blocking(move || p.stop()).await.unwrap();
    let down = Instant::now();
    tokio::time::sleep(outage).await;
    let restarting = Instant::now();
    let p = pg.clone();
    tokio::task::spawn_blocking(move || p.start_again()).await.unwrap();
    let up = Instant::now();
    let c = client();
    let deadline = up + Duration::from_secs(30);
    while get_json(&c, &format!("{url}/readyz")).await.0 != 200 {
        assert!(Instant::now() < deadline, "the server did not become ready again within 30 s of Postgres");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let recovered = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::SeqCst);
    for t in tasks {
        t.await.unwrap();
    }
    assert!(server.is_running() && server.pid() == pid, "the same server process recovered, no restart");

    let answers = answers.lock().unwrap().clone();
    let ready = ready.lock().unwrap().clone();
    // Sent and answered while Postgres was down: a request still waiting for a connection when
    // Postgres comes back may rightly get one.
    let during = |a: &&Answer| a.sent >= down && a.sent + a.latency < restarting;
    let outage_answers: Vec<&Answer> = answers.iter().filter(during).collect();
    let outage_ready: Vec<&Answer> = ready.iter().filter(during).collect();
    let transition: Vec<(u16, &str)> =
        answers.iter().filter(|a| a.sent >= stopping && a.sent < down).map(|a| (a.status, a.code.as_str())).collect();
    let worst = outage_answers.iter().map(|a| a.latency).max().unwrap_or_default();
    eprintln!(
        "outage of {}: {} ingest requests answered {:?}, median {}, slowest {}; /readyz answered {:?}; \
         while stopping: {transition:?}; ready again {} after Postgres was back; {} requests in all",
        secs(restarting - down),
        outage_answers.len(),
        outage_answers.iter().map(|a| a.status).collect::<HashSet<_>>(),
        secs(median(outage_answers.iter().map(|a| a.latency).collect())),
        secs(worst),
        outage_ready.iter().map(|a| a.status).collect::<HashSet<_>>(),
        secs(recovered - up),
        answers.len(),
    );
    let logged: HashSet<String> = server
        .log_text()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["fields"]["message"] == "database error")
        .map(|l| l["fields"]["error"].as_str().unwrap_or_default().to_string())
        .collect();
    eprintln!("database errors the server logged: {logged:?}");
    assert!(outage_answers.len() >= 3, "load went on during the outage");
    for a in &outage_answers {
        assert_eq!((a.status, a.code.as_str()), (503, "unavailable"), "ingest while Postgres is down: {a:?}");
        assert!(a.latency < Duration::from_secs(10), "answered within seconds, not hung: {a:?}");
    }
    assert!(!outage_ready.is_empty());
    for a in &outage_ready {
        assert_eq!(a.status, 503, "/readyz while Postgres is down: {a:?}");
        assert!(a.latency < Duration::from_secs(10), "{a:?}");
    }
    for a in &answers {
        assert!(a.status == 201 || a.status == 503, "only stored or unavailable, never {a:?}");
    }
    let after: Vec<&Answer> = answers.iter().filter(|a| a.sent >= recovered).collect();
    assert!(!after.is_empty() && after.iter().all(|a| a.status == 201), "ingest works again: {after:?}");

    // A run refused with 503 was not stored in part: sent again, it is stored whole (or, if its
    // commit raced the shutdown, recognised as already stored).
    for a in outage_answers.iter().take(3) {
        let id = a.run_id.as_deref().unwrap();
        assert_eq!(get_json(&c, &format!("{url}/api/v1/runs/{id}")).await.0, 404, "a 503'd run is not stored");
    }
    let refused: Vec<&Answer> = answers.iter().filter(|a| a.status == 503).collect();
    let (_, list) = get_json(&c, &format!("{url}/api/v1/runs?limit=1000")).await;
    let stored: HashSet<&str> = list["runs"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    let created = answers.iter().filter(|a| a.status == 201).count();
    assert!(created < 1000, "the run list below holds every run");
    let refused_but_stored = refused.iter().filter(|a| stored.contains(a.run_id.as_deref().unwrap())).count();
    assert_eq!(stored.len(), created + refused_but_stored, "stored runs are exactly the ones answered 201");
    eprintln!("{refused_but_stored} runs answered 503 had committed as the connection was cut (a resend gets 200)");
}

// ---- a webhook receiver that hangs, then fails, then recovers ---------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Hang,
    Fail,
    Ok,
}

#[derive(Debug, Clone)]
struct Hit {
    delivery: String,
    mode: Mode,
}

/// A webhook receiver on loopback whose behaviour the test switches while alerts arrive.
#[derive(Clone)]
struct Receiver {
    mode: Arc<Mutex<Mode>>,
    hits: Arc<Mutex<Vec<Hit>>>,
    addr: String,
}

impl Receiver {
    async fn start(hang: Duration) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let r = Receiver {
            mode: Arc::new(Mutex::new(Mode::Hang)),
            hits: Arc::default(),
            addr: listener.local_addr().unwrap().to_string(),
        };
        let this = r.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: axum::http::HeaderMap| {
                let this = this.clone();
                async move {
                    let delivery = headers.get(signing::DELIVERY_HEADER).unwrap().to_str().unwrap().to_string();
                    let mode = *this.mode.lock().unwrap();
                    this.hits.lock().unwrap().push(Hit { delivery, mode });
                    match mode {
                        Mode::Hang => {
                            tokio::time::sleep(hang).await;
                            axum::http::StatusCode::INTERNAL_SERVER_ERROR
                        }
                        Mode::Fail => axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                        Mode::Ok => axum::http::StatusCode::OK,
                    }
                }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        r
    }

    fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }
}

const LINEAGES: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hanging_then_failing_webhook_receiver_slows_no_ingest_and_gets_each_alert_once() {
    let hang = env_secs("SLOPEWATCH_HANG_SECS", 8);
    // The worker's own limit per attempt, shorter than the hang, as the default 10 s is shorter
    // than a receiver hanging for 30 s.
    let timeout = (hang / 2).min(Duration::from_secs(10));
    let receiver = Receiver::start(hang).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("alerts.toml");
    std::fs::write(
        &config,
        format!(
            "[alerts]\nretry_base_ms = 200\nretry_max_ms = 1000\npoll_ms = 100\ntimeout_ms = {}\n\n\
             [[webhooks]]\nname = \"team\"\nurl = \"http://{}/hook\"\nsecret = \"fault-test-secret-0123456789\"\n",
            timeout.as_millis(),
            receiver.addr
        ),
    )
    .unwrap();
    let (db_a, db_b) = (TestDb::new(Backend::Sqlite).await, TestDb::new(Backend::Sqlite).await);
    let (token_a, token_b) = (create_token(&db_a.url, "a", "ingest"), create_token(&db_b.url, "b", "ingest"));
    // The receivers' errors are an editor's to read.
    let editor = create_token(&db_a.url, "reader", "editor");
    let with_hook = Server::start(&db_a.url, &free_addr(), Some(&config), &dir.path().join("a.log"));
    let without = Server::start(&db_b.url, &free_addr(), None, &dir.path().join("b.log"));

    // The same runs into both servers, side by side; each lineage's second version is a regression
    // and so an alert for the hanging receiver on the first server.
    let c = client();
    let (mut with_latency, mut without_latency) = (Vec::new(), Vec::new());
    for l in 0..LINEAGES {
        for (version, slope) in [("1.0", 1.0), ("2.0", 2.0)] {
            let run =
                RunShape::new(&format!("lineage-{l}"), version).slope(slope).workloads(3).sizes(8).samples(5).json();
            let (status, body, latency) = post_run(&c, &with_hook.url(), &token_a, &run).await;
            assert_eq!(status, 201, "{body}");
            with_latency.push(latency);
            let (status, body, latency) = post_run(&c, &without.url(), &token_b, &run).await;
            assert_eq!(status, 201, "{body}");
            without_latency.push(latency);
        }
    }
    let ingest_done = Instant::now();
    let (with_max, without_max) = (*with_latency.iter().max().unwrap(), *without_latency.iter().max().unwrap());
    let (with_median, without_median) = (median(with_latency), median(without_latency));
    eprintln!(
        "ingest latency with a receiver hanging {}: median {}, slowest {}; without webhooks: median {}, slowest {}",
        secs(hang),
        secs(with_median),
        secs(with_max),
        secs(without_median),
        secs(without_max)
    );
    // A delivery attempt to a hanging receiver cannot end before the worker's timeout: an ingest
    // that waited on one would take at least that long.
    assert!(with_max < timeout, "ingest waited on a delivery: {with_max:?}");
    assert!(with_median < without_median * 5 + Duration::from_millis(100), "{with_median:?} vs {without_median:?}");

    // Hanging for a while after the last alert was written, then failing fast, then answering.
    tokio::time::sleep(hang.saturating_sub(ingest_done.elapsed())).await;
    receiver.set(Mode::Fail);
    tokio::time::sleep(Duration::from_secs(2)).await;
    receiver.set(Mode::Ok);
    let recovered = Instant::now();

    let (_, list) = get_json(&c, &format!("{}/api/v1/regressions", with_hook.url())).await;
    let ids: Vec<i64> =
        list["regressions"].as_array().unwrap().iter().map(|r| r["regression"]["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), LINEAGES, "one regression per lineage");
    let deadline = Instant::now() + Duration::from_secs(60);
    let deliveries = loop {
        let mut all = Vec::new();
        for id in &ids {
            let url = format!("{}/api/v1/regressions/{id}", with_hook.url());
            let detail: Value = c.get(url).bearer_auth(&editor).send().await.unwrap().json().await.unwrap();
            all.extend(detail["deliveries"].as_array().unwrap().iter().cloned());
        }
        if all.len() == LINEAGES && all.iter().all(|d| d["delivery"]["status"] == "delivered") {
            break all;
        }
        assert!(Instant::now() < deadline, "deliveries not done a minute after the receiver recovered: {all:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let delivered_after = recovered.elapsed();
    // Anything sent twice would arrive within a few retry intervals.
    tokio::time::sleep(Duration::from_secs(3)).await;

    let hits = receiver.hits();
    let mut by_delivery: BTreeMap<&str, Vec<Mode>> = BTreeMap::new();
    for h in &hits {
        by_delivery.entry(h.delivery.as_str()).or_default().push(h.mode);
    }
    let server_ids: HashSet<&str> = deliveries.iter().map(|d| d["delivery"]["id"].as_str().unwrap()).collect();
    assert_eq!(by_delivery.keys().copied().collect::<HashSet<_>>(), server_ids);
    for (id, modes) in &by_delivery {
        assert_eq!(modes.first(), Some(&Mode::Hang), "{id}: the first attempt met the hanging receiver");
        assert_eq!(modes.iter().filter(|m| **m == Mode::Ok).count(), 1, "{id} delivered exactly once: {modes:?}");
        assert_eq!(modes.last(), Some(&Mode::Ok), "{id}: nothing sent after it was delivered: {modes:?}");
    }
    for d in &deliveries {
        let attempts = d["attempts"].as_array().unwrap();
        assert!(attempts.len() >= 2, "retried: {d}");
        for a in &attempts[..attempts.len() - 1] {
            assert!(a["error"].is_string(), "{a}");
            assert!(a["latency_ms"].as_f64().unwrap() < hang.as_secs_f64() * 1e3, "the worker gave up on a hang: {a}");
        }
        assert_eq!(attempts.last().unwrap()["http_status"], 200);
    }
    let (_, regressions_b) = get_json(&c, &format!("{}/api/v1/regressions", without.url())).await;
    assert_eq!(regressions_b["regressions"].as_array().unwrap().len(), LINEAGES);
    eprintln!(
        "{} alerts, {} requests to the receiver ({} while hanging), all delivered {} after it recovered, none twice",
        deliveries.len(),
        hits.len(),
        hits.iter().filter(|h| h.mode == Mode::Hang).count(),
        secs(delivered_after)
    );
}

/// A run stored while the summaries could not be written stays pending; the server takes it in at
/// start-up, before it answers anything, once the summaries can be written again.
#[tokio::test]
async fn runs_left_pending_are_taken_in_when_the_server_starts() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let db = TestDb::new(backend).await;
        let dir = tempfile::tempdir().unwrap();
        let token = create_token(&db.url, "agent", "ingest");
        let log = dir.path().join("server.log");
        let c = client();
        db.refuse_summaries(true).await;
        let server = Server::start(&db.url, &free_addr(), None, &log);
        let url = server.url();
        let run = RunShape::new("gcc-glibc", "12.2.0").workloads(2).json();
        let (status, body, _) = post_run(&c, &url, &token, &run).await;
        assert_eq!(status, 201, "the run is stored though its summary is not: {body}");
        let series = |url: &str| format!("{url}/api/v1/series?workload=workload-0&toolchain=gcc-glibc");
        assert_eq!(get_json(&c, &series(&url)).await.0, 404, "no summary yet");
        drop(server);

        db.refuse_summaries(false).await;
        let server = Server::start(&db.url, &free_addr(), None, &log);
        let (status, series) = get_json(&c, &series(&server.url())).await;
        assert_eq!(status, 200, "{backend:?}: {series}");
        assert_eq!(series["versions"][0]["runs"], 1, "{backend:?}: taken in once: {series}");
        assert!(server.log_text().contains("took pending runs into their version summaries"));
    }
}
