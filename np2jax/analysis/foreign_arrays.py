"""Functions that hold arrays JAX has no counterpart of: object and structured arrays
(`dtype=object`, `np.genfromtxt(f, names=True)`), dates or times (np.datetime64,
`dtype="M8[D]"`, `.astype("m8[s]")`), extended-precision floats (`dtype="longdouble"`,
np.float128) and masked arrays (`np.ma.masked_invalid(x)`). Such a function is kept on
NumPy as written (NJ104, np2jax.analysis.kept), with the functions its arrays reach: its
callers, when it returns them, and the module functions it calls with arguments that may
hold them. Where the arrays may go further (a module-level statement, an attribute, a
global, a container the caller passed, a function other modules or unknown callers reach),
nothing is contained and the module stays on NumPy (np2jax.analysis.module)."""

from __future__ import annotations

from collections import defaultdict

import libcst as cst
from libcst.metadata import GlobalScope

from np2jax.analysis.collect import extended_type
from np2jax.analysis.kept import HELPER, qualname_of
from np2jax.syntax import code_of

MAKES = "automatically: it makes {} (`{}`), which JAX has no arrays of"
GETS = "automatically: it gets {} from `{}`, which JAX has no arrays of"
GIVEN = "automatically: it may be given {} by `{}`, which JAX has no arrays of"
# methods by which a body changes a list, dict or set it did not make
_CONTAINER_WRITES = frozenset({"append", "extend", "insert", "update", "setdefault", "add"})


def foreign_array_functions(collector) -> dict | None:
    """FunctionDef -> (qualname, reason) of the functions whose bodies hold such arrays
    (collector.foreign_calls), each made in it or returned to it by another;
    {} when the module makes none; None when they may reach code outside such functions."""
    parents = collector.parents
    found: dict = {}
    work = []
    held: dict = {}  # function -> what it holds
    # function -> where they come from in it: the calls making them or giving them back,
    # or None: its parameters (another function hands them in)
    sources: dict = defaultdict(set)

    def reach(function, source, reason: str, what: str) -> None:
        """`function` holds them from `source` too: judged (again) with it."""
        if source in sources[function] and function in found:
            return
        sources[function].add(source)
        if function not in found:
            found[function] = (qualname_of(function, parents), reason)
            held[function] = what
        if function not in work:
            work.append(function)

    for call, what in collector.foreign_calls.items():
        callee = _module_function(call, collector)
        if callee is not None and any(extended_type(a.value) for a in call.args):
            # harmonic(n, np.longdouble): the function handed the type makes them
            reach(callee, None, GIVEN.format(what, code_of(call)), what)
            continue
        function = _outermost_function(call, parents)
        if function is None:
            return None  # made by a module-level statement or a class body
        reach(function, call, MAKES.format(what, code_of(call)), what)
    while work:
        function = work.pop()
        if _leaks(function):
            return None
        callees = _callees(function, collector, sources[function])
        if callees is None:
            return None  # handed to a method (`self.fit(x)`): not followed
        for callee, call in callees:  # span(x)
            reach(callee, None, GIVEN.format(held[function], code_of(call)), held[function])
        if not _gives_values(function, sources[function]):
            continue
        callers = _callers(function, collector)
        if callers is None:
            return None
        for caller, call in callers:
            reach(caller, call, GETS.format(held[function], code_of(call)), held[function])
    return found


def _outermost_function(node, parents: dict) -> cst.FunctionDef | None:
    """The `def` holding `node` that no other `def` holds (a method counts as one)."""
    outermost = None
    node = parents.get(node)
    while node is not None:
        if isinstance(node, cst.FunctionDef):
            outermost = node
        node = parents.get(node)
    return outermost


# builtins whose result holds no array: a Python number, truth value or string
_PLAIN_RESULTS = frozenset({"int", "float", "bool", "len", "str", "round", "repr"})


