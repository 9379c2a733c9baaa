//! Server configuration: command-line flags and environment variables, plus an optional TOML
//! file for settings that do not fit on a command line.

mod alerts;
mod control;

pub use alerts::{
    AlertRule, AlertSettings, AlertsSection, CostRule, RetryPolicy, Rules, Webhook, WebhookFormat, WebhookSection,
};
pub use control::ControlSection;

use crate::client_addr::TrustedProxies;
use crate::session_key::SessionKey;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The embedded store used when no database URL is given.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://slopewatch.db";
/// Largest request body accepted by default: 8 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 8 * 1024 * 1024;
/// Seconds a client has to send a request's head, and that a connection may stay idle.
pub const DEFAULT_HEADER_READ_TIMEOUT_SECS: u64 = 10;
/// Seconds a request may take, body and answer included.
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 60;
/// Connections open at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// Connections one client address (IPv6: one /64) may have open at once; trusted proxies may have
/// any number.
pub const DEFAULT_MAX_CONNECTIONS_PER_CLIENT: usize = 32;
/// Seconds an answer has to be written once its handler produced it.
pub const DEFAULT_WRITE_TIMEOUT_SECS: u64 = 30;
/// Requests handled at once.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 256;
/// Seconds a request body has before it must keep up with the minimum rate.
pub const DEFAULT_BODY_READ_TIMEOUT_SECS: u64 = 5;
/// Bytes a second a request body must average once its read timeout has passed.
pub const DEFAULT_BODY_MIN_RATE: u64 = 16 * 1024;
/// Requests without a token or session one client address may have in progress at once.
pub const DEFAULT_ANONYMOUS_REQUESTS_PER_CLIENT: usize = 16;
/// Seconds between two retention passes.
pub const DEFAULT_RETENTION_EVERY_SECS: u64 = 3600;

/// Where the database is.
#[derive(clap::Args, Debug, Clone)]
pub struct DatabaseArgs {
    /// Database URL: `postgres://user:pass@host/db`, or `sqlite://path.db` for the embedded store
    /// (created on first start).
    #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL)]
    pub database_url: String,
}

/// How log lines are written.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, for log shippers.
    Json,
}

