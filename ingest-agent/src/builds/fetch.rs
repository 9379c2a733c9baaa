//! Zig releases for a host that has none: `toolchains fetch zig VERSION` and `--toolchain
//! zig@VERSION` install the `ziglang` wheel of a release from the Python package index into the
//! agent's cache, once per version, and measure with its `zig cc`.

use crate::config::ToolchainSpec;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::IsTerminal;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

/// The lineage `--toolchain zig@VERSION` measures under: every fetched release is one version of it.
pub const ZIG_LINEAGE: &str = "zig-cc-musl";

/// The target `zig cc` builds for, so workloads link Zig's own musl rather than the host's libc.
pub const ZIG_TARGET: &str = "x86_64-linux-musl";

/// The file beside an install that records where it came from; an install without it is not ours.
const RECORD: &str = "fetched.toml";

/// Where a fetched release came from, as written to `fetched.toml` beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub version: String,
    /// The wheel's file name, e.g. `ziglang-0.15.2-py3-none-manylinux_2_12_x86_64….whl`.
    pub wheel: String,
    /// The sha256 of that wheel, hex.
    pub sha256: String,
    #[serde(with = "time::serde::rfc3339")]
    pub fetched_at: time::OffsetDateTime,
}

/// A release in the cache.
#[derive(Debug, Clone)]
pub struct Install {
    /// `<cache>/zig/<version>`, holding `ziglang/` and `fetched.toml`.
    pub dir: PathBuf,
    pub record: Record,
}

impl Install {
    /// The `zig` executable.
    pub fn zig(&self) -> PathBuf {
        zig_executable(&self.dir)
    }
}

fn zig_executable(dir: &Path) -> PathBuf {
    dir.join("ziglang").join("zig")
}

/// Refuses anything but a release or pre-release version (`0.15.2`, `0.16.0-dev.1234+abc`): it
/// becomes a directory name and a pip requirement, so nothing else may slip through.
pub fn check_zig_version(v: &str) -> Result<()> {
    let example = "e.g. 0.15.2 or 0.16.0-dev.1234+abc";
    if v.is_empty() || v.len() > 64 {
        bail!("Zig version {v:?} must be 1 to 64 characters ({example})");
    }
    if let Some(c) = v.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))) {
        bail!(
            "Zig version {v:?} holds {c:?}: only digits and dots are allowed, then an optional -PRERELEASE and \
             +BUILD of letters, digits and dots ({example})"
        );
    }
    let (rest, build) = match v.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (v, None),
    };
    let (release, pre) = match rest.split_once('-') {
        Some((r, p)) => (r, Some(p)),
        None => (rest, None),
    };
    if !release.split('.').all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())) {
        bail!("Zig version {v:?} must start with numbers separated by single dots ({example})");
    }
    for (what, part) in [("pre-release after '-'", pre), ("build after '+'", build)] {
        if let Some(p) = part {
            if p.is_empty() || !p.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
                bail!("Zig version {v:?}: the {what} must be letters, digits and dots ({example})");
            }
        }
    }
    Ok(())
}

/// The toolchains of `--toolchain`: `NAME=COMMAND`, or `zig@VERSION`, fetched into `cache` first
/// when it is not there yet. Two `zig@` in one invocation would be two toolchains of one lineage,
/// which the table, the agreement check and the report cannot tell apart, so they are refused
/// before anything is fetched.
pub fn cli_toolchains(args: &[String], cache: &Path) -> Result<Vec<ToolchainSpec>> {
    let zigs: Vec<&str> = args.iter().filter_map(|a| a.strip_prefix("zig@")).collect();
    for v in &zigs {
        check_zig_version(v).with_context(|| format!("--toolchain zig@{v}"))?;
    }
    if let [first, second, ..] = zigs.as_slice() {
        bail!(
            "--toolchain zig@{first} and zig@{second} are both lineage {ZIG_LINEAGE}: give one zig@VERSION per \
             invocation (run the agent once per version; the server charts them as one lineage)"
        );
    }
    args.iter().map(|a| cli_toolchain(a, cache)).collect()
}

/// One toolchain as `--toolchain` gives it: `NAME=COMMAND`, or `zig@VERSION` (fetched into
/// `cache` first when it is not there yet).
pub fn cli_toolchain(arg: &str, cache: &Path) -> Result<ToolchainSpec> {
    match arg.strip_prefix("zig@") {
        Some(v) => zig_spec(cache, v).with_context(|| format!("--toolchain {arg}")),
        None => ToolchainSpec::parse_cli(arg),
    }
}

