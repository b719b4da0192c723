"""Rewrite: apply the fixes the rules reported, then keep the imports right.

Fixes are functions of the node as rewritten so far, so nested fixes compose (the `np.sum`
and the list inside `np.sum([1, 2])` are fixed independently). Imports are solved once
here: the ones fixes need are added with libcst's AddImportsVisitor, NumPy/SciPy imports
left without a use are removed, and `--x64` adds the config line after the imports.

Scope analysis is the costly part of libcst (several passes over the tree), so it runs once,
in the analysis: an import is unused when every reference the analysis found lies inside
a rewritten node whose replacement no longer names it. AddImportsVisitor only looks at the
statements that open the module, so it is given those alone.
"""

from __future__ import annotations

import ast
import textwrap
from collections import defaultdict

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata.scope_provider import ImportAssignment

from np2jax.analysis import ModuleAnalysis
from np2jax.analysis.facts import MODULE_ROOTS
from np2jax.rules.base import Report
from np2jax.syntax import code_of

X64_LINE = 'jax.config.update("jax_enable_x64", True)'


class _ApplyFixes(cst.CSTTransformer):
    def __init__(self, fixes: dict[cst.CSTNode, list], tracked: set, walked: set) -> None:
        super().__init__()
        self.fixes = fixes
        self.tracked = tracked  # original nodes whose rewritten version is looked up later
        self.walked = walked  # the nodes with a fixed or tracked node below them
        self.rewritten: dict[cst.CSTNode, object] = {}  # tracked or fixed node -> its result

    def on_visit(self, node) -> bool:
        # Only the statements that hold something to rewrite are walked into; the others
        # are kept as they are (libcst still calls on_leave for the node itself).
        return node in self.walked

    def on_leave(self, original_node, updated_node):
        for fix in self.fixes.get(original_node, ()):
            updated_node = fix(updated_node)
        if original_node in self.fixes or original_node in self.tracked:
            self.rewritten[original_node] = updated_node
        return updated_node


def apply_fixes(analysis: ModuleAnalysis, reports: list[Report], x64: bool) -> cst.Module:
    module = analysis.module
    if not reports:
        return module
    fixes: dict[cst.CSTNode, list] = defaultdict(list)
    needed: list[tuple[str, str | None]] = []
    for report in reports:
        fixes[report.node].append(report.fix)
        needed.extend(report.imports)
    x64 = x64 and not sets_x64(module)
    if x64:
        needed.append(("jax", None))
    bindings = _numpy_import_bindings(analysis)
    tracked = {statement for statement, _ in bindings}
    for statement in list(tracked):
        tracked.update(_ancestors(statement, analysis.parents))
    walked = {a for node in [*fixes, *tracked] for a in _ancestors(node, analysis.parents)}
    applier = _ApplyFixes(fixes, tracked, walked)
    new_module = module.visit(applier)
    moved: dict = {}
    new_module = add_imports(new_module, needed, moved)
    referenced = _still_referenced(bindings, fixes, applier.rewritten, analysis.parents,
                                   names_in_code_strings(analysis))
    holding = {t: applier.rewritten[t] for t in tracked if t in applier.rewritten}
    holding = {t: moved.get(new, new) for t, new in holding.items()}
    new_module = _drop_unused(new_module, referenced, holding)
    return add_x64_line(new_module) if x64 else new_module


def _imports_numpy(name: str) -> bool:
    return name.split(".")[0] in MODULE_ROOTS


def _ancestors(node: cst.CSTNode, parents: dict):
    parent = parents.get(node)
    while parent is not None:
        yield parent
        parent = parents.get(parent)


def _numpy_import_bindings(analysis: ModuleAnalysis) -> dict[tuple, list]:
    """(import statement, bound name) -> the references to that name, for every NumPy/SciPy
    import, from the analysis' scopes."""
    bindings: dict[tuple, list] = defaultdict(list)
    for scope in set(analysis.dataflow.scopes.values()):
        if scope is None:
            continue
        for assignment in scope.assignments:
            if not isinstance(assignment, ImportAssignment):
                continue
            statement = assignment.node
            if isinstance(statement, cst.ImportFrom):
                source = code_of(statement.module) if statement.module else ""
                if not _imports_numpy(source):
                    continue
            elif not any(_imports_numpy(a.evaluated_name) for a in statement.names):
                continue
            bindings[(statement, assignment.name)].extend(assignment.references)
    return bindings


