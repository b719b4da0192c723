"""Heat flowing along a rod, then a few statistics of the final temperatures.

A small NumPy program to try np2jax on:

    np2jax convert examples --diff

What np2jax does with it today:
- `numpy` and `scipy.special.erf` / `scipy.signal.convolve` are rewritten to jax.numpy
  and jax.scipy (NJ101);
- list literals passed where JAX wants an array are wrapped in jnp.array(...) (NJ110);
- `np.sqrt(n)` computes a shape, so it stays on NumPy (host-side work, no finding);
- the measurement noise uses np.random, which JAX replaces with explicit keys: it stays on
  NumPy and is reported (NJ301), and so is the write into `noise[0]` (NJ201);
- `np.trapezoid` stays on NumPy and is reported (NJ103): run beside NumPy, JAX's version
  gives NaN where NumPy gives inf for data holding infinities, which nothing here rules out.
The converted program still runs, and gives the same results within float32 tolerance.
"""

import numpy as np
from scipy.signal import convolve
from scipy.special import erf


def initial_temperature(x, width):
    """A hot band in the middle of the rod: the difference of two error functions."""
    return 0.5 * (erf((x - 0.4) / width) - erf((x - 0.6) / width))


def diffuse(u, alpha, steps):
    """Explicit finite differences: u <- u + alpha * (u[i-1] - 2 u[i] + u[i+1])."""
    for _ in range(steps):
        u = u + alpha * convolve(u, [1.0, -2.0, 1.0], mode="same")
    return u


def main():
    n = 64
    x = np.linspace(0.0, 1.0, n)
    u = diffuse(initial_temperature(x, 0.05), alpha=0.2, steps=50)

    # Measurement noise from a seeded generator: stays on NumPy (NJ301).
    rng = np.random.default_rng(0)
    noise = rng.normal(scale=0.01, size=n)
    noise[0] = 0.0  # the left sensor is exact (NJ201: an in-place write)
    measured = u + noise

    # Shape work: 64 readings as an 8 x 8 grid of blocks. np.sqrt(n) stays on NumPy.
    side = int(np.sqrt(n))
    blocks = measured.reshape(side, side)

    return {
        "peak": np.max(u),
        "heat": np.trapezoid(u, x),
        "block_means": np.mean(blocks, axis=1),
        "quartiles": np.percentile(measured, [25, 50, 75]),
        "weighted": np.dot([0.25, 0.5, 0.25], np.array([u[0], u[n // 2], u[-1]])),
    }


if __name__ == "__main__":
    for name, value in main().items():
        print(f"{name}: {value}")
