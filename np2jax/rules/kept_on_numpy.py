"""NJ104 kept-on-numpy.

A function kept on NumPy as written: named by the configuration's `keep-numpy` entries (or
`--keep-numpy`), by `# np2jax: keep-numpy` on its def line, or by a numba decorator
(np2jax.analysis.kept). Its
body keeps every NumPy call (the pipeline applies no fix inside it), and the finding at
its def line says why.
"""

from __future__ import annotations

from np2jax.rules.base import Rule


class KeptOnNumpy(Rule):
    code = "NJ104"

    def run(self):
        for fact in self.analysis.kept_functions.values():
            entry = ("its callers hand it NumPy arrays (numba refuses JAX arrays)" if fact.numba
                     else "JAX arrays its callers pass are read as NumPy arrays at its entry")
            yield self.report(fact.node.name, name=fact.qualname, reason=fact.reason, entry=entry)
