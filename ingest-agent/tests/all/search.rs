//! `search` and `reproduce` through the real agent, with real toolchains: the breaks nobody wrote
//! a probe for, found by climbing over input shapes, saved as probes `check` runs, and shown by a
//! reproducer built and run as a plain program outside the agent.

use crate::helpers::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `search FUNCTIONS` with `toolchain`, counted (the JSON answer, the exit status).
fn search(dir: &Path, toolchain: &str, functions: &[&str], extra: &[&str]) -> (Value, Option<i32>) {
    let out = run(agent()
        .arg("search")
        .args(functions)
        .args(["--toolchain", toolchain, "--format", "json", "--budget", "60s", "--measure", "instructions"])
        .args(extra)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .arg("--probes")
        .arg(dir.join("probes.json")));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    (serde_json::from_str(&said).unwrap_or_else(|e| panic!("{e}: {}", text(&out))), out.status.code())
}

fn breaks(answer: &Value) -> Vec<(String, String, String)> {
    answer["breaks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let s = |k: &str| b[k].as_str().unwrap_or_default().to_string();
            (s("function"), s("axis"), s("probe"))
        })
        .collect()
}

/// The reproducer of `probe` written with `toolchain`, then built with `cc` and run as a plain
/// program: its exit status (the signal's 128 + N when killed) and what it printed.
fn reproduce(dir: &Path, probe: &str, toolchain: &str, cc: &[&str]) -> (i32, String, PathBuf) {
    let file = dir.join(format!("repro-{}.c", probe.len() + probe.bytes().map(usize::from).sum::<usize>()));
    let out = run(agent()
        .args(["reproduce", probe, "--toolchain", toolchain, "-o"])
        .arg(&file)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .arg("--probes")
        .arg(dir.join("probes.json")));
    assert!(out.status.success(), "{}", text(&out));
    let source = std::fs::read_to_string(&file).unwrap();
    assert!(!source.contains("#include \"") && !source.contains("sw_setup"), "self-contained, no harness");
    let (status, said) = run_standalone(&file, cc);
    (status, said, file)
}

fn run_standalone(file: &Path, cc: &[&str]) -> (i32, String) {
    let bin: PathBuf = file.with_extension("bin");
    let built = Command::new(cc[0])
        .args(&cc[1..])
        .args(["-O2", "-fno-builtin", "-o"])
        .arg(&bin)
        .arg(file)
        .arg("-lm")
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let ran = Command::new(&bin).output().unwrap();
    use std::os::unix::process::ExitStatusExt;
    let status = ran.status.code().unwrap_or_else(|| 128 + ran.status.signal().unwrap_or(0));
    (status, format!("{}{}", String::from_utf8_lossy(&ran.stdout), String::from_utf8_lossy(&ran.stderr)))
}

