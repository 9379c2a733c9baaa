//! Finds out what a configured toolchain really is: compiler family and version, target triple,
//! and the libc its binaries link (by compiling and running a probe with it), and compiles with it.

use crate::builds::runner::{self, Runner};
use crate::config::ToolchainSpec;
use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use slopewatch_core::wire::{self, VersionFrom};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const PROBE_SOURCE: &str = include_str!("../../c/probe.c");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Gcc,
    Clang,
    /// `zig cc`, however Zig is invoked (`zig`, a path, `python3 -m ziglang`).
    Zig,
    Unknown,
}

/// A toolchain with everything the run records about it.
#[derive(Debug, Clone)]
pub struct DetectedToolchain {
    pub spec: ToolchainSpec,
    pub family: Family,
    pub version: String,
    /// What `version` is the version of: the compiler's releases or the libc's.
    pub version_from: VersionFrom,
    pub target: String,
    /// The architecture its binaries are built for, read from the probe it built (`aarch64`).
    pub arch: String,
    /// What runs its binaries when the host cannot (an emulator), or the runner it was given.
    pub runner: Option<Runner>,
    pub libc: String,
    /// Changes whenever the compiler, its flags, its libc or any file named in its command do,
    /// so cached workload binaries are never reused across a toolchain change.
    pub fingerprint: String,
}

impl DetectedToolchain {
    /// The lineage its series are stored under on a server: its name, qualified with its
    /// architecture where that is not x86-64 (`zig-cc-musl (aarch64)`).
    pub fn series_lineage(&self) -> String {
        slopewatch_core::arch::series_lineage(&self.spec.name, &self.arch)
    }

    /// Whether its binaries run under an emulator: built for another architecture than the host's.
    pub fn emulated(&self) -> bool {
        self.runner.as_ref().is_some_and(Runner::emulates)
    }

    /// The toolchain as the wire format carries it.
    pub fn wire(&self) -> wire::Toolchain {
        wire::Toolchain {
            name: self.spec.name.clone(),
            version: self.version.clone(),
            libc: self.libc.clone(),
            target: self.target.clone(),
            compiler: self.spec.command_line(),
            flags: self.spec.flags.join(" "),
            version_from: self.version_from,
        }
    }

    /// Where the version comes from, for people: `compiler gcc`, `libc musl`.
    pub fn version_source(&self) -> String {
        match self.version_from {
            VersionFrom::Libc => format!("libc {}", self.libc.split_whitespace().next().unwrap_or("unknown")),
            VersionFrom::Compiler => match self.family {
                Family::Gcc => "compiler gcc".into(),
                Family::Clang => "compiler clang".into(),
                Family::Zig => "compiler zig".into(),
                Family::Unknown => "compiler".into(),
            },
        }
    }

    /// Compiles and links `sources` into `out` with this toolchain.
    pub fn compile(
        &self,
        sources: &[PathBuf],
        include: &Path,
        extra: &[String],
        out: &Path,
    ) -> Result<(), CompileError> {
        let mut cmd = Command::new(&self.spec.command[0]);
        cmd.args(&self.spec.command[1..])
            .args(&self.spec.flags)
            .arg("-I")
            .arg(include)
            .args(sources)
            .arg("-o")
            .arg(out)
            .args(extra);
        // An archive linked ahead of the system's libc must follow the objects that need it; an
        // object compiled alone (`-c`) links nothing.
        if !extra.iter().any(|a| a == "-c") {
            cmd.args(&self.spec.link_after);
        }
        let failed = |exit_status, signal, output| CompileError {
            toolchain: self.spec.name.clone(),
            exit_status,
            signal,
            output,
        };
        let output = cmd
            .output()
            .map_err(|e| failed(None, None, format!("cannot run compiler {:?}: {e}", self.spec.command[0])))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            return Err(failed(output.status.code(), output.status.signal(), stderr));
        }
        Ok(())
    }
}

/// A compiler that did not produce its output: how it ended and what it said.
#[derive(Debug, Clone)]
pub struct CompileError {
    pub toolchain: String,
    /// The compiler's exit status; none when it was killed by a signal or could not be started.
    pub exit_status: Option<i32>,
    /// The signal that killed the compiler.
    pub signal: Option<i32>,
    /// What the compiler printed on stderr, or why it could not be started.
    pub output: String,
}

