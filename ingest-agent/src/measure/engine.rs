//! The measuring engine: every workload of a plan measured with every toolchain, as `run`,
//! `measure`, `check` and an exposure scan's catalogue verdicts do: the toolchains detected, each
//! workload built and swept, profiled where over, and the results compared across toolchains.
//! It takes a [`MeasurePlan`], the flags already resolved, and never reads the command line.

use crate::builds::cache::BuildCache;
use crate::builds::error::BuildError;
use crate::builds::parallel;
use crate::builds::toolchain::{self, DetectedToolchain};
use crate::builds::workloads::Workload;
use crate::config::ToolchainSpec;
use crate::measure::agreement::{self, Answers};
use crate::measure::failure;
use crate::measure::judged::{self, Judged};
use crate::measure::process::Exe;
use crate::measure::profile::{self, ProfileWanted, Profiler};
use crate::measure::progress::{Pace, Plan, Progress};
use crate::measure::side_by_side;
use crate::measure::{self, Budget};
use anyhow::{bail, Context, Result};
use slopewatch_core::format;
use slopewatch_core::verdict::{Decision, Limits};
use slopewatch_core::wire::{Metric, RunSubmission, WorkloadRun};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// What to measure and how, resolved from the flags or a config file before measuring starts.
#[derive(Debug, Clone)]
pub struct MeasurePlan {
    /// The agent's cache directory: builds, fingerprints, the pace of earlier runs.
    pub root: PathBuf,
    /// The toolchains, in the order given.
    pub specs: Vec<ToolchainSpec>,
    /// The workloads, each measured with every toolchain.
    pub workloads: Vec<Workload>,
    pub budget: Budget,
    /// The measures, each a run of its own per toolchain.
    pub metrics: Vec<Metric>,
    /// Whether every workload is profiled, not only those over a limit.
    pub profile_all: bool,
    /// How many workloads are built at once.
    pub build_jobs: usize,
    /// How many Valgrind processes run at once: counted measures, and profiles (`--jobs`).
    pub jobs: usize,
    /// The lineage measured beside the others as their control, if any.
    pub control: Option<String>,
}

/// What measuring every workload with every toolchain gave.
pub struct Measurements {
    /// One run per toolchain that could be detected, its failed workloads carried in it.
    pub runs: Vec<RunSubmission>,
    /// How many (toolchain, workload) pairs failed.
    pub failures: usize,
    /// The (toolchain, workload) pairs measured twice, with why the first measurement was unsure.
    pub remeasured: BTreeMap<(String, String), String>,
    /// The workloads a measure could not count faithfully, left out of its run.
    pub unmeasurable: Vec<Judged>,
    /// How long each (toolchain label, workload) pair took to sweep, both sweeps where it was
    /// measured twice; a workload that could not be built has none.
    pub elapsed: BTreeMap<(String, String), Duration>,
}

/// Measures every workload with every toolchain, once each, as `run` and `measure` do.
pub fn measure_all(plan: &MeasurePlan) -> Result<Measurements> {
    measure_gated(plan, &Limits::default(), false)
}

/// `tc`, unless a measure counts instructions and `tc`'s binaries run under an emulator: what
/// perf or Valgrind would count there is the emulator's work on the host, not the target's
/// instructions, and no counter of the target's instructions is at hand.
fn countable(tc: DetectedToolchain, metrics: &[Metric]) -> Result<DetectedToolchain> {
    if let (true, Some(m)) = (tc.emulated(), metrics.iter().find(|m| m.is_count())) {
        bail!(
            "toolchain {}: its {} binaries run under {}, and instructions counted there ({}) would be the \
             emulator's on this host, not the target's; measure wall or cpu time (--measure wall), whose growth \
             the emulator keeps",
            tc.spec.name,
            tc.arch,
            tc.runner.as_ref().map_or_else(String::new, |r| r.describe()),
            m.label()
        );
    }
    Ok(tc)
}

