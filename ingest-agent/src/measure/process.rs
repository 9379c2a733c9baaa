//! Running a workload at one size: the harness binary, or a command workload's program once per
//! repetition, each killed at the size's deadline, and what it printed read and checked.

use crate::builds::command::{CommandWorkload, Printed};
use crate::builds::runner::Runner;
use crate::builds::workloads::Workload;
use crate::measure::session::{Broke, Session};
use crate::measure::{failure, meter};
use serde::Deserialize;
use slopewatch_core::wire::{Failure, Metric, SizeUnit};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a sweep tells as it goes, for a display to show.
pub trait Watch {
    /// `workload` started at `size`, counted in `unit`.
    fn size_started(&self, workload: &str, size: u64, unit: SizeUnit);
    /// `workload` finished `size`, counted in `unit`; its median repetition took `median_ns`.
    fn size_done(&self, workload: &str, size: u64, unit: SizeUnit, median_ns: f64);
    /// A message that must not be overwritten by the progress line.
    fn note(&self, msg: &str);
}

/// A workload's built binary and what runs it: the host, or the toolchain's runner (an emulator
/// for another architecture).
#[derive(Debug, Clone, Copy)]
pub struct Exe<'a> {
    pub path: &'a Path,
    pub runner: Option<&'a Runner>,
}

impl<'a> Exe<'a> {
    /// `path`, built by `tc`, run as `tc` runs its binaries.
    pub fn of(path: &'a Path, tc: &'a crate::builds::toolchain::DetectedToolchain) -> Exe<'a> {
        Exe { path, runner: tc.runner.as_ref() }
    }

    /// A binary the host runs itself.
    pub fn native(path: &'a Path) -> Exe<'a> {
        Exe { path, runner: None }
    }

    /// A command that runs the binary; its arguments follow.
    fn command(&self) -> Command {
        crate::builds::runner::command(self.runner, self.path)
    }

    /// Whether the binary runs under an emulator.
    pub fn emulated(&self) -> bool {
        self.runner.is_some_and(Runner::emulates)
    }
}

/// One size of a sweep: the workload's built `binary`, run `reps` times at `size` within
/// `timeout`, told to `watch`.
pub(super) struct SizeRun<'a> {
    pub binary: Exe<'a>,
    pub w: &'a Workload,
    pub size: u64,
    pub reps: u32,
    pub timeout: Duration,
    pub watch: &'a dyn Watch,
    /// What each repetition reports: the harness is told, or Valgrind wrapped around it.
    pub metric: Metric,
}

/// What a workload binary prints: the protocol documented in `c/slopewatch.h`.
#[derive(Debug, Deserialize)]
pub(super) struct Output {
    size: u64,
    pub samples_ns: Vec<f64>,
    #[serde(default)]
    pub instructions: Option<Vec<u64>>,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub meta: BTreeMap<String, String>,
}

/// Longest result a workload may report: a checksum, not a dump.
const MAX_RESULT_CHARS: usize = 128;

/// Runs the workload at one size: the harness binary, which repeats the work itself, or a command
/// workload's program once per repetition. A `timed_out` failure when it ran past its timeout and
/// was killed.
pub(super) fn run_size(at: &SizeRun) -> Result<Output, Box<Failure>> {
    let (w, size) = (at.w, at.size);
    at.watch.size_started(&w.name, size, w.unit);
    let deadline = Instant::now() + at.timeout;
    let out = match w.command() {
        Some(c) => run_command(c, at, deadline)?,
        None if at.metric == Metric::InstructionsValgrind => run_in_session(at, deadline)?,
        None => run_harness(at, deadline)?,
    };
    if out
        .result
        .as_ref()
        .is_some_and(|r| r.is_empty() || r.chars().count() > MAX_RESULT_CHARS || r.chars().any(char::is_control))
    {
        return Err(Box::new(failure::setup_failed(
            Some(size),
            &format!("must print a result of 1 to {MAX_RESULT_CHARS} printable characters, printed {:?}", out.result),
        )));
    }
    at.watch.size_done(&w.name, size, w.unit, slopewatch_core::fit::median(&out.samples_ns));
    Ok(out)
}

