//! The progress display on stderr: a live line on a terminal, plain log lines otherwise.
//!
//! Both name the phase (building a workload, measuring it at a size), count the toolchains and
//! workloads done, and estimate the time left. Without a terminal (cron, CI, a log file) each phase
//! is one line, and a phase that lasts repeats itself every [`STILL_EVERY`], so a log is never
//! silent for long while a large workload builds.

use super::Watch;
use slopewatch_core::format::{duration, size};
use slopewatch_core::wire::SizeUnit;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a log without a terminal repeats a phase that is still going on.
pub const STILL_EVERY: Duration = Duration::from_secs(15);

/// What is to be done, for the counters and the estimate.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub toolchains: usize,
    /// Workloads per toolchain, each measure counted apart.
    pub workloads: usize,
    /// The most measuring one workload may take ([`crate::measure::Budget::total`]).
    pub per_workload: Duration,
    /// The time per workload of the last run on this host, where it was kept ([`Pace`]).
    pub last_pace: Option<Duration>,
}

/// The time a workload took, all in, at the last run on this host: kept in the agent's cache so a
/// run's first estimate is not only the budgets' bound. Best effort: one that cannot be read or
/// written is no estimate, never an error.
pub struct Pace;

impl Pace {
    /// The pace kept in `file`, if any.
    pub fn read(file: &std::path::Path) -> Option<Duration> {
        let millis: u64 = std::fs::read_to_string(file).ok()?.trim().parse().ok()?;
        (millis > 0).then(|| Duration::from_millis(millis))
    }

    /// Keeps `pace` in `file` for the next run.
    pub fn write(file: &std::path::Path, pace: Duration) {
        std::fs::write(file, format!("{}\n", pace.as_millis().max(1))).ok();
    }
}

#[derive(Debug)]
enum Phase {
    Idle,
    /// The workloads' binaries built ahead, `jobs` at a time.
    BuildingAll {
        binaries: usize,
        built: usize,
        jobs: usize,
    },
    Building {
        workload: String,
    },
    /// The toolchain's profiles, taken after its measurements, `jobs` at a time.
    Profiling {
        workloads: usize,
        done: usize,
        jobs: usize,
    },
    Measuring {
        workload: String,
        size: u64,
        unit: SizeUnit,
    },
}

struct State {
    plan: Plan,
    started: Instant,
    /// The toolchain's name, as the log's `toolchain=` gives it.
    name: String,
    /// The toolchain's name and version, as the phase names it.
    toolchain: String,
    nth_toolchain: usize,
    nth_workload: usize,
    done: usize,
    /// How many workloads are counted at once (`--jobs`), 1 outside a counted measure.
    side_by_side: usize,
    /// Time spent building ahead and profiling, which the pace of measuring leaves out: each is
    /// a phase of its own, told as it goes.
    set_aside: Duration,
    phase: Phase,
    since: Instant,
    /// When a log without a terminal last told the phase.
    told: Instant,
}

impl State {
    /// `toolchain 1 of 2, workload 3 of 12`; the workload left out before the first begins.
    /// `of` goes between each count and its total: `" of "` in a log, `"/"` on the terminal's line.
    fn counters(&self, of: &str) -> String {
        let toolchain = format!("toolchain {}{of}{}", self.nth_toolchain, self.plan.toolchains);
        match self.nth_workload {
            0 => toolchain,
            nth => format!("{toolchain}, workload {nth}{of}{}", self.plan.workloads),
        }
    }

    fn phase(&self) -> Option<String> {
        match &self.phase {
            Phase::Idle => None,
            Phase::BuildingAll { binaries, built, jobs } => {
                Some(format!("building {binaries} binaries with {} ({jobs} at a time, {built} built)", self.toolchain))
            }
            Phase::Building { workload } => Some(format!("building {workload} with {}", self.toolchain)),
            Phase::Profiling { workloads, done, jobs } => Some(format!(
                "profiling {workloads} workloads of {} under callgrind ({jobs} at a time, {done} done)",
                self.toolchain
            )),
            Phase::Measuring { workload, size: at, unit } if self.side_by_side > 1 => Some(format!(
                "counting {} workloads at once with {}, the last begun {workload} at {}",
                self.side_by_side,
                self.toolchain,
                size(*at, unit)
            )),
            Phase::Measuring { workload, size: at, unit } => {
                Some(format!("measuring {workload} with {} at {}", self.toolchain, size(*at, unit)))
            }
        }
    }

