"""NJ407 zero-d-axis.

A reduction over axis 0 or -1 of a value that may be 0-d: NumPy returns the value itself,
JAX raises; rewritten through jnp.atleast_1d.
"""

from __future__ import annotations

import libcst as cst

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


class ZeroDAxis(Rule):
    code = "NJ407"

    def run(self):
        """`np.sum(x, axis=-1)` (and the functions of ZERO_D_AXIS) converted, with axis 0 or
        -1 written as a literal, of data the analysis does not show to have a dimension:
        `jnp.sum(jnp.atleast_1d(x), axis=-1)`, which is the same array for a 1-d or larger
        `x` and NumPy's result for a 0-d one. `keepdims=` other than False is left (NumPy
        gives a 0-d result there, atleast_1d a 1-d one)."""
        jnp = self.analysis.jnp_alias
        for ref in self.analysis.refs:
            if not ref.converted or ref.call is None or ref.qualname not in ZERO_D_AXIS:
                continue
            by_name = {a.name: a for a in ref.arguments if a.name is not None}
            axis, data = by_name.get("axis"), ref.arguments[0] if ref.arguments else None
            if axis is None or data is None or data is axis or data.arg.star \
                    or (data.arg.keyword is not None and data.arg.keyword.value != "a"):
                continue
            if not _axis_zero_or_last(axis.arg.value):
                continue
            keepdims = by_name.get("keepdims")
            if keepdims is not None and not (isinstance(keepdims.arg.value, cst.Name)
                                             and keepdims.arg.value.value == "False"):
                continue
            if self._has_a_dimension(data.arg.value):
                continue

            def fix(arg: cst.Arg) -> cst.Arg:
                return arg.with_changes(value=updates.jnp_call(jnp, "atleast_1d", arg.value))

            yield self.report(data.arg, fix=fix, requires=(ref.node,),
                              imports=[("jax.numpy", jnp)], report_if_unfixed=False,
                              call=code_of(ref.node), data=code_of(data.arg.value),
                              axis=code_of(axis.arg.value))
        yield from self._methods()

    def _methods(self):
        """`v.sum(axis=-1)` (the methods of METHODS) with axis 0 or -1 written as a literal,
        of a receiver that is a JAX array once converted (no parameter trusted: a NumPy
        array made a JAX one would reach NumPy code) and not shown to have a dimension:
        `jnp.atleast_1d(v).sum(axis=-1)`."""
        jnp = self.analysis.jnp_alias
        flow = self.analysis.dataflow
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in METHODS \
                    or self.analysis.ref_of_call(call) is not None or any(a.star for a in call.args):
                continue
            keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
            positional = [a.value for a in call.args if a.keyword is None]
            axis = keywords.get("axis", positional[0] if positional else None)
            if axis is None or not _axis_zero_or_last(axis):
                continue
            keepdims = keywords.get("keepdims")
            if keepdims is not None and not (isinstance(keepdims, cst.Name)
                                             and keepdims.value == "False"):
                continue
            if len(positional) > (1 if func.attr.value in ("argmax", "argmin", "squeeze",
                                                          "argsort") else 3):
                continue  # an out= by position: NJ204's
            receiver = func.value
            if not flow.jax_typed(receiver, certain=True) or self._has_a_dimension(receiver):
                continue

            def fix(node: cst.Attribute) -> cst.Attribute:
                inner = node.value.with_changes(lpar=[], rpar=[]) \
                    if isinstance(node.value, (cst.Comparison, cst.BinaryOperation)) else node.value
                return node.with_changes(value=updates.jnp_call(jnp, "atleast_1d", inner))

            yield self.report(func, fix=fix, requires=flow.jax_refs(receiver, certain=True),
                              imports=[("jax.numpy", jnp)], report_if_unfixed=False,
                              call=code_of(func), data=code_of(receiver),
                              axis=code_of(axis))

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
        if isinstance(value, cst.Call):
            ref = flow.collector.ref_by_call.get(value)
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
