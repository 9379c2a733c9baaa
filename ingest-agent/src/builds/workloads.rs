//! The workloads: those the agent ships (C sources compiled in) and those a team adds with
//! `--workload-file` or `[[workloads]]` in its config, each with its sizes and source hash.

use crate::builds::command::CommandWorkload;
use crate::builds::contracts;
use crate::builds::hash::configured_hash;
use crate::builds::shapes;
use crate::builds::sources::{
    HARNESS, HASHED_HARNESS, SQLITE_C_GZ, SQLITE_DEFINES, SQLITE_RECORDS, SQLITE_WORKLOADS, STRING_WORKLOADS, TEXT,
};
use crate::config::parse_class;
use crate::config::WorkloadEntry;
use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use slopewatch_core::wire::{Contract, SizeUnit, CONTRACT_PREFIX};
use std::path::{Path, PathBuf};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// What a workload is built from: what the build cache compiles.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Source {
    Builtin {
        main: &'static str,
        headers: Vec<(&'static str, &'static str)>,
    },
    Sqlite {
        main: &'static str,
        /// Headers beside `sqlite_records.h` (hashed after it, so a workload with none keeps
        /// the hash it always had).
        headers: &'static [(&'static str, &'static str)],
    },
    Custom {
        path: PathBuf,
        text: String,
        libs: Vec<String>,
    },
    /// A `[[workloads]]` entry: files compiled where they are, paths absolute.
    Configured {
        sources: Vec<PathBuf>,
        include: Vec<PathBuf>,
        cflags: Vec<String>,
        libs: Vec<String>,
        /// The config file's directory, cut from the compiler's messages.
        root: PathBuf,
        /// Read once, when the config is loaded: see [`configured_hash`].
        hash: String,
    },
    /// A `[[workloads]]` entry with a `command`: any program, built by a shell command of the
    /// team's (see [`crate::builds::command`]).
    Command(CommandWorkload),
    /// A probe of the contract catalogue: one binary holds them all, and `SLOPEWATCH_PROBE`
    /// picks the workload's (see [`crate::builds::contracts`]).
    Contract,
    /// A probe a search found: its input built from its shape by the generators of
    /// `c/contracts/shapes.h`, one binary for them all (see [`crate::builds::shapes`]).
    Shape,
}

/// One workload: what it is called, how its size is counted, the default sizes it sweeps.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub name: String,
    pub unit: SizeUnit,
    /// The first size tried (sizes double from here).
    pub start: u64,
    /// The largest size tried.
    pub max: u64,
    /// The class it may cost, judged instead of the slope limit: a probe's, or a configured
    /// workload's `expect`.
    pub contract: Option<Contract>,
    /// The size a team runs it at (`at`): the time there is predicted from the fit. The
    /// built-ins carry the article's scale, 4 MiB of text and 40,000 records.
    pub at: Option<u64>,
    pub(crate) source: Source,
}

impl Workload {
    /// A digest of what defines the measured work: every source compiled into the workload and
    /// the protocol it is written to ([`HASHED_HARNESS`]), not the harness's measuring code. The
    /// server tells a workload's source changes by it.
    pub fn source_hash(&self) -> String {
        let mut h = Sha256::new();
        h.update(HASHED_HARNESS);
        match &self.source {
            Source::Builtin { main, headers } => {
                h.update(main);
                headers.iter().for_each(|(_, text)| h.update(text));
            }
            Source::Sqlite { main, headers } => {
                h.update(main);
                h.update(SQLITE_RECORDS.1);
                h.update(SQLITE_C_GZ);
                SQLITE_DEFINES.iter().for_each(|d| h.update(d));
                headers.iter().for_each(|(_, text)| h.update(text));
            }
            Source::Custom { text, libs, .. } => {
                h.update(text);
                libs.iter().for_each(|l| h.update(l));
            }
            Source::Configured { hash, .. } => return hash.clone(),
            Source::Command(c) => return c.hash.clone(),
            Source::Contract => {
                contracts::FILES.iter().for_each(|(_, text)| h.update(text));
                contracts::CFLAGS.iter().for_each(|f| h.update(f));
            }
            Source::Shape => {
                shapes::FILES.iter().for_each(|(_, text)| h.update(text));
                contracts::CFLAGS.iter().for_each(|f| h.update(f));
            }
        }
        format!("sha256:{}", hex::encode(h.finalize()))
    }

