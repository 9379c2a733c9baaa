//! The verdict: whether one measurement is over its limit, its class or its contract, and how
//! sure that is. The one decision the agent's `check` gate, its `bisect` and the server's alert
//! rules all make, so that a build fails on exactly the evidence that would open a regression, and
//! one disturbed fit does neither. (A regression also depends on the versions before; that part
//! is the server's rules'.)
//!
//! - **A slope** counts as over a limit `T` only when it is above `T`, its 95% interval's lower
//!   bound is above `T - ci_margin` (the data rules out growth well below the limit, not merely
//!   puts the point estimate over it), R² is at least `min_r2`, and the fit spans at least
//!   `min_sizes` sizes; under by the mirror rule; anything else is unsure.
//! - **A class** counts against the most complex class allowed only when named: `unsure` is
//!   never over nor under. A named class a polynomial degree or more above the allowed one is
//!   over only as far as the exponent of its power law bears it out: O(n²) against O(n) only when
//!   the exponent's 95% interval lies above 1, O(n³) two degrees over only above 2.
//! - **A contract** (a probe's, or a workload's `expect`) is judged by the class alone, instead
//!   of both limits: broken a polynomial degree up (O(1) read as O(n), O(n log n) as O(n²)),
//!   never by a logarithm (O(1) read as O(log n)), since a logarithm is what noise and caches
//!   bend a line by; and, as for a class, only as far as the exponent bears it out.
//! - **Together**, a measurement is over when any limit in force is, by the most degrees any is
//!   over; under when none is over and one is clearly under (a slope that is unsure beside a
//!   clear O(n) is no regression, and a fixed cost can hold the slope under the limit while the
//!   class is O(n²)); unsure otherwise, with what kept each limit from a decision.

use crate::complexity::{Class, Complexity};
use crate::wire::Contract;
use std::fmt;

/// The slope limit when none is given: between linear (1) and quadratic (2).
pub const DEFAULT_MAX_SLOPE: f64 = 1.5;

/// The verdict on one measurement, or on one track of the server's rules.
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
    /// The verdict on `fit` against the slope limit `threshold`.
    pub fn slope(&self, fit: &SlopeEvidence, threshold: f64) -> Verdict {
        match self.slope_part(fit, threshold) {
            Part::Over(_) => Verdict::Over,
            Part::Under => Verdict::Under,
            Part::Unsure(_) => Verdict::Unsure,
        }
    }

    fn slope_part(&self, fit: &SlopeEvidence, threshold: f64) -> Part {
        let trusted = fit.sizes >= self.min_sizes && fit.r2 >= self.min_r2;
        if trusted && fit.slope > threshold && fit.ci_low > threshold - self.ci_margin {
            Part::Over(1)
        } else if trusted && fit.slope <= threshold && fit.ci_high < threshold + self.ci_margin {
            Part::Under
        } else if fit.sizes < self.min_sizes {
            Part::Unsure(Doubt::Sizes(fit.sizes))
        } else if fit.r2 < self.min_r2 {
            Part::Unsure(Doubt::Fit { r2: fit.r2 })
        } else {
            Part::Unsure(Doubt::Interval { low: fit.ci_low, high: fit.ci_high })
        }
    }
}

/// What a measurement is held to: a slope limit, a class limit, or both; or a contract instead of
/// either. The agent's gate takes them from its flags, the server's rules from `[alerts]` (`rule =
/// "slope"` a slope limit at the threshold, `"class"` a class limit of O(n log n), `"either"`
/// both) and each workload's contract.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// What a slope must show to be judged either way.
    pub noise: NoiseRule,
    /// The largest slope allowed; none when the slope is not judged.
    pub max_slope: Option<f64>,
    /// The most complex class allowed; none when the class is not judged.
    pub max_class: Option<Class>,
    /// The class the workload may cost, judged instead of both limits.
    pub contract: Option<Class>,
}

impl Default for Limits {
    /// The default slope limit, under the default noise rule.
    fn default() -> Limits {
        Limits { noise: NoiseRule::default(), max_slope: Some(DEFAULT_MAX_SLOPE), max_class: None, contract: None }
    }
}

/// The decision on one measurement against its limits.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// No limit is over, and one is clearly under.
    Under,
    /// Over a limit, its class limit or its contract.
    Over(Breach),
    /// Over nothing, under nothing clearly: what kept each limit from a decision.
    Unsure(Vec<Doubt>),
}

