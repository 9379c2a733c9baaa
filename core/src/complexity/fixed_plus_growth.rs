//! The least-squares fit of t = a + b·f(n), a ≥ 0, on log residuals, and its likelihood: what
//! every class and every exponent is weighed by.

/// The Gaussian log-likelihood of log residuals summing to `sse` in squares, at the residual
/// variance that maximises it but no lower than `sigma_floor`² (see `Noise`): without a floor an
/// exact fit would have infinite likelihood.
pub(super) fn log_likelihood(sse: f64, count: usize, sigma_floor: f64) -> f64 {
    let n = count as f64;
    let variance = (sse / n).max(sigma_floor * sigma_floor);
    -0.5 * n * (2.0 * std::f64::consts::PI * variance).ln() - sse / (2.0 * variance)
}

/// How far beyond the sizes' own f range the ratio a/b is searched, in e-folds: at e^-14 of the
/// smallest f the fixed cost is a millionth of the time, at e^14 of the largest the growing part is.
const RATIO_MARGIN: f64 = 14.0;

/// How far beyond the f range the ratio's grid reaches, in e-folds (see `fit_fixed_plus_growth`).
pub(super) const RATIO_FINE_MARGIN: f64 = 3.0;

/// The tolerance of the ratio, in e-folds.
const RATIO_TOLERANCE: f64 = 1e-8;

/// A fit of t = a + b·f on log residuals.
#[derive(Debug, Clone, Copy)]
pub(super) struct FixedPlusGrowth {
    /// The sum of the squared log residuals.
    pub(super) sse: f64,
    /// ln(a/b) − ln(smallest f); none when a = 0 fits best.
    pub(super) ratio: Option<f64>,
}

/// The best fit of t = a + b·f over a ≥ 0, b > 0, by least squares on log residuals.
///
/// With r = a/b the model is ln t = ln b + ln(r + f), so at each r the best ln b is the mean of
/// ln t − ln(r + f) and only r is left to search: r = 0, and ln r from `RATIO_MARGIN` e-folds
/// below the smallest f to as many above the largest. A grid of steps of at most one e-fold covers
/// the f range and `RATIO_FINE_MARGIN` beyond it, and Newton's method on the sum's derivative
/// refines its best point between its neighbours. Further out r is under 5% of every f (or every
/// f under 5% of r), the residuals move almost linearly in r (or 1/r), and the sum of their
/// squares has at most one dip there; a tail is searched, by the same Newton's method, only when
/// the sum falls towards it at the grid's edge.
///
/// With `near`, the ratio of a neighbouring fit, the grid is skipped: the search goes downhill
/// from there to the nearest minimum (see `LogResiduals::trace`). a = 0 is tried either way.
pub(super) fn fit_fixed_plus_growth(f: &[f64], ln_t: &[f64], near: Option<f64>) -> FixedPlusGrowth {
    let smallest = f.iter().copied().filter(|&x| x > 0.0).fold(f64::INFINITY, f64::min);
    let largest = f.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !smallest.is_finite() {
        return FixedPlusGrowth { sse: f64::INFINITY, ratio: None };
    }
    let residuals = LogResiduals { f, ln_t, base: smallest.ln() };
    let width = largest.ln() - residuals.base;
    let at_zero = FixedPlusGrowth { sse: residuals.at(f64::NEG_INFINITY).sse, ratio: None };
    // With every f alike (k = 0) ln(r + f) is one number at every point, and r cannot matter.
    if width == 0.0 {
        return at_zero;
    }
    let (lo, hi) = (-RATIO_MARGIN, width + RATIO_MARGIN);
    let found = match near {
        Some(start) => residuals.trace(start.clamp(lo, hi), lo, hi),
        None => residuals.search(width, lo, hi),
    };
    if at_zero.sse <= found.sse {
        at_zero
    } else {
        FixedPlusGrowth { sse: found.sse, ratio: Some(found.x) }
    }
}

/// Log times and the f of a class (or power) at the same sizes, with the ratio a/b written as
/// x = ln(a/b) − `base`, `base` the log of the smallest f.
struct LogResiduals<'a> {
    f: &'a [f64],
    ln_t: &'a [f64],
    base: f64,
}

/// The least sum of squared log residuals over ln b at one ratio x, with its first and second
/// derivatives in x.
#[derive(Debug, Clone, Copy)]
struct Point {
    x: f64,
    sse: f64,
    slope: f64,
    curvature: f64,
}

