//! Runs and bisections waiting for delivery, kept on disk so none is lost: each written to a
//! temporary file, fsynced and renamed into place; refused ones move to `rejected/` beside the
//! server's message. Bisections wait in `bisections/` under the runs' spool, exposure scans in
//! `exposures/`, found probes in `found-probes/`.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use slopewatch_core::bisection::BisectionSubmission;
use slopewatch_core::exposure::ExposureSubmission;
use slopewatch_core::wire::{FoundProbes, RunSubmission};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One folder of records waiting for delivery, all of one kind.
pub struct Spool {
    dir: PathBuf,
    holds: Holds,
}

/// A bisection waiting for delivery, with the regression it is recorded on: the spool's own file
/// format, not the server's.
#[derive(Serialize, Deserialize)]
pub struct SpooledBisection {
    pub regression: i64,
    pub bisection: BisectionSubmission,
}

impl SpooledBisection {
    /// Reads one back from its file's bytes.
    pub fn read(bytes: &[u8]) -> serde_json::Result<SpooledBisection> {
        serde_json::from_slice(bytes)
    }
}

/// What a spool holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// Runs, as `POST /api/v1/runs` takes them.
    Runs,
    /// Bisections, each with the regression it is recorded on.
    Bisections,
    /// Exposure scans, as `POST /api/v1/exposures` takes them.
    Exposures,
    /// Found probes, as `POST /api/v1/found-probes` takes them.
    FoundProbes,
}

impl Spool {
    /// The spool of runs in `dir`.
    pub fn new(dir: PathBuf) -> Spool {
        Spool { dir, holds: Holds::Runs }
    }

    /// The spool of bisections, under this one.
    pub fn bisections(&self) -> Spool {
        Spool { dir: self.dir.join("bisections"), holds: Holds::Bisections }
    }

    /// The spool of exposure scans, under this one.
    pub fn exposures(&self) -> Spool {
        Spool { dir: self.dir.join("exposures"), holds: Holds::Exposures }
    }

    /// The spool of found probes, under this one.
    pub fn found_probes(&self) -> Spool {
        Spool { dir: self.dir.join("found-probes"), holds: Holds::FoundProbes }
    }

    pub fn holds(&self) -> Holds {
        self.holds
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Saves a run durably and returns its path; saving the same run again replaces it.
    pub fn save(&self, run: &RunSubmission) -> Result<PathBuf> {
        let body = serde_json::to_vec_pretty(run)?;
        let path = self.dir.join(format!("{}.json", run.run_id));
        write_durably(&self.dir, &path, &body)?;
        Ok(path)
    }

    /// Saves a bisection durably as `ID.json` and returns its path.
    pub fn save_bisection(&self, spooled: &SpooledBisection) -> Result<PathBuf> {
        let body = serde_json::to_vec_pretty(spooled)?;
        let path = self.dir.join(format!("{}.json", spooled.bisection.bisection_id));
        write_durably(&self.dir, &path, &body)?;
        Ok(path)
    }

    /// Saves an exposure scan durably as `ID.json` and returns its path.
    pub fn save_exposure(&self, scan: &ExposureSubmission) -> Result<PathBuf> {
        let body = serde_json::to_vec_pretty(scan)?;
        let path = self.dir.join(format!("{}.json", scan.scan_id));
        write_durably(&self.dir, &path, &body)?;
        Ok(path)
    }

    /// Saves found probes durably under a name of their own and returns the path.
    pub fn save_found_probes(&self, found: &FoundProbes) -> Result<PathBuf> {
        let body = serde_json::to_vec_pretty(found)?;
        let path = self.dir.join(format!("{}.json", uuid::Uuid::new_v4()));
        write_durably(&self.dir, &path, &body)?;
        Ok(path)
    }

    /// What waits, oldest first.
    pub fn pending(&self) -> Result<Vec<PathBuf>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(e).with_context(|| format!("cannot read spool {}", self.dir.display())),
        };
        let mut runs: Vec<(std::time::SystemTime, PathBuf)> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
            .map(|p| (p.metadata().and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH), p))
            .collect();
        runs.sort();
        Ok(runs.into_iter().map(|(_, p)| p).collect())
    }

    pub fn remove(&self, path: &Path) -> Result<()> {
        std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))
    }

    /// Moves a refused run to `rejected/` with the reason next to it; returns its new path.
    pub fn reject(&self, path: &Path, reason: &str) -> Result<PathBuf> {
        let dir = self.dir.join("rejected");
        std::fs::create_dir_all(&dir)?;
        let name = path.file_name().context("spooled run without a file name")?;
        let dest = dir.join(name);
        write_durably(&dir, &dest.with_extension("error.txt"), format!("{reason}\n").as_bytes())?;
        std::fs::rename(path, &dest)
            .with_context(|| format!("cannot move {} to {}", path.display(), dest.display()))?;
        Ok(dest)
    }
}

fn write_durably(dir: &Path, path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create spool directory {}", dir.display()))?;
    let write = || -> std::io::Result<()> {
        // A failed write drops the temporary file, so a full disk leaves no half-written run behind.
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(bytes)?;
        tmp.as_file().sync_all()?;
        tmp.persist(path).map_err(|e| e.error)?;
        // The rename is durable only once the directory itself is synced.
        std::fs::File::open(dir)?.sync_all()
    };
    write().with_context(|| format!("cannot write {}", path.display()))
}
