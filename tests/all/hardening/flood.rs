//! Slow anonymous uploads against ingest, through the server binary at its default limits: 300
//! clients, each from a loopback address of its own (127.0.0.2 and up), send 1 MB form bodies at
//! 64 bytes a second, nine in ten to `/login` and the rest to the other form routes, half declaring
//! their length and half chunked, starting again a second after each answer; meanwhile an agent posts runs with an
//! ingest token and a reader loads the overview. Every run must be answered 201 and stored, every
//! overview 200, and the server's resident memory stay under 150 MB. Latencies are printed, not
//! asserted.
//!
//! `SLOPEWATCH_FLOOD_SECS` (5 in the suite) and `SLOPEWATCH_FLOOD_CLIENTS` (300, the most allowed)
//! set its length and its clients; `scripts/slow-upload-flood` runs it for 30 s.

use super::try_connect_from;
use crate::builders::RunShape;
use crate::helpers::process::{create_token, free_addr, Server};
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

/// Bytes each client sends a second, in writes of `STEP` bytes.
const BYTES_PER_SEC: u64 = 64;
const STEP: usize = 8;
/// The body each client declares or sets out to send.
const BODY: usize = 1_000_000;
const MOST_CLIENTS: usize = 300;
const RSS_LIMIT_KB: u64 = 150 * 1024;

pub(super) fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The form routes: `/login`, which reads a body from anyone, for nine clients in ten, the
/// others in turn for the tenth (they answer 401 from the headers when they can).
fn routes() -> Vec<String> {
    let resend = format!("/deliveries/{}/resend", uuid::Uuid::new_v4());
    let others = ["/logout", "/regressions/1/notes", "/regressions/1/status", "/regressions/1/links", &resend];
    others.iter().flat_map(|r| std::iter::repeat_n("/login", 9).chain([*r]).map(String::from)).collect()
}

/// The `n`th client's address: 127.0.0.2 and up.
fn client_addr(n: usize) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(Ipv4Addr::new(127, 0, 0, 2)) + n as u32)
}

/// How one upload ended: the status the server answered, `closed` (no answer), `refused` (no
/// connection) or `unanswered` (still being sent when the flood ended).
async fn upload(from: Ipv4Addr, addr: SocketAddr, path: &str, chunked: bool, until: Instant) -> String {
    let Ok(mut stream) = try_connect_from(from, addr).await else { return "refused".into() };
    let framing = if chunked { "Transfer-Encoding: chunked".to_string() } else { format!("Content-Length: {BODY}") };
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: sw\r\nContent-Type: application/x-www-form-urlencoded\r\n{framing}\r\n\r\n"
    );
    if chunked {
        head.push_str(&format!("{BODY:x}\r\n"));
    }
    if stream.write_all(head.as_bytes()).await.is_err() {
        return "closed".into();
    }
    let pause = Duration::from_millis(1000 * STEP as u64 / BYTES_PER_SEC);
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout(pause, stream.read(&mut buf)).await {
            Ok(Ok(n @ 1..)) => {
                answer.extend_from_slice(&buf[..n]);
                if answer.windows(2).any(|w| w == b"\r\n") {
                    return status_of(&answer);
                }
            }
            Ok(_) => return if answer.is_empty() { "closed".into() } else { status_of(&answer) },
            Err(_) => {}
        }
        if Instant::now() >= until {
            return "unanswered".into();
        }
        if stream.write_all(&[b'a'; STEP]).await.is_err() {
            let _ = tokio::time::timeout(Duration::from_secs(1), stream.read_to_end(&mut answer)).await;
            return if answer.is_empty() { "closed".into() } else { status_of(&answer) };
        }
    }
}

fn status_of(answer: &[u8]) -> String {
    String::from_utf8_lossy(answer).split_whitespace().nth(1).unwrap_or("garbled").to_string()
}

