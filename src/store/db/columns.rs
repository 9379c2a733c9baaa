//! A run ready to store (`PendingRun`), and the rows of runs about to be stored column by column
//! (`NewRuns`), as the backends' batch inserts bind them.

use crate::model::WorkloadFit;
use slopewatch_core::wire::{
    Failure, FieldError, Host, Measurement, Metric, RunSubmission, SizeUnit, Toolchain, VersionFrom, WorkloadRun,
};
use std::collections::HashMap;
use time::OffsetDateTime;
use uuid::Uuid;

/// How a run reaches the store: from an agent just now, or carried over from another store.
#[derive(Debug, Clone)]
pub struct Arrival {
    /// When the run counts as received; also the time of what storing it creates (hosts,
    /// toolchains, workloads first seen, regressions and their events).
    pub received_at: OffsetDateTime,
    /// The digest the run was first submitted with, which resubmissions are compared against;
    /// `None` takes it from the run.
    pub content_hash: Option<String>,
    /// Set for a run whose raw samples were pruned before it was carried over. Such a run comes
    /// with empty sample lists; its fits' medians are what is stored.
    pub pruned: Option<PrunedSamples>,
}

/// What is left to know about raw samples that retention removed.
#[derive(Debug, Clone, Copy)]
pub struct PrunedSamples {
    pub at: OffsetDateTime,
    /// How many samples the run had.
    pub count: i32,
}

impl Arrival {
    /// A run submitted now.
    pub fn now() -> Arrival {
        Arrival { received_at: OffsetDateTime::now_utc(), content_hash: None, pruned: None }
    }
}

/// A run ready to store: what its rows need, owned, so a writer can store it beside others.
pub(in crate::store) struct PendingRun {
    pub run_id: Uuid,
    /// The digest resubmissions are compared against.
    pub content_hash: String,
    pub agent_version: String,
    pub started_at: OffsetDateTime,
    pub received_at: OffsetDateTime,
    pub host: Host,
    pub toolchain: Toolchain,
    /// What the run measured: its workloads are stored under this metric.
    pub metric: Metric,
    /// Each workload's name and size unit, in the submission's order.
    pub workloads: Vec<(String, SizeUnit)>,
    pub sample_count: i32,
    pub samples_pruned_at: Option<OffsetDateTime>,
    /// The run's rows, each `workload_id` the workload's index in `workloads` until the writer
    /// knows the ids.
    pub fits: FitColumns,
    pub measurements: MeasurementColumns,
    pub failures: FailureColumns,
    pub contracts: ContractColumns,
}

/// Contract rows (one per workload with a contract, whose function is not provided, or with a
/// size of interest), column by column for batch inserts.
#[derive(Default)]
pub(in crate::store) struct ContractColumns {
    pub run_id: Vec<Uuid>,
    pub workload_id: Vec<i64>,
    /// The contract, a JSON object; `None` for a workload without one.
    pub contract: Vec<Option<String>>,
    pub not_provided: Vec<bool>,
    pub source_hash: Vec<String>,
    pub metadata: Vec<String>,
    /// The size the team runs the workload at, in its unit.
    pub size_of_interest: Vec<Option<i64>>,
}

impl ContractColumns {
    fn push(&mut self, run_id: Uuid, index: i64, w: &WorkloadRun, metadata: &str) {
        self.run_id.push(run_id);
        self.workload_id.push(index);
        self.contract.push(w.contract.as_ref().map(|c| serde_json::to_string(c).expect("a contract serializes")));
        self.not_provided.push(w.not_provided);
        self.source_hash.push(w.source_hash.clone());
        self.metadata.push(metadata.to_string());
        self.size_of_interest.push(w.size_of_interest.map(|s| s as i64));
    }

    /// Appends a pending run's rows, with `ids` for its workloads' indexes.
    fn append(&mut self, run: &ContractColumns, ids: &[i64]) {
        self.run_id.extend_from_slice(&run.run_id);
        self.workload_id.extend(run.workload_id.iter().map(|&i| ids[i as usize]));
        self.contract.extend_from_slice(&run.contract);
        self.not_provided.extend_from_slice(&run.not_provided);
        self.source_hash.extend_from_slice(&run.source_hash);
        self.metadata.extend_from_slice(&run.metadata);
        self.size_of_interest.extend_from_slice(&run.size_of_interest);
    }
}

/// Failure rows (one per failed workload), column by column for batch inserts.
#[derive(Default)]
pub(in crate::store) struct FailureColumns {
    pub run_id: Vec<Uuid>,
    pub workload_id: Vec<i64>,
    pub source_hash: Vec<String>,
    pub kind: Vec<&'static str>,
    pub size: Vec<Option<i64>>,
    pub detail: Vec<String>,
    /// What the kind adds (exit status, signal, limit, got and expected), a JSON object.
    pub facts: Vec<String>,
    pub metadata: Vec<String>,
}

