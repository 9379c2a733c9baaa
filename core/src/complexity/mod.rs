//! Complexity classes: which of O(1), O(log n), O(n), O(n log n), O(n²) and O(n³) a series of
//! (size, time) grows by, how decisively, and the exponent of a power law with a fixed start-up
//! cost. The method and the reasons for it are in docs/complexity.md.

mod fixed_plus_growth;
mod power_law;
mod ruled_out;
mod search;
mod step;
mod weigh;

use serde::{Deserialize, Serialize};

use crate::fit::{t_quantile_975, FitError};
use power_law::{exponent_rules_out, power_law_exponent};
pub use ruled_out::{rules_out, step_shown};
pub use step::RegimeStep;
use weigh::Weighed;

/// A growth class. The derived order runs from the simplest to the most complex.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Class {
    #[serde(rename = "1")]
    Constant,
    #[serde(rename = "log n")]
    Log,
    #[serde(rename = "n")]
    Linear,
    #[serde(rename = "n log n")]
    NLogN,
    #[serde(rename = "n^2")]
    Quadratic,
    #[serde(rename = "n^3")]
    Cubic,
}

impl Class {
    /// Every class, simplest first.
    pub const ALL: [Class; 6] =
        [Class::Constant, Class::Log, Class::Linear, Class::NLogN, Class::Quadratic, Class::Cubic];

    /// The class as the API writes it: `"1"`, `"log n"`, `"n"`, `"n log n"`, `"n^2"` or `"n^3"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Constant => "1",
            Class::Log => "log n",
            Class::Linear => "n",
            Class::NLogN => "n log n",
            Class::Quadratic => "n^2",
            Class::Cubic => "n^3",
        }
    }

    /// The class as people read it: `"O(1)"` … `"O(n³)"`.
    pub fn label(self) -> &'static str {
        match self {
            Class::Constant => "O(1)",
            Class::Log => "O(log n)",
            Class::Linear => "O(n)",
            Class::NLogN => "O(n log n)",
            Class::Quadratic => "O(n²)",
            Class::Cubic => "O(n³)",
        }
    }

    /// The polynomial degree the class grows by, logarithms aside: 0 for O(1) and O(log n), 1 for
    /// O(n) and O(n log n), 2 for O(n²), 3 for O(n³).
    pub fn degree(self) -> u8 {
        match self {
            Class::Constant | Class::Log => 0,
            Class::Linear | Class::NLogN => 1,
            Class::Quadratic => 2,
            Class::Cubic => 3,
        }
    }

    /// The class `as_str` writes as `s`.
    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// f(n) in t = a + b·f(n); O(1) has no growing part.
    fn growth(self, n: f64) -> Option<f64> {
        match self {
            Class::Constant => None,
            Class::Log => Some(n.ln()),
            Class::Linear => Some(n),
            Class::NLogN => Some(n * n.ln()),
            Class::Quadratic => Some(n * n),
            Class::Cubic => Some(n * n * n),
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// The power law's exponent at the classes it nests and no class does, O(n), O(n²) and O(n³):
    /// whether the data rule these out the exponent's interval tells. O(1) is the power law at
    /// k = 0 too, but every class nests it (b → 0), so AICc weighs it against each directly.
    fn interval_exponent(self) -> Option<f64> {
        match self {
            Class::Linear => Some(1.0),
            Class::Quadratic => Some(2.0),
            Class::Cubic => Some(3.0),
            Class::Constant | Class::Log | Class::NLogN => None,
        }
    }
}

/// What a series' values carry besides the work measured, which is what the class decision must
/// allow for. docs/complexity.md says what each changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Noise {
    /// Measured times, wall clock or CPU: each size's median is off by chance, by 0.1% at best.
    #[default]
    Measured,
    /// Counts that are the same on every run, such as instructions counted under Valgrind. What
    /// such a series does not share with a class is the work's own lower-order terms, not chance,
    /// so there is no margin for chance between classes. Only for values that repeat exactly:
    /// noise in them would be read as shape.
    Exact,
}

impl Noise {
    /// The smallest residual standard deviation of ln t believed.
    fn sigma_floor(self) -> f64 {
        match self {
            Noise::Measured => MEASURED_SIGMA_FLOOR,
            Noise::Exact => EXACT_SIGMA_FLOOR,
        }
    }

