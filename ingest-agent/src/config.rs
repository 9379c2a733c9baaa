//! What the user asks for: toolchains from `--toolchain` or a TOML file (with the team's own
//! `[[workloads]]`), sizes and durations.

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use slopewatch_core::complexity::Class;
use slopewatch_core::wire::{Counter, Measure, VersionFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Flags added to every compile unless a toolchain says otherwise: the optimised build is the
/// one that ships.
pub const DEFAULT_FLAGS: &str = "-O2";

/// A toolchain as configured, before anything about it is detected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolchainSpec {
    /// The lineage, e.g. `zig-cc-musl`.
    pub name: String,
    /// The compiler command as argv, e.g. `["zig", "cc", "-target", "x86_64-linux-musl"]`.
    pub command: Vec<String>,
    /// Extra compile flags, split into words.
    pub flags: Vec<String>,
    /// Overrides the detected version.
    pub version: Option<String>,
    /// Overrides the detected libc.
    pub libc: Option<String>,
    /// Which version the lineage tracks: the compiler's or the libc's. `None` leaves it to
    /// detection: the libc's for a `musl-gcc` wrapper, the compiler's otherwise.
    pub version_from: Option<VersionFrom>,
    /// Link arguments after the workload's own objects: a libc that comes as an archive (an
    /// overlay of some functions, linked ahead of the system's), or `-lfoo`.
    pub link_after: Vec<String>,
    /// The command that runs what the toolchain builds, put before each binary: an emulator for
    /// another architecture (`qemu-aarch64`). Empty: the host runs it, or a runner is found
    /// (`builds::runner`).
    pub runner: Vec<String>,
}

impl ToolchainSpec {
    /// Parses `NAME=COMMAND`, the form of `--toolchain`.
    pub fn parse_cli(arg: &str) -> Result<ToolchainSpec> {
        let Some((name, command)) = arg.split_once('=') else {
            bail!(
                "toolchain {arg:?} must look like NAME=COMMAND, e.g. 'zig-cc-musl=zig cc -target x86_64-linux-musl', \
                 or zig@VERSION, e.g. zig@0.15.2"
            );
        };
        ToolchainSpec::new(name.trim(), command, DEFAULT_FLAGS, None, None, None)
    }

    /// A bisection candidate: lineage `name` built with `command` and `flags`, at the candidate's
    /// own `version` (what the candidates list says, not what the compiler prints).
    pub fn for_bisect(name: &str, command: &str, flags: &[String], version: &str) -> Result<ToolchainSpec> {
        let mut spec = ToolchainSpec::new(name, command, "", Some(version.to_string()), None, None)?;
        spec.flags = flags.to_vec();
        Ok(spec)
    }

    fn new(
        name: &str,
        command: &str,
        flags: &str,
        version: Option<String>,
        libc: Option<String>,
        version_from: Option<VersionFrom>,
    ) -> Result<ToolchainSpec> {
        check_lineage_name(name)?;
        let command = split_words(command).with_context(|| format!("toolchain {name}: command"))?;
        if command.is_empty() {
            bail!("toolchain {name}: the compiler command is empty");
        }
        let flags = split_words(flags).with_context(|| format!("toolchain {name}: flags"))?;
        for (what, value) in [("version", &version), ("libc", &libc)] {
            if let Some(v) = value {
                if v.trim().is_empty() || v.chars().any(char::is_control) {
                    bail!("toolchain {name}: {what} must be non-empty text on one line");
                }
            }
        }
        Ok(ToolchainSpec {
            name: name.to_string(),
            command,
            flags,
            version,
            libc,
            version_from,
            link_after: Vec::new(),
            runner: Vec::new(),
        })
    }

    /// The command and flags as one line, for display and for the run's `compiler` field.
    pub fn command_line(&self) -> String {
        self.command.join(" ")
    }
}

