//! The exponent k of t = a + b·n^k, a power law with a fixed start-up cost, and its 95%
//! profile-likelihood interval.

use super::fixed_plus_growth::{fit_fixed_plus_growth, log_likelihood, FixedPlusGrowth, RATIO_FINE_MARGIN};
use super::search::{brent, crossing};
use crate::fit::t_quantile_975;

/// The range the exponent is searched in.
const EXPONENT_RANGE: (f64, f64) = (0.0, 4.0);

/// How far twice the profile log-likelihood of the exponent may drop from its peak inside the 95%
/// interval, at `count` points: m·ln(1 + F/(m − 3)), F the 95% quantile of F(1, m − 3), the
/// residual degrees of freedom of t = a + b·n^k (Bates and Watts' profile-t region, which counts
/// the variance as estimated). It is 11.6 at 5 points, 6.7 at 8, and tends to chi-square(1)'s 3.84
/// as points grow; chi-square's cut alone gave intervals far too narrow at these sizes.
pub(super) fn interval_cut(count: usize) -> f64 {
    let m = count as f64;
    let df = m - 3.0;
    let f = t_quantile_975(df).powi(2);
    m * (1.0 + f / df).ln()
}

/// The step of the grid the exponent is first searched on, each point searched afresh over the
/// ratio a/b; Brent's method refines the best point between its neighbours.
const EXPONENT_GRID_STEP: f64 = 0.5;

/// The step the interval's ends are walked out in before the crossing is found.
const INTERVAL_STEP: f64 = 0.1;

/// The tolerance, in k, of the exponent and of its interval's ends.
const EXPONENT_TOLERANCE: f64 = 1e-7;

/// k in t = a + b·n^k and its 95% interval, as (k, low, high); `known` holds fits already made
/// at some k, `sigma_floor` is the noise's (see `Noise`).
///
/// k is the best point of a grid over the range, refined by Brent's method between its
/// neighbours. The interval is where twice the drop of the profile log-likelihood (a, b and the
/// variance refitted at each k) stays under `interval_cut`: each end walks out from k in steps of
/// `INTERVAL_STEP` and finds the crossing inside the first step that makes it by regula falsi; it
/// is the range's edge when there is none. Off the grid the profile is traced: each k's fit starts
/// from the ratio a/b of the k before.
pub(super) fn power_law_exponent(
    sizes: &[f64],
    ln_t: &[f64],
    known: &[(f64, FixedPlusGrowth)],
    sigma_floor: f64,
) -> (f64, f64, f64) {
    let mut power_law = PowerLaw::fit(sizes, ln_t, known, sigma_floor);
    let (lo, hi) = EXPONENT_RANGE;
    (power_law.k, power_law.end(lo), power_law.end(hi))
}

/// Whether the power law's exponent interval on these points lies above `k`: its low end, walked
/// towards `k` rather than to the range's edge, which decides the same and is all that is wanted
/// of the points without their largest size.
pub(super) fn exponent_rules_out(sizes: &[f64], ln_t: &[f64], k: f64, sigma_floor: f64) -> bool {
    let mut power_law = PowerLaw::fit(sizes, ln_t, &[], sigma_floor);
    power_law.k > k && power_law.end(k) > k
}

/// t = a + b·n^k fitted at its best k, with what walking out to its interval's ends needs.
struct PowerLaw<'a> {
    profile: ExponentProfile<'a>,
    k: f64,
    best: FixedPlusGrowth,
    /// The log-likelihood at `k`.
    peak: f64,
    cut: f64,
    sigma_floor: f64,
}