/// Fit rows, column by column for batch inserts.
#[derive(Default)]
pub(in crate::store) struct FitColumns {
    pub run_id: Vec<Uuid>,
    pub workload_id: Vec<i64>,
    pub source_hash: Vec<String>,
    pub slope: Vec<f64>,
    pub intercept: Vec<f64>,
    pub r2: Vec<f64>,
    pub stderr: Vec<f64>,
    pub ci_low: Vec<f64>,
    pub ci_high: Vec<f64>,
    pub n_sizes: Vec<i32>,
    pub min_size: Vec<i64>,
    pub max_size: Vec<i64>,
    pub local_slopes: Vec<String>,
    pub metadata: Vec<String>,
    /// `[[size, median], …]` by size, which version summaries read: the median by the run's
    /// metric (nanoseconds, or instructions for a count).
    pub medians: Vec<String>,
    /// What the agent said of the run that the server only keeps: `Facts`, a JSON object.
    pub facts: Vec<String>,
    /// Where its instructions went, a JSON object, where the agent sent a profile.
    pub profile: Vec<Option<String>>,
}

/// Measurement rows (one per workload and size), column by column for batch inserts.
#[derive(Default)]
pub(in crate::store) struct MeasurementColumns {
    pub run_id: Vec<Uuid>,
    pub workload_id: Vec<i64>,
    pub size: Vec<i64>,
    /// The median by the run's metric: of the times, or of the counts of an instructions run.
    pub median_ns: Vec<f64>,
    pub samples: Vec<i32>,
    /// The raw samples as a JSON array, in the order taken; `None` for a run carried over
    /// after its samples were pruned.
    pub samples_ns: Vec<Option<String>>,
    /// Instruction counts per sample as a JSON array, when the agent counted them.
    pub instructions: Vec<Option<String>>,
}

/// Run rows, column by column for batch inserts, with each run's version for its pending mark.
#[derive(Default)]
pub(in crate::store) struct RunColumns<'a> {
    pub id: Vec<Uuid>,
    pub content_hash: Vec<&'a str>,
    pub agent_version: Vec<&'a str>,
    pub started_at: Vec<OffsetDateTime>,
    pub received_at: Vec<OffsetDateTime>,
    pub host_id: Vec<i64>,
    pub toolchain_id: Vec<i64>,
    pub sample_count: Vec<i32>,
    pub samples_pruned_at: Vec<Option<OffsetDateTime>>,
    pub metric: Vec<&'static str>,
    pub lineage: Vec<&'a str>,
    pub version: Vec<&'a str>,
}

/// The rows of runs about to be stored, their workloads' ids known.
#[derive(Default)]
pub(in crate::store) struct NewRuns<'a> {
    pub runs: RunColumns<'a>,
    pub fits: FitColumns,
    pub measurements: MeasurementColumns,
    pub failures: FailureColumns,
    pub contracts: ContractColumns,
}

impl<'a> NewRuns<'a> {
    /// Appends `run`'s rows, with its host's, toolchain build's and workloads' ids.
    pub fn append(&mut self, run: &'a PendingRun, host_id: i64, toolchain_id: i64, workload_ids: &[i64]) {
        let r = &mut self.runs;
        r.id.push(run.run_id);
        r.content_hash.push(&run.content_hash);
        r.agent_version.push(&run.agent_version);
        r.started_at.push(run.started_at);
        r.received_at.push(run.received_at);
        r.host_id.push(host_id);
        r.toolchain_id.push(toolchain_id);
        r.sample_count.push(run.sample_count);
        r.samples_pruned_at.push(run.samples_pruned_at);
        r.metric.push(run.metric.as_str());
        r.lineage.push(&run.toolchain.name);
        r.version.push(&run.toolchain.version);
        self.fits.append(&run.fits, workload_ids);
        self.measurements.append(&run.measurements, workload_ids);
        self.failures.append(&run.failures, workload_ids);
        self.contracts.append(&run.contracts, workload_ids);
    }
}

impl FailureColumns {
    /// Appends a pending run's rows, with `ids` for its workloads' indexes.
    fn append(&mut self, run: &FailureColumns, ids: &[i64]) {
        self.run_id.extend_from_slice(&run.run_id);
        self.workload_id.extend(run.workload_id.iter().map(|&i| ids[i as usize]));
        self.source_hash.extend_from_slice(&run.source_hash);
        self.kind.extend_from_slice(&run.kind);
        self.size.extend_from_slice(&run.size);
        self.detail.extend_from_slice(&run.detail);
        self.facts.extend_from_slice(&run.facts);
        self.metadata.extend_from_slice(&run.metadata);
    }

