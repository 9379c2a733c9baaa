//! The architecture a page, a note or a webhook is about, and whether the runs behind it were
//! measured under emulation: a series is per target architecture (`slopewatch_core::arch`), and a
//! host of another architecture can only have run its binaries under an emulator such as
//! `qemu-aarch64`, whose growth holds but whose absolute times are not the target's.

use serde::Serialize;
use slopewatch_core::arch;
use utoipa::ToSchema;

/// The architecture of a series (or of a version or regression of it), and the architectures of
/// the hosts that measured it under emulation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Architecture {
    /// The architecture the lineage's binaries are built for, from its stored name:
    /// `zig-cc-musl (aarch64)` is `aarch64`, a plain name `x86_64`.
    pub arch: String,
    /// The architectures of the hosts that ran its binaries under emulation (another than
    /// `arch`), sorted; empty where every run was measured on a host of `arch`. Slopes and
    /// classes measured so still hold; absolute times are the emulator's.
    pub emulated_on: Vec<String>,
    /// Some runs were also measured natively, on hosts of `arch` itself.
    #[serde(skip)]
    pub partly_native: bool,
}

impl Architecture {
    /// The architecture of `lineage`, and which of `host_archs` (the architectures of the hosts
    /// that measured it, as the hosts sent them) ran it under emulation.
    pub fn of(lineage: &str, host_archs: &[String]) -> Architecture {
        let target = arch::split_lineage(lineage).1;
        let mut emulated_on = Vec::new();
        let mut partly_native = false;
        // A host whose architecture names none known here tells nothing either way.
        for host in host_archs.iter().filter_map(|h| arch::normalize(h)) {
            if arch::runs_natively(host, target) {
                partly_native = true;
            } else {
                emulated_on.push(host.to_string());
            }
        }
        emulated_on.sort_unstable();
        emulated_on.dedup();
        Architecture { arch: target.to_string(), emulated_on, partly_native }
    }

    /// "Architecture: aarch64".
    pub fn line(&self) -> String {
        format!("Architecture: {}", self.arch)
    }

    /// What emulation means for the numbers, where some runs were measured under it: "measured
    /// under emulation on x86_64 hosts: growth (slopes, classes) holds, absolute times are the
    /// emulator's".
    pub fn caveat(&self) -> Option<String> {
        if self.emulated_on.is_empty() {
            return None;
        }
        let hosts = self.emulated_on.join(" and ");
        let some = if self.partly_native { "some runs " } else { "" };
        Some(format!(
            "{some}measured under emulation on {hosts} hosts: growth (slopes, classes) holds, absolute times are the \
             emulator's"
        ))
    }

    /// The line and the caveat, as one sentence for a note: "Architecture: aarch64, measured under
    /// emulation on x86_64 hosts: …."
    pub fn sentence(&self) -> String {
        match self.caveat() {
            Some(caveat) => format!("{}, {caveat}.", self.line()),
            None => format!("{}.", self.line()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(archs: &[&str]) -> Vec<String> {
        archs.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn the_architecture_is_the_lineages() {
        let a = Architecture::of("zig-cc-musl (aarch64)", &hosts(&["aarch64"]));
        assert_eq!(a.arch, "aarch64");
        assert!(a.emulated_on.is_empty());
        assert_eq!(a.caveat(), None);
        assert_eq!(a.sentence(), "Architecture: aarch64.");
        assert_eq!(Architecture::of("zig-cc-musl", &[]).arch, "x86_64");
    }

    #[test]
    fn hosts_of_another_architecture_measured_it_under_emulation() {
        let a = Architecture::of("zig-cc-musl (aarch64)", &hosts(&["x86_64", "amd64"]));
        assert_eq!(a.emulated_on, ["x86_64"]);
        assert_eq!(
            a.caveat().unwrap(),
            "measured under emulation on x86_64 hosts: growth (slopes, classes) holds, absolute times are the \
             emulator's"
        );
        let mixed = Architecture::of("zig-cc-musl (aarch64)", &hosts(&["arm64", "x86_64"]));
        assert!(mixed.caveat().unwrap().starts_with("some runs measured under emulation on x86_64 hosts"));
    }

    #[test]
    fn a_host_that_runs_the_binaries_itself_is_native() {
        assert!(Architecture::of("gcc", &hosts(&["x86_64"])).emulated_on.is_empty());
        assert!(Architecture::of("gcc (i386)", &hosts(&["x86_64"])).emulated_on.is_empty());
        assert_eq!(Architecture::of("gcc", &hosts(&["aarch64"])).emulated_on, ["aarch64"]);
        // A host's text that names no architecture tells nothing, and is never shown as one.
        assert_eq!(Architecture::of("gcc", &hosts(&["'; DROP TABLE runs; --", ""])).caveat(), None);
    }
}
