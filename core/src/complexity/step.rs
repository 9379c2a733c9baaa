//! A step: a cost that changes regime at one size, jumping (or dropping) between two neighbouring
//! sizes by far more than it grows anywhere else, and growing alike on both sides.
//!
//! glibc copies with vector loops below a size that depends on the host CPU and with `rep movsb`
//! above it; Valgrind counts each repetition of `rep movsb` as an instruction, so the count of a
//! `memcpy` of n bytes is about n/32 below that size and n above it. Both sides are linear, and so
//! is the time; a fit across the step reads a higher degree that the cost does not have. A working
//! set outgrowing a cache can do the same to times, less steeply. No polynomial of degree 3 or less
//! with a fixed cost rises that steeply between two sizes and then grows as before, so a step is a
//! regime change, not a degree: the series is judged with the step divided out, by the growth its
//! two sides show (docs/complexity.md).

use serde::{Deserialize, Serialize};

/// How far the values must jump between two neighbouring sizes, beyond the growth on the two
/// sides of it, to be a step, and grow more steeply there than on either side: ×4 (or ÷4). A
/// series of t = a + b·n^k, however large its fixed cost, steepens from pair to pair, so the growth
/// of one pair never passes that of both its neighbours.
const STEP_FACTOR: f64 = 4.0;

/// How much of the jump the growth on its two sides may differ by, over the pair of sizes it
/// happens between: the two sides grow alike. One disturbed size rises and falls back, so its two
/// sides differ by all it rose.
const SIDES_AGREE: f64 = 0.5;

/// A series' change of regime: where it happens and by how much.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RegimeStep {
    /// The first size of the new regime.
    pub at: f64,
    /// How much the values jump there beyond the growth on either side: 25 for a cost 25 times
    /// higher from that size on, 0.04 for one 25 times lower.
    pub factor: f64,
}

/// The one step in `ln_t` over distinct, sorted `sizes`, if there is exactly one: at least two
/// sizes on each side, the growth between the two sizes around it steeper (or shallower) than the
/// growth of the pairs on either side, the jump at least `STEP_FACTOR` beyond their growth,
/// averaged (that is its factor), and the two sides apart by less than `SIDES_AGREE` of it.
pub(super) fn find(sizes: &[f64], ln_t: &[f64]) -> Option<(usize, RegimeStep)> {
    let count = sizes.len();
    if count < 5 || sizes.windows(2).any(|w| w[1] <= w[0]) {
        return None;
    }
    let slopes: Vec<f64> = (1..count).map(|i| (ln_t[i] - ln_t[i - 1]) / (sizes[i] / sizes[i - 1]).ln()).collect();
    // Interval i runs from size i to size i + 1; a step at size j is interval j − 1, between
    // intervals j − 2 and j.
    let ln_factor = |j: usize| {
        let around = (slopes[j - 2] + slopes[j]) / 2.0;
        ln_t[j] - ln_t[j - 1] - around * (sizes[j] / sizes[j - 1]).ln()
    };
    let mut steps = (2..=count - 2).filter(|&j| {
        let (before, jump, after) = (slopes[j - 2], slopes[j - 1], slopes[j]);
        let beyond_both = jump > before.max(after) || jump < before.min(after);
        let (ln_jump, ln_sides) = (ln_factor(j).abs(), (before - after).abs() * (sizes[j] / sizes[j - 1]).ln());
        beyond_both && ln_jump >= STEP_FACTOR.ln() && ln_sides <= SIDES_AGREE * ln_jump
    });
    let j = steps.next()?;
    if steps.next().is_some() {
        return None;
    }
    Some((j, RegimeStep { at: sizes[j], factor: ln_factor(j).exp() }))
}

/// `ln_t` with the step divided out: every value from its size on lowered by its factor.
pub(super) fn divided_out(sizes: &[f64], ln_t: &[f64], step: &RegimeStep) -> Vec<f64> {
    let ln_factor = step.factor.ln();
    sizes.iter().zip(ln_t).map(|(&n, &v)| if n >= step.at { v - ln_factor } else { v }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ln_series(sizes: &[f64], t: impl Fn(f64) -> f64) -> Vec<f64> {
        sizes.iter().map(|&n| t(n).ln()).collect()
    }

    fn doubling(count: i32) -> Vec<f64> {
        (0..count).map(|i| 1024.0 * 2f64.powi(i)).collect()
    }

    #[test]
    fn a_linear_count_that_jumps_once_is_a_step_by_the_jump_beyond_its_growth() {
        let sizes = doubling(7);
        let ln_t = ln_series(&sizes, |n| if n >= 8192.0 { 25.0 * n } else { n });
        let (j, step) = find(&sizes, &ln_t).expect("a step");
        assert_eq!((j, step.at), (3, 8192.0));
        assert!((step.factor - 25.0).abs() < 1e-9, "{step:?}");
        let flat = divided_out(&sizes, &ln_t, &step);
        assert!(flat.iter().zip(ln_series(&sizes, |n| n)).all(|(a, b)| (a - b).abs() < 1e-9));
        let dropped = ln_series(&sizes, |n| if n >= 8192.0 { n / 25.0 } else { n });
        assert!((find(&sizes, &dropped).unwrap().1.factor - 0.04).abs() < 1e-9, "a drop is a step too");
    }

    #[test]
    fn steep_growth_a_spike_and_a_raised_end_are_not_steps() {
        let sizes = doubling(7);
        for (what, t) in [
            ("cubic under a fixed cost", Box::new(|n: f64| 1e12 + n * n * n) as Box<dyn Fn(f64) -> f64>),
            ("quadratic", Box::new(|n: f64| n * n)),
            ("one size disturbed", Box::new(|n: f64| if n == 8192.0 { 30.0 * n } else { n })),
            ("the largest size raised", Box::new(|n: f64| if n == 65536.0 { 30.0 * n } else { n })),
            (
                "two steps",
                Box::new(|n: f64| n * if n >= 4096.0 { 20.0 } else { 1.0 } * if n >= 32768.0 { 20.0 } else { 1.0 }),
            ),
        ] {
            assert_eq!(find(&sizes, &ln_series(&sizes, &t)), None, "{what}");
        }
        let four = doubling(4);
        assert_eq!(find(&four, &ln_series(&four, |n| if n >= 4096.0 { 25.0 * n } else { n })), None, "too few sizes");
    }
}

#[cfg(test)]
mod recorded {
    use crate::complexity::{classify_with, Class, Noise};

    /// `contract.memcpy.length` on glibc 2.36, counted under Valgrind: vector loops below 16 KiB on
    /// the host recorded, `rep movsb` above, each of its repetitions counted.
    const GLIBC_MEMCPY: [(f64, f64); 11] = [
        (64.0, 581_347.0),
        (128.0, 618_133.0),
        (256.0, 600_066.0),
        (512.0, 744_471.0),
        (1024.0, 811_712.0),
        (2048.0, 903_147.0),
        (4096.0, 883_478.0),
        (8192.0, 947_805.0),
        (16384.0, 44_742_949.0),
        (32768.0, 85_108_183.0),
        (65536.0, 154_816_627.0),
    ];

    #[test]
    fn glibc_memcpy_counted_under_valgrind_is_a_step_and_linear() {
        let c = classify_with(&GLIBC_MEMCPY, Noise::Exact).unwrap();
        println!("{c:?}");
        assert_eq!(c.step.map(|s| s.at), Some(16384.0));
        assert_eq!(c.class, Some(Class::Linear));
    }
}