#[test]
fn the_search_finds_musl_strcasestr_quadratic_in_its_needle_and_its_reproducer_shows_it_standalone() {
    if which("musl-gcc").is_none() {
        eprintln!("note: musl-gcc is not installed; skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (answer, status) = search(dir.path(), "musl-gcc=musl-gcc", &["strcasestr"], &[]);
    assert_eq!(status, Some(1), "a break found: {answer}");
    let found = breaks(&answer);
    assert!(found.iter().any(|(f, a, _)| f == "strcasestr" && a == "needle"), "{answer}");
    let b = answer["breaks"].as_array().unwrap().iter().find(|b| b["axis"] == "needle").unwrap();
    assert_eq!((b["class"].as_str(), b["contract"].as_str()), (Some("n^2"), Some("n")), "{b}");
    // Saved as a probe that check judges from then on, over its contract.
    let out = run(agent()
        .args([
            "check",
            "--toolchain",
            "musl-gcc=musl-gcc",
            "--measure",
            "instructions",
            "--workloads",
            "contract.strcasestr.needle~*",
        ])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--probes")
        .arg(dir.path().join("probes.json")));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("over contract: musl-gcc [instructions]/contract.strcasestr.needle~"),
        "{}",
        text(&out)
    );
    // Every break reported shows in its reproducer, built with the same toolchain.
    for (_, _, probe) in &found {
        let (status, said, _) = reproduce(dir.path(), probe, "musl-gcc=musl-gcc", &["musl-gcc"]);
        assert_eq!(status, 1, "{probe}: {said}");
        assert!(said.contains("BROKEN"), "{said}");
    }
}

#[test]
fn glibc_strstr_and_memmem_stay_linear_on_every_shape_the_search_climbs() {
    let dir = tempfile::tempdir().unwrap();
    let (answer, status) = search(dir.path(), "gcc-glibc=gcc", &["strstr", "memmem"], &[]);
    assert_eq!(status, Some(0), "{answer}");
    assert!(breaks(&answer).is_empty(), "{answer}");
    for f in answer["functions"].as_array().unwrap() {
        assert!(f["shapes"].as_u64().unwrap() > 10, "climbed past the base shape: {f}");
    }
    assert!(!dir.path().join("probes.json").exists(), "nothing saved");
}

#[test]
fn zig_0_16_0_breaks_strspn_and_strcspn_and_its_reproducers_show_each_break_where_0_15_2_does_not() {
    let zigs = zigs();
    let (Some(old), Some(new)) = (
        zigs.iter().find(|z| z.to_string_lossy().contains("0.15.2")),
        zigs.iter().find(|z| z.to_string_lossy().contains("0.16.0")),
    ) else {
        eprintln!("note: Zig 0.15.2 and 0.16.0 are not both installed; skipped");
        return;
    };
    let cc = |zig: &PathBuf| vec![zig.display().to_string(), "cc".into(), "-target".into(), "x86_64-linux-musl".into()];
    let toolchain = |zig: &PathBuf| format!("zig-cc-musl={}", cc(zig).join(" "));
    let dir = tempfile::tempdir().unwrap();
    let (answer, status) = search(dir.path(), &toolchain(new), &["strspn", "strcspn"], &[]);
    assert_eq!(status, Some(1), "{answer}");
    let found = breaks(&answer);
    for f in ["strspn", "strcspn"] {
        assert!(found.iter().any(|(g, a, _)| g == f && a == "remaining"), "{f}: {answer}");
    }
    for f in answer["functions"].as_array().unwrap() {
        assert!(f["seconds"].as_f64().unwrap() < 60.0 + 10.0, "within its budget: {f}");
    }
    let new_cc = cc(new);
    let old_cc = cc(old);
    for (_, _, probe) in &found {
        let (status, said, _) = reproduce(dir.path(), probe, &toolchain(new), &as_str(&new_cc));
        assert_eq!(status, 1, "{probe}: {said}");
    }
    // The hand-written probes' breaks: a wrong result, a read past a bound, a growth.
    for (probe, shows) in [
        ("contract.memccpy.remaining", "wrong result"),
        ("contract.strncmp.bound", "read past its bound"),
        ("contract.strspn.remaining", "BROKEN"),
    ] {
        let (status, said, file) = reproduce(dir.path(), probe, &toolchain(new), &as_str(&new_cc));
        assert_ne!(status, 0, "{probe}: {said}");
        assert!(said.contains(shows), "{probe}: {said}");
        if probe.contains("strncmp") {
            assert_eq!(status, 128 + 11, "SIGSEGV at the guard page: {said}");
        }
        let (status, said) = run_standalone(&file, &as_str(&old_cc));
        assert_eq!(status, 0, "0.15.2 holds {probe}: {said}");
    }
}

fn as_str(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn bad_input_to_search_and_reproduce_exits_2_with_what_is_known() {
    let out = run(agent().args(["search", "qsort", "--toolchain", "gcc=gcc"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("no shapes for \"qsort\"") && text(&out).contains("strstr"), "{}", text(&out));
    let out = run(agent().args(["reproduce", "contract.strstr.needle~alphabet=9", "--toolchain", "gcc=gcc"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("alphabet must be one of 1, 2, 3, 4"), "{}", text(&out));
    let out = run(agent().args(["search", "--toolchain", "gcc=gcc"]));
    assert_eq!(out.status.code(), Some(2), "no function and no --all: {}", text(&out));
}

#[test]
fn a_break_found_and_submitted_is_run_by_a_second_agents_check_and_listed_on_the_contracts_page() {
    if which("musl-gcc").is_none() {
        eprintln!("note: musl-gcc is not installed; skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some((_server, url, token)) = real_server(dir.path(), &[]) else { return };
    let out = run(agent()
        .args(["search", "strcasestr", "--toolchain", "musl-gcc=musl-gcc", "--measure", "instructions"])
        .args(["--submit", "--server", &url, "--token", &token])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--probes")
        .arg(dir.path().join("first.json"))
        .arg("--spool-dir")
        .arg(dir.path().join("spool")));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("found probes sent to"), "{}", text(&out));
    // A second agent with no probes file of its own runs the team's.
    let out = run(agent()
        .args(["check", "--toolchain", "musl-gcc=musl-gcc", "--measure", "instructions"])
        .args(["--workloads", "contract.strcasestr.needle~*", "--probes-from", &url])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--probes")
        .arg(dir.path().join("second.json")));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("over contract: musl-gcc [instructions]/contract.strcasestr.needle~"),
        "{}",
        text(&out)
    );
    assert!(!dir.path().join("second.json").exists(), "served probes are run, not written to the second agent's file");
    let page = ureq::get(format!("{url}/contracts")).call().unwrap().body_mut().read_to_string().unwrap();
    assert!(page.contains("contract.strcasestr.needle~alphabet=1"), "the contracts page lists it");
}