    /// What a cached binary is reused for: the source hash and the harness compiled in, so that
    /// a changed harness rebuilds without changing the source hash. A command workload's build is
    /// its own and compiles no harness.
    pub fn build_key(&self) -> String {
        let hash = self.source_hash();
        if matches!(self.source, Source::Command(_)) {
            return hash;
        }
        let mut h = Sha256::new();
        h.update(hash.as_bytes());
        h.update(HARNESS.1);
        format!("sha256:{}", hex::encode(h.finalize()))
    }

    /// Whether it is a probe: of the contract catalogue, or one a search found.
    pub fn is_probe(&self) -> bool {
        matches!(self.source, Source::Contract | Source::Shape)
    }

    /// What its binary is called in the build cache: the catalogue's probes share one, and the
    /// found probes another.
    pub(crate) fn build_name(&self) -> &str {
        match self.source {
            Source::Contract => "contracts",
            Source::Shape => "shapes",
            _ => &self.name,
        }
    }

    /// The program a command workload runs, when it is one.
    pub fn command(&self) -> Option<&CommandWorkload> {
        match &self.source {
            Source::Command(c) => Some(c),
            _ => None,
        }
    }
}

/// The size of interest of the SQLite built-ins: the article's 40,000 JSON records.
pub const SQLITE_AT: u64 = 40_000;

/// Every built-in workload, in the order they run.
pub fn builtin() -> Vec<Workload> {
    let strings = STRING_WORKLOADS.iter().map(|(name, main)| Workload {
        name: name.to_string(),
        unit: SizeUnit::Bytes,
        start: 64 * KIB,
        max: 4 * MIB,
        contract: None,
        at: Some(4 * MIB),
        source: Source::Builtin { main, headers: vec![TEXT] },
    });
    let sqlite = SQLITE_WORKLOADS.iter().map(|s| Workload {
        name: s.name.to_string(),
        unit: SizeUnit::Records,
        start: s.start,
        max: s.max,
        contract: None,
        at: Some(SQLITE_AT),
        source: Source::Sqlite { main: s.main, headers: s.headers },
    });
    strings.chain(sqlite).collect()
}

/// Every probe of the contract catalogue, in its order.
pub fn probes() -> Vec<Workload> {
    contracts::catalogue()
        .iter()
        .map(|p| Workload {
            name: p.name(),
            unit: p.unit,
            start: p.start,
            max: p.max,
            contract: Some(p.contract()),
            at: None,
            source: Source::Contract,
        })
        .collect()
}

/// The workload of a found probe's shape: `name` is `contract.FUNCTION.AXIS~SHAPE`, measured from
/// `start` to `max` bytes and held to `contract`, in the binary of [`shapes::FILES`].
pub fn found(name: String, contract: Contract, start: u64, max: u64) -> Workload {
    Workload { name, unit: SizeUnit::Bytes, start, max, contract: Some(contract), at: None, source: Source::Shape }
}

/// Reads a custom workload. Its settings come from `slopewatch:` lines anywhere in the file, e.g.
/// `// slopewatch: name=json-tokenize unit=bytes start=64K max=4M libs=-lm`.
pub fn load_custom(path: &Path) -> Result<Workload> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read workload file {}", path.display()))?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("custom").to_string();
    let mut w = Workload {
        name: stem,
        unit: SizeUnit::Bytes,
        start: 64 * KIB,
        max: 4 * MIB,
        contract: None,
        at: None,
        source: Source::Custom { path: path.to_path_buf(), text: String::new(), libs: vec![] },
    };
    let mut libs = Vec::new();
    for line in text.lines() {
        let Some((_, settings)) = line.split_once("slopewatch:") else {
            continue;
        };
        for setting in settings.split_whitespace() {
            let ctx = || format!("{}: setting {setting:?}", path.display());
            let Some((key, value)) = setting.split_once('=') else {
                bail!("{}: expected key=value", ctx());
            };
            match key {
                "name" => w.name = value.to_string(),
                "unit" => {
                    w.unit = SizeUnit::parse(value)
                        .with_context(|| format!("{}: unit must be bytes, records, items or iterations", ctx()))?
                }
                "start" => w.start = crate::config::parse_size(value).map_err(anyhow::Error::msg).with_context(ctx)?,
                "max" => w.max = crate::config::parse_size(value).map_err(anyhow::Error::msg).with_context(ctx)?,
                "at" => w.at = Some(crate::config::parse_size(value).map_err(anyhow::Error::msg).with_context(ctx)?),
                "libs" => libs.extend(value.split(',').map(str::to_string)),
                _ => bail!("{}: unknown key (name, unit, start, max, at, libs)", ctx()),
            }
        }
    }
    check_name(&w.name).with_context(|| path.display().to_string())?;
    if w.start > w.max {
        bail!("{}: start {} is larger than max {}", path.display(), w.start, w.max);
    }
    w.source = Source::Custom { path: path.to_path_buf(), text, libs };
    Ok(w)
}

