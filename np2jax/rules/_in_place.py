"""Helpers of the in-place write rules (NJ201-NJ209): messages, statement fixes."""

from __future__ import annotations

import libcst as cst

from np2jax.analysis import facts
from np2jax.syntax import code_of, updates

NOT_ARRAYS = (facts.CONTAINER, facts.SCALAR)


def what_it_is(kind: str) -> str:
    return "an array" if kind == facts.ARRAY else "a value that may be an array"


def rewritten_as(how: str) -> str:
    return f"rewritten as {how}"


def left_because(reason: str) -> str:
    return f"left as it was, because {reason}"


def report_writes(rule, augmented: bool):
    """Reports of NJ201 (plain stores) or NJ202 (augmented): one fix per statement, on its
    line; the other writes of the same statement ride on it."""
    for write in rule.analysis.subscript_writes:
        if (write.operator is not None) != augmented or write.base_kind in NOT_ARRAYS:
            continue
        plan = rule.analysis.write_plan(write.statement)
        fields = dict(target=code_of(write.target), what=what_it_is(write.base_kind),
                      operator=write.operator or "")
        if plan.fix is None:
            yield rule.report(write.target, outcome=left_because(plan.reason), **fields)
            continue
        line, fix = plan.fix
        imports = [("jax.numpy", rule.analysis.jnp_alias)]
        first = write.target is first_target(rule.analysis, write.statement)
        if first:
            yield rule.report(line, fix=fix, imports=imports, requires=plan.requires,
                              outcome=rewritten_as(plan.how), **fields)
            if plan.declare is not None:
                function, name = plan.declare
                yield rule.report(function, fix=updates.declare_global(name), requires=(line,),
                                  report_if_unfixed=False, listed=False,
                                  outcome=rewritten_as(plan.how), **fields)
        else:
            yield rule.report(write.target, fix=lambda node: node, requires=(line,),
                              outcome=rewritten_as(plan.how), **fields)


def first_target(analysis, statement) -> cst.Subscript:
    return next(w.target for w in analysis.subscript_writes if w.statement is statement)


def statement_fix(analysis, call: cst.Call, target: cst.BaseExpression, build):
    """(line, fix, requires, reason) for an expression statement `call` that writes into
    `target`, to become `target = build(updated call)`."""
    dataflow = analysis.dataflow
    line = dataflow.expression_statement_line(call)
    if line is None:
        return None, None, (), "its result is used, or it shares its line"
    if not isinstance(target, (cst.Name, cst.Attribute)):
        return None, None, (), f"`{code_of(target)}` is not a plain name"
    reason = dataflow.unconvertible_because(target, call)
    carried = None
    if reason is not None:
        carried = analysis.views.carry(target, call)  # a view, or the base of views
        if carried is None or carried.reason is not None:
            return None, None, (), reason if carried is None else carried.reason
    after = carried.statements() if carried is not None else []

    def fix(new_line):
        new_call = new_line.body[0].value
        new_target, new_value = build(new_call)
        return updates.replace_line(new_line, [updates.assign(new_target, new_value), *after])

    requires = carried.requires if carried is not None else dataflow.binding_refs(target)
    return line, fix, requires, None


def distinct_indices(node) -> bool:
    """An index argument that cannot repeat: one integer, or a list of distinct integers.
    (With repeats, NumPy keeps the last value and JAX does not say which.)"""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, (cst.List, cst.Tuple)):
        values = [e.value for e in node.elements]
        if all(isinstance(v, cst.Integer) for v in values):
            numbers = [int(v.value, 0) for v in values]
            return len(set(numbers)) == len(numbers) and all(n >= 0 for n in numbers)
    return False


def array_literal(node, jnp: str):
    return updates.jnp_call(jnp, "array", node) if isinstance(node, (cst.List, cst.Tuple)) else node
