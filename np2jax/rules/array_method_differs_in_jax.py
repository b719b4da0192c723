"""NJ412 array-method-differs-in-jax.

A method of a JAX array that is a NumPy function with the array first (`counts.round(-1)`
is np.round(counts, -1)), on data whose dtype or options running both showed JAX's
function handling otherwise: the API proof covers functions, and a converted array brings
its methods to JAX with it. Inside a function, the function stays on NumPy.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.references import FUNCTION_METHODS, check_method
from np2jax.rules.base import Rule
from np2jax.syntax import code_of


class ArrayMethodDiffersInJax(Rule):
    code = "NJ412"

    def run(self):
        flow = self.analysis.dataflow
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in FUNCTION_METHODS) \
                    or self.analysis.ref_of_call(call) is not None:
                continue  # `np.sum(x)` is an API reference, checked as such
            found = check_method(call, self.analysis.dtypes.dtype_of)
            if found is None or not flow.jax_typed(func.value):
                continue
            _, difference = found
            yield self.report(call, requires=flow.jax_refs(func.value), spelled=code_of(call),
                              function=f"np.{func.attr.value}", difference=difference)
