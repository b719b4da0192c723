"""NJ510 loop-appending-history.

With --jit: a `for i in range(n)` loop that appends one value per iteration (or every k-th)
to a list, in a compiled function, becomes `jax.lax.scan` and the list its stacked output;
or the reason it stays a Python loop.
"""

from __future__ import annotations

from np2jax.rules._jit import LoopRule


class LoopAppendingHistory(LoopRule):
    """for i in range(n) collecting a list of values: lax.scan, or why it stays Python (the
    list then filled while tracing)."""

    code = "NJ510"
    kinds = ("scan",)

    def fields(self, loop) -> dict:
        return {"lists": ", ".join(f"`{h.name}`" for h in loop.histories)}

    def becomes(self, loop) -> str:
        carried = ", ".join(f"`{name}`" for name in loop.carried) or "nothing"
        return f"becomes `jax.lax.scan`, carrying {carried}"
