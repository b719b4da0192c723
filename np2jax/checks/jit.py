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


class _LoopRule(_JitRule):
    """A verdict on the range() loops of compiled functions whose `code` is this rule's: the
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
                if loop.code != self.code:
                    continue
                fields = {"spelled": loop.spelled, "function": plan.function.name.value,
                          **self.fields(loop)}
                reason = loop.reason
                if not reason and loop.widens and self.config.x64:
                    reason = ("with --x64 an update `x += y` of a carried array may widen its "
                              "dtype (float32 + float64), which a compiled loop refuses")
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


class LoopCarryingState(_LoopRule):
    """for i in range(n) in a compiled function: lax.fori_loop (lax.while_loop with a
    `break`), or why it stays a Python loop."""

    code = "NJ506"

    def becomes(self, loop) -> str:
        carried = ", ".join(f"`{name}`" for name in loop.carried)
        loop_kind = "while_loop" if loop.exit == "break" else "fori_loop"
        return f"becomes `jax.lax.{loop_kind}`, carrying {carried}"


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