/// The `zig-cc-musl` toolchain of a release, fetched first if it is not in `cache` yet.
pub fn zig_spec(cache: &Path, version: &str) -> Result<ToolchainSpec> {
    let (install, _) = fetch_zig(cache, version)?;
    let mut spec = ToolchainSpec::parse_cli(&format!("{ZIG_LINEAGE}=zig cc -target {ZIG_TARGET}"))?;
    spec.command[0] = install.zig().display().to_string();
    Ok(spec)
}

/// Installs the `ziglang` wheel of `version` under `<cache>/zig/<version>`, unless it is there
/// already; returns the install and whether it was fetched now. The install is built in a
/// temporary directory beside it and renamed into place once `zig version` agrees, so an
/// interrupted fetch never leaves something that counts as done.
pub fn fetch_zig(cache: &Path, version: &str) -> Result<(Install, bool)> {
    check_zig_version(version)?;
    let root = cache.join("zig");
    let dir = root.join(version);
    if let Some(install) = existing(&dir)? {
        return Ok((install, false));
    }
    let pip = Pip::find()?;
    std::fs::create_dir_all(&root).with_context(|| format!("cannot create {}", root.display()))?;
    remove_interrupted(&root);
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".fetching-{version}-"))
        .tempdir_in(&root)
        .with_context(|| format!("cannot make a temporary directory in {}", root.display()))?;
    let say = |msg: &str| eprintln!("zig {version}: {msg}");

    let started = Instant::now();
    say(&format!("downloading ziglang=={version} from the package index"));
    let wheels = tmp.path().join("wheel");
    pip.run(
        version,
        &["download", "--no-deps", "--only-binary=:all:", "--dest"],
        &wheels,
        &format!("ziglang=={version}"),
    )?;
    let wheel = only_wheel(&wheels)?;
    let bytes = std::fs::read(&wheel).with_context(|| format!("cannot read {}", wheel.display()))?;
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let wheel_name = wheel.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    say(&format!(
        "downloaded {wheel_name} ({:.1} MB, sha256 {sha256}) in {:.1?}",
        bytes.len() as f64 / 1e6,
        started.elapsed()
    ));
    drop(bytes);

    let started = Instant::now();
    say("installing");
    let staged = tmp.path().join("install");
    pip.run(version, &["install", "--no-deps", "--no-index", "--no-compile", "--target"], &staged, &path_arg(&wheel))?;
    std::fs::remove_dir_all(&wheels).ok();
    say(&format!("installed in {:.1?}", started.elapsed()));

    let zig = zig_executable(&staged);
    let said = Command::new(&zig)
        .arg("version")
        .output()
        .with_context(|| format!("the ziglang {version} wheel holds no runnable {}", zig.display()))?;
    let said_version = String::from_utf8_lossy(&said.stdout).trim().to_string();
    if !said.status.success() || said_version != version {
        bail!(
            "the ziglang {version} wheel's zig says it is {said_version:?} (`zig version`, {}), not {version}; \
             nothing was installed",
            said.status
        );
    }
    say(&format!("`zig version` prints {said_version}"));

    let record = Record {
        version: version.to_string(),
        wheel: wheel_name,
        sha256,
        fetched_at: time::OffsetDateTime::now_utc().replace_nanosecond(0).unwrap_or(time::OffsetDateTime::UNIX_EPOCH),
    };
    std::fs::write(staged.join(RECORD), toml::to_string(&record)?)
        .with_context(|| format!("cannot write {}", staged.join(RECORD).display()))?;
    if let Err(e) = std::fs::rename(&staged, &dir) {
        // Another agent fetching the same release got there first; its install is as good.
        if let Some(install) = existing(&dir)? {
            return Ok((install, false));
        }
        return Err(e).with_context(|| format!("cannot move the install into {}", dir.display()));
    }
    say(&format!("fetched into {}", dir.display()));
    Ok((Install { dir, record }, true))
}

/// Removes what fetches killed midway left behind (a few hundred MB each). A fetch still running
/// is far younger than a day.
fn remove_interrupted(root: &Path) {
    const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let age = entry.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
        if entry.file_name().to_string_lossy().starts_with(".fetching-") && age.is_some_and(|a| a > STALE_AFTER) {
            std::fs::remove_dir_all(entry.path()).ok();
        }
    }
}

