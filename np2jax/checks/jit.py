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


class CompilableFunction(Rule):
    code = "NJ501"

    def run(self):
        if not self.config.jit:
            return
        from np2jax.jit import jit_plans

        for plan in jit_plans(self.analysis):
            if not plan.compiled:
                continue
            decorator = _decorator(plan.static)
            imports = [("jax", None)] + ([("functools", None)] if plan.static else [])
            yield self.report(plan.function, function=plan.function.name.value,
                              outcome=f"is compiled with `{decorator}`",
                              fix=lambda node, d=decorator: _decorate(node, d),
                              imports=imports, requires=plan.requires + tuple(
                                  r.node for r in plan.rewrites))


class UncompiledFunction(Rule):
    code = "NJ502"

    def run(self):
        if not self.config.jit:
            return
        from np2jax.jit import jit_plans

        for plan in jit_plans(self.analysis):
            if not plan.compiled:
                yield self.report(plan.function.name, function=plan.function.name.value,
                                  reason=plan.reason)


class _CompiledRewrite(Rule):
    """A rewrite inside a function NJ501 compiles; it stands or falls with the decoration."""

    def run(self):
        if not self.config.jit:
            return
        from np2jax.jit import jit_plans

        for plan in jit_plans(self.analysis):
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
