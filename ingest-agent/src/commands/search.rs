//! `search`: each function's worst input shape against its contract, on each toolchain; each
//! break saved as a found probe (and sent to the server under `--submit`).

use crate::builds::cache::BuildCache;
use crate::builds::error::BuildError;
use crate::builds::toolchain::{self, DetectedToolchain};
use crate::builds::workloads;
use crate::cli::{SearchArgs, SearchFormat, SearchMeasure};
use crate::config;
use crate::exit::ExitStatus;
use crate::measure::progress::{Plan, Progress};
use crate::measure::{meter, side_by_side};
use crate::search::climb::{Evaluated, FunctionResult, Searcher, Showed};
use crate::search::found;
use crate::search::space::{self, Shape};
use crate::search::words;
use crate::server::client::Client;
use crate::server::deliver;
use anyhow::{bail, Context, Result};
use serde_json::json;
use slopewatch_core::format;
use slopewatch_core::wire::{FoundProbe, FoundProbes, Measure, Metric};

/// Runs the search and says what it found: 1 with a break, 3 with a doubt only, 0 with neither.
pub fn search(args: &SearchArgs) -> Result<ExitStatus> {
    let functions = functions(args)?;
    let root = config::cache_root(args.cache_dir.clone())?;
    let specs = args.toolchains.specs(&root)?;
    let metric = metric(args.measure)?;
    let jobs = args.jobs.map_or_else(side_by_side::default_jobs, usize::from);
    let per_function =
        if args.all { args.budget.min(args.total_budget / functions.len().max(1) as u32) } else { args.budget };
    let cache = BuildCache::new(root.join("builds"));
    let progress = Progress::new(Plan {
        toolchains: specs.len(),
        workloads: specs.len() * functions.len(),
        per_workload: per_function,
        last_pace: None,
    });
    let mut report = Vec::new();
    let mut breaks: Vec<FoundProbe> = Vec::new();
    let mut doubts = 0;
    for (nth, spec) in specs.iter().enumerate() {
        progress.toolchain(nth + 1, &spec.name, None);
        let tc = toolchain::detect(spec, &root.join("probe")).with_context(|| format!("toolchain {}", spec.name))?;
        let w =
            workloads::found(Shape::base("strlen", "length").name(), Shape::base("strlen", "length").contract(), 1, 1);
        let binary = match cache.binary(&tc, &w) {
            Ok(b) => b,
            Err(BuildError::Compiler(e)) => bail!("{}: the shapes binary does not build: {e}", spec.name),
            Err(e) => return Err(anyhow::anyhow!("{}: {e}", spec.name)),
        };
        let searcher = Searcher { tc: &tc, binary: &binary, metric, jobs, watch: &progress };
        for function in &functions {
            progress.workload(function, false);
            let r = searcher.function(function, per_function);
            progress.workload_done();
            progress.note(&line(&tc, &r));
            for axis in &r.axes {
                if let Some(e) = &axis.found {
                    breaks.push(found_probe(&tc, e));
                }
                doubts += usize::from(axis.doubtful.is_some());
            }
            report.push((tc.spec.name.clone(), tc.version.clone(), r));
        }
    }
    let file = found::path(args.probes.as_deref(), args.toolchains.config_file())?;
    let added = if breaks.is_empty() { 0 } else { found::save(&file, &breaks)? };
    let mut status = if !breaks.is_empty() {
        ExitStatus::Failed
    } else if doubts > 0 {
        ExitStatus::Unsure
    } else {
        ExitStatus::Ok
    };
    match args.format {
        SearchFormat::Json => println!("{}", serde_json::to_string_pretty(&as_json(&report, &breaks, metric))?),
        SearchFormat::Text => {
            for b in &breaks {
                println!("{}", b.name());
            }
            if !breaks.is_empty() {
                eprintln!("{} breaks found, {added} new in {}", breaks.len(), file.display());
            }
        }
    }
    if args.submit && !breaks.is_empty() {
        let Some(token) = args.token.token()? else {
            bail!("--submit needs a token: --token, SLOPEWATCH_TOKEN or --token-file")
        };
        let server = args.server.as_deref().context("--submit needs --server")?;
        let client = Client::new(server, &token, args.retry.policy())?;
        let sent = deliver::deliver_found_probes(&client, &args.spool.open()?, &FoundProbes { probes: breaks })?;
        if sent != ExitStatus::Ok {
            status = status.worst(sent);
        }
    }
    Ok(status)
}

