//! A workload's failure as its run reports it: how the compiler or the workload ended, read from
//! exit statuses and the harness's codes, and what it printed made fit to send.

use crate::builds::toolchain::CompileError;
use slopewatch_core::wire::{Failure, FailureKind, MAX_DETAIL_BYTES, MAX_DETAIL_LINES};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

/// The harness's exit status when the workload could not set up, or was called wrongly.
pub const EXIT_SETUP_FAILED: i32 = 2;
/// The harness's exit status when the hit count differs from what a correct libc gives; it prints
/// `wrong result: GOT hits, expected EXPECTED` on stderr.
pub const EXIT_WRONG_RESULT: i32 = 3;
/// The contract catalogue's exit status when the libc lacks the probe's function; it prints `not
/// provided: NAME` on stderr.
pub const EXIT_NOT_PROVIDED: i32 = 4;

fn failure(kind: FailureKind, size: Option<u64>, output: &str) -> Failure {
    Failure {
        kind,
        size,
        detail: detail(output),
        exit_status: None,
        signal: None,
        limit_ms: None,
        got: None,
        expected: None,
    }
}

/// The toolchain could not build the workload.
pub fn build_failed(e: &CompileError) -> Failure {
    Failure { exit_status: e.exit_status, signal: e.signal, ..failure(FailureKind::BuildFailed, None, &e.output) }
}

/// The workload ran at `size` and ended with `status`, not successfully.
pub fn exited(status: ExitStatus, stderr: &str, size: u64) -> Failure {
    if let Some(signal) = status.signal() {
        return Failure { signal: Some(signal), ..failure(FailureKind::Crashed, Some(size), stderr) };
    }
    let code = status.code();
    match code {
        Some(EXIT_WRONG_RESULT) => {
            if let Some((got, expected)) = wrong_result(stderr) {
                return Failure {
                    got: Some(got),
                    expected: Some(expected),
                    ..failure(FailureKind::WrongResult, Some(size), stderr)
                };
            }
        }
        Some(EXIT_SETUP_FAILED | EXIT_NOT_PROVIDED) => {
            return Failure { exit_status: code, ..failure(FailureKind::SetupFailed, Some(size), stderr) };
        }
        _ => {}
    }
    // Any other status, and a 3 without the harness's message, is the workload's own error.
    Failure { exit_status: code, ..failure(FailureKind::Crashed, Some(size), stderr) }
}

/// Whether the workload stopped because the libc lacks its function: not a failure, a status of
/// its own.
pub fn is_not_provided(f: &Failure) -> bool {
    f.kind == FailureKind::SetupFailed && f.exit_status == Some(EXIT_NOT_PROVIDED)
}

/// The workload computed `got` at `size` where other toolchains computed `expected`.
pub fn differs(size: u64, got: &str, expected: &str, message: &str) -> Failure {
    Failure {
        got: Some(got.to_string()),
        expected: Some(expected.to_string()),
        ..failure(FailureKind::WrongResult, Some(size), message)
    }
}

/// The workload ran past `limit` at `size` and was stopped.
pub fn timed_out(size: u64, limit: Duration) -> Failure {
    let limit_ms = (limit.as_millis() as u64).max(1);
    Failure { limit_ms: Some(limit_ms), ..failure(FailureKind::TimedOut, Some(size), "") }
}

/// The workload could not be started, or did not speak the harness's protocol.
pub fn setup_failed(size: Option<u64>, message: &str) -> Failure {
    failure(FailureKind::SetupFailed, size, message)
}

/// `(got, expected)` from the harness's `wrong result: GOT hits, expected EXPECTED`.
fn wrong_result(stderr: &str) -> Option<(String, String)> {
    let line = stderr.lines().find_map(|l| l.trim().strip_prefix("wrong result: "))?;
    let (got, expected) = line.split_once(" hits, expected ")?;
    let got: i64 = got.trim().parse().ok()?;
    let expected: i64 = expected.trim().parse().ok()?;
    Some((got.to_string(), expected.to_string()))
}