impl CompileError {
    /// The output with `dir/` removed from paths, so it names `main.c` rather than a build
    /// directory of this host.
    pub fn relative_to(mut self, dir: &Path) -> CompileError {
        self.output = self.output.replace(&format!("{}/", dir.display()), "");
        self
    }
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match (self.exit_status, self.signal) {
            (Some(code), _) => format!(" (exit status {code})"),
            (None, Some(sig)) => format!(" (killed by signal {sig})"),
            (None, None) => String::new(),
        };
        write!(f, "{} failed to compile{how}:\n{}", self.toolchain, tail(&self.output, 40))
    }
}

impl std::error::Error for CompileError {}

/// Detects everything the spec does not override. `scratch` is a directory for the probe.
/// Every error names the toolchain.
pub fn detect(spec: &ToolchainSpec, scratch: &Path) -> Result<DetectedToolchain> {
    // A directory of its own: agents detecting toolchains of one name at once (two Zig releases
    // built side by side) must not write or run each other's probe.
    let own = std::fs::create_dir_all(scratch)
        .and_then(|()| tempfile::Builder::new().prefix("detect-").tempdir_in(scratch))
        .with_context(|| {
            format!("toolchain {}: cannot make a directory for the probe in {}", spec.name, scratch.display())
        })?;
    detect_parts(spec, own.path()).with_context(|| format!("toolchain {}", spec.name))
}

fn detect_parts(spec: &ToolchainSpec, scratch: &Path) -> Result<DetectedToolchain> {
    let zig = zig_prefix(&spec.command);
    let version_text = run_text(&with_args(&spec.command, &["--version"]))
        .with_context(|| format!("`{} --version` failed", spec.command_line()))?;
    let family = if zig.is_some() {
        Family::Zig
    } else if version_text.contains("clang version") {
        Family::Clang
    } else if version_text.contains("Free Software Foundation") || version_text.contains("gcc") {
        Family::Gcc
    } else {
        Family::Unknown
    };

    let zig_version = match &zig {
        Some(prefix) => Some(run_text(&with_args(prefix, &["version"]))?.trim().to_string()),
        None => None,
    };
    let mut target = explicit_target(&spec.command)
        .or_else(|| run_text(&with_args(&spec.command, &["-dumpmachine"])).ok().map(|t| t.trim().to_string()))
        .unwrap_or_default();
    let (probe, arch, runner) = run_probe(spec, scratch, &target)?;
    let libc_version = libc_version(&probe, zig.as_deref()).or_else(|| static_musl_version(spec, &probe, scratch));
    let version_from = spec.version_from.unwrap_or_else(|| default_version_from(spec, family, &probe.libc));
    let version = match (&spec.version, version_from, &zig_version, family) {
        (Some(v), _, _, _) => v.clone(),
        (None, VersionFrom::Libc, _, _) => match &libc_version {
            Some(v) => v.clone(),
            None => bail!(
                "its version is to be the libc's (version_from = \"libc\"), but the version of the \
                 libc its binaries link ({}) could not be detected; give it with `version = \"…\"` in the config \
                 file, or use version_from = \"compiler\" (--version-from {}=compiler)",
                if probe.libc.is_empty() { "unknown" } else { &probe.libc },
                spec.name
            ),
        },
        (None, VersionFrom::Compiler, Some(v), _) => v.clone(),
        (None, VersionFrom::Compiler, None, Family::Gcc) => {
            run_text(&with_args(&spec.command, &["-dumpfullversion"]))?.trim().to_string()
        }
        (None, VersionFrom::Compiler, None, Family::Clang) => {
            run_text(&with_args(&spec.command, &["-dumpversion"]))?.trim().to_string()
        }
        (None, VersionFrom::Compiler, None, _) => version_text.lines().next().unwrap_or("unknown").trim().to_string(),
    };

    let libc = match &spec.libc {
        Some(l) => l.clone(),
        None => describe_libc(spec, &probe, libc_version.as_deref(), zig_version.as_deref()) + &linked_after(spec),
    };
    // musl-gcc wraps the host gcc, which still reports a -gnu triple; the probe knows better.
    if probe.libc == "musl" && target.contains("-gnu") {
        target = target.replace("-gnu", "-musl");
    }
    // The server keeps series apart by the target's architecture: a target that names none takes
    // the one the probe was built for.
    // (`gcc -m32` still says x86_64-linux-gnu).
    if slopewatch_core::arch::of(&target, "") != arch {
        target = match target.split_once('-') {
            Some((_, rest)) => format!("{arch}-{rest}"),
            None => format!("{arch}-unknown-linux"),
        };
    }

    let mut h = Sha256::new();
    let runs_with = runner.iter().flat_map(|r| &r.argv);
    for part in spec.command.iter().chain(&spec.flags).chain(&spec.link_after).chain(runs_with) {
        h.update(part.as_bytes());
        h.update([0]);
        // A shim object or a wrapper script can change while its path stays the same.
        if let Ok(bytes) = std::fs::read(part) {
            h.update(Sha256::digest(bytes));
        }
    }
    for part in [&version_text, &version, &libc, &target] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    Ok(DetectedToolchain {
        spec: spec.clone(),
        family,
        version,
        version_from,
        target,
        arch,
        runner,
        libc,
        fingerprint: hex::encode(h.finalize()),
    })
}

