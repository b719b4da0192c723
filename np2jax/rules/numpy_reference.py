"""NJ101 numpy-reference.

A NumPy or SciPy name that JAX provides is rewritten to jax.numpy / jax.scipy.
"""

from __future__ import annotations

from functools import cache

import libcst as cst

from np2jax.analysis.references import call_site, jax_spelling
from np2jax.catalog import api_policy, api_proof, api_table
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates


@cache
def _jax_modules() -> frozenset[str]:
    """The JAX modules of the API table: jax.scipy.signal, jax.scipy.spatial.transform..."""
    return frozenset(entry["jax"] for entry in api_table().values()
                     if entry.get("kind") == "module" and entry.get("jax"))


def jax_expression(jax_path: str, jnp_alias: str) -> tuple[str, tuple[str, str | None]]:
    """The source text naming `jax_path` and the import it needs."""
    if jax_path == "jax.numpy" or jax_path.startswith("jax.numpy."):
        return jnp_alias + jax_path[len("jax.numpy"):], ("jax.numpy", jnp_alias)
    # jax.scipy.<module>.<name>: spelled in full, importing the deepest module that holds
    # the name (`import jax.scipy.spatial` does not load jax.scipy.spatial.transform).
    parts = jax_path.split(".")
    for end in range(len(parts) - 1, 2, -1):
        if ".".join(parts[:end]) in _jax_modules():
            return jax_path, (".".join(parts[:end]), None)
    return jax_path, (".".join(parts[:3]), None)


class NumpyReference(Rule):
    code = "NJ101"

    def run(self):
        renames = api_policy()["keyword_renames"]
        for ref in self.analysis.refs:
            if not ref.converted:
                continue
            if ref.computed_by_numpy:
                yield from self._computed_by_numpy(ref)
                continue
            text, needed = jax_expression(ref.jax_path, self.analysis.jnp_alias)
            replacement = cst.parse_expression(text)
            # Dropped only when a fix that needs it is dropped: then the code stays NumPy.
            yield self.report(ref.node, old=code_of(ref.node), new=text,
                              fix=lambda _node, new=replacement: new, imports=[needed],
                              report_if_unfixed=False,
                              moves=(call_site(ref, self.analysis.parents),))
            yield from self._jax_only_options(ref)
            yield from self._respelled_options(ref)
            for argument in ref.arguments:
                keyword = argument.arg.keyword
                new_name = renames.get(ref.qualname, {}).get(keyword.value) if keyword else None
                if new_name is not None:
                    yield self.report(keyword, old=keyword.value, new=new_name,
                                      fix=lambda node, name=new_name: node.with_changes(value=name),
                                      requires=ref.node, report_if_unfixed=False)

    def _respelled_options(self, ref):
        """An option value JAX refuses but spells otherwise, where running both proved JAX so
        given computes NumPy's result (`np.argsort(x, kind="stable")` is `jnp.argsort(x,
        stable=True)`): the argument is written as JAX spells it."""
        for argument in ref.arguments:
            spelling = jax_spelling(ref.qualname, argument)
            if spelling is None:
                continue
            yield self.report(argument.arg, old=code_of(argument.arg), new=spelling,
                              fix=updates.spelled_keyword(spelling),
                              requires=ref.node, report_if_unfixed=False)

    def _jax_only_options(self, ref):
        """The options of JAX's version alone with which running both proved it NumPy's
        (the table's `jax_kwargs`: `jnp.linalg.eigh(a, symmetrize_input=False)` reads one
        triangle, as NumPy does, where JAX's default averages both), added to the call."""
        options = (api_proof().get(ref.qualname) or {}).get("jax_kwargs", {})
        given = {a.keyword.value for a in ref.call.args if a.keyword is not None} if ref.call else set()
        missing = {name: value for name, value in options.items() if name not in given}
        if ref.call is None or not missing:
            return

        def fix(node: cst.Call) -> cst.Call:
            for name, value in missing.items():
                node = updates.with_keyword(node, name, cst.parse_expression(repr(value)))
            return node

        yield self.report(ref.call, old=code_of(ref.call), new=code_of(fix(ref.call)), fix=fix,
                          requires=ref.node, report_if_unfixed=False, listed=False)

    def _computed_by_numpy(self, ref):
        """`np.linspace(...)` -> `jnp.asarray(np.linspace(...))`: NumPy's grid, as a JAX array.
        The finding is on the name, as for every other reference (what depends on the
        conversion requires it); the wrapping of the call goes with it."""
        jnp = self.analysis.jnp_alias
        wrapper = cst.parse_expression(f"{jnp}.asarray")
        yield self.report(ref.node, old=code_of(ref.call), new=f"{jnp}.asarray({code_of(ref.call)})",
                          fix=lambda node: node, imports=[("jax.numpy", jnp)],
                          report_if_unfixed=False)  # NumPy computes it: kept on purpose
        yield self.report(ref.call, old=code_of(ref.call), new=f"{jnp}.asarray({code_of(ref.call)})",
                          fix=lambda node: cst.Call(func=wrapper, args=[cst.Arg(node.with_changes(lpar=[], rpar=[]))]),
                          requires=ref.node, report_if_unfixed=False, listed=False)
