//! `build`: every workload built with each toolchain into the cache, nothing measured, so that a
//! later `run`, `measure` or `check` measures at once, and builds can run where measuring would be
//! disturbed (beside other builds, or in a step of their own).

use crate::builds::cache::BuildCache;
use crate::builds::error::one_line;
use crate::builds::parallel;
use crate::builds::toolchain;
use crate::builds::workloads::Workload;
use crate::cli::MeasureArgs;
use crate::config::cache_root;
use crate::exit::ExitStatus;
use crate::measure::progress::{Plan, Progress};
use anyhow::Result;
use slopewatch_core::format;
use std::time::{Duration, Instant};

/// Builds what the workloads asked for need with each toolchain; fails when a toolchain cannot be
/// detected or a workload cannot be built, naming each.
pub fn build(args: &MeasureArgs) -> Result<ExitStatus> {
    let root = cache_root(args.cache_dir.clone())?;
    let specs = args.toolchains.specs(&root)?;
    let selected = args.selected()?;
    let cache = BuildCache::new(root.join("builds"));
    let jobs = args.build_jobs();
    let progress =
        Progress::new(Plan { toolchains: specs.len(), workloads: 0, per_workload: Duration::ZERO, last_pace: None });
    let mut failed = 0;
    for (nth, spec) in specs.iter().enumerate() {
        progress.toolchain(nth + 1, &spec.name, None);
        let began = Instant::now();
        let tc = match toolchain::detect(spec, &root.join("probe")) {
            Ok(tc) => tc,
            Err(e) => {
                progress.note(&format!("{e:#}"));
                failed += 1;
                continue;
            }
        };
        progress.toolchain(nth + 1, &tc.spec.name, Some(&tc.version));
        let (commands, compiled): (Vec<&Workload>, Vec<&Workload>) =
            selected.iter().partition(|w| w.command().is_some());
        let missing = parallel::missing(&cache, &tc, &compiled);
        let (binaries, to_build) = (missing.len(), missing.iter().map(Vec::len).sum::<usize>());
        if binaries > 0 {
            progress.building(binaries, jobs);
        }
        let mut broken: Vec<String> = parallel::build(&cache, &tc, missing, jobs, &|| progress.one_done())
            .into_iter()
            .filter_map(|(name, b)| b.binary.as_ref().err().map(|e| format!("{name}: {}", one_line(&e.to_string()))))
            .collect();
        // A workload built by its own command builds one at a time: the command decides what to redo.
        for w in commands {
            progress.note(&format!("building {} with {} {} by its own command", w.name, tc.spec.name, tc.version));
            if let Err(e) = cache.binary(&tc, w) {
                broken.push(format!("{}: {}", w.name, one_line(&e.to_string())));
            }
        }
        let took = format::duration(began.elapsed().as_nanos() as f64);
        progress.note(&format!(
            "{} {}: built {binaries} binaries for {to_build} workloads in {took}, {} cached{}",
            tc.spec.name,
            tc.version,
            compiled.len() - to_build,
            if broken.is_empty() { String::new() } else { format!("; {} failed to build", broken.len()) }
        ));
        for b in &broken {
            progress.note(&format!("  ✗ {b}"));
        }
        failed += broken.len();
    }
    Ok(ExitStatus::failed_if(failed > 0))
}
