"""NJ409 unstable-sort-ties.

An argsort with NumPy's default sort kind, converted to JAX's stable argsort: where the data
holds equal values, the two order their indices differently. NumPy's default ("quicksort")
promises no order for ties, and NumPy 2's SIMD sorts on x86-64 (AVX2, AVX-512) give one
that is not the stable order even for ten elements; JAX's argsort keeps equal values in
their original order. No rewrite reproduces NumPy's order, so the call converts and is
reported.
"""

from __future__ import annotations

import libcst as cst

from np2jax.rules.base import Rule
from np2jax.syntax import code_of

# keywords that choose the order of ties: given, NumPy's call says what it wants (a `kind`
# keeps the call on NumPy, NJ103; stable=True is JAX's default)
_CHOOSING = frozenset({"kind", "stable"})


class UnstableSortTies(Rule):
    code = "NJ409"

    def run(self):
        for ref in self.analysis.refs:
            if ref.qualname == "numpy.argsort" and ref.converted and ref.call is not None \
                    and not _chooses(ref.call, positional_kind=2):
                yield self.report(ref.call, call=code_of(ref.call))
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "argsort" \
                    and self.analysis.ref_of_call(call) is None \
                    and self.analysis.dataflow.jax_typed(func.value) \
                    and not _chooses(call, positional_kind=1):
                yield self.report(call, call=code_of(call))


def _chooses(call: cst.Call, positional_kind: int) -> bool:
    """Whether the call says how ties are ordered: a `kind`/`stable` keyword, or `kind`
    given positionally (np.argsort(a, -1, "stable"), a.argsort(-1, "stable"))."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return len(positional) > positional_kind or any(
        a.keyword is not None and a.keyword.value in _CHOOSING for a in call.args)
