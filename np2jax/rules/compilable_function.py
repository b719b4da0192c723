"""NJ501 compilable-function.

With --jit: a function the analysis proves traceable is decorated with `jax.jit`, its
Python-valued parameters made static.
"""

from __future__ import annotations

import libcst as cst

from np2jax.rules._jit import JitRule


def _decorator(static: tuple) -> str:
    if not static:
        return "jax.jit"
    names = ", ".join(f'"{name}"' for name in static)
    return f"functools.partial(jax.jit, static_argnames=({names}{',' if len(static) == 1 else ''}))"


def _decorate(function: cst.FunctionDef, decorator: str) -> cst.FunctionDef:
    """jax.jit goes below the function's own decorators (transparent ones, which only call,
    wrap and inspect what they decorate: np2jax.jit.plan): they run first, eagerly, on
    what callers pass, and hand it to the compiled function."""
    new = cst.Decorator(cst.parse_expression(decorator))
    return function.with_changes(decorators=[*function.decorators, new])


class CompilableFunction(JitRule):
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