    /// How much worse a class's AICc must be than the best's to be separated from it, at `count`
    /// points: `separation` for measured times, nothing for exact counts (a tie goes to the
    /// simpler class).
    fn separation(self, count: usize) -> f64 {
        match self {
            Noise::Measured => separation(count),
            Noise::Exact => 0.0,
        }
    }
}

/// The smallest residual standard deviation of ln t believed of measured times: per-size medians
/// are not measured better than 0.1%, and without a floor an exact fit would have infinite
/// likelihood.
const MEASURED_SIGMA_FLOOR: f64 = 1e-3;

/// The same for exact counts: a hundredth of the timing floor, so that growth of a few parts in
/// ten thousand over the sizes still shows (a fixed cost of 10⁸ instructions before 2 a byte over
/// 1–16 KiB is O(n), not O(1)).
const EXACT_SIGMA_FLOOR: f64 = 1e-5;

/// What `classify` found: the class (or unsure), how decisive the evidence was, and the exponent.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Complexity {
    /// The class, or `None` when the evidence does not name one; written `"unsure"` then.
    #[serde(with = "class_or_unsure")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub class: Option<Class>,
    /// The class with the highest Akaike weight, named even when `class` is unsure or simpler.
    pub best: Class,
    /// The best class's Akaike weight, 0..=1.
    pub weight: f64,
    /// The class with the second highest Akaike weight.
    pub runner_up: Class,
    pub runner_up_weight: f64,
    /// k in t = a + b·n^k with a ≥ 0, searched in 0..=4; none with fewer than 5 sizes.
    pub exponent: Option<f64>,
    /// Lower end of k's 95% profile-likelihood interval.
    pub exponent_ci_low: Option<f64>,
    /// Upper end of k's 95% profile-likelihood interval.
    pub exponent_ci_high: Option<f64>,
    /// Where the series changes regime, jumping between two sizes and growing alike on both
    /// sides: the class, weights and exponent are then those of the series with the step divided
    /// out. Absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<RegimeStep>,
}

/// The word `class` is written as when no class is named.
pub const UNSURE: &str = "unsure";

mod class_or_unsure {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    use super::{Class, UNSURE};

