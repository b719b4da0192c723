"""Small syntax helpers the --jit analyses and rewrites share (np2jax.jit.traceable, .scan,
.branches)."""

from __future__ import annotations

import re

import libcst as cst


def walk(node):
    """Every node under `node`, `node` first, in source order."""
    yield node
    for child in node.children:
        yield from walk(child)


def loop_function(name: str, params: str, prefix: list, block, returned: str | None,
                  leading_lines=()) -> cst.FunctionDef:
    """`def name(params):` with the statements of `block` (a loop body, as converted), after
    `prefix`, ending with `return returned`."""
    statements = list(block.body) if isinstance(block, cst.IndentedBlock) else [
        cst.SimpleStatementLine(block.body)]
    if returned is not None:
        statements.append(cst.parse_statement(f"return {returned}\n"))
    function = cst.parse_statement(f"def {name}({params}):\n    pass\n")
    return function.with_changes(body=function.body.with_changes(body=[*prefix, *statements]),
                                 leading_lines=leading_lines)


def operand(code: str) -> str:
    """The bound's code, parenthesized unless it is a name, a number or an item of one."""
    return code if re.fullmatch(r"[\w.\[\]]+", code) else f"({code})"