/// The install at `dir` when it is complete; an error when something else is there.
fn existing(dir: &Path) -> Result<Option<Install>> {
    if !dir.exists() {
        return Ok(None);
    }
    let record_path = dir.join(RECORD);
    let text = std::fs::read_to_string(&record_path).with_context(|| {
        format!(
            "{} exists but was not fetched by slopewatch-agent (no {RECORD}); remove it and fetch again",
            dir.display()
        )
    })?;
    let record: Record = toml::from_str(&text).with_context(|| format!("{} is unreadable", record_path.display()))?;
    Ok(Some(Install { dir: dir.to_path_buf(), record }))
}

fn only_wheel(dir: &Path) -> Result<PathBuf> {
    let wheels: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("pip left nothing in {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    match wheels.as_slice() {
        [one] => Ok(one.clone()),
        _ => bail!("pip downloaded {} wheels into {}, expected one", wheels.len(), dir.display()),
    }
}

fn path_arg(p: &Path) -> String {
    p.display().to_string()
}

/// `python3 -m pip`, checked to be there.
struct Pip {
    /// Whether pip's own progress bar is shown (on a terminal) or its output kept for errors only.
    tty: bool,
}

impl Pip {
    fn find() -> Result<Pip> {
        let out = Command::new("python3").args(["-m", "pip", "--version"]).output();
        match out {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
                "python3 is not installed: fetching Zig uses pip to install PyPI's ziglang package (Debian: \
                 apt-get install python3-pip), or give a Zig you have with --toolchain 'zig-cc-musl=PATH/zig cc \
                 -target {ZIG_TARGET}'"
            ),
            Err(e) => Err(e).context("cannot run python3"),
            Ok(o) if !o.status.success() => bail!(
                "python3 has no pip ({}): fetching Zig uses pip to install PyPI's ziglang package (Debian: apt-get \
                 install python3-pip, or python3 -m ensurepip --user)",
                shorten(String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("").trim(), 200)
            ),
            Ok(_) => Ok(Pip { tty: std::io::stderr().is_terminal() }),
        }
    }

    /// Runs `python3 -m pip ARGS DIR REQUIREMENT`; pip's errors come back shortened and explained.
    fn run(&self, version: &str, args: &[&str], dir: &Path, requirement: &str) -> Result<()> {
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "pip"]).args(args).arg(dir).arg(requirement).arg("--disable-pip-version-check");
        cmd.stdin(Stdio::null()).stderr(Stdio::piped());
        if self.tty {
            // pip draws its progress bar on its stdout when that is a terminal: ours is kept for
            // the result, so pip's goes to our stderr.
            let stderr = std::io::stderr().as_fd().try_clone_to_owned().context("cannot share stderr with pip")?;
            cmd.stdout(Stdio::from(stderr));
        } else {
            cmd.arg("--progress-bar").arg("off").stdout(Stdio::piped());
        }
        let out = cmd.output().context("cannot run python3 -m pip")?;
        if out.status.success() {
            return Ok(());
        }
        bail!("{}", pip_failure(version, &out))
    }
}

