//! Memory of a server process under slow unauthenticated uploads: starts `slopewatch serve` on
//! a temporary SQLite file, opens `--clients` connections at once, each posting a run of
//! `--body-mib` MiB without a token in 64 KiB pieces `--pause-ms` apart, and prints the process's
//! resident memory before and at its peak (`VmHWM`), with the answers the clients got.
//!
//! cargo build --bin slopewatch && cargo run --example slow_uploads -- \
//!     --server target/debug/slopewatch --clients 200
//!
//! Traffic goes to 127.0.0.1 only.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const PIECE: usize = 64 * 1024;

struct Args {
    server: String,
    clients: usize,
    body_mib: usize,
    pause_ms: u64,
}

fn args() -> Args {
    let mut args = Args { server: "target/debug/slopewatch".into(), clients: 200, body_mib: 8, pause_ms: 20 };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--server" => args.server = value,
            "--clients" => args.clients = value.parse().expect("--clients is a number"),
            "--body-mib" => args.body_mib = value.parse().expect("--body-mib is a number"),
            "--pause-ms" => args.pause_ms = value.parse().expect("--pause-ms is a number"),
            _ => panic!("unknown flag {flag}; flags: --server PATH --clients N --body-mib N --pause-ms N"),
        }
    }
    args
}

/// A line of `/proc/PID/status` in MiB (`VmRSS`, `VmHWM`).
fn memory_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

/// Posts `body_len` bytes without a token, slowly; answers the status the server gave, or how
/// the connection ended without one, and how many body bytes were sent.
async fn upload(addr: String, body_len: usize, pause: Duration) -> (String, usize) {
    let Ok(mut stream) = TcpStream::connect(&addr).await else { return ("connect failed".into(), 0) };
    let head = format!(
        "POST /api/v1/runs HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {body_len}\r\n\r\n"
    );
    if stream.write_all(head.as_bytes()).await.is_err() {
        return ("closed during the head".into(), 0);
    }
    let (mut reader, mut writer) = stream.into_split();
    let answer = tokio::spawn(async move {
        let mut buf = vec![0u8; 1024];
        let n = reader.read(&mut buf).await.unwrap_or(0);
        let text = String::from_utf8_lossy(&buf[..n]).into_owned();
        text.split_whitespace().nth(1).map(|s| format!("HTTP {s}")).unwrap_or_else(|| "no answer".into())
    });
    let piece = vec![b' '; PIECE];
    let mut sent = 0;
    while sent < body_len && !answer.is_finished() {
        let n = PIECE.min(body_len - sent);
        if writer.write_all(&piece[..n]).await.is_err() {
            break;
        }
        sent += n;
        tokio::time::sleep(pause).await;
    }
    let status = tokio::time::timeout(Duration::from_secs(60), answer)
        .await
        .map(|r| r.unwrap_or_else(|_| "no answer".into()))
        .unwrap_or_else(|_| "no answer in 60 s".into());
    (status, sent)
}

#[tokio::main]
async fn main() {
    let args = args();
    let dir = tempfile::tempdir().unwrap();
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let mut server = Command::new(&args.server)
        .args(["serve", "--bind", &addr, "--database-url"])
        .arg(format!("sqlite://{}", dir.path().join("sw.db").display()))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", args.server));
    let pid = server.id();
    for _ in 0..600 {
        if TcpStream::connect(&addr).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let idle = memory_mib(pid, "VmRSS");

    let body_len = args.body_mib << 20;
    let pause = Duration::from_millis(args.pause_ms);
    let clients: Vec<_> = (0..args.clients).map(|_| tokio::spawn(upload(addr.clone(), body_len, pause))).collect();
    let mut answers = BTreeMap::<String, usize>::new();
    let mut sent = 0;
    for client in clients {
        let (status, bytes) = client.await.unwrap();
        *answers.entry(status).or_default() += 1;
        sent += bytes;
    }
    let peak = memory_mib(pid, "VmHWM");
    let _ = server.kill();
    let _ = server.wait();

    println!(
        "{} clients, each posting {} MiB without a token in 64 KiB pieces {} ms apart",
        args.clients, args.body_mib, args.pause_ms
    );
    println!("server RSS when idle: {idle:.1} MiB");
    println!("server peak RSS (VmHWM): {peak:.1} MiB");
    println!("body bytes the clients got to send: {:.1} MiB", sent as f64 / (1 << 20) as f64);
    for (status, n) in answers {
        println!("  {n} clients: {status}");
    }
}
