//! Fetching Zig releases from the Python package index: `toolchains fetch zig` and
//! `--toolchain zig@VERSION`, against the real index (skipped with a note when it cannot be
//! reached). Only one release is downloaded, by one test.

use crate::helpers::*;
use sha2::Digest;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

const RELEASE: &str = "0.15.2";

/// Whether python3 with pip is here; says so when not.
fn have_pip() -> bool {
    let pip = std::process::Command::new("python3").args(["-m", "pip", "--version"]).output();
    let found = pip.is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("SKIPPED: python3 with pip is not installed (Debian: apt-get install python3-pip)");
    }
    found
}

/// Whether pip is here and the package index answers; says why not otherwise.
fn index_reachable() -> bool {
    if !have_pip() {
        return false;
    }
    let reachable = ("pypi.org", 443)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .is_some_and(|addr| TcpStream::connect_timeout(&addr, Duration::from_secs(10)).is_ok());
    if !reachable {
        eprintln!("SKIPPED: the package index (pypi.org) cannot be reached from here");
    }
    reachable
}

/// The sha256 of the wheel pip downloads for a ziglang release (pip checks it against the index's
/// own digest), with the wheel's file name.
fn downloaded_wheel(version: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--progress-bar", "off", "--dest"])
        .arg(dir.path())
        .arg(format!("ziglang=={version}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let wheel = std::fs::read_dir(dir.path()).unwrap().flatten().next().unwrap().path();
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    (name, hex::encode(sha2::Sha256::digest(std::fs::read(&wheel).unwrap())))
}

fn fetch(cache: &Path, version: &str) -> std::process::Output {
    run(agent().args(["toolchains", "fetch", "zig", version, "--cache-dir"]).arg(cache))
}

/// What is left under `<cache>/zig`, hidden entries included.
fn cached(cache: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cache.join("zig"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_fetched_release_is_verified_recorded_reused_and_serves_zig_at_version() {
    if !index_reachable() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let out = fetch(cache.path(), RELEASE);
    assert!(out.status.success(), "{}", text(&out));
    let dir = cache.path().join("zig").join(RELEASE);
    let zig = dir.join("ziglang/zig");
    assert!(text(&out).contains(&format!("`zig version` prints {RELEASE}")), "{}", text(&out));
    let command = format!("{} cc -target x86_64-linux-musl\n", zig.display());
    assert_eq!(String::from_utf8_lossy(&out.stdout), command, "the command alone, as bisect --materialize reads it");
    assert_eq!(cached(cache.path()), [RELEASE], "no temporary directory is left beside the install");
    let said = std::process::Command::new(&zig).arg("version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&said.stdout).trim(), RELEASE);

    let record_text = std::fs::read_to_string(dir.join("fetched.toml")).unwrap();
    let record: toml::Table = toml::from_str(&record_text).unwrap();
    assert_eq!(record["version"].as_str(), Some(RELEASE), "{record_text}");
    let (wheel, sha256) = downloaded_wheel(RELEASE);
    assert_eq!(record["wheel"].as_str(), Some(wheel.as_str()), "{record_text}");
    assert_eq!(record["sha256"].as_str(), Some(sha256.as_str()), "{record_text}");
    assert!(record["fetched_at"].as_str().unwrap().starts_with("20"), "{record_text}");

    let again = fetch(cache.path(), RELEASE);
    assert!(again.status.success(), "{}", text(&again));
    assert!(text(&again).contains("nothing to fetch"), "{}", text(&again));
    assert_eq!(String::from_utf8_lossy(&again.stdout), command);
    assert!(!text(&again).contains("downloading"), "{}", text(&again));
    assert_eq!(std::fs::read_to_string(dir.join("fetched.toml")).unwrap(), record_text, "the record is kept");

    let run_file = cache.path().join("run.json");
    let measured = run(agent()
        .args(["measure", "--toolchain", &format!("zig@{RELEASE}"), "--workloads", "strchr"])
        .args(["--start-size", "4K", "--max-size", "64K", "--reps", "2", "--size-budget", "100ms"])
        .arg("--cache-dir")
        .arg(cache.path())
        .arg("--out")
        .arg(&run_file));
    assert!(measured.status.success(), "{}", text(&measured));
    assert!(!text(&measured).contains("downloading"), "the cached release is used: {}", text(&measured));
    let measured_run: serde_json::Value = serde_json::from_slice(&std::fs::read(&run_file).unwrap()).unwrap();
    assert_eq!(measured_run["toolchain"]["name"], "zig-cc-musl");
    assert_eq!(measured_run["toolchain"]["version"], RELEASE);
    assert_eq!(measured_run["toolchain"]["compiler"], format!("{} cc -target x86_64-linux-musl", zig.display()));
    assert!(measured_run["toolchain"]["libc"].as_str().unwrap().starts_with("musl "), "{measured_run}");
    let strchr = &measured_run["workloads"][0];
    assert_eq!(strchr["name"], "strchr");
    assert!(strchr["failure"].is_null(), "{strchr}");
    assert!(strchr["measurements"].as_array().unwrap().len() >= 3, "{strchr}");
    assert_eq!(slopes(&run_file).len(), 1);

    let csv = cache.path().join("lex.csv");
    std::fs::write(&csv, "workload,size,ns\nlex,1024,10\nlex,2048,20\nlex,4096,40\n").unwrap();
    let imported_file = cache.path().join("imported.json");
    let imported = run(agent()
        .args(["import", "--format", "csv", "--toolchain", &format!("zig@{RELEASE}")])
        .args(["--toolchain-version", RELEASE, "--libc", "musl 1.2.5 (zig)"])
        .arg(&csv)
        .arg("--cache-dir")
        .arg(cache.path())
        .arg("--out")
        .arg(&imported_file));
    assert!(imported.status.success(), "{}", text(&imported));
    let imported: serde_json::Value = serde_json::from_slice(&std::fs::read(&imported_file).unwrap()).unwrap();
    assert_eq!(imported["toolchain"]["name"], "zig-cc-musl");
    assert_eq!(imported["toolchain"]["compiler"], measured_run["toolchain"]["compiler"]);
    assert_eq!(cached(cache.path()), [RELEASE]);
}

#[test]
fn a_release_the_index_does_not_have_fails_clearly_and_leaves_nothing_of_its_own() {
    if !index_reachable() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    // What a fetch killed two days ago left behind goes too; one killed just now may be running.
    let killed = cache.path().join("zig/.fetching-0.15.2-killed");
    let running = cache.path().join("zig/.fetching-0.15.2-running");
    for dir in [&killed, &running] {
        std::fs::create_dir_all(dir.join("install/ziglang")).unwrap();
    }
    let touched = std::process::Command::new("touch").args(["-d", "2 days ago"]).arg(&killed).status().unwrap();
    assert!(touched.success());
    let out = fetch(cache.path(), "0.0.1");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error: ziglang 0.0.1 is not on the package index"), "{err}");
    assert!(err.contains(RELEASE), "the newest releases are named: {err}");
    assert_eq!(cached(cache.path()), [".fetching-0.15.2-running"]);
}

#[test]
fn an_index_that_does_not_answer_is_named_as_the_cause() {
    if !have_pip() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let out = run(agent()
        .args(["toolchains", "fetch", "zig", RELEASE, "--cache-dir"])
        .arg(cache.path())
        .env("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
        .env("PIP_FIND_LINKS", "")
        .env("PIP_RETRIES", "1"));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error: the package index could not be reached to fetch ziglang 0.15.2"), "{err}");
    assert!(err.contains("Connection refused"), "{err}");
    assert!(cached(cache.path()).is_empty(), "{:?}", cached(cache.path()));
}

#[test]
fn malformed_versions_and_a_missing_python_are_refused_without_the_network() {
    let cache = tempfile::tempdir().unwrap();
    // No python3 and an index that cannot answer: only a refusal of the version itself passes.
    let offline = |cmd: &mut std::process::Command| {
        run(cmd
            .env("PATH", cache.path())
            .env("PIP_INDEX_URL", "http://127.0.0.1:9/")
            .arg("--cache-dir")
            .arg(cache.path()))
    };
    for (args, why) in [
        (vec!["toolchains", "fetch", "zig", "0.15.2;touch pwned"], "holds ';'"),
        (vec!["toolchains", "fetch", "zig", "0.15.2", "$(id)"], "holds '$'"),
        (vec!["toolchains", "--toolchain", "zig@../0.15.2"], "holds '/'"),
        (vec!["measure", "--out", "run.json", "--toolchain", "zig@0.15"], "python3 is not installed"),
        (vec!["measure", "--out", "run.json", "--toolchain", "zig@0.15..2"], "single dots"),
        (vec!["check", "--toolchain", "zig@0.15.2", "--toolchain", "zig@0.16.0"], "both lineage zig-cc-musl"),
    ] {
        let out = offline(agent().args(&args));
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{args:?}: {err}");
    }
    assert!(cached(cache.path()).is_empty(), "{:?}", cached(cache.path()));
}
