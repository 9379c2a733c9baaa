//! The contract catalogue counted under Valgrind, with real compilers: the verdicts a counted
//! gate gives where counting differs from timing. glibc's copies change regime at a size (`rep
//! movsb`, each repetition counted), a probe refuses sizes below its input, a libc lacks a
//! function, and a probe's floating point is not what Valgrind computes.

use crate::helpers::*;
use std::path::Path;

/// `check --measure instructions --counter valgrind` of `workloads` with `toolchain`, builds
/// cached in `dir`.
fn counted_check(dir: &Path, toolchain: &str, workloads: &str) -> std::process::Output {
    run(agent()
        .args(["check", "--toolchain", toolchain, "--workloads", workloads])
        .args(["--measure", "instructions", "--counter", "valgrind", "--cache-dir"])
        .arg(dir.join("cache")))
}

/// The verdict cell of `probe` in the contract table.
fn cell<'a>(said: &'a str, probe: &str) -> &'a str {
    let line = said.lines().find(|l| l.split_whitespace().nth(1) == Some(probe)).unwrap_or_else(|| panic!("{said}"));
    line.split("  ").map(str::trim).filter(|c| !c.is_empty()).last().unwrap()
}

#[test]
fn glibc_counted_holds_its_copies_to_o_n_across_rep_movsb_and_passes_what_it_lacks_or_cannot_start_small() {
    if which("valgrind").is_none() {
        eprintln!("note: valgrind is not on PATH; skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = counted_check(
        dir.path(),
        "gcc-glibc=gcc",
        "contract.memcpy.length,contract.memset.length,contract.strcasestr.needle,contract.strlcpy.length",
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "no false OVER, failure or unsure: {said}");
    for probe in ["contract.memcpy.length", "contract.memset.length", "contract.strcasestr.needle"] {
        assert!(cell(&said, probe).starts_with("held O("), "{probe}: {said}");
    }
    assert_eq!(cell(&said, "contract.strlcpy.length"), "not provided", "{said}");
    assert!(!said.contains("unsure"), "{said}");
    // The step is said, with its size: where glibc turns to `rep movsb` depends on the host's CPU.
    let regime = said.lines().find(|l| l.starts_with("changed regime at one size")).unwrap_or_else(|| panic!("{said}"));
    assert!(regime.contains("gcc-glibc [instructions]/contract.memcpy.length ("), "{regime}");
}

#[test]
fn a_probe_valgrind_computes_wrong_is_not_measurable_by_counts_and_fails_nothing() {
    let zigs = zigs();
    if which("valgrind").is_none() || zigs.is_empty() {
        eprintln!("note: valgrind or Zig is missing; skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for zig in zigs {
        let toolchain = format!("zig={} cc -target x86_64-linux-musl", zig.display());
        let out = counted_check(dir.path(), &toolchain, "contract.strtod.digits,contract.strtod.remaining");
        let said = text(&out);
        assert_eq!(out.status.code(), Some(0), "{}: {said}", zig.display());
        assert_eq!(cell(&said, "contract.strtod.digits"), "not measurable", "{said}");
        assert_eq!(cell(&said, "contract.strtod.remaining"), "held O(1)", "{said}");
        assert!(said.contains("zig [instructions]/contract.strtod.digits (wrong result under Valgrind at "), "{said}");
        assert!(!said.contains("failed:"), "{said}");
    }
}

/// Zig 0.16.0's `memchr` reads past its bound: the fault ends the Valgrind process counting the
/// catalogue, is reported with the probe's own message, and the next probe is counted in a new one.
#[test]
fn a_probe_that_crashes_in_the_counting_process_fails_alone() {
    let Some(zig) = zigs().into_iter().find(|z| z.to_string_lossy().contains("0.16.0")) else {
        eprintln!("note: no Zig 0.16.0; skipped");
        return;
    };
    if which("valgrind").is_none() {
        eprintln!("note: valgrind is not on PATH; skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let toolchain = format!("zig={} cc -target x86_64-linux-musl", zig.display());
    let probes = "contract.strtod.remaining,contract.memchr.remaining,contract.strchr.remaining";
    let said = text(&counted_check(dir.path(), &toolchain, probes));
    assert_eq!(cell(&said, "contract.memchr.remaining"), "✗ crashed", "{said}");
    assert!(said.contains("read past its bound of 2 bytes"), "{said}");
    assert_eq!(cell(&said, "contract.strtod.remaining"), "held O(1)", "{said}");
    // Measured after the crash, and over its contract as on wall time: it measures the whole rest
    // of the string.
    assert_eq!(cell(&said, "contract.strchr.remaining"), "OVER O(n)", "{said}");
}

/// Every (workload, size) of the runs `measure --out` wrote to `file`, with its counts.
fn counts(file: &Path) -> std::collections::BTreeMap<(String, u64), Vec<u64>> {
    let runs: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let mut counts = std::collections::BTreeMap::new();
    for w in runs["workloads"].as_array().unwrap() {
        for m in w["measurements"].as_array().unwrap() {
            let n: Vec<u64> = m["instructions"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect();
            counts.insert((w["name"].as_str().unwrap().to_string(), m["size"].as_u64().unwrap()), n);
        }
    }
    counts
}

/// The built-ins and the catalogue counted one at a time and two at a time: each Valgrind process
/// counts what it would count alone (the harness forks each size from the session as it began),
/// so the counts agree at every size and so do the verdicts.
#[test]
fn counting_side_by_side_gives_the_counts_and_verdicts_of_counting_alone() {
    if which("valgrind").is_none() {
        eprintln!("note: valgrind is not on PATH; skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let measure = |jobs: &str| {
        let out_file = dir.path().join(format!("jobs-{jobs}.json"));
        let out = run(agent()
            .args(["measure", "--toolchain", "gcc-glibc=gcc", "--workloads", "builtin,contract"])
            .args(["--measure", "instructions", "--counter", "valgrind", "--jobs", jobs, "--cache-dir"])
            .arg(dir.path().join("cache"))
            .arg("--out")
            .arg(&out_file));
        let said = text(&out);
        assert!(out.status.code().is_some_and(|c| c <= 1), "{said}");
        (counts(&out_file), String::from_utf8(out.stdout).unwrap(), said)
    };
    let (alone, alone_table, _) = measure("1");
    let (beside, beside_table, said) = measure("2");
    assert!(said.contains("counting 146 workloads, 2 Valgrind processes at once"), "{said}");
    assert!(alone.len() > 500, "{} sizes", alone.len());
    let differ: Vec<_> = alone.iter().filter(|(at, n)| beside.get(*at).is_some_and(|m| m != *n)).collect();
    assert!(differ.is_empty(), "{} of {} sizes counted otherwise: {differ:?}", differ.len(), alone.len());
    assert_eq!(alone.keys().collect::<Vec<_>>(), beside.keys().collect::<Vec<_>>(), "the same sizes");
    assert_eq!(alone_table, beside_table, "the same table: slopes, classes, verdicts and contract cells");
}
