//! `import`: turns results another harness already measured (Google Benchmark JSON, criterion's
//! output directory, a CSV of samples) into a run, sent or written like a measured one.
//!
//! Each format's parser reads its files into `ImportedFamily` values (samples by size, and where
//! in the file the family was first seen); the rules every format shares (sample and size bounds,
//! names, enough sizes for a slope) are checked here, naming the file and the line or key at
//! fault.

mod criterion;
mod csv;
mod google_benchmark;

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use slopewatch_core::wire::{self, Measurement, SizeUnit, WorkloadRun};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use time::OffsetDateTime;

/// The harnesses whose results can be imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Google Benchmark's JSON (`--benchmark_format=json` or `--benchmark_out`).
    GoogleBenchmark,
    /// criterion's output directory (`target/criterion`, or one group's directory in it).
    Criterion,
    /// A CSV file with the header `workload,size,ns` and one sample per row.
    Csv,
}

impl Format {
    /// The name `--format` takes, also recorded in each workload's `import.format`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::GoogleBenchmark => "google-benchmark",
            Format::Criterion => "criterion",
            Format::Csv => "csv",
        }
    }
}

/// The workloads read from a set of files, ready for a run.
#[derive(Debug)]
pub struct Imported {
    pub workloads: Vec<WorkloadRun>,
    /// What was left out and why, one line per file and reason.
    pub warnings: Vec<String>,
    /// When the harness says it started (Google Benchmark's `context.date`), the earliest.
    pub started_at: Option<OffsetDateTime>,
}

/// Reads `files` in `format`; the first problem is an error naming the file and the line or key.
pub fn read(format: Format, files: &[PathBuf], unit: SizeUnit) -> Result<Imported> {
    let mut families: Vec<ImportedFamily> = Vec::new();
    let mut warnings = Vec::new();
    let mut started_at: Option<OffsetDateTime> = None;
    for path in files {
        let parsed = match format {
            Format::GoogleBenchmark => google_benchmark::parse(path, &read_text(path)?)?,
            Format::Criterion => criterion::parse(path)?,
            Format::Csv => csv::parse(path, &read_text(path)?)?,
        };
        warnings.extend(parsed.skipped.lines(path));
        if let Some(t) = parsed.started_at {
            started_at = Some(started_at.map_or(t, |s| s.min(t)));
        }
        for f in parsed.families {
            if let Some(first) = families.iter().find(|g| g.name == f.name) {
                bail!("{}: {} is also in {}; import them as separate runs", f.at, f.name, first.at);
            }
            families.push(f);
        }
    }
    if families.is_empty() {
        bail!("no workload with sizes in {}", list(files.iter().map(|p| p.display())));
    }
    let workloads = families.into_iter().map(|f| f.into_workload(format, unit)).collect::<Result<_>>()?;
    Ok(Imported { workloads, warnings, started_at })
}

fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// A place in an input, for messages: `results.json: benchmarks[12]`, `results.csv: line 7`.
#[derive(Debug, Clone)]
pub(crate) struct At {
    file: PathBuf,
    place: String,
}

impl At {
    pub(crate) fn new(file: &Path, place: impl fmt::Display) -> At {
        At { file: file.to_path_buf(), place: place.to_string() }
    }
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.place.is_empty() {
            write!(f, "{}", self.file.display())
        } else {
            write!(f, "{}: {}", self.file.display(), self.place)
        }
    }
}

/// One workload as a harness reported it.
#[derive(Debug)]
pub(crate) struct ImportedFamily {
    /// The name the workload will carry, before the checks of [`workload_name`].
    pub name: String,
    /// Where the family first appears.
    pub at: At,
    /// Samples in nanoseconds, by size.
    pub samples: BTreeMap<u64, Vec<f64>>,
    /// Facts the harness reported about the family, e.g. its own complexity verdict.
    pub metadata: BTreeMap<String, String>,
}

impl ImportedFamily {
    pub(crate) fn new(name: String, at: At) -> ImportedFamily {
        ImportedFamily { name, at, samples: BTreeMap::new(), metadata: BTreeMap::new() }
    }

    fn into_workload(self, format: Format, unit: SizeUnit) -> Result<WorkloadRun> {
        let name =
            workload_name(&self.name).map_err(|why| anyhow::anyhow!("{}: workload {:?} {why}", self.at, self.name))?;
        let sizes: Vec<String> = self.samples.keys().map(u64::to_string).collect();
        if sizes.len() < wire::MIN_SIZES {
            bail!(
                "{}: {name} has {} size(s) ({}); a slope needs at least {}",
                self.at,
                sizes.len(),
                sizes.join(", "),
                wire::MIN_SIZES
            );
        }
        if sizes.len() > wire::MAX_SIZES {
            bail!("{}: {name} has {} sizes; the limit is {}", self.at, sizes.len(), wire::MAX_SIZES);
        }
        if let Some((size, s)) = self.samples.iter().find(|(_, s)| s.len() > wire::MAX_SAMPLES_PER_SIZE) {
            bail!(
                "{}: {name} has {} samples at size {size}; the limit is {}",
                self.at,
                s.len(),
                wire::MAX_SAMPLES_PER_SIZE
            );
        }
        let mut metadata = self.metadata;
        metadata.insert("import.format".into(), format.as_str().into());
        let measurements = self
            .samples
            .into_iter()
            .map(|(size, samples_ns)| Measurement { size, samples_ns, instructions: None })
            .collect();
        let source_hash = source_hash(format, &name);
        Ok(WorkloadRun { metadata, ..WorkloadRun::new(name, unit, source_hash, measurements) })
    }
}

