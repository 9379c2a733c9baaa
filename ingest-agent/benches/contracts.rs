//! The contract catalogue's time to a verdict: every probe swept with the agent's own sweep
//! (`measure::measure`, the default budget and limits) and confirmed as `measure/engine.rs` confirms it (a
//! probe unsure or over its contract is measured once more, the second measurement kept), per
//! toolchain, with the catalogue binary built first and its build timed apart. Prints the verdict
//! time beside the targets, the counts of held / over / crashed / wrong / unsure / not
//! provided, and the slowest probes.
//!
//! `cargo bench -p slopewatch-agent --bench contracts -- [--toolchain NAME=COMMAND|zig@VERSION]…
//! [--probes GLOB,…] [--builtins auto|all|none] [--rounds N] [--slowest N] [--cache-dir DIR]
//! [--verbose]`
//!
//! Without `--toolchain`: `gcc-glibc=gcc` and `zig-0.16.0=/opt/slopewatch-zig/0.16.0/ziglang/zig
//! cc -target x86_64-linux-musl`. `--builtins auto` (the default) also measures the built-in
//! loops on Zig 0.16.0, whose target covers them (built-ins plus catalogue ≤ 15 s), the way
//! `check` does (an unsure loop measured once more). Builds go to a fresh temporary cache unless
//! `--cache-dir` names one to reuse (then a cached build reads as 0.00 s). Beside the verdict
//! time it prints the floor (one launch of the catalogue at a size whose work costs nothing) times
//! the sizes run, and the cores other processes kept busy meanwhile, so a loaded run shows as one.

use slopewatch_agent::builds::cache::BuildCache;
use slopewatch_agent::builds::toolchain::{self, CompileError, DetectedToolchain, Family};
use slopewatch_agent::builds::workloads::{self, Workload};
use slopewatch_agent::builds::{error::BuildError, fetch};
use slopewatch_agent::config;
use slopewatch_agent::measure::agreement::{self, Answers};
use slopewatch_agent::measure::judged::Judged;
use slopewatch_agent::measure::process::Exe;
use slopewatch_agent::measure::{self, failure, Budget, Watch};
use slopewatch_agent::output::{contracts, table};
use slopewatch_core::probe::ProbeState;
use slopewatch_core::verdict::{Decision, Limits};
use slopewatch_core::wire::{FailureKind, Metric, SizeUnit, WorkloadRun};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const GCC: &str = "gcc-glibc=gcc";
const ZIG_0_16: &str = "zig-0.16.0=/opt/slopewatch-zig/0.16.0/ziglang/zig cc -target x86_64-linux-musl";

/// The targets, on the 2-core machine with nothing else running.
const HOLDING_LIBC: Duration = Duration::from_secs(5);
const ZIG_CATALOGUE: Duration = Duration::from_secs(10);
const ZIG_EVERYTHING: Duration = Duration::from_secs(15);

#[derive(Clone, Copy, PartialEq)]
enum Builtins {
    Auto,
    All,
    None,
}

struct Args {
    toolchains: Vec<String>,
    probes: Option<Vec<String>>,
    builtins: Builtins,
    rounds: usize,
    slowest: usize,
    cache_dir: Option<PathBuf>,
    verbose: bool,
}

