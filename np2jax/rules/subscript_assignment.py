"""NJ201 subscript-assignment.

An in-place store into an array, `x[i] = v`: rewritten to a functional update where that is
provably equivalent.
"""

from __future__ import annotations

from np2jax.rules._in_place import (
    report_writes,
)
from np2jax.rules.base import Rule


class SubscriptAssignment(Rule):
    code = "NJ201"

    def run(self):
        yield from report_writes(self, augmented=False)