/// What a measurement over its limits is over, and how far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Breach {
    /// The slope limit it is over.
    pub slope: Option<f64>,
    /// The class limit its class is over.
    pub class: Option<Class>,
    /// The contract's class it broke.
    pub contract: Option<Class>,
    /// How far over, at least 1: the polynomial degrees of growth above what is allowed that the
    /// exponent bears out (O(1) read as O(n) breaks its contract by 1, as O(n²) by 2; O(n³)
    /// against a limit of O(n log n) is 2 over), 1 over a slope limit or a logarithm over a class
    /// limit (O(n log n) against O(n)).
    pub degrees: u8,
}

/// Why a limit could not be judged either way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Doubt {
    /// No slope could be fitted.
    NoSlope,
    /// The fit spans too few sizes.
    Sizes(usize),
    /// The log-log line explains too little of the variance.
    Fit { r2: f64 },
    /// The slope's 95% interval reaches past the limit on the other side.
    Interval { low: f64, high: f64 },
    /// No class was worked out.
    NoClass,
    /// The evidence did not separate two classes.
    Classes { best: Class, runner_up: Class },
    /// A class named above the limit whose exponent does not rule out the allowed degree.
    Exponent { class: Class, low: Option<f64> },
}

impl fmt::Display for Doubt {
    /// `3 sizes`, `R² 0.62`, `95% CI [1.20, 1.90]`, `class O(n) or O(n log n)`, …: the agent's
    /// reason for an unsure verdict.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Doubt::NoSlope => f.write_str("no slope"),
            Doubt::Sizes(n) => write!(f, "{n} sizes"),
            Doubt::Fit { r2 } => write!(f, "R² {r2:.2}"),
            Doubt::Interval { low, high } => write!(f, "95% CI [{low:.2}, {high:.2}]"),
            Doubt::NoClass => f.write_str("no class"),
            Doubt::Classes { best, runner_up } => write!(f, "class {} or {}", best.label(), runner_up.label()),
            Doubt::Exponent { class, low: Some(low) } => {
                write!(f, "class {} with an exponent from {low:.2}", class.label())
            }
            Doubt::Exponent { class, low: None } => write!(f, "class {} without an exponent", class.label()),
        }
    }
}

impl Decision {
    /// Over, under or unsure.
    pub fn verdict(&self) -> Verdict {
        match self {
            Decision::Under => Verdict::Under,
            Decision::Over(_) => Verdict::Over,
            Decision::Unsure(_) => Verdict::Unsure,
        }
    }

    /// How far over: [`Breach::degrees`], 0 unless over.
    pub fn degrees(&self) -> u8 {
        match self {
            Decision::Over(b) => b.degrees,
            _ => 0,
        }
    }

    /// What kept it from a decision, `; `-separated; empty unless unsure.
    pub fn doubts(&self) -> String {
        match self {
            Decision::Unsure(doubts) => doubts.iter().map(Doubt::to_string).collect::<Vec<_>>().join("; "),
            _ => String::new(),
        }
    }
}

/// One limit's part in a decision.
enum Part {
    Over(u8),
    Under,
    Unsure(Doubt),
}

impl Part {
    /// How far over a limit in force is, when it is.
    fn over_by(part: Option<&Part>) -> Option<u8> {
        match part {
            Some(Part::Over(degrees)) => Some(*degrees),
            _ => None,
        }
    }
}

impl Limits {
    /// A contract of `expected` alone, under the default noise rule.
    pub fn contract(expected: Class) -> Limits {
        Limits { max_slope: None, max_class: None, contract: Some(expected), ..Limits::default() }
    }

    /// The limits of a workload held to `contract`, when it has one: the contract instead of the
    /// slope and class limits, under the same noise rule.
    pub fn of(&self, contract: Option<&Contract>) -> Limits {
        match contract {
            Some(c) => Limits { max_slope: None, max_class: None, contract: Some(c.expected), ..*self },
            None => *self,
        }
    }

    /// The slope limit a sweep judges growth by: the one in force, or the default when only the
    /// class is judged; under a contract, half a degree above the expected class's.
    pub fn slope_limit(&self) -> f64 {
        match self.contract {
            Some(expected) => f64::from(expected.degree()) + 0.5,
            None => self.max_slope.unwrap_or(DEFAULT_MAX_SLOPE),
        }
    }

