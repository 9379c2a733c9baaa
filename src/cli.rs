//! The `slopewatch` command line: serve, migrate, manage API tokens, move the history between
//! stores and prune old raw samples.

use crate::config::{Config, DatabaseArgs, LogFormat, ServeArgs};
use crate::session_key::{self, SessionKey};
use crate::store::{mask_password, sqlite_file, OpenOptions, Scope, ServerLock, Store};
use crate::transfer::{ExportSummary, ImportSummary};
use crate::{app, auth, retention, transfer, webhooks, AppState};
use anyhow::Context;
use std::path::{Path, PathBuf};

#[derive(clap::Parser, Debug)]
#[command(
    name = "slopewatch",
    version,
    about = "Tracks how the cost of code grows with input size across toolchain versions."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Run the server: API, dashboard and alerts.
    Serve(Box<ServeArgs>),
    /// Bring the database schema up to date and exit.
    Migrate(DatabaseArgs),
    /// Create, list and revoke API tokens.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Exit 0 if a server answers its health check (for container health checks: no curl needed).
    Health {
        /// The health endpoint to ask.
        #[arg(long, default_value = "http://127.0.0.1:3000/healthz")]
        url: String,
    },
    /// Write the whole history (runs, editors' changes to regressions, tokens) as JSON lines.
    Export {
        #[command(flatten)]
        database: DatabaseArgs,
        /// File to write, or `-` for standard output.
        #[arg(long, default_value = "-")]
        output: PathBuf,
    },
    /// Read an export into this store: runs are validated and stored as at ingest, once each.
    Import {
        #[command(flatten)]
        database: DatabaseArgs,
        /// File to read, or `-` for standard input.
        #[arg(long, default_value = "-")]
        input: PathBuf,
        /// TOML file whose `[alerts]` rules regressions are evaluated by (webhooks are not called).
        #[arg(long, env = "SLOPEWATCH_CONFIG")]
        config: Option<PathBuf>,
        /// Also add the export's tokens, admin ones included. Without it they are skipped: whoever
        /// wrote the export may know their secrets.
        #[arg(long)]
        with_tokens: bool,
    },
    /// Remove raw samples older than a number of days now; fits, medians and summaries stay.
    Prune {
        #[command(flatten)]
        database: DatabaseArgs,
        /// Remove the raw samples of runs received more than this many days ago; defaults to
        /// `[retention] samples_days` of the config file.
        #[arg(long, env = "SLOPEWATCH_RETAIN_SAMPLES_DAYS", value_parser = clap::value_parser!(u32).range(1..))]
        samples_days: Option<u32>,
        /// TOML file with a `[retention]` section.
        #[arg(long, env = "SLOPEWATCH_CONFIG")]
        config: Option<PathBuf>,
    },
}

