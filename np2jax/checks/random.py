"""NumPy's random number APIs: no global state in JAX; kept on NumPy and reported."""

from __future__ import annotations

from np2jax import analyze
from np2jax.checks import Rule, code_of

_IN_PLACE = "; it shuffles its argument in place, which fails on a JAX array"


class NumpyRandom(Rule):
    code = "NJ301"

    def run(self):
        for ref in self.analysis.refs:
            if ref.keep == analyze.KEEP_RANDOM:
                extra = _IN_PLACE if ref.qualname == "numpy.random.shuffle" else ""
                yield self.report(ref.node, name=code_of(ref.node), extra=extra)
        for call in self.analysis.random_shuffles:
            yield self.report(call, name=code_of(call.func), extra=_IN_PLACE)
