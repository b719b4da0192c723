"""NJ411 integer-power-past-64.

An integer power whose integer exponents reach 64 or more: JAX's integer power reads only
the low six bits of the exponent (2 ** 64 is 1 in JAX, 0 in NumPy); reported.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import is_integer
from np2jax.rules.base import Rule
from np2jax.syntax import code_of

# JAX's power of integer arrays squares its way through this many bits of the exponent
# (jax._src.numpy.ufuncs._pow_int_int); NumPy's through all of them.
EXPONENT_BITS = 6


class IntegerPowerPast64(Rule):
    code = "NJ411"

    def run(self):
        """`b ** e`, `b **= e` and np.power(b, e) (converted) with an integer base and an
        integer array exponent whose values the code spells (ranges.integer_range) and
        that reach 2**6: JAX reads e mod 64, NumPy the whole exponent (2 ** 64 wraps to 0).
        A Python int exponent is exact in JAX (it takes lax.integer_pow); an exponent the
        code does not spell is not reported: only a power that overflows reaches it."""
        flow = self.analysis.dataflow
        for node, base, exponent in self._powers():
            if not (flow.jax_typed(base) or flow.jax_typed(exponent)):
                continue
            exponent_dtype = self.analysis.dtypes.dtype_of(exponent)
            if not is_integer(self.analysis.dtypes.dtype_of(base)) or not is_integer(exponent_dtype) \
                    or exponent_dtype == "int":
                continue  # a Python int exponent: lax.integer_pow, every bit read
            found = self.analysis.ranges.integer_range(exponent)
            if found is None or found[1] < 2 ** EXPONENT_BITS:
                continue
            refs = flow.jax_refs(base) if flow.jax_typed(base) else flow.jax_refs(exponent)
            yield self.report(node, requires=refs, spelled=code_of(node).strip(),
                              exponent=code_of(exponent), highest=found[1])

    def _powers(self):
        for operation in self.analysis.nodes(cst.BinaryOperation):
            if isinstance(operation.operator, cst.Power):
                yield operation, operation.left, operation.right
        for statement in self.analysis.nodes(cst.AugAssign):
            if isinstance(statement.operator, cst.PowerAssign):
                yield statement, statement.target, statement.value
        for ref in self.analysis.refs:
            if ref.converted and ref.qualname == "numpy.power" and ref.call is not None:
                positional = [a.value for a in ref.call.args if a.keyword is None and not a.star]
                if len(positional) == 2:
                    yield ref.call, positional[0], positional[1]