/// Measures every workload with every toolchain, judged by `limits`; with `remeasure`, a workload
/// whose verdict is unsure is measured once more (same binary, same budget) and the second
/// measurement kept. A workload held to a contract is measured once more when unsure or over it,
/// whatever `remeasure` says.
pub fn measure_gated(plan: &MeasurePlan, limits: &Limits, remeasure: bool) -> Result<Measurements> {
    let MeasurePlan {
        root,
        specs,
        workloads: selected,
        budget,
        metrics,
        profile_all,
        build_jobs,
        jobs: counting_jobs,
        control,
    } = plan;
    let (root, build_jobs) = (root.as_path(), *build_jobs);
    let cache = BuildCache::new(root.join("builds"));
    let host = crate::host::detect();
    let progress = Progress::new(Plan {
        toolchains: specs.len(),
        workloads: selected.len() * metrics.len(),
        per_workload: budget.total,
        last_pace: Pace::read(&root.join("pace")),
    });
    let mut runs = Vec::new();
    let mut failures = 0;
    let mut remeasured = BTreeMap::new();
    let mut unmeasurable = Vec::new();
    let mut elapsed: BTreeMap<(String, String), Duration> = BTreeMap::new();
    let mut answers = Vec::new();
    let mut profiler = Profiler::new(*profile_all, root);
    // What is over, and so profiled: the gate's limits, or the default slope limit where none is set.
    let profiled_over = match (limits.max_slope, limits.max_class) {
        (None, None) => Limits { max_slope: Some(slopewatch_core::verdict::DEFAULT_MAX_SLOPE), ..*limits },
        _ => *limits,
    };
    for (nth_spec, spec) in specs.iter().enumerate() {
        progress.toolchain(nth_spec + 1, &spec.name, None);
        let started_at = time::OffsetDateTime::now_utc();
        let tc = match toolchain::detect(spec, &root.join("probe")).and_then(|tc| countable(tc, metrics)) {
            Ok(tc) => tc,
            Err(e) => {
                progress.note(&format!("{e:#}"));
                failures += selected.len();
                for _ in 0..selected.len() * metrics.len() {
                    progress.workload_done();
                }
                continue;
            }
        };
        progress.toolchain(nth_spec + 1, &tc.spec.name, Some(&tc.version));
        let workloads: Vec<&Workload> = selected.iter().collect();
        let jobs = parallel::missing(&cache, &tc, &workloads);
        if !jobs.is_empty() {
            progress.building(jobs.len(), build_jobs);
        }
        let prebuilt = parallel::build(&cache, &tc, jobs, build_jobs, &|| progress.one_done());
        progress.note(&format!(
            "toolchain {}: {} {} ({}), {}, {}{}",
            tc.spec.name,
            tc.spec.command_line(),
            tc.version,
            tc.version_source(),
            tc.libc,
            tc.target,
            tc.runner.as_ref().map_or(String::new(), |r| format!(", run by {}", r.describe()))
        ));
        if tc.emulated() {
            progress.note(&format!(
                "toolchain {}: {} binaries run under an emulator: growth (slopes, classes) holds, absolute times are \
                 the emulator's{}",
                tc.spec.name,
                tc.arch,
                if *profile_all { "; no profiles are taken (Valgrind runs only the host's binaries)" } else { "" }
            ));
        }
        let ctx =
            Sweeping { cache: &cache, tc: &tc, prebuilt: &prebuilt, budget, limits, remeasure, progress: &progress };
        for (nth, &metric) in metrics.iter().enumerate() {
            let label = judged::toolchain_label(&tc.spec.name, metric);
            // A count does not change with the load beside it; a time does, so it runs alone.
            let side_by_side = if metric.is_count() { (*counting_jobs).min(selected.len()).max(1) } else { 1 };
            if side_by_side > 1 {
                progress.side_by_side(side_by_side);
                progress.note(&format!(
                    "{label}: counting {} workloads, {side_by_side} Valgrind processes at once",
                    selected.len()
                ));
            }
            let swept = side_by_side::each(selected, side_by_side, |w| ctx.sweep(w, metric, nth));
            progress.side_by_side(1);
            let mut measured = Vec::new();
            let mut wanted = Vec::new();
            for (w, swept) in selected.iter().zip(swept) {
                let Swept { mut run, results, took, again, binary } = match swept {
                    SweepOutcome::Done(done) => *done,
                    SweepOutcome::Unmeasurable(row, took) => {
                        *elapsed.entry((label.clone(), w.name.clone())).or_default() += took;
                        unmeasurable.push(*row);
                        continue;
                    }
                    SweepOutcome::Lost => {
                        failures += 1;
                        continue;
                    }
                };
                if let Some(took) = took {
                    *elapsed.entry((label.clone(), w.name.clone())).or_default() += took;
                }
                if let Some(why) = again {
                    remeasured.insert((label.clone(), w.name.clone()), why);
                }
                if let Some(f) = &run.failure {
                    failures += 1;
                    progress.note(&format!("{label} {}: ✗ {}", w.name, format::failure(f, w.unit)));
                }
                // Valgrind runs only the host's binaries.
                if let Some(bin) = binary.filter(|_| run.failure.is_none() && !run.not_provided && !tc.emulated()) {
                    let over = Judged::new(&tc.spec.name, metric, &run, &profiled_over).is_over();
                    let note = |text: &str| progress.note(text);
                    match profiler.wants(&tc.spec.name, w, over, &note) {
                        ProfileWanted::Done(profile) => run.profile = profile,
                        ProfileWanted::Capture => wanted.push((measured.len(), w, bin)),
                        ProfileWanted::No => {}
                    }
                }
                // One measure's answers are the toolchain's: every measure runs the same binary.
                if nth == 0 {
                    answers.push(Answers {
                        toolchain: tc.spec.name.clone(),
                        workload: w.name.clone(),
                        unit: w.unit,
                        failed: run.failure.is_some(),
                        by_size: results,
                    });
                }
                measured.push(run);
            }
            profile_side_by_side(&mut profiler, &tc, &mut measured, wanted, budget, *counting_jobs, &progress);
            let run = RunSubmission {
                run_id: uuid::Uuid::new_v4(),
                agent_version: crate::AGENT_VERSION.to_string(),
                started_at,
                host: host.clone(),
                toolchain: tc.wire(),
                workloads: measured,
                measure: metric.measure(),
                counter: metric.counter(),
            };
            run.validate().with_context(|| format!("the run for toolchain {label} is invalid"))?;
            runs.push(run);
        }
    }
    for d in agreement::disagreements(&answers) {
        // Every measure's run of the toolchain computed the same, so each carries the failure.
        let of_toolchain =
            runs.iter_mut().filter(|r| r.toolchain.name == d.toolchain).flat_map(|r| r.workloads.iter_mut());
        for (nth, run) in of_toolchain.filter(|w| w.name == d.workload).enumerate() {
            failures += 1;
            if nth == 0 {
                progress.note(&format!(
                    "{} {}: ✗ {}",
                    d.toolchain,
                    d.workload,
                    format::failure(&d.failure, run.size_unit)
                ));
            }
            run.failure = Some(d.failure.clone());
        }
    }
    if let Some(pace) = progress.pace() {
        Pace::write(&root.join("pace"), pace);
    }
    drop(progress);
    if runs.is_empty() {
        bail!("nothing was measured");
    }
    if let Some(control) = control {
        measure::beside::attach(&mut runs, control).map_err(anyhow::Error::msg)?;
    }
    Ok(Measurements { runs, failures, remeasured, unmeasurable, elapsed })
}

