"""Statistics for outputs that come from random numbers: a two-sample Kolmogorov-Smirnov test
and moments, in NumPy only (no SciPy)."""

from __future__ import annotations

import math

import numpy as np

KS_ALPHA = 1e-3  # two samples from one distribution fail the KS test this rarely


def kolmogorov_q(lam: float) -> float:
    """P(K > lam) for the Kolmogorov distribution: 2 sum_j (-1)^(j-1) exp(-2 j^2 lam^2)."""
    if lam < 0.2:  # the series converges slowly here, and Q is 1 to 9 digits
        return 1.0
    total, sign, previous = 0.0, 1.0, 0.0
    for j in range(1, 101):
        term = sign * 2.0 * math.exp(-2.0 * j * j * lam * lam)
        total += term
        if abs(term) <= 1e-10 * abs(total) or abs(term) <= 1e-12 * previous:
            return min(max(total, 0.0), 1.0)
        sign, previous = -sign, abs(term)
    return 1.0


def ks_2samp(x, y) -> tuple[float, float]:
    """The two-sample KS statistic D = max |F_x - F_y| and its asymptotic p-value (with the
    small-sample correction of Stephens, as in Numerical Recipes). Ties are handled: both
    empirical CDFs are evaluated at every observed value."""
    x = np.sort(np.asarray(x, dtype=np.float64).ravel())
    y = np.sort(np.asarray(y, dtype=np.float64).ravel())
    n, m = x.size, y.size
    if n == 0 or m == 0:
        return (0.0, 1.0) if n == m else (1.0, 0.0)
    grid = np.concatenate([x, y])
    cdf_x = np.searchsorted(x, grid, side="right") / n
    cdf_y = np.searchsorted(y, grid, side="right") / m
    d = float(np.max(np.abs(cdf_x - cdf_y)))
    en = math.sqrt(n * m / (n + m))
    return d, kolmogorov_q((en + 0.12 + 0.11 / en) * d)


def moments(values) -> tuple[float, float]:
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size == 0:
        return 0.0, 0.0
    return float(values.mean()), float(values.std())
