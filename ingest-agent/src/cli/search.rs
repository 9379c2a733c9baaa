//! What `search` and `reproduce` read: the functions or the probe, the toolchain, the budget, the
//! found probes' file, and the server a break found is submitted to.

use super::{RetryArgs, SpoolArgs, TokenArgs, ToolchainArgs};
use crate::config;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// `search`: each function's worst input shape against its contract.
#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// The functions to search (default with --all: every function the search has shapes for).
    #[arg(value_name = "FUNCTION", required_unless_present = "all")]
    pub(crate) functions: Vec<String>,
    /// Search every function the search has shapes for, within --total-budget.
    #[arg(long, conflicts_with = "functions")]
    pub(crate) all: bool,
    #[command(flatten)]
    pub(crate) toolchains: ToolchainArgs,
    /// Most time one function's search may take on one toolchain.
    #[arg(long, default_value = "60s", value_parser = config::parse_duration)]
    pub(crate) budget: Duration,
    /// Most time --all may take on one toolchain, shared among the functions.
    #[arg(long, default_value = "30m", value_parser = config::parse_duration)]
    pub(crate) total_budget: Duration,
    /// What a shape's cost is measured by: instructions (counted, with perf where the kernel
    /// allows it, else under Valgrind) or wall time. Default: instructions where they can be
    /// counted here, else wall.
    #[arg(long, value_enum)]
    pub(crate) measure: Option<SearchMeasure>,
    /// How many shapes are measured at once (default: as for check's --jobs).
    #[arg(long, env = "SLOPEWATCH_JOBS", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) jobs: Option<u16>,
    /// Where the shapes binary is built and cached.
    #[arg(long, env = "SLOPEWATCH_CACHE_DIR")]
    pub(crate) cache_dir: Option<PathBuf>,
    /// The found probes' file each break is saved to (default: slopewatch-probes.json beside
    /// --config, else in the user's config directory).
    #[arg(long, env = "SLOPEWATCH_PROBES", value_name = "FILE")]
    pub(crate) probes: Option<PathBuf>,
    /// text for a terminal, json for machines (`breaks`, each with function, axis, class,
    /// contract, shape and probe).
    #[arg(long, value_enum, default_value_t = SearchFormat::Text)]
    pub(crate) format: SearchFormat,
    /// Send the breaks found to --server (a token with the ingest scope), which serves them to
    /// every agent of the team.
    #[arg(long, requires = "server")]
    pub(crate) submit: bool,
    /// The slopewatch server of --submit.
    #[arg(long, env = "SLOPEWATCH_SERVER")]
    pub(crate) server: Option<String>,
    #[command(flatten)]
    pub(crate) token: TokenArgs,
    #[command(flatten)]
    pub(crate) retry: RetryArgs,
    #[command(flatten)]
    pub(crate) spool: SpoolArgs,
}

/// What a search measures a shape's cost by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SearchMeasure {
    Instructions,
    Wall,
}

/// How `search` writes its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SearchFormat {
    Text,
    Json,
}

/// `reproduce`: a self-contained C file that shows a probe's break.
#[derive(Debug, Args)]
pub(crate) struct ReproduceArgs {
    /// The probe: a found one (contract.FUNCTION.AXIS~SHAPE) or a hand-written one
    /// (contract.FUNCTION.AXIS) whose function the search's generators cover.
    #[arg(value_name = "PROBE")]
    pub(crate) probe: String,
    /// The toolchain the file is built and run with once here, for its head comment.
    #[command(flatten)]
    pub(crate) toolchains: ToolchainArgs,
    /// Where to write the file (default: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Where toolchains fetched as zig@VERSION are.
    #[arg(long, env = "SLOPEWATCH_CACHE_DIR")]
    pub(crate) cache_dir: Option<PathBuf>,
    /// The found probes' file, read for what a search found of the probe.
    #[arg(long, env = "SLOPEWATCH_PROBES", value_name = "FILE")]
    pub(crate) probes: Option<PathBuf>,
}
