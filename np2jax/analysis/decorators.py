"""Decorators that hand back what the function they wrap returns.

`@all_parameters_as_numpy_arrays` or `@parameters_as_numpy_arrays("mat")` (pyrr) wrap a
function in `def wrapper(*args, **kwargs): ...; return fn(*args, **kwargs)`: whatever the
wrapper does with the arguments first, a call of the decorated function returns what the
function itself returns. Such a decorator is *transparent*: a summary of the function's
returns (np2jax.analysis.effects, exported to the other modules of the tree) holds for the
decorated function too. Nothing is claimed about the arguments: the wrapper may copy or
change them, so the parameters of a decorated function are never called read-only.

Recognised by shape only, never by name:
- a decorator `def deco(fn)` whose every path returns one nested `def wrapper(...)`,
  undecorated but for `@wraps(fn)`, every path of which returns `fn(...)`, with `fn` and
  `wrapper` never bound again;
- a factory `def factory(...)` whose every path returns such a nested decorator, used as
  `@factory(...)`.
`functools.lru_cache` and the like are not of this shape (they return a stored value), so
they are never transparent.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.values import ReturnsFinder, always_leaves
from np2jax.syntax import code_of
from np2jax.tree import resolve

DECORATOR, FACTORY = "decorator", "factory"


def transparent_kind(function: cst.FunctionDef) -> str | None:
    """DECORATOR or FACTORY when `function` is a transparent decorator or a factory of one
    (module docstring), else None."""
    if function.decorators or function.asynchronous:
        return None
    if _decorator_wrapper(function) is not None:
        return DECORATOR
    inner = _only_returned_function(function)
    if inner is not None and _decorator_wrapper(inner) is not None:
        return FACTORY
    return None


def transparent_decorators(module: cst.Module) -> dict[str, str]:
    """The module-level functions of `module` that are transparent decorators or
    factories: name -> DECORATOR or FACTORY (a name bound once at module level)."""
    bound: dict[str, int] = {}
    found = {}
    for statement in module.body:
        for name in _names_bound_by(statement):
            bound[name] = bound.get(name, 0) + 1
        if isinstance(statement, cst.FunctionDef):
            kind = transparent_kind(statement)
            if kind is not None:
                found[statement.name.value] = kind
    return {name: kind for name, kind in found.items() if bound.get(name) == 1}


def decorator_use(decorator: cst.Decorator) -> tuple[cst.BaseExpression, str] | None:
    """(the expression naming the decorator or factory, the kind its use needs):
    `@deco` -> (deco, DECORATOR), `@factory(...)` -> (factory, FACTORY), else None."""
    expression = decorator.decorator
    kind = DECORATOR
    if isinstance(expression, cst.Call):
        expression, kind = expression.func, FACTORY
    if isinstance(expression, (cst.Name, cst.Attribute)):
        return expression, kind
    return None


def star_imports(module: cst.Module) -> list[cst.ImportFrom]:
    """The module-level `from M import *` statements."""
    return [small for statement in module.body if isinstance(statement, cst.SimpleStatementLine)
            for small in statement.body
            if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar)]


def from_imports(module: cst.Module, own: str, is_package: bool) -> dict[str, str]:
    """Module-level `from M import f [as g]`: g -> "M.f", absolute (the tree follows a
    decorator imported through another module: `from .vector import *`, where vector.py
    imports it from utils)."""
    found = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
                continue
            base = code_of(small.module) if small.module is not None else ""
            base = resolve("." * len(small.relative) + base, own, is_package)
            for alias in small.names:
                if isinstance(alias.name, cst.Name):
                    local = alias.asname.name.value if alias.asname is not None \
                        and isinstance(alias.asname.name, cst.Name) else alias.name.value
                    found[local] = f"{base}.{alias.name.value}"
    return found


def _decorator_wrapper(function: cst.FunctionDef) -> cst.FunctionDef | None:
    """The nested wrapper when `function` is `def deco(fn): ... return wrapper` with every
    path of `wrapper` returning `fn(...)`."""
    params = function.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None \
            or params.kwonly_params or len([*params.posonly_params, *params.params]) != 1:
        return None
    fn = [*params.posonly_params, *params.params][0].name.value
    wrapper = _only_returned_function(function)
    if wrapper is None or fn in _rebound_names(function) or fn in _rebound_names(wrapper):
        return None
    if not all(_wraps_of(d.decorator, fn) for d in wrapper.decorators) or wrapper.asynchronous:
        return None
    finder = ReturnsFinder()
    wrapper.body.visit(finder)
    if finder.yields or not finder.returns or not always_leaves(wrapper.body.body):
        return None
    if not all(isinstance(r.value, cst.Call) and isinstance(r.value.func, cst.Name)
               and r.value.func.value == fn for r in finder.returns):
        return None
    return wrapper


def _only_returned_function(function: cst.FunctionDef) -> cst.FunctionDef | None:
    """The function defined once in `function`'s own body that every path of it returns by
    name, never bound otherwise."""
    finder = ReturnsFinder()
    function.body.visit(finder)
    if finder.yields or not finder.returns or not always_leaves(function.body.body):
        return None
    if not all(isinstance(r.value, cst.Name) for r in finder.returns):
        return None
    names = {r.value.value for r in finder.returns}
    if len(names) != 1:
        return None
    (name,) = names
    defined = [s for s in function.body.body if isinstance(s, cst.FunctionDef) and s.name.value == name]
    if len(defined) != 1 or _rebound_names(function).count(name) != 1:
        return None
    return defined[0]


def _wraps_of(decorator: cst.BaseExpression, fn: str) -> bool:
    """`@wraps(fn)` or `@functools.wraps(fn)`."""
    if not isinstance(decorator, cst.Call) or len(decorator.args) != 1:
        return False
    func = decorator.func
    named = (isinstance(func, cst.Name) and func.value == "wraps") or (
        isinstance(func, cst.Attribute) and func.attr.value == "wraps"
        and isinstance(func.value, cst.Name) and func.value.value == "functools")
    value = decorator.args[0].value
    return named and isinstance(value, cst.Name) and value.value == fn


def _rebound_names(function: cst.FunctionDef) -> list[str]:
    """Every name `function`'s body binds (nested functions' bodies included), once per
    binding: assignments, loop and `with` targets, imports, nested `def`/`class`, and the
    names declared global or nonlocal."""
    binder = _Binder()
    function.body.visit(binder)
    return binder.names


class _Binder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def _targets(self, target) -> None:
        if isinstance(target, cst.Name):
            self.names.append(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._targets(element.value)
        elif isinstance(target, cst.StarredElement):
            self._targets(target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._targets(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._targets(node.name)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None and isinstance(node.name, cst.Name):
            self.names.append(node.name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.names.append(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.names.append(node.name.value)

    def visit_Global(self, node: cst.Global) -> None:
        self.names.extend(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.names.extend(n.name.value for n in node.names)


def _names_bound_by(statement) -> list[str]:
    """The module-level names one top-level statement binds (an `if`/`try` block's too)."""
    binder = _Binder()
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return [statement.name.value]
    statement.visit(binder)
    return binder.names
