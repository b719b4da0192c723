"""Whether jax.jit can trace a function body unchanged, or with the rewrites recorded.

Every expression of a function is classified (np2jax.jit.lattice) as STATIC (a hashable
Python value known while tracing), ARRAY (a tracer under jit), MIXED (either), LIST (a
Python container) or UNKNOWN. A body traces when: every place that needs a Python value
(shapes, axes, dtypes, range bounds, `if`/`while` tests, `and`/`or`/`not`, host conversions
such as float(x)) gets a STATIC one, or a rewrite makes it need none (a compiled loop, a
masked reduction, jnp.where or lax.cond for an `if`); every call it makes is to converted
NumPy API, array methods, a few builtins or other compiled functions; it writes no globals
and does no I/O. What a whole function and its call sites must also satisfy is decided by
np2jax.jit.plan.

TraceChecker walks one body: np2jax.jit.checker holds its state, and each concern is a
mixin of its own module (statements, loops, calls, expressions).
"""

from __future__ import annotations

from np2jax.jit.calls import CallChecks
from np2jax.jit.expressions import ExpressionChecks
from np2jax.jit.loops import LoopChecks
from np2jax.jit.statements import StatementChecks


class TraceChecker(StatementChecks, LoopChecks, CallChecks, ExpressionChecks):
    """Classifies the names and expressions of one function body (or the module body); with
    `check`, records the first thing jax.jit cannot trace (`violation`) and, in the recorded
    pass, the rewrites, loop verdicts, call sites and required conversions."""
