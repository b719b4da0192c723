"""The NumPy dtype of a value, where the code shows it.

`dtype_of(expr)` answers with a NumPy dtype name ("int64", "uint8", "float32", "bool", ...),
with "int" or "float" for a Python number (weak: it takes the array's dtype, NEP 50), or
None when the code does not say (a parameter, another library's result, bindings that
disagree). It follows what NumPy does, not JAX: constructors and their `dtype=`, `astype`,
arithmetic by NumPy's promotion, reductions, comparisons. Nothing here imports NumPy (the
check path never loads it): the promotion table below is NumPy's for the dtypes named.
"""

from __future__ import annotations

import libcst as cst

from np2jax.syntax import code_of, integer_index, single_index, unpacked_position

# name -> (kind, bits); kinds: b bool, u unsigned, i signed, f float, c complex
DTYPES = {
    "bool": ("b", 8), "uint8": ("u", 8), "uint16": ("u", 16), "uint32": ("u", 32),
    "uint64": ("u", 64), "int8": ("i", 8), "int16": ("i", 16), "int32": ("i", 32),
    "int64": ("i", 64), "float16": ("f", 16), "float32": ("f", 32), "float64": ("f", 64),
    "complex64": ("c", 64), "complex128": ("c", 128),
}
_BY_KIND = {(kind, bits): name for name, (kind, bits) in DTYPES.items()}
_WEAK = ("int", "float", "complex")  # Python numbers, least to most general
# how code spells a dtype: numpy attributes, builtins, strings
SPELLINGS = {
    **{name: name for name in DTYPES}, "bool_": "bool", "float_": "float64", "double": "float64",
    "single": "float32", "half": "float16", "int_": "int64", "intp": "int64", "uint": "uint64",
    "longlong": "int64", "ulonglong": "uint64", "short": "int16", "ushort": "uint16",
    "intc": "int32", "uintc": "uint32", "byte": "int8", "ubyte": "uint8", "cdouble": "complex128",
    "complex_": "complex128", "csingle": "complex64",
    "f8": "float64", "f4": "float32", "f2": "float16", "i8": "int64", "i4": "int32",
    "i2": "int16", "i1": "int8", "u8": "uint64", "u4": "uint32", "u2": "uint16", "u1": "uint8",
    "c16": "complex128", "c8": "complex64", "d": "float64", "f": "float32", "b": "int8",
    "B": "uint8", "?": "bool",
}
BUILTIN_TYPES = {"int": "int64", "float": "float64", "complex": "complex128", "bool": "bool"}

_FILLED = {"zeros", "ones", "empty", "identity", "eye", "tri"}  # float64 unless dtype=
_FLOAT_MAKERS = {"linspace", "logspace", "geomspace", "mean", "average", "std", "var", "median",
                 "sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "arcsin", "arccos",
                 "arctan", "arctan2", "hypot", "tanh", "sinh", "cosh", "expm1", "log1p",
                 "true_divide", "divide", "nanmean", "nanstd", "nanvar", "interp", "trapezoid"}
_SAME_AS_FIRST = {"abs", "absolute", "negative", "sort", "flip", "roll", "nan_to_num", "transpose", "reshape",
                  "ravel", "squeeze", "copy", "clip", "max", "min", "amax", "amin", "ptp",
                  "maximum", "minimum", "diff", "concatenate", "stack", "vstack", "hstack",
                  "tile", "repeat", "where", "cummax", "unique", "take", "diag", "triu", "tril",
                  "pad", "atleast_1d", "atleast_2d", "asarray", "array", "ascontiguousarray"}
# functions joining a sequence of arrays into one, in their promoted dtype
_JOINS = {"concatenate", "stack", "vstack", "hstack", "dstack", "column_stack", "row_stack"}
_FLOAT_CONSTANTS = {"numpy.pi", "numpy.e", "numpy.inf", "numpy.nan", "numpy.euler_gamma"}
_ACCUMULATE = {"sum", "prod", "cumsum", "cumprod", "nansum", "nanprod", "trace"}
_COMPARISONS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual,
                cst.Equal, cst.NotEqual)
