//! Request bodies held to their route's size and pace, through the server binary: a form over its
//! route's limit answers 413 from its head when `Content-Length` declares it, and as soon as a
//! chunked body passes the limit, as the route's page; a body that arrives too slowly is cut with
//! 408, as a page on a form route and in the JSON error format on the API.

use super::{answer_on, cli_token, refused, server, trickle, Server};
use crate::helpers::forms::hidden;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// The head of a form POST to `path` with `cookie` and a framing header (`Content-Length: n` or
/// `Transfer-Encoding: chunked`).
fn form_head(path: &str, cookie: &str, framing: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: sw\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Cookie: {cookie}\r\n{framing}\r\n\r\n"
    )
}

/// The `name=value` of a cookie a response sets.
fn set_cookie(res: &reqwest::Response, name: &str) -> String {
    let prefix = format!("{name}=");
    res.headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with(&prefix))
        .and_then(|c| c.split(';').next())
        .unwrap_or_else(|| panic!("no {name} cookie"))
        .to_string()
}

/// Logs in at `server` with `token` as a browser does; answers the session's `sw_session=…`.
async fn session_cookie(server: &Server, token: &str) -> String {
    let c = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let form = c.get(format!("{}/login", server.url())).send().await.unwrap();
    let login_cookie = set_cookie(&form, "sw_login_csrf");
    let csrf = hidden(&form.text().await.unwrap(), "csrf");
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([("token", token), ("csrf", &csrf), ("next", "/regressions")])
        .finish();
    let res = c
        .post(format!("{}/login", server.url()))
        .header(reqwest::header::COOKIE, login_cookie)
        .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap();
    assert!(res.status().is_redirection(), "the editor logs in: {}", res.status());
    set_cookie(&res, "sw_session")
}

/// Sends a chunked body in 1 KiB chunks, up to `most` bytes, stopping as soon as the server
/// answers; answers what it said. The body is never ended.
async fn chunks_until_answered(stream: &mut TcpStream, most: usize) -> String {
    let chunk = format!("400\r\n{}\r\n", "a".repeat(1024));
    for _ in 0..most / 1024 {
        if stream.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
        let mut buf = [0u8; 1];
        if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_millis(20), stream.peek(&mut buf)).await {
            break;
        }
    }
    answer_on(stream).await
}

#[tokio::test]
async fn form_bodies_over_their_route_s_limit_answer_413_declared_or_chunked() {
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = server(&dir, &[]);
    let session = session_cookie(&server, &cli_token(&url, "editor", "editor")).await;
    let resend = format!("/deliveries/{}/resend", uuid::Uuid::new_v4());
    // Declared: answered from the head, before a byte of the body is sent.
    for (path, cookie, limit) in [
        ("/login", "", 8 * 1024),
        ("/regressions/1/status", session.as_str(), 16 * 1024),
        (resend.as_str(), "", 16 * 1024),
        ("/regressions/1/notes", session.as_str(), 3 * 64 * 1024 + 4096),
    ] {
        let mut stream = TcpStream::connect(&server.addr).await.unwrap();
        stream.write_all(form_head(path, cookie, "Content-Length: 1000000").as_bytes()).await.unwrap();
        let answer = answer_on(&mut stream).await;
        assert!(answer.starts_with("HTTP/1.1 413"), "{path} with a declared 1 MB form: {answer}");
        assert!(answer.contains("text/html"), "{path}: a form is answered with a page: {answer}");
        assert!(answer.contains(&format!("larger than the limit of {limit} bytes")), "{path}: {answer}");
    }
    // Chunked: read until it passes the limit, then answered without waiting for the rest.
    for (path, cookie, limit) in [("/login", "", 8 * 1024), ("/regressions/1/status", session.as_str(), 16 * 1024)] {
        let mut stream = TcpStream::connect(&server.addr).await.unwrap();
        stream.write_all(form_head(path, cookie, "Transfer-Encoding: chunked").as_bytes()).await.unwrap();
        let answer = chunks_until_answered(&mut stream, 4 * limit).await;
        assert!(answer.starts_with("HTTP/1.1 413"), "{path} with a chunked form past its limit: {answer}");
        assert!(answer.contains(&format!("larger than the limit of {limit} bytes")), "{path}: {answer}");
    }
    assert!(refused(&server.addr, "body_too_large").await >= 6, "each 413 is counted");
}

#[tokio::test]
async fn a_body_arriving_too_slowly_is_cut_with_408() {
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = server(&dir, &[("SLOPEWATCH_BODY_READ_TIMEOUT_SECS", "1")]);
    let token = cli_token(&url, "slow", "ingest");

    let mut login = TcpStream::connect(&server.addr).await.unwrap();
    login.write_all(form_head("/login", "", "Content-Length: 100").as_bytes()).await.unwrap();
    let t = trickle(&mut login, &[b'a'; 40]).await;
    assert!(t.answer.starts_with("HTTP/1.1 408"), "a login form sent a byte at a time: {:?}", t.answer);
    assert!(t.answer.contains("text/html") && t.answer.contains("too slowly"), "{}", t.answer);
    assert!(t.sent < 40, "the server waited for {} bytes of a slow form", t.sent);

    let mut run = TcpStream::connect(&server.addr).await.unwrap();
    let head = format!(
        "POST /api/v1/runs HTTP/1.1\r\nHost: sw\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n"
    );
    run.write_all(head.as_bytes()).await.unwrap();
    let t = trickle(&mut run, &[b' '; 40]).await;
    assert!(t.answer.starts_with("HTTP/1.1 408"), "a chunked run sent a byte at a time: {:?}", t.answer);
    assert!(t.answer.contains("\"code\":\"body_too_slow\""), "in the API's error format: {}", t.answer);
    assert!(t.sent < 40, "the server waited for {} bytes of a slow run", t.sent);
    assert!(refused(&server.addr, "body_too_slow").await >= 2);
}
