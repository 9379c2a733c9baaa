//! Counters and latency histograms, exposed at `/metrics` in the Prometheus text format.
//!
//! Hand-rolled on atomics and one mutex-guarded map: the server's label sets are small and fixed
//! (routes, status codes, rejection reasons), which a full metrics stack would not repay.

use crate::model::AttemptOutcome;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the request latency buckets, in seconds.
const LATENCY_BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

/// The methods counted by name; any other is counted as `other`.
const METHODS: [&str; 9] = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"];

#[derive(Default)]
struct Histogram {
    buckets: [u64; LATENCY_BUCKETS.len()],
    count: u64,
    sum: f64,
}

#[derive(Default)]
struct Requests {
    /// (route, method, status) → count.
    counts: BTreeMap<(String, String, u16), u64>,
    latency: BTreeMap<String, Histogram>,
}

/// Why the server turned a request away before it was done with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The body is over its route's limit, as declared or as it arrived (413).
    BodyTooLarge,
    /// The body arrived slower than the server's minimum rate (408).
    BodyTooSlow,
    /// One client address had as many requests without a token in progress as it may (503).
    AnonymousCap,
    /// Requests without a token held all the request slots they may take (503).
    AnonymousShare,
    /// Every request slot was taken (503).
    Busy,
    /// The request ran past the request timeout (503).
    RequestTimeout,
    /// Requests without a token held every database connection they may (503).
    DatabaseShare,
}

impl Refusal {
    pub const ALL: [Refusal; 7] = [
        Refusal::BodyTooLarge,
        Refusal::BodyTooSlow,
        Refusal::AnonymousCap,
        Refusal::AnonymousShare,
        Refusal::Busy,
        Refusal::RequestTimeout,
        Refusal::DatabaseShare,
    ];

    /// The `reason` label.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::BodyTooLarge => "body_too_large",
            Refusal::BodyTooSlow => "body_too_slow",
            Refusal::AnonymousCap => "anonymous_cap",
            Refusal::AnonymousShare => "anonymous_share",
            Refusal::Busy => "busy",
            Refusal::RequestTimeout => "request_timeout",
            Refusal::DatabaseShare => "database_share",
        }
    }
}

/// Every metric the server keeps.
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<Requests>,
    runs_ingested: AtomicU64,
    samples_ingested: AtomicU64,
    runs_repeated: AtomicU64,
    exposure_scans: AtomicU64,
    rejections: Mutex<BTreeMap<&'static str, u64>>,
    /// Requests turned away by the server's limits, by `Refusal` (in `Refusal::ALL`'s order).
    refusals: [AtomicU64; Refusal::ALL.len()],
    webhook_delivered: AtomicU64,
    webhook_failed: AtomicU64,
    webhook_gave_up: AtomicU64,
    webhook_refused: AtomicU64,
    /// Work this process claimed from what replicas on one database share: the counts summed over
    /// replicas equal the work done when no two did the same.
    summary_runs_claimed: AtomicU64,
    deliveries_claimed: AtomicU64,
    retention_passes: AtomicU64,
    retention_runs_pruned: AtomicU64,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// Values read when `/metrics` is scraped.
pub struct Gauges {
    /// Database connections (open, idle).
    pub pool: (u32, usize),
    /// Deliveries waiting in the alert outbox; `None` when the database could not be asked.
    pub outbox_pending: Option<i64>,
    /// Deliveries their targets refused, waiting for a person to resend them; `None` as above.
    pub outbox_refused: Option<i64>,
    /// Stored runs their version summaries have not taken in yet; `None` as above.
    pub summaries_pending: Option<i64>,
    /// Runs the SQLite writer holds, waiting or being written (always 0 on Postgres).
    pub runs_queued: usize,
    /// Writes that failed for the storage's sake so far, by kind (`StorageFault::kind`).
    pub storage_errors: Vec<(&'static str, u64)>,
}

impl Metrics {
    /// One request: `route` is the matched route pattern (empty when none matched), so labels
    /// stay a fixed set whatever paths and methods clients send.
    pub fn record_request(&self, route: &str, method: &str, status: u16, latency: Duration) {
        let route = if route.is_empty() { "unmatched" } else { route };
        let method = METHODS.into_iter().find(|m| *m == method).unwrap_or("other");
        let mut guard = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        *guard.counts.entry((route.to_string(), method.to_string(), status)).or_default() += 1;
        let h = guard.latency.entry(route.to_string()).or_default();
        let secs = latency.as_secs_f64();
        for (i, bound) in LATENCY_BUCKETS.iter().enumerate() {
            if secs <= *bound {
                h.buckets[i] += 1;
            }
        }
        h.count += 1;
        h.sum += secs;
    }

