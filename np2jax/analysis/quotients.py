"""Quotients rounded to integers: where a value is rounded (floor, ceil, a cast to an
integer dtype...), and the true divisions (and the inexact functions: INEXACT_FUNCTIONS)
it is computed from.

XLA divides by a broadcast divisor (a scalar, a row of sums) by multiplying with the
divisor's reciprocal: its algebraic simplifier rewrites `A / broadcast(B)` into
`A * broadcast(1 / B)`, eagerly too (each jnp operation is compiled). About one quotient in
four is then one ulp from NumPy's, which is correctly rounded. That disappears in most
results and decides those that round: with `x = np.arange(1000) * 0.1`, `np.floor(x / 0.1)`
differs in 47 of the 1000 values, `np.floor((np.arange(n) / 44100) * 44100)` in about one in
fifteen. A divisor that is a power of two has an exact reciprocal, and a quotient whose
divisor is not broadcast (an array of the result's shape) is divided: neither differs.
"""

from __future__ import annotations

import math

import libcst as cst

from np2jax.analysis.dtypes import Dtypes, is_integer
from np2jax.analysis.facts import SCALAR
from np2jax.analysis.shapes import same_shape, static_shape
from np2jax.syntax import argument_for

# Functions that round their first argument to an integer value, or whose result jumps where
# it crosses one (a remainder, a floor division).
ROUNDING_FUNCTIONS = frozenset({
    "numpy.floor", "numpy.ceil", "numpy.trunc", "numpy.fix", "numpy.rint", "numpy.round",
    "numpy.around", "numpy.round_", "numpy.floor_divide", "numpy.mod", "numpy.remainder",
    "numpy.fmod", "numpy.divmod", "numpy.modf", "math.floor", "math.ceil", "math.trunc",
    "math.modf", "math.fmod", "builtins.int", "builtins.round"})
# numpy's integer scalar types called on a value: `np.int64(t * sr)`
INTEGER_TYPES = frozenset(f"numpy.{name}" for name in (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp", "uintp",
    "int_", "uint", "intc", "uintc", "longlong", "ulonglong", "short", "ushort", "byte",
    "ubyte", "long", "ulong"))
# Functions and methods through which a quotient's last bit reaches their result unchanged
# by anything else: IEEE arithmetic (correctly rounded in both libraries), selections and
# reshapes. `np.interp(t, t_old, a)` of sample times one ulp off lands beside a sample it met
# exactly. Not transcendental functions (np.sin, np.log: their own last bits differ between
# NumPy and XLA, which an exact quotient does not mend) nor reductions (summed in another
# order).
CARRYING_FUNCTIONS = frozenset({
    "numpy.add", "numpy.subtract", "numpy.multiply", "numpy.negative", "numpy.positive",
    "numpy.abs", "numpy.absolute", "numpy.fabs", "numpy.sqrt", "numpy.square", "numpy.clip",
    "numpy.minimum", "numpy.maximum", "numpy.fmin", "numpy.fmax", "numpy.where",
    "numpy.interp", "numpy.asarray", "numpy.array", "numpy.copy", "numpy.reshape",
    "numpy.ravel", "numpy.transpose", "numpy.squeeze", "numpy.expand_dims",
    "numpy.concatenate", "numpy.stack", "numpy.hstack", "numpy.vstack", "numpy.column_stack",
    "numpy.repeat", "numpy.tile", "numpy.broadcast_to", "numpy.take", "numpy.flip",
    "numpy.roll", "numpy.sort", "numpy.atleast_1d", "numpy.atleast_2d",
    "builtins.abs", "builtins.min", "builtins.max", "builtins.float"})
# Of those, what selects, copies or reshapes values without computing with them
SELECTING_FUNCTIONS = frozenset({
    "numpy.where", "numpy.asarray", "numpy.array", "numpy.copy", "numpy.reshape", "numpy.ravel",
    "numpy.transpose", "numpy.squeeze", "numpy.expand_dims", "numpy.concatenate",
    "numpy.stack", "numpy.hstack", "numpy.vstack", "numpy.column_stack", "numpy.repeat",
    "numpy.tile", "numpy.broadcast_to", "numpy.take", "numpy.flip", "numpy.roll",
    "numpy.sort", "numpy.atleast_1d", "numpy.atleast_2d", "builtins.min", "builtins.max",
    "builtins.float"})
