//! The article's SQLite regression as teams meet it: JSON written by real serializers, through
//! the SQL teams use, built with Zig 0.15.2 and 0.16.0. Zig 0.16.0's `strspn` and `strcspn`
//! measure the rest of the string, so every whitespace run of one long document costs the rest of
//! it: quadratic. Compact JSON never calls them, and short records never have a long rest.
//! docs/sqlite.md lists the paths.
//!
//! Building SQLite costs about 40 s per Zig release, so every test here shares one build cache
//! under the target directory, kept between runs (the agent keys it by toolchain and source), and
//! takes a lock per toolchain while it measures: the tests of one release never build it twice,
//! nor time a workload while another builds it.

use crate::helpers::*;
use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// The slope limit the agent's gate applies by default.
const LIMIT: f64 = 1.5;

/// The Zig release `version` as an agent toolchain, when installed.
fn zig(version: &str) -> Option<String> {
    let found = zigs().into_iter().find(|z| z.to_string_lossy().contains(&format!("/{version}/")));
    if found.is_none() {
        eprintln!("skipped: Zig {version} is not installed (scripts/install-test-deps installs it)");
    }
    Some(format!("zig-{}={} cc -target x86_64-linux-musl", version.replace('.', "_"), found?.display()))
}

/// Measures `workloads` at their own sizes with `toolchain`, in the shared cache, and returns the
/// slope of each, after checking each recorded the SQLite version it linked.
fn slopes_of(toolchain: &str, workloads: &[&str]) -> BTreeMap<String, f64> {
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sqlite-json-cache");
    std::fs::create_dir_all(&cache).unwrap();
    let name = toolchain.split('=').next().unwrap();
    let lock = File::create(cache.join(format!("{name}.lock"))).unwrap();
    // SAFETY: flock on a descriptor the File keeps open; the lock goes with it when it is dropped,
    // or with the process.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0, "lock the shared cache");
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("run.json");
    let out = run(agent()
        .args(["measure", "--toolchain", toolchain, "--workloads", &workloads.join(",")])
        .arg("--cache-dir")
        .arg(&cache)
        .arg("--out")
        .arg(&out_file));
    drop(lock);
    assert!(out.status.success(), "{}", text(&out));
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    for w in run["workloads"].as_array().unwrap() {
        let version = w["metadata"]["sqlite_version"].as_str().unwrap_or_default();
        assert!(version.starts_with("3."), "{}: sqlite_version {version:?}", w["name"]);
    }
    let slopes: BTreeMap<String, f64> = slopes(&out_file).into_iter().map(|(_, w, k)| (w, k)).collect();
    assert_eq!(slopes.len(), workloads.len(), "{slopes:?}");
    eprintln!("{name}: {slopes:?}");
    slopes
}

/// Measures `linear` and `over` with `toolchain` and checks that each of `linear` reads linear and
/// each of `over` reads over the limit. Wall time on a host busy with the rest of the suite can
/// bend one sweep, so a workload that reads wrong is measured once more, as `check` does with an
/// unsure verdict, and judged by that second sweep: a real regression, or its absence, reads the
/// same twice.
fn judge(toolchain: &str, linear: &[&str], over: &[&str]) {
    let slopes = slopes_of(toolchain, &[linear, over].concat());
    let first = wrong(&slopes, linear, over);
    if first.is_empty() {
        return;
    }
    eprintln!("measuring once more: {first:?} in {slopes:?}");
    let again: Vec<&str> = first.iter().map(|(w, _)| *w).collect();
    let slopes = slopes_of(toolchain, &again);
    let (linear, over): (Vec<&str>, Vec<&str>) = again.iter().partition(|w| linear.contains(w));
    let twice = wrong(&slopes, &linear, &over);
    assert!(twice.is_empty(), "wrong twice: {twice:?} in {slopes:?}");
}

/// The workloads of `linear` that do not read linear and of `over` that do not read over the
/// limit, each with what it should be.
fn wrong<'w>(slopes: &BTreeMap<String, f64>, linear: &[&'w str], over: &[&'w str]) -> Vec<(&'w str, String)> {
    // Fixed costs (the statement's preparation, the transaction) flatten the small sizes a little.
    let linear = linear.iter().filter(|w| !(0.4..1.4).contains(&slopes[**w])).map(|w| (*w, "linear".to_string()));
    let over = over.iter().filter(|w| slopes[**w] <= LIMIT).map(|w| (*w, format!("over the limit {LIMIT}")));
    linear.chain(over).collect()
}

#[test]
fn one_json_document_with_whitespace_turns_quadratic_under_zig_0_16_and_compact_json_does_not() {
    let Some(zig) = zig("0.16.0") else { return };
    judge(&zig, &["sqlite-json-each"], &["sqlite-json-each.spaced", "sqlite-json-each.pretty"]);
}

#[test]
fn every_form_of_one_json_document_is_linear_under_zig_0_15() {
    let Some(zig) = zig("0.15.2") else { return };
    judge(&zig, &["sqlite-json-each", "sqlite-json-each.spaced", "sqlite-json-each.pretty"], &[]);
}

#[test]
fn json_extract_arrow_and_like_over_one_long_input_turn_quadratic_under_zig_0_16_short_records_do_not() {
    let Some(zig) = zig("0.16.0") else { return };
    let quadratic = ["sqlite-json-extract.spaced", "sqlite-json-arrow.pretty", "sqlite-like.long-text"];
    judge(&zig, &["sqlite-insert.spaced", "sqlite-json-each.literals"], &quadratic);
}
