//! Scans of programs the real toolchains build: gcc (dynamic glibc), musl-gcc (static musl), Zig
//! 0.15.2 and 0.16.0 (static, their own musl builds), stripped and not, and files that are not
//! artifacts at all. Each program is built once per test binary; a toolchain that is not installed
//! skips its case with a note (scripts/install-test-deps installs them all).

use super::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use tempfile::TempDir;

/// Calls `strspn` in a loop from `count_spans`, `memcpy` once from `copy` with a length known
/// only at run time, and puts `strlen`'s address in a table of function pointers without calling
/// it by name. Built with `-Wl,-u,strchr`, which links (or imports) `strchr` unused.
const SPANS: &str = r#"#include <stdlib.h>
#include <string.h>

typedef size_t (*length_fn)(const char *);
length_fn lengths[2] = { strlen, 0 };

__attribute__((noinline)) size_t count_spans(const char *s, int rounds) {
    size_t total = 0;
    for (int i = 0; i < rounds; i++)
        total += strspn(s + (i & 1), "abc");
    return total;
}

__attribute__((noinline)) char *copy(const char *s, size_t n) {
    char *d = malloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

int main(int argc, char **argv) {
    char *c = copy(argv[0], (size_t)argc * 2);
    length_fn f = lengths[argc > 9];
    return (int)(count_spans(c, argc * 100) + (f ? f(c) : 0));
}
"#;

/// Another program linking the same libc functions, laid out differently: where fingerprints of
/// the libc are taken from, as the agent takes them from a program of its own.
const OTHER: &str = r#"#include <stdlib.h>
#include <string.h>

volatile int sink;
void *volatile table[] = { (void *)strspn, (void *)memcpy, (void *)strlen, (void *)strchr, (void *)malloc };

int main(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        sink += (int)strlen(argv[i]) * 3 + 1;
    return sink == 0 && table[0] == 0;
}
"#;

/// The lines of `SPANS` its calls are on.
const STRSPN_LINE: &str = "spans.c:10";
const MEMCPY_LINE: &str = "spans.c:16";

const CATALOGUE: &[&str] = &["memcpy", "memset", "strchr", "strchrnul", "strcspn", "strlen", "strspn", "strtok"];

/// The directory every build of this test binary goes to.
fn dir() -> &'static Path {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = TempDir::new().unwrap();
        std::fs::write(dir.path().join("spans.c"), SPANS).unwrap();
        std::fs::write(dir.path().join("other.c"), OTHER).unwrap();
        dir
    })
    .path()
}

/// `SPANS` built by `compiler` with `flags` into `name`, once per test binary; none where the
/// compiler is missing or refuses (as `gcc -static` does without glibc's static libraries).
fn built(name: &str, compiler: &Path, flags: &[&str]) -> Option<PathBuf> {
    built_from("spans.c", name, compiler, flags)
}

/// The C file `source` of this test binary's directory built as [`built`] builds `SPANS`.
fn built_from(source: &str, name: &str, compiler: &Path, flags: &[&str]) -> Option<PathBuf> {
    static BUILT: OnceLock<Mutex<HashMap<String, Option<PathBuf>>>> = OnceLock::new();
    // Held across the build: two tests asking for one program wait for one build.
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    built
        .entry(name.to_string())
        .or_insert_with(|| {
            let out = dir().join(name);
            let status = Command::new(compiler)
                .args(flags)
                .args(["-O2", "-g", source, "-Wl,-u,strchr", "-o"])
                .arg(&out)
                .current_dir(dir())
                .stderr(Stdio::null())
                .status();
            status.is_ok_and(|s| s.success()).then_some(out)
        })
        .clone()
}

fn gcc(name: &str, flags: &[&str]) -> PathBuf {
    built(name, Path::new("gcc"), flags).unwrap_or_else(|| panic!("gcc {flags:?} must build {name}"))
}

fn musl_gcc(name: &str, flags: &[&str]) -> Option<PathBuf> {
    let found = built(name, Path::new("musl-gcc"), flags);
    if found.is_none() {
        eprintln!("musl-gcc did not build {name} (apt-get install musl-tools): skipping the musl case");
    }
    found
}

/// Zig `version` (0.15.2, 0.16.0): from `SLOPEWATCH_TEST_ZIG` (colon-separated paths to `zig`) or
/// the CI install under /opt/slopewatch-zig; none with a note where it is not there.
fn zig(version: &str) -> Option<PathBuf> {
    let listed: Vec<PathBuf> = match std::env::var_os("SLOPEWATCH_TEST_ZIG") {
        Some(list) => std::env::split_paths(&list).collect(),
        None => vec![PathBuf::from(format!("/opt/slopewatch-zig/{version}/ziglang/zig"))],
    };
    let found = listed.into_iter().find(|zig| {
        Command::new(zig).arg("version").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == version)
    });
    if found.is_none() {
        eprintln!("no Zig {version} (SLOPEWATCH_TEST_ZIG or /opt/slopewatch-zig/{version}): skipping its case");
    }
    found
}

