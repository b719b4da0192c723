"""NJ105 numpy-interface.

With `--interface numpy` (`interface = "numpy"`): every public function of a converted
module (a module-level `def`, a method of a module-level class, neither named with a leading
underscore) is decorated with `_np2jax_numpy_interface`, a helper written once into the
module (no runtime dependency on np2jax): what it returns to a caller outside the converted
tree is what NumPy gave, writable NumPy arrays (a copy) and NumPy scalars for 0-d results,
inside tuples, lists, dicts and namedtuples too; callers inside the tree (the modules
carrying the same `_NP2JAX_TREE` marker) get JAX arrays, and values being traced by JAX
(jax.jit, vmap) pass through. The pipeline applies these fixes last (the decorator is
outermost, over `jax.jit` and the library's own decorators) and only in a module that
converts something else (np2jax.pipeline).
"""

from __future__ import annotations

import libcst as cst

from np2jax.rules.base import Rule
from np2jax.syntax import code_of

DECORATOR = "_np2jax_numpy_interface"
MARKER = "_NP2JAX_TREE"

HELPER = '''
{marker} = "{tree}"  # np2jax --interface numpy: the modules of this converted tree


def {decorator}(function):
    """np2jax --interface numpy (NJ105): a caller outside the converted tree gets NumPy's
    result (writable NumPy arrays, NumPy scalars for 0-d arrays); callers inside the tree,
    and values JAX is tracing, get JAX's."""
    import functools
    import sys

    import jax

    numpy = sys.modules["numpy"]  # loaded by jax; looked up, so that converting again keeps it
    concrete = {{}}  # type -> whether it is a JAX array with values (a tracer is not)

    def to_numpy(value):
        kind = type(value)
        if kind not in concrete:
            concrete[kind] = issubclass(kind, jax.Array)
        if concrete[kind]:
            value = numpy.array(value)  # a copy: writable
            return value[()] if value.ndim == 0 else value
        if kind in (tuple, list):
            return type(value)(map(to_numpy, value))
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*map(to_numpy, value))
        if kind is dict:
            return {{key: to_numpy(item) for key, item in value.items()}}
        return value

    @functools.wraps(function)
    def numpy_interface(*args, **kwargs):
        result = function(*args, **kwargs)
        if sys._getframe(1).f_globals.get("{marker}") == {marker}:
            return result
        return to_numpy(result)

    return numpy_interface
'''

# decorators that must stay outermost: they make a descriptor of the function, which a
# plain function wrapper around them would break
_DESCRIPTORS = frozenset({"staticmethod", "classmethod", "property", "cached_property",
                          "functools.cached_property", "abc.abstractproperty"})
# decorators whose function is never called as written (a setter returns nothing, an
# overload is a stub)
_SKIPPED = frozenset({"overload", "typing.overload", "typing_extensions.overload"})


def _decorator_name(decorator: cst.Decorator) -> str:
    expression = decorator.decorator
    if isinstance(expression, cst.Call):
        expression = expression.func
    return code_of(expression)


def _interfaced(function: cst.FunctionDef) -> bool:
    """Whether a function is given the interface: a public, synchronous `def` that is not
    already (a converted module converted again), nor a property's setter or deleter, nor
    an overload's stub."""
    names = [_decorator_name(d) for d in function.decorators]
    return (not function.name.value.startswith("_") and function.asynchronous is None
            and DECORATOR not in names and not any(
                n in _SKIPPED or n.endswith((".setter", ".deleter")) for n in names))


def public_functions(module: cst.Module) -> list[tuple[str, cst.FunctionDef, cst.CSTNode]]:
    """(qualified name, def, the module-level statement holding it) of each function given
    the interface: module-level defs, and the methods of module-level public classes."""
    found = []
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and _interfaced(statement):
            found.append((statement.name.value, statement, statement))
        elif isinstance(statement, cst.ClassDef) and not statement.name.value.startswith("_"):
            body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else ()
            for member in body:
                if isinstance(member, cst.FunctionDef) and _interfaced(member):
                    found.append((f"{statement.name.value}.{member.name.value}", member, statement))
    return found


