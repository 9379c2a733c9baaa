//! The commands, one file each (`run`, `measure` and `check` share one), and `main`: parse the
//! command line, run the command, exit with its status.

mod bisect;
mod build;
mod exposure;
mod flush;
mod import;
mod init_workload;
mod reproduce;
mod run;
mod search;
mod submit;
mod toolchains;

use crate::cli::{Cli, Command, ToolchainsCommand};
use crate::exit::ExitStatus;
use anyhow::Result;
use clap::Parser;

/// Parses the command line, runs the command, and returns the exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match run_command(cli) {
        Ok(status) => status.code(),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitStatus::Failed.code()
        }
    }
}

fn run_command(cli: Cli) -> Result<ExitStatus> {
    match cli.command {
        Command::Run { measure, server, spool, report } => run::run(&measure, &server, &spool, &report),
        Command::Measure { measure, out } => run::measure(&measure, &out),
        Command::Build { measure } => build::build(&measure),
        Command::Submit { files, server, spool } => submit::submit(&files, &server, &spool),
        Command::Check { measure, gate, report, token } => run::check(&measure, &gate.limits(), &report, &token),
        Command::Toolchains { action: Some(ToolchainsCommand::Fetch(fetch)), cache_dir, .. } => {
            toolchains::fetch(&fetch, cache_dir)
        }
        Command::Toolchains { action: None, found: true, cache_dir, .. } => toolchains::found(cache_dir),
        Command::Toolchains { action: None, toolchains, cache_dir, .. } => toolchains::list(&toolchains, cache_dir),
        Command::Import { import, out, server, spool } => import::import(&import, out.as_deref(), &server, &spool),
        Command::InitWorkload { name, dir, config } => init_workload::init_workload(&name, &dir, config.as_deref()),
        Command::Bisect { bisect, spool } => bisect::bisect(&bisect, &spool.open()?),
        Command::Flush { server, spool } => flush::flush(&server, &spool),
        // Input it cannot use (a function or probe it has no shapes for) exits 2, as a usage error.
        Command::Search { search } => Ok(search::search(&search).unwrap_or_else(bad_input)),
        Command::Reproduce { reproduce } => Ok(reproduce::reproduce(&reproduce).unwrap_or_else(bad_input)),
        // Input it cannot read must not read as a verdict: it exits 2, as a usage error.
        Command::Exposure { exposure } => Ok(exposure::exposure(&exposure).unwrap_or_else(bad_input)),
    }
}

fn bad_input(e: anyhow::Error) -> ExitStatus {
    eprintln!("error: {e:#}");
    ExitStatus::BadInput
}
