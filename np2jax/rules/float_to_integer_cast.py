"""NJ403 float-to-integer-cast.

A cast of float values to an integer dtype, whose out-of-range values and NaN JAX converts
otherwise than NumPy.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import DTYPES
from np2jax.rules.base import Rule
from np2jax.syntax import argument_for, code_of

# Functions whose dtype= casts their data: np.array(x, dtype=np.uint8).
CASTING_CONSTRUCTORS = frozenset({"numpy.array", "numpy.asarray", "numpy.asanyarray"})


def _is_integer(dtype: str | None) -> bool:
    return dtype in DTYPES and DTYPES[dtype][0] in "ui"


def _narrow(dtype: str) -> bool:
    return DTYPES[dtype][1] < 64


def _is_float(dtype: str | None) -> bool:
    """A float dtype, or a Python float ("float": weak, as np.pi * 2)."""
    return dtype == "float" or dtype in DTYPES and DTYPES[dtype][0] == "f"


class FloatToIntegerCast(Rule):
    code = "NJ403"

    def run(self):
        """Float data cast to an integer dtype where the data is a JAX array once converted
        (the finding stands only if that conversion happened): `x.astype(np.uint8)`,
        `np.asarray(x, dtype=np.int16)`, `np.int16(x)`. Values in range agree; the others do
        not. A 64-bit target is reported only under `np.errstate(...)`, which says that NaN
        and infinities are expected: `np.floor(x).astype(int)` is everywhere, and fine."""
        dtypes = self.analysis.dtypes
        flow = self.analysis.dataflow
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "astype"):
                continue
            target = argument_for(call, 0, "dtype")
            target_dtype = dtypes.spelled(target) if target is not None else None
            source = dtypes.dtype_of(func.value)
            if self._suspect(call, func.value, source, target_dtype) and flow.jax_typed(func.value):
                yield self._report(call, f"{code_of(func.value)}.astype(...)", source, target_dtype,
                                   flow.jax_refs(func.value))
        for ref in self.analysis.refs:
            if ref.call is None or not ref.converted or not ref.call.args:
                continue
            data = ref.call.args[0]
            if data.keyword is not None or data.star:
                continue
            if ref.qualname in CASTING_CONSTRUCTORS:
                target = argument_for(ref.call, 1, "dtype")
                target_dtype = dtypes.spelled(target) if target is not None else None
            else:  # np.uint8(x): the scalar type called as a function
                target_dtype = dtypes.spelled(ref.node)
            source = dtypes.dtype_of(data.value)
            if self._suspect(ref.call, data.value, source, target_dtype):
                yield self._report(ref.call, code_of(ref.node), source, target_dtype, (ref.node,))

        for node, array, value, combined in self._writes():
            source, target_dtype = dtypes.dtype_of(value), dtypes.dtype_of(array)
            data = None if combined else value  # `a[i] += v` stores a + v: no bound on it
            if self._suspect(node, data, source, target_dtype) and flow.jax_typed(array):
                yield self._report(node, code_of(node).strip().splitlines()[0], source,
                                   target_dtype, flow.jax_refs(array))

    def _writes(self):
        """(node, array, value, combined) for each write of a value into an array element:
        `a[i] = v`, `a[i] += v` and `np.add.at(a, i, v)` (combined: the array's own value is
        computed with `v` before the cast back to the array's dtype)."""
        for statement in self.analysis.nodes(cst.Assign):
            for target in statement.targets:
                if isinstance(target.target, cst.Subscript):
                    yield statement, target.target.value, statement.value, False
        for statement in self.analysis.nodes(cst.AugAssign):
            if isinstance(statement.target, cst.Subscript):
                yield statement, statement.target.value, statement.value, True
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "at" \
                    and self.analysis.names_numpy(func.value) and len(call.args) >= 3 \
                    and not any(a.star or a.keyword for a in call.args[:3]):
                yield call, call.args[0].value, call.args[2].value, True

    def _suspect(self, call: cst.CSTNode, data: cst.BaseExpression | None, source: str | None,
                 target: str | None) -> bool:
        if not (_is_float(source) and _is_integer(target)) or data is not None and self._clipped(data):
            return False
        if data is not None and _literal_within(data, *_range(target)):
            return False
        low, high = _range(target)
        bound = self._bound(data) if data is not None else None
        if bound is not None and (bound == 0 or low < 0 and bound < high):
            return False  # every value fits: `np.zeros_like(x)`, `12000 * np.sin(t)` to int16
        return _narrow(target) or self.analysis.under_errstate(call)

    def _bound(self, node: cst.BaseExpression) -> float | None:
        """A bound on the magnitude of the values, where the expression shows one: literals,
        sin/cos/tanh, zeros/ones, and their sums and products; else None."""
        if isinstance(node, (cst.Integer, cst.Float)):
            return abs(float(node.evaluated_value))
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            return self._bound(node.expression)
        if isinstance(node, cst.BinaryOperation) and isinstance(
                node.operator, (cst.Add, cst.Subtract, cst.Multiply)):
            left, right = self._bound(node.left), self._bound(node.right)
            if left is None or right is None:
                return None
            return left * right if isinstance(node.operator, cst.Multiply) else left + right
        if isinstance(node, cst.Call):
            ref = self.analysis.ref_of_call(node)
            name = ref.qualname if ref is not None else None
            if name in ("numpy.sin", "numpy.cos", "numpy.tanh"):
                return 1.0
            if name in ("numpy.zeros", "numpy.zeros_like", "numpy.ones", "numpy.ones_like"):
                return 0.0 if "zeros" in name else 1.0
        return None

    def _clipped(self, data: cst.BaseExpression) -> bool:
        """`np.clip(x, 0, 255)` or `x.clip(0, 255)`: the values are in range (the fix the
        message suggests); whether the bounds fit the type is the user's."""
        if not isinstance(data, cst.Call):
            return False
        ref = self.analysis.ref_of_call(data)
        if ref is not None:
            return ref.qualname == "numpy.clip"
        return isinstance(data.func, cst.Attribute) and data.func.attr.value == "clip"

    def _report(self, node, spelled: str, source: str, target: str, requires):
        return self.report(node, requires=requires, spelled=spelled, dtype=source, target=target,
                           low=str(_range(target)[0]), high=str(_range(target)[1]))


def _literal_within(node: cst.BaseExpression, low: int, high: int) -> bool:
    """A number written in the code (`0.5`, `-3.0`) that the integer type holds."""
    sign = 1
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node, sign = node.expression, -1
    return isinstance(node, (cst.Integer, cst.Float)) and low <= sign * node.evaluated_value <= high


def _range(dtype: str) -> tuple[int, int]:
    kind, bits = DTYPES[dtype]
    return (0, 2**bits - 1) if kind == "u" else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
