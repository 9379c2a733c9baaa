//! The toolchains found on the host, for `run`, `measure`, `check` and `toolchains` given no
//! `--toolchain` or `--config`: the C compilers on `PATH` (gcc, clang, cc where it is neither,
//! musl-gcc) and Zig, either on `PATH` or the newest release fetched into the cache.

use super::fetch::{self, ZIG_LINEAGE, ZIG_TARGET};
use crate::config::ToolchainSpec;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What was found: the toolchains to measure, each as `--toolchain` would give it
/// (`gcc-glibc=gcc`, `zig@0.16.0`), and what was found but left out, with why.
#[derive(Debug, Default)]
pub struct Found {
    pub args: Vec<String>,
    pub left_out: Vec<String>,
}

impl Found {
    /// The toolchains, as `--toolchain` reads them.
    pub fn specs(&self, cache: &Path) -> Result<Vec<ToolchainSpec>> {
        self.args.iter().map(|a| fetch::cli_toolchain(a, cache)).collect()
    }
}

/// The toolchains found on `PATH` and in `cache`, in a stable order: gcc, clang, cc, musl-gcc,
/// Zig. A compiler that does not run is left out, as the probe would fail it anyway.
pub fn on_host(cache: &Path) -> Found {
    let mut found = Found::default();
    let mut seen: Vec<PathBuf> = Vec::new();
    for tool in ["gcc", "clang", "cc"] {
        let Some(path) = which(tool) else { continue };
        let real = std::fs::canonicalize(&path).unwrap_or(path.clone());
        if seen.contains(&real) {
            found.left_out.push(format!("{tool} ({} is a compiler listed already)", path.display()));
            continue;
        }
        seen.push(real);
        let Some(libc) = libc_of(tool) else {
            found.left_out.push(format!("{tool} ({} does not run)", path.display()));
            continue;
        };
        found.args.push(format!("{tool}-{libc}={tool}"));
    }
    if which("musl-gcc").is_some() {
        found.args.push("musl-gcc=musl-gcc".into());
    }
    let fetched = fetched_zigs(cache);
    match (which("zig"), fetched.last()) {
        (Some(_), _) => {
            found.args.push(format!("{ZIG_LINEAGE}=zig cc -target {ZIG_TARGET}"));
            for v in &fetched {
                found.left_out.push(format!("zig {v} (fetched; measure it with --toolchain zig@{v})"));
            }
        }
        (None, Some(newest)) => {
            found.args.push(format!("zig@{newest}"));
            for v in &fetched[..fetched.len() - 1] {
                found.left_out.push(format!("zig {v} (fetched; measure it with --toolchain zig@{v})"));
            }
        }
        (None, None) => {}
    }
    found
}

/// The executable `tool` on `PATH`, as a shell would find it.
fn which(tool: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// The libc a GCC-compatible driver targets by default, from `-dumpmachine`
/// (`x86_64-linux-gnu` → glibc, `x86_64-alpine-linux-musl` → musl); `None` when it does not run.
fn libc_of(tool: &str) -> Option<&'static str> {
    let out = Command::new(tool).arg("-dumpmachine").output().ok().filter(|o| o.status.success())?;
    let triple = String::from_utf8_lossy(&out.stdout);
    Some(if triple.trim().ends_with("musl") { "musl" } else { "glibc" })
}

/// The Zig releases fetched into `cache`, oldest first by version.
fn fetched_zigs(cache: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cache.join("zig")) else { return Vec::new() };
    let mut versions: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().join("fetched.toml").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|v| fetch::check_zig_version(v).is_ok())
        .collect();
    versions.sort_by_key(|v| version_key(v));
    versions
}

/// `0.16.0-dev.12+abc` sorts by its numbers, a pre-release before its release.
fn version_key(v: &str) -> (Vec<u64>, bool, String) {
    let (release, rest) = v.split_once(['-', '+']).map_or((v, ""), |(r, rest)| (r, rest));
    let numbers = release.split('.').map(|n| n.parse().unwrap_or(0)).collect();
    (numbers, rest.is_empty() || v.contains('+') && !v.contains('-'), rest.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zig_releases_sort_by_number_with_pre_releases_before_their_release() {
        let mut v = vec!["0.16.0", "0.9.1", "0.16.0-dev.7+abc", "0.15.2", "0.10.0"];
        v.sort_by_key(|v| version_key(v));
        assert_eq!(v, ["0.9.1", "0.10.0", "0.15.2", "0.16.0-dev.7+abc", "0.16.0"]);
    }

    #[test]
    fn fetched_releases_are_those_with_a_record() {
        let cache = tempfile::tempdir().unwrap();
        for v in ["0.15.2", "0.16.0", "0.14.1"] {
            std::fs::create_dir_all(cache.path().join("zig").join(v)).unwrap();
        }
        std::fs::write(cache.path().join("zig/0.15.2/fetched.toml"), "").unwrap();
        std::fs::write(cache.path().join("zig/0.14.1/fetched.toml"), "").unwrap();
        assert_eq!(fetched_zigs(cache.path()), ["0.14.1", "0.15.2"], "0.16.0 was never finished");
    }
}