/// The name as the wire takes it: each run of whitespace or control characters becomes one
/// space, and the ends are trimmed. A name that is then empty or too long is refused rather than
/// cut, since two families cut to one name would be merged.
pub(crate) fn workload_name(raw: &str) -> Result<String, String> {
    let name = raw
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if name.is_empty() {
        return Err("is empty".into());
    }
    let chars = name.chars().count();
    if chars > wire::MAX_NAME_CHARS {
        return Err(format!("is {chars} characters long; the limit is {}", wire::MAX_NAME_CHARS));
    }
    Ok(name)
}

/// Imported workloads have no source the agent can read; the hash names what they are instead
/// (format and name), so it stays the same from one import to the next.
pub(crate) fn source_hash(format: Format, name: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"import\0");
    h.update(format.as_str().as_bytes());
    h.update([0]);
    h.update(name.as_bytes());
    format!("sha256:{}", hex::encode(h.finalize()))
}

/// A JSON syntax error, at its line and column.
pub(crate) fn not_json(path: &Path, e: &serde_json::Error) -> anyhow::Error {
    let message = e.to_string();
    let reason = message.rsplit_once(" at line ").map_or(message.as_str(), |(r, _)| r);
    let at = At::new(path, format!("line {} column {}", e.line(), e.column()));
    if e.is_eof() {
        anyhow::anyhow!("{at}: not valid JSON ({reason}): the file is cut short")
    } else {
        anyhow::anyhow!("{at}: not valid JSON ({reason})")
    }
}

/// A time in nanoseconds, checked against the wire's bounds.
pub(crate) fn sample_ns(ns: f64, at: &At) -> Result<f64> {
    if !ns.is_finite() {
        bail!("{at}: the time is not a finite number");
    }
    if ns <= 0.0 {
        bail!("{at}: the time must be positive, not {ns}");
    }
    if ns > wire::MAX_SAMPLE_NS {
        bail!("{at}: the time {ns} ns is longer than a week");
    }
    Ok(ns)
}

/// A size the wire accepts: from 1 to 2^50.
pub(crate) fn valid_size(size: i128) -> Option<u64> {
    (size >= 1 && size <= wire::MAX_SIZE as i128).then_some(size as u64)
}

/// Benchmarks left out of a file, grouped by why.
#[derive(Debug, Default)]
pub(crate) struct Skipped(BTreeMap<&'static str, Vec<String>>);

impl Skipped {
    pub(crate) fn add(&mut self, why: &'static str, name: &str) {
        let names = self.0.entry(why).or_default();
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }

    fn lines(&self, file: &Path) -> Vec<String> {
        self.0.iter().map(|(why, names)| format!("{}: skipped ({why}): {}", file.display(), list(names))).collect()
    }
}

fn list<T: fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    items.into_iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
}

/// What one file held.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    pub families: Vec<ImportedFamily>,
    pub skipped: Skipped,
    pub started_at: Option<OffsetDateTime>,
}

impl Parsed {
    /// The family called `name`, made at `at` when first seen.
    pub(crate) fn family(&mut self, name: &str, at: impl FnOnce() -> At) -> &mut ImportedFamily {
        match self.families.iter().position(|f| f.name == name) {
            Some(i) => &mut self.families[i],
            None => {
                self.families.push(ImportedFamily::new(name.to_string(), at()));
                self.families.last_mut().expect("just pushed")
            }
        }
    }

    /// Harnesses also time single points (one size, no size at all): those are not growth
    /// families, so they are skipped with a warning rather than refused.
    pub(crate) fn skip_single_sizes(&mut self) {
        let (kept, single): (Vec<ImportedFamily>, Vec<ImportedFamily>) =
            std::mem::take(&mut self.families).into_iter().partition(|f| f.samples.len() != 1);
        for f in single {
            self.skipped.add("one size only", &f.name);
        }
        self.families = kept;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Imports `text` written to a file called `name`, as `format`, sizes in bytes; warnings and
    /// the error name the file without the temporary directory.
    pub(crate) fn import(format: Format, name: &str, text: &str) -> Result<Imported, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let strip = |s: String| s.replace(&format!("{}/", dir.path().display()), "");
        match read(format, &[path], SizeUnit::Bytes) {
            Ok(imported) => Ok(Imported { warnings: imported.warnings.into_iter().map(strip).collect(), ..imported }),
            Err(e) => Err(strip(format!("{e:#}"))),
        }
    }

    #[test]
    fn names_are_folded_to_one_line_and_refused_when_empty_or_too_long() {
        assert_eq!(workload_name("  lex\tfast \u{7} path ").unwrap(), "lex fast path");
        assert_eq!(workload_name(" \t ").unwrap_err(), "is empty");
        assert!(workload_name(&"x".repeat(129)).unwrap_err().contains("limit is 128"));
        assert_eq!(workload_name(&"é".repeat(128)).unwrap().chars().count(), 128);
    }

    #[test]
    fn the_source_hash_names_format_and_workload_and_nothing_else() {
        let a = source_hash(Format::Csv, "lex");
        assert_eq!(a, source_hash(Format::Csv, "lex"));
        assert_ne!(a, source_hash(Format::GoogleBenchmark, "lex"));
        assert_ne!(a, source_hash(Format::Csv, "lex2"));
        assert!(a.starts_with("sha256:") && a.len() == 7 + 64);
    }

    #[test]
    fn one_workload_in_two_files_is_refused_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        let rows = "workload,size,ns\nlex,1,1\nlex,2,2\nlex,4,4\n";
        let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
        std::fs::write(&a, rows).unwrap();
        std::fs::write(&b, rows).unwrap();
        let e = format!("{:#}", read(Format::Csv, &[a, b], SizeUnit::Bytes).unwrap_err());
        assert!(e.contains("b.csv: line 2: lex is also in") && e.contains("a.csv: line 2"), "{e}");
    }
}