    pub fn serialize<S: Serializer>(class: &Option<Class>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(class.map_or(UNSURE, Class::as_str))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Class>, D::Error> {
        let s = String::deserialize(d)?;
        if s == UNSURE {
            return Ok(None);
        }
        Class::parse(&s)
            .map(Some)
            .ok_or_else(|| D::Error::unknown_variant(&s, &["1", "log n", "n", "n log n", "n^2", "n^3", UNSURE]))
    }
}

/// Fewer distinct sizes than this leave the class unsure and the exponent unreported.
pub const MIN_SIZES: usize = 5;

/// Classifies `points` of (size, time), typically per-size medians of measured times. Sizes are
/// counts (at least 1 for O(log n) to mean anything); points need not be sorted. The same as
/// `classify_with(points, Noise::Measured)`.
pub fn classify(points: &[(f64, f64)]) -> Result<Complexity, FitError> {
    classify_with(points, Noise::Measured)
}

/// Classifies `points` of (size, value), the values as trustworthy as `noise` says.
///
/// Each class is fitted as t = a + b·f(n) with a ≥ 0, b > 0 (O(1) as t = a) by least squares on
/// ln t, and weighed by AICc. The class is unsure with fewer than `MIN_SIZES` distinct sizes;
/// otherwise it is the simplest class the evidence does not rule out, when that is clear
/// (`decide`), O(1) only where the exponent's interval shows no growth, and O(n²) or O(n³) only
/// where the class below is ruled out with the largest size left out too.
pub fn classify_with(points: &[(f64, f64)], noise: Noise) -> Result<Complexity, FitError> {
    let sigma_floor = noise.sigma_floor();
    let Weighed { sizes, ln_t, distinct, step, fits, scores } = Weighed::of(points, sigma_floor)?;
    let count = points.len();
    let lowest = scores.iter().copied().fold(f64::INFINITY, f64::min);
    let relative = scores.map(|s| (-0.5 * (s - lowest)).exp());
    let total: f64 = relative.iter().sum();
    let weights = relative.map(|r| r / total);

    // Ties go to the simpler class.
    let mut order = Class::ALL;
    order.sort_by(|a, b| weights[b.index()].total_cmp(&weights[a.index()]).then(a.cmp(b)));
    let (best, runner_up) = (order[0], order[1]);

    // The O(n), O(n²) and O(n³) fits are the power law's at k = 1, 2 and 3.
    let powers = [(1.0, Class::Linear), (2.0, Class::Quadratic), (3.0, Class::Cubic)]
        .map(|(k, class)| (k, fits[class.index()].expect("a growing class has a fit")));
    let exponent = (distinct >= MIN_SIZES).then(|| power_law_exponent(&sizes, &ln_t, &powers, sigma_floor));
    let class = exponent.and_then(|(_, low, _)| {
        decide(best, &scores, noise.separation(count), low).filter(|&class| match class {
            Class::Constant => low <= CONSTANT_MAX_LOW,
            Class::Quadratic | Class::Cubic => {
                exponent_rules_out(&sizes[..count - 1], &ln_t[..count - 1], steep_floor(class), sigma_floor)
            }
            Class::Log | Class::Linear | Class::NLogN => true,
        })
    });
    Ok(Complexity {
        class,
        best,
        weight: weights[best.index()],
        runner_up,
        runner_up_weight: weights[runner_up.index()],
        exponent: exponent.map(|e| e.0),
        exponent_ci_low: exponent.map(|e| e.1),
        exponent_ci_high: exponent.map(|e| e.2),
        step,
    })
}

/// The unsure rule of `classify`: given the best class, every class's AICc, the margin that
/// separates two classes and the low end of the exponent's 95% interval, the simplest class the
/// evidence does not rule out, or unsure when that is not clear.
///
/// A class is left open when AICc does not separate it from the best (see `separation`), and a
/// class simpler than the best that the power law nests (`Class::interval_exponent`: O(n), O(n²))
/// also while the interval reaches down to its exponent: AICc compares it with classes that do
/// not nest it, and only the interval tests it. If the best is O(1) it is named: every other class
/// contains it (b → 0), so not being separated from it only means no growth was shown. Otherwise
/// the class is the only one left open, or the simpler of two neighbours; with more, or two apart,
/// it is unsure, never the more complex. So O(n log n) is named only when O(n) is ruled out, O(n)
/// only when O(log n) is, and so on up.
fn decide(best: Class, scores: &[f64; 6], margin: f64, low: f64) -> Option<Class> {
    if best == Class::Constant {
        return Some(best);
    }
    let open: Vec<Class> = Class::ALL
        .into_iter()
        .filter(|&class| {
            scores[class.index()] - scores[best.index()] <= margin
                || class < best && class.interval_exponent().is_some_and(|k| low <= k)
        })
        .collect();
    match open[..] {
        [only] => Some(only),
        [simpler, other] if other.index() == simpler.index() + 1 => Some(simpler),
        _ => None,
    }
}

/// The exponent a steep class's interval must lie above, with the largest size left out too:
/// the class below's, linear growth for O(n²) and quadratic for O(n³). A fixed cost that hides
/// most of the growth can leave O(n²) the best class where a raised last size is all the curve
/// there is: steep growth must not rest on one size.
fn steep_floor(class: Class) -> f64 {
    if class == Class::Cubic {
        2.0
    } else {
        1.0
    }
}

/// The highest low end of the exponent's interval that O(1) is still named with: a fixed cost
/// that hides a small linear part can leave O(1) the best class with growth plainly shown.
const CONSTANT_MAX_LOW: f64 = 0.25;

/// How much worse a class's AICc must be than the best's for the two to count as separated, at
/// `count` points: the AICc gap at which an F test of one parameter more (F(1, count − 2), the
/// best class's residual degrees of freedom) rejects at 5%, m·ln(1 + F/(m − 2)). That is 7.4 at
/// 5 points, 5.5 at 8, and falls towards chi-square's 3.84 with many: with the variance resting
/// on 3 degrees of freedom, a fixed gap of 4 would let chance alone separate classes 15% of the
/// time.
fn separation(count: usize) -> f64 {
    let m = count as f64;
    let df = m - 2.0;
    let f = t_quantile_975(df).powi(2);
    m * (1.0 + f / df).ln()
}

#[cfg(test)]
mod tests {
    //! Expected values come from scripts/complexity-reference.py, which fits the same model
    //! independently with scipy (least_squares from several starts, a fine profile grid, brentq)
    //! and makes the noisy series with numpy's generator seeded 17.

    use super::power_law::interval_cut;
    use super::*;

