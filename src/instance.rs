//! Who this server process is: its version, shown in page footers, logs and exports, and, as the
//! other servers sharing its database see it, the host's name and the process id, recorded with
//! the periodic work it claims and with the SQLite server lock.

/// The server's version, shown in page footers and logs.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `host:pid`, e.g. `build-01:4242`.
pub fn name() -> String {
    format!("{}:{}", hostname(), std::process::id())
}

/// The kernel's host name (a container's own), or `HOSTNAME`, or `unknown`.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".into())
}
