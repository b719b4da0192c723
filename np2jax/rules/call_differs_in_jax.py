"""NJ103 call-differs-in-jax.

A NumPy/SciPy call whose arguments JAX's version was not proven, by running both, to compute
alike stays on NumPy.
"""

from __future__ import annotations

from np2jax.analysis import facts
from np2jax.rules.base import Rule
from np2jax.syntax import code_of


class CallDiffersInJax(Rule):
    code = "NJ103"

    def run(self):
        """The analysis planned these references to stay on NumPy: the API table proven by
        running NumPy/SciPy and JAX side by side (rules/api/proven.json) shows JAX's version
        computes this call differently (an argument's value, one left to NumPy's default, a
        parameter JAX requires, the result's dtype or structure), or it proved nothing for
        an argument given. The detail names the argument."""
        for ref in self.analysis.refs:
            if ref.keep in (facts.KEEP_PROVEN_DIFFERENT, facts.KEEP_UNPROVEN):
                yield self.report(ref.node, name=code_of(ref.node), reason=ref.detail)
