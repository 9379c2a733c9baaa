//! Judging one artifact: which toolchain judges it (the one named, or one that links the libc it
//! really carries), why its calls cannot be read, each function's verdict and acceptance, the
//! scan's status, and the record `--submit` stores.

use super::accept::{Acceptance, Suppressions};
use super::report::{self, JudgedBy, Libc, Reached, Scan, Status, Verdict};
use super::verdicts::ToolchainVerdicts;
use crate::artifact::{Artifact, FunctionUse};
use slopewatch_core::exposure::{ExposedFunction, ExposureSubmission, FunctionVerdict, Linkage, MAX_EXPOSURE_CALLERS};
use std::path::Path;

/// The order of the statuses, worst first.
pub(crate) fn rank(s: Status) -> u8 {
    match s {
        Status::Exposed => 0,
        Status::CannotTell => 1,
        Status::Unsure => 2,
        Status::Clean => 3,
    }
}

/// Why the calls of `a` cannot be read, with the way out; None when they can. `judges` are the
/// toolchains whose libc code was looked for.
pub(crate) fn cannot_read_calls(a: &Artifact, judges: &[ToolchainVerdicts]) -> Option<String> {
    if !a.symbols && a.linkage == Linkage::Static && a.by_code.is_empty() {
        let tried: Vec<String> = judges.iter().map(ToolchainVerdicts::label).collect();
        return Some(format!(
            "it is a static binary without a symbol table, and the code of none of the toolchains here ({}) is in \
             it, so the libc's functions in it cannot be named. Name the toolchain that built it (--toolchain \
             NAME=COMMAND), give its symbols (--symbols FILE: the unstripped build, or its debug file), or keep \
             the symbols in the artifact you scan: drop -s / -Wl,--strip-all from the link, or for Rust set \
             `strip = \"none\"` (or \"debuginfo\") under [profile.release] in Cargo.toml",
            tried.join(", ")
        ));
    }
    if !a.call_sites_decoded {
        return Some(format!(
            "its calls are decoded on x86-64 and aarch64 only for now, and it is {}; the functions linked in are {}",
            a.arch,
            a.uses
                .iter()
                .map(|u| u.function.as_str())
                .chain(a.unused.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    None
}

/// The judge for `a`: the toolchain given, when the libc in `a` is the one its builds carry (or
/// cannot be named); else a toolchain found on this host that links the libc `a` carries, with a
/// note saying so. None when no toolchain links it, or the toolchain given builds for another
/// architecture: its libc's verdicts say nothing of the artifact's code.
pub(crate) fn pick_judge(
    judges: &mut Vec<ToolchainVerdicts>,
    a: &Artifact,
    root: &Path,
    notes: &mut Vec<String>,
) -> Option<usize> {
    let given = &judges[0];
    let arch = slopewatch_core::arch::normalize(&a.arch).unwrap_or(&a.arch);
    if arch != given.tc.arch {
        notes.push(format!(
            "it is built for {arch}, and {} builds for {}: name the toolchain that built it (a cross toolchain's \
             verdicts are measured through its runner, e.g. qemu-{arch})",
            given.label(),
            given.tc.arch
        ));
        return None;
    }
    if a.libc.name == given.libc.name {
        return Some(0);
    }
    if a.libc.name == "unknown" {
        notes.push(format!(
            "the libc in it could not be named ({}); it is judged as {}'s, {}",
            a.libc.evidence,
            given.label(),
            given.libc.name
        ));
        return Some(0);
    }
    let mismatch = format!(
        "it carries {} libc ({}), not the {} libc {}'s builds carry ({})",
        a.libc.name,
        a.libc.evidence,
        given.libc.name,
        given.label(),
        given.libc.evidence
    );
    let found = match judges.iter().position(|j| j.libc.name == a.libc.name && j.tc.arch == arch) {
        Some(i) => Some(i),
        None => {
            let mut found = None;
            // Nothing here fails: the search only stops at the first toolchain that fits.
            ToolchainVerdicts::add_from_host(judges, root, |judges, j| {
                let fits = judges[j].libc.name == a.libc.name && judges[j].tc.arch == arch;
                found = fits.then_some(j);
                Ok(fits)
            })
            .ok();
            found
        }
    };
    match found {
        Some(i) => {
            notes.push(format!("{mismatch}: judged by {}, which links {}", judges[i].label(), judges[i].libc.name))
        }
        None => notes.push(mismatch),
    }
    found
}

/// The scan of `a` before any verdict: what the binary says of itself.
pub(crate) fn unjudged(a: &Artifact, path: &Path) -> Scan {
    Scan {
        artifact: a.name.clone(),
        path: path.display().to_string(),
        digest: a.digest.clone(),
        arch: a.arch.clone(),
        linkage: a.linkage,
        libc: Libc { name: a.libc.name.clone(), evidence: a.libc.evidence.clone() },
        judged_by: None,
        status: Status::Clean,
        cannot_tell: None,
        notes: Vec::new(),
        functions: Vec::new(),
        unused: a.unused.clone(),
    }
}

/// Judges every function `a` reaches by `judge`'s verdicts and `accepted`, and sets the status.
pub(crate) fn judge(
    scan: &mut Scan,
    a: &Artifact,
    judge: &ToolchainVerdicts,
    accepted: &Suppressions,
    today: time::Date,
) {
    scan.judged_by = Some(JudgedBy {
        // The series its verdicts are stored under: an aarch64 build's are `NAME (aarch64)`.
        lineage: judge.tc.series_lineage(),
        version: judge.tc.version.clone(),
        libc: judge.tc.libc.clone(),
        verdicts_from: judge.sources.iter().cloned().collect(),
    });
    if a.linkage == Linkage::Dynamic {
        scan.notes.push(format!(
            "it imports its libc at run time: judged by the {} that {} links on this host",
            judge.tc.libc,
            judge.label()
        ));
    }
    scan.functions = a.uses.iter().map(|u| reached(u, judge.verdict(u), accepted, today)).collect();
    scan.functions.sort_by(|x, y| x.rank().cmp(&y.rank()).then_with(|| x.function.cmp(&y.function)));
    scan.status = if scan.functions.iter().any(Reached::fails) {
        Status::Exposed
    } else if scan.functions.iter().any(|f| f.verdict.state == "unsure") {
        Status::Unsure
    } else {
        Status::Clean
    };
}

/// One function `u` reaches, with its verdict and what the suppression file says of it.
fn reached(u: &FunctionUse, verdict: Option<FunctionVerdict>, accepted: &Suppressions, today: time::Date) -> Reached {
    let verdict = match verdict {
        Some(FunctionVerdict::Breaks { breach, verdict }) => {
            Verdict { state: "breaks", breach: Some(breach), words: verdict }
        }
        Some(FunctionVerdict::Held) => Verdict { state: "held", breach: None, words: "held".into() },
        Some(FunctionVerdict::NotProvided) => {
            Verdict { state: "not_provided", breach: None, words: "not provided by this libc".into() }
        }
        Some(FunctionVerdict::Unsure) => Verdict { state: "unsure", breach: None, words: "unsure".into() },
        None => Verdict { state: "unjudged", breach: None, words: "no probe".into() },
    };
    let callers: Vec<&str> = u.callers.iter().map(|c| c.name.as_str()).collect();
    let (mut ok, mut expired) = (None, None);
    if verdict.breach.is_some() {
        match accepted.judge(&u.function, &callers, u.referenced, today) {
            Acceptance::Accepted { reason, expires } => {
                ok = Some(report::AcceptedUntil { reason, until: expires.to_string() });
            }
            Acceptance::Expired { reason, expired: on } => {
                expired = Some(report::AcceptedUntil { reason, until: on.to_string() });
            }
            Acceptance::Not => {}
        }
    }
    Reached {
        function: u.function.clone(),
        aliases: u.aliases.clone(),
        verdict,
        call_sites: u.call_sites,
        referenced: u.referenced,
        callers: u.callers.clone(),
        found_by: u.found_by,
        accepted: ok,
        expired,
    }
}

/// The record `--submit` stores for a judged scan; None for one that could not be judged.
pub(crate) fn submission(scan: &Scan, a: &Artifact) -> Option<ExposureSubmission> {
    let j = scan.judged_by.as_ref()?;
    let exposed = scan
        .functions
        .iter()
        .filter_map(|f| {
            Some(ExposedFunction {
                function: f.function.clone(),
                breach: f.verdict.breach?,
                verdict: f.verdict.words.clone(),
                call_sites: f.call_sites,
                referenced: f.referenced,
                callers: f.callers.iter().take(MAX_EXPOSURE_CALLERS).map(|c| c.name.clone()).collect(),
                accepted: f.accepted.as_ref().map(|a| format!("{} (until {})", a.reason, a.until)),
            })
        })
        .collect();
    Some(ExposureSubmission {
        scan_id: uuid::Uuid::new_v4(),
        agent_version: crate::AGENT_VERSION.to_string(),
        scanned_at: time::OffsetDateTime::now_utc(),
        artifact: a.name.clone(),
        digest: a.digest.clone(),
        lineage: j.lineage.clone(),
        version: j.version.clone(),
        libc: a.libc.name.clone(),
        linkage: a.linkage,
        exposed,
        reaches: scan.functions.iter().map(|f| f.function.clone()).collect(),
    })
}