/// The harness binary at the size: one process that warms up, repeats `reps` times and prints its
/// JSON line.
fn run_harness(at: &SizeRun, deadline: Instant) -> Result<Output, Box<Failure>> {
    let mut cmd = at.binary.command();
    cmd.arg(at.size.to_string()).arg(at.reps.to_string()).env("SLOPEWATCH_MEASURE", meter::harness_mode(at.metric));
    if at.w.is_probe() {
        cmd.env("SLOPEWATCH_PROBE", &at.w.name);
    }
    let done = run_process(cmd, at, deadline)?;
    let line = done.stdout.lines().rev().find(|l| l.trim_start().starts_with('{')).unwrap_or("");
    checked(read_line(line, at)?, at)
}

thread_local! {
    /// The Valgrind session sizes of a harness binary are counted in ([`Session`]): one open at a
    /// time on each thread, for the binary that thread measured last, so that workloads counted
    /// side by side (`--jobs`) each count in a process of their own.
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

/// The harness binary at the size, counted under Valgrind in the session open for it (started
/// when the last size was of another binary, or ended it).
fn run_in_session(at: &SizeRun, deadline: Instant) -> Result<Output, Box<Failure>> {
    SESSION.with_borrow_mut(|open| count_in(open, at, deadline))
}

fn count_in(open: &mut Option<Session>, at: &SizeRun, deadline: Instant) -> Result<Output, Box<Failure>> {
    let setup_failed = |why: String| Box::new(failure::setup_failed(Some(at.size), &why));
    if !open.as_ref().is_some_and(|s| s.runs(at.binary.path)) {
        *open = None;
        *open = Some(Session::start(at.binary.path).map_err(setup_failed)?);
    }
    let session = open.as_mut().expect("a session was just opened");
    let probe = at.w.is_probe().then_some(at.w.name.as_str());
    match session.measure(at.size, at.reps, probe, deadline) {
        Ok(answer) => {
            let mut out = read_line(&answer.line, at)?;
            // One count per repetition: under Valgrind the harness runs no warm-up.
            out.instructions = Some(answer.counts);
            checked(out, at)
        }
        Err(broke) => {
            *open = None;
            Err(match broke {
                Broke::Failed(f) => f,
                Broke::TimedOut => timed_out(at),
            })
        }
    }
}

/// Ends this thread's Valgrind session, if one is open: when its measuring is done.
pub fn end_session() {
    SESSION.with_borrow_mut(|open| *open = None);
}

/// The harness's JSON line, read.
fn read_line(line: &str, at: &SizeRun) -> Result<Output, Box<Failure>> {
    serde_json::from_str(line).map_err(|e| {
        Box::new(failure::setup_failed(Some(at.size), &format!("printed no valid JSON line ({e}): {line:?}")))
    })
}

/// `out` if it is what the harness promises for `at`: its size, a positive sample per
/// repetition, and a count per repetition where the measure counts.
fn checked(out: Output, at: &SizeRun) -> Result<Output, Box<Failure>> {
    let (size, reps) = (at.size, at.reps);
    let setup_failed = |why: String| Box::new(failure::setup_failed(Some(size), &why));
    if at.metric.is_count() && out.instructions.as_ref().is_none_or(|i| i.contains(&0)) {
        return Err(setup_failed(format!("counted no instructions ({})", at.metric.label())));
    }
    if out.size != size {
        return Err(setup_failed(format!("reported size {} for size {size}", out.size)));
    }
    if out.samples_ns.len() != reps as usize || out.samples_ns.iter().any(|&s| !(s.is_finite() && s > 0.0)) {
        return Err(setup_failed(format!("must print {reps} positive samples, printed {:?}", out.samples_ns)));
    }
    if out.instructions.as_ref().is_some_and(|i| i.len() != reps as usize) {
        return Err(setup_failed("printed a wrong number of instruction counts".to_string()));
    }
    Ok(out)
}

/// A command workload's program at the size, `at.binary` being what its build made: one warm-up
/// run, then `reps` timed ones, each timed by the `slopewatch_ns=` it prints or else by its wall
/// time (start-up included: a fixed cost the fit sees at every size). Every repetition must time
/// itself the same way and agree on its result. Under a runner, a command that starts with what
/// the build made runs it through the runner; any other (a script) finds the runner's command in
/// `SLOPEWATCH_RUNNER`, to run what the build made with.
fn run_command(c: &CommandWorkload, at: &SizeRun, deadline: Instant) -> Result<Output, Box<Failure>> {
    let (size, reps) = (at.size, at.reps);
    let setup_failed = |why: String| Box::new(failure::setup_failed(Some(size), &why));
    let mut argv = c.argv(at.binary.path, size);
    let runner = at.binary.runner.map(|r| r.argv.join(" ")).unwrap_or_default();
    if let Some(r) = at.binary.runner.filter(|_| Path::new(&argv[0]) == at.binary.path) {
        argv = r.wrap(&argv);
    }
    let mut samples = Vec::with_capacity(reps as usize);
    let mut counts = Vec::with_capacity(reps as usize);
    let mut reported = None;
    let mut result: Option<String> = None;
    // Rep 0 is the warm-up; under Valgrind, whose counts need no warm cache, there is none.
    let first = u32::from(at.metric.is_exact());
    for rep in first..=reps {
        let dir = counts_dir(at)?;
        let mut cmd = match &dir {
            Some(d) => meter::under_valgrind(Path::new(&argv[0]), d.path(), false)
                .map_err(|e| setup_failed(format!("{e:#}")))?,
            None => Command::new(&argv[0]),
        };
        cmd.args(&argv[1..]).current_dir(c.dir()).env("SLOPEWATCH_SIZE", size.to_string());
        cmd.env("SLOPEWATCH_RUNNER", &runner);
        if let Some(r) = at.binary.runner {
            cmd.envs(r.env.iter().map(|(k, v)| (k, v)));
        }
        let done = run_process(cmd, at, deadline)?;
        let printed = Printed::read(&done.stdout).map_err(setup_failed)?;
        if rep == first {
            reported = Some(printed.ns.is_some());
        } else if reported != Some(printed.ns.is_some()) {
            return Err(setup_failed("printed slopewatch_ns= in some repetitions and not in others".into()));
        }
        if rep > 0 {
            let ns = match at.metric {
                Metric::Cpu => done.cpu.as_nanos() as f64,
                _ => printed.ns.unwrap_or(done.wall.as_nanos() as f64),
            };
            samples.push(ns.max(1.0));
            if let Some(d) = &dir {
                counts.extend(meter::read_counts(d.path(), false).map_err(setup_failed)?);
            }
        }
        match (&result, printed.result) {
            (Some(a), Some(b)) if *a != b => {
                return Err(setup_failed(format!("printed slopewatch_result={a} and then {b} at one size")))
            }
            (_, Some(b)) => result = Some(b),
            _ => {}
        }
    }
    let timing = match at.metric {
        Metric::Cpu => "CPU time",
        Metric::InstructionsValgrind => "instructions of the whole process",
        _ if reported == Some(true) => "slopewatch_ns",
        _ => "wall time",
    };
    let meta = BTreeMap::from([("timing".to_string(), timing.to_string())]);
    let instructions = (!counts.is_empty()).then_some(counts);
    Ok(Output { size, samples_ns: samples, instructions, result, meta })
}

/// A fresh directory for Valgrind's counts where the metric counts under it.
fn counts_dir(at: &SizeRun) -> Result<Option<tempfile::TempDir>, Box<Failure>> {
    if at.metric != Metric::InstructionsValgrind {
        return Ok(None);
    }
    meter::counts_dir().map(Some).map_err(|why| Box::new(failure::setup_failed(Some(at.size), &why)))
}

/// How a process ended and what it printed.
struct Finished {
    stdout: String,
    wall: Duration,
    /// The CPU time it used, user and system, its waited-for children's included.
    cpu: Duration,
}

/// Runs `cmd` to its end, killing it at `deadline` (a `timed_out` failure naming the size's
/// timeout); an unsuccessful exit is the workload's failure, with what it printed on stderr.
/// The wall time runs from the spawn to the moment the process exited, not to when it was seen.
fn run_process(mut cmd: Command, at: &SizeRun, deadline: Instant) -> Result<Finished, Box<Failure>> {
    let size = at.size;
    let setup_failed = |why: String| Box::new(failure::setup_failed(Some(size), &why));
    let began = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| setup_failed(format!("cannot start the workload: {e}")))?;
    // Read while it runs, so a workload that prints more than a pipe holds is not blocked by it.
    let stdout = read_in_background(child.stdout.take());
    let stderr = read_in_background(child.stderr.take());
    let exited = exit_watch(child.id());
    let ended = match exited.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(ended) => ended,
        Err(_) => {
            child.kill().ok();
            child.wait().ok();
            return Err(timed_out(at));
        }
    };
    let (status, cpu) = reap(&mut child).map_err(|e| setup_failed(format!("cannot wait for the workload: {e}")))?;
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if !status.success() {
        return Err(Box::new(failure::exited(status, &stderr, size)));
    }
    Ok(Finished { stdout, wall: ended.saturating_duration_since(began), cpu })
}

