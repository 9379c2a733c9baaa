//! `exposure`: which libc functions each artifact calls or references that the toolchain that
//! built it breaks. The binary is read for its calls and callers (`artifact`), the libc it really
//! carries is told by what is in it, the toolchain's verdicts come from the catalogue
//! (`verdicts`), a suppression file marks what a team accepts (`accept`), and the answer is
//! written for a terminal, a pull request or a machine (`report`), and stored with `--submit`.

mod accept;
mod owner;
mod report;
mod sarif;
mod verdicts;

use crate::artifact::{self, Artifact, FunctionUse, LibcFound, Naming};
use crate::builds::contracts;
use crate::builds::discover;
use crate::cli::{ExposureArgs, ReportFormat, ToolchainArgs};
use crate::config::cache_root;
use crate::exit::ExitStatus;
use crate::server::client::Client;
use crate::server::deliver::deliver_exposure;
use accept::{Acceptance, Suppressions};
use anyhow::{bail, Result};
use report::{JudgedBy, Libc, Reached, Scan, Status, Verdict};
use slopewatch_core::exposure::{ExposedFunction, ExposureSubmission, FunctionVerdict, Linkage, MAX_EXPOSURE_CALLERS};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use verdicts::ToolchainVerdicts;

/// Scans every artifact, prints the answer and returns its status: 1 when one reaches a function
/// its toolchain breaks (unaccepted), else 3 when one cannot be told, else 0. Input that cannot
/// be read (an artifact that is not ELF, a bad suppression file) is an error, which the caller
/// turns into status 2.
pub fn exposure(args: &ExposureArgs) -> Result<ExitStatus> {
    let m = &args.measure;
    if m.workloads.is_some() || !m.workload_files.is_empty() || m.control.is_some() || m.profile {
        bail!(
            "exposure measures the catalogue's probes of the functions the artifacts reach; --workloads, \
             --workload-file, --control and --profile do not apply"
        );
    }
    let accepted = match &args.suppressions {
        Some(path) => Suppressions::load(path)?,
        None => Suppressions::default(),
    };
    let names: Vec<&str> = contracts::functions();
    if args.symbols.is_some() && args.artifacts.len() > 1 {
        bail!(
            "--symbols gives the symbols of one artifact, and {} are given: scan them one at a time",
            args.artifacts.len()
        );
    }
    let naming = Naming { prints: &[], symbols: args.symbols.as_deref() };
    let mut artifacts = args
        .artifacts
        .iter()
        .map(|p| artifact::scan(p, &names, naming).map_err(anyhow::Error::from))
        .collect::<Result<Vec<Artifact>>>()?;
    let root = cache_root(m.cache_dir.clone())?;
    let reader = match &args.server {
        Some(server) => Some(Client::reader(server, args.token.token()?.as_deref())?),
        None => None,
    };
    let mut judges = ToolchainVerdicts::all(&m.toolchains, &root)?;
    let given = judges.len();
    let today = time::OffsetDateTime::now_utc().date();
    let mut scans = Vec::new();
    for (a, path) in artifacts.iter_mut().zip(&args.artifacts) {
        // The libc's code tells whose it is where the symbols cannot: a stripped static artifact,
        // or any static one when several toolchains could have built it.
        let mut owner = None;
        let mut notes = Vec::new();
        if a.linkage == Linkage::Static && a.call_sites_decoded && (!a.symbols || given > 1) {
            if let Some(o) = owner::by_code(&mut judges, a, path, &root, !a.symbols)? {
                *a = artifact::scan(path, &names, Naming { prints: &o.prints, symbols: args.symbols.as_deref() })?;
                if !a.symbols {
                    a.libc = LibcFound { name: judges[o.judge].libc.name.clone(), evidence: o.evidence };
                } else {
                    notes.push(o.evidence);
                }
                if let Some(note) = o.note {
                    notes.push(note);
                } else if o.judge >= given {
                    notes.push(format!(
                        "its libc's code is {}'s, not {}'s: judged by the code",
                        judges[o.judge].label(),
                        judges[0].label()
                    ));
                }
                if !a.symbols {
                    notes.push(format!(
                        "the scan sees the {} catalogue functions recognised by their code; a libc function inlined \
                         into its caller, or one whose body is too short to tell apart, is not seen",
                        a.by_code.len()
                    ));
                }
                owner = Some(o.judge);
            }
        }
        let a = &*a;
        let mut scan = unjudged(a, path);
        if let Some(file) = &a.symbols_from {
            let how = if args.symbols.is_some() { "--symbols" } else { "the debug file its .gnu_debuglink names" };
            notes.insert(0, format!("its names and lines are read from {} ({how})", file.display()));
        }
        scan.notes = notes;
        if let Some(why) = cannot_read_calls(a, &judges) {
            scan.status = Status::CannotTell;
            scan.cannot_tell = Some(why);
            scans.push(scan);
            continue;
        }
        let picked = match owner {
            Some(o) => Some(o),
            None => pick_judge(&mut judges, a, &root, &mut scan.notes),
        };
        let Some(j) = picked else {
            let tried: Vec<String> =
                judges.iter().map(|j| format!("{} ({}, {})", j.label(), j.libc.name, j.tc.arch)).collect();
            scan.status = Status::CannotTell;
            scan.cannot_tell = Some(format!(
                "it carries {} libc for {}, which none of the toolchains here links (tried {}): give --toolchain \
                 NAME=COMMAND for one that does",
                a.libc.name,
                a.arch,
                tried.join(", ")
            ));
            scans.push(scan);
            continue;
        };
        let wanted: BTreeSet<String> = a.uses.iter().flat_map(verdicts::names_of).collect();
        judges[j].ensure(&wanted, &root, reader.as_ref(), args.remeasure, m)?;
        judge(&mut scan, a, &judges[j], &accepted, today);
        scans.push(scan);
    }
    let status = scans.iter().map(|s| s.status).min_by_key(|s| rank(*s)).unwrap_or(Status::Clean);
    let written = match args.format {
        ReportFormat::Text => report::text(&scans),
        ReportFormat::Markdown => report::markdown(&scans),
        ReportFormat::Json => report::json(&scans, status),
        ReportFormat::Sarif => sarif::sarif(&scans, &args.source_root),
    };
    // A closed stdout (`| head`) must not change the verdict.
    std::io::stdout().write_all(written.as_bytes()).ok();
    let mut exit = match status {
        Status::Exposed => ExitStatus::Failed,
        Status::Unsure | Status::CannotTell => ExitStatus::Unsure,
        Status::Clean => ExitStatus::Ok,
    };
    if args.submit {
        let Some(token) = args.token.token()? else {
            bail!("--submit needs a token with the ingest scope: --token, SLOPEWATCH_TOKEN or --token-file")
        };
        let server = args.server.as_deref().unwrap_or_default();
        let client = Client::new(server, &token, args.retry.policy())?;
        let spool = args.spool.open()?;
        for (scan, a) in scans.iter().zip(&artifacts) {
            if let Some(submission) = submission(scan, a) {
                // A scan the server refused must not read as exposed (1): it is an error (2).
                let delivered = match deliver_exposure(&client, &spool, &submission)? {
                    ExitStatus::Failed => ExitStatus::BadInput,
                    other => other,
                };
                exit = exit.worst(delivered);
            }
        }
    }
    Ok(exit)
}

