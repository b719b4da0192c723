"""Lists and tuples where a JAX function wants an array."""

from __future__ import annotations

import libcst as cst

from np2jax.checks import Rule, code_of

_SEQUENCE_LITERALS = (cst.List, cst.Tuple, cst.ListComp)


class ListArgument(Rule):
    code = "NJ110"

    def run(self):
        jnp = self.analysis.jnp_alias
        for ref in self.analysis.refs:
            if not ref.converted or ref.call is None:
                continue
            for argument in ref.arguments:
                value = argument.arg.value
                if argument.role != "array" or not isinstance(value, _SEQUENCE_LITERALS):
                    continue
                yield self.report(
                    value, function=code_of(ref.node), argument=code_of(value),
                    fix=lambda node, jnp=jnp: cst.Call(
                        func=cst.Attribute(cst.Name(jnp), cst.Name("array")),
                        args=[cst.Arg(node)]),
                    imports=[("jax.numpy", jnp)], requires=ref.node)
