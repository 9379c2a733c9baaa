//! Delivery without loss, against a real HTTP listener on 127.0.0.1 that answers as scripted.

mod common;
use common::*;
use std::net::TcpListener;

#[test]
fn transient_failures_are_retried_until_the_run_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let (file, id) = run_file(dir.path());
    let (url, seen) = listener(vec![(503, "{}".into()), (429, "{}".into()), stored(&id, true)]);
    let out = submit(&url, &file, &dir.path().join("spool"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains(&format!("run {id} stored at /runs/{id}")));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert!(seen.iter().all(|s| s.path == "/api/v1/runs" && s.authorization == "Bearer sw_test"));
    assert!(seen.iter().all(|s| s.body == seen[0].body), "every attempt sends the same run");
    assert!(spooled(&dir.path().join("spool")).is_empty());
}

#[test]
fn a_rejected_run_is_not_retried_and_its_message_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let (file, id) = run_file(dir.path());
    let body = r#"{"error":{"status":422,"code":"invalid_field","message":"workloads[0].name: must not be empty","field":"workloads[0].name"}}"#;
    let (url, seen) = listener(vec![(422, body.into())]);
    let spool = dir.path().join("spool");
    let out = submit(&url, &file, &spool);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("workloads[0].name: must not be empty"), "{}", text(&out));
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert!(spooled(&spool).is_empty());
    let rejected = spool.join("rejected");
    assert!(rejected.join(format!("{id}.json")).is_file());
    let reason = std::fs::read_to_string(rejected.join(format!("{id}.error.txt"))).unwrap();
    assert!(reason.contains("HTTP 422") && reason.contains("must not be empty"), "{reason}");
}

#[test]
fn a_run_the_server_cannot_take_is_spooled_then_flushed_once() {
    let dir = tempfile::tempdir().unwrap();
    let (file, id) = run_file(dir.path());
    let spool = dir.path().join("spool");
    // A port that was just free: connection refused.
    let down = format!("http://{}", TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap());
    let out = submit(&down, &file, &spool);
    assert_eq!(out.status.code(), Some(75), "{}", text(&out));
    assert_eq!(spooled(&spool), [format!("{id}.json")]);

    let (url, seen) = listener(vec![stored(&id, true)]);
    let out = run(agent().args(["flush", "--server", &url, "--token", "sw_test"]).arg("--spool-dir").arg(&spool));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(seen.lock().unwrap().len(), 1);
    let sent: serde_json::Value = serde_json::from_str(&seen.lock().unwrap()[0].body).unwrap();
    assert_eq!(sent["run_id"], id.as_str());
    assert!(spooled(&spool).is_empty());

    // Nothing left: a second flush sends nothing (the listener would accept nothing more).
    let out = run(agent().args(["flush", "--server", &url, "--token", "sw_test"]).arg("--spool-dir").arg(&spool));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn run_sends_the_spool_first_and_reads_the_token_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let (file, old_id) = run_file(dir.path());
    let spool = dir.path().join("spool");
    let down = format!("http://{}", TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap());
    assert_eq!(submit(&down, &file, &spool).status.code(), Some(75));

    let (url, seen) = listener(vec![stored(&old_id, false), stored("new", true)]);
    let token = dir.path().join("token");
    std::fs::write(&token, "sw_from_file\n").unwrap();
    let out = run(agent()
        .args([
            "run",
            "--server",
            &url,
            "--toolchain",
            "gcc-glibc=gcc",
            "--workloads",
            "memchr",
            "--max-size",
            "128K",
            "--reps",
            "1",
        ])
        .arg("--token-file")
        .arg(&token)
        .arg("--spool-dir")
        .arg(&spool)
        .arg("--cache-dir")
        .arg(dir.path().join("cache")));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen[0].body.contains(&old_id), "the spooled run goes first");
    assert!(seen.iter().all(|s| s.authorization == "Bearer sw_from_file"));
    let new: serde_json::Value = serde_json::from_str(&seen[1].body).unwrap();
    assert_eq!(new["toolchain"]["libc"].as_str().unwrap().split(' ').next(), Some("glibc"));
    assert_eq!(new["workloads"][0]["name"], "memchr");
    assert!(spooled(&spool).is_empty());
}
