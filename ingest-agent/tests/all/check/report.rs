//! The Markdown report of `check` with real compilers: its rows and verdicts, the job summary it is
//! appended to, and the change against a baseline read from a real server, or why there is none.

use crate::helpers::*;
use std::path::Path;
use std::process::Command;

/// `check` with small budgets, builds cached in `dir`.
fn check(dir: &Path) -> Command {
    let mut c = agent();
    c.args(["check", "--reps", "3", "--total-budget", "10s", "--cache-dir"]).arg(dir.join("cache"));
    c
}

/// `check` of gcc's `strchr` up to 64 KiB: quick, and never over the limit.
fn check_strchr(dir: &Path) -> Command {
    let mut c = check(dir);
    c.args(["--toolchain", "gcc-glibc=gcc", "--workloads", "strchr", "--start-size", "2K", "--max-size", "64K"]);
    c
}

/// The table rows of a report, each split into its cells on the `|` that are not escaped.
fn rows(md: &str) -> Vec<Vec<String>> {
    md.lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            let mut cells = vec![String::new()];
            let mut escaped = false;
            for c in l.trim().trim_matches('|').chars() {
                match c {
                    '|' if !escaped => cells.push(String::new()),
                    c => cells.last_mut().unwrap().push(c),
                }
                escaped = c == '\\' && !escaped;
            }
            cells.into_iter().map(|c| c.trim().to_string()).collect()
        })
        .collect()
}

/// The row of `toolchain` and `workload`.
fn row<'a>(rows: &'a [Vec<String>], toolchain: &str, workload: &str) -> &'a [String] {
    rows.iter()
        .find(|r| r[0] == toolchain && r[1] == workload)
        .unwrap_or_else(|| panic!("no row for {toolchain}/{workload}: {rows:?}"))
}

#[test]
fn check_writes_a_report_with_every_workload_its_verdict_and_a_failure_even_when_the_gate_fails() {
    let dir = tempfile::tempdir().unwrap();
    let shim = shim_object(dir.path(), "wrong_strchr.c");
    let report = dir.path().join("report.md");
    let out = run(check(dir.path())
        .args(["--toolchain", "gcc-glibc=gcc", "--toolchain"])
        .arg(format!("wrong-strchr=gcc {}", shim.display()))
        .args([
            "--workloads",
            "strchr,quadratic-scan",
            "--start-size",
            "4K",
            "--max-size",
            "128K",
            "--max-slope",
            "1.5",
        ])
        .arg("--workload-file")
        .arg(fixture("quadratic_scan.c"))
        .arg("--report")
        .arg(&report));
    assert_eq!(out.status.code(), Some(1), "the gate fails as it does without a report: {}", text(&out));
    let md = std::fs::read_to_string(&report).unwrap();
    eprintln!("--- report\n{md}");
    assert!(md.starts_with("### slopewatch check\n\nToolchains: **gcc-glibc** "), "{md}");
    assert!(md.contains(", glibc 2."), "the libc of each toolchain: {md}");
    assert!(md.contains("; **wrong-strchr** "), "{md}");
    assert!(md.contains("\n**2 of 4 over the limit**, 1 failed"), "{md}");

    let rows = rows(&md);
    assert_eq!(rows.len(), 4, "{md}");
    let scan = row(&rows, "gcc-glibc", "quadratic-scan");
    let slope: f64 = scan[2].parse().unwrap();
    assert!(slope > 1.7, "{md}");
    assert!(scan[3].starts_with('[') && scan[3].ends_with(']'), "the 95% interval: {md}");
    assert_eq!(scan[5], "**OVER 1.5**");
    assert_eq!(row(&rows, "wrong-strchr", "quadratic-scan")[5], "**OVER 1.5**");
    assert!(["ok", "unsure"].contains(&row(&rows, "gcc-glibc", "strchr")[5].as_str()), "{md}");
    let failed = &row(&rows, "wrong-strchr", "strchr")[5];
    assert!(failed.starts_with("✗ wrong result at ") && failed.contains(" KiB: got "), "{md}");
    assert!(failed.contains(", expected "), "{md}");
    assert!(md.contains("<details><summary>Failure details</summary>"), "{md}");
    assert!(md.contains("**wrong-strchr/strchr**: wrong result at "), "{md}");

    // The terminal table still goes to stdout beside the report file.
    assert!(String::from_utf8_lossy(&out.stdout).contains("toolchain            workload"), "{}", text(&out));
}

