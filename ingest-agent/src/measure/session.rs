//! One Valgrind process for many sizes: a harness binary started once under callgrind, told one
//! size (and, for the contract catalogue, one probe) per line on its stdin, answering each with
//! its JSON line (`SLOPEWATCH_SESSION` in `c/slopewatch.h`).
//!
//! Valgrind takes 0.04 s to start a static musl binary and 0.2–0.4 s a dynamically linked glibc
//! one, longer than most counted sizes take; a check of the built-ins and the catalogue starts it
//! once per toolchain rather than once per size. The session stays open while the sweep asks for
//! sizes of the same binary, and ends when another binary is measured, when the workload fails
//! (a failure ends the process, as it ends a single size), or when a size runs past its time.

use crate::measure::failure;
use crate::measure::meter;
use slopewatch_core::wire::Failure;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// A harness binary running under Valgrind, waiting for its next size.
pub(super) struct Session {
    binary: PathBuf,
    child: Child,
    /// Closed when the session ends, which ends the harness's loop.
    stdin: Option<ChildStdin>,
    /// The JSON lines it prints, as it prints them; closed when it exits.
    lines: Receiver<String>,
    /// Everything it printed on stderr, Valgrind's messages included, and the thread reading it,
    /// which ends when the process has gone.
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<JoinHandle<()>>,
    /// Where callgrind dumps its counts, one file per call of `sw_run`; emptied as they are read.
    counts: tempfile::TempDir,
}

/// What one size of a session gave: the JSON line and one count per repetition.
pub(super) struct SessionAnswer {
    pub line: String,
    pub counts: Vec<u64>,
}

/// How a size asked of a session went wrong.
pub(super) enum Broke {
    /// The workload failed: the process ended with this failure.
    Failed(Box<Failure>),
    /// It ran past `deadline` and was stopped.
    TimedOut,
}

impl Session {
    /// Starts `binary` under Valgrind in session mode.
    pub(super) fn start(binary: &Path) -> Result<Session, String> {
        let counts = meter::counts_dir()?;
        let mut cmd: Command = meter::under_valgrind(binary, counts.path(), true).map_err(|e| format!("{e:#}"))?;
        cmd.env("SLOPEWATCH_MEASURE", "valgrind").env("SLOPEWATCH_SESSION", "1");
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the workload: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let lines = json_lines(child.stdout.take());
        let stderr = Arc::new(Mutex::new(String::new()));
        let stderr_reader = Some(collect(child.stderr.take(), Arc::clone(&stderr)));
        Ok(Session { binary: binary.to_path_buf(), child, stdin: Some(stdin), lines, stderr, stderr_reader, counts })
    }

    /// Whether it runs `binary`.
    pub(super) fn runs(&self, binary: &Path) -> bool {
        self.binary == binary
    }

    /// Measures `size` with `reps` repetitions (of `probe`, for the catalogue) before `deadline`.
    /// After an error the session is spent: the process has ended, or was killed.
    pub(super) fn measure(
        &mut self,
        size: u64,
        reps: u32,
        probe: Option<&str>,
        deadline: Instant,
    ) -> Result<SessionAnswer, Broke> {
        let stderr_from = self.stderr.lock().map_or(0, |s| s.len());
        let request = format!("{size} {reps} {}\n", probe.unwrap_or(""));
        // A write to a process that has already ended fails; what it said is read below.
        let sent = self
            .stdin
            .as_mut()
            .is_some_and(|stdin| stdin.write_all(request.as_bytes()).and_then(|()| stdin.flush()).is_ok());
        let answer = if sent {
            self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        } else {
            Err(RecvTimeoutError::Disconnected)
        };
        match answer {
            Ok(line) => {
                let counts = self.read_dumps(reps as usize).map_err(|why| self.fail(size, &why))?;
                Ok(SessionAnswer { line, counts })
            }
            Err(RecvTimeoutError::Timeout) => {
                self.child.kill().ok();
                self.child.wait().ok();
                Err(Broke::TimedOut)
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.wait();
                let stderr = self.stderr_after(stderr_from);
                Err(Broke::Failed(Box::new(match status {
                    Ok(status) if !status.success() => failure::exited(status, &stderr, size),
                    Ok(_) => failure::setup_failed(Some(size), "ended the session without answering"),
                    Err(e) => failure::setup_failed(Some(size), &format!("cannot wait for the workload: {e}")),
                })))
            }
        }
    }

    /// The `reps` dumps callgrind wrote for the size just answered, in call order, removed once
    /// read. Callgrind writes each as `sw_run` returns, before the harness prints its line.
    fn read_dumps(&mut self, reps: usize) -> Result<Vec<u64>, String> {
        let counts = meter::read_counts(self.counts.path(), true)?;
        let dumps = std::fs::read_dir(self.counts.path()).map_err(|e| format!("cannot read Valgrind's counts: {e}"))?;
        // `cg.PID.N`, and the dump at exit `cg.PID` of each line's process (the harness forks one
        // per line), but not the session's own, which callgrind writes when it ends.
        let own = format!("cg.{}", self.child.id());
        for entry in dumps.flatten().filter(|e| e.file_name().to_string_lossy() != own) {
            std::fs::remove_file(entry.path()).ok();
        }
        if counts.len() != reps {
            return Err(format!("Valgrind counted {} calls of sw_run for {reps} repetitions", counts.len()));
        }
        Ok(counts)
    }

    /// Kills the process after an answer that cannot be used.
    fn fail(&mut self, size: u64, why: &str) -> Broke {
        self.child.kill().ok();
        self.child.wait().ok();
        Broke::Failed(Box::new(failure::setup_failed(Some(size), why)))
    }

    /// What it printed on stderr from byte `from` on, read to the end: the process has gone, so
    /// the reader ends with the pipe.
    fn stderr_after(&mut self, from: usize) -> String {
        if let Some(reader) = self.stderr_reader.take() {
            reader.join().ok();
        }
        self.stderr.lock().map(|s| s.get(from..).unwrap_or("").to_string()).unwrap_or_default()
    }
}

impl Drop for Session {
    /// Ends the process: its stdin closes, and a harness waiting for a line exits once the child
    /// of its last line is reaped (killed where it has not within [`END_WITHIN`]), so no child of
    /// a line is left behind unreaped.
    fn drop(&mut self) {
        self.stdin = None;
        let began = Instant::now();
        while began.elapsed() < END_WITHIN {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// How long an ended session may take to exit: Valgrind writes its last dump on the way.
const END_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Sends each line of `pipe` that holds a JSON object; the channel closes with the pipe.
fn json_lines(pipe: Option<impl Read + Send + 'static>) -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Some(pipe) = pipe else { return };
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if line.trim_start().starts_with('{') && tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Appends what `pipe` carries to `into` until it closes, keeping the first MiB.
fn collect(pipe: Option<impl Read + Send + 'static>, into: Arc<Mutex<String>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let Some(mut pipe) = pipe else { return };
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            if let Ok(mut s) = into.lock() {
                if s.len() < 1 << 20 {
                    s.push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            }
        }
    })
}
