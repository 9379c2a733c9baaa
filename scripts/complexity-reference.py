#!/usr/bin/env python3
"""Reference values for core/src/complexity/mod.rs's tests, computed independently with scipy.

The Rust code profiles the fixed cost out and searches one variable with its own grid and Brent
minimiser; this script fits (a, b) together with scipy.optimize.least_squares from several
starts, profiles the exponent on a fine grid and finds the interval's ends with brentq. The test
data (including the seeded noisy cases) is made here and printed with the results, so the tests
embed both. Cases marked "exact" are classified as exact counts (Noise::Exact): a lower floor on
the residual and no AICc margin between classes.

Needs numpy and scipy (not project dependencies):
    python3 -m pip install --target /tmp/pydeps numpy scipy
    PYTHONPATH=/tmp/pydeps python3 scripts/complexity-reference.py [name ...]
"""

import math
import sys

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
EXACT_SIGMA_FLOOR = 1e-5
K_RANGE = (0.0, 4.0)
# The classes the power law nests and no class does, by index, with their exponent: only the
# exponent's interval tests whether they are ruled out.
INTERVAL_EXPONENT = {2: 1.0, 4: 2.0, 5: 3.0}


def log_likelihood(sse, n, floor):
    var = max(sse / n, floor**2)
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


def classify(n, t, exact=False):
    count = len(n)
    distinct = len(set(n.tolist()))
    corrected = count >= 5
    floor = EXACT_SIGMA_FLOOR if exact else SIGMA_FLOOR
    scores = []
    for cls in CLASSES:
        k = 2 if cls == "1" else 3
        score = -2 * log_likelihood(class_sse(cls, n, t), count, floor) + 2 * k
        if corrected:
            score += 2 * k * (k + 1) / (count - k - 1)
        scores.append(score)
    scores = np.array(scores)
    rel = np.exp(-0.5 * (scores - scores.min()))
    weights = rel / rel.sum()
    order = sorted(range(6), key=lambda i: (-weights[i], i))
    best, runner = order[0], order[1]
    cls = None
    out = {
        "best": CLASSES[best],
        "weight": weights[best],
        "runner_up": CLASSES[runner],
        "runner_up_weight": weights[runner],
        "weights": dict(zip(CLASSES, weights)),
    }
    if distinct >= 5:
        out.update(exponent(n, t, floor))
        low = out["exponent_ci_low"]
        if best == 0:
            cls = "1"
        else:
            # Separated: AICc worse by more than the gap at which F(1, count - 2) rejects at 5%;
            # exact counts have no chance to allow for, so any gap separates.
            margin = 0.0 if exact else count * math.log(1 + f_dist.ppf(0.95, 1, count - 2) / (count - 2))
            # Open: not separated from the best, or simpler than it, nested by the power law, and
            # not ruled out by the exponent's interval.
            open_ = [
                j
                for j in range(6)
                if scores[j] - scores[best] <= margin or (j < best and j in INTERVAL_EXPONENT and low <= INTERVAL_EXPONENT[j])
            ]
            if len(open_) == 1 or (len(open_) == 2 and open_[1] == open_[0] + 1):
                cls = CLASSES[open_[0]]
        # O(1) only where the interval reaches down to 0.25; O(n^2) and O(n^3) only where the class
        # below is ruled out with the largest size left out too.
        steep = {"n^2": 1.0, "n^3": 2.0}.get(cls)
        if cls == "1" and low > 0.25:
            cls = None
        elif steep is not None:
            order_n = np.argsort(n, kind="stable")
            if exponent(n[order_n][:-1], t[order_n][:-1], floor)["exponent_ci_low"] <= steep:
                cls = None
    out["class"] = cls or "unsure"
    return out


