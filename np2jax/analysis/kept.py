"""Functions kept on NumPy as written: named by the configuration (`keep-numpy`, entries
`PATH::QUALNAME[=REASON]`, np2jax.config) or by a pragma on the def line, `def f(x):  #
np2jax: keep-numpy` (`# np2jax: keep-numpy -- reason`).

A kept function's body is NumPy code: every NumPy reference in it stays NumPy (KEEP_KEPT),
no fix is applied inside it (np2jax.pipeline), and its parameters are the edge of a NumPy
island: a JAX array passed for one is read as a NumPy array at entry (the prologue built
here), and a parameter its body writes makes its callers keep their arrays on NumPy
(np2jax.analysis.islands follows the refused writes of the body to the callers). What it
returns is NumPy (its references are kept), which np2jax.analysis.values knows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

PRAGMA = re.compile(r"#\s*np2jax:\s*keep-numpy(?![\w-])(?:\s*--\s*(?P<reason>.*\S))?")
BY_OPTION = "asked by --keep-numpy"
BY_PRAGMA = "asked by the pragma `# np2jax: keep-numpy`"
BY_NUMBA = "it is compiled by numba, which takes NumPy arrays only"
BY_PROTOCOL = "NumPy calls `{name}` with its own arrays, object arrays too, and wants NumPy's back"
# the methods by which a class takes part in NumPy's own calls (`np.exp(obj)` hands
# `obj.__array_wrap__` an object array; `np.asarray(obj)` wants an ndarray from `__array__`)
NUMPY_PROTOCOL_METHODS = frozenset({"__array__", "__array_wrap__", "__array_prepare__",
                                    "__array_ufunc__", "__array_function__", "__array_finalize__"})
_NUMBA_DECORATORS = {"jit", "njit", "vectorize", "guvectorize", "generated_jit", "cfunc", "stencil"}


@dataclass
class KeptFunction:
    node: cst.FunctionDef
    qualname: str  # `f`, `Class.method`; a nested function's own name
    reason: str  # shown in the finding
    entries: list = field(default_factory=list)  # the configuration's entries naming it
    # compiled by numba: its body cannot take a prologue, and every parameter must be given
    # NumPy arrays by its callers (numba refuses JAX arrays), not only those it writes
    numba: bool = False
    # kept without being asked: a finding in its body says the body needs NumPy arrays (a
    # rule's `keeps-function`, np2jax.pipeline); `reason` says which
    automatic: bool = False


def find_kept(module: cst.Module, specs, line_of, lines: list[str] | None,
              automatic: dict | None = None) -> dict:
    """FunctionDef -> KeptFunction for the functions `specs` ((entry, qualname, reason)
    each, Config.kept_in) name and those whose def line carries the pragma; `line_of(node)`
    is a node's 1-based line, `lines` the source's lines (None: no pragma in the text).
    `automatic`: FunctionDef -> (qualname, reason) of the functions kept because a finding
    in their body says it needs NumPy arrays (np2jax.pipeline); one kept for another
    reason keeps that one."""
    by_name: dict[str, list] = {}
    for entry, qualname, reason in specs:
        by_name.setdefault(qualname, []).append((entry, reason))
    found: dict = {}

    def walk(body, prefix: str | None) -> None:
        for statement in body:
            if isinstance(statement, cst.FunctionDef):
                qualname = statement.name.value if prefix is None else f"{prefix}.{statement.name.value}"
                named = by_name.get(qualname, [])
                pragma = _pragma(statement, line_of, lines)
                if named or pragma is not None:
                    reasons = [r for _, r in named if r]
                    reason = reasons[0] if reasons else pragma if pragma else \
                        BY_OPTION if named else BY_PRAGMA
                    found[statement] = KeptFunction(statement, qualname, reason,
                                                    [e for e, _ in named])
                # a nested function is reached by its pragma only (no QUALNAME names it)
                _nested(statement.body, line_of, lines, found)
            elif isinstance(statement, cst.ClassDef):
                name = statement.name.value if prefix is None else f"{prefix}.{statement.name.value}"
                walk(_statements(statement.body), name)
            elif isinstance(statement, (cst.If, cst.Try, cst.With)):
                walk(_statements(statement.body), prefix)  # `if TYPE_CHECKING:`, try/except import

    walk(module.body, None)
    for function, qualname in numba_compiled(module).items():
        found.setdefault(function, KeptFunction(function, qualname, BY_NUMBA, numba=True))
    for function, qualname in numpy_protocol_methods(module).items():
        found.setdefault(function, KeptFunction(
            function, qualname, BY_PROTOCOL.format(name=function.name.value), automatic=True))
    for function, (qualname, reason) in (automatic or {}).items():
        found.setdefault(function, KeptFunction(function, qualname, reason, automatic=True))
    return found


def enclosing_function(node, parents: dict) -> cst.FunctionDef | None:
    """The innermost `def` whose body (or signature) holds `node`, lambdas passed over."""
    node = parents.get(node)
    while node is not None and not isinstance(node, cst.FunctionDef):
        node = parents.get(node)
    return node


def qualname_of(function: cst.FunctionDef, parents: dict) -> str:
    """`f`, `Class.method`, `Outer.Inner.method`; a function nested in another function is
    named by its own name (as find_kept names it)."""
    names = [function.name.value]
    node = parents.get(function)
    while node is not None:
        if isinstance(node, cst.FunctionDef):
            return function.name.value
        if isinstance(node, cst.ClassDef):
            names.append(node.name.value)
        node = parents.get(node)
    return ".".join(reversed(names))


def numba_compiled(module: cst.Module) -> dict:
    """FunctionDef -> qualname of the module-level functions (in `if`/`try` blocks too)
    decorated by numba (`@njit`, `@numba.jit(...)`, `@nb.guvectorize([...], "(n)->()")`): numba
    compiles them for NumPy arrays, and a JAX array handed to one fails (TypingError)."""
    aliases: set[str] = set()  # names bound to the numba module
    decorators: set[str] = set()  # names bound to numba's decorators
    for node in _statements_deep(module.body):
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                if isinstance(small, cst.Import):
                    for name in small.names:
                        if _dotted(name.name) == "numba":
                            aliases.add(name.asname.name.value if name.asname else "numba")
                elif isinstance(small, cst.ImportFrom) and small.relative == () \
                        and small.module is not None and _dotted(small.module) == "numba" \
                        and not isinstance(small.names, cst.ImportStar):
                    for name in small.names:
                        if _dotted(name.name) in _NUMBA_DECORATORS:
                            decorators.add(name.asname.name.value if name.asname else _dotted(name.name))
    if not aliases and not decorators:
        return {}

    def is_numba(expression) -> bool:
        if isinstance(expression, cst.Call):
            expression = expression.func
        if isinstance(expression, cst.Name):
            return expression.value in decorators
        return isinstance(expression, cst.Attribute) and isinstance(expression.value, cst.Name) \
            and expression.value.value in aliases and expression.attr.value in _NUMBA_DECORATORS

    return {node: node.name.value for node in _statements_deep(module.body)
            if isinstance(node, cst.FunctionDef) and any(is_numba(d.decorator) for d in node.decorators)}


def numpy_protocol_methods(module: cst.Module) -> dict:
    """FunctionDef -> qualname of the methods NumPy itself calls (NUMPY_PROTOCOL_METHODS)
    in the module's classes (nested in classes too)."""
    found = {}

    def walk(body, prefix: str) -> None:
        for statement in _statements(body):
            if isinstance(statement, cst.ClassDef):
                walk(statement.body, f"{prefix}{statement.name.value}.")
            elif isinstance(statement, cst.FunctionDef) and prefix \
                    and statement.name.value in NUMPY_PROTOCOL_METHODS:
                found[statement] = prefix + statement.name.value

    for statement in _statements_deep(module.body):
        if isinstance(statement, cst.ClassDef):
            walk(statement.body, f"{statement.name.value}.")
    return found


