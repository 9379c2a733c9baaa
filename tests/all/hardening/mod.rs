//! The server against slow, greedy and hostile clients: headers or bodies sent a byte at a time
//! and idle connections are cut off, requests beyond the caps answer 503, an
//! unauthenticated upload is refused before its body is read, compare parameters cost a constant
//! number of queries, metrics labels stay a fixed set, and every answer carries the headers that
//! keep pages from being framed, sniffed or made to run injected script. `bodies`: each route's
//! body limit and pace; `clients`: the share of one client address without a token;
//! `connections`: the connection caps and idle connections closed to make room; `siege`: idle,
//! unknown-token, anonymous and non-reading clients from 20 addresses while an agent submits; `flood`: slow
//! anonymous uploads from 300 addresses while an agent submits runs.
//!
//! Traffic goes to 127.0.0.0/8 only, each test sends a bounded number of bytes and requests, and
//! no test asserts how long anything took: a cut-off shows as the connection closing before the
//! client has sent everything it would have.

mod bodies;
mod clients;
mod connections;
mod flood;
mod siege;

use crate::builders::RunShape;
use crate::helpers::process::{create_token as cli_token, free_addr, Server};
use crate::helpers::{on_both_backends, Backend, TestApp, TestDb};
use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tower::ServiceExt;

/// How long the client waits for the server between two bytes it sends.
const PACE: Duration = Duration::from_millis(500);

/// A server process over a fresh SQLite file, with the settings `env` gives it.
fn server(dir: &tempfile::TempDir, env: &[(&str, &str)]) -> (Server, String) {
    let url = format!("sqlite://{}", dir.path().join("sw.db").display());
    let server = Server::start_with_env(&url, &free_addr(), None, &dir.path().join("server.log"), "info", env);
    (server, url)
}

/// What became of a connection the client fed `bytes` one at a time, `PACE` apart.
struct Trickle {
    /// Bytes written before the server closed the connection (all of them if it never did).
    sent: usize,
    /// Whether the server closed the connection.
    closed: bool,
    /// What the server answered, if anything.
    answer: String,
}

/// Sends `bytes` one at a time, `PACE` apart, reading whatever the server says in between, until
/// the server closes the connection or every byte is sent.
async fn trickle(stream: &mut TcpStream, bytes: &[u8]) -> Trickle {
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    for (sent, byte) in bytes.iter().enumerate() {
        if stream.write_all(&[*byte]).await.is_err() {
            return Trickle { sent, closed: true, answer: String::from_utf8_lossy(&answer).into() };
        }
        loop {
            match tokio::time::timeout(PACE, stream.read(&mut buf)).await {
                Err(_) => break,
                Ok(Ok(0)) | Ok(Err(_)) => {
                    return Trickle { sent: sent + 1, closed: true, answer: String::from_utf8_lossy(&answer).into() }
                }
                Ok(Ok(n)) => answer.extend_from_slice(&buf[..n]),
            }
        }
    }
    Trickle { sent: bytes.len(), closed: false, answer: String::from_utf8_lossy(&answer).into() }
}

/// Waits up to `polls` times `PACE` for the server to close an idle connection; answers whether
/// it did.
async fn closed_while_idle(stream: &mut TcpStream, polls: usize) -> bool {
    let mut buf = [0u8; 4096];
    for _ in 0..polls {
        match tokio::time::timeout(PACE, stream.read(&mut buf)).await {
            Err(_) | Ok(Ok(1..)) => continue,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
        }
    }
    false
}

/// One request on a fresh connection; answers the status line and the rest of the answer.
async fn request(addr: &str, raw: &str) -> String {
    request_from(Ipv4Addr::LOCALHOST, addr, raw).await
}

/// A connection to `addr` from the loopback address `from` (any of 127.0.0.0/8), so that one test
/// can be several clients.
async fn connect_from(from: Ipv4Addr, addr: &str) -> TcpStream {
    try_connect_from(from, addr.parse().unwrap()).await.unwrap()
}

/// `connect_from`, for a caller that counts a connection the server refused.
async fn try_connect_from(from: Ipv4Addr, addr: SocketAddr) -> std::io::Result<TcpStream> {
    assert!(from.is_loopback(), "tests stay on loopback");
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from((from, 0)))?;
    socket.connect(addr).await
}

