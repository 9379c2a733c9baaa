//! Two toolchain versions of a workload's series side by side: their medians at each size both
//! measured, the ratio between them (predicted from both fits where they share no size), the slope
//! and class steps, and the chart's two lines.

use super::ratio::{median_at, size_ratio, SizeRatio};
use super::{LogLogLine, LogLogView};
use crate::analysis;
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

    /// The complexity class from a to b, `O(n) → O(n²)`, when both were worked out, and whether
    /// to stress it: not where the evidence does not show the step (`analysis::class_step`), which
    /// reads `O(n) → O(n log n), within the noise`.
    pub fn class_step(&self) -> Option<(String, bool)> {
        let (a, b) = (&self.a, &self.b);
        match analysis::class_step(&a.sizes, a.complexity.as_ref(), &b.sizes, b.complexity.as_ref(), self.metric) {
            Some(step) => Some((step.text(), step.shown)),
            None => format::class_step(a.complexity.as_ref(), b.complexity.as_ref()).map(|step| (step, true)),
        }
    }

    /// The ratio the headline gives: at the largest size both measured, or predicted.
    pub fn headline_ratio(&self) -> Option<SizeRatio> {
        size_ratio(&self.a, &self.b)
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
        let measured = c.headline_ratio().unwrap();
        assert!(!measured.predicted && measured.size == 65536 << 2, "{measured:?}");
    }

    #[test]
    fn versions_that_share_no_size_are_compared_where_both_fits_reach() {
        let mut a = summary("zig-cc-musl", "0.15.2", 1.0, 6);
        let mut b = summary("zig-cc-musl", "0.16.0", 2.0, 3);
        // b swept sizes a tenth off a's, and stopped early: no size in common.
        for s in &mut b.sizes {
            s.size += s.size / 10;
            s.median_ns = (s.size as f64).powf(2.0);
        }
        for (i, s) in a.sizes.iter_mut().enumerate() {
            s.median_ns *= 1.0 + 0.01 * (i % 2) as f64;
        }
        assert!(b.sizes.iter().all(|s| median_at(&a, s.size).is_none()));
        let r = size_ratio(&a, &b).unwrap();
        assert!(r.predicted);
        assert_eq!(r.size, b.sizes.last().unwrap().size, "the largest size inside both ranges");
        let expected = (r.size as f64).powf(2.0) / (r.size as f64);
        assert!((r.ratio / expected - 1.0).abs() < 0.02, "{} vs {expected}", r.ratio);
        assert!(
            r.text(Metric::Wall, SizeUnit::Bytes).contains(" slower at 282 KiB, predicted from both fits"),
            "{r:?}"
        );
        // Ranges that do not overlap give no ratio rather than a guess far outside either.
        for s in &mut b.sizes {
            s.size *= 1 << 10;
        }
        assert!(size_ratio(&a, &b).is_none());
    }

    #[test]
    fn a_ratio_carries_its_interval_and_is_within_the_noise_where_that_holds_one() {
        // Two versions' medians wobbling by up to 4% about one line, the later 3% slower at the
        // largest size: no change.
        let wobbly = |version: &str, wobble: [f64; 6]| {
            let mut v = summary("same-gcc", version, 1.0, 6);
            for (s, w) in v.sizes.iter_mut().zip(wobble) {
                s.median_ns *= w;
            }
            v
        };
        let a = wobbly("1.0.0", [1.0, 1.04, 0.97, 1.02, 0.96, 1.0]);
        let b = wobbly("1.0.1", [0.98, 1.0, 1.03, 0.97, 1.02, 1.03]);
        let r = size_ratio(&a, &b).unwrap();
        assert!((r.ratio - 1.03).abs() < 1e-9 && r.low < 1.0 && r.high > 1.0 && r.within_noise, "{r:?}");
        let text = r.text(Metric::Wall, SizeUnit::Bytes);
        assert!(
            text.starts_with("1.03× slower at 2 MiB, within the noise (95%: ") && text.ends_with(" slower)"),
            "{text}"
        );
        // Twice the time with the same wobble is a change, its interval above 1.
        let mut slower = b.clone();
        for s in &mut slower.sizes {
            s.median_ns *= 2.0;
        }
        let r = size_ratio(&a, &slower).unwrap();
        assert!(r.low > 1.0 && !r.within_noise, "{r:?}");
        assert!(r.text(Metric::Wall, SizeUnit::Bytes).starts_with("2.06× slower at 2 MiB (95%: "), "{r:?}");
        // Counts that repeat exactly have no interval to give.
        let (mut ca, mut cb) = (a.clone(), slower);
        (ca.metric, cb.metric) = (Metric::InstructionsValgrind, Metric::InstructionsValgrind);
        let r = size_ratio(&ca, &cb).unwrap();
        assert_eq!((r.low, r.high), (r.ratio, r.ratio));
        assert_eq!(r.text(Metric::InstructionsValgrind, SizeUnit::Bytes), "2.06× more at 2 MiB");
    }
}