#[test]
fn the_job_summary_is_appended_to_and_a_report_on_stdout_is_markdown_alone() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("step_summary.md");
    std::fs::write(&summary, "an earlier step's summary\n").unwrap();

    let first = run(check_strchr(dir.path()).env("GITHUB_STEP_SUMMARY", &summary));
    assert!(gate_passed(&first), "{}", text(&first));
    let after_first = std::fs::read_to_string(&summary).unwrap();
    assert!(after_first.starts_with("an earlier step's summary\n### slopewatch check\n"), "{after_first}");
    assert_eq!(rows(&after_first).len(), 1, "{after_first}");

    let second = run(check_strchr(dir.path()).env("GITHUB_STEP_SUMMARY", &summary).args(["--report", "-"]));
    assert!(gate_passed(&second), "{}", text(&second));
    let stdout = String::from_utf8(second.stdout.clone()).unwrap();
    assert!(stdout.starts_with("### slopewatch check\n"), "{stdout}");
    assert!(!stdout.contains("toolchain            workload"), "the terminal table goes to stderr: {stdout}");
    assert!(String::from_utf8_lossy(&second.stderr).contains("toolchain            workload"), "{}", text(&second));
    let after_second = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(after_second, format!("{after_first}{stdout}\n"), "appended, never overwritten");
    assert_eq!(after_second.matches("### slopewatch check").count(), 2);

    // A job summary set to nothing is no summary, not a usage error.
    let unset = run(check_strchr(dir.path()).env("GITHUB_STEP_SUMMARY", ""));
    assert!(gate_passed(&unset), "{}", text(&unset));
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), after_second);
}

#[test]
fn a_baseline_server_that_is_down_leaves_the_change_out_and_the_exit_status_alone() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.md");
    let out = run(check_strchr(dir.path())
        .args(["--baseline-server", &unreachable_server(), "--baseline", "gcc-glibc@12.2.0", "--report"])
        .arg(&report));
    assert!(gate_passed(&out), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("warning: the report leaves out the baseline gcc-glibc@12.2.0: cannot reach the baseline server http://127.0.0.1:9"),
        "{said}"
    );
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(md.contains("Baseline not available: cannot reach the baseline server http://127.0.0.1:9"), "{md}");
    assert!(md.contains("| toolchain | workload | slope k | 95% CI | class | verdict |\n"), "{md}");
    assert!(rows(&md).iter().all(|r| r.len() == 6), "no change column: {md}");
}

#[test]
fn a_baseline_must_be_name_at_version_and_come_with_its_server() {
    for (args, why) in [
        (vec!["--baseline", "gcc-glibc", "--baseline-server", "http://x"], "must look like NAME@VERSION"),
        (vec!["--baseline", "gcc glibc@1", "--baseline-server", "http://x"], "may only contain letters"),
        (vec!["--baseline", "gcc-glibc@1"], "--baseline-server <URL>"),
        (vec!["--baseline-server", "http://x"], "--baseline <NAME@VERSION>"),
    ] {
        let out = run(agent().args(["check", "--toolchain", "a=gcc"]).args(&args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out).contains(why), "{args:?}: {}", text(&out));
    }
}

/// Submits the run in `file` to `url` with the agent, and waits until the server has summarised
/// `workload` of it.
fn store(dir: &Path, url: &str, token: &str, file: &Path, workload: &str) {
    let out = run(agent()
        .args(["submit", "--server", url, "--token", token, "--spool-dir"])
        .arg(dir.join("spool"))
        .arg(file));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    wait_for_summary(url, workload, "gcc-glibc", token);
}

