//! The command line: parsing, validation and the eight commands.

use crate::build::cache::BuildCache;
use crate::build::error::BuildError;
use crate::build::toolchain::{self, DetectedToolchain};
use crate::build::workloads::{self, Workload};
use crate::config::{self, cache_root, user_dir, ToolchainSpec};
use crate::exit::ExitStatus;
use crate::import::ImportArgs;
use crate::measure::agreement::{self, Answers};
use crate::measure::failure;
use crate::measure::gate::{self, Limits, DEFAULT_MAX_SLOPE};
use crate::measure::{self, Budget};
use crate::output::markdown;
use crate::output::progress::Progress;
use crate::output::table;
use crate::server::baseline::{self, BaselineSpec};
use crate::server::client::{Client, RetryPolicy};
use crate::server::deliver::{self, deliver_runs};
use crate::server::regression;
use crate::server::spool::Spool;
use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use slopewatch_core::complexity::Class;
use slopewatch_core::verdict::NoiseRule;
use slopewatch_core::wire::{RunSubmission, WorkloadRun};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Measures what libc functions and SQLite cost when built with each toolchain under test, and
/// sends the runs to a slopewatch server.
#[derive(Debug, Parser)]
#[command(name = "slopewatch-agent", version)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Measure every toolchain and submit one run per toolchain (spooled runs are sent first).
    Run {
        #[command(flatten)]
        measure: MeasureArgs,
        #[command(flatten)]
        server: ServerArgs,
        #[command(flatten)]
        spool: SpoolArgs,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Measure and write the runs to a file, to submit from elsewhere.
    Measure {
        #[command(flatten)]
        measure: MeasureArgs,
        /// Where to write the run (a JSON object; an array of them for several toolchains).
        #[arg(long)]
        out: PathBuf,
    },
    /// Submit runs written by `measure`.
    Submit {
        /// Files written by `measure --out`.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        server: ServerArgs,
        #[command(flatten)]
        spool: SpoolArgs,
    },
    /// The CI gate: measure, print the slopes and classes, exit 1 if any is over a limit. No
    /// server needed.
    Check {
        #[command(flatten)]
        measure: MeasureArgs,
        #[command(flatten)]
        gate: GateArgs,
        #[command(flatten)]
        report: ReportArgs,
        #[command(flatten)]
        token: TokenArgs,
    },
    /// Show what was detected about each toolchain, or fetch one (`toolchains fetch zig 0.15.2`).
    Toolchains {
        #[command(subcommand)]
        action: Option<crate::build::fetch::ToolchainsCommand>,
        #[command(flatten)]
        toolchains: ToolchainArgs,
        /// Where workload binaries and probes are built.
        #[arg(long, env = "SLOPEWATCH_CACHE_DIR")]
        cache_dir: Option<PathBuf>,
    },
    /// Turn results of another harness (Google Benchmark, criterion, CSV) into a run and submit
    /// it like a measured one, or write it with --out.
    #[command(mut_arg("server", |a| a.required(false).required_unless_present("out")))]
    Import {
        #[command(flatten)]
        import: ImportArgs,
        /// Write the run to this file instead of sending it (the server settings are then unused).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        server: ServerArgs,
        #[command(flatten)]
        spool: SpoolArgs,
    },
    /// Write a commented C template for a workload of your own, DIR/NAME.c, and print its
    /// [[workloads]] entry (added to --config when that file has no workload of the name).
    InitWorkload {
        /// The workload's name: its series name on the server.
        name: String,
        /// Where to write NAME.c.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// A config file to add the [[workloads]] entry to (created if missing).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Find the first bad toolchain build between a good and a bad version: measure both ends,
    /// then halve the candidates, skipping builds that cannot be built or run.
    #[command(mut_arg("reps", |a| a.default_value("3")))]
    Bisect {
        #[command(flatten)]
        bisect: BisectArgs,
        #[command(flatten)]
        spool: SpoolArgs,
    },
    /// Send the runs (and bisections) waiting in the spool.
    Flush {
        #[command(flatten)]
        server: ServerArgs,
        #[command(flatten)]
        spool: SpoolArgs,
    },
}

/// `bisect`: the candidates, the range and what to judge, and where to record the answer.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("source").required(true).args(["candidates", "materialize"]))]
struct BisectArgs {
    /// The candidates, oldest first: one `VERSION=CC COMMAND` per line (`#` comments).
    #[arg(long, value_name = "FILE")]
    candidates: Option<PathBuf>,
    /// A shell command with `{version}` that fetches or builds that version and prints its
    /// compiler command on its last line; run only for the candidates measured.
    #[arg(long, value_name = "SCRIPT", requires = "versions")]
    materialize: Option<String>,
    /// The versions for --materialize, oldest first, one per line.
    #[arg(long, value_name = "FILE", requires = "materialize")]
    versions: Option<PathBuf>,
    /// The last version known good (default: the regression's version before it).
    #[arg(long)]
    good: Option<String>,
    /// The first version known bad (default: the regression's version).
    #[arg(long)]
    bad: Option<String>,
    /// The lineage the candidates belong to (default: the regression's).
    #[arg(long)]
    lineage: Option<String>,
    /// A stored regression to take the lineage, versions and workloads from, and to record the
    /// bisection on (needs --server and a token).
    #[arg(long, requires = "server")]
    regression: Option<i64>,
    /// The slopewatch server of --regression and --submit.
    #[arg(long, env = "SLOPEWATCH_SERVER")]
    server: Option<String>,
    #[command(flatten)]
    token: TokenArgs,
    /// Submit each measured candidate as a run of its own, so the builds show in the series.
    #[arg(long, requires = "server")]
    submit: bool,
    /// Comma-separated workloads to judge (default: the regression's).
    #[arg(long, value_delimiter = ',')]
    workloads: Option<Vec<String>>,
    /// A candidate is bad when a workload's slope is over this.
    #[arg(long, default_value_t = DEFAULT_MAX_SLOPE, value_parser = parse_slope)]
    max_slope: f64,
    /// A candidate is bad, too, when a workload's class is named above this: 1, log n, n, n log n,
    /// n^2 or n^3.
    #[arg(long, value_name = "CLASS", value_parser = gate::parse_class)]
    max_class: Option<Class>,
    /// Compile flags for every candidate.
    #[arg(long, default_value = config::DEFAULT_FLAGS, allow_hyphen_values = true)]
    flags: String,
    /// A config file whose [[workloads]] can be judged too.
    #[arg(long, env = "SLOPEWATCH_CONFIG")]
    config: Option<PathBuf>,
    #[command(flatten)]
    sweep: SweepArgs,
    /// Where workload binaries are built and cached.
    #[arg(long, env = "SLOPEWATCH_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
    #[command(flatten)]
    retry: RetryArgs,
}

/// How much measuring each workload may cost, on `run`, `measure`, `check` and `bisect`.
#[derive(Debug, Args)]
struct SweepArgs {
    /// Timed repetitions per size, after one warm-up.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    reps: u32,
    /// Stop doubling the size once a repetition's median takes longer than this.
    #[arg(long, default_value = "1s", value_parser = config::parse_duration)]
    size_budget: Duration,
    /// Most time one workload may take on one toolchain.
    #[arg(long, default_value = "60s", value_parser = config::parse_duration)]
    total_budget: Duration,
    /// Largest size for every workload (default: each workload's own, e.g. 4M bytes, 80000 records).
    #[arg(long, value_parser = config::parse_size)]
    max_size: Option<u64>,
}

impl SweepArgs {
    /// The budget, with `start` as every workload's first size when given.
    fn budget(&self, start: Option<u64>) -> Budget {
        Budget { reps: self.reps, per_size: self.size_budget, total: self.total_budget, start, max: self.max_size }
    }
}

/// How hard a delivery is tried before what it carries is left in the spool.
#[derive(Debug, Args)]
struct RetryArgs {
    /// Attempts per delivery before it is left in the spool.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=20))]
    attempts: u32,
    /// Wait before the first retry; it doubles with each retry, with jitter.
    #[arg(long, default_value = "500ms", value_parser = config::parse_duration)]
    retry_base: Duration,
    /// Longest one request may take.
    #[arg(long, default_value = "60s", value_parser = config::parse_duration)]
    request_timeout: Duration,
}

impl RetryArgs {
    fn policy(&self) -> RetryPolicy {
        RetryPolicy {
            attempts: self.attempts,
            base: self.retry_base,
            timeout: self.request_timeout,
            ..RetryPolicy::default()
        }
    }
}

#[derive(Debug, Args)]
struct ToolchainArgs {
    /// A toolchain as NAME=COMMAND, e.g. 'zig-cc-musl=zig cc -target x86_64-linux-musl', or
    /// zig@VERSION for that Zig release's `zig cc`, fetched into the cache first if need be.
    /// Repeatable.
    #[arg(long = "toolchain", value_name = "NAME=COMMAND|zig@VERSION")]
    toolchains: Vec<String>,
    /// A TOML file with [[toolchains]] entries (name, cc, and optional flags, version, libc,
    /// version_from) and [[workloads]] entries (name, sources, and optional include, cflags, libs,
    /// unit, start, max).
    #[arg(long, env = "SLOPEWATCH_CONFIG")]
    config: Option<PathBuf>,
    /// Which version a toolchain's lineage tracks, as NAME=compiler or NAME=libc (default: libc
    /// for a musl-gcc wrapper, compiler otherwise). Repeatable.
    #[arg(long = "version-from", value_name = "NAME=compiler|libc")]
    version_from: Vec<String>,
}

#[derive(Debug, Args)]
struct MeasureArgs {
    #[command(flatten)]
    toolchains: ToolchainArgs,
    /// Comma-separated workloads to run, built-in or the team's own, e.g. strchr,sqlite-insert
    /// (default: all).
    #[arg(long, value_delimiter = ',')]
    workloads: Option<Vec<String>>,
    /// A custom workload's C source (see the README for the protocol). Repeatable.
    #[arg(long = "workload-file")]
    workload_files: Vec<PathBuf>,
    #[command(flatten)]
    sweep: SweepArgs,
    /// First size for every workload (default: each workload's own, e.g. 64K bytes, 5000 records).
    #[arg(long, value_parser = config::parse_size)]
    start_size: Option<u64>,
    /// Where workload binaries are built and cached (default: the user's cache directory).
    #[arg(long, env = "SLOPEWATCH_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
}

/// The gate's limits and the evidence a slope must show, by the server's noise rule, to be judged
/// either way. A workload unsure on them is measured once more, then reported unsure without
/// failing the build.
#[derive(Debug, Args)]
struct GateArgs {
    /// Largest acceptable slope (1 is linear growth, 2 quadratic); 1.5 when --max-class is not
    /// given either.
    #[arg(long, value_parser = parse_slope)]
    max_slope: Option<f64>,
    /// Most complex acceptable class: 1, log n, n, n log n, n^2 or n^3 (O(n), nlogn, n2, O(n²) and
    /// the like are read too). An unsure class never fails the gate.
    #[arg(long, value_name = "CLASS", value_parser = gate::parse_class)]
    max_class: Option<Class>,
    /// Least R² of the log-log fit for a slope to be judged over or under the limit.
    #[arg(long, default_value_t = NoiseRule::default().min_r2, value_parser = parse_min_r2)]
    min_r2: f64,
    /// How far past the limit a slope's 95% interval may reach on the other side for the slope to
    /// be judged: over needs the interval's low end above the limit less this, under its high end
    /// below the limit plus this.
    #[arg(long, default_value_t = NoiseRule::default().ci_margin, value_parser = parse_ci_margin)]
    ci_margin: f64,
}

impl GateArgs {
    fn limits(&self) -> Limits {
        let max_slope = match (self.max_slope, self.max_class) {
            (None, None) => Some(DEFAULT_MAX_SLOPE),
            (slope, _) => slope,
        };
        let noise = NoiseRule { min_r2: self.min_r2, ci_margin: self.ci_margin, ..NoiseRule::default() };
        Limits { noise, max_slope, max_class: self.max_class }
    }
}

/// The Markdown report of `check` and `run`, and the stored slopes it compares with.
#[derive(Debug, Args)]
struct ReportArgs {
    /// Write the slope table as Markdown to FILE, `-` for stdout (the terminal table then goes to
    /// stderr).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Append the same Markdown to this file; GitHub Actions sets GITHUB_STEP_SUMMARY to the job's
    /// summary. Empty means none.
    #[arg(long, value_name = "FILE", env = "GITHUB_STEP_SUMMARY", value_parser = parse_maybe_path)]
    step_summary: Option<PathBuf>,
    /// A slopewatch server to read the baseline's stored slopes from (with a token of any scope
    /// where it requires a login to read).
    #[arg(long, value_name = "URL", requires = "baseline")]
    baseline_server: Option<String>,
    /// The lineage and version to compare each workload's slope with, e.g. gcc-glibc@12.2.0. When
    /// it cannot be read, the report says why and leaves the change out; the exit status is not
    /// affected.
    #[arg(long, value_name = "NAME@VERSION", requires = "baseline_server", value_parser = parse_baseline)]
    baseline: Option<BaselineSpec>,
}

#[derive(Debug, Args)]
struct TokenArgs {
    /// A token: `ingest` scope to send runs; any scope to read a baseline from a server that
    /// requires a login to read.
    #[arg(long, env = "SLOPEWATCH_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// A file holding the token (read when --token is not given).
    #[arg(long, env = "SLOPEWATCH_TOKEN_FILE")]
    token_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct ServerArgs {
    /// The slopewatch server, e.g. https://slopewatch.example.com.
    #[arg(long, env = "SLOPEWATCH_SERVER", required = true)]
    server: Option<String>,
    #[command(flatten)]
    token: TokenArgs,
    #[command(flatten)]
    retry: RetryArgs,
}

#[derive(Debug, Args)]
struct SpoolArgs {
    /// Where undelivered runs wait (default: the user's state directory).
    #[arg(long, env = "SLOPEWATCH_SPOOL_DIR")]
    spool_dir: Option<PathBuf>,
}

fn parse_slope(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 10.0 => Ok(v),
        _ => Err(format!("{s:?} is not a slope between 0 and 10")),
    }
}

fn parse_min_r2(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not an R² between 0 and 1")),
    }
}

