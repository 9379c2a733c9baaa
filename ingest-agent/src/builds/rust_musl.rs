//! The fingerprints of Rust's own bundled musl: a Rust program for a `*-linux-musl` target links
//! the `libc.a` its toolchain ships (`lib/rustlib/TARGET/lib/self-contained/`), musl compiled by
//! Rust's builders, whose code differs from a distribution's musl-gcc build of the same functions.
//! Where the host's rustc has that target, a small program is linked against that archive with the
//! host's C compiler and the functions' bodies taken from it, as a toolchain's are.

use crate::artifact::{self, Fingerprint};
use crate::builds::toolchain::CompileError;
use crate::builds::{contracts, fingerprints};
use crate::host::on_path;
use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The target whose bundled musl is fingerprinted.
const TARGET: &str = "x86_64-unknown-linux-musl";

/// Rust's bundled musl, as a source of fingerprints.
pub struct Bundled {
    /// For people: "Rust's bundled musl (rustc 1.95.0 …)".
    pub label: String,
    pub prints: Vec<Fingerprint>,
}

/// The fingerprints of the musl the host's rustc bundles for x86-64, from the cache under `root`
/// or built now; none where rustc or its musl target is missing.
pub fn bundled(root: &Path) -> Result<Option<Bundled>> {
    let Some((version, dir)) = self_contained() else { return Ok(None) };
    let label = format!("Rust's bundled musl ({version})");
    let archive = dir.join("libc.a");
    let key = hex::encode(&Sha256::digest(format!("{version}\n{}", archive.display()).as_bytes())[..8]);
    let cache = root.join("fingerprints").join(format!("rust-musl-{key}.json"));
    if let Ok(prints) = fingerprints::read(&cache) {
        return Ok(Some(Bundled { label, prints }));
    }
    let scratch = tempfile::Builder::new().prefix("rust-musl-").tempdir_in(root)?;
    let out = scratch.path().join("fingerprint");
    let mut functions = contracts::functions();
    // A function the archive lacks fails the link by name; it is left out and the link tried again.
    for _ in 0..3 {
        let source = scratch.path().join("fingerprint.c");
        std::fs::write(&source, program(&functions))?;
        let crt = |name: &str| dir.join(name);
        let output = Command::new(compiler())
            .args(["-O2", "-static", "-nostdlib", "-fno-builtin", "-w"])
            .arg(crt("crt1.o"))
            .arg(crt("crti.o"))
            .arg(&source)
            .arg(&archive)
            .arg(crt("crtn.o"))
            .arg("-o")
            .arg(&out)
            .output()
            .context("cannot run the host's C compiler to link Rust's bundled musl")?;
        if output.status.success() {
            let prints = artifact::fingerprints(&out, &contracts::functions(), "-O2")?;
            fingerprints::write(&cache, &prints);
            return Ok(Some(Bundled { label, prints }));
        }
        let e = CompileError {
            toolchain: "rust-musl".into(),
            exit_status: output.status.code(),
            signal: None,
            output: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        let missing = contracts::undefined_symbols(&e, &functions);
        if missing.is_empty() {
            bail!("cannot link a program against {}: {e}", archive.display());
        }
        functions.retain(|f| !missing.contains(f));
    }
    bail!("cannot link a program against {}: too many functions missing", archive.display())
}

/// rustc's version and the self-contained folder of its musl target, where both are there.
fn self_contained() -> Option<(String, PathBuf)> {
    let run = |args: &[&str]| {
        let out = Command::new("rustc").args(args).output().ok().filter(|o| o.status.success())?;
        Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let sysroot = run(&["--print", "sysroot"])?;
    let dir = Path::new(&sysroot).join("lib/rustlib").join(TARGET).join("lib/self-contained");
    dir.join("libc.a").is_file().then_some(())?;
    Some((run(&["--version"])?, dir))
}

/// The host's C compiler: `cc`, else `gcc`.
fn compiler() -> &'static str {
    if on_path("cc").is_some() {
        "cc"
    } else {
        "gcc"
    }
}

/// A program that links each of `functions`, declared as arrays, so no header (and no compiler's
/// idea of the function's type) is needed.
fn program(functions: &[&str]) -> String {
    let declarations: String = functions.iter().map(|f| format!("extern char {f}[];\n")).collect();
    fingerprints::linking(&declarations, functions.iter().map(|f| f.to_string()))
}
