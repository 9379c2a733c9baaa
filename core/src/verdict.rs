//! Whether a fit is over a limit, under it, or unsure: the noise rule that the server's alert
//! rules and the agent's `check` gate share, so that a build fails on exactly the evidence that
//! would open a regression, and one disturbed fit does neither.
//!
//! A slope counts as **over** a threshold `T` only when it is above `T`, its 95% interval's lower
//! bound is above `T - ci_margin` (the data rules out growth well below the threshold, not merely
//! puts the point estimate over it), R² is at least `min_r2`, and the fit spans at least
//! `min_sizes` sizes. It counts as **under** by the mirror rule: at most `T`, upper bound below
//! `T + ci_margin`, the same R² and sizes. Anything else is *unsure*.
//!
//! A complexity class counts against a limit only when named: `unsure` is never over nor under.
//! `classify` names a class only when every simpler class is ruled out (docs/complexity.md), so a
//! class over the limit has the limit's own class ruled out: a named O(n log n) has linear growth
//! outside its exponent's interval, and a named O(n²) too.

use crate::complexity::{Class, Complexity};

/// The verdict on one fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Over,
    Under,
    Unsure,
}

/// What a slope has to show before it is believed either way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseRule {
    /// Fewest sizes a trusted fit spans: three points fit almost any curve.
    pub min_sizes: usize,
    /// Least share of the variance the log-log line must explain.
    pub min_r2: f64,
    /// How far past the threshold the 95% interval may reach on the other side.
    pub ci_margin: f64,
}

impl Default for NoiseRule {
    fn default() -> NoiseRule {
        NoiseRule { min_sizes: 4, min_r2: 0.9, ci_margin: 0.2 }
    }
}

/// A fitted slope as the noise rule reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlopeEvidence {
    pub slope: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub r2: f64,
    /// How many sizes the fit spans.
    pub sizes: usize,
}

impl From<&crate::fit::Fit> for SlopeEvidence {
    fn from(f: &crate::fit::Fit) -> SlopeEvidence {
        SlopeEvidence { slope: f.slope, ci_low: f.ci_low, ci_high: f.ci_high, r2: f.r2, sizes: f.n }
    }
}

impl NoiseRule {
    /// The verdict on `fit` against the slope threshold `threshold`.
    pub fn slope(&self, fit: &SlopeEvidence, threshold: f64) -> Verdict {
        let trusted = fit.sizes >= self.min_sizes && fit.r2 >= self.min_r2;
        if trusted && fit.slope > threshold && fit.ci_low > threshold - self.ci_margin {
            Verdict::Over
        } else if trusted && fit.slope <= threshold && fit.ci_high < threshold + self.ci_margin {
            Verdict::Under
        } else {
            Verdict::Unsure
        }
    }
}

/// The verdict on a complexity against the most complex class allowed: over when the named class
/// is above `max`, under when it is `max` or simpler, unsure when no class is named (or there is
/// no complexity at all).
pub fn class(complexity: Option<&Complexity>, max: Class) -> Verdict {
    match complexity.and_then(|c| c.class) {
        Some(class) if class > max => Verdict::Over,
        Some(_) => Verdict::Under,
        None => Verdict::Unsure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(slope: f64, half_width: f64, r2: f64, sizes: usize) -> SlopeEvidence {
        SlopeEvidence { slope, ci_low: slope - half_width, ci_high: slope + half_width, r2, sizes }
    }

    #[test]
    fn a_slope_is_over_or_under_only_when_the_evidence_is_clean() {
        let rule = NoiseRule::default();
        assert_eq!(rule.slope(&evidence(2.0, 0.1, 0.99, 5), 1.5), Verdict::Over);
        assert_eq!(rule.slope(&evidence(1.0, 0.1, 0.99, 5), 1.5), Verdict::Under);
        assert_eq!(rule.slope(&evidence(1.6, 0.5, 0.99, 5), 1.5), Verdict::Unsure, "interval reaches 1.1");
        assert_eq!(rule.slope(&evidence(1.4, 0.4, 0.99, 5), 1.5), Verdict::Unsure, "interval reaches 1.8");
        assert_eq!(rule.slope(&evidence(2.0, 0.1, 0.85, 5), 1.5), Verdict::Unsure, "R² under 0.9");
        assert_eq!(rule.slope(&evidence(2.0, 0.1, 0.99, 3), 1.5), Verdict::Unsure, "three sizes");
        let lenient = NoiseRule { min_r2: 0.8, ci_margin: 0.5, ..rule };
        assert_eq!(lenient.slope(&evidence(1.6, 0.5, 0.85, 5), 1.5), Verdict::Over);
    }

    #[test]
    fn a_class_is_judged_only_when_named() {
        let named = |class: Option<Class>| Complexity {
            class,
            best: Class::Quadratic,
            weight: 0.9,
            runner_up: Class::Cubic,
            runner_up_weight: 0.1,
            exponent: Some(2.0),
            exponent_ci_low: Some(1.9),
            exponent_ci_high: Some(2.1),
        };
        assert_eq!(class(Some(&named(Some(Class::Quadratic))), Class::Linear), Verdict::Over);
        assert_eq!(class(Some(&named(Some(Class::NLogN))), Class::NLogN), Verdict::Under);
        assert_eq!(class(Some(&named(None)), Class::Linear), Verdict::Unsure);
        assert_eq!(class(None, Class::Linear), Verdict::Unsure);
    }
}