/// A path that may be empty: an environment variable set to nothing is not a usage error.
fn parse_maybe_path(s: &str) -> Result<PathBuf, String> {
    Ok(PathBuf::from(s))
}

fn parse_baseline(s: &str) -> Result<BaselineSpec, String> {
    BaselineSpec::parse(s).map_err(|e| format!("{e:#}"))
}

fn parse_ci_margin(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a margin of 0 or more")),
    }
}

/// Parses the command line, runs the command, and returns the exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match run(cli) {
        Ok(status) => status.code(),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitStatus::Failed.code()
        }
    }
}

fn run(cli: Cli) -> Result<ExitStatus> {
    match cli.command {
        Command::Run { measure, server, spool, report } => {
            let client = server.client()?;
            let spool = spool.open()?;
            let flushed = deliver::flush(&client, &spool)?;
            let (runs, failures) = measure_all(&measure)?;
            let limits = Limits { max_slope: Some(DEFAULT_MAX_SLOPE), ..Limits::default() };
            let rows = table::rows(&runs);
            print_rows(&rows, &limits, &mut *report.terminal());
            let delivered = deliver_runs(&client, &spool, &runs)?;
            report.write("run", &runs, &rows, &limits, &server.token)?;
            Ok(flushed.worst(delivered).worst(ExitStatus::failed_if(failures > 0)))
        }
        Command::Measure { measure, out } => {
            let (runs, failures) = measure_all(&measure)?;
            show(&runs, DEFAULT_MAX_SLOPE);
            write_runs(&out, &runs)?;
            Ok(ExitStatus::failed_if(failures > 0))
        }
        Command::Submit { files, server, spool } => {
            let mut runs = Vec::new();
            for f in &files {
                runs.extend(read_runs(f)?);
            }
            let client = server.client()?;
            deliver_runs(&client, &spool.open()?, &runs)
        }
        Command::Check { measure, gate, report, token } => check(&measure, &gate.limits(), &report, &token),
        Command::Toolchains {
            action: Some(crate::build::fetch::ToolchainsCommand::Fetch(fetch)), cache_dir, ..
        } => fetch.run(&cache_root(fetch.cache_dir.clone().or(cache_dir))?),
        Command::Toolchains { action: None, toolchains, cache_dir } => {
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
        Command::Import { import, out, server, spool } => {
            let runs = [import.run()?];
            show(&runs, DEFAULT_MAX_SLOPE);
            match out {
                Some(out) => write_runs(&out, &runs).map(|()| ExitStatus::Ok),
                None => deliver_runs(&server.client()?, &spool.open()?, &runs),
            }
        }
        Command::InitWorkload { name, dir, config } => {
            let written = crate::build::template::init(&name, &dir, config.as_deref())?;
            println!("wrote {}", written.source.display());
            match &config {
                Some(c) => println!("added to {}:\n\n{}", c.display(), written.entry),
                None => println!(
                    "add to your config file (--config; sources are relative to its directory):\n\n{}",
                    written.entry
                ),
            }
            Ok(ExitStatus::Ok)
        }
        Command::Bisect { bisect, spool } => bisect_command(&bisect, &spool.open()?),
        Command::Flush { server, spool } => deliver::flush(&server.client()?, &spool.open()?),
    }
}

/// The gate: measures (a workload unsure on the limits once more), prints the table and what was
/// over or unsure, writes the report where asked, and returns 1 when a workload is over a limit or
/// failed.
fn check(measure: &MeasureArgs, limits: &Limits, report: &ReportArgs, token: &TokenArgs) -> Result<ExitStatus> {
    let measured = measure_gated(measure, limits, true)?;
    let mut rows = table::rows(&measured.runs);
    for r in &mut rows {
        r.remeasured = measured.remeasured.get(&(r.toolchain.clone(), r.workload.clone())).cloned();
    }
    print_rows(&rows, limits, &mut *report.terminal());
    let (mut over_slope, mut over_class) = (Vec::new(), Vec::new());
    for r in rows.iter().filter(|r| r.failure.is_none()) {
        if let gate::Verdict::Over { slope, class } = r.verdict(limits) {
            if slope.is_some() {
                over_slope.push(r.name());
            }
            if class.is_some() {
                over_class.push(r.name());
            }
        }
    }
    let failed: Vec<String> =
        rows.iter().filter_map(|r| r.failure.as_ref().map(|f| format!("{} ({})", r.name(), f.kind.label()))).collect();
    if let (Some(max), false) = (limits.max_slope, over_slope.is_empty()) {
        eprintln!("slope over {max}: {}", over_slope.join(", "));
    }
    if let (Some(max), false) = (limits.max_class, over_class.is_empty()) {
        eprintln!("class over {}: {}", max.label(), over_class.join(", "));
    }
    if !failed.is_empty() {
        eprintln!("failed: {}", failed.join(", "));
    }
    report.write("check", &measured.runs, &rows, limits, token)?;
    let over = !over_slope.is_empty() || !over_class.is_empty();
    Ok(ExitStatus::failed_if(measured.failures > 0 || over))
}

/// Prints the table of `run` and `measure`: slopes judged against `max_slope` by the default
/// noise rule.
fn show(runs: &[RunSubmission], max_slope: f64) {
    let limits = Limits { max_slope: Some(max_slope), ..Limits::default() };
    print_rows(&table::rows(runs), &limits, &mut std::io::stdout());
}

/// Prints the slope table, what was unsure below it, and every failure in full.
fn print_rows(rows: &[table::Row], limits: &Limits, out: &mut dyn Write) {
    let mut text = format!("{}{}", table::table(rows, limits), table::doubts(rows, limits));
    let failures = table::failures(rows);
    if !failures.is_empty() {
        text.push_str(&format!("\nfailures:\n{failures}"));
    }
    // A closed stdout (`| head`) must not stop the gate from reporting its verdict.
    out.write_all(text.as_bytes()).ok();
}

fn print_toolchain(tc: &DetectedToolchain) {
    println!("{}", tc.spec.name);
    println!("  compiler:    {}", tc.spec.command_line());
    println!("  flags:       {}", tc.spec.flags.join(" "));
    println!("  family:      {:?}", tc.family);
    println!("  version:     {} ({})", tc.version, tc.version_source());
    println!("  target:      {}", tc.target);
    println!("  libc:        {}", tc.libc);
    println!("  fingerprint: {}", &tc.fingerprint[..16]);
}

impl ToolchainArgs {
    /// The toolchains given, Zig releases of `zig@VERSION` fetched into `cache` first.
    fn specs(&self, cache: &Path) -> Result<Vec<ToolchainSpec>> {
        let mut specs = match &self.config {
            Some(path) => config::load_config(path)?.toolchains,
            None => Vec::new(),
        };
        specs.extend(crate::build::fetch::cli_toolchains(&self.toolchains, cache)?);
        if specs.is_empty() {
            bail!(
                "no toolchain given: use --toolchain NAME=COMMAND (e.g. --toolchain gcc-glibc=gcc), --toolchain \
                 zig@VERSION or --config FILE"
            );
        }
        for v in &self.version_from {
            config::apply_version_from(&mut specs, v)?;
        }
        config::check_unique(&specs)?;
        Ok(specs)
    }

    /// The `[[workloads]]` of the config file, checked.
    fn workloads(&self) -> Result<Vec<Workload>> {
        match &self.config {
            Some(path) => workloads::configured(&config::load_config(path)?.workloads, path),
            None => Ok(Vec::new()),
        }
    }
}

impl TokenArgs {
    /// The token given, read from its file where that is how it was given; `None` when neither.
    fn token(&self) -> Result<Option<String>> {
        match (&self.token, &self.token_file) {
            (Some(t), _) => Ok(Some(t.clone())),
            (None, Some(path)) => Ok(Some(
                std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read token file {}", path.display()))?
                    .trim()
                    .to_string(),
            )),
            (None, None) => Ok(None),
        }
    }
}

impl ReportArgs {
    /// Where the terminal table goes: stderr when the report takes stdout.
    fn terminal(&self) -> Box<dyn Write> {
        if self.report.as_deref() == Some(Path::new("-")) {
            Box::new(std::io::stderr())
        } else {
            Box::new(std::io::stdout())
        }
    }

    /// Writes the Markdown report to --report and appends it to the step summary, where either
    /// is given, with the baseline read first when one is asked for. A baseline that cannot be
    /// read is a warning and a line in the report; a report that cannot be written is an error.
    fn write(
        &self,
        command: &str,
        runs: &[RunSubmission],
        rows: &[table::Row],
        limits: &Limits,
        token: &TokenArgs,
    ) -> Result<()> {
        let step_summary = self.step_summary.as_deref().filter(|p| !p.as_os_str().is_empty());
        if self.report.is_none() && step_summary.is_none() {
            if self.baseline.is_some() {
                eprintln!("warning: --baseline has no effect without --report or GITHUB_STEP_SUMMARY");
            }
            return Ok(());
        }
        let baseline = self.baseline.as_ref().zip(self.baseline_server.as_deref()).map(|(spec, server)| {
            let mut workloads: Vec<String> = rows.iter().map(|r| r.workload.clone()).collect();
            workloads.sort();
            workloads.dedup();
            let fetched = token.token().and_then(|token| {
                let client = Client::reader(server, token.as_deref())?;
                baseline::fetch(&client, spec, &workloads)
            });
            fetched.map_err(|e| {
                eprintln!("warning: the report leaves out the baseline {spec}: {e:#}");
                format!("{e:#}")
            })
        });
        let md = markdown::render(&markdown::Report {
            command,
            toolchains: runs.iter().map(|r| &r.toolchain).collect(),
            rows,
            limits,
            baseline: baseline.as_ref(),
        });
        let written = match self.report.as_deref() {
            Some(p) if p == Path::new("-") => {
                std::io::stdout().write_all(md.as_bytes()).context("cannot write the report to stdout")
            }
            Some(p) => std::fs::write(p, &md).with_context(|| format!("cannot write the report to {}", p.display())),
            None => Ok(()),
        };
        let appended = match step_summary {
            Some(p) => std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .and_then(|mut f| f.write_all(format!("{md}\n").as_bytes()))
                .with_context(|| format!("cannot append the report to the step summary {}", p.display())),
            None => Ok(()),
        };
        written.and(appended)
    }
}

impl ServerArgs {
    fn client(&self) -> Result<Client> {
        let Some(token) = self.token.token()? else {
            bail!("a token is required: --token, SLOPEWATCH_TOKEN or --token-file")
        };
        // Only `import --out` leaves it unset, and it sends nothing.
        let server = self.server.as_deref().context("--server is required to send a run")?;
        Client::new(server, &token, self.retry.policy())
    }
}

impl SpoolArgs {
    fn open(&self) -> Result<Spool> {
        let dir = match &self.spool_dir {
            Some(d) => d.clone(),
            None => user_dir("XDG_STATE_HOME", ".local/state")?.join("slopewatch/spool"),
        };
        Ok(Spool::new(dir))
    }
}

/// What measuring every workload with every toolchain gave.
struct Measurements {
    /// One run per toolchain that could be detected, its failed workloads carried in it.
    runs: Vec<RunSubmission>,
    /// How many (toolchain, workload) pairs failed.
    failures: usize,
    /// The (toolchain, workload) pairs measured twice, with why the first measurement was unsure.
    remeasured: BTreeMap<(String, String), String>,
}

/// Measures every workload with every toolchain, once each, as `run` and `measure` do; returns
/// the runs and how many (toolchain, workload) pairs failed.
fn measure_all(args: &MeasureArgs) -> Result<(Vec<RunSubmission>, usize)> {
    let m = measure_gated(args, &Limits::default(), false)?;
    Ok((m.runs, m.failures))
}

/// Measures every workload with every toolchain, judged by `limits`; with `remeasure`, a workload
/// whose verdict is unsure is measured once more (same binary, same budget) and the second
/// measurement kept.
fn measure_gated(args: &MeasureArgs, limits: &Limits, remeasure: bool) -> Result<Measurements> {
    let root = cache_root(args.cache_dir.clone())?;
    let specs = args.toolchains.specs(&root)?;
    let mut catalogue = workloads::builtin();
    catalogue.extend(args.toolchains.workloads()?);
    for f in &args.workload_files {
        let w = workloads::load_custom(f)?;
        if catalogue.iter().any(|c| c.name == w.name) {
            bail!("workload {} from {} has the name of another workload", w.name, f.display());
        }
        catalogue.push(w);
    }
    let selected: Vec<Workload> = workloads::select(catalogue, args.workloads.as_deref())?;
    if let (Some(s), Some(m)) = (args.start_size, args.sweep.max_size) {
        if s > m {
            bail!("--start-size {s} is larger than --max-size {m}");
        }
    }
    let budget = args.sweep.budget(args.start_size);
    let cache = BuildCache::new(root.join("builds"));
    let host = crate::host::detect();
    let progress = Progress::new();
    let mut runs = Vec::new();
    let mut failures = 0;
    let mut remeasured = BTreeMap::new();
    let mut answers = Vec::new();
    for spec in &specs {
        progress.set_toolchain(&spec.name);
        let started_at = time::OffsetDateTime::now_utc();
        let tc = match toolchain::detect(spec, &root.join("probe")) {
            Ok(tc) => tc,
            Err(e) => {
                progress.note(&format!("{e:#}"));
                failures += selected.len();
                continue;
            }
        };
        progress.note(&format!(
            "toolchain {}: {} {} ({}), {}, {}",
            tc.spec.name,
            tc.spec.command_line(),
            tc.version,
            tc.version_source(),
            tc.libc,
            tc.target
        ));
        let mut measured = Vec::new();
        for w in &selected {
            let (run, results) = match cache.binary(&tc, w) {
                Ok(bin) => {
                    let measure = || {
                        let m = measure::measure(&bin, w, &budget, limits, &progress);
                        if m.run.failure.is_none() {
                            progress.note(&format!(
                                "{} {}: {} sizes in {:.1?}",
                                tc.spec.name,
                                w.name,
                                m.run.measurements.len(),
                                m.elapsed
                            ));
                        }
                        (m.run, m.results)
                    };
                    let (run, results) = measure();
                    match remeasure.then(|| unsure(&tc.spec.name, &run, limits)).flatten() {
                        Some(why) => {
                            progress
                                .note(&format!("{} {}: unsure ({why}); measuring it once more", tc.spec.name, w.name));
                            remeasured.insert((tc.spec.name.clone(), w.name.clone()), why);
                            measure()
                        }
                        None => (run, results),
                    }
                }
                Err(BuildError::Compiler(e)) => (measure::unbuilt(w, failure::build_failed(&e)), BTreeMap::new()),
                Err(e @ BuildError::Cache(_)) => {
                    failures += 1;
                    progress.note(&format!("{} {}: {e}", tc.spec.name, w.name));
                    continue;
                }
            };
            if let Some(f) = &run.failure {
                failures += 1;
                progress.note(&format!("{} {}: ✗ {}", tc.spec.name, w.name, table::failure_summary(f, w.unit)));
            }
            answers.push(Answers {
                toolchain: tc.spec.name.clone(),
                workload: w.name.clone(),
                failed: run.failure.is_some(),
                by_size: results,
            });
            measured.push(run);
        }
        let run = RunSubmission {
            run_id: uuid::Uuid::new_v4(),
            agent_version: crate::AGENT_VERSION.to_string(),
            started_at,
            host: host.clone(),
            toolchain: tc.wire(),
            workloads: measured,
        };
        run.validate().with_context(|| format!("the run for toolchain {} is invalid", spec.name))?;
        runs.push(run);
    }
    for d in agreement::disagreements(&answers) {
        let mut of_toolchain =
            runs.iter_mut().filter(|r| r.toolchain.name == d.toolchain).flat_map(|r| r.workloads.iter_mut());
        if let Some(run) = of_toolchain.find(|w| w.name == d.workload) {
            failures += 1;
            progress.note(&format!(
                "{} {}: ✗ {}",
                d.toolchain,
                d.workload,
                table::failure_summary(&d.failure, run.size_unit)
            ));
            run.failure = Some(d.failure);
        }
    }
    drop(progress);
    if runs.is_empty() {
        bail!("nothing was measured");
    }
    Ok(Measurements { runs, failures, remeasured })
}

/// Why a measured workload's verdict is unsure; `None` when it is not, or when it failed.
fn unsure(toolchain: &str, run: &WorkloadRun, limits: &Limits) -> Option<String> {
    match table::row(toolchain, run).verdict(limits) {
        gate::Verdict::Unsure(why) if run.failure.is_none() => Some(why),
        _ => None,
    }
}

/// Writes runs as `measure --out` does: one JSON object, or an array of them for several.
fn write_runs(out: &Path, runs: &[RunSubmission]) -> Result<()> {
    let json = if runs.len() == 1 { serde_json::to_vec_pretty(&runs[0])? } else { serde_json::to_vec_pretty(&runs)? };
    std::fs::write(out, json).with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!("wrote {} run(s) to {}", runs.len(), out.display());
    Ok(())
}

/// Reads a file written by `measure`: one run, or an array of runs. Each is validated.
fn read_runs(path: &Path) -> Result<Vec<RunSubmission>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).with_context(|| format!("{} is not JSON", path.display()))?;
    let items = match value {
        serde_json::Value::Array(items) => items,
        one => vec![one],
    };
    items
        .iter()
        .map(|v| {
            RunSubmission::from_json(&serde_json::to_vec(v)?)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("{} holds an invalid run", path.display()))
        })
        .collect()
}

