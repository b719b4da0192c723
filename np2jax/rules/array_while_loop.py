"""NJ507 array-while-loop.

With --jit: a `while` loop whose test is a 0-d array value, carrying arrays updated in
place, becomes `jax.lax.while_loop`.
"""

from __future__ import annotations

from np2jax.rules._jit import JitRule


class ArrayWhileLoop(JitRule):
    """while <0-d array test> in a compiled function: lax.while_loop."""

    code = "NJ507"
    kinds = ("while-loop",)

    def run(self):
        for plan in self.plans():
            for rewrite in plan.rewrites:
                if rewrite.kind not in self.kinds:
                    continue
                if rewrite.fix.widens and self.config.x64:
                    # `x += y` may widen float32 to float64, which while_loop refuses: no
                    # rewrite, so the function that needs it stays eager (NJ501 says so)
                    yield self.report(rewrite.node, spelled=rewrite.spelled,
                                      function=plan.function.name.value,
                                      outcome="is left as it was: with 64-bit types an "
                                              "update `x += y` of a carried array may widen its "
                                              "dtype",
                                      requires=(plan.function,))
                    continue
                yield self.report(rewrite.node, spelled=rewrite.spelled,
                                  function=plan.function.name.value,
                                  outcome="becomes `jax.lax.while_loop`, carrying " + ", ".join(
                                      f"`{name}`" for name in rewrite.fix.carried),
                                  fix=rewrite.fix, imports=[("jax", None)],
                                  requires=(plan.function,), report_if_unfixed=False)