/// The functions asked for, each one the search has shapes for.
fn functions(args: &SearchArgs) -> Result<Vec<String>> {
    let known = space::functions();
    if args.all {
        return Ok(known.iter().map(|f| f.to_string()).collect());
    }
    for f in &args.functions {
        if !known.contains(&f.as_str()) {
            bail!("the search has no shapes for {f:?}; it has {}", known.join(", "));
        }
    }
    Ok(args.functions.clone())
}

/// What a shape's cost is measured by: counted instructions where they can be had, else wall
/// time (said on the terminal), or what `--measure` asks.
fn metric(asked: Option<SearchMeasure>) -> Result<Metric> {
    match asked {
        Some(SearchMeasure::Wall) => Ok(Metric::of(Measure::Wall, None)),
        Some(SearchMeasure::Instructions) => meter::resolve(Measure::Instructions, None, false),
        None => Ok(meter::resolve(Measure::Instructions, None, false).unwrap_or_else(|e| {
            eprintln!("note: instructions cannot be counted here ({e:#}); measuring wall time");
            Metric::of(Measure::Wall, None)
        })),
    }
}

/// One function's result on one line.
fn line(tc: &DetectedToolchain, r: &FunctionResult) -> String {
    let took = format::duration(r.elapsed.as_nanos() as f64);
    let shapes: usize = r.axes.iter().map(|a| a.evaluated).sum();
    if r.not_provided {
        return format!("{} {}: not provided by this libc", tc.spec.name, r.function);
    }
    let mut said: Vec<String> = Vec::new();
    for a in &r.axes {
        if let Some(e) = &a.found {
            said.push(format!("BREAK on {}: {} ({})", a.axis, verdict(e), words::describe(&e.shape)));
        } else if let Some(e) = &a.doubtful {
            said.push(format!("unsure on {}: {} ({})", a.axis, verdict(e), words::describe(&e.shape)));
        }
    }
    if said.is_empty() {
        said.push("no break found".to_string());
    }
    format!("{} {}: {shapes} shapes in {took}: {}", tc.spec.name, r.function, said.join("; "))
}

/// What an evaluated shape showed, in words.
fn verdict(e: &Evaluated) -> String {
    let contract = e.shape.axis().expected.label();
    match &e.outcome {
        Showed::Grows { class, .. } => format!(
            "{} against its contract of {contract}, growth {} at the top{}",
            class.map_or_else(|| "an unnamed class".to_string(), |c| c.label().to_string()),
            e.top.map_or_else(|| "-".to_string(), |t| format!("{t:.2}")),
            e.sizes.map(|(a, b)| format!(" ({a} to {b} bytes)")).unwrap_or_default()
        ),
        Showed::Bound(why) | Showed::Wrong(why) | Showed::Failed(why) => why.clone(),
        Showed::NotProvided => "not provided".to_string(),
    }
}

/// The found probe of a break found with `tc`.
fn found_probe(tc: &DetectedToolchain, e: &Evaluated) -> FoundProbe {
    let kind = e.outcome.kind().expect("a break");
    FoundProbe {
        function: e.shape.function.clone(),
        axis: e.shape.axis.clone(),
        shape: e.shape.text(),
        described: words::describe(&e.shape),
        contract: e.shape.contract(),
        kind,
        class: match e.outcome {
            Showed::Grows { class, .. } => class,
            _ => None,
        },
        toolchain: tc.spec.name.clone(),
        version: Some(tc.version.clone()).filter(|v| !v.is_empty()),
        found_at: time::OffsetDateTime::now_utc()
            .replace_nanosecond(0)
            .unwrap_or_else(|_| time::OffsetDateTime::now_utc()),
    }
}

/// `--format json`: every function searched, every break and every doubt.
fn as_json(report: &[(String, String, FunctionResult)], breaks: &[FoundProbe], metric: Metric) -> serde_json::Value {
    let functions: Vec<_> = report
        .iter()
        .map(|(tc, version, r)| {
            json!({
                "toolchain": tc, "version": version, "function": r.function, "not_provided": r.not_provided,
                "seconds": r.elapsed.as_secs_f64(),
                "shapes": r.axes.iter().map(|a| a.evaluated).sum::<usize>(),
                "unsure": r.axes.iter().filter_map(|a| a.doubtful.as_ref()).map(|e| json!({
                    "axis": e.shape.axis, "shape": e.shape.text(), "probe": e.shape.name(), "growth": e.top,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let breaks: Vec<_> = breaks
        .iter()
        .map(|b| {
            json!({
                "function": b.function, "axis": b.axis, "kind": b.kind, "class": b.class,
                "contract": b.contract.expected, "shape": b.shape, "described": b.described,
                "probe": b.name(), "toolchain": b.toolchain, "version": b.version,
            })
        })
        .collect();
    json!({ "measure": metric.label(), "functions": functions, "breaks": breaks })
}