impl LogResiduals<'_> {
    /// The least sum of squares of ln t − ln b − ln(r + f) over ln b, r = e^(x + base), with its
    /// derivatives. With d = ln t − ln(r + f) and p = r/(r + f), the slope of ln(r + f) in x, the
    /// sum is Σ(d − d̄)², its slope −2·Σ(d − d̄)·p and its curvature
    /// 2·Σ(p − p̄)² − 2·Σ(d − d̄)·p·(1 − p).
    fn at(&self, x: f64) -> Point {
        let r = (x + self.base).exp();
        let m = self.f.len() as f64;
        // Deviations from the first point's keep the sums exact when ln b is large against the
        // residuals.
        let mut shift = None;
        let (mut sd, mut sdd, mut sp, mut spp, mut sdp, mut sdq, mut sq) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        for (&fi, &li) in self.f.iter().zip(self.ln_t) {
            let g = r + fi;
            if g <= 0.0 || !g.is_finite() {
                return Point { x, sse: f64::INFINITY, slope: 0.0, curvature: 0.0 };
            }
            let raw = li - g.ln();
            let d = raw - *shift.get_or_insert(raw);
            let p = r / g;
            let q = p * (1.0 - p);
            sd += d;
            sdd += d * d;
            sp += p;
            spp += p * p;
            sdp += d * p;
            sdq += d * q;
            sq += q;
        }
        let mean = sd / m;
        Point {
            x,
            sse: (sdd - sd * mean).max(0.0),
            slope: -2.0 * (sdp - mean * sp),
            curvature: 2.0 * (spp - sp * sp / m) - 2.0 * (sdq - mean * sq),
        }
    }

    /// The least sum over x in [lo, hi], `width` the span of ln f (see `fit_fixed_plus_growth`).
    fn search(&self, width: f64, lo: f64, hi: f64) -> Point {
        let fine = (width + 2.0 * RATIO_FINE_MARGIN).ceil() as usize;
        let step = (width + 2.0 * RATIO_FINE_MARGIN) / fine as f64;
        let grid: Vec<Point> = (0..=fine).map(|i| self.at(-RATIO_FINE_MARGIN + step * i as f64)).collect();
        let i = (0..grid.len()).fold(0, |best, i| if grid[i].sse < grid[best].sse { i } else { best });
        let mut found = match grid[i] {
            p if p.slope > 0.0 && i > 0 => self.descend(grid[i - 1], p),
            p if p.slope < 0.0 && i < fine => self.descend(p, grid[i + 1]),
            p => p,
        };
        // A tail is searched only when the sum falls towards it at the grid's edge: out there it
        // has at most one dip, so a sum rising into the tail has none, and one still falling at
        // the tail's far end has its least value there.
        for (edge, far) in [(grid[0], lo), (grid[fine], hi)] {
            if (edge.slope > 0.0) == (far < edge.x) {
                let far = self.at(far);
                let (a, b) = if far.x < edge.x { (far, edge) } else { (edge, far) };
                let tail = if a.slope <= 0.0 && b.slope > 0.0 { self.descend(a, b) } else { far };
                if tail.sse < found.sse {
                    found = tail;
                }
            }
        }
        found
    }

    /// The least sum near `start`, the ratio of a neighbouring fit: downhill in steps that double
    /// until the slope turns, then `descend`; the end of [lo, hi] if it never does.
    fn trace(&self, start: f64, lo: f64, hi: f64) -> Point {
        let mut inner = self.at(start);
        // No way downhill; a NaN slope would give no direction and never reach an end.
        if inner.slope == 0.0 || inner.slope.is_nan() {
            return inner;
        }
        let direction = -inner.slope.signum();
        // A little past where Newton's method points, so that the first step usually brackets
        // the minimum closely; never more than an e-fold, then doubling.
        let newton = (inner.slope / inner.curvature).abs();
        if inner.curvature > 0.0 && newton <= RATIO_TOLERANCE {
            return inner;
        }
        let mut step = if inner.curvature > 0.0 { (1.25 * newton).min(1.0) } else { 1.0 };
        loop {
            let outer = self.at((inner.x + direction * step).clamp(lo, hi));
            if direction < 0.0 && outer.slope <= 0.0 {
                return self.descend(outer, inner);
            }
            if direction > 0.0 && outer.slope > 0.0 {
                return self.descend(inner, outer);
            }
            if outer.x == lo || outer.x == hi {
                return outer;
            }
            inner = outer;
            step *= 2.0;
        }
    }

    /// The least sum between `a` and `b`, whose slopes bracket a minimum (a's ≤ 0 < b's):
    /// Newton's method on the slope, and regula falsi between the bracket's ends (Illinois: an end
    /// kept twice has its slope halved) when a Newton step would leave the bracket.
    fn descend(&self, mut a: Point, mut b: Point) -> Point {
        let mut best = if a.sse <= b.sse { a } else { b };
        let mut current = best;
        let (mut a_slope, mut b_slope) = (a.slope, b.slope);
        let mut kept = 0i8;
        for _ in 0..100 {
            let newton = current.x - current.slope / current.curvature;
            let secant = a.x - a_slope * (b.x - a.x) / (b_slope - a_slope);
            let inside = |x: f64| x > a.x && x < b.x;
            let next = if current.curvature > 0.0 && inside(newton) {
                newton
            } else if inside(secant) {
                secant
            } else {
                0.5 * (a.x + b.x)
            };
            if (next - current.x).abs() <= RATIO_TOLERANCE || b.x - a.x <= RATIO_TOLERANCE {
                break;
            }
            current = self.at(next);
            if current.sse < best.sse {
                best = current;
            }
            if current.slope > 0.0 {
                (b, b_slope) = (current, current.slope);
                if kept == 1 {
                    a_slope *= 0.5;
                }
                kept = 1;
            } else {
                (a, a_slope) = (current, current.slope);
                if kept == -1 {
                    b_slope *= 0.5;
                }
                kept = -1;
            }
        }
        best
    }
}
