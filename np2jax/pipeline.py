"""The pipeline for one source text: parse -> analyze -> rules -> rewrite -> result."""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import replace

from typing import TYPE_CHECKING

from np2jax.config import Config
from np2jax.files import SourceError, may_use_numpy
from np2jax.findings import Coverage, FileResult, Finding
from np2jax.tree import ModuleContext, from_imports

if TYPE_CHECKING:
    from np2jax.rules.base import Report

_SUPPRESSION = re.compile(r"#\s*np2jax:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")
# ruff's and flake8's noqa comments (any case), bare or with codes (`noqa: NJ201, NJ4`);
# a colon followed by no code silences nothing (ruff calls it an invalid directive).
_NOQA = re.compile(r"#\s*noqa(?![\w-])(?P<colon>\s*:\s*"
                   r"(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)?)?", re.IGNORECASE)


def suppressions(text: str) -> dict[int, set[str] | None]:
    """Line -> codes silenced there by `# np2jax: ignore[...]` or `# noqa: ...` (None: all
    codes, a bare `# np2jax: ignore` or `# noqa`)."""
    silenced: dict[int, set[str] | None] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if "#" not in line:
            continue
        found: list[set[str] | None] = []
        match = _SUPPRESSION.search(line)
        if match:
            codes = match.group("codes")
            found.append(None if codes is None else {
                c.strip().upper() for c in codes.split(",") if c.strip()})
        match = _NOQA.search(line)
        if match and not (match.group("colon") and not match.group("codes")):
            codes = match.group("codes")
            found.append(None if codes is None else {
                c.upper() for c in re.split(r"[\s,]+", codes) if c})
        if found:
            silenced[number] = None if None in found else set().union(*found)
    return silenced


def _silenced(silenced, line: int, code: str) -> bool:
    if line not in silenced:
        return False
    codes = silenced[line]
    return codes is None or any(code.startswith(c) for c in codes)


# libcst's visitors recurse once per nesting level: a valid 1000-term sum needs more than
# Python's default 1000 frames (Python-to-Python calls do not grow the C stack in 3.11+).
RECURSION_LIMIT = 20_000


