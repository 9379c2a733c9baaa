//! The workloads the agent ships (C sources compiled in) and those a team adds with
//! `--workload-file`, and the per-toolchain build cache keyed by (toolchain fingerprint, source hash).

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
    Builtin { main: &'static str, headers: Vec<(&'static str, &'static str)> },
    Sqlite { main: &'static str },
    Custom { path: PathBuf, text: String, libs: Vec<String> },
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
        }
        format!("sha256:{}", hex::encode(h.finalize()))
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
    if w.name.is_empty()
        || w.name.len() > 64
        || !w.name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        bail!("{}: workload name {:?} may only contain letters, digits, '-', '_' and '.'", path.display(), w.name);
    }
    if w.start > w.max {
        bail!("{}: start {} is larger than max {}", path.display(), w.start, w.max);
    }
    w.source = Source::Custom { path: path.to_path_buf(), text, libs };
    Ok(w)
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
        }
        // Build under a temporary name so an interrupted build never leaves a binary to reuse.
        let tmp = tc_dir.join(format!(".{}-{key}.{}", w.name, std::process::id()));
        tc.compile(&sources, &src_dir, &extra, &tmp).map_err(|e| e.relative_to(&src_dir))?;
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