/// One request on a fresh connection from `from`; answers what the server sent until it closed.
async fn request_from(from: Ipv4Addr, addr: &str, raw: &str) -> String {
    let mut stream = connect_from(from, addr).await;
    stream.write_all(raw.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// What the server answered on `stream` within 30 s, read until it closed or a whole answer of
/// `Content-Length` came; the client sends nothing more meanwhile.
async fn answer_on(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while let Ok(Ok(n @ 1..)) = tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
        answer.extend_from_slice(&buf[..n]);
        if is_whole(&answer) {
            break;
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// The count `/metrics` shows for one refusal reason.
pub(super) async fn refused(addr: &str, reason: &str) -> u64 {
    let metrics = request(addr, "GET /metrics HTTP/1.1\r\nHost: sw\r\nConnection: close\r\n\r\n").await;
    let series = format!("slopewatch_requests_refused_total{{reason=\"{reason}\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&series))
        .unwrap_or_else(|| panic!("no {series} in {metrics}"))
        .trim()
        .parse()
        .unwrap()
}

/// Whether `answer` holds a head and as many body bytes as its `Content-Length` says.
fn is_whole(answer: &[u8]) -> bool {
    let text = String::from_utf8_lossy(answer);
    let Some((head, body)) = text.split_once("\r\n\r\n") else { return false };
    let length = head.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok()).flatten()
    });
    length.is_some_and(|n| body.len() >= n)
}

fn get_close(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: sw\r\nConnection: close\r\n\r\n")
}

#[tokio::test]
async fn headers_sent_a_byte_at_a_time_are_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = server(&dir, &[("SLOPEWATCH_HEADER_READ_TIMEOUT_SECS", "1")]);
    let mut stream = TcpStream::connect(&server.addr).await.unwrap();
    let head = b"GET /healthz HTTP/1.1\r\nHost: sw\r\nX-Slow: aaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let t = trickle(&mut stream, head).await;
    assert!(t.closed && t.sent < head.len(), "the server waited for all {} bytes of a slow head", t.sent);
    assert!(!t.answer.contains("200 OK"), "a head cut off is not served: {}", t.answer);
}

#[tokio::test]
async fn idle_connections_are_closed_before_and_between_requests() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = server(&dir, &[("SLOPEWATCH_HEADER_READ_TIMEOUT_SECS", "1")]);
    let mut silent = TcpStream::connect(&server.addr).await.unwrap();
    let mut kept_alive = TcpStream::connect(&server.addr).await.unwrap();
    kept_alive.write_all(b"GET /healthz HTTP/1.1\r\nHost: sw\r\n\r\n").await.unwrap();
    let mut buf = [0u8; 1024];
    let n = kept_alive.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"), "the first request is served");
    let (silent_closed, idle_closed) =
        tokio::join!(closed_while_idle(&mut silent, 20), closed_while_idle(&mut kept_alive, 20));
    assert!(silent_closed, "a connection that never sent a byte was kept open");
    assert!(idle_closed, "a kept-alive connection left idle was kept open");
}

#[tokio::test]
async fn a_body_sent_a_byte_at_a_time_is_cut_off_by_the_request_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = server(&dir, &[("SLOPEWATCH_REQUEST_TIMEOUT_SECS", "2")]);
    let token = cli_token(&url, "slow", "ingest");
    let mut stream = TcpStream::connect(&server.addr).await.unwrap();
    let head = format!(
        "POST /api/v1/runs HTTP/1.1\r\nHost: sw\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let t = trickle(&mut stream, &[b' '; 40]).await;
    assert!(t.answer.starts_with("HTTP/1.1 503"), "a request past its timeout answers 503: {:?}", t.answer);
    assert!(t.answer.contains("\"code\":\"unavailable\""), "in the app's error format: {}", t.answer);
    assert!(t.sent < 40, "the server waited for {} bytes of a slow body", t.sent);
}