/// Flags of `slopewatch serve`.
#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    /// Address and port to listen on.
    #[arg(long, env = "SLOPEWATCH_BIND", default_value = "127.0.0.1:3000")]
    pub bind: SocketAddr,
    #[command(flatten)]
    pub database: DatabaseArgs,
    /// TOML file with further settings (see docs/operations.md, "Configuration").
    #[arg(long, env = "SLOPEWATCH_CONFIG")]
    pub config: Option<PathBuf>,
    /// Largest request body accepted, in bytes.
    #[arg(long, env = "SLOPEWATCH_BODY_LIMIT", default_value_t = DEFAULT_BODY_LIMIT)]
    pub body_limit: usize,
    /// Log format.
    #[arg(long, env = "SLOPEWATCH_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Remove the raw samples of runs received more than this many days ago, at start-up and
    /// every `[retention] every_secs` (an hour by default; fits, per-size medians and summaries stay); overrides `[retention] samples_days`.
    #[arg(long, env = "SLOPEWATCH_RETAIN_SAMPLES_DAYS", value_parser = clap::value_parser!(u32).range(1..))]
    pub retain_samples_days: Option<u32>,
    /// Key that signs session cookies, at least 32 characters; every replica needs the same.
    /// Prefer the environment or `--session-key-file`: a command line is visible to other users.
    #[arg(long, env = "SLOPEWATCH_SESSION_KEY", hide_env_values = true, conflicts_with = "session_key_file")]
    pub session_key: Option<String>,
    /// File holding the key that signs session cookies; overrides `[auth] session_key_file`.
    /// Without any key, a SQLite server keeps one in `<database file>.session-key`.
    #[arg(long, env = "SLOPEWATCH_SESSION_KEY_FILE")]
    pub session_key_file: Option<PathBuf>,
    /// Comma-separated addresses or networks of reverse proxies whose `X-Forwarded-For` names the
    /// client; overrides `[server] trusted_proxies`.
    #[arg(long, env = "SLOPEWATCH_TRUSTED_PROXIES")]
    pub trusted_proxies: Option<TrustedProxies>,
    /// Seconds a client has to send a request's headers; also how long a connection may stay
    /// idle before its first request or between two. Slower clients are disconnected.
    #[arg(long, env = "SLOPEWATCH_HEADER_READ_TIMEOUT_SECS", default_value_t = DEFAULT_HEADER_READ_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub header_read_timeout_secs: u64,
    /// Seconds a request may take from its headers to its answer, body included; a request
    /// still running then is answered 503 with `Retry-After`.
    #[arg(long, env = "SLOPEWATCH_REQUEST_TIMEOUT_SECS", default_value_t = DEFAULT_REQUEST_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub request_timeout_secs: u64,
    /// Connections open at once; one more is answered 503 and closed.
    #[arg(long, env = "SLOPEWATCH_MAX_CONNECTIONS", default_value_t = DEFAULT_MAX_CONNECTIONS,
          value_parser = at_least_one)]
    pub max_connections: usize,
    /// Connections one client address (IPv6: one /64) may have open; one more is answered 503 and
    /// closed. Trusted proxies may have any number.
    #[arg(long, env = "SLOPEWATCH_MAX_CONNECTIONS_PER_CLIENT", default_value_t = DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
          value_parser = at_least_one)]
    pub max_connections_per_client: usize,
    /// Seconds an answer has to be written once ready; a client that does not read it by then is
    /// disconnected, and the answer's request slot freed.
    #[arg(long, env = "SLOPEWATCH_WRITE_TIMEOUT_SECS", default_value_t = DEFAULT_WRITE_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub write_timeout_secs: u64,
    /// Requests handled at once; one more is answered 503 with `Retry-After` (`/healthz` is
    /// always answered).
    #[arg(long, env = "SLOPEWATCH_MAX_CONCURRENT_REQUESTS", default_value_t = DEFAULT_MAX_CONCURRENT_REQUESTS,
          value_parser = at_least_one)]
    pub max_concurrent_requests: usize,
    /// Seconds a request body has before it must average `--body-min-rate`; overrides `[limits]
    /// body_read_timeout_secs`. A body of n bytes must be in within this plus n over the rate.
    #[arg(long, env = "SLOPEWATCH_BODY_READ_TIMEOUT_SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub body_read_timeout_secs: Option<u64>,
    /// Bytes a second a request body must average once its read timeout has passed (16384 by
    /// default); a slower one is cut and answered 408. Overrides `[limits] body_min_rate`.
    #[arg(long, env = "SLOPEWATCH_BODY_MIN_RATE", value_parser = clap::value_parser!(u64).range(1..))]
    pub body_min_rate: Option<u64>,
    /// Requests without a valid token or session that one client address may have in progress
    /// (16 by default); one more is answered 503 with `Retry-After`. Overrides `[limits]
    /// anonymous_requests_per_client`.
    #[arg(long, env = "SLOPEWATCH_ANONYMOUS_REQUESTS_PER_CLIENT", value_parser = at_least_one)]
    pub anonymous_requests_per_client: Option<usize>,
    /// Request slots that only requests with a valid token or session may take (a quarter of
    /// `--max-concurrent-requests` by default), so agents keep room whatever anonymous clients do.
    /// Overrides `[limits] reserved_requests`.
    #[arg(long, env = "SLOPEWATCH_RESERVED_REQUESTS")]
    pub reserved_requests: Option<usize>,
}

fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{s:?} is not a whole number of at least 1")),
    }
}