    fn push(&mut self, run_id: Uuid, index: i64, source_hash: &str, f: &Failure, metadata: String) {
        self.run_id.push(run_id);
        self.workload_id.push(index);
        self.source_hash.push(source_hash.to_string());
        self.kind.push(f.kind.as_str());
        self.size.push(f.size.map(|s| s as i64));
        self.detail.push(f.detail.clone());
        self.facts.push(crate::model::failure_facts(f));
        self.metadata.push(metadata);
    }
}

impl FitColumns {
    /// Appends a pending run's rows, with `ids` for its workloads' indexes.
    fn append(&mut self, run: &FitColumns, ids: &[i64]) {
        self.run_id.extend_from_slice(&run.run_id);
        self.workload_id.extend(run.workload_id.iter().map(|&i| ids[i as usize]));
        self.source_hash.extend_from_slice(&run.source_hash);
        self.slope.extend_from_slice(&run.slope);
        self.intercept.extend_from_slice(&run.intercept);
        self.r2.extend_from_slice(&run.r2);
        self.stderr.extend_from_slice(&run.stderr);
        self.ci_low.extend_from_slice(&run.ci_low);
        self.ci_high.extend_from_slice(&run.ci_high);
        self.n_sizes.extend_from_slice(&run.n_sizes);
        self.min_size.extend_from_slice(&run.min_size);
        self.max_size.extend_from_slice(&run.max_size);
        self.local_slopes.extend_from_slice(&run.local_slopes);
        self.metadata.extend_from_slice(&run.metadata);
        self.medians.extend_from_slice(&run.medians);
        self.facts.extend_from_slice(&run.facts);
        self.profile.extend_from_slice(&run.profile);
    }
}

impl MeasurementColumns {
    /// Adds the row of one size, with its median and number of samples (which a run carried over
    /// after pruning gives instead of its raw samples).
    fn push(&mut self, run_id: Uuid, index: i64, raw: &Measurement, median: f64, samples: usize) {
        self.run_id.push(run_id);
        self.workload_id.push(index);
        self.size.push(raw.size as i64);
        self.median_ns.push(median);
        self.samples.push(samples as i32);
        let samples_ns = Some(&raw.samples_ns).filter(|ns| !ns.is_empty());
        self.samples_ns.push(samples_ns.map(|ns| serde_json::to_string(ns).expect("samples serialize")));
        let instructions = raw.instructions.as_ref().filter(|i| !i.is_empty()).map(|i| {
            let counts: Vec<i64> = i.iter().map(|&n| n.min(i64::MAX as u64) as i64).collect();
            serde_json::to_string(&counts).expect("counts serialize")
        });
        self.instructions.push(instructions);
    }

    /// Appends a pending run's rows, with `ids` for its workloads' indexes.
    fn append(&mut self, run: &MeasurementColumns, ids: &[i64]) {
        self.run_id.extend_from_slice(&run.run_id);
        self.workload_id.extend(run.workload_id.iter().map(|&i| ids[i as usize]));
        self.size.extend_from_slice(&run.size);
        self.median_ns.extend_from_slice(&run.median_ns);
        self.samples.extend_from_slice(&run.samples);
        self.samples_ns.extend_from_slice(&run.samples_ns);
        self.instructions.extend_from_slice(&run.instructions);
    }
}

