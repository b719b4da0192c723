"""Shapes of statements the --jit analyses and rewrites recognise: one-statement blocks,
if/else of single values, if/elif chains, a loop's early exits, integer literals. Syntax
only: no value classes here."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from np2jax.syntax.walk import children, walk


def only_small(statement):
    """The small statement of a line holding just one (`x = 1`), else None."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        return statement.body[0]
    return None


def single_small(block) -> cst.BaseSmallStatement | None:
    """The small statement of a block of one line holding just one, else None."""
    statements = block.body
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine) \
            or len(statements[0].body) != 1:
        return None
    return statements[0].body[0]


def if_else_values(node: cst.If):
    """("return", None, a, b) or ("assign", name, a, b) for an if/else of single returns, or
    of single assignments to the same name; None for any other shape."""
    if node.orelse is None or not isinstance(node.orelse, cst.Else):
        return None
    first, second = single_small(node.body), single_small(node.orelse.body)
    if first is None or second is None:
        return None
    if isinstance(first, cst.Return) and isinstance(second, cst.Return) \
            and first.value is not None and second.value is not None:
        return "return", None, first.value, second.value
    if isinstance(first, cst.Assign) and isinstance(second, cst.Assign) \
            and len(first.targets) == len(second.targets) == 1 \
            and isinstance(first.targets[0].target, cst.Name) \
            and isinstance(second.targets[0].target, cst.Name) \
            and first.targets[0].target.value == second.targets[0].target.value:
        return "assign", first.targets[0].target.value, first.value, second.value
    return None


@dataclass
class Chain:
    """`if t0: b0 elif t1: b1 ... else: e`, flattened."""

    tests: list
    bodies: list
    orelse: object  # the `else` block, or None

    @classmethod
    def of(cls, node: cst.If) -> "Chain":
        tests, bodies = [], []
        clause = node
        while isinstance(clause, cst.If):
            tests.append(clause.test)
            bodies.append(clause.body)
            clause = clause.orelse
        return cls(tests, bodies, clause.body if clause is not None else None)

    @property
    def blocks(self) -> list:
        return self.bodies + ([self.orelse] if self.orelse is not None else [])


# --- a loop's early exits -----------------------------------------------------------------


def loop_exit(body) -> str | None:
    """How a loop body may leave the loop early: "break", "continue", "return", "yield",
    "raise", or None."""
    own = exits_in(body)  # those of loops nested in the body are theirs
    if own:
        return "break" if isinstance(own[0], cst.Break) else "continue"
    for node in walk(body):
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        if isinstance(node, cst.Return):
            return "return"
        if isinstance(node, (cst.Yield, cst.Await)):
            return "yield"
        if isinstance(node, cst.Raise):
            return "raise"
    return None


def exit_guard(body) -> tuple[cst.If | None, str]:
    """The one `if <test>: break` (or `continue`) at the top level of a loop body, with no
    `else` and nothing else in it; (None, why) when the body's `break`/`continue` (those of
    loops nested in it aside) are anywhere else, or more than one."""
    guards, others = [], 0
    for statement in body.body:
        if isinstance(statement, cst.If) and statement.orelse is None and exit_of(statement):
            guards.append(statement)
            continue
        others += len(exits_in(statement))
    if others or len(guards) != 1:
        return None, ("`break`/`continue` other than one `if <test>: break` (or `continue`) "
                      "at the top of the body")
    return guards[0], ""


def exit_of(node: cst.If) -> str | None:
    """"break" or "continue" for `if <test>: break` (or `continue`) alone, else None."""
    inner = node.body.body
    if len(inner) != 1:
        return None
    small = inner[0] if isinstance(node.body, cst.SimpleStatementSuite) else only_small(inner[0])
    if isinstance(small, cst.Break):
        return "break"
    if isinstance(small, cst.Continue):
        return "continue"
    return None


def exits_in(node) -> list:
    """break/continue statements of this loop in `node` (not those of loops nested in it)."""
    if isinstance(node, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return [] if not isinstance(node, (cst.For, cst.While)) or node.orelse is None else \
            exits_in(node.orelse)
    if isinstance(node, (cst.Break, cst.Continue)):
        return [node]
    found = []
    for child in children(node):
        found.extend(exits_in(child))
    return found


def guard_index(body) -> int:
    """Where the exit guard is among the statements of a (converted) loop body."""
    return next(i for i, s in enumerate(body.body)
                if isinstance(s, cst.If) and s.orelse is None and exit_of(s))


# --- literals ---------------------------------------------------------------------------


def int_literal(node) -> int | None:
    """The value of an integer literal (`3`, `-3`), else None."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = int_literal(node.expression)
        return -inner if inner is not None else None
    return None


def parenthesized(node):
    """The expression in parentheses, unless a name or an integer."""
    if isinstance(node, (cst.Name, cst.Integer)):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
