"""What the --jit analysis hands on, besides the plans (np2jax.jit.plan): the rewrites a
compiled function needs and the verdicts on its loops, each tagged with the kind of rewrite
it is. The rules map a kind to their catalog entry (np2jax.rules._jit); nothing in
np2jax.jit knows a rule code."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import libcst as cst


class RewriteKind(str, Enum):
    """What a Rewrite or a LoopVerdict does to the code (the value is what a rule declares)."""

    DEBUG_PRINT = "debug-print"  # print(...) of arrays -> jax.debug.print
    MASKED_REDUCTION = "masked-reduction"  # x[m].sum() -> jnp.sum(x, where=m), x[m].sum(axis=0)
    MASK_COUNT = "mask-count"  # len(x[m]), x[m].size -> jnp.count_nonzero(m)
    WHERE_IF = "where-if"  # if/else of one value each on a 0-d array -> jnp.where
    FORI_LOOP = "fori-loop"  # for over range() carrying arrays -> lax.fori_loop (while_loop
    #                          with a `break`)
    SCAN = "scan"  # for over range() collecting histories -> lax.scan
    WHILE_LOOP = "while-loop"  # while <0-d array test> -> lax.while_loop
    COND = "cond"  # if/elif on 0-d arrays -> lax.cond
    SWITCH = "switch"  # if k == 0: ... elif k == 1: ... -> lax.switch


@dataclass
class Rewrite:
    """A change the compiled function needs: `fix` applies to `node` as converted so far."""

    kind: RewriteKind
    node: cst.CSTNode
    fix: object
    spelled: str


@dataclass
class LoopVerdict:
    """A `for ... in range(...)` of a compiled function: its lax.fori_loop rewrite (`fix`,
    applied to the loop as converted so far), or why it stays a Python loop (`reason`)."""

    node: cst.For
    spelled: str
    fix: object = None
    reason: str = ""
    carried: tuple = ()
    widens: bool = False  # a carried array is updated by `x += <array>` (dtype may promote)
    peeled: bool = False  # the first iteration runs before fori_loop (it settles the types)
    placeholders: tuple = ()  # carried names first bound in the loop: None before it (peeled)
    kind: RewriteKind = RewriteKind.FORI_LOOP  # SCAN when it collects histories
    histories: tuple = ()  # the scan.History lists it collects
    exit: str = ""  # "break" or "continue": its one `if <test>: break/continue`, by a flag
    guard: cst.If | None = None  # that `if`
