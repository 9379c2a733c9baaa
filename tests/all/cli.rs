//! The `slopewatch` binary as an operator uses it.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn slopewatch(args: &[&str], db: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_slopewatch")).args(args).env("DATABASE_URL", db).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn tokens_are_shown_once_and_listed_without_their_secret() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("t.db").display());
    let created = slopewatch(&["token", "create", "--name", "build-01", "--scope", "ingest"], &db);
    assert!(created.status.success(), "{}", stderr(&created));
    let out = stdout(&created);
    let secret = out.lines().last().unwrap();
    assert!(secret.starts_with("sw_") && secret.len() == 67, "{out}");

    let again = slopewatch(&["token", "create", "--name", "build-01"], &db);
    assert!(!again.status.success());
    assert!(stderr(&again).contains("already exists"));

    let list = slopewatch(&["token", "list"], &db);
    let listed = stdout(&list);
    assert!(listed.contains("build-01") && listed.contains("ingest") && listed.contains("never"), "{listed}");
    assert!(!listed.contains(&secret[3..]), "the list must never show the token");

    let bisector = slopewatch(&["token", "create", "--name", "bisector-01", "--scope", "bisect"], &db);
    assert!(bisector.status.success(), "{}", stderr(&bisector));
    let listed = stdout(&slopewatch(&["token", "list"], &db));
    assert!(listed.lines().any(|l| l.contains("bisector-01") && l.contains("bisect")), "{listed}");

    assert!(slopewatch(&["token", "revoke", "build-01"], &db).status.success());
    assert!(!stdout(&slopewatch(&["token", "list"], &db)).contains("build-01"));
    let gone = slopewatch(&["token", "revoke", "build-01"], &db);
    assert!(!gone.status.success());
    assert!(stderr(&gone).contains("no token named"));
}

#[test]
fn a_bad_database_url_is_one_clear_line_with_the_password_masked() {
    let unknown = slopewatch(&["migrate"], "mysql://root:hunter2@localhost/db");
    assert!(!unknown.status.success());
    let msg = stderr(&unknown);
    assert_eq!(msg.trim().lines().count(), 1, "{msg}");
    assert!(msg.contains("unsupported database URL") && msg.contains("***") && !msg.contains("hunter2"), "{msg}");

    // Nothing listens on port 9 of loopback.
    let unreachable = slopewatch(&["migrate"], "postgres://sw:hunter2@127.0.0.1:9/sw");
    assert!(!unreachable.status.success());
    let msg = stderr(&unreachable);
    assert!(msg.contains("cannot open database postgres://sw:***@127.0.0.1:9/sw"), "{msg}");
    assert!(!msg.contains("hunter2"));
}

#[test]
fn migrate_creates_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    let out = slopewatch(&["migrate"], &format!("sqlite://{}", path.display()));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(path.exists());
    assert!(stdout(&out).contains("up to date"));
}

#[test]
fn serve_stops_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let bind = format!("127.0.0.1:{port}");
    let child = Command::new(env!("CARGO_BIN_EXE_slopewatch"))
        .args(["serve", "--bind", &bind])
        .current_dir(dir.path())
        .env_remove("DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(&bind).is_err() {
        assert!(Instant::now() < deadline, "server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The default store is created in the working directory.
    assert!(dir.path().join("slopewatch.db").exists());
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("shutting down"));
}
