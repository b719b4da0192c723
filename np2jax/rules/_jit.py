"""The --jit rules' bases: each reads the per-function plans of np2jax.jit.

np2jax.jit tags each rewrite and loop verdict with a kind (np2jax.jit.RewriteKind, whose
values the rules spell: a rule module must not import np2jax.jit, which a check without
--jit never loads); a rule reports the kinds in its `kinds`. Each kind is reported by one
rule (tests/jit/test_jit.py checks it).
"""

from __future__ import annotations

from typing import ClassVar

from np2jax.rules.base import Rule


class JitRule(Rule):
    """A rule of --jit: it reads the per-function plans of np2jax.jit (nothing without jit)."""

    kinds: ClassVar[tuple[str, ...]] = ()  # the values of the RewriteKinds it reports

    def plans(self):
        return self.context.jit_plans if self.config.jit else []


class CompiledRewrite(JitRule):
    """A rewrite of one of its `kinds` inside a function NJ501 compiles; it stands or falls
    with the decoration."""

    def run(self):
        for plan in self.plans():
            for rewrite in plan.rewrites:
                if rewrite.kind in self.kinds:
                    yield self.report(rewrite.node, spelled=rewrite.spelled,
                                      function=plan.function.name.value, fix=rewrite.fix,
                                      imports=[("jax", None), ("jax.numpy", self.analysis.jnp_alias)],
                                      requires=(plan.function,), report_if_unfixed=False)


class LoopRule(JitRule):
    """A verdict on the range() loops of compiled functions of one of its `kinds`: the
    compiled loop it becomes, or why it stays a Python loop (unrolled while compiling)."""

    def fields(self, loop) -> dict:
        return {}

    def becomes(self, loop) -> str:
        raise NotImplementedError

    def run(self):
        for plan in self.plans():
            if not plan.compiled:
                continue
            for loop in plan.loops:
                if loop.kind not in self.kinds:
                    continue
                fields = {"spelled": loop.spelled, "function": plan.function.name.value,
                          **self.fields(loop)}
                reason = loop.reason
                if not reason and loop.widens and self.config.x64:
                    reason = ("with 64-bit types an update `x += y` of a carried array may widen "
                              "its dtype (float32 + float64), which a compiled loop refuses")
                if reason:
                    yield self.report(loop.node, outcome=f"stays a Python loop, unrolled while "
                                                         f"compiling: {reason}",
                                      requires=(plan.function,), **fields)
                    continue
                outcome = self.becomes(loop)
                if loop.exit == "break":
                    outcome += " and a flag that its `break` sets"
                elif loop.exit == "continue":
                    outcome += ("; after its `continue` test the rest of the body runs and "
                                "its changes are dropped where the test holds")
                imports = [("jax", None)]
                if loop.exit or loop.histories:  # jnp.where, jnp.arange, ...
                    imports.append(("jax.numpy", self.analysis.jnp_alias))
                yield self.report(loop.node, outcome=outcome, fix=loop.fix, imports=imports,
                                  requires=(plan.function,), report_if_unfixed=False, **fields)