/// The axis a toolchain tracks when its spec does not say: the libc's for a `musl-gcc` wrapper
/// (the host's gcc with musl's headers and libraries, whose gcc version stays put while musl
/// moves), the compiler's for everything else, `zig cc` included. A wrapper is told by its file
/// name, or by being gcc that links musl (`libc`, as the probe names it) without being pointed at
/// a target.
pub fn default_version_from(spec: &ToolchainSpec, family: Family, libc: &str) -> VersionFrom {
    let named_musl_gcc = Path::new(&spec.command[0]).file_name().is_some_and(|n| n == "musl-gcc");
    let gcc_linking_musl = family == Family::Gcc && libc == "musl" && explicit_target(&spec.command).is_none();
    if named_musl_gcc || gcc_linking_musl {
        VersionFrom::Libc
    } else {
        VersionFrom::Compiler
    }
}

/// The argv that runs Zig itself, if `command` is a `zig cc` invocation: everything before `cc`.
pub fn zig_prefix(command: &[String]) -> Option<Vec<String>> {
    let cc = command.iter().position(|w| w == "cc")?;
    let before = &command[..cc];
    let is_zig = match before {
        [zig] => Path::new(zig).file_name().is_some_and(|n| n == "zig"),
        [_python, m, module] => m == "-m" && module == "ziglang",
        _ => false,
    };
    is_zig.then(|| before.to_vec())
}

/// The target triple named in the command (`-target T`, `--target=T`), if any.
pub fn explicit_target(command: &[String]) -> Option<String> {
    command.iter().enumerate().find_map(|(i, w)| {
        if w == "-target" || w == "--target" {
            command.get(i + 1).cloned()
        } else {
            w.strip_prefix("--target=").or_else(|| w.strip_prefix("-target=")).map(str::to_string)
        }
    })
}

#[derive(Debug, Default)]
struct LibcProbe {
    libc: String,
    libc_version: Option<String>,
    libc_path: Option<String>,
}

/// Builds and runs the libc probe; with what it says, the architecture it was built for and what
/// runs the toolchain's binaries (`runner::resolve`), `target` being the toolchain's triple.
fn run_probe(spec: &ToolchainSpec, scratch: &Path, target: &str) -> Result<(LibcProbe, String, Option<Runner>)> {
    std::fs::create_dir_all(scratch)?;
    let src = scratch.join("probe.c");
    let bin = scratch.join(format!("probe-{}", spec.name));
    std::fs::write(&src, PROBE_SOURCE)?;
    let tc = DetectedToolchain {
        spec: spec.clone(),
        family: Family::Unknown,
        version: String::new(),
        version_from: VersionFrom::Compiler,
        target: String::new(),
        arch: String::new(),
        runner: None,
        libc: String::new(),
        fingerprint: String::new(),
    };
    tc.compile(&[src], scratch, &[], &bin).context("cannot build the libc probe")?;
    let sysroot = run_text(&with_args(&spec.command, &["-print-sysroot"])).ok().map(|s| s.trim().to_string());
    let sysroot = sysroot.filter(|s| !s.is_empty()).map(PathBuf::from);
    let needs = runner::needs(&bin)?;
    let arch = needs.arch.clone();
    let runner = runner::resolve(&spec.name, &spec.runner, needs, target, sysroot.as_deref())?;
    let out = output_text(runner::command(runner.as_ref(), &bin)).with_context(|| match &runner {
        Some(r) => format!("the libc probe did not run under {}", r.describe()),
        None => "the libc probe did not run".to_string(),
    })?;
    let mut probe = LibcProbe::default();
    for line in out.lines() {
        match line.split_once('=') {
            Some(("libc", v)) => probe.libc = v.to_string(),
            Some(("libc_version", v)) => probe.libc_version = Some(v.to_string()),
            Some(("libc_path", v)) => probe.libc_path = Some(v.to_string()),
            _ => {}
        }
    }
    Ok((probe, arch, runner))
}

