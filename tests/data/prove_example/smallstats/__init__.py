"""A small package with its own tests: `np2jax prove` replays each function on the calls the
tests make (README, "Proving a package function by function")."""

from smallstats.core import (Scaler, apply_each, center, checked_log, jitter, moving_average,
                             rescale, unused_cube)

__all__ = ["Scaler", "apply_each", "center", "checked_log", "jitter", "moving_average", "rescale",
           "unused_cube"]