/// Lineage names end up in URLs and file names, so they are kept to a safe alphabet.
pub(crate) fn check_lineage_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 64 {
        bail!("toolchain name {name:?} must be 1 to 64 characters");
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
        bail!("toolchain name {name:?} may only contain letters, digits, '-', '_' and '.'");
    }
    Ok(())
}

/// Splits a command line into words the way a shell would for the simple cases: whitespace
/// separates, single and double quotes group, backslash escapes the next character.
pub fn split_words(line: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => match chars.next() {
                Some(n) => word.push(n),
                None => bail!("{line:?} ends with a lone backslash"),
            },
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
        if quote.is_some() {
            in_word = true;
        }
    }
    if quote.is_some() {
        bail!("{line:?} has an unclosed quote");
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    toolchains: Vec<ToolchainEntry>,
    /// Kept as tables until each is read on its own, so an error can name its workload.
    #[serde(default)]
    workloads: Vec<toml::Table>,
    /// What `run`, `measure`, `check` and `bisect` measure unless `--measure` says: e.g.
    /// "instructions", or "wall,instructions".
    #[serde(default)]
    measure: Option<String>,
    /// Which counter counts instructions unless `--counter` says: "perf" or "valgrind".
    #[serde(default)]
    counter: Option<String>,
    /// Whether every workload is profiled, not only those over a limit (`--profile`).
    #[serde(default)]
    profile: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolchainEntry {
    name: String,
    cc: String,
    #[serde(default)]
    flags: Option<String>,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    libc: Option<String>,
    #[serde(default)]
    version_from: Option<VersionFrom>,
    /// Paths relative to the config file's directory.
    #[serde(default)]
    link_after: Vec<String>,
    /// The command that runs the toolchain's binaries, e.g. `qemu-aarch64`.
    #[serde(default)]
    runner: Option<String>,
}

/// A `[[workloads]]` entry as written, before its files are looked at: the vocabulary of the
/// `// slopewatch:` line, plus the files that make it up.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadEntry {
    /// The series name on the server.
    pub name: String,
    /// C files compiled and linked together with the toolchain under test, relative to the
    /// config file's directory. For a command workload: the files and directories its build
    /// reads, hashed so the server sees a change of source and the build is reused until one.
    #[serde(default)]
    pub sources: Vec<String>,
    /// A command workload's build, run by `sh` once per toolchain in the config file's directory
    /// with `{cc}`, `{cflags}`, `{target}` and `{out}` substituted.
    #[serde(default)]
    pub build: Option<String>,
    /// A command workload's program, run for each repetition with `{out}` and `{size}` substituted.
    #[serde(default)]
    pub command: Option<String>,
    /// Include directories, relative to the config file's directory.
    #[serde(default)]
    pub include: Vec<String>,
    /// Compile flags added to the toolchain's own.
    #[serde(default)]
    pub cflags: Option<String>,
    /// Link arguments, e.g. `-lm`.
    #[serde(default)]
    pub libs: Vec<String>,
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub start: Option<SizeSetting>,
    #[serde(default)]
    pub max: Option<SizeSetting>,
    /// The class the workload may cost, e.g. `"1"` or `"O(n)"`: it is then judged against that
    /// class, not the slope limit.
    #[serde(default)]
    pub expect: Option<String>,
    /// The size the team runs it at, e.g. `"40000"` or `"12M"`: reports give the time predicted
    /// there.
    #[serde(default)]
    pub at: Option<SizeSetting>,
}

/// A size as TOML gives it: `"64K"` or `65536`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum SizeSetting {
    Number(i64),
    Text(String),
}

impl SizeSetting {
    pub fn value(&self) -> Result<u64, String> {
        match self {
            SizeSetting::Number(n) => parse_size(&n.to_string()),
            SizeSetting::Text(t) => parse_size(t),
        }
    }
}

/// What a config file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub toolchains: Vec<ToolchainSpec>,
    pub workloads: Vec<WorkloadEntry>,
    /// `measure`, read: none when the file does not say.
    pub measure: Option<Vec<Measure>>,
    pub counter: Option<Counter>,
    /// `profile`: every workload is profiled.
    pub profile: bool,
}

