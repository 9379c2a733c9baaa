//! What each workload costs at the size its team runs it at: the time at its size of interest,
//! predicted from the same fit as its slope, with the 95% prediction interval, and how many times
//! the fastest toolchain's time that is. Printed after the slope table; the report renders the
//! same lines.

use crate::measure::judged::Judged;
use slopewatch_core::format;

/// One line per workload and toolchain that has a prediction, grouped by workload, with the
/// ratio to the fastest toolchain where more than one measured it: `  strchr  zig-0.16.0  at 4
/// MiB: ≈ 46 s [41 s, 52 s], predicted past the 256 KiB measured; 31,200× gcc-glibc`. Empty
/// when no workload has a size of interest.
pub fn costs(rows: &[Judged]) -> String {
    let lines = lines(rows);
    if lines.is_empty() {
        return String::new();
    }
    let width = lines.iter().map(|l| l.workload.chars().count()).max().unwrap_or(0);
    let tool = lines.iter().map(|l| l.toolchain.chars().count()).max().unwrap_or(0);
    let mut out = String::from("at the size you run (predicted from each fit; 95% prediction interval):\n");
    for l in &lines {
        out.push_str(&format!("  {:<width$}  {:<tool$}  {}{}\n", l.workload, l.toolchain, l.sentence, l.against));
    }
    out
}

/// One workload on one toolchain at its size of interest.
pub struct Line {
    pub workload: String,
    pub toolchain: String,
    /// `at 4 MiB: ≈ 46 s [41 s, 52 s], predicted past the 256 KiB measured`.
    pub sentence: String,
    /// `; 31,200× gcc-glibc`, against the fastest toolchain of the workload; or empty.
    pub against: String,
}

/// The lines of the rows that have a prediction, grouped by workload.
pub fn lines(rows: &[Judged]) -> Vec<Line> {
    let mut predicted: Vec<&Judged> = rows.iter().filter(|r| r.failure.is_none() && r.prediction.is_some()).collect();
    // Grouped by workload in the order they first appear, toolchains in theirs.
    let order = |r: &Judged| rows.iter().position(|o| o.workload == r.workload).unwrap_or(0);
    predicted.sort_by_key(|r| order(r));
    predicted
        .iter()
        .map(|r| {
            let p = r.prediction.expect("filtered on a prediction");
            let fastest = predicted
                .iter()
                .filter(|o| o.workload == r.workload)
                .map(|o| (o, o.prediction.expect("filtered").time_ns))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let against = match fastest {
                Some((o, ns)) if o.label() != r.label() && !p.wide() => {
                    format!("; {} {}", format::factor(p.time_ns / ns), o.label())
                }
                _ => String::new(),
            };
            Line { workload: r.workload.clone(), toolchain: r.label(), sentence: p.sentence(r.unit), against }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::judged::tests::{judged, points};
    use slopewatch_core::predict::predict;

    fn at(toolchain: &str, workload: &str, f: impl Fn(f64) -> f64, size: u64) -> Judged {
        let p = points(f);
        Judged { toolchain: toolchain.into(), prediction: predict(&p, size).ok(), ..judged(workload, p) }
    }

    #[test]
    fn each_workload_gives_its_time_at_the_size_of_interest_against_the_fastest_toolchain() {
        let rows = [
            at("gcc-glibc", "strchr", |n| 3.0 * n, 4 << 20),
            at("zig-0.16.0", "strchr", |n| 0.5 * n * n, 4 << 20),
            judged("strspn", points(|n| n)),
        ];
        let text = costs(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[1].contains("gcc-glibc") && lines[1].contains("at 4 MiB: ≈ 12.6 ms"), "{text}");
        assert!(lines[1].ends_with(", predicted past the 32 KiB measured"), "{text}");
        // 0.5·n² against 3·n at 4 MiB: 699,050×, said to three significant figures.
        assert!(lines[2].ends_with("; 699,000× gcc-glibc"), "{text}");
        assert!(!text.contains("strspn"), "no size of interest, no line: {text}");
    }

    #[test]
    fn nothing_to_say_without_a_size_of_interest() {
        assert_eq!(costs(&[judged("strchr", points(|n| n))]), "");
    }
}
