"""NJ412 array-method-differs-in-jax.

A method of a JAX array that is a NumPy function with the array first (`counts.round(-1)`
is np.round(counts, -1)), on data whose dtype or options running both showed JAX's
function handling otherwise: the API proof covers functions, and a converted array brings
its methods to JAX with it. Inside a function, the function stays on NumPy.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.references import FUNCTION_METHODS, check_method, method_spellings
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates


class ArrayMethodDiffersInJax(Rule):
    code = "NJ412"

    def run(self):
        """Each method of FUNCTION_METHODS called on a value that is a JAX array once
        converted: an option JAX spells otherwise is rewritten (`kind="stable"` as
        `stable=True`); an option it refuses, or data whose dtype running both showed it
        handling otherwise, is reported (the function stays on NumPy)."""
        flow = self.analysis.dataflow
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in FUNCTION_METHODS) \
                    or self.analysis.ref_of_call(call) is not None:
                continue  # `np.sum(x)` is an API reference, checked as such
            if not flow.jax_typed(func.value):
                continue
            for argument, spelling in method_spellings(call):
                yield self._respelled(call, argument, spelling)
            found = check_method(call, self.analysis.dtypes.dtype_of)
            if found is None:
                continue
            _, difference = found
            yield self.report(call, requires=flow.jax_refs(func.value), spelled=code_of(call),
                              function=f"np.{func.attr.value}", difference=difference)

    def _respelled(self, call: cst.Call, argument: cst.Arg, spelling: str):
        """`x.argsort(kind="stable")`: JAX's method refuses the value but spells it
        otherwise (`stable=True`), which running both proved NumPy's: rewritten so."""
        return self.report(argument, fix=updates.spelled_keyword(spelling), requires=self.analysis.dataflow.jax_refs(call.func.value),
                           spelled=code_of(call), function=f"np.{call.func.attr.value}",
                           difference=f"JAX refuses `{code_of(argument).rstrip(', ')}` and spells it "
                                      f"`{spelling}`, with which running both gave NumPy's result; "
                                      "rewritten so", report_if_unfixed=False, keeps_function=False)
