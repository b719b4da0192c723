"""NJ406 float16-accumulation.

A sum, product, cumsum or cumprod of float16 data: NumPy rounds partial results to float16
where JAX accumulates in float32, so the results can differ.
"""

from __future__ import annotations

import libcst as cst

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
        flow = self.analysis.dataflow
        for ref in self.analysis.refs:
            name = ref.qualname.removeprefix("numpy.")
            if ref.call is None or not ref.converted or name not in ACCUMULATIONS \
                    or not ref.call.args or ref.call.args[0].keyword is not None \
                    or ref.call.args[0].star:
                continue
            if self._float16(ref.call, ref.call.args[0].value, 2):
                yield self.report(ref.call, requires=(ref.node,), spelled=f"np.{name}(...)")
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in ACCUMULATIONS) \
                    or self.analysis.ref_of_call(call) is not None:
                continue
            if self._float16(call, func.value, 1) and flow.jax_typed(func.value):
                yield self.report(call, requires=flow.jax_refs(func.value),
                                  spelled=f".{func.attr.value}()")

    def _float16(self, call: cst.Call, data: cst.BaseExpression, dtype_position: int) -> bool:
        """float16 data accumulated in float16: no dtype= (or dtype=float16)."""
        dtypes = self.analysis.dtypes
        if dtypes.dtype_of(data) != "float16":
            return False
        asked = argument_for(call, dtype_position, "dtype")
        return asked is None or dtypes.spelled(asked) == "float16"