    pub fn record_run(&self, samples: usize) {
        self.runs_ingested.fetch_add(1, Ordering::Relaxed);
        self.samples_ingested.fetch_add(samples as u64, Ordering::Relaxed);
    }

    pub fn record_repeated_run(&self) {
        self.runs_repeated.fetch_add(1, Ordering::Relaxed);
    }

    /// An exposure scan stored (not a resubmission of one).
    pub fn record_exposure_scan(&self) {
        self.exposure_scans.fetch_add(1, Ordering::Relaxed);
    }

    /// A refused submission, by the error's stable code (e.g. `invalid_field`, `unauthorized`).
    pub fn record_rejection(&self, reason: &'static str) {
        *self.rejections.lock().unwrap_or_else(|e| e.into_inner()).entry(reason).or_default() += 1;
    }

    /// A request turned away by one of the server's limits.
    pub fn record_refusal(&self, why: Refusal) {
        self.refusals[why as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Requests turned away for `why` so far.
    pub fn refused(&self, why: Refusal) -> u64 {
        self.refusals[why as usize].load(Ordering::Relaxed)
    }

    /// One webhook delivery attempt, by what became of the delivery.
    pub fn record_webhook_attempt(&self, outcome: &AttemptOutcome) {
        let counter = match outcome {
            AttemptOutcome::Delivered => &self.webhook_delivered,
            AttemptOutcome::RetryAt(_) => &self.webhook_failed,
            AttemptOutcome::GaveUp => &self.webhook_gave_up,
            AttemptOutcome::Refused => &self.webhook_refused,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Pending runs a summary pass of this process took in (its transaction committed).
    pub fn record_summary_claims(&self, runs: usize) {
        self.summary_runs_claimed.fetch_add(runs as u64, Ordering::Relaxed);
    }

    /// Deliveries this process's webhook sender claimed, one attempt each.
    pub fn record_deliveries_claimed(&self, deliveries: usize) {
        self.deliveries_claimed.fetch_add(deliveries as u64, Ordering::Relaxed);
    }

    /// A retention pass this process claimed and ran, and the runs whose samples it removed.
    pub fn record_retention_pass(&self, runs_pruned: u64) {
        self.retention_passes.fetch_add(1, Ordering::Relaxed);
        self.retention_runs_pruned.fetch_add(runs_pruned, Ordering::Relaxed);
    }

    /// The Prometheus text exposition.
    pub fn render(&self, gauges: &Gauges) -> String {
        let mut out = String::new();
        let requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        let (counts, histograms) = (&requests.counts, &requests.latency);
        out.push_str("# HELP slopewatch_http_requests_total HTTP requests by route, method and status.\n");
        out.push_str("# TYPE slopewatch_http_requests_total counter\n");
        for ((route, method, status), n) in counts {
            let _ = writeln!(
                out,
                "slopewatch_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{status}\"}} {n}",
                escape(route),
                escape(method)
            );
        }
        out.push_str("# HELP slopewatch_http_request_duration_seconds HTTP request latency by route.\n");
        out.push_str("# TYPE slopewatch_http_request_duration_seconds histogram\n");
        for (route, h) in histograms {
            let route = escape(route);
            for (bound, n) in LATENCY_BUCKETS.iter().zip(h.buckets) {
                let _ = writeln!(
                    out,
                    "slopewatch_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {n}"
                );
            }
            let _ = writeln!(
                out,
                "slopewatch_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(out, "slopewatch_http_request_duration_seconds_sum{{route=\"{route}\"}} {}", h.sum);
            let _ = writeln!(out, "slopewatch_http_request_duration_seconds_count{{route=\"{route}\"}} {}", h.count);
        }
        counter(&mut out, "slopewatch_runs_ingested_total", "Runs stored.", self.runs_ingested.load(Ordering::Relaxed));
        counter(
            &mut out,
            "slopewatch_samples_ingested_total",
            "Timed samples stored.",
            self.samples_ingested.load(Ordering::Relaxed),
        );
        counter(
            &mut out,
            "slopewatch_runs_repeated_total",
            "Resubmissions of runs already stored (answered, not stored again).",
            self.runs_repeated.load(Ordering::Relaxed),
        );
        out.push_str("# HELP slopewatch_ingest_rejections_total Refused run submissions by reason.\n");
        out.push_str("# TYPE slopewatch_ingest_rejections_total counter\n");
        for (reason, n) in &*self.rejections.lock().unwrap_or_else(|e| e.into_inner()) {
            let _ = writeln!(out, "slopewatch_ingest_rejections_total{{reason=\"{reason}\"}} {n}");
        }
        out.push_str(
            "# HELP slopewatch_requests_refused_total Requests the server's limits turned away, by reason: \
             body_too_large, body_too_slow, anonymous_cap, anonymous_share, busy, request_timeout, \
             database_share.\n",
        );
        out.push_str("# TYPE slopewatch_requests_refused_total counter\n");
        for why in Refusal::ALL {
            let _ =
                writeln!(out, "slopewatch_requests_refused_total{{reason=\"{}\"}} {}", why.as_str(), self.refused(why));
        }
        out.push_str(
            "# HELP slopewatch_webhook_attempts_total Webhook delivery attempts by outcome: delivered; failed, \
             to be retried; gave_up, failed and not to be retried; refused, refused by the target too \
             often in a row to be retried.\n",
        );
        out.push_str("# TYPE slopewatch_webhook_attempts_total counter\n");
        for (outcome, counter) in [
            ("delivered", &self.webhook_delivered),
            ("failed", &self.webhook_failed),
            ("gave_up", &self.webhook_gave_up),
            ("refused", &self.webhook_refused),
        ] {
            let _ = writeln!(
                out,
                "slopewatch_webhook_attempts_total{{outcome=\"{outcome}\"}} {}",
                counter.load(Ordering::Relaxed)
            );
        }
        for (name, help, counted) in [
            (
                "slopewatch_exposure_scans_stored_total",
                "Exposure scans of built artifacts stored (resubmissions not counted).",
                &self.exposure_scans,
            ),
            (
                "slopewatch_summary_runs_claimed_total",
                "Pending runs this server's summary passes took in; summed over replicas, the runs stored.",
                &self.summary_runs_claimed,
            ),
            (
                "slopewatch_webhook_deliveries_claimed_total",
                "Webhook deliveries this server claimed from the outbox, one attempt each.",
                &self.deliveries_claimed,
            ),
            (
                "slopewatch_retention_passes_total",
                "Retention passes this server claimed and ran (one per period across replicas).",
                &self.retention_passes,
            ),
            (
                "slopewatch_retention_runs_pruned_total",
                "Runs whose raw samples this server's retention passes removed.",
                &self.retention_runs_pruned,
            ),
        ] {
            counter(&mut out, name, help, counted.load(Ordering::Relaxed));
        }
        if let Some(pending) = gauges.outbox_pending {
            gauge(
                &mut out,
                "slopewatch_webhook_outbox_pending",
                "Webhook deliveries waiting in the outbox.",
                pending as f64,
            );
        }
        if let Some(refused) = gauges.outbox_refused {
            gauge(
                &mut out,
                "slopewatch_webhook_outbox_refused",
                "Webhook deliveries their targets refused, until resent.",
                refused as f64,
            );
        }
        if let Some(pending) = gauges.summaries_pending {
            gauge(
                &mut out,
                "slopewatch_summaries_pending",
                "Stored runs their version summaries have not taken in yet.",
                pending as f64,
            );
        }
        gauge(
            &mut out,
            "slopewatch_runs_queued",
            "Runs handed to the SQLite writer and not yet answered (0 on Postgres).",
            gauges.runs_queued as f64,
        );
        out.push_str(
            "# HELP slopewatch_storage_errors_total Writes the database refused for the storage's sake, by kind: \
             full, io, locked, read_only, exhausted.\n",
        );
        out.push_str("# TYPE slopewatch_storage_errors_total counter\n");
        for (kind, n) in &gauges.storage_errors {
            let _ = writeln!(out, "slopewatch_storage_errors_total{{kind=\"{kind}\"}} {n}");
        }
        gauge(&mut out, "slopewatch_db_pool_connections", "Database connections open.", gauges.pool.0 as f64);
        gauge(&mut out, "slopewatch_db_pool_idle", "Database connections open and idle.", gauges.pool.1 as f64);
        out
    }
}

fn counter(out: &mut String, name: &str, help: &str, value: u64) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}");
}

fn gauge(out: &mut String, name: &str, help: &str, value: f64) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}");
}

/// Label values escape backslash, quote and newline.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_and_bucketed() {
        let m = Metrics::default();
        m.record_request("/api/v1/runs", "POST", 201, Duration::from_millis(3));
        m.record_request("/api/v1/runs", "POST", 201, Duration::from_millis(30));
        m.record_request("", "GET", 404, Duration::from_millis(1));
        m.record_rejection("invalid_field");
        m.record_run(600);
        m.record_webhook_attempt(&AttemptOutcome::RetryAt(time::OffsetDateTime::UNIX_EPOCH));
        m.record_webhook_attempt(&AttemptOutcome::RetryAt(time::OffsetDateTime::UNIX_EPOCH));
        m.record_webhook_attempt(&AttemptOutcome::Delivered);
        m.record_webhook_attempt(&AttemptOutcome::Refused);
        m.record_summary_claims(7);
        m.record_deliveries_claimed(2);
        m.record_retention_pass(4);
        m.record_refusal(Refusal::AnonymousCap);
        m.record_refusal(Refusal::AnonymousCap);
        let text = m.render(&Gauges {
            pool: (4, 3),
            outbox_pending: Some(5),
            outbox_refused: Some(1),
            summaries_pending: Some(2),
            runs_queued: 3,
            storage_errors: vec![("full", 2), ("io", 0)],
        });
        assert!(
            text.contains("slopewatch_http_requests_total{route=\"/api/v1/runs\",method=\"POST\",status=\"201\"} 2")
        );
        assert!(text.contains("slopewatch_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"} 1"));
        assert!(text.contains("slopewatch_http_request_duration_seconds_bucket{route=\"/api/v1/runs\",le=\"0.005\"} 1"));
        assert!(text.contains("slopewatch_http_request_duration_seconds_bucket{route=\"/api/v1/runs\",le=\"0.05\"} 2"));
        assert!(text.contains("slopewatch_http_request_duration_seconds_count{route=\"/api/v1/runs\"} 2"));
        assert!(text.contains("slopewatch_ingest_rejections_total{reason=\"invalid_field\"} 1"));
        assert!(text.contains("slopewatch_samples_ingested_total 600"));
        assert!(text.contains("slopewatch_db_pool_idle 3"));
        assert!(text.contains("slopewatch_webhook_attempts_total{outcome=\"failed\"} 2"));
        assert!(text.contains("slopewatch_webhook_attempts_total{outcome=\"delivered\"} 1"));
        assert!(text.contains("slopewatch_webhook_attempts_total{outcome=\"gave_up\"} 0"));
        assert!(text.contains("slopewatch_webhook_attempts_total{outcome=\"refused\"} 1"));
        assert!(text.contains("slopewatch_webhook_outbox_pending 5"));
        assert!(text.contains("slopewatch_webhook_outbox_refused 1"));
        assert!(text.contains("slopewatch_summaries_pending 2"));
        assert!(text.contains("slopewatch_storage_errors_total{kind=\"full\"} 2"), "{text}");
        assert!(text.contains("slopewatch_runs_queued 3"));
        assert!(text.contains("slopewatch_summary_runs_claimed_total 7"));
        assert!(text.contains("slopewatch_webhook_deliveries_claimed_total 2"));
        assert!(text.contains("slopewatch_retention_passes_total 1"));
        assert!(text.contains("slopewatch_retention_runs_pruned_total 4"));
        assert!(text.contains("slopewatch_requests_refused_total{reason=\"anonymous_cap\"} 2"), "{text}");
        assert!(text.contains("slopewatch_requests_refused_total{reason=\"body_too_slow\"} 0"), "every reason shows");
    }

    #[test]
    fn refusals_are_in_their_own_order() {
        for (i, why) in Refusal::ALL.into_iter().enumerate() {
            assert_eq!(why as usize, i, "{}", why.as_str());
        }
    }

    #[test]
    fn an_unreadable_outbox_leaves_its_gauge_out() {
        let text = Metrics::default().render(&Gauges {
            pool: (1, 1),
            outbox_pending: None,
            outbox_refused: None,
            summaries_pending: None,
            runs_queued: 0,
            storage_errors: Vec::new(),
        });
        assert!(!text.contains("slopewatch_webhook_outbox_pending"), "{text}");
        assert!(!text.contains("slopewatch_webhook_outbox_refused"), "{text}");
        assert!(!text.contains("slopewatch_summaries_pending"), "{text}");
        assert!(text.contains("slopewatch_db_pool_connections 1"));
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