class _NamesUsed(cst.CSTVisitor):
    """The plain names a rewritten piece of code mentions (not attribute names)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False


def _still_referenced(bindings: dict, fixes: dict, rewritten: dict, parents: dict,
                      in_code_strings: frozenset[str] = frozenset()) -> dict:
    """Whether each import binding is still used after the rewrite. A reference outside
    every rewritten node survives; one inside may not, so the replacements are searched
    for the name instead (by name, not by scope: at worst an unused import is kept). A name
    that code given as a string to eval, exec or timeit may read is used too."""
    outermost = [node for node in fixes if not any(a in fixes for a in _ancestors(node, parents))]
    visitor = _NamesUsed()
    for node in outermost:
        result = rewritten.get(node)
        if isinstance(result, cst.FlattenSentinel):
            for part in result.nodes:
                part.visit(visitor)
        elif isinstance(result, cst.CSTNode):
            result.visit(visitor)
    referenced = {}
    for (statement, name), references in bindings.items():
        referenced[(statement, name)] = name.split(".")[0] in visitor.names | in_code_strings or any(
            access.node not in fixes and not any(a in fixes for a in _ancestors(access.node, parents))
            for access in references)
    return referenced


# Calls that run code given as a string: eval, exec, compile, timeit.timeit/repeat/Timer.
CODE_STRING_CALLS = frozenset({"eval", "exec", "compile", "timeit", "repeat", "Timer"})


def names_in_code_strings(analysis: ModuleAnalysis) -> frozenset[str]:
    """The names code held by a string may read, in a module that runs code given as a
    string: `timeit.timeit("np.sum(x)", globals=globals())` still needs `np` once `np` is
    gone from the code around it. Every string literal of such a module is read (the code
    may be bound to a name first); one that is not Python code names nothing."""
    def called(call: cst.Call) -> str | None:
        func = call.func
        return func.value if isinstance(func, cst.Name) else \
            func.attr.value if isinstance(func, cst.Attribute) else None

    if not any(called(call) in CODE_STRING_CALLS for call in analysis.nodes(cst.Call)):
        return frozenset()
    names: set[str] = set()
    for kind in (cst.SimpleString, cst.ConcatenatedString):
        for node in analysis.nodes(kind):
            text = node.evaluated_value
            if isinstance(text, str) and any(c in text for c in ".(["):
                names |= _names_read(text)
    return frozenset(names)


def _names_read(code: str) -> set[str]:
    try:
        tree = ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError):
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _drop_unused(module: cst.Module, referenced: dict, rewritten: dict) -> cst.Module:
    """`rewritten`: the statements holding the imports, and their ancestors -> what they
    became."""
    if all(referenced.values()):
        return module
    original_of = {rewritten[s]: s for s, _ in referenced if s in rewritten}
    on_path = {id(new) for new in rewritten.values()}
    pruned = module.visit(_DropAliases(referenced, original_of, on_path))
    if pruned.body and not _opens_with_blank_line(module):
        # the import that opened the file is gone: do not open with its blank lines
        first = pruned.body[0]
        kept = list(first.leading_lines)
        while kept and kept[0].comment is None:
            kept.pop(0)
        pruned = pruned.with_changes(body=[first.with_changes(leading_lines=kept), *pruned.body[1:]])
    return pruned


def _opens_with_blank_line(module: cst.Module) -> bool:
    return module.with_changes(body=module.body[:1], footer=()).code.startswith("\n")


class _DropAliases(cst.CSTTransformer):
    def __init__(self, referenced: dict, original_of: dict, on_path: set) -> None:
        super().__init__()
        self.referenced = referenced
        self.original_of = original_of  # rewritten import statement -> the analysed one
        self.on_path = on_path  # ids of the rewritten nodes that hold the imports

    def on_visit(self, node) -> bool:
        # only the statements that hold NumPy imports are walked into
        return isinstance(node, cst.Module) or id(node) in self.on_path

    def _keep(self, statement, alias: cst.ImportAlias) -> bool:
        # libcst binds `import a.b` under both "a.b" and "a"; `import a as b` and
        # `from a import c` under the bound name. Drop an alias only if none of its names is used.
        if alias.evaluated_alias:
            names = {alias.evaluated_alias}
        elif isinstance(statement, cst.ImportFrom):
            names = {alias.evaluated_name}
        else:
            names = {alias.evaluated_name, alias.evaluated_name.split(".")[0]}
        known = [self.referenced[(statement, n)] for n in names if (statement, n) in self.referenced]
        return not known or any(known)

    def _filter(self, original, updated):
        original = self.original_of.get(original)
        if original is None or isinstance(updated.names, cst.ImportStar):
            return updated
        kept = [a for a in updated.names if self._keep(original, a)]
        if len(kept) == len(updated.names):
            return updated
        if not kept:
            return cst.RemoveFromParent()
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(names=kept)

    def leave_Import(self, original_node, updated_node):
        return self._filter(original_node, updated_node)

    def leave_ImportFrom(self, original_node, updated_node):
        return self._filter(original_node, updated_node)


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


def add_imports(module: cst.Module, needed: list[tuple[str, str | None]],
                moved: dict | None = None) -> cst.Module:
    """libcst's AddImportsVisitor, run over the statements it reads and changes only: the
    first statement (a docstring?), the import block, and the statement after it (whose
    leading blank line it may add; a compound one stands in as `pass`). The statements
    it leaves as they were are kept as the same objects; `moved` gets old -> new for the
    one whose blank line it changed."""
    if not needed:
        return module
    context = CodemodContext()
    for imported, alias in needed:
        AddImportsVisitor.add_needed_import(context, imported, asname=alias)
    body = list(module.body)
    end = 1
    while end < len(body) and _is_import_line(body[end]):
        end += 1
    head = body[: end + 1]
    stand_ins = [cst.SimpleStatementLine([cst.Pass()], leading_lines=s.leading_lines)
                 if isinstance(s, cst.BaseCompoundStatement) else s for s in head]
    new_head = list(AddImportsVisitor(context).transform_module(
        module.with_changes(body=stand_ins)).body)
    # statements after the insertion point keep their place counted from the end
    for index, original in enumerate(head):
        position = len(new_head) - len(head) + index
        if position < 0:
            continue
        new = new_head[position]
        if stand_ins[index] is not original:
            if new.leading_lines == original.leading_lines:
                new_head[position] = original
            else:
                new_head[position] = original.with_changes(leading_lines=new.leading_lines)
                if moved is not None:
                    moved[original] = new_head[position]
    for position, new in enumerate(new_head):
        same = next((s for s in head if s.deep_equals(new)), None)
        if same is not None:
            new_head[position] = same
    return module.with_changes(body=[*new_head, *body[len(head):]])


def sets_x64(module: cst.Module) -> bool:
    """Whether a statement of the module body calls `<...>config.update("jax_enable_x64",
    ...)`, either way: the user's own choice of precision is kept, and never said twice."""
    lines = (line for line in module.body if isinstance(line, cst.SimpleStatementLine))
    for statement in (s for line in lines for s in line.body if isinstance(s, cst.Expr)):
        call = statement.value
        if (isinstance(call, cst.Call) and call.args
                and code_of(call.func).endswith("config.update")
                and isinstance(call.args[0].value, cst.SimpleString)
                and call.args[0].value.evaluated_value == "jax_enable_x64"):
            return True
    return False


def add_x64_line(module: cst.Module) -> cst.Module:
    """Put `jax.config.update("jax_enable_x64", True)` right after the leading imports,
    before any array is made."""
    body = list(module.body)
    first = next((i for i, s in enumerate(body) if _is_import_line(s)), 0)
    end = first
    while end < len(body) and _is_import_line(body[end]):
        end += 1
    body.insert(end, cst.parse_statement(X64_LINE + "\n"))
    return module.with_changes(body=body)
