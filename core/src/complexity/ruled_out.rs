//! Whether a series' evidence rules a class out, and so whether a class step between two
//! versions of a workload is shown rather than a wobble of the noise. The version page, its JSON,
//! the release note and the webhooks decide a change with it; docs/complexity.md gives the reasons.

use super::power_law::exponent_rules_out;
use super::weigh::Weighed;
use super::{Class, Noise, CONSTANT_MAX_LOW, MIN_SIZES};

/// Whether `points` of (size, value) rule `class` out, the values as trustworthy as `noise` says.
///
/// A class is ruled out when `classify_with` would leave it open neither on all the points nor
/// with any one size left out: its AICc is worse than the best class's by more than the margin
/// that separates two classes, and where the class is simpler than the best and the power law
/// nests it (O(n), O(n²)), the exponent's 95% interval lies above its exponent. Measured O(1) is
/// ruled out only where that interval lies above `CONSTANT_MAX_LOW` as well: a timer's steps and
/// a cache bend a fixed cost into what AICc reads as a logarithm. Nothing is ruled out below
/// `MIN_SIZES` sizes, nor by a series whose best class is O(1): every class holds O(1) as its
/// growing part vanishes, so showing no growth rules no growth out.
pub fn rules_out(points: &[(f64, f64)], class: Class, noise: Noise) -> bool {
    let mut sizes: Vec<f64> = points.iter().map(|p| p.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    sizes.len() >= MIN_SIZES
        && separated(points, class, noise)
        && sizes.iter().all(|&left_out| {
            let rest: Vec<(f64, f64)> = points.iter().copied().filter(|p| p.0 != left_out).collect();
            separated(&rest, class, noise)
        })
}

/// Whether a series of a workload that was of class `from` at one version (`before`'s points)
/// and of `to` at a later one (`after`'s) shows the step: each version's points rule out the
/// other's class. A step to O(1) rests on the earlier points alone, and one from O(1) on the later
/// points alone, since points whose best class is O(1) rule nothing out (`rules_out`).
pub fn step_shown(before: &[(f64, f64)], from: Class, after: &[(f64, f64)], to: Class, noise: Noise) -> bool {
    from != to
        && (to == Class::Constant || rules_out(after, from, noise))
        && (from == Class::Constant || rules_out(before, to, noise))
}

/// `rules_out` on these points alone, of any number of sizes: below `MIN_SIZES` points the
/// classes are weighed by plain AIC (`Weighed::of`).
fn separated(points: &[(f64, f64)], class: Class, noise: Noise) -> bool {
    let sigma_floor = noise.sigma_floor();
    let Ok(w) = Weighed::of(points, sigma_floor) else {
        return false;
    };
    let best = w.best();
    if class == best || best == Class::Constant {
        return false;
    }
    if w.scores[class.index()] - w.scores[best.index()] <= noise.separation(points.len()) {
        return false;
    }
    match class.interval_exponent() {
        Some(k) if class < best => exponent_rules_out(&w.sizes, &w.ln_t, k, sigma_floor),
        _ if class == Class::Constant && noise == Noise::Measured => {
            exponent_rules_out(&w.sizes, &w.ln_t, CONSTANT_MAX_LOW, sigma_floor)
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::complexity::classify_with;

    /// `count` sizes doubling from `first`, each value `t(size)` times the factor of `wobble` at
    /// its place (cycled).
    fn series(first: f64, count: i32, t: impl Fn(f64) -> f64, wobble: &[f64]) -> Vec<(f64, f64)> {
        (0..count).map(|i| first * 2f64.powi(i)).zip(wobble.iter().cycle()).map(|(n, w)| (n, t(n) * w)).collect()
    }

    /// ±1% in no pattern a class could take for growth.
    const JITTER: [f64; 5] = [1.0, 1.01, 0.99, 1.004, 0.996];

    #[test]
    fn a_class_is_ruled_out_by_growth_it_cannot_follow() {
        let linear = series(64.0 * 1024.0, 6, |n| 3.0 * n, &JITTER);
        let quadratic = series(64.0 * 1024.0, 6, |n| n * n / 2000.0, &JITTER);
        assert!(rules_out(&quadratic, Class::Linear, Noise::Measured));
        assert!(rules_out(&linear, Class::Quadratic, Noise::Measured));
        assert!(rules_out(&linear, Class::Constant, Noise::Measured));
        // Not the class it is, nor one within the margin of chance beside it.
        assert!(!rules_out(&linear, Class::Linear, Noise::Measured));
        assert!(!rules_out(&quadratic, Class::Quadratic, Noise::Measured));
    }

    #[test]
    fn nothing_is_ruled_out_by_four_sizes_or_by_no_growth() {
        let linear = series(1024.0, 4, |n| 3.0 * n, &JITTER);
        assert!(!rules_out(&linear, Class::Quadratic, Noise::Measured));
        // Flat points: O(n) with a growing part too small to see fits them as well as O(1).
        let flat = series(1024.0, 8, |_| 900.0, &JITTER);
        for class in Class::ALL {
            assert!(!rules_out(&flat, class, Noise::Measured), "{class:?}");
        }
    }

    /// Points at sizes doubling from `first`.
    fn doubling(first: f64, values: &[f64]) -> Vec<(f64, f64)> {
        values.iter().enumerate().map(|(i, &t)| (first * 2f64.powi(i as i32), t)).collect()
    }

    #[test]
    fn what_one_size_alone_shows_rules_nothing_out() {
        // contract.memrchr.bound as gcc -O2 on glibc 2.36 measured it: O(n log n) by AICc and by
        // an exponent interval from 1.03, which the largest size's raised median carries.
        let raised = doubling(128.0, &[90.0, 90.0, 130.0, 221.0, 411.0, 791.0, 1542.0, 3045.0, 6160.0, 15223.0]);
        let named = classify_with(&raised, Noise::Measured).unwrap();
        assert_eq!(named.class, Some(Class::NLogN), "{named:?}");
        assert!(!rules_out(&raised, Class::Linear, Noise::Measured));
        let without_it = &raised[..raised.len() - 1];
        assert_eq!(classify_with(without_it, Noise::Measured).unwrap().class, Some(Class::Linear));
        // Growth every size carries is ruled out either way.
        let linear = series(64.0, 9, |n| 400.0 + 30.0 * n, &JITTER);
        assert!(rules_out(&linear, Class::Constant, Noise::Measured));
    }

    #[test]
    fn o_1_is_ruled_out_on_a_clock_only_by_growth_past_a_logarithm() {
        // contract.wcscmp.remaining measured: 641 ns up to 2 KiB, then 651 ns, one step of the
        // timer's 10 ns, which AICc reads as O(log n) with O(1) ruled out.
        let stepped = doubling(32.0, &[641.0, 641.0, 641.0, 641.0, 641.0, 641.0, 641.0, 651.0, 651.0, 651.0, 651.0]);
        assert_eq!(classify_with(&stepped, Noise::Measured).unwrap().class, Some(Class::Log));
        assert!(!rules_out(&stepped, Class::Constant, Noise::Measured));
        // So is a logarithm that triples the time: on a clock, O(1) and O(log n) are told apart
        // no more than a contract is broken by a logarithm (see the verdict).
        let log = series(32.0, 10, |n| 300.0 * n.ln(), &JITTER);
        assert!(!rules_out(&log, Class::Constant, Noise::Measured));
        assert!(rules_out(&log, Class::Linear, Noise::Measured));
        // Counted exactly, the step and the logarithm are the work's own.
        assert!(rules_out(&stepped, Class::Constant, Noise::Exact));
        assert!(rules_out(&log, Class::Constant, Noise::Exact));
    }

    #[test]
    fn a_step_is_shown_when_each_version_rules_out_the_other_s_class() {
        use Class::*;
        let m = Noise::Measured;
        let linear = series(64.0 * 1024.0, 6, |n| 3.0 * n, &JITTER);
        let quadratic = series(64.0 * 1024.0, 6, |n| n * n / 2000.0, &JITTER);
        assert!(step_shown(&linear, Linear, &quadratic, Quadratic, m));
        assert!(step_shown(&quadratic, Quadratic, &linear, Linear, m));
        // Growth starting and stopping: the flat side rests on the other.
        let flat = series(64.0 * 1024.0, 6, |_| 900.0, &JITTER);
        assert!(step_shown(&flat, Constant, &linear, Linear, m));
        assert!(step_shown(&linear, Linear, &flat, Constant, m));
        // A fixed cost that hides the quadratic part at the smaller sizes still shows it.
        let fixed_linear = series(1024.0, 7, |n| 1e5 + 4.0 * n, &JITTER);
        let fixed_quadratic = series(1024.0, 7, |n| 1e5 + n * n / 1000.0, &JITTER);
        assert!(step_shown(&fixed_linear, Linear, &fixed_quadratic, Quadratic, m));
        // One workload, growth between n and n log n (k 1.07), named either way by a hair.
        let between = |n: f64| n.powf(1.07);
        let a = series(1024.0, 8, between, &[1.0, 1.012, 0.99, 1.0]);
        let b = series(1024.0, 8, between, &[1.0, 0.99, 1.01, 1.0]);
        assert!(!step_shown(&a, Linear, &b, NLogN, m));
        assert!(!step_shown(&a, Linear, &a, Linear, m));
    }

    #[test]
    fn a_step_between_two_runs_of_one_binary_is_not_shown() {
        use Class::*;
        // contract.memrchr.bound measured twice: O(n), then O(n log n) on the largest size's
        // raised median. The later run rules O(n) out only with that size; the earlier one rules
        // out O(n log n) not at all.
        let a = doubling(128.0, &[90.0, 90.0, 131.0, 231.0, 421.0, 801.0, 1562.0, 3095.0, 6219.0, 13199.0]);
        let b = doubling(128.0, &[90.0, 90.0, 130.0, 221.0, 411.0, 791.0, 1542.0, 3045.0, 6160.0, 15223.0]);
        let (ca, cb) = (classify_with(&a, Noise::Measured).unwrap(), classify_with(&b, Noise::Measured).unwrap());
        assert_eq!((ca.class, cb.class), (Some(Linear), Some(NLogN)), "{ca:?} {cb:?}");
        assert!(!rules_out(&a, NLogN, Noise::Measured));
        assert!(!step_shown(&a, Linear, &b, NLogN, Noise::Measured));
        // contract.wcscmp.remaining: 621 ns flat, then the timer step above.
        let flat = doubling(32.0, &[621.0; 10]);
        let stepped = doubling(32.0, &[641.0, 641.0, 641.0, 641.0, 641.0, 641.0, 641.0, 651.0, 651.0, 651.0, 651.0]);
        assert!(!step_shown(&flat, Constant, &stepped, Log, Noise::Measured));
        assert!(!step_shown(&stepped, Log, &flat, Constant, Noise::Measured));
    }
}
