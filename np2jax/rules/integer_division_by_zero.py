"""NJ405 integer-division-by-zero.

An integer floor division whose divisor may be zero (under np.errstate): NumPy gives 0, JAX
another integer; rewritten to give NumPy's 0.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import is_integer
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates

ZERO, ONE = cst.Integer("0"), cst.Integer("1")
# Divisors that can be evaluated twice: nothing runs, nothing changes between the reads.
_PLAIN = (cst.Name, cst.Attribute, cst.Integer)


def _is_zero(divisor: cst.BaseExpression) -> cst.Comparison:
    return cst.Comparison(updates.parenthesized(divisor),
                          [cst.ComparisonTarget(cst.Equal(), ZERO)])


def _plain(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Attribute):
        return _plain(node.value)
    if isinstance(node, cst.Subscript):
        return _plain(node.value) and all(
            isinstance(e.slice, cst.Index) and _plain(e.slice.value) for e in node.slice)
    return isinstance(node, _PLAIN)


class IntegerDivisionByZero(Rule):
    code = "NJ405"

    def run(self):
        """`a // b` of integers, one of them a JAX array once converted, under
        `np.errstate(...)` (which says a zero divisor is expected), with a divisor that is
        not a non-zero literal: `jnp.where(b == 0, 0, a // jnp.where(b == 0, 1, b))`, NumPy's
        0 where `b` is 0. A divisor that cannot be read twice (a call) is reported instead."""
        jnp = self.analysis.jnp_alias
        dtype_of = self.analysis.dtypes.dtype_of
        flow = self.analysis.dataflow
        for operation in self.analysis.nodes(cst.BinaryOperation):
            if not isinstance(operation.operator, cst.FloorDivide):
                continue
            left, right = operation.left, operation.right
            if isinstance(right, cst.Integer) and right.evaluated_value != 0:
                continue
            if not (is_integer(dtype_of(left)) and is_integer(dtype_of(right))):
                continue
            jax_side = left if flow.jax_typed(left) else right if flow.jax_typed(right) else None
            if jax_side is None or not self.analysis.under_errstate(operation):
                continue
            requires = flow.jax_refs(jax_side)
            if not _plain(right):
                yield self.report(operation, requires=requires, division=code_of(operation),
                                  outcome="left as it was: the divisor is computed, and the "
                                          "rewrite reads it twice; name it first")
                continue

            def fix(node: cst.BinaryOperation) -> cst.BaseExpression:
                divisor = node.right
                safe = updates.jnp_call(jnp, "where", _is_zero(divisor), ONE, divisor)
                quotient = node.with_changes(right=safe, lpar=[], rpar=[])
                return updates.jnp_call(jnp, "where", _is_zero(divisor), ZERO, quotient).with_changes(
                    lpar=node.lpar, rpar=node.rpar)

            yield self.report(operation, fix=fix, requires=requires, imports=[("jax.numpy", jnp)],
                              division=code_of(operation),
                              outcome="rewritten to give NumPy's 0 where the divisor is 0")
