"""NJ103 call-differs-in-jax.

A NumPy/SciPy call whose arguments JAX's version was not proven, by running both, to compute
alike stays on NumPy.
"""

from __future__ import annotations


from np2jax.analysis import facts
from np2jax.catalog import api_policy
from np2jax.rules._arguments import as_array
from np2jax.rules.base import Rule
from np2jax.syntax import code_of


class CallDiffersInJax(Rule):
    code = "NJ103"

    def run(self):
        """The analysis planned these references to stay on NumPy: the API table proven by
        running NumPy/SciPy and JAX side by side (rules/api/proven.json) shows JAX's version
        computes this call differently (an argument's value, one left to NumPy's default, a
        parameter JAX requires, the result's dtype or structure), or it proved nothing for
        an argument given. The detail names the argument.

        A kept call of a NumPy function that hands a non-NumPy first argument to its method
        (policy.toml method_dispatch: `np.take(a, i)` is `a.take(i, mode="raise")`) would
        still run JAX's version on a JAX array: that argument is read as `np.asarray(a)`."""
        for ref in self.analysis.refs:
            if ref.keep not in (facts.KEEP_PROVEN_DIFFERENT, facts.KEEP_UNPROVEN):
                continue
            fields = {"name": code_of(ref.node), "reason": ref.detail}
            yield self.report(ref.node, **fields)
            yield from numpy_dispatch(self, ref, **fields)


def numpy_dispatch(rule: Rule, ref, **fields):
    """For a call left on NumPy of a function that hands a non-NumPy first argument to its
    method (policy.toml method_dispatch: `np.cumprod(a, out=b)` is `a.cumprod(out=b)`), the
    report reading a JAX array first argument as `np.asarray(a)`, unlisted, in `rule`'s
    name (NJ103's, NJ204's): else JAX's method runs, with JAX's answer or its refusal. The
    same for each positional argument of a function reading its arguments as dtypes
    (policy.toml dtype_arguments: `np.result_type(float, x[0])`), which NumPy deprecates for
    an array that is not NumPy's."""
    call = ref.call
    policy = api_policy()
    if call is None or not call.args:
        return
    if ref.qualname in policy["method_dispatch"]:
        read = call.args[:1]
    elif ref.qualname in policy["dtype_arguments"]:  # np.result_type(float, x[0])
        read = call.args
    else:
        return
    flow = rule.analysis.dataflow
    alias, needed = rule.analysis.numpy_alias
    for arg in read:
        if arg.keyword is None and not arg.star and flow.jax_typed(arg.value):
            yield rule.report(arg.value, **fields, fix=as_array(alias), imports=(needed,) if needed else (),
                              requires=flow.jax_refs(arg.value), report_if_unfixed=False,
                              listed=False, boundary=True)
