//! `exposure` with real toolchains: a program calling `strspn` in a loop and `memcpy` once, built
//! with Zig 0.16.0 and 0.15.2 (static), musl-gcc (static) and gcc (dynamic glibc), scanned and
//! judged by counted catalogue verdicts; accepted and expired exposures; the "cannot tell" of a
//! stripped static binary; and input that is not an artifact.

use crate::helpers::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `exposed.c` built with `cc` (argv) into `dir/name`.
pub(crate) fn build(cc: &[&str], extra: &[&str], dir: &Path, name: &str) -> PathBuf {
    let out_path = dir.join(name);
    let out = run(Command::new(cc[0])
        .args(&cc[1..])
        .args(["-O2", "-g"])
        .args(extra)
        .arg(fixture("exposed.c"))
        .arg("-o")
        .arg(&out_path));
    assert!(out.status.success(), "{cc:?}: {}", text(&out));
    out_path
}

/// Scans `artifact` judged by `toolchain`, counted, with the agent's cache in `cache`: the exit
/// status, the JSON answer and stderr.
pub(crate) fn scan(artifact: &Path, toolchain: &str, cache: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    let out = run(agent()
        .arg("exposure")
        .arg(artifact)
        .args(["--toolchain", toolchain, "--format", "json", "--measure", "instructions", "--cache-dir"])
        .arg(cache)
        .args(extra));
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    (out.status.code(), json, text(&out))
}

/// The function `name` of the only artifact of `answer`.
pub(crate) fn function<'a>(answer: &'a Value, name: &str) -> &'a Value {
    let functions = answer["artifacts"][0]["functions"].as_array().unwrap();
    functions.iter().find(|f| f["function"] == name).unwrap_or_else(|| panic!("no {name}: {answer:#}"))
}

/// strspn called from count_blanks with a location, memcpy from copy_text, strlen referenced.
fn assert_reaches(answer: &Value) {
    let strspn = function(answer, "strspn");
    assert!(strspn["call_sites"].as_u64().unwrap() >= 1, "{strspn:#}");
    let caller = strspn["callers"].as_array().unwrap().iter().find(|c| c["name"] == "count_blanks");
    let caller = caller.unwrap_or_else(|| panic!("count_blanks calls strspn: {strspn:#}"));
    assert!(caller["location"].as_str().is_some_and(|l| l.contains("exposed.c:")), "{caller:#}");
    let memcpy = function(answer, "memcpy");
    assert!(memcpy["callers"].as_array().unwrap().iter().any(|c| c["name"] == "copy_text"), "{memcpy:#}");
    assert_eq!(function(answer, "strlen")["referenced"], true, "{answer:#}");
}

