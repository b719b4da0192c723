"""NJ301 numpy-random.

NumPy's random APIs (global state, Generator, RandomState) that are not converted to
jax.random keys (NJ302), with the reason.
"""

from __future__ import annotations

import libcst as cst

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
        yield from self._probabilities(converted, {s.name for s in self.analysis.random_states
                                                    if s.refused is not None})
        for call in self.analysis.random_shuffles:
            if call not in converted:
                extra = _IN_PLACE
                if call in refused:
                    extra += f"; not converted to jax.random: {refused[call]}"
                yield self.report(call, name=code_of(call.func), extra=extra)

    def _probabilities(self, converted: set, kept: set):
        """`rng.choice(n, p=probs)` left on NumPy with `probs` a JAX array: NumPy checks that
        the probabilities sum to 1 within float32's tolerance only for a NumPy float32
        array (`isinstance(p, np.ndarray)`), float64's otherwise, so float32 JAX
        probabilities (the 32-bit mode) raised "probabilities do not sum to 1". Given as
        `np.asarray(probs)`, unlisted (the call's own finding says it stays NumPy)."""
        flow = self.analysis.dataflow
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if call in converted or not isinstance(func, cst.Attribute) \
                    or func.attr.value != "choice" or code_of(func.value) not in kept | {"np.random"}:
                continue
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "p" and flow.jax_typed(arg.value):
                    alias, needed = self.analysis.numpy_alias

                    def fix(node, alias=alias):
                        return cst.Call(cst.Attribute(cst.Name(alias), cst.Name("asarray")),
                                        [cst.Arg(node)])
                    yield self.report(arg.value, name=code_of(func), extra="", fix=fix,
                                      imports=(needed,) if needed else (),
                                      requires=flow.jax_refs(arg.value), report_if_unfixed=False,
                                      listed=False, boundary=True)