    /// What the reference script printed for one series.
    struct Expected {
        class: Option<Class>,
        best: Class,
        weight: f64,
        runner_up: Class,
        runner_up_weight: f64,
        /// (k, low, high)
        exponent: Option<(f64, f64, f64)>,
    }

    fn assert_matches(points: &[(f64, f64)], expected: &Expected) -> Complexity {
        assert_matches_with(points, Noise::Measured, expected)
    }

    fn assert_matches_with(points: &[(f64, f64)], noise: Noise, expected: &Expected) -> Complexity {
        let got = classify_with(points, noise).unwrap();
        assert_eq!(got.class, expected.class, "{got:?}");
        assert_eq!((got.best, got.runner_up), (expected.best, expected.runner_up), "{got:?}");
        assert!((got.weight - expected.weight).abs() < 1e-6, "{got:?}");
        assert!((got.runner_up_weight - expected.runner_up_weight).abs() < 1e-6, "{got:?}");
        match (expected.exponent, got.exponent, got.exponent_ci_low, got.exponent_ci_high) {
            (Some((k, low, high)), Some(gk), Some(gl), Some(gh)) => {
                assert!((gk - k).abs() < 1e-4, "exponent {gk}, expected {k}");
                assert!((gl - low).abs() < 1e-4, "interval low {gl}, expected {low}");
                assert!((gh - high).abs() < 1e-4, "interval high {gh}, expected {high}");
            }
            (None, None, None, None) => {}
            _ => panic!("exponent {got:?}, expected {:?}", expected.exponent),
        }
        got
    }

    /// 7 sizes over 64×.
    fn wide() -> Vec<f64> {
        (0..7).map(|i| 1024.0 * 2f64.powi(i)).collect()
    }

    fn series(t: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
        wide().into_iter().map(|n| (n, t(n))).collect()
    }

    #[test]
    fn exact_series_are_named_by_their_own_class() {
        use Class::*;
        let cases: [(Vec<(f64, f64)>, Expected); 6] = [
            (
                series(|_| 5e4),
                // Every other class ties the constant at one parameter more, so O(1) keeps
                // under 0.9 of the weight at 7 sizes and is still named.
                Expected {
                    class: Some(Constant),
                    best: Constant,
                    weight: 0.868_819_606_142_444,
                    runner_up: Log,
                    runner_up_weight: 0.026_236_078_771_511,
                    exponent: Some((0.0, 0.0, 4.0)),
                },
            ),
            (
                series(|n| 300.0 * n.ln()),
                Expected {
                    class: Some(Log),
                    best: Log,
                    weight: 1.0,
                    runner_up: Linear,
                    runner_up_weight: 1.836e-15,
                    exponent: Some((0.112_555, 0.101_953, 0.193_631)),
                },
            ),
            (
                series(|n| 3.0 * n),
                Expected {
                    class: Some(Linear),
                    best: Linear,
                    weight: 1.0,
                    runner_up: NLogN,
                    runner_up_weight: 5.848e-15,
                    exponent: Some((1.0, 0.999_251, 1.001_563)),
                },
            ),
            (
                series(|n| 2.0 * n * n.ln()),
                Expected {
                    class: Some(NLogN),
                    best: NLogN,
                    weight: 1.0,
                    runner_up: Linear,
                    runner_up_weight: 1.320e-17,
                    exponent: Some((1.112_555, 1.101_953, 1.125_424)),
                },
            ),
            (
                series(|n| 1e-3 * n * n),
                Expected {
                    class: Some(Quadratic),
                    best: Quadratic,
                    weight: 1.0,
                    runner_up: Cubic,
                    runner_up_weight: 1.616e-22,
                    exponent: Some((2.0, 1.999_251, 2.001_123)),
                },
            ),
            (
                series(|n| 1e-8 * n * n * n),
                Expected {
                    class: Some(Cubic),
                    best: Cubic,
                    weight: 1.0,
                    runner_up: Quadratic,
                    runner_up_weight: 3.069e-24,
                    exponent: Some((3.0, 2.999_251, 3.001_018)),
                },
            ),
        ];
        for (points, expected) in cases {
            let got = assert_matches(&points, &expected);
            assert_eq!(got.class, Some(expected.best));
        }
    }

