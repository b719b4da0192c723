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


def describe_fixes(analysis, applied: list, code_of: dict, copies: list = ()) -> dict[int, dict]:
    """id(report) -> its fix object, for the applied fixes of one module (np2jax.pipeline's
    reports). `code_of`: fixed node -> the codes of the fixes applied to it. `copies`: the
    fixes convert adds at the edges of NumPy islands (`np.array(...)` around a fresh array
    converted code makes, `np.asarray(...)` around an operand read into an island's array),
    which are findings of their own nowhere: each goes with the fixes that make its
    expression a JAX array (np2jax.analysis.values' jax_refs: `np.zeros` renamed inside a
    helper whose result is copied) and with those inside it, so that no fix applied alone
    hands an island a JAX array. A fix inside a copied expression gets the whole copied
    expression as its edit; one outside it an edit of that expression besides its own. A fix
    whose edit cannot be worked out (its function refuses the original node) gets none."""
    module = analysis.module
    copies = list(copies)
    copied = {copy.node for copy in copies}
    wanted = {report.node for report in applied} | copied
    state = _RangeState(module.default_indent, module.default_newline, wanted)
    module._codegen(state)
    text = "".join(state.tokens)
    offsets = list(accumulate(map(len, state.tokens), initial=0))
    place = _Places(text)
    try:
        replacements = _replacements(analysis, [*applied, *copies])
    except Exception:  # noqa: BLE001 - check reports without edits rather than fail
        return {}

    spans: dict = {}  # node -> (start, end) of its trimmed edit, offsets in the source

    def edit_of(node, trim: int = 2) -> dict | None:
        """The edit replacing `node` with what convert makes of it (None: no change), the
        lines and characters it leaves alone trimmed off (trim 2), only the lines (1), or
        nothing (0)."""
        first, last, indent = state.ranges[node]
        start, end = offsets[first], offsets[min(last, len(state.tokens))]
        new = _code(replacements[node], module, indent)
        if last > len(state.tokens) and new.endswith(module.default_newline):
            new = new[:-len(module.default_newline)]  # the file ends without a line break
        old = text[start:end]
        if old == new:
            return None
        head, tail = _trimmed(old, new) if trim else (0, 0)
        if trim == 1:  # from the start of the first changed line, its indentation included
            head = max(old.rfind("\n", 0, head), old.rfind("\r", 0, head)) + 1
        spans[node] = (start + head, end - tail)
        return {"content": new[head:len(new) - tail], "location": place(start + head),
                "end_location": place(end - tail)}

    def outer_edit(node) -> dict | None:
        """edit_of(node), trimmed less where its span would be exactly that of the edit of a
        fix inside it (`global key` added above a statement NJ302 rewrites: a consumer
        applying the outer edit first could not tell it from the inner one)."""
        inner = {spans.get(n) for n in fixed_inside.get(node, ())}
        for trim in (2, 1):
            spans.pop(node, None)
            edit = edit_of(node, trim)
            if spans.get(node) not in inner:
                return edit
        spans.pop(node, None)
        return edit_of(node, 0)

    def around(node) -> list:
        """The copied expressions holding `node` (itself included), innermost first."""
        held = []
        while node is not None:
            if node in copied:
                held.append(node)
            node = analysis.parents.get(node)
        return held

    relied: dict = {}  # fixed node -> the copies it makes JAX, outside it
    needs: dict = {}  # copied node -> the imports its wrap needs
    for copy in copies:
        if copy.node not in state.ranges or copy.node not in replacements:
            continue
        needs[copy.node] = copy.imports
        outer = around(analysis.parents.get(copy.node))
        if outer:
            continue  # inside another copy: that one's edit holds it
        # a hand-over to JAX goes with the conversion JAX reads it by (its `requires`)
        for node in copy.requires or analysis.dataflow.jax_refs(copy.node):
            relied.setdefault(node, []).append(copy.node)
    fixed_inside: dict = {}  # fixed node -> the fixed nodes strictly inside it
    for report in applied:
        node = analysis.parents.get(report.node)
        while node is not None:
            if node in wanted:
                fixed_inside.setdefault(node, set()).add(report.node)
            node = analysis.parents.get(node)
    for node in {report.node for report in applied}:
        if node in state.ranges and node in replacements:
            edit_of(node)  # the spans outer_edit compares
    described = {}
    attached: set = set()
    for report in applied:
        if report.node not in state.ranges or report.node not in replacements:
            continue
        holders = [node for node in around(report.node) if node in needs]
        target = holders[-1] if holders else report.node  # the outermost copy holding it
        edit = outer_edit(target)
        edits = [] if edit is None else [edit]  # no edit: a fix only with the others
        carried = list(holders)
        for node in relied.get(report.node, ()):
            if node not in holders and not _inside(analysis.parents, node, report.node):
                extra = edit_of(node)
                if extra is not None and extra not in edits:
                    edits.append(extra)
                    carried.append(node)
        edits.sort(key=lambda e: (e["location"]["row"], e["location"]["column"]))
        together = []
        for node in report.requires:
            line, col = analysis.position(node)
            together += [{"code": code, "location": {"row": line, "column": col}}
                         for code in code_of.get(node, ())]
        attached.update(carried)
        needed = set(report.imports) | {i for node in carried for i in needs[node]}
        imports = sorted({_import_line(*n) for n in needed})
        described[id(report)] = {"applicability": "safe", "message": None, "edits": edits,
                                 "imports": imports, "applies_with": together,
                                 "standalone": not together and not imports}
    for copy in copies:  # no fix of this module makes it JAX, as far as the analysis sees
        if copy.node in needs and copy.node not in attached and not around(
                analysis.parents.get(copy.node)):
            edit = edit_of(copy.node)
            imports = sorted({_import_line(*n) for n in copy.imports})
            described[id(copy)] = {
                "applicability": "safe", "message": ISLAND_EDGE, "edits": [edit],
                "imports": imports, "applies_with": [], "standalone": not imports}
    return described


# The message of the fix a finding left as it was carries: the copy at its island's edge.
ISLAND_EDGE = ("keep the write working on NumPy once the rest is JAX: convert reads this "
               "value as a NumPy array")


def _inside(parents: dict, node, container) -> bool:
    """Whether `node` is `container` or lies within it."""
    while node is not None:
        if node is container:
            return True
        node = parents.get(node)
    return False
