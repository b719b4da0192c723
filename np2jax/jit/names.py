"""Names in the code the --jit analysis reads: which a function binds, stores, mentions,
and how a loop body stores them. Syntax only: no value classes here."""

from __future__ import annotations

import libcst as cst

from np2jax.syntax.walk import children, walk


def bound_names(function: cst.FunctionDef) -> set:
    """Names the function binds (its locals), comprehension targets excluded."""
    names = {p.name.value for p in parameters(function)}

    def visit(node) -> None:
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For,
                             cst.NamedExpr)):
            collect_names(node.target, names)
        elif isinstance(node, cst.WithItem):
            if node.asname is not None:
                collect_names(node.asname.name, names)
        elif isinstance(node, cst.ExceptHandler):
            if node.name is not None:
                collect_names(node.name.name, names)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not function:
            names.add(node.name.value)
            return  # its own locals are not the function's
        elif isinstance(node, cst.Lambda):
            return
        elif isinstance(node, cst.Import):
            for alias in node.names:
                names.add((alias.evaluated_alias or alias.evaluated_name).split(".")[0])
        elif isinstance(node, cst.ImportFrom):
            if not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    names.add(alias.evaluated_alias or alias.evaluated_name)
        for child in children(node):
            visit(child)

    visit(function)
    return names


def names_mentioned(nodes) -> set:
    """Every name an expression or statement (or a list of them) mentions, attribute names
    and keywords aside."""
    names: set = set()

    def visit(node) -> None:
        if isinstance(node, cst.Name):
            names.add(node.value)
        elif isinstance(node, (cst.Attribute, cst.Arg)):
            visit(node.value)
            return
        for child in children(node):
            visit(child)

    for node in nodes if isinstance(nodes, (list, tuple)) else [nodes]:
        visit(node)
    return names


def mentions(node, name: str) -> list:
    """The Name nodes under `node` that spell `name`."""
    return [n for n in walk(node) if isinstance(n, cst.Name) and n.value == name]


def names_stored_in(statements) -> set:
    """Names the statements assign to, loop targets included."""
    names: set = set()
    for statement in statements:
        for node in walk(statement):
            if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
                collect_names(node.target, names)
            elif isinstance(node, cst.For):
                collect_names(node.target, names)
    return names


def collect_names(target, names: set) -> None:
    """The names an assignment target binds, into `names`."""
    if isinstance(target, cst.Name):
        names.add(target.value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            collect_names(element.value, names)
    elif isinstance(target, cst.StarredElement):
        collect_names(target.value, names)


def parameters(function: cst.FunctionDef) -> list:
    """The named parameters of a function (`*args` and `**kwargs` aside)."""
    p = function.params
    return [*p.posonly_params, *p.params, *p.kwonly_params]


def store_base(target):
    """The name (or other base) that `x[i].a = ...` stores into: `x`."""
    while isinstance(target, (cst.Subscript, cst.Attribute)):
        target = target.value
    return target


def loop_stores(body) -> dict:
    """name -> how the loop body stores to it: "plain" (`x = ...`), "loop" (a for target),
    "subscript" (`x[...] = ...`: the .at[] rewrite keeps shape and dtype), "augmented"
    (`x += <Python value or array>`), "widening" too when the operand is not a literal."""
    stores: dict = {}

    def add(name: str, kind: str) -> None:
        stores.setdefault(name, set()).add(kind)

    def plain(target) -> None:
        if isinstance(target, cst.Name):
            add(target.value, "plain")
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                plain(element.value)
        elif isinstance(target, cst.StarredElement):
            plain(target.value)
        else:
            base = store_base(target)
            if isinstance(base, cst.Name):
                add(base.value, "subscript")

    for node in walk(body):
        if isinstance(node, cst.AssignTarget):
            plain(node.target)
        elif isinstance(node, cst.AnnAssign):
            plain(node.target)
        elif isinstance(node, cst.AugAssign):
            if isinstance(node.target, cst.Name):
                add(node.target.value, "augmented")
                if not isinstance(node.value, (cst.Integer, cst.Float)):
                    add(node.target.value, "widening")
            else:
                plain(node.target)
        elif isinstance(node, cst.For):
            loop_targets: set = set()
            collect_names(node.target, loop_targets)
            for name in loop_targets:
                add(name, "loop")
        elif isinstance(node, cst.NamedExpr):
            plain(node.target)
    return stores


def assigned_first(body, name: str) -> bool:
    """Whether each iteration binds `name` (a plain `name = ...` at the body's top level,
    not reading it) before anything reads it: then it carries nothing between iterations."""
    statements = list(body.body)
    for index, statement in enumerate(statements):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                        small.targets[0].target, cst.Name) \
                        and small.targets[0].target.value == name:
                    return name not in names_mentioned(small.value)
                if name in names_mentioned(small):
                    return False
        elif name in names_mentioned(statement):
            # a temporary of a nested loop's iterations, read nowhere else in this body
            return isinstance(statement, cst.For) and statement.orelse is None \
                and name not in names_mentioned([statement.target, statement.iter]) \
                and assigned_first(statement.body, name) \
                and name not in names_mentioned(statements[index + 1:])
    return False