/// `SPANS` built by Zig `version` for `target` with `flags`.
fn zig_built(version: &str, target: &str, flags: &[&str]) -> Option<PathBuf> {
    let zig = zig(version)?;
    let mut args = vec!["cc", "-target", target];
    args.extend_from_slice(flags);
    let name = format!("zig-{version}-{target}{}", flags.concat());
    let found = built(&name, &zig, &args);
    assert!(found.is_some(), "Zig {version} must build {name}");
    found
}

fn scanned(path: &Path) -> Artifact {
    scan(path, CATALOGUE, Naming::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn find<'a>(artifact: &'a Artifact, function: &str) -> &'a FunctionUse {
    artifact.uses.iter().find(|u| u.function == function).unwrap_or_else(|| panic!("{function}: {artifact:#?}"))
}

/// What every build of `SPANS` with symbols and line tables must show: `strspn` called from
/// `count_spans` at its line, `memcpy` from `copy`, `strlen`'s address taken, `strchr` unused.
fn assert_spans(artifact: &Artifact, libc: &str, linkage: Linkage) {
    assert_spans_on(artifact, libc, linkage, "x86_64");
}

/// `assert_spans` for an artifact built for `arch`.
fn assert_spans_on(artifact: &Artifact, libc: &str, linkage: Linkage, arch: &str) {
    assert_eq!((artifact.libc.name.as_str(), artifact.linkage), (libc, linkage), "{artifact:#?}");
    assert!(artifact.symbols && artifact.call_sites_decoded);
    assert_eq!(artifact.arch, arch);
    let strspn = find(artifact, "strspn");
    let count_spans = strspn.callers.iter().find(|c| c.name == "count_spans").expect("count_spans calls strspn");
    assert!(count_spans.sites >= 1 && strspn.call_sites >= count_spans.sites, "{strspn:#?}");
    assert!(!count_spans.in_libc);
    let location = count_spans.location.as_deref().unwrap_or_default();
    assert!(location.ends_with(STRSPN_LINE), "{location:?}");
    let memcpy = find(artifact, "memcpy");
    let copy = memcpy.callers.iter().find(|c| c.name == "copy").expect("copy calls memcpy");
    assert!(copy.location.as_deref().unwrap_or_default().ends_with(MEMCPY_LINE), "{copy:?}");
    assert!(find(artifact, "strlen").referenced, "strlen's address is in a table");
    assert!(artifact.unused.contains(&"strchr".to_string()), "{:?}", artifact.unused);
    assert!(!artifact.uses.iter().any(|u| u.function == "strtok"), "strtok is not linked");
    assert_eq!(identify_libc(&artifact_path(artifact)).unwrap(), artifact.libc, "identify_libc agrees with scan");
}

fn artifact_path(artifact: &Artifact) -> PathBuf {
    dir().join(&artifact.name)
}

#[test]
fn gcc_dynamic_calls_strspn_through_its_plt() {
    let artifact = scanned(&gcc("gcc", &[]));
    assert_spans(&artifact, "glibc", Linkage::Dynamic);
    assert_eq!(artifact.libc.evidence, "imports from libc.so.6");
    assert!(artifact.digest.starts_with("build-id:") && artifact.digest.len() > 20, "{}", artifact.digest);
    assert_eq!(find(&artifact, "strspn").aliases, ["strspn"]);
}

#[test]
fn calls_through_the_got_or_an_ibt_plt_count_as_calls() {
    for (name, flags) in [
        ("gcc-no-plt", &["-fno-plt"][..]),
        ("gcc-ibt", &["-fcf-protection=full", "-Wl,-z,ibtplt,-z,now"]),
        ("gcc-no-pie", &["-no-pie", "-fno-pie"]),
    ] {
        assert_spans(&scanned(&gcc(name, flags)), "glibc", Linkage::Dynamic);
    }
}