/// Reads a TOML config file: its `[[toolchains]]` and `[[workloads]]`.
pub fn load_config(path: &Path) -> Result<Config> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read config file {}", path.display()))?;
    let mut config = parse_config(&text).with_context(|| format!("in config file {}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new(""));
    for spec in &mut config.toolchains {
        for arg in &mut spec.link_after {
            if !arg.starts_with('-') && Path::new(arg.as_str()).is_relative() {
                *arg = dir.join(&*arg).display().to_string();
            }
        }
    }
    Ok(config)
}

pub fn parse_config(text: &str) -> Result<Config> {
    let file: ConfigFile = toml::from_str(text)?;
    if file.toolchains.is_empty() && file.workloads.is_empty() && file.measure.is_none() {
        bail!("no [[toolchains]] or [[workloads]] entries");
    }
    let measure = file
        .measure
        .as_deref()
        .map(|m| {
            m.split(',')
                .map(|one| {
                    Measure::parse(one.trim())
                        .with_context(|| format!("measure = {m:?}: {one:?} is not wall, cpu or instructions"))
                })
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    let counter = match file.counter.as_deref() {
        None => None,
        Some("perf") => Some(Counter::Perf),
        Some("valgrind") => Some(Counter::Valgrind),
        Some(other) => bail!("counter = {other:?} is not perf or valgrind"),
    };
    let toolchains = file
        .toolchains
        .into_iter()
        .map(|t| {
            let flags = t.flags.as_deref().unwrap_or(DEFAULT_FLAGS);
            let spec = ToolchainSpec::new(&t.name, &t.cc, flags, t.version, t.libc, t.version_from)?;
            check_link_after(&spec.name, &t.link_after)?;
            let runner = t.runner.as_deref().map(|r| runner_words(&spec.name, r)).transpose()?.unwrap_or_default();
            Ok(ToolchainSpec { link_after: t.link_after, runner, ..spec })
        })
        .collect::<Result<_>>()?;
    let workloads = file
        .workloads
        .into_iter()
        .enumerate()
        .map(|(i, table)| {
            let which = match table.get("name").and_then(|n| n.as_str()) {
                Some(name) => format!("workload {name:?}"),
                None => format!("workload #{}", i + 1),
            };
            toml::Value::Table(table).try_into::<WorkloadEntry>().with_context(|| which)
        })
        .collect::<Result<_>>()?;
    Ok(Config { toolchains, workloads, measure, counter, profile: file.profile })
}

/// Applies `--version-from NAME=compiler|libc` to the toolchain of that name, whether it came from
/// `--toolchain` or the config file.
pub fn apply_version_from(specs: &mut [ToolchainSpec], arg: &str) -> Result<()> {
    let Some((name, axis)) = arg.split_once('=') else {
        bail!("--version-from {arg:?} must look like NAME=compiler or NAME=libc, e.g. musl-gcc=libc");
    };
    let Some(axis) = VersionFrom::parse(axis.trim()) else {
        bail!("--version-from {arg:?}: {:?} is neither compiler nor libc", axis.trim());
    };
    let spec = named(specs, name, "--version-from", arg)?;
    spec.version_from = Some(axis);
    Ok(())
}

/// Applies `--link-after NAME=ARG` to the toolchain of that name, whether it came from
/// `--toolchain` or the config file: ARG follows the workload's objects when it links.
pub fn apply_link_after(specs: &mut [ToolchainSpec], arg: &str) -> Result<()> {
    let Some((name, link)) = arg.split_once('=') else {
        bail!("--link-after {arg:?} must look like NAME=ARG, e.g. gcc-overlay=lib/liboverlay.a or gcc-glibc=-lm");
    };
    let link = link.trim().to_string();
    check_link_after(name.trim(), std::slice::from_ref(&link))?;
    let spec = named(specs, name, "--link-after", arg)?;
    spec.link_after.push(link);
    Ok(())
}

/// Applies `--runner NAME=CMD` to the toolchain of that name, whether it came from `--toolchain`
/// or the config file: CMD runs each binary the toolchain builds.
pub fn apply_runner(specs: &mut [ToolchainSpec], arg: &str) -> Result<()> {
    let Some((name, command)) = arg.split_once('=') else {
        bail!("--runner {arg:?} must look like NAME=COMMAND, e.g. zig-a64=qemu-aarch64");
    };
    let runner = runner_words(name.trim(), command)?;
    let spec = named(specs, name, "--runner", arg)?;
    spec.runner = runner;
    Ok(())
}

/// The toolchain `name` (as a flag's `NAME=` gives it) among `specs`; an error naming `flag` and
/// its `arg` where none is.
fn named<'s>(specs: &'s mut [ToolchainSpec], name: &str, flag: &str, arg: &str) -> Result<&'s mut ToolchainSpec> {
    match specs.iter_mut().find(|s| s.name == name.trim()) {
        Some(spec) => Ok(spec),
        None => bail!("{flag} {arg:?} names no toolchain given with --toolchain or in the config file"),
    }
}

/// A runner command as words: not empty.
fn runner_words(toolchain: &str, command: &str) -> Result<Vec<String>> {
    let words = split_words(command).with_context(|| format!("toolchain {toolchain}: runner"))?;
    if words.is_empty() {
        bail!("toolchain {toolchain}: the runner is empty; leave it out to have the host run the binaries");
    }
    Ok(words)
}

/// A link argument is a flag or a file that is there.
fn check_link_after(toolchain: &str, args: &[String]) -> Result<()> {
    for a in args {
        if a.trim().is_empty() {
            bail!("toolchain {toolchain}: link_after: an empty argument");
        }
        if !a.starts_with('-') && !Path::new(a).is_file() && Path::new(a).is_absolute() {
            bail!("toolchain {toolchain}: link_after: {a:?} is not a file");
        }
    }
    Ok(())
}

/// Rejects two toolchains with one lineage name: their runs would be indistinguishable.
pub fn check_unique(specs: &[ToolchainSpec]) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for s in specs {
        if !seen.insert(&s.name) {
            bail!("toolchain {} is given twice", s.name);
        }
    }
    Ok(())
}

