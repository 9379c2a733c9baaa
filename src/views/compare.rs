//! Two toolchain versions of a workload's series side by side: their medians at each size both
//! measured, the ratio between them, the slope and class steps, and the chart's two lines.

use super::series::median_at;
use super::{LogLogLine, LogLogView};
use crate::format;
use crate::links;
use crate::store::VersionSummary;
use serde::Serialize;
use slopewatch_core::wire::{Metric, SizeUnit};

/// Two toolchain versions of one workload's series of one metric side by side; of one lineage or
/// of two.
#[derive(Debug, Clone)]
pub struct CompareView {
    pub workload: String,
    /// What both versions' values are: times in nanoseconds, or instructions counted.
    pub metric: Metric,
    pub size_unit: SizeUnit,
    pub a: VersionSummary,
    pub b: VersionSummary,
}

/// The two versions' medians at a size both measured, in the comparison's metric.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub size: u64,
    pub a_median_ns: f64,
    pub b_median_ns: f64,
    /// b's median over a's: above 1, b is slower (or counts more).
    pub ratio: f64,
}

impl CompareView {
    pub fn label_a(&self) -> String {
        format!("{} {}", self.a.lineage, self.a.version)
    }

    pub fn label_b(&self) -> String {
        format!("{} {}", self.b.lineage, self.b.version)
    }

    /// The comparison as links name it.
    pub fn link(&self) -> links::Comparison<'_> {
        links::Comparison {
            workload: &self.workload,
            metric: self.metric,
            a: (&self.a.lineage, &self.a.version),
            b: (&self.b.lineage, &self.b.version),
        }
    }

    /// b's slope minus a's.
    pub fn slope_delta(&self) -> f64 {
        self.b.slope - self.a.slope
    }

    /// The complexity class from a to b, `O(n) → O(n²)`, when both were worked out.
    pub fn class_step(&self) -> Option<String> {
        format::class_step(self.a.complexity.as_ref(), self.b.complexity.as_ref())
    }

    pub fn rows(&self) -> Vec<CompareRow> {
        self.a
            .sizes
            .iter()
            .filter_map(|sa| {
                let b = median_at(&self.b, sa.size)?;
                Some(CompareRow { size: sa.size, a_median_ns: sa.median_ns, b_median_ns: b, ratio: b / sa.median_ns })
            })
            .collect()
    }

    pub fn loglog(&self) -> LogLogView {
        LogLogView {
            title: format!("{} ({}): {} vs {}", self.workload, self.metric.label(), self.label_a(), self.label_b()),
            metric: self.metric,
            size_unit: self.size_unit,
            lines: vec![LogLogLine::of(&self.label_a(), &self.a), LogLogLine::of(&self.label_b(), &self.b)],
            failed_every_run: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::tests::summary;

    #[test]
    fn a_comparison_gives_ratios_at_shared_sizes_and_the_slope_delta() {
        let c = CompareView {
            workload: "strchr".into(),
            metric: Metric::Wall,
            size_unit: SizeUnit::Bytes,
            a: summary("musl-gcc", "1.2.5", 1.0, 4),
            b: summary("zig-cc-musl", "0.16.0", 2.0, 3),
        };
        let rows = c.rows();
        assert_eq!(rows.len(), 3);
        assert!((rows[0].ratio - 65536.0).abs() < 1e-6);
        assert!((c.slope_delta() - 1.0).abs() < 1e-12);
        assert_eq!(c.loglog().lines.len(), 2);
        assert_eq!(c.loglog().title, "strchr (wall time): musl-gcc 1.2.5 vs zig-cc-musl 0.16.0");
    }
}