/// The failure of a size that ran past its timeout and was stopped, told to the watch.
fn timed_out(at: &SizeRun) -> Box<Failure> {
    let at_size = slopewatch_core::format::size(at.size, at.w.unit);
    at.watch.note(&format!("{} at {at_size} ran past the budget ({:.1?}) and was stopped", at.w.name, at.timeout));
    Box::new(failure::timed_out(at.size, at.timeout))
}

/// Reaps a child that has exited (the exit watch saw it), with the CPU time it used: `wait4`'s
/// resource usage, which `Child::wait` does not give.
fn reap(child: &mut std::process::Child) -> std::io::Result<(std::process::ExitStatus, Duration)> {
    use std::os::unix::process::ExitStatusExt;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid, and both out-pointers are writable for the call. The
    // child is ours and unreaped (the exit watch waits with WNOWAIT), so the pid is still its own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let time = |t: libc::timeval| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
    Ok((std::process::ExitStatus::from_raw(status), time(usage.ru_utime) + time(usage.ru_stime)))
}

/// Sends the moment process `pid` exits. The process is left unreaped (`WNOWAIT`), so its `Child`
/// still owns it: killing it after a timeout can never reach a process that reused the pid.
fn exit_watch(pid: u32) -> std::sync::mpsc::Receiver<Instant> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // SAFETY: an all-zero siginfo_t is valid, and `info` is writable and outlives the call.
        // Should waitid fail, the moment is reported at once and `Child::wait` tells the rest.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT);
        }
        tx.send(Instant::now()).ok();
    });
    rx
}

/// Most of a workload's output kept: its JSON line with a thousand samples fits many times over.
const MAX_OUTPUT_BYTES: u64 = 1 << 20;

/// Reads a child's pipe to the end on a thread of its own, keeping the first [`MAX_OUTPUT_BYTES`].
fn read_in_background(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            pipe.by_ref().take(MAX_OUTPUT_BYTES).read_to_end(&mut bytes).ok();
            std::io::copy(&mut pipe, &mut std::io::sink()).ok();
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}
