//! The one HTTP client of the agent. What it sends (runs, bisections) is retried on transient
//! failures with exponential backoff and jitter, client errors (4xx) never; what it reads (a
//! baseline, a regression, what the server accepts) is asked once.

use anyhow::{bail, Result};
use slopewatch_core::answers::{
    BisectionAccepted, Capabilities, ErrorBody, ExposureAccepted, FoundProbesAccepted, RunAccepted,
};
use slopewatch_core::wire::{shape, Accepts, Capability, Dropped, RunSubmission};
use std::borrow::Cow;
use std::sync::Mutex;
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

/// A run the server stored: its answer, and what was left out for a server that does not accept
/// all of it.
#[derive(Debug)]
pub struct StoredRun {
    pub answer: RunAccepted,
    pub dropped: Vec<Dropped>,
}

/// How one delivery ended.
#[derive(Debug)]
pub enum Outcome<T = StoredRun> {
    Stored(T),
    /// The server refused it, or cannot store it rightly: sending it again cannot help. `status`
    /// is the server's answer; none when the agent did not send it, the server's capabilities
    /// having ruled it out.
    Rejected {
        status: Option<u16>,
        message: String,
    },
    /// Still failing after every retry; worth trying again later.
    Failed(String),
}

impl<T> Outcome<T> {
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Outcome<U> {
        match self {
            Outcome::Stored(t) => Outcome::Stored(f(t)),
            Outcome::Rejected { status, message } => Outcome::Rejected { status, message },
            Outcome::Failed(why) => Outcome::Failed(why),
        }
    }
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
    /// What the server accepts, once it has said (or shown by a 404 that it says nothing), less
    /// what it refused by name since.
    accepts: Mutex<Option<Accepts>>,
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

    /// A client that only reads (a report's baseline, a version's verdicts): with `token` where
    /// that server requires a login to read.
    pub fn reader(server: &str, token: Option<&str>) -> Result<Client> {
        let server = checked_url(server, "server")?;
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
            accepts: Mutex::new(None),
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
        self.get_within(path, query, READ_TIMEOUT)
    }

