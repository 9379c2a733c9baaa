//! The `slopewatch` command line: serve, migrate, and manage API tokens.

use crate::config::{Config, DatabaseArgs, LogFormat, ServeArgs};
use crate::store::{mask_password, OpenOptions, Scope, Store};
use crate::{alerts, app, auth, AppState};
use anyhow::Context;

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
    Serve(ServeArgs),
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
        Command::Serve(args) => serve(args).await,
        Command::Migrate(db) => {
            open(&db).await?;
            println!("database {} is up to date", mask_password(&db.database_url));
            Ok(())
        }
        Command::Token(cmd) => token(cmd).await,
        Command::Health { url } => health(&url).await,
    }
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
    Ok(Store::open_and_migrate(&db.database_url, &OpenOptions::default()).await?)
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    init_tracing(args.log_format);
    let config = Config::from_args(&args)?;
    let store = open(&args.database).await?;
    tracing::info!(
        bind = %args.bind,
        database = %mask_password(&args.database.database_url),
        backend = store.backend_name(),
        body_limit = config.body_limit,
        public_url = config.public_url.as_deref().unwrap_or(""),
        "starting slopewatch {}",
        env!("CARGO_PKG_VERSION"),
    );
    let shutdown = shutdown_signal();
    let listener =
        tokio::net::TcpListener::bind(args.bind).await.with_context(|| format!("cannot listen on {}", args.bind))?;
    let (stop_worker, worker_stopped) = tokio::sync::watch::channel(false);
    let alert_settings = config.alerts.clone();
    let state = AppState::new(store.clone(), config);
    let worker =
        tokio::spawn(alerts::worker::run(store.clone(), alert_settings, state.metrics.clone(), worker_stopped));
    tracing::info!("listening on http://{}", listener.local_addr()?);
    let served = axum::serve(listener, app(state)).with_graceful_shutdown(shutdown).await;
    // Let the outbox finish the deliveries in flight; anything unsent stays in the outbox.
    let _ = stop_worker.send(true);
    let _ = worker.await;
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
