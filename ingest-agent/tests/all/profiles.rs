//! Profiles with the real Zig 0.15.2 and 0.16.0 under Valgrind: a workload over its limit is
//! profiled at a quarter of its first size and the terminal says where its instructions went,
//! naming the libc function that took them; `--profile` profiles every workload; the run carries
//! the profile for the server.

use crate::helpers::*;
use serde_json::Value;

fn zig_toolchains() -> Option<Vec<String>> {
    let zigs = zigs();
    let find = |v: &str| zigs.iter().find(|z| z.to_string_lossy().contains(v)).cloned();
    let (old, new) = (find("0.15.2")?, find("0.16.0")?);
    Some(vec![
        format!("zig-0.15.2={} cc -target x86_64-linux-musl", old.display()),
        format!("zig-0.16.0={} cc -target x86_64-linux-musl", new.display()),
    ])
}

/// The line of `said` under "where the instructions went" for `name`.
fn profile_line<'a>(said: &'a str, name: &str) -> Option<&'a str> {
    said.lines()
        .skip_while(|l| !l.starts_with("where the instructions went:"))
        .find(|l| l.trim_start().starts_with(name))
}

#[test]
fn the_workload_over_its_limit_names_strspn_and_profile_profiles_every_workload() {
    let Some(toolchains) = zig_toolchains().filter(|_| which("valgrind").is_some()) else {
        eprintln!("note: Zig 0.15.2 and 0.16.0, or valgrind, are missing; skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let check = |extra: &[&str]| {
        let mut c = agent();
        c.arg("check");
        for t in &toolchains {
            c.args(["--toolchain", t]);
        }
        c.args(["--workloads", "strspn", "--max-size", "256K", "--cache-dir"])
            .arg(dir.path().join("cache"))
            .args(extra);
        run(&mut c)
    };
    let out = check(&[]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "0.16.0's strspn is over: {said}");
    let line = profile_line(&said, "zig-0.16.0/strspn:").unwrap_or_else(|| panic!("{said}"));
    let share: f64 = line.split(": ").nth(1).and_then(|s| s.split(' ').next()).and_then(|s| s.parse().ok()).unwrap();
    assert!(share >= 50.0 && line.contains(" are in strspn (string.zig), called from sw_run"), "{line}");
    assert!(profile_line(&said, "zig-0.15.2/strspn:").is_none(), "0.15.2 is under, not profiled: {said}");

    let runs = dir.path().join("runs.json");
    let out = run(agent()
        .arg("measure")
        .args(["--toolchain", &toolchains[0], "--workloads", "strspn", "--max-size", "256K", "--profile"])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--out")
        .arg(&runs));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(profile_line(&said, "zig-0.15.2/strspn:").is_some(), "--profile profiles what is under too: {said}");
    // One toolchain's run is written as it is, several as an array.
    let written: Value = serde_json::from_slice(&std::fs::read(&runs).unwrap()).unwrap();
    let profile = &written["workloads"][0]["profile"];
    assert_eq!(profile["size"], 16384, "a quarter of the workload's first size: {profile}");
    let functions = profile["functions"].as_array().unwrap();
    assert!(!functions.is_empty() && functions.len() <= 50, "{profile}");
    assert!(functions.iter().all(|f| f["own"].as_u64() <= f["inclusive"].as_u64()), "{profile}");
}

#[test]
fn through_a_real_server_the_regression_at_0_16_0_names_strspn_and_its_broken_contract() {
    let Some(toolchains) = zig_toolchains().filter(|_| which("valgrind").is_some()) else {
        eprintln!("note: Zig 0.15.2 and 0.16.0, or valgrind, are missing; skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some((_server, url, token)) = real_server(dir.path(), &[]) else { return };
    // One lineage, two versions: the version is each compiler's own.
    for toolchain in toolchains.iter().map(|t| format!("zig={}", t.split_once('=').unwrap().1)) {
        let out = run(agent()
            .args(["run", "--toolchain", &toolchain, "--workloads", "strspn,contract.strspn.remaining"])
            .args(["--max-size", "256K", "--profile", "--server", &url, "--token", &token, "--cache-dir"])
            .arg(dir.path().join("cache"))
            .arg("--spool-dir")
            .arg(dir.path().join("spool")));
        assert!(out.status.code().is_some_and(|c| c <= 1), "{toolchain}: {}", text(&out));
    }
    let began = std::time::Instant::now();
    let went = loop {
        let list = get_json(&url, "/api/v1/regressions");
        let id = list["regressions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["regression"]["version"] == "0.16.0" && r["regression"]["previous_version"] == "0.15.2")
            .and_then(|r| r["regression"]["id"].as_i64());
        if let Some(id) = id {
            let detail = get_json(&url, &format!("/api/v1/regressions/{id}"));
            let went = detail["where_cost_went"].as_array().cloned().unwrap_or_default();
            if let Some(w) = went.into_iter().find(|w| w["workload"] == "strspn") {
                break w;
            }
        }
        assert!(began.elapsed() < std::time::Duration::from_secs(30), "no profiled regression at 0.16.0: {list}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert_eq!(went["good_version"], "0.15.2", "both versions profiled at one size: {went}");
    assert_eq!(went["shift"]["function"], "strspn", "{went}");
    let share = went["shift"]["functions"][0]["share"].as_f64().unwrap();
    assert!(share >= 0.5, "at least half the added cost is in strspn: {went}");
    assert!(went["shift"]["sentence"].as_str().unwrap().contains("of the added instructions are in strspn"), "{went}");
    assert_eq!(went["contract"]["sentence"], "strspn broke its O(1) contract at 0.16.0", "{went}");
}

/// A tokenizer as a team's own program: splits SIZE bytes of words at each space with `strchr`.
const TOKENIZER: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    char *buf = malloc(n + 1);
    for (long i = 0; i < n; i++) buf[i] = i % 8 == 7 ? ' ' : 'a';
    buf[n] = 0;
    long tokens = 0;
    for (char *p = buf; p && *p; tokens++) {
        char *q = strchr(p, ' ');
        p = q ? q + 1 : NULL;
    }
    printf("slopewatch_result=%ld\n", tokens);
    return 0;
}
"#;

#[test]
fn a_command_workload_is_profiled_as_its_process_and_its_regression_names_strchr() {
    let Some(toolchains) = zig_toolchains().filter(|_| which("valgrind").is_some()) else {
        eprintln!("note: Zig 0.15.2 and 0.16.0, or valgrind, are missing; skipped");
        return;
    };
    let Some(detail) = regression_of_command(&toolchains, "zig-tokens", "tokens", TOKENIZER, "{cc} {cflags}") else {
        return;
    };
    let went = &detail["where_cost_went"][0];
    assert_eq!((&went["workload"], &went["good_version"]), (&"tokens".into(), &"0.15.2".into()), "{detail}");
    assert_eq!(went["shift"]["function"], "strchr", "through the process tree: {went}");
}

#[test]
fn a_stripped_programs_regression_names_strspn_by_its_fingerprint() {
    let Some(toolchains) = zig_toolchains().filter(|_| which("valgrind").is_some()) else {
        eprintln!("note: Zig 0.15.2 and 0.16.0, or valgrind, are missing; skipped");
        return;
    };
    let source = std::fs::read_to_string(fixture("stripped_strspn.c")).unwrap();
    let Some(detail) = regression_of_command(&toolchains, "zig-words", "words", &source, "{cc} -O2 -s") else {
        return;
    };
    let went = &detail["where_cost_went"][0];
    assert_eq!((&went["workload"], &went["good_version"]), (&"words".into(), &"0.15.2".into()), "{detail}");
    assert_eq!(went["shift"]["function"], "strspn", "named by its code, not an address: {went}");
}

/// The regression a real server opens at Zig 0.16.0 for the command workload `workload`, the C
/// program `source` built by `compile` (`{cc} -O2 -s`, then `-o {out}`) and run on `{size}` bytes,
/// measured with each of `toolchains` as the lineage `lineage`: counted, profiled and submitted.
/// Counted, as a whole process: a command's time has its process's start in it, and on a busy
/// machine the few milliseconds its small sizes take are mostly noise; counts are exact. The class
/// rule beside the slope's judges the growth the start flattens at the smallest sizes.
/// None, with a note, where the server binary is not built.
fn regression_of_command(
    toolchains: &[String],
    lineage: &str,
    workload: &str,
    source: &str,
    compile: &str,
) -> Option<Value> {
    let dir = tempfile::tempdir().unwrap();
    let server_config = dir.path().join("server.toml");
    std::fs::write(&server_config, "[alerts]\nrule = \"either\"\n").unwrap();
    let (_server, url, token) = real_server(dir.path(), &["--config", server_config.to_str().unwrap()])?;
    std::fs::write(dir.path().join(format!("{workload}.c")), source).unwrap();
    for (i, toolchain) in toolchains.iter().enumerate() {
        let cc = toolchain.split_once('=').unwrap().1;
        let config = dir.path().join(format!("agent-{i}.toml"));
        std::fs::write(
            &config,
            format!(
                "[[toolchains]]\nname = \"{lineage}\"\ncc = \"{cc}\"\n\n[[workloads]]\nname = \"{workload}\"\n\
                 build = \"{compile} -o {{out}} {workload}.c\"\ncommand = \"{{out}} {{size}}\"\nsources = [\"{workload}.c\"]\n\
                 unit = \"bytes\"\nstart = 4096\nmax = 32768\n"
            ),
        )
        .unwrap();
        let out = run(agent()
            .args(["run", "--workloads", workload, "--profile", "--measure", "instructions", "--counter", "valgrind"])
            .args(["--server", &url, "--token", &token])
            .arg("--config")
            .arg(&config)
            .arg("--cache-dir")
            .arg(dir.path().join("cache"))
            .arg("--spool-dir")
            .arg(dir.path().join("spool")));
        assert!(out.status.code().is_some_and(|c| c <= 1), "{cc}: {}", text(&out));
    }
    let began = std::time::Instant::now();
    loop {
        let list = get_json(&url, "/api/v1/regressions");
        let id = list["regressions"].as_array().unwrap().iter().find_map(|r| r["regression"]["id"].as_i64());
        if let Some(id) = id {
            let detail = get_json(&url, &format!("/api/v1/regressions/{id}"));
            assert_eq!(detail["regression"]["version"], "0.16.0", "{detail}");
            return Some(detail);
        }
        if began.elapsed() > std::time::Duration::from_secs(30) {
            let version = ureq::get(format!("{url}/api/v1/toolchains/{lineage}/0.16.0"))
                .call()
                .map(|mut r| r.body_mut().read_to_string());
            panic!("no regression: {list}\n{version:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
