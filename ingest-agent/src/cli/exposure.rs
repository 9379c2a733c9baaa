//! What `exposure` reads: the artifacts, the toolchain that built them (and the catalogue's
//! sweep, when its verdicts are measured here), a suppression file, the report's format, and the
//! server to read verdicts from and store the scan with.

use super::{MeasureArgs, RetryArgs, SpoolArgs, TokenArgs};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// `exposure`: which libc functions each artifact reaches that its toolchain breaks.
#[derive(Debug, Args)]
pub(crate) struct ExposureArgs {
    /// ELF executables or shared objects to scan.
    #[arg(required = true, value_name = "ARTIFACT")]
    pub(crate) artifacts: Vec<PathBuf>,
    /// The toolchain that built the artifacts (--toolchain, --config, …), and the sweep the
    /// catalogue's probes of the functions they reach are measured with, when no stored
    /// verdict serves; --workloads does not apply.
    #[command(flatten)]
    pub(crate) measure: MeasureArgs,
    /// A TOML file of accepted exposures: [[accept]] entries with function, optional caller, reason
    /// and expires (a date). A call they cover still shows, marked, and fails nothing until the
    /// entry expires.
    #[arg(long, value_name = "FILE")]
    pub(crate) suppressions: Option<PathBuf>,
    /// A file with the symbols of the artifact's code, for a stripped artifact: its unstripped
    /// twin, or a separate debug file (objcopy --only-keep-debug). Its names (and file:line, where
    /// it has debug information) name the callers. With one artifact only.
    #[arg(long, value_name = "FILE")]
    pub(crate) symbols: Option<PathBuf>,
    /// The report's format: text for a terminal, markdown for a pull request, json for machines,
    /// sarif for code scanning (GitHub's).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub(crate) format: ReportFormat,
    /// Where SARIF locations are made relative to: the checkout's root, so that code scanning
    /// links a call to its file; default the current directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub(crate) source_root: PathBuf,
    /// Measure the catalogue's verdicts here even where the cache or --server holds them.
    #[arg(long)]
    pub(crate) remeasure: bool,
    /// A slopewatch server to read the toolchain version's catalogue verdicts from, when it holds
    /// them (else they are measured here), and to store the scan with under --submit.
    #[arg(long, env = "SLOPEWATCH_SERVER")]
    pub(crate) server: Option<String>,
    #[command(flatten)]
    pub(crate) token: TokenArgs,
    /// Store each scan with the server (a token with the ingest scope): the version page lists the
    /// artifacts exposed at that version.
    #[arg(long, requires = "server")]
    pub(crate) submit: bool,
    #[command(flatten)]
    pub(crate) retry: RetryArgs,
    #[command(flatten)]
    pub(crate) spool: SpoolArgs,
}

/// How `exposure` writes its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ReportFormat {
    Text,
    Markdown,
    Json,
    Sarif,
}