/// What sweeping one workload with one toolchain needs, shared by the threads that count side by
/// side.
struct Sweeping<'a> {
    cache: &'a BuildCache,
    tc: &'a DetectedToolchain,
    prebuilt: &'a BTreeMap<String, std::sync::Arc<parallel::Built>>,
    budget: &'a Budget,
    limits: &'a Limits,
    remeasure: bool,
    progress: &'a Progress,
}

/// One workload's sweep with one toolchain and measure.
enum SweepOutcome {
    Done(Box<Swept>),
    /// The measure could not count it faithfully: its row, out of the run, and how long it took.
    Unmeasurable(Box<Judged>, Duration),
    /// Its binary could not be had from the build cache (said as it happened).
    Lost,
}

struct Swept {
    run: WorkloadRun,
    results: BTreeMap<u64, String>,
    /// How long its sweeps took, both where it was measured twice; none where it was not built.
    took: Option<Duration>,
    /// Why it was measured once more, where it was.
    again: Option<String>,
    /// The binary it ran, for its profile.
    binary: Option<PathBuf>,
}

impl Sweeping<'_> {
    /// Builds (where not built ahead) and sweeps `w` by `metric`, the `nth` measure of the plan.
    fn sweep(&self, w: &Workload, metric: Metric, nth: usize) -> SweepOutcome {
        let (tc, progress, limits) = (self.tc, self.progress, self.limits);
        let label = judged::toolchain_label(&tc.spec.name, metric);
        let inline;
        let (binary, built) = match self.prebuilt.get(&w.name) {
            // Built ahead: its build time is told with the first measure.
            Some(b) => {
                progress.workload(&w.name, false);
                let built = match nth {
                    0 => format!("built in {}", format::duration(b.took.as_nanos() as f64)),
                    _ => "build cached".to_string(),
                };
                (b.binary.as_ref(), built)
            }
            None => {
                // Built by its own command, or cached.
                let build = !self.cache.cached(tc, w);
                progress.workload(&w.name, build);
                let building = std::time::Instant::now();
                inline = self.cache.binary(tc, w);
                let took = format::duration(building.elapsed().as_nanos() as f64);
                (inline.as_ref(), if build { format!("built in {took}") } else { "build cached".to_string() })
            }
        };
        let bin = match binary {
            Ok(bin) => bin,
            Err(BuildError::Compiler(e)) => {
                progress.workload_done();
                let run = measure::unbuilt(w, failure::build_failed(e));
                return SweepOutcome::Done(Box::new(Swept {
                    run,
                    results: BTreeMap::new(),
                    took: None,
                    again: None,
                    binary: None,
                }));
            }
            Err(e @ BuildError::Cache(_)) => {
                progress.note(&format!("{} {}: {e}", tc.spec.name, w.name));
                progress.workload_done();
                return SweepOutcome::Lost;
            }
        };
        let mut took = Duration::ZERO;
        let mut measure = || {
            let m = measure::measure(Exe::of(bin, tc), w, self.budget, limits, metric, progress);
            if let Some(why) = &m.unmeasurable {
                progress.note(&format!("{label} {}: not measurable by {}: {why}", w.name, metric.measure()));
            } else if m.run.failure.is_none() {
                progress.note(&format!(
                    "{} {}: {} sizes in {} ({built})",
                    label,
                    w.name,
                    m.run.measurements.len(),
                    format::duration(m.elapsed.as_nanos() as f64)
                ));
            }
            took += m.elapsed;
            (m.run, m.results, m.unmeasurable)
        };
        let (run, results, unfaithful) = measure();
        if let Some(why) = unfaithful {
            progress.workload_done();
            let row = Judged::unmeasurable(&tc.spec.name, metric, &run, why);
            return SweepOutcome::Unmeasurable(Box::new(row), took);
        }
        // A contract is judged by its class alone, so every command confirms it. Exact counts come
        // out the same a second time.
        let again = (self.remeasure || w.contract.is_some()) && !metric.is_exact();
        let again = again.then(|| unsure(&tc.spec.name, metric, &run, limits)).flatten();
        let (run, results) = match &again {
            Some(why) => {
                progress.note(&format!("{label} {}: unsure ({why}); measuring it once more", w.name));
                let (run, results, _) = measure();
                (run, results)
            }
            None => (run, results),
        };
        progress.workload_done();
        SweepOutcome::Done(Box::new(Swept { run, results, took: Some(took), again, binary: Some(bin.clone()) }))
    }
}