_DEPTH = 24

# What NumPy computes in a wider type than JAX for bool and int8-int32 data (64-bit JAX), and
# NJ402 narrow-integer-promotion rewrites to NumPy's dtype:
NARROW = frozenset(name for name, (kind, bits) in DTYPES.items()
                   if kind == "b" or (kind in "ui" and bits < 64))
# reductions that take dtype=: NumPy accumulates narrow integers in int64/uint64 ...
ACCUMULATING = frozenset({"cumsum", "cumprod", "nancumsum", "nancumprod"})
# ... and computes these statistics in float64
STATISTICS = frozenset({"mean", "std", "var", "nanmean", "nanstd", "nanvar"})
# functions whose float64 result NumPy computes from the data cast to float64
FLOAT_RESULTS = frozenset({"median", "nanmedian", "average", "percentile", "nanpercentile",
                           "quantile", "nanquantile", "trapezoid", "linalg.norm"})
# ufuncs computing in the float type NumPy's loops pick for the input: float16 for bool and
# 8-bit integers, float32 for 16-bit ones, float64 for 32-bit ones (JAX: always float32)
FLOAT_UFUNCS = frozenset({
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
    "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh", "deg2rad", "rad2deg", "degrees", "radians", "arctan2", "hypot", "asin", "acos",
    "atan", "asinh", "acosh", "atanh", "atan2"})


def mended_by_promotion(name: str, dtype: str | None) -> bool:
    """Whether NJ402 rewrites a call of numpy.`name` on `dtype` data to NumPy's result dtype
    (`jnp.mean(x, dtype=jnp.float64)`, `jnp.sqrt(x.astype(jnp.float16))`): the difference in
    dtype that running both shows for it is mended, not a reason to keep the call."""
    return dtype in NARROW and name in ACCUMULATING | STATISTICS | FLOAT_RESULTS | FLOAT_UFUNCS


def promote(first: str | None, second: str | None) -> str | None:
    """NumPy's result dtype of an arithmetic operation (not true division) between two
    operands; "int", "float" and "complex" are Python numbers, weak (NEP 50): they take the
    array's dtype when its kind holds them."""
    if first is None or second is None:
        return None
    if first in _WEAK and second in _WEAK:
        return max(first, second, key=_WEAK.index)
    if first in _WEAK or second in _WEAK:
        weak, strong = (first, second) if first in _WEAK else (second, first)
        kind, bits = DTYPES[strong]
        if weak == "int":
            return "int64" if kind == "b" else strong
        if weak == "float":
            return strong if kind in "fc" else "float64"
        if kind == "c":
            return strong
        return "complex64" if strong in ("float16", "float32") else "complex128"
    (k1, b1), (k2, b2) = DTYPES[first], DTYPES[second]
    if k1 == k2:
        return first if b1 >= b2 else second
    if k1 == "b" or k2 == "b":
        return second if k1 == "b" else first
    if {k1, k2} == {"u", "i"}:
        unsigned, signed = (b1, b2) if k1 == "u" else (b2, b1)
        return _BY_KIND.get(("i", max(signed, 2 * unsigned)), "float64")
    order = "uifc"
    if order.index(k1) < order.index(k2):
        (k1, b1), (k2, b2) = (k2, b2), (k1, b1)
    # k1 is the higher kind; an integer operand needs enough float bits to hold it
    needed = {8: 16, 16: 32}.get(b2, 64) if k2 in "ui" else b2
    if k1 == "f":
        return _BY_KIND[("f", max(b1, needed))]
    return _BY_KIND[("c", max(b1, 2 * needed))]


