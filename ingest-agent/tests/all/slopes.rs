//! Real compilers, real runs: gcc always; the measured slopes must tell linear from quadratic.

use crate::helpers::*;
use std::time::Instant;

/// Slopes of the `measure --out` file's runs, fitted from their counts: (toolchain, slope).
fn counted_slopes(path: &std::path::Path) -> Vec<(String, f64)> {
    // Two toolchains: a list of runs.
    let runs: Vec<slopewatch_core::wire::RunSubmission> =
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    runs.iter()
        .map(|r| {
            let m = r.metric();
            let points: Vec<(f64, f64)> =
                r.workloads[0].measurements.iter().map(|x| (x.size as f64, m.median(x))).collect();
            (r.toolchain.name.clone(), slopewatch_core::fit::fit(&points).unwrap().slope)
        })
        .collect()
}

#[test]
fn a_quadratic_strchr_counts_a_slope_above_1_8_and_the_real_one_of_1_whatever_the_load() {
    let dir = tempfile::tempdir().unwrap();
    let shim = shim_object(dir.path(), "quadratic_strchr.c");
    let out_file = dir.path().join("runs.json");
    let began = Instant::now();
    let out = run(agent()
        .args(["measure", "--measure", "instructions", "--toolchain", "gcc-glibc=gcc"])
        .arg("--toolchain")
        .arg(format!("quadratic=gcc {}", shim.display()))
        .args(["--workloads", "strchr", "--max-size", "1M", "--size-budget", "300ms"])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--out")
        .arg(&out_file));
    assert!(out.status.success(), "{}", text(&out));
    let elapsed = began.elapsed();
    let slopes = counted_slopes(&out_file);
    let of = |tc: &str| slopes.iter().find(|s| s.0 == tc).unwrap().1;
    assert!((of("gcc-glibc") - 1.0).abs() < 0.05, "{slopes:?}");
    assert!(of("quadratic") > 1.8, "{slopes:?}");
    eprintln!("verdicts in {elapsed:.1?}");
}

#[test]
fn check_fails_only_when_a_slope_is_over_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let shim = shim_object(dir.path(), "quadratic_strchr.c");
    let cache = dir.path().join("cache");
    let check = |toolchain: String| {
        run(agent()
            .args(["check", "--max-slope", "1.5", "--workloads", "strchr,memchr", "--max-size", "4M"])
            .args(["--measure", "instructions", "--size-budget", "300ms", "--toolchain", &toolchain])
            .arg("--cache-dir")
            .arg(&cache))
    };
    let good = check("gcc-glibc=gcc".into());
    assert_eq!(good.status.code(), Some(0), "{}", text(&good));
    let bad = check(format!("quadratic=gcc {}", shim.display()));
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad).contains("slope over 1.5: quadratic [instructions]/strchr"), "{}", text(&bad));
    assert!(!text(&bad).contains("quadratic [instructions]/memchr"), "memchr is the control: {}", text(&bad));
}

#[test]
fn a_wrong_answer_is_an_error_not_a_fast_time() {
    let dir = tempfile::tempdir().unwrap();
    let shim = shim_object(dir.path(), "wrong_strchr.c");
    let out = run(agent()
        .args(["check", "--workloads", "strchr", "--max-size", "256K", "--reps", "1"])
        .arg("--toolchain")
        .arg(format!("wrong=gcc {}", shim.display()))
        .arg("--cache-dir")
        .arg(dir.path().join("cache")));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("wrong result"), "{}", text(&out));
}

#[test]
fn every_string_workload_is_linear_or_flagged_with_gcc() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("run.json");
    let out = run(agent()
        .args([
            "measure",
            "--toolchain",
            "gcc-glibc=gcc",
            "--max-size",
            "512K",
            "--reps",
            "3",
            "--size-budget",
            "100ms",
        ])
        .args(["--workloads", "strchr,strchrnul,strspn,strcspn,strpbrk,strstr,memchr,strtol,strtod,sscanf"])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--out")
        .arg(&out_file));
    assert!(out.status.success(), "{}", text(&out));
    let slopes = slopes(&out_file);
    assert_eq!(slopes.len(), 10);
    for (_, w, k) in &slopes {
        assert!(*k > 0.5 && *k < 2.5, "{w}: {k}");
    }
}

