"""NJ101 numpy-reference.

A NumPy or SciPy name that JAX provides is rewritten to jax.numpy / jax.scipy.
"""

from __future__ import annotations

import libcst as cst

from np2jax.catalog import api_policy
from np2jax.rules.base import Rule
from np2jax.syntax import code_of


def jax_expression(jax_path: str, jnp_alias: str) -> tuple[str, tuple[str, str | None]]:
    """The source text naming `jax_path` and the import it needs."""
    if jax_path == "jax.numpy" or jax_path.startswith("jax.numpy."):
        return jnp_alias + jax_path[len("jax.numpy"):], ("jax.numpy", jnp_alias)
    # jax.scipy.<module>.<name>: spelled in full, importing the submodule.
    parts = jax_path.split(".")
    return jax_path, (".".join(parts[:3]), None)


class NumpyReference(Rule):
    code = "NJ101"

    def run(self):
        renames = api_policy()["keyword_renames"]
        for ref in self.analysis.refs:
            if not ref.converted:
                continue
            text, needed = jax_expression(ref.jax_path, self.analysis.jnp_alias)
            replacement = cst.parse_expression(text)
            # Dropped only when a fix that needs it is dropped: then the code stays NumPy.
            yield self.report(ref.node, old=code_of(ref.node), new=text,
                              fix=lambda _node, new=replacement: new, imports=[needed],
                              report_if_unfixed=False)
            for argument in ref.arguments:
                keyword = argument.arg.keyword
                new_name = renames.get(ref.qualname, {}).get(keyword.value) if keyword else None
                if new_name is not None:
                    yield self.report(keyword, old=keyword.value, new=new_name,
                                      fix=lambda node, name=new_name: node.with_changes(value=name),
                                      requires=ref.node, report_if_unfixed=False)
