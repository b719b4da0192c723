"""np2jax: convert NumPy code to JAX, source to source, and prove it by running both.

The package root stays light on purpose: `np2jax.verify` and `np2jax check` must not pay
for libcst or jax at import time. The conversion API is loaded on first use.
"""

from np2jax._version import __version__

_API_NAMES = {"Config", "convert_source", "check_source", "convert_paths", "check_paths"}


def __getattr__(name):
    if name in _API_NAMES:
        from np2jax import api

        return getattr(api, name)
    raise AttributeError(f"module 'np2jax' has no attribute {name!r}")


__all__ = ["__version__", *sorted(_API_NAMES)]
