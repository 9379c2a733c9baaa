//! The `check` gate with real compilers: the class limit, the noise rule that measures a
//! disturbed workload once more and reports it unsure rather than failing the build, and the sweep
//! widened to name a class.

use crate::helpers::*;
use std::path::Path;
use std::process::{Command, Output};

/// `command` (`check` or `measure`) on gcc with small budgets, builds cached in `dir`.
fn agent_in(dir: &Path, command: &str) -> Command {
    let mut c = agent();
    c.args([command, "--toolchain", "gcc-glibc=gcc", "--reps", "3", "--total-budget", "10s", "--cache-dir"])
        .arg(dir.join("cache"));
    c
}

/// `command` on the one workload of a file in `tests/fixtures`.
fn on_fixture(dir: &Path, command: &str, file: &str, workload: &str) -> Command {
    let mut c = agent_in(dir, command);
    c.args(["--workloads", workload, "--workload-file"]).arg(fixture(file));
    c
}

/// The verdict column of a workload's line in the table: what follows the median and two spaces.
fn verdict(out: &Output, workload: &str) -> String {
    let table = String::from_utf8_lossy(&out.stdout);
    // The toolchain column reads `gcc-glibc [instructions]` for a measure other than wall.
    let line = table.lines().find(|l| l.split_whitespace().filter(|w| !w.starts_with('[')).nth(1) == Some(workload));
    let line = line.unwrap_or_else(|| panic!("no line for {workload}: {table}"));
    line.rsplit_once("  ").unwrap().1.to_string()
}

#[test]
fn a_class_limit_of_n_fails_a_quadratic_loop_and_passes_a_linear_one() {
    let dir = tempfile::tempdir().unwrap();
    let bad = run(on_fixture(dir.path(), "check", "quadratic_scan.c", "quadratic-scan").args(["--max-class", "n"]));
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));
    assert_eq!(verdict(&bad, "quadratic-scan"), "OVER O(n)");
    assert!(text(&bad).contains("class over O(n): gcc-glibc/quadratic-scan"), "{}", text(&bad));

    // Counted, linear work is O(n) whatever the host's load and its caches.
    let good = run(agent_in(dir.path(), "check").args([
        "--max-class",
        "O(n)",
        "--workloads",
        "strchr",
        "--max-size",
        "256K",
        "--measure",
        "instructions",
    ]));
    assert_eq!(good.status.code(), Some(0), "{}", text(&good));
    assert_eq!(verdict(&good, "strchr"), "ok", "{}", text(&good));
}

#[test]
fn a_class_limit_of_n_squared_passes_the_quadratic_loop() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(on_fixture(dir.path(), "check", "quadratic_scan.c", "quadratic-scan").args([
        "--max-class",
        "n^2",
        "--measure",
        "instructions",
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(verdict(&out, "quadratic-scan"), "ok", "{}", text(&out));
}

#[test]
fn a_size_disturbed_once_is_measured_again_and_judged_on_the_second_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("disturbed");
    let out = run(on_fixture(dir.path(), "check", "erratic_loop.c", "erratic-loop")
        .args(["--max-size", "8M"])
        .env("SLOPEWATCH_FIXTURE_MARKER", &marker));
    assert!(marker.exists(), "the first measurement was disturbed");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("gcc-glibc erratic-loop: unsure (") && doubts_the_fit(&said), "{said}");
    assert!(said.contains("re-measured once: gcc-glibc/erratic-loop (unsure at first: "), "{said}");
    assert_eq!(verdict(&out, "erratic-loop"), "ok");
}

#[test]
fn a_size_disturbed_every_time_is_reported_unsure_with_an_exit_status_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(on_fixture(dir.path(), "check", "erratic_loop.c", "erratic-loop")
        .args(["--max-size", "8M"])
        .env_remove("SLOPEWATCH_FIXTURE_MARKER"));
    assert_eq!(out.status.code(), Some(3), "not a pass in silence: {}", text(&out));
    assert!(text(&out).contains("unsure after measuring twice: gcc-glibc/erratic-loop"), "{}", text(&out));
    assert_eq!(verdict(&out, "erratic-loop"), "unsure");
    let said = text(&out);
    assert!(said.contains("unsure: gcc-glibc/erratic-loop (") && doubts_the_fit(&said), "{said}");
    assert!(said.contains("; re-measured once)"), "{said}");
}