def true_division(first: str | None, second: str | None) -> str | None:
    """NumPy's `a / b`: integers and booleans give float64."""
    result = promote(first, second)
    if result is None:
        return None
    if result in ("int", "float"):
        return "float"
    return "float64" if DTYPES[result][0] in "bui" else result


def accumulated(dtype: str | None) -> str | None:
    """The dtype NumPy sums and multiplies a dtype in: booleans and smaller integers go to
    the platform integer (int64, or uint64 for unsigned ones)."""
    if dtype is None or dtype not in DTYPES:
        return {"int": "int64", "float": "float64"}.get(dtype or "")
    kind, bits = DTYPES[dtype]
    if kind in "bi":
        return "int64"
    if kind == "u":
        return "uint64"
    return dtype


def stored(target: str | None, operator: str | None, operand: str | None) -> str | None:
    """The dtype of what `x[i] (op)= v` computes before storing it into x (of dtype `target`):
    the operand itself for `=`, else the operation's result."""
    if operator is None:
        return operand
    if operator in ("/=", "divide"):
        return true_division(target, operand)
    if operator in ("+=", "-=", "*=", "//=", "%=", "**=", "add", "subtract", "multiply",
                    "power", "min", "max"):
        return promote(target, operand)
    return None


def needs_cast(target: str | None, value: str | None) -> bool:
    """Whether a value of dtype `value` stored into an array of dtype `target` changes (float
    into integers, float64 into float32): NumPy casts what it stores; JAX's `.at[]` is handed
    the value and refuses to cast it unsafely (a FutureWarning today, an error in later
    releases). False where the code does not show either dtype."""
    return target in DTYPES and value is not None and promote(target, value) != target


def integer_range(dtype: str | None) -> tuple[int, int] | None:
    """The values an integer dtype holds (None for the others and for Python's int)."""
    if dtype not in DTYPES or DTYPES[dtype][0] not in "ui":
        return None
    kind, bits = DTYPES[dtype]
    return (0, 2**bits - 1) if kind == "u" else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def int_literal(node: cst.BaseExpression) -> int | None:
    """The value of an integer literal, `300` or `-1`; None for anything else."""
    if isinstance(node, cst.Integer):
        return node.evaluated_value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)) \
            and isinstance(node.expression, cst.Integer):
        value = node.expression.evaluated_value
        return -value if isinstance(node.operator, cst.Minus) else value
    return None


def is_integer(dtype: str | None) -> bool:
    return dtype == "int" or (dtype in DTYPES and DTYPES[dtype][0] in "bui" and dtype != "bool")



def _shape_item(subscript: cst.Subscript) -> bool:
    """`x.shape[1]`, `x.shape[-1]`, `x.shape[axis]`: one item, not a slice."""
    value = subscript.value
    return isinstance(value, cst.Attribute) and value.attr.value == "shape" \
        and isinstance(single_index(subscript), (cst.Integer, cst.Name, cst.UnaryOperation))


def _returned_item(subscript: cst.Subscript) -> int | None:
    """`f(x, return_inverse=True)[1]`: the position of the item taken from the tuple a call
    given `return_*` options gives (np.unique's); None for anything else."""
    call = subscript.value
    if not (isinstance(call, cst.Call) and call.args and call.args[0].keyword is None
            and any(a.keyword is not None and a.keyword.value.startswith("return_")
                    for a in call.args)):
        return None
    return integer_index(subscript)


