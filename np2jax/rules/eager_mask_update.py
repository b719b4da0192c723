"""NJ208 eager-mask-update.

An in-place write through a boolean mask, converted to `.at[mask]`, which jax.jit cannot
compile.
"""

from __future__ import annotations

from np2jax.rules._in_place import NOT_ARRAYS
from np2jax.rules.base import Rule
from np2jax.syntax import code_of

MASK = ("a boolean mask inside `.at[]` (the mask is not provably of the array's own shape, or "
        "the new values are not one number or elementwise, so it is not `jnp.where`), compiling "
        "a scatter per mask")
DISTINCT = ("indices found from the data inside `.at[]` (`np.nonzero(m)`, `np.where(m)`: each "
            "position once, so the write is NumPy's)")


class EagerMaskUpdate(Rule):
    code = "NJ208"

    def run(self):
        for write in self.analysis.subscript_writes:
            if write.base_kind in NOT_ARRAYS:
                continue
            plan = self.analysis.write_plan(write.statement)
            if plan.fix is not None and plan.eager_mask:
                distinct = self.analysis.dataflow.index_kind(write.target) == "distinct"
                line, _ = plan.fix  # reported only where the write is rewritten (not ignored)
                yield self.report(write.target, target=code_of(write.target), requires=(line,),
                                  index=DISTINCT if distinct else MASK)
