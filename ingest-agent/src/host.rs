//! The machine the workloads ran on, as the run records it, and the programs it has.

use slopewatch_core::wire::Host;
use std::path::PathBuf;

pub fn detect() -> Host {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default().trim().to_string();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim().to_string()))
        .unwrap_or_default();
    let mut name = read("/proc/sys/kernel/hostname");
    if name.is_empty() {
        name = "unknown-host".into();
    }
    Host { name, cpu, kernel: read("/proc/sys/kernel/osrelease"), arch: std::env::consts::ARCH.to_string() }
}

/// The executable `program` on `PATH`, as a shell would find it.
pub fn on_path(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}
