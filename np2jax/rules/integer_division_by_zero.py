"""NJ405 integer-division-by-zero.

An integer floor division (`a // b`, `np.floor_divide`, `np.divmod`) whose divisor may be
zero: NumPy gives 0 (with a warning, unless np.errstate silences it), JAX another integer;
rewritten to give NumPy's 0.
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


def _nonzero_literal(node: cst.BaseExpression) -> bool:
    """A divisor the code shows is never 0: a non-zero integer literal (`60`, `-1`), or an
    array or list literal of them (`np.array([3600, 60])`)."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _nonzero_literal(node.expression)
    if isinstance(node, cst.Integer):
        return node.evaluated_value != 0
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(
            isinstance(e, cst.Element) and _nonzero_literal(e.value) for e in node.elements)
    if isinstance(node, cst.Call) and len(node.args) == 1 and node.args[0].keyword is None \
            and not node.args[0].star and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in ("array", "asarray"):
        return _nonzero_literal(node.args[0].value)
    return False


def _guarded(jnp: str, divisor: cst.BaseExpression, divide) -> cst.BaseExpression:
    """`jnp.where(b == 0, 0, divide(jnp.where(b == 0, 1, b)))`."""
    safe = updates.jnp_call(jnp, "where", _is_zero(divisor), ONE, divisor)
    return updates.jnp_call(jnp, "where", _is_zero(divisor), ZERO, divide(safe))


class IntegerDivisionByZero(Rule):
    code = "NJ405"

    def run(self):
        """`a // b`, `a //= b` and `np.floor_divide(a, b)` of integers, one of them a JAX array once
        converted, with a divisor that is not a non-zero literal: `jnp.where(b == 0, 0, a //
        jnp.where(b == 0, 1, b))`, NumPy's 0 where `b` is 0 (with or without np.errstate:
        outside it NumPy warns and goes on with the 0). A divisor that cannot be read twice (a
        call) is reported instead, and so is `np.divmod` (a pair)."""
        jnp = self.analysis.jnp_alias
        flow = self.analysis.dataflow
        for operation in self.analysis.nodes(cst.BinaryOperation):
            if not isinstance(operation.operator, cst.FloorDivide):
                continue
            left, right = operation.left, operation.right
            if not self._may_divide_by_zero(left, right):
                continue
            jax_side = left if flow.jax_typed(left) else right if flow.jax_typed(right) else None
            if jax_side is None:
                continue
            requires = flow.jax_refs(jax_side)
            if not _plain(right):
                yield self.report(operation, requires=requires, division=code_of(operation),
                                  outcome="left as it was: the divisor is computed, and the "
                                          "rewrite reads it twice; name it first")
                continue

            def fix(node: cst.BinaryOperation) -> cst.BaseExpression:
                guarded = _guarded(jnp, node.right,
                                   lambda safe: node.with_changes(right=safe, lpar=[], rpar=[]))
                return guarded.with_changes(lpar=node.lpar, rpar=node.rpar)

            yield self.report(operation, fix=fix, requires=requires, imports=[("jax.numpy", jnp)],
                              division=code_of(operation),
                              outcome="rewritten to give NumPy's 0 where the divisor is 0")
        for statement in self.analysis.nodes(cst.AugAssign):  # x //= z of a whole array
            target, divisor = statement.target, statement.value
            if not isinstance(statement.operator, cst.FloorDivideAssign) \
                    or not isinstance(target, cst.Name) or not flow.jax_typed(target) \
                    or not self._may_divide_by_zero(target, divisor):
                continue
            requires = flow.jax_refs(target)
            spelled = code_of(statement).strip()
            if not _plain(divisor):
                yield self.report(statement, requires=requires, division=spelled,
                                  outcome="left as it was: the divisor is computed, and the "
                                          "rewrite reads it twice; name it first")
                continue

            def fix_augmented(node: cst.AugAssign) -> cst.Assign:
                divided = _guarded(jnp, node.value, lambda safe: cst.BinaryOperation(
                    node.target, cst.FloorDivide(), safe))
                return cst.Assign([cst.AssignTarget(node.target)], divided, node.semicolon)

            yield self.report(statement, fix=fix_augmented, requires=requires,
                              imports=[("jax.numpy", jnp)], division=spelled,
                              outcome="rewritten to give NumPy's 0 where the divisor is 0")
        for ref in self.analysis.refs:
            if ref.call is None or not ref.converted \
                    or ref.qualname not in ("numpy.floor_divide", "numpy.divmod"):
                continue
            args = ref.call.args
            if len(args) != 2 or any(a.keyword is not None or a.star for a in args) \
                    or not self._may_divide_by_zero(args[0].value, args[1].value):
                continue
            spelled = code_of(ref.call)
            if ref.qualname == "numpy.divmod" or not _plain(args[1].value):
                what = "a pair" if ref.qualname == "numpy.divmod" else "computed"
                yield self.report(ref.call, requires=(ref.node,), division=spelled,
                                  outcome=f"left as it was: the result is {what}; use `//` and "
                                          "`%` of a named divisor" if what == "a pair" else
                                          "left as it was: the divisor is computed, and the "
                                          "rewrite reads it twice; name it first")
                continue

            def fix_call(call: cst.Call) -> cst.BaseExpression:
                first, second = call.args
                return _guarded(jnp, second.value, lambda safe: call.with_changes(
                    args=[first, second.with_changes(value=safe)]))

            yield self.report(ref.call, fix=fix_call, requires=(ref.node,),
                              imports=[("jax.numpy", jnp)], division=spelled,
                              outcome="rewritten to give NumPy's 0 where the divisor is 0")

    def _may_divide_by_zero(self, left: cst.BaseExpression, right: cst.BaseExpression) -> bool:
        dtype_of = self.analysis.dtypes.dtype_of
        return (not _nonzero_literal(right) and is_integer(dtype_of(left))
                and is_integer(dtype_of(right)))