    fn get_within(&self, path: &str, query: &[(&str, &str)], timeout: Duration) -> Result<Answer, ureq::Error> {
        let mut request =
            self.agent.get(format!("{}{path}", self.server)).config().timeout_global(Some(timeout)).build();
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

    /// What the server accepts: read from `GET /api/v1/capabilities` before the first delivery and
    /// kept. A server that answers 404 advertises nothing: it is of the release before
    /// capabilities, and accepts what that release did. One that cannot be asked now (out of reach,
    /// the token refused, an error) is taken to accept that too, for this delivery only; a
    /// refusal by name corrects it.
    fn accepts(&self) -> Accepts {
        if let Some(known) = self.accepts.lock().expect("not poisoned").clone() {
            return known;
        }
        let answer = self.get_within("/api/v1/capabilities", &[], self.retry.timeout.min(READ_TIMEOUT));
        let known = match answer {
            Ok(Answer { status: 200, body }) => Some(
                serde_json::from_str::<Capabilities>(&body).map_or_else(|_| Accepts::unadvertised(), |c| c.accepted()),
            ),
            Ok(Answer { status: 404, .. }) => Some(Accepts::unadvertised()),
            _ => None,
        };
        if let Some(known) = &known {
            *self.accepts.lock().expect("not poisoned") = Some(known.clone());
        }
        known.unwrap_or_else(Accepts::unadvertised)
    }

    /// Delivers one serialized run, retrying what may succeed later. The run goes as it is to a
    /// server that accepts everything it carries; to one that does not, it goes under the same id
    /// without what the server cannot take ([`shape`]), and the answer says what was left out. A
    /// server older than capabilities refuses a field it does not know by name (HTTP 422, ``unknown
    /// field `X` ``): it then lacks X's capability, and the run is shaped again without it and sent
    /// once more. A run the server cannot store rightly (a measure other than wall time, the libc
    /// version axis, nothing left to send) is refused with the reason and what to do.
    pub fn deliver(&self, body: &[u8], mut on_retry: impl FnMut(u32, &str, Duration)) -> Outcome {
        let Ok(run) = RunSubmission::from_json(body) else {
            // Sent as it is: the server's answer names what is wrong with it.
            let outcome = self.deliver_with_retries(&self.url, body, &mut on_retry);
            return outcome.map(|answer| StoredRun { answer, dropped: Vec::new() });
        };
        let mut accepts = self.accepts();
        let mut refused: Option<String> = None;
        loop {
            let shaped = match shape(&run, &accepts) {
                Ok(shaped) => shaped,
                Err(refusal) => {
                    let message = refusal.message(&self.server, &run.run_id);
                    return match refused {
                        Some(why) => Outcome::Rejected { status: Some(422), message: format!("{message} ({why})") },
                        None => Outcome::Rejected { status: None, message },
                    };
                }
            };
            let sent = if shaped.dropped.is_empty() {
                Cow::Borrowed(body)
            } else {
                Cow::Owned(serde_json::to_vec(&shaped.run).expect("a run always serializes"))
            };
            match self.deliver_with_retries::<RunAccepted>(&self.url, &sent, &mut on_retry) {
                Outcome::Rejected { status: Some(422), message } => match Capability::of_refusal(&message) {
                    Some(lacking) if accepts.remove(lacking) => {
                        if let Some(known) = self.accepts.lock().expect("not poisoned").as_mut() {
                            known.remove(lacking);
                        }
                        refused = Some(message);
                    }
                    _ => return Outcome::Rejected { status: Some(422), message },
                },
                outcome => return outcome.map(|answer| StoredRun { answer, dropped: shaped.dropped }),
            }
        }
    }

    /// Delivers a bisection's JSON body for regression `regression`, retrying as runs are.
    pub fn deliver_bisection(
        &self,
        regression: i64,
        body: &[u8],
        mut on_retry: impl FnMut(u32, &str, Duration),
    ) -> Outcome<BisectionAccepted> {
        let url = format!("{}/api/v1/regressions/{regression}/bisections", self.server);
        self.deliver_with_retries(&url, body, &mut on_retry)
    }

    /// Delivers an exposure scan's JSON body, retrying as runs are.
    pub fn deliver_exposure(
        &self,
        body: &[u8],
        mut on_retry: impl FnMut(u32, &str, Duration),
    ) -> Outcome<ExposureAccepted> {
        let url = format!("{}/api/v1/exposures", self.server);
        match self.deliver_with_retries(&url, body, &mut on_retry) {
            // The route itself is missing: a server of a release before scans.
            Outcome::Rejected { status: Some(404), message } => Outcome::Rejected {
                status: Some(404),
                message: format!(
                    "{} does not take exposure scans (a release before them: {message}); upgrade the server, \
                     the scan is kept in the spool's rejected/ folder",
                    self.server
                ),
            },
            outcome => outcome,
        }
    }

    /// Delivers found probes' JSON body, retrying as runs are.
    pub fn deliver_found_probes(
        &self,
        body: &[u8],
        mut on_retry: impl FnMut(u32, &str, Duration),
    ) -> Outcome<FoundProbesAccepted> {
        let url = format!("{}/api/v1/found-probes", self.server);
        match self.deliver_with_retries(&url, body, &mut on_retry) {
            Outcome::Rejected { status: Some(404), message } => Outcome::Rejected {
                status: Some(404),
                message: format!(
                    "{} does not take found probes (a release before them: {message}); upgrade the server, \
                     the probes are kept in the spool's rejected/ folder and in the probes file",
                    self.server
                ),
            },
            outcome => outcome,
        }
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
            _ => Attempt::Done(Outcome::Rejected { status: Some(status), message: error_message(&text) }),
        }
    }
}

enum Attempt<T> {
    Done(Outcome<T>),
    Transient { reason: String, retry_after: Option<Duration> },
}

/// `segment` as one segment of a URL's path: every byte but the unreserved ones percent-encoded.
pub fn path_segment(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
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

/// The server's `error.message`, or the raw body when it is not the server's error format.
pub(crate) fn error_message(body: &str) -> String {
    match serde_json::from_str::<ErrorBody>(body) {
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
