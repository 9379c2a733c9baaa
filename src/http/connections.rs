//! The open connections and their shares. At most `max_connections` are open, and at most
//! `max_connections_per_client` from one peer address (IPv6 per /64), except from the trusted
//! proxies, through which every client comes. When every place is taken, an idle connection (no
//! answer in progress) is closed to admit the new one: one that never carried a valid token or
//! session first, the longest idle first; only when none is idle is the newcomer refused. Each
//! connection's state (`OpenConnection`) rides in its requests' extensions, and the request limits
//! mark it trusted. A connection whose client stops reading its answer for the write timeout is
//! ended (`StalledWrites`); an answer's body, handed on in pieces, holds its request slot until
//! all but about a write buffer of it is written (`held`).

use crate::client_addr::TrustedProxies;
use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};
use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

/// One open connection.
#[derive(Debug)]
pub struct OpenConnection {
    id: u64,
    /// The address it is counted under: the peer, or its /64.
    bucket: IpAddr,
    /// Answers begun and not yet written.
    answering: AtomicUsize,
    /// A request on it carried a valid token or session.
    trusted: AtomicBool,
    /// When its last answer was written, or it was accepted.
    idle_since: Mutex<Instant>,
    /// Close it once its answer in progress (if any) is written: its place went to another.
    pub(super) close: Notify,
}

impl OpenConnection {
    /// A request on it carried a valid token or session.
    pub fn trust(&self) {
        self.trusted.store(true, Ordering::Relaxed);
    }

    /// An answer on it begins.
    pub fn answering(&self) {
        self.answering.fetch_add(1, Ordering::AcqRel);
    }

    /// An answer on it was written, or given up.
    pub fn answered(&self) {
        *self.idle_since.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.answering.fetch_sub(1, Ordering::AcqRel);
    }

    fn is_idle(&self) -> bool {
        self.answering.load(Ordering::Acquire) == 0
    }