CARRYING_METHODS = frozenset({
    "astype", "reshape", "ravel", "flatten", "copy", "transpose", "clip", "squeeze", "repeat",
    "take", "item", "tolist"})
CARRYING_ATTRIBUTES = frozenset({"T", "real", "flat"})
DIVIDING_FUNCTIONS = frozenset({"numpy.divide", "numpy.true_divide"})
# Functions whose XLA results are one ulp off the exact values NumPy's give at the points
# that round to integers (measured, JAX 0.10.2 on CPU): log2 at 173 of 1000 powers of two
# (log2(8) is 2.9999999999999996), log10 at 38 of 300 powers of ten, exp2 at 51 of 60
# integers, cbrt at 44 of 100 cubes. (sqrt and power are exact at those points.)
INEXACT_FUNCTIONS = frozenset({"numpy.log2", "numpy.log10", "numpy.exp2", "numpy.cbrt"})
# Reductions whose XLA result may be one ulp from NumPy's: summed in another order (NumPy adds
# pairwise in blocks, XLA in its own tree, a cumulative sum term by term), a mean divided by
# the count through its reciprocal (`jnp.mean(np.full(49, 3.0))` is 2.9999999999999996)
REDUCING_FUNCTIONS = frozenset(f"numpy.{name}" for name in (
    "sum", "nansum", "mean", "nanmean", "average", "cumsum", "nancumsum", "var", "nanvar",
    "std", "nanstd", "prod", "nanprod", "cumprod", "nancumprod"))
REDUCING_METHODS = frozenset({"sum", "mean", "cumsum", "var", "std", "prod", "cumprod"})
# what Quotients._walk collects
DIVISIONS, INEXACT, REDUCTIONS = "divisions", "inexact", "reductions"
_CARRYING_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)
# Comparisons: their answer jumps where a quotient meets the other side exactly (`t / dt < 5`
# of t = 5 * dt). Not `is`, `in`: no value is compared.
_COMPARING_OPERATORS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual,
                        cst.Equal, cst.NotEqual)
# NumPy's comparisons, and functions placing values among thresholds: (parameter, position)
# of each argument compared
COMPARING_FUNCTIONS = {
    "numpy.less": (("x1", 0), ("x2", 1)), "numpy.less_equal": (("x1", 0), ("x2", 1)),
    "numpy.greater": (("x1", 0), ("x2", 1)), "numpy.greater_equal": (("x1", 0), ("x2", 1)),
    "numpy.equal": (("x1", 0), ("x2", 1)), "numpy.not_equal": (("x1", 0), ("x2", 1)),
    "numpy.searchsorted": (("a", 0), ("v", 1)), "numpy.digitize": (("x", 0), ("bins", 1)),
}
_DEPTH = 12


