"""NJ413 float32-running-sum.

A cumsum or cumprod of float32 (or complex64) data: NumPy accumulates one value at a time
in float32, JAX's cumulative reductions combine partial results in another order, so the
rounding differs and the running results drift apart as they grow.
"""

from __future__ import annotations

import libcst as cst

from np2jax.rules._accumulation import accumulation_calls
from np2jax.rules.base import Rule
from np2jax.syntax import argument_for

RUNNING = frozenset({"cumsum", "cumprod", "nancumsum", "nancumprod"})
_SINGLE = frozenset({"float32", "complex64"})


class Float32RunningSum(Rule):
    code = "NJ413"

    def run(self):
        """`np.cumsum(x)`, `x.cumsum()`, ... where the analysis knows x is float32 and no
        dtype= asks for another accumulator, and x is a JAX array once converted (the
        finding stands only if that conversion happened)."""
        for call, data, position, requires, spelled in accumulation_calls(self.analysis, RUNNING):
            dtype = self._single(call, data, position)
            if dtype is not None:
                yield self.report(call, requires=requires, spelled=spelled, dtype=dtype)

    def _single(self, call: cst.Call, data: cst.BaseExpression, dtype_position: int) -> str | None:
        """The dtype of float32 or complex64 data accumulated in it: no dtype= (or the same)."""
        dtypes = self.analysis.dtypes
        dtype = dtypes.dtype_of(data)
        if dtype not in _SINGLE:
            return None
        asked = argument_for(call, dtype_position, "dtype")
        return dtype if asked is None or dtypes.spelled(asked) == dtype else None