    /// The time left: the mean of the workloads done so far times those left, or before any is
    /// done, the last run's pace; `None` where nothing is to be measured, or nothing is known yet
    /// (the most the budgets allow is hours for a check that takes seconds: no estimate at all
    /// says more).
    fn left(&self) -> Option<String> {
        let total = self.plan.toolchains * self.plan.workloads;
        if total == 0 {
            return None;
        }
        let left = u32::try_from(total.saturating_sub(self.done)).unwrap_or(u32::MAX);
        if left == 0 {
            // Every workload measured; what is left (profiles) is a phase of its own.
            return None;
        }
        let time = |per: Duration| duration(per.saturating_mul(left).as_nanos() as f64);
        Some(match (self.pace(), self.plan.last_pace) {
            (Some(pace), _) => format!("about {} left", time(pace)),
            (None, Some(pace)) => format!("about {} left at the last run's pace", time(pace)),
            (None, None) => return None,
        })
    }

    /// The time per workload so far, once one is done: measuring only, as the wall clock saw it
    /// (so workloads counted at once make it shorter), building ahead and profiling left out.
    fn pace(&self) -> Option<Duration> {
        let measuring = self.started.elapsed().saturating_sub(self.set_aside + self.in_set_aside_phase());
        (self.done > 0).then(|| measuring / u32::try_from(self.done).unwrap_or(u32::MAX))
    }

    /// How long the phase going on has been building ahead or profiling.
    fn in_set_aside_phase(&self) -> Duration {
        match self.phase {
            Phase::BuildingAll { .. } | Phase::Profiling { .. } => self.since.elapsed(),
            _ => Duration::ZERO,
        }
    }

    /// Ends a phase of building ahead or profiling: its time is set aside from the pace.
    fn end_set_aside_phase(&mut self) {
        self.set_aside += self.in_set_aside_phase();
        self.phase = Phase::Idle;
    }

    /// The counters, then the estimate where there is one.
    fn status(&self) -> String {
        match self.left() {
            None => self.counters(" of "),
            Some(left) => format!("{}; {left}", self.counters(" of ")),
        }
    }
}

/// Progress reporting to stderr. On a terminal one line is redrawn in place with the elapsed
/// time; elsewhere each phase and each finished size is one log line.
pub struct Progress {
    state: Arc<Mutex<State>>,
    tty: bool,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    pub fn new(plan: Plan) -> Progress {
        Progress::with_terminal(plan, std::io::stderr().is_terminal())
    }