#[test]
fn musl_gcc_static_calls_strspn_directly() {
    let Some(path) = musl_gcc("musl", &["-static"]) else { return };
    let artifact = scanned(&path);
    assert_spans(&artifact, "musl", Linkage::Static);
    assert_eq!(artifact.libc.evidence, "__libc_start_main and __init_libc (musl)");
    assert!(artifact.digest.starts_with("sha256:") || artifact.digest.starts_with("build-id:"));
    // musl's strchr calls its __strchrnul: a call from the libc itself.
    let strchrnul = find(&artifact, "strchrnul");
    assert_eq!(strchrnul.aliases, ["__strchrnul", "strchrnul"]);
    assert!(strchrnul.callers.iter().all(|c| c.name == "strchr" && c.in_libc), "{strchrnul:#?}");
}

#[test]
fn zig_0_15_2_links_musl_and_says_zig_linked_it() {
    let Some(path) = zig_built("0.15.2", "x86_64-linux-musl", &[]) else { return };
    let artifact = scanned(&path);
    assert_spans(&artifact, "musl", Linkage::Static);
    assert!(artifact.libc.evidence.contains("linked by Zig"), "{}", artifact.libc.evidence);
    assert_eq!(find(&artifact, "strspn").aliases, ["strspn"], "no c.* alias before 0.16");
}

#[test]
fn zig_0_16_0_carries_its_own_libc_with_c_aliases() {
    let Some(path) = zig_built("0.16.0", "x86_64-linux-musl", &[]) else { return };
    let artifact = scanned(&path);
    assert_spans(&artifact, "zig", Linkage::Static);
    assert!(artifact.libc.evidence.contains("c.string."), "{}", artifact.libc.evidence);
    assert_eq!(find(&artifact, "strspn").aliases, ["c.string.strspn", "strspn"]);
    assert!(artifact.digest.starts_with("sha256:") && artifact.digest.len() == 71, "Zig writes no build ID");
}

#[test]
fn aarch64_code_is_read_for_its_calls_direct_through_the_plt_and_through_the_got() {
    if let Some(path) = zig_built("0.16.0", "aarch64-linux-musl", &[]) {
        assert_spans_on(&scanned(&path), "zig", Linkage::Static, "aarch64");
    }
    let cross = Path::new("aarch64-linux-gnu-gcc");
    for (name, flags) in [("a64-gcc", &[][..]), ("a64-gcc-no-plt", &["-fno-plt"])] {
        let Some(path) = built(name, cross, flags) else {
            eprintln!("no aarch64-linux-gnu-gcc (Debian gcc-aarch64-linux-gnu): skipping {name}");
            return;
        };
        assert_spans_on(&scanned(&path), "glibc", Linkage::Dynamic, "aarch64");
    }
    // A static glibc: its ifuncs are called through stubs, and `lengths` holds strlen's stub.
    let Some(path) = built("a64-gcc-static", cross, &["-static"]) else { return };
    let artifact = scanned(&path);
    assert_eq!((artifact.arch.as_str(), artifact.libc.name.as_str()), ("aarch64", "glibc"));
    let strspn = find(&artifact, "strspn");
    assert!(strspn.callers.iter().any(|c| c.name == "count_spans" && !c.in_libc), "{strspn:#?}");
    assert!(find(&artifact, "memcpy").callers.iter().any(|c| c.name == "copy"));
    assert!(find(&artifact, "strlen").referenced, "strlen's stub is in a table");
}

#[test]
fn another_architecture_lists_what_is_present_without_call_sites() {
    // 32-bit Arm: its code is not read.
    let Some(path) = zig_built("0.16.0", "arm-linux-musleabihf", &[]) else { return };
    let artifact = scanned(&path);
    assert_eq!((artifact.arch.as_str(), artifact.call_sites_decoded), ("arm", false));
    let strspn = find(&artifact, "strspn");
    assert_eq!((strspn.call_sites, strspn.callers.len()), (0, 0));
    assert!(artifact.uses.iter().any(|u| u.function == "strchr"), "present, so listed");
    assert!(artifact.unused.is_empty(), "unused cannot be told without decoding");
}

#[test]
fn a_stripped_static_artifact_cannot_tell() {
    let Some(path) = musl_gcc("musl-stripped", &["-static", "-s"]) else { return };
    let artifact = scanned(&path);
    assert_eq!((artifact.symbols, artifact.linkage), (false, Linkage::Static));
    assert!(artifact.uses.is_empty() && artifact.unused.is_empty());
    assert_eq!(artifact.libc.name, "unknown");
}

#[test]
fn a_stripped_dynamic_artifact_keeps_its_imports_and_calls() {
    let artifact = scanned(&gcc("gcc-stripped", &["-s"]));
    assert!(artifact.symbols, "its .dynsym names its imports");
    assert_eq!(artifact.libc.name, "glibc");
    let strspn = find(&artifact, "strspn");
    assert!(strspn.call_sites >= 1);
    let callers: Vec<&str> = strspn.callers.iter().map(|c| c.name.as_str()).collect();
    assert!(
        matches!(callers.as_slice(), [c] if c.starts_with("0x")),
        "given by its address, from .eh_frame: {callers:?}"
    );
    assert!(find(&artifact, "strlen").referenced);
    assert_eq!(artifact.unused, ["strchr"]);
}

