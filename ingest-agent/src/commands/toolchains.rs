//! `toolchains`: what was detected about each toolchain (those given, else those found on the
//! host), `toolchains --found`: what would be measured, or `toolchains fetch`: Zig releases
//! installed into the cache.

use crate::builds::discover;
use crate::builds::fetch::{check_zig_version, fetch_zig, ZIG_TARGET};
use crate::builds::toolchain::{self, DetectedToolchain};
use crate::cli::{FetchArgs, Fetchable, ToolchainArgs};
use crate::config::cache_root;
use crate::exit::ExitStatus;
use anyhow::Result;
use std::path::PathBuf;

/// `toolchains`: detects each toolchain given (else each found on the host) and prints what it is.
pub fn list(toolchains: &ToolchainArgs, cache_dir: Option<PathBuf>) -> Result<ExitStatus> {
    let root = cache_root(cache_dir)?;
    let specs = toolchains.specs(&root)?;
    let scratch = root.join("probe");
    let mut failed = 0;
    for spec in &specs {
        match toolchain::detect(spec, &scratch) {
            Ok(tc) => print_toolchain(&tc),
            Err(e) => {
                failed += 1;
                eprintln!("{e:#}");
            }
        }
    }
    Ok(ExitStatus::failed_if(failed > 0))
}

/// `toolchains --found`: the toolchains found on the host, one `--toolchain` argument per line on
/// stdout, and what was left out on stderr.
pub fn found(cache_dir: Option<PathBuf>) -> Result<ExitStatus> {
    let found = discover::on_host(&cache_root(cache_dir)?);
    for arg in &found.args {
        println!("{arg}");
    }
    for l in &found.left_out {
        eprintln!("left out: {l}");
    }
    Ok(ExitStatus::failed_if(found.args.is_empty()))
}

/// `toolchains fetch`: fetches each version into the cache (or finds it there) and prints the
/// command to compile with, one line per version on stdout.
pub fn fetch(args: &FetchArgs, cache_dir: Option<PathBuf>) -> Result<ExitStatus> {
    let cache = cache_root(args.cache_dir.clone().or(cache_dir))?;
    let Fetchable::Zig = args.tool;
    for v in &args.versions {
        check_zig_version(v)?;
    }
    for v in &args.versions {
        let (install, fresh) = fetch_zig(&cache, v)?;
        if !fresh {
            eprintln!(
                "zig {v} is already in {} (wheel {}, sha256 {}); nothing to fetch",
                install.dir.display(),
                install.record.wheel,
                install.record.sha256
            );
        }
        eprintln!("zig {v}: compile with the command below, or give --toolchain zig@{v} to the agent");
        // Alone on stdout, so the command serves as a `bisect --materialize` script.
        println!("{} cc -target {ZIG_TARGET}", install.zig().display());
    }
    Ok(ExitStatus::Ok)
}

fn print_toolchain(tc: &DetectedToolchain) {
    println!("{}", tc.spec.name);
    println!("  compiler:    {}", tc.spec.command_line());
    println!("  flags:       {}", tc.spec.flags.join(" "));
    println!("  family:      {:?}", tc.family);
    println!("  version:     {} ({})", tc.version, tc.version_source());
    println!("  target:      {}", tc.target);
    println!("  arch:        {}", tc.arch);
    if let Some(r) = &tc.runner {
        let emulated = if tc.emulated() { "; times are the emulator's: compare growth" } else { "" };
        println!("  runner:      {}{emulated}", r.describe());
    }
    println!("  libc:        {}", tc.libc);
    println!("  fingerprint: {}", &tc.fingerprint[..16]);
}
