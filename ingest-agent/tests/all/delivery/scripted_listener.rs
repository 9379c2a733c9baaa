//! Delivery without loss, against a real HTTP listener on 127.0.0.1 that answers as scripted.

use crate::helpers::*;
use std::path::{Path, PathBuf};

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
    let down = unreachable_server();
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
    let down = unreachable_server();
    assert_eq!(submit(&down, &file, &spool).status.code(), Some(75));

    let (url, seen) = listener(vec![stored(&old_id, false), stored_unknown(true)]);
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

/// What a server from before failures answers a run that carries one.
fn refused_for_its_failure() -> (u16, String) {
    let message = "workloads[1].failure: unknown field `failure`, expected one of `name`, `size_unit`, `source_hash`, \
                   `measurements`, `metadata`";
    let body = serde_json::json!({"error": {"status": 422, "code": "invalid_field", "message": message,
                                            "field": "workloads[1].failure"}});
    (422, body.to_string())
}

/// A run file whose `failed` workloads counted wrong at their first size and whose others measured.
fn run_file_with_failures(dir: &Path, failed: &[&str], measured: &[&str]) -> (PathBuf, String) {
    let (path, id) = run_file(dir);
    let mut run: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let template = run["workloads"][0].clone();
    let mut workloads = Vec::new();
    for name in measured {
        let mut w = template.clone();
        w["name"] = (*name).into();
        workloads.push(w);
    }
    for name in failed {
        let mut w = template.clone();
        w["name"] = (*name).into();
        w["measurements"] = serde_json::json!([]);
        w["failure"] = serde_json::json!({"kind": "wrong_result", "size": 65536, "got": "-1", "expected": "9362",
                                          "detail": "wrong result: -1 hits, expected 9362"});
        workloads.push(w);
    }
    run["workloads"] = workloads.into();
    std::fs::write(&path, serde_json::to_vec(&run).unwrap()).unwrap();
    (path, id)
}

#[test]
fn a_server_that_predates_failures_is_sent_the_run_again_without_its_failed_workloads() {
    let dir = tempfile::tempdir().unwrap();
    let (file, id) = run_file_with_failures(dir.path(), &["strtol"], &["strchr", "memchr"]);
    let (url, seen) = listener(vec![refused_for_its_failure(), stored(&id, true)]);
    let spool = dir.path().join("spool");
    let out = submit(&url, &file, &spool);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "sent once with the failure and once without, never more");
    assert!(seen[0].body.contains("\"failure\""));
    let second: serde_json::Value = serde_json::from_str(&seen[1].body).unwrap();
    assert!(!seen[1].body.contains("failure"), "{}", seen[1].body);
    assert_eq!(second["run_id"], id.as_str(), "the same run, so a server never stores it twice");
    let names: Vec<&str> =
        second["workloads"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["strchr", "memchr"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&format!("the server at {url} does not accept failures")), "{said}");
    assert!(said.contains(&format!("sent run {id} without its 1 failed workload: strtol (wrong result)")), "{said}");
    assert!(text(&out).contains(&format!("run {id} stored")));
    assert!(spooled(&spool).is_empty() && !spool.join("rejected").exists());
}

#[test]
fn a_run_whose_every_workload_failed_is_kept_when_a_server_that_predates_failures_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let (file, id) = run_file_with_failures(dir.path(), &["strtol", "strchr"], &[]);
    let (url, seen) = listener(vec![refused_for_its_failure()]);
    let spool = dir.path().join("spool");
    let out = submit(&url, &file, &spool);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(seen.lock().unwrap().len(), 1, "nothing is left to send without the failures");
    let said = text(&out);
    assert!(said.contains(&format!("run {id} could not be stored at {url}")), "{said}");
    assert!(said.contains("every workload of the run failed: strtol (wrong result), strchr (wrong result)"), "{said}");
    let kept = spool.join("rejected").join(format!("{id}.json"));
    let kept: serde_json::Value = serde_json::from_slice(&std::fs::read(kept).unwrap()).unwrap();
    assert_eq!(kept["workloads"][0]["failure"]["kind"], "wrong_result", "kept whole, failures and all");
}

#[test]
fn a_server_that_predates_version_axes_refuses_a_libc_run_and_the_agent_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let (file, id) = run_file(dir.path());
    let mut run: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    run["toolchain"]["version_from"] = "libc".into();
    std::fs::write(&file, serde_json::to_vec(&run).unwrap()).unwrap();
    let body = r#"{"error":{"status":422,"code":"invalid_field","message":"toolchain.version_from: unknown field `version_from`, expected one of `name`, `version`","field":"toolchain.version_from"}}"#;
    let (url, seen) = listener(vec![(422, body.into())]);
    let spool = dir.path().join("spool");
    let out = submit(&url, &file, &spool);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("older than this agent") && text(&out).contains("version_from = \"compiler\""));
    assert_eq!(seen.lock().unwrap().len(), 1, "not sent again without its axis");
    assert!(spooled(&spool).is_empty());
    assert!(spool.join("rejected").join(format!("{id}.json")).is_file());
}