    #[test]
    fn a_large_fixed_cost_does_not_drag_the_exponent_below_one() {
        let points = series(|n| 1e6 + 2.0 * n);
        let got = assert_matches(
            &points,
            &Expected {
                class: Some(Class::Linear),
                best: Class::Linear,
                weight: 0.997_013_123_677_265,
                runner_up: Class::NLogN,
                runner_up_weight: 0.002_986_874_328_816,
                exponent: Some((1.0, 0.934_637, 1.068_593)),
            },
        );
        // The plain log-log slope reads the same series as nearly flat.
        let slope = crate::fit::fit(&points).unwrap().slope;
        assert!(slope < 0.05, "{slope}");
        assert!(got.exponent_ci_low.unwrap() > 0.9);
    }

    /// 5 sizes over 2×, 3% uniform noise.
    #[test]
    fn n_log_n_against_n_over_a_narrow_range_is_never_a_confident_n_log_n() {
        let linear = [
            (16384.0, 50169.666972936146),
            (19483.96937220458, 57262.90193317117),
            (23170.47500592079, 69752.25936422608),
            (27554.493735033717, 82009.18292933247),
            (32768.0, 96622.65928715857),
        ];
        let n_log_n = [
            (16384.0, 315804.2968337846),
            (19483.96937220458, 383240.8969611508),
            (23170.47500592079, 468867.4560596995),
            (27554.493735033717, 571421.1419653004),
            (32768.0, 661574.7566811723),
        ];
        // Linear data that n log n fits a little better: the two are not separated, so the
        // simpler one is named.
        let a = assert_matches(
            &linear,
            &Expected {
                class: Some(Class::Linear),
                best: Class::NLogN,
                weight: 0.528_409_734_209_880,
                runner_up: Class::Linear,
                runner_up_weight: 0.455_537_796_494_595,
                exponent: Some((1.117_102, 0.822_640, 2.577_994)),
            },
        );
        // n log n data favoured 15 to 1, which at 5 sizes is still within chance.
        let b = assert_matches(
            &n_log_n,
            &Expected {
                class: Some(Class::Linear),
                best: Class::NLogN,
                weight: 0.920_262_935_235_641,
                runner_up: Class::Linear,
                runner_up_weight: 0.060_209_353_028_532,
                exponent: Some((1.084_020, 0.903_575, 2.369_860)),
            },
        );
        for got in [a, b] {
            assert_ne!(got.class, Some(Class::NLogN));
        }
    }

    #[test]
    fn a_cache_cliff_bends_linear_growth_no_further_than_n_log_n() {
        let points = series(|n| 4.0 * n * if n > 8192.0 { 1.6 } else { 1.0 });
        let got = assert_matches(
            &points,
            &Expected {
                class: Some(Class::NLogN),
                best: Class::NLogN,
                weight: 0.984_019_846_462_542,
                runner_up: Class::Linear,
                runner_up_weight: 0.015_868_875_696_464,
                exponent: Some((1.214_960, 1.052_462, 1.423_929)),
            },
        );
        assert!(got.class < Some(Class::Quadratic));
    }

    #[test]
    fn o_n_log_n_that_fits_best_is_not_named_while_the_interval_holds_one() {
        // A fixed cost 24 times the linear part at the smallest size, and the time per byte 1.2×
        // higher above 16 KiB. AICc alone separates O(n) from O(n log n) (gap 6.6 against 5.9 at
        // 7 sizes), but the power law does not rule out k = 1: O(n) is named.
        let points = series(|n| 1e5 + 4.0 * n * if n > 16384.0 { 1.2 } else { 1.0 });
        let got = assert_matches(
            &points,
            &Expected {
                class: Some(Class::Linear),
                best: Class::NLogN,
                weight: 0.963_603_851_082_017,
                runner_up: Class::Linear,
                runner_up_weight: 0.036_395_710_859_256,
                exponent: Some((1.103_412, 0.987_005, 1.227_809)),
            },
        );
        assert!(2.0 * (got.weight / got.runner_up_weight).ln() > separation(points.len()));
    }

    /// Instruction counts at 1–16 KiB, doubling.
    fn counts(t: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
        (0..5).map(|i| 1024.0 * 2f64.powi(i)).map(|n| (n, t(n))).collect()
    }