def _statements_deep(body) -> list:
    """The statements of a module body, those of its `if`/`try` blocks included."""
    found = []
    for statement in body:
        found.append(statement)
        if isinstance(statement, (cst.If, cst.Try)):
            found.extend(_statements_deep(_statements(statement.body)))
            for handler in getattr(statement, "handlers", ()):
                found.extend(_statements_deep(_statements(handler.body)))
            for other in (getattr(statement, "orelse", None), getattr(statement, "finalbody", None)):
                if other is not None:
                    found.extend(_statements_deep(_statements(getattr(other, "body", other))))
    return found


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _nested(block, line_of, lines, found: dict) -> None:
    """The functions defined anywhere inside `block` (in a loop, a branch, a class) that
    carry the pragma."""
    stack = [block]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.FunctionDef):
            pragma = _pragma(node, line_of, lines)
            if pragma is not None and node not in found:
                found[node] = KeptFunction(node, node.name.value, pragma or BY_PRAGMA)
        stack.extend(node.children)


def _statements(block) -> list:
    body = getattr(block, "body", ())
    return list(body) if isinstance(body, (list, tuple)) else []


def _pragma(function: cst.FunctionDef, line_of, lines) -> str | None:
    """The pragma's reason ("" without one), or None when the def line has no pragma: the
    line of `def` and the line ending the header (a signature over several lines)."""
    comments = []
    body = function.body
    if isinstance(body, cst.IndentedBlock) and body.header.comment is not None:
        comments.append(body.header.comment.value)
    elif isinstance(body, cst.SimpleStatementSuite) and body.trailing_whitespace.comment is not None:
        comments.append(body.trailing_whitespace.comment.value)
    if lines is not None:
        line = line_of(function.name)
        if 0 < line <= len(lines) and "#" in lines[line - 1]:
            comments.append(lines[line - 1][lines[line - 1].index("#"):])
    for comment in comments:
        match = PRAGMA.search(comment)
        if match:
            return match.group("reason") or ""
    return None


