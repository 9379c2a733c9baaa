#!/usr/bin/env python3
"""Reference values for core/src/complexity.rs's tests, computed independently with scipy.

The Rust code profiles the fixed cost out and searches one variable with its own grid and Brent
minimiser; this script fits (a, b) together with scipy.optimize.least_squares from several
starts, profiles the exponent on a fine grid and finds the interval's ends with brentq. The test
data (including the seeded noisy cases) is made here and printed with the results, so the tests
embed both.

Needs numpy and scipy (not project dependencies):
    python3 -m pip install --target /tmp/pydeps numpy scipy
    PYTHONPATH=/tmp/pydeps python3 scripts/complexity-reference.py
"""

import math

import numpy as np
from scipy.optimize import brentq, least_squares, minimize_scalar
from scipy.stats import f as f_dist

CLASSES = ["1", "log n", "n", "n log n", "n^2", "n^3"]
GROWTH = {
    "log n": np.log,
    "n": lambda n: n,
    "n log n": lambda n: n * np.log(n),
    "n^2": lambda n: n**2,
    "n^3": lambda n: n**3,
}
SIGMA_FLOOR = 1e-3
K_RANGE = (0.0, 4.0)


def log_likelihood(sse, n):
    var = max(sse / n, SIGMA_FLOOR**2)
    return -0.5 * n * math.log(2 * math.pi * var) - sse / (2 * var)


def sse_fixed_plus_growth(f, t):
    """min over a >= 0, b > 0 of sum (ln t - ln(a + b f))^2, from several starts."""
    lt = np.log(t)
    const = float(np.sum((lt - lt.mean()) ** 2))
    t_min = t.min()
    f_scale = f.max()
    best = const  # b -> 0 approaches the constant fit
    for share in [0.0, 1e-3, 0.1, 0.5, 0.9, 0.99, 0.999, 0.99999]:
        a0 = share * t_min
        b0 = max(np.median((t - a0) / f), 1e-300) * f_scale / t.max()

        def resid(p):
            model = p[0] * t_min + p[1] * t.max() * f / f_scale
            return lt - np.log(np.maximum(model, 1e-300))

        r = least_squares(
            resid, [share, b0], bounds=([0.0, 1e-15], [np.inf, np.inf]), xtol=1e-15, ftol=1e-15, gtol=1e-15
        )
        best = min(best, float(np.sum(r.fun**2)))
    return best


def class_sse(cls, n, t):
    if cls == "1":
        lt = np.log(t)
        return float(np.sum((lt - lt.mean()) ** 2))
    return sse_fixed_plus_growth(GROWTH[cls](n), t)


def classify(n, t):
    count = len(n)
    distinct = len(set(n.tolist()))
    corrected = count >= 5
    scores = []
    for cls in CLASSES:
        k = 2 if cls == "1" else 3
        score = -2 * log_likelihood(class_sse(cls, n, t), count) + 2 * k
        if corrected:
            score += 2 * k * (k + 1) / (count - k - 1)
        scores.append(score)
    scores = np.array(scores)
    rel = np.exp(-0.5 * (scores - scores.min()))
    weights = rel / rel.sum()
    order = sorted(range(6), key=lambda i: (-weights[i], i))
    best, runner = order[0], order[1]
    cls = None
    if distinct >= 5:
        # Separated: AICc worse by more than the gap at which F(1, count - 2) rejects at 5%.
        margin = count * math.log(1 + f_dist.ppf(0.95, 1, count - 2) / (count - 2))
        unseparated = [j for j in range(6) if scores[j] - scores[best] <= margin]
        if best == 0 or len(unseparated) == 1:
            cls = CLASSES[best]
        elif len(unseparated) == 2 and unseparated[1] == unseparated[0] + 1:
            cls = CLASSES[unseparated[0]]
    out = {
        "class": cls or "unsure",
        "best": CLASSES[best],
        "weight": weights[best],
        "runner_up": CLASSES[runner],
        "runner_up_weight": weights[runner],
        "weights": dict(zip(CLASSES, weights)),
    }
    if distinct >= 5:
        out.update(exponent(n, t))
        # A named class must agree with the exponent's interval: O(1) only where it reaches down to
        # 0.25, O(n^2) only above 1 and O(n^3) only above 2, for the steep two also without the
        # largest size.
        low = out["exponent_ci_low"]
        floor = {"n^2": 1.0, "n^3": 2.0}.get(cls)
        if cls == "1" and low > 0.25:
            out["class"] = "unsure"
        elif floor is not None:
            order_n = np.argsort(n, kind="stable")
            without = exponent(n[order_n][:-1], t[order_n][:-1])["exponent_ci_low"]
            if low <= floor or without <= floor:
                out["class"] = "unsure"
    return out