    /// The decision on a measurement's slope and class (`None` where the medians could not be
    /// fitted or classified).
    pub fn judge(&self, slope: Option<&SlopeEvidence>, complexity: Option<&Complexity>) -> Decision {
        if let Some(expected) = self.contract {
            return match over_class(complexity, expected, true) {
                Part::Over(degrees) => {
                    Decision::Over(Breach { slope: None, class: None, contract: Some(expected), degrees })
                }
                Part::Under => Decision::Under,
                Part::Unsure(doubt) => Decision::Unsure(vec![doubt]),
            };
        }
        let slope = self.max_slope.map(|max| match slope {
            Some(s) => self.noise.slope_part(s, max),
            None => Part::Unsure(Doubt::NoSlope),
        });
        let class = self.max_class.map(|max| over_class(complexity, max, false));
        let (slope_over, class_over) = (Part::over_by(slope.as_ref()), Part::over_by(class.as_ref()));
        if let Some(degrees) = slope_over.max(class_over) {
            return Decision::Over(Breach {
                slope: self.max_slope.filter(|_| slope_over.is_some()),
                class: self.max_class.filter(|_| class_over.is_some()),
                contract: None,
                degrees,
            });
        }
        let parts = [slope, class];
        if parts.iter().flatten().any(|p| matches!(p, Part::Under)) {
            return Decision::Under;
        }
        Decision::Unsure(
            parts.into_iter().flatten().filter_map(|p| if let Part::Unsure(d) = p { Some(d) } else { None }).collect(),
        )
    }
}

/// Where a class stands against `allowed`: the most complex class a limit allows, or a contract's
/// class (`contract`), which only a polynomial step above breaks.
fn over_class(complexity: Option<&Complexity>, allowed: Class, contract: bool) -> Part {
    let Some(c) = complexity else { return Part::Unsure(Doubt::NoClass) };
    let Some(class) = c.class else { return Part::Unsure(Doubt::Classes { best: c.best, runner_up: c.runner_up }) };
    let (have, limit) = (class.degree(), allowed.degree());
    if class <= allowed || (contract && have <= limit) {
        return Part::Under;
    }
    if have <= limit {
        // A logarithm above the class limit: nothing for an exponent to bear out.
        return Part::Over(1);
    }
    let shown = have.min(degrees_ruled_out(c.exponent_ci_low));
    if shown > limit {
        Part::Over(shown - limit)
    } else {
        Part::Unsure(Doubt::Exponent { class, low: c.exponent_ci_low })
    }
}

