"""NJ407 zero-d-axis.

A reduction over axis 0 or -1 of a value that may be 0-d: NumPy returns the value itself,
JAX raises; rewritten through jnp.atleast_1d.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import int_literal
from np2jax.analysis.shapes import static_shape
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates

# NumPy's functions that take axis 0 or -1 of a 0-d array (NumPy 2.4: a ufunc's reduce
# accepts them and gives the value, the others follow) where JAX raises "axis out of range".
# Not mean/std/var/median/cumsum/sort: NumPy raises there too.
ZERO_D_AXIS = frozenset(f"numpy.{name}" for name in (
    "sum", "prod", "max", "min", "amax", "amin", "any", "all", "ptp", "argmax", "argmin",
    "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanstd", "nanvar", "nanargmax",
    "nanargmin", "count_nonzero", "argsort", "squeeze"))
# the methods of a JAX array that raise where NumPy's take axis 0 or -1 of a 0-d array
METHODS = frozenset({"sum", "prod", "max", "min", "any", "all", "argmax", "argmin",
                     "squeeze", "argsort"})
# the constructors whose result has at least one dimension
_ONE_D_OR_MORE = frozenset(f"numpy.{name}" for name in (
    "arange", "linspace", "logspace", "geomspace", "zeros", "ones", "empty", "full", "eye",
    "identity", "atleast_1d", "atleast_2d", "atleast_3d", "diag", "stack", "vstack",
    "hstack", "column_stack", "concatenate", "meshgrid", "indices"))


def _axis_zero_or_last(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.Integer):
        return value.evaluated_value == 0
    return isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) \
        and isinstance(value.expression, cst.Integer) and value.expression.evaluated_value == 1


LITERAL, UNKNOWN = "literal", "unknown"


def _axis_kind(value: cst.BaseExpression) -> str | None:
    """LITERAL for an axis written 0 or -1; UNKNOWN for one given by a name, a parameter,
    an attribute, a call or arithmetic (it may be 0 or -1 at run time); None for every other literal
    (`None`, `1`, a tuple: NumPy and JAX agree on a 0-d array there, a value or an error)."""
    if _axis_zero_or_last(value):
        return LITERAL
    if isinstance(value, cst.Name):
        return None if value.value in ("None", "True", "False") else UNKNOWN
    if isinstance(value, (cst.Attribute, cst.Call, cst.Subscript, cst.BinaryOperation,
                          cst.IfExp)):
        return UNKNOWN  # `x.ndim - 1` is -1 of a 0-d x
    if isinstance(value, cst.UnaryOperation) and int_literal(value) is None:
        return UNKNOWN
    return None


def _keepdims_false(value: cst.BaseExpression | None) -> bool:
    return value is None or isinstance(value, cst.Name) and value.value == "False"


def _repeatable(value: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether `value` can be written a second time for its dimension count: names,
    attributes, numbers and arithmetic of them (no call: it may cost or change state)."""
    if depth > 8:
        return False
    if isinstance(value, (cst.Name, cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.Attribute):
        return _repeatable(value.value, depth + 1)
    if isinstance(value, cst.UnaryOperation):
        return _repeatable(value.expression, depth + 1)
    if isinstance(value, cst.BinaryOperation):
        return _repeatable(value.left, depth + 1) and _repeatable(value.right, depth + 1)
    return False


def _guarded_axis(jnp: str, data: cst.BaseExpression, axis: cst.BaseExpression,
                  kind: str, array: bool) -> cst.BaseExpression:
    """The axis NumPy reduces a 0-d `data` over: None (the whole value, which JAX takes of
    a 0-d array, keepdims or not) where it is 0-d and the axis 0 or -1, else the axis.
    `array`: whether `data` is known to be an array or number (else jnp.asarray first:
    jnp.ndim of a list is deprecated)."""
    data_code = code_of(data) if array else f"{jnp}.asarray({code_of(data)})"
    zero_d = f"{jnp}.ndim({data_code}) == 0"
    if kind == UNKNOWN:
        zero_d += f" and {code_of(axis)} in (0, -1)"
    return cst.parse_expression(f"None if {zero_d} else {code_of(axis)}")


class ZeroDAxis(Rule):
    code = "NJ407"

    def run(self):
        """`np.sum(x, axis=-1)` (and the functions of ZERO_D_AXIS) converted, with an axis
        that is or may be 0 or -1 (the literal, or a name, a parameter, a call), of data the
        analysis does not show to have a dimension: `jnp.sum(jnp.atleast_1d(x), axis=-1)`,
        which is the same array for a 1-d or larger `x`, and NumPy's result for a 0-d one
        and an axis of 0, -1 or None. With `keepdims=` other than False (NumPy's result of a
        0-d array is then 0-d, atleast_1d's 1-d) the axis becomes None where the data is 0-d
        (`axis=None if jnp.ndim(x) == 0 else -1`), when the data and the axis can be written
        twice; else the call is reported."""
        for ref in self.analysis.refs:
            if not ref.converted or ref.call is None or ref.qualname not in ZERO_D_AXIS:
                continue
            by_name = {a.name: a for a in ref.arguments if a.name is not None}
            axis, data = by_name.get("axis"), ref.arguments[0] if ref.arguments else None
            if axis is None or data is None or data is axis or data.arg.star \
                    or (data.arg.keyword is not None and data.arg.keyword.value != "a"):
                continue
            kind = _axis_kind(axis.arg.value)
            if kind is None or self._has_a_dimension(data.arg.value):
                continue
            keepdims = by_name.get("keepdims")
            fields = dict(call=code_of(ref.node), data=code_of(data.arg.value),
                          axis=code_of(axis.arg.value))
            yield from self._fixed(data.arg, axis.arg, kind,
                                   keepdims.arg.value if keepdims is not None else None,
                                   requires=(ref.node,), fields=fields)
        yield from self._methods()

    def _fixed(self, data_node, axis_node, kind, keepdims, *, requires, fields):
        """The one finding of a reduction: `data_node` (an Arg, or the receiver's Attribute)
        read through atleast_1d, or `axis_node` (an Arg) guarded, or nothing rewritten."""
        jnp = self.analysis.jnp_alias
        data = data_node.value if isinstance(data_node, (cst.Arg, cst.Attribute)) else data_node
        axis = axis_node.value
        if _keepdims_false(keepdims):
            if isinstance(data_node, cst.Arg):
                def fix(arg: cst.Arg) -> cst.Arg:
                    return arg.with_changes(value=updates.jnp_call(jnp, "atleast_1d", arg.value))
            else:
                def fix(node: cst.Attribute) -> cst.Attribute:
                    inner = node.value.with_changes(lpar=[], rpar=[]) if isinstance(
                        node.value, (cst.Comparison, cst.BinaryOperation)) else node.value
                    return node.with_changes(value=updates.jnp_call(jnp, "atleast_1d", inner))
            yield self.report(data_node, fix=fix, requires=requires,
                              imports=[("jax.numpy", jnp)], report_if_unfixed=False,
                              outcome=f"rewritten to `{jnp}.atleast_1d({fields['data']})`",
                              **fields)
        elif _repeatable(data) and _repeatable(axis):
            array = isinstance(data, (cst.BinaryOperation, cst.UnaryOperation)) \
                or self.analysis.dataflow.jax_typed(data, certain=True)
            guarded = _guarded_axis(jnp, data, axis, kind, array)

            def fix(arg: cst.Arg) -> cst.Arg:
                return arg.with_changes(value=guarded)

            yield self.report(axis_node, fix=fix, requires=requires,
                              imports=[("jax.numpy", jnp)], report_if_unfixed=False,
                              outcome=f"with keepdims, the axis rewritten to `{code_of(guarded)}`",
                              **fields)
        else:
            yield self.report(axis_node, outcome=(
                "with keepdims, and data or an axis that cannot be written twice, left as it "
                "was: a 0-d value raises in JAX here"), **fields)

    def _methods(self):
        """`v.sum(axis=-1)` (the methods of METHODS) with an axis that is or may be 0 or -1,
        of a receiver that is a JAX array once converted (no parameter trusted: a NumPy
        array made a JAX one would reach NumPy code) and not shown to have a dimension:
        `jnp.atleast_1d(v).sum(axis=-1)`, or with keepdims the axis guarded, as above."""
        flow = self.analysis.dataflow
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in METHODS \
                    or self.analysis.ref_of_call(call) is not None or any(a.star for a in call.args):
                continue
            keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
            positional = [a.value for a in call.args if a.keyword is None]
            axis = keywords.get("axis", positional[0] if positional else None)
            kind = _axis_kind(axis) if axis is not None else None
            if kind is None:
                continue
            if len(positional) > (1 if func.attr.value in ("argmax", "argmin", "squeeze",
                                                          "argsort") else 3):
                continue  # an out= by position: NJ204's
            receiver = func.value
            if not flow.jax_typed(receiver, certain=True) or self._has_a_dimension(receiver):
                continue
            axis_arg = next(a for a in call.args if a.value is axis)
            yield from self._fixed(func, axis_arg, kind, keywords.get("keepdims"),
                                   requires=flow.jax_refs(receiver, certain=True),
                                   fields=dict(call=code_of(func), data=code_of(receiver),
                                               axis=code_of(axis)))

    def _has_a_dimension(self, value: cst.BaseExpression, depth: int = 0) -> bool:
        """Whether the code shows `value` has at least one dimension: a list or tuple
        literal, a known shape, a name every binding of which makes a 1-d array or one of
        the constructors above."""
        if isinstance(value, (cst.List, cst.Tuple, cst.ListComp)):
            return True
        if depth > 8:
            return False
        flow = self.analysis.dataflow
        shape = static_shape(flow, value)
        if shape is not None:
            return len(shape) >= 1
        if isinstance(value, cst.Subscript) and any(
                isinstance(e.slice, cst.Slice) or _is_newaxis(e.slice.value) for e in value.slice):
            return True  # `m[:, None]`: a slice or a new axis is a dimension (a 0-d m raises)
        if isinstance(value, cst.BinaryOperation) and not isinstance(value.operator, cst.MatrixMultiply):
            return self._has_a_dimension(value.left, depth + 1) \
                or self._has_a_dimension(value.right, depth + 1)  # broadcasting keeps the most
        if isinstance(value, cst.UnaryOperation):
            return self._has_a_dimension(value.expression, depth + 1)
        if isinstance(value, cst.Call):
            ref = flow.collector.ref_by_call.get(value)
            if ref is not None and ref.qualname in ("numpy.array", "numpy.asarray") and value.args:
                return self._has_a_dimension(value.args[0].value, depth + 1)  # np.array([...])
            if ref is not None:
                return ref.qualname in _ONE_D_OR_MORE and bool(value.args)
            func = value.func
            if not isinstance(func, cst.Attribute):
                return False
            if func.attr.value in ("ravel", "flatten"):
                return True
            if func.attr.value == "reshape":  # x.reshape(2, 3), x.reshape((n, -1))
                shape = [a.value for a in value.args if a.keyword is None and not a.star]
                return len(shape) > 1 or (len(shape) == 1 and (
                    isinstance(shape[0], (cst.Integer, cst.UnaryOperation))
                    or isinstance(shape[0], (cst.Tuple, cst.List)) and bool(shape[0].elements)))
            if func.attr.value in ("astype", "copy"):
                return self._has_a_dimension(func.value, depth + 1)
            return False
        if isinstance(value, cst.Name):
            if flow.one_dimensional(value):
                return True
            values, aug = flow.name_values(value)
            return bool(values) and not aug and all(
                isinstance(v, cst.CSTNode) and self._has_a_dimension(v, depth + 1) for v, _ in values)
        return False


def _is_newaxis(index: cst.BaseExpression) -> bool:
    """`None` or `np.newaxis` as an index."""
    return (isinstance(index, cst.Name) and index.value == "None") \
        or (isinstance(index, cst.Attribute) and index.attr.value == "newaxis")
