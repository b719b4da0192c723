"""NJ415 rounded-log-or-power.

A log2, log10, exp2 or cbrt rounded to an integer: XLA's results are one ulp off the exact
values NumPy gives at powers and cubes (log2(8) is 2.9999999999999996), and rounding turns
that into another integer.
"""

from __future__ import annotations

import libcst as cst

from np2jax.rules.base import Rule
from np2jax.syntax import code_of


class RoundedLogOrPower(Rule):
    code = "NJ415"

    def run(self):
        """A call of quotients.INEXACT_FUNCTIONS converted to JAX whose result is rounded to
        an integer (the places and the paths of analysis.quotients): `np.floor(np.log2(n))`,
        `int(np.log10(x))`, `np.exp2(k).astype(int)`. Reported once a call; no fix (XLA has
        no correctly rounded log2; `np.frexp` gives the exponent of a power of two
        exactly, which the finding suggests)."""
        quotients = self.analysis.quotients
        nodes = [*self.analysis.nodes(cst.Call), *self.analysis.nodes(cst.BinaryOperation)]
        done: set = set()
        for where, value in quotients.rounded_values(nodes):
            for call in quotients.inexact_calls(value):
                ref = self.analysis.ref_of_call(call)
                if call in done or ref is None or not ref.converted:
                    continue
                done.add(call)
                yield self.report(call, requires=(ref.node,), function=code_of(call.func),
                                  name=ref.qualname.rsplit(".", 1)[-1], rounding=code_of(where))
