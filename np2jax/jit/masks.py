"""Boolean selections inside functions --jit compiles.

`x[m]` has as many elements as `m` has True values: a shape that depends on the data, which
jax.jit cannot trace. What is used of the selection decides whether it can go:
  - a reduction of it (`x[m].sum()`: NJ504, traceable._masked) becomes the reduction with
    `where=`; so does its reduction along the selected axis, `x[m].mean(axis=0)` with a row
    mask `m` (selection_axis_reduction), over x's first `m.ndim` axes;
  - a selection by the mask of a write `x[m] = y[m] * 2` that becomes
    `jnp.where(m, y * 2, x)` (NJ201/NJ202) is the whole `y` there;
  - its length (`len(x[m])`, `x[m].size`) becomes `jnp.count_nonzero(m)` (NJ504 too), where
    the count is only divided (or divides an array) or compared: a Python int and a 0-d
    int32 array give the same value and dtype there; elsewhere, `int8_array + len(...)`,
    they do not;
  - anything else (the selection kept, returned, indexed) leaves the function eager (NJ502),
    as do np.nonzero, np.unique, np.argwhere, np.flatnonzero and one-argument np.where: JAX
    compiles them only with a static `size=`, and then pads the result, which equals
    NumPy's only when the count is exactly that size (the analysis never knows it).
In every case but the reduction along axis 0 the mask must be provably boolean and of the
array's own shape (np2jax.analysis.shapes): then the count of the selection is the count of the mask.
Along axis 0 it must be a boolean array of any shape: NumPy accepts `x[m]` only when m's
shape is that of x's first m.ndim axes, and then `m` expanded by x.ndim - m.ndim trailing
axes selects, as `where=`, exactly the elements `x[m]` holds, the reduced axes being the
first m.ndim ones (x's shape need not be known: `m.ndim` and `x.ndim` are read while
tracing).
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.facts import ELEMENTWISE_COMPARISONS
from np2jax.syntax import code_of
from np2jax.jit.syntax import operand
from np2jax.analysis.shapes import same_shape


def selection_of_mask(walker, subscript: cst.BaseExpression) -> cst.BaseExpression | None:
    """The mask `m` of `x[m]` when `x` is an array name of the function and `m` is a boolean
    mask provably of x's shape; None otherwise."""
    if not isinstance(subscript, cst.Subscript) or len(subscript.slice) != 1 \
            or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    from np2jax.jit.traceable import ARRAY  # (traceable imports this module)

    base, mask = subscript.value, subscript.slice[0].slice.value
    flow = walker.m.analysis.dataflow
    if not (isinstance(base, cst.Name) and walker.env.get(base.value) == ARRAY
            and flow.is_mask(mask) and same_shape(flow, mask, base)):
        return None
    return mask


def selection_count(walker, node: cst.BaseExpression) -> bool:
    """`len(x[m])` or `x[m].size` whose count is divided by or compared: records the NJ504
    rewrite to `jnp.count_nonzero(m)` and says True (the value is then an array)."""
    if isinstance(node, cst.Call):
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            return False
        selection = node.args[0].value
    elif isinstance(node, cst.Attribute) and node.attr.value == "size":
        selection = node.value
    else:
        return False
    mask = selection_of_mask(walker, selection)
    if mask is None or not _divided_or_compared(walker, node):
        return False
    walker.expr(mask)
    if walker.record:
        from np2jax.jit.traceable import Rewrite

        walker.rewrites.append(Rewrite("NJ504", node, _count_fix(walker.m.analysis.jnp_alias),
                                       code_of(node)))
    return True


def _divided_or_compared(walker, node) -> bool:
    """The count divides or is divided by something, or is compared. Divided into an array
    only: `1.0 / len(x[m])` raises ZeroDivisionError in Python on an empty selection, where
    an array divided by 0 gives inf or nan in NumPy as in JAX."""
    from np2jax.jit.traceable import ARRAY

    parent = walker.m.analysis.parents.get(node)
    if isinstance(parent, cst.BinaryOperation):
        return isinstance(parent.operator, cst.Divide) and (
            parent.left is node or _kind_quietly(walker, parent.left) == ARRAY)
    if isinstance(parent, cst.ComparisonTarget):
        parent = walker.m.analysis.parents.get(parent)
    return isinstance(parent, cst.Comparison) and len(parent.comparisons) == 1 \
        and isinstance(parent.comparisons[0].operator, ELEMENTWISE_COMPARISONS)


