//! Building a toolchain's workloads before any is measured, several at a time: compiling takes
//! every core it is given, measuring wants the host quiet, so the two never overlap.

use super::cache::BuildCache;
use super::error::BuildError;
use super::toolchain::DetectedToolchain;
use super::workloads::{Source, Workload};
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A binary built ahead: where it is, or why it is not, and how long building it took.
#[derive(Debug)]
pub struct Built {
    pub binary: Result<PathBuf, BuildError>,
    pub took: Duration,
}

/// The binaries `workloads` need that `cache` does not hold yet, one job per binary (the contract
/// probes share one). One SQLite workload goes first, as it compiles the SQLite object the others
/// share, the longest compile; the other SQLite workloads go last, so that while it compiles the
/// other workers build what does not wait for it.
pub fn missing<'w>(cache: &BuildCache, tc: &DetectedToolchain, workloads: &[&'w Workload]) -> Vec<Vec<&'w Workload>> {
    let mut jobs: Vec<(PathBuf, Vec<&Workload>)> = Vec::new();
    // A workload built by its own command builds when it is measured: the command may not be
    // safe to run beside another.
    for &w in workloads.iter().filter(|w| !matches!(w.source, Source::Command(_)) && !cache.cached(tc, w)) {
        let path = cache.path(tc, w);
        match jobs.iter_mut().find(|(p, _)| *p == path) {
            Some((_, ws)) => ws.push(w),
            None => jobs.push((path, vec![w])),
        }
    }
    let sqlite = |ws: &[&Workload]| matches!(ws[0].source, Source::Sqlite { .. });
    let first = jobs.iter().position(|(_, ws)| sqlite(ws));
    let mut ordered: Vec<Vec<&Workload>> = Vec::with_capacity(jobs.len());
    if let Some(i) = first {
        ordered.push(jobs.remove(i).1);
    }
    let (later, others): (Vec<_>, Vec<_>) = jobs.into_iter().map(|(_, ws)| ws).partition(|ws| sqlite(ws));
    ordered.extend(others);
    ordered.extend(later);
    ordered
}

/// Builds each job of [`missing`], `parallel` at a time, telling `built` as each finishes; returns
/// what each workload's build gave, by workload name.
pub fn build(
    cache: &BuildCache,
    tc: &DetectedToolchain,
    jobs: Vec<Vec<&Workload>>,
    parallel: usize,
    built: &(dyn Fn() + Sync),
) -> BTreeMap<String, Arc<Built>> {
    let workers = parallel.clamp(1, jobs.len().max(1));
    let queue = Mutex::new(VecDeque::from(jobs));
    let results = Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let Some(job) = queue.lock().unwrap().pop_front() else { return };
                let began = Instant::now();
                let shared = cache.shared_binary(tc, job[0]);
                let took = began.elapsed();
                let mut results = results.lock().unwrap();
                match shared {
                    // One binary, but a probe whose code did not compile fails alone.
                    Ok(bin) => {
                        for w in job {
                            let binary = cache.own_binary(tc, w, bin.clone());
                            results.insert(w.name.clone(), Arc::new(Built { binary, took }));
                        }
                    }
                    Err(e) => {
                        let done = Arc::new(Built { binary: Err(e), took });
                        for w in job {
                            results.insert(w.name.clone(), done.clone());
                        }
                    }
                }
                drop(results);
                built();
            });
        }
    });
    results.into_inner().unwrap()
}
