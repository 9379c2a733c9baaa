//! The architecture a toolchain builds for, and how it keeps series apart: the code behind a libc
//! function differs per architecture (glibc and musl carry assembly for each; Zig compiles its own
//! per target), so an aarch64 build of a lineage is a series of its own, never a point on the
//! x86-64 line.
//!
//! The series of a lineage built for x86-64 (every series stored before architectures were told
//! apart) is stored under the lineage's name; the series of another architecture under
//! `NAME (ARCH)`, e.g. `zig-cc-musl (aarch64)`. Pages, webhooks and notes that name a lineage so
//! name its architecture, and its URLs are its own.

/// The architecture a series is stored under its plain lineage name for.
pub const DEFAULT: &str = "x86_64";

/// One spelling per architecture: the name Linux (`uname -m`), QEMU (`qemu-ARCH`) and the first
/// part of a GNU or Zig triple agree on, from the aliases others use (`arm64`, `amd64`, `armv7`).
/// `None` for text that names no architecture known here.
pub fn normalize(name: &str) -> Option<&'static str> {
    let n = name.trim().to_ascii_lowercase();
    Some(match n.as_str() {
        "x86_64" | "amd64" | "x86-64" | "x64" => "x86_64",
        "aarch64" | "arm64" => "aarch64",
        "aarch64_be" => "aarch64_be",
        "i386" | "i486" | "i586" | "i686" | "x86" => "i386",
        "riscv64" | "riscv64gc" => "riscv64",
        "riscv32" => "riscv32",
        "ppc64le" | "powerpc64le" => "ppc64le",
        "ppc64" | "powerpc64" => "ppc64",
        "ppc" | "powerpc" => "ppc",
        "s390x" => "s390x",
        "loongarch64" => "loongarch64",
        "mips64el" => "mips64el",
        "mips64" => "mips64",
        "mipsel" => "mipsel",
        "mips" => "mips",
        "sparc64" => "sparc64",
        "wasm32" => "wasm32",
        _ if n.starts_with("armv8") || n.starts_with("aarch64") => "aarch64",
        _ if n == "arm" || n.starts_with("armv") || n == "armhf" || n == "armel" || n == "thumb" => "arm",
        _ => return None,
    })
}

/// The architecture of a toolchain's binaries: the first part of its target triple
/// (`aarch64-linux-musl`), else the host's, else x86-64's: a text that names no architecture known
/// here (a mistyped or hostile `host.arch`) never becomes a series of its own.
pub fn of(target: &str, host_arch: &str) -> String {
    let first = target.split('-').next().unwrap_or("");
    normalize(first).or_else(|| normalize(host_arch)).unwrap_or(DEFAULT).to_string()
}

/// Whether a host of architecture `host` runs binaries built for `target` on its own processor:
/// its own, and the 32-bit architecture of the same family (i386 on x86-64, 32-bit Arm on
/// aarch64), which the agent runs without an emulator. Anything else ran under one.
pub fn runs_natively(host: &str, target: &str) -> bool {
    host == target || matches!((host, target), ("x86_64", "i386") | ("aarch64", "arm"))
}

/// The lineage a series of `name` built for `arch` is stored under: `name` itself for x86-64,
/// `name (arch)` otherwise. A name already qualified with `arch` is kept as it is, so an exported
/// run read back lands where it was.
pub fn series_lineage(name: &str, arch: &str) -> String {
    if arch == DEFAULT || qualifier(name).is_some_and(|(_, a)| a == arch) {
        name.to_string()
    } else {
        format!("{name} ({arch})")
    }
}

/// A stored lineage's name as the agent configures it and the architecture of its series:
/// `zig-cc-musl (aarch64)` is `("zig-cc-musl", "aarch64")`, `zig-cc-musl` is x86-64's.
pub fn split_lineage(lineage: &str) -> (&str, &str) {
    qualifier(lineage).unwrap_or((lineage, DEFAULT))
}

/// The name and the architecture of `NAME (ARCH)`, where ARCH is one known here.
fn qualifier(lineage: &str) -> Option<(&str, &'static str)> {
    let inner = lineage.strip_suffix(')')?;
    let open = inner.rfind(" (")?;
    let arch = normalize(&inner[open + 2..]).filter(|a| *a == &inner[open + 2..])?;
    Some((&inner[..open], arch))
}

/// Why a submitted lineage name cannot be stored for `arch`: one qualified with another
/// architecture (`foo (aarch64)` sent for x86-64) would join that architecture's series.
pub fn check_name(name: &str, arch: &str) -> Result<(), String> {
    match qualifier(name) {
        Some((_, named)) if named != arch => Err(format!(
            "names the architecture {named} in parentheses, but the run's target is {arch}; \
             the server qualifies a lineage with its architecture itself, so send the plain name"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_architecture_is_the_targets_else_the_hosts() {
        assert_eq!(of("aarch64-linux-musl", "x86_64"), "aarch64");
        assert_eq!(of("x86_64-linux-gnu", "x86_64"), "x86_64");
        assert_eq!(of("arm64-apple-darwin", "x86_64"), "aarch64");
        assert_eq!(of("armv7a-linux-musleabihf", "x86_64"), "arm");
        assert_eq!(of("i686-linux-gnu", "x86_64"), "i386");
        assert_eq!(of("riscv64-linux-musl", "x86_64"), "riscv64");
        assert_eq!(of("", "aarch64"), "aarch64");
        assert_eq!(of("", "arm64"), "aarch64");
        assert_eq!(of("", ""), "x86_64");
        assert_eq!(of("weird-thing", "Mystery9"), "x86_64", "nothing known: x86-64's series");
        assert_eq!(of("", "'; DROP TABLE runs; --"), "x86_64");
    }

    #[test]
    fn x86_64_series_keep_the_plain_name_and_others_are_qualified_once() {
        assert_eq!(series_lineage("zig-cc-musl", "x86_64"), "zig-cc-musl");
        assert_eq!(series_lineage("zig-cc-musl", "aarch64"), "zig-cc-musl (aarch64)");
        assert_eq!(series_lineage("zig-cc-musl (aarch64)", "aarch64"), "zig-cc-musl (aarch64)");
        assert_eq!(split_lineage("zig-cc-musl (aarch64)"), ("zig-cc-musl", "aarch64"));
        assert_eq!(split_lineage("zig-cc-musl"), ("zig-cc-musl", "x86_64"));
        // Parentheses that name no architecture are part of the name.
        assert_eq!(split_lineage("gcc (patched)"), ("gcc (patched)", "x86_64"));
        assert_eq!(split_lineage("gcc (ARM64)"), ("gcc (ARM64)", "x86_64"));
    }

    #[test]
    fn a_host_runs_its_own_architecture_and_its_32_bit_one_natively() {
        assert!(runs_natively("x86_64", "x86_64") && runs_natively("x86_64", "i386"));
        assert!(runs_natively("aarch64", "arm"));
        assert!(!runs_natively("x86_64", "aarch64") && !runs_natively("aarch64", "x86_64"));
        assert!(!runs_natively("i386", "x86_64"));
    }

    #[test]
    fn a_name_qualified_with_another_architecture_is_refused() {
        assert!(check_name("zig-cc-musl (aarch64)", "x86_64").unwrap_err().contains("aarch64"));
        assert!(check_name("zig-cc-musl (aarch64)", "aarch64").is_ok());
        assert!(check_name("zig-cc-musl", "riscv64").is_ok());
        assert!(check_name("gcc (patched)", "x86_64").is_ok());
    }
}
