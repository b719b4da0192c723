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

from np2jax.analysis.facts import ELEMENTWISE_COMPARISONS

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
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.Module)  # where a name's bindings live


def same_shape(flow, first: cst.BaseExpression, second: cst.BaseExpression) -> bool:
    """Whether `first` and `second` (both read in the same statement) provably have the same
    shape: the same shape root, and not just numbers."""
    root = shape_root(flow, first)
    if root is not None and root != NUMBER and root == shape_root(flow, second):
        return True
    known = static_shape(flow, second)  # (not a number: an array of at least one axis)
    return bool(known) and static_shape(flow, first) == known


def shape_root(flow, node: cst.BaseExpression, here: bool = True, depth: int = 0):
    """The shape root of `node`: a (scope, name) key, NUMBER, or None (not proven). `here`:
    `node` is read in the statement being judged (else in a binding that dominates it)."""
    if depth > _DEPTH:
        return None
    cache = flow.shape_roots  # (as static_shape's)
    if (node, here) not in cache:
        cache[(node, here)] = _shape_root(flow, node, here, depth)
    return cache[(node, here)]


def _shape_root(flow, node: cst.BaseExpression, here: bool, depth: int):
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


# --- concrete shapes -----------------------------------------------------------------------
# Where the shape roots differ (`dh = g @ W.T` against `h = np.maximum(X @ V + b, 0)`), the
# shapes may still be known numbers: arrays made with constant sizes (np.zeros((N, C)),
# np.arange(n).reshape(a, b)) and carried through elementwise operations, broadcasting,
# matrix products, reductions with a constant axis, `.T`, and calls of the module's own
# functions (their returns, with the arguments' sizes and shapes for the parameters). Every
# size is a Python int computed from integer literals and names bound once to them; any
# other value leaves the shape unknown. A name is followed to the binding that reaches the
# read: the last one before it in a block that encloses it, with no other binding of the
# name in between (a binding inside a nested function, `global` or `nonlocal`, unpacking
# other than of a module function's returned tuple: unknown).

_FILLED = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full"})
_SHAPE_OF_FIRST_ONLY = frozenset({"numpy.zeros_like", "numpy.ones_like", "numpy.empty_like",
                                  "numpy.full_like", "numpy.copy", "numpy.asarray"})
_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "prod", "std", "var", "any", "all"})
_ARG_REDUCTIONS = frozenset({"argmax", "argmin"})
# functions that reduce every axis when given no axis
_FULL_REDUCTIONS = _REDUCTIONS | _ARG_REDUCTIONS | frozenset({
    "amax", "amin", "median", "nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanstd",
    "nanvar", "nanmedian", "average", "ptp", "count_nonzero"})


def static_shape(flow, node: cst.BaseExpression, env=None, depth: int = 0):
    """The shape of `node` as a tuple of ints, or None when not known. `env`: parameter name
    -> ("int", value) or ("shape", shape), inside a module function followed from a call."""
    if depth > _DEPTH:
        return None
    # remembered: names followed again and again would otherwise cost 2 ** depth (a None
    # found at the depth limit is only more cautious where it is reused)
    cache = flow.static_shapes
    key = (node, tuple(sorted((env or {}).items())))
    if key not in cache:
        cache[key] = _static_shape(flow, node, env, depth + 1)
    return cache[key]


def _static_shape(flow, node: cst.BaseExpression, env, depth: int):
    if isinstance(node, (cst.Integer, cst.Float)):
        return ()
    if isinstance(node, cst.Name):
        return _name_shape(flow, node, env, depth)
    if isinstance(node, cst.UnaryOperation):
        if isinstance(node.operator, cst.Not):
            return None
        return static_shape(flow, node.expression, env, depth)
    if isinstance(node, cst.BinaryOperation):
        left = static_shape(flow, node.left, env, depth)
        right = static_shape(flow, node.right, env, depth)
        if isinstance(node.operator, cst.MatrixMultiply):
            return _matmul(left, right)
        return _broadcast_shapes(left, right)
    if isinstance(node, cst.Comparison):
        if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator,
                                                        ELEMENTWISE_COMPARISONS):
            return None
        return _broadcast_shapes(static_shape(flow, node.left, env, depth),
                                 static_shape(flow, node.comparisons[0].comparator, env, depth))
    if isinstance(node, cst.Attribute) and node.attr.value == "T":
        inner = static_shape(flow, node.value, env, depth)
        return None if inner is None else inner[::-1]
    if isinstance(node, cst.Call):
        return _call_shape(flow, node, env, depth)
    return None