def _kind_quietly(walker, node) -> str:
    """The walker's class of `node`, recording and refusing nothing."""
    record, check = walker.record, walker.check
    walker.record = walker.check = False
    try:
        return walker.expr(node)
    finally:
        walker.record, walker.check = record, check


def _count_fix(jnp: str):
    def fix(node: cst.BaseExpression) -> cst.BaseExpression:
        selection = node.args[0].value if isinstance(node, cst.Call) else node.value
        mask = selection.slice[0].slice.value
        return cst.Call(func=cst.parse_expression(f"{jnp}.count_nonzero"), args=[cst.Arg(mask)],
                        lpar=node.lpar, rpar=node.rpar)
    return fix


def selection_in_where_write(walker, node: cst.Subscript) -> bool:
    """Whether `node` is a selection `y[m]` in the value of a write `x[m] = ...` that NJ201/
    NJ202 turn into jnp.where(m, ..., x), where it becomes the whole `y`."""
    parents = walker.m.analysis.parents
    statement, child = parents.get(node), node
    while statement is not None and not isinstance(statement, (cst.Assign, cst.AugAssign)):
        statement, child = parents.get(statement), statement
    if statement is None or child is not statement.value or len(node.slice) != 1 \
            or not isinstance(node.slice[0].slice, cst.Index):
        return False
    target = statement.target if isinstance(statement, cst.AugAssign) else \
        statement.targets[0].target if len(statement.targets) == 1 else None
    return isinstance(target, cst.Subscript) and walker.m.analysis.write_plan(statement).where \
        and node.slice[0].slice.value.deep_equals(target.slice[0].slice.value)


def size_hint(function: str) -> str:
    """Why a function giving an array whose size depends on the data stays eager."""
    return (f"`{function}(...)` makes an array whose shape depends on the values; jax.jit "
            "compiles it only with a static `size=`, and then pads or cuts the result, which "
            "equals NumPy's only when the count is exactly that size (pass `size=` yourself "
            "where you know it)")


def selection_axis_reduction(walker, node: cst.Call, method: str) -> bool:
    """`x[m].sum(axis=0)` (mean, prod, any, all, max, min; `axis` given alone, as 0) with a
    boolean array `m`: records the NJ504 rewrite to the reduction of x over its first m.ndim
    axes with `m` expanded to x's rank as `where`, and says True (the value is an array)."""
    if not _only_axis_zero(node.args):
        return False
    subscript = node.func.value
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return False
    from np2jax.jit.traceable import ARRAY, Rewrite

    base, mask = subscript.value, subscript.slice[0].slice.value
    if not (isinstance(base, cst.Name) and walker.env.get(base.value) == ARRAY
            and walker.m.analysis.dataflow.is_mask(mask) and _kind_quietly(walker, mask) == ARRAY):
        return False
    walker.expr(mask)
    if walker.record:
        whole = same_shape(walker.m.analysis.dataflow, mask, base)  # x[m] is 1-D: all of it
        walker.rewrites.append(Rewrite("NJ504", node, _rows_fix(method, whole,
                                                                 walker.m.analysis.jnp_alias),
                                       code_of(node)))
    return True


def _only_axis_zero(args) -> bool:
    """The arguments are one axis, the integer 0 (positional or `axis=0`)."""
    if len(args) != 1 or args[0].star:
        return False
    arg = args[0]
    if arg.keyword is not None and arg.keyword.value != "axis":
        return False
    return isinstance(arg.value, cst.Integer) and arg.value.evaluated_value == 0


def _rows_fix(method: str, whole: bool, jnp: str):
    """x[m].<method>(axis=0) -> jnp.<method>(x, where=m) for a mask of x's shape, else
    jnp.<method>(x, axis=tuple(range(m.ndim)),
                 where=jnp.expand_dims(m, tuple(range(m.ndim, x.ndim))))."""
    def fix(call: cst.Call) -> cst.BaseExpression:
        subscript = call.func.value
        array, mask = code_of(subscript.value), code_of(subscript.slice[0].slice.value)
        if whole:
            where, axis = mask, ""
        else:
            ndim = f"{operand(mask)}.ndim"
            where = f"{jnp}.expand_dims({mask}, tuple(range({ndim}, {array}.ndim)))"
            axis = f", axis=tuple(range({ndim}))"
        if method in ("max", "min"):
            fill = f"{jnp}.{'nanmin' if method == 'max' else 'nanmax'}({array})"
            code = f"{jnp}.{method}({jnp}.where({where}, {array}, {fill}){axis})"
        else:
            code = f"{jnp}.{method}({array}{axis}, where={where})"
        return cst.parse_expression(code).with_changes(lpar=call.lpar, rpar=call.rpar)
    return fix
