//! `import`: turns results another harness measured into a run, sent or written like a measured
//! one.

use super::run::{show, write_runs};
use crate::builds::fetch;
use crate::builds::toolchain;
use crate::cli::{ImportArgs, ServerArgs, SpoolArgs};
use crate::config::{self, ToolchainSpec};
use crate::exit::ExitStatus;
use crate::import::read;
use crate::server::deliver::deliver_runs;
use anyhow::{Context, Result};
use slopewatch_core::verdict::DEFAULT_MAX_SLOPE;
use slopewatch_core::wire::{self, RunSubmission};
use std::path::Path;
use time::OffsetDateTime;

/// `import`: reads the files into a run, prints its table, and writes it to `out` or sends it.
pub fn import(args: &ImportArgs, out: Option<&Path>, server: &ServerArgs, spool: &SpoolArgs) -> Result<ExitStatus> {
    let runs = [imported(args)?];
    show(&runs, DEFAULT_MAX_SLOPE);
    match out {
        Some(out) => write_runs(out, &runs).map(|()| ExitStatus::Ok),
        None => deliver_runs(&server.client()?, &spool.open()?, &runs),
    }
}

/// Reads every file of `args`, describes the toolchain and this host, and returns the run, validated as
/// the server would. Skipped benchmarks are reported on stderr.
fn imported(args: &ImportArgs) -> Result<RunSubmission> {
    let imported = read(args.format, &args.files, args.unit)?;
    for warning in &imported.warnings {
        eprintln!("warning: {warning}");
    }
    let run = RunSubmission {
        run_id: uuid::Uuid::new_v4(),
        agent_version: crate::AGENT_VERSION.to_string(),
        started_at: imported.started_at.unwrap_or_else(OffsetDateTime::now_utc),
        host: crate::host::detect(),
        toolchain: described_toolchain(args)?,
        workloads: imported.workloads,
        measure: wire::Measure::Wall,
        counter: None,
    };
    run.validate().context("the imported run is invalid")?;
    eprintln!("imported {} workload(s) from {} file(s)", run.workloads.len(), args.files.len());
    Ok(run)
}

/// The toolchain as given, or probed. The agent compiled nothing, so `flags` stays empty:
/// flags that matter belong in the command.
fn described_toolchain(args: &ImportArgs) -> Result<wire::Toolchain> {
    // Only a Zig release needs the cache: an import elsewhere must not depend on $HOME.
    let given = if args.toolchain.starts_with("zig@") {
        fetch::cli_toolchain(&args.toolchain, &config::cache_root(args.cache_dir.clone())?)?
    } else {
        ToolchainSpec::parse_cli(&args.toolchain)?
    };
    let spec = ToolchainSpec { version_from: args.version_from, ..given };
    if let (Some(version), Some(libc)) = (&args.toolchain_version, &args.libc) {
        return Ok(wire::Toolchain {
            name: spec.name.clone(),
            version: version.clone(),
            libc: libc.clone(),
            target: toolchain::explicit_target(&spec.command).unwrap_or_default(),
            compiler: spec.command_line(),
            flags: String::new(),
            // Nothing was probed: short of being told, only a wrapper's name can tell.
            version_from: spec
                .version_from
                .unwrap_or_else(|| toolchain::default_version_from(&spec, toolchain::Family::Unknown, "")),
        });
    }
    let spec = ToolchainSpec { version: args.toolchain_version.clone(), libc: args.libc.clone(), ..spec };
    let scratch = tempfile::tempdir().context("cannot make a directory for the toolchain probe")?;
    let detected = toolchain::detect(&spec, scratch.path())?;
    Ok(wire::Toolchain { flags: String::new(), ..detected.wire() })
}
