"""NJ416 rounded-reduction.

A float sum, mean or product rounded to an integer, compared where it may land exactly on
the other side, or written out with all its digits: XLA adds in another order than NumPy and
divides a mean through the count's reciprocal, so its last digit can differ.
"""

from __future__ import annotations

import math

import libcst as cst

from np2jax.analysis.dtypes import is_integer
from np2jax.analysis.quotients import COMPARING_FUNCTIONS
from np2jax.analysis.shapes import static_shape
from np2jax.rules._digits import shown_values
from np2jax.rules.base import Rule
from np2jax.syntax import argument_for, code_of
from np2jax.syntax.walk import names_in

ROUNDED = "is rounded to an integer by `{}`"
COMPARED = "is compared for equality by `{}`"
ORDERED = "is compared by `{}` with a value it may land on exactly"
SHOWN = "is written out with all its digits by `{}`"
_EQUALITY = (cst.Equal, cst.NotEqual)
_EQUALITY_FUNCTIONS = frozenset({"numpy.equal", "numpy.not_equal"})
# A literal this small on the other side of `<` is a tolerance (`err.sum() < 1e-6`), which a
# reduction does not land on; a threshold (`acc > 0.3`, `total >= 100`) it can.
TOLERANCE_BELOW = 1e-3


class RoundedReduction(Rule):
    code = "NJ416"

    def run(self):
        """A reduction of float data (quotients.REDUCING_FUNCTIONS, REDUCING_METHODS) that is
        JAX's once converted and whose result is rounded to an integer (the places and the
        paths of analysis.quotients: `int(x.mean())`, `np.cumsum(dt).astype(int)`) or
        compared with `==`/`!=` as it is (`total == 1.0`), ordered against a value it may land
        on (`acc > 0.3`, `x >= x.mean()`; not a tolerance test `err.sum() < 1e-6`), or
        written out with all its digits (`f"{m}"`, `json.dumps`). Reported once a reduction;
        no fix (no JAX reduction adds in NumPy's order). Not integer data (its sums are
        exact)."""
        quotients = self.analysis.quotients
        calls = self.analysis.nodes(cst.Call)
        done: set = set()
        for where, value in quotients.rounded_values([*calls, *self.analysis.nodes(cst.BinaryOperation)]):
            yield from self._reports(quotients.reduction_calls(value), ROUNDED.format(code_of(where)), done)
        for where, value in quotients.compared_values([*self.analysis.nodes(cst.Comparison), *calls]):
            if self._equality(where):
                yield from self._reports(quotients.reduction_calls(value, arithmetic=False),
                                         COMPARED.format(code_of(where)), done)
                continue
            other = self._other_side(where, value)
            if other is None:
                continue
            reductions = [call for call in quotients.reduction_calls(value, arithmetic=False)
                          if self._may_land_on(other, call)]
            yield from self._reports(reductions, ORDERED.format(code_of(where)), done)
        for where, value in shown_values(self.analysis):
            yield from self._reports(quotients.reduction_calls(value), SHOWN.format(code_of(where)), done)

    def _equality(self, where) -> bool:
        if isinstance(where, cst.Comparison):
            return isinstance(where.comparisons[0].operator, _EQUALITY)
        return bool(self.analysis.dataflow.collector.qualified_names(where.func) & _EQUALITY_FUNCTIONS)

    def _other_side(self, where, value) -> cst.BaseExpression | None:
        """What `value` is compared with at `where`: the other operand of `<`, or the other
        argument of np.greater/np.searchsorted..."""
        if isinstance(where, cst.Comparison):
            left, right = where.left, where.comparisons[0].comparator
            return right if value is left else left
        for name in self.analysis.qualified_names(where.func):
            for parameter, position in COMPARING_FUNCTIONS.get(name, ()):
                argument = argument_for(where, position, parameter)
                if argument is not None and argument is not value:
                    return argument
        return None

    def _may_land_on(self, other, reduction: cst.Call) -> bool:
        """Whether a reduction compared with `other` may meet it exactly: `other` is a
        threshold the code writes (a literal, or a name bound only to literals, not a
        tolerance below TOLERANCE_BELOW), or reads the data reduced (`x > x.mean()`: an
        element equal to the mean is above it by an ulp in one library and not the other)."""
        number = self._literal(other)
        if number is not None:
            return abs(number) >= TOLERANCE_BELOW
        data = self._data(reduction)
        return data is not None and bool(names_in(other) & names_in(data))

    def _data(self, call: cst.Call) -> cst.BaseExpression | None:
        """What a reduction reduces: the first argument of `np.sum(x)`, the receiver of
        `x.sum()`."""
        if self.analysis.ref_of_call(call) is not None:
            return call.args[0].value if call.args and not call.args[0].star else None
        return call.func.value if isinstance(call.func, cst.Attribute) else None

    def _literal(self, node, depth: int = 0) -> float | None:
        """The number a literal (`0.3`, `-1`) or a name bound only to one literal spells."""
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            number = self._literal(node.expression, depth)
            return None if number is None else -number
        if isinstance(node, (cst.Integer, cst.Float)):
            return float(node.evaluated_value)
        if isinstance(node, cst.Name) and depth < 4:
            values, augmented = self.analysis.dataflow.name_values(node)
            numbers = [self._literal(v, depth + 1) if isinstance(v, cst.CSTNode) else None
                       for v, _ in values]
            if values and not augmented and None not in numbers and len(set(numbers)) == 1:
                return numbers[0]
        return None

    def _reports(self, reductions, context: str, done: set):
        flow, dtype_of = self.analysis.dataflow, self.analysis.dtypes.dtype_of
        for call in reductions:
            if call in done:
                continue
            ref = self.analysis.ref_of_call(call)
            data = self._data(call)
            if ref is not None:
                if not ref.converted:
                    continue
                requires = (ref.node,)
            else:  # x.sum(): JAX's method where x is a JAX array once converted
                if not flow.jax_typed(data):
                    continue
                requires = flow.jax_refs(data)
            dtype = dtype_of(data) if data is not None else None
            if dtype is not None and (is_integer(dtype) or dtype == "bool") \
                    and not _averages(call):
                continue  # integer sums and products are exact (a mean of integers is not)
            if self._few_in_order(call, data):
                continue
            done.add(call)
            yield self.report(call, requires=requires, reduction=code_of(call), context=context)


    def _few_in_order(self, call: cst.Call, data) -> bool:
        """A whole sum or product (no axis) of fewer than 8 elements the code shows (`np.zeros(4)
        * 2`): NumPy adds them one after the other, and so does XLA (measured: 0 of 300
        sums of 2 to 7 random float64 values differ; along an axis they do differ)."""
        options = call.args[1:] if self.analysis.ref_of_call(call) is not None else call.args
        if _averages(call) or any(a.keyword is None or a.keyword.value == "axis" for a in options):
            return False
        shape = static_shape(self.analysis.dataflow, data) if data is not None else None
        return shape is not None and all(isinstance(n, int) for n in shape) and math.prod(shape) < 8


def _averages(call: cst.Call) -> bool:
    """mean/average/var/std: a float result even of integer data."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
    return name in ("mean", "nanmean", "average", "var", "nanvar", "std", "nanstd")

