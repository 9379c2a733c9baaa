//! The static build the README describes: `cargo build --release --target
//! x86_64-unknown-linux-musl -p slopewatch-agent` gives an ELF with no program interpreter that runs
//! and detects a toolchain. Built in the `static-check` profile, release's linkage optimised less,
//! to keep the suite quick. Skipped, with the reason on stderr, where musl-gcc or Rust's musl
//! target cannot be had.

use crate::helpers::*;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "x86_64-unknown-linux-musl";
const PT_LOAD: u32 = 1;
const PT_INTERP: u32 = 3;

fn skipped(why: &str) {
    eprintln!("SKIPPED: the static musl build of slopewatch-agent was not tested: {why}");
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Whether the active Rust toolchain has the standard library for `TARGET`.
fn target_installed() -> bool {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(out) = Command::new(rustc).args(["--print", "target-libdir", "--target", TARGET]).output() else {
        return false;
    };
    let libdir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    out.status.success()
        && std::fs::read_dir(libdir)
            .map(|entries| entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with("libstd-")))
            .unwrap_or(false)
}

/// The `p_type` of every program header of a little-endian ELF64 file.
fn segment_types(elf: &[u8]) -> Vec<u32> {
    assert!(elf.len() > 64 && elf[..4] == *b"\x7fELF", "not an ELF file");
    assert_eq!((elf[4], elf[5]), (2, 1), "not a little-endian 64-bit ELF");
    let u16_at = |at: usize| u16::from_le_bytes(elf[at..at + 2].try_into().unwrap()) as usize;
    let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap()) as usize;
    let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
    (0..phnum)
        .map(|i| {
            let at = phoff + i * phentsize;
            u32::from_le_bytes(elf[at..at + 4].try_into().unwrap())
        })
        .collect()
}

#[test]
fn the_agent_builds_as_a_static_musl_binary_that_runs() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return skipped("the static build is documented for x86_64 Linux hosts");
    }
    if which("musl-gcc").is_none() {
        return skipped("musl-gcc is not installed (Debian: apt-get install musl-tools)");
    }
    if !target_installed() {
        let added = Command::new("rustup").args(["target", "add", TARGET]).current_dir(workspace_root()).status();
        if !target_installed() {
            return skipped(&format!(
                "Rust's {TARGET} target is not installed and `rustup target add {TARGET}` did not add it ({added:?})"
            ));
        }
    }

    // A target directory of its own: the outer cargo may hold the lock on the workspace's.
    let target_dir = workspace_root().join("target").join("static-musl");
    let status = Command::new(cargo())
        .current_dir(workspace_root())
        // The README's `--release`, in the `static-check` profile that inherits its linkage and
        // optimises less: what is tested is the static linking, not the optimiser.
        .args(["build", "--profile", "static-check", "--locked", "--target", TARGET, "-p", "slopewatch-agent"])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("CC_x86_64_unknown_linux_musl", "musl-gcc")
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the static build failed");

    let binary = target_dir.join(TARGET).join("static-check/slopewatch-agent");
    let types = segment_types(&std::fs::read(&binary).unwrap());
    assert!(types.contains(&PT_LOAD), "{types:?}");
    assert!(!types.contains(&PT_INTERP), "{} names a program interpreter: it is dynamically linked", binary.display());
    if which("file").is_some() {
        let out = Command::new("file").arg(&binary).output().unwrap();
        let description = String::from_utf8_lossy(&out.stdout);
        assert!(
            description.contains("statically linked") || description.contains("static-pie linked"),
            "{description}"
        );
    }

    let out = Command::new(&binary).arg("--version").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("slopewatch-agent {}", env!("CARGO_PKG_VERSION")));

    // It does its job without a dynamic loader: detecting a toolchain compiles and runs a probe.
    let cache = tempfile::tempdir().unwrap();
    let out = run(Command::new(&binary)
        .args(["toolchains", "--toolchain", "gcc-glibc=gcc", "--cache-dir"])
        .arg(cache.path()));
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("glibc 2."), "{}", text(&out));
}