/// Workload names become series names in URLs, so they are kept to a safe alphabet.
pub fn check_name(name: &str) -> Result<()> {
    if name.is_empty()
        || name.len() > 64
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        bail!("workload name {name:?} must be 1 to 64 letters, digits, '-', '_' or '.'");
    }
    Ok(())
}

/// Compile flags that would add an include directory behind the source hash's back.
const INCLUDE_FLAGS: &[&str] = &["-I", "-iquote", "-isystem", "-idirafter", "-include", "-imacros"];

/// Reads the `[[workloads]]` of the config file at `config`: paths are relative to its directory,
/// and every file and setting is checked, each error naming the file, the workload and the key.
pub fn configured(entries: &[WorkloadEntry], config: &Path) -> Result<Vec<Workload>> {
    let parent = config.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let root = parent
        .canonicalize()
        .with_context(|| format!("{}: cannot resolve the config file's directory", config.display()))?;
    let builtins: Vec<String> = builtin().into_iter().map(|w| w.name).collect();
    let mut out: Vec<Workload> = Vec::new();
    for e in entries {
        let w = configured_one(e, &root).with_context(|| format!("{}: workload {:?}", config.display(), e.name))?;
        if builtins.contains(&w.name) {
            bail!("{}: workload {:?}: name: a built-in workload has this name", config.display(), w.name);
        }
        if out.iter().any(|o| o.name == w.name) {
            bail!("{}: workload {:?}: name: given twice", config.display(), w.name);
        }
        out.push(w);
    }
    Ok(out)
}

fn configured_one(e: &WorkloadEntry, root: &Path) -> Result<Workload> {
    check_name(&e.name).context("name")?;
    if e.name.starts_with(CONTRACT_PREFIX) {
        bail!("name: {CONTRACT_PREFIX}… is kept for the probes of the contract catalogue");
    }
    let (unit, start, max) = sizes_of(e)?;
    let at = e.at.as_ref().map(|v| v.value().map_err(|e| anyhow::anyhow!("at: {e}"))).transpose()?;
    let contract = match &e.expect {
        Some(class) => Some(Contract::expecting(parse_class(class).map_err(|why| anyhow::anyhow!("expect: {why}"))?)),
        None => None,
    };
    if e.command.is_some() || e.build.is_some() {
        let c = CommandWorkload::configure(e, root)?;
        return Ok(Workload { name: e.name.clone(), unit, start, max, contract, at, source: Source::Command(c) });
    }
    if e.sources.is_empty() {
        bail!("sources: empty; list the C files to compile, or give `build` and `command` for a program");
    }
    let mut sources = Vec::new();
    for s in &e.sources {
        let path = root.join(s);
        if !path.is_file() {
            bail!("sources: {s:?} is not a file (looked for {})", path.display());
        }
        sources.push(path);
    }
    let mut include = Vec::new();
    for d in &e.include {
        let path = root.join(d);
        if !path.is_dir() {
            bail!("include: {d:?} is not a directory (looked for {})", path.display());
        }
        include.push(path);
    }
    let cflags = crate::config::split_words(e.cflags.as_deref().unwrap_or("")).context("cflags")?;
    if let Some(f) = cflags.iter().find(|f| INCLUDE_FLAGS.iter().any(|i| f.starts_with(i))) {
        bail!("cflags: {f:?}: give include directories in `include`, so the headers in them are hashed");
    }
    let hash = configured_hash(root, &sources, &include, &cflags, &e.libs)?;
    let source = Source::Configured { sources, include, cflags, libs: e.libs.clone(), root: root.to_path_buf(), hash };
    Ok(Workload { name: e.name.clone(), unit, start, max, contract, at, source })
}