def _may_hold_arrays(value) -> bool:
    """Whether a returned value may hold such arrays: anything but numbers, strings,
    comparisons and `int(...)`, `len(...)`, `str(...)` (inside tuples, lists and dicts too)."""
    if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                          cst.ConcatenatedString, cst.FormattedString, cst.Comparison)):
        return False
    if isinstance(value, cst.Name):
        return value.value not in ("None", "True", "False")
    if isinstance(value, (cst.Tuple, cst.List)):
        return any(_may_hold_arrays(e.value) for e in value.elements)
    if isinstance(value, cst.Dict):
        return any(not isinstance(e, cst.DictElement) or _may_hold_arrays(e.value)
                   for e in value.elements)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
        return value.func.value not in _PLAIN_RESULTS
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        return value.func.attr.value not in ("tolist", "item")  # Python values
    return True


def _gives_values(function: cst.FunctionDef, sources: set) -> bool:
    """Whether the function may hand its arrays back: a `return` of a value that may hold
    them (_holds: computed from `sources`), or a yield."""
    names = _holding_names(function, sources)
    found = False

    class Visitor(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            nonlocal found
            found = found or node.value is not None and _holds(node.value, sources, names)

        def visit_Yield(self, node: cst.Yield) -> None:
            nonlocal found
            found = True

    function.body.visit(Visitor())
    return found


def _leaks(function: cst.FunctionDef) -> bool:
    """Whether the body may put a value where code outside it reads it: `global`/`nonlocal`,
    a store into an attribute, into an item of a container it did not make (a parameter, a
    global), or such a container's `.append(...)`."""
    params = {p.name.value for p in (*function.params.params, *function.params.posonly_params,
                                     *function.params.kwonly_params)}
    for star in (function.params.star_arg, function.params.star_kwarg):
        if isinstance(star, cst.Param):
            params.add(star.name.value)
    local: set = set()
    stores: list = []
    leaked = False

    class Visitor(cst.CSTVisitor):
        def visit_Global(self, node) -> None:
            nonlocal leaked
            leaked = True

        def visit_Nonlocal(self, node) -> None:
            nonlocal leaked
            leaked = True

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self._target(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._target(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self._target(node.target)

        def visit_For(self, node: cst.For) -> None:
            self._target(node.target)

        def visit_WithItem(self, node: cst.WithItem) -> None:
            if node.asname is not None:
                self._target(node.asname.name)

        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _CONTAINER_WRITES:
                stores.append(func.value)

        def _target(self, target) -> None:
            nonlocal leaked
            if isinstance(target, (cst.Tuple, cst.List)):
                for element in target.elements:
                    self._target(element.value)
            elif isinstance(target, cst.StarredElement):
                self._target(target.value)
            elif isinstance(target, cst.Name):
                local.add(target.value)
            elif isinstance(target, cst.Attribute):
                leaked = True
            elif isinstance(target, cst.Subscript):
                stores.append(target.value)

    function.body.visit(Visitor())
    if leaked:
        return True
    for base in stores:
        while isinstance(base, (cst.Subscript, cst.Attribute)):
            base = base.value
        if not isinstance(base, cst.Name) or base.value in params or base.value not in local:
            return True
    return False


def _callees(function: cst.FunctionDef, collector, sources: set) -> list | None:
    """(module-level function, call) for each call in the body of a module-level function
    by its name with an argument that may hold the arrays: one computed from where they
    come from in the function (`sources`; None: its parameters), through the names it
    binds (`spread(x)`, x = np.linspace(..., dtype="longdouble"); not `smooth(np.sin(t))`
    of other values). Converted, such a function would hand them to JAX. None: a method of
    the instance is handed them (`self.fit(x)`), which is not followed."""
    holding = _holding_names(function, sources)
    found: list | None = []

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            func = node.func
            if found is None or not any(_holds(a.value, sources, holding) for a in node.args):
                return
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                    and func.value.value in ("self", "cls"):
                found = None
                return
            if not isinstance(func, cst.Name) or func.value == HELPER:
                return  # np2jax's own helper reads JAX arrays as NumPy's
            callee = _module_function(node, collector)
            if callee is not None:
                found.append((callee, node))

    function.body.visit(Visitor())
    return found


def _module_function(call: cst.Call, collector) -> cst.FunctionDef | None:
    """The module-level function `call` calls by its name, or None."""
    if not isinstance(call.func, cst.Name):
        return None
    scope = collector.scopes.get(call.func)
    assignments = list(scope[call.func.value]) if scope is not None else []
    callee = getattr(assignments[0], "node", None) if len(assignments) == 1 else None
    return callee if isinstance(callee, cst.FunctionDef) \
        and isinstance(collector.scopes.get(callee), GlobalScope) else None


def _holding_names(function: cst.FunctionDef, sources: set) -> set[str]:
    """The names the function binds to values computed from `sources` (None in it: its
    parameters), to a fixed point: `x = make()`, `y = x[1:]`, `for d in x`."""
    names: set[str] = set()
    if None in sources:
        params = function.params
        names |= {p.name.value for p in (*params.params, *params.posonly_params, *params.kwonly_params)}
        names |= {p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)}
    bindings: list = []  # (target, value)

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            bindings.extend((t.target, node.value) for t in node.targets)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            bindings.append((node.target, node.value))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None:
                bindings.append((node.target, node.value))

        def visit_For(self, node: cst.For) -> None:
            bindings.append((node.target, node.iter))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            bindings.append((node.target, node.value))

    function.body.visit(Visitor())

    def targets(target) -> list[str]:
        if isinstance(target, cst.Name):
            return [target.value]
        if isinstance(target, (cst.Tuple, cst.List)):
            return [n for e in target.elements for n in targets(e.value)]
        return targets(target.value) if isinstance(target, cst.StarredElement) else []

    changed = True
    while changed:
        changed = False
        for target, value in bindings:
            new = set(targets(target)) - names
            if new and _holds(value, sources, names):
                names |= new
                changed = True
    return names


def _holds(value, sources: set, names: set[str]) -> bool:
    """Whether `value` may hold the arrays: it is one of `sources`, or reads one of them or
    a name in `names` other than through `.filled()`, `.tolist()`, `int(...)`... (_unwrapped,
    _may_hold_arrays)."""
    if value in sources or isinstance(value, cst.Name) and value.value in names:
        return True
    if _unwrapped(value) or not _may_hold_arrays(value):
        return False
    return any(_holds(child, sources, names) for child in value.children if isinstance(child, cst.CSTNode))


# methods giving a plain NumPy array (or Python values) of a masked, date or
# extended-precision array: `a.filled(0.0)`, `m.compressed()`
_UNWRAPPING_METHODS = frozenset({"filled", "compressed", "tolist", "item"})


def _unwrapped(argument) -> bool:
    """`a.filled(0.0)`, `m.compressed()`, `m.data`, `d.astype(float)`: a plain array."""
    if isinstance(argument, cst.Attribute):
        return argument.attr.value == "data"
    if not isinstance(argument, cst.Call) or not isinstance(argument.func, cst.Attribute):
        return False
    method = argument.func.attr.value
    return method in _UNWRAPPING_METHODS or method == "astype" and bool(argument.args) \
        and isinstance(argument.args[0].value, cst.Name) and argument.args[0].value.value in ("float", "int", "bool")


def _callers(function: cst.FunctionDef, collector) -> list | None:
    """(calling function, call) for each reference to a module-level function, every one a
    call inside another function of the module; None when some other code may reach it
    (a module-level statement, a reference that is not a call, another module, `__all__`,
    `globals()`), or when the function is not a plain module-level one (a method)."""
    parents, name = collector.parents, function.name.value
    scope = collector.scopes.get(function)
    if not isinstance(scope, GlobalScope) or len(scope.assignments[name]) != 1 \
            or name in collector.context.external_names or name in collector.exported_names \
            or name in collector.dynamic_names or collector.dynamic_scopes:
        return None
    found = []
    for access in next(iter(scope.assignments[name])).references:  # reads in any scope
        call = parents.get(access.node)
        if not isinstance(call, cst.Call) or call.func is not access.node:
            return None
        caller = _outermost_function(call, parents)
        if caller is None:
            return None
        found.append((caller, call))
    return found