/// The agent's cache: `dir` when given, else `$XDG_CACHE_HOME/slopewatch` or `~/.cache/slopewatch`.
pub fn cache_root(dir: Option<PathBuf>) -> Result<PathBuf> {
    match dir {
        Some(d) => Ok(d),
        None => Ok(user_dir("XDG_CACHE_HOME", ".cache")?.join("slopewatch")),
    }
}

/// A per-user directory: `$XDG…` when set, else under `$HOME`.
pub fn user_dir(xdg: &str, under_home: &str) -> Result<PathBuf> {
    if let Some(d) = std::env::var_os(xdg).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(under_home)),
        None => bail!("neither ${xdg} nor $HOME is set; give the directory explicitly"),
    }
}

/// Reads a class as the API writes it (`1`, `log n`, `n`, `n log n`, `n^2`, `n^3`) or as people
/// do (`O(n)`, `nlogn`, `n2`, `O(n²)`, in any case and spacing).
pub fn parse_class(s: &str) -> Result<Class, String> {
    let mut key: String = s.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_lowercase();
    if let Some(inner) = key.strip_prefix("o(").and_then(|k| k.strip_suffix(')')) {
        key = inner.to_string();
    }
    let key = key.replace('²', "^2").replace('³', "^3");
    Class::ALL
        .into_iter()
        .find(|c| {
            let wire = c.as_str().replace(' ', "");
            wire == key || wire.replace('^', "") == key
        })
        .ok_or_else(|| {
            let wire: Vec<&str> = Class::ALL.iter().map(|c| c.as_str()).collect();
            format!("{s:?} is not a class; use one of {} (or O(n), nlogn, n2, O(n²) and the like)", wire.join(", "))
        })
}

