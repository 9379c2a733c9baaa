//! The limits a measured workload is judged against, and the verdict: its slope under core's noise
//! rule (the one the server's alert rules apply), its complexity class as core names it. `check`
//! fails on these verdicts; `run` and `measure` print them at the default limit.

use slopewatch_core::complexity::{classify_with, Class, Complexity, Noise};
use slopewatch_core::fit::{fit, Fit};
use slopewatch_core::verdict::{self as rule, NoiseRule, SlopeEvidence};
use slopewatch_core::wire::{self, Contract};
use std::fmt;

/// The slope limit when none is given: between linear (1) and quadratic (2).
pub const DEFAULT_MAX_SLOPE: f64 = 1.5;

/// What a workload must stay under, and the evidence a slope must show to be judged either way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// The server's noise rule, with the server's defaults unless changed.
    pub noise: NoiseRule,
    /// The largest slope allowed; none when only the class is gated.
    pub max_slope: Option<f64>,
    /// The most complex class allowed; none when the class is not gated.
    pub max_class: Option<Class>,
    /// The class the workload may cost, judged instead of both limits: a contract probe's, or a
    /// configured workload's `expect`.
    pub contract: Option<Class>,
}

impl Default for Limits {
    /// The limit `run` and `measure` judge by, and `check`'s when given no limit.
    fn default() -> Limits {
        Limits { noise: NoiseRule::default(), max_slope: Some(DEFAULT_MAX_SLOPE), max_class: None, contract: None }
    }
}

/// A measured workload's verdict against the limits.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Clearly under every limit in force.
    Ok,
    /// Over the slope limit, the class limit, or both: the limits it is over.
    Over { slope: Option<f64>, class: Option<Class> },
    /// Named a class at least a polynomial step above its contract's: the class it was held to.
    OverContract(Class),
    /// Over no limit, but not clearly under every one: why not.
    Unsure(String),
}

impl fmt::Display for Verdict {
    /// `ok`, `OVER 1.5`, `OVER O(n)`, `OVER 1.5, O(n)` or `unsure`: the table's verdict column.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Ok => f.write_str("ok"),
            Verdict::Over { slope, class } => {
                let over: Vec<String> =
                    slope.map(|s| s.to_string()).into_iter().chain(class.map(|c| c.label().to_string())).collect();
                write!(f, "OVER {}", over.join(", "))
            }
            Verdict::OverContract(expected) => write!(f, "OVER CONTRACT {}", expected.label()),
            Verdict::Unsure(_) => f.write_str("unsure"),
        }
    }
}

impl Limits {
    /// The limits of a workload held to `contract` (its expected class), when it has one: the
    /// contract instead of the slope and class limits, under the same noise rule.
    pub fn of(&self, contract: Option<&Contract>) -> Limits {
        match contract {
            Some(c) => Limits { max_slope: None, max_class: None, contract: Some(c.expected), ..*self },
            None => *self,
        }
    }

    /// The slope limit the sweep judges growth by: the one in force, or the default when only the
    /// class is gated; under a contract, half a degree above the expected class's.
    pub fn slope_limit(&self) -> f64 {
        match self.contract {
            Some(expected) => f64::from(wire::degree(expected)) + 0.5,
            None => self.max_slope.unwrap_or(DEFAULT_MAX_SLOPE),
        }
    }

