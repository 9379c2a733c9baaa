//! The cost rule through a real server, with real compilers counted under Valgrind: a version of
//! a lineage that links byte-loop `memcpy` and `strlen` ahead of glibc stays linear, so the slope
//! rule is silent, and opens a cost regression that names the factor and the size; the same
//! toolchain counted under two version names opens nothing (counts are exact), judged with the
//! unchanged-build rule off so that it passes on the counts and not on the build hashes.

use crate::helpers::*;
use std::path::Path;
use std::time::{Duration, Instant};

const PROBES: &str = "contract.memcpy.length,contract.strlen.length";

/// A config of one toolchain, gcc as `version`, with `link_after` archives.
fn config(dir: &Path, version: &str, link_after: Option<&Path>) -> std::path::PathBuf {
    let path = dir.join(format!("agent-{version}.toml"));
    let link = link_after.map(|a| format!("link_after = [{:?}]\n", a.display().to_string())).unwrap_or_default();
    let text = format!("[[toolchains]]\nname = \"gcc-cost\"\ncc = \"gcc\"\nversion = \"{version}\"\n{link}");
    std::fs::write(&path, text).unwrap();
    path
}

/// The byte-loop archive, built with gcc.
fn byte_loops(dir: &Path) -> std::path::PathBuf {
    let obj = dir.join("byteloop.o");
    let out = run(std::process::Command::new("gcc")
        .args(["-O2", "-fno-builtin", "-fno-tree-loop-distribute-patterns", "-c"])
        .arg(fixture("overlay_byteloop.c"))
        .arg("-o")
        .arg(&obj));
    assert!(out.status.success(), "{}", text(&out));
    let archive = dir.join("libbyteloop.a");
    assert!(run(std::process::Command::new("ar").arg("rcs").arg(&archive).arg(&obj)).status.success());
    archive
}

#[test]
fn a_byte_loop_memcpy_opens_a_cost_regression_and_an_unchanged_toolchain_under_a_new_name_opens_nothing() {
    if which("valgrind").is_none() {
        eprintln!("note: valgrind is not on PATH; skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("server.toml"), "[alerts]\nskip_unchanged_builds = false\n").unwrap();
    let server_config = dir.path().join("server.toml");
    let Some((_server, url, token)) = real_server(dir.path(), &["--config", server_config.to_str().unwrap()]) else {
        return;
    };
    let archive = byte_loops(dir.path());
    let counted = |version: &str, link_after: Option<&Path>| {
        let out = run(agent()
            .args(["run", "--workloads", PROBES, "--measure", "instructions", "--counter", "valgrind"])
            .arg("--config")
            .arg(config(dir.path(), version, link_after))
            .args(["--server", &url, "--token", &token, "--cache-dir"])
            .arg(dir.path().join("cache"))
            .arg("--spool-dir")
            .arg(dir.path().join("spool")));
        assert_eq!(out.status.code(), Some(0), "{version}: {}", text(&out));
    };
    counted("1.0.0", None);
    counted("1.0.1", None);
    counted("1.1.0", Some(&archive));

    // The summary pass runs after each run is stored: wait for the last version's regression.
    let began = Instant::now();
    let regressions = loop {
        let list = get_json(&url, "/api/v1/regressions");
        let regressions = list["regressions"].as_array().unwrap().clone();
        if regressions.iter().any(|r| r["regression"]["version"] == "1.1.0") {
            break regressions;
        }
        if began.elapsed() > Duration::from_secs(30) {
            panic!("no regression at 1.1.0: {list}\n{:#}", get_json(&url, "/api/v1/toolchains/gcc-cost/1.1.0"));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(regressions.len(), 1, "nothing at 1.0.1, one regression at 1.1.0: {regressions:#?}");
    let r = &regressions[0];
    assert_eq!(r["regression"]["previous_version"], "1.0.1", "{r}");
    let members = r["workloads"].as_array().unwrap();
    let mut names: Vec<&str> = members.iter().map(|m| m["workload"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, ["contract.memcpy.length", "contract.strlen.length"], "{r}");
    for m in members {
        assert_eq!(m["reason"], "cost", "the slope rule is silent: {m}");
        assert!(m["time_ratio"].as_f64().unwrap() > 1.5, "{m}");
        assert!(m["ratio_size"].as_i64().unwrap() > 0, "{m}");
    }
    // The page names the factor, the size and the classes.
    let id = r["regression"]["id"].as_i64().unwrap();
    let page = ureq::get(format!("{url}/regressions/{id}")).call().unwrap().body_mut().read_to_string().unwrap();
    let said = page.lines().find(|l| l.contains("Costs more")).unwrap_or_else(|| panic!("{page}"));
    assert!(said.contains("cost ") && said.contains("× at ") && said.contains("O(n) both"), "{said}");
    // The version's release note shows the costs beside the growth, and 1.0.1's shows no change.
    let note = |version: &str| {
        let path = format!("{url}/toolchains/gcc-cost/{version}?format=md");
        ureq::get(path).call().unwrap().body_mut().read_to_string().unwrap()
    };
    let note_110 = note("1.1.0");
    assert!(note_110.contains("2 workloads cost more"), "{note_110}");
    assert!(note_110.contains("| cost ") && note_110.contains("O(n) both"), "{note_110}");
    let note_101 = note("1.0.1");
    assert!(note_101.contains("2 workloads unchanged"), "{note_101}");
}
