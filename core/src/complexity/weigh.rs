//! Every class fitted to one series and scored by AICc: what `classify_with` names a class from
//! and what `rules_out` rules one out by, so the two cannot weigh a series differently.

use super::fixed_plus_growth::{fit_fixed_plus_growth, log_likelihood, FixedPlusGrowth};
use super::step::{self, RegimeStep};
use super::{Class, MIN_SIZES};
use crate::fit::FitError;

/// A series, sorted by size, with each class's fit and AICc.
pub(super) struct Weighed {
    pub(super) sizes: Vec<f64>,
    /// ln t at each size, with a change of regime divided out where the series has one.
    pub(super) ln_t: Vec<f64>,
    /// How many distinct sizes the series has.
    pub(super) distinct: usize,
    /// Where the series changes regime, jumping between two sizes (see `step`).
    pub(super) step: Option<RegimeStep>,
    /// Each class's fit, by `Class::index`; none for O(1), which has no growing part.
    pub(super) fits: [Option<FixedPlusGrowth>; 6],
    /// Each class's AICc (plain AIC below `MIN_SIZES` points), by `Class::index`.
    pub(super) scores: [f64; 6],
}

impl Weighed {
    /// Fits every class to `points` of (size, value), believing no residual standard deviation of
    /// ln t below `sigma_floor`, a change of regime at one size divided out first. Errs on fewer
    /// than 3 points, a value or size not positive and finite, or one size only.
    pub(super) fn of(points: &[(f64, f64)], sigma_floor: f64) -> Result<Weighed, FitError> {
        if points.len() < 3 {
            return Err(FitError::TooFewPoints(points.len()));
        }
        if points.iter().any(|&(s, t)| !(s.is_finite() && t.is_finite() && s > 0.0 && t > 0.0)) {
            return Err(FitError::NonPositive);
        }
        let mut distinct: Vec<f64> = points.iter().map(|p| p.0).collect();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        if distinct.len() < 2 {
            return Err(FitError::AllSameSize);
        }
        // Sorted, so that the order the points come in cannot move the sums' rounding.
        let mut sorted = points.to_vec();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let sizes: Vec<f64> = sorted.iter().map(|p| p.0).collect();
        let ln_t: Vec<f64> = sorted.iter().map(|p| p.1.ln()).collect();
        let count = points.len();
        // A change of regime at one size is judged by the growth on its two sides (see `step`).
        let step = step::find(&sizes, &ln_t).map(|(_, s)| s);
        let ln_t = match &step {
            Some(s) => step::divided_out(&sizes, &ln_t, s),
            None => ln_t,
        };

        // AICc's correction divides by count − parameters − 1, which is 0 for a three-parameter
        // class at 4 points; below 5 points the classes are weighed by plain AIC (and the class is
        // unsure).
        let corrected = count >= MIN_SIZES;
        let fits = Class::ALL.map(|class| {
            class.growth(1.0).map(|_| {
                let f: Vec<f64> = sizes.iter().map(|&n| class.growth(n).unwrap_or(0.0)).collect();
                fit_fixed_plus_growth(&f, &ln_t, None)
            })
        });
        let scores = fits.map(|fit| match fit {
            None => information_criterion(centred_sum_of_squares(&ln_t), count, 2.0, corrected, sigma_floor),
            Some(fit) => information_criterion(fit.sse, count, 3.0, corrected, sigma_floor),
        });
        Ok(Weighed { sizes, ln_t, distinct: distinct.len(), step, fits, scores })
    }

    /// The class with the lowest score, the simpler of any tied.
    pub(super) fn best(&self) -> Class {
        Class::ALL.into_iter().fold(Class::Constant, |best, c| {
            if self.scores[c.index()] < self.scores[best.index()] {
                c
            } else {
                best
            }
        })
    }
}

/// AICc (or AIC when `corrected` is false) of a fit with `parameters` fitted values, the residual
/// variance among them, no lower than `sigma_floor`².
fn information_criterion(sse: f64, count: usize, parameters: f64, corrected: bool, sigma_floor: f64) -> f64 {
    let n = count as f64;
    let correction = if corrected { 2.0 * parameters * (parameters + 1.0) / (n - parameters - 1.0) } else { 0.0 };
    -2.0 * log_likelihood(sse, count, sigma_floor) + 2.0 * parameters + correction
}

/// The sum of squared deviations of `values` from their mean.
fn centred_sum_of_squares(values: &[f64]) -> f64 {
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    values.iter().map(|v| (v - mean).powi(2)).sum()
}