/// Why pip failed, in a line or two: the index unreachable, no such release, or pip's own error.
fn pip_failure(version: &str, out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let unreachable = [
        "NewConnectionError",
        "Failed to establish a new connection",
        "Temporary failure in name resolution",
        "Name or service not known",
        "ConnectTimeoutError",
        "ReadTimeoutError",
        "ProxyError",
        "SSLError",
    ];
    if let Some(line) = stderr.lines().find(|l| unreachable.iter().any(|u| l.contains(u))) {
        // pip wraps the cause in a retry warning and an object's repr; the cause is what helps.
        let cause = match line.split_once("Failed to establish a new connection: ") {
            Some((_, rest)) => rest.split(['\'', ')']).next().unwrap_or(rest),
            None => line.trim(),
        };
        return format!(
            "the package index could not be reached to fetch ziglang {version} (no network, or a proxy or \
             PIP_INDEX_URL that does not answer): {}",
            shorten(cause, 200)
        );
    }
    if stderr.contains("No matching distribution found") {
        let known = stderr
            .split_once("(from versions: ")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(list, _)| list.split(", ").map(str::trim).filter(|v| !v.is_empty()).collect::<Vec<_>>())
            .unwrap_or_default();
        return match known.as_slice() {
            [] | ["none"] => format!(
                "the package index lists no ziglang release at all, so Zig {version} cannot be fetched: it could not \
                 be reached (no network, or a proxy or PIP_INDEX_URL that does not answer) or does not carry ziglang"
            ),
            all => format!(
                "ziglang {version} is not on the package index, so Zig {version} cannot be fetched; the newest it \
                 has: {}",
                all[all.len().saturating_sub(6)..].join(", ")
            ),
        };
    }
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("ERROR")).collect();
    let text = if errors.is_empty() { stderr.lines().last().unwrap_or("").to_string() } else { errors.join(" ") };
    format!("pip could not fetch ziglang {version} ({}): {}", out.status, shorten(&text, 400))
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_and_pre_releases_are_accepted() {
        for v in ["0.15.2", "0.16.0", "1", "0.16.0-dev.1234+abc1234", "0.14.0-rc1", "0.11.0+build.7"] {
            check_zig_version(v).unwrap_or_else(|e| panic!("{v}: {e:#}"));
        }
    }

    #[test]
    fn anything_else_is_refused_with_what_was_wrong() {
        for (v, why) in [
            ("", "1 to 64"),
            ("0.15.2;rm -rf /", "holds ';'"),
            ("0.15.2 ", "holds ' '"),
            ("$(reboot)", "holds '$'"),
            ("../0.15.2", "holds '/'"),
            ("0..2", "numbers separated by single dots"),
            ("v0.15.2", "numbers separated by single dots"),
            ("0.16.0-", "pre-release"),
            ("0.16.0+", "build"),
            ("0.16.0-dev-1", "pre-release"),
        ] {
            let e = format!("{:#}", check_zig_version(v).unwrap_err());
            assert!(e.contains(why), "{v:?}: {e}");
        }
    }

    #[test]
    fn two_zig_releases_in_one_invocation_are_refused_before_fetching() {
        let cache = Path::new("/nonexistent/slopewatch-cache");
        let args = ["zig@0.15.2".to_string(), "zig@0.16.0".to_string()];
        let e = format!("{:#}", cli_toolchains(&args, cache).unwrap_err());
        assert!(e.contains("both lineage zig-cc-musl"), "{e}");
        let e = format!("{:#}", cli_toolchains(&["zig@0.15;ls".to_string()], cache).unwrap_err());
        assert!(e.contains("holds ';'"), "{e}");
        assert!(!cache.exists());
    }

    fn failed(stderr: &str) -> Output {
        use std::os::unix::process::ExitStatusExt;
        Output { status: std::process::ExitStatus::from_raw(1 << 8), stdout: Vec::new(), stderr: stderr.into() }
    }

    #[test]
    fn pip_failures_are_told_apart() {
        let missing = "ERROR: Could not find a version that satisfies the requirement ziglang==0.0.1 (from versions: \
                       0.0.0, 0.8.0, 0.13.0, 0.14.0, 0.14.1, 0.15.1, 0.15.2, 0.16.0)\n\
                       ERROR: No matching distribution found for ziglang==0.0.1\n";
        let m = pip_failure("0.0.1", &failed(missing));
        assert!(m.contains("ziglang 0.0.1 is not on the package index"), "{m}");
        assert!(m.contains("the newest it has: 0.13.0, 0.14.0, 0.14.1, 0.15.1, 0.15.2, 0.16.0"), "{m}");
        assert!(!m.contains("0.8.0"), "only the newest are named: {m}");
        let offline = "WARNING: Retrying (Retry(total=4, ...)) after connection broken by \
                       'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object>: Failed to \
                       establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/ziglang/\n\
                       ERROR: Could not find a version that satisfies the requirement ziglang==0.15.2 (from versions: none)\n\
                       ERROR: No matching distribution found for ziglang==0.15.2\n";
        let m = pip_failure("0.15.2", &failed(offline));
        assert!(
            m.ends_with(
                "could not be reached to fetch ziglang 0.15.2 (no network, or a proxy or PIP_INDEX_URL \
                             that does not answer): [Errno -3] Temporary failure in name resolution"
            ),
            "{m}"
        );
        let silent = "ERROR: Could not find a version that satisfies the requirement ziglang==0.15.2 (from versions: \
                      none)\nERROR: No matching distribution found for ziglang==0.15.2\n";
        let m = pip_failure("0.15.2", &failed(silent));
        assert!(m.contains("lists no ziglang release at all") && m.contains("could not be reached"), "{m}");
        let other = "Traceback...\nERROR: Could not install packages due to an OSError: [Errno 28] No space left\n";
        let m = pip_failure("0.15.2", &failed(other));
        assert!(m.contains("No space left"), "{m}");
    }
}
