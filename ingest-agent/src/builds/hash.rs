//! What the source hash of a team's workload covers: every file a configured workload's compiler
//! may read, and every file under a command workload's `sources`.

use crate::builds::sources::HASHED_HARNESS;
use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// File name endings of what C code includes besides `.h`: the headers hashed beside a source.
const HEADER_ENDINGS: &[&str] = &[".h", ".hh", ".hpp", ".hxx", ".inc", ".def"];

/// The source hash of a configured workload: the protocol (`HASHED_HARNESS`), every source, the flags and libs, every
/// file under the `include` directories (whatever its name: `#include "table.inc"` is C too), and
/// the headers beside each source (where `#include "x.h"` looks first). Each file counts with its
/// path relative to the config file's directory, so a checkout elsewhere hashes the same.
///
/// This is a superset of what the compiler reads, on purpose: a file counted needlessly costs a
/// rebuild, one missed would let the cache serve a stale binary. The compiler's own dependency
/// list (`-MD`) is exact but only known after compiling, while the cache key is needed before;
/// and it holds the system headers of each toolchain, which would make the hash the server shows
/// for one source differ between toolchains. A header reached some other way (`../elsewhere/x.h`)
/// is not counted: `cflags` refuses `-I` and its kin so that include directories go in `include`.
pub fn configured_hash(
    root: &Path,
    sources: &[PathBuf],
    include: &[PathBuf],
    cflags: &[String],
    libs: &[String],
) -> Result<String> {
    let mut others = Vec::new();
    for dir in include {
        others.extend(walk_files(dir)?);
    }
    for dir in sources.iter().filter_map(|s| s.parent()) {
        for f in std::fs::read_dir(dir).with_context(|| format!("cannot read directory {}", dir.display()))? {
            let path = f?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_file() && HEADER_ENDINGS.iter().any(|e| name.ends_with(e)) {
                others.push(path);
            }
        }
    }
    others.sort();
    others.dedup();
    let mut h = Sha256::new();
    h.update(HASHED_HARNESS);
    for part in [cflags, libs] {
        for word in part {
            h.update(word.as_bytes());
            h.update([0]);
        }
        h.update([1]);
    }
    for f in sources.iter().chain(&others) {
        let bytes = std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?;
        h.update(f.strip_prefix(root).unwrap_or(f).to_string_lossy().as_bytes());
        h.update([0]);
        h.update(Sha256::digest(bytes));
    }
    Ok(format!("sha256:{}", hex::encode(h.finalize())))
}

/// Every regular file under `dir`, at any depth, sorted.
pub fn walk_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read directory {}", dir.display()))?;
    for e in entries {
        let path = e?.path();
        if path.is_dir() {
            out.extend(walk_files(&path)?);
        } else if path.is_file() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}
