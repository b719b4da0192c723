"""NJ509 if-elif-chain-on-index.

With --jit: `if k == 0: ... elif k == 1: ... else: ...` on a 0-d integer array `k` becomes
`jax.lax.switch`, with out-of-range values sent to the `else` branch as in Python.
"""

from __future__ import annotations

from np2jax.rules._jit import CompiledRewrite


class IfElifChainOnIndex(CompiledRewrite):
    code = "NJ509"
    kinds = ("switch",)
