"""NJ419 python-int-past-int64.

A Python int that may lie outside int64 (`math.factorial(n)`, `math.comb`, a literal of
2**63 or more, a running product) in arithmetic with a float JAX array: NumPy converts it
to the array's float, JAX raises OverflowError parsing it; rewritten as `float(v)`.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import DTYPES
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates

# the operators whose Python int operand NumPy converts to a float array's dtype
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo,
               cst.Power)
_AUGMENTED = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign,
              cst.FloorDivideAssign, cst.ModuloAssign, cst.PowerAssign)
FLOAT = "rewritten to `float({int})`, the float64 NumPy converts it to"
UNKNOWN_DTYPE = ("left as it is: NumPy converts it to a float array's dtype (and raises "
                 "OverflowError beside an integer array); where `{array}` is float, give "
                 "`float({int})`")


def _float(node: cst.BaseExpression) -> cst.Call:
    return updates.call(cst.Name("float"), node.with_changes(lpar=[], rpar=[]))


class PythonIntPastInt64(Rule):
    code = "NJ419"

    def run(self):
        """Each arithmetic operation (and augmented assignment) of a value that is a JAX
        array once converted with a Python int that may pass int64 (ranges.may_pass_int64):
        beside a float or complex array, or divided by (`/`: a float quotient whatever the
        array), the int becomes `float(v)`, the value NumPy 2 converts it to (a weak Python float keeps the array's dtype in JAX as a Python int
        does in NumPy); beside an array of unknown dtype, reported; beside an integer
        array, left: NumPy raises OverflowError too."""
        for node in self.analysis.nodes(cst.BinaryOperation):
            if isinstance(node.operator, _ARITHMETIC):
                for big, array, side in ((node.right, node.left, "right"), (node.left, node.right, "left")):
                    found = self._judge(node, big, array, side)
                    if found is not None:
                        yield found
                        break
        for node in self.analysis.nodes(cst.AugAssign):
            if isinstance(node.operator, _AUGMENTED):
                found = self._judge(node, node.value, node.target, "value")
                if found is not None:
                    yield found

    def _judge(self, node, big, array, side):
        analysis, flow = self.analysis, self.analysis.dataflow
        if analysis.dtypes.dtype_of(big) not in ("int", None) or not analysis.ranges.may_pass_int64(big):
            return None
        if not flow.jax_typed(array):
            maybe = flow.may_be_jax(array)  # `w * o ** n`, w an item of a solve's result
            if not maybe or isinstance(array, (cst.BinaryOperation, cst.UnaryOperation)):
                return None
            fields = dict(int=code_of(big), array=code_of(array))
            return self.report(big, requires=maybe, outcome=UNKNOWN_DTYPE.format(**fields), **fields)
        # a true division is float whatever the array's dtype: float(v) gives NumPy's quotient
        divides = isinstance(getattr(node, "operator", None), (cst.Divide, cst.DivideAssign))
        kind = "f" if divides else self._kind(array)
        if kind in ("b", "u", "i"):
            return None  # NumPy raises OverflowError as JAX does
        fields = dict(int=code_of(big), array=code_of(array))
        if kind not in ("f", "c"):
            return self.report(big, requires=flow.jax_refs(array),
                               outcome=UNKNOWN_DTYPE.format(**fields), **fields)

        def fix(operation, side=side):
            return operation.with_changes(**{side: _float(getattr(operation, side))})
        return self.report(node, fix=fix, requires=flow.jax_refs(array),
                           outcome=FLOAT.format(**fields), **fields)

    def _kind(self, value, depth: int = 0) -> str | None:
        """The dtype kind of `value` ("f", "c", "i", "u", "b"), or None: also of arithmetic
        one of whose operands is float or complex (`x ** k` of a float `x` and a loop
        counter: float whatever `k` is)."""
        dtype = self.analysis.dtypes.dtype_of(value)
        if dtype in DTYPES:
            return DTYPES[dtype][0]
        if dtype in ("float", "int", "complex"):
            return {"float": "f", "int": "i", "complex": "c"}[dtype]
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, _ARITHMETIC) \
                and depth < 4:
            kinds = {self._kind(side, depth + 1) for side in (value.left, value.right)}
            return "c" if "c" in kinds else "f" if "f" in kinds else None
        return None