def is_method(function: cst.FunctionDef, parents: dict) -> bool:
    """A function defined in a class's body, not a staticmethod: its first parameter is
    the object (or the class) it is called on."""
    block = parents.get(function)
    cls = parents.get(block)
    return isinstance(cls, cst.ClassDef) and not any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
        for d in function.decorators)


def entry_parameters(function: cst.FunctionDef, parents: dict) -> list[cst.Param]:
    """The parameters a caller passes values for: all but a method's first."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    if is_method(function, parents) and positional:
        positional = positional[1:]
    found = [*positional]
    if isinstance(params.star_arg, cst.Param):
        found.append(params.star_arg)
    found.extend(params.kwonly_params)
    if params.star_kwarg is not None:
        found.append(params.star_kwarg)
    return found


HELPER = "_np2jax_as_numpy"

HELPER_CODE = '''
def {helper}(value, in_place=False, _within=()):
    # np2jax (NJ104): `value`, given to code kept on NumPy, with every JAX array in it
    # read as a NumPy array (a 0-d one as NumPy's scalar, as a NumPy reduction gives it),
    # inside lists, tuples and dicts too; the same object where it holds none. in_place: a
    # list or dict holding one is changed in place (the function changes what it is given).
    import copy
    import sys

    import jax

    if isinstance(value, jax.Array):
        return sys.modules["numpy"].asarray(value)[()]
    if not isinstance(value, (list, tuple, dict)) or id(value) in _within:
        return value  # anything else, or a container holding itself, as it is
    within = (*_within, id(value))
    items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    new = [(k, {helper}(v, in_place, within)) for k, v in items]
    if all(n is v for (_, n), (_, v) in zip(new, items)):
        return value
    if isinstance(value, tuple):
        values = [n for _, n in new]
        if type(value) is tuple:
            return tuple(values)
        return type(value)(*values) if hasattr(value, "_fields") else value
    if in_place or type(value) not in (list, dict):
        if not in_place:
            value = copy.copy(value)  # a subclass (OrderedDict, defaultdict): copied as it is
        for (k, n), (_, v) in zip(new, items):
            if n is not v:
                value.__setitem__(k, n)  # a list's or a dict's: never an array's
        return value
    return [n for _, n in new] if type(value) is list else dict(new)
'''


def helper_statements() -> list[cst.BaseStatement]:
    """The definition of the helper the prologues call, written once into the module (no
    NumPy reference in it: converting the module again leaves it as it is)."""
    return list(cst.parse_module(HELPER_CODE.format(helper=HELPER).lstrip("\n")).body)


def has_helper(module: cst.Module) -> bool:
    return any(isinstance(s, cst.FunctionDef) and s.name.value == HELPER for s in module.body)


def helper_anchor(module: cst.Module) -> cst.CSTNode | None:
    """The statement the helper goes before: the first module-level statement that is not
    an import or the docstring (so before any code that runs at import)."""
    for index, statement in enumerate(module.body):
        if isinstance(statement, cst.SimpleStatementLine):
            if all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
                continue
            if index == 0 and _is_docstring(statement):
                continue
        return statement
    return None


def with_helper(node):
    """The helper's definition, then the statement it goes before (and whatever other fixes
    put before it)."""
    after = list(node.nodes) if isinstance(node, cst.FlattenSentinel) else [node]
    helper = helper_statements()
    first = after[0]
    # two blank lines around the def; the statement's own comments stay above it
    own = list(first.leading_lines)
    while own and own[0].comment is None:
        own.pop(0)
    helper[0] = helper[0].with_changes(leading_lines=(cst.EmptyLine(), cst.EmptyLine()))
    after[0] = first.with_changes(leading_lines=(cst.EmptyLine(), cst.EmptyLine(), *own))
    return cst.FlattenSentinel([*helper, *after])


def prologue(function: cst.FunctionDef, parents: dict, in_place: set) -> list[cst.BaseStatement]:
    """The lines at the top of a kept function reading every JAX array its callers pass as
    a NumPy array, also inside the lists, tuples and dicts they pass (`x =
    _np2jax_as_numpy(x)`, the helper above); anything else (a NumPy array, a list of
    numbers, a number) is left as it is, the same object, so that writes into it still
    reach the caller. `in_place`: the parameters whose value the body may change (it writes
    into it, appends to it, returns it or keeps it, or the analysis cannot tell): a list or
    dict given for one is changed in place, so that the caller sees the body's changes (and
    NumPy arrays with the same values where it held JAX arrays). A read-only NumPy view of a
    JAX array that the body writes fails loudly (the callers np2jax sees pass NumPy arrays
    for a parameter the body writes: islands)."""
    lines = []
    for param in entry_parameters(function, parents):
        name = param.name.value
        flag = ", in_place=True" if name in in_place else ""
        lines.append(cst.parse_statement(f"{name} = {HELPER}({name}{flag})\n"))
    return lines


# methods by which a body changes a list or dict it is given
CONTAINER_WRITES = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update",
                              "setdefault", "popitem", "sort", "reverse", "__setitem__",
                              "__delitem__"})


def changes_container(function: cst.FunctionDef, name: str) -> bool:
    """Whether the body calls a method that changes a list or dict on the parameter `name`
    or on something in it (`name.append(v)`, `name[k].update(d)`), or deletes from it
    (`del name[k]`)."""
    found = False

    def base(expression):
        while isinstance(expression, (cst.Subscript, cst.Attribute)):
            expression = expression.value
        return expression

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in CONTAINER_WRITES:
                target = base(func.value)
                found = found or (isinstance(target, cst.Name) and target.value == name)

        def visit_Del(self, node: cst.Del) -> None:
            nonlocal found
            stack = [node.target]
            while stack:
                target = stack.pop()
                if isinstance(target, (cst.Tuple, cst.List)):
                    stack.extend(e.value for e in target.elements)
                elif isinstance(target, cst.Subscript):
                    root = base(target)
                    found = found or (isinstance(root, cst.Name) and root.value == name)

    function.body.visit(Visitor())
    return found


def has_prologue(function: cst.FunctionDef, parents: dict) -> bool:
    """Whether the function already starts with a prologue (converted before): a line
    `p = _np2jax_as_numpy(p...)` for each parameter its callers pass."""
    body = function.body
    if not isinstance(body, cst.IndentedBlock):
        return False
    names = [p.name.value for p in entry_parameters(function, parents)]
    statements = list(body.body)
    at = 1 if statements and _is_docstring(statements[0]) else 0
    present = statements[at:at + len(names)]
    return len(present) == len(names) and all(
        _prologue_line_of(statement) == name for statement, name in zip(present, names))


def _prologue_line_of(statement) -> str | None:
    """The parameter a prologue line `p = _np2jax_as_numpy(p...)` reads, or None."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    assign = statement.body[0]
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)):
        return None
    call = assign.value
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == HELPER \
            and call.args and isinstance(call.args[0].value, cst.Name) \
            and call.args[0].value.value == assign.targets[0].target.value:
        return assign.targets[0].target.value
    return None


def with_prologue(function: cst.FunctionDef, lines: list) -> cst.FunctionDef:
    """The function with `lines` after its docstring (or first)."""
    body = function.body
    if isinstance(body, cst.SimpleStatementSuite):  # `def f(x): return x`: made a block
        body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=list(body.body))],
                                 header=body.trailing_whitespace)
    statements = list(body.body)
    at = 1 if statements and _is_docstring(statements[0]) else 0
    return function.with_changes(body=body.with_changes(
        body=[*statements[:at], *lines, *statements[at:]]))


def _is_docstring(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Expr) \
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def inside(node, parents: dict, kept: dict) -> bool:
    """Whether `node` is a kept function or lies in one (its decorators and name included)."""
    while node is not None:
        if node in kept:
            return True
        node = parents.get(node)
    return False
