"""NJ506 loop-carrying-state.

With --jit: a `for i in range(n)` loop carrying arrays from one iteration to the next, in a
compiled function, becomes `jax.lax.fori_loop`; or the reason it stays a Python loop.
"""

from __future__ import annotations

from np2jax.rules._jit import LoopRule


class LoopCarryingState(LoopRule):
    """for i in range(n) in a compiled function: lax.fori_loop (lax.while_loop with a
    `break`), or why it stays a Python loop."""

    code = "NJ506"
    kinds = ("fori-loop",)

    def becomes(self, loop) -> str:
        carried = ", ".join(f"`{name}`" for name in loop.carried)
        loop_kind = "while_loop" if loop.exit == "break" else "fori_loop"
        return f"becomes `jax.lax.{loop_kind}`, carrying {carried}"