class Quotients:
    """The rounded quotients of one module; reads the value analysis and the dtypes."""

    def __init__(self, flow, dtypes: Dtypes) -> None:
        self.flow = flow
        self.dtypes = dtypes

    def rounded_values(self, nodes) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
        """(where, value) for each place among `nodes` (the module's Calls and
        BinaryOperations) that rounds a value to an integer: the first argument of
        ROUNDING_FUNCTIONS and INTEGER_TYPES, `v.astype(<integer dtype>)`, `v.round()`,
        the left operand of `//` and `%`."""
        found = []
        for node in nodes:
            if isinstance(node, cst.BinaryOperation):
                if isinstance(node.operator, (cst.FloorDivide, cst.Modulo)):
                    found.append((node, node.left))
                continue
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("astype", "round") \
                    and self.flow.collector.ref_by_call.get(node) is None:
                target = argument_for(node, 0, "dtype")
                if func.attr.value == "round" or target is not None and is_integer(
                        self.dtypes.spelled(target)):
                    found.append((node, func.value))
                continue
            names = self.flow.collector.qualified_names(func)
            if names & (ROUNDING_FUNCTIONS | INTEGER_TYPES) and node.args \
                    and node.args[0].keyword is None and not node.args[0].star:
                found.append((node, node.args[0].value))
        return found

    def compared_values(self, nodes) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
        """(where, value) for each operand among `nodes` (the module's Comparisons and
        Calls) that is compared with something: both sides of `<`, `<=`, `>`, `>=`, `==`,
        `!=`, the arguments of COMPARING_FUNCTIONS (np.searchsorted's values and edges)."""
        found = []
        for node in nodes:
            if isinstance(node, cst.Comparison):
                if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator,
                                                            _COMPARING_OPERATORS):
                    left, right = node.left, node.comparisons[0].comparator
                    if not (_is_zero(left) or _is_zero(right)):  # a quotient's sign is exact
                        found.extend([(node, left), (node, right)])
                continue
            for name in self.flow.collector.qualified_names(node.func):
                for parameter, position in COMPARING_FUNCTIONS.get(name, ()):
                    value = argument_for(node, position, parameter)
                    if value is not None:
                        found.append((node, value))
        return found

    def divisions(self, value: cst.BaseExpression, arithmetic: bool = True) -> list[cst.CSTNode]:
        """The true divisions (`a / b`, `np.divide(a, b)`) whose last bit reaches `value`
        through arithmetic, CARRYING_FUNCTIONS, CARRYING_METHODS, CARRYING_ATTRIBUTES,
        subscripts, conditionals and the bindings of names, less
        those NumPy and XLA compute alike: a divisor that is a power of two, a Python
        number divided by an array. Without `arithmetic`, only the quotients `value` is,
        through what selects or reshapes (a compared value: `t / dt == k`, not a
        tolerance test `abs(x * x - v / x) < tol`)."""
        found: list = []
        self._walk(value, 0, set(), found, names=True, arithmetic=arithmetic)
        return found

    def inexact_calls(self, value: cst.BaseExpression) -> list[cst.Call]:
        """The calls of INEXACT_FUNCTIONS whose result reaches `value` as divisions(value)
        follows them (`np.floor(np.log2(n))`, `k = np.log2(n); int(k)`)."""
        found: list = []
        self._walk(value, 0, set(), found, names=True, wanted=INEXACT)
        return found

    def direct_divisions(self, value: cst.BaseExpression) -> list[cst.CSTNode]:
        """divisions(value) written inside `value` itself (no name followed)."""
        found: list = []
        self._walk(value, 0, set(), found, names=False)
        return found

    def _walk(self, node, depth: int, seen: set, found: list, names: bool,
              wanted: str = DIVISIONS, arithmetic: bool = True) -> None:
        """Collect into `found` the divisions (or, `wanted`: INEXACT, the calls of
        INEXACT_FUNCTIONS) whose last bit reaches `node`."""
        if depth > _DEPTH or id(node) in seen:
            return
        seen.add(id(node))
        parts: list = []
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _CARRYING_OPERATORS):
            if wanted == DIVISIONS and isinstance(node.operator, cst.Divide) \
                    and self._differs(node.left, node.right):
                found.append(node)
            parts = [node.left, node.right] if arithmetic else []
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            parts = [node.expression] if arithmetic else []
        elif isinstance(node, cst.Call):
            names_called = self.flow.collector.qualified_names(node.func)
            data = [a.value for a in node.args if a.keyword is None and not a.star]
            if wanted == REDUCTIONS and self._reduction(node, names_called):
                found.append(node)
            elif wanted == INEXACT and (names_called & INEXACT_FUNCTIONS or names_called & {"numpy.exp"}
                            and self._of_a_log(node)):
                found.append(node)
            elif names_called & DIVIDING_FUNCTIONS and len(data) == 2 and len(node.args) == 2:
                if wanted == DIVISIONS and self._differs(*data):
                    found.append(node)
                parts = data if arithmetic else []
            elif names_called & CARRYING_FUNCTIONS and (arithmetic or names_called & SELECTING_FUNCTIONS):
                parts = [a.value for a in node.args]
            elif isinstance(node.func, cst.Attribute) and node.func.attr.value in CARRYING_METHODS \
                    and self.flow.collector.ref_by_call.get(node) is None:
                parts = [node.func.value, *(a.value for a in node.args)]  # x.clip(0, 1)
        elif isinstance(node, cst.Attribute) and node.attr.value in CARRYING_ATTRIBUTES:
            parts = [node.value]  # x.T
        elif isinstance(node, cst.IfExp):
            parts = [node.body, node.orelse]
        elif isinstance(node, cst.Subscript):
            parts = [node.value]
        elif isinstance(node, cst.Name) and names:
            values, _ = self.flow.name_values(node)
            values = self.flow.live_bindings(node, self.flow.reaching_bindings(node, values))
            parts = [v for v, _ in values if isinstance(v, cst.BaseExpression)]
        for part in parts:
            self._walk(part, depth + 1, seen, found, names, wanted, arithmetic)

    def reduction_calls(self, value: cst.BaseExpression, arithmetic: bool = True) -> list[cst.Call]:
        """The calls of REDUCING_FUNCTIONS and REDUCING_METHODS whose result reaches `value`
        as divisions(value, arithmetic) follows them (`int(x.mean())`, `total == 1.0`)."""
        found: list = []
        self._walk(value, 0, set(), found, names=True, wanted=REDUCTIONS, arithmetic=arithmetic)
        return found

    def _reduction(self, call: cst.Call, names_called: set) -> bool:
        if names_called & REDUCING_FUNCTIONS:
            return True
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value in REDUCING_METHODS \
            and self.flow.collector.ref_by_call.get(call) is None

    def _of_a_log(self, call: cst.Call) -> bool:
        """`np.exp(np.log(n))`, `np.exp(k * np.log(b))`: an exponential undoing a logarithm,
        whose result sits on the integer it came from (XLA's is one ulp off it in 135 of
        the first 1000 integers)."""
        return any(isinstance(node, cst.Call) and self.flow.collector.qualified_names(node.func)
                   & {"numpy.log", "numpy.log2", "numpy.log10"}
                   for arg in call.args for node in _descendants(arg.value))

    def _differs(self, dividend, divisor) -> bool:
        if _power_of_two(divisor):
            return False
        def kind(node):
            if isinstance(node, (cst.Name, cst.Attribute)):
                return self.flow.kind_of(node)
            return self.flow.value_kind(node)
        if kind(divisor) == SCALAR:
            # Python's division of two numbers (a JAX 0-d array is "array"); an array's by a
            # number, which compiled code holds as a constant: XLA multiplies by its
            # reciprocal whatever the shapes (`s / 49` of a 0-d `s` under jax.jit)
            return kind(dividend) != SCALAR
        return not self._full_divisor(dividend, divisor)

    def _full_divisor(self, dividend, divisor) -> bool:
        """Whether the divisor provably has the quotient's shape (nothing broadcasts it):
        the same shape as the dividend, a known shape the dividend's broadcasts to, or any
        shape under a number."""
        if same_shape(self.flow, dividend, divisor):
            return True
        if _number(dividend) is not None:
            return True  # `1 / x`: the number is broadcast, not the divisor
        first, second = static_shape(self.flow, dividend), static_shape(self.flow, divisor)
        if first is None or second is None or len(first) > len(second):
            return False
        return all(a in (1, b) for a, b in zip(reversed(first), reversed(second)))


def _number(node) -> cst.Integer | cst.Float | None:
    """The literal of a literal number (`2.5`, `-1`: its 1), else None."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    return node if isinstance(node, (cst.Integer, cst.Float)) else None


def _is_zero(node) -> bool:
    literal = _number(node)
    return literal is not None and float(literal.evaluated_value) == 0.0


def _power_of_two(node) -> bool:
    """A literal number whose reciprocal is exact: 2, 0.5, 8.0, -4."""
    literal = _number(node)
    if literal is None:
        return False
    value = float(literal.evaluated_value)
    if not 0 < value < float("inf"):
        return False
    mantissa, _ = math.frexp(value)
    return mantissa == 0.5


def _descendants(node: cst.CSTNode):
    """The node and every node under it."""
    yield node
    for child in node.children:
        yield from _descendants(child)
