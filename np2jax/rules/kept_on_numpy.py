"""NJ104 kept-on-numpy.

A function kept on NumPy as written: named by the configuration's `keep-numpy` entries (or
`--keep-numpy`), or by `# np2jax: keep-numpy` on its def line (np2jax.analysis.kept). Its
body keeps every NumPy call (the pipeline applies no fix inside it), and the finding at
its def line says why.
"""

from __future__ import annotations

from np2jax.rules.base import Rule


class KeptOnNumpy(Rule):
    code = "NJ104"

    def run(self):
        for fact in self.analysis.kept_functions.values():
            yield self.report(fact.node.name, name=fact.qualname, reason=fact.reason)