fn parse_args() -> Args {
    let mut args = Args {
        toolchains: Vec::new(),
        probes: None,
        builtins: Builtins::Auto,
        rounds: 1,
        slowest: 10,
        cache_dir: None,
        verbose: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--toolchain" => args.toolchains.push(value()),
            "--probes" => args.probes = Some(value().split(',').map(String::from).collect()),
            "--builtins" => {
                args.builtins = match value().as_str() {
                    "auto" => Builtins::Auto,
                    "all" => Builtins::All,
                    "none" => Builtins::None,
                    other => panic!("--builtins takes auto, all or none, not {other:?}"),
                }
            }
            "--rounds" => args.rounds = value().parse().expect("--rounds takes a number"),
            "--slowest" => args.slowest = value().parse().expect("--slowest takes a number"),
            "--cache-dir" => args.cache_dir = Some(value().into()),
            "--verbose" => args.verbose = true,
            "--bench" => {}
            other => panic!("unknown flag {other}"),
        }
    }
    assert!(args.rounds >= 1, "--rounds takes a positive number");
    if args.toolchains.is_empty() {
        args.toolchains.push(GCC.into());
        if Path::new(ZIG_0_16.split_once('=').unwrap().1.split(' ').next().unwrap()).is_file() {
            args.toolchains.push(ZIG_0_16.into());
        } else {
            eprintln!("no Zig 0.16.0 at /opt/slopewatch-zig/0.16.0: gcc only (give it with --toolchain)");
        }
    }
    args
}

/// Quiet, or one line per size with `--verbose`.
struct Quiet(bool);

impl Watch for Quiet {
    fn size_started(&self, _: &str, _: u64, _: SizeUnit) {}
    fn size_done(&self, workload: &str, size: u64, _: SizeUnit, median_ns: f64) {
        if self.0 {
            eprintln!("  {workload} {size}: {:.0} ns", median_ns);
        }
    }
    fn note(&self, msg: &str) {
        if self.0 {
            eprintln!("{msg}");
        }
    }
}

/// A toolchain detected, its binaries built.
struct Prepared {
    tc: DetectedToolchain,
    detect: Duration,
    catalogue: PathBuf,
    build: Duration,
    /// The built-in loops and their binaries (a loop that fails to build is measured as unbuilt).
    builtins: Vec<(Workload, Result<PathBuf, CompileError>)>,
    builtins_build: Duration,
}

impl Prepared {
    fn is_zig_0_16(&self) -> bool {
        self.tc.family == Family::Zig && self.tc.version == "0.16.0"
    }

    fn catalogue_target(&self) -> Duration {
        if self.is_zig_0_16() {
            ZIG_CATALOGUE
        } else {
            HOLDING_LIBC
        }
    }
}

/// One workload measured to its verdict on one toolchain.
struct Timed {
    workload: String,
    run: WorkloadRun,
    results: BTreeMap<u64, String>,
    /// Wall time to the verdict: both measurements when it was measured twice.
    time: Duration,
    remeasured: bool,
    /// Sizes run, both measurements counted: each a process of its own.
    sizes: usize,
}

/// One toolchain's round: its probes, its loops, and the wall time of each.
struct Round {
    probes: Vec<Timed>,
    catalogue: Duration,
    builtins: Vec<Timed>,
    builtins_time: Duration,
    /// The cores other processes kept busy while the catalogue was measured, on average.
    others: f64,
}

/// The host's busy CPU time and this process's own (its children's included), in seconds.
#[derive(Clone, Copy)]
struct Cpu {
    busy: f64,
    own: f64,
    at: Instant,
}

impl Cpu {
    fn now() -> Cpu {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        let busy = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| {
                let ticks: Vec<f64> =
                    s.lines().next()?.split_whitespace().skip(1).filter_map(|t| t.parse().ok()).collect();
                // user nice system idle iowait irq softirq steal: all but idle and iowait.
                Some(ticks.iter().take(8).enumerate().filter(|(i, _)| *i != 3 && *i != 4).map(|(_, t)| t).sum::<f64>())
            })
            .unwrap_or(f64::NAN)
            / hz;
        let usage = |who| {
            // SAFETY: an all-zero rusage is valid, and `u` is writable and outlives the call.
            let mut u: libc::rusage = unsafe { std::mem::zeroed() };
            unsafe { libc::getrusage(who, &mut u) };
            let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
            t(u.ru_utime) + t(u.ru_stime)
        };
        Cpu { busy, own: usage(libc::RUSAGE_SELF) + usage(libc::RUSAGE_CHILDREN), at: Instant::now() }
    }

    /// The cores others kept busy since `self`, on average.
    fn others_since(&self) -> f64 {
        let now = Cpu::now();
        ((now.busy - self.busy) - (now.own - self.own)).max(0.0) / secs(now.at - self.at).max(1e-9)
    }
}