/// Takes the profiles `wanted` (each a run of `measured`, its workload and binary) after the
/// toolchain's measurements, up to `jobs` at once, and puts each in its run.
fn profile_side_by_side(
    profiler: &mut Profiler,
    tc: &DetectedToolchain,
    measured: &mut [WorkloadRun],
    wanted: Vec<(usize, &Workload, PathBuf)>,
    budget: &Budget,
    jobs: usize,
    progress: &Progress,
) {
    if wanted.is_empty() {
        return;
    }
    let jobs = jobs.min(wanted.len()).max(1);
    progress.profiling(wanted.len(), jobs);
    let captured = side_by_side::each(&wanted, jobs, |(_, w, bin)| {
        let tallies = profile::capture(bin, w, profile::size(w, budget), profile::LIMIT);
        progress.one_done();
        tallies
    });
    let note = |text: &str| progress.note(text);
    for ((i, w, bin), tallies) in wanted.into_iter().zip(captured) {
        measured[i].profile = profiler.finish(tc, &bin, w, profile::size(w, budget), tallies, &note);
    }
}

/// Why a measured workload is worth measuring once more: its verdict is unsure, or it broke its
/// contract (a break is confirmed before it fails the gate: on a busy host one sweep of calls that
/// take microseconds can climb by chance); `None` when neither, or when it failed.
fn unsure(toolchain: &str, metric: Metric, run: &WorkloadRun, limits: &Limits) -> Option<String> {
    if run.failure.is_some() || run.not_provided {
        return None;
    }
    let row = Judged::new(toolchain, metric, run, limits);
    match &row.decision {
        Decision::Unsure(_) => Some(row.decision.doubts()),
        Decision::Over(breach) => breach.contract.map(|expected| {
            let measured = row.complexity.as_ref().and_then(|c| c.class).map_or("-", |c| c.label());
            format!("{measured} over its contract of {}", expected.label())
        }),
        Decision::Under => None,
    }
}
