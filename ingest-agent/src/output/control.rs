//! `check --control LINEAGE`: each workload over a limit is compared with the control lineage
//! measured in the same invocation, on the same host and the same source, and attributed in a
//! sentence: the control held (the toolchain), the control is over too (the code), or no
//! verdict from the control (unknown). The control's own rows have no control of their own.

use crate::measure::judged::Judged;
use slopewatch_core::verdict::Decision;
use slopewatch_core::wire::RunSubmission;

/// One line per workload over a limit or failed, attributed by the control; an error when the
/// control was not among the toolchains measured.
pub fn attribute(rows: &[Judged], runs: &[RunSubmission], control: &str) -> Result<Vec<String>, String> {
    let Some(run) = runs.iter().find(|r| r.toolchain.name == control) else {
        let measured: Vec<&str> = runs.iter().map(|r| r.toolchain.name.as_str()).collect();
        return Err(format!(
            "the control {control} was not measured: add it with --toolchain {control}=COMMAND (measured: {})",
            measured.join(", ")
        ));
    };
    let label = format!("{control} {}", run.toolchain.version);
    let source = |toolchain: &str, workload: &str| {
        let run = runs.iter().find(|r| r.toolchain.name == toolchain)?;
        run.workloads.iter().find(|w| w.name == workload).map(|w| w.source_hash.as_str())
    };
    let mut lines = Vec::new();
    for r in rows.iter().filter(|r| r.is_over() || r.failure.is_some()) {
        if r.toolchain == control {
            lines.push(format!("{}: unknown: {control} is itself the control and has no control of its own", r.name()));
            continue;
        }
        let c = rows.iter().find(|c| c.toolchain == control && c.workload == r.workload);
        let same_source = source(&r.toolchain, &r.workload) == source(control, &r.workload);
        let on = if same_source { "on the same source" } else { "on another source" };
        let line = match c {
            None => format!("unknown: the control {control} did not measure {}", r.workload),
            Some(c) if c.failure.is_some() => format!("unknown: the control {label} failed {} too", r.workload),
            Some(c) => {
                let k = c.fit.as_ref().map_or_else(|_| "-".into(), |f| format!("{:.2}", f.slope));
                match (&c.decision, r.failure.is_some()) {
                    (Decision::Under, false) => {
                        format!("toolchain: control {label} stayed at k {k} {on}: the toolchain is the cause")
                    }
                    (Decision::Under, true) => format!("toolchain: control {label} runs it correctly {on}"),
                    (Decision::Over(_), _) => format!(
                        "code: control {label} is over too, at k {k} {on}: the code (or this host), not the toolchain"
                    ),
                    (Decision::Unsure(_), _) => {
                        format!("unknown: control {label} is unsure at k {k} ({})", c.decision.doubts())
                    }
                }
            }
        };
        lines.push(format!("{}: {line}", r.name()));
    }
    if lines.is_empty() {
        lines.push(format!("nothing over a limit to attribute; control {label} measured beside"));
    }
    Ok(lines)
}

/// The report's "Control" section, escaped.
pub fn markdown(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut md = String::from("\n#### Control\n\n");
    for line in lines {
        md.push_str(&format!("- {}\n", crate::output::markdown::escape(line)));
    }
    md
}
