"""NJ203 aliased-augmented-assignment.

`a += v` on an array another name may see: NumPy changes it in place, JAX rebinds.
"""

from __future__ import annotations

import libcst as cst

from np2jax.rules._in_place import left_because, rewritten_as
from np2jax.rules.base import Rule
from np2jax.syntax import code_of


def _returning_function(dataflow, target):
    if not isinstance(target, cst.Name):
        return None
    for value, statement in dataflow.own_bindings(target):
        if value == "param" and statement in dataflow.fresh_params:
            return dataflow.fresh_params[statement]
    return None


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
                yield self.report(fact.node, statement=statement, outcome=left_because(fact.shared_because))
