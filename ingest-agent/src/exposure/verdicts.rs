//! The verdicts an artifact is judged by: what one toolchain version does to each function of the
//! catalogue, read from the agent's cache, else from a server that stored that version's
//! catalogue run, else measured here (the probes of the functions asked for only) and cached, so
//! that scanning many artifacts measures the catalogue once.

use crate::artifact::{self, Fingerprint, FunctionUse, LibcFound};
use crate::builds::cache::BuildCache;
use crate::builds::contracts::catalogue;
use crate::builds::toolchain::{self, DetectedToolchain};
use crate::builds::workloads;
use crate::builds::{discover, fingerprints};
use crate::cli::{MeasureArgs, ToolchainArgs};
use crate::measure::engine::measure_gated;
use crate::measure::judged::judge_all;
use crate::server::client::{path_segment, Answer, Client};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use slopewatch_core::exposure::{Breakage, ContractVerdicts, FunctionVerdict};
use slopewatch_core::probe::ProbeVerdict;
use slopewatch_core::verdict::Limits;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A toolchain artifacts are judged by: detected, the libc its own build carries, and the
/// verdicts of the probes asked for so far.
pub(crate) struct ToolchainVerdicts {
    /// The flags that name it, for measuring.
    toolchains: ToolchainArgs,
    pub(crate) tc: DetectedToolchain,
    /// The libc of a binary it built (the catalogue's), as an artifact's is identified.
    pub(crate) libc: LibcFound,
    probes: BTreeMap<String, ProbeVerdict>,
    /// Where the verdicts came from, for the report: "measured here", "the agent's cache", a
    /// server.
    pub(crate) sources: BTreeSet<String>,
    /// The fingerprints of its libc's functions, once asked for.
    prints: Option<Vec<Fingerprint>>,
}

/// The agent's cache of one toolchain's verdicts, by its fingerprint.
#[derive(Serialize, Deserialize, Default)]
struct Cached {
    /// The catalogue they were measured with: another agent's probes may differ.
    catalogue: String,
    probes: Vec<ProbeVerdict>,
}

impl ToolchainVerdicts {
    /// Every toolchain `toolchains` names, each detected with its catalogue built.
    pub(crate) fn all(toolchains: &ToolchainArgs, root: &Path) -> Result<Vec<ToolchainVerdicts>> {
        let specs = toolchains.specs(root)?;
        specs.iter().map(|spec| ToolchainVerdicts::new(toolchains.only(&spec.name), root)).collect()
    }

    /// Detects the toolchain `toolchains` names (exactly one), builds the catalogue with it (or
    /// finds it built) and identifies the libc that build carries.
    pub(crate) fn new(toolchains: ToolchainArgs, root: &Path) -> Result<ToolchainVerdicts> {
        let specs = toolchains.specs(root)?;
        let [spec] = specs.as_slice() else {
            bail!("exactly one toolchain was to be named, and {} are", specs.len());
        };
        let tc = toolchain::detect(spec, &root.join("probe"))?;
        let probe = workloads::probes().into_iter().next().context("the catalogue has no probe")?;
        let binary = BuildCache::new(root.join("builds"))
            .binary(&tc, &probe)
            .map_err(|e| anyhow::anyhow!("toolchain {} cannot build the catalogue: {e}", tc.spec.name))?;
        let libc = artifact::identify_libc(&binary)
            .with_context(|| format!("cannot read the catalogue built by {}", tc.spec.name))?;
        Ok(ToolchainVerdicts { toolchains, tc, libc, probes: BTreeMap::new(), sources: BTreeSet::new(), prints: None })
    }

