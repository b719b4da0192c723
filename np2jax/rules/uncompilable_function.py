"""NJ502 uncompilable-function.

With --jit: a function left uncompiled, with the reason (I/O, prints, globals, host
conversions, data-dependent shapes, Python control flow on arrays, calls that cannot be
traced).
"""

from __future__ import annotations

from np2jax.rules._jit import JitRule


class UncompilableFunction(JitRule):
    code = "NJ502"

    def run(self):
        for plan in self.plans():
            if not plan.compiled:
                yield self.report(plan.function.name, function=plan.function.name.value,
                                  reason=plan.reason)
