//! The command line as clap reads it: each command with its flags and their help. What the
//! options mean (budgets, limits, the client, the spool) is worked out in `options`, the value
//! parsers are in `parse`, and each command's work is in `commands/`.

mod exposure;
mod options;
mod parse;
mod search;

pub(crate) use exposure::{ExposureArgs, ReportFormat};
pub(crate) use search::{ReproduceArgs, SearchArgs, SearchFormat, SearchMeasure};

use crate::config;
use crate::import::Format;
use clap::{Args, Parser, Subcommand, ValueEnum};
use parse::{
    one_line, parse_baseline, parse_ci_margin, parse_counter, parse_junit_path, parse_maybe_path, parse_measure,
    parse_min_r2, parse_slope, parse_unit, parse_version_from,
};
use slopewatch_core::complexity::Class;
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::verdict::NoiseRule;
use slopewatch_core::verdict::DEFAULT_MAX_SLOPE;
use slopewatch_core::wire::{Counter, Measure, SizeUnit, VersionFrom};
use std::path::PathBuf;
use std::time::Duration;

/// Measures what libc functions and SQLite cost when built with each toolchain under test, and
/// sends the runs to a slopewatch server.
#[derive(Debug, Parser)]
#[command(name = "slopewatch-agent", version)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Measure every workload with each toolchain (those given, else those found on the host) and
    /// submit one run per toolchain; runs waiting in the spool are sent first.
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
    /// Build every workload with each toolchain into the cache and measure nothing, so a later
    /// `run`, `measure` or `check` measures at once (the sweep's flags are read but unused).
    Build {
        #[command(flatten)]
        measure: MeasureArgs,
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
    /// Show what each toolchain is (compiler, version, libc, target), those given or else those
    /// found on the host; or fetch a Zig release (`toolchains fetch zig 0.15.2`).
    Toolchains {
        #[command(subcommand)]
        action: Option<ToolchainsCommand>,
        /// Print the toolchains found on this host, one --toolchain argument per line (what `run`
        /// measures when given none), without probing them.
        #[arg(long, conflicts_with_all = ["toolchains", "config", "version_from", "link_after", "runner"])]
        found: bool,
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
    /// Which libc functions each artifact calls that its toolchain breaks: the calls and their
    /// callers read from the binary, judged by the contract catalogue's verdicts for that toolchain
    /// version. Exits 1 when one is reached, 3 when it cannot tell, 2 on input it cannot read.
    Exposure {
        #[command(flatten)]
        exposure: ExposureArgs,
    },
    /// Search each function for the input shape that breaks its contract most (growth past the
    /// class allowed, a read past a bound, a wrong result), and save each break as a probe that
    /// check, run and exposure judge from then on. Exits 1 when it finds a break, 3 when a shape
    /// looked over but could not be confirmed, 0 when none, 2 on bad input.
    Search {
        #[command(flatten)]
        search: SearchArgs,
    },
    /// Write one self-contained C file that shows a probe's break standalone, for a bug report:
    /// its cost at two sizes against its contract, a read past its bound (SIGSEGV), or a wrong
    /// result. The file exits 1 when the break shows.
    Reproduce {
        #[command(flatten)]
        reproduce: ReproduceArgs,
    },
    /// Send the runs (and bisections and scans) waiting in the spool.
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
pub(crate) struct BisectArgs {
    /// The candidates, oldest first: one `VERSION=CC COMMAND` per line (`#` comments).
    #[arg(long, value_name = "FILE")]
    pub(crate) candidates: Option<PathBuf>,
    /// A shell command with `{version}` that fetches or builds that version and prints its
    /// compiler command on its last line; run only for the candidates measured.
    #[arg(long, value_name = "SCRIPT", requires = "versions")]
    pub(crate) materialize: Option<String>,
    /// The versions for --materialize, oldest first, one per line.
    #[arg(long, value_name = "FILE", requires = "materialize")]
    pub(crate) versions: Option<PathBuf>,
    /// The last version known good (default: the regression's version before it).
    #[arg(long)]
    pub(crate) good: Option<String>,
    /// The first version known bad (default: the regression's version).
    #[arg(long)]
    pub(crate) bad: Option<String>,
    /// The lineage the candidates belong to (default: the regression's).
    #[arg(long)]
    pub(crate) lineage: Option<String>,
    /// A stored regression to take the lineage, versions and workloads from, and to record the
    /// bisection on (needs --server and a token).
    #[arg(long, requires = "server")]
    pub(crate) regression: Option<i64>,
    /// The slopewatch server of --regression and --submit.
    #[arg(long, env = "SLOPEWATCH_SERVER")]
    pub(crate) server: Option<String>,
    #[command(flatten)]
    pub(crate) token: TokenArgs,
    /// Submit each measured candidate as a run of its own, so the builds show in the series.
    #[arg(long, requires = "server")]
    pub(crate) submit: bool,
    /// Comma-separated workloads to judge (default: the regression's).
    #[arg(long, value_delimiter = ',')]
    pub(crate) workloads: Option<Vec<String>>,
    /// A candidate is bad when a workload's slope is over this.
    #[arg(long, default_value_t = DEFAULT_MAX_SLOPE, value_parser = parse_slope)]
    pub(crate) max_slope: f64,
    /// A candidate is bad, too, when a workload's class is named above this: 1, log n, n, n log n,
    /// n^2 or n^3.
    #[arg(long, value_name = "CLASS", value_parser = config::parse_class)]
    pub(crate) max_class: Option<Class>,
    /// Compile flags for every candidate.
    #[arg(long, default_value = config::DEFAULT_FLAGS, allow_hyphen_values = true)]
    pub(crate) flags: String,
    /// The command that runs each candidate's binaries, for a target the host cannot run (e.g.
    /// qemu-aarch64); found by itself where qemu-ARCH is on PATH.
    #[arg(long, value_name = "COMMAND")]
    pub(crate) runner: Option<String>,
    /// A config file whose [[workloads]] can be judged too.
    #[arg(long, env = "SLOPEWATCH_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) sweep: SweepArgs,
    /// Where workload binaries are built and cached.
    #[arg(long, env = "SLOPEWATCH_CACHE_DIR")]
    pub(crate) cache_dir: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) retry: RetryArgs,
}

/// How much measuring each workload may cost, on `run`, `measure`, `check` and `bisect`.
#[derive(Debug, Clone, Args)]
pub(crate) struct SweepArgs {
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
    pub(crate) max_size: Option<u64>,
    /// What to measure: wall (the default), cpu (the measured thread's CPU time) or instructions
    /// (counted with perf where the kernel allows it, else under Valgrind); comma-separated for
    /// one run per measure, e.g. wall,instructions (one only for bisect). Default: the config
    /// file's `measure`, else wall.
    #[arg(long, value_name = "wall|cpu|instructions", value_delimiter = ',', value_parser = parse_measure)]
    pub(crate) measure: Option<Vec<Measure>>,
    /// Which counter counts --measure instructions: perf or valgrind (default: perf where the
    /// kernel allows it, else valgrind).
    #[arg(long, value_name = "perf|valgrind", value_parser = parse_counter)]
    pub(crate) counter: Option<Counter>,
}

/// How hard a delivery is tried before what it carries is left in the spool.
#[derive(Debug, Args)]
pub(crate) struct RetryArgs {
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

#[derive(Debug, Clone, Args)]
pub(crate) struct ToolchainArgs {
    /// A toolchain as NAME=COMMAND, e.g. 'zig-cc-musl=zig cc -target x86_64-linux-musl', or
    /// zig@VERSION for that Zig release's `zig cc`, fetched into the cache first if need be.
    /// Repeatable. With none given here or in --config, the toolchains found on the host: gcc,
    /// clang, cc, musl-gcc and zig on PATH, else the newest Zig release fetched into the cache.
    #[arg(long = "toolchain", value_name = "NAME=COMMAND|zig@VERSION")]
    toolchains: Vec<String>,
    /// A TOML file with [[toolchains]] entries (name, cc, and optional flags, version, libc,
    /// version_from, link_after, runner) and [[workloads]] entries (name, sources, and optional include,
    /// cflags, libs, unit, start, max, expect).
    #[arg(long, env = "SLOPEWATCH_CONFIG")]
    config: Option<PathBuf>,
    /// Which version a toolchain's lineage tracks, as NAME=compiler or NAME=libc (default: libc
    /// for a musl-gcc wrapper, compiler otherwise). Repeatable.
    #[arg(long = "version-from", value_name = "NAME=compiler|libc")]
    version_from: Vec<String>,
    /// A link argument for a toolchain, after the workload's own objects, as NAME=ARG: a libc
    /// that comes as an archive (NAME=path/libc-overlay.a), or NAME=-lfoo. Repeatable.
    #[arg(long = "link-after", value_name = "NAME=ARG")]
    link_after: Vec<String>,
    /// The command that runs a toolchain's binaries, as NAME=COMMAND, for a target the host cannot
    /// run: NAME=qemu-aarch64, or NAME='qemu-aarch64 -L /usr/aarch64-linux-gnu' for a dynamically
    /// linked one. Found by itself where qemu-ARCH is on PATH. Repeatable.
    #[arg(long = "runner", value_name = "NAME=COMMAND")]
    runner: Vec<String>,
    /// Only the toolchain of this name among those given: one of several, measured alone.
    #[arg(skip)]
    only: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct MeasureArgs {
    #[command(flatten)]
    pub(crate) toolchains: ToolchainArgs,
    /// Comma-separated workloads to run: names, globs and the groups builtin and contract, e.g.
    /// strchr,sqlite*,contract.str* (default: all: the built-in loops, the contract catalogue and
    /// the team's own).
    #[arg(long, value_delimiter = ',')]
    pub(crate) workloads: Option<Vec<String>>,
    /// A custom workload's C source (see docs/agent/workloads.md for the protocol). Repeatable.
    #[arg(long = "workload-file")]
    pub(crate) workload_files: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) sweep: SweepArgs,
    /// First size for every workload (default: each workload's own, e.g. 64K bytes, 5000 records).
    #[arg(long, value_parser = config::parse_size)]
    pub(crate) start_size: Option<u64>,
    /// Where workload binaries are built and cached (default: the user's cache directory).
    #[arg(long, env = "SLOPEWATCH_CACHE_DIR")]
    pub(crate) cache_dir: Option<PathBuf>,
    /// The found probes' file (see `search`), measured with the catalogue's probes (default:
    /// slopewatch-probes.json beside --config, else in the user's config directory).
    #[arg(long, env = "SLOPEWATCH_PROBES", value_name = "FILE")]
    pub(crate) probes: Option<PathBuf>,
    /// A slopewatch server whose team's found probes are measured too.
    #[arg(long, value_name = "URL")]
    pub(crate) probes_from: Option<String>,
    /// How many workloads to build at once, before any is measured (default: one per CPU).
    #[arg(long, env = "SLOPEWATCH_BUILD_JOBS", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) build_jobs: Option<u16>,
    /// How many Valgrind processes run at once: workloads and probes counted by instructions, and
    /// profiles (default: the host's cores, one left free on hosts with more than two, and no
    /// more than its available memory holds at 256 MiB each). Wall and CPU time are always
    /// measured one workload at a time.
    #[arg(long, env = "SLOPEWATCH_JOBS", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) jobs: Option<u16>,
    /// A lineage measured in the same invocation as the second implementation (e.g. musl-gcc):
    /// every other toolchain's run carries its medians beside each workload, which divide the
    /// host out of a cost on times on the server; `check` also attributes each workload over a
    /// limit to the toolchain (the control held) or the code (it is over too).
    #[arg(long, value_name = "LINEAGE")]
    pub(crate) control: Option<String>,
    /// Profile every workload, not only those over a limit: where its instructions go at its first
    /// size, under Valgrind (also `profile = true` in the config file).
    #[arg(long)]
    pub(crate) profile: bool,
}

/// The gate's limits and the evidence a slope must show, by the server's noise rule, to be judged
/// either way. A workload unsure on them is measured once more, then reported unsure without
/// failing the build.
#[derive(Debug, Args)]
pub(crate) struct GateArgs {
    /// Largest acceptable slope (1 is linear growth, 2 quadratic); 1.5 when --max-class is not
    /// given either.
    #[arg(long, value_parser = parse_slope)]
    max_slope: Option<f64>,
    /// Most complex acceptable class: 1, log n, n, n log n, n^2 or n^3 (O(n), nlogn, n2, O(n²) and
    /// the like are read too). An unsure class never fails the gate.
    #[arg(long, value_name = "CLASS", value_parser = config::parse_class)]
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

/// The Markdown report of `check` and `run`, the stored slopes it compares with, and the JUnit XML.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Write the slope table as Markdown to FILE, `-` for stdout (the terminal table then goes to
    /// stderr).
    #[arg(long, value_name = "FILE")]
    pub(crate) report: Option<PathBuf>,
    /// Write the verdicts as JUnit XML to FILE, for a CI system's test report: a test case per
    /// workload or probe and toolchain, failed when over its limit or contract or when it failed,
    /// skipped when not provided, not measurable or unsure. The exit status is not affected.
    #[arg(long, value_name = "FILE", value_parser = parse_junit_path)]
    pub(crate) junit: Option<PathBuf>,
    /// Append the same Markdown to this file; GitHub Actions sets GITHUB_STEP_SUMMARY to the job's
    /// summary. Empty means none.
    #[arg(long, value_name = "FILE", env = "GITHUB_STEP_SUMMARY", value_parser = parse_maybe_path)]
    pub(crate) step_summary: Option<PathBuf>,
    /// A slopewatch server to read the baseline's stored slopes from (with a token of any scope
    /// where it requires a login to read).
    #[arg(long, value_name = "URL", requires = "baseline")]
    pub(crate) baseline_server: Option<String>,
    /// The lineage and version to compare each workload's slope with, e.g. gcc-glibc@12.2.0. When
    /// it cannot be read, the report says why and leaves the change out; the exit status is not
    /// affected.
    #[arg(long, value_name = "NAME@VERSION", requires = "baseline_server", value_parser = parse_baseline)]
    pub(crate) baseline: Option<LineageVersion>,
}

#[derive(Debug, Args)]
pub(crate) struct TokenArgs {
    /// A token: `ingest` scope to send runs; any scope to read a baseline from a server that
    /// requires a login to read.
    #[arg(long, env = "SLOPEWATCH_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// A file holding the token (read when --token is not given).
    #[arg(long, env = "SLOPEWATCH_TOKEN_FILE")]
    token_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct ServerArgs {
    /// The slopewatch server, e.g. https://slopewatch.example.com.
    #[arg(long, env = "SLOPEWATCH_SERVER", required = true)]
    server: Option<String>,
    #[command(flatten)]
    pub(crate) token: TokenArgs,
    #[command(flatten)]
    retry: RetryArgs,
}

#[derive(Debug, Args)]
pub(crate) struct SpoolArgs {
    /// Where undelivered runs wait (default: the user's state directory).
    #[arg(long, env = "SLOPEWATCH_SPOOL_DIR")]
    spool_dir: Option<PathBuf>,
}

/// What `toolchains` can do besides listing.
#[derive(Debug, Subcommand)]
pub(crate) enum ToolchainsCommand {
    /// Install a toolchain release into the cache (from the Python package index's `ziglang`
    /// package, with pip), check it and print the compiler command to use.
    Fetch(FetchArgs),
}

/// Which toolchains `fetch` knows how to get.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Fetchable {
    /// Zig releases, from PyPI's `ziglang` wheels.
    Zig,
}

#[derive(Debug, Args)]
pub(crate) struct FetchArgs {
    /// The toolchain to fetch.
    #[arg(value_enum)]
    pub(crate) tool: Fetchable,
    /// Releases to fetch, e.g. 0.15.2 0.16.0.
    #[arg(required = true, value_name = "VERSION")]
    pub(crate) versions: Vec<String>,
    /// The agent's cache, where releases go under zig/VERSION (default: the user's cache directory).
    #[arg(long, env = "SLOPEWATCH_CACHE_DIR")]
    pub(crate) cache_dir: Option<PathBuf>,
}

/// What `import` reads and how it describes the toolchain.
#[derive(Debug, clap::Args)]
pub(crate) struct ImportArgs {
    /// The harness that wrote the files.
    #[arg(long, value_enum)]
    pub(crate) format: Format,
    /// Result files: Google Benchmark JSON files, criterion directories (e.g. target/criterion),
    /// or CSV files.
    #[arg(required = true, value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// The toolchain the benchmarks were built with, as NAME=COMMAND, or zig@VERSION for a Zig
    /// release fetched with `toolchains fetch zig` (fetched now if need be). It is probed as for
    /// `run` unless both --toolchain-version and --libc are given.
    #[arg(long, value_name = "NAME=COMMAND|zig@VERSION")]
    pub(crate) toolchain: String,
    /// The agent's cache, where zig@VERSION releases are (default: the user's cache directory).
    #[arg(long, env = "SLOPEWATCH_CACHE_DIR")]
    pub(crate) cache_dir: Option<PathBuf>,
    /// The toolchain's version (with --libc: nothing is probed).
    #[arg(long, value_parser = one_line)]
    pub(crate) toolchain_version: Option<String>,
    /// The libc the benchmarks linked, e.g. 'glibc 2.36' (with --toolchain-version: nothing is
    /// probed).
    #[arg(long, value_parser = one_line)]
    pub(crate) libc: Option<String>,
    /// Which version the lineage tracks: compiler or libc (default: libc for a musl-gcc wrapper,
    /// compiler otherwise).
    #[arg(long, value_name = "compiler|libc", value_parser = parse_version_from)]
    pub(crate) version_from: Option<VersionFrom>,
    /// What the sizes count: bytes, records, items or iterations.
    #[arg(long, default_value = "items", value_parser = parse_unit)]
    pub(crate) unit: SizeUnit,
}