#[test]
fn zig_0_16_0_s_strspn_exposes_the_artifact_until_a_suppression_accepts_it() {
    let Some(zig) = zigs().into_iter().find(|z| z.to_string_lossy().contains("0.16.0")) else {
        eprintln!("note: Zig 0.16.0 is not installed (scripts/install-test-deps); skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let zig = zig.to_str().unwrap();
    let binary = build(&[zig, "cc", "-target", "x86_64-linux-musl"], &[], dir.path(), "tokenizer");
    let toolchain = format!("zig-cc-musl={zig} cc -target x86_64-linux-musl");
    let cache = dir.path().join("cache");
    let (status, answer, said) = scan(&binary, &toolchain, &cache, &[]);
    assert_eq!(status, Some(1), "{said}");
    let a = &answer["artifacts"][0];
    assert_eq!((a["status"].as_str(), a["libc"]["name"].as_str()), (Some("exposed"), Some("zig")), "{a:#}");
    assert_eq!(a["linkage"], "static");
    assert_eq!(a["judged_by"]["version"], "0.16.0", "{a:#}");
    assert_reaches(&answer);
    let strspn = function(&answer, "strspn");
    assert_eq!(strspn["verdict"]["breach"], "over_contract", "{strspn:#}");
    assert!(strspn["verdict"]["words"].as_str().unwrap().contains("against its contract of O(1)"), "{strspn:#}");
    assert_eq!(answer["artifacts"][0]["functions"][0]["function"], "strspn", "worst first: {answer:#}");

    // Accepted: it still shows, marked, and fails nothing; the verdicts come from the cache.
    let accept = dir.path().join("accept.toml");
    let entry = |expires: &str| {
        format!("[[accept]]\nfunction = \"strspn\"\ncaller = \"count_blanks\"\nreason = \"blank runs are short\"\nexpires = {expires}\n")
    };
    std::fs::write(&accept, entry("2999-01-01")).unwrap();
    let suppressed = ["--suppressions", accept.to_str().unwrap()];
    let (status, answer, said) = scan(&binary, &toolchain, &cache, &suppressed);
    assert_eq!(status, Some(0), "{said}");
    assert_eq!(function(&answer, "strspn")["accepted"]["until"], "2999-01-01", "{answer:#}");
    assert_eq!(answer["artifacts"][0]["judged_by"]["verdicts_from"][0], "the agent's cache", "{answer:#}");
    assert!(!said.contains("measuring"), "nothing measured twice: {said}");

    // Expired: it fails again, and the text says so.
    std::fs::write(&accept, entry("2020-01-01")).unwrap();
    let out = run(agent()
        .arg("exposure")
        .arg(&binary)
        .args(["--toolchain", &toolchain, "--measure", "instructions", "--cache-dir"])
        .arg(&cache)
        .args(suppressed));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("acceptance expired 2020-01-01") && said.contains("exposed: calls 1"), "{said}");
}

#[test]
fn zig_0_15_2_musl_gcc_and_gcc_builds_reach_the_same_functions_and_pass() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let mut builds: Vec<(String, PathBuf, &str, &str)> = Vec::new();
    if let Some(zig) = zigs().into_iter().find(|z| z.to_string_lossy().contains("0.15.2")) {
        let zig = zig.to_str().unwrap().to_string();
        let bin = build(&[&zig, "cc", "-target", "x86_64-linux-musl"], &[], dir.path(), "zig15");
        builds.push((format!("zig-cc-musl={zig} cc -target x86_64-linux-musl"), bin, "static", "musl"));
    } else {
        eprintln!("note: Zig 0.15.2 is not installed; its case is skipped");
    }
    if which("musl-gcc").is_some() {
        let bin = build(&["musl-gcc"], &["-static"], dir.path(), "musl");
        builds.push(("musl-gcc=musl-gcc".into(), bin, "static", "musl"));
    }
    builds.push(("gcc-glibc=gcc".into(), build(&["gcc"], &[], dir.path(), "glibc"), "dynamic", "glibc"));
    for (toolchain, binary, linkage, libc) in &builds {
        let (status, answer, said) = scan(binary, toolchain, &cache, &[]);
        assert_eq!(status, Some(0), "{toolchain}: {said}");
        let a = &answer["artifacts"][0];
        assert_eq!((a["linkage"].as_str(), a["libc"]["name"].as_str()), (Some(*linkage), Some(*libc)), "{a:#}");
        assert_eq!(a["status"], "clean", "{a:#}");
        assert_reaches(&answer);
        assert_eq!(function(&answer, "strspn")["verdict"]["state"], "held", "{toolchain}: {answer:#}");
    }
    let dynamic = &builds.last().unwrap().1;
    let (_, answer, _) = scan(dynamic, "gcc-glibc=gcc", &cache, &[]);
    let notes = answer["artifacts"][0]["notes"].to_string();
    assert!(notes.contains("imports its libc at run time"), "{notes}");
}

#[test]
fn input_that_is_not_an_artifact_exits_2_with_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("deploy.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    let gcc_binary = build(&["gcc"], &[], dir.path(), "whole");
    let truncated = dir.path().join("truncated");
    std::fs::write(&truncated, &std::fs::read(&gcc_binary).unwrap()[..100]).unwrap();
    let huge = dir.path().join("huge");
    std::fs::File::create(&huge).unwrap().set_len((1 << 30) + 1).unwrap();
    let object = dir.path().join("exposed.o");
    assert!(run(Command::new("gcc").arg("-c").arg(fixture("exposed.c")).arg("-o").arg(&object)).status.success());
    let cases: [(&Path, &str); 5] = [
        (&script, "not an ELF"),
        (&truncated, "truncated"),
        (&huge, "more than the"),
        (&object, "object"),
        (&dir.path().join("missing"), "cannot read"),
    ];
    for (path, says) in cases {
        let out = run(agent()
            .arg("exposure")
            .arg(path)
            .args(["--toolchain", "gcc-glibc=gcc", "--cache-dir"])
            .arg(dir.path()));
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{}: {said}", path.display());
        assert!(said.to_lowercase().contains(&says.to_lowercase()), "{}: {said}", path.display());
        assert!(!said.contains("panicked"), "{said}");
    }
}

