//! The progress display on stderr: a live line on a terminal, plain log lines otherwise.

use crate::measure::Watch;
use slopewatch_core::format::{duration, size};
use slopewatch_core::wire::SizeUnit;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
struct State {
    toolchain: String,
    workload: String,
    size: u64,
    unit: Option<SizeUnit>,
    since: Option<Instant>,
}

/// Progress reporting to stderr. On a terminal one line is redrawn in place with the elapsed
/// time; elsewhere (cron, CI) each finished size is one log line.
pub struct Progress {
    state: Arc<Mutex<State>>,
    tty: bool,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    pub fn new() -> Progress {
        let tty = std::io::stderr().is_terminal();
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = tty.then(|| {
            let (state, stop) = (state.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    draw(&state.lock().unwrap());
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
        });
        Progress { state, tty, stop, ticker }
    }

    pub fn set_toolchain(&self, name: &str) {
        self.state.lock().unwrap().toolchain = name.to_string();
    }

    /// A message that must not be overwritten by the progress line.
    pub fn note(&self, msg: &str) {
        let _guard = self.state.lock().unwrap();
        if self.tty {
            eprint!("\r\x1b[2K");
        }
        eprintln!("{msg}");
    }
}

impl Watch for Progress {
    fn size_started(&self, workload: &str, size: u64, unit: SizeUnit) {
        let mut s = self.state.lock().unwrap();
        s.workload = workload.to_string();
        s.size = size;
        s.unit = Some(unit);
        s.since = Some(Instant::now());
    }

    fn size_done(&self, workload: &str, at: u64, median_ns: f64) {
        if !self.tty {
            let s = self.state.lock().unwrap();
            eprintln!(
                "measured toolchain={} workload={workload} size={} median={}",
                s.toolchain,
                size(at, s.unit.unwrap_or(SizeUnit::Bytes)),
                duration(median_ns)
            );
        }
    }

    fn note(&self, msg: &str) {
        Progress::note(self, msg);
    }
}

impl Default for Progress {
    fn default() -> Progress {
        Progress::new()
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            t.join().ok();
            eprint!("\r\x1b[2K");
        }
    }
}

fn draw(s: &State) {
    let Some(since) = s.since else { return };
    eprint!(
        "\r\x1b[2K{}  {}  {}  {:.1}s",
        s.toolchain,
        s.workload,
        size(s.size, s.unit.unwrap_or(SizeUnit::Bytes)),
        since.elapsed().as_secs_f64()
    );
    std::io::stderr().flush().ok();
}
