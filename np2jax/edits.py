"""The fixes `check` reports: for each fix np2jax convert would apply, the edit it makes to
the source, as ruff's JSON gives a fix (`check --format json`, the `fix` of a finding).

    {"applicability": "safe", "message": null,
     "edits": [{"content": "x = x.at[0].set(1.0)",
                "location": {"row": 3, "column": 1}, "end_location": {"row": 3, "column": 11}}],
     "imports": ["import jax.numpy as jnp"],      # what convert adds at the top for it
     "applies_with": [{"code": "NJ101", "location": {"row": 2, "column": 5}}],
     "standalone": false}

Rows and columns count from 1 (columns in characters), the end is exclusive. An edit is the
fixed node's replacement generated alone, from the original source (as `convert` would,
before the other fixes): where one fix's node holds another's, their edits overlap, and
applying one then checking again gives the other. `applies_with` lists the fixes this one
only makes sense with (convert applies them together or not at all), `imports` what it
needs imported; `standalone` is true when there are neither. A fix whose node convert
leaves as it is (it only goes with the others) has no edit. Convert also removes the
NumPy imports no code uses any more, which no single fix carries.

Positions come from one code generation of the module that notes where each fixed node's
code starts and ends and at which indentation, so that a replacement spanning lines (a
function's body) is generated at the indentation it will have.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")  # as libcst counts lines


class _RangeState(CodegenState):
    """Code generation that notes, for the wanted nodes, the token index where each starts
    and ends and the indentation in force there."""

    def __init__(self, default_indent: str, default_newline: str, wanted: set) -> None:
        super().__init__(default_indent, default_newline)
        self.wanted = wanted
        self.ranges: dict[cst.CSTNode, tuple[int, int, tuple[str, ...]]] = {}
        self._open: dict[cst.CSTNode, tuple[int, tuple[str, ...]]] = {}

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node in self.wanted:
            self._open[node] = (len(self.tokens), tuple(self.indent_tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        if node in self._open:
            start, indent = self._open.pop(node)
            self.ranges[node] = (start, len(self.tokens), indent)


class _ApplyFixes(cst.CSTTransformer):
    """Each fixed node's replacement as convert makes it: its own fixes applied to the node
    with the fixes below it applied (np2jax.rewrite does the same, with the imports; check
    does not load that module). Only the statements that hold a fix are walked into."""

    def __init__(self, fixes: dict, walked: set) -> None:
        super().__init__()
        self.fixes, self.walked = fixes, walked
        self.rewritten: dict = {}

    def on_visit(self, node) -> bool:
        return node in self.walked

    def on_leave(self, original_node, updated_node):
        if original_node in self.fixes:
            for fix in self.fixes[original_node]:
                updated_node = fix(updated_node)
            self.rewritten[original_node] = updated_node
        return updated_node


def _replacements(analysis, applied: list) -> dict:
    """Fixed node -> what convert replaces it with."""
    fixes: dict = {}
    for report in applied:
        fixes.setdefault(report.node, []).append(report.fix)
    walked = set()
    for node in fixes:
        while node is not None and node not in walked:
            walked.add(node)
            node = analysis.parents.get(node)
    applier = _ApplyFixes(fixes, walked)
    analysis.module.visit(applier)
    return applier.rewritten


def _code(node, module: cst.Module, indent: tuple[str, ...]) -> str:
    """A fix's result as source text, generated at `indent`."""
    if isinstance(node, cst.RemovalSentinel):
        return ""
    nodes = node.nodes if isinstance(node, cst.FlattenSentinel) else [node]
    state = CodegenState(module.default_indent, module.default_newline)
    state.indent_tokens = list(indent)
    for part in nodes:
        part._codegen(state)
    return "".join(state.tokens)


def _at_line_boundary(text: str, index: int) -> bool:
    return index == 0 or text[index - 1] in "\r\n"


def _trimmed(old: str, new: str) -> tuple[int, int]:
    """How much of the start and of the end of `old` (and `new`) the edit leaves alone: the
    whole lines, and the indentation of the first changed line, both begin with; the line
    breaks and whole lines both end with. Any such edit is right; these read well."""
    limit = min(len(old), len(new))
    common = 0
    while common < limit and old[common] == new[common]:
        common += 1
    start = max(old.rfind("\n", 0, common), old.rfind("\r", 0, common)) + 1
    while start < common and old[start] in " \t":
        start += 1
    common = 0
    while common < limit - start and old[-1 - common] == new[-1 - common]:
        common += 1
    end = common
    while end > 0 and not (old[-end] in "\r\n" or (end < len(old)
                                                    and _at_line_boundary(old, len(old) - end))):
        end -= 1
    return start, end


class _Places:
    """Character offsets of the source -> (row, column), both from 1."""

    def __init__(self, text: str) -> None:
        self.starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]

    def __call__(self, offset: int) -> dict:
        row = bisect_right(self.starts, offset)
        return {"row": row, "column": offset - self.starts[row - 1] + 1}


def _import_line(module: str, alias: str | None) -> str:
    return f"import {module}" if alias is None else f"import {module} as {alias}"


def describe_fixes(analysis, applied: list, code_of: dict) -> dict[int, dict]:
    """id(report) -> its fix object, for the applied fixes of one module (np2jax.pipeline's
    reports). `code_of`: fixed node -> the codes of the fixes applied to it. A fix whose
    edit cannot be worked out (its function refuses the original node) gets none."""
    module = analysis.module
    wanted = {report.node for report in applied}
    state = _RangeState(module.default_indent, module.default_newline, wanted)
    module._codegen(state)
    text = "".join(state.tokens)
    offsets = list(accumulate(map(len, state.tokens), initial=0))
    place = _Places(text)
    try:
        replacements = _replacements(analysis, applied)
    except Exception:  # noqa: BLE001 - check reports without edits rather than fail
        return {}
    described = {}
    for report in applied:
        if report.node not in state.ranges or report.node not in replacements:
            continue
        first, last, indent = state.ranges[report.node]
        start, end = offsets[first], offsets[min(last, len(state.tokens))]
        new = _code(replacements[report.node], module, indent)
        if last > len(state.tokens) and new.endswith(module.default_newline):
            new = new[:-len(module.default_newline)]  # the file ends without a line break
        old = text[start:end]
        head, tail = _trimmed(old, new)
        edits = [] if old == new else [  # a fix that changes nothing here, only with others
            {"content": new[head:len(new) - tail], "location": place(start + head),
             "end_location": place(end - tail)}]
        together = []
        for node in report.requires:
            line, col = analysis.position(node)
            together += [{"code": code, "location": {"row": line, "column": col}}
                         for code in code_of.get(node, ())]
        imports = sorted({_import_line(*needed) for needed in report.imports})
        described[id(report)] = {"applicability": "safe", "message": None, "edits": edits,
                                 "imports": imports, "applies_with": together,
                                 "standalone": not together and not imports}
    return described
