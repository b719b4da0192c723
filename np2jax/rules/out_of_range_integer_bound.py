"""NJ408 out-of-range-integer-bound.

A Python integer outside a narrow integer array's range, compared with it or given to np.clip
as a bound: NumPy 2 compares by value, JAX casts the integer into the array's dtype first (it
wraps); rewritten to NumPy's result.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import DTYPES, int_literal, integer_range
from np2jax.rules.base import Rule
from np2jax.syntax import argument_for, code_of, updates

_COMPARISONS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual,
                cst.Equal, cst.NotEqual)
# integer dtypes whose range a Python integer can leave while int64 still holds both
NARROW_INTEGERS = frozenset(name for name, (kind, bits) in DTYPES.items()
                            if kind in "ui" and bits < 64)


def _integer(value: int) -> cst.BaseExpression:
    return cst.Integer(str(value)) if value >= 0 else cst.UnaryOperation(cst.Minus(), cst.Integer(str(-value)))


class OutOfRangeIntegerBound(Rule):
    code = "NJ408"

    def run(self):
        """`x < 300` of uint8 data (JAX compares with 300 cast to uint8, 44): the array is
        cast to int64 first (`x.astype(jnp.int64) < 300`), which holds both. `np.clip(x, -5,
        300)` of uint8 data (JAX clips to 251..44): the bound is replaced by the end of the
        dtype's range it passes (`jnp.clip(x, 0, 255)`), which NumPy's clip by value gives."""
        jnp = self.analysis.jnp_alias
        flow = self.analysis.dataflow
        dtype_of = self.analysis.dtypes.dtype_of
        for comparison in self.analysis.nodes(cst.Comparison):
            if len(comparison.comparisons) != 1 \
                    or not isinstance(comparison.comparisons[0].operator, _COMPARISONS):
                continue
            left, right = comparison.left, comparison.comparisons[0].comparator
            for array, number, array_left in ((left, right, True), (right, left, False)):
                dtype, value = dtype_of(array), int_literal(number)
                if dtype not in NARROW_INTEGERS or value is None or not flow.jax_typed(array):
                    continue
                low, high = integer_range(dtype)
                if low <= value <= high:
                    continue
                # the 32-bit mode has no int64: int32 holds 8- and 16-bit data, not always the literal
                wide = "int64" if self.config.x64 else "int32"
                if not self.config.x64 and (DTYPES[dtype][1] >= 32
                                            or not -2**31 <= value < 2**31):
                    yield self.report(comparison, requires=flow.jax_refs(array),
                                      spelled=code_of(comparison), value=value, dtype=dtype,
                                      outcome="left as it was: in the 32-bit mode no integer "
                                              "type holds both")
                    continue
                yield self.report(comparison, fix=_cast_side(array_left, jnp, wide),
                                  requires=flow.jax_refs(array), imports=[("jax.numpy", jnp)],
                                  spelled=code_of(comparison), value=value, dtype=dtype,
                                  outcome=f"rewritten to compare in {wide}, as NumPy does by value")
        for call, data, requires in self._clips():
            dtype = dtype_of(data)
            if dtype not in NARROW_INTEGERS:
                continue
            low, high = integer_range(dtype)
            position = 1 if call.args[0].value is data else 0  # np.clip(x, lo, hi), x.clip(lo, hi)
            ends, values = {}, []  # argument index -> the end of the range it passes
            for offset, keywords, end in ((0, ("a_min", "min"), low), (1, ("a_max", "max"), high)):
                arg = next((a for a in (argument_for(call, position + offset, k) for k in keywords)
                            if a is not None), None)
                value = int_literal(arg) if arg is not None else None
                if value is not None and (value < low if offset == 0 else value > high):
                    ends[next(i for i, item in enumerate(call.args) if item.value is arg)] = end
                    values.append(value)
            if not ends:
                continue
            value = values[0]

            def fix(node: cst.Call, ends=ends) -> cst.Call:
                return node.with_changes(args=[
                    item.with_changes(value=_integer(ends[i])) if i in ends else item
                    for i, item in enumerate(node.args)])

            yield self.report(call, fix=fix, requires=requires, imports=[("jax.numpy", jnp)],
                              spelled=code_of(call), value=value, dtype=dtype,
                              outcome="rewritten with the end of the range it passes, NumPy's result")

    def _clips(self):
        """(call, its data, the refs the finding requires) of np.clip and `.clip()` calls."""
        flow = self.analysis.dataflow
        for ref in self.analysis.refs:
            if ref.call is not None and ref.converted and ref.qualname == "numpy.clip" \
                    and ref.call.args and ref.call.args[0].keyword is None and not ref.call.args[0].star:
                yield ref.call, ref.call.args[0].value, (ref.node,)
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "clip" \
                    and self.analysis.ref_of_call(call) is None and flow.jax_typed(func.value):
                yield call, func.value, flow.jax_refs(func.value)


def _cast_side(left: bool, jnp: str, wide: str):
    def fix(comparison: cst.Comparison) -> cst.Comparison:
        def cast(value):
            return updates.call(updates.attr(updates.parenthesized(value), "astype"),
                                updates.attr(cst.Name(jnp), wide))
        if left:
            return comparison.with_changes(left=cast(comparison.left))
        target = comparison.comparisons[0]
        return comparison.with_changes(comparisons=[target.with_changes(comparator=cast(target.comparator))])
    return fix