/// How much of the server one client may hold, and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Time to send a request's headers, and the longest a connection may stay idle.
    pub header_read_timeout: Duration,
    /// Time a request may take, body and answer included.
    pub request_timeout: Duration,
    /// Connections open at once.
    pub max_connections: usize,
    /// Connections one client address may have open, and the proxies exempt from it.
    pub max_connections_per_client: usize,
    pub trusted_proxies: TrustedProxies,
    /// Time an answer has to be written once ready.
    pub write_timeout: Duration,
    /// Requests handled at once.
    pub max_concurrent_requests: usize,
    /// Time a request body has before it must keep up with `body_min_rate`.
    pub body_read_timeout: Duration,
    /// Bytes a second a body must average once `body_read_timeout` has passed.
    pub body_min_rate: u64,
    /// Requests without a valid token or session one client address may have in progress.
    pub anonymous_per_client: usize,
    /// Of `max_concurrent_requests`, the slots only requests with a valid token or session may take.
    pub reserved_requests: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(DEFAULT_HEADER_READ_TIMEOUT_SECS),
            request_timeout: Duration::from_secs(DEFAULT_REQUEST_TIMEOUT_SECS),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_client: DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
            trusted_proxies: TrustedProxies::default(),
            write_timeout: Duration::from_secs(DEFAULT_WRITE_TIMEOUT_SECS),
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            body_read_timeout: Duration::from_secs(DEFAULT_BODY_READ_TIMEOUT_SECS),
            body_min_rate: DEFAULT_BODY_MIN_RATE,
            anonymous_per_client: DEFAULT_ANONYMOUS_REQUESTS_PER_CLIENT,
            reserved_requests: DEFAULT_MAX_CONCURRENT_REQUESTS / 4,
        }
    }
}

/// `[limits]` as written in the config file: what request bodies and clients without a token
/// may take. The flags of the same names override each.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct LimitsSection {
    pub body_read_timeout_secs: Option<u64>,
    pub body_min_rate: Option<u64>,
    pub anonymous_requests_per_client: Option<usize>,
    pub reserved_requests: Option<usize>,
}

impl Limits {
    /// The limits of the flags, each new one taken from `[limits]` where no flag gives it.
    fn from_args(args: &ServeArgs, file: &LimitsSection) -> anyhow::Result<Limits> {
        // The flags refuse 0 as they are read; the file's keys are refused here.
        fn positive<T: Copy + PartialEq + From<u8>>(v: Option<T>, key: &str) -> anyhow::Result<Option<T>> {
            match v {
                Some(n) if n == T::from(0) => anyhow::bail!("[limits] {key} must be at least 1"),
                _ => Ok(v),
            }
        }
        let body_read_timeout_secs = args
            .body_read_timeout_secs
            .or(positive(file.body_read_timeout_secs, "body_read_timeout_secs")?)
            .unwrap_or(DEFAULT_BODY_READ_TIMEOUT_SECS);
        let body_min_rate =
            args.body_min_rate.or(positive(file.body_min_rate, "body_min_rate")?).unwrap_or(DEFAULT_BODY_MIN_RATE);
        let anonymous_per_client = args
            .anonymous_requests_per_client
            .or(positive(file.anonymous_requests_per_client, "anonymous_requests_per_client")?)
            .unwrap_or(DEFAULT_ANONYMOUS_REQUESTS_PER_CLIENT);
        let max_concurrent_requests = args.max_concurrent_requests;
        let reserved_requests =
            args.reserved_requests.or(file.reserved_requests).unwrap_or(max_concurrent_requests / 4);
        if reserved_requests >= max_concurrent_requests {
            anyhow::bail!(
                "reserved_requests ({reserved_requests}) must be below max_concurrent_requests \
                 ({max_concurrent_requests}): requests without a token need at least one slot"
            );
        }
        Ok(Limits {
            header_read_timeout: Duration::from_secs(args.header_read_timeout_secs),
            request_timeout: Duration::from_secs(args.request_timeout_secs),
            max_connections: args.max_connections,
            max_connections_per_client: args.max_connections_per_client,
            trusted_proxies: TrustedProxies::default(),
            write_timeout: Duration::from_secs(args.write_timeout_secs),
            max_concurrent_requests,
            body_read_timeout: Duration::from_secs(body_read_timeout_secs),
            body_min_rate,
            anonymous_per_client,
            reserved_requests,
        })
    }
}

