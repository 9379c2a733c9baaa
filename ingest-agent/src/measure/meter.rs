//! What a run measures, and how: the harness's clock or counter, Valgrind around a workload where
//! the kernel does not let the harness count, and a command workload's CPU time.
//!
//! `--measure instructions` counts through `perf_event_open` where the kernel allows it and every
//! workload of the run is a harness workload; otherwise under Valgrind (callgrind, no cache
//! simulation), found on `PATH`. With neither it is an error that names what to install: it never
//! falls back to another measure in silence. One run has one counter, so a series never mixes them.

use anyhow::{bail, Result};
use slopewatch_core::wire::{Counter, Measure, Metric};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to say where Valgrind is missing.
const INSTALL_VALGRIND: &str =
    "install Valgrind (Debian and Ubuntu: apt-get install valgrind; Fedora: dnf install valgrind)";

/// The metric a run of `measure` has on this host: `counter` when one is asked for, else perf where
/// it counts and `commands` (whether any workload is a command's program) does not rule it out.
pub fn resolve(measure: Measure, counter: Option<Counter>, commands: bool) -> Result<Metric> {
    if measure != Measure::Instructions {
        if let Some(c) = counter {
            bail!("--counter {} counts instructions; it goes with --measure instructions", c.as_str());
        }
        return Ok(Metric::of(measure, None));
    }
    let perf = perf_counts();
    match counter {
        Some(Counter::Perf) => match perf {
            Ok(()) if commands => bail!(
                "--counter perf counts a harness workload's loop; a command workload's program is counted under \
                 Valgrind: use --counter valgrind, or leave --counter out"
            ),
            Ok(()) => Ok(Metric::InstructionsPerf),
            Err(why) => bail!("--counter perf: this host cannot count instructions with perf_event_open ({why})"),
        },
        Some(Counter::Valgrind) => valgrind().map(|_| Metric::InstructionsValgrind),
        None if perf.is_ok() && !commands => Ok(Metric::InstructionsPerf),
        None => match valgrind() {
            Ok(_) => Ok(Metric::InstructionsValgrind),
            Err(e) => match perf {
                Ok(()) => Err(e.context("a command workload's instructions are counted under Valgrind")),
                Err(why) => bail!(
                    "--measure instructions: the kernel does not let this host count instructions \
                     ({why}) and valgrind is not on PATH: {INSTALL_VALGRIND}, or lower \
                     kernel.perf_event_paranoid to 2 or less"
                ),
            },
        },
    }
}

/// Valgrind's path on `PATH`.
pub fn valgrind() -> Result<PathBuf> {
    match crate::host::on_path("valgrind") {
        Some(p) => Ok(p),
        None => {
            bail!("--measure instructions counts under Valgrind here, and valgrind is not on PATH: {INSTALL_VALGRIND}")
        }
    }
}

/// Whether this process may count its own user-space instructions with `perf_event_open`, as the
/// harness does; the reason when not.
pub fn perf_counts() -> Result<(), String> {
    // The first, 64-byte version of perf_event_attr, as the harness passes it.
    #[repr(C)]
    struct Attr {
        kind: u32,
        size: u32,
        config: u64,
        sample_period: u64,
        sample_type: u64,
        read_format: u64,
        flags: u64,
        wakeup_events: u32,
        bp_type: u32,
        config1: u64,
    }
    let attr = Attr {
        kind: 0,   // PERF_TYPE_HARDWARE
        size: 64,  // PERF_ATTR_SIZE_VER0
        config: 1, // PERF_COUNT_HW_INSTRUCTIONS
        sample_period: 0,
        sample_type: 0,
        read_format: 0,
        flags: 1 | (1 << 5) | (1 << 6), // disabled, exclude_kernel, exclude_hv
        wakeup_events: 0,
        bp_type: 0,
        config1: 0,
    };
    // SAFETY: `attr` is a valid perf_event_attr of the size it states and outlives the call; the
    // descriptor returned, if any, is closed at once.
    let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, &attr as *const Attr, 0, -1, -1, 0) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
        return Err(match paranoid.trim() {
            "" => format!("perf_event_open: {e}"),
            p => format!("perf_event_open: {e}; kernel.perf_event_paranoid is {p}"),
        });
    }
    // SAFETY: `fd` is a descriptor this function opened and nothing else holds.
    unsafe { libc::close(fd as i32) };
    Ok(())
}

