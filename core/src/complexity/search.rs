//! One-dimensional searches: a root by regula falsi, a minimum by Brent's method.

/// Where `g` crosses zero between `inside` (g ≤ 0) and `outside` (g > 0), to `tolerance` in x,
/// by regula falsi with the Illinois change (the end that keeps being kept has its value halved,
/// so both ends close in).
pub(super) fn crossing(mut g: impl FnMut(f64) -> f64, inside: (f64, f64), outside: (f64, f64), tolerance: f64) -> f64 {
    let ((mut a, mut ga), (mut b, mut gb)) = (inside, outside);
    let mut kept = 0i8;
    for _ in 0..100 {
        if (b - a).abs() <= tolerance {
            break;
        }
        let mut x = a - ga * (b - a) / (gb - ga);
        if !(x - a.min(b) > 0.0 && a.max(b) - x > 0.0) {
            x = 0.5 * (a + b);
        }
        let gx = g(x);
        if gx > 0.0 {
            (b, gb) = (x, gx);
            if kept == -1 {
                ga *= 0.5;
            }
            kept = -1;
        } else {
            (a, ga) = (x, gx);
            if kept == 1 {
                gb *= 0.5;
            }
            kept = 1;
        }
    }
    0.5 * (a + b)
}

/// Brent's minimisation (parabolic steps, golden-section steps when a parabola is not trusted)
/// on [a, b] from `start`, to an absolute `tolerance` in x.
pub(super) fn brent(
    mut f: impl FnMut(f64) -> f64,
    mut a: f64,
    mut b: f64,
    start: (f64, f64),
    tolerance: f64,
) -> (f64, f64) {
    const GOLDEN: f64 = 0.381_966_011_250_105_1;
    let (mut x, mut w, mut v) = (start.0, start.0, start.0);
    let (mut fx, mut fw, mut fv) = (start.1, start.1, start.1);
    let (mut d, mut e) = (0.0_f64, 0.0_f64);
    for _ in 0..200 {
        let middle = 0.5 * (a + b);
        let tol1 = tolerance;
        let tol2 = 2.0 * tol1;
        if (x - middle).abs() <= tol2 - 0.5 * (b - a) {
            break;
        }
        let mut golden = true;
        if e.abs() > tol1 {
            let r = (x - w) * (fx - fv);
            let mut q = (x - v) * (fx - fw);
            let mut p = (x - v) * q - (x - w) * r;
            q = 2.0 * (q - r);
            if q > 0.0 {
                p = -p;
            }
            q = q.abs();
            let previous = e;
            // A NaN from infinite values fails every comparison and falls back to golden section.
            if p.abs() < (0.5 * q * previous).abs() && p > q * (a - x) && p < q * (b - x) {
                e = d;
                d = p / q;
                let u = x + d;
                if u - a < tol2 || b - u < tol2 {
                    d = tol1.copysign(middle - x);
                }
                golden = false;
            }
        }
        if golden {
            e = if x >= middle { a - x } else { b - x };
            d = GOLDEN * e;
        }
        let u = if d.abs() >= tol1 { x + d } else { x + tol1.copysign(d) };
        let fu = f(u);
        if fu <= fx {
            if u >= x {
                a = x;
            } else {
                b = x;
            }
            (v, fv, w, fw, x, fx) = (w, fw, x, fx, u, fu);
        } else {
            if u < x {
                a = u;
            } else {
                b = u;
            }
            if fu <= fw || w == x {
                (v, fv, w, fw) = (w, fw, u, fu);
            } else if fu <= fv || v == x || v == w {
                (v, fv) = (u, fu);
            }
        }
    }
    (x, fx)
}
