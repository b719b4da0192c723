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
INT64 = (-2 ** 63, 2 ** 63 - 1)
# Python's integer functions and the first argument from which their result passes int64
# (math.factorial(21) and math.perm(21) > 2**63 - 1; math.comb(67, 33) too)
_GROWING = {"math.factorial": 21, "math.perm": 21, "math.comb": 67}
# SciPy's, when given exact=True (a Python int; a float otherwise)
_GROWING_EXACT = {"scipy.special.factorial": 21, "scipy.special.comb": 67,
                  "scipy.special.perm": 21, "scipy.special.factorial2": 34}
# augmented assignments that grow a Python int past any bound the code shows
_RUNNING_PRODUCTS = (cst.MultiplyAssign, cst.PowerAssign, cst.LeftShiftAssign)
# operators whose Python int result may pass int64 where an operand does
_GROWING_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)
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
            if reaching and not aug_values and all(
                    isinstance(s, cst.For) and s.target is not None and isinstance(s.target, cst.Name)
                    and s.target.value == node.value for _, s in reaching):
                loops = [self._iterated(s.iter, depth + 1) for _, s in reaching]  # for o in range(17)
                return None if None in loops else (min(r[0] for r in loops), max(r[1] for r in loops))
            if len(reaching) != 1 or aug_values or isinstance(reaching[0][0], str):
                return None
            return self.integer_range(reaching[0][0], depth + 1)
        if isinstance(node, cst.Call):
            return self._call(node, depth)
        return None

    def _iterated(self, iterable: cst.BaseExpression, depth: int) -> tuple[int, int] | None:
        """The range of what a `for` over `iterable` binds: `range(...)` of literals, or the
        elements of a value whose range the code shows (`[0, 8, 16]`)."""
        if isinstance(iterable, cst.Call) and self.flow.collector.qualified_names(iterable.func) \
                == {"builtins.range"} and 1 <= len(iterable.args) <= 3 \
                and not any(a.keyword or a.star for a in iterable.args):
            bounds = [int_literal(a.value) for a in iterable.args]
            if None in bounds:
                return None
            start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
            last = start + (max(0, -(-(stop - start) // step)) - 1) * step if step else None
            if last is None or (last - start) * step < 0:
                return None  # an empty range or a step of 0
            return min(start, last), max(start, last)
        return self.integer_range(iterable, depth)

    def _grows_unbounded(self, name: cst.BaseExpression) -> bool:
        """`name` counts up with no bound the code spells: a `while` loop's `n += 1`, or a
        `for` over `range(...)` whose stop is not a literal (`range(k, order)`)."""
        if not isinstance(name, cst.Name):
            return False
        values, aug_values = self.flow.name_values(name)
        if any(isinstance(self.flow.parents.get(v), cst.AugAssign)
               and isinstance(self.flow.parents[v].operator, (cst.AddAssign, cst.MultiplyAssign))
               for v in aug_values or []):
            return True
        return any(isinstance(s, cst.For) and isinstance(s.iter, cst.Call)
                   and self.flow.collector.qualified_names(s.iter.func) == {"builtins.range"}
                   and s.iter.args and int_literal(s.iter.args[-1 if len(s.iter.args) < 3 else 1].value) is None
                   for _, s in values or [])

    def _power_may_pass(self, power: cst.BinaryOperation) -> bool:
        """`b ** e` of Python ints: passes int64 where the ranges the code shows allow it
        (16 ** 16, with o over range(17) and n up to 16), or where the exponent counts up
        with no bound the code spells (`while` counter, `range(k, order)`) and the base may
        be 2 or more in size; a base the code shows within -1..1 never does."""
        base, exponent = self.integer_range(power.left), self.integer_range(power.right)
        if base is not None and max(abs(base[0]), abs(base[1])) <= 1:
            return False
        if exponent is None:
            return self._counts_past(power.right, 63) or self._grows_unbounded(power.right)
        if exponent[1] < 0:
            return False  # a negative exponent makes a float
        if base is None:
            return exponent[1] >= 63
        largest = max(abs(base[0]), abs(base[1])) ** min(exponent[1], 64)
        return not INT64[0] <= largest <= INT64[1]

    def may_pass_int64(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """Whether `node`, a Python int, may lie outside int64 (which JAX cannot take as a
        weakly typed operand: OverflowError): a literal that does, `math.factorial(n)` (also
        math.perm, math.comb and SciPy's with exact=True) unless the code shows n below
        where the result passes, `b ** e` that may (_power_may_pass), a sum, difference, product
        or floor quotient with one of those, or a name bound to one."""
        if depth > _DEPTH:
            return False
        value = int_literal(node)
        if value is not None:
            return not INT64[0] <= value <= INT64[1]
        if isinstance(node, cst.Call) and node.args and node.args[0].keyword is None \
                and not node.args[0].star:
            names = self.flow.collector.qualified_names(node.func)
            exact = any(a.keyword is not None and a.keyword.value == "exact"
                        and isinstance(a.value, cst.Name) and a.value.value == "True"
                        for a in node.args)
            growing = {**_GROWING, **(_GROWING_EXACT if exact else {})}
            threshold = next((growing[n] for n in names if n in growing), None)
            if threshold is None:
                return False
            found = self.integer_range(node.args[0].value)
            return found is None or found[1] >= threshold
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Power):
            return self._power_may_pass(node)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _GROWING_OPERATORS):
            # one side may pass, the other an integer too (`math.factorial(n) * 2`, not `w * ...`)
            left, right = (self.may_pass_int64(side, depth + 1) for side in (node.left, node.right))
            return (left or right) and all(
                passes or self.integer_range(side, depth + 1) is not None
                and not isinstance(side, (cst.List, cst.Tuple))  # `[v] * inner`: a list
                for passes, side in ((left, node.left), (right, node.right)))
        if isinstance(node, cst.Name):
            values, aug_values = self.flow.name_values(node)
            reaching = self.flow.reaching_bindings(node, values or [])
            if any(isinstance(v, cst.BaseExpression) and self.may_pass_int64(v, depth + 1)
                   for v, _ in reaching):
                return True
            # `fact *= k` (in a loop, a product with no bound the code shows), `n += big`
            ints = bool(reaching) and all(int_literal(v) is not None for v, _ in reaching)
            return any(isinstance(self.flow.parents.get(v), cst.AugAssign) and (
                ints and isinstance(self.flow.parents[v].operator, _RUNNING_PRODUCTS)
                or self.may_pass_int64(v, depth + 1)) for v in aug_values or [])
        return False

    def _counts_past(self, name, bound: int) -> bool:
        """`name` is a `for` loop's variable over `range(...)` whose stop the code spells and
        passes `bound` (`for n in range(start, 72)`)."""
        if not isinstance(name, cst.Name):
            return False
        values, _ = self.flow.name_values(name)
        loops = [s for v, s in values if isinstance(s, cst.For)]
        return bool(loops) and len(loops) == len(values) and any(
            isinstance(loop.iter, cst.Call) and self.flow.collector.qualified_names(loop.iter.func)
            == {"builtins.range"} and len(loop.iter.args) in (1, 2)
            and (stop := int_literal(loop.iter.args[-1].value)) is not None and stop - 1 > bound
            for loop in loops)

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