#[test]
fn a_baseline_from_a_real_server_gives_each_workload_s_change_and_an_unknown_version_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_server, url, token)) = real_server(dir.path(), &[]) else { return };

    // What 0.15.2 measured: the scan linear, k = 1.
    let linear: Vec<serde_json::Value> = (0..6)
        .map(|i| {
            let size = 4096u64 << i;
            serde_json::json!({"size": size, "samples_ns": [size as f64 * 3.0, size as f64 * 3.1]})
        })
        .collect();
    let stored = serde_json::json!({
        "run_id": uuid::Uuid::new_v4().to_string(), "agent_version": "0.1.0", "started_at": "2026-11-29T21:00:00Z",
        "host": {"name": "ci-host"},
        "toolchain": {"name": "gcc-glibc", "version": "0.15.2", "libc": "glibc 2.36"},
        "workloads": [{"name": "quadratic-scan", "size_unit": "bytes", "measurements": linear}]
    });
    let file = dir.path().join("baseline-run.json");
    std::fs::write(&file, serde_json::to_vec(&stored).unwrap()).unwrap();
    store(dir.path(), &url, &token, &file, "quadratic-scan");

    let report = dir.path().join("report.md");
    let out = run(check(dir.path())
        .args(["--toolchain", "gcc-glibc=gcc", "--workloads", "quadratic-scan,strchr"])
        .args(["--start-size", "4K", "--max-size", "128K", "--workload-file"])
        .arg(fixture("quadratic_scan.c"))
        .args(["--baseline-server", &url, "--baseline", "gcc-glibc@0.15.2", "--token", &token, "--report"])
        .arg(&report));
    assert_eq!(out.status.code(), Some(1), "the quadratic scan fails the gate: {}", text(&out));
    let md = std::fs::read_to_string(&report).unwrap();
    eprintln!("--- report\n{md}");
    assert!(md.contains("Baseline: **gcc-glibc@0.15.2**"), "{md}");
    let table = rows(&md);
    let scan = row(&table, "gcc-glibc", "quadratic-scan");
    let change = &scan[6];
    let here: f64 = change
        .strip_prefix("k 1.00 at 0.15.2 → ")
        .and_then(|c| c.strip_suffix(" here"))
        .unwrap_or_else(|| panic!("{md}"))
        .parse()
        .unwrap();
    assert_eq!(format!("{here:.2}"), scan[2], "the slope measured here: {md}");
    assert!(here > 1.7, "{md}");
    assert_eq!(row(&table, "gcc-glibc", "strchr")[6], "no baseline", "never stored: {md}");

    // Reading is open on this server, so without a token the baseline is read all the same.
    let out = run(check_strchr(dir.path())
        .args(["--baseline-server", &url, "--baseline", "gcc-glibc@9.9.9", "--report"])
        .arg(&report));
    assert!(gate_passed(&out), "an unknown version leaves the exit status alone: {}", text(&out));
    let why = format!("the baseline server {url} has no version 9.9.9 of lineage gcc-glibc (it has: 0.15.2)");
    assert!(text(&out).contains(&format!("warning: the report leaves out the baseline gcc-glibc@9.9.9: {why}")));
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(md.contains(&format!("Baseline not available: {}", why)), "{md}");
    assert!(rows(&md).iter().all(|r| r.len() == 6), "no change column: {md}");

    let out = run(check_strchr(dir.path())
        .args(["--baseline-server", &url, "--baseline", "zig-cc@0.15.2", "--report"])
        .arg(&report));
    assert!(gate_passed(&out), "{}", text(&out));
    assert!(text(&out).contains("has no runs of lineage zig-cc (it has: gcc-glibc)"), "{}", text(&out));

    // `run` writes the same report after sending its run, with the ingest token read from --token.
    let out = run(agent()
        .args(["run", "--toolchain", "gcc-glibc=gcc", "--workloads", "quadratic-scan", "--workload-file"])
        .arg(fixture("quadratic_scan.c"))
        .args(["--start-size", "4K", "--max-size", "128K", "--reps", "3", "--total-budget", "10s"])
        .args(["--server", &url, "--token", &token, "--baseline-server", &url, "--baseline", "gcc-glibc@0.15.2"])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--spool-dir")
        .arg(dir.path().join("spool"))
        .args(["--report", "-"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let md = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(md.contains(" stored at /runs/"), "the run was sent: {md}");
    let md = &md[md.find("### slopewatch run\n").unwrap_or_else(|| panic!("{md}"))..];
    let change = &rows(md)[0][6];
    assert!(change.starts_with("k 1.00 at 0.15.2 → "), "{md}");
}

#[test]
fn a_server_that_requires_a_login_to_read_takes_the_token_and_refuses_a_wrong_one() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("server.toml");
    std::fs::write(&config, "[auth]\nrequire_login_to_read = true\n").unwrap();
    let Some((_server, url, token)) = real_server(dir.path(), &["--config", config.to_str().unwrap()]) else {
        return;
    };
    let (file, _) = run_file(dir.path());
    store(dir.path(), &url, &token, &file, "strchr");

    let report = dir.path().join("report.md");
    let with = |token: Option<&str>| {
        let mut c = check_strchr(dir.path());
        c.args(["--baseline-server", &url, "--baseline", "gcc-glibc@12.2.0", "--report"]).arg(&report);
        if let Some(t) = token {
            c.args(["--token", t]);
        }
        let out = run(&mut c);
        assert!(gate_passed(&out), "{}", text(&out));
        (text(&out), std::fs::read_to_string(&report).unwrap())
    };
    let (said, md) = with(None);
    assert!(said.contains(&format!("the baseline server {url} requires a token to read (HTTP 401)")), "{said}");
    assert!(md.contains("Baseline not available: the baseline server"), "{md}");
    let (said, _) = with(Some("sw_wrong"));
    assert!(said.contains(&format!("the baseline server {url} refused the token (HTTP 401: ")), "{said}");
    let (said, md) = with(Some(&token));
    assert!(!said.contains("warning"), "{said}");
    let table = rows(&md);
    let change = &row(&table, "gcc-glibc", "strchr")[6];
    assert!(change.starts_with("k 1.00 at 12.2.0 → "), "{md}");
}
