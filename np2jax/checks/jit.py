"""--jit: compile with jax.jit the functions the analysis proves traceable (np2jax.jit)."""

from __future__ import annotations

import libcst as cst

from np2jax.checks import Rule


def _decorator(static: tuple) -> str:
    if not static:
        return "jax.jit"
    names = ", ".join(f'"{name}"' for name in static)
    return f"functools.partial(jax.jit, static_argnames=({names}{',' if len(static) == 1 else ''}))"


def _decorate(function: cst.FunctionDef, decorator: str) -> cst.FunctionDef:
    new = cst.Decorator(cst.parse_expression(decorator))
    return function.with_changes(decorators=[new, *function.decorators])


class _JitRule(Rule):
    """A rule of --jit: it reads the per-function plans of np2jax.jit (nothing without jit)."""

    def plans(self):
        if not self.config.jit:
            return []
        from np2jax.jit import jit_plans  # loaded only when --jit is on

        return jit_plans(self.analysis)


class CompilableFunction(_JitRule):
    code = "NJ501"

    def run(self):
        for plan in self.plans():
            if not plan.compiled:
                continue
            decorator = _decorator(plan.static)
            imports = [("jax", None)] + ([("functools", None)] if plan.static else [])
            yield self.report(plan.function, function=plan.function.name.value,
                              outcome=f"is compiled with `{decorator}`",
                              fix=lambda node, d=decorator: _decorate(node, d),
                              imports=imports, requires=plan.requires + tuple(
                                  r.node for r in plan.rewrites))


class UncompiledFunction(_JitRule):
    code = "NJ502"

    def run(self):
        for plan in self.plans():
            if not plan.compiled:
                yield self.report(plan.function.name, function=plan.function.name.value,
                                  reason=plan.reason)


class _CompiledRewrite(_JitRule):
    """A rewrite inside a function NJ501 compiles; it stands or falls with the decoration."""

    def run(self):
        for plan in self.plans():
            for rewrite in plan.rewrites:
                if rewrite.code == self.code:
                    yield self.report(rewrite.node, spelled=rewrite.spelled,
                                      function=plan.function.name.value, fix=rewrite.fix,
                                      imports=[("jax", None), ("jax.numpy", self.analysis.jnp_alias)],
                                      requires=(plan.function,), report_if_unfixed=False)


class PrintInCompiledFunction(_CompiledRewrite):
    code = "NJ503"


class MaskReduction(_CompiledRewrite):
    code = "NJ504"


class ArrayIf(_CompiledRewrite):
    code = "NJ505"


class LoopCarryingState(_JitRule):
    """for i in range(n) in a compiled function: lax.fori_loop, or why it stays Python."""

    code = "NJ506"

    def run(self):
        for plan in self.plans():
            if not plan.compiled:
                continue
            for loop in plan.loops:
                if loop.code != self.code:
                    continue  # a loop collecting a history: lax.scan (NJ510)
                reason = loop.reason
                if not reason and loop.widens and self.config.x64:
                    reason = ("with --x64 an update `x += y` of a carried array may widen its "
                              "dtype (float32 + float64), which fori_loop refuses")
                if reason:
                    yield self.report(loop.node, spelled=loop.spelled,
                                      function=plan.function.name.value,
                                      outcome=f"stays a Python loop, unrolled while compiling: "
                                              f"{reason}", requires=(plan.function,))
                    continue
                carried = ", ".join(f"`{name}`" for name in loop.carried)
                outcome = f"becomes `jax.lax.fori_loop`, carrying {carried}"
                if loop.exit == "break":
                    outcome = (f"becomes `jax.lax.while_loop`, carrying {carried} and a flag "
                               "that its `break` sets")
                elif loop.exit == "continue":
                    outcome += ("; after its `continue` test the rest of the body runs and "
                                "its changes are dropped where the test holds")
                yield self.report(loop.node, spelled=loop.spelled,
                                  function=plan.function.name.value,
                                  outcome=outcome,
                                  fix=loop.fix, imports=[("jax", None)],
                                  requires=(plan.function,), report_if_unfixed=False)


class ArrayWhileLoop(_JitRule):
    """while <0-d array test> in a compiled function: lax.while_loop."""

    code = "NJ507"

    def run(self):
        for plan in self.plans():
            for rewrite in plan.rewrites:
                if rewrite.code != self.code:
                    continue
                if rewrite.fix.widens and self.config.x64:
                    # `x += y` may widen float32 to float64, which while_loop refuses: no
                    # rewrite, so the function that needs it stays eager (NJ501 says so)
                    yield self.report(rewrite.node, spelled=rewrite.spelled,
                                      function=plan.function.name.value,
                                      outcome="is left as it was: with --x64 an update "
                                              "`x += y` of a carried array may widen its dtype",
                                      requires=(plan.function,))
                    continue
                yield self.report(rewrite.node, spelled=rewrite.spelled,
                                  function=plan.function.name.value,
                                  outcome="becomes `jax.lax.while_loop`, carrying " + ", ".join(
                                      f"`{name}`" for name in rewrite.fix.carried),
                                  fix=rewrite.fix, imports=[("jax", None)],
                                  requires=(plan.function,), report_if_unfixed=False)