/// The degree of growth the exponent's interval shows at least: one above the highest integer
/// its lower bound lies above (1.3 rules out linear growth: 2; 2.0 does not rule out quadratic:
/// 2), 0 without an exponent.
fn degrees_ruled_out(low: Option<f64>) -> u8 {
    match low {
        Some(low) if low > 0.0 => low.ceil().min(f64::from(u8::MAX)) as u8,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(slope: f64, half_width: f64, r2: f64, sizes: usize) -> SlopeEvidence {
        SlopeEvidence { slope, ci_low: slope - half_width, ci_high: slope + half_width, r2, sizes }
    }

    fn named(class: Option<Class>, low: f64) -> Complexity {
        Complexity {
            class,
            best: class.unwrap_or(Class::Linear),
            weight: 0.9,
            runner_up: Class::NLogN,
            runner_up_weight: 0.1,
            exponent: Some(low + 0.1),
            exponent_ci_low: Some(low),
            exponent_ci_high: Some(low + 0.2),
            step: None,
        }
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
    fn an_unsure_slope_says_what_kept_it_from_a_decision() {
        let limits = Limits::default();
        let doubt = |e: SlopeEvidence| limits.judge(Some(&e), None).doubts();
        assert_eq!(doubt(evidence(2.0, 0.1, 0.99, 3)), "3 sizes");
        assert_eq!(doubt(evidence(2.0, 0.1, 0.62, 5)), "R² 0.62");
        assert_eq!(doubt(evidence(1.6, 0.5, 0.99, 5)), "95% CI [1.10, 2.10]");
        assert_eq!(limits.judge(None, None), Decision::Unsure(vec![Doubt::NoSlope]));
    }

    #[test]
    fn a_class_is_judged_only_when_named_and_only_as_far_as_its_exponent_bears_it_out() {
        let class_limit = |max| Limits { max_slope: None, max_class: Some(max), ..Limits::default() };
        let over = |max, c: Complexity| class_limit(max).judge(None, Some(&c));
        let linear = Class::Linear;
        assert_eq!(over(linear, named(Some(Class::Quadratic), 1.9)).degrees(), 1);
        assert_eq!(over(Class::NLogN, named(Some(Class::Cubic), 2.9)).degrees(), 2);
        assert_eq!(over(Class::NLogN, named(Some(Class::Cubic), 1.5)).degrees(), 1, "not shown above 2");
        assert_eq!(over(Class::NLogN, named(Some(Class::Cubic), 2.0)).degrees(), 1, "2 itself is not ruled out");
        assert_eq!(over(linear, named(Some(Class::NLogN), 1.0)).degrees(), 1, "a logarithm over the limit");
        assert_eq!(over(Class::NLogN, named(Some(Class::NLogN), 1.0)), Decision::Under);
        assert_eq!(
            over(linear, named(Some(Class::Quadratic), 0.7)),
            Decision::Unsure(vec![Doubt::Exponent { class: Class::Quadratic, low: Some(0.7) }]),
            "linear growth not ruled out"
        );
        assert_eq!(over(linear, named(None, 1.9)).doubts(), "class O(n) or O(n log n)");
        assert_eq!(class_limit(linear).judge(None, None).doubts(), "no class");
    }

    #[test]
    fn a_contract_is_broken_a_polynomial_step_up_and_only_as_far_as_the_exponent_bears_it_out() {
        let judge = |expected, c: Complexity| Limits::contract(expected).judge(None, Some(&c));
        let one = Class::Constant;
        let broken = |degrees| Decision::Over(Breach { slope: None, class: None, contract: Some(one), degrees });
        assert_eq!(judge(one, named(Some(Class::Linear), 0.9)), broken(1));
        assert_eq!(judge(one, named(Some(Class::Quadratic), 1.9)), broken(2));
        assert_eq!(judge(one, named(Some(Class::Quadratic), 0.5)), broken(1), "only linear growth is shown");
        assert_eq!(judge(one, named(Some(Class::Log), 0.1)), Decision::Under, "a logarithm is no break");
        assert_eq!(judge(Class::NLogN, named(Some(Class::Quadratic), 1.9)).degrees(), 1);
        assert_eq!(judge(Class::Linear, named(Some(Class::NLogN), 1.0)), Decision::Under);
        assert_eq!(judge(one, named(Some(Class::Linear), -0.2)).verdict(), Verdict::Unsure, "flat not ruled out");
        assert_eq!(judge(one, named(None, 1.0)).verdict(), Verdict::Unsure);
        // A contract replaces the limits: a slope of 2 under an O(n log n) contract is no breach.
        let sort = Limits::default().of(Some(&Contract::expecting(Class::NLogN)));
        let steep = evidence(2.0, 0.05, 0.999, 8);
        assert_eq!(sort.judge(Some(&steep), Some(&named(Some(Class::NLogN), 1.0))), Decision::Under);
        assert_eq!(Limits::contract(one).slope_limit(), 0.5);
        assert_eq!(Limits::default().of(None), Limits::default());
    }

    #[test]
    fn two_limits_are_over_when_one_is_and_under_when_none_is_over_and_one_is_under() {
        let both = Limits { max_class: Some(Class::NLogN), ..Limits::default() };
        let clean = |slope| evidence(slope, 0.05, 0.999, 8);
        let quadratic = named(Some(Class::Quadratic), 1.8);
        let over = both.judge(Some(&clean(1.2)), Some(&quadratic));
        assert_eq!(over, Decision::Over(Breach { slope: None, class: Some(Class::NLogN), contract: None, degrees: 1 }));
        let over = both.judge(Some(&clean(2.0)), Some(&quadratic));
        assert_eq!(
            over,
            Decision::Over(Breach { slope: Some(1.5), class: Some(Class::NLogN), contract: None, degrees: 1 })
        );
        assert_eq!(both.judge(Some(&clean(1.0)), Some(&named(None, 0.9))), Decision::Under, "the slope says under");
        let wide = SlopeEvidence { ci_high: 1.9, ..clean(1.3) };
        assert_eq!(both.judge(Some(&wide), Some(&named(Some(Class::Linear), 0.9))), Decision::Under);
        assert_eq!(
            both.judge(Some(&wide), Some(&named(None, 0.9))).doubts(),
            "95% CI [1.25, 1.90]; class O(n) or O(n log n)"
        );
    }
}