#[test]
fn a_second_run_reuses_the_cached_build() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let measure = || {
        let out = run(agent()
            .args([
                "check",
                "--toolchain",
                "gcc-glibc=gcc",
                "--workloads",
                "memchr",
                "--max-size",
                "128K",
                "--reps",
                "1",
            ])
            .arg("--cache-dir")
            .arg(&cache));
        assert!(out.status.success());
    };
    measure();
    let builds: Vec<_> = walk(&cache.join("builds"))
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("memchr-"))
        .collect();
    assert_eq!(builds.len(), 1, "{builds:?}");
    let before = std::fs::metadata(&builds[0]).unwrap().modified().unwrap();
    measure();
    assert_eq!(std::fs::metadata(&builds[0]).unwrap().modified().unwrap(), before, "rebuilt");
}

#[test]
fn custom_workloads_speak_the_documented_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("run.json");
    let out = run(agent()
        .args(["measure", "--toolchain", "gcc-glibc=gcc", "--workloads", "byte-sum", "--reps", "2"])
        .arg("--workload-file")
        .arg(fixture("custom_workload.c"))
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--out")
        .arg(&out_file));
    assert!(out.status.success(), "{}", text(&out));
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    let sizes: Vec<u64> =
        run["workloads"][0]["measurements"].as_array().unwrap().iter().map(|m| m["size"].as_u64().unwrap()).collect();
    // 16K to 256K widened below its start to six sizes, and up to three more where those could
    // not tell two classes apart.
    let six: Vec<u64> = (0..6).map(|i| 8192 << i).collect();
    assert!(six.iter().all(|s| sizes.contains(s)) && sizes.len() <= 9, "{sizes:?}");
}

#[test]
fn bad_command_lines_are_refused_with_a_reason() {
    // Given no toolchain, the agent measures what it finds; on a host with none it says so.
    let empty = tempfile::tempdir().unwrap();
    let out = run(agent().arg("check").arg("--cache-dir").arg(empty.path()).env("PATH", empty.path()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("no toolchain found on this host"), "{}", text(&out));
    for (args, why) in [
        (vec!["check", "--toolchain", "gcc"], "NAME=COMMAND"),
        (vec!["check", "--toolchain", "a=gcc", "--build-jobs", "0"], "--build-jobs"),
        (vec!["check", "--toolchain", "a=gcc", "--toolchain", "a=clang"], "given twice"),
        (vec!["check", "--toolchain", "a=gcc", "--workloads", "strlenn"], "unknown workload"),
        (vec!["check", "--toolchain", "a=gcc", "--max-size", "huge"], "not a size"),
        (vec!["check", "--toolchain", "a=gcc", "--size-budget", "0"], "must be positive"),
        (vec!["check", "--toolchain", "a=gcc", "--reps", "0"], "not in 1..=1000"),
        (vec!["check", "--toolchain", "a=gcc", "--max-slope", "x"], "not a slope"),
        (vec!["check", "--toolchain", "a=gcc", "--start-size", "1M", "--max-size", "64K"], "larger than"),
        (vec!["check", "--toolchain", "a=no-such-compiler-here"], "no-such-compiler-here"),
        (vec!["flush", "--server", "http://127.0.0.1:9"], "token is required"),
        (vec!["flush", "--server", "ftp://x", "--token", "t"], "http://"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = run(agent().args(&args).arg("--cache-dir").arg(dir.path()).env("SLOPEWATCH_SPOOL_DIR", dir.path()));
        // --cache-dir is not a flag of flush; strip it there.
        let out =
            if args[0] == "flush" { run(agent().args(&args).env("SLOPEWATCH_SPOOL_DIR", dir.path())) } else { out };
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert!(text(&out).contains(why), "{args:?}: {}", text(&out));
    }
}