def static_int(flow, node: cst.BaseExpression, env=None, depth: int = 0) -> int | None:
    """The value of an integer expression of literals and names bound once to them."""
    if depth > _DEPTH:
        return None
    depth += 1
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        value = static_int(flow, node.expression, env, depth)
        return None if value is None else -value
    if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)):
        left, right = static_int(flow, node.left, env, depth), static_int(flow, node.right, env,
                                                                          depth)
        if left is None or right is None or (isinstance(node.operator, cst.FloorDivide)
                                             and right == 0):
            return None
        return {cst.Add: left + right, cst.Subtract: left - right, cst.Multiply: left * right,
                cst.FloorDivide: left // right if right else None}[type(node.operator)]
    if isinstance(node, cst.Name):
        binding = _reaching(flow, node)
        if binding is None or flow.name_bindings(node)[2]:
            return None  # (`n += 1` changes the value, where it keeps an array's shape)
        value, _ = binding
        if value == "param":
            passed = (env or {}).get(node.value)
            return passed[1] if passed is not None and passed[0] == "int" else None
        return None if isinstance(value, str) else static_int(flow, value, env, depth)
    return None


def _name_shape(flow, name: cst.Name, env, depth: int):
    if _reshaped(flow, name.value):
        return None
    binding = _reaching(flow, name)
    if binding is None:
        return None
    value, statement = binding
    if value == "param":
        passed = (env or {}).get(name.value)
        if passed is None:
            return None
        return () if passed[0] == "int" else passed[1]
    if isinstance(value, str):  # `a, name = f(...)`: the item of f's returned tuples
        return _unpacked_shape(flow, name, statement, env, depth)
    if flow.is_scalar(value):
        return ()
    return static_shape(flow, value, env, depth)


def _reaching(flow, name: cst.Name):
    """(value, statement) of the binding of `name` that reaches this read (("param", node)
    for a parameter never rebound before it), or None when that is not certain."""
    scope, values, _ = flow.name_bindings(name)
    if scope is None:
        return None
    if scope is not flow.scopes.get(name):  # a module constant read in a function
        module = getattr(scope, "globals", None)
        if len(values) != 1 or isinstance(values[0][0], str) or module is None \
                or len(module.assignments[name.value]) != 1 or flow.collector.dynamic_scopes:
            return None  # (a `global` statement elsewhere may rebind it)
        return values[0] if _single_binding(values) is not None else None
    function = flow.enclosing(name, _SCOPES)
    if any(value == "param" for value, _ in values):
        if len(values) == 1:
            return values[0]
    candidates = []
    for value, statement in values:
        if value == "param":
            continue
        if isinstance(value, str) and value != "global" and isinstance(statement, cst.Assign):
            pass  # unpacking: the statement is the binding
        elif value == "global" or not isinstance(statement, cst.Assign) \
                or len(statement.targets) != 1:
            return None
        if flow.enclosing(statement, _SCOPES) is not function:
            return None  # bound in a nested function (nonlocal)
        candidates.append((value, statement))
    reaching = [c for c in candidates if _dominates(flow, c[1], name)]
    if not reaching:
        parameter = next((v for v in values if v[0] == "param"), None)
        body = getattr(function, "body", None)
        use = _child_of(flow, name, body)
        if parameter is None or not isinstance(body, cst.IndentedBlock) or use is None:
            return None
        # `z = z - z.max()` in the body, not in a loop: the parameter until rebound
        later = all(flow.parents.get(flow.parents.get(s)) is body
                    and _position(flow, s) >= _index(body, use) for _, s in candidates)
        return parameter if later else None
    # the nearest: the one in the innermost block, the last there
    best = max(reaching, key=lambda c: (_block_depth(flow, c[1]), _position(flow, c[1])))
    line = flow.parents.get(best[1])
    block = flow.parents.get(line)
    if any(flow.parents.get(s) is line for _, s in candidates if s is not best[1]):
        return None  # `a = x; a = y` on one line
    use = _child_of(flow, name, block)
    position = _position(flow, best[1])
    for _, statement in candidates:
        if statement is best[1]:
            continue
        other = _child_of(flow, statement, block)
        if other is not None and position < _index(block, other) <= _index(block, use):
            return None  # rebound between the binding and the read
    return best


def _child_of(flow, node, block):
    """The statement of `block` that holds `node` (None: `node` is not in it)."""
    while node is not None and flow.parents.get(node) is not block:
        node = flow.parents.get(node)
    return node


def _index(block, statement) -> int:
    return next(i for i, s in enumerate(block.body) if s is statement)


def _position(flow, statement) -> int:
    line = flow.parents.get(statement)
    return _index(flow.parents.get(line), line)


def _block_depth(flow, statement) -> int:
    depth, node = 0, statement
    while node is not None:
        node, depth = flow.parents.get(node), depth + 1
    return depth


def _unpacked_shape(flow, name: cst.Name, statement, env, depth: int):
    target = statement.targets[0].target
    call = statement.value
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(call, cst.Call):
        return None
    elements = target.elements
    if any(isinstance(e, cst.StarredElement) for e in elements):
        return None
    position = next((i for i, e in enumerate(elements)
                     if isinstance(e.value, cst.Name) and e.value.value == name.value), None)
    if position is None:
        return None
    return _returned_shape(flow, call, env, depth, (position, len(elements)))


def _returned_shape(flow, call: cst.Call, env, depth: int, item=None):
    """The shape every `return` of the module function `call` calls gives (item: (position,
    length) of a returned tuple), its parameters bound to the arguments' sizes and shapes."""
    function = flow.module_function(call)
    values = flow.returned_values(function, item)
    if not values:
        return None
    inner = _call_env(flow, call, function, env, depth)
    if inner is None:
        return None
    shapes = {static_shape(flow, value, inner, depth) for value in values}
    return shapes.pop() if len(shapes) == 1 else None


def _call_env(flow, call: cst.Call, function: cst.FunctionDef, env, depth: int):
    params = function.params
    if params.star_arg is not None and isinstance(params.star_arg, cst.Param) \
            or params.star_kwarg is not None or any(a.star for a in call.args):
        return None
    positional = [*params.posonly_params, *params.params]
    inner = {}
    for index, arg in enumerate(call.args):
        if arg.keyword is None:
            if index >= len(positional):
                return None
            name = positional[index].name.value
        else:
            name = arg.keyword.value
        value = static_int(flow, arg.value, env, depth)
        if value is not None:
            inner[name] = ("int", value)
            continue
        shape = static_shape(flow, arg.value, env, depth)
        if shape is not None:
            inner[name] = ("shape", shape)
    return inner


def _call_shape(flow, call: cst.Call, env, depth: int):
    if any(arg.star for arg in call.args):
        return None
    positional = [arg.value for arg in call.args if arg.keyword is None]
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    ref = flow.collector.ref_by_call.get(call)
    if ref is None:
        if isinstance(call.func, cst.Attribute):
            return _method_shape(flow, call.func, positional, keywords, env, depth)
        return _returned_shape(flow, call, env, depth)
    if not ref.converted or not positional:
        return None
    name = ref.qualname
    if name in _FILLED:
        if set(keywords) - {"dtype"} or len(positional) > (2 if name == "numpy.full" else 1):
            return None
        return _shape_argument(flow, positional[0], env, depth)
    if name in _SHAPE_OF_FIRST_ONLY:
        if set(keywords) - {"dtype"} or len(positional) > (2 if name == "numpy.full_like" else 1):
            return None
        return static_shape(flow, positional[0], env, depth)
    if name in ("numpy.array", "numpy.asarray") and len(positional) == 1 \
            and not set(keywords) - {"dtype"}:
        return _nested_shape(positional[0])
    if name.removeprefix("numpy.") in _FULL_REDUCTIONS and len(positional) == 1 \
            and set(keywords) <= {"dtype"}:
        return ()  # np.mean(x): every axis reduced, whatever x's shape
    if name == "numpy.arange":
        bounds = [static_int(flow, p, env, depth) for p in positional]
        if keywords or None in bounds or len(bounds) > 3 or (len(bounds) == 3 and not bounds[2]):
            return None
        return (len(range(*bounds)),)
    if name == "numpy.outer":
        if keywords or len(positional) != 2:
            return None
        shapes = [static_shape(flow, p, env, depth) for p in positional]
        return None if None in shapes else tuple(_size(s) for s in shapes)
    elementwise = (ref.entry or {}).get("kind") == "ufunc" or name in _BROADCASTING
    if not elementwise or set(keywords) - {"dtype"} or (
            name == "numpy.where" and len(positional) != 3):
        return None
    shape = ()
    for value in positional:
        shape = _broadcast_shapes(shape, static_shape(flow, value, env, depth))
    return shape


def _nested_shape(node) -> tuple | None:
    """The shape of a list or tuple of number literals, or of such lists of one shape:
    `[[1, 2], [3, 4]]` is (2, 2); None for anything else."""
    if isinstance(node, (cst.Integer, cst.Float)) or isinstance(node, cst.UnaryOperation) \
            and isinstance(node.operator, cst.Minus) \
            and isinstance(node.expression, (cst.Integer, cst.Float)):
        return ()
    if not isinstance(node, (cst.List, cst.Tuple)) or any(
            isinstance(e, (cst.StarredElement)) for e in node.elements):
        return None
    inner = {_nested_shape(e.value) for e in node.elements}
    if len(inner) > 1 or None in inner:
        return None
    return (len(node.elements), *(inner.pop() if inner else ()))


def _method_shape(flow, func: cst.Attribute, positional, keywords, env, depth: int):
    method = func.attr.value
    if method in ("astype", "copy"):
        if len(positional) > (1 if method == "astype" else 0) or set(keywords) - {"dtype", "copy"}:
            return None
        return static_shape(flow, func.value, env, depth)
    if (method in _REDUCTIONS or method in _ARG_REDUCTIONS) and not positional \
            and set(keywords) <= {"dtype"}:
        return ()  # `x.mean()`: every axis reduced, whatever x's shape
    receiver = static_shape(flow, func.value, env, depth)
    if receiver is None:
        return None
    if method == "reshape":
        if keywords:
            return None
        if len(positional) == 1 and isinstance(positional[0], cst.Tuple):
            positional = [e.value for e in positional[0].elements]
        sizes = [static_int(flow, p, env, depth) for p in positional]
        if None in sizes or sizes.count(-1) > 1 or any(s < -1 for s in sizes):
            return None
        known = 1
        for size in sizes:
            known *= size if size != -1 else 1
        if -1 in sizes:
            if known == 0 or _size(receiver) % known:
                return None
            sizes[sizes.index(-1)] = _size(receiver) // known
        return tuple(sizes) if _size(tuple(sizes)) == _size(receiver) else None
    if method in _REDUCTIONS or method in _ARG_REDUCTIONS:
        allowed = {"axis"} | ({"keepdims", "dtype"} if method in _REDUCTIONS else set())
        if set(keywords) - allowed or len(positional) > 1:
            return None
        axis = positional[0] if positional else keywords.get("axis")
        keep = keywords.get("keepdims")
        if keep is not None and not (isinstance(keep, cst.Name) and keep.value in ("True", "False")):
            return None
        return _reduced(flow, receiver, axis, keep is not None and keep.value == "True", env,
                        depth)
    return None


def _shape_argument(flow, node, env, depth: int):
    """A shape given as an int or a tuple of ints."""
    if isinstance(node, (cst.Tuple, cst.List)):
        sizes = [static_int(flow, e.value, env, depth) for e in node.elements]
        return None if None in sizes or any(s < 0 for s in sizes) else tuple(sizes)
    size = static_int(flow, node, env, depth)
    return None if size is None or size < 0 else (size,)


def _reduced(flow, shape: tuple, axis, keepdims: bool, env, depth: int):
    if axis is None or (isinstance(axis, cst.Name) and axis.value == "None"):
        return (1,) * len(shape) if keepdims else ()
    value = static_int(flow, axis, env, depth)
    if value is None or not -len(shape) <= value < len(shape):
        return None
    value %= len(shape)
    if keepdims:
        return shape[:value] + (1,) + shape[value + 1:]
    return shape[:value] + shape[value + 1:]


def _size(shape: tuple) -> int:
    size = 1
    for dim in shape:
        size *= dim
    return size


def _broadcast_shapes(first, second):
    """NumPy's broadcast of two known shapes (None: unknown, or they do not broadcast)."""
    if first is None or second is None:
        return None
    result = []
    for a, b in zip(((1,) * len(second) + first)[-max(len(first), len(second)):],
                    ((1,) * len(first) + second)[-max(len(first), len(second)):]):
        if a != b and 1 not in (a, b):
            return None
        result.append(b if a == 1 else a)
    return tuple(result)


def _matmul(first, second):
    if first is None or second is None or not first or not second:
        return None
    if len(first) == 1 and len(second) == 1:
        return () if first == second else None
    if len(first) == 1:
        return second[:-2] + second[-1:] if first[0] == second[-2] else None
    if len(second) == 1:
        return first[:-1] if first[-1] == second[0] else None
    if first[-1] != second[-2]:
        return None
    batch = _broadcast_shapes(first[:-2], second[:-2])
    return None if batch is None else batch + (first[-2], second[-1])
