//! The one way to the server for runs, bisections, exposure scans and found probes: each is saved in the spool first (so a
//! crash cannot lose it), and everything that leaves the spool, now or at a later flush, leaves
//! through [`deliver_spooled`].

use crate::exit::ExitStatus;
use crate::server::client::{Client, Outcome, StoredRun};
use crate::server::spool::{Holds, Spool, SpooledBisection};
use anyhow::{Context, Result};
use slopewatch_core::answers::{BisectionAccepted, ExposureAccepted, FoundProbesAccepted};
use slopewatch_core::bisection::BisectionSubmission;
use slopewatch_core::exposure::ExposureSubmission;
use slopewatch_core::wire::{FoundProbes, RunSubmission};
use std::path::Path;

/// Spools each run, then sends it. A run the spool cannot keep (full disk, read-only directory)
/// is still sent, and the exit status says the spool is broken.
pub fn deliver_runs(client: &Client, spool: &Spool, runs: &[RunSubmission]) -> Result<ExitStatus> {
    let mut status = ExitStatus::Ok;
    for run in runs {
        let one = match spool.save(run) {
            Ok(path) => deliver_spooled(client, spool, &path)?,
            Err(e) => deliver_unspooled(client, spool, run, &e)?,
        };
        status = status.worst(one);
    }
    Ok(status)
}

/// Spools the bisection for regression `id` under `spool`'s bisections, then sends it; it stays
/// there when the server cannot be reached, for a flush to send later.
pub fn deliver_bisection(
    client: &Client,
    spool: &Spool,
    regression: i64,
    b: &BisectionSubmission,
) -> Result<ExitStatus> {
    let spool = spool.bisections();
    let path = spool.save_bisection(&SpooledBisection { regression, bisection: b.clone() })?;
    deliver_spooled(client, &spool, &path)
}

/// Spools the exposure scan under `spool`'s exposures, then sends it; it stays there when the
/// server cannot be reached, for a flush to send later.
pub fn deliver_exposure(client: &Client, spool: &Spool, scan: &ExposureSubmission) -> Result<ExitStatus> {
    let spool = spool.exposures();
    let path = spool.save_exposure(scan)?;
    deliver_spooled(client, &spool, &path)
}

/// Spools found probes under `spool`'s found-probes, then sends them; they stay there when the
/// server cannot be reached, for a flush to send later.
pub fn deliver_found_probes(client: &Client, spool: &Spool, found: &FoundProbes) -> Result<ExitStatus> {
    let spool = spool.found_probes();
    let path = spool.save_found_probes(found)?;
    deliver_spooled(client, &spool, &path)
}

/// Sends what waits in the spool, oldest first, bisections after runs (their steps link to the
/// runs), then exposure scans and found probes; stops at the first transient failure.
pub fn flush(client: &Client, spool: &Spool) -> Result<ExitStatus> {
    let mut status = flush_one(client, spool)?;
    for next in [spool.bisections(), spool.exposures(), spool.found_probes()] {
        if status == ExitStatus::Spooled {
            break;
        }
        status = status.worst(flush_one(client, &next)?);
    }
    Ok(status)
}

/// Delivers what waits in one spool, oldest first; stops at the first left in it, as the server
/// is then out of reach. Returns the worst status.
fn flush_one(client: &Client, spool: &Spool) -> Result<ExitStatus> {
    let mut status = ExitStatus::Ok;
    for path in spool.pending()? {
        let one = deliver_spooled(client, spool, &path)?;
        status = status.worst(one);
        if one == ExitStatus::Spooled {
            break;
        }
    }
    Ok(status)
}

/// Sends the run or bisection spooled at `path` and settles it: once stored it is reported and
/// the file goes; refused, it moves to `rejected/`; failed, it stays.
pub fn deliver_spooled(client: &Client, spool: &Spool, path: &Path) -> Result<ExitStatus> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    match spool.holds() {
        Holds::Runs => {
            let outcome = client.deliver(&bytes, |attempt, why, wait| {
                eprintln!("{}: attempt {attempt} failed ({why}); retrying in {wait:.1?}", path.display());
            });
            let failed = RunSubmission::from_json(&bytes).ok().map(|run| failed_of(&run));
            settle(spool, path, "run", outcome, |stored| print_stored(client, &stored, failed))
        }
        Holds::Bisections => {
            let spooled =
                SpooledBisection::read(&bytes).with_context(|| format!("{} is unreadable", path.display()))?;
            let (id, regression) = (spooled.bisection.bisection_id, spooled.regression);
            let outcome =
                client.deliver_bisection(regression, &serde_json::to_vec(&spooled.bisection)?, |attempt, why, wait| {
                    eprintln!("bisection {id}: attempt {attempt} failed ({why}); retrying in {wait:.1?}")
                });
            settle(spool, path, "bisection", outcome, |answer: BisectionAccepted| {
                // The regression may already hold the same search under another id: that one is answered.
                let same = if answer.bisection_id == id {
                    String::new()
                } else {
                    format!(" as bisection {}, already stored with the same content", answer.bisection_id)
                };
                println!("bisection {id} recorded on regression {regression}{same}{}", at(&answer.url));
                if let Some(warning) = &answer.warning {
                    eprintln!("warning: the server says: {warning}");
                }
            })
        }
        Holds::Exposures => {
            let scan = ExposureSubmission::from_json(&bytes)
                .map_err(|e| anyhow::anyhow!("{} is unreadable: {e}", path.display()))?;
            let outcome = client.deliver_exposure(&bytes, |attempt, why, wait| {
                eprintln!("scan of {}: attempt {attempt} failed ({why}); retrying in {wait:.1?}", scan.artifact)
            });
            settle(spool, path, "scan", outcome, |answer: ExposureAccepted| {
                // On stderr: stdout carries the scan's own answer, JSON or Markdown.
                let what = if answer.created { "stored" } else { "already stored" };
                eprintln!("scan of {} {what}{}", scan.artifact, at(&answer.url));
            })
        }
        Holds::FoundProbes => {
            let found =
                FoundProbes::parse(&bytes).map_err(|e| anyhow::anyhow!("{} is unreadable: {e}", path.display()))?;
            let outcome = client.deliver_found_probes(&bytes, |attempt, why, wait| {
                eprintln!("found probes: attempt {attempt} failed ({why}); retrying in {wait:.1?}")
            });
            settle(spool, path, "found probes", outcome, |answer: FoundProbesAccepted| {
                eprintln!("{} found probes sent to {}: {} new to it", found.probes.len(), client.server(), answer.new);
            })
        }
    }
}