    /// Adds to `judges` each toolchain found on this host that is not among them (one that
    /// cannot judge is said on stderr and left out), handing `visit` each one's index as it is
    /// added; stops early once `visit` answers true.
    pub(crate) fn add_from_host(
        judges: &mut Vec<ToolchainVerdicts>,
        root: &Path,
        mut visit: impl FnMut(&mut Vec<ToolchainVerdicts>, usize) -> Result<bool>,
    ) -> Result<()> {
        let named: Vec<String> = judges.iter().map(|j| j.tc.spec.name.clone()).collect();
        for arg in discover::on_host(root).args {
            let name = arg.split(['=', '@']).next().unwrap_or_default();
            if named.iter().any(|n| n == name) {
                continue;
            }
            match ToolchainVerdicts::new(ToolchainArgs::one(&arg), root) {
                Ok(j) => {
                    judges.push(j);
                    if visit(judges, judges.len() - 1)? {
                        break;
                    }
                }
                Err(e) => eprintln!("note: {arg} cannot judge: {e:#}"),
            }
        }
        Ok(())
    }

    /// The fingerprints of its libc's functions, built (or read from the cache) when first asked.
    pub(crate) fn prints(&mut self, root: &Path) -> Result<&[Fingerprint]> {
        if self.prints.is_none() {
            self.prints = Some(fingerprints::of(&self.tc, root)?);
        }
        Ok(self.prints.as_deref().unwrap_or_default())
    }

    /// The lineage and version, as the server keeps them: `zig-cc-musl 0.16.0`.
    pub(crate) fn label(&self) -> String {
        format!("{} {}", self.tc.spec.name, self.tc.version)
    }

    /// Makes sure every probe of `functions` has a verdict: from the cache (unless `remeasure`),
    /// else from `server`, else measured with `measure`'s sweep, the measured ones then cached.
    pub(crate) fn ensure(
        &mut self,
        functions: &BTreeSet<String>,
        root: &Path,
        server: Option<&Client>,
        remeasure: bool,
        measure: &MeasureArgs,
    ) -> Result<()> {
        let wanted = |have: &BTreeMap<String, ProbeVerdict>| -> Vec<String> {
            catalogue()
                .iter()
                .filter(|p| functions.contains(&p.function) && !have.contains_key(&p.name()))
                .map(|p| p.name())
                .collect()
        };
        if wanted(&self.probes).is_empty() {
            return Ok(());
        }
        let cache_path = self.cache_path(root);
        let mut cached = read_cache(&cache_path);
        if !remeasure {
            self.take(&cached.probes, &wanted(&self.probes), "the agent's cache");
            if let Some(client) = server {
                let missing = wanted(&self.probes);
                if !missing.is_empty() {
                    match read_server(client, &self.tc) {
                        Ok(Some(stored)) => self.take(&stored.probes, &missing, client.server()),
                        Ok(None) => {}
                        Err(e) => eprintln!("warning: {e:#}; measuring here instead"),
                    }
                }
            }
        }
        let missing = wanted(&self.probes);
        if missing.is_empty() {
            return Ok(());
        }
        eprintln!(
            "measuring {} probe(s) of the catalogue with {} ({})",
            missing.len(),
            self.label(),
            missing.join(", ")
        );
        let mut args = measure.clone();
        args.toolchains = self.toolchains.clone();
        args.workloads = Some(missing.clone());
        let mut measured = measure_gated(&args.plan()?, &Limits::default(), true)?;
        let mut rows = judge_all(&measured.runs, &Limits::default());
        rows.append(&mut measured.unmeasurable);
        let fresh: Vec<ProbeVerdict> = rows.iter().filter(|r| r.is_probe()).filter_map(probe_verdict).collect();
        self.take(&fresh, &missing, "measured here");
        // Only what is sure is kept: an unsure probe is measured again next time.
        cached.catalogue = catalogue_hash();
        cached.probes.retain(|p| !fresh.iter().any(|f| f.workload == p.workload));
        cached.probes.extend(fresh.into_iter().filter(|p| p.state.is_sure()));
        write_cache(&cache_path, &cached);
        Ok(())
    }

    /// What the toolchain does to the function `u` reaches: the worst verdict of its catalogue
    /// name and of every alias that is a catalogue name too (one body of Zig's serves `strtol`,
    /// `strtoll` and `strtoimax`); None when the catalogue has no probe of any.
    pub(crate) fn verdict(&self, u: &FunctionUse) -> Option<FunctionVerdict> {
        let probes: Vec<ProbeVerdict> = self.probes.values().cloned().collect();
        names_of(u).iter().filter_map(|f| FunctionVerdict::of(f, &probes, guarded)).min_by_key(severity)
    }

