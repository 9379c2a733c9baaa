//! The control measured beside: with `--control LINEAGE`, every other toolchain's run carries,
//! with each workload it measured, the control's median at each size the control measured of the
//! same workload on the same source, in the same invocation on the same host. The server judges a
//! cost on wall or CPU time by the workload's time over the control's, which divides the host out
//! (docs/alerts.md, "Cost on times, against a control").

use slopewatch_core::wire::{Beside, BesideMedian, RunSubmission, WorkloadRun};

/// Sets `control` on every workload of every run but the control's, from the control's run of the
/// same metric; an error naming what was measured when the control was not.
pub fn attach(runs: &mut [RunSubmission], control: &str) -> Result<(), String> {
    if !runs.iter().any(|r| r.toolchain.name == control) {
        let measured: Vec<&str> = runs.iter().map(|r| r.toolchain.name.as_str()).collect();
        return Err(format!(
            "the control {control} was not measured: add it with --toolchain {control}=COMMAND (measured: {})",
            measured.join(", ")
        ));
    }
    let controls: Vec<RunSubmission> = runs.iter().filter(|r| r.toolchain.name == control).cloned().collect();
    for run in runs.iter_mut().filter(|r| r.toolchain.name != control) {
        let Some(c) = controls.iter().find(|c| c.metric() == run.metric()) else { continue };
        for w in &mut run.workloads {
            w.control = c.workloads.iter().find(|cw| cw.name == w.name).and_then(|cw| beside(c, cw, w));
        }
    }
    Ok(())
}

/// The control's medians beside `w`, where both measured it whole on the same source.
fn beside(control: &RunSubmission, cw: &WorkloadRun, w: &WorkloadRun) -> Option<Beside> {
    let whole = |w: &WorkloadRun| w.failure.is_none() && !w.not_provided && !w.measurements.is_empty();
    if !whole(cw) || !whole(w) || cw.source_hash != w.source_hash {
        return None;
    }
    let metric = control.metric();
    let medians = cw.measurements.iter().map(|m| BesideMedian { size: m.size, median: metric.median(m) }).collect();
    Some(Beside { lineage: control.toolchain.name.clone(), version: control.toolchain.version.clone(), medians })
}

#[cfg(test)]
mod tests {
    use super::*;
    use slopewatch_core::wire::Measurement;

    fn run(toolchain: &str, source: &str, ns: f64) -> RunSubmission {
        let measurements =
            (0..4).map(|i| Measurement { size: 1024 << i, samples_ns: vec![ns * i as f64 + ns], instructions: None });
        let w = WorkloadRun::new(
            "strchr".into(),
            slopewatch_core::wire::SizeUnit::Bytes,
            source.into(),
            measurements.collect(),
        );
        let mut r: RunSubmission = serde_json::from_value(serde_json::json!({
            "run_id": "00000000-0000-4000-8000-000000000000", "agent_version": "0.1.0",
            "started_at": "2026-12-05T00:00:00Z",
            "host": {"name": "b1", "cpu": "x", "kernel": "6.1", "arch": "x86_64"},
            "toolchain": {"name": toolchain, "version": "1.2.3", "libc": "musl", "target": "x86_64-linux-musl",
                          "compiler": "cc", "flags": "-O2"},
            "workloads": [],
        }))
        .expect("a run parses");
        r.workloads = vec![w];
        r
    }

    #[test]
    fn every_other_run_carries_the_controls_medians_on_the_same_source_only() {
        let mut runs = vec![run("zig", "s", 100.0), run("musl-gcc", "s", 10.0), run("gcc", "t", 50.0)];
        attach(&mut runs, "musl-gcc").unwrap();
        let beside = runs[0].workloads[0].control.as_ref().expect("zig's strchr has musl-gcc beside it");
        assert_eq!((beside.lineage.as_str(), beside.version.as_str()), ("musl-gcc", "1.2.3"));
        assert_eq!(
            beside.medians.iter().map(|m| (m.size, m.median)).collect::<Vec<_>>(),
            [(1024, 10.0), (2048, 20.0), (4096, 30.0), (8192, 40.0)]
        );
        assert!(runs[1].workloads[0].control.is_none(), "the control has no control of its own");
        assert!(runs[2].workloads[0].control.is_none(), "another source is not compared");
        let e = attach(&mut runs, "glibc").unwrap_err();
        assert!(e.contains("--toolchain glibc=COMMAND") && e.contains("zig, musl-gcc, gcc"), "{e}");
    }
}
