"""NJ414 rounded-quotient.

A quotient rounded to an integer (floor, ceil, astype(int), //): JAX divides by a broadcast
divisor through its reciprocal, which can put a quotient that lands on an integer one ulp
below it.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import is_integer
from np2jax.rules.base import Rule
from np2jax.syntax import argument_for, code_of, updates

ROUNDED = "is rounded to an integer by `{}`, and a quotient one ulp below an integer rounds to its neighbour"
COMPARED = ("is compared by `{}`, and a quotient one ulp off a value it meets exactly falls on "
            "the other side")
DECIMALS = ("divides its rounded values by {} (NumPy's `rint(x * f) / f`), so its results are not "
            "the floats NumPy gives (`(np.round(p, 2) * 100).astype(int)`, `== 0.57` change)")
# NumPy's functions rounding to decimals (rint(x * 10**d) / 10**d)
ROUND_FUNCTIONS = frozenset({"numpy.round", "numpy.around", "numpy.round_"})
OUTCOME = ("rewritten to divide as NumPy does (the operands broadcast behind "
           "`jax.lax.optimization_barrier`, where XLA cannot turn the division into a product)")


class RoundedQuotient(Rule):
    code = "NJ414"

    def run(self):
        """A true division whose quotient is rounded to an integer or compared (analysis.quotients):
        `np.floor(x / 0.1)`, `t = np.arange(n) / sr; idx = (t * sr).astype(int)`. Reported
        and rewritten where the division is JAX's once converted: the quotient is a JAX
        array (Values.jax_typed), or the division is written in the argument of a rounding
        call that is converted (its result is a JAX array whatever the division gives)."""
        quotients, calls = self.analysis.quotients, self.analysis.nodes(cst.Call)
        done: set = set()
        for where, value in quotients.rounded_values([*calls, *self.analysis.nodes(cst.BinaryOperation)]):
            yield from self._divisions(where, value, ROUNDED.format(code_of(where)), done)
        for where, value in quotients.compared_values([*self.analysis.nodes(cst.Comparison), *calls]):
            yield from self._divisions(where, value, COMPARED.format(code_of(where)), done,
                                       arithmetic=False)
        yield from self._decimal_rounding()

    def _divisions(self, where, value, context: str, done: set, arithmetic: bool = True):
        """The reports for the divisions whose quotient reaches `value`, rounded or compared
        at `where` (Quotients.divisions: `arithmetic`)."""
        quotients, flow = self.analysis.quotients, self.analysis.dataflow
        site = self.analysis.ref_of_call(where) if isinstance(where, cst.Call) else None
        direct = quotients.direct_divisions(value) if site is not None and site.converted \
            else ()
        for division in quotients.divisions(value, arithmetic):
            if division in done or not self._divides_in_jax(division):
                continue
            if flow.jax_typed(division):
                requires = flow.jax_refs(division)
            elif division in direct:
                requires = (site.node,)
            else:
                continue
            done.add(division)
            yield self.report(division, fix=self._exact, requires=requires,
                              imports=[("jax", None), ("jax.numpy", self.analysis.jnp_alias)],
                              report_if_unfixed=False, quotient=code_of(division),
                              context=context, outcome=OUTCOME)

    def _decimal_rounding(self):
        """`np.round(x, 2)`, `np.around(x, 2)`, `x.round(2)` of a JAX array with literal
        positive decimals: NumPy computes `rint(x * 100.0) / 100.0`, which the rewrite
        writes with the exact division (jnp.round divides through the reciprocal)."""
        flow, dtype_of = self.analysis.dataflow, self.analysis.dtypes.dtype_of
        for call in self.analysis.nodes(cst.Call):
            ref = self.analysis.ref_of_call(call)
            if ref is not None:
                if ref.qualname not in ROUND_FUNCTIONS or not ref.converted or not call.args:
                    continue
                data, decimals = call.args[0].value, argument_for(call, 1, "decimals")
                requires = (ref.node,)
            elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "round":
                data, decimals = call.func.value, argument_for(call, 0, "decimals")
                if not flow.jax_typed(data):
                    continue
                requires = flow.jax_refs(data)
            else:
                continue
            places = decimals.evaluated_value if isinstance(decimals, cst.Integer) else None
            if not places or places > 15 or len(call.args) != (1 if ref is None else 2) \
                    or any(a.star for a in call.args) or is_integer(dtype_of(data)) \
                    or dtype_of(data) == "bool":
                continue
            factor = f"{10.0 ** places!r}"
            yield self.report(call, fix=self._rounded_to(places, method=ref is None), requires=requires,
                              imports=[("jax", None), ("jax.numpy", self.analysis.jnp_alias)],
                              report_if_unfixed=False, quotient=code_of(call),
                              context=DECIMALS.format(factor), outcome=OUTCOME)

    def _rounded_to(self, places: int, method: bool):
        """The fix writing `rint(x * 10.0**places) / 10.0**places` with the exact division,
        for `x.round(places)` (method) or `jnp.round(x, places)`."""
        jnp = self.analysis.jnp_alias

        def fix(node: cst.Call) -> cst.Call:
            data = node.func.value if method else node.args[0].value
            factor = cst.Float(f"{10.0 ** places!r}")
            scaled = updates.jnp_call(jnp, "rint", updates.binary(data, "*=", factor))
            return exact_quotient(cst.BinaryOperation(scaled, cst.Divide(), factor), jnp).with_changes(
                lpar=node.lpar, rpar=node.rpar)
        return fix

    def _divides_in_jax(self, division) -> bool:
        """`a / b`, or np.divide/np.true_divide converted to JAX's."""
        if isinstance(division, cst.BinaryOperation):
            return True
        ref = self.analysis.ref_of_call(division)
        return ref is not None and ref.converted

    def _exact(self, node):
        return exact_quotient(node, self.analysis.jnp_alias)


def exact_quotient(node, jnp: str) -> cst.Call:
    """`a / b` (or a converted `jnp.divide(a, b)`) as
    `jnp.true_divide(*jax.lax.optimization_barrier(jnp.broadcast_arrays(a, b)))`: both
    operands at the result's shape, which the barrier hides from XLA's algebraic simplifier,
    so it divides; a call keeps its function."""
    if isinstance(node, cst.BinaryOperation):
        func = updates.attr(cst.Name(jnp), "true_divide")
        operands = [node.left, node.right]
    else:
        func = node.func
        operands = [a.value for a in node.args]
    # as arguments, they need no parentheses (updates.call puts back those a tuple needs)
    operands = [o.with_changes(lpar=[], rpar=[]) for o in operands]
    barrier = updates.call(
        updates.attr(updates.attr(cst.Name("jax"), "lax"), "optimization_barrier"),
        updates.jnp_call(jnp, "broadcast_arrays", *operands))
    return cst.Call(func, [cst.Arg(barrier, star="*")], lpar=node.lpar, rpar=node.rpar)