    /// Takes the verdicts among `from` of the probes `wanted`, noting `source` when any is taken.
    fn take(&mut self, from: &[ProbeVerdict], wanted: &[String], source: &str) {
        let mut took = false;
        for p in from.iter().filter(|p| wanted.contains(&p.workload)) {
            took |= self.probes.insert(p.workload.clone(), p.clone()).is_none();
        }
        if took {
            self.sources.insert(source.to_string());
        }
    }

    fn cache_path(&self, root: &Path) -> PathBuf {
        root.join("exposure").join(format!("{}.json", &self.tc.fingerprint[..16]))
    }
}

/// The catalogue names `u` goes by: its own, and those of its aliases that the catalogue probes.
pub(crate) fn names_of(u: &FunctionUse) -> Vec<String> {
    let mut names = vec![u.function.clone()];
    for a in &u.aliases {
        if !names.contains(a) && catalogue().iter().any(|p| &p.function == a) {
            names.push(a.clone());
        }
    }
    names
}

/// How bad a verdict is, worst first: a break (by its kind), unsure, held, not provided.
fn severity(v: &FunctionVerdict) -> (u8, Option<Breakage>) {
    match v {
        FunctionVerdict::Breaks { breach, .. } => (0, Some(*breach)),
        FunctionVerdict::Unsure => (1, None),
        FunctionVerdict::Held => (2, None),
        FunctionVerdict::NotProvided => (3, None),
    }
}

/// Whether the probe named `workload` ends its input against an unreadable page.
fn guarded(workload: &str) -> bool {
    catalogue().iter().any(|p| p.guarded && p.name() == workload)
}

/// A probe's measured row as a verdict; None for a row that is not the catalogue's.
fn probe_verdict(row: &crate::measure::judged::Judged) -> Option<ProbeVerdict> {
    let probe = catalogue().iter().find(|p| p.name() == row.workload)?;
    Some(ProbeVerdict {
        workload: row.workload.clone(),
        function: probe.function.clone(),
        expected: probe.expected,
        class: row.class(),
        state: row.probe_state(),
    })
}

/// What identifies the catalogue's probes: a hash of every file of it.
fn catalogue_hash() -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (name, text) in crate::builds::contracts::FILES {
        h.update(name.as_bytes());
        h.update(text.as_bytes());
    }
    hex::encode(&h.finalize()[..8])
}

/// The cache at `path`; empty when there is none, it is unreadable, or another catalogue's.
fn read_cache(path: &Path) -> Cached {
    let read = std::fs::read(path).ok().and_then(|b| serde_json::from_slice::<Cached>(&b).ok());
    read.filter(|c| c.catalogue == catalogue_hash()).unwrap_or_default()
}

/// Writes the cache; a cache that cannot be written costs only a measurement next time.
fn write_cache(path: &Path, cached: &Cached) {
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(path, serde_json::to_vec_pretty(cached).unwrap_or_default()));
    if let Err(e) = written {
        eprintln!("warning: cannot cache the verdicts in {}: {e}", path.display());
    }
}

/// The verdicts the server stored for the toolchain's lineage and version; None when it holds
/// none (no catalogue run of that version, or a server of a release before scans).
fn read_server(client: &Client, tc: &DetectedToolchain) -> Result<Option<ContractVerdicts>> {
    let server = client.server();
    let lineage = tc.series_lineage();
    let path = format!("/api/v1/toolchains/{}/{}/contracts", path_segment(&lineage), path_segment(&tc.version));
    let Answer { status, body } =
        client.get(&path, &[]).with_context(|| format!("cannot read the verdicts from {server}"))?;
    match status {
        200 => {
            let v: ContractVerdicts =
                serde_json::from_str(&body).with_context(|| format!("{server} answered {path} unreadably"))?;
            Ok(Some(v).filter(|v| !v.probes.is_empty()))
        }
        404 => Ok(None),
        401 | 403 => bail!("{server} refused to read {path} (HTTP {status}): give a token with --token"),
        _ => bail!("{server} answered {path} with HTTP {status}"),
    }
}
