//! The run a pruned record of an export stands for: its medians checked by the rules a submission
//! obeys, and stored as medians, never as samples.

use super::records::PrunedRunRecord;
use crate::model::Medians;
use slopewatch_core::wire::{
    FieldError, Measure, Measurement, RunSubmission, WorkloadRun, MAX_SAMPLES_PER_RUN, MAX_SAMPLES_PER_SIZE,
};

/// The run a pruned record stands for, with empty sample lists, and each workload's (size, median
/// ns, number of samples) to fit it from. It is checked by the rules a submission obeys, each
/// median standing in for its samples.
pub(super) fn pruned_run(record: &PrunedRunRecord) -> Result<(RunSubmission, Vec<Medians>), FieldError> {
    let r = &record.run;
    let mut run = RunSubmission {
        run_id: r.run_id,
        agent_version: r.agent_version.clone(),
        started_at: r.started_at,
        host: r.host.clone(),
        toolchain: r.toolchain.clone(),
        workloads: r
            .workloads
            .iter()
            .map(|w| {
                let measurements = w
                    .measurements
                    .iter()
                    .map(|m| Measurement {
                        size: m.size,
                        samples_ns: vec![m.median_ns],
                        // An instructions run counts every repetition; its median stands in.
                        instructions: (r.measure == Measure::Instructions)
                            .then(|| vec![(m.median_ns.round() as u64).max(1)]),
                    })
                    .collect();
                WorkloadRun {
                    profile: w.profile.clone(),
                    metadata: w.metadata.clone(),
                    failure: w.failure.clone(),
                    contract: w.contract.clone(),
                    not_provided: w.not_provided,
                    size_of_interest: w.size_of_interest,
                    ..WorkloadRun::new(w.name.clone(), w.size_unit, w.source_hash.clone(), measurements)
                }
                .with_facts(w.facts())
            })
            .collect(),
        measure: r.measure,
        counter: r.counter,
    };
    run.validate().map_err(|e| FieldError {
        field: e.field.replace("samples_ns[0]", "median_ns").replace("samples_ns", "median_ns"),
        reason: e.reason,
    })?;
    let mut total = 0u64;
    for (i, w) in r.workloads.iter().enumerate() {
        for (j, m) in w.measurements.iter().enumerate() {
            if m.samples == 0 || m.samples as usize > MAX_SAMPLES_PER_SIZE {
                return Err(FieldError {
                    field: format!("workloads[{i}].measurements[{j}].samples"),
                    reason: format!("must be between 1 and {MAX_SAMPLES_PER_SIZE}"),
                });
            }
            total += u64::from(m.samples);
        }
    }
    if total != u64::from(record.sample_count) || total > MAX_SAMPLES_PER_RUN as u64 {
        return Err(FieldError {
            field: "sample_count".into(),
            reason: format!(
                "is {} but the sizes count {total} samples (at most {MAX_SAMPLES_PER_RUN})",
                record.sample_count
            ),
        });
    }
    let medians = r
        .workloads
        .iter()
        .map(|w| w.measurements.iter().map(|m| (m.size, m.median_ns, m.samples as usize)).collect())
        .collect();
    for (w, pruned) in run.workloads.iter_mut().zip(&r.workloads) {
        for (m, median) in w.measurements.iter_mut().zip(&pruned.measurements) {
            // A fitted workload's sizes are stored from its fit's medians. A failed one has no fit:
            // each size carries its median once per sample it was taken over, which the store
            // keeps as that median and that count, never as samples. Without counts, a count
            // metric's median is taken of those (`Metric::values`), so it is the median exported.
            m.samples_ns =
                if w.failure.is_some() { vec![median.median_ns; median.samples as usize] } else { Vec::new() };
            m.instructions = None;
        }
    }
    Ok((run, medians))
}
