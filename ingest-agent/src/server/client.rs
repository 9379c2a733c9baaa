//! The one HTTP client of the agent. What it sends (runs, bisections) is retried on transient
//! failures with exponential backoff and jitter, client errors (4xx) never; what it reads (a
//! baseline, a regression) is asked once.

use anyhow::{bail, Result};
use serde::Deserialize;
use slopewatch_core::wire::RunSubmission;
use std::time::Duration;

/// How hard to try a delivery before what it carries is left in the spool.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Attempts in total, the first included.
    pub attempts: u32,
    /// The wait before the first retry; each retry doubles it.
    pub base: Duration,
    /// No single wait is longer than this.
    pub max_wait: Duration,
    /// One request may take this long before it counts as a (transient) failure.
    pub timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            attempts: 5,
            base: Duration::from_millis(500),
            max_wait: Duration::from_secs(30),
            timeout: Duration::from_secs(60),
        }
    }
}

/// Longest one read may take. A read is asked once: a baseline that cannot be read only leaves
/// the change out of the report, and a regression that cannot be read stops `bisect` before it
/// measures anything.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The server's answer to a stored run.
#[derive(Debug, Clone, Deserialize)]
pub struct Accepted {
    pub run_id: String,
    /// False when the server already had this run (a resubmission).
    #[serde(default)]
    pub created: bool,
    #[serde(default)]
    pub url: Option<String>,
    /// The failed workloads left out for a server that predates failures, as `name (kind)`.
    #[serde(skip)]
    pub left_out: Vec<String>,
    /// For a server that predates contracts, the probes were sent as plain workloads: those left
    /// out because the libc does not provide their function.
    #[serde(skip)]
    pub contracts_dropped: Option<Vec<String>>,
}

/// How one delivery ended.
#[derive(Debug)]
pub enum Outcome<T = Accepted> {
    Stored(T),
    /// The server refused the run; sending it again cannot help.
    Rejected {
        status: u16,
        message: String,
    },
    /// Still failing after every retry; worth trying again later.
    Failed(String),
}

/// What the server answered a read.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: String,
}

/// A slopewatch server, and how to talk to it.
pub struct Client {
    agent: ureq::Agent,
    server: String,
    url: String,
    /// Sent as `Authorization: Bearer`, where there is one.
    token: Option<String>,
    retry: RetryPolicy,
}

impl Client {
    /// A client that sends to `server` with `token` (one word) as `retry` allows, and reads from it.
    pub fn new(server: &str, token: &str, retry: RetryPolicy) -> Result<Client> {
        let server = checked_url(server, "server")?;
        if token.trim().is_empty() || token.chars().any(|c| c.is_control() || c == ' ') {
            bail!("the token must be one non-empty word (check --token, SLOPEWATCH_TOKEN or the token file)");
        }
        Ok(Client::build(server, Some(token), retry))
    }

    /// A client that only reads, from the server of a report's baseline: with `token` where that
    /// server requires a login to read.
    pub fn reader(server: &str, token: Option<&str>) -> Result<Client> {
        let server = checked_url(server, "baseline server")?;
        // It sends nothing: its policy is that of every read, one attempt within READ_TIMEOUT.
        Ok(Client::build(server, token, RetryPolicy { attempts: 1, timeout: READ_TIMEOUT, ..RetryPolicy::default() }))
    }