/// Whether `measure/engine.rs` would measure `run` once more under `check`: unsure, or (under a contract)
/// over it, and neither failed nor not provided.
fn worth_again(toolchain: &str, run: &WorkloadRun, limits: &Limits) -> bool {
    if run.failure.is_some() || run.not_provided {
        return false;
    }
    match Judged::new(toolchain, Metric::Wall, run, limits).decision {
        Decision::Unsure(_) => true,
        Decision::Over(breach) => breach.contract.is_some(),
        Decision::Under => false,
    }
}

fn to_verdict(name: &str, binary: &Path, w: &Workload, budget: &Budget, limits: &Limits, watch: &Quiet) -> Timed {
    let began = Instant::now();
    let mut m = measure::measure(Exe::native(binary), w, budget, limits, Metric::Wall, watch);
    let mut sizes = m.run.measurements.len();
    let remeasured = worth_again(name, &m.run, limits);
    if remeasured {
        m = measure::measure(Exe::native(binary), w, budget, limits, Metric::Wall, watch);
        sizes += m.run.measurements.len();
    }
    let time = began.elapsed();
    if watch.0 {
        eprintln!("{name} {}: {} ({:.2} s{})", w.name, cell_text(name, &m.run, limits), secs(time), again(remeasured));
    }
    Timed { workload: w.name.clone(), run: m.run, results: m.results, time, remeasured, sizes }
}

fn again(remeasured: bool) -> &'static str {
    if remeasured {
        ", measured twice"
    } else {
        ""
    }
}