#[test]
fn a_static_glibc_calls_strspn_through_its_ifunc_stub() {
    let Some(path) = built("gcc-static", Path::new("gcc"), &["-static"]) else {
        eprintln!("gcc -static did not link (no glibc static libraries): skipping");
        return;
    };
    let artifact = scanned(&path);
    assert_eq!((artifact.libc.name.as_str(), artifact.linkage), ("glibc", Linkage::Static));
    let strspn = find(&artifact, "strspn");
    assert!(strspn.aliases.iter().any(|a| a.starts_with("__strspn_")), "its ifunc variants: {:?}", strspn.aliases);
    let count_spans = strspn.callers.iter().find(|c| c.name == "count_spans").expect("count_spans calls strspn");
    assert!(count_spans.location.as_deref().unwrap_or_default().ends_with(STRSPN_LINE));
    assert!(!find(&artifact, "strchr").referenced, "glibc's own list of its ifunc variants is not a use");
}

#[test]
fn what_is_not_an_artifact_is_a_clear_error() {
    let scratch = TempDir::new().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = scratch.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let error = |path: &Path| {
        let scanned = scan(path, CATALOGUE, Naming::default()).unwrap_err().to_string();
        assert_eq!(identify_libc(path).unwrap_err().to_string(), scanned);
        assert!(scanned.contains(&path.display().to_string()), "{scanned}");
        scanned
    };
    let script = write("deploy.sh", b"#!/bin/sh\nexec ./server\n");
    assert!(error(&script).ends_with("is not an ELF file: it looks like a script (#!/bin/sh)"), "{}", error(&script));
    assert!(error(&write("empty", b"")).ends_with("is not an ELF file: it looks like an empty file"));
    let whole = std::fs::read(gcc("gcc", &[])).unwrap();
    let truncated = error(&write("truncated", &whole[..100]));
    assert!(truncated.contains("is a truncated or malformed ELF file: its program headers"), "{truncated}");
    assert!(truncated.contains("run past its end at 100 bytes"), "{truncated}");
    let object = scratch.path().join("spans.o");
    let status = Command::new("gcc").args(["-c", "-O2"]).arg(dir().join("spans.c")).arg("-o").arg(&object).status();
    assert!(status.unwrap().success());
    assert!(error(&object).contains("is a relocatable object (.o), not an executable or shared object"));
    assert!(error(&scratch.path().join("missing")).starts_with("cannot read "));
    let huge = std::fs::File::create(scratch.path().join("huge")).unwrap();
    huge.set_len(MAX_ARTIFACT_BYTES + 1).unwrap();
    let too_large = error(&scratch.path().join("huge"));
    assert!(too_large.ends_with(&format!(
        "is {} bytes, more than the {MAX_ARTIFACT_BYTES} bytes an artifact may have",
        MAX_ARTIFACT_BYTES + 1
    )));
}

#[test]
fn rust_musl_links_its_self_contained_musl() {
    let source = dir().join("spans.rs");
    std::fs::write(
        &source,
        "extern \"C\" { fn strspn(s: *const std::ffi::c_char, set: *const std::ffi::c_char) -> usize; }\n\
         fn main() {\n\
             let arg = std::ffi::CString::new(std::env::args().next().unwrap()).unwrap();\n\
             std::process::exit(unsafe { strspn(arg.as_ptr(), c\"./\".as_ptr()) } as i32);\n\
         }\n",
    )
    .unwrap();
    let out = dir().join("spans-rust-musl");
    let built = Command::new("rustc")
        .args(["-O", "--target", "x86_64-unknown-linux-musl", "-o"])
        .arg(&out)
        .arg(&source)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        eprintln!("rustc has no x86_64-unknown-linux-musl (rustup target add it): skipping");
        return;
    }
    let artifact = scanned(&out);
    assert_eq!((artifact.libc.name.as_str(), artifact.linkage), ("musl", Linkage::Static));
    assert!(artifact.libc.evidence.contains("Rust's self-contained musl"), "{}", artifact.libc.evidence);
    let strspn = find(&artifact, "strspn");
    assert!(strspn.callers.iter().any(|c| c.name.ends_with("main") && !c.in_libc), "{strspn:#?}");
}