/// `[auth]` as written in the config file.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct AuthSection {
    /// When true, every page and read of the API needs a login or a token too.
    pub require_login_to_read: bool,
    /// Key that signs session cookies, written here.
    pub session_secret: Option<String>,
    /// File holding the key that signs session cookies.
    pub session_key_file: Option<PathBuf>,
}

/// Login settings of the running server.
#[derive(Clone, Debug, Default)]
pub struct AuthSettings {
    pub require_login_to_read: bool,
    /// The key that signs session cookies, when configured (the server makes one otherwise).
    pub session_key: Option<SessionKey>,
}

impl AuthSettings {
    pub fn from_file(auth: &AuthSection) -> anyhow::Result<AuthSettings> {
        let session_key = match (&auth.session_secret, &auth.session_key_file) {
            (Some(_), Some(_)) => anyhow::bail!("[auth] has both session_secret and session_key_file; keep one"),
            (Some(secret), None) => Some(SessionKey::new(secret, "[auth] session_secret")?),
            (None, Some(path)) => Some(SessionKey::read(path)?),
            (None, None) => None,
        };
        Ok(AuthSettings { require_login_to_read: auth.require_login_to_read, session_key })
    }
}

/// Settings read from the `--config` TOML file.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub server: ServerSection,
    #[serde(default)]
    pub alerts: AlertsSection,
    #[serde(default)]
    pub webhooks: Vec<WebhookSection>,
    #[serde(default)]
    pub auth: AuthSection,
    #[serde(default)]
    pub retention: RetentionSection,
    #[serde(default)]
    pub control: ControlSection,
    #[serde(default)]
    pub limits: LimitsSection,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// The URL people reach the dashboard at, used in links sent out of the server.
    pub public_url: Option<String>,
    /// Reverse proxies (addresses or networks) whose `X-Forwarded-For` names the client.
    #[serde(default)]
    pub trusted_proxies: TrustedProxies,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct RetentionSection {
    /// Raw samples of runs received more than this many days ago are removed; unset keeps them.
    pub samples_days: Option<u32>,
    /// Seconds between two retention passes (one per period across replicas); an hour by default.
    pub every_secs: Option<u64>,
}

impl FileConfig {
    /// The file at `path`, or an empty one without a path.
    fn read(path: Option<&Path>) -> anyhow::Result<FileConfig> {
        path.map_or_else(|| Ok(FileConfig::default()), FileConfig::load)
    }

    pub fn load(path: &Path) -> anyhow::Result<FileConfig> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read config file {}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("invalid config file {}: {e}", path.display()))
    }
}

/// Everything the running server needs to know, fixed at start-up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Largest request body accepted, in bytes.
    pub body_limit: usize,
    /// Base URL for links sent out of the server; `None` means relative links.
    pub public_url: Option<String>,
    /// Alert rules, webhook targets and retry pacing.
    pub alerts: AlertSettings,
    /// Who may edit, and whether reading needs a login.
    pub auth: AuthSettings,
    /// Raw samples are kept this many days after their run is received; `None` keeps them.
    pub retain_samples_days: Option<u32>,
    /// How often retention prunes, when it does.
    pub retention_every: Duration,
    /// Reverse proxies whose `X-Forwarded-For` names the client, for per-client login limits.
    pub trusted_proxies: TrustedProxies,
    /// Timeouts and caps on connections and requests.
    pub limits: Limits,
    /// The control lineages (`[control] lineages`), in the order they are tried.
    pub controls: Vec<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            body_limit: DEFAULT_BODY_LIMIT,
            public_url: None,
            alerts: AlertSettings::default(),
            auth: AuthSettings::default(),
            retain_samples_days: None,
            retention_every: Duration::from_secs(DEFAULT_RETENTION_EVERY_SECS),
            trusted_proxies: TrustedProxies::default(),
            limits: Limits::default(),
            controls: Vec::new(),
        }
    }
}

