//! The contract table the agent prints after the loops': a row per probe of the catalogue, a
//! column per toolchain, each cell the class measured against the one the probe expects; rows
//! over contract or failed on some toolchain first, the rest by header.

use crate::builds::contracts::catalogue;
use crate::measure::judged::Judged;
use slopewatch_core::complexity::{Class, UNSURE};
use slopewatch_core::probe::ProbeState;
use std::collections::BTreeMap;

/// A probe's cell as the table writes it: `held O(n)`, `OVER O(n²)`, `✗ crashed`, `not provided`,
/// … the state's word, with the class measured where it is held or over.
pub fn cell(state: ProbeState, class: Option<Class>) -> String {
    let class = class.map_or(UNSURE, Class::label);
    match state {
        ProbeState::Held => format!("{} {class}", state.word()),
        ProbeState::Over => format!("OVER {class}"),
        ProbeState::Failed(_) => format!("✗ {}", state.word()),
        _ => state.word().to_string(),
    }
}

/// The contract table of the probes among `rows`; empty when none was measured.
pub fn table(rows: &[Judged]) -> String {
    let probes: Vec<&Judged> = rows.iter().filter(|r| r.is_probe()).collect();
    if probes.is_empty() {
        return String::new();
    }
    let labels: Vec<String> = probes.iter().map(|r| r.label()).collect();
    let mut toolchains: Vec<&str> = Vec::new();
    let mut cells: BTreeMap<(&str, &str), &Judged> = BTreeMap::new();
    for (r, label) in probes.iter().zip(&labels) {
        if !toolchains.contains(&label.as_str()) {
            toolchains.push(label);
        }
        cells.insert((r.workload.as_str(), label.as_str()), r);
    }
    let mut order: Vec<(bool, usize, &crate::builds::contracts::Probe)> = catalogue()
        .iter()
        .enumerate()
        .filter(|(_, p)| toolchains.iter().any(|t| cells.contains_key(&(p.name().as_str(), *t))))
        .map(|(i, p)| {
            let bad = toolchains
                .iter()
                .any(|t| cells.get(&(p.name().as_str(), *t)).is_some_and(|r| r.probe_state().is_bad()));
            (!bad, i, p)
        })
        .collect();
    order.sort_by_key(|(good, i, _)| (*good, *i));
    // Wide enough for the longest cell, `held O(n log n)`, and a space.
    let widths: Vec<usize> = toolchains.iter().map(|t| t.chars().count().max(16)).collect();
    let mut out = format!("{:<10} {:<34} {:<11}", "header", "contract", "expected");
    for (t, w) in toolchains.iter().zip(&widths) {
        out.push_str(&format!(" {t:<w$}"));
    }
    out.push('\n');
    for (_, _, p) in order {
        let name = p.name();
        out.push_str(&format!("{:<10} {:<34} {:<11}", p.header, name, p.expected.label()));
        for (t, w) in toolchains.iter().zip(&widths) {
            let text =
                cells.get(&(name.as_str(), *t)).map_or_else(|| "-".to_string(), |r| cell(r.probe_state(), r.class()));
            out.push_str(&format!(" {text:<w$}"));
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::judged::tests::{judged, judged_as, points};
    use slopewatch_core::verdict::Limits;
    use slopewatch_core::wire::{Contract, Failure, FailureKind};

    fn probe(workload: &str, toolchain: &str, p: Vec<(f64, f64)>) -> Judged {
        let expected = catalogue().iter().find(|c| c.name() == workload).unwrap().contract();
        Judged { toolchain: toolchain.into(), ..judged_as(workload, p, Some(expected), &Limits::default()) }
    }

    #[test]
    fn rows_over_contract_come_first_with_a_cell_per_toolchain() {
        let flat = || points(|_| 900.0);
        let mut crashed = probe("contract.strchr.distance", "zig", points(|n| n));
        crashed.failure = Some(Failure {
            kind: FailureKind::Crashed,
            size: Some(4096),
            detail: "read past its bound of 4096 bytes".into(),
            exit_status: None,
            signal: Some(11),
            limit_ms: None,
            got: None,
            expected: None,
        });
        let rows = vec![
            probe("contract.strchr.distance", "gcc-glibc", points(|n| n)),
            probe("contract.strchr.remaining", "gcc-glibc", flat()),
            crashed,
            probe("contract.strchr.remaining", "zig", points(|n| 900.0 + 2.0 * n)),
            judged("strchr", points(|n| n)),
        ];
        let text = table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].contains("gcc-glibc") && lines[0].contains("zig"), "{text}");
        assert!(lines[1].contains("contract.strchr.remaining") && lines[1].contains("held O(1)"), "{text}");
        assert!(lines[1].contains("OVER O(n)"), "{text}");
        assert!(lines[2].contains("held O(n)") && lines[2].contains("✗ crashed"), "{text}");
        assert!(!text.contains(" strchr "), "the loops have their own table: {text}");
        let absent = Judged { not_provided: true, ..probe("contract.strchr.remaining", "musl", flat()) };
        assert_eq!(absent.probe_state(), ProbeState::NotProvided);
        assert_eq!(cell(absent.probe_state(), absent.class()), "not provided");
        let uncounted = Judged { unmeasurable: Some("no counter".into()), ..absent };
        assert_eq!(cell(uncounted.probe_state(), uncounted.class()), "not provided", "lacking comes first");
        let unmeasurable =
            Judged { unmeasurable: Some("no counter".into()), ..probe("contract.strchr.remaining", "musl", flat()) };
        assert_eq!(cell(unmeasurable.probe_state(), unmeasurable.class()), "not measurable");
        let team = judged_as("tokenize", flat(), Some(Contract::expecting(Class::Constant)), &Limits::default());
        assert!(table(&[team]).is_empty(), "a team's workload with a contract stays with the loops");
    }
}