#[test]
fn a_corrupted_artifact_is_an_error_or_a_scan_never_a_panic() {
    let mut paths = vec![gcc("gcc", &[]), gcc("gcc-stripped", &["-s"])];
    paths.extend(musl_gcc("musl", &["-static"]));
    // A fixed xorshift: the same corruptions each run.
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as usize
    };
    let scratch = TempDir::new().unwrap();
    let corrupted = scratch.path().join("corrupted");
    for path in &paths {
        let whole = std::fs::read(path).unwrap();
        for round in 0..300 {
            let mut bytes = whole.clone();
            if round % 2 == 0 {
                bytes.truncate(next() % whole.len());
            }
            // Most flips land in the headers, where a wrong byte misleads most.
            for _ in 0..1 + next() % 16 {
                let span = if next() % 2 == 0 { 0x800 } else { bytes.len() };
                let at = next() % span.clamp(1, bytes.len().max(1));
                if let Some(b) = bytes.get_mut(at) {
                    *b = next() as u8;
                }
            }
            std::fs::write(&corrupted, &bytes).unwrap();
            for e in [scan(&corrupted, CATALOGUE, Naming::default()).err(), identify_libc(&corrupted).err()]
                .into_iter()
                .flatten()
            {
                assert!(e.to_string().contains(&corrupted.display().to_string()), "{e}");
            }
        }
    }
}

/// An image with nothing in it, of `machine`: for what reads only an image's machine and layout.
pub(super) fn empty_image<'a>(machine: object::elf::Machine) -> elf::Image<'a> {
    elf::Image {
        machine,
        bits64: true,
        little: true,
        fixed: true,
        interpreter: None,
        needed: Vec::new(),
        build_id: None,
        sections: Vec::new(),
        functions: Vec::new(),
        symtab: false,
        dynsym: false,
        imports: Vec::new(),
        relocations: Vec::new(),
        comment: Vec::new(),
    }
}

/// Fingerprints taken from `OTHER` built by `compiler` recognise the libc's functions in `SPANS`
/// built by it and stripped: strspn by its code, called from `count_spans` (given by its address).
fn recognised_in_stripped(tag: &str, compiler: &Path, flags: &[&str], arch: &str) -> Option<Artifact> {
    let source = built_from("other.c", &format!("{tag}-other"), compiler, flags)?;
    let prints = fingerprints(&source, CATALOGUE, "-O2").unwrap();
    assert!(prints.iter().any(|p| p.function == "strspn"), "{tag}: {prints:?}");
    let unstripped = built(&format!("{tag}-spans"), compiler, flags)?;
    let stripped = dir().join(format!("{tag}-stripped"));
    // The host's strip reads x86-64 only; the cross binutils read aarch64.
    let strip = if arch == "x86_64" { "strip" } else { "aarch64-linux-gnu-strip" };
    let status = Command::new(strip).arg("-o").arg(&stripped).arg(&unstripped).status();
    if !status.is_ok_and(|s| s.success()) {
        eprintln!("{strip} did not strip {tag}: skipping it");
        return None;
    }
    let artifact = scan(&stripped, CATALOGUE, Naming { prints: &prints, symbols: None }).unwrap();
    assert_eq!((artifact.symbols, artifact.arch.as_str()), (false, arch), "{tag}");
    let strspn = find(&artifact, "strspn");
    assert_eq!(strspn.found_by, FoundBy::Code, "{tag}: {strspn:?}");
    assert!(strspn.call_sites >= 1, "{tag}: {strspn:?}");
    Some(artifact)
}

#[test]
fn a_stripped_static_build_is_read_by_fingerprints_of_another_program_of_its_toolchain() {
    if let Some(zig) = zig("0.16.0") {
        for (target, arch) in [("x86_64-linux-musl", "x86_64"), ("aarch64-linux-musl", "aarch64")] {
            let flags = ["cc", "-target", target];
            let Some(a) = recognised_in_stripped(&format!("zig16-{arch}"), &zig, &flags, arch) else { continue };
            let callers: Vec<&str> = find(&a, "strspn").callers.iter().map(|c| c.name.as_str()).collect();
            assert!(callers.iter().any(|c| c.starts_with("0x")), "{arch}: {callers:?}");
        }
    }
    if which_compiler("musl-gcc") {
        recognised_in_stripped("musl", Path::new("musl-gcc"), &["-static"], "x86_64");
    }
    // glibc's strspn is an ifunc: its resolver is recognised, and the calls go through its stub.
    recognised_in_stripped("glibc-static", Path::new("gcc"), &["-static"], "x86_64");
}

fn which_compiler(name: &str) -> bool {
    Command::new(name).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}
