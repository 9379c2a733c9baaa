//! Whose libc code an artifact carries, told by its code: the fingerprints of each toolchain's
//! libc (see `builds::fingerprints`) are looked for in it, and the toolchain whose build matches
//! the most catalogue functions is the one it was linked with. Asked of a stripped static artifact
//! (whose symbols cannot say), and of any static artifact when several toolchains are given (Zig
//! 0.15.2 and 0.16.0 both link "musl" by name, but not the same code).

use super::verdicts::ToolchainVerdicts;
use crate::artifact::{self, Artifact, Fingerprint};
use crate::builds::rust_musl;
use anyhow::Result;
use std::collections::BTreeSet;
use std::path::Path;

/// The toolchain whose libc code an artifact carries.
pub(crate) struct Owner {
    /// The judge of its verdicts, by its index among the judges.
    pub judge: usize,
    /// What told it, for people: how many functions match its build and the others'.
    pub evidence: String,
    /// What a reader should know of the judge, where the code is not its own.
    pub note: Option<String>,
    /// The fingerprints that matched best: the artifact is read with them.
    pub prints: Vec<Fingerprint>,
}

/// Where fingerprints came from.
enum PrintSource {
    /// A judge's toolchain, by its index.
    Judge(usize),
    /// Rust's bundled musl, which no toolchain here builds with: its label and fingerprints.
    Bundled(String, Vec<Fingerprint>),
}

/// What one source's fingerprints found in the artifact.
struct Matched {
    source: PrintSource,
    functions: BTreeSet<String>,
    modes: BTreeSet<String>,
}

impl Matched {
    fn label(&self, judges: &[ToolchainVerdicts]) -> String {
        match &self.source {
            PrintSource::Judge(j) => format!("{}'s build", judges[*j].label()),
            PrintSource::Bundled(label, _) => label.clone(),
        }
    }
}

/// The source whose fingerprints match the most catalogue functions in `a` (at `path`) among the
/// judges of its architecture; where none matches any and `host` is set, among every toolchain
/// found on this host too (added to `judges`) and Rust's bundled musl. Rust's musl is judged by a
/// toolchain here that links musl. None when no code of any is there, or nothing here can judge it.
pub(crate) fn by_code(
    judges: &mut Vec<ToolchainVerdicts>,
    a: &Artifact,
    path: &Path,
    root: &Path,
    host: bool,
) -> Result<Option<Owner>> {
    let arch = slopewatch_core::arch::normalize(&a.arch).unwrap_or(&a.arch).to_string();
    let mut tallies = Vec::new();
    for j in 0..judges.len() {
        if judges[j].tc.arch == arch {
            let prints = fingerprints_of(judges, j, root);
            tallies.push(matched(PrintSource::Judge(j), &prints, path)?);
        }
    }
    if host && tallies.iter().all(|t| t.functions.is_empty()) {
        ToolchainVerdicts::add_from_host(judges, root, |judges, j| {
            if judges[j].tc.arch == arch {
                let prints = fingerprints_of(judges, j, root);
                tallies.push(matched(PrintSource::Judge(j), &prints, path)?);
            }
            Ok(false)
        })?;
        if arch == "x86_64" {
            match rust_musl::bundled(root) {
                Ok(Some(b)) => {
                    let t = matched(PrintSource::Bundled(b.label, Vec::new()), &b.prints, path)?;
                    tallies.push(Matched { source: PrintSource::Bundled(t.label(judges), b.prints), ..t });
                }
                Ok(None) => {}
                Err(e) => eprintln!("note: Rust's bundled musl cannot be fingerprinted: {e:#}"),
            }
        }
    }
    // The most functions; on a tie, the source tried first.
    let Some(best) = tallies
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.functions.is_empty())
        .max_by_key(|(i, t)| (t.functions.len(), std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
    else {
        return Ok(None);
    };
    let all: BTreeSet<&String> = tallies.iter().flat_map(|t| &t.functions).collect();
    let t = &tallies[best];
    let modes: Vec<&str> = t.modes.iter().map(String::as_str).collect();
    let mut evidence = format!(
        "its code: {} of the {} catalogue functions recognised match {} ({})",
        t.functions.len(),
        all.len(),
        t.label(judges),
        modes.join(", ")
    );
    for (_, other) in tallies.iter().enumerate().filter(|(i, _)| *i != best) {
        evidence.push_str(&format!("; {} match {}", other.functions.len(), other.label(judges)));
    }
    let (judge, note, prints) = match &t.source {
        PrintSource::Judge(j) => (*j, None, fingerprints_of(judges, *j, root)),
        PrintSource::Bundled(label, prints) => {
            let Some(j) = judges.iter().position(|j| j.libc.name == "musl" && j.tc.arch == arch) else {
                eprintln!("note: its libc is {label}, and no toolchain here links musl to judge it");
                return Ok(None);
            };
            let note = format!(
                "its libc is {label}, which no toolchain here builds with: judged by {}, which links musl",
                judges[j].label()
            );
            (j, Some(note), prints.clone())
        }
    };
    Ok(Some(Owner { judge, evidence, note, prints }))
}

/// The fingerprints of `judges[j]`; none, said once, where its toolchain cannot build the program
/// they come from.
fn fingerprints_of(judges: &mut [ToolchainVerdicts], j: usize, root: &Path) -> Vec<Fingerprint> {
    match judges[j].prints(root) {
        Ok(p) => p.to_vec(),
        Err(e) => {
            eprintln!("note: {} cannot recognise code: {e:#}", judges[j].label());
            Vec::new()
        }
    }
}

/// What `prints` recognise at `path`, for `source`.
fn matched(source: PrintSource, prints: &[Fingerprint], path: &Path) -> Result<Matched> {
    let mut t = Matched { source, functions: BTreeSet::new(), modes: BTreeSet::new() };
    for m in artifact::recognised(path, prints)? {
        t.functions.insert(m.function);
        t.modes.extend(m.modes);
    }
    Ok(t)
}
