//! Several servers on one database, through the real binary on loopback: three replicas started at
//! once on a new Postgres database, runs streamed through all of them from concurrent clients
//! while one is killed, and the work they share (summary passes, webhook deliveries, the retention
//! pass) done once; the compose profile's nginx configuration in front of two replicas; and SQLite,
//! which serves one server at a time, refusing a second.

use crate::builders::RunShape;
use crate::helpers::process::{create_token, free_addr, get_json, Server};
use crate::helpers::{Backend, TestDb};
use serde_json::Value;
use slopewatch::webhooks::signing;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap()
}

/// A counter's value in a `/metrics` text (0 when absent).
fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .map_or(0, |v| v.trim().parse::<f64>().unwrap() as u64)
}

async fn scrape(c: &reqwest::Client, url: &str) -> String {
    let res = c.get(format!("{url}/metrics")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.text().await.unwrap()
}

/// What replicas share, as counted in each one's `/metrics`.
#[derive(Debug, Default, Clone, Copy)]
struct Claims {
    summary_runs: u64,
    deliveries: u64,
    retention_passes: u64,
    retention_runs: u64,
}

impl Claims {
    fn of(text: &str) -> Claims {
        Claims {
            summary_runs: metric(text, "slopewatch_summary_runs_claimed_total"),
            deliveries: metric(text, "slopewatch_webhook_deliveries_claimed_total"),
            retention_passes: metric(text, "slopewatch_retention_passes_total"),
            retention_runs: metric(text, "slopewatch_retention_runs_pruned_total"),
        }
    }

    fn sum(all: &[Claims]) -> Claims {
        all.iter().fold(Claims::default(), |a, b| Claims {
            summary_runs: a.summary_runs + b.summary_runs,
            deliveries: a.deliveries + b.deliveries,
            retention_passes: a.retention_passes + b.retention_passes,
            retention_runs: a.retention_runs + b.retention_runs,
        })
    }
}

/// One webhook request the receiver got.
#[derive(Debug, Clone)]
struct Hit {
    target: String,
    delivery: String,
    event: String,
    regression_id: i64,
}

/// A webhook receiver on loopback answering 200 to everything, recording each request.
async fn start_receiver() -> (String, Arc<Mutex<Vec<Hit>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
    let recorded = hits.clone();
    let app = axum::Router::new().route(
        "/hook/{target}",
        axum::routing::post(
            move |axum::extract::Path(target): axum::extract::Path<String>,
                  headers: axum::http::HeaderMap,
                  body: String| {
                let recorded = recorded.clone();
                async move {
                    let header = |name: &str| headers.get(name).unwrap().to_str().unwrap().to_string();
                    let body: Value = serde_json::from_str(&body).unwrap();
                    recorded.lock().unwrap().push(Hit {
                        target,
                        delivery: header(signing::DELIVERY_HEADER),
                        event: header(signing::EVENT_HEADER),
                        regression_id: body["regression_id"].as_i64().unwrap(),
                    });
                    axum::http::StatusCode::OK
                }
            },
        ),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, hits)
}

const REPLICAS: usize = 3;
const LINEAGES: usize = 6;
const VERSIONS: usize = 6;
const HOSTS: usize = 6;
const TARGETS: [&str; 2] = ["team-a", "team-b"];

/// Lineage `l`'s slope at version `v`: lineages 3 and 4 turn quadratic at 1.3.0; lineage 5 is
/// quadratic at 1.2.0 and 1.3.0 and fixed in 1.4.0; the others stay linear.
fn slope(l: usize, v: usize) -> f64 {
    match l {
        3 | 4 if v >= 3 => 2.0,
        5 if v == 2 || v == 3 => 2.0,
        _ => 1.0,
    }
}

/// The events the stream must announce, once each per target: (lineage, event).
fn expected_events() -> BTreeSet<(String, &'static str)> {
    [(3, "regression.opened"), (4, "regression.opened"), (5, "regression.opened"), (5, "regression.resolved")]
        .into_iter()
        .map(|(l, e)| (format!("lineage-{l}"), e))
        .collect()
}

/// How the stream went, from the clients' side.
#[derive(Debug, Default)]
struct Tally {
    created: AtomicUsize,
    /// Retried runs answered 200: the replica that went away had stored them.
    already_stored: AtomicUsize,
    retries: AtomicUsize,
}

/// Posts `run` to the replicas that are up, starting with `first`; on a dropped connection or a
/// 5xx, as a load balancer would, marks a replica that refuses connections as down and sends the
/// same run (same run id) to the next one.
async fn post_with_retries(
    c: &reqwest::Client,
    urls: &[String],
    down: &Mutex<BTreeSet<usize>>,
    first: usize,
    token: &str,
    run: &Value,
    tally: &Tally,
) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut at = first;
    let mut retried = false;
    loop {
        assert!(Instant::now() < deadline, "run {} could not be stored anywhere", run["run_id"]);
        let r = at % urls.len();
        at += 1;
        if down.lock().unwrap().contains(&r) {
            continue;
        }
        match c.post(format!("{}/api/v1/runs", urls[r])).bearer_auth(token).json(run).send().await {
            Ok(res) if res.status() == 201 => {
                tally.created.fetch_add(1, Ordering::SeqCst);
                return;
            }
            Ok(res) if res.status() == 200 => {
                assert!(retried, "a run sent once was answered as already stored");
                tally.already_stored.fetch_add(1, Ordering::SeqCst);
                return;
            }
            Ok(res) if res.status().is_server_error() => {}
            Ok(res) => panic!("run {} answered {}: {}", run["run_id"], res.status(), res.text().await.unwrap()),
            Err(e) => {
                if e.is_connect() {
                    down.lock().unwrap().insert(r);
                }
            }
        }
        retried = true;
        tally.retries.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Starts `n` servers at once on `database_url`, each answering once its start-up (migrations
/// included) is done.
fn start_replicas(n: usize, database_url: &str, config: &Path, dir: &Path) -> Vec<Server> {
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let (url, config, log) =
                (database_url.to_string(), config.to_path_buf(), dir.join(format!("replica-{i}.log")));
            std::thread::spawn(move || Server::start(&url, &free_addr(), Some(&config), &log))
        })
        .collect();
    handles.into_iter().map(|h| h.join().expect("a replica did not start")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_on_one_postgres_share_the_work_and_do_it_once_when_one_is_killed() {
    let started = Instant::now();
    let db = TestDb::unmigrated(Backend::Postgres).await;
    let dir = tempfile::tempdir().unwrap();
    let (receiver, hits) = start_receiver().await;
    let config = dir.path().join("replicas.toml");
    let mut text = String::from(
        "[alerts]\nretry_base_ms = 200\nretry_max_ms = 1000\npoll_ms = 100\ntimeout_ms = 2000\n\n\
         [retention]\nsamples_days = 30\n",
    );
    for target in TARGETS {
        text.push_str(&format!(
            "\n[[webhooks]]\nname = \"{target}\"\nurl = \"http://{receiver}/hook/{target}\"\nsecret = \"replicas-test-secret-0123456789\"\n"
        ));
    }
    std::fs::write(&config, text).unwrap();

    // Three replicas at once on a database no migration has touched.
    let mut replicas = start_replicas(REPLICAS, &db.url, &config, dir.path());
    let urls: Vec<String> = replicas.iter().map(Server::url).collect();
    let token = create_token(&db.url, "agents", "ingest");
    let c = client();
    for url in &urls {
        assert_eq!(get_json(&c, &format!("{url}/readyz")).await.0, 200, "{url} is ready");
    }
    let startup = started.elapsed();

    // Survivors' readiness, every 100 ms while runs stream in and the replica is killed.
    let victim = REPLICAS - 1;
    let stop = Arc::new(AtomicBool::new(false));
    let not_ready: Arc<Mutex<Vec<(usize, u16)>>> = Arc::default();
    let probes = {
        let (urls, stop, not_ready) = (urls.clone(), stop.clone(), not_ready.clone());
        tokio::spawn(async move {
            let c = client();
            let mut checks = 0;
            while !stop.load(Ordering::SeqCst) {
                for (r, url) in urls.iter().enumerate().filter(|(r, _)| *r != victim) {
                    let status = c.get(format!("{url}/readyz")).send().await.map_or(0, |res| res.status().as_u16());
                    if status != 200 {
                        not_ready.lock().unwrap().push((r, status));
                    }
                    checks += 1;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            checks
        })
    };

    // One client per lineage, its versions in order, each run to the next replica in turn.
    let mut submitted: HashMap<String, Value> = HashMap::new();
    let down: Arc<Mutex<BTreeSet<usize>>> = Arc::default();
    let tally = Arc::new(Tally::default());
    let mut clients = Vec::new();
    for l in 0..LINEAGES {
        let runs: Vec<Value> = (0..VERSIONS)
            .flat_map(|v| {
                (0..HOSTS).map(move |h| {
                    RunShape::new(&format!("lineage-{l}"), &format!("1.{v}.0"))
                        .host(&format!("host-{h}"))
                        .slope(slope(l, v))
                        .workloads(3)
                        .sizes(6)
                        .samples(5)
                        .json()
                })
            })
            .collect();
        for run in &runs {
            submitted.insert(run["run_id"].as_str().unwrap().to_string(), run.clone());
        }
        let (urls, down, token, tally) = (urls.clone(), down.clone(), token.clone(), tally.clone());
        clients.push(tokio::spawn(async move {
            let c = client();
            for (i, run) in runs.iter().enumerate() {
                post_with_retries(&c, &urls, &down, l + i, &token, run, &tally).await;
            }
        }));
    }
    let total = LINEAGES * VERSIONS * HOSTS;

    // SIGKILL one replica once a sixth of the runs are in, while every client is sending and its
    // summary passes are under way, but before any lineage crosses (lineage 5 does at its 13th
    // run): a delivery its sender had sent but not yet recorded would be sent again by a
    // survivor, as at-least-once delivery means to, and "once" could not be asserted.
    let deadline = Instant::now() + Duration::from_secs(60);
    while tally.created.load(Ordering::SeqCst) < total / 6 {
        assert!(Instant::now() < deadline, "the stream stalled before the kill");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let victim_last = Claims::of(&scrape(&c, &urls[victim]).await);
    replicas[victim].kill_9();
    let stored_at_kill = tally.created.load(Ordering::SeqCst);
    for client in clients {
        client.await.unwrap();
    }
    let streamed = started.elapsed();

    // Let the survivors finish what is pending: summaries, then deliveries.
    let survivors: Vec<usize> = (0..REPLICAS).filter(|r| *r != victim).collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = scrape(&c, &urls[survivors[0]]).await;
        let pending =
            metric(&text, "slopewatch_summaries_pending") + metric(&text, "slopewatch_webhook_outbox_pending");
        let delivered = hits.lock().unwrap().len();
        if pending == 0 && delivered >= expected_events().len() * TARGETS.len() {
            break;
        }
        assert!(Instant::now() < deadline, "work left pending: {pending}, {delivered} deliveries");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A delivery sent twice would arrive within a few polls.
    tokio::time::sleep(Duration::from_millis(800)).await;
    stop.store(true, Ordering::SeqCst);
    let readiness_checks = probes.await.unwrap();
    assert!(not_ready.lock().unwrap().is_empty(), "a survivor was not ready: {:?}", not_ready.lock().unwrap());

    // Every run stored once, whole in count.
    let url = &urls[survivors[0]];
    let (status, list) = get_json(&c, &format!("{url}/api/v1/runs?limit=1000")).await;
    assert_eq!(status, 200);
    let stored: BTreeSet<String> =
        list["runs"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(list["runs"].as_array().unwrap().len(), total, "every run stored, none twice");
    assert_eq!(stored, submitted.keys().cloned().collect(), "the runs stored are the runs sent");
    assert_eq!(tally.created.load(Ordering::SeqCst) + tally.already_stored.load(Ordering::SeqCst), total);

    // Counted once in the summaries: every version of every workload counts each host's run once.
    for l in 0..LINEAGES {
        for w in 0..3 {
            let (status, series) =
                get_json(&c, &format!("{url}/api/v1/series?workload=workload-{w}&toolchain=lineage-{l}")).await;
            assert_eq!(status, 200, "{series}");
            let versions = series["versions"].as_array().unwrap();
            assert_eq!(versions.len(), VERSIONS, "lineage-{l} workload-{w}: {series}");
            for v in versions {
                assert_eq!(v["runs"], HOSTS, "lineage-{l} workload-{w} {}: each run counted once", v["version"]);
                assert_eq!(v["hosts"], HOSTS);
            }
        }
    }

    // Each regression opened once, each event delivered once per target.
    let (_, regressions) = get_json(&c, &format!("{url}/api/v1/regressions")).await;
    let regressions = regressions["regressions"].as_array().unwrap().clone();
    let lineages: Vec<&str> = regressions.iter().map(|r| r["regression"]["lineage"].as_str().unwrap()).collect();
    assert_eq!(lineages.iter().copied().collect::<BTreeSet<_>>(), ["lineage-3", "lineage-4", "lineage-5"].into());
    assert_eq!(lineages.len(), 3, "one regression per lineage that crossed: {lineages:?}");
    let lineage_of: HashMap<i64, String> = regressions
        .iter()
        .map(|r| (r["regression"]["id"].as_i64().unwrap(), r["regression"]["lineage"].as_str().unwrap().to_string()))
        .collect();
    let hits = hits.lock().unwrap().clone();
    let mut per_delivery: BTreeMap<&str, usize> = BTreeMap::new();
    let mut per_event: BTreeMap<(String, String, &str), usize> = BTreeMap::new();
    for h in &hits {
        *per_delivery.entry(h.delivery.as_str()).or_default() += 1;
        *per_event.entry((h.target.clone(), lineage_of[&h.regression_id].clone(), h.event.as_str())).or_default() += 1;
    }
    assert!(per_delivery.values().all(|n| *n == 1), "a delivery was sent twice: {per_delivery:?}");
    let mut expected = BTreeMap::new();
    for target in TARGETS {
        for (lineage, event) in expected_events() {
            expected.insert((target.to_string(), lineage, event), 1);
        }
    }
    assert_eq!(per_event, expected, "each event once per target");

    // The claims counted across replicas: the survivors' counts now, the killed one's as last
    // scraped before the kill. What it claimed after that scrape is unseen, so the sums may fall
    // short of the work by that much, and must never exceed it.
    let mut counts = vec![victim_last];
    for r in &survivors {
        counts.push(Claims::of(&scrape(&c, &urls[*r]).await));
    }
    let sum = Claims::sum(&counts);
    let attempts: u64 = {
        let mut n = 0;
        for id in lineage_of.keys() {
            let (_, detail) = get_json(&c, &format!("{url}/api/v1/regressions/{id}")).await;
            for d in detail["deliveries"].as_array().unwrap() {
                assert_eq!(d["delivery"]["status"], "delivered", "{d}");
                n += d["attempts"].as_array().unwrap().len() as u64;
            }
        }
        n
    };
    assert_eq!(attempts, hits.len() as u64, "one attempt per delivery, each reaching the receiver");
    assert!(sum.summary_runs <= total as u64, "runs taken into summaries twice: {counts:?}");
    assert!(sum.deliveries <= attempts, "deliveries claimed twice: {counts:?}");
    assert_eq!(sum.retention_passes, 1, "one retention pass for the three replicas started together: {counts:?}");
    let after_kill: u64 = counts[1..].iter().map(|c| c.summary_runs).sum();
    assert!(after_kill > 0, "the survivors took runs into summaries");

    // A replacement for the killed replica, started once the retention period is over: it runs
    // the pass, pruning exactly the runs that are old enough; the survivors do not run it again.
    let old: Vec<&String> = stored.iter().take(10).collect();
    let ids = old.iter().map(|id| format!("'{id}'")).collect::<Vec<_>>().join(", ");
    db.execute(&format!(
        "UPDATE runs SET received_at = received_at - INTERVAL '40 days' WHERE id IN ({ids});
         UPDATE task_claims SET claimed_at = claimed_at - INTERVAL '2 hours' WHERE task = 'retention';"
    ))
    .await;
    let replacement = Server::start(&db.url, &free_addr(), Some(&config), &dir.path().join("replacement.log"));
    let deadline = Instant::now() + Duration::from_secs(20);
    let pruned = loop {
        let claims = Claims::of(&scrape(&c, &replacement.url()).await);
        if claims.retention_passes == 1 {
            break claims.retention_runs;
        }
        assert!(Instant::now() < deadline, "the replacement did not run the due retention pass");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(pruned, old.len() as u64, "the pass pruned the old runs");
    for id in &old {
        let (_, run) = get_json(&c, &format!("{url}/api/v1/runs/{id}")).await;
        assert!(run["samples_pruned_at"].is_string(), "{id} pruned: {run}");
    }
    for r in &survivors {
        let claims = Claims::of(&scrape(&c, &urls[*r]).await);
        assert_eq!(claims.retention_runs, 0, "replica {r} pruned nothing: the period's pass was claimed");
    }

    eprintln!(
        "replicas: {REPLICAS} started at once on a new database in {:.1} s; {total} runs from {LINEAGES} clients, \
         replica {victim} killed after {stored_at_kill}; {} retries, {} retried runs answered as already stored; \
         {} runs taken into summaries as counted ({:?} by the killed replica as last scraped and the survivors; \
         {} unseen, claimed by the killed replica after its last scrape); {} regressions, {} deliveries to {} \
         targets, each once ({} claimed as counted: {:?}); retention: 1 pass at \
         start-up, 1 by the replacement ({pruned} runs); {readiness_checks} readiness checks of the survivors, all \
         200; streamed in {:.1} s, {:.1} s in all",
        startup.as_secs_f64(),
        tally.retries.load(Ordering::SeqCst),
        tally.already_stored.load(Ordering::SeqCst),
        sum.summary_runs,
        counts.iter().map(|c| c.summary_runs).collect::<Vec<_>>(),
        total as u64 - sum.summary_runs,
        regressions.len(),
        hits.len(),
        TARGETS.len(),
        sum.deliveries,
        counts.iter().map(|c| c.deliveries).collect::<Vec<_>>(),
        streamed.as_secs_f64(),
        started.elapsed().as_secs_f64(),
    );
}

// ---- nginx in front of two replicas (the compose `replicas` profile) ----------------------------

/// Debian's nginx binary, or `None` with a note when it is not installed.
fn nginx_binary() -> Option<PathBuf> {
    let found = ["/usr/sbin/nginx", "/usr/bin/nginx"].into_iter().map(PathBuf::from).find(|p| p.is_file());
    if found.is_none() {
        eprintln!(
            "note: nginx is not installed (scripts/install-test-deps installs Debian's package); the proxy \
             configuration of the compose `replicas` profile was NOT tested"
        );
    }
    found
}

/// deploy/nginx-replicas.conf as the compose profile mounts it, with the two replicas and the
/// listening address replaced by loopback ones, inside a main configuration like the official
/// image's (whose `http` block includes conf.d), running in the foreground as this user.
fn render_nginx(dir: &Path, upstreams: [&str; 2], listen: &str) -> PathBuf {
    let shipped = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/nginx-replicas.conf")).unwrap();
    let mut site = shipped.clone();
    for (from, to) in [
        ("server server:3000 ", format!("server {} ", upstreams[0])),
        ("server server-2:3000 ", format!("server {} ", upstreams[1])),
        ("listen 3000;", format!("listen {listen};")),
    ] {
        assert_eq!(shipped.matches(from).count(), 1, "deploy/nginx-replicas.conf has `{from}` once");
        site = site.replace(from, &to);
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("default.conf"), site).unwrap();
    let d = dir.display();
    let main = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 256; }}\n\
         http {{\n    access_log {d}/access.log;\n    client_body_temp_path {d}/body;\n    proxy_temp_path {d}/proxy;\n\
         \x20   fastcgi_temp_path {d}/fastcgi;\n    uwsgi_temp_path {d}/uwsgi;\n    scgi_temp_path {d}/scgi;\n\
         \x20   include {d}/default.conf;\n}}\n"
    );
    let path = dir.join("nginx.conf");
    std::fs::write(&path, main).unwrap();
    path
}

/// nginx running a rendered configuration; stopped when dropped.
struct Nginx(Child);

impl Nginx {
    fn start(nginx: &Path, conf: &Path, listen: &str) -> Nginx {
        let dir = conf.parent().unwrap();
        let log = std::fs::File::create(dir.join("stderr.log")).unwrap();
        let child = Command::new(nginx)
            .arg("-p")
            .arg(dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(conf)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut proxy = Nginx(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(listen).is_err() {
            if let Ok(Some(status)) = proxy.0.try_wait() {
                panic!(
                    "nginx exited with {status}: {}",
                    std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
                );
            }
            assert!(Instant::now() < deadline, "nginx did not listen on {listen}");
            std::thread::sleep(Duration::from_millis(20));
        }
        proxy
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An upstream on loopback that answers each request with the `X-Forwarded-For` it was given.
async fn start_echo() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let app = axum::Router::new().fallback(|headers: axum::http::HeaderMap| async move {
        headers.get("x-forwarded-for").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default()
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replicas_profiles_nginx_config_is_valid_balances_both_replicas_and_fails_over() {
    let Some(nginx) = nginx_binary() else { return };
    let dir = tempfile::tempdir().unwrap();

    // The configuration as shipped, rendered for loopback, passes nginx's own check.
    let (a, b, listen) = (free_addr(), free_addr(), free_addr());
    let conf = render_nginx(&dir.path().join("replicas"), [&a, &b], &listen);
    let check = Command::new(&nginx)
        .arg("-t")
        .arg("-p")
        .arg(dir.path().join("replicas"))
        .arg("-e")
        .arg(dir.path().join("replicas/error.log"))
        .arg("-c")
        .arg(&conf)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stderr);
    assert!(check.status.success() && said.contains("test is successful"), "nginx -t: {said}");

    // The client's address reaches the replicas in X-Forwarded-For.
    let echo = start_echo().await;
    let echo_listen = free_addr();
    let echo_conf = render_nginx(&dir.path().join("echo"), [&echo, &echo], &echo_listen);
    let echo_proxy = Nginx::start(&nginx, &echo_conf, &echo_listen);
    let c = client();
    let forwarded = c
        .get(format!("http://{echo_listen}/"))
        .header("x-forwarded-for", "203.0.113.7")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(forwarded, "203.0.113.7, 127.0.0.1", "the proxy appends the address it saw");
    drop(echo_proxy);

    // Two replicas on one database behind it: requests reach both.
    let db = TestDb::new(Backend::Postgres).await;
    let token = create_token(&db.url, "agents", "ingest");
    let mut replica_a = Server::start(&db.url, &a, None, &dir.path().join("a.log"));
    let replica_b = Server::start(&db.url, &b, None, &dir.path().join("b.log"));
    let _proxy = Nginx::start(&nginx, &conf, &listen);
    let proxy = format!("http://{listen}");
    const PROBES: u64 = 20;
    for _ in 0..PROBES {
        assert_eq!(get_json(&c, &format!("{proxy}/readyz")).await.0, 200);
    }
    let readyz =
        |text: &str| metric(text, "slopewatch_http_requests_total{route=\"/readyz\",method=\"GET\",status=\"200\"}");
    let (at_a, at_b) = (readyz(&scrape(&c, &replica_a.url()).await), readyz(&scrape(&c, &replica_b.url()).await));
    assert_eq!(at_a + at_b, PROBES, "every request went to one of the two");
    assert!(at_a >= PROBES / 4 && at_b >= PROBES / 4, "balanced across both: {at_a} and {at_b}");

    // Runs go through it; with one replica gone the proxy sends them to the other.
    let run = RunShape::new("gcc-glibc", "12.2.0").workloads(3).sizes(6).samples(5).json();
    let post = |run: Value| {
        let (c, proxy, token) = (c.clone(), proxy.clone(), token.clone());
        async move { c.post(format!("{proxy}/api/v1/runs")).bearer_auth(token).json(&run).send().await.unwrap().status() }
    };
    assert_eq!(post(run.clone()).await, 201);
    assert_eq!(post(run).await, 200, "sent again through the proxy, stored once");
    replica_a.kill_9();
    for i in 0..4 {
        let run =
            RunShape::new("gcc-glibc", "12.2.0").host(&format!("host-{i}")).workloads(3).sizes(6).samples(5).json();
        assert_eq!(post(run).await, 201, "stored through the surviving replica");
    }
    eprintln!("nginx {}: config valid; {at_a} and {at_b} of {PROBES} requests at the two replicas; fails over", {
        let v = Command::new(&nginx).arg("-v").output().unwrap();
        String::from_utf8_lossy(&v.stderr).trim().to_string()
    });
}

// ---- SQLite: one server at a time ------------------------------------------------------------

#[test]
fn a_second_server_on_the_same_sqlite_file_is_refused_and_told_who_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("slopewatch.db").display());
    let mut first = Server::start(&url, &free_addr(), None, &dir.path().join("first.log"));

    let second = Command::new(env!("CARGO_BIN_EXE_slopewatch"))
        .args(["serve", "--bind", &free_addr(), "--database-url", &url])
        .env_remove("SLOPEWATCH_CONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "a second server on the same file must not start: {said}");
    assert!(said.contains("already served by another slopewatch server"), "{said}");
    assert!(said.contains(&format!("pid {}", first.pid())), "names the holder: {said}");
    assert!(said.contains("one server at a time") && said.contains("Postgres"), "{said}");
    assert!(first.is_running(), "the first server is untouched");

    // Commands beside the server still work on the file.
    create_token(&url, "beside", "ingest");

    // A server killed outright leaves no lock behind.
    first.kill_9();
    let third = Server::start(&url, &free_addr(), None, &dir.path().join("third.log"));
    let ready = Command::new(env!("CARGO_BIN_EXE_slopewatch"))
        .args(["health", "--url", &format!("{}/readyz", third.url())])
        .output()
        .unwrap();
    assert!(ready.status.success(), "the next server serves: {}", String::from_utf8_lossy(&ready.stderr));
    eprintln!("second server refused: {}", said.lines().last().unwrap_or_default());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_is_refused_at_once_by_every_replica() {
    let db = TestDb::new(Backend::Postgres).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("server.toml");
    std::fs::write(&config, "").unwrap();
    let replicas = start_replicas(2, &db.url, &config, dir.path());
    let token = create_token(&db.url, "build-07", "ingest");
    let c = client();
    let post = |url: String| {
        let (c, token) = (c.clone(), token.clone());
        async move {
            let run = RunShape::new("gcc-glibc", "12.2.0").host("build-07").json();
            let res = c.post(format!("{url}/api/v1/runs")).bearer_auth(&token).json(&run).send().await.unwrap();
            res.status().as_u16()
        }
    };
    for r in &replicas {
        assert_eq!(post(r.url()).await, 201, "the token is good on {}", r.url());
    }
    let out = Command::new(env!("CARGO_BIN_EXE_slopewatch"))
        .args(["token", "revoke", "build-07", "--database-url", &db.url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for r in &replicas {
        assert_eq!(post(r.url()).await, 401, "refused at once by {}: no replica remembers a valid token", r.url());
    }
}