/// What the harness is told to measure, as `SLOPEWATCH_MEASURE` (see `c/slopewatch.h`).
pub fn harness_mode(metric: Metric) -> &'static str {
    match metric {
        Metric::Wall => "wall",
        Metric::Cpu => "cpu",
        Metric::InstructionsPerf => "instructions",
        Metric::InstructionsValgrind => "valgrind",
    }
}

/// The command that runs `program` under Valgrind's callgrind with the counts written to `dir`:
/// for a harness workload, counting `sw_run` alone and dumping after each call, so each
/// repetition has a count of its own; for a command workload's program, the whole process and the
/// processes it starts.
pub fn under_valgrind(program: &Path, dir: &Path, harness: bool) -> Result<Command> {
    let mut cmd = Command::new(valgrind()?);
    cmd.args(["-q", "--tool=callgrind", "--cache-sim=no", "--branch-sim=no"]);
    cmd.arg(format!("--callgrind-out-file={}/cg.%p", dir.display()));
    // Symbols bound at start, so that no repetition pays for a first call's lazy binding.
    cmd.env("LD_BIND_NOW", "1");
    if harness {
        cmd.args(["--collect-atstart=no", "--toggle-collect=sw_run", "--dump-after=sw_run"]);
    } else {
        cmd.arg("--trace-children=yes");
    }
    cmd.arg(program);
    Ok(cmd)
}

/// A fresh directory for callgrind to write its counts to.
pub fn counts_dir() -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix("slopewatch-counts-")
        .tempdir()
        .map_err(|e| format!("cannot make a directory for counts: {e}"))
}

/// The counts callgrind wrote to `dir`: one per dump of the harness's `sw_run` in call order (the
/// final dump at exit, which collected nothing, left out: it is not written while the harness
/// runs), or for a command one total summed over its processes.
pub fn read_counts(dir: &Path, harness: bool) -> Result<Vec<u64>, String> {
    let mut parts = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read Valgrind's counts: {e}"))?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("cg.") else { continue };
        let mut it = rest.split('.');
        let pid: u64 = it.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let part: u64 = it.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        // Part 0 is the dump at exit, after the last sw_run: not written yet while it runs.
        if harness && part == 0 {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).map_err(|e| format!("cannot read Valgrind's counts: {e}"))?;
        let total = text
            .lines()
            .find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:")))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .ok_or_else(|| format!("Valgrind wrote no total in {name}"))?;
        parts.push((pid, part, total));
    }
    parts.sort();
    if harness {
        Ok(parts.into_iter().map(|p| p.2).collect())
    } else if parts.is_empty() {
        Err("Valgrind wrote no counts".into())
    } else {
        Ok(vec![parts.iter().map(|p| p.2).sum()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrind_dumps_read_in_call_order_without_the_one_at_exit() {
        let dir = tempfile::tempdir().unwrap();
        for (name, total) in [("cg.7", 0), ("cg.7.2", 600), ("cg.7.10", 900), ("cg.7.1", 800)] {
            std::fs::write(
                dir.path().join(name),
                format!("version: 1\nevents: Ir\nsummary: {total}\ntotals: {total}\n"),
            )
            .unwrap();
        }
        assert_eq!(read_counts(dir.path(), true).unwrap(), [800, 600, 900]);
        assert_eq!(read_counts(dir.path(), false).unwrap(), [2300], "a command's processes summed");
        std::fs::write(dir.path().join("cg.8"), "events: Ir\n").unwrap();
        assert!(read_counts(dir.path(), false).unwrap_err().contains("no total"));
    }

    #[test]
    fn a_counter_goes_only_with_instructions_and_each_measure_tells_the_harness() {
        let e = resolve(Measure::Wall, Some(Counter::Valgrind), false).unwrap_err();
        assert!(e.to_string().contains("--measure instructions"), "{e}");
        assert_eq!(resolve(Measure::Cpu, None, true).unwrap(), Metric::Cpu);
        let modes: Vec<&str> = Metric::ALL.into_iter().map(harness_mode).collect();
        assert_eq!(modes, ["wall", "cpu", "instructions", "valgrind"]);
    }
}
