import numpy as np


def rescale(x):
    """Scale to [0, 1]."""
    x = np.asarray(x, dtype=float)
    span = x.max() - x.min()
    return (x - x.min()) / span if span else np.zeros_like(x)


def moving_average(x, n):
    """The mean of each window of n values."""
    sums = np.cumsum(np.asarray(x, dtype=float))
    sums[n:] = sums[n:] - sums[:-n]
    return sums[n - 1:] / n


def _subtract_mean(v):
    v -= v.mean()


def center(x):
    """A copy of x with its mean taken away."""
    out = np.array(x, dtype=float)
    _subtract_mean(out)
    return out


def checked_log(x):
    """log(x); a ValueError when x has a value <= 0."""
    x = np.asarray(x, dtype=float)
    if (x <= 0).any():
        raise ValueError("checked_log needs positive values")
    return np.log(x)


def unused_cube(x):
    """No test calls it."""
    return np.asarray(x) ** 3


def apply_each(f, xs):
    """f of each value: a function argument, which the recorder cannot copy."""
    return [f(x) for x in xs]


def jitter(x):
    """x plus noise from NumPy's global generator: a replay cannot give the recorded values."""
    return np.asarray(x) + np.random.normal(0.0, 1e-3, np.shape(x))


class Scaler:
    def __init__(self, scale=2.0):
        self.scale = scale
        self.seen = 0

    def apply(self, x):
        self.seen += 1
        return np.asarray(x) * self.scale
