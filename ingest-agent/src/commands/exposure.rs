//! `exposure`: scans each artifact, judges it (see the `exposure` module), writes the answer in the
//! format asked for, and stores the scans with `--submit`.

use crate::artifact::{self, Artifact, LibcFound, Naming};
use crate::builds::contracts;
use crate::cli::{ExposureArgs, ReportFormat};
use crate::config::cache_root;
use crate::exit::ExitStatus;
use crate::exposure::accept::Suppressions;
use crate::exposure::judge::{cannot_read_calls, judge, pick_judge, rank, submission, unjudged};
use crate::exposure::report::{self, Status};
use crate::exposure::verdicts::{self, ToolchainVerdicts};
use crate::exposure::{owner, sarif};
use crate::server::client::Client;
use crate::server::deliver::deliver_exposure;
use anyhow::{bail, Result};
use slopewatch_core::exposure::Linkage;
use std::collections::BTreeSet;
use std::io::Write;

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
                let stripped = !a.symbols;
                // Symbols name the functions already: only a stripped artifact is read again, with
                // the fingerprints that name its libc's functions.
                if stripped {
                    *a = artifact::scan(path, &names, Naming { prints: &o.prints, symbols: args.symbols.as_deref() })?;
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
                if stripped {
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