    fn with_terminal(plan: Plan, tty: bool) -> Progress {
        let now = Instant::now();
        let state = Arc::new(Mutex::new(State {
            plan,
            started: now,
            name: String::new(),
            toolchain: String::new(),
            nth_toolchain: 0,
            nth_workload: 0,
            done: 0,
            side_by_side: 1,
            set_aside: Duration::ZERO,
            phase: Phase::Idle,
            since: now,
            told: now,
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = {
            let (state, stop) = (state.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    tick(&mut state.lock().unwrap(), tty);
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
        };
        Progress { state, tty, stop, ticker: Some(ticker) }
    }

    /// The `nth` toolchain (from 1) begins: `name`, at `version` once it is known.
    pub fn toolchain(&self, nth: usize, name: &str, version: Option<&str>) {
        let mut s = self.state.lock().unwrap();
        s.name = name.to_string();
        s.toolchain = match version {
            Some(v) => format!("{name} {v}"),
            None => name.to_string(),
        };
        s.nth_toolchain = nth;
        s.nth_workload = 0;
        s.phase = Phase::Idle;
    }

    /// The workloads' `binaries` are built ahead, `jobs` at a time.
    pub fn building(&self, binaries: usize, jobs: usize) {
        let mut s = self.state.lock().unwrap();
        s.phase = Phase::BuildingAll { binaries, built: 0, jobs: jobs.min(binaries) };
        self.tell(&mut s);
    }

    /// One more binary built ahead, or profile taken, is done; the phase ends with the last.
    pub fn one_done(&self) {
        let mut s = self.state.lock().unwrap();
        if let Phase::BuildingAll { binaries: all, built: done, .. } | Phase::Profiling { workloads: all, done, .. } =
            &mut s.phase
        {
            *done += 1;
            if done == all {
                s.end_set_aside_phase();
            }
        }
    }

    /// `workloads` are profiled, `jobs` at a time, after the toolchain's measurements.
    pub fn profiling(&self, workloads: usize, jobs: usize) {
        let mut s = self.state.lock().unwrap();
        s.phase = Phase::Profiling { workloads, done: 0, jobs };
        self.tell(&mut s);
    }

    /// `jobs` workloads are counted at once from now on (1: one at a time).
    pub fn side_by_side(&self, jobs: usize) {
        self.state.lock().unwrap().side_by_side = jobs.max(1);
    }

    /// The next workload begins: built first when `build` (its binary is not cached).
    pub fn workload(&self, workload: &str, build: bool) {
        let mut s = self.state.lock().unwrap();
        s.nth_workload += 1;
        if build {
            s.phase = Phase::Building { workload: workload.to_string() };
            self.tell(&mut s);
        }
    }

    /// The time per workload so far, builds included, once one is done.
    pub fn pace(&self) -> Option<Duration> {
        self.state.lock().unwrap().pace()
    }

    /// The workload is done (measured, failed or skipped): the estimate counts it.
    pub fn workload_done(&self) {
        let mut s = self.state.lock().unwrap();
        s.done += 1;
        if s.side_by_side == 1 {
            s.phase = Phase::Idle;
        }
    }

    /// A message that must not be overwritten by the progress line.
    pub fn note(&self, msg: &str) {
        let _guard = self.state.lock().unwrap();
        if self.tty {
            eprint!("\r\x1b[2K");
        }
        eprintln!("{msg}");
    }

    /// Tells the phase just begun: on a terminal at once rather than at the next tick, elsewhere
    /// in a line of its own.
    fn tell(&self, s: &mut State) {
        s.since = Instant::now();
        s.told = s.since;
        if self.tty {
            draw(s);
        } else if let Some(phase) = s.phase() {
            eprintln!("{phase} ({})…", s.status());
        }
    }
}

impl Watch for Progress {
    fn size_started(&self, workload: &str, at: u64, unit: SizeUnit) {
        let mut s = self.state.lock().unwrap();
        let first = !matches!(&s.phase, Phase::Measuring { workload: w, .. } if w == workload);
        s.phase = Phase::Measuring { workload: workload.to_string(), size: at, unit };
        if first {
            self.tell(&mut s);
        } else {
            s.since = Instant::now();
            s.told = s.since;
        }
    }

    fn size_done(&self, workload: &str, at: u64, unit: SizeUnit, median_ns: f64) {
        if !self.tty {
            let s = self.state.lock().unwrap();
            eprintln!(
                "measured toolchain={} workload={workload} size={} median={}",
                s.name,
                size(at, unit),
                duration(median_ns)
            );
        }
    }

    fn note(&self, msg: &str) {
        Progress::note(self, msg);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            t.join().ok();
            if self.tty {
                eprint!("\r\x1b[2K");
            }
        }
    }
}

/// Every 200 ms: on a terminal, redraws the line; otherwise repeats a phase that has lasted
/// [`STILL_EVERY`] since it was last told.
fn tick(s: &mut State, tty: bool) {
    if tty {
        draw(s);
    } else if let Some(line) = still(s) {
        eprintln!("{line}");
    }
}

/// Redraws the terminal's line: the counters, the phase, its elapsed time and the estimate.
fn draw(s: &State) {
    let Some(line) = live_line(s, columns().saturating_sub(1)) else { return };
    eprint!("\r\x1b[2K{line}");
    std::io::stderr().flush().ok();
}

/// The terminal's line, within `width` characters: a line wider than the terminal wraps, and
/// `\r` then redraws only its last part. Where it does not fit, the phase leaves out the
/// toolchain (named on the line above), then its elapsed time goes, and only then is it cut.
fn live_line(s: &State, width: usize) -> Option<String> {
    let phase = s.phase()?;
    let short = phase.replace(&format!(" with {}", s.toolchain), "");
    let counters = s.counters("/");
    let elapsed = duration(s.since.elapsed().as_nanos() as f64);
    let left = s.left().map(|left| format!(", {left}")).unwrap_or_default();
    let lines = [
        format!("{counters}: {phase}, {elapsed}{left}"),
        format!("{counters}: {short}, {elapsed}{left}"),
        format!("{counters}: {short}{left}"),
    ];
    let fits = lines.iter().find(|l| l.chars().count() <= width);
    Some(fits.cloned().unwrap_or_else(|| lines[2].chars().take(width).collect()))
}

/// The width of the terminal on stderr: as the terminal tells it, else `COLUMNS`, else 80.
fn columns() -> usize {
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one `winsize` to the pointer given, which lives across the call.
    let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    if ok && size.ws_col > 0 {
        return usize::from(size.ws_col);
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).filter(|&c| c > 0).unwrap_or(80)
}

/// The line repeating a phase not told for [`STILL_EVERY`], if it is due.
fn still(s: &mut State) -> Option<String> {
    let phase = s.phase()?;
    if s.told.elapsed() < STILL_EVERY {
        return None;
    }
    s.told = Instant::now();
    let elapsed = duration(s.since.elapsed().as_secs().saturating_mul(1_000_000_000) as f64);
    Some(format!("still {phase} after {elapsed} ({})", s.status()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(done: usize) -> State {
        let plan = Plan { toolchains: 2, workloads: 3, per_workload: Duration::from_secs(60), last_pace: None };
        let now = Instant::now();
        State {
            plan,
            started: now - Duration::from_secs(200),
            name: "gcc-glibc".into(),
            toolchain: "gcc-glibc 12.2.0".into(),
            nth_toolchain: 1,
            nth_workload: 2,
            done,
            side_by_side: 1,
            set_aside: Duration::ZERO,
            phase: Phase::Building { workload: "sqlite-insert".into() },
            since: now,
            told: now,
        }
    }

    #[test]
    fn the_estimate_comes_from_the_last_runs_pace_until_a_workload_is_done_then_from_the_pace() {
        // The budgets' bound (six workloads of at most 60 s) is no estimate: a check of seconds
        // read "at most 2.43 h left".
        assert_eq!(state(0).left(), None);
        let mut kept = state(0);
        kept.plan.last_pace = Some(Duration::from_secs(2));
        assert_eq!(kept.left().unwrap(), "about 12 s left at the last run's pace");
        assert_eq!(
            state(2).left().unwrap(),
            "about 6.67 min left",
            "two done in 200 s, four left: a delay of milliseconds does not show"
        );
        // Building ahead and profiling are set aside: only measuring makes the pace.
        let mut built = state(2);
        built.phase = Phase::BuildingAll { binaries: 3, built: 2, jobs: 2 };
        built.since = Instant::now() - Duration::from_secs(100);
        assert_eq!(built.left().unwrap(), "about 3.33 min left", "100 s of 200 s were building");
        built.end_set_aside_phase();
        assert_eq!(built.left().unwrap(), "about 3.33 min left");
        assert!(matches!(built.phase, Phase::Idle));
        let mut counting = state(2);
        counting.side_by_side = 2;
        counting.phase = Phase::Measuring { workload: "strchr".into(), size: 65536, unit: SizeUnit::Bytes };
        assert_eq!(
            counting.phase().unwrap(),
            "counting 2 workloads at once with gcc-glibc 12.2.0, the last begun strchr at 64 KiB"
        );
        assert_eq!(state(6).left(), None, "all measured: no 0 ns left while profiles are taken");
        assert_eq!(state(0).counters(" of "), "toolchain 1 of 2, workload 2 of 3");
        assert_eq!(state(0).phase().unwrap(), "building sqlite-insert with gcc-glibc 12.2.0");
    }

    #[test]
    fn the_live_line_keeps_the_counters_and_drops_the_toolchain_before_it_cuts() {
        let s = state(2);
        let wide = live_line(&s, 200).unwrap();
        assert!(wide.starts_with("toolchain 1/2, workload 2/3: building sqlite-insert with gcc-glibc 12.2.0, "));
        assert!(wide.ends_with("s, about 6.67 min left"), "the phase's elapsed time, then the estimate: {wide}");
        let narrow = live_line(&s, 79).unwrap();
        assert!(narrow.starts_with("toolchain 1/2, workload 2/3: building sqlite-insert, "), "{narrow}");
        assert!(narrow.ends_with(", about 6.67 min left"), "{narrow}");
        assert_eq!(
            live_line(&s, 76).unwrap(),
            "toolchain 1/2, workload 2/3: building sqlite-insert, about 6.67 min left"
        );
        assert_eq!(live_line(&s, 40).unwrap().chars().count(), 40);
    }

    #[test]
    fn a_log_repeats_a_phase_that_lasts_and_stays_quiet_otherwise() {
        let mut s = state(0);
        assert_eq!(still(&mut s), None, "just told");
        s.since -= Duration::from_secs(16);
        s.told -= STILL_EVERY;
        let line = still(&mut s).unwrap();
        assert!(line.starts_with("still building sqlite-insert with gcc-glibc 12.2.0 after 16 s (toolchain 1 of 2"));
        assert_eq!(still(&mut s), None, "told again only after another while");
        s.phase = Phase::Idle;
        s.told -= STILL_EVERY;
        assert_eq!(still(&mut s), None, "nothing going on, nothing to repeat");
    }
}