    #[test]
    fn exact_counts_are_named_by_their_class_from_five_sizes() {
        use Class::*;
        let strchr = [208_198.0, 809_542.0, 3_191_878.0, 12_675_142.0, 50_516_038.0];
        let cases: [(Vec<(f64, f64)>, Expected); 5] = [
            (
                // A strchr tokenizer loop built with a quadratic strchr: ×3.89, ×3.94, ×3.97, ×3.99.
                counts(|n| strchr[(n / 1024.0).log2() as usize]),
                Expected {
                    class: Some(Quadratic),
                    best: Quadratic,
                    weight: 0.999_999_998_591_713,
                    runner_up: Constant,
                    runner_up_weight: 1.342_051_795e-9,
                    exponent: Some((1.992_028, 1.985_740, 1.998_318)),
                },
            ),
            (
                counts(|n| 7.0 * n + 3000.0),
                Expected {
                    class: Some(Linear),
                    best: Linear,
                    weight: 1.0,
                    runner_up: NLogN,
                    runner_up_weight: 2.085e-19,
                    exponent: Some((1.0, 0.999_938, 1.000_062)),
                },
            ),
            (
                // The fixed cost is 61 to 977 times the quadratic part.
                counts(|n| 1e6 + n * n / 1000.0),
                Expected {
                    class: Some(Quadratic),
                    best: Quadratic,
                    weight: 1.0,
                    runner_up: Cubic,
                    runner_up_weight: 4.188e-17,
                    exponent: Some((2.0, 1.998_757, 2.001_244)),
                },
            ),
            (
                counts(|n| (3.0 * n * n.log2() + 5.0 * n + 2000.0).round()),
                Expected {
                    class: Some(NLogN),
                    best: NLogN,
                    weight: 0.999_999_621_194_654,
                    runner_up: Linear,
                    runner_up_weight: 3.506_511e-7,
                    exponent: Some((1.095_380, 1.088_421, 1.102_343)),
                },
            ),
            (
                counts(|_| 5000.0),
                Expected {
                    class: Some(Constant),
                    best: Constant,
                    weight: 0.999_773_051_868_334,
                    runner_up: Log,
                    runner_up_weight: 4.539e-5,
                    exponent: Some((0.0, 0.0, 4.0)),
                },
            ),
        ];
        for (points, expected) in cases {
            assert_matches_with(&points, Noise::Exact, &expected);
        }
    }

    #[test]
    fn a_fixed_cost_that_hides_growth_from_a_timer_does_not_hide_it_from_a_count() {
        // 3 parts in 10,000 of growth: within a timer's noise, plain in an exact count.
        let points = counts(|n| 1e8 + 2.0 * n);
        assert_matches(
            &points,
            &Expected {
                class: Some(Class::Constant),
                best: Class::Constant,
                weight: 0.999_766_290_564_088,
                runner_up: Class::Linear,
                runner_up_weight: 4.682_754e-5,
                exponent: Some((1.0, 0.0, 4.0)),
            },
        );
        // O(n) and O(n log n) nearly tie, but only chance could undo a gap, and the interval
        // holds 1.
        assert_matches_with(
            &points,
            Noise::Exact,
            &Expected {
                class: Some(Class::Linear),
                best: Class::Linear,
                weight: 0.568_538_404_045_167,
                runner_up: Class::NLogN,
                runner_up_weight: 0.424_983_240_111_234,
                exponent: Some((1.0, 0.489_304, 1.704_108)),
            },
        );
    }

    #[test]
    fn exact_counts_keep_their_class_at_more_sizes() {
        use Class::*;
        type Count = fn(f64) -> f64;
        let shapes: [(Class, Count); 6] = [
            (Constant, |_| 5000.0),
            (Log, |n| 1e4 + 40.0 * n.ln()),
            (Linear, |n| 7.0 * n + 3000.0),
            (NLogN, |n| (3.0 * n * n.log2() + 5.0 * n + 2000.0).round()),
            (Quadratic, |n| (0.19 * n * n + 9.5 * n + 600.0).round()),
            (Cubic, |n| 1e-3 * n * n * n + 1e7),
        ];
        for count in [5, 6, 8, 12] {
            for (class, t) in shapes {
                let points: Vec<_> = (0..count).map(|i| 1024.0 * 2f64.powi(i)).map(|n| (n, t(n))).collect();
                let got = classify_with(&points, Noise::Exact).unwrap();
                assert_eq!(got.class, Some(class), "{count} sizes: {got:?}");
                let (k, low, high) =
                    (got.exponent.unwrap(), got.exponent_ci_low.unwrap(), got.exponent_ci_high.unwrap());
                assert!(got.weight.is_finite() && got.runner_up_weight.is_finite(), "{got:?}");
                assert!(low <= k && k <= high, "{count} sizes: {got:?}");
            }
        }
    }