    /// Whom to close first among idle connections: never trusted before trusted, then the longest
    /// idle.
    fn victim_rank(&self) -> (bool, Instant) {
        (self.trusted.load(Ordering::Relaxed), *self.idle_since.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Its address has `max_connections_per_client` open.
    PerClient,
    /// Every place is taken, and no connection is idle.
    Full,
}

#[derive(Default)]
struct Registry {
    next: u64,
    open: HashMap<u64, Arc<OpenConnection>>,
    per_bucket: HashMap<IpAddr, usize>,
}

/// The open connections of one server.
pub struct Connections {
    max: usize,
    per_client: usize,
    proxies: TrustedProxies,
    registry: Mutex<Registry>,
}

impl Connections {
    pub fn new(max: usize, per_client: usize, proxies: TrustedProxies) -> Connections {
        Connections { max, per_client, proxies, registry: Mutex::default() }
    }

    /// Admits a connection from `peer`, closing an idle one to make room when every place is
    /// taken.
    pub fn admit(&self, peer: IpAddr) -> Result<Arc<OpenConnection>, Refused> {
        let bucket = super::throttle::bucket(peer);
        let mut r = self.registry.lock().unwrap_or_else(|e| e.into_inner());
        let from_proxy = self.proxies.trusts(peer);
        if !from_proxy && r.per_bucket.get(&bucket).copied().unwrap_or(0) >= self.per_client {
            return Err(Refused::PerClient);
        }
        if r.open.len() >= self.max {
            let victim = r.open.values().filter(|c| c.is_idle()).min_by_key(|c| c.victim_rank()).cloned();
            let Some(victim) = victim else { return Err(Refused::Full) };
            Self::remove(&mut r, &victim);
            victim.close.notify_one();
        }
        r.next += 1;
        let conn = Arc::new(OpenConnection {
            id: r.next,
            bucket,
            answering: AtomicUsize::new(0),
            trusted: AtomicBool::new(false),
            idle_since: Mutex::new(Instant::now()),
            close: Notify::new(),
        });
        r.open.insert(conn.id, conn.clone());
        *r.per_bucket.entry(bucket).or_default() += 1;
        Ok(conn)
    }

    /// The connection closed (or was closed to make room, and is already gone).
    pub fn leave(&self, conn: &OpenConnection) {
        let mut r = self.registry.lock().unwrap_or_else(|e| e.into_inner());
        if r.open.contains_key(&conn.id) {
            Self::remove(&mut r, conn);
        }
    }

    /// Connections open now.
    #[cfg(test)]
    fn open(&self) -> usize {
        self.registry.lock().unwrap_or_else(|e| e.into_inner()).open.len()
    }

    fn remove(r: &mut Registry, conn: &OpenConnection) {
        r.open.remove(&conn.id);
        if let Some(n) = r.per_bucket.get_mut(&conn.bucket) {
            *n -= 1;
            if *n == 0 {
                r.per_bucket.remove(&conn.bucket);
            }
        }
    }
}

/// An answer in progress on a connection, from its request's arrival until its body is written
/// (all but about a write buffer of it) or given up: a connection is idle only between answers.
pub struct Answering {
    conn: Arc<OpenConnection>,
}

impl Answering {
    pub fn begin(conn: Arc<OpenConnection>) -> Answering {
        conn.answering();
        Answering { conn }
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.conn.answered();
    }
}

/// A connection's socket whose writes must make progress: a write or flush that has waited
/// `limit` for the client to read fails, and with it the connection, freeing what its answer
/// held.
pub struct StalledWrites<T> {
    inner: T,
    limit: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> StalledWrites<T> {
    pub fn new(inner: T, limit: Duration) -> StalledWrites<T> {
        StalledWrites { inner, limit, stalled: None }
    }

    /// What a write or flush polled: progress ends a stall; waiting starts one, or fails once it
    /// has lasted `limit`.
    fn progress<R>(&mut self, cx: &mut Context<'_>, polled: Poll<std::io::Result<R>>) -> Poll<std::io::Result<R>> {
        if !polled.is_pending() {
            self.stalled = None;
            return polled;
        }
        let limit = self.limit;
        let stalled = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match stalled.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client read nothing of the answer within the write timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for StalledWrites<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for StalledWrites<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.progress(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.progress(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.progress(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// An answer's body holding `guard` (its answer, its request slot) until it is written or dropped.
pub struct HoldingBody {
    inner: Body,
    /// What is left of a frame handed on in pieces.
    rest: Bytes,
    _guard: Box<dyn std::any::Any + Send + Sync>,
}

/// Most bytes handed on at once: hyper asks for the next piece only as its buffer drains, so a
/// large answer's guard is held until all but about a buffer of it is written.
const PIECE: usize = 64 * 1024;

/// `body`, holding `guard` until it is written or dropped.
pub fn held(body: Body, guard: impl Send + Sync + 'static) -> Body {
    Body::new(HoldingBody { inner: body, rest: Bytes::new(), _guard: Box::new(guard) })
}

impl http_body::Body for HoldingBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if !self.rest.is_empty() {
            let n = self.rest.len().min(PIECE);
            let piece = self.rest.split_to(n);
            return Poll::Ready(Some(Ok(Frame::data(piece))));
        }
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(mut data) => {
                    if data.len() > PIECE {
                        self.rest = data.split_off(PIECE);
                    }
                    Poll::Ready(Some(Ok(Frame::data(data))))
                }
                Err(trailers) => Poll::Ready(Some(Ok(trailers))),
            },
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let rest = self.rest.len() as u64;
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower() + rest);
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + rest);
        }
        hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_full_server_closes_an_idle_connection_that_never_carried_a_token_first() {
        let c = Connections::new(3, 10, TrustedProxies::default());
        let agent = c.admit(addr("127.0.0.2")).unwrap();
        agent.trust();
        let busy = c.admit(addr("127.0.0.3")).unwrap();
        busy.answering();
        let idle = c.admit(addr("127.0.0.4")).unwrap();
        let newcomer = c.admit(addr("127.0.0.5")).unwrap();
        assert_eq!(c.open(), 3);
        assert!(c.registry.lock().unwrap().open.contains_key(&agent.id), "the trusted one stays");
        assert!(!c.registry.lock().unwrap().open.contains_key(&idle.id), "the anonymous idle one went");
        // Then the trusted idle one, and with every one busy, a refusal.
        newcomer.answering();
        let next = c.admit(addr("127.0.0.6")).unwrap();
        assert!(!c.registry.lock().unwrap().open.contains_key(&agent.id));
        next.answering();
        assert_eq!(c.admit(addr("127.0.0.7")).unwrap_err(), Refused::Full);
        busy.answered();
        assert!(c.admit(addr("127.0.0.7")).is_ok(), "an answer written makes its connection idle");
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_the_client_stops_reading_fails_at_the_timeout_and_a_slow_reader_is_served() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let limit = Duration::from_secs(30);
        let (socket, _unread) = tokio::io::duplex(64);
        let started = tokio::time::Instant::now();
        let err = StalledWrites::new(socket, limit).write_all(&[7u8; 1024]).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= limit, "not before the limit: {:?}", started.elapsed());
        // A client reading 16 bytes every 10 s never leaves a write waiting 30 s.
        let (socket, mut client) = tokio::io::duplex(64);
        let reader = tokio::spawn(async move {
            let (mut buf, mut read) = ([0u8; 16], 0);
            while read < 1024 {
                tokio::time::sleep(Duration::from_secs(10)).await;
                read += client.read(&mut buf).await.unwrap();
            }
        });
        StalledWrites::new(socket, limit).write_all(&[7u8; 1024]).await.unwrap();
        reader.await.unwrap();
        assert!(started.elapsed() > Duration::from_secs(600), "a slow answer is not cut");
    }

    #[tokio::test]
    async fn a_large_answer_is_handed_on_in_pieces_and_its_guard_held_to_the_last() {
        use http_body::Body as _;
        use http_body_util::BodyExt;
        let guard = Arc::new(());
        let mut body = held(Body::from(vec![7u8; 200 * 1024]), guard.clone());
        assert_eq!(body.size_hint().exact(), Some(200 * 1024), "its length is still known");
        let mut pieces = Vec::new();
        while let Some(frame) = body.frame().await {
            pieces.push(frame.unwrap().into_data().unwrap().len());
            if pieces.len() < 4 {
                assert_eq!(Arc::strong_count(&guard), 2, "held while a piece is left");
            }
        }
        assert_eq!(pieces, [65536, 65536, 65536, 8192]);
        assert!(body.is_end_stream());
        drop(body);
        assert_eq!(Arc::strong_count(&guard), 1, "let go once the body is gone");
    }

    #[test]
    fn one_address_has_a_cap_but_a_trusted_proxy_does_not() {
        let proxies: TrustedProxies = "10.0.0.1".parse().unwrap();
        let c = Connections::new(100, 2, proxies);
        let a: Vec<_> = (0..2).map(|_| c.admit(addr("127.0.0.9")).unwrap()).collect();
        assert_eq!(c.admit(addr("127.0.0.9")).unwrap_err(), Refused::PerClient);
        assert!(c.admit(addr("127.0.0.10")).is_ok(), "another address");
        let v6: Vec<_> = ["fd00::1", "fd00::2"].iter().map(|s| c.admit(addr(s)).unwrap()).collect();
        assert_eq!(c.admit(addr("fd00::3")).unwrap_err(), Refused::PerClient, "one /64");
        assert!((0..5).all(|_| c.admit(addr("10.0.0.1")).is_ok()), "the proxy carries every client");
        c.leave(&a[0]);
        assert!(c.admit(addr("127.0.0.9")).is_ok(), "a closed connection frees its address's place");
        drop(v6);
    }
}
