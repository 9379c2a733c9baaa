//! Helpers shared by the agent's integration tests: running the real binary, real compilers.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// The server's tests' tmpfs, shared rather than copied.
#[path = "../../../../tests/all/helpers/tmpfs.rs"]
pub mod tmpfs;

pub fn agent() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_slopewatch-agent"));
    // Tests must not read or write the user's own cache, spool or token, nor the job summary of
    // a CI job running them.
    for var in [
        "SLOPEWATCH_TOKEN",
        "SLOPEWATCH_TOKEN_FILE",
        "SLOPEWATCH_SERVER",
        "SLOPEWATCH_CONFIG",
        "SLOPEWATCH_SPOOL_DIR",
        "GITHUB_STEP_SUMMARY",
    ] {
        c.env_remove(var);
    }
    c
}

pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("the agent runs");
    eprintln!(
        "--- stdout\n{}--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Whether `check` passed the gate: 0, or 3 when a verdict stayed unsure, which a job may accept.
/// For tests of what `check` writes rather than of a verdict, on hosts too busy to promise one.
pub fn gate_passed(out: &Output) -> bool {
    matches!(out.status.code(), Some(0 | 3))
}

pub fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Compiles a fixture into an object with gcc, to be linked ahead of libc.
pub fn shim_object(dir: &Path, name: &str) -> PathBuf {
    let obj = dir.join(name.replace(".c", ".o"));
    let status = Command::new("gcc").args(["-O2", "-c"]).arg(fixture(name)).arg("-o").arg(&obj).status().unwrap();
    assert!(status.success());
    obj
}

/// Every file under `dir`, at any depth.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

pub fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(program)).find(|p| p.is_file())
}

/// Zig releases to test: `SLOPEWATCH_TEST_ZIG` (colon-separated paths) or the CI install paths.
pub fn zigs() -> Vec<PathBuf> {
    if let Some(list) = std::env::var_os("SLOPEWATCH_TEST_ZIG") {
        return std::env::split_paths(&list).filter(|p| p.is_file()).collect();
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/opt/slopewatch-zig")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("ziglang/zig"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found
}

/// The slope per (toolchain, workload) of a file written by `measure --out`.
pub fn slopes(path: &Path) -> Vec<(String, String, f64)> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let runs = match v {
        serde_json::Value::Array(a) => a,
        one => vec![one],
    };
    let mut out = Vec::new();
    for r in runs {
        let run = slopewatch_core::wire::RunSubmission::from_json(&serde_json::to_vec(&r).unwrap()).unwrap();
        for w in &run.workloads {
            let pts: Vec<(f64, f64)> = w.measurements.iter().map(|m| (m.size as f64, m.median_ns())).collect();
            out.push((run.toolchain.name.clone(), w.name.clone(), slopewatch_core::fit::fit(&pts).unwrap().slope));
        }
    }
    out
}

/// One request as the listener saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub authorization: String,
    pub body: String,
}

/// Serves `responses` (status, body) in order, one per connection, and records each request. Like
/// a server of the release before capabilities, it answers `GET /api/v1/capabilities` with a 404
/// (neither recorded nor taken from `responses`): the agent then sends what that release accepted.
pub fn listener(responses: Vec<(u16, String)>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        let mut responses = responses.into_iter();
        loop {
            let (stream, _) = l.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            let (mut len, mut authorization) = (0, String::new());
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                if h.trim().is_empty() {
                    break;
                }
                let (k, v) = h.split_once(':').unwrap();
                match k.to_ascii_lowercase().as_str() {
                    "content-length" => len = v.trim().parse().unwrap(),
                    "authorization" => authorization = v.trim().to_string(),
                    _ => {}
                }
            }
            let mut buf = vec![0; len];
            reader.read_exact(&mut buf).unwrap();
            let (status, body) = if line.starts_with("GET /api/v1/capabilities ") {
                (404, String::new())
            } else {
                let Some(next) = responses.next() else { return };
                record.lock().unwrap().push(Seen { path, authorization, body: String::from_utf8(buf).unwrap() });
                next
            };
            let mut stream = stream;
            write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
        }
    });
    (url, seen)
}

/// A server that is down: a port nothing listens on, so every delivery is refused. It is below the
/// ephemeral range on purpose: a port just freed by `bind(":0")` can be handed to the listener of a
/// test running beside, which would then answer a request meant to be refused.
pub fn unreachable_server() -> String {
    "http://127.0.0.1:9".to_string()
}

/// A server's answer to a run whose id the test does not know ahead (a run measured and sent in
/// one go): any run id, as a server answers the one it was sent.
pub fn stored_unknown(created: bool) -> (u16, String) {
    stored(&uuid::Uuid::new_v4().to_string(), created)
}

