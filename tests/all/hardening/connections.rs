//! Connections have shares: when every place is taken an idle connection is closed to admit a new
//! one, one that never carried a token before one that did; only busy connections make a
//! newcomer wait (503); one address may hold at most its cap of connections; `/healthz` does not
//! keep a connection alive. Each test holds a handful of loopback connections.

use super::{answer_on, closed_while_idle, connect_from, get_close, request, request_from, served_again, server};
use crate::helpers::process::create_token as cli_token;
use std::net::Ipv4Addr;
use tokio::io::AsyncWriteExt;

fn from(last: u8) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 0, last)
}

/// What a request from `client` is answered, asked again until it is refused (or 50 times): a
/// connect returns once the kernel has the connection, which may be before the server counts it.
async fn refused_from(client: Ipv4Addr, addr: &str) -> String {
    let mut answer = String::new();
    for _ in 0..50 {
        answer = request_from(client, addr, &get_close("/api/v1/workloads")).await;
        if answer.starts_with("HTTP/1.1 503") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    answer
}

#[tokio::test]
async fn a_full_server_closes_an_idle_connection_to_admit_a_new_one_and_a_token_s_last() {
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = server(&dir, &[("SLOPEWATCH_MAX_CONNECTIONS", "2")]);
    let token = cli_token(&url, "agent", "ingest");
    // An agent's keep-alive connection, idle after a request with its token; an anonymous one
    // that never sent anything.
    let mut agent = connect_from(from(41), &server.addr).await;
    let ask = format!("GET /api/v1/workloads HTTP/1.1\r\nHost: sw\r\nAuthorization: Bearer {token}\r\n\r\n");
    agent.write_all(ask.as_bytes()).await.unwrap();
    assert!(answer_on(&mut agent).await.starts_with("HTTP/1.1 200"));
    let mut idle = connect_from(from(42), &server.addr).await;
    // The server is full: a newcomer is admitted, and the anonymous idle connection goes.
    let answer = request_from(from(43), &server.addr, &get_close("/api/v1/workloads")).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(closed_while_idle(&mut idle, 10).await, "the idle anonymous connection made room");
    agent.write_all(ask.as_bytes()).await.unwrap();
    assert!(answer_on(&mut agent).await.starts_with("HTTP/1.1 200"), "the agent's connection stays");
}

#[tokio::test]
async fn busy_connections_make_a_newcomer_wait() {
    let dir = tempfile::tempdir().unwrap();
    let env = [("SLOPEWATCH_MAX_CONNECTIONS", "2"), ("SLOPEWATCH_BODY_READ_TIMEOUT_SECS", "30")];
    let (server, url) = server(&dir, &env);
    let token = cli_token(&url, "agent", "ingest");
    // Two agents' uploads whose bodies have not come yet: answers in progress.
    let head = format!(
        "POST /api/v1/runs HTTP/1.1\r\nHost: sw\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    );
    let mut busy = Vec::new();
    for i in 0..2 {
        let mut stream = connect_from(from(51 + i), &server.addr).await;
        stream.write_all(head.as_bytes()).await.unwrap();
        busy.push(stream);
    }
    // Until its request has come, a connection is idle and may be closed to make room: give the
    // server a moment to read both heads.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let answer = refused_from(from(53), &server.addr).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "nothing idle to close: {answer}");
    assert!(answer.contains("as many connections open as it may"), "{answer}");
    drop(busy);
    assert!(served_again(&server.addr).await, "places freed by closed connections are taken again");
}

#[tokio::test]
async fn one_address_holds_at_most_its_cap_and_healthz_closes_its_connection() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = server(&dir, &[("SLOPEWATCH_MAX_CONNECTIONS_PER_CLIENT", "2")]);
    let held = [connect_from(from(61), &server.addr).await, connect_from(from(61), &server.addr).await];
    let answer = refused_from(from(61), &server.addr).await;
    assert!(answer.contains("your address has as many connections open as it may"), "{answer}");
    let other = request_from(from(62), &server.addr, &get_close("/api/v1/workloads")).await;
    assert!(other.starts_with("HTTP/1.1 200"), "another address: {other}");
    drop(held);

    // A liveness probe is answered and its connection closed: it cannot keep one alive.
    let mut probe = connect_from(from(63), &server.addr).await;
    probe.write_all(b"GET /healthz HTTP/1.1\r\nHost: sw\r\n\r\n").await.unwrap();
    let answer = answer_on(&mut probe).await;
    assert!(answer.starts_with("HTTP/1.1 200") && answer.to_ascii_lowercase().contains("connection: close"));
    assert!(closed_while_idle(&mut probe, 4).await, "closed after its answer");
    assert!(request(&server.addr, &get_close("/healthz")).await.starts_with("HTTP/1.1 200"));
}