#[derive(clap::Subcommand, Debug)]
pub enum TokenCommand {
    /// Create a token and print it once, alone on the last line.
    Create {
        /// A name to recognise the token by, e.g. the host or team using it.
        #[arg(long)]
        name: String,
        /// What the token may do.
        #[arg(long, value_enum, default_value_t = Scope::Ingest)]
        scope: Scope,
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// List tokens: names, scopes, when created and last used (never the tokens themselves).
    List {
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// Revoke the named token.
    Revoke {
        name: String,
        #[command(flatten)]
        database: DatabaseArgs,
    },
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => serve(*args).await,
        Command::Migrate(db) => {
            open(&db).await?;
            println!("database {} is up to date", mask_password(&db.database_url));
            Ok(())
        }
        Command::Token(cmd) => token(cmd).await,
        Command::Health { url } => health(&url).await,
        Command::Export { database, output } => export(&database, &output).await,
        Command::Import { database, input, config, with_tokens } => {
            import(&database, &input, config.as_deref(), with_tokens).await
        }
        Command::Prune { database, samples_days, config } => prune(&database, samples_days, config.as_deref()).await,
    }
}

/// `-` for standard input or output.
fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Calls `report` at most every few seconds, for progress on long exports and imports.
fn every_few_seconds<T>(mut report: impl FnMut(&T)) -> impl FnMut(&T) {
    let mut last = std::time::Instant::now();
    move |t: &T| {
        if last.elapsed() >= std::time::Duration::from_secs(2) {
            report(t);
            last = std::time::Instant::now();
        }
    }
}

async fn export(db: &DatabaseArgs, output: &Path) -> anyhow::Result<()> {
    let store = open(db).await?;
    let progress = every_few_seconds(|s: &ExportSummary| eprintln!("exported {} runs so far", s.runs));
    let summary = if is_stdio(output) {
        transfer::export(&store, &mut tokio::io::stdout(), progress).await?
    } else {
        // Readable by its owner alone: it holds every token's hash and every editor's notes.
        let file = tokio::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(output)
            .await
            .with_context(|| format!("cannot create {}", output.display()))?;
        transfer::export(&store, &mut tokio::io::BufWriter::new(file), progress).await?
    };
    let to = if is_stdio(output) { "standard output".into() } else { output.display().to_string() };
    eprintln!(
        "exported {} runs ({} with raw samples pruned), {} regression edits and {} tokens, with {} bisections, {} \
         exposure scans and {} found probes, from {} to {to}",
        summary.runs,
        summary.pruned_runs,
        summary.regression_edits,
        summary.tokens,
        summary.bisections,
        summary.exposures,
        summary.found_probes,
        mask_password(&db.database_url),
    );
    Ok(())
}

async fn import(db: &DatabaseArgs, input: &Path, config: Option<&Path>, with_tokens: bool) -> anyhow::Result<()> {
    let config = Config::from_file(config)?;
    let store = open(db).await?;
    let progress = every_few_seconds(|s: &ImportSummary| {
        eprintln!(
            "line {}: {} runs imported, {} already there, {} lines rejected so far",
            s.lines, s.runs_imported, s.runs_skipped, s.rejected
        )
    });
    let summary = if is_stdio(input) {
        transfer::import(&store, &config, with_tokens, &mut tokio::io::BufReader::new(tokio::io::stdin()), progress)
            .await?
    } else {
        let file = tokio::fs::File::open(input).await.with_context(|| format!("cannot open {}", input.display()))?;
        transfer::import(&store, &config, with_tokens, &mut tokio::io::BufReader::new(file), progress).await?
    };
    println!(
        "imported {} runs ({} with raw samples pruned), {} were already there; applied {} regression edits, {} were \
         already there; recorded {} bisections, {} were already there; recorded {} exposure scans, {} were already \
         there; recorded {} found probes, {} were already there",
        summary.runs_imported,
        summary.pruned_runs_imported,
        summary.runs_skipped,
        summary.edits_applied,
        summary.edits_skipped,
        summary.bisections_imported,
        summary.bisections_skipped,
        summary.exposures_imported,
        summary.exposures_skipped,
        summary.found_probes_imported,
        summary.found_probes_skipped,
    );
    if with_tokens {
        println!(
            "added {} tokens, {} names or hashes were already there",
            summary.tokens_added, summary.tokens_skipped
        );
    } else if summary.tokens_left_out > 0 {
        println!(
            "skipped the export's {} tokens: whoever wrote it may know their secrets; import with --with-tokens to add \
             them",
            summary.tokens_left_out
        );
    }
    for r in &summary.rejections {
        println!("rejected {r}");
    }
    if summary.rejected > summary.rejections.len() as u64 {
        println!("… and {} more rejected lines", summary.rejected - summary.rejections.len() as u64);
    }
    anyhow::ensure!(
        summary.rejected == 0,
        "{} of {} lines were rejected (listed above); fix them and import the file again: what is stored is skipped",
        summary.rejected,
        summary.lines
    );
    anyhow::ensure!(
        summary.complete,
        "the export ends without its closing line: the file is cut short, or the export did not finish; \
         everything before the cut was imported"
    );
    Ok(())
}

async fn prune(db: &DatabaseArgs, days: Option<u32>, config: Option<&Path>) -> anyhow::Result<()> {
    let days = match days {
        Some(days) => days,
        None => Config::from_file(config)?.retain_samples_days.context(
            "how old must raw samples be? Give --samples-days N or set [retention] samples_days in --config",
        )?,
    };
    let store = open(db).await?;
    let now = time::OffsetDateTime::now_utc();
    let cutoff = retention::cutoff(now, days);
    let report = retention::prune_received_before(&store, cutoff, now).await?;
    let before = cutoff.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
    if report.runs == 0 {
        println!("nothing to prune: no run received before {before} still has raw samples");
    } else {
        println!(
            "removed the raw samples of {} runs received before {before} ({} samples); their fits, per-size medians \
             and version summaries are kept",
            report.runs, report.samples
        );
    }
    Ok(())
}

/// A plain HTTP/1.1 GET: enough for a health check, without an HTTP client dependency.
async fn health(url: &str) -> anyhow::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let parsed = url::Url::parse(url).with_context(|| format!("invalid URL {url}"))?;
    anyhow::ensure!(parsed.scheme() == "http", "only http:// URLs can be checked, not {url}");
    let host = parsed.host_str().context("URL has no host")?;
    let port = parsed.port_or_known_default().unwrap_or(80);
    let check = async {
        let mut stream = tokio::net::TcpStream::connect((host, port)).await?;
        let request = format!("GET {} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n", parsed.path());
        stream.write_all(request.as_bytes()).await?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await?;
        anyhow::Ok(response)
    };
    let response = tokio::time::timeout(std::time::Duration::from_secs(3), check)
        .await
        .with_context(|| format!("{url} did not answer within 3 s"))?
        .with_context(|| format!("cannot reach {url}"))?;
    let status_line = String::from_utf8_lossy(&response).lines().next().unwrap_or_default().to_string();
    anyhow::ensure!(status_line.split_whitespace().nth(1) == Some("200"), "{url} answered {status_line:?}");
    println!("healthy: {url}");
    Ok(())
}

