"""NJ505 if-on-array-value.

With --jit: an `if`/`else` on a 0-d array value choosing between two values of the same
shape and dtype becomes `jnp.where`.
"""

from __future__ import annotations

from np2jax.rules._jit import CompiledRewrite


class IfOnArrayValue(CompiledRewrite):
    code = "NJ505"
    kinds = ("where-if",)
