"""NJ406 float16-accumulation.

A sum, product, cumsum or cumprod of float16 data: NumPy rounds partial results to float16
where JAX accumulates in float32, so the results can differ.
"""

from __future__ import annotations

import libcst as cst

from np2jax.rules._accumulation import accumulation_calls
from np2jax.rules.base import Rule
from np2jax.syntax import argument_for

ACCUMULATIONS = frozenset({"sum", "prod", "cumsum", "cumprod", "nansum", "nanprod", "nancumsum",
                           "nancumprod"})


class Float16Accumulation(Rule):
    code = "NJ406"

    def run(self):
        """`np.cumsum(x)`, `x.sum()`, ... where the analysis knows x is float16 and no dtype=
        asks for another accumulator, and x is a JAX array once converted (the finding
        stands only if that conversion happened)."""
        for call, data, position, requires, spelled in accumulation_calls(self.analysis, ACCUMULATIONS):
            if self._float16(call, data, position):
                yield self.report(call, requires=requires, spelled=spelled)

    def _float16(self, call: cst.Call, data: cst.BaseExpression, dtype_position: int) -> bool:
        """float16 data accumulated in float16: no dtype= (or dtype=float16)."""
        dtypes = self.analysis.dtypes
        if dtypes.dtype_of(data) != "float16":
            return False
        asked = argument_for(call, dtype_position, "dtype")
        return asked is None or dtypes.spelled(asked) == "float16"
