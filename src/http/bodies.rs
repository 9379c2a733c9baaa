//! What a request body may be: a size of its route's own (`rule`), checked against
//! `Content-Length` before anything is read and counted as the body arrives, and a pace: once its
//! read timeout has passed, a body must have averaged the minimum rate. A body past either is cut
//! (`Cut`), and answered 413 or 408 by whoever was reading it.

use super::Error;
use crate::config::Limits;
use crate::metrics::{Metrics, Refusal};
use crate::views::regression::edits::NOTE_LIMIT;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::header::CONTENT_LENGTH;
use axum::http::{HeaderMap, Method};
use http_body::{Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// The login form: a token, a CSRF value and where to go next (at most 2,048 characters, which
/// percent-encoding can triple).
pub const LOGIN_FORM_LIMIT: usize = 8 * 1024;
/// Any other form (status, acknowledge, link, resend, logout), and any route not named below.
pub const FORM_LIMIT: usize = 16 * 1024;
/// A note's form: a note of `NOTE_LIMIT` bytes, each of which percent-encoding may triple.
pub const NOTE_FORM_LIMIT: usize = 3 * NOTE_LIMIT + 4 * 1024;
/// An exposure scan: a scan at every limit of its format (128 exposed functions with 16 callers
/// each, 512 functions reached) of names as long as real symbols run stays well under it.
/// `--body-limit` applies too, when it is lower.
pub const EXPOSURE_LIMIT: usize = 512 * 1024;

/// Found probes: `MAX_FOUND_PROBES` of them, each with a sentence in each of its texts, stays well
/// under it. `--body-limit` applies too, when it is lower.
pub const FOUND_PROBES_LIMIT: usize = 1024 * 1024;

/// What one route's body may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Rule {
    /// Bytes.
    pub limit: usize,
    /// Whether the body is read whole before the request takes a request slot: the login form,
    /// the one body anyone may send. Every other body is read by its handler once it has checked,
    /// from the headers, who sent it.
    pub read_first: bool,
}

/// The rule of `route` (the matched pattern, `None` when no route matched) for `method`;
/// `body_limit` is `--body-limit`, the limit of run and bisection submissions.
pub(super) fn rule(method: &Method, route: Option<&str>, body_limit: usize) -> Rule {
    let limit = |limit| Rule { limit, read_first: false };
    if method != Method::POST {
        return limit(FORM_LIMIT);
    }
    match route.unwrap_or_default() {
        "/login" => Rule { limit: LOGIN_FORM_LIMIT, read_first: true },
        "/regressions/{id}/notes" => limit(NOTE_FORM_LIMIT),
        "/api/v1/runs" | "/api/v1/regressions/{id}/bisections" => limit(body_limit),
        "/api/v1/exposures" => limit(EXPOSURE_LIMIT.min(body_limit)),
        "/api/v1/found-probes" => limit(FOUND_PROBES_LIMIT.min(body_limit)),
        _ => limit(FORM_LIMIT),
    }
}

/// The body's length as `Content-Length` declares it; `None` for a chunked body.
pub(super) fn declared(headers: &HeaderMap) -> Option<u64> {
    headers.get(CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
}

/// How fast a body must arrive: within `grace` of its first read, then at `rate` bytes a second
/// on average, so a body of n bytes has `grace + n / rate` in all.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pace {
    grace: Duration,
    rate: u64,
}

impl Pace {
    pub(super) fn new(limits: &Limits) -> Pace {
        Pace { grace: limits.body_read_timeout, rate: limits.body_min_rate.max(1) }
    }

    /// How long after its first read a body may have delivered only `received` bytes.
    fn allows(self, received: usize) -> Duration {
        self.grace + Duration::from_secs_f64(received as f64 / self.rate as f64)
    }
}

