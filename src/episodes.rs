//! Failures of work the server repeats in the background (summary passes, the webhook outbox,
//! retention, SQLite's checkpoints) are logged once per episode, from the first failure to the
//! next success, not once per attempt: a full disk fills the log with one line, not one a second.

use std::sync::atomic::{AtomicU64, Ordering};

/// One kind of background work's run of failures: none while it succeeds.
#[derive(Debug)]
pub struct Episode {
    /// What fails, for the log lines: "summary passes", "the webhook outbox".
    what: &'static str,
    /// Failures since the last success; 0 while it succeeds.
    failures: AtomicU64,
}

impl Episode {
    pub const fn new(what: &'static str) -> Episode {
        Episode { what, failures: AtomicU64::new(0) }
    }

    /// Whether the latest attempt failed.
    pub fn failing(&self) -> bool {
        self.failures.load(Ordering::Relaxed) > 0
    }

    /// Notes a failure; the first of an episode is logged as a warning with `error`, the rest at
    /// debug level only.
    pub fn failed(&self, error: &dyn std::fmt::Display) {
        let what = self.what;
        if self.failures.fetch_add(1, Ordering::Relaxed) == 0 {
            tracing::warn!(error = %error, "{what} failing; retried by itself, and logged again once it succeeds");
        } else {
            tracing::debug!(error = %error, "{what} still failing");
        }
    }

    /// Notes a success; ends an episode of failures with one line saying how many there were.
    pub fn succeeded(&self) {
        let failures = self.failures.swap(0, Ordering::Relaxed);
        if failures > 0 {
            let what = self.what;
            tracing::info!(failures, "{what} succeeding again");
        }
    }

    /// `succeeded` or `failed`, by `outcome`.
    pub fn note<T, E: std::fmt::Display>(&self, outcome: &Result<T, E>) {
        match outcome {
            Ok(_) => self.succeeded(),
            Err(e) => self.failed(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_episode_runs_from_the_first_failure_to_the_next_success() {
        let e = Episode::new("test work");
        assert!(!e.failing());
        e.note::<(), _>(&Err("disk full"));
        e.note::<(), _>(&Err("disk full"));
        assert!(e.failing());
        assert_eq!(e.failures.load(Ordering::Relaxed), 2);
        e.note::<(), &str>(&Ok(()));
        assert!(!e.failing());
    }
}
