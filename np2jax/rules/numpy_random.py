"""NJ301 numpy-random.

NumPy's random APIs (global state, Generator, RandomState) that are not converted to
jax.random keys (NJ302), with the reason.
"""

from __future__ import annotations

from np2jax.analysis import facts
from np2jax.rules.base import Rule
from np2jax.syntax import code_of

_IN_PLACE = "; it shuffles its argument in place, which fails on a JAX array"


class NumpyRandom(Rule):
    code = "NJ301"

    def run(self):
        converted, refused = set(), {}
        for state in self.analysis.random_states:
            for node in state.refs + [d.call for d in state.draws]:
                if state.refused is None:
                    converted.add(node)
                else:
                    refused[node] = state.refused
        for ref in self.analysis.refs:
            if ref.keep == facts.KEEP_RANDOM and ref.node not in converted:
                extra = _IN_PLACE if ref.qualname == "numpy.random.shuffle" else ""
                if ref.node in refused:
                    extra += f"; not converted to jax.random: {refused[ref.node]}"
                yield self.report(ref.node, name=code_of(ref.node), extra=extra)
        for call in self.analysis.random_shuffles:
            if call not in converted:
                extra = _IN_PLACE
                if call in refused:
                    extra += f"; not converted to jax.random: {refused[call]}"
                yield self.report(call, name=code_of(call.func), extra=extra)