/// Why a body was cut.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cut {
    /// More than `limit` bytes arrived.
    TooLarge { limit: usize },
    /// Only `received` bytes in `after`.
    TooSlow { received: usize, after: Duration, grace: Duration, rate: u64 },
}

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cut::TooLarge { limit } => write!(f, "the body is over this route's limit of {limit} bytes"),
            Cut::TooSlow { received, after, grace, rate } => write!(
                f,
                "the body arrived too slowly ({received} bytes in {:.1} s): after its first {} s a body must \
                 average at least {rate} bytes a second",
                after.as_secs_f64(),
                grace.as_secs()
            ),
        }
    }
}

impl std::error::Error for Cut {}

impl From<Cut> for Error {
    fn from(cut: Cut) -> Error {
        match cut {
            Cut::TooLarge { limit } => Error::PayloadTooLarge(limit),
            Cut::TooSlow { .. } => Error::BodyTooSlow(cut.to_string()),
        }
    }
}

impl Cut {
    /// The cut behind a body's read error, if one was: the error of an extractor's rejection
    /// holds it some sources down.
    pub fn behind(mut e: &(dyn std::error::Error + 'static)) -> Option<Cut> {
        loop {
            if let Some(cut) = e.downcast_ref::<Cut>() {
                return Some(*cut);
            }
            e = e.source()?;
        }
    }
}

/// `req` with its body watched: cut past `limit` bytes or when it falls behind `pace`, each cut
/// counted in `metrics`. A request without a body is left as it is.
pub(super) fn watch(req: Request, limit: usize, pace: Pace, metrics: Arc<Metrics>) -> Request {
    if req.body().is_end_stream() {
        return req;
    }
    req.map(|inner| {
        Body::new(Watched {
            inner,
            limit,
            pace,
            received: 0,
            started: None,
            timer: Box::pin(tokio::time::sleep(pace.grace)),
            metrics,
            cut: None,
        })
    })
}

/// `req` with its (watched) body read whole, before anything else is done with it.
pub(super) async fn read_whole(req: Request) -> Result<Request, Error> {
    let (parts, body) = req.into_parts();
    match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) => Ok(Request::from_parts(parts, Body::from(bytes))),
        Err(e) => {
            Err(Cut::behind(&e)
                .map_or_else(|| Error::BadRequest("the request body could not be read".into()), Error::from))
        }
    }
}

struct Watched {
    inner: Body,
    limit: usize,
    pace: Pace,
    received: usize,
    /// The first read: a body is not behind before anyone asked for it.
    started: Option<Instant>,
    timer: Pin<Box<Sleep>>,
    metrics: Arc<Metrics>,
    cut: Option<Cut>,
}

impl Watched {
    fn cut(&mut self, cut: Cut) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
        let why = match cut {
            Cut::TooLarge { .. } => Refusal::BodyTooLarge,
            Cut::TooSlow { .. } => Refusal::BodyTooSlow,
        };
        self.metrics.record_refusal(why);
        tracing::debug!(reason = why.as_str(), received = self.received, "request body cut");
        self.cut = Some(cut);
        Poll::Ready(Some(Err(cut.into())))
    }
}