fn prepare(spec: &config::ToolchainSpec, root: &Path, builtins: bool) -> Result<Prepared, String> {
    let began = Instant::now();
    let tc = toolchain::detect(spec, &root.join("probe")).map_err(|e| format!("{e:#}"))?;
    let detect = began.elapsed();
    let cache = BuildCache::new(root.join("builds"));
    let probe = workloads::probes().remove(0);
    let began = Instant::now();
    let catalogue = cache.binary(&tc, &probe).map_err(|e| format!("the catalogue did not build: {e}"))?;
    let build = began.elapsed();
    let began = Instant::now();
    let builtins: Vec<_> = if builtins {
        workloads::builtin()
            .into_iter()
            .map(|w| match cache.binary(&tc, &w) {
                Ok(bin) => Ok((w, Ok(bin))),
                Err(BuildError::Compiler(e)) => Ok((w, Err(e))),
                Err(e) => Err(format!("{} did not build: {e}", w.name)),
            })
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    Ok(Prepared { tc, detect, catalogue, build, builtins, builtins_build: began.elapsed() })
}

/// Launches of the catalogue a floor is the median of, spread over the rounds.
const FLOOR_LAUNCHES: usize = 60;

/// What one size costs when its work costs nothing: `n` wall times of the catalogue run as a size
/// of a sweep is (warm-up and `reps` repetitions of `contract.strlen.length` at its first size),
/// spawned and waited for; the sweep adds its reader threads. The floor is their median.
fn floor(binary: &Path, reps: u32, n: usize) -> Vec<Duration> {
    let w = workloads::probes().into_iter().find(|w| w.name == "contract.strlen.length").expect("strlen probe");
    (0..n)
        .map(|_| {
            let began = Instant::now();
            let out = std::process::Command::new(binary)
                .arg(w.start.to_string())
                .arg(reps.to_string())
                .env("SLOPEWATCH_PROBE", &w.name)
                .output()
                .expect("the catalogue does not start");
            assert!(out.status.success(), "contract.strlen.length failed: {}", String::from_utf8_lossy(&out.stderr));
            began.elapsed()
        })
        .collect()
}

fn measure_round(p: &Prepared, probes: &[Workload], budget: &Budget, watch: &Quiet) -> Round {
    let name = &p.tc.spec.name;
    let limits = Limits::default();
    let cpu = Cpu::now();
    let began = Instant::now();
    let timed: Vec<Timed> = probes.iter().map(|w| to_verdict(name, &p.catalogue, w, budget, &limits, watch)).collect();
    let catalogue = began.elapsed();
    let others = cpu.others_since();
    let began = Instant::now();
    let builtins = p
        .builtins
        .iter()
        .map(|(w, bin)| match bin {
            Ok(bin) => to_verdict(name, bin, w, budget, &limits, watch),
            Err(e) => Timed {
                workload: w.name.clone(),
                run: measure::unbuilt(w, failure::build_failed(e)),
                results: BTreeMap::new(),
                time: Duration::ZERO,
                remeasured: false,
                sizes: 0,
            },
        })
        .collect();
    Round { probes: timed, catalogue, builtins, builtins_time: began.elapsed(), others }
}

/// The toolchains' results compared, as `measure/engine.rs` compares them: a toolchain whose probe answers
/// otherwise than the others' gets a `wrong_result`.
fn cross_check(rounds: &mut [(&str, &mut Round)]) {
    let answers: Vec<Answers> = rounds
        .iter()
        .flat_map(|(name, r)| {
            r.probes.iter().chain(&r.builtins).map(move |t| Answers {
                toolchain: name.to_string(),
                workload: t.workload.clone(),
                unit: t.run.size_unit,
                failed: t.run.failure.is_some(),
                by_size: t.results.clone(),
            })
        })
        .collect();
    for d in agreement::disagreements(&answers) {
        for (name, r) in rounds.iter_mut() {
            if *name == d.toolchain {
                let all = r.probes.iter_mut().chain(r.builtins.iter_mut());
                for t in all.filter(|t| t.workload == d.workload) {
                    t.run.failure = Some(d.failure.clone());
                }
            }
        }
    }
}

#[derive(Default, Clone, Copy)]
struct Counts {
    held: usize,
    over: usize,
    crashed: usize,
    wrong: usize,
    unsure: usize,
    not_provided: usize,
    /// Timed out, could not set up, or did not build.
    other: usize,
    remeasured: usize,
}

fn cell(toolchain: &str, run: &WorkloadRun, limits: &Limits) -> ProbeState {
    Judged::new(toolchain, Metric::Wall, run, limits).probe_state()
}

fn cell_text(toolchain: &str, run: &WorkloadRun, limits: &Limits) -> String {
    let judged = Judged::new(toolchain, Metric::Wall, run, limits);
    contracts::cell(judged.probe_state(), judged.class())
}

fn counts(toolchain: &str, timed: &[Timed]) -> Counts {
    let limits = Limits::default();
    let mut c = Counts::default();
    for t in timed {
        match cell(toolchain, &t.run, &limits) {
            ProbeState::Held => c.held += 1,
            ProbeState::Over => c.over += 1,
            ProbeState::Unsure => c.unsure += 1,
            ProbeState::NotProvided => c.not_provided += 1,
            ProbeState::Failed(FailureKind::Crashed) => c.crashed += 1,
            ProbeState::Failed(FailureKind::WrongResult) => c.wrong += 1,
            // Wall time runs every probe as the CPU does.
            ProbeState::Failed(_) | ProbeState::Unmeasurable => c.other += 1,
        }
        c.remeasured += usize::from(t.remeasured);
    }
    c
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    match xs.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2,
    }
}

