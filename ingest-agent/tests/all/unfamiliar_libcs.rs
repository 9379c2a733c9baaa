//! Libcs slopewatch was not written against: klibc, which lacks whole headers and the harness's
//! clock, a libc whose headers leave out one function, one whose headers declare a function its
//! library lacks, and ones whose headers make one probe's code fail to compile or to link. Each
//! costs only the probes it cannot build, and is named for what it is.

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
    assert_eq!(workload(&runs, "strchrnul")["not_provided"], true, "the built-in workload: {said}");
    assert!(workload(&runs, "strchr")["failure"].is_null(), "{said}");
}

/// A libc whose `<string.h>` makes `strspn` a macro of three arguments, so that the probes' calls
/// of it do not compile while a program taking its address does: `strspn`'s probes fail to build
/// with the compiler's words, every other probe is judged, and a second run reads the same from
/// the cached catalogue without compiling it again.
#[test]
fn a_probe_whose_code_does_not_compile_fails_alone_with_the_compilers_words() {
    let dir = tempfile::tempdir().unwrap();
    let toolchain = string_h_ending_with(dir.path(), "#define strspn(s, set) strspn(s, set, 0)\n");
    let extra = ["--measure", "wall", "--max-size", "4096"];
    let strspn = "contract.strspn.remaining";
    let probes = format!("{strspn},{FEW}");
    let (said, cells) = contracts(dir.path(), std::slice::from_ref(&toolchain), &extra, &probes);
    assert!(cell(&cells, strspn, "fixture").contains("build failed"), "{said}");
    judged_but_strspn(&cells, &said);
    let failure = |dir: &std::path::Path| workload(&runs(dir), strspn)["failure"].clone();
    let first = failure(dir.path());
    assert_eq!(first["kind"], "build_failed", "{said}");
    let detail = first["detail"].as_str().unwrap();
    assert!(detail.contains("string.c:") && detail.contains("strspn") && detail.contains("error:"), "{detail}");
    assert!(!detail.contains(&dir.path().join("cache").display().to_string()), "paths relative to the build: {detail}");

    let built = catalogue_binaries(dir.path());
    let (said, cells) = contracts(dir.path(), &[toolchain], &extra, &probes);
    assert_eq!(catalogue_binaries(dir.path()), built, "the catalogue was built again: {said}");
    assert!(cell(&cells, strspn, "fixture").contains("build failed"), "{said}");
    judged_but_strspn(&cells, &said);
    assert_eq!(failure(dir.path()), first, "{said}");
}

/// A libc whose `<string.h>` makes `strspn` a macro calling a function its library lacks: the
/// check before compiling takes `strspn`'s address and finds it, so only the catalogue's link
/// finds the probes' calls undefined. `strspn`'s probes are not provided, every other is judged.
#[test]
fn a_probe_whose_code_does_not_link_is_not_provided_and_nothing_else_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let toolchain = string_h_ending_with(
        dir.path(),
        "#define strspn(s, set) sw_fixture_undefined_strspn(s, set)\n\
         size_t sw_fixture_undefined_strspn(const char *, const char *);\n",
    );
    let extra = ["--measure", "wall", "--max-size", "4096"];
    let strspn = "contract.strspn.remaining";
    let (said, cells) = contracts(dir.path(), &[toolchain], &extra, &format!("{strspn},{FEW}"));
    assert_eq!(cell(&cells, strspn, "fixture"), "not provided", "{said}");
    judged_but_strspn(&cells, &said);
}

/// Probes of other functions than `strspn`, in two of the catalogue's files.
const FEW: &str = "contract.strchr.remaining,contract.qsort.sorted";

fn judged_but_strspn(cells: &crate::contracts::Cells, said: &str) {
    for probe in FEW.split(',') {
        let judged = cell(cells, probe, "fixture");
        assert!(!judged.is_empty() && judged != "not provided" && !judged.contains("build"), "{probe}: {said}");
    }
}

/// The toolchain `fixture`: gcc with a `<string.h>` in `dir` ahead of glibc's that includes
/// glibc's and then `tail`.
fn string_h_ending_with(dir: &std::path::Path, tail: &str) -> String {
    let sysroot = dir.join("include");
    std::fs::create_dir(&sysroot).unwrap();
    std::fs::write(sysroot.join("string.h"), format!("#include_next <string.h>\n{tail}")).unwrap();
    format!("fixture=gcc -isystem {}", sysroot.display())
}

/// Each catalogue binary in the build cache of `dir`, with when it was written.
fn catalogue_binaries(dir: &std::path::Path) -> Vec<(std::path::PathBuf, std::time::SystemTime)> {
    let mut found = Vec::new();
    for tc in std::fs::read_dir(dir.join("cache/builds")).unwrap().flatten().filter(|e| e.path().is_dir()) {
        for e in std::fs::read_dir(tc.path()).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("contracts-") && !name.ends_with(".json") && e.path().is_file() {
                found.push((e.path(), e.metadata().unwrap().modified().unwrap()));
            }
        }
    }
    assert!(!found.is_empty(), "no catalogue in {}", dir.display());
    found
}

fn workload(runs: &[Value], name: &str) -> Value {
    let all = runs[0]["workloads"].as_array().unwrap();
    all.iter().find(|w| w["name"] == name).cloned().unwrap_or_else(|| panic!("no {name} in {runs:?}"))
}

/// The runs `--out` wrote: one run alone, or several in an array.
fn runs(dir: &std::path::Path) -> Vec<Value> {
    match serde_json::from_slice(&std::fs::read(dir.join("runs.json")).unwrap()).unwrap() {
        Value::Array(runs) => runs,
        run => vec![run],
    }
}
