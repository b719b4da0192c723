"""--jit: loops of compiled functions beyond lax.fori_loop (np2jax.jit.scan)."""

from __future__ import annotations

from np2jax.checks.jit import _LoopRule


class LoopAppendingHistory(_LoopRule):
    """for i in range(n) collecting a list of values: lax.scan, or why it stays Python (the
    list then filled while tracing)."""

    code = "NJ510"

    def fields(self, loop) -> dict:
        return {"lists": ", ".join(f"`{h.name}`" for h in loop.histories)}

    def becomes(self, loop) -> str:
        carried = ", ".join(f"`{name}`" for name in loop.carried) or "nothing"
        return f"becomes `jax.lax.scan`, carrying {carried}"
