"""Boolean selections inside functions --jit compiles.

`x[m]` has as many elements as `m` has True values: a shape that depends on the data, which
jax.jit cannot trace. What is used of the selection decides whether it can go:
  - a reduction of it (`x[m].sum()`: selection_reduction) becomes the reduction with
    `where=`; so does its reduction along the selected axis, `x[m].mean(axis=0)` with a row
    mask `m` (selection_axis_reduction), over x's first `m.ndim` axes;
  - a selection by the mask of a write `x[m] = y[m] * 2` that becomes
    `jnp.where(m, y * 2, x)` (np2jax.analysis.writes) is the whole `y` there;
  - its length (`len(x[m])`, `x[m].size`) becomes `jnp.count_nonzero(m)` (selection_count), where
    the count is only divided (or divides an array) or compared: a Python int and a 0-d
    int32 array give the same value and dtype there; elsewhere, `int8_array + len(...)`,
    they do not;
  - anything else (the selection kept, returned, indexed) leaves the function eager,
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
Each function here takes the checker (np2jax.jit.traceable.TraceChecker) and records the
rewrite in it (the code it writes: np2jax.jit.rewrites).
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.facts import ELEMENTWISE_COMPARISONS
from np2jax.analysis.shapes import same_shape
from np2jax.jit.lattice import ARRAY
from np2jax.jit.rewrites import mask_count, masked_reduction, masked_rows_reduction
from np2jax.jit.verdicts import Rewrite, RewriteKind
from np2jax.syntax import code_of


def selection_of_mask(checker, subscript: cst.BaseExpression) -> cst.BaseExpression | None:
    """The mask `m` of `x[m]` when `x` is an array name of the function and `m` is a boolean
    mask provably of x's shape; None otherwise."""
    if not isinstance(subscript, cst.Subscript) or len(subscript.slice) != 1 \
            or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    base, mask = subscript.value, subscript.slice[0].slice.value
    flow = checker.m.analysis.dataflow
    if not (isinstance(base, cst.Name) and checker.env.get(base.value) == ARRAY
            and flow.is_mask(mask) and same_shape(flow, mask, base)):
        return None
    return mask


def selection_reduction(checker, node: cst.Call, method: str) -> str | None:
    """x[mask].sum() with a boolean mask of x's own shape (np2jax.analysis.shapes), or x[mask].sum(
    axis=0) with any boolean mask: records the rewrite to the same reduction over x with the
    mask as `where` (the shape no longer depends on the values) and gives ARRAY; None when it
    is neither."""
    mask = None if node.args else selection_of_mask(checker, node.func.value)
    if mask is None:
        # x[m].mean(axis=0): over x's first m.ndim axes, m as `where`
        return ARRAY if selection_axis_reduction(checker, node, method) else None
    checker.expr(mask)
    if checker.record:
        checker.rewrites.append(Rewrite(RewriteKind.MASKED_REDUCTION, node,
                                        masked_reduction(method, checker.m.analysis.jnp_alias),
                                        code_of(node)))
    return ARRAY


def selection_axis_reduction(checker, node: cst.Call, method: str) -> bool:
    """`x[m].sum(axis=0)` (mean, prod, any, all, max, min; `axis` given alone, as 0) with a
    boolean array `m`: records the rewrite to the reduction of x over its first m.ndim
    axes with `m` expanded to x's rank as `where`, and says True (the value is an array)."""
    if not _only_axis_zero(node.args):
        return False
    subscript = node.func.value
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return False
    base, mask = subscript.value, subscript.slice[0].slice.value
    if not (isinstance(base, cst.Name) and checker.env.get(base.value) == ARRAY
            and checker.m.analysis.dataflow.is_mask(mask) and _kind_quietly(checker, mask) == ARRAY):
        return False
    checker.expr(mask)
    if checker.record:
        whole = same_shape(checker.m.analysis.dataflow, mask, base)  # x[m] is 1-D: all of it
        fix = masked_rows_reduction(method, whole, checker.m.analysis.jnp_alias)
        checker.rewrites.append(Rewrite(RewriteKind.MASKED_REDUCTION, node, fix, code_of(node)))
    return True


def _only_axis_zero(args) -> bool:
    """The arguments are one axis, the integer 0 (positional or `axis=0`)."""
    if len(args) != 1 or args[0].star:
        return False
    arg = args[0]
    if arg.keyword is not None and arg.keyword.value != "axis":
        return False
    return isinstance(arg.value, cst.Integer) and arg.value.evaluated_value == 0


def selection_count(checker, node: cst.BaseExpression) -> bool:
    """`len(x[m])` or `x[m].size` whose count is divided by or compared: records the
    rewrite to `jnp.count_nonzero(m)` and says True (the value is then an array)."""
    if isinstance(node, cst.Call):
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            return False
        selection = node.args[0].value
    elif isinstance(node, cst.Attribute) and node.attr.value == "size":
        selection = node.value
    else:
        return False
    mask = selection_of_mask(checker, selection)
    if mask is None or not _divided_or_compared(checker, node):
        return False
    checker.expr(mask)
    if checker.record:
        fix = mask_count(checker.m.analysis.jnp_alias)
        checker.rewrites.append(Rewrite(RewriteKind.MASK_COUNT, node, fix, code_of(node)))
    return True


def _divided_or_compared(checker, node) -> bool:
    """The count divides or is divided by something, or is compared. Divided into an array
    only: `1.0 / len(x[m])` raises ZeroDivisionError in Python on an empty selection, where
    an array divided by 0 gives inf or nan in NumPy as in JAX."""
    parent = checker.m.analysis.parents.get(node)
    if isinstance(parent, cst.BinaryOperation):
        return isinstance(parent.operator, cst.Divide) and (
            parent.left is node or _kind_quietly(checker, parent.left) == ARRAY)
    if isinstance(parent, cst.ComparisonTarget):
        parent = checker.m.analysis.parents.get(parent)
    return isinstance(parent, cst.Comparison) and len(parent.comparisons) == 1 \
        and isinstance(parent.comparisons[0].operator, ELEMENTWISE_COMPARISONS)


def _kind_quietly(checker, node) -> str:
    """The checker's class of `node`, recording and refusing nothing."""
    record, check = checker.record, checker.check
    checker.record = checker.check = False
    try:
        return checker.expr(node)
    finally:
        checker.record, checker.check = record, check


def selection_in_where_write(checker, node: cst.Subscript) -> bool:
    """Whether `node` is a selection `y[m]` in the value of a write `x[m] = ...` that the
    write plan (np2jax.analysis.writes) turns into jnp.where(m, ..., x), where it becomes the
    whole `y`."""
    parents = checker.m.analysis.parents
    statement, child = parents.get(node), node
    while statement is not None and not isinstance(statement, (cst.Assign, cst.AugAssign)):
        statement, child = parents.get(statement), statement
    if statement is None or child is not statement.value or len(node.slice) != 1 \
            or not isinstance(node.slice[0].slice, cst.Index):
        return False
    target = statement.target if isinstance(statement, cst.AugAssign) else \
        statement.targets[0].target if len(statement.targets) == 1 else None
    return isinstance(target, cst.Subscript) and checker.m.analysis.write_plan(statement).where \
        and node.slice[0].slice.value.deep_equals(target.slice[0].slice.value)


def size_hint(function: str) -> str:
    """Why a function giving an array whose size depends on the data stays eager."""
    return (f"`{function}(...)` makes an array whose shape depends on the values; jax.jit "
            "compiles it only with a static `size=`, and then pads or cuts the result, which "
            "equals NumPy's only when the count is exactly that size (pass `size=` yourself "
            "where you know it)")