/// `rust-ffi` built in `dir` by `cargo` with `args` (and `path` first on PATH, and `env` set): the
/// binary.
pub(crate) fn cargo_build(
    dir: &Path,
    program: &Path,
    args: &[&str],
    path: Option<&Path>,
    env: &[(&str, &str)],
) -> PathBuf {
    let crate_dir = dir.join("rust-ffi");
    if !crate_dir.exists() {
        copy_dir(&fixture("rust-ffi"), &crate_dir);
    }
    let target = dir.join(format!("target-{}", args[0]));
    let mut cmd = Command::new(program);
    cmd.envs(env.iter().copied());
    cmd.args(args).args(["--release", "--target", "x86_64-unknown-linux-musl", "--offline", "--target-dir"]);
    cmd.arg(&target).current_dir(&crate_dir);
    if let Some(p) = path {
        let old = std::env::var_os("PATH").unwrap_or_default();
        cmd.env(
            "PATH",
            std::env::join_paths(std::iter::once(p.to_path_buf()).chain(std::env::split_paths(&old))).unwrap(),
        );
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{program:?} {args:?}: {}", text(&out));
    target.join("x86_64-unknown-linux-musl/release/blanks")
}

#[test]
fn a_rust_binary_is_judged_by_the_libc_it_carries_zig_s_through_cargo_zigbuild_rust_s_musl_without() {
    let zigbuild = Path::new("/opt/slopewatch-cargo-zigbuild/bin/cargo-zigbuild");
    let zig = zigs().into_iter().find(|z| z.to_string_lossy().contains("0.16.0"));
    let musl_target = Command::new("rustup").args(["target", "list", "--installed"]).output().ok();
    let has_target =
        musl_target.is_some_and(|o| String::from_utf8_lossy(&o.stdout).contains("x86_64-unknown-linux-musl"));
    let (Some(zig), true, true, true) = (zig, zigbuild.is_file(), has_target, which("musl-gcc").is_some()) else {
        eprintln!("note: needs Zig 0.16.0, cargo-zigbuild, Rust's musl target and musl-gcc (scripts/install-test-deps); skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let toolchain = format!("zig-cc-musl={} cc -target x86_64-linux-musl", zig.display());

    // cargo-zigbuild links Zig's own libc: judged by Zig 0.16.0, whose strspn is over.
    let zigbuilt = cargo_build(dir.path(), zigbuild, &["zigbuild"], zig.parent(), &[]);
    let (status, answer, said) = scan(&zigbuilt, &toolchain, &cache, &[]);
    assert_eq!(status, Some(1), "{said}");
    assert_eq!(answer["artifacts"][0]["libc"]["name"], "zig", "{answer:#}");
    let strspn = function(&answer, "strspn");
    assert_eq!(strspn["verdict"]["breach"], "over_contract", "{strspn:#}");
    let callers = strspn["callers"].to_string();
    assert!(callers.contains("count_blanks") && callers.contains("main.rs:"), "{strspn:#}");

    // Plain cargo links Rust's bundled musl: told apart, and judged by musl-gcc instead.
    let plain = cargo_build(dir.path(), Path::new("cargo"), &["build"], None, &[]);
    let (status, answer, said) = scan(&plain, &toolchain, &cache, &[]);
    let a = &answer["artifacts"][0];
    assert_eq!(a["libc"]["name"], "musl", "{a:#}");
    assert!(a["libc"]["evidence"].as_str().unwrap().contains("Rust"), "{a:#}");
    assert!(a["notes"].to_string().contains("not the zig libc"), "{a:#}");
    assert_eq!(a["judged_by"]["lineage"], "musl-gcc", "{a:#}");
    assert_eq!(status, Some(0), "musl's strspn holds: {said}");
    assert!(function(&answer, "strspn")["callers"].to_string().contains("count_blanks"), "{a:#}");
}

#[test]
fn a_scan_the_server_cannot_take_now_waits_in_the_spool_and_is_delivered_once() {
    let dir = tempfile::tempdir().unwrap();
    let binary = build(&["gcc"], &[], dir.path(), "worker");
    let spool = dir.path().join("spool");
    let submit = |server: &str| {
        run(agent()
            .arg("exposure")
            .arg(&binary)
            .args(["--toolchain", "gcc-glibc=gcc", "--measure", "instructions", "--submit", "--token", "t"])
            .args(["--server", server, "--attempts", "1", "--cache-dir"])
            .arg(dir.path().join("cache"))
            .arg("--spool-dir")
            .arg(&spool))
    };
    // Down: the scan is judged all the same, and kept.
    let out = submit(&unreachable_server());
    assert_eq!(out.status.code(), Some(75), "{}", text(&out));
    assert_eq!(spooled(&spool.join("exposures")).len(), 1, "{}", text(&out));

    // A server of a release before scans: refused, said so, never read as "exposed".
    let not_found = r#"{"error":{"code":"not_found","message":"no such route"}}"#.to_string();
    let (old, _) = listener(vec![(404, not_found.clone()), (404, not_found)]);
    let out = submit(&old);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("does not take exposure scans"), "{}", text(&out));

    // Back up: a flush delivers the waiting scan once.
    let Some((_server, url, token)) = real_server(dir.path(), &[]) else { return };
    let flush = || run(agent().args(["flush", "--server", &url, "--token", &token, "--spool-dir"]).arg(&spool));
    let out = flush();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(text(&out).matches("scan of worker stored").count(), 1, "{}", text(&out));
    assert!(spooled(&spool.join("exposures")).is_empty());
    assert!(!text(&flush()).contains("scan of"), "nothing is sent twice");
}
