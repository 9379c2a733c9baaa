//! `run`, `measure` and `check`: measure every workload with every toolchain, print the table,
//! and send the runs, write them to a file, or judge them as the CI gate.

use crate::cli::{MeasureArgs, ReportArgs, ServerArgs, SpoolArgs, TokenArgs};
use crate::exit::ExitStatus;
use crate::measure::engine::{measure_all, measure_gated, Measurements};
use crate::measure::judged::{judge_all, Judged};
use crate::output::{contracts, control, costs, junit, markdown, table};
use crate::search::found;
use crate::server::baseline;
use crate::server::client::Client;
use crate::server::deliver::{self, deliver_runs};
use anyhow::{Context, Result};
use slopewatch_core::verdict::{Decision, Limits, DEFAULT_MAX_SLOPE};
use slopewatch_core::wire::RunSubmission;
use std::io::Write;
use std::path::Path;

/// `run`: sends what waits in the spool, measures, prints the table, sends the runs and writes the
/// report where asked.
pub fn run(measure: &MeasureArgs, server: &ServerArgs, spool: &SpoolArgs, report: &ReportArgs) -> Result<ExitStatus> {
    let client = server.client()?;
    let spool = spool.open()?;
    let flushed = deliver::flush(&client, &spool)?;
    let served = match &measure.probes_from {
        Some(url) => found::served(&Client::reader(url, server.token.token()?.as_deref())?),
        None => Vec::new(),
    };
    let mut measured = measure_all(&measure.plan_with(served)?)?;
    let limits = Limits { max_slope: Some(DEFAULT_MAX_SLOPE), ..Limits::default() };
    let rows = judged(&mut measured, &limits);
    print_rows(&rows, &mut *report.terminal());
    let delivered = deliver_runs(&client, &spool, &measured.runs)?;
    let reported = write_report(report, "run", &measured.runs, &rows, &limits, &server.token, &[]);
    reported.and(write_junit(report, "run", &measured, &rows, &limits))?;
    Ok(flushed.worst(delivered).worst(ExitStatus::failed_if(measured.failures > 0)))
}

/// `measure`: measures, prints the table and writes the runs to `out`.
pub fn measure(measure: &MeasureArgs, out: &Path) -> Result<ExitStatus> {
    let mut measured = measure_all(&measure.plan()?)?;
    let limits = Limits { max_slope: Some(DEFAULT_MAX_SLOPE), ..Limits::default() };
    print_rows(&judged(&mut measured, &limits), &mut std::io::stdout());
    write_runs(out, &measured.runs)?;
    Ok(ExitStatus::failed_if(measured.failures > 0))
}

/// The gate: measures (a workload unsure on the limits once more), prints the table and what was
/// over or unsure, writes the report where asked, and returns 1 when a workload is over a limit or
/// failed, else 3 when one stayed unsure.
/// With `--control`, each workload over a limit is also attributed by that lineage's rows.
pub fn check(measure: &MeasureArgs, limits: &Limits, report: &ReportArgs, token: &TokenArgs) -> Result<ExitStatus> {
    let control = measure.control.as_deref();
    let served = match &measure.probes_from {
        Some(server) => found::served(&Client::reader(server, token.token()?.as_deref())?),
        None => Vec::new(),
    };
    let mut measured = measure_gated(&measure.plan_with(served)?, limits, true)?;
    let mut rows = judged(&mut measured, limits);
    for r in &mut rows {
        r.remeasured = measured.remeasured.get(&(r.label(), r.workload.clone())).cloned();
    }
    print_rows(&rows, &mut *report.terminal());
    let (mut over_slope, mut over_class, mut over_contract) = (Vec::new(), Vec::new(), Vec::new());
    let mut unsure = Vec::new();
    for r in &rows {
        match r.counted() {
            None => {}
            Some(Decision::Over(breach)) => {
                if breach.slope.is_some() {
                    over_slope.push(r.name());
                }
                if breach.class.is_some() {
                    over_class.push(r.name());
                }
                if let Some(expected) = breach.contract {
                    let measured = r.complexity.as_ref().and_then(|c| c.class).map_or("-", |c| c.label());
                    over_contract.push(format!("{} ({measured}, held to {})", r.name(), expected.label()));
                }
            }
            Some(Decision::Unsure(_)) => unsure.push(r.name()),
            Some(Decision::Under) => {}
        }
    }
    let failed: Vec<String> =
        rows.iter().filter_map(|r| r.failure.as_ref().map(|f| format!("{} ({})", r.name(), f.kind.label()))).collect();
    if let (Some(max), false) = (limits.max_slope, over_slope.is_empty()) {
        eprintln!("slope over {max}: {}", over_slope.join(", "));
    }
    if let (Some(max), false) = (limits.max_class, over_class.is_empty()) {
        eprintln!("class over {}: {}", max.label(), over_class.join(", "));
    }
    if !over_contract.is_empty() {
        eprintln!("over contract: {}", over_contract.join(", "));
    }
    if !failed.is_empty() {
        eprintln!("failed: {}", failed.join(", "));
    }
    if !unsure.is_empty() {
        eprintln!("unsure after measuring twice: {}", unsure.join(", "));
    }
    let attributed = match control {
        Some(c) => control::attribute(&rows, &measured.runs, c).map_err(anyhow::Error::msg)?,
        None => Vec::new(),
    };
    for line in &attributed {
        eprintln!("control: {line}");
    }
    let reported = write_report(report, "check", &measured.runs, &rows, limits, token, &attributed);
    reported.and(write_junit(report, "check", &measured, &rows, limits))?;
    let over = !over_slope.is_empty() || !over_class.is_empty() || !over_contract.is_empty();
    let status = ExitStatus::failed_if(measured.failures > 0 || over);
    Ok(if status == ExitStatus::Ok && !unsure.is_empty() { ExitStatus::Unsure } else { status })
}

