//! The toolchains found on the host, for `run`, `measure`, `check` and `toolchains` given no
//! `--toolchain` or `--config`: the C compilers on `PATH` (gcc, clang, cc where it is neither,
//! musl-gcc) and Zig, either on `PATH` or the newest release fetched into the cache.

use super::fetch::{self, ZIG_LINEAGE, ZIG_TARGET};
use crate::config::ToolchainSpec;
use crate::host::on_path;
use anyhow::Result;
use std::path::Path;
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
    // A compiler is told by what it says it is, not by its file: through ccache every name
    // resolves to ccache itself, while `cc` is often gcc under a second name.
    let mut seen: Vec<(String, String)> = Vec::new();
    for tool in ["gcc", "clang", "cc"] {
        let Some(path) = on_path(tool) else { continue };
        let Some(identity) = identify(tool) else {
            found.left_out.push(format!("{tool} ({} does not run)", path.display()));
            continue;
        };
        if let Some(i) = seen.iter().position(|s| *s == identity) {
            let same = found.args[i].split('=').next().unwrap_or_default().to_string();
            found.left_out.push(format!("{tool} ({} is the compiler of {same})", path.display()));
            continue;
        }
        let libc = if identity.1.contains("musl") { "musl" } else { "glibc" };
        found.args.push(format!("{tool}-{libc}={tool}"));
        seen.push(identity);
    }
    if on_path("musl-gcc").is_some() {
        found.args.push("musl-gcc=musl-gcc".into());
    }
    // Zig on PATH, else the newest release fetched; the other fetched releases are named.
    let fetched = fetched_zigs(cache);
    let measured = if on_path("zig").is_some() {
        found.args.push(format!("{ZIG_LINEAGE}=zig cc -target {ZIG_TARGET}"));
        None
    } else {
        fetched.last().inspect(|newest| found.args.push(format!("zig@{newest}")))
    };
    for v in fetched.iter().filter(|v| Some(*v) != measured) {
        found.left_out.push(format!("zig {v} (fetched; measure it with --toolchain zig@{v})"));
    }
    found
}

/// What a GCC-compatible driver says it is: the first line of `--version` (without the name it
/// was called by) and the target of
/// `-dumpmachine` (`x86_64-linux-gnu`, `x86_64-alpine-linux-musl`, `armv7-linux-musleabihf`);
/// `None` when it does not run.
fn identify(tool: &str) -> Option<(String, String)> {
    let said = |arg: &str| {
        let out = Command::new(tool).arg(arg).output().ok().filter(|o| o.status.success())?;
        Some(String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or_default().trim().to_string())
    };
    // gcc names itself as it was called: `cc (Debian 12.2.0-14) 12.2.0` is `gcc (Debian …`.
    let version = said("--version")?;
    let version = version.strip_prefix(tool).map_or(version.as_str(), str::trim_start).to_string();
    Some((version, said("-dumpmachine")?))
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

/// One dot-separated part of a pre-release: numbers compare as numbers, and before words.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Number(u64),
    Word(String),
}

/// `0.16.0-dev.1234+abc` sorts by its numbers, a pre-release before its release, and pre-releases
/// by their parts as semantic versioning orders them (`dev.987` before `dev.1234`); the build after
/// `+` does not count.
fn version_key(v: &str) -> (Vec<u64>, bool, Vec<Part>) {
    let v = v.split_once('+').map_or(v, |(v, _)| v);
    let (release, pre) = v.split_once('-').map_or((v, None), |(r, p)| (r, Some(p)));
    let numbers = release.split('.').map(|n| n.parse().unwrap_or(0)).collect();
    let parts = pre
        .unwrap_or_default()
        .split('.')
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().map_or_else(|_| Part::Word(p.to_string()), Part::Number))
        .collect();
    (numbers, pre.is_none(), parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zig_releases_sort_by_number_with_pre_releases_before_their_release() {
        let mut v = vec!["0.16.0", "0.9.1", "0.16.0-dev.1234+abc", "0.15.2", "0.16.0-dev.987+def", "0.10.0"];
        v.sort_by_key(|v| version_key(v));
        assert_eq!(v, ["0.9.1", "0.10.0", "0.15.2", "0.16.0-dev.987+def", "0.16.0-dev.1234+abc", "0.16.0"]);
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
