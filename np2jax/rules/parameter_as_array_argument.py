"""NJ111 parameter-as-array-argument.

A function parameter passed where JAX wants an array is wrapped in jnp.asarray(...).
"""

from __future__ import annotations

import libcst as cst

from np2jax.catalog import api_policy
from np2jax.rules._arguments import as_array
from np2jax.rules.base import Rule
from np2jax.syntax import code_of


class ParameterAsArrayArgument(Rule):
    """`def compose(T, R, Z): ... np.diag(Z)`: callers may pass a list or a tuple, which NumPy
    converts and JAX refuses. A parameter passed where JAX wants an array (and never rebound)
    is wrapped in jnp.asarray(...), which converts it as NumPy does and returns an array
    unchanged."""

    code = "NJ111"

    def run(self):
        lists = api_policy()["lists"]
        writers = set(api_policy()["in_place_functions"])
        dataflow = self.analysis.dataflow
        jnp = self.analysis.jnp_alias
        for ref in self.analysis.refs:
            if not ref.converted or ref.qualname in writers or ref.out_arg is not None:
                continue
            static = set(lists["static_parameters"].get(ref.qualname, ()))
            for argument in ref.arguments:
                value = argument.arg.value
                if argument.role != "array" or argument.name in static \
                        or not isinstance(value, cst.Name) or not dataflow.may_hold_argument(value):
                    continue
                yield self.report(value, argument=value.value, call=code_of(ref.node),
                                  fix=as_array(jnp), imports=[("jax.numpy", jnp)],
                                  requires=(ref.node,), report_if_unfixed=False)