impl<'a> PowerLaw<'a> {
    fn fit(sizes: &[f64], ln_t: &'a [f64], known: &[(f64, FixedPlusGrowth)], sigma_floor: f64) -> PowerLaw<'a> {
        let mut profile = ExponentProfile {
            log_sizes: sizes.iter().map(|n| n.ln()).collect(),
            ln_t,
            f: vec![0.0; sizes.len()],
            last: None,
        };
        let (lo, hi) = EXPONENT_RANGE;
        let steps = ((hi - lo) / EXPONENT_GRID_STEP).round() as usize;
        let mut start = (lo, profile.search(lo));
        for i in 1..=steps {
            let k = lo + EXPONENT_GRID_STEP * i as f64;
            let fit = known.iter().find(|p| p.0 == k).map_or_else(|| profile.search(k), |p| p.1);
            if fit.sse < start.1.sse {
                start = (k, fit);
            }
        }
        // With a = 0 the fit is the log-log line, whose best k is known outright; it is searched
        // too, because near k = 0 the profile can dip between grid points: there every k fits a
        // flat series alike, and a slight trend is the line's alone.
        let slope = log_log_line(&profile.log_sizes, ln_t);
        if (lo..=hi).contains(&slope) {
            let fit = profile.search(slope);
            if fit.sse < start.1.sse {
                start = (slope, fit);
            }
        }
        profile.last = start.1.ratio;
        let (k, sse) = brent(
            |x| profile.trace(x).sse,
            (start.0 - EXPONENT_GRID_STEP).max(lo),
            (start.0 + EXPONENT_GRID_STEP).min(hi),
            (start.0, start.1.sse),
            EXPONENT_TOLERANCE,
        );
        let (k, best) = if sse < start.1.sse { (k, profile.trace(k)) } else { start };
        let peak = log_likelihood(best.sse, ln_t.len(), sigma_floor);
        PowerLaw { profile, k, best, peak, cut: interval_cut(ln_t.len()), sigma_floor }
    }

    /// The interval's end towards `toward`: the first crossing of the cut walking out from `k`,
    /// or `toward` itself when there is none before it.
    fn end(&mut self, toward: f64) -> f64 {
        let PowerLaw { profile, k, best, peak, cut, sigma_floor } = self;
        let (k, count, sigma_floor) = (*k, profile.ln_t.len(), *sigma_floor);
        let excess = |fit: FixedPlusGrowth| 2.0 * (*peak - log_likelihood(fit.sse, count, sigma_floor)) - *cut;
        profile.last = best.ratio;
        let (mut inside, mut inside_excess) = (k, excess(*best));
        loop {
            let next =
                if toward < k { (inside - INTERVAL_STEP).max(toward) } else { (inside + INTERVAL_STEP).min(toward) };
            let next_excess = excess(profile.trace(next));
            if next_excess > 0.0 {
                return crossing(
                    |x| excess(profile.trace(x)),
                    (inside, inside_excess),
                    (next, next_excess),
                    EXPONENT_TOLERANCE,
                );
            }
            if next == toward {
                return toward;
            }
            (inside, inside_excess) = (next, next_excess);
        }
    }
}

/// The profile of t = a + b·n^k over k: the best fit of a and b at each k.
struct ExponentProfile<'a> {
    log_sizes: Vec<f64>,
    ln_t: &'a [f64],
    /// n^k at the k last fitted.
    f: Vec<f64>,
    /// The ratio of the fit last made, where `trace` starts.
    last: Option<f64>,
}

impl ExponentProfile<'_> {
    /// The fit at k, the ratio searched over its whole range.
    fn search(&mut self, k: f64) -> FixedPlusGrowth {
        self.fit(k, None)
    }

    /// The fit at k, downhill from the last fit's ratio (from the ratio grid's low edge when the
    /// last fit had a = 0, so a dip there is not missed for a = 0, which is always tried).
    fn trace(&mut self, k: f64) -> FixedPlusGrowth {
        self.fit(k, Some(self.last.unwrap_or(-RATIO_FINE_MARGIN)))
    }

    fn fit(&mut self, k: f64, near: Option<f64>) -> FixedPlusGrowth {
        for (fi, &ln_n) in self.f.iter_mut().zip(&self.log_sizes) {
            *fi = (k * ln_n).exp();
        }
        let fit = fit_fixed_plus_growth(&self.f, self.ln_t, near);
        self.last = fit.ratio;
        fit
    }
}

/// The slope of the least-squares line through (ln n, ln t).
fn log_log_line(log_sizes: &[f64], ln_t: &[f64]) -> f64 {
    let m = log_sizes.len() as f64;
    let (mean_x, mean_y) = (log_sizes.iter().sum::<f64>() / m, ln_t.iter().sum::<f64>() / m);
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for (&x, &y) in log_sizes.iter().zip(ln_t) {
        sxx += (x - mean_x) * (x - mean_x);
        sxy += (x - mean_x) * (y - mean_y);
    }
    sxy / sxx
}
