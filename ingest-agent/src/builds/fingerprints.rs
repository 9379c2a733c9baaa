//! The fingerprints of a toolchain's libc (see `artifact::fingerprint`): a small program that takes
//! the address of every catalogue function the libc declares is built statically with the
//! toolchain, its symbols kept, and each function's body is taken from it. Zig builds its libc in
//! the optimisation mode of the program, so a Zig toolchain's program is built in each mode
//! (`-O2` for ReleaseFast, `-Os` for ReleaseSmall, `-O0` for Debug); the other compilers link a
//! libc built once, and one build serves. Kept in the agent's cache by the toolchain's
//! fingerprint, beside the exposure verdicts, so a toolchain is fingerprinted once.

use crate::artifact::{self, Fingerprint};
use crate::builds::contract_gaps;
use crate::builds::contracts;
use crate::builds::toolchain::{DetectedToolchain, Family};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Changes whenever what a fingerprint holds or how it is masked does: a cache of another format
/// is taken again.
const FORMAT: u32 = 1;

/// The fingerprints of one toolchain, as the cache keeps them.
#[derive(Serialize, Deserialize)]
struct CachedPrints {
    format: u32,
    /// The catalogue's functions they were taken for.
    catalogue: Vec<String>,
    prints: Vec<Fingerprint>,
}

/// The optimisation modes a toolchain's libc is built in, by the flag that asks for each.
fn modes(tc: &DetectedToolchain) -> &'static [&'static str] {
    match tc.family {
        Family::Zig => &["-O2", "-Os", "-O0"],
        _ => &["-O2"],
    }
}

/// The fingerprints of `tc`'s libc functions, from the cache under `root` or built now.
pub fn of(tc: &DetectedToolchain, root: &Path) -> Result<Vec<Fingerprint>> {
    let catalogue = contracts::functions();
    let path = cache_path(tc, root);
    if let Ok(prints) = read(&path) {
        return Ok(prints);
    }
    let dir = root.join("fingerprints");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let scratch = tempfile::Builder::new().prefix("build-").tempdir_in(&dir)?;
    let provided = contract_gaps::provided(tc, scratch.path());
    let source = scratch.path().join("fingerprint.c");
    std::fs::write(&source, program(&provided)).with_context(|| format!("cannot write {}", source.display()))?;
    let mut prints = Vec::new();
    for mode in modes(tc) {
        let out = scratch.path().join(format!("fingerprint{mode}"));
        // Static, so the libc's code is in the binary; -g, since Zig strips a -Os build.
        let flags: Vec<String> = ["-static", "-g", mode].iter().map(|f| f.to_string()).collect();
        tc.compile(std::slice::from_ref(&source), scratch.path(), &flags, &out).map_err(|e| {
            anyhow::anyhow!("{} cannot build a static program to fingerprint its libc ({mode}): {e}", tc.spec.name)
        })?;
        prints.extend(artifact::fingerprints(&out, &catalogue, mode)?);
    }
    let prints = artifact::merge_fingerprint_modes(prints);
    write(&path, &prints);
    Ok(prints)
}

/// Keeps `prints` in the cache file at `path`. A cache that cannot be written costs the next scan
/// a build, nothing else.
pub fn write(path: &Path, prints: &[Fingerprint]) {
    let catalogue = contracts::functions().iter().map(|f| f.to_string()).collect();
    let cached = CachedPrints { format: FORMAT, catalogue, prints: prints.to_vec() };
    if let Ok(text) = serde_json::to_vec(&cached) {
        let tmp = path.with_extension("json.tmp");
        if std::fs::write(&tmp, text).is_ok() {
            std::fs::rename(&tmp, path).ok();
        }
    }
}

/// The fingerprints kept in the cache file at `path`, where it is one of this format, taken for
/// this catalogue.
pub fn read(path: &Path) -> Result<Vec<Fingerprint>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let cached: CachedPrints =
        serde_json::from_slice(&bytes).with_context(|| format!("{} is not a file of fingerprints", path.display()))?;
    let catalogue = contracts::functions();
    if cached.format != FORMAT || !cached.catalogue.iter().map(String::as_str).eq(catalogue.iter().copied()) {
        anyhow::bail!("{} holds fingerprints of another format or catalogue", path.display());
    }
    Ok(cached.prints)
}

/// Where `tc`'s fingerprints are kept.
fn cache_path(tc: &DetectedToolchain, root: &Path) -> PathBuf {
    root.join("fingerprints").join(format!("{}.json", &tc.fingerprint[..16.min(tc.fingerprint.len())]))
}

/// A program that links every function of `provided` (header, function), declared by its header.
fn program(provided: &[(&str, &str)]) -> String {
    let mut headers: Vec<&str> = provided.iter().map(|(h, _)| *h).collect();
    headers.sort_unstable();
    headers.dedup();
    let declarations: String = headers.iter().map(|h| format!("#include <{h}>\n")).collect();
    let addresses = provided.iter().map(|(_, f)| format!("(void *)&{f}"));
    linking(&format!("#define _GNU_SOURCE 1\n{declarations}"), addresses)
}

/// A C program, after `declarations`, that keeps each of `addresses` in a volatile table, so that
/// no compiler or linker drops the function it names.
pub fn linking(declarations: &str, addresses: impl IntoIterator<Item = String>) -> String {
    let table: String = addresses.into_iter().map(|a| format!("    {a},\n")).collect();
    format!(
        "{declarations}void *volatile sw_fingerprint[] = {{\n{table}    0,\n}};\n\nint main(void) {{\n    return \
         sw_fingerprint[0] == 0;\n}}\n"
    )
}
