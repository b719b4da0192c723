"""Rewrite: apply the fixes the rules reported, then keep the imports right.

Fixes are functions of the node as rewritten so far, so nested fixes compose (the `np.sum`
and the list inside `np.sum([1, 2])` are fixed independently). Imports are solved once
here: the ones fixes need are added with libcst's AddImportsVisitor, NumPy/SciPy imports
left without a use are removed, and `--x64` adds the config line after the imports.
"""

from __future__ import annotations

from collections import defaultdict

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import MetadataWrapper, ScopeProvider
from libcst.metadata.scope_provider import ImportAssignment

from np2jax.analyze import MODULE_ROOTS
from np2jax.checks import Report

X64_LINE = 'jax.config.update("jax_enable_x64", True)'


class _ApplyFixes(cst.CSTTransformer):
    def __init__(self, fixes: dict[cst.CSTNode, list]) -> None:
        super().__init__()
        self.fixes = fixes

    def on_leave(self, original_node, updated_node):
        for fix in self.fixes.get(original_node, ()):
            updated_node = fix(updated_node)
        return updated_node


def apply_fixes(module: cst.Module, reports: list[Report], x64: bool) -> cst.Module:
    if not reports:
        return module
    fixes: dict[cst.CSTNode, list] = defaultdict(list)
    context = CodemodContext()
    for report in reports:
        fixes[report.node].append(report.fix)
        for imported, alias in report.imports:
            AddImportsVisitor.add_needed_import(context, imported, asname=alias)
    if x64:
        AddImportsVisitor.add_needed_import(context, "jax")
    module = module.visit(_ApplyFixes(fixes))
    module = AddImportsVisitor(context).transform_module(module)
    module = remove_unused_imports(module)
    return add_x64_line(module) if x64 else module


def _imports_numpy(name: str) -> bool:
    return name.split(".")[0] in MODULE_ROOTS


def remove_unused_imports(module: cst.Module) -> cst.Module:
    """Drop the NumPy/SciPy import aliases that nothing refers to any more."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    referenced: dict[tuple[cst.CSTNode, str], bool] = {}
    for scope in set(wrapper.resolve(ScopeProvider).values()):
        if scope is None:
            continue
        for assignment in scope.assignments:
            if not isinstance(assignment, ImportAssignment):
                continue
            statement = assignment.node
            if isinstance(statement, cst.ImportFrom):
                source = cst.Module([]).code_for_node(statement.module) if statement.module else ""
                if not _imports_numpy(source):
                    continue
            elif not any(_imports_numpy(a.evaluated_name) for a in statement.names):
                continue
            key = (statement, assignment.name)
            referenced[key] = referenced.get(key, False) or bool(assignment.references)
    if all(referenced.values()):
        return module
    pruned = wrapper.module.visit(_DropAliases(referenced))
    if pruned.body and not module.code.startswith("\n"):
        # the import that opened the file is gone: do not open with its blank lines
        first = pruned.body[0]
        kept = list(first.leading_lines)
        while kept and kept[0].comment is None:
            kept.pop(0)
        pruned = pruned.with_changes(body=[first.with_changes(leading_lines=kept), *pruned.body[1:]])
    return pruned


class _DropAliases(cst.CSTTransformer):
    def __init__(self, referenced: dict[tuple[cst.CSTNode, str], bool]) -> None:
        super().__init__()
        self.referenced = referenced

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
        if isinstance(updated.names, cst.ImportStar):
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


def add_x64_line(module: cst.Module) -> cst.Module:
    """Put `jax.config.update("jax_enable_x64", True)` right after the leading imports,
    before any array is made."""
    if X64_LINE in module.code:
        return module
    body = list(module.body)
    first = next((i for i, s in enumerate(body) if _is_import_line(s)), 0)
    end = first
    while end < len(body) and _is_import_line(body[end]):
        end += 1
    body.insert(end, cst.parse_statement(X64_LINE + "\n"))
    return module.with_changes(body=body)
