//! What a workload costs at the size a team runs it at: the time at a **size of interest**,
//! predicted from the fit the slope verdict uses, with its 95% prediction interval.
//!
//! The fit is the least-squares line through (ln size, ln median time) of [`crate::fit`]. At a
//! size `x₀` (in logs) the line gives `ŷ = a + k·x₀`; a new measurement there falls, with 95%
//! probability, within `ŷ ± t₀.₉₇₅(n−2) · s · √(1 + 1/n + (x₀ − x̄)² / Sxx)`, where `s` is the
//! residual standard deviation. That is the interval of one more run at that size, not of the
//! line's mean, so it stays honest about run-to-run noise. Past the sizes measured it widens
//! with the distance, and it is marked as a prediction.
//!
//! An interval whose ends are more than [`WIDE_RATIO`] apart says more about the noise than the
//! workload: it is reported as too uncertain to name one number.

use crate::fit::{fit, t_quantile_975, FitError};
use crate::format;
use crate::wire::{Metric, SizeUnit};

/// An interval whose upper end is more than this many times its lower end is too wide to
/// print one number for: more than a factor of two either side of the middle.
pub const WIDE_RATIO: f64 = 4.0;

/// The predicted time at one size (or count, for a series of instructions counted: every value
/// below is then in instructions rather than nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// The size of interest, in the workload's unit.
    pub size: u64,
    /// The line's time there, in nanoseconds.
    pub time_ns: f64,
    /// The ends of the 95% prediction interval, in nanoseconds.
    pub low_ns: f64,
    pub high_ns: f64,
    /// The largest size measured: past it the time is extrapolated.
    pub largest_measured: u64,
}

impl Prediction {
    /// Whether the size lies past the largest size measured (or below the smallest).
    pub fn extrapolated(&self) -> bool {
        self.size > self.largest_measured
    }

    /// Whether the interval is too wide to name one number ([`WIDE_RATIO`]).
    pub fn wide(&self) -> bool {
        self.high_ns.is_nan() || self.low_ns.is_nan() || self.high_ns > self.low_ns * WIDE_RATIO
    }

    /// The time as a phrase: `≈ 5.4 min [4.6 min, 6.3 min]`, or `too uncertain to say (between
    /// 1.2 s and 45 s)` for a wide interval.
    pub fn time_text(&self) -> String {
        self.value_text(Metric::Wall)
    }

    /// [`Prediction::time_text`] for a series of `metric`: its values in that metric's unit,
    /// `≈ 12.7M instructions [12.6M instructions, 12.8M instructions]` for counts.
    pub fn value_text(&self, metric: Metric) -> String {
        let (low, high) = (format::value(metric, self.low_ns), format::value(metric, self.high_ns));
        if self.wide() {
            format!("too uncertain to say (between {low} and {high})")
        } else {
            format!("≈ {} [{low}, {high}]", format::value(metric, self.time_ns))
        }
    }

    /// The sentence a page, a report or a webhook gives: `at 40,000 records: ≈ 5.4 min [4.6 min,
    /// 6.3 min], predicted past the 20,000 records measured`.
    pub fn sentence(&self, unit: SizeUnit) -> String {
        self.sentence_in(unit, Metric::Wall)
    }

    /// [`Prediction::sentence`] for a series of `metric`.
    pub fn sentence_in(&self, unit: SizeUnit, metric: Metric) -> String {
        let mut text = format!("at {}: {}", format::size(self.size, unit), self.value_text(metric));
        if self.extrapolated() {
            text.push_str(&format!(", predicted past the {} measured", format::size(self.largest_measured, unit)));
        }
        text
    }
}

/// The sentence a regression puts first: the bad version's time at the size of interest, and the
/// good version's beside it with how many times that is, e.g. `at 40,000 records: ≈ 5.4 min
/// [4.6 min, 6.3 min] here, predicted past the 20,000 records measured; ≈ 40 ms at 0.15.2, about
/// 8,100×`. Without a good version, or when either interval is wide, no ratio is given.
pub fn step_sentence(bad: &Prediction, good: Option<(&Prediction, &str)>, unit: SizeUnit) -> String {
    step_sentence_in(bad, good, unit, Metric::Wall)
}