def has_helper(module: cst.Module) -> bool:
    return any(isinstance(s, cst.FunctionDef) and s.name.value == DECORATOR for s in module.body)


def has_marker(module: cst.Module) -> bool:
    return any(isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Assign)
               and code_of(s.body[0].targets[0].target) == MARKER for s in module.body)


def first_statement(module: cst.Module) -> cst.CSTNode | None:
    """Where the marker (and the helper) go: before the first module-level statement that is
    not an import or the docstring, so before any code that runs at import."""
    for index, statement in enumerate(module.body):
        if isinstance(statement, cst.SimpleStatementLine):
            if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
                continue
            if index == 0 and isinstance(statement.body[0], cst.Expr) and isinstance(
                    statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
                continue
        return statement
    return None


def decorate(function: cst.FunctionDef) -> cst.FunctionDef:
    """`@_np2jax_numpy_interface` outermost, under the descriptor decorators (staticmethod,
    property...) only."""
    decorators = list(function.decorators)
    place = max((i + 1 for i, d in enumerate(decorators) if _decorator_name(d) in _DESCRIPTORS),
                default=0)
    decorators.insert(place, cst.Decorator(cst.Name(DECORATOR)))
    return function.with_changes(decorators=decorators)


def helper_statements(tree: str, functions: bool) -> list[cst.BaseStatement]:
    """The marker line, and the decorator's definition where functions need it."""
    text = HELPER.format(marker=MARKER, decorator=DECORATOR, tree=tree).lstrip("\n")
    if not functions:
        text = text.split("\n\n\n")[0] + "\n"
    return list(cst.parse_module(text).body)


def with_helper(node, tree: str, functions: bool):
    """The marker (and the helper), then the statement they go before (and whatever other
    fixes put before it)."""
    after = list(node.nodes) if isinstance(node, cst.FlattenSentinel) else [node]
    helper = helper_statements(tree, functions)
    first = after[0]
    helper[0] = helper[0].with_changes(leading_lines=first.leading_lines)
    blank = (cst.EmptyLine(), cst.EmptyLine()) if functions or isinstance(
        first, cst.BaseCompoundStatement) else (cst.EmptyLine(),)
    after[0] = first.with_changes(leading_lines=blank)
    return cst.FlattenSentinel([*helper, *after])


def tree_identity(context) -> str:
    """What marks the modules of one converted tree: its top-level names (ModuleContext.tree),
    or the module's own name, or "__main__" for a lone source."""
    return context.tree or context.name.split(".")[0] or "__main__"


def names_message(names: list[str], limit: int = 12) -> str:
    shown = ", ".join(f"`{n}`" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


class NumpyInterface(Rule):
    code = "NJ105"

    def run(self):
        """The marker goes into every module that converts something (the pipeline drops
        these fixes in the others), so that its calls of the tree's functions get JAX
        arrays; the decorator onto its public functions."""
        if self.config.interface != "numpy":
            return
        module = self.analysis.module
        found = public_functions(module)
        insert = not has_marker(module)
        if not insert and not (found and has_helper(module)):
            return  # converted before
        anchor = first_statement(module) if insert else None
        if insert and anchor is None:
            return  # imports only: no code that calls anything
        requires = (anchor,) if insert else ()
        for index, (qualname, function, _) in enumerate(found):
            names = names_message([q for q, _, _ in found]) if index == 0 else f"`{qualname}`"
            yield self.report(function, functions=names, fix=decorate, listed=index == 0,
                              requires=requires, converts=False, report_if_unfixed=False)
        if insert:
            tree = tree_identity(self.analysis.context)
            yield self.report(anchor, functions="", listed=False, converts=False,
                              fix=lambda node: with_helper(node, tree, bool(found)),
                              report_if_unfixed=False)