def single_update(body, name: str) -> cst.BaseExpression | None:
    """The new value of `name` when the body stores it exactly once, by a top-level
    `name = value` or `name op= value` (as `name op value`); None otherwise."""
    found = None
    count = 0
    for node in walk(body):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)):
            target_names: set = set()
            collect_names(store_base(node.target), target_names)
            if name in target_names:
                count += 1
    for statement in body.body:
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
            small = statement.body[0]
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                    small.targets[0].target, cst.Name) and small.targets[0].target.value == name:
                found = small.value
            elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) \
                    and small.target.value == name:
                operator = type(small.operator).__name__.replace("Assign", "")
                if not hasattr(cst, operator):
                    return None
                found = cst.BinaryOperation(cst.Name(name), getattr(cst, operator)(), small.value)
    return found if count == 1 else None


def statements_storing(body, name: str) -> list:
    """The assignments under `body` that store into `name` (`name[i] = ...` included)."""
    statements = []
    for node in walk(body):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [
                node.target]
            names: set = set()
            for target in targets:
                collect_names(store_base(target), names)
            if name in names:
                statements.append(node)
    return statements


# --- names of the module ----------------------------------------------------------------


def module_bindings(statement) -> list:
    """The names a module-level statement binds, each as many times as it may bind it (twice
    for a binding no constant can be read from: conditional, or by a call that changes it)."""
    names: set = set()
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return [statement.name.value]
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    collect_names(store_base(target.target), names)
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                collect_names(store_base(small.target), names)
            elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
                    getattr(small, "names", None), cst.ImportStar):
                for alias in small.names:
                    names.add((alias.evaluated_alias or alias.evaluated_name).split(".")[0])
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                # x.sort(), np.copyto(x, y), np.add(a, b, out=x): converted to rebind x
                call = small.value
                if isinstance(call.func, cst.Attribute):
                    collect_names(store_base(call.func.value), names)
                for arg in call.args:
                    collect_names(store_base(arg.value), names)
                names.update(n + "\0" for n in set(names))  # counted twice: never a constant
                return [n.rstrip("\0") for n in names]
        return list(names)
    # compound statements at module level: count every name they may bind
    for node in walk(statement):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
            collect_names(store_base(node.target), names)
        elif isinstance(node, cst.For):
            collect_names(node.target, names)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            names.add(node.name.value)
    return [n for n in names] * 2  # bound conditionally: never a constant


def declared_globals(module: cst.Module) -> set:
    """Names some function declares `global` or `nonlocal`."""
    names = set()
    for node in walk(module):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            names.update(n.name.value for n in node.names)
    return names
