//! End to end against the real slopewatch server: submit, server down (spooled), server up
//! (flushed once, stored once). Skipped with a note when the server binary has not been built.

use crate::helpers::*;
use std::net::TcpListener;
use std::path::PathBuf;

#[test]
fn a_run_made_while_the_server_is_down_is_spooled_then_stored_exactly_once() {
    let Some(bin) = server_binary() else {
        eprintln!("note: the slopewatch server binary is not built (or set SLOPEWATCH_SERVER_BIN); skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("e2e.db").display());
    let token = ingest_token(&bin, &db);
    let spool = dir.path().join("spool");
    let agent_with = |url: &str, args: &[&str]| {
        run(agent()
            .args(args)
            .args(["--server", url, "--token", &token, "--retry-base", "10ms", "--attempts", "2"])
            .arg("--spool-dir")
            .arg(&spool))
    };

    // Server down: measured, spooled, exit 75. Down is a port nothing listens on, not a port
    // taken now and served later: the seconds of measuring between would let a test beside take it.
    let out = agent_with(
        &unreachable_server(),
        &[
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
        ],
    );
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
    let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let url = format!("http://{addr}");
    let _server = start_server(&bin, &addr, &db);
    let out = agent_with(&url, &["flush"]);
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
