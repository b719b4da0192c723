"""NJ416 rounded-reduction.

A float sum, mean or product rounded to an integer or compared for equality: XLA adds in
another order than NumPy and divides a mean through the count's reciprocal, so a result
NumPy lands exactly on an integer can be one ulp off it.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import is_integer
from np2jax.rules.base import Rule
from np2jax.syntax import code_of

ROUNDED = "is rounded to an integer by `{}`"
COMPARED = "is compared for equality by `{}`"
_EQUALITY = (cst.Equal, cst.NotEqual)
_EQUALITY_FUNCTIONS = frozenset({"numpy.equal", "numpy.not_equal"})


class RoundedReduction(Rule):
    code = "NJ416"

    def run(self):
        """A reduction of float data (quotients.REDUCING_FUNCTIONS, REDUCING_METHODS) that is
        JAX's once converted and whose result is rounded to an integer (the places and the
        paths of analysis.quotients: `int(x.mean())`, `np.cumsum(dt).astype(int)`) or
        compared with `==`/`!=` as it is (`total == 1.0`). Reported once a reduction; no fix
        (no JAX reduction adds in NumPy's order). Not ordering comparisons (`err.sum() <
        tol`: a tolerance test), nor integer data (its sums are exact)."""
        quotients = self.analysis.quotients
        calls = self.analysis.nodes(cst.Call)
        done: set = set()
        for where, value in quotients.rounded_values([*calls, *self.analysis.nodes(cst.BinaryOperation)]):
            yield from self._reports(quotients.reduction_calls(value), ROUNDED.format(code_of(where)), done)
        for where, value in quotients.compared_values([*self.analysis.nodes(cst.Comparison), *calls]):
            if self._equality(where):
                yield from self._reports(quotients.reduction_calls(value, arithmetic=False),
                                         COMPARED.format(code_of(where)), done)

    def _equality(self, where) -> bool:
        if isinstance(where, cst.Comparison):
            return isinstance(where.comparisons[0].operator, _EQUALITY)
        return bool(self.analysis.dataflow.collector.qualified_names(where.func) & _EQUALITY_FUNCTIONS)

    def _reports(self, reductions, context: str, done: set):
        flow, dtype_of = self.analysis.dataflow, self.analysis.dtypes.dtype_of
        for call in reductions:
            if call in done:
                continue
            ref = self.analysis.ref_of_call(call)
            if ref is not None:
                if not ref.converted:
                    continue
                data = call.args[0].value if call.args and not call.args[0].star else None
                requires = (ref.node,)
            else:  # x.sum(): JAX's method where x is a JAX array once converted
                data = call.func.value
                if not flow.jax_typed(data):
                    continue
                requires = flow.jax_refs(data)
            dtype = dtype_of(data) if data is not None else None
            if dtype is not None and (is_integer(dtype) or dtype == "bool") \
                    and not _averages(call):
                continue  # integer sums and products are exact (a mean of integers is not)
            done.add(call)
            yield self.report(call, requires=requires, reduction=code_of(call), context=context)


def _averages(call: cst.Call) -> bool:
    """mean/average/var/std: a float result even of integer data."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
    return name in ("mean", "nanmean", "average", "var", "nanvar", "std", "nanstd")
