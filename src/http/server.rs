//! The app on a socket: HTTP/1.1 connections whose request heads must arrive within a deadline
//! (which also ends connections left idle), at most a set number of them open, and a graceful
//! shutdown that lets requests in flight finish.
//!
//! HTTP/1.1 only: the head deadline is an HTTP/1 mechanism, and cleartext HTTP/2 would let a
//! client hold a connection open with no deadline at all. A proxy in front speaks HTTP/2 or 3 to
//! browsers where wanted.

use super::Error;
use crate::config::Limits;
use axum::extract::ConnectInfo;
use axum::response::IntoResponse;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tower::ServiceExt;

/// Connections beyond the cap that may be waiting for their 503 at once; any more are closed
/// without an answer, so a flood cannot use up the process's file descriptors.
const REFUSALS_AT_ONCE: usize = 64;

/// Serves `app` on `listener` until `shutdown` resolves, then waits for the requests in flight
/// (at most the request timeout). Handlers can read the client's address as
/// `ConnectInfo<SocketAddr>`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: &Limits,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
    let mut refusing = builder.clone();
    refusing.keep_alive(false);
    let places = Arc::new(Semaphore::new(limits.max_connections));
    let refusals = Arc::new(Semaphore::new(REFUSALS_AT_ONCE));
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        if let Ok(place) = places.clone().try_acquire_owned() {
            let conn = builder.serve_connection(TokioIo::new(stream), service(app.clone(), remote));
            let conn = graceful.watch(conn);
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                drop(place);
            });
        } else if let Ok(refusal) = refusals.clone().try_acquire_owned() {
            tokio::spawn(refuse(refusing.clone(), stream, refusal));
        }
    }
    drop(listener);
    if tokio::time::timeout(limits.request_timeout, graceful.shutdown()).await.is_err() {
        tracing::warn!("requests still running when the request timeout passed were cut off");
    }
    Ok(())
}

/// The app for one connection, with the client's address in each request.
fn service(
    app: Router,
    remote: SocketAddr,
) -> impl hyper::service::Service<
    hyper::Request<Incoming>,
    Response = axum::response::Response,
    Error = std::convert::Infallible,
    Future = impl Send,
> {
    hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(remote));
        app.clone().oneshot(req.map(axum::body::Body::new))
    })
}

/// Answers a connection beyond the cap 503 and closes it.
async fn refuse(builder: http1::Builder, stream: TcpStream, _refusal: tokio::sync::OwnedSemaphorePermit) {
    let busy = hyper::service::service_fn(|_req: hyper::Request<Incoming>| async {
        let answer = Error::Busy("the server has as many connections open as it may; retry shortly".into());
        Ok::<_, std::convert::Infallible>(answer.into_response())
    });
    let _ = builder.serve_connection(TokioIo::new(stream), busy).await;
}

/// Resets and aborted handshakes concern one client; anything else (out of file descriptors)
/// is the server's, and accepting again at once would only spin.
async fn accept_failed(e: &std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if !matches!(e.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        tracing::error!(error = %e, "cannot accept connections");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
