"""--jit: `if`/`elif` on array values that become jax.lax.cond / jax.lax.switch
(np2jax.jit.branches); they stand or fall with the decoration NJ501 adds."""

from __future__ import annotations

from np2jax.checks.jit import _CompiledRewrite


class ArrayIfStatement(_CompiledRewrite):
    code = "NJ508"


class IndexSwitch(_CompiledRewrite):
    code = "NJ509"