pub fn stored(run_id: &str, created: bool) -> (u16, String) {
    let status = if created { 201 } else { 200 };
    (status, format!(r#"{{"run_id":"{run_id}","created":{created},"fits":[],"url":"/runs/{run_id}"}}"#))
}

/// A valid run written as `measure --out` would write it.
pub fn run_file(dir: &Path) -> (std::path::PathBuf, String) {
    let id = uuid::Uuid::new_v4().to_string();
    let run = serde_json::json!({
        "run_id": id, "agent_version": "0.1.0", "started_at": "2026-11-29T21:00:00Z",
        "host": {"name": "test-host"},
        "toolchain": {"name": "gcc-glibc", "version": "12.2.0", "libc": "glibc 2.36"},
        "workloads": [{"name": "strchr", "size_unit": "bytes", "measurements": [
            {"size": 65536, "samples_ns": [1000.0]}, {"size": 131072, "samples_ns": [2000.0]},
            {"size": 262144, "samples_ns": [4000.0]}, {"size": 524288, "samples_ns": [8000.0]}]}]
    });
    let path = dir.join("run.json");
    std::fs::write(&path, serde_json::to_vec(&run).unwrap()).unwrap();
    (path, id)
}

pub fn spooled(spool: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(spool)
        .map(|d| {
            d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.ends_with(".json")).collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `submit` with quick retries, so a server that is down costs milliseconds.
pub fn submit(server: &str, file: &Path, spool: &Path) -> std::process::Output {
    run(agent()
        .args(["submit", "--server", server, "--token", "sw_test", "--retry-base", "10ms", "--attempts", "3"])
        .arg(file)
        .arg("--spool-dir")
        .arg(spool))
}

/// The real slopewatch server binary: `SLOPEWATCH_SERVER_BIN`, or the workspace's debug build.
/// `None` when it has not been built.
pub fn server_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SLOPEWATCH_SERVER_BIN") {
        return Some(PathBuf::from(p));
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let mut dirs = vec![workspace.join("target")];
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        dirs.insert(0, PathBuf::from(t));
    }
    dirs.into_iter().map(|d| d.join("debug/slopewatch")).find(|p| p.is_file())
}

/// A running server, stopped when dropped.
pub struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

/// Starts the server on `addr` with the store at `db` and waits until it accepts connections.
pub fn start_server(bin: &Path, addr: &str, db: &str) -> Server {
    start_server_with(bin, addr, db, &[])
}

/// Starts the server as `start_server` does, with more arguments to `serve` (e.g. `--config`).
pub fn start_server_with(bin: &Path, addr: &str, db: &str, args: &[&str]) -> Server {
    let child = Command::new(bin)
        .args(["serve", "--bind", addr, "--database-url", db])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let began = Instant::now();
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(began.elapsed() < Duration::from_secs(30), "server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Server(child)
}

/// Creates an ingest token in the store at `db` with the server's own command.
pub fn ingest_token(bin: &Path, db: &str) -> String {
    token_of_scope(bin, db, "agent-test", "ingest")
}

/// Creates a token named `name` of `scope` in the store at `db` with the server's own command.
pub fn token_of_scope(bin: &Path, db: &str, name: &str, scope: &str) -> String {
    let out = Command::new(bin)
        .args(["token", "create", "--name", name, "--scope", scope, "--database-url", db])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().last().unwrap().trim().to_string()
}

/// Waits until the server's series of `workload` has a slope at some version: summaries are
/// written after the run is stored.
pub fn wait_for_summary(url: &str, workload: &str, lineage: &str, token: &str) {
    let began = Instant::now();
    loop {
        let series = ureq::get(format!("{url}/api/v1/series"))
            .query("workload", workload)
            .query("toolchain", lineage)
            .header("Authorization", &format!("Bearer {token}"))
            .call()
            .ok()
            .and_then(|mut r| r.body_mut().read_to_string().ok())
            .and_then(|body| serde_json::from_str::<serde_json::Value>(&body).ok());
        if series.is_some_and(|s| s["versions"][0]["slope"].is_number()) {
            return;
        }
        assert!(began.elapsed() < Duration::from_secs(20), "the server never summarised {workload}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A real server with its store in `dir`, started with `serve_args`: the server, its URL and an
/// ingest token. `None`, with a note, when the server binary has not been built.
pub fn real_server(dir: &Path, serve_args: &[&str]) -> Option<(Server, String, String)> {
    let Some(bin) = server_binary() else {
        eprintln!("note: the slopewatch server binary is not built (or set SLOPEWATCH_SERVER_BIN); skipped");
        return None;
    };
    let db = format!("sqlite://{}", dir.join("server.db").display());
    let token = ingest_token(&bin, &db);
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let server = start_server_with(&bin, &addr, &db, serve_args);
    Some((server, format!("http://{addr}"), token))
}

/// The JSON a server at `url` answers at `path`.
pub fn get_json(url: &str, path: &str) -> serde_json::Value {
    let body = ureq::get(format!("{url}{path}")).call().unwrap().body_mut().read_to_string().unwrap();
    serde_json::from_str(&body).unwrap()
}

/// Copies a directory tree, e.g. an example project a test then edits.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}