/// `4.12 s`, or with several rounds `4.12 s (3.90–4.40)`: the median and the range.
fn spread(xs: &[Duration]) -> String {
    let m = median(xs.to_vec());
    match (xs.iter().min(), xs.iter().max()) {
        (Some(lo), Some(hi)) if xs.len() > 1 => format!("{:.2} s ({:.2}–{:.2})", secs(m), secs(*lo), secs(*hi)),
        _ => format!("{:.2} s", secs(m)),
    }
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn main() {
    let args = parse_args();
    let agent_cache = config::cache_root(None).expect("no cache directory for zig@VERSION");
    let specs: Vec<config::ToolchainSpec> = args
        .toolchains
        .iter()
        .map(|t| fetch::cli_toolchain(t, &agent_cache).unwrap_or_else(|e| panic!("--toolchain {t}: {e:#}")))
        .collect();
    config::check_unique(&specs).unwrap_or_else(|e| panic!("{e:#}"));
    let tmp = tempfile::tempdir().expect("no temporary directory");
    let root = args.cache_dir.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let probes = workloads::select(workloads::probes(), args.probes.as_deref()).unwrap_or_else(|e| panic!("{e:#}"));
    let whole = probes.len() == workloads::probes().len();
    let budget = Budget::default();
    let watch = Quiet(args.verbose);
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());

    println!(
        "contract catalogue: {} of {} probes, {} toolchain(s), {} round(s); {cores} cores, load {} at the start",
        probes.len(),
        workloads::probes().len(),
        specs.len(),
        args.rounds,
        load()
    );
    println!("builds in {}{}", root.display(), if args.cache_dir.is_some() { " (reused)" } else { " (fresh)" });
    println!();

    let mut prepared = Vec::new();
    for spec in &specs {
        let with_builtins = match args.builtins {
            Builtins::All => true,
            Builtins::None => false,
            // Decided once detected: Zig 0.16.0 only.
            Builtins::Auto => true,
        };
        match prepare(spec, &root, with_builtins) {
            Ok(mut p) => {
                if args.builtins == Builtins::Auto && !p.is_zig_0_16() {
                    p.builtins.clear();
                }
                prepared.push(p);
            }
            Err(e) => println!("{}: skipped: {e}", spec.name),
        }
    }
    if prepared.is_empty() {
        println!("nothing to measure");
        return;
    }
    println!(
        "{:<14} {:<44} {:>8} {:>17} {:>17}",
        "toolchain", "compiler, libc", "detect", "build catalogue", "build built-ins"
    );
    for p in &prepared {
        let builtins = if p.builtins.is_empty() { "-".to_string() } else { format!("{:.2} s", secs(p.builtins_build)) };
        let what =
            format!("{} {}, {}", p.tc.spec.command_line().split(' ').next().unwrap_or(""), p.tc.version, p.tc.libc);
        let what = what.rsplit('/').next().unwrap_or(&what).to_string();
        println!(
            "{:<14} {:<44} {:>6.2} s {:>15.2} s {:>17}",
            p.tc.spec.name,
            what,
            secs(p.detect),
            secs(p.build),
            builtins
        );
    }
    println!();

    // rounds[r][t]: round r of toolchain t, toolchains interleaved within each round. Each round
    // begins with launches for the floor, so that a busy moment spoils only part of it.
    let mut launches: Vec<Vec<Duration>> = vec![Vec::new(); prepared.len()];
    let mut rounds: Vec<Vec<Round>> = Vec::new();
    for r in 0..args.rounds {
        for (t, p) in prepared.iter().enumerate() {
            launches[t].extend(floor(&p.catalogue, budget.reps, FLOOR_LAUNCHES.div_ceil(args.rounds)));
        }
        let mut this: Vec<Round> = prepared
            .iter()
            .map(|p| {
                let round = measure_round(p, &probes, &budget, &watch);
                eprintln!(
                    "round {} {}: catalogue {:.2} s (others kept {:.2} cores busy){}; load {}",
                    r + 1,
                    p.tc.spec.name,
                    secs(round.catalogue),
                    round.others,
                    if p.builtins.is_empty() {
                        String::new()
                    } else {
                        format!(", built-ins {:.2} s", secs(round.builtins_time))
                    },
                    load()
                );
                round
            })
            .collect();
        let mut named: Vec<(&str, &mut Round)> =
            prepared.iter().map(|p| p.tc.spec.name.as_str()).zip(this.iter_mut()).collect();
        cross_check(&mut named);
        rounds.push(this);
    }
    let floors: Vec<Duration> = launches.into_iter().map(median).collect();
    println!("load at the end: {}", load());
    println!();
    for (p, f) in prepared.iter().zip(&floors) {
        println!(
            "floor on {}: {:.2} ms a size (contract.strlen.length at its first size, {} reps, median of {} \
             launches over the rounds)",
            p.tc.spec.name,
            secs(*f) * 1e3,
            budget.reps,
            FLOOR_LAUNCHES.div_ceil(args.rounds) * args.rounds
        );
    }
    println!();

    let scope = if whole { "catalogue".to_string() } else { format!("{} probes", probes.len()) };
    println!(
        "{:<14} {:<24} {:>24} {:>8} {:>7} {:>10} {:>9} {:>9} {:>16} {:>8}",
        "toolchain",
        "verdict of",
        "time",
        "target",
        "ratio",
        "per probe",
        "sizes run",
        "per size",
        "floor × sizes",
        "others"
    );
    for (t, p) in prepared.iter().enumerate() {
        let catalogue: Vec<Duration> = rounds.iter().map(|r| r[t].catalogue).collect();
        // The round of the median time: its sizes, its time per size, its share of launches.
        let mid =
            (0..rounds.len()).min_by_key(|&r| rounds[r][t].catalogue.abs_diff(median(catalogue.clone()))).unwrap();
        let sizes: usize = rounds[mid][t].probes.iter().map(|x| x.sizes).sum();
        let m = median(catalogue.clone());
        let (target, ratio) = if whole {
            (format!("{} s", p.catalogue_target().as_secs()), format!("{:.2}", secs(m) / secs(p.catalogue_target())))
        } else {
            ("-".into(), "-".into())
        };
        let launches = secs(floors[t]) * sizes as f64;
        println!(
            "{:<14} {:<24} {:>24} {:>8} {:>7} {:>7.0} ms {:>9} {:>6.1} ms {:>6.2} s ({:>3.0}%) {:>8.2}",
            p.tc.spec.name,
            scope,
            spread(&catalogue),
            target,
            ratio,
            secs(m) * 1e3 / probes.len().max(1) as f64,
            sizes,
            secs(rounds[mid][t].catalogue) * 1e3 / sizes.max(1) as f64,
            launches,
            100.0 * launches / secs(rounds[mid][t].catalogue).max(1e-9),
            rounds[mid][t].others
        );
        if !p.builtins.is_empty() {
            let loops: Vec<Duration> = rounds.iter().map(|r| r[t].builtins_time).collect();
            let both: Vec<Duration> = rounds.iter().map(|r| r[t].builtins_time + r[t].catalogue).collect();
            println!(
                "{:<14} {:<24} {:>24} {:>8} {:>7}",
                p.tc.spec.name,
                format!("built-ins ({})", p.builtins.len()),
                spread(&loops),
                "-",
                "-"
            );
            let (target, ratio) = if whole && p.is_zig_0_16() {
                (
                    format!("{} s", ZIG_EVERYTHING.as_secs()),
                    format!("{:.2}", secs(median(both.clone())) / secs(ZIG_EVERYTHING)),
                )
            } else {
                ("-".into(), "-".into())
            };
            println!(
                "{:<14} {:<24} {:>24} {:>8} {:>7}",
                p.tc.spec.name,
                format!("built-ins + {scope}"),
                spread(&both),
                target,
                ratio
            );
        }
    }
    println!();

    println!(
        "{:<14} {:>5} {:>5} {:>8} {:>6} {:>7} {:>13} {:>6} {:>12}",
        "toolchain", "held", "over", "crashed", "wrong", "unsure", "not provided", "other", "re-measured"
    );
    for (t, p) in prepared.iter().enumerate() {
        for (r, round) in rounds.iter().enumerate() {
            let c = counts(&p.tc.spec.name, &round[t].probes);
            let name = if args.rounds > 1 { format!("{} #{}", p.tc.spec.name, r + 1) } else { p.tc.spec.name.clone() };
            println!(
                "{:<14} {:>5} {:>5} {:>8} {:>6} {:>7} {:>13} {:>6} {:>12}",
                name, c.held, c.over, c.crashed, c.wrong, c.unsure, c.not_provided, c.other, c.remeasured
            );
        }
        let last = &rounds[rounds.len() - 1][t];
        if !last.builtins.is_empty() {
            let c = counts(&p.tc.spec.name, &last.builtins);
            let loops: Vec<String> = last
                .builtins
                .iter()
                .map(|b| {
                    let row = Judged::new(&p.tc.spec.name, Metric::Wall, &b.run, &Limits::default());
                    let v = match &b.run.failure {
                        Some(f) => format!("✗ {}", f.kind.label()),
                        None => table::verdict(&row.decision),
                    };
                    format!("{} {v} {:.2} s{}", b.workload, secs(b.time), if b.remeasured { " (twice)" } else { "" })
                })
                .collect();
            println!("{:<14} built-ins: {} measured twice; {}", "", c.remeasured, loops.join(", "));
        }
    }
    println!();

    let limits = Limits::default();
    for (t, p) in prepared.iter().enumerate() {
        let name = &p.tc.spec.name;
        let last = &rounds[rounds.len() - 1][t];
        let total = secs(median(rounds.iter().map(|r| r[t].catalogue).collect()));
        let mut by_probe: Vec<(usize, Duration)> =
            (0..probes.len()).map(|i| (i, median(rounds.iter().map(|r| r[t].probes[i].time).collect()))).collect();
        by_probe.sort_by_key(|b| std::cmp::Reverse(b.1));
        let top: Vec<_> = by_probe.iter().take(args.slowest).collect();
        let top_sum: f64 = top.iter().map(|(_, d)| secs(*d)).sum();
        println!(
            "slowest {} probes on {name}: {:.2} s, {:.0}% of its catalogue time",
            top.len(),
            top_sum,
            100.0 * top_sum / total.max(1e-9)
        );
        println!("  {:<34} {:>8} {:>6} {:>6}  verdict", "probe", "time", "share", "sizes");
        for (i, d) in top {
            let x = &last.probes[*i];
            println!(
                "  {:<34} {:>5.0} ms {:>5.1}% {:>6}  {:<18} {}",
                x.workload,
                secs(*d) * 1e3,
                100.0 * secs(*d) / total.max(1e-9),
                x.sizes,
                cell_text(name, &x.run, &limits),
                if x.remeasured { "measured twice" } else { "" }
            );
        }
        println!();
    }
    let broken: Vec<String> = prepared
        .iter()
        .enumerate()
        .flat_map(|(t, p)| {
            let last = &rounds[rounds.len() - 1][t];
            last.probes
                .iter()
                .filter(|x| {
                    !matches!(cell(&p.tc.spec.name, &x.run, &limits), ProbeState::Held | ProbeState::NotProvided)
                })
                .map(|x| {
                    let why = x.run.failure.as_ref().map_or(String::new(), |f| {
                        let line = f.detail.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
                        format!(": {}", line.chars().take(90).collect::<String>())
                    });
                    format!("  {}/{} {}{why}", p.tc.spec.name, x.workload, cell_text(&p.tc.spec.name, &x.run, &limits))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    if !broken.is_empty() {
        println!("not held (last round):\n{}", broken.join("\n"));
    }
}
