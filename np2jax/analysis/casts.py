"""Casts of float values to integer dtypes: whether the values may leave the target's range
or be NaN, and whether JAX can be made to compute NumPy's result for them.

Values inside the integer type's range are truncated towards zero by both libraries. The
others are not: XLA saturates and turns NaN into 0; NumPy's cast is C's. On x86-64 (the
processor NumPy's results are taken from) C converts to the 8- and 16-bit types and to int32
through a signed 32-bit integer, `cvttsd2si`, which gives INT32_MIN for NaN, infinities and
everything whose truncation is outside -2**31..2**31-1, and keeps the low bits: 300.7 gives
44 as uint8, -1.5 gives 255, 3e9 gives 0. `int32_wrap` is the JAX form of that (checked
against NumPy 2.x over a grid of finite, huge, infinite and NaN values, float16 to float64,
contiguous and strided, in tests/rules/test_casts.py). int64, uint32 and uint64 go another
way (through other instructions) and are not reproduced.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import DTYPES, Dtypes, integer_range, promote
from np2jax.syntax import updates

# targets whose NumPy cast `int32_wrap` reproduces
WRAPPED_TARGETS = frozenset({"uint8", "int8", "uint16", "int16", "int32"})
# what may hold NaN or an infinity when nothing in the code clips it away
_NAN_CONSTANTS = frozenset({"numpy.nan", "numpy.NaN", "numpy.NAN", "numpy.inf", "numpy.Inf",
                            "numpy.infty", "numpy.Infinity", "numpy.PINF", "numpy.NINF"})
_NAN_FUNCTIONS = frozenset({
    "numpy.sqrt", "numpy.log", "numpy.log2", "numpy.log10", "numpy.log1p", "numpy.arcsin",
    "numpy.arccos", "numpy.arccosh", "numpy.arctanh", "numpy.power", "numpy.float_power",
    "numpy.empty", "numpy.empty_like", "numpy.divide", "numpy.true_divide", "numpy.reciprocal",
    "numpy.nanmax", "numpy.nanmin", "numpy.nanmean", "numpy.genfromtxt", "numpy.loadtxt",
    "numpy.tan", "numpy.exp"})
_PURE_METHODS = frozenset({"astype", "sum", "mean", "max", "min", "reshape", "ravel", "copy",
                           "clip", "round", "cumsum", "prod", "std", "var", "T", "transpose"})
_DEPTH = 24


def is_float(dtype: str | None) -> bool:
    """A float dtype, or a Python float ("float": weak, as np.pi * 2)."""
    return dtype == "float" or dtype in DTYPES and DTYPES[dtype][0] == "f"


def is_integer_target(dtype: str | None) -> bool:
    return dtype in DTYPES and DTYPES[dtype][0] in "ui"


def int32_wrap(value: cst.BaseExpression, target: cst.BaseExpression, jnp: str,
               bits: int = 32) -> cst.BaseExpression:
    """`jnp.where(jnp.abs(v) < 2.0 ** 31, jnp.asarray(v, dtype=jnp.int32), -2 ** 31)
    .astype(target)`: NumPy's x86-64 cast of float values `v` to an 8-, 16- or 32-bit integer
    dtype `target` (an expression: `img.dtype`, `jnp.uint8`); with bits=64 its cast to int64
    (`2.0 ** 63`, `jnp.int64`, no `.astype`). Only in-range values reach XLA's
    float-to-integer conversion; the integer narrowing wraps on every backend. `value` is
    written twice: the caller makes sure reading it twice is reading it once (is_pure)."""
    value = value.with_changes(lpar=[], rpar=[])  # an argument needs no parentheses
    data = updates.jnp_call(jnp, "asarray", value) if isinstance(value, (cst.List, cst.Tuple)) \
        else value  # `h[1:] = [2.5, -3.9]`: jnp.abs takes no list
    power = cst.BinaryOperation(cst.Float("2.0"), cst.Power(), cst.Integer(str(bits - 1)))
    inside = cst.Comparison(updates.jnp_call(jnp, "abs", data), [cst.ComparisonTarget(
        cst.LessThan(), power)])
    truncated = updates.jnp_call(jnp, "asarray", value,
                                 dtype=cst.Attribute(cst.Name(jnp), cst.Name(f"int{bits}")))
    minimum = cst.UnaryOperation(cst.Minus(), cst.BinaryOperation(
        cst.Integer("2"), cst.Power(), cst.Integer(str(bits - 1))))
    where = updates.jnp_call(jnp, "where", inside, truncated, minimum)
    return where if bits == 64 else updates.call(updates.attr(where, "astype"), target)


class Casts:
    """The cast facts of one module; reads the value analysis and the dtypes."""

    def __init__(self, flow, dtypes: Dtypes, under_errstate) -> None:
        self.flow = flow
        self.dtypes = dtypes
        self.under_errstate = under_errstate

    # -- what the data may hold ------------------------------------------------------------

    def float_source(self, node: cst.BaseExpression) -> str | None:
        """The float dtype of the values `node` may hold, where the code shows that some may
        be float: its dtype, else the float dtype of any binding of a name or branch of a
        conditional (`y = a if c else b`, `if c: y = a ... else: y = b`) that is float.
        None when none shows float values."""
        found = self._possible(node, 0, set())
        strong = [d for d in found if d != "float" and is_float(d)]
        if strong:
            return max(strong, key=lambda d: DTYPES[d][1])
        return "float" if "float" in found else None

    def _possible(self, node, depth: int, seen: set) -> set:
        dtype = self.dtypes.dtype_of(node)
        if dtype is not None or depth > _DEPTH or id(node) in seen:
            return {dtype} if dtype is not None else set()
        seen.add(id(node))
        if isinstance(node, cst.IfExp):
            return self._possible(node.body, depth + 1, seen) | self._possible(node.orelse, depth + 1, seen)
        if isinstance(node, cst.Name):
            found: set = set()
            for value in self._bound_values(node):
                found |= self._possible(value, depth + 1, seen)
            return found
        if isinstance(node, cst.BinaryOperation):
            left = self._possible(node.left, depth + 1, seen)
            right = self._possible(node.right, depth + 1, seen)
            if isinstance(node.operator, cst.Divide) and (left or right):
                return {"float64"} | {d for d in left | right if is_float(d)}
            return {promote(a, b) for a in left for b in right} - {None}
        if isinstance(node, cst.Subscript):
            return self._possible(node.value, depth + 1, seen)
        return set()

    def _bound_values(self, name: cst.Name) -> list:
        values, aug_values = self.flow.name_values(name)
        bound = []
        for value, statement in [*values, *((v, None) for v in aug_values)]:
            if value == "param":
                bound.extend(self.flow.passed_arguments(statement) or ())
            elif isinstance(value, cst.CSTNode):
                bound.append(value)
        return bound

    def jax_refs(self, node: cst.BaseExpression) -> tuple | None:
        """The converted references that make `node` a JAX array once converted
        (Dataflow.jax_refs), or None when it is not one. A name is one too when any of its
        bindings is (`c = x * 90.0`, `if ...: c = np.arange(3)`, `c = c.astype(np.uint8)`:
        the value analysis, flow-insensitive, cannot type the cycle)."""
        if self.flow.jax_typed(node):
            return self.flow.jax_refs(node)
        if isinstance(node, cst.Name):
            for value in self._bound_values(node):
                if self.flow.jax_typed(value):
                    return self.flow.jax_refs(value)
        return None

    def may_be_nan(self, node: cst.CSTNode, depth: int = 0, seen: set | None = None) -> bool:
        """Whether the values of `node` may be NaN or infinite, as the code shows: NaN or
        infinity constants (`np.nan`, `float("inf")`), functions that give them outside
        their domain (`np.sqrt`, `np.log`, `np.arcsin`, division by `np.divide`,
        `np.power`), `np.empty`, anywhere in what computes them, names followed through
        every binding."""
        seen = set() if seen is None else seen
        if depth > _DEPTH or id(node) in seen:
            return False
        seen.add(id(node))
        collector = self.flow.collector
        ref = collector.ref_by_node.get(node)
        if ref is not None and ref.qualname in _NAN_CONSTANTS:
            return True
        if isinstance(node, cst.Call):
            called = collector.ref_by_call.get(node)
            if called is not None and called.qualname in _NAN_FUNCTIONS:
                return True
            if isinstance(node.func, cst.Name) and node.func.value == "float" and node.args \
                    and isinstance(node.args[0].value, cst.SimpleString) \
                    and node.args[0].value.evaluated_value.strip().lstrip("+-").lower() in (
                        "nan", "inf", "infinity"):
                return True
        if isinstance(node, cst.Name):
            return any(self.may_be_nan(v, depth + 1, seen) for v in self._bound_values(node))
        return any(self.may_be_nan(child, depth + 1, seen) for child in node.children
                   if isinstance(child, cst.CSTNode))

    def bound(self, node: cst.BaseExpression) -> float | None:
        """A bound on the magnitude of the values, where the expression shows one: literals,
        sin/cos/tanh, zeros/ones, and their sums and products; else None."""
        if isinstance(node, (cst.Integer, cst.Float)):
            return abs(float(node.evaluated_value))
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            return self.bound(node.expression)
        if isinstance(node, cst.BinaryOperation) and isinstance(
                node.operator, (cst.Add, cst.Subtract, cst.Multiply)):
            left, right = self.bound(node.left), self.bound(node.right)
            if left is None or right is None:
                return None
            return left * right if isinstance(node.operator, cst.Multiply) else left + right
        if isinstance(node, cst.Call):
            ref = self.flow.collector.ref_by_call.get(node)
            name = ref.qualname if ref is not None else None
            if name in ("numpy.sin", "numpy.cos", "numpy.tanh"):
                return 1.0
            if name in ("numpy.zeros", "numpy.zeros_like", "numpy.ones", "numpy.ones_like"):
                return 0.0 if "zeros" in name else 1.0
        return None

    def clipped(self, data: cst.BaseExpression) -> bool:
        """`np.clip(x, 0, 255)` or `x.clip(0, 255)`: the values are in range (the fix the
        message suggests); whether the bounds fit the type is the user's."""
        if not isinstance(data, cst.Call):
            return False
        ref = self.flow.collector.ref_by_call.get(data)
        if ref is not None:
            return ref.qualname == "numpy.clip"
        return isinstance(data.func, cst.Attribute) and data.func.attr.value == "clip"

    # -- the predicate -----------------------------------------------------------------------

    def may_leave_range(self, at: cst.CSTNode, data: cst.BaseExpression | None,
                        source: str | None, target: str | None,
                        operand: cst.BaseExpression | None = None) -> bool:
        """Whether a cast at `at` of float values `data` (of dtype `source`; None when no
        expression bounds them, as the `a + v` an `a[i] += v` stores, whose `v` is
        `operand`) to the integer dtype `target` may meet values outside the target's range,
        or NaN: then NumPy and JAX give other integers. A 64-bit target is suspected only
        where NaN or infinities may occur (`np.nan` or a function that makes them in what
        computes the data or the operand, or the cast runs under `np.errstate(...)`):
        `np.floor(x).astype(int)` is everywhere, and fine."""
        if not (is_float(source) and is_integer_target(target)):
            return False
        if data is not None and (self.clipped(data) or _literal_within(data, *integer_range(target))):
            return False
        low, high = integer_range(target)
        bound = self.bound(data) if data is not None else None
        if bound is not None and (bound == 0 or low < 0 and bound < high):
            return False  # every value fits: `np.zeros_like(x)`, `12000 * np.sin(t)` to int16
        if DTYPES[target][1] < 64:
            return True
        shown = data if data is not None else operand
        return self.under_errstate(at) or shown is not None and self.may_be_nan(shown)

    # -- NumPy's result in JAX -----------------------------------------------------------

    def wraps_exactly(self, source: str | None, target: str | None, value: cst.BaseExpression,
                      int64: bool = False) -> bool:
        """Whether `int32_wrap` computes NumPy's cast of `value` (of dtype `source`) to
        `target`: a NumPy float dtype (a Python float stored into an integer array makes
        NumPy raise, not wrap), a target it reproduces (int64 too with `int64`, its bits=64
        form, which needs JAX's 64-bit types), and a value that can be read twice."""
        return source in DTYPES and is_float(source) and (
            target in WRAPPED_TARGETS or int64 and target == "int64") and self.is_pure(value)

    def is_pure(self, node: cst.CSTNode, depth: int = 0) -> bool:
        """Whether evaluating `node` twice gives the same values and does nothing else:
        names, numbers, attributes, subscripts, arithmetic, and calls of NumPy functions
        (not np.random) or of array methods that only compute."""
        if depth > _DEPTH:
            return False
        if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
            return True
        if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.Attribute,
                             cst.Subscript, cst.SubscriptElement, cst.Index, cst.Slice,
                             cst.ComparisonTarget, cst.Arg, cst.Tuple, cst.List, cst.Element)):
            return all(self.is_pure(child, depth + 1) for child in _operands(node))
        if isinstance(node, cst.Call):
            ref = self.flow.collector.ref_by_call.get(node)
            if ref is not None:
                pure = ref.qualname.startswith("numpy.") and not ref.qualname.startswith("numpy.random")
            else:
                pure = isinstance(node.func, cst.Attribute) and node.func.attr.value in _PURE_METHODS \
                    and self.is_pure(node.func.value, depth + 1)
            return pure and all(self.is_pure(a.value, depth + 1) for a in node.args)
        return False


def _operands(node: cst.CSTNode) -> list:
    """The expressions under a node, leaving out operators, whitespace and attribute names."""
    if isinstance(node, cst.Attribute):
        return [node.value]
    return [child for child in node.children if isinstance(child, (
        cst.BaseExpression, cst.SubscriptElement, cst.BaseSlice, cst.ComparisonTarget, cst.Arg,
        cst.BaseElement))]


def _literal_within(node: cst.BaseExpression, low: int, high: int) -> bool:
    """A number written in the code (`0.5`, `-3.0`) that the integer type holds."""
    sign = 1
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node, sign = node.expression, -1
    return isinstance(node, (cst.Integer, cst.Float)) and low <= sign * node.evaluated_value <= high
