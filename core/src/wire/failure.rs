//! What broke a workload under a toolchain, as the wire carries it, and the rules a failure obeys.

use super::fields::{check_name, err, FieldError};
use super::{MAX_DETAIL_BYTES, MAX_DETAIL_LINES, MAX_SAMPLE_NS, MAX_SIZE};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What broke a workload under a toolchain. Which of the optional fields it carries depends on
/// the kind: `exit_status` for `build_failed`; `signal` or `exit_status` for `crashed`; `size`
/// and `limit_ms` for `timed_out`; `size`, `got` and `expected` for `wrong_result`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    pub kind: FailureKind,
    /// The input size at which it failed; none when it failed before any size ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// For people: the compiler's first error lines, the workload's message. At most
    /// 4096 bytes and 20 lines; newlines and tabs are the only control characters allowed.
    #[serde(default)]
    pub detail: String,
    /// The exit status of the compiler (`build_failed`) or of the workload (`crashed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// The signal that killed the workload (`crashed`), e.g. 11 for SIGSEGV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The time limit the workload ran past (`timed_out`), in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_ms: Option<u64>,
    /// What the workload returned (`wrong_result`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub got: Option<String>,
    /// What a correct libc returns (`wrong_result`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}

/// The kinds of failure, from the first step that can break to the last.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The toolchain could not compile or link the workload.
    BuildFailed,
    /// The workload could not prepare its input or did not speak the harness's protocol.
    SetupFailed,
    /// The workload was killed by a signal or exited with an error.
    Crashed,
    /// One size ran past the time limit, before enough sizes were measured.
    TimedOut,
    /// The workload counted something other than what a correct libc counts.
    WrongResult,
}

impl FailureKind {
    pub const ALL: [FailureKind; 5] = [
        FailureKind::BuildFailed,
        FailureKind::SetupFailed,
        FailureKind::Crashed,
        FailureKind::TimedOut,
        FailureKind::WrongResult,
    ];

    /// The wire name, e.g. `wrong_result`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::BuildFailed => "build_failed",
            FailureKind::SetupFailed => "setup_failed",
            FailureKind::Crashed => "crashed",
            FailureKind::TimedOut => "timed_out",
            FailureKind::WrongResult => "wrong_result",
        }
    }

    /// For people, e.g. `wrong result`.
    pub fn label(self) -> &'static str {
        match self {
            FailureKind::BuildFailed => "build failed",
            FailureKind::SetupFailed => "setup failed",
            FailureKind::Crashed => "crashed",
            FailureKind::TimedOut => "timed out",
            FailureKind::WrongResult => "wrong result",
        }
    }

    pub fn parse(s: &str) -> Option<FailureKind> {
        FailureKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Failure {
    /// Checks the bounds, and that the failure carries what its kind needs and nothing else.
    pub fn validate(&self, at: &str) -> Result<(), FieldError> {
        if let Some(size) = self.size {
            if size == 0 || size > MAX_SIZE {
                return Err(err(format!("{at}.size"), format!("must be between 1 and {MAX_SIZE}")));
            }
        }
        check_detail(&format!("{at}.detail"), &self.detail)?;
        for (name, value) in [("got", &self.got), ("expected", &self.expected)] {
            if let Some(v) = value {
                check_name(&format!("{at}.{name}"), v)?;
            }
        }
        if let Some(sig) = self.signal {
            if !(1..=64).contains(&sig) {
                return Err(err(format!("{at}.signal"), "must be a signal number from 1 to 64"));
            }
        }
        if let Some(ms) = self.limit_ms {
            if ms == 0 || ms as f64 > MAX_SAMPLE_NS / 1e6 {
                return Err(err(format!("{at}.limit_ms"), "must be positive and at most a week"));
            }
        }
        let kind = self.kind.as_str();
        let given = [
            ("size", self.size.is_some()),
            ("exit_status", self.exit_status.is_some()),
            ("signal", self.signal.is_some()),
            ("limit_ms", self.limit_ms.is_some()),
            ("got", self.got.is_some()),
            ("expected", self.expected.is_some()),
        ];
        let (required, allowed): (&[&str], &[&str]) = match self.kind {
            FailureKind::BuildFailed => (&[], &["exit_status", "signal"]),
            FailureKind::SetupFailed => (&[], &["size", "exit_status"]),
            FailureKind::Crashed => (&["size"], &["size", "exit_status", "signal"]),
            FailureKind::TimedOut => (&["size", "limit_ms"], &["size", "limit_ms"]),
            FailureKind::WrongResult => (&["size", "got", "expected"], &["size", "got", "expected"]),
        };
        for (name, present) in given {
            if present && !allowed.contains(&name) {
                return Err(err(format!("{at}.{name}"), format!("is not used by a {kind} failure")));
            }
            if !present && required.contains(&name) {
                return Err(err(format!("{at}.{name}"), format!("is required for a {kind} failure")));
            }
        }
        if self.kind == FailureKind::Crashed && self.signal.is_none() && self.exit_status.is_none() {
            return Err(err(format!("{at}.signal"), "a crashed failure needs a signal or an exit_status"));
        }
        Ok(())
    }
}

/// ` (SIGSEGV)` for the signals a crashing workload usually dies of; empty for the others.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        4 => " (SIGILL)",
        6 => " (SIGABRT)",
        7 => " (SIGBUS)",
        8 => " (SIGFPE)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        _ => "",
    }
}

/// A failure's detail: bounded, and no control characters but newlines and tabs.
fn check_detail(field: &str, value: &str) -> Result<(), FieldError> {
    if value.len() > MAX_DETAIL_BYTES {
        return Err(err(field, format!("is {} bytes long; the limit is {MAX_DETAIL_BYTES}", value.len())));
    }
    let lines = value.lines().count();
    if lines > MAX_DETAIL_LINES {
        return Err(err(field, format!("has {lines} lines; the limit is {MAX_DETAIL_LINES}")));
    }
    if value.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(err(field, "must not contain control characters other than newline and tab"));
    }
    Ok(())
}
