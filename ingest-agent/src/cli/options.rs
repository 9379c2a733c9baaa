//! What the options mean: the budget, limits and retry policy they set, the token, client and
//! spool they name, and the toolchains and workloads they give.

use super::{GateArgs, MeasureArgs, ReportArgs, RetryArgs, ServerArgs, SpoolArgs, SweepArgs, TokenArgs, ToolchainArgs};
use crate::builds::workloads::{self, Workload};
use crate::config::{self, user_dir, ToolchainSpec};
use crate::measure::engine::MeasurePlan;
use crate::measure::{meter, Budget};
use crate::search::found;
use crate::server::client::{Client, RetryPolicy};
use crate::server::spool::Spool;
use anyhow::{bail, Context, Result};
use slopewatch_core::verdict::NoiseRule;
use slopewatch_core::verdict::{Limits, DEFAULT_MAX_SLOPE};
use slopewatch_core::wire::{Counter, FoundProbe, Measure};
use std::io::Write;
use std::path::Path;

impl SweepArgs {
    /// The budget, with `start` as every workload's first size when given.
    pub(crate) fn budget(&self, start: Option<u64>) -> Budget {
        Budget { reps: self.reps, per_size: self.size_budget, total: self.total_budget, start, max: self.max_size }
    }

    /// The measures asked for, each once, with the counter: `--measure` and `--counter`, else the
    /// `config` file's `measure` and `counter`, else wall time.
    pub(crate) fn measures(&self, config: Option<&Path>) -> Result<(Vec<Measure>, Option<Counter>)> {
        let file = match config {
            Some(path) if self.measure.is_none() || self.counter.is_none() => Some(config::load_config(path)?),
            _ => None,
        };
        let mut measures = self
            .measure
            .clone()
            .or_else(|| file.as_ref().and_then(|f| f.measure.clone()))
            .unwrap_or_else(|| vec![Measure::Wall]);
        let mut seen = std::collections::HashSet::new();
        measures.retain(|m| seen.insert(*m));
        let counter = self.counter.or_else(|| file.and_then(|f| f.counter));
        Ok((measures, counter))
    }
}

impl MeasureArgs {
    /// What these flags ask to measure: the toolchains (Zig releases fetched first), the
    /// workloads, the budget, the measures with their counter, profiles and build jobs.
    pub(crate) fn plan(&self) -> Result<MeasurePlan> {
        self.plan_with(Vec::new())
    }

    /// [`MeasureArgs::plan`], with `served` (a server's found probes) measured beside those of
    /// the found probes' file.
    pub(crate) fn plan_with(&self, served: Vec<FoundProbe>) -> Result<MeasurePlan> {
        let root = config::cache_root(self.cache_dir.clone())?;
        let specs = self.toolchains.specs(&root)?;
        let workloads = self.selected_with(served)?;
        if let (Some(s), Some(m)) = (self.start_size, self.sweep.max_size) {
            if s > m {
                bail!("--start-size {s} is larger than --max-size {m}");
            }
        }
        let (measures, counter) = self.sweep.measures(self.toolchains.config_file())?;
        let commands = workloads.iter().any(|w| w.command().is_some());
        let metrics = measures.into_iter().map(|m| meter::resolve(m, counter, commands)).collect::<Result<Vec<_>>>()?;
        let profile_all = self.profile
            || self.toolchains.config_file().map(config::load_config).transpose()?.is_some_and(|c| c.profile);
        Ok(MeasurePlan {
            budget: self.sweep.budget(self.start_size),
            build_jobs: self.build_jobs(),
            jobs: self.jobs.map_or_else(crate::measure::side_by_side::default_jobs, usize::from),
            control: self.control.clone(),
            root,
            specs,
            workloads,
            metrics,
            profile_all,
        })
    }

    /// The workloads asked for: the built-in ones, the contract probes, the config file's and
    /// those of `--workload-file`, narrowed to `--workloads`.
    pub(crate) fn selected(&self) -> Result<Vec<Workload>> {
        self.selected_with(Vec::new())
    }

    /// [`MeasureArgs::selected`], the found probes of the file and of `served` among the probes.
    pub(crate) fn selected_with(&self, served: Vec<FoundProbe>) -> Result<Vec<Workload>> {
        let mut catalogue = workloads::builtin();
        catalogue.extend(workloads::probes());
        let mut probes = found::load(&found::path(self.probes.as_deref(), self.toolchains.config_file())?)?;
        found::merge(&mut probes, served);
        catalogue.extend(found::workloads(&probes));
        catalogue.extend(self.toolchains.workloads()?);
        for f in &self.workload_files {
            let w = workloads::load_custom(f)?;
            if catalogue.iter().any(|c| c.name == w.name) {
                bail!("workload {} from {} has the name of another workload", w.name, f.display());
            }
            catalogue.push(w);
        }
        workloads::select(catalogue, self.workloads.as_deref())
    }