def exponent(n, t):
    count = len(n)

    def profile(k):
        return sse_fixed_plus_growth(n**k, t)

    grid = np.linspace(*K_RANGE, 401)
    values = np.array([profile(k) for k in grid])
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    r = minimize_scalar(profile, bounds=(lo, hi), method="bounded", options={"xatol": 1e-9})
    k_hat, sse_hat = (r.x, r.fun) if r.fun < values[i] else (grid[i], values[i])
    ll_hat = log_likelihood(sse_hat, count)

    # Bates and Watts' profile-t region: the variance counts as estimated, on count - 3 degrees
    # of freedom (a, b and k fitted), so the cut is count * ln(1 + F(1, count - 3) / (count - 3)).
    cut = count * math.log(1 + f_dist.ppf(0.95, 1, count - 3) / (count - 3))

    def over(k):
        return 2 * (ll_hat - log_likelihood(profile(k), count)) - cut

    # The interval is the stretch around k_hat where the profile stays under the cut.
    def end(outward, edge):
        prev = k_hat
        for g in outward:
            if over(g) > 0:
                return brentq(over, min(g, prev), max(g, prev), xtol=1e-12)
            prev = g
        return edge

    low = end([g for g in grid if g < k_hat][::-1], K_RANGE[0])
    high = end([g for g in grid if g > k_hat], K_RANGE[1])
    return {"exponent": k_hat, "exponent_ci_low": low, "exponent_ci_high": high}


def cases():
    wide = 1024.0 * 2.0 ** np.arange(7)  # 7 sizes over 64x
    yield "exact constant", wide, np.full(7, 5e4)
    yield "exact log n", wide, 300 * np.log(wide)
    yield "exact n", wide, 3 * wide
    yield "exact n log n", wide, 2 * wide * np.log(wide)
    yield "exact n^2", wide, 1e-3 * wide**2
    yield "exact n^3", wide, 1e-8 * wide**3
    yield "large constant, small linear part", wide, 1e6 + 2 * wide

    rng = np.random.default_rng(17)
    narrow = 16384.0 * 2.0 ** (np.arange(5) / 4)  # 5 sizes over 2x
    yield "narrow range, linear with 3% noise", narrow, 3 * narrow * rng.uniform(0.97, 1.03, 5)
    yield "narrow range, n log n with 3% noise", narrow, 2 * narrow * np.log(narrow) * rng.uniform(0.97, 1.03, 5)

    yield "cache cliff x1.6 above 8192", wide, 4 * wide * np.where(wide > 8192, 1.6, 1.0)

    eight = np.round(1024.0 * 64.0 ** (np.arange(8) / 7))  # 8 sizes over 64x

    def jittered(base):
        # 5 samples a size, +-15% jitter, 8% outliers x1.5-4, summarised by the median.
        medians = []
        for b in base:
            s = b * rng.uniform(0.85, 1.15, 5)
            hit = rng.uniform(size=5) < 0.08
            s = np.where(hit, s * rng.uniform(1.5, 4.0, 5), s)
            medians.append(float(np.median(s)))
        return np.array(medians)

    yield "n with 15% noise and outliers", eight, jittered(3 * eight)
    yield "n^2 with 15% noise and outliers", eight, jittered(1e-3 * eight**2)

    yield "4 sizes", wide[:4], 3 * wide[:4]


def main():
    for name, n, t in cases():
        print(f"== {name}")
        print("points:", ", ".join(f"({x!r}, {y!r})" for x, y in zip(n.tolist(), t.tolist())))
        out = classify(n, t)
        for key in ["class", "best", "weight", "runner_up", "runner_up_weight"]:
            print(f"  {key}: {out[key]}")
        print("  weights:", ", ".join(f"{c}={w:.6g}" for c, w in out["weights"].items()))
        if "exponent" in out:
            print(f"  exponent: {out['exponent']:.6f} [{out['exponent_ci_low']:.6f}, {out['exponent_ci_high']:.6f}]")
        else:
            print("  exponent: none")


if __name__ == "__main__":
    main()