/// One client: uploads again and again until `until`, a second after each answer.
async fn client(n: usize, addr: SocketAddr, path: String, until: Instant) -> BTreeMap<String, usize> {
    let mut outcomes = BTreeMap::new();
    while Instant::now() < until {
        // One ten of clients declares its length, the next chunks its body, and so on.
        let outcome = upload(client_addr(n), addr, &path, (n / 10) % 2 == 1, until).await;
        *outcomes.entry(outcome).or_default() += 1;
        tokio::time::sleep_until(until.min(Instant::now() + Duration::from_secs(1))).await;
    }
    outcomes
}

/// A request's status and how long its answer took.
pub(super) type Timed = (u16, Duration);

/// An agent posting a run every `every` until `until`: each run's id, status and time.
pub(super) async fn agent(url: String, token: String, every: Duration, until: Instant) -> Vec<(String, Timed)> {
    let c = reqwest::Client::builder().timeout(Duration::from_secs(90)).build().unwrap();
    let mut posted = Vec::new();
    while Instant::now() < until {
        let run = RunShape::new("gcc-glibc", "12.2.0").host("agent-01").workloads(4).sizes(6).samples(5).json();
        let id = run["run_id"].as_str().unwrap().to_string();
        let started = Instant::now();
        let res = c.post(format!("{url}/api/v1/runs")).bearer_auth(&token).json(&run).send().await;
        let status = res.map_or(0, |r| r.status().as_u16());
        posted.push((id, (status, started.elapsed())));
        tokio::time::sleep(every).await;
    }
    posted
}