class Dtypes:
    """dtype_of for one module, memoised; reads the value analysis (`flow`)."""

    def __init__(self, flow) -> None:
        self.flow = flow
        self._known: dict = {}

    def spelled(self, node: cst.BaseExpression) -> str | None:
        """The dtype a dtype argument names: np.uint8, "float32", float, jnp.int32..."""
        if isinstance(node, cst.SimpleString):
            return SPELLINGS.get(node.evaluated_value.lstrip("<>=|"))
        if isinstance(node, cst.Name):
            if node.value in BUILTIN_TYPES and not self.flow.collector.is_api(node):
                return BUILTIN_TYPES[node.value]
            ref = self.flow.collector.ref_by_node.get(node)
            if ref is None:
                return self._parameter_spelled(node)
            return SPELLINGS.get(ref.qualname.rsplit(".", 1)[-1])
        if isinstance(node, cst.Attribute):
            if node.attr.value == "dtype":
                return self.dtype_of(node.value)  # x.astype(y.dtype)
            ref = self.flow.collector.ref_by_node.get(node)
            if ref is not None:
                return SPELLINGS.get(ref.qualname.rsplit(".", 1)[-1])
            if code_of(node.value) in ("jnp", "jax.numpy") or \
                    (self.flow.collector.api_name(node) or "").startswith("numpy."):
                return SPELLINGS.get(node.attr.value)  # np.complex128 as a default: no reference
            return None
        return None

    def _parameter_spelled(self, name: cst.Name) -> str | None:
        """`dtype=dtype` of a parameter (`def __init__(self, z, dtype=np.complex128)`): what
        every call of the module passes, or, where its callers are not all seen (a method,
        a public function), its default: callers leave a dtype parameter at its default."""
        values, _ = self.flow.name_values(name)
        if len(values) != 1 or values[0][0] != "param":
            return None
        param = values[0][1]
        passed = self.flow.passed_arguments(param)
        if passed:
            found = {self.spelled(v) for v in passed}
            return found.pop() if len(found) == 1 else None
        return self.spelled(param.default) if param.default is not None else None

    def dtype_of(self, node: cst.BaseExpression, depth: int = 0) -> str | None:
        if node in self._known:
            return self._known[node]
        self._known[node] = None  # a cycle (x = x + 1): not known
        found = self._dtype(node, depth) if depth < _DEPTH else None
        self._known[node] = found
        return found

    def _dtype(self, node, depth: int) -> str | None:
        if isinstance(node, cst.Integer):
            return "int"
        if isinstance(node, cst.Float):
            return "float"
        if isinstance(node, cst.Imaginary):
            return "complex"
        ref = self.flow.collector.ref_by_node.get(node)
        if ref is not None and ref.qualname in _FLOAT_CONSTANTS:
            return "float"  # np.pi is a Python float
        if isinstance(node, cst.Name):
            if node.value in ("True", "False"):
                return "bool"
            return self._name(node, depth)
        if isinstance(node, cst.UnaryOperation):
            inner = self.dtype_of(node.expression, depth + 1)
            return "bool" if isinstance(node.operator, cst.Not) else inner
        if isinstance(node, cst.BinaryOperation):
            left, right = (self.dtype_of(n, depth + 1) for n in (node.left, node.right))
            if isinstance(node.operator, cst.Divide):
                return true_division(left, right)
            if isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)) and left == right == "bool":
                return "bool"
            if isinstance(node.operator, cst.MatrixMultiply):
                return promote(left, right) if left not in ("int", "float") else None
            return promote(left, right)
        if isinstance(node, cst.Comparison):
            return "bool" if isinstance(node.comparisons[0].operator, _COMPARISONS) else None
        if isinstance(node, (cst.List, cst.Tuple)):  # as NumPy makes an array of it
            return self.literal_array(node, depth)
        if isinstance(node, cst.ListComp):
            return self._strong(self.dtype_of(node.elt, depth + 1))
        if isinstance(node, cst.Subscript):
            if _shape_item(node):  # x.shape[1]: a Python int in NumPy and JAX alike
                return "int"
            grid = self._grid(node, depth)
            if grid is not None:
                return grid
            returned = _returned_item(node)
            ref = self.flow.collector.ref_by_call.get(node.value) if returned is not None else None
            if ref is not None and ref.qualname == "numpy.unique":
                # np.unique(x, return_inverse=True)[1]: int64 indices; [0] the values
                return self.dtype_of(node.value.args[0].value, depth + 1) if returned == 0 else "int64"
            return self.dtype_of(node.value, depth + 1)
        if isinstance(node, cst.IfExp):  # one branch's value: known when both agree
            body, orelse = (self.dtype_of(n, depth + 1) for n in (node.body, node.orelse))
            return body if body == orelse else None
        if isinstance(node, cst.Attribute) and node.attr.value in ("T", "real", "imag", "flat"):
            inner = self.dtype_of(node.value, depth + 1)
            if node.attr.value in ("real", "imag") and inner in ("complex64", "complex128"):
                return "float32" if inner == "complex64" else "float64"
            return inner
        if isinstance(node, cst.Attribute) and (node.attr.value == "ndim" or node.attr.value == "size"
                                                and self.dtype_of(node.value, depth + 1) in DTYPES):
            return "int"  # not any `.size` (a PIL image's is a tuple): an array's
        if isinstance(node, cst.Attribute):
            return self._attribute(node, depth)
        if isinstance(node, cst.Call):
            return self._call(node, depth)
        return None

    def _grid(self, node: cst.Subscript, depth: int) -> str | None:
        """`np.mgrid[0:4, 0:5]` (and ogrid's arrays): int64 from integer bounds and steps,
        float64 where one is a float or a complex count of points (`0:1:5j`)."""
        ref = self.flow.collector.ref_by_node.get(node.value)
        if ref is None or ref.qualname not in ("numpy.mgrid", "numpy.ogrid"):
            return None
        kinds = set()
        for element in node.slice:
            part = element.slice
            bounds = [part.lower, part.upper, part.step] if isinstance(part, cst.Slice) \
                else [part.value]
            kinds |= {self.dtype_of(b, depth + 1) for b in bounds if b is not None}
        if kinds <= {"int", "int64"}:
            return "int64"
        return "float64" if kinds <= {"int", "int64", "float", "float64", "complex"} else None

    def _unpacked_grid(self, statement, name: str, depth: int) -> str | None:
        """The dtype of `name` in `yy, xx = np.mgrid[...]` (`np.ogrid`, `np.indices(...)`,
        `np.meshgrid(x, y)`): each part of a grid has the grid's dtype (meshgrid's, its
        argument's, as an array); None for any other unpacking."""
        position = unpacked_position(statement, name)
        value = getattr(statement, "value", None)
        if position is None or value is None:
            return None
        if isinstance(value, cst.Subscript):
            return self._grid(value, depth)
        ref = self.flow.collector.ref_by_call.get(value) if isinstance(value, cst.Call) else None
        if ref is None or ref.qualname not in ("numpy.indices", "numpy.meshgrid") \
                or any(a.star for a in value.args):
            return None
        keyword = {a.keyword.value: a.value for a in value.args if a.keyword is not None}
        positional = [a.value for a in value.args if a.keyword is None]
        if "dtype" in keyword:
            return self.spelled(keyword["dtype"])
        if ref.qualname == "numpy.indices":
            return "int64"
        index, count = position
        if len(positional) != count:
            return None
        return self._strong(self.dtype_of(positional[index], depth + 1))

    def _attribute(self, node: cst.Attribute, depth: int) -> str | None:
        """`self.px`: the dtype every binding of it in its class gives."""
        values, aug_values = self.flow.values_of(node)
        if not values:
            return None
        found = {None if isinstance(v, str) else self.dtype_of(v, depth + 1) for v, _ in values}
        if len(found) != 1 or None in found:
            return None
        (dtype,) = found
        return None if aug_values and dtype in ("int", "float") else dtype

    def _name(self, node: cst.Name, depth: int) -> str | None:
        values, aug_values = self.flow.name_values(node)
        values = self.flow.reaching_bindings(node, values)
        bound, parts = [], set()
        for value, statement in values:
            if value == "param":  # what every call in the module passes, if it says
                passed = self.flow.passed_arguments(statement)
                if passed is None:
                    return None
                bound.extend(passed)
            elif isinstance(value, str):
                part = self._unpacked_grid(statement, node.value, depth)
                if part is None:
                    return None  # a loop variable, an unpacking, a global: not shown
                parts.add(part)
            else:
                bound.append(value)
        if not bound and not parts:
            return None
        found = {self.dtype_of(v, depth + 1) for v in bound} | parts
        if len(found) != 1 or None in found:
            return None
        (dtype,) = found
        if aug_values and dtype in ("int", "float"):
            return None  # `total = 0; total += x` becomes x's kind
        return dtype

    def _call(self, call: cst.Call, depth: int) -> str | None:
        keyword = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if "dtype" in keyword:
            return self.spelled(keyword["dtype"])
        func = call.func
        ref = self.flow.collector.ref_by_call.get(call)
        if ref is not None and ref.dtype_argument is not None:  # np.ones(7, np.int16)
            return self.spelled(ref.dtype_argument)
        if ref is not None:
            name = ref.qualname.rsplit(".", 1)[-1]
            if not ref.qualname.startswith("numpy."):
                return None
        elif isinstance(func, cst.Attribute):  # a method of what may be an array
            name = func.attr.value
            if name == "astype":
                return self.spelled(positional[0]) if positional else None
            receiver = self.dtype_of(func.value, depth + 1)
            if receiver is None or receiver in ("int", "float", "bool") and name not in ("sum",):
                return None
            positional = [func.value, *positional]
        elif isinstance(func, cst.Name) and func.value in ("int", "float", "bool", "len", "round"):
            return {"int": "int", "len": "int", "round": "int", "float": "float",
                    "bool": "bool"}[func.value]
        else:
            function = self.flow.module_function(call)
            returns = self.flow.function_returns(function) if function is not None else None
            found = {self.dtype_of(r, depth + 1) for r in returns or ()}
            return found.pop() if len(found) == 1 else None
        return self._numpy_function(name, positional, keyword, depth)

    def _numpy_function(self, name, positional, keyword, depth) -> str | None:
        first = self.dtype_of(positional[0], depth + 1) if positional else None
        if name in SPELLINGS and len(name) > 2:
            return SPELLINGS[name]  # np.float64(x), np.uint8(x): a scalar of that type
        if name in _FILLED:
            return "float64"
        if name in ("zeros_like", "ones_like", "empty_like", "full_like", "copy"):
            return first if first not in ("int", "float") else None
        if name == "full":
            fill = self.dtype_of(positional[1], depth + 1) if len(positional) > 1 else None
            return {"int": "int64", "float": "float64"}.get(fill or "", fill)
        if name == "arange":
            kinds = {self.dtype_of(p, depth + 1) for p in positional}
            if kinds and kinds <= {"int"}:
                return "int64"
            return "float64" if kinds and kinds <= {"int", "float"} else None
        if name in ("array", "asarray", "asanyarray") and positional and isinstance(
                positional[0], (cst.List, cst.Tuple)):
            return self.literal_array(positional[0], depth)
        if name in _FLOAT_MAKERS:
            if name in ("mean", "average", "std", "var", "median", "nanmean", "nanstd", "nanvar"):
                return first if first in ("float16", "float32", "float64") else \
                    "float64" if first is not None else None
            if first in ("float16", "float32", "float64", "complex64", "complex128"):
                return first
            if name in ("linspace", "logspace", "geomspace"):
                return "float64"
            return "float64" if first is not None and is_integer(first) and first not in (
                "uint8", "int8", "uint16", "int16") else None
        if name in _ACCUMULATE:
            return accumulated(first)
        if name in ("argmax", "argmin", "argsort", "count_nonzero", "searchsorted", "bincount",
                    "flatnonzero", "nonzero_count", "argwhere", "nonzero") \
                or name == "where" and len(positional) == 1:
            return "int64"  # np.nonzero(m), np.where(m): a tuple of int64 index arrays
        if name in ("isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not",
                    "logical_xor", "any", "all", "isclose", "greater", "less", "equal",
                    "not_equal", "greater_equal", "less_equal", "isin", "in1d", "signbit",
                    "isneginf", "isposinf"):
            return "bool"
        if name in ("round", "around", "floor", "ceil", "rint", "trunc"):
            # np.rint(3) is float64; np.round(3), np.floor(3) int64 (NumPy 2): NumPy's
            # scalars, not weak ones
            if name == "rint" and first == "int":
                return "float64"
            return self._strong(first)
        if name in ("maximum", "minimum", "fmax", "fmin") and len(positional) == 2:
            return self._strong(promote(first, self.dtype_of(positional[1], depth + 1)))
        if name == "where" and len(positional) == 3:
            return self._strong(promote(self.dtype_of(positional[1], depth + 1),
                                        self.dtype_of(positional[2], depth + 1)))
        if name in _JOINS and positional and isinstance(positional[0], (cst.List, cst.Tuple)):
            return self._joined(positional[0], depth)
        if name == "append" and len(positional) == 2:  # np.append(levels, more): both arrays
            second = self.dtype_of(positional[1], depth + 1)
            return promote(first, second) if first in DTYPES and second in DTYPES else None
        if name in _SAME_AS_FIRST:
            if name in ("maximum", "minimum", "where", "concatenate", "stack", "vstack", "hstack"):
                return None  # several operands: promoted together (not followed)
            if name == "unique" and any(k.startswith("return_") for k in keyword) \
                    or name.startswith("atleast_") and len(positional) > 1:
                return None  # a tuple (values and indices) or a list of arrays
            return self._strong(first)  # np.abs(-3): NumPy's int64 scalar
        return None

    def _joined(self, sequence, depth: int) -> str | None:
        """np.concatenate([a, b]), np.stack((a, b)): the arrays' dtypes promoted together,
        when every item is an array of a known dtype (a Python number among them is NumPy's
        64-bit array: NJ116's)."""
        found = None
        for element in sequence.elements:
            if isinstance(element, cst.StarredElement):
                return None
            dtype = self.dtype_of(element.value, depth + 1)
            if dtype not in DTYPES:
                return None
            found = dtype if found is None else promote(found, dtype)
        return found

    @staticmethod
    def _strong(dtype: str | None) -> str | None:
        """Two Python numbers give a NumPy scalar of the default type, not a weak one."""
        return {"int": "int64", "float": "float64", "complex": "complex128"}.get(dtype or "", dtype)

    def operand_of(self, value: cst.BaseExpression) -> str | None:
        """The dtype of what `a[i] = value` hands the array: a list or tuple literal is an
        array of its default dtype (literal_array), anything else its own dtype."""
        if isinstance(value, (cst.List, cst.Tuple)):
            return self.literal_array(value)
        return self.dtype_of(value)

    def literal_array(self, literal, depth: int = 0) -> str | None:
        """The dtype of the array a list or tuple literal makes (`[20, 30]`: int64, strong:
        JAX too gives it its default type, not the weak type of a single Python number)."""
        found = set()
        for element in literal.elements:
            value = element.value
            if isinstance(value, (cst.List, cst.Tuple)):
                found.add(self.literal_array(value, depth + 1))
            else:
                found.add(self.dtype_of(value, depth + 1))
        if not found or None in found:
            return None
        # NumPy makes each Python number an array of its default type (0.1 beside a float32
        # scalar gives float64): the items' dtypes, so made strong, promoted together
        strong = {self._strong(dtype) for dtype in found}
        if not strong <= DTYPES.keys():
            return None
        result = None
        for dtype in sorted(strong):
            result = dtype if result is None else promote(result, dtype)
        return result
