"""--jit: loops of compiled functions beyond lax.fori_loop (np2jax.jit.scan)."""

from __future__ import annotations

from np2jax.checks.jit import _JitRule


class LoopAppendingHistory(_JitRule):
    """for i in range(n) collecting a list of values: lax.scan, or why it stays Python."""

    code = "NJ510"

    def run(self):
        for plan in self.plans():
            if not plan.compiled:
                continue
            for loop in plan.loops:
                if loop.code != self.code:
                    continue
                names = ", ".join(f"`{h.name}`" for h in loop.histories)
                reason = loop.reason
                if not reason and loop.widens and self.config.x64:
                    reason = ("with --x64 an update `x += y` of a carried array may widen its "
                              "dtype (float32 + float64), which lax.scan refuses")
                if reason:
                    yield self.report(loop.node, spelled=loop.spelled, lists=names,
                                      function=plan.function.name.value,
                                      outcome=f"stays a Python loop, unrolled while compiling "
                                              f"(the list is filled while tracing): {reason}",
                                      requires=(plan.function,))
                    continue
                carried = ", ".join(f"`{name}`" for name in loop.carried) or "nothing"
                outcome = f"becomes `jax.lax.scan`, carrying {carried}"
                if loop.exit == "continue":
                    outcome += ("; after its `continue` test the rest of the body runs and "
                                "its changes are dropped where the test holds")
                yield self.report(loop.node, spelled=loop.spelled, lists=names,
                                  function=plan.function.name.value,
                                  outcome=outcome,
                                  fix=loop.fix, imports=[("jax", None), (
                                      "jax.numpy", self.analysis.jnp_alias)],
                                  requires=(plan.function,), report_if_unfixed=False)
