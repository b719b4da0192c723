"""The value classes of the --jit analysis, and how they combine.

Every expression of a function is classified as
  STATIC  a hashable Python value known while tracing (literals, shapes, range counters,
          parameters that every call site passes as a hashable Python value),
  ARRAY   an array (a tracer under jit),
  MIXED   either (a name bound to both),
  LIST    a Python list/dict/set (usable where Python values are wanted, not hashable),
  UNKNOWN anything else.
None stands for a class not known yet (a name bound later in a loop, while the classes
settle).
"""

from __future__ import annotations

STATIC, ARRAY, MIXED, LIST, UNKNOWN = "static", "array", "mixed", "list", "unknown"
MAY_BE_ARRAY = (ARRAY, MIXED)
PYTHON = (STATIC, LIST)
# NumPy functions kept on NumPy (policy.toml keep_numpy) whose result is STATIC for an
# ARRAY too: they read a tracer's `.shape` (np.shape(x), np.ndim(x), np.size(x, 0))
TRACER_SHAPE_QUESTIONS = frozenset({"numpy.shape", "numpy.ndim", "numpy.size"})


def join(a: str | None, b: str | None) -> str | None:
    """The class of a name bound to a value of class `a` and one of class `b`."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    if a in (STATIC, ARRAY, MIXED) and b in (STATIC, ARRAY, MIXED):
        return MIXED
    return UNKNOWN


def arith(a: str | None, b: str | None) -> str | None:
    """The class of arithmetic (or a comparison) on values of classes `a` and `b`."""
    if a is None or b is None:
        return None  # an operand not known yet (while settling): nor is the result
    if UNKNOWN in (a, b) or LIST in (a, b):
        return UNKNOWN
    if ARRAY in (a, b):
        return ARRAY
    if MIXED in (a, b):
        return MIXED
    return STATIC


def pytree(kinds: list) -> str:
    """The class of a tuple or dict of these: ARRAY when all are arrays, MIXED when some may
    be Python values (jax.jit would return those as arrays)."""
    if all(k == ARRAY for k in kinds):
        return ARRAY
    return MIXED if all(k in MAY_BE_ARRAY for k in kinds) else UNKNOWN
