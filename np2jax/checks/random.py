"""NumPy's random number APIs: no global state in JAX; kept on NumPy and reported."""

from __future__ import annotations

from np2jax import analyze
from np2jax.checks import Rule, code_of


class NumpyRandom(Rule):
    code = "NJ301"

    def run(self):
        for ref in self.analysis.refs:
            if ref.keep == analyze.KEEP_RANDOM:
                yield self.report(ref.node, name=code_of(ref.node))