/// `bisect`: works out the range (from the flags, or the stored regression), bisects it, prints
/// each step and where the growth starts, and records the answer on the regression.
fn bisect_command(args: &BisectArgs, spool: &Spool) -> Result<ExitStatus> {
    use crate::bisect::{self, Candidates, Plan};
    let token = args.token.token()?;
    let client = match &args.server {
        Some(server) => {
            let token =
                token.as_deref().context("--server needs a token: give --token, SLOPEWATCH_TOKEN or --token-file")?;
            Some(Client::new(server, token, args.retry.policy())?)
        }
        None => None,
    };
    // The regression is read only for what the flags leave out, so a bisection given in full
    // still runs, and is spooled, while the server is down.
    let given_in_full = args.lineage.is_some() && args.good.is_some() && args.bad.is_some() && args.workloads.is_some();
    let facts = match (args.regression, &client) {
        (Some(id), Some(client)) if !given_in_full => Some(regression::read(client, id)?),
        _ => None,
    };
    let pick = |given: &Option<String>, stored: Option<&String>, flag: &str| -> Result<String> {
        given
            .clone()
            .or_else(|| stored.cloned())
            .with_context(|| format!("give {flag}, or --regression to take it from"))
    };
    let lineage = pick(&args.lineage, facts.as_ref().map(|f| &f.lineage), "--lineage")?;
    config::check_lineage_name(&lineage)?;
    let good = pick(&args.good, facts.as_ref().map(|f| &f.last_good), "--good")?;
    let bad = pick(&args.bad, facts.as_ref().map(|f| &f.first_bad), "--bad")?;
    let mut catalogue = workloads::builtin();
    if let Some(path) = &args.config {
        catalogue.extend(workloads::configured(&config::load_config(path)?.workloads, path)?);
    }
    let names = match (&args.workloads, &facts) {
        (Some(names), _) => names.clone(),
        (None, Some(f)) if !f.workloads.is_empty() => f.workloads.clone(),
        _ => bail!("give --workloads, e.g. --workloads strchr"),
    };
    let selected = workloads::select(catalogue, Some(&names))?;
    let candidates = match (&args.candidates, &args.materialize, &args.versions) {
        (Some(file), _, _) => Candidates::Listed(bisect::read_candidates(file)?),
        (None, Some(script), Some(versions)) => {
            if !script.contains("{version}") {
                bail!("--materialize must contain {{version}}, where the version to fetch or build goes");
            }
            Candidates::Materialized { script: script.clone(), versions: bisect::read_versions(versions)? }
        }
        _ => bail!("give --candidates FILE, or --materialize SCRIPT with --versions FILE"),
    };
    let root = cache_root(args.cache_dir.clone())?;
    let cache = BuildCache::new(root.join("builds"));
    let plan = Plan {
        lineage,
        workloads: selected,
        good,
        bad,
        max_slope: args.max_slope,
        max_class: args.max_class,
        budget: args.sweep.budget(None),
        cache: &cache,
        scratch: root.join("probe"),
        flags: config::split_words(&args.flags).context("--flags")?,
    };
    let mut status = ExitStatus::Ok;
    if let Some(client) = &client {
        status = status.worst(deliver::flush(client, spool)?);
    }
    let mut n = 0;
    let record = bisect::bisect(&plan, &candidates, |step, run| {
        n += 1;
        eprintln!("{}", bisect::step_line(n, step));
        let (Some(client), Some(run), true) = (&client, run, args.submit) else { return None };
        match deliver_runs(client, spool, std::slice::from_ref(run)) {
            Ok(delivered) => {
                status = status.worst(delivered);
                Some(run.run_id)
            }
            Err(e) => {
                eprintln!("error: the run of {} was not submitted: {e:#}", step.version);
                status = ExitStatus::Failed;
                None
            }
        }
    })?;
    println!("{}", bisect::summary(&record));
    if let (Some(client), Some(id)) = (&client, args.regression) {
        status = status.worst(deliver::deliver_bisection(client, spool, id, &record)?);
    }
    let found = record.outcome == slopewatch_core::bisection::Outcome::Found;
    Ok(status.worst(ExitStatus::failed_if(!found)))
}
