//! The workloads the agent ships (C sources compiled in), those a team adds with `--workload-file`
//! or `[[workloads]]` in its config, and the per-toolchain build cache keyed by (toolchain
//! fingerprint, source hash).

use crate::config::WorkloadEntry;
use crate::toolchain::{CompileError, DetectedToolchain};
use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use slopewatch_core::wire::SizeUnit;
use std::io::Read;
use std::path::{Path, PathBuf};

const HARNESS: (&str, &str) = ("slopewatch.h", include_str!("../c/slopewatch.h"));
const TEXT: (&str, &str) = ("text.h", include_str!("../c/text.h"));
const SQLITE_RECORDS: (&str, &str) = ("sqlite_records.h", include_str!("../c/sqlite_records.h"));
const SQLITE_C_GZ: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sqlite3.c.gz"));
const SQLITE_H_GZ: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sqlite3.h.gz"));

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// The libc string-family workloads: name, source. Each is named after the one function it calls.
const STRING_WORKLOADS: &[(&str, &str)] = &[
    ("strchr", include_str!("../c/strchr.c")),
    ("strchrnul", include_str!("../c/strchrnul.c")),
    ("strspn", include_str!("../c/strspn.c")),
    ("strcspn", include_str!("../c/strcspn.c")),
    ("strpbrk", include_str!("../c/strpbrk.c")),
    ("strstr", include_str!("../c/strstr.c")),
    ("memchr", include_str!("../c/memchr.c")),
    ("strtol", include_str!("../c/strtol.c")),
    ("strtod", include_str!("../c/strtod.c")),
    ("sscanf", include_str!("../c/sscanf.c")),
];

const SQLITE_WORKLOADS: &[(&str, &str)] = &[
    ("sqlite-insert", include_str!("../c/sqlite_insert.c")),
    ("sqlite-json-each", include_str!("../c/sqlite_json_each.c")),
];

/// Defines SQLite is built with: no threads or extension loading, so it links with any libc alone.
const SQLITE_DEFINES: &[&str] =
    &["-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION", "-DSQLITE_DEFAULT_MEMSTATUS=0"];

#[derive(Debug, Clone, PartialEq)]
enum Source {
    Builtin {
        main: &'static str,
        headers: Vec<(&'static str, &'static str)>,
    },
    Sqlite {
        main: &'static str,
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
    /// team's (see [`crate::command`]).
    Command(crate::command::CommandWorkload),
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
    source: Source,
}

impl Workload {
    /// A digest of everything compiled into the workload, so a cached binary is reused only for
    /// identical sources.
    pub fn source_hash(&self) -> String {
        let mut h = Sha256::new();
        h.update(HARNESS.1);
        match &self.source {
            Source::Builtin { main, headers } => {
                h.update(main);
                headers.iter().for_each(|(_, text)| h.update(text));
            }
            Source::Sqlite { main } => {
                h.update(main);
                h.update(SQLITE_RECORDS.1);
                h.update(SQLITE_C_GZ);
                SQLITE_DEFINES.iter().for_each(|d| h.update(d));
            }
            Source::Custom { text, libs, .. } => {
                h.update(text);
                libs.iter().for_each(|l| h.update(l));
            }
            Source::Configured { hash, .. } => return hash.clone(),
            Source::Command(c) => return c.hash.clone(),
        }
        format!("sha256:{}", hex::encode(h.finalize()))
    }

