//! Libcs slopewatch was not written against: klibc, which lacks whole headers and the harness's
//! clock, a libc whose headers leave out one function, and one whose headers declare a function
//! its library lacks. Each costs only the probes it cannot build, and is named for what it is.

use crate::contracts::{cell, contracts};
use crate::helpers::*;
use serde_json::Value;

/// A few probes from every header the catalogue covers, at small sizes.
const PROBES: &str = "contract.strchr.remaining,contract.memchr.bound,contract.strchrnul.remaining,\
contract.strcasecmp.length,contract.index.remaining,contract.wmemchr.remaining,contract.wcschr.remaining,\
contract.qsort.sorted";

#[test]
fn klibc_builds_the_catalogue_without_the_headers_it_lacks_and_is_named_for_itself() {
    if which("klcc").is_none() {
        eprintln!("skipped: no klcc (Debian libklibc-dev)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let extra = ["--measure", "wall", "--max-size", "4096"];
    let (said, cells) = contracts(dir.path(), &["klibc=klcc".to_string()], &extra, PROBES);
    for probe in [
        "contract.index.remaining",
        "contract.strcasecmp.length",
        "contract.wmemchr.remaining",
        "contract.wcschr.remaining",
    ] {
        assert_eq!(cell(&cells, probe, "klibc"), "not provided", "{probe} (<strings.h> or <wchar.h>): {said}");
    }
    for probe in ["contract.strchr.remaining", "contract.memchr.bound", "contract.qsort.sorted"] {
        let judged = cell(&cells, probe, "klibc");
        assert!(!judged.is_empty() && judged != "not provided" && !judged.contains("build"), "{probe}: {said}");
    }

    let runs = runs(dir.path());
    let libc = runs[0]["toolchain"]["libc"].as_str().unwrap();
    assert!(libc.starts_with("klibc") && !libc.contains("glibc") && !libc.contains("musl"), "{libc}");
    // klibc has no clock_gettime: the harness timed with gettimeofday, and the run says so.
    let strchr = runs[0]["workloads"].as_array().unwrap().iter().find(|w| w["name"] == "contract.strchr.remaining");
    assert_eq!(strchr.unwrap()["metadata"]["clock"], "gettimeofday", "{strchr:?}");
}

#[test]
fn a_function_its_headers_do_not_declare_is_not_provided_and_nothing_else_is_lost() {
    let (Some(_), true) = (which("musl-gcc"), std::path::Path::new("/usr/include/x86_64-linux-musl").is_dir()) else {
        eprintln!("skipped: no musl-gcc (Debian musl-tools)");
        return;
    };
    // A sysroot of musl's headers whose <string.h> leaves out strchrnul, ahead of musl's own.
    let dir = tempfile::tempdir().unwrap();
    let sysroot = dir.path().join("include");
    std::fs::create_dir(&sysroot).unwrap();
    let string_h = std::fs::read_to_string("/usr/include/x86_64-linux-musl/string.h").unwrap();
    let without: String = string_h.lines().filter(|l| !l.contains("strchrnul")).map(|l| format!("{l}\n")).collect();
    assert_ne!(without.len(), string_h.len(), "musl's string.h declares strchrnul");
    std::fs::write(sysroot.join("string.h"), without).unwrap();

    let toolchain = format!("fixture=musl-gcc -isystem {}", sysroot.display());
    only_strchrnul_is_not_provided(dir.path(), toolchain);
}

/// A libc whose `<string.h>` declares a function its library does not define: a compiler folds the
/// declared function's address to non-null, so only a link that needs the symbol finds it missing.
#[test]
fn a_function_its_headers_declare_but_its_library_lacks_is_not_provided_and_nothing_else_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    // Every name `strchrnul` the headers and sources write becomes a symbol no library defines.
    let missing = dir.path().join("missing.h");
    std::fs::write(&missing, "#define strchrnul sw_fixture_undefined_strchrnul\n").unwrap();
    let toolchain = format!("fixture=gcc -include {}", missing.display());
    only_strchrnul_is_not_provided(dir.path(), toolchain);
}

/// Measures the probes and the `strchrnul` and `strchr` workloads with `toolchain` (named
/// `fixture`), in `dir`: `strchrnul`'s probe and workload are not provided, every other probe is
/// judged, and `strchr` runs.
fn only_strchrnul_is_not_provided(dir: &std::path::Path, toolchain: String) {
    let extra = ["--measure", "wall", "--max-size", "4096"];
    let probes = format!("{PROBES},strchrnul,strchr");
    let (said, cells) = contracts(dir, &[toolchain], &extra, &probes);
    assert_eq!(cell(&cells, "contract.strchrnul.remaining", "fixture"), "not provided", "{said}");
    for probe in PROBES.split(',').filter(|p| !p.contains("strchrnul")) {
        let judged = cell(&cells, probe, "fixture");
        assert!(!judged.is_empty() && judged != "not provided" && !judged.contains("build"), "{probe}: {said}");
    }
    let runs = runs(dir);
    let workload = |name: &str| runs[0]["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).cloned();
    assert_eq!(workload("strchrnul").unwrap()["not_provided"], true, "the built-in workload: {said}");
    assert!(workload("strchr").unwrap()["failure"].is_null(), "{said}");
}

/// The runs `--out` wrote: one run alone, or several in an array.
fn runs(dir: &std::path::Path) -> Vec<Value> {
    match serde_json::from_slice(&std::fs::read(dir.join("runs.json")).unwrap()).unwrap() {
        Value::Array(runs) => runs,
        run => vec![run],
    }
}
