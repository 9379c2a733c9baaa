//! `check --control LINEAGE` with real compilers: a workload over the limit under one toolchain is
//! compared with the control measured in the same invocation, on the same source, and attributed
//! to the toolchain (the control held) or the code (the control is over too), in the terminal and
//! in the Markdown report.

use crate::helpers::*;
use std::path::Path;
use std::process::Command;

/// `check` with musl-gcc as the control, small budgets, builds cached in `dir`.
fn check(dir: &Path) -> Command {
    let mut c = agent();
    c.args(["check", "--control", "musl-gcc", "--toolchain", "musl-gcc=musl-gcc", "--max-slope", "1.5"])
        .args(["--reps", "3", "--size-budget", "100ms", "--total-budget", "10s", "--cache-dir"])
        .arg(dir.join("cache"));
    c
}

#[test]
fn a_toolchain_over_the_limit_beside_a_control_that_held_is_the_toolchains_doing() {
    let dir = tempfile::tempdir().unwrap();
    let shim = shim_object(dir.path(), "quadratic_strchr.c");
    let report = dir.path().join("report.md");
    let out = run(check(dir.path())
        .arg("--toolchain")
        .arg(format!("quadratic=gcc {}", shim.display()))
        .args(["--workloads", "strchr", "--max-size", "1M", "--report"])
        .arg(&report));
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "the gate still fails: {said}");
    let line = said.lines().find(|l| l.starts_with("control: quadratic/strchr: ")).unwrap_or_else(|| panic!("{said}"));
    assert!(line.contains(": toolchain: control musl-gcc "), "{line}");
    assert!(line.ends_with("on the same source: the toolchain is the cause"), "{line}");
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(md.contains("#### Control\n\n- quadratic/strchr: toolchain: control musl-gcc"), "{md}");
}

#[test]
fn code_over_the_limit_under_the_control_too_is_the_codes_doing_and_the_control_must_be_measured() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(check(dir.path())
        .args(["--toolchain", "gcc-glibc=gcc", "--workloads", "quadratic-scan", "--workload-file"])
        .arg(fixture("quadratic_scan.c")));
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.lines().any(|l| l.starts_with("control: gcc-glibc/quadratic-scan: code: control musl-gcc ")
            && l.contains("is over too")),
        "{said}"
    );
    assert!(
        said.contains("control: musl-gcc/quadratic-scan: unknown: musl-gcc is itself the control and has no control"),
        "{said}"
    );

    let missing = run(agent()
        .args(["check", "--control", "musl-gcc", "--toolchain", "gcc-glibc=gcc", "--workloads", "strchr"])
        .args(["--max-size", "256K", "--reps", "3", "--cache-dir"])
        .arg(dir.path().join("cache")));
    assert_ne!(missing.status.code(), Some(0), "{}", text(&missing));
    assert!(text(&missing).contains("the control musl-gcc was not measured"), "{}", text(&missing));
}

#[test]
fn a_measured_run_carries_the_controls_medians_beside_each_workload_for_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("runs.json");
    let out = run(agent()
        .args(["measure", "--control", "musl-gcc", "--toolchain", "musl-gcc=musl-gcc", "--toolchain", "gcc-glibc=gcc"])
        .args(["--workloads", "strchr", "--max-size", "256K", "--reps", "3", "--cache-dir"])
        .arg(dir.path().join("cache"))
        .arg("--out")
        .arg(&out_file));
    assert!(out.status.success(), "{}", text(&out));
    let runs: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    let workload = |toolchain: &str| {
        let run = runs.iter().find(|r| r["toolchain"]["name"] == toolchain).unwrap();
        run["workloads"][0].clone()
    };
    let (gcc, musl) = (workload("gcc-glibc"), workload("musl-gcc"));
    assert!(musl.get("control").is_none(), "the control has none of its own: {musl}");
    let beside = &gcc["control"];
    assert_eq!(beside["lineage"], "musl-gcc", "{gcc}");
    let sizes = |v: &serde_json::Value, key: &str| -> Vec<u64> {
        v[key].as_array().unwrap().iter().map(|m| m["size"].as_u64().unwrap()).collect()
    };
    assert_eq!(sizes(beside, "medians"), sizes(&musl, "measurements"), "the control's own sizes: {gcc}");
    assert!(beside["medians"].as_array().unwrap().iter().all(|m| m["median"].as_f64().unwrap() > 0.0));
}
