//! `bisect`: from "this version is quadratic, that one was not" to the first bad toolchain build,
//! printed, and recorded on the regression when one is named.

use crate::bisect::candidates::{read_candidates, read_versions, Candidates};
use crate::bisect::search::{self, BisectPlan};
use crate::bisect::{step_line, summary};
use crate::builds::cache::BuildCache;
use crate::builds::workloads;
use crate::cli::BisectArgs;
use crate::config::{self, cache_root};
use crate::exit::ExitStatus;
use crate::measure::meter;
use crate::server::client::Client;
use crate::server::deliver::{self, deliver_runs};
use crate::server::regression;
use crate::server::spool::Spool;
use anyhow::{bail, Context, Result};
use slopewatch_core::bisection::Outcome;

/// `bisect`: works out the range (from the flags, or the stored regression), bisects it, prints
/// each step and where the growth starts, and records the answer on the regression.
pub fn bisect(args: &BisectArgs, spool: &Spool) -> Result<ExitStatus> {
    let token = args.token.token()?;
    let client = match &args.server {
        Some(server) => {
            let token =
                token.as_deref().context("--server needs a token: give --token, SLOPEWATCH_TOKEN or --token-file")?;
            Some(Client::new(server, token, args.retry.policy())?)
        }
        None => None,
    };
    // The regression is read only for what the flags leave out, so a bisection given in full
    // still runs, and is spooled, while the server is down.
    let given_in_full = args.lineage.is_some() && args.good.is_some() && args.bad.is_some() && args.workloads.is_some();
    let facts = match (args.regression, &client) {
        (Some(id), Some(client)) if !given_in_full => Some(regression::read(client, id)?),
        _ => None,
    };
    let pick = |given: &Option<String>, stored: Option<&String>, flag: &str| -> Result<String> {
        given
            .clone()
            .or_else(|| stored.cloned())
            .with_context(|| format!("give {flag}, or --regression to take it from"))
    };
    let series = pick(&args.lineage, facts.as_ref().map(|f| &f.lineage), "--lineage")?;
    // A series of another architecture than x86-64 is stored as `NAME (ARCH)`.
    let (lineage, arch) = slopewatch_core::arch::split_lineage(&series);
    config::check_lineage_name(lineage)?;
    // A plain name read from a regression is x86-64's; given by hand, the candidates tell.
    let arch = (lineage != series || facts.is_some()).then(|| arch.to_string());
    let good = pick(&args.good, facts.as_ref().map(|f| &f.last_good), "--good")?;
    let bad = pick(&args.bad, facts.as_ref().map(|f| &f.first_bad), "--bad")?;
    let mut catalogue = workloads::builtin();
    if let Some(path) = &args.config {
        catalogue.extend(workloads::configured(&config::load_config(path)?.workloads, path)?);
    }
    let names = match (&args.workloads, &facts) {
        (Some(names), _) => names.clone(),
        (None, Some(f)) if !f.workloads.is_empty() => f.workloads.clone(),
        _ => bail!("give --workloads, e.g. --workloads strchr"),
    };
    let selected = workloads::select(catalogue, Some(&names))?;
    let candidates = match (&args.candidates, &args.materialize, &args.versions) {
        (Some(file), _, _) => Candidates::Listed(read_candidates(file)?),
        (None, Some(script), Some(versions)) => {
            if !script.contains("{version}") {
                bail!("--materialize must contain {{version}}, where the version to fetch or build goes");
            }
            Candidates::Materialized { script: script.clone(), versions: read_versions(versions)? }
        }
        _ => bail!("give --candidates FILE, or --materialize SCRIPT with --versions FILE"),
    };
    let (measures, counter) = args.sweep.measures(args.config.as_deref())?;
    let [measure] = measures[..] else {
        bail!("bisect judges by one measure; --measure gave {}", measures.len());
    };
    let metric = meter::resolve(measure, counter, selected.iter().any(|w| w.command().is_some()))?;
    let root = cache_root(args.cache_dir.clone())?;
    let cache = BuildCache::new(root.join("builds"));
    let plan = BisectPlan {
        metric,
        lineage: lineage.to_string(),
        arch,
        runner: match &args.runner {
            Some(r) => config::split_words(r).context("--runner")?,
            None => Vec::new(),
        },
        workloads: selected,
        good,
        bad,
        max_slope: args.max_slope,
        max_class: args.max_class,
        budget: args.sweep.budget(None),
        cache: &cache,
        scratch: root.join("probe"),
        flags: config::split_words(&args.flags).context("--flags")?,
    };
    let mut status = ExitStatus::Ok;
    if let Some(client) = &client {
        status = status.worst(deliver::flush(client, spool)?);
    }
    let mut n = 0;
    let record = search::bisect(&plan, &candidates, |step, run| {
        n += 1;
        eprintln!("{}", step_line(n, step));
        let (Some(client), Some(run), true) = (&client, run, args.submit) else { return None };
        match deliver_runs(client, spool, std::slice::from_ref(run)) {
            Ok(delivered) => {
                status = status.worst(delivered);
                Some(run.run_id)
            }
            Err(e) => {
                eprintln!("error: the run of {} was not submitted: {e:#}", step.version);
                status = ExitStatus::Failed;
                None
            }
        }
    })?;
    println!("{}", summary(&record));
    if let (Some(client), Some(id)) = (&client, args.regression) {
        status = status.worst(deliver::deliver_bisection(client, spool, id, &record)?);
    }
    let found = record.outcome == Outcome::Found;
    Ok(status.worst(ExitStatus::failed_if(!found)))
}