    /// 8 sizes over 64×, each the median of 5 samples with ±15% jitter and 8% outliers ×1.5–4.
    #[test]
    fn noise_and_outliers_keep_linear_and_quadratic_apart() {
        let linear = [
            (1024.0, 3378.290188339848),
            (1855.0, 5399.996727987652),
            (3360.0, 10207.73459791661),
            (6087.0, 16770.786998708183),
            (11026.0, 35055.95250582048),
            (19972.0, 55610.20905757747),
            (36179.0, 110249.33835915131),
            (65536.0, 193296.31835973522),
        ];
        let quadratic = [
            (1024.0, 1012.4244894096919),
            (1855.0, 3527.7439410893467),
            (3360.0, 11367.232987157722),
            (6087.0, 33929.331169831166),
            (11026.0, 132540.2050755452),
            (19972.0, 424034.57956064306),
            (36179.0, 1217827.5189371407),
            (65536.0, 4139814.6554492074),
        ];
        assert_matches(
            &linear,
            &Expected {
                class: Some(Class::Linear),
                best: Class::Linear,
                weight: 0.904_931_560_723_440,
                runner_up: Class::NLogN,
                runner_up_weight: 0.095_068_429_548_388,
                exponent: Some((1.025_515, 0.952_797, 1.111_218)),
            },
        );
        assert_matches(
            &quadratic,
            &Expected {
                class: Some(Class::Quadratic),
                best: Class::Quadratic,
                weight: 0.999_999_999_087_438,
                runner_up: Class::Cubic,
                runner_up_weight: 8.711e-10,
                exponent: Some((1.996_799, 1.947_826, 2.059_127)),
            },
        );
    }

    #[test]
    fn four_sizes_are_unsure_and_have_no_exponent() {
        let points: Vec<_> = wide()[..4].iter().map(|&n| (n, 3.0 * n)).collect();
        let got = assert_matches(
            &points,
            &Expected {
                class: None,
                best: Class::Linear,
                weight: 0.999_999_613_354_396,
                runner_up: Class::NLogN,
                runner_up_weight: 3.865_537e-7,
                exponent: None,
            },
        );
        assert_eq!(got.class, None);
    }

    #[test]
    fn the_interval_cut_is_the_profile_t_region_of_three_fitted_values() {
        // m·ln(1 + F/(m − 3)) with F = scipy.stats.f.ppf(0.95, 1, m − 3).
        for (m, expected) in
            [(5, 11.639_514_504_892), (6, 8.856_794_159_441), (8, 6.737_977_686_100), (12, 5.402_163_795_647)]
        {
            assert!((interval_cut(m) - expected).abs() < 1e-6, "{m}: {}", interval_cut(m));
        }
    }

    /// AICc scores with the best class at 0 and the classes in `close` within a margin of 5.
    fn scores(best: Class, close: &[Class]) -> [f64; 6] {
        Class::ALL.map(|c| {
            if c == best {
                0.0
            } else if close.contains(&c) {
                3.0
            } else {
                20.0
            }
        })
    }

    #[test]
    fn a_class_above_a_simpler_one_the_interval_holds_is_not_named() {
        use Class::*;
        // O(n log n) alone within the margin: named while the interval rules out k = 1, O(n) while
        // it holds 1.
        assert_eq!(decide(NLogN, &scores(NLogN, &[]), 5.0, 1.05), Some(NLogN));
        assert_eq!(decide(NLogN, &scores(NLogN, &[]), 5.0, 0.95), Some(Linear));
        // With O(n²) left open by AICc as well, three classes are open: unsure.
        assert_eq!(decide(NLogN, &scores(NLogN, &[Quadratic]), 5.0, 1.05), Some(NLogN));
        assert_eq!(decide(NLogN, &scores(NLogN, &[Quadratic]), 5.0, 0.95), None);
        // O(n²) needs linear growth ruled out, O(n³) quadratic; O(n) two classes below O(n²) is
        // never a neighbour to fall back to.
        assert_eq!(decide(Quadratic, &scores(Quadratic, &[]), 5.0, 1.4), Some(Quadratic));
        assert_eq!(decide(Quadratic, &scores(Quadratic, &[]), 5.0, 1.0), None);
        assert_eq!(decide(Cubic, &scores(Cubic, &[]), 5.0, 2.3), Some(Cubic));
        assert_eq!(decide(Cubic, &scores(Cubic, &[]), 5.0, 1.9), Some(Quadratic));
        assert_eq!(decide(Cubic, &scores(Cubic, &[]), 5.0, 0.9), None);
        // The interval speaks only of simpler classes, and of O(1) AICc alone.
        assert_eq!(decide(Linear, &scores(Linear, &[]), 5.0, 0.0), Some(Linear));
        assert_eq!(decide(Linear, &scores(Linear, &[NLogN]), 5.0, 1.2), Some(Linear));
        assert_eq!(decide(Log, &scores(Log, &[Constant]), 5.0, 0.0), Some(Constant));
        assert_eq!(decide(Linear, &scores(Linear, &[Log, NLogN]), 5.0, 0.5), None);
        assert_eq!(decide(Constant, &scores(Constant, &[Log, Linear]), 5.0, 0.0), Some(Constant));
    }

