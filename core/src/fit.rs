//! Log-log slope fitting: time ∝ size^k, with k found by least squares on (ln size, ln time).
//!
//! A slope near 1 is linear growth, near 2 quadratic. The same code runs in the agent (offline
//! verdicts) and the server (stored fits), so the two always agree.

use serde::{Deserialize, Serialize};

/// The slope between two consecutive sizes: log2 of the time ratio per doubling of the size.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LocalSlope {
    pub from_size: f64,
    pub to_size: f64,
    pub slope: f64,
}

/// A least-squares line through (ln size, ln median time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// k in time ∝ size^k.
    pub slope: f64,
    /// ln of the time at size 1, in nanoseconds.
    pub intercept: f64,
    /// Coefficient of determination, 0..=1 (1 when every point is on the line).
    pub r2: f64,
    /// Standard error of the slope.
    pub stderr: f64,
    /// Lower bound of the slope's 95% confidence interval.
    pub ci_low: f64,
    /// Upper bound of the slope's 95% confidence interval.
    pub ci_high: f64,
    /// Number of sizes fitted.
    pub n: usize,
    pub local_slopes: Vec<LocalSlope>,
}

/// Why a fit could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FitError {
    TooFewPoints(usize),
    NonPositive,
    AllSameSize,
}

impl std::fmt::Display for FitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FitError::TooFewPoints(n) => write!(f, "{n} points given; a fit needs at least 3"),
            FitError::NonPositive => f.write_str("sizes and times must be positive and finite"),
            FitError::AllSameSize => f.write_str("every point has the same size"),
        }
    }
}

impl std::error::Error for FitError {}

/// Fits `points` of (size, time). Points need not be sorted; sizes must be distinct for local slopes
/// to mean anything.
pub fn fit(points: &[(f64, f64)]) -> Result<Fit, FitError> {
    let n = points.len();
    if n < 3 {
        return Err(FitError::TooFewPoints(n));
    }
    if points.iter().any(|&(s, t)| !(s.is_finite() && t.is_finite() && s > 0.0 && t > 0.0)) {
        return Err(FitError::NonPositive);
    }
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let xs: Vec<f64> = sorted.iter().map(|p| p.0.ln()).collect();
    let ys: Vec<f64> = sorted.iter().map(|p| p.1.ln()).collect();

    let nf = n as f64;
    let mean_x = xs.iter().sum::<f64>() / nf;
    let mean_y = ys.iter().sum::<f64>() / nf;
    let sxx: f64 = xs.iter().map(|x| (x - mean_x).powi(2)).sum();
    if sxx <= f64::EPSILON {
        return Err(FitError::AllSameSize);
    }
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mean_x) * (y - mean_y)).sum();
    let syy: f64 = ys.iter().map(|y| (y - mean_y).powi(2)).sum();
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    let sse: f64 = xs.iter().zip(&ys).map(|(x, y)| (y - (intercept + slope * x)).powi(2)).sum::<f64>().max(0.0);
    let r2 = if syy <= f64::EPSILON { 1.0 } else { (1.0 - sse / syy).clamp(0.0, 1.0) };
    let df = nf - 2.0;
    let stderr = (sse / df / sxx).sqrt();
    let half_width = t_quantile_975(df) * stderr;

    let local_slopes = sorted
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| LocalSlope {
            from_size: w[0].0,
            to_size: w[1].0,
            slope: (w[1].1 / w[0].1).ln() / (w[1].0 / w[0].0).ln(),
        })
        .collect();

    Ok(Fit { slope, intercept, r2, stderr, ci_low: slope - half_width, ci_high: slope + half_width, n, local_slopes })
}

/// The median of `values` (mean of the middle two for an even count); NaN for none.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// The 97.5th percentile of Student's t distribution with `df` degrees of freedom: the factor
/// that turns a standard error into a two-sided 95% confidence half-width.
///
/// Fits have whole degrees of freedom (points less two), so those up to `TABLED_DF` come from a
/// table computed once; a run's dozen fits would otherwise spend more time here than anywhere.
pub fn t_quantile_975(df: f64) -> f64 {
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    if df.fract() == 0.0 && (1.0..=TABLED_DF as f64).contains(&df) {
        let table = TABLE.get_or_init(|| (1..=TABLED_DF).map(|d| t_quantile_975_by_bisection(d as f64)).collect());
        return table[df as usize - 1];
    }
    t_quantile_975_by_bisection(df)
}

/// Degrees of freedom `t_quantile_975` keeps in its table.
const TABLED_DF: usize = 256;

fn t_quantile_975_by_bisection(df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 {
        return f64::INFINITY;
    }
    // Bisection on the CDF, which is monotone, until the bracket cannot shrink any further.
    let (mut lo, mut hi) = (0.0_f64, 1000.0_f64);
    loop {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            return mid;
        }
        if student_t_cdf(mid, df) < 0.975 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom.
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    let tail = 0.5 * regularized_incomplete_beta(0.5 * df, 0.5, x);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// I_x(a, b) by the continued fraction of Numerical Recipes (Lentz's method).
fn regularized_incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_continued_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_continued_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..500 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, n = 9).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1-x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = COEF[0];
    let t = x + G + 0.5;
    for (i, c) in COEF.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Summary of one version's slopes across its runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SlopeSpread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub runs: usize,
}