/// A configured workload's unit and sweep, checked.
fn sizes_of(e: &WorkloadEntry) -> Result<(SizeUnit, u64, u64)> {
    let unit = match &e.unit {
        Some(u) => {
            SizeUnit::parse(u).with_context(|| format!("unit: {u:?} must be bytes, records, items or iterations"))?
        }
        None => SizeUnit::Bytes,
    };
    let size = |key: &str, v: &Option<crate::config::SizeSetting>, default: u64| match v {
        Some(v) => v.value().map_err(|e| anyhow::anyhow!("{key}: {e}")),
        None => Ok(default),
    };
    let (start, max) = (size("start", &e.start, 64 * KIB)?, size("max", &e.max, 4 * MIB)?);
    if start > max {
        bail!("start: {start} is larger than max {max}");
    }
    Ok((unit, start, max))
}

/// The group `--workloads` names for the workloads the agent ships (the loops), and the one for
/// the contract catalogue.
pub const GROUPS: [&str; 2] = ["builtin", "contract"];

/// Picks the workloads `--workloads` names (all when `None`), in catalogue order: a name, a glob
/// (`contract.str*`, `sqlite*`: `*` any run of characters, `?` one), or a group of [`GROUPS`].
/// A name or glob that picks nothing is an error that lists what there is.
pub fn select(all: Vec<Workload>, names: Option<&[String]>) -> Result<Vec<Workload>> {
    let Some(names) = names else { return Ok(all) };
    let builtins: Vec<String> = builtin().into_iter().map(|w| w.name).collect();
    let picks = |pattern: &str, w: &Workload| match pattern {
        "builtin" => builtins.contains(&w.name),
        "contract" => w.is_probe(),
        _ => glob_match(pattern, &w.name),
    };
    for n in names {
        if !all.iter().any(|w| picks(n, w)) {
            let probes = all.iter().filter(|w| w.is_probe()).count();
            let mut known: Vec<String> = all.iter().filter(|w| !w.is_probe()).map(|w| w.name.clone()).collect();
            if probes > 0 {
                known.push(format!("{CONTRACT_PREFIX}* ({probes} probes, see docs/contracts.md)"));
            }
            bail!("unknown workload {n:?}; known: {}; groups: {}", known.join(", "), GROUPS.join(", "));
        }
    }
    Ok(all.into_iter().filter(|w| names.iter().any(|n| picks(n, w))).collect())
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters and `?` one.
fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // The classic two-pointer match, backtracking to the last `*`.
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_workloads_are_the_ones_the_server_groups_as_built_in() {
        let names: Vec<String> = builtin().into_iter().map(|w| w.name).collect();
        assert_eq!(names, slopewatch_core::workloads::BUILTIN, "core's list follows the catalogue, in its order");
    }

    #[test]
    fn every_string_function_has_its_own_workload() {
        let names: Vec<String> = builtin().into_iter().map(|w| w.name).collect();
        for f in
            ["strchr", "strchrnul", "strspn", "strcspn", "strpbrk", "strstr", "memchr", "strtol", "strtod", "sscanf"]
        {
            assert!(names.contains(&f.to_string()), "{f}");
        }
        assert!(names.contains(&"sqlite-insert".to_string()));
        assert!(names.contains(&"sqlite-json-each".to_string()));
    }

    #[test]
    fn the_source_hash_covers_the_measured_work_and_the_build_key_the_harness_too() {
        let all = builtin();
        let strchr = all.iter().find(|w| w.name == "strchr").unwrap();
        // strchr's hash before the harness learnt other measures: its series continue.
        assert_eq!(strchr.source_hash(), "sha256:c10851717d276d102d0e1dca3dad283eae268e3b216293c5a4978633f0dacc46");
        assert_ne!(HARNESS.1, HASHED_HARNESS, "the harness compiled in measures more than the protocol's first");
        assert_ne!(strchr.build_key(), strchr.source_hash(), "a changed harness rebuilds");
    }

    #[test]
    fn the_first_sqlite_workloads_keep_their_sources_sizes_and_hash() {
        // The hash as it was before the other SQLite workloads came: their series continue.
        let before = |main: &str| {
            let mut h = Sha256::new();
            for part in [HASHED_HARNESS, main, SQLITE_RECORDS.1] {
                h.update(part);
            }
            h.update(SQLITE_C_GZ);
            SQLITE_DEFINES.iter().for_each(|d| h.update(d));
            format!("sha256:{}", hex::encode(h.finalize()))
        };
        let all = builtin();
        for (name, main) in [
            ("sqlite-insert", include_str!("../../c/sqlite_insert.c")),
            ("sqlite-json-each", include_str!("../../c/sqlite_json_each.c")),
        ] {
            let w = all.iter().find(|w| w.name == name).unwrap();
            assert_eq!((w.start, w.max), (5_000, 80_000), "{name}");
            assert_eq!(w.source_hash(), before(main), "{name}");
        }
        let spaced = all.iter().find(|w| w.name == "sqlite-json-each.spaced").unwrap();
        assert_ne!(
            spaced.source_hash(),
            before(include_str!("../../c/sqlite_json_each_spaced.c")),
            "its header counts"
        );
        for s in SQLITE_WORKLOADS {
            assert!(s.main.contains("sw_meta(\"sqlite_version\""), "{} records the SQLite version", s.name);
            assert!(s.start * 16 <= s.max, "{}: six sizes from the rise below the start", s.name);
        }
    }

    #[test]
    fn each_string_workload_calls_only_its_own_function_in_the_loop() {
        let others = [
            "strchr(",
            "strchrnul(",
            "strspn(",
            "strcspn(",
            "strpbrk(",
            "strstr(",
            "memchr(",
            "strlen(",
            "strtol(",
            "strtod(",
            "sscanf(",
        ];
        for (name, src) in STRING_WORKLOADS {
            let body = &src[src.find("long long sw_run").unwrap()..];
            for call in others {
                if call != format!("{name}(") {
                    assert!(!body.contains(call), "{name}'s loop calls {call}");
                }
            }
            assert!(body.contains(&format!("{name}(")), "{name}'s loop must call {name}");
        }
    }

    #[test]
    fn selecting_unknown_workloads_names_the_known_ones() {
        let e = select(builtin(), Some(&["strchr".into(), "strlenn".into()])).unwrap_err().to_string();
        assert!(e.contains("strlenn") && e.contains("sqlite-insert"), "{e}");
        let picked = select(builtin(), Some(&["sqlite-insert".into(), "strchr".into()])).unwrap();
        assert_eq!(picked.iter().map(|w| w.name.as_str()).collect::<Vec<_>>(), ["strchr", "sqlite-insert"]);
    }

    #[test]
    fn globs_and_groups_pick_workloads_in_catalogue_order() {
        let all = || builtin().into_iter().chain(probes()).collect::<Vec<_>>();
        let names = |picks: &[&str]| -> Vec<String> {
            let picks: Vec<String> = picks.iter().map(|s| s.to_string()).collect();
            select(all(), Some(&picks)).unwrap().into_iter().map(|w| w.name).collect()
        };
        assert_eq!(
            names(&["sqlite*"]),
            [
                "sqlite-insert",
                "sqlite-json-each",
                "sqlite-json-each.spaced",
                "sqlite-json-each.pretty",
                "sqlite-json-each.literals",
                "sqlite-json-extract.spaced",
                "sqlite-json-arrow.pretty",
                "sqlite-insert.spaced",
                "sqlite-like.long-text",
            ]
        );
        assert_eq!(names(&["sqlite-json-each*"]).len(), 4);
        assert_eq!(names(&["builtin"]).len(), builtin().len());
        assert_eq!(names(&["contract"]).len(), probes().len());
        let strchr = names(&["contract.strch?.*"]);
        assert!(strchr.contains(&"contract.strchr.remaining".to_string()), "{strchr:?}");
        assert!(strchr.iter().all(|n| n.starts_with("contract.strch")), "{strchr:?}");
        assert_eq!(names(&["strchr", "builtin"]).len(), builtin().len(), "each workload once");
        let e = select(all(), Some(&["contract.nosuch*".into()])).unwrap_err().to_string();
        assert!(e.contains("contract.* (") && e.contains("groups: builtin, contract"), "{e}");
        assert!(glob_match("a*b*c", "aXXbYc") && !glob_match("a*b", "ab_") && glob_match("*", ""));
    }

    #[test]
    fn custom_workload_settings_are_read_from_the_source() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tok.c");
        std::fs::write(&path, "// slopewatch: name=json-tok unit=records start=1k max=64k libs=-lm\nint main(){}\n")
            .unwrap();
        let w = load_custom(&path).unwrap();
        assert_eq!((w.name.as_str(), w.unit, w.start, w.max), ("json-tok", SizeUnit::Records, 1000, 64000));
        std::fs::write(&path, "// slopewatch: colour=blue\n").unwrap();
        assert!(load_custom(&path).unwrap_err().to_string().contains("unknown key"));
        std::fs::write(&path, "// slopewatch: start=4M max=1M\n").unwrap();
        assert!(load_custom(&path).unwrap_err().to_string().contains("larger than max"));
    }
}
