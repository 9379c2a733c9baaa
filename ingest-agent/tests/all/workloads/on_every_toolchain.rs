//! The team's own code, end to end: the example's tokenizer as a configured workload (two sources
//! and a header) and as a command workload, built with gcc, musl-gcc and each installed Zig, run
//! beside the built-in `strchr`, and stored through a real server. The tokenizer finds each
//! delimiter with `strchr`, so it must be quadratic exactly where the libc's `strchr` is.

use crate::helpers::*;
use serde_json::Value;
use std::path::Path;

const WORKLOADS: [&str; 3] = ["strchr", "tokenize", "tokenize-cli"];

#[test]
fn the_tokenizer_is_quadratic_exactly_where_the_libc_s_strchr_is_on_every_toolchain() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_server, url, token)) = real_server(dir.path(), &[]) else { return };
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/workloads/slopewatch-agent.toml");
    let mut toolchains = vec!["gcc-glibc".to_string()];
    let mut args: Vec<String> = Vec::new();
    if which("musl-gcc").is_some() {
        args.extend(["--toolchain".into(), "musl-gcc=musl-gcc".into()]);
        toolchains.push("musl-gcc".into());
    } else {
        eprintln!("note: musl-gcc is not installed (Debian: apt-get install musl-tools); measured without it");
    }
    for zig in zigs() {
        let version = zig_version(&zig);
        let name = format!("zig-{version}");
        args.extend(["--toolchain".into(), format!("{name}={} cc -target x86_64-linux-musl", zig.display())]);
        toolchains.push(name);
    }
    let out = run(agent()
        .args(["run", "--server", &url, "--token", &token, "--config"])
        .arg(&config)
        .args(&args)
        .args(["--workloads", &WORKLOADS.join(","), "--max-size", "256K"])
        .args(["--reps", "3", "--size-budget", "150ms", "--total-budget", "8s"])
        .arg("--spool-dir")
        .arg(dir.path().join("spool"))
        .arg("--cache-dir")
        .arg(dir.path().join("cache")));
    // Exit 1 where some toolchain is over the limit: that is the point of the exercise.
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out));

    let mut table = Vec::new();
    for tc in &toolchains {
        let verdicts: Vec<bool> = WORKLOADS
            .iter()
            .map(|w| {
                wait_for_summary(&url, w, tc, &token);
                let slope = stored_slope(&url, w, tc, &token);
                table.push(format!("{tc} {w}: {slope:.2}"));
                slope > 1.5
            })
            .collect();
        assert!(
            verdicts.iter().all(|&v| v == verdicts[0]),
            "{tc}: the tokenizer's verdict differs from strchr's\n{}\n{}",
            table.join("\n"),
            text(&out)
        );
    }
    eprintln!("{}", table.join("\n"));
    let quadratic = |tc: &str| table.iter().any(|l| l.starts_with(&format!("{tc} strchr")) && slope_in(l) > 1.5);
    // Zig 0.16.0 ships the strchr that measures the whole rest of the string; glibc, Debian's musl
    // and Zig 0.15.2 do not. Other releases are only held to agreeing with their own strchr.
    for (tc, expected) in [("gcc-glibc", false), ("musl-gcc", false), ("zig-0.15.2", false), ("zig-0.16.0", true)] {
        if toolchains.iter().any(|t| t == tc) {
            assert_eq!(quadratic(tc), expected, "{tc}\n{}", table.join("\n"));
        }
    }
    // The configured workload's source hash is the same on every toolchain: one source, measured
    // by each.
    let hashes: Vec<Value> =
        toolchains.iter().map(|tc| stored_version(&url, "tokenize", tc, &token)["source_hash"].clone()).collect();
    assert!(hashes[0].as_str().is_some_and(|h| h.starts_with("sha256:")), "{hashes:?}");
    assert!(hashes.iter().all(|h| *h == hashes[0]), "{hashes:?}");
}

fn zig_version(zig: &Path) -> String {
    let out = std::process::Command::new(zig).arg("version").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn slope_in(line: &str) -> f64 {
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// The newest stored version of `workload` on lineage `toolchain`, as the series API gives it.
fn stored_version(url: &str, workload: &str, toolchain: &str, token: &str) -> Value {
    let body = ureq::get(format!("{url}/api/v1/series"))
        .query("workload", workload)
        .query("toolchain", toolchain)
        .header("Authorization", &format!("Bearer {token}"))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    let series: Value = serde_json::from_str(&body).unwrap();
    series["versions"].as_array().and_then(|v| v.last()).cloned().unwrap_or_else(|| panic!("{series}"))
}

fn stored_slope(url: &str, workload: &str, toolchain: &str, token: &str) -> f64 {
    let v = stored_version(url, workload, toolchain, token);
    v["slope"].as_f64().unwrap_or_else(|| panic!("{workload} on {toolchain}: {v}"))
}