    #[test]
    fn steep_growth_resting_on_the_largest_size_alone_is_unsure() {
        // A fixed cost about 100 times the linear part, and the largest size's median raised by
        // outliers: over all 8 sizes the exponent's interval lies above 1, without the largest not.
        let points = [
            (1024.0, 1.0),
            (1855.0, 1.22),
            (3360.0, 1.182),
            (6087.0, 1.15),
            (11026.0, 1.178),
            (19972.0, 1.375),
            (36179.0, 1.285),
            (65536.0, 3.582),
        ];
        let got = classify(&points).unwrap();
        assert!(got.best >= Class::Quadratic && got.exponent_ci_low.unwrap() > 1.0, "{got:?}");
        assert_eq!(got.class, None, "{got:?}");
        // The same growth carried by every size is named.
        let quadratic: Vec<_> = points.iter().map(|&(n, _)| (n, 1e3 + 1e-3 * n * n)).collect();
        assert_eq!(classify(&quadratic).unwrap().class, Some(Class::Quadratic));
    }

    #[test]
    fn separation_is_the_aicc_gap_of_a_five_percent_f_test() {
        // m·ln(1 + F/(m − 2)) with F = scipy.stats.f.ppf(0.95, 1, m − 2).
        for (m, expected) in
            [(5, 7.380_661_799_534), (6, 6.444_199_821_597), (8, 5.536_758_087_201), (12, 4.837_230_027_204)]
        {
            assert!((separation(m) - expected).abs() < 1e-6, "{m}: {}", separation(m));
        }
    }

    #[test]
    fn the_class_is_written_as_the_api_spells_it() {
        for class in Class::ALL {
            assert_eq!(serde_json::to_value(class).unwrap(), class.as_str());
            assert_eq!(Class::parse(class.as_str()), Some(class));
        }
        assert_eq!(Class::Quadratic.label(), "O(n²)");
        let got = classify(&series(|n| 3.0 * n)).unwrap();
        let json = serde_json::to_value(&got).unwrap();
        assert_eq!(json["class"], "n");
        assert_eq!(json["runner_up"], "n log n");
        assert_eq!(serde_json::from_value::<Complexity>(json).unwrap(), got);

        let unsure = Complexity { class: None, ..got };
        let json = serde_json::to_value(&unsure).unwrap();
        assert_eq!(json["class"], UNSURE);
        assert_eq!(serde_json::from_value::<Complexity>(json).unwrap(), unsure);
        let short = classify(&series(|n| 3.0 * n)[..4]).unwrap();
        assert_eq!(serde_json::to_value(&short).unwrap()["exponent"], serde_json::Value::Null);
    }

    #[test]
    fn unsorted_points_classify_alike() {
        let mut points = series(|n| 1e-3 * n * n + 5e3);
        let a = classify(&points).unwrap();
        points.reverse();
        assert_eq!(classify(&points).unwrap(), a);
    }

    #[test]
    fn degenerate_input_is_an_error() {
        assert_eq!(classify(&[(1.0, 1.0), (2.0, 2.0)]), Err(FitError::TooFewPoints(2)));
        assert_eq!(classify(&[(1.0, 1.0), (2.0, -1.0), (4.0, 1.0)]), Err(FitError::NonPositive));
        assert_eq!(classify(&[(2.0, 1.0), (2.0, 2.0), (2.0, 3.0)]), Err(FitError::AllSameSize));
    }
}