/// Parses a size: a positive integer with an optional `K`/`KiB` (1024) or `M`/`MiB` (1024²)
/// suffix, or `k` (1000) for record counts.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, mult) = if let Some(d) = t.strip_suffix("KiB").or_else(|| t.strip_suffix('K')) {
        (d, 1024)
    } else if let Some(d) = t.strip_suffix("MiB").or_else(|| t.strip_suffix('M')) {
        (d, 1024 * 1024)
    } else if let Some(d) = t.strip_suffix('k') {
        (d, 1000)
    } else {
        (t, 1)
    };
    let n: u64 = digits.trim().parse().map_err(|_| format!("{s:?} is not a size (e.g. 65536, 64K, 4M, 5k)"))?;
    match n.checked_mul(mult) {
        Some(v) if v > 0 && v <= slopewatch_core::wire::MAX_SIZE => Ok(v),
        _ => Err(format!("size {s:?} must be positive and at most 2^50")),
    }
}

/// Parses a duration: `250ms`, `2s`, `1.5s`, `3m`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("{s:?} is not a duration (e.g. 250ms, 2s, 1.5, 3m)"))?;
    if !(v.is_finite() && v > 0.0 && v * scale <= 86_400.0) {
        return Err(format!("duration {s:?} must be positive and at most a day"));
    }
    Ok(Duration::from_secs_f64(v * scale))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_spelling_of_a_class_is_read_and_a_wrong_one_lists_the_right_ones() {
        for (s, class) in [
            ("1", Class::Constant),
            ("O(1)", Class::Constant),
            ("log n", Class::Log),
            ("O(log n)", Class::Log),
            ("logn", Class::Log),
            ("n", Class::Linear),
            ("O(n)", Class::Linear),
            ("n log n", Class::NLogN),
            ("nlogn", Class::NLogN),
            ("O(N log N)", Class::NLogN),
            ("n^2", Class::Quadratic),
            ("n2", Class::Quadratic),
            ("O(n²)", Class::Quadratic),
            ("O(n^2)", Class::Quadratic),
            ("n^3", Class::Cubic),
            ("O(n³)", Class::Cubic),
            ("n3", Class::Cubic),
        ] {
            assert_eq!(parse_class(s), Ok(class), "{s}");
        }
        for bad in ["n^4", "O(2^n)", "linear", "", "O(n"] {
            let e = parse_class(bad).unwrap_err();
            assert!(e.contains("1, log n, n, n log n, n^2, n^3"), "{bad}: {e}");
        }
    }

    use super::*;

    #[test]
    fn cli_toolchains_split_name_and_command() {
        let t = ToolchainSpec::parse_cli("zig-cc-musl=zig cc -target x86_64-linux-musl").unwrap();
        assert_eq!(t.name, "zig-cc-musl");
        assert_eq!(t.command, ["zig", "cc", "-target", "x86_64-linux-musl"]);
        assert_eq!(t.flags, ["-O2"]);
    }

    #[test]
    fn a_runner_is_read_from_the_config_file_and_the_command_line() {
        let c = parse_config("[[toolchains]]\nname = \"a64\"\ncc = \"aarch64-linux-gnu-gcc\"\nrunner = \"qemu-aarch64 -L /usr/aarch64-linux-gnu\"\n")
            .unwrap();
        assert_eq!(c.toolchains[0].runner, ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]);
        let mut specs = vec![ToolchainSpec::parse_cli("zig-a64=zig cc -target aarch64-linux-musl").unwrap()];
        assert!(specs[0].runner.is_empty(), "none unless named");
        apply_runner(&mut specs, "zig-a64=qemu-aarch64").unwrap();
        assert_eq!(specs[0].runner, ["qemu-aarch64"]);
        for (bad, says) in
            [("qemu-aarch64", "NAME=COMMAND"), ("other=qemu-aarch64", "names no toolchain"), ("zig-a64= ", "empty")]
        {
            let e = format!("{:#}", apply_runner(&mut specs, bad).unwrap_err());
            assert!(e.contains(says), "{bad}: {e}");
        }
        let e = parse_config("[[toolchains]]\nname = \"a\"\ncc = \"gcc\"\nrunner = \"\"\n").unwrap_err();
        assert!(format!("{e:#}").contains("the runner is empty"), "{e:#}");
    }

    #[test]
    fn malformed_toolchains_are_refused_with_a_reason() {
        for (arg, why) in [
            ("gcc", "NAME=COMMAND"),
            ("=gcc", "1 to 64"),
            ("a b=gcc", "may only contain"),
            ("x=", "empty"),
            ("x=gcc 'unclosed", "unclosed quote"),
        ] {
            let e = format!("{:#}", ToolchainSpec::parse_cli(arg).unwrap_err());
            assert!(e.contains(why), "{arg}: {e}");
        }
    }

    #[test]
    fn quotes_group_words() {
        assert_eq!(split_words(r#"gcc -DX="a b" 'c d' e\ f"#).unwrap(), ["gcc", "-DX=a b", "c d", "e f"]);
        assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
        assert_eq!(split_words("a ''").unwrap(), ["a", ""]);
    }

    #[test]
    fn config_files_carry_flags_and_overrides() {
        let specs = parse_config(
            r#"
            [[toolchains]]
            name = "musl-gcc"
            cc = "musl-gcc"
            [[toolchains]]
            name = "zig"
            cc = "python3 -m ziglang cc -target x86_64-linux-musl"
            flags = "-O3 -fno-builtin"
            version = "0.16.0"
            libc = "musl 1.2.5 (zig)"
            "#,
        )
        .unwrap()
        .toolchains;
        assert_eq!(specs[0].flags, ["-O2"]);
        assert_eq!(specs[1].command[..3], ["python3", "-m", "ziglang"]);
        assert_eq!(specs[1].flags, ["-O3", "-fno-builtin"]);
        assert_eq!(specs[1].version.as_deref(), Some("0.16.0"));
        let e = format!("{:#}", parse_config("[[toolchains]]\nname='a'\ncc='gcc'\ncolour=1").unwrap_err());
        assert!(e.contains("unknown field"), "{e}");
    }

    #[test]
    fn the_version_axis_is_read_from_the_config_and_the_command_line() {
        let mut specs = parse_config(
            "[[toolchains]]\nname = 'musl-gcc'\ncc = 'musl-gcc'\nversion_from = 'compiler'\n\
             [[toolchains]]\nname = 'gcc'\ncc = 'gcc'\n",
        )
        .unwrap()
        .toolchains;
        assert_eq!(specs[0].version_from, Some(VersionFrom::Compiler));
        assert_eq!(specs[1].version_from, None, "left to detection");
        apply_version_from(&mut specs, "gcc=libc").unwrap();
        assert_eq!(specs[1].version_from, Some(VersionFrom::Libc));
        for (arg, why) in [("gcc", "NAME=compiler"), ("gcc=kernel", "neither"), ("clang=libc", "names no toolchain")] {
            let e = format!("{:#}", apply_version_from(&mut specs, arg).unwrap_err());
            assert!(e.contains(why), "{arg}: {e}");
        }
        let e = format!("{:#}", parse_config("[[toolchains]]\nname='a'\ncc='gcc'\nversion_from='os'").unwrap_err());
        assert!(e.contains("unknown variant"), "{e}");
    }

    #[test]
    fn sizes_and_durations_parse_with_units() {
        assert_eq!(parse_size("64K").unwrap(), 65536);
        assert_eq!(parse_size("4MiB").unwrap(), 4 << 20);
        assert_eq!(parse_size("5k").unwrap(), 5000);
        assert_eq!(parse_size("80000").unwrap(), 80000);
        assert!(parse_size("0").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("lots").is_err());
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
