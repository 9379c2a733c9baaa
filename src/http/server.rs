//! The app on a socket: HTTP/1.1 connections whose request heads must arrive within a deadline
//! (which also ends connections left idle) and whose answers must be written within another, at
//! most a set number of them open and of those from one address (`connections`), and a graceful
//! shutdown that lets requests in flight finish.
//!
//! HTTP/1.1 only: the head deadline is an HTTP/1 mechanism, and cleartext HTTP/2 would let a
//! client hold a connection open with no deadline at all. A proxy in front speaks HTTP/2 or 3 to
//! browsers where wanted.

use super::connections::{held, Answering, Connections, OpenConnection, Refused, StalledWrites};
use super::Error;
use crate::config::Limits;
use axum::extract::ConnectInfo;
use axum::response::IntoResponse;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;
use tower::ServiceExt;

/// Connections beyond the cap that may be waiting for their 503 at once; any more are closed
/// without an answer, so a flood cannot use up the process's file descriptors.
const REFUSALS_AT_ONCE: usize = 64;

/// Serves `app` on `listener` until `shutdown` resolves, then waits for the requests in flight
/// (at most the request timeout). Handlers can read the client's address as
/// `ConnectInfo<SocketAddr>`, and the connection's state as `Arc<OpenConnection>`.
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
    let connections = Arc::new(Connections::new(
        limits.max_connections,
        limits.max_connections_per_client,
        limits.trusted_proxies.clone(),
    ));
    let refusals = Arc::new(Semaphore::new(REFUSALS_AT_ONCE));
    let (stop, stopping) = watch::channel(false);
    let mut open = JoinSet::new();
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
        while open.try_join_next().is_some() {}
        let _ = stream.set_nodelay(true);
        match connections.admit(remote.ip()) {
            Ok(conn) => {
                let service = service(app.clone(), remote, conn.clone());
                let stream = StalledWrites::new(stream, limits.write_timeout);
                let connection = builder.serve_connection(TokioIo::new(stream), service);
                open.spawn(run(connection, conn, connections.clone(), stopping.clone()));
            }
            Err(why) => {
                if let Ok(refusal) = refusals.clone().try_acquire_owned() {
                    tokio::spawn(refuse(refusing.clone(), stream, why, refusal));
                }
            }
        }
    }
    drop(listener);
    let _ = stop.send(true);
    let drained = async { while open.join_next().await.is_some() {} };
    if tokio::time::timeout(limits.request_timeout, drained).await.is_err() {
        tracing::warn!("requests still running when the request timeout passed were cut off");
    }
    Ok(())
}

/// One connection until it ends: closed after its answer in progress when its place goes to
/// another or the server stops.
async fn run<S>(
    connection: http1::Connection<TokioIo<StalledWrites<TcpStream>>, S>,
    conn: Arc<OpenConnection>,
    connections: Arc<Connections>,
    mut stopping: watch::Receiver<bool>,
) where
    S: hyper::service::HttpService<Incoming, ResBody = axum::body::Body>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut connection = std::pin::pin!(connection);
    let mut closing = false;
    loop {
        tokio::select! {
            ended = connection.as_mut() => {
                if let Err(e) = ended {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                break;
            }
            () = conn.close.notified(), if !closing => {
                connection.as_mut().graceful_shutdown();
                closing = true;
            }
            _ = stopping.changed(), if !closing => {
                connection.as_mut().graceful_shutdown();
                closing = true;
            }
        }
    }
    connections.leave(&conn);
}

/// The app for one connection, with the client's address and the connection in each request,
/// each answer counted as in progress until its body is written.
fn service(
    app: Router,
    remote: SocketAddr,
    conn: Arc<OpenConnection>,
) -> impl hyper::service::Service<
    hyper::Request<Incoming>,
    Response = axum::response::Response,
    Error = std::convert::Infallible,
    Future = impl Send,
> {
    hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(remote));
        req.extensions_mut().insert(conn.clone());
        let answer = Answering::begin(conn.clone());
        let response = app.clone().oneshot(req.map(axum::body::Body::new));
        async move {
            let response = response.await?;
            Ok(response.map(|body| held(body, answer)))
        }
    })
}

/// Answers a connection beyond a cap 503 and closes it.
async fn refuse(builder: http1::Builder, stream: TcpStream, why: Refused, _refusal: tokio::sync::OwnedSemaphorePermit) {
    let busy = hyper::service::service_fn(move |_req: hyper::Request<Incoming>| async move {
        let message = match why {
            Refused::Full => "the server has as many connections open as it may; retry shortly",
            Refused::PerClient => "your address has as many connections open as it may; close one or retry shortly",
        };
        Ok::<_, std::convert::Infallible>(Error::Busy(message.into()).into_response())
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