def exponent(n, t, floor):
    count = len(n)

    def profile(k):
        return sse_fixed_plus_growth(n**k, t)

    grid = np.linspace(*K_RANGE, 401)
    values = np.array([profile(k) for k in grid])
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    r = minimize_scalar(profile, bounds=(lo, hi), method="bounded", options={"xatol": 1e-9})
    k_hat, sse_hat = (r.x, r.fun) if r.fun < values[i] else (grid[i], values[i])
    ll_hat = log_likelihood(sse_hat, count, floor)

    # Bates and Watts' profile-t region: the variance counts as estimated, on count - 3 degrees
    # of freedom (a, b and k fitted), so the cut is count * ln(1 + F(1, count - 3) / (count - 3)).
    cut = count * math.log(1 + f_dist.ppf(0.95, 1, count - 3) / (count - 3))

    def over(k):
        return 2 * (ll_hat - log_likelihood(profile(k), count, floor)) - cut

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
    """(name, sizes, values, exact) of every test series."""
    wide = 1024.0 * 2.0 ** np.arange(7)  # 7 sizes over 64x
    yield "exact constant", wide, np.full(7, 5e4), False
    yield "exact log n", wide, 300 * np.log(wide), False
    yield "exact n", wide, 3 * wide, False
    yield "exact n log n", wide, 2 * wide * np.log(wide), False
    yield "exact n^2", wide, 1e-3 * wide**2, False
    yield "exact n^3", wide, 1e-8 * wide**3, False
    yield "large constant, small linear part", wide, 1e6 + 2 * wide, False

    rng = np.random.default_rng(17)
    narrow = 16384.0 * 2.0 ** (np.arange(5) / 4)  # 5 sizes over 2x
    yield "narrow range, linear with 3% noise", narrow, 3 * narrow * rng.uniform(0.97, 1.03, 5), False
    yield "narrow range, n log n with 3% noise", narrow, 2 * narrow * np.log(narrow) * rng.uniform(0.97, 1.03, 5), False

    yield "cache cliff x1.6 above 8192", wide, 4 * wide * np.where(wide > 8192, 1.6, 1.0), False
    yield "fixed cost 24x, x1.2 above 16384", wide, 1e5 + 4 * wide * np.where(wide > 16384, 1.2, 1.0), False

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

    yield "n with 15% noise and outliers", eight, jittered(3 * eight), False
    yield "n^2 with 15% noise and outliers", eight, jittered(1e-3 * eight**2), False

    yield "4 sizes", wide[:4], 3 * wide[:4], False

    # Instruction counts, the same on every run: 5 sizes from 1 KiB, doubling.
    kib = 1024.0 * 2.0 ** np.arange(5)
    strchr = np.array([208198.0, 809542.0, 3191878.0, 12675142.0, 50516038.0])
    yield "counts: strchr loop, n^2 and a small fixed cost, exact", kib, strchr, True
    yield "counts: 7n + 3000, exact", kib, 7 * kib + 3000, True
    yield "counts: 1e8 + 2n, exact", kib, 1e8 + 2 * kib, True
    yield "counts: 1e8 + 2n, as times", kib, 1e8 + 2 * kib, False
    yield "counts: 1e6 + n^2/1000, exact", kib, 1e6 + kib**2 / 1000, True
    yield "counts: 3 n log2 n + 5n + 2000, exact", kib, np.round(3 * kib * np.log2(kib) + 5 * kib + 2000), True
    yield "counts: 5000, exact", kib, np.full(5, 5000.0), True


def main():
    """Prints every case, or those whose name holds one of the arguments."""
    wanted = sys.argv[1:]
    for name, n, t, exact in cases():
        if wanted and not any(w in name for w in wanted):
            continue
        print(f"== {name}")
        print("points:", ", ".join(f"({x!r}, {y!r})" for x, y in zip(n.tolist(), t.tolist())))
        out = classify(n, t, exact)
        for key in ["class", "best", "weight", "runner_up", "runner_up_weight"]:
            print(f"  {key}: {out[key]}")
        print("  weights:", ", ".join(f"{c}={w:.6g}" for c, w in out["weights"].items()))
        if "exponent" in out:
            print(f"  exponent: {out['exponent']:.6f} [{out['exponent_ci_low']:.6f}, {out['exponent_ci_high']:.6f}]")
        else:
            print("  exponent: none")


if __name__ == "__main__":
    main()
