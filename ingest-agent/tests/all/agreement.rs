//! Toolchains that compute different results for the same workload, with real compilers: the one
//! in the minority fails with `wrong_result`, the ones that agree do not.

use crate::helpers::*;
use serde_json::Value;
use slopewatch_core::format::size as size_text;
use slopewatch_core::wire::{RunSubmission, SizeUnit};
use std::path::Path;

const TOOLCHAINS: [&str; 3] = ["gcc-glibc=gcc", "off-by-one=gcc -DSW_OFF_BY_ONE", "gcc-O1=gcc -O1"];

fn agent_with(command: &str, cache: &Path) -> std::process::Command {
    let mut cmd = agent();
    cmd.arg(command).args(["--workloads", "count-colons", "--max-size", "16K", "--reps", "2"]);
    for t in TOOLCHAINS {
        cmd.args(["--toolchain", t]);
    }
    cmd.arg("--workload-file").arg(fixture("off_by_one_count.c")).arg("--cache-dir").arg(cache);
    cmd
}

fn count_colons(run: &Value) -> &Value {
    run["workloads"].as_array().unwrap().iter().find(|w| w["name"] == "count-colons").unwrap()
}

#[test]
fn a_toolchain_whose_result_differs_from_two_that_agree_fails_with_a_wrong_result_naming_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let (url, seen) = listener((0..3).map(|_| stored_unknown(true)).collect());
    let out = run(agent_with("run", &cache)
        .args(["--server", &url, "--token", "sw_test", "--spool-dir"])
        .arg(dir.path().join("spool")));
    assert_eq!(out.status.code(), Some(1), "a disagreement fails the job: {}", text(&out));
    let sent: Vec<Value> = seen.lock().unwrap().iter().map(|s| serde_json::from_str(&s.body).unwrap()).collect();
    assert_eq!(sent.len(), 3, "every run is sent, the failure carried in its own");
    // The first size all three measured: a wall sweep begins lower on a loaded host, and a size
    // only one toolchain measured has nothing to disagree with.
    let first_of = |run: &Value| count_colons(run)["measurements"][0]["size"].as_u64().unwrap();
    let first_shared = sent.iter().map(first_of).max().unwrap();
    for run in &sent {
        RunSubmission::from_json(&serde_json::to_vec(run).unwrap()).unwrap_or_else(|e| panic!("invalid run: {e}"));
        let w = count_colons(run);
        let sizes: Vec<u64> =
            w["measurements"].as_array().unwrap().iter().map(|m| m["size"].as_u64().unwrap()).collect();
        assert!(sizes.len() >= 3, "the measurements are kept beside the failure: {w}");
        match run["toolchain"]["name"].as_str().unwrap() {
            "off-by-one" => {
                let f = &w["failure"];
                assert_eq!(f["kind"], "wrong_result", "{w}");
                let size = f["size"].as_u64().unwrap();
                assert_eq!(size, first_shared, "the first size that disagrees: {sizes:?}");
                let expected = (size / 8).to_string();
                let got = (size / 8 + 1).to_string();
                assert_eq!((f["got"].as_str(), f["expected"].as_str()), (Some(&*got), Some(&*expected)), "{f}");
                assert_eq!(
                    f["detail"].as_str().unwrap(),
                    format!(
                        "differs from gcc-glibc, gcc-O1: {got} here, {expected} there, at {}",
                        size_text(size, SizeUnit::Bytes)
                    )
                );
            }
            agrees => assert!(w.get("failure").is_none(), "{agrees} agrees with the majority: {w}"),
        }
    }

    let check = run(&mut agent_with("check", &cache));
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    let said = text(&check);
    // At the first size the three sweeps share, whichever it is on this host's load.
    let at =
        said.split("✗ wrong result at ").nth(1).and_then(|r| r.split(':').next()).unwrap_or_else(|| panic!("{said}"));
    let bytes = match at.split_once(' ') {
        Some((n, "B")) => n.parse::<u64>().unwrap(),
        Some((n, "KiB")) => n.parse::<u64>().unwrap() * 1024,
        _ => panic!("{at}: {said}"),
    };
    let (got, expected) = (bytes / 8 + 1, bytes / 8);
    assert!(said.contains(&format!("✗ wrong result at {at}: got {got}, expected {expected}")), "{said}");
    assert!(said.contains("off-by-one/count-colons (wrong result)"), "{said}");
    assert!(!said.contains("gcc-glibc/count-colons (wrong result)"), "{said}");
    assert!(!said.contains("partial"), "every size was measured, none left out of the fit: {said}");
}