#[tokio::test]
async fn requests_beyond_the_in_flight_cap_answer_503_until_one_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = server(&dir, &[("SLOPEWATCH_MAX_CONCURRENT_REQUESTS", "2")]);
    let token = cli_token(&url, "slow", "ingest");
    // Two uploads whose bodies never finish hold both places. An upload answered at once (a 503:
    // a request of the server's start-up check was still finishing) is sent again.
    let mut uploads = Vec::new();
    while uploads.len() < 2 {
        let mut s = TcpStream::connect(&server.addr).await.unwrap();
        let head = format!(
            "POST /api/v1/runs HTTP/1.1\r\nHost: sw\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{"
        );
        s.write_all(head.as_bytes()).await.unwrap();
        let mut buf = [0u8; 64];
        match tokio::time::timeout(Duration::from_millis(300), s.read(&mut buf)).await {
            Err(_) => uploads.push(s),
            Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    let mut refused = None;
    for _ in 0..50 {
        let answer = request(&server.addr, &get_close("/api/v1/workloads")).await;
        if answer.starts_with("HTTP/1.1 503") {
            refused = Some(answer);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let refused = refused.expect("a third request while two are in flight was served");
    assert!(refused.contains("\"code\":\"unavailable\"") && refused.contains("retry-after"), "{refused}");
    let health = request(&server.addr, &get_close("/healthz")).await;
    assert!(health.starts_with("HTTP/1.1 200"), "liveness answers whatever the load: {health}");

    drop(uploads);
    assert!(served_again(&server.addr).await, "requests are served again once the uploads are gone");
}

/// Whether a request is answered 200 within 5 s, asked every 100 ms.
async fn served_again(addr: &str) -> bool {
    for _ in 0..50 {
        if request(addr, &get_close("/api/v1/workloads")).await.starts_with("HTTP/1.1 200") {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// A 1 MiB chunk each time the body is polled, counting the polls.
fn counted_body(chunks: usize, pulled: Arc<AtomicUsize>) -> Body {
    Body::from_stream(futures_util::stream::iter((0..chunks).map(move |_| {
        pulled.fetch_add(1, Ordering::SeqCst);
        Ok::<_, std::io::Error>(Bytes::from(vec![b' '; 1 << 20]))
    })))
}

#[tokio::test]
async fn an_upload_without_a_valid_ingest_token_is_refused_before_its_body_is_read() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let editor = app.editor_token.clone();
        for (what, auth, status) in [
            ("no token", None, StatusCode::UNAUTHORIZED),
            ("a forged token", Some("sw_forged".to_string()), StatusCode::UNAUTHORIZED),
            ("an editor token", Some(editor), StatusCode::FORBIDDEN),
        ] {
            let pulled = Arc::new(AtomicUsize::new(0));
            let mut req = Request::post("/api/v1/runs").header("content-type", "application/json");
            if let Some(token) = auth {
                req = req.header("authorization", format!("Bearer {token}"));
            }
            let res = app.router.clone().oneshot(req.body(counted_body(8, pulled.clone())).unwrap()).await.unwrap();
            assert_eq!(res.status(), status, "{what}");
            assert_eq!(pulled.load(Ordering::SeqCst), 0, "{what}: the body was read before the token was checked");
        }
        // With a valid token the body is read and judged as before.
        let (status, body) = app.submit(&RunShape::new("gcc", "12.2.0").host("h").json()).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    })
    .await;
}

/// Counts the statements the store sends, as sqlx reports each one.
mod queries {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Once;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    static COUNT: AtomicUsize = AtomicUsize::new(0);

    struct Counter;

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Counter {
        fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
            if event.metadata().target() == "sqlx::query" {
                COUNT.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    /// Statements sent since the process started counting.
    pub fn sent() -> usize {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| tracing_subscriber::registry().with(Counter).init());
        COUNT.load(Ordering::SeqCst)
    }
}

#[tokio::test]
async fn compare_parameters_cost_a_constant_number_of_queries_and_long_ones_are_refused() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        for version in ["0.15.2", "0.16.0"] {
            let (status, body) = app.submit(&RunShape::new("zig-cc-musl", version).host("h").json()).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        // The fewest of three tries: a first request may also open a pool connection.
        let cost = |b: String| {
            let app = &app;
            async move {
                let uri = format!("/compare?workload=workload-0&a=zig-cc-musl%400.15.2&b={b}");
                let mut fewest = (StatusCode::OK, usize::MAX);
                for _ in 0..3 {
                    let before = queries::sent();
                    let (status, _) = app.get(&uri).await;
                    fewest = (status, fewest.1.min(queries::sent() - before));
                }
                fewest
            }
        };
        let (found, one) = cost("zig-cc-musl%400.16.0".into()).await;
        assert_eq!(found, StatusCode::OK);
        let (missing, few) = cost("gcc%401".into()).await;
        assert_eq!(missing, StatusCode::NOT_FOUND);
        let (many_status, many) = cost("%40".repeat(250)).await;
        assert_eq!(many_status, StatusCode::NOT_FOUND);
        let (splits_status, splits) = cost("x%40".repeat(60) + "1").await;
        assert_eq!(splits_status, StatusCode::NOT_FOUND);
        assert!(one > 0, "the counter sees the store's queries");
        assert_eq!((many, splits), (few, few), "250 `@` or 60 splits cost what one does ({one} when found)");

        let long = "@".repeat(32_000);
        let (status, body) = app.get(&format!("/compare/data.json?workload=workload-0&a={long}&b=x%401")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("a is") && message.contains("characters"), "the 400 says what is wrong: {message}");
        let (status, page) = app.get(&format!("/compare?workload=workload-0&a=x%401&b={long}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "the page too: {page}");
    })
    .await;
}

#[tokio::test]
async fn metrics_label_only_known_methods_and_matched_routes() {
    let app = TestApp::new(TestDb::new(Backend::Sqlite).await).await;
    let odd_method = "X".repeat(8_000);
    for (method, path) in [
        (odd_method.as_str(), "/"),
        (odd_method.as_str(), "/api/v1/runs"),
        ("BREW", "/no/such/page-with-a-unique-name"),
        ("GET", "/no/such/page-with-a-unique-name"),
    ] {
        let res = app.router.clone().oneshot(Request::builder().method(method).uri(path).body(Body::empty()).unwrap());
        assert!(res.await.unwrap().status().is_client_error(), "{method} {path}");
    }
    let metrics = app.metrics().await;
    assert!(!metrics.contains("XXXX") && !metrics.contains("BREW"), "an unknown method became a label");
    assert!(!metrics.contains("page-with-a-unique-name"), "an unmatched path became a label");
    assert!(metrics.contains("route=\"/\",method=\"other\""), "unknown methods count as `other`:\n{metrics}");
    assert!(metrics.contains("route=\"unmatched\",method=\"GET\""), "{metrics}");
    assert!(metrics.lines().all(|l| l.len() < 300), "a label is short");
}

#[tokio::test]
async fn answers_forbid_framing_sniffing_and_inline_script_and_csv_downloads() {
    let app = TestApp::new(TestDb::new(Backend::Sqlite).await).await;
    let (status, body) = app.submit(&RunShape::new("gcc", "12.2.0").host("h").json()).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for path in ["/", "/series/workload-0/gcc", "/api/v1/workloads", "/no/such/page", "/static/style.css"] {
        let res = app.router.clone().oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
        let header = |name: &str| res.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        assert_eq!(header("x-content-type-options"), "nosniff", "{path}");
        assert_eq!(header("x-frame-options"), "DENY", "{path}");
        let csp = header("content-security-policy");
        let directive = |name: &str| {
            csp.split(';').map(str::trim).find(|d| d.split_whitespace().next() == Some(name)).unwrap_or("").to_string()
        };
        assert_eq!(directive("frame-ancestors"), "frame-ancestors 'none'", "{path}: {csp}");
        assert_eq!(directive("default-src"), "default-src 'self'", "{path}: {csp}");
        assert_eq!(directive("script-src"), "script-src 'self'", "{path}: no inline script: {csp}");
        assert_eq!(directive("object-src"), "object-src 'none'", "{path}: {csp}");
    }
    for path in
        ["/series/workload-0/gcc/data.csv", "/compare/data.csv?workload=workload-0&a=gcc%4012.2.0&b=gcc%4012.2.0"]
    {
        let res = app.router.clone().oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        let disposition = res.headers().get("content-disposition").and_then(|v| v.to_str().ok()).unwrap_or("");
        assert!(
            disposition.starts_with("attachment; filename=\"") && disposition.ends_with(".csv\""),
            "{path}: {disposition:?}"
        );
    }
    // What the policy forbids is not in the templates: scripts come from static files only.
    let templates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    let mut files = vec![templates.clone()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap().to_ascii_lowercase();
        for script in text.split("<script").skip(1) {
            let tag = &script[..script.find('>').unwrap_or(script.len())];
            assert!(tag.contains(" src="), "{}: an inline <script>", path.display());
        }
        let handler = text.split_whitespace().find(|w| w.starts_with("on") && w.contains('='));
        assert!(handler.is_none(), "{}: an inline event handler {handler:?}", path.display());
        assert!(!text.contains("javascript:"), "{}: a javascript: URL", path.display());
    }
}
