"""NJ417 unsigned-zero-result.

A function whose NumPy results hold no -0.0 (np.sign, np.floor_divide, scipy.special.erfinv)
gives -0.0 in JAX for -0.0 data: it prints `-0.` and divides to -inf. The converted call
adds an opaque 0, which turns -0.0 into 0.0 and leaves every other value as it is.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.references import unsigned_zeros
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates

FLOATS = frozenset({"float", "float16", "float32", "float64"})
POSITIVE_CONSTANTS = frozenset({"numpy.pi", "numpy.e", "math.pi", "math.e", "math.tau"})
NON_NEGATIVE_RESULTS = frozenset({"builtins.abs", "builtins.len", "numpy.abs", "numpy.absolute",
                                  "numpy.sqrt", "numpy.exp", "numpy.square", "numpy.hypot",
                                  "numpy.fabs"})
OUTCOME = "rewritten as `jnp.add(..., jax.lax.optimization_barrier(0))`, whose zeros are 0.0"


class UnsignedZeroResult(Rule):
    code = "NJ417"

    def run(self):
        """Each converted call of a function that running both showed giving -0.0 where
        every zero of NumPy's result is 0.0 (references.unsigned_zeros, from
        rules/api/proven.json): rewritten, never reported alone."""
        for ref in self.analysis.refs:
            if ref.call is None or not ref.jax_takes_arguments or not unsigned_zeros(ref.qualname):
                continue
            yield self.report(ref.call, fix=self._unsigned, requires=(ref.node,),
                              imports=[("jax", None), ("jax.numpy", self.analysis.jnp_alias)],
                              report_if_unfixed=False, call=code_of(ref.call),
                              outcome=OUTCOME)
        yield from self._modulos()

    def _modulos(self):
        """`theta % (2 * np.pi)`, `np.mod(x, 3.0)`, `np.remainder(...)` of floats by a
        divisor shown positive: NumPy's zero takes the divisor's sign (0.0), JAX's the
        dividend's (`-6.0 % 3.0` is -0.0). Integers have no -0.0; a divisor of unknown sign
        may give NumPy's -0.0 too, so neither is touched."""
        flow, dtype_of = self.analysis.dataflow, self.analysis.dtypes.dtype_of
        found = [(node, node.left, node.right) for node in self.analysis.nodes(cst.BinaryOperation)
                 if isinstance(node.operator, cst.Modulo)]
        found += [(ref.call, ref.call.args[0].value, ref.call.args[1].value) for ref in self.analysis.refs
                  if ref.call is not None and ref.jax_takes_arguments
                  and ref.qualname in ("numpy.mod", "numpy.remainder") and len(ref.call.args) == 2
                  and not any(a.keyword or a.star for a in ref.call.args)]
        for node, dividend, divisor in found:
            if isinstance(node, cst.BinaryOperation) and not flow.jax_typed(node) \
                    or self._unsigned_already(node):
                continue
            kinds = {dtype_of(dividend), dtype_of(divisor)}
            if not kinds & FLOATS or not self._positive(divisor) or self._non_negative(dividend):
                continue
            yield self.report(node, fix=self._unsigned, requires=flow.jax_refs(node)
                              if isinstance(node, cst.BinaryOperation) else self._ref_nodes(node),
                              imports=[("jax", None), ("jax.numpy", self.analysis.jnp_alias)],
                              report_if_unfixed=False, call=code_of(node), outcome=OUTCOME)

    def _unsigned_already(self, node) -> bool:
        """`jnp.add(<node>, jax.lax.optimization_barrier(0))`: a conversion run twice."""
        arg = self.analysis.parents.get(node)
        call = self.analysis.parents.get(arg)
        return isinstance(call, cst.Call) and len(call.args) == 2 and call.args[0] is arg \
            and "optimization_barrier" in code_of(call.args[1].value)

    def _ref_nodes(self, call: cst.Call) -> tuple:
        ref = self.analysis.ref_of_call(call)
        return (ref.node,) if ref is not None else ()

    def _positive(self, value) -> bool:
        """A divisor shown positive: a positive number, π, e, τ, or a sum, product,
        quotient or power of those (`2 * np.pi`), or a name bound once to one."""
        return self._signed(value, strict=True)

    def _non_negative(self, value) -> bool:
        """A dividend shown never negative, whose remainder is never -0.0: a number >= 0,
        `abs(...)`, np.abs/sqrt/exp/square/hypot of anything, np.arange or np.linspace of
        numbers >= 0, sums, products, quotients and remainders of those, an even power, or a
        name bound once to one."""
        return self._signed(value, strict=False)

    def _signed(self, value, strict: bool, depth: int = 0) -> bool:
        """Whether `value` is shown > 0 (strict) or >= 0."""
        if depth > 4:
            return False
        if isinstance(value, (cst.Integer, cst.Float)):
            number = float(value.evaluated_value)
            return number > 0 if strict else number >= 0
        if isinstance(value, (cst.Name, cst.Attribute)) and \
                self.analysis.qualified_names(value) & POSITIVE_CONSTANTS:
            return True
        if isinstance(value, cst.Call) and not strict:
            name = self._function_name(value)
            if name in ("numpy.arange", "numpy.linspace"):
                return all(self._signed(a.value, strict, depth + 1) for a in value.args
                           if a.keyword is None or a.keyword.value in ("start", "stop", "step"))
            return name in NON_NEGATIVE_RESULTS
        if isinstance(value, cst.BinaryOperation):
            if not strict and isinstance(value.operator, cst.Power) \
                    and isinstance(value.right, cst.Integer) and int(value.right.evaluated_value) % 2 == 0:
                return True  # x ** 2
            operators = (cst.Add, cst.Multiply, cst.Divide, cst.Power) if strict else \
                (cst.Add, cst.Multiply, cst.Divide, cst.Power, cst.FloorDivide, cst.Modulo)
            return isinstance(value.operator, operators) and self._signed(value.left, strict, depth + 1) \
                and self._signed(value.right, strict, depth + 1)
        if isinstance(value, cst.Name):
            values, aug = self.analysis.dataflow.name_values(value)
            return len(values) == 1 and not aug and not isinstance(values[0][0], str) \
                and self._signed(values[0][0], strict, depth + 1)
        return False

    def _function_name(self, call: cst.Call) -> str | None:
        """NumPy's name of a call (`np.abs`, or `jnp.abs` of a conversion run before), or the
        builtin's (`builtins.abs`)."""
        ref = self.analysis.ref_of_call(call)
        if ref is not None:
            return ref.qualname
        jax = self.analysis.dataflow.collector.jax_calls.get(call)
        if jax is not None:
            return jax
        names = self.analysis.qualified_names(call.func)
        return next(iter(names)) if len(names) == 1 else None

    def _unsigned(self, node: cst.Call) -> cst.Call:
        """`jnp.add(<call>, jax.lax.optimization_barrier(0))`: -0.0 + 0 is 0.0, and the
        barrier keeps XLA from folding the addition of a zero away under `jax.jit`; the
        weakly typed 0 keeps the result's dtype."""
        zero = updates.call(updates.attr(updates.attr(cst.Name("jax"), "lax"), "optimization_barrier"),
                            cst.Integer("0"))
        return updates.jnp_call(self.analysis.jnp_alias, "add",
                                node.with_changes(lpar=[], rpar=[]), zero).with_changes(
            lpar=node.lpar, rpar=node.rpar)
