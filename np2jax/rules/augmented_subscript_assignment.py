"""NJ202 augmented-subscript-assignment.

An in-place update through a subscript, `x[i] += v`: rewritten to `.at[i].add(v)` and
friends where provably equivalent.
"""

from __future__ import annotations

from np2jax.rules._in_place import (
    report_writes,
)
from np2jax.rules.base import Rule


class AugmentedSubscriptAssignment(Rule):
    code = "NJ202"

    def run(self):
        yield from report_writes(self, augmented=True)