    /// The verdict on a workload's fit and class (`None` when the medians could not be fitted or
    /// classified). A slope is over or under only on the noise rule's evidence; a class is over
    /// only when named, so an unsure class never fails.
    pub fn judge(&self, fit: Option<&Fit>, complexity: Option<&Complexity>) -> Verdict {
        if let Some(expected) = self.contract {
            return match complexity.and_then(|c| c.class) {
                Some(class) if wire::breaks(expected, class) => Verdict::OverContract(expected),
                Some(_) => Verdict::Ok,
                None => Verdict::Unsure(class_doubt(complexity)),
            };
        }
        let mut over = (None, None);
        let mut doubts = Vec::new();
        if let Some(max) = self.max_slope {
            match fit.map(|f| (f, self.noise.slope(&SlopeEvidence::from(f), max))) {
                Some((_, rule::Verdict::Over)) => over.0 = Some(max),
                Some((_, rule::Verdict::Under)) => {}
                Some((f, rule::Verdict::Unsure)) => doubts.push(self.slope_doubt(f)),
                None => doubts.push("no slope".to_string()),
            }
        }
        if let Some(max) = self.max_class {
            match rule::class(complexity, max) {
                rule::Verdict::Over => over.1 = Some(max),
                rule::Verdict::Under => {}
                rule::Verdict::Unsure => doubts.push(class_doubt(complexity)),
            }
        }
        match over {
            (None, None) if doubts.is_empty() => Verdict::Ok,
            (None, None) => Verdict::Unsure(doubts.join("; ")),
            (slope, class) => Verdict::Over { slope, class },
        }
    }

    /// Whether measuring more sizes could name a class for `points` of (size, median time): the
    /// class is unsure while the slope is clearly under the limit. A workload over the limit, or
    /// unsure on it, is not worth it: its verdict needs no class, and on a quadratic libc every
    /// size more is expensive.
    /// `noise` says whether the points are exact counts.
    pub fn class_worth_widening(&self, points: &[(f64, f64)], noise: Noise) -> bool {
        let unsure = || classify_with(points, noise).is_ok_and(|c| c.class.is_none());
        if self.contract.is_some() {
            return unsure();
        }
        let Ok(fit) = fit(points) else { return false };
        self.noise.slope(&SlopeEvidence::from(&fit), self.slope_limit()) == rule::Verdict::Under && unsure()
    }

    /// What kept a slope from being judged: too few sizes, a poor fit, or an interval that reaches
    /// past the limit.
    fn slope_doubt(&self, fit: &Fit) -> String {
        if fit.n < self.noise.min_sizes {
            format!("{} sizes", fit.n)
        } else if fit.r2 < self.noise.min_r2 {
            format!("R² {:.2}", fit.r2)
        } else {
            format!("95% CI [{:.2}, {:.2}]", fit.ci_low, fit.ci_high)
        }
    }
}