/// The version of the libc the probe linked, where it can be told: glibc says it; Zig's musl is
/// read from Zig's tree; a dynamically linked musl maps its loader, which prints its version when
/// run. A statically linked musl has no way to say.
fn libc_version(probe: &LibcProbe, zig: Option<&[String]>) -> Option<String> {
    match probe.libc.as_str() {
        "glibc" => probe.libc_version.clone(),
        "musl" => match zig {
            Some(prefix) => zig_musl_version(prefix),
            None => probe.libc_path.as_deref().and_then(musl_loader_version),
        },
        _ => None,
    }
}

/// The version of a statically linked musl (no loader to ask): the linker names the `libc.a` it
/// took (`-Wl,-t` lists every input), and musl's `libc.so` beside it is its loader, which says its
/// version when run; failing that, the Debian package that installed the archive says it.
fn static_musl_version(spec: &ToolchainSpec, probe: &LibcProbe, scratch: &Path) -> Option<String> {
    if probe.libc != "musl" || probe.libc_path.is_some() {
        return None;
    }
    let out = Command::new(&spec.command[0])
        .args(&spec.command[1..])
        .args(&spec.flags)
        .arg(scratch.join("probe.c"))
        .arg("-o")
        .arg(scratch.join(format!("probe-{}-traced", spec.name)))
        .arg("-Wl,-t")
        .output()
        .ok()?;
    let inputs = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let archive = inputs.lines().map(str::trim).find(|l| l.ends_with("/libc.a"))?;
    let loader = Path::new(archive).with_file_name("libc.so");
    musl_loader_version(&loader.display().to_string()).or_else(|| package_version(archive))
}

/// The upstream version of the Debian package that installed `path` (`1.2.3` of `1.2.3-1`).
fn package_version(path: &str) -> Option<String> {
    let owner = run_text(&["dpkg-query".into(), "-S".into(), path.into()]).ok()?;
    let package = owner.split(':').next()?.trim().to_string();
    let version = run_text(&["dpkg-query".into(), "-W".into(), "-f=${Version}".into(), package]).ok()?;
    let upstream = version.trim().rsplit_once('-').map_or(version.trim(), |(v, _)| v);
    let upstream = upstream.split_once(':').map_or(upstream, |(_, v)| v);
    (!upstream.is_empty()).then(|| upstream.to_string())
}

/// What a toolchain links after the workload's objects, for the libc column: ` + liboverlay.a -lfoo`.
fn linked_after(spec: &ToolchainSpec) -> String {
    spec.link_after
        .iter()
        .map(|a| {
            Path::new(a)
                .file_name()
                .filter(|_| !a.starts_with('-'))
                .map_or(a.clone(), |f| f.to_string_lossy().into_owned())
        })
        .map(|a| format!(" + {a}"))
        .collect()
}

/// The libc as people read it: `glibc 2.36`, `musl 1.2.5 (zig 0.16.0)`, `klibc` (a libc the probe
/// names by a macro it defines about itself), or `unknown (/usr/bin/cc)` where none was recognised.
fn describe_libc(spec: &ToolchainSpec, probe: &LibcProbe, version: Option<&str>, zig_version: Option<&str>) -> String {
    let known = |v: Option<&str>| v.map_or(String::new(), |v| format!(" {v}"));
    match (probe.libc.as_str(), zig_version) {
        ("musl", Some(zv)) => format!("musl {} (zig {zv})", version.unwrap_or("(unknown version)")),
        (libc @ ("glibc" | "musl"), _) => format!("{libc} {}", version.unwrap_or("(unknown version)")),
        ("" | "unknown", _) => format!("unknown ({})", compiler_path(&spec.command[0])),
        (other, _) => format!("{other}{}", known(version)),
    }
}

/// Where a command's compiler lives, for a libc named by nothing but its compiler.
fn compiler_path(command: &str) -> String {
    which_on_path(command).map_or_else(|| command.to_string(), |p| p.display().to_string())
}

