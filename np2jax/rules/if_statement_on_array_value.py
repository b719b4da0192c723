"""NJ508 if-statement-on-array-value.

With --jit: an `if`/`else` (or `if/elif` chain) on 0-d array values whose branches run
several statements becomes `jax.lax.cond`, when every branch provably leaves values of the
same shape and dtype.
"""

from __future__ import annotations

from np2jax.rules._jit import CompiledRewrite


class IfStatementOnArrayValue(CompiledRewrite):
    code = "NJ508"
    kinds = ("cond",)
