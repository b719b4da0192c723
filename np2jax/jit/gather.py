"""Integer-array indexes inside functions --jit compiles (`centres[i % k]`, `p[rows, y]`).

An index by an integer array has the index's shape, which jax.jit knows: the gather (or, in
a write `x[i] = v` that the conversion makes `x.at[i].set(v)`, the scatter) compiles, and computes
under jit what it computes eagerly (the same lax.gather / lax.scatter, the same treatment of
negative indices and of indices out of range: JAX clamps reads and drops writes there, where
NumPy raises IndexError, compiled or not; the spec's item 14). A boolean array index is
another thing: `x[m]` has as many rows as m has True values, which jax.jit cannot compile.
So an array index is let through only when it is provably not boolean: an integer-producing
call (np.arange, argmin/argmax/argsort, `.astype(int)`), arithmetic that never gives bool
(`%`, `//`, `-`, shifts; `+`, `*` and bitwise operators with a non-boolean operand), a
subscript of such an array, or a name all of whose bindings are such (an item of a module
function's returned tuple included). A float index fails loudly in NumPy and JAX alike.
"""

from __future__ import annotations

import libcst as cst

# NumPy functions whose result is never boolean (integers, or floats that fail as indexes
# in NumPy and JAX alike).
_NON_BOOLEAN_FUNCTIONS = frozenset({
    "numpy.arange", "numpy.argmin", "numpy.argmax", "numpy.argsort", "numpy.searchsorted",
    "numpy.digitize", "numpy.ravel_multi_index", "numpy.floor_divide", "numpy.mod",
    "numpy.remainder",
})
_NON_BOOLEAN_METHODS = frozenset({"argmin", "argmax", "argsort"})
# Elementwise functions that keep a non-boolean operand non-boolean.
_KEEPING_FUNCTIONS = frozenset({"numpy.abs", "numpy.absolute", "numpy.minimum",
                                "numpy.maximum", "numpy.clip"})
# Operators whose result is never boolean (bool - bool raises; bool % bool is int8).
_NON_BOOLEAN_OPERATORS = (cst.Modulo, cst.FloorDivide, cst.Subtract, cst.Power,
                          cst.LeftShift, cst.RightShift)
# Operators whose result is boolean only when both operands are.
_KEEPING_OPERATORS = (cst.Add, cst.Multiply, cst.BitAnd, cst.BitOr, cst.BitXor)
_INTEGER_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                             "uint64", "intp", "uintp", "int_"})
_DEPTH = 12


def non_boolean_index(checker, node: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether the array `node` is provably not boolean (an index jax.jit can gather by)."""
    if depth > _DEPTH:
        return False
    flow = checker.m.analysis.dataflow
    if flow.is_mask(node):
        return False
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return non_boolean_index(checker, node.expression, depth + 1)
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, _NON_BOOLEAN_OPERATORS):
            return True
        return isinstance(node.operator, _KEEPING_OPERATORS) and (
            non_boolean_index(checker, node.left, depth + 1)
            or non_boolean_index(checker, node.right, depth + 1))
    if isinstance(node, cst.Call):
        return _non_boolean_call(checker, node, depth)
    if isinstance(node, cst.Subscript):  # indexing keeps the dtype
        return non_boolean_index(checker, node.value, depth + 1)
    if isinstance(node, cst.Name):
        _, values, _ = flow.name_bindings(node)
        # `i += m` keeps i's dtype: only the bindings matter
        return bool(values) and all(_non_boolean_binding(checker, node.value, value, statement,
                                                         depth + 1)
                                    for value, statement in values)
    return False


def _non_boolean_binding(checker, name: str, value, statement, depth: int) -> bool:
    """`name = <non-boolean>`, or `a, name = f(...)` / `name = f(...)` with `f` a function of
    the module every `return` of which gives a non-boolean value there."""
    flow = checker.m.analysis.dataflow
    if not isinstance(value, str):
        if isinstance(value, cst.Call) and flow.module_function(value) is not None:
            return _returns_non_boolean(checker, value, None, depth)
        return non_boolean_index(checker, value, depth)
    if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0].target, (cst.Tuple, cst.List))
            and isinstance(statement.value, cst.Call)):
        return False
    elements = statement.targets[0].target.elements
    position = next((i for i, e in enumerate(elements)
                     if isinstance(e.value, cst.Name) and e.value.value == name), None)
    if position is None or any(isinstance(e, cst.StarredElement) for e in elements):
        return False
    return _returns_non_boolean(checker, statement.value, (position, len(elements)), depth)


def _returns_non_boolean(checker, call: cst.Call, item, depth: int) -> bool:
    """Every `return` of the module function `call` calls gives a non-boolean value (item:
    (position, length) of a returned tuple, the value at that position)."""
    flow = checker.m.analysis.dataflow
    values = flow.returned_values(flow.module_function(call), item)
    return bool(values) and all(non_boolean_index(checker, value, depth + 1) for value in values)


def _non_boolean_call(checker, node: cst.Call, depth: int) -> bool:
    ref = checker.m.refs_by_call.get(node)
    if ref is not None:
        if ref.qualname in _KEEPING_FUNCTIONS:
            return any(arg.keyword is None and non_boolean_index(checker, arg.value, depth + 1)
                       for arg in node.args)
        return ref.qualname in _NON_BOOLEAN_FUNCTIONS
    func = node.func
    if not isinstance(func, cst.Attribute):
        return False
    if func.attr.value in _NON_BOOLEAN_METHODS:
        return True
    if func.attr.value == "astype" and node.args and node.args[0].keyword is None:
        return _integer_dtype(checker, node.args[0].value)
    return False


def _integer_dtype(checker, dtype: cst.BaseExpression) -> bool:
    """`int`, `np.int32` and the like (not rebound in the module or function)."""
    if isinstance(dtype, cst.Name):  # the builtin, bound nowhere in the file
        return dtype.value == "int" and checker.m.analysis.dataflow.name_bindings(dtype)[0] is None
    if isinstance(dtype, cst.SimpleString):
        return dtype.evaluated_value in _INTEGER_DTYPES
    ref = checker.m.refs_by_node.get(dtype)
    return ref is not None and ref.qualname.removeprefix("numpy.") in _INTEGER_DTYPES