/// Every workload `measured` judged by `limits`, and those a measure could not count.
fn judged(measured: &mut Measurements, limits: &Limits) -> Vec<Judged> {
    let mut rows = judge_all(&measured.runs, limits);
    rows.append(&mut measured.unmeasurable);
    rows
}

/// Prints the table of an import: slopes judged against `max_slope` by the default noise rule.
pub(super) fn show(runs: &[RunSubmission], max_slope: f64) {
    let limits = Limits { max_slope: Some(max_slope), ..Limits::default() };
    print_rows(&judge_all(runs, &limits), &mut std::io::stdout());
}

/// Prints the slope table, what was unsure below it, and every failure in full.
fn print_rows(rows: &[Judged], out: &mut dyn Write) {
    let contracts = contracts::table(rows);
    let loops = table::table(rows);
    let gap = if loops.is_empty() || contracts.is_empty() { "" } else { "\n" };
    let mut text = format!("{loops}{gap}{contracts}{}", table::doubts(rows));
    let costs = costs::costs(rows);
    if !costs.is_empty() {
        text.push_str(&format!("\n{costs}"));
    }
    let failures = table::failures(rows);
    if !failures.is_empty() {
        text.push_str(&format!("\nfailures:\n{failures}"));
    }
    let profiles = table::profiles(rows);
    if !profiles.is_empty() {
        text.push_str(&format!("\nwhere the instructions went:\n{profiles}"));
    }
    // A closed stdout (`| head`) must not stop the gate from reporting its verdict.
    out.write_all(text.as_bytes()).ok();
}

/// Writes the Markdown report to --report and appends it to the step summary, where either is
/// given in `args`, with the baseline read first when one is asked for. A baseline that cannot be
/// read is a warning and a line in the report; a report that cannot be written is an error.
fn write_report(
    args: &ReportArgs,
    command: &str,
    runs: &[RunSubmission],
    rows: &[Judged],
    limits: &Limits,
    token: &TokenArgs,
    attributed: &[String],
) -> Result<()> {
    let step_summary = args.step_summary.as_deref().filter(|p| !p.as_os_str().is_empty());
    if args.report.is_none() && step_summary.is_none() {
        if args.baseline.is_some() {
            eprintln!("warning: --baseline has no effect without --report or GITHUB_STEP_SUMMARY");
        }
        return Ok(());
    }
    let baseline = args.baseline.as_ref().zip(args.baseline_server.as_deref()).map(|(spec, server)| {
        let mut workloads: Vec<String> = rows.iter().map(|r| r.workload.clone()).collect();
        workloads.sort();
        workloads.dedup();
        let fetched = token.token().and_then(|token| {
            let client = Client::reader(server, token.as_deref())?;
            baseline::fetch(&client, spec, &workloads)
        });
        fetched.map_err(|e| {
            eprintln!("warning: the report leaves out the baseline {spec}: {e:#}");
            format!("{e:#}")
        })
    });
    let mut md = markdown::render(&markdown::Report {
        command,
        toolchains: runs.iter().map(|r| &r.toolchain).collect(),
        rows,
        limits,
        baseline: baseline.as_ref(),
    });
    md.push_str(&control::markdown(attributed));
    let written = match args.report.as_deref() {
        Some(p) if p == Path::new("-") => {
            std::io::stdout().write_all(md.as_bytes()).context("cannot write the report to stdout")
        }
        Some(p) => std::fs::write(p, &md).with_context(|| format!("cannot write the report to {}", p.display())),
        None => Ok(()),
    };
    let appended = match step_summary {
        Some(p) => std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .and_then(|mut f| f.write_all(format!("{md}\n").as_bytes()))
            .with_context(|| format!("cannot append the report to the step summary {}", p.display())),
        None => Ok(()),
    };
    written.and(appended)
}

/// Writes the JUnit XML to --junit, where it is given: to a temporary file beside it, renamed over
/// it once complete, so a CI system never reads half a file.
fn write_junit(
    args: &ReportArgs,
    command: &str,
    measured: &Measurements,
    rows: &[Judged],
    limits: &Limits,
) -> Result<()> {
    let Some(path) = args.junit.as_deref() else { return Ok(()) };
    let xml =
        junit::render(&junit::TestReport { command, runs: &measured.runs, rows, limits, elapsed: &measured.elapsed });
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let write = || -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(xml.as_bytes())?;
        // As readable as a file the report writes, not the temporary file's owner-only mode.
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644))?;
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    };
    write().with_context(|| format!("cannot write the JUnit XML to {}", path.display()))
}

/// Writes runs as `measure --out` does: one JSON object, or an array of them for several.
pub(super) fn write_runs(out: &Path, runs: &[RunSubmission]) -> Result<()> {
    let json = if runs.len() == 1 { serde_json::to_vec_pretty(&runs[0])? } else { serde_json::to_vec_pretty(&runs)? };
    std::fs::write(out, json).with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!("wrote {} run(s) to {}", runs.len(), out.display());
    Ok(())
}
