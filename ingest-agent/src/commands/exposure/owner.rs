//! Whose libc code an artifact carries, told by its code: the fingerprints of each toolchain's
//! libc (see `builds::fingerprints`) are looked for in it, and the toolchain whose build matches
//! the most catalogue functions is the one it was linked with. Asked of a stripped static artifact
//! (whose symbols cannot say), and of any static artifact when several toolchains are given (Zig
//! 0.15.2 and 0.16.0 both link "musl" by name, but not the same code).

use super::verdicts::ToolchainVerdicts;
use crate::artifact::{self, Artifact};
use crate::builds::discover;
use crate::cli::ToolchainArgs;
use anyhow::Result;
use std::collections::BTreeSet;
use std::path::Path;

/// The toolchain whose libc code an artifact carries.
pub(super) struct Owner {
    /// Its index among the judges.
    pub judge: usize,
    /// What told it, for people: how many functions match its build and the others'.
    pub evidence: String,
}

/// What one toolchain's fingerprints found in the artifact.
struct Matched {
    judge: usize,
    functions: BTreeSet<String>,
    modes: BTreeSet<String>,
}

/// The judge among `judges` (of the artifact's architecture) whose fingerprints match the most
/// catalogue functions in `a`, at `path`; where none matches any and `host` is set, the
/// toolchains found on this host are tried too (and added to `judges`). None when no toolchain's
/// code is there.
pub(super) fn by_code(
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
            tallies.push(tally(judges, j, path, root)?);
        }
    }
    if host && tallies.iter().all(|t| t.functions.is_empty()) {
        let named: Vec<String> = judges.iter().map(|j| j.tc.spec.name.clone()).collect();
        for arg in discover::on_host(root).args {
            let name = arg.split(['=', '@']).next().unwrap_or_default().to_string();
            if named.contains(&name) {
                continue;
            }
            match ToolchainVerdicts::new(ToolchainArgs::one(&arg), root) {
                Ok(j) if j.tc.arch == arch => {
                    judges.push(j);
                    let last = judges.len() - 1;
                    let t = tally(judges, last, path, root)?;
                    let found = !t.functions.is_empty();
                    tallies.push(t);
                    if found {
                        break;
                    }
                }
                Ok(_) => {}
                Err(e) => eprintln!("note: {arg} cannot judge: {e:#}"),
            }
        }
    }
    // The most functions; on a tie, the toolchain named first.
    let Some(best) = tallies
        .iter()
        .filter(|t| !t.functions.is_empty())
        .max_by_key(|t| (t.functions.len(), std::cmp::Reverse(t.judge)))
    else {
        return Ok(None);
    };
    let all: BTreeSet<&String> = tallies.iter().flat_map(|t| &t.functions).collect();
    let modes: Vec<&str> = best.modes.iter().map(String::as_str).collect();
    let mut evidence = format!(
        "its code: {} of the {} catalogue functions recognised match {}'s build ({})",
        best.functions.len(),
        all.len(),
        judges[best.judge].label(),
        modes.join(", ")
    );
    for t in tallies.iter().filter(|t| t.judge != best.judge) {
        evidence.push_str(&format!("; {} match {}'s", t.functions.len(), judges[t.judge].label()));
    }
    Ok(Some(Owner { judge: best.judge, evidence }))
}

/// What the fingerprints of `judges[j]` recognise at `path`. A toolchain that cannot build the
/// program its fingerprints come from recognises nothing, and says why.
fn tally(judges: &mut [ToolchainVerdicts], j: usize, path: &Path, root: &Path) -> Result<Matched> {
    let mut t = Matched { judge: j, functions: BTreeSet::new(), modes: BTreeSet::new() };
    let prints = match judges[j].prints(root) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("note: {} cannot recognise code: {e:#}", judges[j].label());
            return Ok(t);
        }
    };
    for m in artifact::recognised(path, prints)? {
        t.functions.insert(m.function);
        t.modes.extend(m.modes);
    }
    Ok(t)
}
