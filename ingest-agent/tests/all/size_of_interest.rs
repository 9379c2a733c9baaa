//! What a workload costs at the size its team runs it at, with real gcc: the built-ins carry the
//! article's 4 MiB, a team's workload its own `at`; `check` prints the predicted time after its
//! table and in its report, marked as a prediction past the sizes measured, and `measure` puts the
//! size on the wire.

use crate::helpers::*;
use serde_json::Value;
use std::path::Path;

#[test]
fn check_gives_the_time_at_the_size_of_interest_on_the_terminal_in_the_report_and_on_the_wire() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.md");
    let out = run(agent()
        .args(["check", "--toolchain", "gcc-glibc=gcc", "--workloads", "strchr", "--max-size", "256K"])
        .args(["--reps", "3", "--total-budget", "10s", "--cache-dir"])
        .arg(dir.path().join("cache"))
        .arg("--report")
        .arg(&report));
    let said = text(&out);
    assert!(said.contains("at the size you run (predicted from each fit; 95% prediction interval):"), "{said}");
    let line = said
        .lines()
        .find(|l| l.trim_start().starts_with("strchr ") && l.contains("at 4 MiB: "))
        .unwrap_or_else(|| panic!("{said}"));
    // Measured up to 256 KiB at most: 4 MiB is past it, and said to be.
    assert!(line.contains(", predicted past the ") && line.contains(" KiB measured"), "{line}");
    assert!(line.contains("≈ ") || line.contains("too uncertain to say"), "{line}");
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(md.contains("#### At the size you run") && md.contains("- `strchr` on **gcc-glibc**: at 4 MiB: "), "{md}");
}

#[test]
fn a_team_s_workload_carries_its_own_size_of_interest_and_one_that_is_no_size_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let example = dir.path().join("example");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/workloads"), &example);
    let config = example.join("slopewatch-agent.toml");
    let original = std::fs::read_to_string(&config).unwrap();
    let line = original.lines().find(|l| l.starts_with("name = \"tokenize\"")).unwrap();
    let with =
        |at: &str| std::fs::write(&config, original.replacen(line, &format!("{line}\nat = \"{at}\""), 1)).unwrap();
    with("12M");
    let file = dir.path().join("run.json");
    let out = run(agent()
        .args(["measure", "--workloads", "tokenize", "--max-size", "256K", "--reps", "3", "--size-budget", "100ms"])
        .arg("--config")
        .arg(&config)
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--out")
        .arg(&file));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("at 12 MiB: "), "{said}");
    let sent: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(sent["workloads"][0]["size_of_interest"], 12 << 20, "{sent}");

    with("0");
    let out =
        run(agent().args(["measure", "--workloads", "tokenize", "--out"]).arg(&file).arg("--config").arg(&config));
    assert!(!out.status.success() && text(&out).contains("at: size \"0\" must be positive"), "{}", text(&out));
}

#[test]
fn a_server_that_predates_sizes_of_interest_is_sent_the_run_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    let out = run(agent()
        .args(["measure", "--toolchain", "gcc-glibc=gcc", "--workloads", "strchr", "--max-size", "256K"])
        .args(["--reps", "3", "--cache-dir"])
        .arg(dir.path().join("cache"))
        .arg("--out")
        .arg(&file));
    assert!(out.status.success(), "{}", text(&out));
    let id = serde_json::from_slice::<Value>(&std::fs::read(&file).unwrap()).unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let refusal = r#"{"error":{"status":422,"code":"invalid_field","message":"workloads[0].size_of_interest: unknown field `size_of_interest`, expected one of `name`, `size_unit`","field":"workloads[0].size_of_interest"}}"#;
    let (url, seen) = listener(vec![(422, refusal.into()), stored(&id, true)]);
    let out = submit(&url, &file, &dir.path().join("spool"));
    assert!(out.status.success(), "{}", text(&out));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "{}", text(&out));
    let first: Value = serde_json::from_str(&seen[0].body).unwrap();
    let resent: Value = serde_json::from_str(&seen[1].body).unwrap();
    assert_eq!(first["workloads"][0]["size_of_interest"], 4 << 20);
    assert!(resent["workloads"][0].get("size_of_interest").is_none(), "{resent}");
    assert_eq!(resent["run_id"], first["run_id"]);
}