/// The order of the statuses, worst first.
fn rank(s: Status) -> u8 {
    match s {
        Status::Exposed => 0,
        Status::CannotTell => 1,
        Status::Unsure => 2,
        Status::Clean => 3,
    }
}

/// Why the calls of `a` cannot be read, with the way out; None when they can. `judges` are the
/// toolchains whose libc code was looked for.
fn cannot_read_calls(a: &Artifact, judges: &[ToolchainVerdicts]) -> Option<String> {
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
fn pick_judge(
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
            let named: Vec<String> = judges.iter().map(|j| j.tc.spec.name.clone()).collect();
            let mut found = None;
            for arg in discover::on_host(root).args {
                let name = arg.split(['=', '@']).next().unwrap_or_default().to_string();
                if named.contains(&name) {
                    continue;
                }
                match ToolchainVerdicts::new(ToolchainArgs::one(&arg), root) {
                    Ok(j) => {
                        let fits = j.libc.name == a.libc.name && j.tc.arch == arch;
                        judges.push(j);
                        if fits {
                            found = Some(judges.len() - 1);
                            break;
                        }
                    }
                    Err(e) => eprintln!("note: {arg} cannot judge: {e:#}"),
                }
            }
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
fn unjudged(a: &Artifact, path: &Path) -> Scan {
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
fn judge(scan: &mut Scan, a: &Artifact, judge: &ToolchainVerdicts, accepted: &Suppressions, today: time::Date) {
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
fn submission(scan: &Scan, a: &Artifact) -> Option<ExposureSubmission> {
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
