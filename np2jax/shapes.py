"""Which expressions provably hold arrays of the same shape (at the point they are read).

The question comes from boolean masks: `x[m] = v` is `x = jnp.where(m, v, x)` only when `m`
has exactly x's shape (a row mask `m` of a 2-D `x` is valid NumPy, and jnp.where would
broadcast it along the wrong axis). The proof reduces each expression to a *shape root*: the
name whose binding its shape comes from, following bindings through shape-keeping operations
(elementwise arithmetic and comparisons with numbers or arrays of the same root, ufuncs,
`np.zeros_like(a)`, `a.astype(t)`, `np.roll(a, k)`, ...). Two expressions with the same root
have the same shape.

A name is followed, or used as a root, only when its value where it is read is known:
  - read in the statement being judged (`x` in `x[x > 0] = 0`): its value there, whatever
    its bindings;
  - read anywhere else (in the binding of a mask `m = x > 0` the write reads): it has exactly
    one binding in its scope, and that binding comes before the read in a block that
    encloses the read, so no other binding, and no later run of the same one (in a loop),
    can come in between; or it is a parameter never rebound.
Names whose shape an in-place method can change (`x.resize(...)`, `x.shape = ...`) are never
followed, and a root read in a binding is only a name proven to hold an array (a list would
concatenate under `+`); read in the statement judged, the name is the same value on both
sides (`x[x > 0] = 0` only runs on an array). `x += y` keeps x's shape: NumPy refuses to
broadcast an in-place update.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analyze import ELEMENTWISE_COMPARISONS

NUMBER = "number"  # a Python number: it broadcasts to any shape
# NumPy functions whose result has the shape of their first argument, with the most
# positional arguments that keeps it so (np.array(x, float, True, "K", False, 2): ndmin=2).
_SHAPE_OF_FIRST = {"numpy.zeros_like": 2, "numpy.ones_like": 2, "numpy.empty_like": 2,
                   "numpy.full_like": 3, "numpy.copy": 2, "numpy.roll": 3, "numpy.asarray": 2,
                   "numpy.array": 2, "numpy.nan_to_num": 2, "numpy.sort": 2, "numpy.cumsum": 2,
                   "numpy.cumprod": 2}
# Keywords those may take without changing the shape.
_KEEPING_KEYWORDS = frozenset({"dtype", "axis", "order", "copy", "nan", "posinf", "neginf",
                               "kind"})
# These flatten with axis=None (a cumsum's default): their axis must be an integer.
_AXIS_OR_FLAT = {"numpy.sort": "-1", "numpy.cumsum": None, "numpy.cumprod": None}
# NumPy functions broadcasting all their arguments together, elementwise.
_BROADCASTING = frozenset({"numpy.where", "numpy.clip", "numpy.logical_and", "numpy.logical_or",
                           "numpy.logical_xor", "numpy.logical_not", "numpy.isclose"})
_METHODS_OF_SAME_SHAPE = frozenset({"astype", "copy"})
_DEPTH = 24


def same_shape(flow, first: cst.BaseExpression, second: cst.BaseExpression) -> bool:
    """Whether `first` and `second` (both read in the same statement) provably have the same
    shape: the same shape root, and not just numbers."""
    root = shape_root(flow, first)
    return root is not None and root != NUMBER and root == shape_root(flow, second)


def shape_root(flow, node: cst.BaseExpression, here: bool = True, depth: int = 0):
    """The shape root of `node`: a (scope, name) key, NUMBER, or None (not proven). `here`:
    `node` is read in the statement being judged (else in a binding that dominates it)."""
    if depth > _DEPTH:
        return None
    if flow.is_scalar(node):  # (a name: bound to numbers only, `op=` included)
        return NUMBER
    if isinstance(node, cst.Name):
        return _name_root(flow, node, here, depth)
    if isinstance(node, cst.UnaryOperation):
        if isinstance(node.operator, cst.Not):
            return None
        return shape_root(flow, node.expression, here, depth + 1)
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, cst.MatrixMultiply):
            return None
        return _broadcast(flow, (node.left, node.right), here, depth)
    if isinstance(node, cst.Comparison):
        if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator,
                                                        ELEMENTWISE_COMPARISONS):
            return None
        return _broadcast(flow, (node.left, node.comparisons[0].comparator), here, depth)
    if isinstance(node, cst.Call):
        return _call_root(flow, node, here, depth)
    return None


def _broadcast(flow, operands, here: bool, depth: int):
    """The common root of operands broadcast together: numbers take any shape; arrays must
    all share one root (two different roots may broadcast to a third shape)."""
    roots = {shape_root(flow, operand, here, depth + 1) for operand in operands}
    if None in roots:
        return None
    roots.discard(NUMBER)
    if not roots:
        return NUMBER
    return roots.pop() if len(roots) == 1 else None


def _call_root(flow, call: cst.Call, here: bool, depth: int):
    if any(arg.star for arg in call.args):
        return None
    positional = [arg.value for arg in call.args if arg.keyword is None]
    keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    func = call.func
    ref = flow.collector.ref_by_call.get(call)
    if ref is None:
        if isinstance(func, cst.Attribute) and func.attr.value in _METHODS_OF_SAME_SHAPE \
                and not keywords - {"dtype", "copy"}:
            root = shape_root(flow, func.value, here, depth + 1)
            return root if root != NUMBER else None  # (1).astype: not an array method
        return None
    if not ref.converted or not positional:
        return None
    if ref.qualname in _SHAPE_OF_FIRST:
        if keywords - _KEEPING_KEYWORDS or len(positional) > _SHAPE_OF_FIRST[ref.qualname] \
                or (ref.qualname in _AXIS_OR_FLAT and not _integer_axis(call, positional)
                    and not (_AXIS_OR_FLAT[ref.qualname] and len(positional) == 1
                             and "axis" not in keywords)):
            return None
        if ref.qualname == "numpy.full_like" and not (len(positional) == 2 and flow.is_scalar(
                positional[1])):
            return None
        root = shape_root(flow, positional[0], here, depth + 1)
        return root if root != NUMBER else None  # np.zeros_like(3): 0-d, not a number
    elementwise = (ref.entry or {}).get("kind") == "ufunc" or ref.qualname in _BROADCASTING
    if not elementwise or keywords - {"dtype"} or (
            ref.qualname == "numpy.where" and len(positional) != 3):
        return None
    root = _broadcast(flow, positional, here, depth)
    return root if root != NUMBER else None  # np.sin(2.0): a NumPy scalar, not a number


def _integer_axis(call: cst.Call, positional: list) -> bool:
    axis = next((a.value for a in call.args if a.keyword is not None
                 and a.keyword.value == "axis"), positional[1] if len(positional) > 1 else None)
    if isinstance(axis, cst.UnaryOperation) and isinstance(axis.operator, cst.Minus):
        axis = axis.expression
    return isinstance(axis, cst.Integer)


def _name_root(flow, name: cst.Name, here: bool, depth: int):
    scope, values, aug_values = flow.name_bindings(name)
    if scope is None or _reshaped(flow, name.value):
        return None
    if scope is not flow.scopes.get(name) and not here:
        return None  # a global or a closure's name: another function may rebind it between
    if len(values) == 1 and values[0][0] == "param":  # bound once, on entry: always known
        return (scope, name.value) if here or flow.jax_typed(name) else None
    single = _single_binding(values)
    known = single is not None and _dominates(flow, single[1], name)
    if not known and not here:
        return None  # its value where the binding read it may not be its value now
    if known:
        value = single[0]
        root = shape_root(flow, value, False, depth + 1)
        if root == NUMBER and aug_values:
            return None  # `t = 0; t += a`: t takes a's shape
        if root is not None:
            return root
        if not here and not flow.jax_typed(value):
            return None
    return scope, name.value


def _single_binding(values):
    """(value, statement) of a name bound once, by a plain `name = value`; else None."""
    if len(values) != 1:
        return None
    value, statement = values[0]
    if isinstance(value, str) or not isinstance(statement, cst.Assign) \
            or len(statement.targets) != 1 or not isinstance(statement.targets[0].target, cst.Name):
        return None
    return value, statement


def _reshaped(flow, name: str) -> bool:
    """Whether some in-place method may change the shape of arrays bound to `name`."""
    return any(isinstance(receiver, cst.Name) and receiver.value == name
               and method in ("resize", "shape")
               for _, receiver, method in flow.collector.method_writes)


def _dominates(flow, binding: cst.CSTNode, use: cst.CSTNode) -> bool:
    """Whether the statement `binding` comes before `use` in a block that encloses `use`
    (so it ran, and did not run again, between the start of that block's run and `use`)."""
    parents = flow.parents
    line = parents.get(binding)
    block = parents.get(line)
    if not isinstance(line, cst.SimpleStatementLine) or not isinstance(
            block, (cst.IndentedBlock, cst.Module)):
        return False
    node = use
    while node is not None and parents.get(node) is not block:
        node = parents.get(node)
    if node is None:
        return False
    statements = list(block.body)
    positions = {id(s): i for i, s in enumerate(statements)}
    return id(node) in positions and positions[id(line)] < positions[id(node)]