impl PendingRun {
    pub fn new(run: &RunSubmission, fits: &[WorkloadFit], arrival: &Arrival) -> PendingRun {
        let metric = run.metric();
        let mut pending = PendingRun {
            run_id: run.run_id,
            content_hash: arrival.content_hash.clone().unwrap_or_else(|| run.content_hash()),
            agent_version: run.agent_version.clone(),
            started_at: run.started_at.to_offset(time::UtcOffset::UTC),
            received_at: arrival.received_at,
            host: run.host.clone(),
            // Stored under its series' lineage: an aarch64 build of `zig-cc-musl` is
            // `zig-cc-musl (aarch64)`, never a point on the x86-64 line.
            toolchain: Toolchain { name: run.series_lineage(), ..run.toolchain.clone() },
            metric,
            workloads: run.workloads.iter().map(|w| (w.name.clone(), w.size_unit)).collect(),
            sample_count: arrival.pruned.map_or(run.sample_count() as i32, |p| p.count),
            samples_pruned_at: arrival.pruned.map(|p| p.at),
            fits: FitColumns::default(),
            measurements: MeasurementColumns::default(),
            failures: FailureColumns::default(),
            contracts: ContractColumns::default(),
        };
        for (index, w) in run.workloads.iter().enumerate() {
            let index = index as i64;
            let metadata = serde_json::to_string(&w.metadata).expect("metadata serializes");
            if w.contract.is_some() || w.not_provided || w.size_of_interest.is_some() {
                pending.contracts.push(run.run_id, index, w, &metadata);
            }
            if w.not_provided {
                continue;
            }
            if let Some(failure) = &w.failure {
                pending.failures.push(run.run_id, index, &w.source_hash, failure, metadata);
                // The sizes measured before the failure, kept for the run's page; no fit row, so no
                // summary takes a partial slope in.
                // A run carried over after pruning brings each size's median as its one sample.
                for m in &w.measurements {
                    let pruned = Measurement { size: m.size, samples_ns: Vec::new(), instructions: None };
                    let raw = if arrival.pruned.is_some() { &pruned } else { m };
                    pending.measurements.push(run.run_id, index, raw, metric.median(m), m.samples_ns.len());
                }
                continue;
            }
            let wf = fits.iter().find(|f| f.workload == w.name).expect("every workload that did not fail is fitted");
            let f = &mut pending.fits;
            f.run_id.push(run.run_id);
            f.workload_id.push(index);
            f.source_hash.push(w.source_hash.clone());
            f.facts.push(w.facts().to_json());
            f.profile.push(w.profile.as_ref().map(|p| serde_json::to_string(p).expect("a profile serializes")));
            f.slope.push(wf.fit.slope);
            f.intercept.push(wf.fit.intercept);
            f.r2.push(wf.fit.r2);
            f.stderr.push(wf.fit.stderr);
            f.ci_low.push(wf.fit.ci_low);
            f.ci_high.push(wf.fit.ci_high);
            f.n_sizes.push(wf.fit.n as i32);
            f.min_size.push(wf.medians.first().map_or(0, |m| m.0 as i64));
            f.max_size.push(wf.medians.last().map_or(0, |m| m.0 as i64));
            f.local_slopes.push(serde_json::to_string(&wf.fit.local_slopes).expect("local slopes serialize"));
            f.metadata.push(metadata);
            let medians: Vec<(u64, f64)> = wf.medians.iter().map(|&(size, median, _)| (size, median)).collect();
            f.medians.push(serde_json::to_string(&medians).expect("medians serialize"));
            for &(size, median, n) in &wf.medians {
                let raw = w.measurements.iter().find(|m| m.size == size);
                let empty = Measurement { size, samples_ns: Vec::new(), instructions: None };
                pending.measurements.push(run.run_id, index, raw.unwrap_or(&empty), median, n);
            }
        }
        pending
    }

    /// The first of the run's workloads whose size unit differs from the one it is stored in, or
    /// is about to be stored in by a run ahead of this one.
    pub fn unit_conflict(&self, units: &HashMap<String, SizeUnit>) -> Option<FieldError> {
        self.workloads.iter().enumerate().find_map(|(i, &(ref name, unit))| {
            let stored = *units.get(name)?;
            (stored != unit).then(|| unit_clash(i, name, stored, unit))
        })
    }

    /// The run's version axis, when its lineage is stored on the other one, or is about to be by
    /// a run ahead of this one.
    pub fn axis_conflict(&self, axes: &HashMap<String, VersionFromText>) -> Option<FieldError> {
        let stored = axes.get(&self.toolchain.name)?;
        (stored.as_str() != self.toolchain.version_from.as_str()).then(|| axis_clash(&self.toolchain, stored))
    }
}

/// The error for a run of `toolchain` whose lineage is versioned on the `stored` axis: what to do
/// instead, since neither the run nor the lineage's history can be changed here.
pub(in crate::store) fn axis_clash(toolchain: &Toolchain, stored: &str) -> FieldError {
    let (name, axis) = (&toolchain.name, toolchain.version_from);
    let by = |axis: &str| if axis == VersionFrom::Libc.as_str() { "its libc" } else { "its compiler" };
    FieldError {
        field: "toolchain.version_from".into(),
        reason: format!(
            "lineage {name:?} is versioned by {} (version_from = \"{stored}\"), but this run's version {:?} is \
             {}'s (version_from = \"{axis}\"); one lineage never mixes the two. Send the run under a new lineage \
             name, e.g. \"{name}-{axis}\", or set version_from = \"{stored}\" for this toolchain \
             (slopewatch-agent --version-from {name}={stored})",
            by(stored),
            toolchain.version,
            by(axis.as_str()),
        ),
    }
}

/// The error for workload `i` of a run, measured in `unit` where `name` is stored in `stored`.
pub(in crate::store) fn unit_clash(i: usize, name: &str, stored: SizeUnit, unit: SizeUnit) -> FieldError {
    FieldError {
        field: format!("workloads[{i}].size_unit"),
        reason: format!("workload {name:?} is measured in {stored}, not {unit}"),
    }
}

/// A lineage's version axis as the database spells it: `compiler` or `libc`.
pub(in crate::store) type VersionFromText = String;

/// What storing one run came to.
#[derive(Debug)]
pub(in crate::store) enum Step {
    Stored,
    AlreadyThere(String),
    Invalid(FieldError),
}
