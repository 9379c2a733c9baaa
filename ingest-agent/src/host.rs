//! The machine the workloads ran on, as the run records it.

use slopewatch_core::wire::Host;

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