    fn build(server: &str, token: Option<&str>, retry: RetryPolicy) -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(retry.timeout))
            .user_agent(format!("slopewatch-agent/{}", crate::AGENT_VERSION))
            .build()
            .into();
        Client {
            agent,
            server: server.to_string(),
            url: format!("{server}/api/v1/runs"),
            token: token.map(|t| t.trim().to_string()),
            retry,
        }
    }

    /// The server's base URL.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Whether requests carry a token.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// Reads `path` under the server, with `query`, once and for at most [`READ_TIMEOUT`]: the
    /// answer whatever its status, or why there was none.
    pub fn get(&self, path: &str, query: &[(&str, &str)]) -> Result<Answer, ureq::Error> {
        let mut request =
            self.agent.get(format!("{}{path}", self.server)).config().timeout_global(Some(READ_TIMEOUT)).build();
        for (k, v) in query {
            request = request.query(*k, *v);
        }
        if let Some(token) = &self.token {
            request = request.header("Authorization", &format!("Bearer {token}"));
        }
        let mut response = request.call()?;
        let status = response.status().as_u16();
        let body = response.body_mut().read_to_string().unwrap_or_default();
        Ok(Answer { status, body })
    }

    /// Delivers one serialized run, retrying what may succeed later. A server that predates
    /// failures refuses a run carrying them; the run is then sent once more without its failed
    /// workloads, under the same id (what agents sent before failures were data), and the answer
    /// names what was left out. A server that predates contracts is sent the probes as plain
    /// workloads, without those whose function the libc does not provide; one that predates sizes
    /// of interest, without them. When nothing is left to send, the run is refused with the
    /// reason.
    ///
    /// A server that predates version axes refuses a run on the libc axis; that run is not sent
    /// without its axis (its versions would join a lineage of compiler versions), and the refusal
    /// says so.
    pub fn deliver(&self, body: &[u8], mut on_retry: impl FnMut(u32, &str, Duration)) -> Outcome {
        let mut body = body.to_vec();
        let (mut left_out, mut contracts_dropped) = (Vec::new(), None);
        loop {
            let outcome = self.deliver_as_is(&body, &mut on_retry);
            let Outcome::Rejected { status, message } = &outcome else {
                return match outcome {
                    Outcome::Stored(a) => Outcome::Stored(Accepted { left_out, contracts_dropped, ..a }),
                    other => other,
                };
            };
            if predates_version_axes(*status, message) {
                return Outcome::Rejected {
                    status: *status,
                    message: format!(
                        "{message} (the server at {} is older than this agent and knows only compiler versions; \
                         upgrade it, or set version_from = \"compiler\" for this toolchain to send the compiler's \
                         version under this lineage)",
                        self.server
                    ),
                };
            }
            if predates_measures(*status, message) {
                return Outcome::Rejected {
                    status: *status,
                    message: format!(
                        "{message} (the server at {} is older than this agent and takes wall time only: it cannot                          take a run of another measure; upgrade it, or measure with --measure wall)",
                        self.server
                    ),
                };
            }
            let Ok(run) = RunSubmission::from_json(&body) else {
                return outcome;
            };
            if predates_sizes_of_interest(*status, message)
                && run.workloads.iter().any(|w| w.size_of_interest.is_some())
            {
                // What it costs at the team's size is worked out again from the fit by whoever
                // reads the run; an older server just does not show it.
                body = serde_json::to_vec(&run.without_sizes_of_interest()).expect("a run always serializes");
                continue;
            }
            let (older, left, rest) = if predates_failures(*status, message) && run.failures().next().is_some() {
                let failed: Vec<String> =
                    run.failures().map(|(w, f)| format!("{} ({})", w.name, f.kind.label())).collect();
                left_out.extend(failed.iter().cloned());
                ("failures", format!("every workload of the run failed: {}", failed.join(", ")), run.without_failures())
            } else if predates_contracts(*status, message) && contracts_dropped.is_none() {
                let absent: Vec<String> =
                    run.workloads.iter().filter(|w| w.not_provided).map(|w| w.name.clone()).collect();
                let left = format!("the libc provides no function the run measured: {}", absent.join(", "));
                contracts_dropped = Some(absent);
                ("contracts", left, run.without_contracts())
            } else {
                return outcome;
            };
            match rest {
                Some(rest) => body = serde_json::to_vec(&rest).expect("a run always serializes"),
                None => {
                    return Outcome::Rejected {
                        status: *status,
                        message: format!(
                            "run {} could not be stored at {}: the server does not accept {older} (it is older \
                             than this agent) and {left} ({message})",
                            run.run_id, self.server
                        ),
                    }
                }
            }
        }
    }

    /// Delivers a JSON body to `path` under the server (e.g. a bisection's), retrying as runs are;
    /// the answer's body is returned as JSON.
    pub fn deliver_to(
        &self,
        path: &str,
        body: &[u8],
        mut on_retry: impl FnMut(u32, &str, Duration),
    ) -> Outcome<serde_json::Value> {
        self.deliver_with_retries(&format!("{}{path}", self.server), body, &mut on_retry)
    }

    fn deliver_as_is(&self, body: &[u8], mut on_retry: impl FnMut(u32, &str, Duration)) -> Outcome {
        self.deliver_with_retries(&self.url, body, &mut on_retry)
    }

    fn deliver_with_retries<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        body: &[u8],
        mut on_retry: impl FnMut(u32, &str, Duration),
    ) -> Outcome<T> {
        let mut last = String::new();
        for attempt in 1..=self.retry.attempts.max(1) {
            match self.post(url, body) {
                Attempt::Done(outcome) => return outcome,
                Attempt::Transient { reason, retry_after } => {
                    last = reason;
                    if attempt < self.retry.attempts {
                        let wait =
                            retry_after.unwrap_or_else(|| backoff(&self.retry, attempt)).min(self.retry.max_wait);
                        on_retry(attempt, &last, wait);
                        std::thread::sleep(wait);
                    }
                }
            }
        }
        Outcome::Failed(last)
    }

    fn post<T: serde::de::DeserializeOwned>(&self, url: &str, body: &[u8]) -> Attempt<T> {
        let mut request = self.agent.post(url);
        if let Some(token) = &self.token {
            request = request.header("Authorization", &format!("Bearer {token}"));
        }
        let response = request.content_type("application/json").send(body);
        let mut response = match response {
            Ok(r) => r,
            Err(e) => return Attempt::Transient { reason: e.to_string(), retry_after: None },
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = response.body_mut().read_to_string().unwrap_or_default();
        match status {
            200 | 201 => match serde_json::from_str::<T>(&text) {
                Ok(a) => Attempt::Done(Outcome::Stored(a)),
                Err(e) => Attempt::Transient {
                    reason: format!("HTTP {status} with an unreadable body: {e}"),
                    retry_after: None,
                },
            },
            429 | 500..=599 => {
                Attempt::Transient { reason: format!("HTTP {status}: {}", error_message(&text)), retry_after }
            }
            _ => Attempt::Done(Outcome::Rejected { status, message: error_message(&text) }),
        }
    }
}

