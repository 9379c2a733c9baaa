//! The share of one client address without a token, through the server binary: past its share
//! an address gets 503 with `Retry-After` while other addresses are served, and so are its own
//! requests that carry a valid token; behind a trusted proxy the forwarded address is the client.
//! Clients are told apart by the loopback address their socket is bound to (127.0.0.2 and up).

use super::{cli_token, connect_from, get_close, refused, request_from, server};
use crate::builders::RunShape;
use std::net::Ipv4Addr;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// A login form from `from` that declares 100 bytes and sends 6: the server waits for the rest,
/// counting the request against its client meanwhile.
async fn slow_login(from: Ipv4Addr, addr: &str, forwarded_for: Option<&str>) -> TcpStream {
    let mut stream = connect_from(from, addr).await;
    let forwarded = forwarded_for.map(|a| format!("X-Forwarded-For: {a}\r\n")).unwrap_or_default();
    let head = format!(
        "POST /login HTTP/1.1\r\nHost: sw\r\n{forwarded}Content-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: 100\r\n\r\ntoken="
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// Asks `raw` from `from` every 100 ms, up to 5 s, until the answer starts with `status`: the
/// server counts a connection a moment after the client's connect returns. Answers the last answer.
async fn until(from: Ipv4Addr, addr: &str, raw: &str, status: &str) -> String {
    let mut answer = String::new();
    for _ in 0..50 {
        answer = request_from(from, addr, raw).await;
        if answer.starts_with(status) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    answer
}

/// Holds `share` slow logins from `from` (for `forwarded_for`, behind a proxy) and asks `read`
/// from it until the answer is a 503, up to 5 s: the held logins and the answer. The server may
/// take up a read sent after a login before the login itself (each connection is its own task),
/// count the read, and refuse the login as the one past the share; a login so refused is opened
/// again, so that the share ends up held by logins alone.
async fn fill_share(
    from: Ipv4Addr,
    addr: &str,
    forwarded_for: Option<&str>,
    share: usize,
    read: &str,
) -> (Vec<TcpStream>, String) {
    let mut held = Vec::new();
    let mut answer = String::new();
    for _ in 0..50 {
        // A login the server has already answered was refused; it holds nothing.
        let mut open = Vec::new();
        for mut stream in held.drain(..) {
            let mut buf = [0u8; 64];
            match tokio::time::timeout(Duration::from_millis(1), tokio::io::AsyncReadExt::read(&mut stream, &mut buf))
                .await
            {
                Ok(_) => {}
                Err(_) => open.push(stream),
            }
        }
        held = open;
        while held.len() < share {
            held.push(slow_login(from, addr, forwarded_for).await);
        }
        answer = request_from(from, addr, read).await;
        if answer.starts_with("HTTP/1.1 503") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (held, answer)
}

#[tokio::test]
async fn one_address_past_its_share_gets_503_while_other_addresses_and_its_tokens_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let (server, url) =
        server(&dir, &[("SLOPEWATCH_ANONYMOUS_REQUESTS_PER_CLIENT", "2"), ("SLOPEWATCH_BODY_READ_TIMEOUT_SECS", "60")]);
    let token = cli_token(&url, "agent", "ingest");
    // Outside the flood test's addresses (127.0.0.2 and up), which may run at the same time.
    let (capped, other) = (Ipv4Addr::new(127, 0, 42, 2), Ipv4Addr::new(127, 0, 42, 3));
    let read = get_close("/api/v1/workloads");
    let (mut held, turned) = fill_share(capped, &server.addr, None, 2, &read).await;
    if !turned.starts_with("HTTP/1.1 503") {
        panic!("a third request from the address was served: {turned}\nthe server's log:\n{}", server.log_text());
    }
    assert!(turned.to_ascii_lowercase().contains("retry-after: "), "{turned}");
    assert!(turned.contains("\"code\":\"unavailable\"") && turned.contains("your address"), "{turned}");

    let served = request_from(other, &server.addr, &read).await;
    assert!(served.starts_with("HTTP/1.1 200"), "another address is served: {served}");
    let with_token = format!(
        "GET /api/v1/workloads HTTP/1.1\r\nHost: sw\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    );
    let read_with_token = request_from(capped, &server.addr, &with_token).await;
    assert!(read_with_token.starts_with("HTTP/1.1 200"), "a token is not held back: {read_with_token}");
    let run = serde_json::to_string(&RunShape::new("gcc", "12.2.0").host("behind-nat").json()).unwrap();
    let submit = format!(
        "POST /api/v1/runs HTTP/1.1\r\nHost: sw\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{run}",
        run.len()
    );
    let stored = request_from(capped, &server.addr, &submit).await;
    assert!(stored.starts_with("HTTP/1.1 201"), "an agent behind the capped address submits: {stored}");
    assert!(refused(&server.addr, "anonymous_cap").await >= 1, "the refusal is counted");

    held.clear();
    let again = until(capped, &server.addr, &read, "HTTP/1.1 200").await;
    assert!(again.starts_with("HTTP/1.1 200"), "the address is served once its requests end: {again}");
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_forwarded_address_is_the_one_capped() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = server(
        &dir,
        &[
            ("SLOPEWATCH_TRUSTED_PROXIES", "127.0.0.1"),
            ("SLOPEWATCH_ANONYMOUS_REQUESTS_PER_CLIENT", "1"),
            ("SLOPEWATCH_BODY_READ_TIMEOUT_SECS", "60"),
        ],
    );
    let proxy = Ipv4Addr::LOCALHOST;
    let read_for = |client: &str| {
        format!("GET /api/v1/workloads HTTP/1.1\r\nHost: sw\r\nX-Forwarded-For: {client}\r\nConnection: close\r\n\r\n")
    };
    let (_held, turned) = fill_share(proxy, &server.addr, Some("198.51.100.7"), 1, &read_for("198.51.100.7")).await;
    assert!(turned.starts_with("HTTP/1.1 503"), "the forwarded client past its share: {turned}");
    let other = request_from(proxy, &server.addr, &read_for("198.51.100.8")).await;
    assert!(other.starts_with("HTTP/1.1 200"), "another client through the same proxy: {other}");
    // From a peer the server does not trust, the header names nobody: the peer is the client.
    let untrusted = request_from(Ipv4Addr::new(127, 0, 0, 9), &server.addr, &read_for("198.51.100.7")).await;
    assert!(untrusted.starts_with("HTTP/1.1 200"), "a header from an untrusted peer counts for nothing: {untrusted}");
}