/// What kept a class from being named: the two classes the evidence did not separate.
fn class_doubt(complexity: Option<&Complexity>) -> String {
    match complexity {
        Some(c) => format!("class {} or {}", c.best.label(), c.runner_up.label()),
        None => "no class".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slopewatch_core::complexity::classify;

    fn points(f: impl Fn(f64) -> f64, sizes: usize, step: f64) -> Vec<(f64, f64)> {
        (0..sizes).map(|i| 1024.0 * step.powi(i as i32)).map(|n| (n, f(n))).collect()
    }

    fn judged(limits: &Limits, p: &[(f64, f64)]) -> Verdict {
        limits.judge(fit(p).ok().as_ref(), classify(p).ok().as_ref())
    }

    #[test]
    fn a_clean_slope_is_ok_or_over_and_a_disturbed_one_is_unsure_with_the_reason() {
        let limits = Limits::default();
        assert_eq!(judged(&limits, &points(|n| 3.0 * n, 6, 2.0)), Verdict::Ok);
        let quadratic = points(|n| n * n, 6, 2.0);
        assert_eq!(judged(&limits, &quadratic), Verdict::Over { slope: Some(1.5), class: None });
        let mut disturbed = points(|n| 3.0 * n, 5, 2.0);
        disturbed[2].1 *= 10.0;
        match judged(&limits, &disturbed) {
            Verdict::Unsure(why) => assert!(why.starts_with("R² 0."), "{why}"),
            other => panic!("{other:?}"),
        }
        let three = points(|n| 3.0 * n, 3, 2.0);
        assert_eq!(judged(&limits, &three), Verdict::Unsure("3 sizes".into()));
    }

    #[test]
    fn the_class_limit_fails_only_a_named_class_above_it() {
        let class_only = Limits { max_slope: None, max_class: Some(Class::Linear), ..Limits::default() };
        let quadratic = points(|n| n * n, 6, 2.0);
        assert_eq!(judged(&class_only, &quadratic), Verdict::Over { slope: None, class: Some(Class::Linear) });
        assert_eq!(judged(&class_only, &points(|n| 3.0 * n, 6, 2.0)), Verdict::Ok);
        // Four sizes name no class: unsure, whatever the slope.
        match judged(&class_only, &points(|n| n * n, 4, 2.0)) {
            Verdict::Unsure(why) => assert!(why.starts_with("class "), "{why}"),
            other => panic!("{other:?}"),
        }
        let both = Limits { max_class: Some(Class::Linear), ..Limits::default() };
        let verdict = judged(&both, &quadratic);
        assert_eq!(verdict, Verdict::Over { slope: Some(1.5), class: Some(Class::Linear) });
        assert_eq!(verdict.to_string(), "OVER 1.5, O(n)");
        let allowed = Limits { max_class: Some(Class::Quadratic), ..class_only };
        assert_eq!(judged(&allowed, &quadratic), Verdict::Ok);
    }

    #[test]
    fn a_contract_is_judged_by_its_class_a_polynomial_step_up_and_not_by_the_slope() {
        let held = Limits::default().of(Some(&Contract::expecting(Class::Constant)));
        assert_eq!(judged(&held, &points(|_| 500.0, 8, 2.0)), Verdict::Ok);
        assert_eq!(judged(&held, &points(|n| 500.0 + 3.0 * n, 8, 2.0)), Verdict::OverContract(Class::Constant));
        assert_eq!(judged(&held, &points(|n| 500.0 * n.ln(), 8, 2.0)), Verdict::Ok, "O(log n) is no break of O(1)");
        let sort = Limits::default().of(Some(&Contract::expecting(Class::NLogN)));
        let verdict = judged(&sort, &points(|n| n * n, 8, 2.0));
        assert_eq!(verdict, Verdict::OverContract(Class::NLogN), "a slope of 2 is under no slope limit here");
        assert_eq!(verdict.to_string(), "OVER CONTRACT O(n log n)");
        assert_eq!(held.slope_limit(), 0.5);
        assert_eq!(Limits::default().of(None), Limits::default());
    }

    #[test]
    fn only_an_unsure_class_under_the_slope_limit_is_worth_more_sizes() {
        let limits = Limits::default();
        // A fixed cost plus linear work over 2×, with 3% noise: too narrow to tell n from n log n.
        let mut narrow = points(|n| 2000.0 + 3.0 * n, 5, 2f64.powf(0.25));
        narrow.iter_mut().zip([1.0, 1.03, 0.98, 1.02, 0.99]).for_each(|(p, noise)| p.1 *= noise);
        assert!(classify(&narrow).unwrap().class.is_none());
        assert!(limits.class_worth_widening(&narrow, Noise::Measured));
        // Three sizes more, doubling past the largest, tell them apart.
        let largest = narrow[4].0;
        narrow.extend((1..=3).map(|i| largest * 2f64.powi(i)).map(|n| (n, 2000.0 + 3.0 * n)));
        assert_eq!(classify(&narrow).unwrap().class, Some(Class::Linear));
        assert!(!limits.class_worth_widening(&narrow, Noise::Measured));
        assert!(!limits.class_worth_widening(&points(|n| 3.0 * n, 6, 2.0), Noise::Measured), "already named");
        assert!(!limits.class_worth_widening(&points(|n| n * n, 4, 2.0), Noise::Measured), "over the slope limit");
        let mut disturbed = points(|n| 3.0 * n, 5, 2.0);
        disturbed[2].1 *= 10.0;
        assert!(!limits.class_worth_widening(&disturbed, Noise::Measured), "unsure on the slope");
    }
}
