//! End to end against the real slopewatch server: submit, server down (spooled), server up
//! (flushed once, stored once). Skipped with a note when the server binary has not been built.

mod common;
use common::*;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn server_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SLOPEWATCH_SERVER_BIN") {
        return Some(PathBuf::from(p));
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let mut dirs = vec![workspace.join("target")];
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        dirs.insert(0, PathBuf::from(t));
    }
    dirs.into_iter().map(|d| d.join("debug/slopewatch")).find(|p| p.is_file())
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

fn start(bin: &Path, addr: &str, db: &str) -> Server {
    let child = Command::new(bin)
        .args(["serve", "--bind", addr, "--database-url", db])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let began = Instant::now();
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(began.elapsed() < Duration::from_secs(30), "server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Server(child)
}

#[test]
fn a_run_made_while_the_server_is_down_is_spooled_then_stored_exactly_once() {
    let Some(bin) = server_binary() else {
        eprintln!("note: the slopewatch server binary is not built (or set SLOPEWATCH_SERVER_BIN); skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("e2e.db").display());
    let token = Command::new(&bin)
        .args(["token", "create", "--name", "agent-e2e", "--scope", "ingest", "--database-url", &db])
        .output()
        .unwrap();
    assert!(token.status.success(), "{}", String::from_utf8_lossy(&token.stderr));
    let token = String::from_utf8(token.stdout).unwrap().lines().last().unwrap().trim().to_string();
    let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let url = format!("http://{addr}");
    let spool = dir.path().join("spool");
    let agent_with = |args: &[&str]| {
        run(agent()
            .args(args)
            .args(["--server", &url, "--token", &token, "--retry-base", "10ms", "--attempts", "2"])
            .arg("--spool-dir")
            .arg(&spool))
    };

    // Server down: measured, spooled, exit 75.
    let out = agent_with(&[
        "run",
        "--toolchain",
        "gcc-glibc=gcc",
        "--workloads",
        "strchr,memchr",
        "--max-size",
        "256K",
        "--reps",
        "2",
        "--cache-dir",
        dir.path().join("cache").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(75), "{}", text(&out));
    let pending: Vec<PathBuf> = std::fs::read_dir(&spool)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(pending.len(), 1);
    let kept = dir.path().join("kept.json");
    std::fs::copy(&pending[0], &kept).unwrap();

    // Server up: flushed once and stored.
    let _server = start(&bin, &addr, &db);
    let out = agent_with(&["flush"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains(" stored at /runs/"), "{}", text(&out));
    assert!(!pending[0].exists());

    // Sending the same run again is recognised, not stored twice.
    let out =
        run(agent().args(["submit", "--server", &url, "--token", &token]).arg(&kept).arg("--spool-dir").arg(&spool));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("already stored"), "{}", text(&out));

    // A bad token is a rejection with the server's message, not a retry.
    let out = run(agent()
        .args(["submit", "--server", &url, "--token", "sw_wrong"])
        .arg(&kept)
        .arg("--spool-dir")
        .arg(&spool));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("HTTP 401"), "{}", text(&out));
}