async fn open(db: &DatabaseArgs) -> anyhow::Result<Store> {
    Ok(crate::intake::open_and_migrate(&db.database_url, &OpenOptions::default()).await?)
}

/// The session key when none is configured: a SQLite server keeps one in a file beside its
/// database (one server, so nothing to share); a Postgres server, whose replicas would each make
/// their own, gets one for this process only and says so.
fn unconfigured_session_key(database_url: &str) -> anyhow::Result<SessionKey> {
    match sqlite_file(database_url) {
        Some(db) => SessionKey::read_or_create(&session_key::default_file(&db)),
        None => {
            tracing::warn!(
                "no session key configured (SLOPEWATCH_SESSION_KEY, SLOPEWATCH_SESSION_KEY_FILE or [auth] \
                 session_key_file): logins end when this server restarts and hold on this replica only"
            );
            Ok(SessionKey::generate())
        }
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    init_tracing(args.log_format);
    let mut config = Config::from_args(&args)?;
    // SQLite serves one server at a time; held until the server exits.
    let _sqlite_lock = ServerLock::acquire(&args.database.database_url)?;
    let store = open(&args.database).await?;
    if config.auth.session_key.is_none() {
        config.auth.session_key = Some(unconfigured_session_key(&args.database.database_url)?);
    }
    tracing::info!(
        bind = %args.bind,
        database = %mask_password(&args.database.database_url),
        backend = store.backend_name(),
        body_limit = config.body_limit,
        public_url = config.public_url.as_deref().unwrap_or(""),
        "starting slopewatch {}",
        env!("CARGO_PKG_VERSION"),
    );
    if !args.bind.ip().is_loopback() && config.public_url.is_none() {
        tracing::warn!(
            bind = %args.bind,
            "listening beyond loopback without public_url: session cookies are marked Secure only when a trusted \
             proxy says the request came over https (X-Forwarded-Proto); set [server] public_url to the https \
             address users reach"
        );
    }
    let state = AppState::new(store.clone(), config);
    state.intake.catch_up().await;
    let shutdown = shutdown_signal();
    let listener =
        tokio::net::TcpListener::bind(args.bind).await.with_context(|| format!("cannot listen on {}", args.bind))?;
    let (stop_worker, worker_stopped) = tokio::sync::watch::channel(false);
    let metrics = state.metrics.clone();
    let pruner = state.config.retain_samples_days.map(|days| {
        tokio::spawn(retention::run(store.clone(), days, state.config.retention_every, metrics, worker_stopped.clone()))
    });
    let sweeper = tokio::spawn(state.intake.clone().sweep(worker_stopped.clone()));
    let alert_settings = state.config.alerts.clone();
    let worker =
        tokio::spawn(webhooks::sender::run(store.clone(), alert_settings, state.metrics.clone(), worker_stopped));
    tracing::info!("listening on http://{}", listener.local_addr()?);
    let limits = state.config.limits.clone();
    let served = crate::http::serve(listener, app(state), &limits, shutdown).await;
    // Let the outbox finish the deliveries in flight; anything unsent stays in the outbox.
    let _ = stop_worker.send(true);
    let _ = worker.await;
    let _ = sweeper.await;
    if let Some(pruner) = pruner {
        let _ = pruner.await;
    }
    served?;
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM; in-flight requests then finish before the server exits. The
/// handlers are installed when this is called, not when it is first polled, so a signal that comes
/// as soon as the port opens still shuts the server down gracefully.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, Signal, SignalKind};
    async fn received(signal: std::io::Result<Signal>) {
        match signal {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    }
    let interrupt = signal(SignalKind::interrupt());
    let terminate = signal(SignalKind::terminate());
    async move {
        tokio::select! {
            () = received(interrupt) => {},
            () = received(terminate) => {},
        }
        tracing::info!("shutting down: finishing in-flight requests");
    }
}

fn init_tracing(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "info,sqlx=warn,tower_http=warn".into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

async fn token(cmd: TokenCommand) -> anyhow::Result<()> {
    match cmd {
        TokenCommand::Create { name, scope, database } => {
            let name = name.trim();
            if name.is_empty() || name.len() > 128 || name.chars().any(char::is_control) {
                anyhow::bail!("token name must be 1 to 128 printable characters");
            }
            let store = open(&database).await?;
            let new = auth::generate();
            if !store.create_token(name, scope, &new.lookup, &new.hash).await? {
                anyhow::bail!("a token named {name:?} already exists; revoke it first or pick another name");
            }
            println!("Created {scope} token {name:?}. It is shown this once; store it now:");
            println!("{}", new.secret);
        }
        TokenCommand::List { database } => {
            let store = open(&database).await?;
            let tokens = store.list_tokens().await?;
            if tokens.is_empty() {
                println!("no tokens; create one with `slopewatch token create --name NAME --scope ingest`");
            }
            println!("{:<32} {:<8} {:<26} LAST USED", "NAME", "SCOPE", "CREATED");
            for t in tokens {
                let fmt = |d: time::OffsetDateTime| {
                    d.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
                };
                println!(
                    "{:<32} {:<8} {:<26} {}",
                    t.name,
                    t.scope.0,
                    fmt(t.created_at),
                    t.last_used_at.map(fmt).unwrap_or_else(|| "never".into())
                );
            }
        }
        TokenCommand::Revoke { name, database } => {
            let store = open(&database).await?;
            if !store.revoke_token(&name).await? {
                anyhow::bail!("no token named {name:?}");
            }
            println!("revoked token {name:?}");
        }
    }
    Ok(())
}
