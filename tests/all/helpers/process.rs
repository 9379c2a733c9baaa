//! The real `slopewatch` and `slopewatch-agent` binaries as processes, and a Postgres server of a
//! test's own that it may stop and start, for fault tests.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A loopback address nothing listens on yet.
/// GETs `url`: the status, and the answer as JSON (`null` when it is not).
pub async fn get_json(c: &reqwest::Client, url: &str) -> (u16, serde_json::Value) {
    let res = c.get(url).send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(serde_json::Value::Null))
}

pub fn free_addr() -> String {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string()
}

/// A running `slopewatch serve`, killed when dropped; its log goes to a file.
pub struct Server {
    child: Child,
    pub addr: String,
    pub log: PathBuf,
}

impl Server {
    /// Starts the server on `addr` over `database_url` and waits until it answers `/healthz`.
    pub fn start(database_url: &str, addr: &str, config: Option<&Path>, log: &Path) -> Server {
        Server::start_logging(database_url, addr, config, log, "info")
    }

    /// Starts the server with the log filter `filter` (`RUST_LOG`).
    pub fn start_logging(database_url: &str, addr: &str, config: Option<&Path>, log: &Path, filter: &str) -> Server {
        Server::start_with_env(database_url, addr, config, log, filter, &[])
    }

    /// Starts the server with further environment variables (settings such as its limits).
    pub fn start_with_env(
        database_url: &str,
        addr: &str,
        config: Option<&Path>,
        log: &Path,
        filter: &str,
        env: &[(&str, &str)],
    ) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_slopewatch"));
        // The line that says it listens is always logged: it tells this server from another test's
        // that took the same port first.
        cmd.args(["serve", "--bind", addr, "--database-url", database_url, "--log-format", "json"])
            .env("RUST_LOG", format!("{filter},slopewatch::cli=info"))
            .envs(env.iter().copied())
            .env_remove("SLOPEWATCH_CONFIG")
            .stdin(Stdio::null());
        if let Some(config) = config {
            cmd.arg("--config").arg(config);
        }
        let out = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
        let logged_before = out.metadata().map_or(0, |m| m.len() as usize);
        cmd.stdout(out.try_clone().unwrap()).stderr(out);
        let child = cmd.spawn().unwrap();
        let mut server = Server { child, addr: addr.to_string(), log: log.to_path_buf() };
        server.wait_until_up(logged_before);
        server
    }

    /// Waits until this server says it listens (in what it logged after `logged_before` bytes)
    /// and its address answers: a connection alone could reach another test's server that took
    /// the port first, while this one fails to bind.
    fn wait_until_up(&mut self, logged_before: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let listening = format!("listening on http://{}", self.addr);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("the server exited with {status}: {}", std::fs::read_to_string(&self.log).unwrap_or_default());
            }
            let logged = std::fs::read(&self.log).unwrap_or_default();
            let said = logged.get(logged_before..).is_some_and(|new| String::from_utf8_lossy(new).contains(&listening));
            if said && std::net::TcpStream::connect(&self.addr).is_ok() {
                return;
            }
            assert!(Instant::now() < deadline, "the server did not start: {}", self.log.display());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running (not restarted, not crashed).
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGKILL: no graceful shutdown, no flush, transactions cut wherever they are.
    pub fn kill_9(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the server binary's CLI against `database_url` and answers stdout; panics on failure.
pub fn cli(args: &[&str], database_url: &str) -> String {
    let out =
        Command::new(env!("CARGO_BIN_EXE_slopewatch")).args(args).env("DATABASE_URL", database_url).output().unwrap();
    assert!(out.status.success(), "slopewatch {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Creates a token with the CLI and answers its secret (the last line of the output).
pub fn create_token(database_url: &str, name: &str, scope: &str) -> String {
    let out = cli(&["token", "create", "--name", name, "--scope", scope], database_url);
    out.lines().last().unwrap().trim().to_string()
}

/// The agent binary, built beside the server by `cargo build --workspace`; built here if missing.
pub fn agent_binary() -> PathBuf {
    let server = Path::new(env!("CARGO_BIN_EXE_slopewatch"));
    let agent = server.with_file_name("slopewatch-agent");
    if !agent.is_file() {
        let mut cargo = Command::new(env!("CARGO"));
        cargo.args(["build", "-p", "slopewatch-agent", "--bin", "slopewatch-agent"]);
        if server.parent().is_some_and(|d| d.ends_with("release")) {
            cargo.arg("--release");
        }
        assert!(cargo.status().unwrap().success(), "cannot build the agent");
    }
    agent
}

/// A Postgres cluster in a temporary directory, on a port of its own, that a test may stop and
/// start without touching the shared server; removed when dropped.
pub struct PrivatePostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
}

impl PrivatePostgres {
    /// Initialises and starts a cluster; `None` (with a note) when no Postgres is installed.
    pub fn start() -> Option<PrivatePostgres> {
        let mut bins: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .flatten()
            .map(|e| e.path().join("bin"))
            .filter(|b| b.join("initdb").is_file())
            .collect();
        bins.sort();
        let Some(bin) = bins.pop() else {
            eprintln!("note: no Postgres server binaries under /usr/lib/postgresql; skipped");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        // Postgres refuses to run as root: the cluster belongs to the postgres user.
        if is_root() {
            let uid = id_of("-u");
            let gid = id_of("-g");
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).unwrap();
        }
        let port = free_addr().rsplit_once(':').unwrap().1.parse().unwrap();
        let pg = PrivatePostgres { dir, bin, port };
        pg.run("initdb", &["-D", &pg.data(), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"]);
        pg.start_again();
        Some(pg)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let program = self.bin.join(tool);
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        let out = cmd.args(args).current_dir(self.dir.path()).output().unwrap();
        assert!(
            out.status.success(),
            "{tool} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts the (stopped) cluster and waits until it accepts connections.
    pub fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("postgres.log").display().to_string();
        self.run("pg_ctl", &["-D", &self.data(), "-o", &options, "-l", &log, "-w", "-t", "60", "start"]);
    }

    /// Stops the cluster the way an operator would (`fast`: sessions are ended, not waited for).
    pub fn stop(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "-t", "60", "stop"]);
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let program = self.bin.join("pg_ctl");
        let data = self.data();
        let args = ["-D", data.as_str(), "-m", "immediate", "-w", "stop"];
        let _ = if is_root() {
            Command::new("runuser").args(["-u", "postgres", "--"]).arg(program).args(args).output()
        } else {
            Command::new(program).args(args).output()
        };
    }
}

fn is_root() -> bool {
    id_of_self() == 0
}

fn id_of_self() -> u32 {
    let out = Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn id_of(flag: &str) -> u32 {
    let out = Command::new("id").args([flag, "postgres"]).output().unwrap();
    assert!(out.status.success(), "no postgres user to own the cluster");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}