/// [`step_sentence`] for a series of `metric`: its values in that metric's unit.
pub fn step_sentence_in(bad: &Prediction, good: Option<(&Prediction, &str)>, unit: SizeUnit, metric: Metric) -> String {
    let mut text = format!("at {}: {} here", format::size(bad.size, unit), bad.value_text(metric));
    if bad.extrapolated() {
        text.push_str(&format!(", predicted past the {} measured", format::size(bad.largest_measured, unit)));
    }
    if let Some((g, version)) = good {
        text.push_str(&format!("; {} at {version}", g.value_text(metric)));
        if !g.wide() && !bad.wide() {
            text.push_str(&format!(", about {}", format::factor(bad.time_ns / g.time_ns)));
        }
    }
    text
}

/// The time at `size` predicted from `points` of (size, median time in ns), with its 95%
/// prediction interval. Needs three points or more at two sizes or more, all positive.
pub fn predict(points: &[(f64, f64)], size: u64) -> Result<Prediction, FitError> {
    // The slope's own line, which checks the points; its standard error gives the residual
    // spread back: s = se·√Sxx.
    let line = fit(points)?;
    if size == 0 {
        return Err(FitError::NonPositive);
    }
    let xs: Vec<f64> = points.iter().map(|p| p.0.ln()).collect();
    let nf = points.len() as f64;
    let mean_x = xs.iter().sum::<f64>() / nf;
    let sxx: f64 = xs.iter().map(|x| (x - mean_x).powi(2)).sum();
    let (slope, intercept, df) = (line.slope, line.intercept, nf - 2.0);
    let s = line.stderr * sxx.sqrt();
    let x0 = (size as f64).ln();
    let y0 = intercept + slope * x0;
    let half = t_quantile_975(df) * s * (1.0 + 1.0 / nf + (x0 - mean_x).powi(2) / sxx).sqrt();
    let largest = points.iter().map(|p| p.0).fold(0.0, f64::max) as u64;
    Ok(Prediction {
        size,
        time_ns: y0.exp(),
        low_ns: (y0 - half).exp(),
        high_ns: (y0 + half).exp(),
        largest_measured: largest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points of t = c·n^k at sizes doubling from `first`, each multiplied by its `noise`.
    fn points(first: f64, k: f64, noise: &[f64]) -> Vec<(f64, f64)> {
        noise
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let n = first * f64::from(1 << i);
                (n, 3.0 * n.powf(k) * e)
            })
            .collect()
    }

    #[test]
    fn a_clean_power_law_predicts_its_own_time_with_a_narrow_interval() {
        let p = predict(&points(5000.0, 2.0, &[1.0; 5]), 40_000).unwrap();
        let truth = 3.0 * 40_000f64.powi(2);
        assert!((p.time_ns / truth - 1.0).abs() < 1e-9, "{p:?}");
        assert!(p.low_ns <= p.time_ns && p.time_ns <= p.high_ns && p.high_ns / p.low_ns < 1.0 + 1e-6);
        assert!(!p.extrapolated() && !p.wide());
    }

    #[test]
    fn the_interval_is_the_prediction_interval_of_one_more_run() {
        // Residuals in logs of ±0.05 around a line of slope 1 at 4 sizes.
        let noise = [0.05f64, -0.05, -0.05, 0.05].map(f64::exp);
        let pts = points(1000.0, 1.0, &noise);
        let p = predict(&pts, 64_000).unwrap();
        // By hand: x̄ and Sxx of ln sizes, s from the residuals about the fitted line.
        let xs: Vec<f64> = pts.iter().map(|p| p.0.ln()).collect();
        let ys: Vec<f64> = pts.iter().map(|p| p.1.ln()).collect();
        let mx = xs.iter().sum::<f64>() / 4.0;
        let my = ys.iter().sum::<f64>() / 4.0;
        let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
        let k = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum::<f64>() / sxx;
        let a = my - k * mx;
        let sse: f64 = xs.iter().zip(&ys).map(|(x, y)| (y - a - k * x).powi(2)).sum();
        let x0 = 64_000f64.ln();
        // t(0.975, 2 df) = 4.302653.
        let half = 4.302653 * (sse / 2.0).sqrt() * (1.0 + 0.25 + (x0 - mx).powi(2) / sxx).sqrt();
        assert!(((p.high_ns / p.time_ns).ln() - half).abs() < 1e-5, "{p:?} against {half}");
        assert!(((p.time_ns / p.low_ns).ln() - half).abs() < 1e-5);
        // Wider than the interval of the mean, which leaves out the 1 under the root.
        let mean_half = 4.302653 * (sse / 2.0).sqrt() * (0.25 + (x0 - mx).powi(2) / sxx).sqrt();
        assert!(half > mean_half);
    }

    #[test]
    fn past_the_sizes_measured_it_is_marked_and_widens_with_the_distance() {
        let noise = [1.02, 0.97, 1.03, 0.98, 1.01, 0.99];
        let pts = points(65_536.0, 1.0, &noise);
        let inside = predict(&pts, 1 << 19).unwrap();
        let past = predict(&pts, 1 << 26).unwrap();
        assert!(!inside.extrapolated() && past.extrapolated());
        assert!(past.high_ns / past.low_ns > inside.high_ns / inside.low_ns);
        assert_eq!(past.largest_measured, 65_536 << 5);
        let sentence = past.sentence(SizeUnit::Bytes);
        assert!(sentence.starts_with("at 64 MiB: ≈ "), "{sentence}");
        assert!(sentence.ends_with(", predicted past the 2 MiB measured"), "{sentence}");
    }

    #[test]
    fn a_wide_interval_is_said_to_be_too_uncertain_rather_than_one_number() {
        let pts = points(1000.0, 1.0, &[1.0, 3.0, 0.4, 2.5]);
        let p = predict(&pts, 1_000_000).unwrap();
        assert!(p.wide(), "{p:?}");
        assert!(p.time_text().starts_with("too uncertain to say (between "), "{}", p.time_text());
        assert!(!p.time_text().contains('≈'));
    }

    #[test]
    fn a_step_names_both_versions_and_the_ratio_between_them() {
        let bad = predict(&points(5000.0, 2.0, &[1.0; 3]), 40_000).unwrap();
        let good = predict(&points(5000.0, 1.0, &[1.0; 3]), 40_000).unwrap();
        let text = step_sentence(&bad, Some((&good, "0.15.2")), SizeUnit::Records);
        assert!(
            text.starts_with("at 40,000 records: ≈ 4.8 s [4.8 s, 4.8 s] here, predicted past the 20,000"),
            "{text}"
        );
        assert!(text.ends_with("; ≈ 120 µs [120 µs, 120 µs] at 0.15.2, about 40,000×"), "{text}");
        assert!(!step_sentence(&bad, None, SizeUnit::Records).contains(';'));
        let counted = step_sentence_in(&bad, Some((&good, "0.15.2")), SizeUnit::Records, Metric::InstructionsValgrind);
        assert!(counted.starts_with("at 40,000 records: ≈ 4.8G instructions [4.8G instructions, "), "{counted}");
        assert!(counted.ends_with(" at 0.15.2, about 40,000×"), "{counted}");
    }

    #[test]
    fn too_little_to_fit_is_an_error() {
        assert_eq!(predict(&[(1.0, 1.0), (2.0, 2.0)], 4), Err(FitError::TooFewPoints(2)));
        assert_eq!(predict(&[(4.0, 1.0), (4.0, 2.0), (4.0, 3.0)], 8), Err(FitError::AllSameSize));
        assert_eq!(predict(&[(1.0, 1.0), (2.0, 2.0), (4.0, 4.0)], 0), Err(FitError::NonPositive));
    }
}
