"""NJ301 numpy-random.

NumPy's random APIs (global state, Generator, RandomState) that are not converted to
jax.random keys (NJ302), with the reason.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis import facts
from np2jax.rules._arguments import as_array
from np2jax.rules.base import Rule
from np2jax.syntax import code_of

_IN_PLACE = "; it shuffles its argument in place, which fails on a JAX array"
# NumPy's constructors of random states and seeders: what they are given as a seed
_SEEDING = frozenset({"numpy.random.default_rng", "numpy.random.seed", "numpy.random.RandomState",
                      "numpy.random.SeedSequence", "numpy.random.PCG64", "numpy.random.PCG64DXSM",
                      "numpy.random.MT19937", "numpy.random.Philox", "numpy.random.SFC64"})


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
        yield from self._seeds(converted)
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
                    yield self.report(arg.value, name=code_of(func), extra="", fix=as_array(alias),
                                      imports=(needed,) if needed else (),
                                      requires=flow.jax_refs(arg.value), report_if_unfixed=False,
                                      listed=False, boundary=True)

    def _seeds(self, converted: set):
        """`np.random.default_rng(seeds[0])` left on NumPy, its seed drawn by a generator
        converted to jax.random (NJ302): NumPy's SeedSequence takes ints and sequences of
        them, not a JAX array ("SeedSequence expects int"), nor a 0-d NumPy one. Given as
        `np.asarray(seed).tolist()`, an int or a list of ints as NumPy's own arrays would
        seed it, unlisted (the call's own finding says it stays NumPy)."""
        flow = self.analysis.dataflow
        for ref in self.analysis.refs:
            call = ref.call
            if ref.qualname not in _SEEDING or call is None or ref.node in converted \
                    or call in converted or not call.args:
                continue
            seed = next((a for a in call.args if a.keyword is not None and a.keyword.value == "seed"),
                        call.args[0] if call.args[0].keyword is None and not call.args[0].star else None)
            if seed is None or not flow.jax_typed(seed.value):
                continue
            alias, needed = self.analysis.numpy_alias

            def fix(node, read=as_array(alias)):
                return cst.Call(cst.Attribute(read(node), cst.Name("tolist")), [])
            yield self.report(seed.value, name=code_of(ref.node), extra="", fix=fix,
                              imports=(needed,) if needed else (),
                              requires=flow.jax_refs(seed.value), report_if_unfixed=False,
                              listed=False, boundary=True)