/// What a compiler or workload printed, as a failure's detail: escape sequences (colours, cursor
/// moves, terminal titles) and control characters other than newline and tab removed, surrounding
/// blank space trimmed, and the first [`MAX_DETAIL_LINES`] lines kept within [`MAX_DETAIL_BYTES`].
pub fn detail(output: &str) -> String {
    let mut clean = String::with_capacity(output.len().min(2 * MAX_DETAIL_BYTES));
    let mut chars = output.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            match chars.next() {
                // CSI: parameters and intermediates up to a final byte in @..~.
                Some('[') => while chars.next().is_some_and(|c| !('@'..='~').contains(&c)) {},
                // OSC (a title, a hyperlink): up to BEL or ESC \.
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            }
            continue;
        }
        if !c.is_control() || c == '\n' || c == '\t' {
            clean.push(c);
        }
        if clean.len() > 4 * MAX_DETAIL_BYTES {
            break;
        }
    }
    let lines: Vec<&str> = clean.trim().lines().take(MAX_DETAIL_LINES).map(str::trim_end).collect();
    let mut detail = lines.join("\n");
    if detail.len() > MAX_DETAIL_BYTES {
        let mut end = MAX_DETAIL_BYTES;
        while !detail.is_char_boundary(end) {
            end -= 1;
        }
        detail.truncate(end);
    }
    detail
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(raw: i32) -> ExitStatus {
        ExitStatus::from_raw(raw)
    }

    fn valid(f: &Failure) {
        f.validate("failure").unwrap_or_else(|e| panic!("{f:?}: {e}"));
    }

    #[test]
    fn escape_sequences_and_control_characters_never_reach_the_detail() {
        let hostile = "\u{1b}[01m\u{1b}[Kmain.c:3:1:\u{1b}[m\u{1b}[K \u{1b}[01;31m\u{1b}[Kerror: \u{1b}[m\u{1b}[Kexpected ';'\r\n\
                       \u{1b}]0;owned\u{7}\u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\ bell\u{7} nul\u{0} tab\there\n";
        let d = detail(hostile);
        assert_eq!(d, "main.c:3:1: error: expected ';'\nlink bell nul tab\there");
        let f = setup_failed(None, hostile);
        valid(&f);
    }

    #[test]
    fn long_output_keeps_its_first_lines_within_the_byte_limit() {
        let many = (1..=100).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n");
        let d = detail(&many);
        assert_eq!(d.lines().count(), MAX_DETAIL_LINES);
        assert!(d.starts_with("line 1\n") && d.ends_with("line 20"), "{d}");
        let wide = "é".repeat(3 * MAX_DETAIL_BYTES);
        let d = detail(&wide);
        assert!(d.len() <= MAX_DETAIL_BYTES && d.len() > MAX_DETAIL_BYTES - 2);
    }

    #[test]
    fn exit_statuses_are_read_as_the_harness_means_them() {
        let wrong = exited(status(3 << 8), "wrong result: -1 hits, expected 37449\n", 262144);
        assert_eq!(
            (wrong.kind, wrong.got.as_deref(), wrong.expected.as_deref()),
            (FailureKind::WrongResult, Some("-1"), Some("37449"))
        );
        let setup = exited(status(2 << 8), "workload set-up failed\n", 1024);
        assert_eq!(
            (setup.kind, setup.exit_status, setup.detail.as_str()),
            (FailureKind::SetupFailed, Some(2), "workload set-up failed")
        );
        let segv = exited(status(11), "", 4096);
        assert_eq!((segv.kind, segv.signal, segv.size), (FailureKind::Crashed, Some(11), Some(4096)));
        let own = exited(status(3 << 8), "my own error\n", 8);
        assert_eq!((own.kind, own.exit_status), (FailureKind::Crashed, Some(3)), "a 3 without the harness's message");
        let other = exited(status(1 << 8), "boom", 8);
        assert_eq!((other.kind, other.exit_status), (FailureKind::Crashed, Some(1)));
        let late = timed_out(512, Duration::from_micros(10));
        assert_eq!((late.kind, late.limit_ms), (FailureKind::TimedOut, Some(1)));
        for f in [wrong, setup, segv, own, other, late] {
            valid(&f);
        }
    }
}
