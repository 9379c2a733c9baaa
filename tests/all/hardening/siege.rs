//! Nobody without a token can stop ingest. Against the server binary at its defaults, seeded with
//! runs, an agent posts a run every 0.5 s while clients from 20 addresses of their own
//! (127.0.0.10–29) lay siege at once: 600 idle connections, 30 an address, each asking `/healthz`
//! after 4 s idle and connecting again; 100 loops sending a well-formed unknown bearer token to the
//! version page; 100 anonymous loops reading the version page and a run's raw samples; 40
//! connections that ask for the raw samples and never read. Every run must be answered 201 and
//! stored, and anonymous readers served again afterwards: on SQLite, on Postgres, and with the
//! whole of loopback trusted as proxies (where no address cap applies). Latencies, what the
//! besiegers got and the server's memory are printed, not asserted.
//!
//! `SLOPEWATCH_SIEGE_SECS` (6 in the suite, 60 at most) sets its length; `scripts/siege` runs 30.

use super::flood::{agent, env_number, percentiles, statuses, stored, PeakRss, Timed};
use super::try_connect_from;
use crate::helpers::process::{create_token, free_addr, Server};
use crate::helpers::{Backend, TestDb};
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

const ADDRESSES: u32 = 20;
const IDLE_PER_ADDRESS: u32 = 30;
const LOOPS_PER_ADDRESS: u32 = 5;
const NON_READERS_PER_ADDRESS: u32 = 2;
/// A token of the server's form that no server made.
const UNKNOWN_TOKEN: &str = "sw_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// The `n`th besieger's address.
fn besieger(n: u32) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 0, 10 + (n % ADDRESSES) as u8)
}

type Outcomes = BTreeMap<String, usize>;

fn count(outcomes: &mut Outcomes, what: impl Into<String>) {
    *outcomes.entry(what.into()).or_default() += 1;
}