/// The median slope of several runs of one version and how far they spread.
pub fn spread(slopes: &[f64]) -> Option<SlopeSpread> {
    if slopes.is_empty() {
        return None;
    }
    Some(SlopeSpread {
        median: median(slopes),
        min: slopes.iter().copied().fold(f64::INFINITY, f64::min),
        max: slopes.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        runs: slopes.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes() -> Vec<f64> {
        (0..8).map(|i| 65536.0 * 2f64.powi(i)).collect()
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn linear_series_has_slope_one() {
        let pts: Vec<_> = sizes().iter().map(|&n| (n, 3.0 * n)).collect();
        let f = fit(&pts).unwrap();
        assert!(close(f.slope, 1.0, 1e-12), "{}", f.slope);
        assert!(close(f.intercept, 3f64.ln(), 1e-9));
        assert!(close(f.r2, 1.0, 1e-12));
        assert!(f.local_slopes.iter().all(|l| close(l.slope, 1.0, 1e-12)));
        assert_eq!(f.local_slopes.len(), 7);
    }

    #[test]
    fn quadratic_series_has_slope_two() {
        let pts: Vec<_> = sizes().iter().map(|&n| (n, 1e-3 * n * n)).collect();
        let f = fit(&pts).unwrap();
        assert!(close(f.slope, 2.0, 1e-12), "{}", f.slope);
        assert!(f.local_slopes.iter().all(|l| close(l.slope, 2.0, 1e-12)));
    }

    #[test]
    fn n_log_n_sits_just_above_one() {
        let pts: Vec<_> = sizes().iter().map(|&n| (n, n * n.ln())).collect();
        let f = fit(&pts).unwrap();
        // d ln(n ln n) / d ln n = 1 + 1/ln n; ln n runs from 11.1 to 15.9 here.
        assert!(f.slope > 1.06 && f.slope < 1.09, "{}", f.slope);
        assert!(f.r2 > 0.999);
    }

    #[test]
    fn constant_plus_linear_approaches_one_at_large_sizes() {
        let pts: Vec<_> = sizes().iter().map(|&n| (n, 1e5 + n)).collect();
        let f = fit(&pts).unwrap();
        assert!(f.slope > 0.8 && f.slope < 0.9, "{}", f.slope);
        let last = f.local_slopes.last().unwrap().slope;
        assert!(last > 0.98, "{last}");
    }

    #[test]
    fn matches_an_independently_computed_fit() {
        // Expected values from numpy.polyfit(ln x, ln y, 1) and scipy.stats.t.ppf(0.975, 3)
        // on x = [1, 2, 4, 8, 16], y = [10, 21, 39, 85, 158].
        let pts = [(1.0, 10.0), (2.0, 21.0), (4.0, 39.0), (8.0, 85.0), (16.0, 158.0)];
        let f = fit(&pts).unwrap();
        assert!(close(f.slope, 0.998_077_882, 1e-8), "{}", f.slope);
        assert!(close(f.intercept, 2.319_553_354, 1e-8), "{}", f.intercept);
        assert!(close(f.r2, 0.998_786_634, 1e-8), "{}", f.r2);
        assert!(close(f.stderr, 0.020_084_611, 1e-8), "{}", f.stderr);
        assert!(close(f.ci_high - f.slope, 3.182_446_305 * 0.020_084_611, 1e-7));
    }

    #[test]
    fn t_quantiles_match_published_tables() {
        for (df, expected) in
            [(1.0, 12.7062), (2.0, 4.3027), (5.0, 2.5706), (8.0, 2.3060), (30.0, 2.0423), (1000.0, 1.9623)]
        {
            let t = t_quantile_975(df);
            assert!(close(t, expected, 5e-4), "df {df}: {t}");
        }
        assert!(t_quantile_975(0.0).is_infinite());
        assert!(t_quantile_975(f64::NAN).is_infinite());
    }

    #[test]
    fn tabled_quantiles_equal_computed_ones() {
        for df in [1.0, 2.0, 3.0, 17.0, 255.0, 256.0] {
            assert_eq!(t_quantile_975(df), t_quantile_975_by_bisection(df), "df {df}");
        }
        // Between and beyond the table, the quantile is computed and stays monotone.
        assert!(t_quantile_975(2.5) < t_quantile_975(2.0) && t_quantile_975(2.5) > t_quantile_975(3.0));
        assert!(t_quantile_975(257.0) < t_quantile_975(256.0));
    }

    #[test]
    fn noise_widens_the_interval_but_keeps_the_slope_near() {
        // Deterministic ±10% jitter around a linear series.
        let jitter = [1.08, 0.93, 1.05, 0.97, 1.1, 0.91, 1.02, 0.96];
        let pts: Vec<_> = sizes().iter().zip(jitter).map(|(&n, j)| (n, n * j)).collect();
        let f = fit(&pts).unwrap();
        assert!(close(f.slope, 1.0, 0.05), "{}", f.slope);
        assert!(f.ci_low < f.slope && f.slope < f.ci_high);
        assert!(f.ci_high - f.ci_low > 0.01);
        assert!(f.r2 < 1.0 && f.r2 > 0.99);
    }

    #[test]
    fn unsorted_points_give_the_same_fit() {
        let mut pts: Vec<_> = sizes().iter().map(|&n| (n, n * n)).collect();
        let a = fit(&pts).unwrap();
        pts.reverse();
        let b = fit(&pts).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn degenerate_input_is_an_error() {
        assert_eq!(fit(&[(1.0, 1.0), (2.0, 2.0)]), Err(FitError::TooFewPoints(2)));
        assert_eq!(fit(&[(1.0, 1.0), (2.0, 0.0), (4.0, 1.0)]), Err(FitError::NonPositive));
        assert_eq!(fit(&[(2.0, 1.0), (2.0, 2.0), (2.0, 3.0)]), Err(FitError::AllSameSize));
    }

    #[test]
    fn median_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        let s = spread(&[1.0, 1.2, 0.9]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.runs), (1.0, 0.9, 1.2, 3));
        assert!(spread(&[]).is_none());
    }
}