enum Attempt<T> {
    Done(Outcome<T>),
    Transient { reason: String, retry_after: Option<Duration> },
}

/// `server` without a trailing `/`, once it is an HTTP(S) URL; `what` names it in the error.
fn checked_url<'a>(server: &'a str, what: &str) -> Result<&'a str> {
    let server = server.trim_end_matches('/');
    if !(server.starts_with("http://") || server.starts_with("https://")) {
        bail!("{what} URL {server:?} must start with http:// or https://");
    }
    Ok(server)
}

/// `base · 2^(attempt-1)`, scaled by a random factor in [0.5, 1.5) so agents that failed together
/// do not retry together.
pub fn backoff(policy: &RetryPolicy, attempt: u32) -> Duration {
    let exp = policy.base.saturating_mul(1u32 << (attempt - 1).min(20));
    exp.mul_f64(0.5 + jitter()).min(policy.max_wait)
}

fn jitter() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Whether a refusal is that of a server that predates failures: its strict parser names the
/// `failure` field as unknown.
fn predates_failures(status: u16, message: &str) -> bool {
    status == 422 && message.contains("unknown field `failure`")
}

/// Whether a refusal is that of a server that predates contracts: its strict parser names a
/// workload's `contract` or `not_provided` field as unknown.
fn predates_contracts(status: u16, message: &str) -> bool {
    status == 422 && (message.contains("unknown field `contract`") || message.contains("unknown field `not_provided`"))
}

/// Whether a refusal is that of a server that predates sizes of interest: its strict parser names
/// the workload's `size_of_interest` as unknown.
fn predates_sizes_of_interest(status: u16, message: &str) -> bool {
    status == 422 && message.contains("unknown field `size_of_interest`")
}

/// Whether a refusal is that of a server that predates measures: its strict parser names the run's
/// `measure` (or `counter`) as unknown. A wall run leaves both out, so only another measure's is
/// refused.
fn predates_measures(status: u16, message: &str) -> bool {
    status == 422 && (message.contains("unknown field `measure`") || message.contains("unknown field `counter`"))
}

/// Whether a refusal is that of a server that predates version axes: its strict parser names the
/// toolchain's `version_from` field as unknown.
fn predates_version_axes(status: u16, message: &str) -> bool {
    status == 422 && message.contains("unknown field `version_from`")
}

/// The server's `error.message`, or the raw body when it is not the server's error format.
pub(crate) fn error_message(body: &str) -> String {
    #[derive(Deserialize)]
    struct Envelope {
        error: Inner,
    }
    #[derive(Deserialize)]
    struct Inner {
        message: String,
    }
    match serde_json::from_str::<Envelope>(body) {
        Ok(e) => e.error.message,
        Err(_) if body.trim().is_empty() => "(empty response body)".into(),
        Err(_) => body.chars().take(500).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_bounded_jitter() {
        let p = RetryPolicy {
            base: Duration::from_millis(100),
            max_wait: Duration::from_secs(10),
            ..RetryPolicy::default()
        };
        for attempt in 1..=4 {
            let nominal = 100.0 * f64::from(1u32 << (attempt - 1));
            let ms = backoff(&p, attempt).as_secs_f64() * 1000.0;
            assert!(ms >= nominal * 0.5 && ms < nominal * 1.5, "attempt {attempt}: {ms}");
        }
        assert_eq!(backoff(&p, 30), Duration::from_secs(10));
    }

    #[test]
    fn server_error_messages_are_extracted() {
        let body = r#"{"error":{"status":422,"code":"invalid_field","message":"workloads[0].name: must not be empty","field":"workloads[0].name"}}"#;
        assert_eq!(error_message(body), "workloads[0].name: must not be empty");
        assert_eq!(error_message("Bad Gateway"), "Bad Gateway");
    }

    #[test]
    fn clients_refuse_bad_urls_and_tokens() {
        assert!(Client::new("ftp://x", "t", RetryPolicy::default()).is_err());
        assert!(Client::new("http://x", " ", RetryPolicy::default()).is_err());
        assert!(Client::new("http://x/", "tok", RetryPolicy::default()).is_ok());
    }
}