#[test]
fn measure_prints_the_same_verdicts_without_measuring_again() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(on_fixture(dir.path(), "measure", "erratic_loop.c", "erratic-loop")
        .args(["--max-size", "8M", "--out"])
        .arg(dir.path().join("run.json"))
        .env_remove("SLOPEWATCH_FIXTURE_MARKER"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(verdict(&out, "erratic-loop"), "unsure");
    let said = text(&out);
    assert!(said.contains("unsure: gcc-glibc/erratic-loop (") && doubts_the_fit(&said), "{said}");
    assert!(!said.contains("re-measured") && !said.contains("once more"), "{said}");
}

#[test]
fn gate_flags_out_of_range_are_refused_with_the_accepted_values() {
    for (args, why) in [
        (vec!["--max-class", "n^4"], "use one of 1, log n, n, n log n, n^2, n^3"),
        (vec!["--min-r2", "1.5"], "not an R² between 0 and 1"),
        (vec!["--ci-margin=-0.1"], "not a margin of 0 or more"),
    ] {
        let out = run(agent().args(["check", "--toolchain", "a=gcc"]).args(&args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out).contains(why), "{args:?}: {}", text(&out));
    }
}

/// Whether a disturbed sweep's doubt is named: which one depends on how the rest of the sweep lies
/// around the disturbed size, a low R² or an interval too wide to place on either side of the limit.
fn doubts_the_fit(said: &str) -> bool {
    said.contains("R² 0.") || said.contains("95% CI [")
}

/// The sizes of the one workload in a file written by `measure --out`.
fn sizes_written(path: &Path) -> Vec<u64> {
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    run["workloads"][0]["measurements"].as_array().unwrap().iter().map(|m| m["size"].as_u64().unwrap()).collect()
}

#[test]
fn a_class_the_sizes_cannot_tell_widens_the_sweep_upwards_or_below_a_max_size() {
    let dir = tempfile::tempdir().unwrap();
    let measure = |extra: &[&str]| {
        let out_file = dir.path().join("run.json");
        let out = run(on_fixture(dir.path(), "measure", "between_classes.c", "between-classes")
            .args(extra)
            .arg("--out")
            .arg(&out_file));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert_eq!(verdict(&out, "between-classes"), "ok");
        let table = String::from_utf8_lossy(&out.stdout).into_owned();
        (sizes_written(&out_file), table)
    };
    // Past the workload's own largest size: only --max-size bounds the way up.
    let (sizes, table) = measure(&[]);
    assert_eq!(sizes, [2048, 4096, 8192, 16384, 32768, 65536, 131072], "{table}");
    assert!(!table.contains("unsure"), "{table}");
    let (sizes, table) = measure(&["--max-size", "64K"]);
    assert_eq!(sizes, [1024, 2048, 4096, 8192, 16384, 32768, 65536], "{table}");
    assert!(!table.contains("unsure"), "{table}");
}

#[test]
fn a_size_below_what_the_workload_can_be_set_up_at_ends_the_widening_and_fails_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("run.json");
    let out = run(on_fixture(dir.path(), "measure", "between_classes.c", "between-classes")
        .env("SMALLEST_SIZE", "2048")
        .args(["--max-size", "64K", "--out"])
        .arg(&out_file));
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert_eq!(sizes_written(&out_file), [2048, 4096, 8192, 16384, 32768, 65536], "{said}");
    assert_eq!(verdict(&out, "between-classes"), "ok", "{said}");
    assert!(!said.contains("setup failed") && !said.contains("set-up failed"), "{said}");
}

#[test]
fn a_workload_over_the_slope_limit_is_never_widened_to_name_its_class() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(on_fixture(dir.path(), "check", "between_classes.c", "between-classes").args(["--max-slope", "1.2"]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(verdict(&out, "between-classes"), "OVER 1.2");
    let table = String::from_utf8_lossy(&out.stdout);
    let line = table.lines().find(|l| l.contains("between-classes")).unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!((words[2], words[7]), ("unsure", "6"), "six sizes, class unsure: {line}");
}