impl Config {
    pub fn from_args(args: &ServeArgs) -> anyhow::Result<Config> {
        let file = FileConfig::read(args.config.as_deref())?;
        let limits = Limits::from_args(args, &file.limits)?;
        let mut config = Config::from_sections(file)?;
        if let Some(key) = &args.session_key {
            config.auth.session_key = Some(SessionKey::new(key, "SLOPEWATCH_SESSION_KEY")?);
        } else if let Some(path) = &args.session_key_file {
            config.auth.session_key = Some(SessionKey::read(path)?);
        }
        let trusted_proxies = args.trusted_proxies.clone().unwrap_or(config.trusted_proxies);
        Ok(Config {
            body_limit: args.body_limit,
            retain_samples_days: args.retain_samples_days.or(config.retain_samples_days),
            limits: Limits { trusted_proxies: trusted_proxies.clone(), ..limits },
            trusted_proxies,
            ..config
        })
    }

    /// The settings of a config file alone (none without one), with defaults for the rest.
    pub fn from_file(path: Option<&Path>) -> anyhow::Result<Config> {
        Config::from_sections(FileConfig::read(path)?)
    }

    /// The file's settings but `[limits]`, which only `serve` reads, with its flags.
    fn from_sections(file: FileConfig) -> anyhow::Result<Config> {
        if file.retention.samples_days == Some(0) {
            anyhow::bail!("[retention] samples_days must be at least 1");
        }
        if file.retention.every_secs == Some(0) {
            anyhow::bail!("[retention] every_secs must be at least 1");
        }
        Ok(Config {
            public_url: file.server.public_url,
            alerts: AlertSettings::from_file(&file.alerts, &file.webhooks)?,
            auth: AuthSettings::from_file(&file.auth)?,
            retain_samples_days: file.retention.samples_days,
            retention_every: Duration::from_secs(file.retention.every_secs.unwrap_or(DEFAULT_RETENTION_EVERY_SECS)),
            trusted_proxies: file.server.trusted_proxies,
            controls: file.control.lineages()?,
            ..Config::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        args: ServeArgs,
    }

    fn config(args: &[&str], file: &str) -> anyhow::Result<Config> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slopewatch.toml");
        std::fs::write(&path, file).unwrap();
        let mut argv = vec!["serve", "--config", path.to_str().unwrap()];
        argv.extend(args);
        Config::from_args(&Serve::try_parse_from(argv)?.args)
    }

    #[test]
    fn retention_comes_from_the_file_and_the_flag_overrides_it() {
        assert_eq!(config(&[], "").unwrap().retain_samples_days, None);
        assert_eq!(config(&[], "[retention]\nsamples_days = 90\n").unwrap().retain_samples_days, Some(90));
        let both = config(&["--retain-samples-days", "30"], "[retention]\nsamples_days = 90\n").unwrap();
        assert_eq!(both.retain_samples_days, Some(30));
        assert!(config(&[], "[retention]\nsamples_days = 0\n").unwrap_err().to_string().contains("at least 1"));
        assert!(config(&["--retain-samples-days", "0"], "").is_err());
        assert!(config(&[], "[retention]\nsample_days = 9\n").is_err(), "a misspelt key is refused");
    }

    #[test]
    fn the_retention_period_is_an_hour_unless_the_file_sets_a_positive_one() {
        assert_eq!(config(&[], "").unwrap().retention_every, Duration::from_secs(3600));
        let every = |file: &str| config(&[], file).map(|c| c.retention_every);
        assert_eq!(every("[retention]\nsamples_days = 1\nevery_secs = 60\n").unwrap(), Duration::from_secs(60));
        assert_eq!(every("[retention]\nevery_secs = 1\n").unwrap(), Duration::from_secs(1));
        assert!(every("[retention]\nevery_secs = 0\n")
            .unwrap_err()
            .to_string()
            .contains("every_secs must be at least 1"));
        assert!(every("[retention]\nevery_secs = -5\n").is_err(), "a negative period is refused");
        assert!(every("[retention]\nevery_secs = \"1h\"\n").is_err(), "a period is a number of seconds");
    }

    #[test]
    fn the_session_key_comes_from_the_environment_a_key_file_or_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let key_file = dir.path().join("key");
        std::fs::write(&key_file, format!("{}\n", "f".repeat(64))).unwrap();
        let from_file = SessionKey::new(&"f".repeat(64), "").unwrap();
        assert_eq!(config(&[], "").unwrap().auth.session_key, None, "none configured");
        let key = "k".repeat(40);
        assert_eq!(config(&["--session-key", &key], "").unwrap().auth.session_key, SessionKey::new(&key, "").ok());
        let path = key_file.to_str().unwrap();
        assert_eq!(config(&["--session-key-file", path], "").unwrap().auth.session_key, Some(from_file.clone()));
        let in_file = format!("[auth]\nsession_key_file = {path:?}\n");
        assert_eq!(config(&[], &in_file).unwrap().auth.session_key, Some(from_file));
        let flag_wins = config(&["--session-key", &key], &in_file).unwrap();
        assert_eq!(flag_wins.auth.session_key, SessionKey::new(&key, "").ok());
        assert!(config(&["--session-key", "short"], "").is_err());
        assert!(config(&["--session-key", &key, "--session-key-file", path], "").is_err(), "one key at a time");
        let both = format!("[auth]\nsession_key_file = {path:?}\nsession_secret = {key:?}\n");
        assert!(config(&[], &both).is_err(), "one key at a time");
        assert!(config(&["--session-key-file", "/nonexistent/key"], "").is_err());
    }