def process(text: str, config: Config, path: str = "<string>", rewrite: bool = True,
            context: ModuleContext = ModuleContext(), edits: bool = False) -> FileResult:
    """Convert `text`; the result carries the new text, the changes and the findings.
    With rewrite=False (check) the fixes are only listed, and the text stays as it was;
    `edits` (check) gives each its edit (Finding.fix, np2jax.edits)."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, RECURSION_LIMIT))
    try:
        return _process(text, config, path, rewrite, context, edits)
    except RecursionError:
        raise SourceError(path, "expressions nested too deeply to analyze") from None
    finally:
        sys.setrecursionlimit(previous)


def _process(text: str, config: Config, path: str, rewrite: bool,
             context: ModuleContext, edits: bool = False, parsed=None,
             automatic: dict | None = None) -> FileResult:
    """`parsed`, `automatic`: the parsed text (libcst's module and CPython's ast, from
    parse_with_ast) and the functions kept on NumPy so far because
    a finding says their body needs NumPy arrays (_kept_automatically), when it runs again."""
    if not may_use_numpy(text) and not may_call_tree_mutator(text, context) and "numba" not in text:
        return FileResult(path, text, text)  # nothing to parse: the cheap text pre-filter
    # libcst and the rules load only for a file that passes the pre-filter
    from np2jax.analysis import analyze
    from np2jax.analysis.decorators import transparent_decorators
    from np2jax.analysis.module import object_arguments
    from np2jax.rules.base import RuleContext, all_rules
    from np2jax.syntax.parse import parse_with_ast

    if parsed is None:
        parsed = parse_with_ast(text, path)
    module, syntax = parsed
    analysis = analyze(module, context, config.kept_in(path), text, automatic)
    if not analysis.uses_numpy and not analysis.tree_references:
        # a module of numba functions: other files must pass them NumPy arrays
        return FileResult(path, text, text, numpy_params=_numpy_params(analysis))
    silenced = suppressions(text)
    # Every rule runs; selection and suppression filter afterwards, so that a fix whose
    # companion fix is filtered out is dropped too (never `jnp.sum([1, 2])` half-converted).
    kept: list[tuple[Report, Finding]] = []
    dropped: set = set()
    shared = RuleContext(analysis, config)
    kept_functions = analysis.kept_functions
    if kept_functions:
        from np2jax.analysis.kept import inside
    for code, rule_class in all_rules().items():
        rule = rule_class(shared)
        for report in rule.run():
            if report.fix is not None and kept_functions and inside(
                    report.node, analysis.parents, kept_functions):
                dropped.add(report.node)  # a function kept on NumPy stays as written
                continue  # (NJ104 at its def line says so)
            line, col = analysis.position(report.node)
            if not config.enabled(code) or _silenced(silenced, line, code):
                if report.fix is not None:
                    dropped.add(report.node)
                    dropped.update(report.requires)
                continue
            doc = rule.doc()  # parsed on the rule's first finding: most rules report nothing
            kept.append((report, Finding(path, line, col, code, doc.name, report.message,
                                         doc.severity, report.fix is not None)))
    applied = _applicable([r for r, _ in kept if r.fix is not None], dropped)
    # What a write left in place can reach stays NumPy (np2jax.analysis.islands)
    applied, islands, before = _keep_islands(analysis, kept, applied, dropped)
    if config.interface == "numpy":
        applied = _interface_last(applied)
    applied_ids = {id(r) for r in applied}
    fixed = {r.node for r in applied}
    # A finding about a conversion (it has `requires` but no fix) stands only if it happened.
    kept = [(r, f) for r, f in kept if r.fix is not None or all(n in fixed for n in r.requires)]
    more = _kept_automatically(kept, analysis)
    if more:  # each round keeps one function more at least: as many rounds as functions at most
        return _process(text, config, path, rewrite, context, edits, (module, syntax),
                        {**(automatic or {}), **more})
    kept = [(r, f) if r.fix is None or id(r) in applied_ids else
            (r, replace(f, message=_unfixed(r, f, id(r) in before), fixable=False))
            for r, f in kept]
    plain = {id(r): f.message for r, f in kept}
    kept = [(r, _with_island(r, f, islands, analysis.parents, applied_ids)) for r, f in kept]
    if kept_functions:
        kept = _in_kept_functions(kept, analysis, kept_functions,
                                  {id(r) for r, f in kept if f.message != plain[id(r)]})
    converted = text  # libcst gives the text back unchanged: no code generation for it
    # the entries of functions kept on NumPy, and the helper they and the islands read with
    edges = _kept_edges(analysis, bool(applied), bool(islands.as_numpy))
    # an island's copies stand alone too: a module converting nothing of its own may still
    # be given JAX arrays by another module's converted function (`obj.view(cls)` of one);
    # not in a module whose functions an earlier conversion kept (its output converted
    # again: their entries read JAX arrays already)
    copies = _copies(analysis, islands)
    if (applied or edges or copies and not analysis.kept_functions) and rewrite:
        from np2jax.rewrite import apply_fixes  # only conversions pay for the rewrite machinery

        converted = apply_fixes(analysis, applied + copies + edges, config.x64).code
        _check_parses(converted, text, path)
    elif applied or (edges and edits):  # check: what convert would do, said as such (and each fix's edit)
        kept = _as_fixable(kept, applied, analysis, edits, islands, edges)
    return FileResult(
        path, text, converted,
        findings=sorted(f for r, f in kept if r.fix is None or (
            id(r) not in applied_ids and r.report_if_unfixed)),
        # an unlisted edit (NJ302's split line) is no change of its own in convert's list and
        # counts; check keeps it, since its edit (fix_edits) is part of the conversion
        changes=sorted(f for r, f in kept if id(r) in applied_ids and (r.listed or not rewrite)),
        applied_keys=[r.key for r in applied if r.key is not None],
        tree_references=analysis.tree_references,
        mutators=_signatures(m for m in analysis.mutators if m.refused is None),
        exportable_mutators=_signatures(analysis.dataflow.exportable_mutators),
        # boundaries: the islands' copies and reads, and the fixes that add a NumPy call at
        # an edge (Report.boundary)
        coverage=coverage(analysis, applied, len(islands.copies) + len(islands.reads)
                          + len(islands.handed)
                          + sum(1 for r in applied if r.boundary and r.fix is not None)),
        effects=analysis.dataflow.exported_effects(analysis.module, analysis.context),
        wanted_effects=sorted(analysis.dataflow.collector.wanted_effects),
        transparent_decorators=transparent_decorators(analysis.module),
        from_imports=from_imports(syntax, analysis.context.name, analysis.context.is_package),
        kept_entries=sorted({e for k in kept_functions.values() for e in k.entries}),
        numpy_params=_numpy_params(analysis),
        array_arguments=_array_arguments(analysis) if config.jit else {},
        object_arguments=object_arguments(analysis),
        compiled=_compiled(shared) if config.jit and config.enabled("NJ501") else {},
    )


def _kept_automatically(kept: list, analysis) -> dict:
    """FunctionDef -> (qualname, reason) of the functions not kept on NumPy yet that hold a
    finding which stands once the module is converted and says that the function's body
    needs NumPy arrays (Report.keeps_function, a rule's `keeps-function` in its catalog
    entry: NJ404's `try/except IndexError` around a read, NJ114's `isinstance(v, float)`):
    kept on NumPy (NJ104, np2jax.analysis.kept), the body runs as written on NumPy arrays.
    A finding outside every function, or one suppressed or not selected, keeps nothing."""
    from np2jax.analysis.kept import enclosing_function, inside, qualname_of
    from np2jax.catalog import rule_doc
    from np2jax.syntax import code_of

    found: dict = {}
    for report, _finding in sorted(kept, key=lambda pair: (pair[1].line, pair[1].col)):
        if not report.keeps_function or report.fix is not None:
            continue
        function = enclosing_function(report.node, analysis.parents)
        if function is None or function in found or inside(function, analysis.parents,
                                                           analysis.kept_functions):
            continue
        quoted = " ".join(code_of(report.node).split())
        found[function] = (qualname_of(function, analysis.parents),
                           f"automatically, {report.code}: `{quoted}` "
                           f"{rule_doc(report.code).keeps_function}")
    # a caller's finding may stand on what a function kept in this round returns (JAX until
    # kept, NumPy after): callees are kept first, their callers judged again next round
    callees = {f for f in found if any(_calls_by_name(caller, f.name.value) for caller in found
                                        if caller is not f)}
    first = {f: why for f, why in found.items() if f in callees or not any(
        _calls_by_name(f, callee.name.value) for callee in callees)}
    return first or found


def _calls_by_name(function, name: str) -> bool:
    """Whether the body calls a function or method of that name (`helper(x)`, `self.helper(x)`)."""
    import libcst.matchers as m

    return bool(m.findall(function.body, m.Call(func=m.Name(name) | m.Attribute(attr=m.Name(name)))))


def _interface_last(applied: list) -> list:
    """--interface numpy (NJ105): its decorators go on last, outermost over the others
    (`jax.jit` of NJ501), and only in a module that converts something else (a module left
    on NumPy returns NumPy's results already)."""
    interface = [r for r in applied if r.code == "NJ105"]
    others = [r for r in applied if r.code != "NJ105"]
    return others + interface if others else []


def _array_arguments(analysis) -> dict:
    """With --jit: the arguments that are not Python values this file passes to other
    modules' functions (np2jax.jit.plan.external_arguments, FileResult.array_arguments)."""
    from np2jax.jit.plan import external_arguments

    return {q: [tuple(a) for a in found] for q, found in external_arguments(analysis).items()}


def _compiled(shared) -> dict:
    """With --jit: the module's functions compiled with jax.jit (FileResult.compiled)."""
    from np2jax.jit.plan import compiled_exports

    return compiled_exports(shared.analysis, shared.jit_plans)


def _numpy_params(analysis) -> dict:
    """The module-level functions kept on NumPy whose body writes, returns or keeps what a
    parameter is given: name -> ((position or None, name), ...) of those parameters (calls
    in other files of the tree must pass NumPy arrays for them: FileResult.numpy_params)."""
    found = {}
    effects = analysis.dataflow.effects
    from np2jax.syntax import all_parameters

    for function, fact in analysis.kept_functions.items():
        if function not in analysis.module.body and not fact.numba:
            continue
        if fact.numba:  # numba refuses JAX arrays for any parameter
            found[function.name.value] = all_parameters(function)
            continue
        shared = all_parameters(
            function, lambda p, f=function: not effects.param_effect(f, p).read_only)
        if shared:
            found[function.name.value] = shared
    return found


class _Prologue:
    """The fix adding a kept function's prologue (np2jax.analysis.kept.prologue)."""

    def __init__(self, lines: list) -> None:
        self.lines = lines

    def __call__(self, node):
        import libcst

        from np2jax.analysis.kept import with_prologue

        if isinstance(node, libcst.FlattenSentinel):  # a helper put before it (NJ105's)
            nodes = list(node.nodes)
            return libcst.FlattenSentinel([*nodes[:-1], with_prologue(nodes[-1], self.lines)])
        return with_prologue(node, self.lines)


class _Helper:
    """The fix writing the prologues' helper before a module-level statement
    (np2jax.analysis.kept.with_helper)."""

    def __call__(self, node):
        from np2jax.analysis.kept import with_helper

        return with_helper(node)


def _kept_edges(analysis, converted: bool, helper: bool = False) -> list:
    """The prologues of the functions kept on NumPy (np2jax.analysis.kept): each reads the
    JAX arrays its callers pass as NumPy arrays. Added when the module converts something,
    or other files of the tree may call the function (a module left on NumPy, called only
    by itself, gets none). With `helper`, the helper they call is written into the module
    even with no prologue (an island reads a value with it: Islands.as_numpy)."""
    kept = analysis.kept_functions
    if not kept and not helper:
        return []
    from np2jax.analysis.kept import (
        changes_container, entry_parameters, has_helper, has_prologue, helper_anchor, prologue)
    from np2jax.rules.base import Report

    external = analysis.context.external_names | analysis.dataflow.collector.exported_names
    effects = analysis.dataflow.effects
    edges = []
    for function, fact in kept.items():
        if fact.numba or not converted and fact.qualname.split(".")[0] not in external:
            continue  # numba compiles the body: no prologue (its callers pass NumPy arrays)
        if has_prologue(function, analysis.parents):
            continue
        # the parameters whose value the body may change, keep or return: a list or dict
        # given for one is converted in place, so that the caller sees the changes
        in_place = {p.name.value for p in entry_parameters(function, analysis.parents)
                    if p.star or not effects.param_effect(function, p).read_only
                    or changes_container(function, p.name.value)}
        lines = prologue(function, analysis.parents, in_place)
        if lines:
            edges.append(Report("NJ104", function, "", _Prologue(lines), listed=False))
    anchor = helper_anchor(analysis.module)
    if (edges or helper) and anchor is not None and not has_helper(analysis.module):
        edges.append(Report("NJ104", anchor, "", _Helper(), listed=False))
    return edges


def coverage(analysis, applied: list[Report], boundaries: int = 0) -> Coverage:
    """The file's NumPy/SciPy call sites, how many of them the applied fixes make JAX code
    (each fix names the call sites it moves: Report.moves), and how many of the others are
    kept on NumPy on purpose, with no finding (I/O, printing, testing, np.errstate: by
    design; host-side shape arithmetic: static; grids NumPy computes for JAX, NJ101). In check, `applied` is what convert would
    apply."""
    from np2jax.analysis.facts import KEEP_BY_DESIGN, KEEP_STATIC

    sites = analysis.numpy_call_sites
    moved = {call for report in applied for call in report.moves if call in sites}
    on_purpose = sum(1 for call, ref in sites.items() if call not in moved and (
        ref.keep in (KEEP_BY_DESIGN, KEEP_STATIC) or ref.computed_by_numpy))
    return Coverage(len(sites), len(moved), on_purpose, boundaries)


def _keep_islands(analysis, kept: list, applied: list, dropped: set):
    """The fixes left once every value a write left in place can reach stays NumPy: the
    island's NumPy references keep their NumPy names and the conversions that would rebind
    its names are undone, to a fixed point (an undone write is left in place in its turn).
    Returns the fixes, the islands, and the ids of the fixes applied before."""
    before = {id(r) for r in applied}
    fixes = [r for r, _ in kept if r.fix is not None]
    dropped = set(dropped)
    def ask(applied):
        compiled = frozenset(r.node for r in applied if r.code == "NJ501")
        return analysis.islands({r.node for r in applied if r.converts}, compiled)

    islands = ask(applied)
    for _ in range(100):  # each round drops at least one node: bounded by the fixes
        new = islands.drops - dropped
        if not new:
            break
        dropped |= new
        applied = _applicable(fixes, dropped)
        islands = ask(applied)
    return applied, islands, before


def _in_kept_functions(kept: list, analysis, kept_functions: dict, islanded: set) -> list:
    """The findings once functions are kept on NumPy (np2jax.analysis.kept): inside one,
    only NJ104 and the writes left in place whose island reaches beyond it (their finding
    says what else stayed NumPy) are reported (the rest says how the body would convert,
    and it does not); a finding whose fix needed a kept function's conversion (a call of a
    function writing its argument) says so."""
    from np2jax.analysis.islands import WRITE_CODES
    from np2jax.analysis.kept import inside
    from np2jax.rules.base import DEPENDENCY_DROPPED

    parents = analysis.parents
    found = []
    for report, finding in kept:
        if report.code != "NJ104" and inside(report.node, parents, kept_functions):
            # (NJ209 at a kept def: the writes' own findings say what stayed NumPy)
            if report.code not in WRITE_CODES or report.code == "NJ209" or id(report) not in islanded:
                continue
        elif DEPENDENCY_DROPPED in finding.message:
            names = [kept_functions[f].qualname for f in kept_functions
                     if any(inside(n, parents, {f: None}) for n in report.requires)]
            if names:
                finding = replace(finding, message=finding.message.replace(
                    DEPENDENCY_DROPPED, f"left as it was, because `{names[0]}` is kept on NumPy "
                    "(NJ104)"))
        found.append((report, finding))
    return found


def _unfixed(report, finding, by_island: bool) -> str:
    """The message of a fix that did not apply; one undone by an island says so."""
    from np2jax.analysis.islands import ISLAND_DROPPED
    from np2jax.rules.base import DEPENDENCY_DROPPED

    message = report.unfixed_message or finding.message
    return message.replace(DEPENDENCY_DROPPED, ISLAND_DROPPED) if by_island else message


def _with_island(report, finding, islands, parents: dict, applied_ids: set):
    """A write left in place: its finding's second sentence says what stayed on NumPy."""
    from np2jax.analysis.islands import WRITE_CODES
    from np2jax.rules.base import one_line

    # `it = m.flat` (NJ102); what a function kept on NumPy reads (NJ104)
    numpy_only_read = report.code in ("NJ102", "NJ104") and report.node in islands.sentences
    if (report.code not in WRITE_CODES and not numpy_only_read) or id(report) in applied_ids \
            or not islands.sentences:
        return finding
    import libcst

    node = report.node
    while node is not None and node not in islands.sentences:
        node = parents.get(node)
        if isinstance(node, (libcst.BaseCompoundStatement, libcst.Module)):
            node = None  # no further than the statement that holds the write
    if node is None:
        return finding
    message = finding.message.rstrip()
    message += "" if message.endswith(".") else "."
    return replace(finding, message=one_line(f"{message} {islands.sentences[node]}"))


def _copies(analysis, islands) -> list:
    """The fixes copying a fresh array made by converted code into a writable NumPy array
    where an island needs it, `np.array(...)`, reading the operand of `a op= v` into an
    island's array as a NumPy array, `np.asarray(v)` (a read needs no copy), and copying an
    island's array where converted code hands it to JAX, `np.array(c)` (JAX reads the
    memory of what it is given later, after the writes that follow; jnp.array(c) too)."""
    import libcst

    from np2jax.rules.base import Report

    alias, needed = analysis.numpy_alias

    def wrap(function: str):
        def fix(node):
            return libcst.Call(func=libcst.Attribute(libcst.Name(alias), libcst.Name(function)),
                               args=[libcst.Arg(node)])
        return fix

    def as_numpy(node):
        from np2jax.analysis.kept import HELPER

        return libcst.Call(func=libcst.Name(HELPER), args=[libcst.Arg(node)])

    imports = (needed,) if needed else ()
    # a hand-over's copy goes with the conversion of what JAX reads it with (its edit)
    return [Report("NJ201", node, "", wrap("array"), imports, requires=makers)
            for node, makers in islands.handed] + \
        [Report("NJ201", node, "", wrap("array"), imports) for node in islands.copies] + \
        [Report("NJ203", node, "", wrap("asarray"), imports) for node in islands.reads] + \
        [Report("NJ104", node, "", as_numpy) for node in islands.as_numpy]


def _check_parses(converted: str, original: str, path: str) -> None:
    """Never hand back code that does not parse: a fix that breaks the syntax is an np2jax
    bug, and the file is then left untouched (an internal error, reported as one). Python's
    own parser judges (it refuses `f(x) -= 1`, which libcst builds without complaint)."""
    try:
        ast.parse(converted, path)
    except SyntaxError as exc:
        try:
            ast.parse(original, path)
        except SyntaxError:
            return  # CPython refuses the original too: nothing the conversion broke
        raise RuntimeError(f"the converted code does not parse (line {exc.lineno}: {exc.msg})") from None


# In check, a fixable finding's outcome says what convert would do, not what it did.
_WOULD = (("rewritten as ", "rewrites it as "), ("converted to ", "converts it to "),
          ("converted: ", "converts it: "), ("wrapped in ", "wraps it in "))


def fixable_message(report: Report) -> str:
    """A fix's message as check says it: `...: fixable (`np2jax convert` rewrites it as
    ...)` where the message ends with its outcome (the catalog's `{outcome}`), else the
    message and `(fixable: ...)`."""
    from np2jax.rules.base import DEPENDENCY_DROPPED

    message, unfixed = report.message, report.unfixed_message
    if unfixed and unfixed.endswith(DEPENDENCY_DROPPED):
        head = unfixed[:-len(DEPENDENCY_DROPPED)]
        outcome = message[len(head):] if message.startswith(head) else ""
        for done, would in _WOULD:
            if outcome.startswith(done):
                return f"{head}fixable (`np2jax convert` {would}{outcome[len(done):]})"
    return f"{message} (fixable: `np2jax convert` rewrites it)"


def _as_fixable(kept: list, applied: list, analysis, edits: bool, islands, edges=()) -> list:
    """check's findings for the fixes convert would apply: the message says so (info ones,
    plain renames, are left as they are), and with `edits` each gets its edit
    (np2jax.edits; it costs about a conversion's rewrite, so only JSON asks for it), the
    copies at the islands' edges included in the edits of the fixes they go with."""
    fixes = {}
    if edits:
        from np2jax.edits import describe_fixes

        codes: dict = {}
        for report in applied:
            codes.setdefault(report.node, []).append(report.code)
        copies = _copies(analysis, islands)
        fixes = describe_fixes(analysis, applied, codes, copies)
        # a kept function's prologue, and a copy inside it, ride on its NJ104 finding
        # each alone: the helper's statement may hold a kept method, whose prologue its
        # edit would carry too
        prologues = {key: _as_insertions(fix, analysis.module.code) for edge in edges
                     for key, fix in describe_fixes(analysis, [edge], {edge.node: [edge.code]}).items()}
        kept = _with_edges(kept, [(c, fixes[id(c)]) for c in copies if id(c) in fixes]
                           + [(e, prologues[id(e)]) for e in edges if id(e) in prologues],
                           analysis.parents)
    applied_ids = {id(r) for r in applied}
    return [(r, f) if id(r) not in applied_ids else (r, replace(
        f, fix=fixes.get(id(r)),
        message=f.message if f.severity == "info" else fixable_message(r))) for r, f in kept]


def _as_insertions(fix: dict, text: str) -> dict:
    """A prologue's edit rewrites the function's first statement with the lines put before
    it; as an insertion before that statement it leaves the statement to the other edits
    (an island's copy in it)."""
    lines = text.splitlines(keepends=True)

    def offset(place: dict) -> int:
        return sum(len(line) for line in lines[:place["row"] - 1]) + place["column"] - 1

    edits = []
    for edit in fix["edits"]:
        original = text[offset(edit["location"]):offset(edit["end_location"])]
        if original and edit["content"].endswith(original):
            edit = {**edit, "content": edit["content"][:-len(original)],
                    "end_location": edit["location"]}
        edits.append(edit)
    return {**fix, "edits": edits}


def _with_edges(kept: list, edges: list, parents: dict) -> list:
    """An island's edge no fix of the module goes with (`t -= np.asarray(v)`, where `v` may
    be made JAX by code the analysis does not follow): its edit is the fix of the finding
    of the write left in place in the statement that holds it (convert leaves the write as
    it is, and adds the copy so that it keeps working)."""
    from np2jax.analysis.islands import WRITE_CODES

    by_node = {}
    for index, (report, finding) in enumerate(kept):
        if finding.fix is None and not finding.fixable:
            if report.code in WRITE_CODES:
                by_node.setdefault(report.node, index)
            elif report.code == "NJ104":  # at a kept function's name: the function
                by_node.setdefault(parents.get(report.node), index)
    kept = list(kept)
    first_kept = next((i for i, (r, f) in enumerate(kept) if r.code == "NJ104"
                       and f.fix is None and not f.fixable), None)
    for copy, fix in edges:
        node = copy.node
        while node is not None and node not in by_node:
            node = parents.get(node)
        if node is None:
            if copy.code != "NJ104" or first_kept is None:
                continue
            at = first_kept  # the prologues' helper, before a statement of the module
        else:
            at = by_node[node]
        report, finding = kept[at]
        if finding.fix is not None:  # a second edge of the same write
            fix = {**finding.fix, "edits": sorted(finding.fix["edits"] + fix["edits"], key=lambda e: (
                e["location"]["row"], e["location"]["column"])),
                "imports": sorted(set(finding.fix["imports"]) | set(fix["imports"]))}
        kept[at] = (report, replace(finding, fix=fix))
    return kept


def may_call_tree_mutator(text: str, context: ModuleContext) -> bool:
    """A file without NumPy can still call another module's function that is rewritten to
    return its argument: its calls must then assign the result."""
    return any(qualname.rsplit(".", 1)[-1] in text for qualname, _ in context.external_mutators)


def _signatures(mutators) -> dict:
    """Function name -> (position of the parameter it changes, the parameter's name), and
    True third where the function already returns it (its calls may be `u = f(u, ...)`)."""
    return {m.node.name.value: (_position(m), m.param.name.value) + ((True,) if m.returns_param else ())
            for m in mutators}


def _position(mutator) -> int | None:
    params = list(mutator.node.params.params)
    return params.index(mutator.param) if mutator.param in params else None


def _applicable(fixes: list[Report], dropped: set) -> list[Report]:
    """The fixes left once every fix whose required nodes are not all fixed is dropped too
    (to a fixed point: a function's rewrite and its call sites stand or fall together)."""
    alive = [r for r in fixes if r.node not in dropped]
    while True:
        fixed = {r.node for r in alive}
        kept = [r for r in alive if all(n in fixed for n in r.requires)]
        if len(kept) == len(alive):
            return kept
        alive = kept
