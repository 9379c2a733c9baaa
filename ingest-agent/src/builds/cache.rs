//! The build cache: workload binaries built per toolchain, keyed by (toolchain fingerprint, source
//! hash) and kept between runs.

use crate::builds::contract_build::{self, LeftOut};
use crate::builds::error::BuildError;
use crate::builds::sources::{HARNESS, SQLITE_C_GZ, SQLITE_DEFINES, SQLITE_H_GZ, SQLITE_RECORDS};
use crate::builds::toolchain::DetectedToolchain;
use crate::builds::workloads::{Source, Workload};
use crate::builds::{contract_gaps, contracts, shapes};
use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Workload binaries built per toolchain, kept between runs. Several threads may build with one
/// cache at once: each build writes under a name of its own, and SQLite is compiled by one at a
/// time, so the others find the object it leaves.
pub struct BuildCache {
    dir: PathBuf,
    sqlite: Mutex<()>,
}

/// Tells apart the temporary files of builds running at once in one process.
static BUILDS: AtomicU64 = AtomicU64::new(0);

/// A temporary name in `dir` for the file `stem` + `extension`, unique to this build (a compiler
/// may read the kind of output from the extension, so it is kept).
fn temporary(dir: &Path, stem: &str, extension: &str) -> PathBuf {
    let nth = BUILDS.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{stem}.{}.{nth}{extension}", std::process::id()))
}

impl BuildCache {
    pub fn new(dir: PathBuf) -> BuildCache {
        BuildCache { dir, sqlite: Mutex::new(()) }
    }

    /// Whether `w` built with `tc` is in the cache, so [`BuildCache::binary`] compiles nothing. A
    /// workload built by its own command is never: the command decides what to rebuild.
    pub fn cached(&self, tc: &DetectedToolchain, w: &Workload) -> bool {
        !matches!(w.source, Source::Command(_)) && self.path(tc, w).is_file()
    }

    /// Where the binary of `w` built with `tc` goes.
    pub fn path(&self, tc: &DetectedToolchain, w: &Workload) -> PathBuf {
        self.dir.join(&tc.fingerprint[..16]).join(format!("{}-{}", w.build_name(), key(w)))
    }

    /// The binary of `w` built with `tc`, compiling it only when no identical build is cached. A
    /// probe whose function's code this libc could not compile has none: its error is what the
    /// compiler said of that code, and every other probe runs.
    pub fn binary(&self, tc: &DetectedToolchain, w: &Workload) -> Result<PathBuf, BuildError> {
        let bin = self.shared_binary(tc, w)?;
        self.own_binary(tc, w, bin)
    }