/// An idle connection: open, silent for 4 s, then `/healthz`; again until `until`.
async fn idle(from: Ipv4Addr, addr: SocketAddr, until: Instant) -> Outcomes {
    let mut outcomes = Outcomes::new();
    while Instant::now() < until {
        let Ok(mut stream) = try_connect_from(from, addr).await else {
            count(&mut outcomes, "refused");
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        tokio::time::sleep_until(until.min(Instant::now() + Duration::from_secs(4))).await;
        let mut answer = Vec::new();
        let asked = stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: sw\r\n\r\n").await.is_ok();
        let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
        let status = String::from_utf8_lossy(&answer).split_whitespace().nth(1).map(str::to_string);
        count(&mut outcomes, status.filter(|_| asked).unwrap_or_else(|| "closed".into()));
    }
    outcomes
}

/// Requests of `paths` in turn from `from` until `until`, with `token` where given.
async fn asking(from: Ipv4Addr, url: String, paths: Vec<String>, token: Option<&str>, until: Instant) -> Outcomes {
    let c =
        reqwest::Client::builder().local_address(IpAddr::V4(from)).timeout(Duration::from_secs(30)).build().unwrap();
    let mut outcomes = Outcomes::new();
    for path in paths.iter().cycle() {
        if Instant::now() >= until {
            break;
        }
        let mut req = c.get(format!("{url}{path}"));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        match req.send().await {
            Ok(r) => {
                count(&mut outcomes, r.status().as_u16().to_string());
                let _ = r.bytes().await;
            }
            Err(_) => {
                count(&mut outcomes, "error");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    outcomes
}

/// A connection that asks for `path` and never reads: answers whether the server closed it.
async fn never_reading(from: Ipv4Addr, addr: SocketAddr, path: String, until: Instant) -> Outcomes {
    let mut outcomes = Outcomes::new();
    let Ok(mut stream) = try_connect_from(from, addr).await else {
        count(&mut outcomes, "refused");
        return outcomes;
    };
    let _ = stream.write_all(format!("GET {path} HTTP/1.1\r\nHost: sw\r\n\r\n").as_bytes()).await;
    tokio::time::sleep_until(until).await;
    count(&mut outcomes, "held");
    outcomes
}

async fn siege(backend: Backend, proxies: bool) {
    let secs = env_number("SLOPEWATCH_SIEGE_SECS", 6);
    assert!(secs <= 60, "the siege is bounded: {secs} s");
    let dir = tempfile::tempdir().unwrap();
    let postgres = match backend {
        Backend::Postgres => Some(TestDb::new(Backend::Postgres).await),
        Backend::Sqlite => None,
    };
    let db = match &postgres {
        Some(pg) => pg.url.clone(),
        None => format!("sqlite://{}", dir.path().join("sw.db").display()),
    };
    let token = create_token(&db, "agent", "ingest");
    let env: &[(&str, &str)] = if proxies { &[("SLOPEWATCH_TRUSTED_PROXIES", "127.0.0.0/8")] } else { &[] };
    let server = Server::start_with_env(&db, &free_addr(), None, &dir.path().join("server.log"), "warn", env);
    let (url, addr): (String, SocketAddr) = (server.url(), server.addr.parse().unwrap());
    let seeded = agent(url.clone(), token.clone(), Duration::ZERO, Instant::now() + Duration::from_secs(1)).await;
    let run = &seeded.first().expect("a seed run").0;
    let (page, raw) = ("/toolchains/gcc-glibc/12.2.0".to_string(), format!("/api/v1/runs/{run}"));

    let peak = PeakRss::start(server.pid());
    let until = Instant::now() + Duration::from_secs(secs);
    let mut besiegers = Vec::new();
    for n in 0..ADDRESSES * IDLE_PER_ADDRESS {
        besiegers.push(("idle", tokio::spawn(idle(besieger(n), addr, until))));
    }
    for n in 0..ADDRESSES * LOOPS_PER_ADDRESS {
        let unknown = asking(besieger(n), url.clone(), vec![page.clone()], Some(UNKNOWN_TOKEN), until);
        besiegers.push(("unknown token", tokio::spawn(unknown)));
        let anonymous = asking(besieger(n), url.clone(), vec![page.clone(), raw.clone()], None, until);
        besiegers.push(("anonymous", tokio::spawn(anonymous)));
    }
    for n in 0..ADDRESSES * NON_READERS_PER_ADDRESS {
        besiegers.push(("never reading", tokio::spawn(never_reading(besieger(n), addr, raw.clone(), until))));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let posted = agent(url.clone(), token.clone(), Duration::from_millis(500), until).await;
    let mut got: BTreeMap<&str, Outcomes> = BTreeMap::new();
    for (kind, besieger) in besiegers {
        for (outcome, n) in besieger.await.unwrap() {
            *got.entry(kind).or_default().entry(outcome).or_default() += n;
        }
    }
    let peak_kb = peak.stop().await;
    let stored = stored(&url, &token, &posted).await;
    let c = reqwest::Client::new();
    let mut served_again = false;
    for _ in 0..40 {
        let res = c.get(format!("{url}{page}")).send().await;
        served_again = res.is_ok_and(|r| r.status().as_u16() == 200);
        if served_again {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let runs: Vec<Timed> = posted.iter().map(|(_, t)| *t).collect();
    let worst = runs.iter().map(|(_, d)| d.as_secs_f64()).fold(0.0, f64::max);
    eprintln!("siege on {backend:?}{}: {secs} s", if proxies { ", loopback trusted as proxies" } else { "" });
    eprintln!(
        "runs: {} posted: {}; {}; worst {worst:.2} s; {stored} stored",
        runs.len(),
        statuses(&runs),
        percentiles(&runs)
    );
    for (kind, outcomes) in &got {
        eprintln!("{kind}: {outcomes:?}");
    }
    eprintln!("server RSS peak {:.1} MB", peak_kb as f64 / 1024.0);
    let metrics = c.get(format!("{url}/metrics")).send().await.unwrap().text().await.unwrap();
    let refused: Vec<&str> =
        metrics.lines().filter_map(|l| l.strip_prefix("slopewatch_requests_refused_total")).collect();
    eprintln!("refused by the server: {}", refused.join(", "));

    assert!(!runs.is_empty(), "the agent had its turn");
    assert!(runs.iter().all(|(s, _)| *s == 201), "every run is answered 201: {}", statuses(&runs));
    assert_eq!(stored, posted.len(), "every run is stored");
    assert!(served_again, "anonymous readers are served again after the siege");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_siege_without_a_token_leaves_ingest_served_on_sqlite() {
    siege(Backend::Sqlite, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_siege_without_a_token_leaves_ingest_served_on_postgres() {
    siege(Backend::Postgres, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_siege_through_trusted_proxies_leaves_ingest_served() {
    siege(Backend::Sqlite, true).await;
}