impl HttpBody for Watched {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Some(cut) = this.cut {
            return Poll::Ready(Some(Err(cut.into())));
        }
        let started = *this.started.get_or_insert_with(Instant::now);
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                this.received += frame.data_ref().map_or(0, Bytes::len);
                if this.received > this.limit {
                    return this.cut(Cut::TooLarge { limit: this.limit });
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                let deadline = started + this.pace.allows(this.received);
                if this.timer.deadline() != deadline {
                    this.timer.as_mut().reset(deadline);
                }
                match this.timer.as_mut().poll(cx) {
                    Poll::Ready(()) => this.cut(Cut::TooSlow {
                        received: this.received,
                        after: started.elapsed(),
                        grace: this.pace.grace,
                        rate: this.pace.rate,
                    }),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.cut.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn pace(grace_ms: u64, rate: u64) -> Pace {
        Pace { grace: Duration::from_millis(grace_ms), rate }
    }

    fn watched(body: Body, limit: usize, pace: Pace) -> (Body, Arc<Metrics>) {
        let metrics = Arc::new(Metrics::default());
        let req = watch(Request::new(body), limit, pace, metrics.clone());
        (req.into_body(), metrics)
    }

    #[test]
    fn each_form_has_a_small_limit_and_ingest_keeps_the_body_limit() {
        let post = |route| rule(&Method::POST, Some(route), 8 << 20);
        assert_eq!(post("/login"), Rule { limit: 8 * 1024, read_first: true });
        for form in ["/logout", "/regressions/{id}/status", "/regressions/{id}/links", "/deliveries/{id}/resend"] {
            assert_eq!(post(form), Rule { limit: FORM_LIMIT, read_first: false }, "{form}");
        }
        assert!(post("/regressions/{id}/notes").limit > 3 * NOTE_LIMIT, "a note of the largest size, encoded");
        assert_eq!(post("/api/v1/runs").limit, 8 << 20);
        assert_eq!(post("/api/v1/exposures").limit, 512 * 1024);
        assert_eq!(rule(&Method::POST, Some("/api/v1/exposures"), 1000).limit, 1000, "never over --body-limit");
        assert_eq!(post("/api/v1/found-probes").limit, 1024 * 1024);
        assert_eq!(rule(&Method::POST, Some("/api/v1/found-probes"), 1000).limit, 1000, "never over --body-limit");
        assert_eq!(rule(&Method::GET, Some("/api/v1/runs"), 8 << 20).limit, FORM_LIMIT, "a read wants no body");
        assert_eq!(rule(&Method::POST, None, 8 << 20).limit, FORM_LIMIT);
    }

    #[tokio::test]
    async fn a_body_over_its_limit_is_cut_as_it_arrives() {
        let chunks = futures_util::stream::iter((0..4).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![b'a'; 1000]))));
        let (body, metrics) = watched(Body::from_stream(chunks), 2500, pace(1000, 1));
        let e = axum::body::to_bytes(body, usize::MAX).await.unwrap_err();
        assert_eq!(Cut::behind(&e), Some(Cut::TooLarge { limit: 2500 }));
        assert_eq!(metrics.refused(Refusal::BodyTooLarge), 1);
        let (whole, _) = watched(Body::from(vec![b'a'; 2500]), 2500, pace(1000, 1));
        assert_eq!(axum::body::to_bytes(whole, usize::MAX).await.unwrap().len(), 2500, "at the limit is in");
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_falls_behind_the_minimum_rate_is_cut() {
        // 10 bytes, then nothing: allowed 1 s plus 10 bytes at 100 bytes a second.
        let stalled = futures_util::stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(b"0123456789"))])
            .chain(futures_util::stream::pending());
        let (body, metrics) = watched(Body::from_stream(stalled), 1000, pace(1000, 100));
        let started = Instant::now();
        let e = axum::body::to_bytes(body, usize::MAX).await.unwrap_err();
        let Some(Cut::TooSlow { received, .. }) = Cut::behind(&e) else { panic!("{e}") };
        assert_eq!(received, 10);
        assert_eq!(started.elapsed(), Duration::from_millis(1100), "cut once it fell behind, not before");
        assert_eq!(metrics.refused(Refusal::BodyTooSlow), 1);
        let error = Error::from(Cut::behind(&e).unwrap());
        assert_eq!(error.status(), axum::http::StatusCode::REQUEST_TIMEOUT);
        assert!(error.to_string().contains("at least 100 bytes a second"), "{error}");

        // A body keeping up with the rate is read whole however long it takes.
        let steady = futures_util::stream::iter(0..30).then(|_| async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok::<_, std::io::Error>(Bytes::from_static(b"0123456789"))
        });
        let (body, _) = watched(Body::from_stream(steady), 1000, pace(1000, 100));
        assert_eq!(axum::body::to_bytes(body, usize::MAX).await.unwrap().len(), 300);
    }
}
