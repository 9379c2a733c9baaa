//! Whether the toolchains measured in one invocation computed the same results: a toolchain whose
//! workload answers otherwise than the others gets a `wrong_result` failure, never an average.

use crate::measure::failure;
use slopewatch_core::format;
use slopewatch_core::wire::{Failure, SizeUnit};
use std::collections::BTreeMap;

/// What one workload computed on one toolchain.
#[derive(Debug, Clone)]
pub struct Answers {
    pub toolchain: String,
    pub workload: String,
    /// What the workload's sizes count.
    pub unit: SizeUnit,
    /// Whether the workload already failed there: a failed workload takes no part.
    pub failed: bool,
    /// The result reported at each size.
    pub by_size: BTreeMap<u64, String>,
}

/// A failure to attach to one toolchain's run of one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    pub toolchain: String,
    pub workload: String,
    pub failure: Failure,
}

/// The toolchains whose results differ from the others', size by size (only sizes reported by
/// more than one toolchain), each with a failure at its first disagreeing size. At a size where the
/// results differ, every group of toolchains that is not strictly the largest is in the minority:
/// with two toolchains that disagree, both are.
pub fn disagreements(answers: &[Answers]) -> Vec<Disagreement> {
    let mut workloads: Vec<&str> = Vec::new();
    for a in answers {
        if !workloads.contains(&a.workload.as_str()) {
            workloads.push(&a.workload);
        }
    }
    let mut found = Vec::new();
    for workload in workloads {
        let taking_part: Vec<&Answers> = answers.iter().filter(|a| a.workload == workload && !a.failed).collect();
        let sizes: std::collections::BTreeSet<u64> =
            taking_part.iter().flat_map(|a| a.by_size.keys().copied()).collect();
        let unit = taking_part.first().map_or(SizeUnit::Bytes, |a| a.unit);
        let mut flagged: Vec<&str> = Vec::new();
        for size in sizes {
            let here: Vec<(&str, &str)> = taking_part
                .iter()
                .filter_map(|a| a.by_size.get(&size).map(|r| (a.toolchain.as_str(), r.as_str())))
                .collect();
            // Groups of toolchains by result, in the order the toolchains were measured.
            let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
            for &(toolchain, result) in &here {
                match groups.iter_mut().find(|g| g.0 == result) {
                    Some(g) => g.1.push(toolchain),
                    None => groups.push((result, vec![toolchain])),
                }
            }
            if groups.len() < 2 {
                continue;
            }
            let largest = groups.iter().map(|g| g.1.len()).max().unwrap_or(0);
            let majority = groups.iter().filter(|g| g.1.len() == largest).count() == 1;
            for (result, members) in &groups {
                if majority && members.len() == largest {
                    continue;
                }
                let others: Vec<&(&str, Vec<&str>)> = groups.iter().filter(|g| g.0 != *result).collect();
                // The value named as expected: the largest other group's, the first measured on a tie.
                let Some(expected) = others.iter().rev().max_by_key(|g| g.1.len()) else {
                    continue;
                };
                let named: Vec<&str> = others.iter().flat_map(|g| g.1.iter().copied()).collect();
                let there = match others.as_slice() {
                    [only] => format!("{} there", only.0),
                    _ => others.iter().map(|g| format!("{} on {}", g.0, g.1.join(", "))).collect::<Vec<_>>().join("; "),
                };
                for toolchain in members {
                    if flagged.contains(toolchain) {
                        continue;
                    }
                    flagged.push(toolchain);
                    found.push(Disagreement {
                        toolchain: toolchain.to_string(),
                        workload: workload.to_string(),
                        failure: failure::differs(
                            size,
                            result,
                            expected.0,
                            &format!(
                                "differs from {}: {result} here, {there}, at {}",
                                named.join(", "),
                                format::size(size, unit)
                            ),
                        ),
                    });
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use slopewatch_core::wire::FailureKind;

    fn answers(toolchain: &str, workload: &str, results: &[(u64, &str)]) -> Answers {
        Answers {
            toolchain: toolchain.to_string(),
            workload: workload.to_string(),
            unit: SizeUnit::Bytes,
            failed: false,
            by_size: results.iter().map(|&(s, r)| (s, r.to_string())).collect(),
        }
    }

    fn summary(found: &[Disagreement]) -> Vec<(&str, &str, Option<u64>, &str, &str)> {
        found
            .iter()
            .map(|d| {
                (
                    d.toolchain.as_str(),
                    d.workload.as_str(),
                    d.failure.size,
                    d.failure.got.as_deref().unwrap(),
                    d.failure.expected.as_deref().unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn the_one_toolchain_that_differs_from_two_that_agree_gets_a_wrong_result() {
        let found = disagreements(&[
            answers("gcc-glibc", "scan", &[(1, "10"), (2, "20"), (4, "40")]),
            answers("musl-gcc", "scan", &[(1, "10"), (2, "21"), (4, "41")]),
            answers("zig", "scan", &[(1, "10"), (2, "20"), (4, "40")]),
        ]);
        assert_eq!(summary(&found), [("musl-gcc", "scan", Some(2), "21", "20")], "one failure, at the first size");
        let f = &found[0].failure;
        assert_eq!(f.kind, FailureKind::WrongResult);
        assert_eq!(f.detail, "differs from gcc-glibc, zig: 21 here, 20 there, at 2 B");
        f.validate("failure").unwrap();
    }

    #[test]
    fn two_toolchains_that_disagree_both_get_one_naming_the_other() {
        let found = disagreements(&[answers("a", "w", &[(8, "1")]), answers("b", "w", &[(8, "2")])]);
        assert_eq!(summary(&found), [("a", "w", Some(8), "1", "2"), ("b", "w", Some(8), "2", "1")]);
    }

    #[test]
    fn on_a_tie_every_group_not_strictly_largest_gets_one() {
        let found = disagreements(&[
            answers("a", "w", &[(8, "1")]),
            answers("b", "w", &[(8, "1")]),
            answers("c", "w", &[(8, "2")]),
            answers("d", "w", &[(8, "2")]),
            answers("e", "w", &[(8, "3")]),
        ]);
        assert_eq!(found[4].failure.detail, "differs from a, b, c, d: 3 here, 1 on a, b; 2 on c, d, at 8 B");
        assert_eq!(
            summary(&found),
            [
                ("a", "w", Some(8), "1", "2"),
                ("b", "w", Some(8), "1", "2"),
                ("c", "w", Some(8), "2", "1"),
                ("d", "w", Some(8), "2", "1"),
                ("e", "w", Some(8), "3", "1"),
            ]
        );
        let found = disagreements(&[
            answers("a", "w", &[(8, "1")]),
            answers("b", "w", &[(8, "1")]),
            answers("c", "w", &[(8, "2")]),
            answers("d", "w", &[(8, "3")]),
        ]);
        assert_eq!(summary(&found), [("c", "w", Some(8), "2", "1"), ("d", "w", Some(8), "3", "1")]);
    }

    #[test]
    fn only_sizes_measured_by_more_than_one_toolchain_are_compared() {
        let found = disagreements(&[
            answers("a", "w", &[(1, "1"), (2, "2"), (4, "4")]),
            answers("b", "w", &[(1, "1"), (2, "2"), (8, "9")]),
            answers("c", "w", &[(16, "x")]),
        ]);
        assert!(found.is_empty(), "{found:?}");
        assert!(disagreements(&[answers("a", "w", &[(1, "1")])]).is_empty(), "one toolchain has no one to differ from");
        let found = disagreements(&[answers("a", "w", &[(1, "1")]), answers("b", "w", &[])]);
        assert!(found.is_empty(), "a workload that reports no result is not compared");
    }

    #[test]
    fn a_workload_that_already_failed_takes_no_part_and_workloads_are_compared_apart() {
        let mut broken = answers("b", "w", &[(1, "7")]);
        broken.failed = true;
        let found = disagreements(&[
            answers("a", "w", &[(1, "1")]),
            broken,
            answers("c", "w", &[(1, "1")]),
            answers("a", "v", &[(1, "5")]),
            answers("c", "v", &[(1, "5")]),
        ]);
        assert!(found.is_empty(), "{found:?}");
        let found = disagreements(&[
            answers("a", "w", &[(1, "1")]),
            answers("a", "v", &[(1, "5")]),
            answers("c", "w", &[(1, "1")]),
            answers("c", "v", &[(1, "6")]),
        ]);
        assert_eq!(summary(&found), [("a", "v", Some(1), "5", "6"), ("c", "v", Some(1), "6", "5")]);
    }
}
