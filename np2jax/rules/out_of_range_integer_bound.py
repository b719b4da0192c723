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
        dtype_of = self.analysis.dtypes.dtype_of
        for comparison in self.analysis.nodes(cst.Comparison):
            yield from self._comparison(comparison, jnp)
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
                if value is None or low <= value <= high:
                    continue
                index = next(i for i, item in enumerate(call.args) if item.value is arg)
                if value < low if offset == 0 else value > high:
                    ends[index] = _integer(end)  # past its own side: the end clips alike
                else:  # `np.clip(x, 260, 300)` of uint8: NumPy 2 raises OverflowError
                    ends[index] = cst.parse_expression(f"{jnp}.asarray({value}, dtype={jnp}.{dtype})")
                values.append(value)
            if not ends:
                continue
            value = values[0]

            def fix(node: cst.Call, ends=ends) -> cst.Call:
                return node.with_changes(args=[
                    item.with_changes(value=ends[i]) if i in ends else item
                    for i, item in enumerate(node.args)])

            yield self.report(call, fix=fix, requires=requires, imports=[("jax.numpy", jnp)],
                              spelled=code_of(call), value=value, dtype=dtype,
                              outcome="rewritten with the end of the range it passes, NumPy's "
                                      "result (or, past the other end, to raise as NumPy does)")

    def _comparison(self, comparison: cst.Comparison, jnp: str):
        """Each operand of a (chained) comparison that is narrow integer data beside an
        integer literal its dtype cannot hold (`0 <= a[0] < 300`) is cast to a type that
        holds both."""
        flow = self.analysis.dataflow
        dtype_of = self.analysis.dtypes.dtype_of
        operands = [comparison.left, *(t.comparator for t in comparison.comparisons)]
        cast, found = set(), None  # operand indices to widen; (dtype, value) for the message
        for index, target in enumerate(comparison.comparisons):
            if not isinstance(target.operator, _COMPARISONS):
                continue
            for array, number in ((index, index + 1), (index + 1, index)):
                dtype, value = dtype_of(operands[array]), int_literal(operands[number])
                if dtype not in NARROW_INTEGERS or value is None \
                        or not flow.jax_typed(operands[array]):
                    continue
                low, high = integer_range(dtype)
                if not low <= value <= high:
                    cast.add(array)
                    found = found or (dtype, value)
        if not cast:
            return
        dtype, value = found
        requires = tuple(r for i in sorted(cast) for r in flow.jax_refs(operands[i]))
        # the 32-bit mode has no int64: int32 holds 8- and 16-bit data, not always the literal
        wide = "int64" if self.config.x64 else "int32"
        literals = [v for v in map(int_literal, operands) if v is not None]
        if not self.config.x64 and (any(DTYPES[dtype_of(operands[i])][1] >= 32 for i in cast)
                                    or any(not -2**31 <= v < 2**31 for v in literals)):
            yield self.report(comparison, requires=requires, spelled=code_of(comparison),
                              value=value, dtype=dtype,
                              outcome="left as it was: in the 32-bit mode no integer type holds both")
            return
        yield self.report(comparison, fix=_cast_operands(cast, jnp, wide), requires=requires,
                          imports=[("jax.numpy", jnp)], spelled=code_of(comparison), value=value,
                          dtype=dtype, outcome=f"rewritten to compare in {wide}, as NumPy does by value")

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


def _cast_operands(indices: set, jnp: str, wide: str):
    """`a.astype(jnp.int64)` for each operand of the comparison at `indices` (0: the left)."""
    def fix(comparison: cst.Comparison) -> cst.Comparison:
        def cast(value):
            return updates.call(updates.attr(updates.parenthesized(value), "astype"),
                                updates.attr(cst.Name(jnp), wide))
        left = cast(comparison.left) if 0 in indices else comparison.left
        targets = [t.with_changes(comparator=cast(t.comparator)) if i + 1 in indices else t
                   for i, t in enumerate(comparison.comparisons)]
        return comparison.with_changes(left=left, comparisons=targets)
    return fix
