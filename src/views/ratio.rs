//! How two versions of one series compare at one size: the ratio of their medians (or, where
//! they share no size, of their fits' predictions), with its 95% interval. The version page, the
//! comparison and a series' table all say a ratio this way.

use crate::format;
use crate::model::SizeMedian;
use crate::store::VersionSummary;
use serde::Serialize;
use slopewatch_core::wire::{Metric, SizeUnit};
use utoipa::ToSchema;

/// How two versions' values of one series compare at one size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct SizeRatio {
    /// In the workload's unit.
    pub size: u64,
    /// The later side's median over the earlier side's: above 1, slower (or more instructions).
    pub ratio: f64,
    /// The lower end of the ratio's 95% interval: where it would fall if both versions were
    /// measured again, from each version's spread about its log-log line at that size (its
    /// prediction interval, as at a size of interest), combined. `ratio` itself for counts that
    /// repeat exactly.
    pub low: f64,
    /// The upper end of that interval.
    pub high: f64,
    /// The interval holds 1: the versions do not differ beyond the noise at that size, and the
    /// ratio is no change to report.
    pub within_noise: bool,
    /// The versions share no size measured, so both values are predicted from their fits at a
    /// size both cover.
    pub predicted: bool,
}

impl SizeRatio {
    /// `ratio` at `size` between the versions' medians (or predictions) `a` and `b` there, its
    /// interval from both versions' prediction intervals at that size, combined in logs.
    pub fn new(size: u64, (a, b): (f64, f64), fits: (&VersionSummary, &VersionSummary), predicted: bool) -> SizeRatio {
        let ratio = b / a;
        let half_width = |v: &VersionSummary| {
            SizeMedian::predict(&v.sizes, size).map_or(f64::INFINITY, |p| (p.high_ns / p.time_ns).ln())
        };
        let (low, high) = if fits.1.metric.is_exact() {
            (ratio, ratio)
        } else {
            let half = half_width(fits.0).hypot(half_width(fits.1));
            (ratio * (-half).exp(), ratio * half.exp())
        };
        SizeRatio { size, ratio, low, high, within_noise: low <= 1.0 && 1.0 <= high, predicted }
    }

    /// `31,000× slower at 4 MiB`, with `, predicted from both fits` where it was, and the
    /// interval: `1.06× slower at 2 MiB (95%: 1.02×–1.10× slower)`, or `1.50× slower at 2 MiB,
    /// within the noise (95%: 1.10× faster to 2.04× slower)`. An interval narrower than the
    /// figures shown is left out, as for counts that repeat exactly.
    pub fn text(&self, metric: Metric, unit: SizeUnit) -> String {
        let mut text = format!("{} at {}", format::ratio_in(metric, self.ratio), format::size(self.size, unit));
        if self.predicted {
            text.push_str(", predicted from both fits");
        }
        match format::ratio_interval_in(metric, self.low, self.high) {
            Some(interval) if self.within_noise => text.push_str(&format!(", within the noise (95%: {interval})")),
            Some(interval) => text.push_str(&format!(" (95%: {interval})")),
            None => {}
        }
        text
    }
}

/// `b` against `a` at the largest size both measured; where they share none (an adaptive sweep
/// stopped a steep version early, or the two swept other sizes), at the largest size inside both
/// measured ranges, each value predicted from its own fit. `None` where the ranges do not overlap
/// or a fit is missing.
pub fn size_ratio(a: &VersionSummary, b: &VersionSummary) -> Option<SizeRatio> {
    let shared = a.sizes.iter().rev().find_map(|sa| Some((sa.size, (sa.median_ns, median_at(b, sa.size)?))));
    if let Some((size, medians)) = shared {
        return Some(SizeRatio::new(size, medians, (a, b), false));
    }
    let range =
        |v: &VersionSummary| Some((v.sizes.iter().map(|s| s.size).min()?, v.sizes.iter().map(|s| s.size).max()?));
    let ((a_low, a_high), (b_low, b_high)) = (range(a)?, range(b)?);
    let size = a_high.min(b_high);
    if size < a_low.max(b_low) {
        return None;
    }
    let (pa, pb) = (SizeMedian::predict(&a.sizes, size)?, SizeMedian::predict(&b.sizes, size)?);
    Some(SizeRatio::new(size, (pa.time_ns, pb.time_ns), (a, b), true))
}

/// `v`'s median at `size`, where it measured that size.
pub(super) fn median_at(v: &VersionSummary, size: u64) -> Option<f64> {
    v.sizes.iter().find(|s| s.size == size).map(|s| s.median_ns)
}