    #[test]
    fn control_lineages_come_from_the_file() {
        assert!(config(&[], "").unwrap().controls.is_empty());
        let two = config(&[], "[control]\nlineages = [\"musl-gcc\", \"gcc\"]\n").unwrap();
        assert_eq!(two.controls, ["musl-gcc", "gcc"]);
        assert!(config(&[], "[control]\nlineages = [\"a\", \"a\"]\n").is_err(), "named twice");
        assert!(config(&[], "[control]\nlineage = [\"a\"]\n").is_err(), "a misspelt key is refused");
    }

    #[test]
    fn trusted_proxies_come_from_the_file_and_the_flag_overrides_them() {
        let file = "[server]\ntrusted_proxies = [\"10.0.0.0/8\", \"::1\"]\n";
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        let proxies = config(&[], file).unwrap().trusted_proxies;
        assert_eq!(proxies.client(ip("10.1.1.1"), ["192.0.2.1"]), ip("192.0.2.1"));
        let flag = config(&["--trusted-proxies", "127.0.0.1"], file).unwrap().trusted_proxies;
        assert_eq!(flag.client(ip("10.1.1.1"), ["192.0.2.1"]), ip("10.1.1.1"));
        assert!(config(&[], "[server]\ntrusted_proxies = [\"proxy\"]\n").is_err());
    }

    #[test]
    fn body_pace_and_anonymous_limits_come_from_the_file_and_the_flags_override_them() {
        let defaults = config(&[], "").unwrap().limits;
        assert_eq!(defaults, Limits::default());
        assert_eq!(defaults.reserved_requests, 64, "a quarter of the 256 request slots");
        let file = "[limits]\nbody_read_timeout_secs = 3\nbody_min_rate = 1000\nanonymous_requests_per_client = 4\n";
        let limits = config(&[], file).unwrap().limits;
        assert_eq!(limits.body_read_timeout, Duration::from_secs(3));
        assert_eq!((limits.body_min_rate, limits.anonymous_per_client), (1000, 4));
        let flags = ["--body-min-rate", "50", "--anonymous-requests-per-client", "2", "--max-concurrent-requests", "8"];
        let limits = config(&flags, file).unwrap().limits;
        assert_eq!((limits.body_min_rate, limits.anonymous_per_client), (50, 2));
        assert_eq!(limits.body_read_timeout, Duration::from_secs(3), "the file's, where no flag gives it");
        assert_eq!(limits.reserved_requests, 2, "a quarter of the slots the flag gives");
        assert!(config(&["--reserved-requests", "8", "--max-concurrent-requests", "8"], "").is_err());
        assert!(config(&[], "[limits]\nbody_min_rate = 0\n").is_err());
        assert!(config(&[], "[limits]\nanonymous_requests_per_client = 0\n").is_err());
        assert!(config(&[], "[limits]\nbody_rate = 10\n").is_err(), "a misspelt key is refused");
    }
}
