"""NJ203 aliased-augmented-assignment.

`a += v` on an array another name may see: NumPy changes it in place, JAX rebinds. Where
the other names are views whose relation is known (np2jax.analysis.views), the update stays
and is carried to the base and the other views.
"""

from __future__ import annotations

import libcst as cst

from np2jax.rules._in_place import left_because, rewritten_as
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates


def _returning_function(dataflow, target):
    if not isinstance(target, cst.Name):
        return None
    for value, statement in dataflow.own_bindings(target):
        if value == "param" and statement in dataflow.fresh_params:
            return dataflow.fresh_params[statement]
    return None


def _carry_fix(statements):
    def fix(new_line):
        return updates.replace_line(new_line, [new_line.body[0], *statements])
    return fix


class AliasedAugmentedAssignment(Rule):
    code = "NJ203"

    def run(self):
        dataflow = self.analysis.dataflow
        for fact in self.analysis.aug_assigns:
            statement = code_of(fact.node).strip()
            function = _returning_function(dataflow, fact.node.target)
            if function is not None:
                # `v /= v.sum()` in a function rewritten to return v (NJ209): nothing to change
                # here, but only if that rewrite happens; otherwise this is reported.
                yield self.report(fact.node, fix=lambda node: node, requires=(function,),
                                  statement=statement, outcome=rewritten_as(
                                      f"a rebinding, since `{function.name.value}` now returns it"))
            elif fact.shared_because is not None:
                carried = self.analysis.views.carry(fact.node.target, fact.node)
                line = dataflow.expression_statement_line(fact.node)
                if carried is None or carried.reason is not None or line is None:
                    reason = fact.shared_because if carried is None or carried.reason is None \
                        else carried.reason
                    yield self.report(fact.node, statement=statement, outcome=left_because(reason))
                    continue
                yield self.report(line, fix=_carry_fix(carried.statements()),
                                  requires=carried.requires, statement=statement,
                                  outcome=rewritten_as(f"a rebinding, {carried.describe()}"))
