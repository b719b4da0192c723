"""NJ503 print-of-array.

With --jit: `print` of array values inside a function NJ501 compiles becomes
`jax.debug.print`.
"""

from __future__ import annotations

from np2jax.rules._jit import CompiledRewrite


class PrintOfArray(CompiledRewrite):
    code = "NJ503"
    kinds = ("debug-print",)