/// Settles the delivery of the `what` (`run`, `bisection`) spooled at `path`.
fn settle<T>(
    spool: &Spool,
    path: &Path,
    what: &str,
    outcome: Outcome<T>,
    stored: impl FnOnce(T),
) -> Result<ExitStatus> {
    match outcome {
        Outcome::Stored(answer) => {
            stored(answer);
            spool.remove(path).with_context(|| {
                format!("the {what} was stored but stays in the spool; a later flush sends it once more, harmlessly")
            })?;
            Ok(ExitStatus::Ok)
        }
        Outcome::Rejected { status: Some(status), message } => {
            let moved = spool.reject(path, &format!("HTTP {status}: {message}"))?;
            eprintln!("error: the server rejected {} (HTTP {status}): {message}", moved.display());
            Ok(ExitStatus::Failed)
        }
        Outcome::Rejected { status: None, message } => {
            let moved = spool.reject(path, &message)?;
            eprintln!("error: {} was not sent: {message}", moved.display());
            Ok(ExitStatus::Failed)
        }
        Outcome::Failed(why) => {
            eprintln!("could not deliver ({why}); kept in the spool as {}", path.display());
            Ok(ExitStatus::Spooled)
        }
    }
}

/// Sends a run that has no copy in the spool; whatever happens, the status is a failure so that
/// the broken spool is noticed before it costs a run.
fn deliver_unspooled(
    client: &Client,
    spool: &Spool,
    run: &RunSubmission,
    why_not_kept: &anyhow::Error,
) -> Result<ExitStatus> {
    eprintln!(
        "error: run {} could not be kept in the spool {}: {why_not_kept:#}; sending it without a copy on disk",
        run.run_id,
        spool.dir().display()
    );
    let outcome = client.deliver(&serde_json::to_vec(run)?, |attempt, why, wait| {
        eprintln!("run {}: attempt {attempt} failed ({why}); retrying in {wait:.1?}", run.run_id);
    });
    match outcome {
        Outcome::Stored(stored) => print_stored(client, &stored, Some(failed_of(run))),
        Outcome::Rejected { status: Some(status), message } => {
            eprintln!("error: the server rejected run {} (HTTP {status}): {message}", run.run_id);
        }
        Outcome::Rejected { status: None, message } => eprintln!("error: {message}"),
        Outcome::Failed(why) => eprintln!(
            "error: run {} could not be delivered ({why}) and could not be kept in the spool: it was not saved; \
             free the spool directory and measure or submit it again",
            run.run_id
        ),
    }
    Ok(ExitStatus::Failed)
}

/// How many of a run's workloads failed, of how many.
fn failed_of(run: &RunSubmission) -> (usize, usize) {
    (run.failures().count(), run.workloads.len())
}

/// ` at URL`, or nothing for a server that gave no URL.
fn at(url: &str) -> String {
    if url.is_empty() {
        String::new()
    } else {
        format!(" at {url}")
    }
}

/// `run ID stored at URL`, and how many of its workloads failed when any did: a run stored with
/// failures is told apart from one that was not delivered. What was left out for a server that
/// does not accept it is said once, on stderr.
fn print_stored(client: &Client, stored: &StoredRun, failed: Option<(usize, usize)>) {
    let a = &stored.answer;
    let what = if a.created { "stored" } else { "already stored" };
    let failed = match failed {
        Some((n @ 1.., of)) => format!(" ({n} of {of} workloads failed)"),
        _ => String::new(),
    };
    println!("run {} {what}{}{failed}", a.run_id, at(&a.url));
    for dropped in &stored.dropped {
        eprintln!("{}", dropped.message(client.server(), &a.run_id));
    }
}