async fn reader(url: String, until: Instant) -> Vec<Timed> {
    let c = reqwest::Client::builder().timeout(Duration::from_secs(90)).build().unwrap();
    let mut read = Vec::new();
    while Instant::now() < until {
        let started = Instant::now();
        let res = c.get(format!("{url}/")).send().await;
        let status = match res {
            Ok(r) => {
                let status = r.status().as_u16();
                let _ = r.bytes().await;
                status
            }
            Err(_) => 0,
        };
        read.push((status, started.elapsed()));
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    read
}

/// The peak resident memory of a process, sampled every 100 ms until stopped.
pub(super) struct PeakRss {
    sampling: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    sampler: tokio::task::JoinHandle<()>,
}

impl PeakRss {
    pub(super) fn start(pid: u32) -> PeakRss {
        let (sampling, peak) = (Arc::new(AtomicBool::new(true)), Arc::new(AtomicU64::new(0)));
        let sampler = {
            let (sampling, peak) = (sampling.clone(), peak.clone());
            tokio::spawn(async move {
                while sampling.load(Ordering::Relaxed) {
                    peak.fetch_max(rss_kb(pid).unwrap_or_default(), Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
        };
        PeakRss { sampling, peak, sampler }
    }

    /// The peak in KiB.
    pub(super) async fn stop(self) -> u64 {
        self.sampling.store(false, Ordering::Relaxed);
        self.sampler.await.unwrap();
        self.peak.load(Ordering::Relaxed)
    }
}

/// How many of the `posted` runs the server at `url` has stored.
pub(super) async fn stored(url: &str, token: &str, posted: &[(String, Timed)]) -> usize {
    let c = reqwest::Client::new();
    let mut stored = 0;
    for (id, _) in posted {
        let res = c.get(format!("{url}/api/v1/runs/{id}")).bearer_auth(token).send().await.unwrap();
        stored += usize::from(res.status().as_u16() == 200);
    }
    stored
}

/// The process's resident memory in KiB, from /proc.
pub(super) fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?.trim().trim_end_matches("kB").trim().parse().ok()
}

pub(super) fn statuses(timed: &[Timed]) -> String {
    let mut by: BTreeMap<u16, usize> = BTreeMap::new();
    for (status, _) in timed {
        *by.entry(*status).or_default() += 1;
    }
    by.iter().map(|(s, n)| format!("{s} × {n}")).collect::<Vec<_>>().join(", ")
}

pub(super) fn percentiles(timed: &[Timed]) -> String {
    let mut took: Vec<Duration> = timed.iter().map(|(_, d)| *d).collect();
    took.sort();
    let at =
        |q: f64| took.get(((took.len() as f64 * q).ceil() as usize).saturating_sub(1)).copied().unwrap_or_default();
    format!("p50 {:.1} ms, p99 {:.1} ms", at(0.5).as_secs_f64() * 1e3, at(0.99).as_secs_f64() * 1e3)
}

#[tokio::test]
async fn slow_anonymous_uploads_from_300_addresses_leave_ingest_and_the_overview_served() {
    let secs = env_number("SLOPEWATCH_FLOOD_SECS", 5);
    let clients = env_number("SLOPEWATCH_FLOOD_CLIENTS", MOST_CLIENTS as u64) as usize;
    assert!(clients <= MOST_CLIENTS && secs <= 60, "the flood is bounded: {clients} clients, {secs} s");
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("sw.db").display());
    let token = create_token(&db, "agent", "ingest");
    let server = Server::start_with_env(&db, &free_addr(), None, &dir.path().join("server.log"), "warn", &[]);
    let (url, addr): (String, SocketAddr) = (server.url(), server.addr.parse().unwrap());

    let pid = server.pid();
    let peak = PeakRss::start(pid);
    let at_start = rss_kb(pid).unwrap_or_default();
    let until = Instant::now() + Duration::from_secs(secs);
    let routes = routes();
    let flood: Vec<_> =
        (0..clients).map(|n| tokio::spawn(client(n, addr, routes[n % routes.len()].clone(), until))).collect();
    // The agent and the reader start once every client has begun its first upload.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (posted, read) =
        tokio::join!(agent(url.clone(), token.clone(), Duration::from_millis(250), until), reader(url.clone(), until));
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    for client in flood {
        for (outcome, n) in client.await.unwrap() {
            *outcomes.entry(outcome).or_default() += n;
        }
    }
    let peak_kb = peak.stop().await;
    let stored = stored(&url, &token, &posted).await;
    let c = reqwest::Client::new();
    let metrics = c.get(format!("{url}/metrics")).send().await.unwrap().text().await.unwrap();
    let refused: Vec<&str> = metrics
        .lines()
        .filter_map(|l| l.strip_prefix("slopewatch_requests_refused_total"))
        .filter(|l| !l.ends_with(" 0"))
        .collect();
    let runs: Vec<Timed> = posted.iter().map(|(_, t)| *t).collect();
    let logins = (0..clients).filter(|n| routes[n % routes.len()] == "/login").count();
    eprintln!("flood: {clients} clients × {secs} s, {BYTES_PER_SEC} B/s each, 1 MB forms, {logins} to /login");
    eprintln!("flood answers: {outcomes:?}");
    eprintln!("runs: {} posted: {}; {}; {stored} stored", runs.len(), statuses(&runs), percentiles(&runs));
    eprintln!("overview: {} loads: {}; {}", read.len(), statuses(&read), percentiles(&read));
    eprintln!("server RSS: {:.1} MB at start, peak {:.1} MB", at_start as f64 / 1024.0, peak_kb as f64 / 1024.0);
    eprintln!("refused by the server: {}", if refused.is_empty() { "none counted".into() } else { refused.join(", ") });

    assert!(!runs.is_empty() && !read.is_empty(), "the agent and the reader had their turn");
    assert!(runs.iter().all(|(s, _)| *s == 201), "every run is answered 201: {}", statuses(&runs));
    assert_eq!(stored, posted.len(), "every run is stored");
    assert!(read.iter().all(|(s, _)| *s == 200), "the overview answers 200 throughout: {}", statuses(&read));
    assert!(peak_kb < RSS_LIMIT_KB, "the server's memory peaked at {peak_kb} KiB");
}
