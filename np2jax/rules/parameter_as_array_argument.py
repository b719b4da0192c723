"""NJ111 parameter-as-array-argument.

A function parameter passed where JAX wants an array is wrapped in jnp.asarray(...).
"""

from __future__ import annotations

import libcst as cst

from np2jax.catalog import api_policy
from np2jax.rules._arguments import as_array
from np2jax.rules.base import Rule
from np2jax.syntax import code_of


def _subscripted_name(value: cst.BaseExpression) -> cst.Name | None:
    """The name under `values[::-1]`, `rows[0][1:]`: what the subscripts are taken of."""
    while isinstance(value, cst.Subscript):
        value = value.value
    return value if isinstance(value, cst.Name) else None


class ParameterAsArrayArgument(Rule):
    """`def compose(T, R, Z): ... np.diag(Z)`: callers may pass a list or a tuple, which NumPy
    converts and JAX refuses. A parameter passed where JAX wants an array (and never rebound)
    is wrapped in jnp.asarray(...), which converts it as NumPy does and returns an array
    unchanged. A subscript of one (`np.roots(values[::-1])`) is wrapped whole,
    `jnp.asarray(values[::-1])`: the subscript is still taken of what the caller passed, a
    list's or a NumPy array's, with its errors (an index out of range raises, where a JAX
    array's would clamp), and only its result is converted."""

    code = "NJ111"

    def run(self):
        lists = api_policy()["lists"]
        writers = set(api_policy()["in_place_functions"])
        dataflow = self.analysis.dataflow
        jnp = self.analysis.jnp_alias
        for ref in self.analysis.refs:
            if not ref.jax_takes_arguments or ref.qualname in writers or ref.out_arg is not None:
                continue
            static = set(lists["static_parameters"].get(ref.qualname, ()))
            for argument in ref.arguments:
                value = argument.arg.value
                if argument.role != "array" or argument.name in static:
                    continue
                name = _subscripted_name(value)
                if name is None or not dataflow.may_hold_argument(name):
                    continue
                yield self.report(value, argument=code_of(value), call=code_of(ref.node),
                                  fix=as_array(jnp), imports=[("jax.numpy", jnp)],
                                  requires=(ref.node,), report_if_unfixed=False)
