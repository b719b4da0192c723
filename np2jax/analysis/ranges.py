"""The range of an integer value, where the code shows it.

`integer_range(expr)` answers (lowest, highest) for an integer value whose every element the
code spells: a literal, `np.arange` of literals, a list or tuple of them, `np.array` of
those, a name bound to one of them in straight-line code; None otherwise. Rules ask it
whether a value can reach an edge where NumPy and JAX differ (an integer exponent of 64 or
more, which JAX's integer power does not read).
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import int_literal

_DEPTH = 12
_ELEMENTWISE = {"array", "asarray"}  # NumPy functions that keep their argument's elements


class Ranges:
    """integer_range for one module; reads the value analysis (`flow`)."""

    def __init__(self, flow) -> None:
        self.flow = flow

    def integer_range(self, node: cst.BaseExpression, depth: int = 0) -> tuple[int, int] | None:
        if depth > _DEPTH:
            return None
        value = int_literal(node)
        if value is not None:
            return value, value
        if isinstance(node, (cst.List, cst.Tuple)):
            parts = [self.integer_range(e.value, depth + 1) for e in node.elements
                     if not isinstance(e, cst.StarredElement)]
            if not parts or len(parts) != len(node.elements) or None in parts:
                return None
            return min(p[0] for p in parts), max(p[1] for p in parts)
        if isinstance(node, cst.Name):
            values, aug_values = self.flow.name_values(node)
            reaching = self.flow.reaching_bindings(node, values or [])
            if len(reaching) != 1 or aug_values or isinstance(reaching[0][0], str):
                return None
            return self.integer_range(reaching[0][0], depth + 1)
        if isinstance(node, cst.Call):
            return self._call(node, depth)
        return None

    def _call(self, call: cst.Call, depth: int) -> tuple[int, int] | None:
        ref = self.flow.collector.ref_by_call.get(call)
        if ref is None or not ref.qualname.startswith("numpy.") or any(a.star for a in call.args):
            return None
        name = ref.qualname.rsplit(".", 1)[-1]
        positional = [a.value for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if name in _ELEMENTWISE and positional and set(keywords) <= {"dtype"}:
            return self.integer_range(positional[0], depth + 1)
        if name != "arange" or set(keywords) - {"dtype"} or not 1 <= len(positional) <= 3:
            return None
        bounds = [int_literal(p) for p in positional]
        if None in bounds:
            return None
        start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
        if step == 0:
            return None
        count = max(0, -(-(stop - start) // step))
        if count == 0:
            return None
        last = start + (count - 1) * step
        return min(start, last), max(start, last)