    /// The binary `w` shares with the workloads built into it (the probes share the catalogue's),
    /// compiling it only when no identical build is cached.
    pub fn shared_binary(&self, tc: &DetectedToolchain, w: &Workload) -> Result<PathBuf, BuildError> {
        let (bin, key) = (self.path(tc, w), key(w));
        let tc_dir = self.dir.join(&tc.fingerprint[..16]);
        if let Source::Command(c) = &w.source {
            std::fs::create_dir_all(&tc_dir)
                .with_context(|| format!("cannot create build directory {}", tc_dir.display()))?;
            return c.build(tc, &bin).map(|()| bin);
        }
        if bin.is_file() {
            return Ok(bin);
        }
        let src_dir = tc_dir.join(format!("src-{}-{key}", w.build_name()));
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
                let stub = contract_gaps::builtin_stub(tc, &src_dir, &w.name);
                sources.push(write(&src_dir, ("main.c", stub.as_deref().unwrap_or(main)))?);
            }
            Source::Sqlite { main, headers } => {
                write(&src_dir, SQLITE_RECORDS)?;
                for header in *headers {
                    write(&src_dir, *header)?;
                }
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
            Source::Contract => {
                for file in contracts::FILES {
                    let path = write(&src_dir, *file)?;
                    if file.0.ends_with(".c") {
                        sources.push(path);
                    }
                }
                extra.extend(contracts::CFLAGS.iter().map(|f| f.to_string()));
                extra.extend(contract_gaps::defines(tc, &src_dir));
            }
            Source::Shape => {
                for file in shapes::FILES {
                    let path = write(&src_dir, *file)?;
                    if file.0.ends_with(".c") {
                        sources.push(path);
                    }
                }
                extra.extend(contracts::CFLAGS.iter().map(|f| f.to_string()));
                extra.extend(contract_gaps::defines(tc, &src_dir));
            }
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
        let tmp = temporary(&tc_dir, &format!("{}-{key}", w.build_name()), "");
        let compiled = match &w.source {
            Source::Contract => contract_build::build(tc, &sources, &src_dir, &extra, &tmp).map(Some),
            _ => tc.compile(&sources, &src_dir, &extra, &tmp).map(|()| None),
        };
        let left_out = compiled.map_err(|e| match &w.source {
            Source::Configured { root, .. } => e.relative_to(&src_dir).relative_to(root),
            _ => e.relative_to(&src_dir),
        })?;
        // What the catalogue left out is kept before the binary appears, so that whoever finds
        // the binary finds it too.
        if let Some(left_out) = left_out {
            let list = temporary(&tc_dir, &format!("{}-{key}", w.build_name()), ".left-out.json");
            std::fs::write(&list, serde_json::to_vec(&left_out).context("cannot write what was left out")?)?;
            std::fs::rename(&list, left_out_path(&bin))?;
        }
        std::fs::rename(&tmp, &bin)?;
        Ok(bin)
    }

    /// `bin`, the binary `w` shares (see [`BuildCache::shared_binary`]), unless `w` is a probe whose
    /// function's code this libc could not compile: then what the compiler said of that code.
    pub fn own_binary(&self, tc: &DetectedToolchain, w: &Workload, bin: PathBuf) -> Result<PathBuf, BuildError> {
        let Some(function) = w.contract.as_ref().map(|c| &c.function).filter(|_| w.is_probe()) else {
            return Ok(bin);
        };
        // A catalogue built before the list was kept left nothing out.
        let left_out: Vec<LeftOut> = match std::fs::read(left_out_path(&bin)) {
            Ok(bytes) => serde_json::from_slice(&bytes).context("cannot read what the catalogue left out")?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        match left_out.iter().find(|l| l.function == *function) {
            Some(l) => Err(BuildError::Compiler(l.error(&tc.spec.name))),
            None => Ok(bin),
        }
    }

    /// SQLite compiled once per toolchain and shared by every SQLite workload.
    fn sqlite_object(&self, tc: &DetectedToolchain, tc_dir: &Path, src_dir: &Path) -> Result<PathBuf, BuildError> {
        let key = &hex::encode(Sha256::digest(SQLITE_C_GZ))[..16];
        let obj = tc_dir.join(format!("sqlite3-{key}.o"));
        write(src_dir, ("sqlite3.h", &gunzip(SQLITE_H_GZ)?))?;
        let _one_at_a_time = self.sqlite.lock().unwrap_or_else(|e| e.into_inner());
        if obj.is_file() {
            return Ok(obj);
        }
        let c = write(src_dir, ("sqlite3.c", &gunzip(SQLITE_C_GZ)?))?;
        let tmp = temporary(tc_dir, &format!("sqlite3-{key}"), ".o");
        let mut extra: Vec<String> = SQLITE_DEFINES.iter().map(|d| d.to_string()).collect();
        extra.push("-c".into());
        tc.compile(&[c], src_dir, &extra, &tmp).map_err(|e| e.relative_to(src_dir))?;
        std::fs::rename(&tmp, &obj)?;
        Ok(obj)
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

/// Where the functions a catalogue's binary `bin` left out are listed, each with its error.
fn left_out_path(bin: &Path) -> PathBuf {
    let mut name = bin.as_os_str().to_owned();
    name.push(".left-out.json");
    PathBuf::from(name)
}

/// The part of a binary's name that changes with its sources.
fn key(w: &Workload) -> String {
    w.build_key()["sha256:".len()..][..16].to_string()
}
