"""NJ208 eager-mask-update.

An in-place write through a boolean mask, converted to `.at[mask]`, which jax.jit cannot
compile.
"""

from __future__ import annotations

from np2jax.rules._in_place import NOT_ARRAYS
from np2jax.rules.base import Rule
from np2jax.syntax import code_of


class EagerMaskUpdate(Rule):
    code = "NJ208"

    def run(self):
        for write in self.analysis.subscript_writes:
            if write.base_kind in NOT_ARRAYS:
                continue
            plan = self.analysis.write_plan(write.statement)
            if plan.fix is not None and plan.eager_mask:
                yield self.report(write.target, target=code_of(write.target))
