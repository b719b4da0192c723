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


def calls_only(function: cst.FunctionDef) -> bool:
    """Whether a transparent decorator or factory (transparent_kind) does nothing with the
    function it wraps but call it, `@wraps` it and hand it to `inspect` (its signature):
    such a decorator may sit above `jax.jit`, since a function jax.jit compiled is called,
    wrapped and inspected as the function itself (its `__code__` or `__defaults__` are
    not there: a decorator reading them is not one of these)."""
    kind = transparent_kind(function)
    if kind is None:
        return False
    decorator = function if kind == DECORATOR else _only_returned_function(function)
    fn = [*decorator.params.posonly_params, *decorator.params.params][0].name.value
    inspecting = _inspect_aliases(decorator)
    for node, parent in _uses(decorator.body, fn):
        if isinstance(parent, cst.Call) and parent.func is node:
            continue  # fn(...)
        if isinstance(parent, cst.Arg) and parent.keyword is None and parent.star == "":
            call = _call_of(decorator.body, parent)
            if call is not None and len(call.args) == 1 and (
                    _wraps_of(call, fn) or _is_inspect(call.func, inspecting)):
                continue
        return False
    return True


def _uses(body: cst.CSTNode, name: str) -> list[tuple[cst.Name, cst.CSTNode]]:
    """Each `Name` node `name` in `body` with its parent (every read: the name is never
    bound again in a transparent decorator)."""
    found = []

    class Finder(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[cst.CSTNode] = []

        def on_visit(self, node) -> bool:
            if isinstance(node, cst.Name) and node.value == name and self.stack:
                found.append((node, self.stack[-1]))
            self.stack.append(node)
            return True

        def on_leave(self, original_node) -> None:
            self.stack.pop()

    body.visit(Finder())
    return found


def _call_of(body: cst.CSTNode, arg: cst.Arg) -> cst.Call | None:
    for node, _parent in _calls(body):
        if any(a is arg for a in node.args):
            return node
    return None


def _calls(body: cst.CSTNode) -> list[tuple[cst.Call, None]]:
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append((node, None))

    body.visit(Finder())
    return found


def _inspect_aliases(function: cst.FunctionDef) -> set[str]:
    """Names `function`'s body binds only to `inspect.<name>` (`getfullargspec =
    inspect.getfullargspec`, in a `try` falling back to `inspect.getargspec`)."""
    values: dict[str, list] = {}

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    values.setdefault(target.target.value, []).append(node.value)

    function.body.visit(Finder())
    bound = _rebound_names(function)
    return {name for name, found in values.items()
            if len(found) == bound.count(name) and all(_is_inspect(v, set()) for v in found)}


def _is_inspect(func: cst.BaseExpression, aliases: set[str]) -> bool:
    """`inspect.<name>`, or a name bound only to one (the module `inspect`, imported as
    itself: a module-level `import inspect`, checked by the caller's module)."""
    if isinstance(func, cst.Name):
        return func.value in aliases
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
        and func.value.value == "inspect"


def jit_safe_decorators(module: cst.Module) -> dict[str, str]:
    """The module's transparent decorators (transparent_decorators) that may sit above
    jax.jit (calls_only), when `inspect` is the module imported as itself."""
    imports_inspect = any(
        isinstance(small, cst.Import) and any(
            isinstance(a.name, cst.Name) and a.name.value == "inspect" and a.asname is None
            for a in small.names)
        for statement in module.body if isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body)
    found = transparent_decorators(module)
    functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    result = {}
    for name, kind in found.items():
        text = code_of(functions[name])
        if "inspect" in text and not imports_inspect:
            continue  # `inspect` there may be something else
        if calls_only(functions[name]):
            result[name] = kind
    return result


def tree_jit_decorators(modules: dict[str, cst.Module], imports: dict[str, dict]) -> dict[str, str]:
    """Qualified name -> kind of the tree's decorators that may sit above jax.jit
    (jit_safe_decorators of `modules`: module name -> its syntax tree), also under the names
    modules re-export them with (`from .utils import deco` in `pkg.vector`: `pkg.vector.deco`;
    `imports`: module name -> what its `from M import f` bind, np2jax.tree.from_imports)."""
    found = {f"{name}.{deco}": kind for name, module in modules.items()
             for deco, kind in jit_safe_decorators(module).items()}
    for _hop in range(8):  # re-exports of re-exports, never a cycle
        more = {f"{name}.{local}": found[target] for name, table in imports.items()
                for local, target in table.items()
                if target in found and f"{name}.{local}" not in found}
        if not more:
            break
        found.update(more)
    return found


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


def star_imported_name(module: cst.Module, name: str, own: str, is_package: bool) -> str | None:
    """"M.name" when `module` has one `from M import *` (M absolute), else None: the name
    could come from several modules."""
    stars = star_imports(module)
    if len(stars) != 1:
        return None
    source = stars[0]
    base = code_of(source.module) if source.module is not None else ""
    return f"{resolve('.' * len(source.relative) + base, own, is_package)}.{name}"


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
