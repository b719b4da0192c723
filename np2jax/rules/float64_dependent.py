"""NJ401 float64-dependent.

Code that relies on 64-bit dtypes or on precision float32 does not have.
"""

from __future__ import annotations

from np2jax.rules.base import Rule
from np2jax.syntax import code_of


class Float64Dependent(Rule):
    code = "NJ401"

    def run(self):
        if self.config.x64:
            return
        for use in self.analysis.wide_dtypes:
            yield self.report(use.node, spelled=use.spelled,
                              reason="it is a 64-bit dtype, and JAX uses 32 bits unless "
                                     "jax_enable_x64 is on")
        for call in self.analysis.decimal_roundings:
            yield self.report(call, spelled=code_of(call.func) + "(..., decimals)",
                              reason="rounding to decimals depends on the exact binary value, "
                                     "which float32 changes (2.345 rounds to 2.34 in float64, "
                                     "2.35 in float32)")
        for literal in self.analysis.wide_literals:
            yield self.report(literal, spelled=code_of(literal),
                              reason="the integer does not fit in int32, JAX's default integer")
        for comparison in self.analysis.dtype_comparisons:
            yield self.report(comparison, spelled=code_of(comparison),
                              reason="JAX's default integer and float types are 32-bit, so a "
                                     "dtype check can change its answer")
        for literal in self.analysis.tiny_literals:
            yield self.report(literal, spelled=code_of(literal),
                              reason="a tolerance this small is below float32 precision "
                                     "(about 1.2e-7)")