fn which_on_path(command: &str) -> Option<std::path::PathBuf> {
    if command.contains('/') {
        return Some(Path::new(command).to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(command)).find(|p| p.is_file())
}

fn musl_loader_version(path: &str) -> Option<String> {
    let out = Command::new(path).output().ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    text.lines().find_map(|l| l.strip_prefix("Version ").map(|v| v.trim().to_string()))
}

/// The musl release Zig vendors, read from its `lib/libc/musl` tree.
fn zig_musl_version(prefix: &[String]) -> Option<String> {
    let env = run_text(&with_args(prefix, &["env"])).ok()?;
    // JSON up to 0.15 (`"lib_dir": "…"`), ZON from 0.16 (`.lib_dir = "…"`).
    let line = env.lines().find(|l| l.contains("lib_dir"))?;
    let lib_dir = line.split('"').nth(if line.trim_start().starts_with('"') { 3 } else { 1 })?;
    let header = Path::new(lib_dir).join("libc/musl/src/internal/version.h");
    let text = std::fs::read_to_string(header).ok()?;
    text.split('"').nth(1).map(str::to_string)
}

fn with_args(base: &[String], extra: &[&str]) -> Vec<String> {
    base.iter().cloned().chain(extra.iter().map(|s| s.to_string())).collect()
}

/// Runs argv and returns stdout, or stderr when stdout is empty (some tools print versions there).
fn run_text(argv: &[String]) -> Result<String> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    output_text(cmd)
}

/// `run_text` for a command already made.
fn output_text(mut cmd: Command) -> Result<String> {
    let argv: Vec<String> =
        std::iter::once(cmd.get_program()).chain(cmd.get_args()).map(|a| a.to_string_lossy().into_owned()).collect();
    let out = cmd.output().with_context(|| format!("cannot run {:?}", argv[0]))?;
    if !out.status.success() {
        bail!("`{}` exited with {}: {}", argv.join(" "), out.status, tail(&String::from_utf8_lossy(&out.stderr), 5));
    }
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Ok(if stdout.trim().is_empty() { String::from_utf8_lossy(&out.stderr).into_owned() } else { stdout })
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        crate::config::split_words(s).unwrap()
    }

    #[test]
    fn zig_is_recognised_however_it_is_invoked() {
        assert_eq!(zig_prefix(&words("zig cc -target x86_64-linux-musl")), Some(words("zig")));
        assert_eq!(zig_prefix(&words("/opt/z/0.16.0/ziglang/zig cc")), Some(words("/opt/z/0.16.0/ziglang/zig")));
        assert_eq!(zig_prefix(&words("python3 -m ziglang cc")), Some(words("python3 -m ziglang")));
        assert_eq!(zig_prefix(&words("gcc")), None);
        assert_eq!(zig_prefix(&words("ccache cc")), None);
    }

    #[test]
    fn musl_gcc_wrappers_track_the_libc_and_everything_else_the_compiler() {
        let spec = |cmd: &str| ToolchainSpec::parse_cli(&format!("t={cmd}")).unwrap();
        let axis = |cmd: &str, family, libc| default_version_from(&spec(cmd), family, libc);
        assert_eq!(axis("/usr/bin/musl-gcc", Family::Unknown, ""), VersionFrom::Libc, "by its name alone");
        assert_eq!(axis("ccache gcc", Family::Gcc, "musl"), VersionFrom::Libc);
        assert_eq!(axis("gcc", Family::Gcc, "glibc"), VersionFrom::Compiler);
        assert_eq!(axis("gcc -target x86_64-linux-musl", Family::Gcc, "musl"), VersionFrom::Compiler);
        assert_eq!(axis("clang", Family::Clang, "musl"), VersionFrom::Compiler);
        assert_eq!(axis("zig cc -target x86_64-linux-musl", Family::Zig, "musl"), VersionFrom::Compiler);
    }

    #[test]
    fn a_libc_is_named_for_what_it_says_it_is_and_never_for_one_it_is_not() {
        let spec = |cmd: &str| ToolchainSpec::parse_cli(&format!("t={cmd}")).unwrap();
        let probe = |libc: &str| LibcProbe { libc: libc.into(), ..LibcProbe::default() };
        let named = |cmd: &str, libc: &str, v: Option<&str>| describe_libc(&spec(cmd), &probe(libc), v, None);
        assert_eq!(named("gcc", "glibc", Some("2.36")), "glibc 2.36");
        assert_eq!(named("klcc", "klibc", None), "klibc");
        assert_eq!(named("/opt/x/bin/cc -O2", "unknown", None), "unknown (/opt/x/bin/cc)");
        assert_eq!(named("/opt/x/bin/cc", "", None), "unknown (/opt/x/bin/cc)");
    }

    #[test]
    fn explicit_targets_are_read_from_the_command() {
        assert_eq!(explicit_target(&words("zig cc -target x86_64-linux-musl")).as_deref(), Some("x86_64-linux-musl"));
        assert_eq!(explicit_target(&words("clang --target=aarch64-linux-gnu")).as_deref(), Some("aarch64-linux-gnu"));
        assert_eq!(explicit_target(&words("gcc")), None);
    }
}
