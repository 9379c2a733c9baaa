//! Counted work side by side: up to `--jobs` Valgrind processes at once, each on a thread of its
//! own with its own counting session ([`crate::measure::process`]). A count does not change with
//! the load beside it, so counted measures, the catalogue's counted probes and profiles may run
//! at once; a wall- or CPU-time measure never does (the engine gives it one job).
//!
//! Memory: a callgrind process of the built-ins peaks at 38 MiB for `strchr` at 4 MiB and 39 MiB
//! for `sqlite-insert` at 20,000 records (62 MiB at 200,000, ten times what a counted sweep
//! reaches), so the default number of jobs is bounded by the memory available at
//! [`MEMORY_PER_JOB`] each, with room for a team's larger workloads: [`default_jobs`].

use crate::measure::process;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Memory set aside for each Valgrind process, for the default number of jobs: four times the
/// largest built-in's peak at ten times its counted size.
pub const MEMORY_PER_JOB: u64 = 256 << 20;

/// The number of Valgrind processes run at once when `--jobs` is not given: the host's cores,
/// one left free where it has more than two (for the agent, the build cache and the host's own
/// work), and no more than its available memory holds at [`MEMORY_PER_JOB`] each; at least one.
pub fn default_jobs() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let by_cores = if cores > 2 { cores - 1 } else { cores };
    let by_memory =
        available_memory().map_or(usize::MAX, |m| usize::try_from(m / MEMORY_PER_JOB).unwrap_or(usize::MAX));
    by_cores.min(by_memory).max(1)
}

/// `MemAvailable` of `/proc/meminfo`, in bytes, where the kernel tells it.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `f` of each of `items`, up to `jobs` at once, in the order of `items`. Each thread ends its
/// counting session when it runs out of items, so no Valgrind process outlives the call.
pub fn each<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let jobs = jobs.clamp(1, items.len().max(1));
    if jobs == 1 {
        let out = items.iter().map(&f).collect();
        process::end_session();
        return out;
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                }
                process::end_session();
            });
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().map(|r| r.expect("every item done")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_the_order_of_the_items_whatever_finishes_first() {
        let items: Vec<u64> = (0..20).collect();
        let slow_first = |&i: &u64| {
            std::thread::sleep(std::time::Duration::from_millis(20 - i));
            i * 10
        };
        for jobs in [1, 2, 5, 64] {
            assert_eq!(each(&items, jobs, slow_first), (0..20).map(|i| i * 10).collect::<Vec<_>>(), "{jobs} jobs");
        }
        assert!(each(&[] as &[u64], 4, |&i| i).is_empty());
    }

    #[test]
    fn jobs_run_at_once_up_to_the_number_asked() {
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let items: Vec<u32> = (0..12).collect();
        each(&items, 3, |_| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(30));
            running.fetch_sub(1, Ordering::SeqCst);
        });
        assert_eq!(most.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn the_default_leaves_a_core_free_only_on_larger_hosts_and_is_never_zero() {
        let jobs = default_jobs();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(jobs >= 1 && jobs <= cores, "{jobs} of {cores}");
    }
}