    /// The program a command workload runs, when it is one.
    pub fn command(&self) -> Option<&crate::command::CommandWorkload> {
        match &self.source {
            Source::Command(c) => Some(c),
            _ => None,
        }
    }
}

/// Every built-in workload, in the order they run.
pub fn builtin() -> Vec<Workload> {
    let strings = STRING_WORKLOADS.iter().map(|(name, main)| Workload {
        name: name.to_string(),
        unit: SizeUnit::Bytes,
        start: 64 * KIB,
        max: 4 * MIB,
        source: Source::Builtin { main, headers: vec![TEXT] },
    });
    let sqlite = SQLITE_WORKLOADS.iter().map(|(name, main)| Workload {
        name: name.to_string(),
        unit: SizeUnit::Records,
        start: 5_000,
        max: 80_000,
        source: Source::Sqlite { main },
    });
    strings.chain(sqlite).collect()
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
                "libs" => libs.extend(value.split(',').map(str::to_string)),
                _ => bail!("{}: unknown key (name, unit, start, max, libs)", ctx()),
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
    let (unit, start, max) = sizes_of(e)?;
    if e.command.is_some() || e.build.is_some() {
        let c = crate::command::CommandWorkload::configure(e, root)?;
        return Ok(Workload { name: e.name.clone(), unit, start, max, source: Source::Command(c) });
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
    Ok(Workload { name: e.name.clone(), unit, start, max, source })
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

/// File name endings of what C code includes besides `.h`: the headers hashed beside a source.
const HEADER_ENDINGS: &[&str] = &[".h", ".hh", ".hpp", ".hxx", ".inc", ".def"];

/// The source hash of a configured workload: the harness, every source, the flags and libs, every
/// file under the `include` directories (whatever its name: `#include "table.inc"` is C too), and
/// the headers beside each source (where `#include "x.h"` looks first). Each file counts with its
/// path relative to the config file's directory, so a checkout elsewhere hashes the same.
///
/// This is a superset of what the compiler reads, on purpose: a file counted needlessly costs a
/// rebuild, one missed would let the cache serve a stale binary. The compiler's own dependency
/// list (`-MD`) is exact but only known after compiling, while the cache key is needed before;
/// and it holds the system headers of each toolchain, which would make the hash the server shows
/// for one source differ between toolchains. A header reached some other way (`../elsewhere/x.h`)
/// is not counted: `cflags` refuses `-I` and its kin so that include directories go in `include`.
fn configured_hash(
    root: &Path,
    sources: &[PathBuf],
    include: &[PathBuf],
    cflags: &[String],
    libs: &[String],
) -> Result<String> {
    let mut others = Vec::new();
    for dir in include {
        others.extend(walk_files(dir)?);
    }
    for dir in sources.iter().filter_map(|s| s.parent()) {
        for f in std::fs::read_dir(dir).with_context(|| format!("cannot read directory {}", dir.display()))? {
            let path = f?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_file() && HEADER_ENDINGS.iter().any(|e| name.ends_with(e)) {
                others.push(path);
            }
        }
    }
    others.sort();
    others.dedup();
    let mut h = Sha256::new();
    h.update(HARNESS.1);
    for part in [cflags, libs] {
        for word in part {
            h.update(word.as_bytes());
            h.update([0]);
        }
        h.update([1]);
    }
    for f in sources.iter().chain(&others) {
        let bytes = std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?;
        h.update(f.strip_prefix(root).unwrap_or(f).to_string_lossy().as_bytes());
        h.update([0]);
        h.update(Sha256::digest(bytes));
    }
    Ok(format!("sha256:{}", hex::encode(h.finalize())))
}

/// Every regular file under `dir`, at any depth, sorted.
pub(crate) fn walk_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read directory {}", dir.display()))?;
    for e in entries {
        let path = e?.path();
        if path.is_dir() {
            out.extend(walk_files(&path)?);
        } else if path.is_file() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Picks the workloads named in `--workloads` (all when `None`), in catalogue order.
pub fn select(all: Vec<Workload>, names: Option<&[String]>) -> Result<Vec<Workload>> {
    let Some(names) = names else { return Ok(all) };
    for n in names {
        if !all.iter().any(|w| &w.name == n) {
            let known: Vec<&str> = all.iter().map(|w| w.name.as_str()).collect();
            bail!("unknown workload {n:?}; known: {}", known.join(", "));
        }
    }
    Ok(all.into_iter().filter(|w| names.contains(&w.name)).collect())
}

/// Workload binaries built per toolchain, kept between runs.
pub struct BuildCache {
    dir: PathBuf,
}

impl BuildCache {
    pub fn new(dir: PathBuf) -> BuildCache {
        BuildCache { dir }
    }

    /// The binary of `w` built with `tc`, compiling it only when no identical build is cached.
    pub fn binary(&self, tc: &DetectedToolchain, w: &Workload) -> Result<PathBuf, BuildError> {
        let hash = w.source_hash();
        let key = &hash["sha256:".len()..][..16];
        let tc_dir = self.dir.join(&tc.fingerprint[..16]);
        let bin = tc_dir.join(format!("{}-{key}", w.name));
        if let Source::Command(c) = &w.source {
            std::fs::create_dir_all(&tc_dir)
                .with_context(|| format!("cannot create build directory {}", tc_dir.display()))?;
            return c.build(tc, &bin).map(|()| bin);
        }
        if bin.is_file() {
            return Ok(bin);
        }
        let src_dir = tc_dir.join(format!("src-{}-{key}", w.name));
        std::fs::create_dir_all(&src_dir)
            .with_context(|| format!("cannot create build directory {}", src_dir.display()))?;
        write(&src_dir, HARNESS)?;
        let mut sources = Vec::new();
        let mut extra = Vec::new();
        match &w.source {
            Source::Builtin { main, headers } => {
                for h in headers {
                    write(&src_dir, *h)?;
                }
                sources.push(write(&src_dir, ("main.c", main))?);
            }
            Source::Sqlite { main } => {
                write(&src_dir, SQLITE_RECORDS)?;
                sources.push(write(&src_dir, ("main.c", main))?);
                sources.push(self.sqlite_object(tc, &tc_dir, &src_dir)?);
                extra.push("-lm".to_string());
            }
            Source::Custom { path, text, libs } => {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("custom.c");
                sources.push(write(&src_dir, (name, text))?);
                extra.extend(libs.iter().cloned());
            }
            Source::Command(_) => unreachable!("built above"),
            Source::Configured { sources: files, include, cflags, libs, .. } => {
                sources.extend(files.iter().cloned());
                extra.extend(cflags.iter().cloned());
                for dir in include {
                    extra.push("-I".into());
                    extra.push(dir.display().to_string());
                }
                extra.extend(libs.iter().cloned());
            }
        }
        // Build under a temporary name so an interrupted build never leaves a binary to reuse.
        let tmp = tc_dir.join(format!(".{}-{key}.{}", w.name, std::process::id()));
        tc.compile(&sources, &src_dir, &extra, &tmp).map_err(|e| match &w.source {
            Source::Configured { root, .. } => e.relative_to(&src_dir).relative_to(root),
            _ => e.relative_to(&src_dir),
        })?;
        std::fs::rename(&tmp, &bin)?;
        Ok(bin)
    }

    /// SQLite compiled once per toolchain and shared by both SQLite workloads.
    fn sqlite_object(&self, tc: &DetectedToolchain, tc_dir: &Path, src_dir: &Path) -> Result<PathBuf, BuildError> {
        let key = &hex::encode(Sha256::digest(SQLITE_C_GZ))[..16];
        let obj = tc_dir.join(format!("sqlite3-{key}.o"));
        write(src_dir, ("sqlite3.h", &gunzip(SQLITE_H_GZ)?))?;
        if obj.is_file() {
            return Ok(obj);
        }
        let c = write(src_dir, ("sqlite3.c", &gunzip(SQLITE_C_GZ)?))?;
        let tmp = tc_dir.join(format!(".sqlite3-{key}.{}.o", std::process::id()));
        let mut extra: Vec<String> = SQLITE_DEFINES.iter().map(|d| d.to_string()).collect();
        extra.push("-c".into());
        tc.compile(&[c], src_dir, &extra, &tmp).map_err(|e| e.relative_to(src_dir))?;
        std::fs::rename(&tmp, &obj)?;
        Ok(obj)
    }
}

/// Why a workload has no binary.
#[derive(Debug)]
pub enum BuildError {
    /// The toolchain could not build it: a failure of the toolchain, reported with the run.
    Compiler(CompileError),
    /// The build cache could not be used (a full disk, permissions): the host's problem, not the
    /// toolchain's, so it is not reported as the workload's failure.
    Cache(anyhow::Error),
}

impl From<CompileError> for BuildError {
    fn from(e: CompileError) -> BuildError {
        BuildError::Compiler(e)
    }
}

impl From<anyhow::Error> for BuildError {
    fn from(e: anyhow::Error) -> BuildError {
        BuildError::Cache(e)
    }
}

impl From<std::io::Error> for BuildError {
    fn from(e: std::io::Error) -> BuildError {
        BuildError::Cache(e.into())
    }
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Compiler(e) => e.fmt(f),
            BuildError::Cache(e) => write!(f, "{e:#}"),
        }
    }
}

fn gunzip(bytes: &[u8]) -> Result<String> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes).read_to_string(&mut text)?;
    Ok(text)
}

fn write(dir: &Path, (name, text): (&str, &str)) -> Result<PathBuf> {
    let path = dir.join(name);
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

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