    /// How many workloads to build at once: `--build-jobs`, else one per CPU.
    pub(crate) fn build_jobs(&self) -> usize {
        match self.build_jobs {
            Some(n) => usize::from(n),
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

impl RetryArgs {
    pub(crate) fn policy(&self) -> RetryPolicy {
        RetryPolicy {
            attempts: self.attempts,
            base: self.retry_base,
            timeout: self.request_timeout,
            ..RetryPolicy::default()
        }
    }
}

impl GateArgs {
    pub(crate) fn limits(&self) -> Limits {
        let max_slope = match (self.max_slope, self.max_class) {
            (None, None) => Some(DEFAULT_MAX_SLOPE),
            (slope, _) => slope,
        };
        let noise = NoiseRule { min_r2: self.min_r2, ci_margin: self.ci_margin, ..NoiseRule::default() };
        Limits { noise, max_slope, max_class: self.max_class, contract: None }
    }
}

impl ToolchainArgs {
    /// One toolchain, as `--toolchain` gives it (`musl-gcc=musl-gcc`, `zig@0.16.0`).
    pub(crate) fn one(arg: &str) -> ToolchainArgs {
        ToolchainArgs {
            toolchains: vec![arg.to_string()],
            config: None,
            version_from: Vec::new(),
            link_after: Vec::new(),
            runner: Vec::new(),
            only: None,
        }
    }

    /// The same toolchains narrowed to the one named `name`.
    pub(crate) fn only(&self, name: &str) -> ToolchainArgs {
        ToolchainArgs { only: Some(name.to_string()), ..self.clone() }
    }

    /// The toolchains given, Zig releases of `zig@VERSION` fetched into `cache` first.
    pub(crate) fn specs(&self, cache: &Path) -> Result<Vec<ToolchainSpec>> {
        let mut specs = match &self.config {
            Some(path) => config::load_config(path)?.toolchains,
            None => Vec::new(),
        };
        specs.extend(crate::builds::fetch::cli_toolchains(&self.toolchains, cache)?);
        if specs.is_empty() {
            let found = crate::builds::discover::on_host(cache);
            if found.args.is_empty() {
                bail!(
                    "no toolchain found on this host (gcc, clang, cc, musl-gcc or zig on PATH, or a Zig release \
                     fetched with `toolchains fetch zig VERSION`): install one, or give --toolchain NAME=COMMAND \
                     (e.g. --toolchain gcc-glibc=gcc), --toolchain zig@VERSION or --config FILE"
                );
            }
            eprintln!("no --toolchain given; found on this host: {}", found.args.join(", "));
            for l in &found.left_out {
                eprintln!("  left out: {l}");
            }
            specs = found.specs(cache)?;
        }
        for v in &self.version_from {
            config::apply_version_from(&mut specs, v)?;
        }
        for l in &self.link_after {
            config::apply_link_after(&mut specs, l)?;
        }
        for r in &self.runner {
            config::apply_runner(&mut specs, r)?;
        }
        for spec in &specs {
            if let Some(missing) = spec.link_after.iter().find(|a| !a.starts_with('-') && !Path::new(a).is_file()) {
                bail!("toolchain {}: link_after: {missing:?} is not a file", spec.name);
            }
        }
        config::check_unique(&specs)?;
        if let Some(only) = &self.only {
            specs.retain(|s| &s.name == only);
        }
        Ok(specs)
    }

    /// The config file given, if any.
    pub(crate) fn config_file(&self) -> Option<&Path> {
        self.config.as_deref()
    }

    /// The `[[workloads]]` of the config file, checked.
    pub(crate) fn workloads(&self) -> Result<Vec<Workload>> {
        match &self.config {
            Some(path) => workloads::configured(&config::load_config(path)?.workloads, path),
            None => Ok(Vec::new()),
        }
    }
}

impl TokenArgs {
    /// The token given, read from its file where that is how it was given; `None` when neither.
    pub(crate) fn token(&self) -> Result<Option<String>> {
        match (&self.token, &self.token_file) {
            (Some(t), _) => Ok(Some(t.clone())),
            (None, Some(path)) => Ok(Some(
                std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read token file {}", path.display()))?
                    .trim()
                    .to_string(),
            )),
            (None, None) => Ok(None),
        }
    }
}

impl ReportArgs {
    /// Where the terminal table goes: stderr when the report takes stdout.
    pub(crate) fn terminal(&self) -> Box<dyn Write> {
        if self.report.as_deref() == Some(Path::new("-")) {
            Box::new(std::io::stderr())
        } else {
            Box::new(std::io::stdout())
        }
    }
}

impl ServerArgs {
    pub(crate) fn client(&self) -> Result<Client> {
        let Some(token) = self.token.token()? else {
            bail!("a token is required: --token, SLOPEWATCH_TOKEN or --token-file")
        };
        // Only `import --out` leaves it unset, and it sends nothing.
        let server = self.server.as_deref().context("--server is required to send a run")?;
        Client::new(server, &token, self.retry.policy())
    }
}

impl SpoolArgs {
    pub(crate) fn open(&self) -> Result<Spool> {
        let dir = match &self.spool_dir {
            Some(d) => d.clone(),
            None => user_dir("XDG_STATE_HOME", ".local/state")?.join("slopewatch/spool"),
        };
        Ok(Spool::new(dir))
    }
}
