"""Which values may be Python lists or tuples (or sequences of them) where JAX wants an
array, wherever they come from: literals, names bound to them, what module functions and
methods return, instance and class attributes, items of lists and dicts (appended, stored,
iterated over), `list(d.values())`, `sorted(...)`.

NumPy converts any sequence it is given; JAX refuses a list or tuple where it wants an array
(`TypeError: sum requires ndarray or scalar arguments`). np2jax.rules.list_as_array_argument
wraps what this module finds. A value is one of:

- SEQUENCE: some path shows a list or tuple (`self.w = [0.5, 1.5]`, `return [c for c in cs]`);
- ARGUMENT: it may hold what a caller passed (a parameter stored in `self.hi`, appended to a
  list), or what another module of the package holds (`from .consts import XP`), which may
  be a list;
- OPAQUE: nothing the module shows tells what it is (an attribute of another object, the
  result of a function of another module, a name imported from outside the package);
- NOT_SEQUENCE: every path shows an array, a scalar or another value that is no list (or
  None, which jnp.asarray would refuse where NumPy takes it: `np.clip(x, lo, None)`).

Data only: the rules decide what to wrap.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.facts import ARRAY, CONTAINER, PURE_BUILTINS, SCALAR, SCALAR_CALLS, UNKNOWN

SEQUENCE, ARGUMENT, OPAQUE, NOT_SEQUENCE = "sequence", "argument", "opaque", "not-sequence"
_ORDER = (SEQUENCE, ARGUMENT, OPAQUE, NOT_SEQUENCE)  # the first one any path gives wins
_NONE = "none"  # a path gives None: nothing is wrapped

_DEPTH = 8
# attributes of an array that are arrays (or static numbers) themselves
_ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "shape", "ndim", "size", "dtype",
                               "flat", "nbytes", "itemsize", "at"})
# ndarray methods whose result is an array or a number (`x.reshape(2, 4)`, `x.sum()`)
_ARRAY_METHODS = frozenset({
    "all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "byteswap",
    "choose", "clip", "compress", "conj", "conjugate", "cumprod", "cumsum", "diagonal", "dot",
    "flatten", "getfield", "item", "max", "mean", "min", "partition", "prod", "ptp", "ravel",
    "repeat", "reshape", "round", "searchsorted", "squeeze", "std", "sum", "swapaxes", "take",
    "trace", "transpose", "var", "view"})
# modules whose attributes are numbers or functions, never lists
_NUMBER_MODULES = ("math.", "cmath.", "numpy.", "scipy.", "jax.")


# libraries whose objects NumPy's functions hand to their own methods (`np.sum(frame)` is
# `frame.sum(axis=None)`), which jnp.asarray would convert to an array instead
ARRAY_LIBRARIES = frozenset({"pandas", "torch", "xarray", "polars", "tensorflow", "dask",
                             "cupy", "sparse", "scipy.sparse", "astropy", "pint", "numpy.ma"})


def imports_array_libraries(module: cst.Module) -> bool:
    """Whether the module imports a library of ARRAY_LIBRARIES (or a module of one)."""
    found = []

    class Imports(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            found.extend(alias.evaluated_name for alias in node.names)

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            if node.module is not None and not node.relative:
                base = cst.Module([]).code_for_node(node.module)
                found.append(base)
                if not isinstance(node.names, cst.ImportStar):
                    found.extend(f"{base}.{alias.evaluated_name}" for alias in node.names)

    module.visit(Imports())
    return any(name == library or name.startswith(library + ".")
               for name in found for library in ARRAY_LIBRARIES)


def _combine(kinds, none_blocks: bool) -> str:
    kinds = set(kinds)
    if _NONE in kinds and none_blocks:
        return _NONE
    for kind in _ORDER:
        if kind in kinds:
            return kind
    return NOT_SEQUENCE


class Sequences:
    """Facts about list and tuple values, read from a Values (np2jax.analysis.values)."""

    def __init__(self, flow, module: cst.Module | None = None) -> None:
        self.flow = flow
        self._module = module
        self.collector = flow.collector
        self._active: set = set()
        self._none_blocks = True
        self._array_libraries = None

    @property
    def array_libraries(self) -> bool:
        """Whether the module imports a library of ARRAY_LIBRARIES: an OPAQUE value may then
        be one of its objects, which NumPy's functions treat otherwise than an array."""
        if self._array_libraries is None:
            self._array_libraries = imports_array_libraries(self._module) \
                if self._module is not None else True
        return self._array_libraries

    # what an expression may be
    def kind(self, expr: cst.BaseExpression, none_blocks: bool = True) -> str:
        """SEQUENCE, ARGUMENT, OPAQUE or NOT_SEQUENCE (see the module's doc). With
        `none_blocks`, a value that may be None is NOT_SEQUENCE (jnp.asarray(None) raises,
        where `np.clip(x, lo, None)` takes it); without, None counts for nothing (where
        NumPy refuses None too: the data argument of a reduction)."""
        self._none_blocks = none_blocks
        kind = self._guarded(("kind", expr), lambda: self._kind(expr, 0), 0)
        return NOT_SEQUENCE if kind == _NONE else kind

    def items_kind(self, expr: cst.BaseExpression) -> str:
        """What the items of `expr` (a list, tuple or dict: its values) may be."""
        self._none_blocks = True
        kind = self._guarded(("items", expr), lambda: self._items(expr, 0, False), 0)
        return NOT_SEQUENCE if kind == _NONE else kind

    def _combine(self, kinds) -> str:
        return _combine(kinds, self._none_blocks)

    def _guarded(self, key, compute, depth: int) -> str:
        if depth > _DEPTH or key in self._active:
            return OPAQUE if depth > _DEPTH else NOT_SEQUENCE  # a cycle adds nothing new
        self._active.add(key)
        try:
            return compute()
        finally:
            self._active.discard(key)

    def _kind(self, expr, depth: int) -> str:
        flow = self.flow
        if isinstance(expr, (cst.List, cst.Tuple, cst.ListComp)):
            return SEQUENCE
        if isinstance(expr, (cst.IfExp,)):
            return self._combine((self._k(expr.body, depth), self._k(expr.orelse, depth)))
        if isinstance(expr, cst.BooleanOperation):
            return self._combine((self._k(expr.left, depth), self._k(expr.right, depth)))
        if isinstance(expr, cst.BinaryOperation):
            if flow.value_kind(expr) == CONTAINER:  # [0] * n, [a] + rest
                return SEQUENCE
            if isinstance(expr.operator, (cst.Add, cst.Multiply)):
                sides = (self._k(expr.left, depth), self._k(expr.right, depth))
                if SEQUENCE in sides:  # a + b of two lists, rows * 2
                    return SEQUENCE
            return NOT_SEQUENCE
        if isinstance(expr, cst.Name):
            return self._name(expr, depth)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, depth)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, depth)
        if isinstance(expr, cst.Call):
            return self._call(expr, depth)
        return NOT_SEQUENCE

    def _k(self, expr, depth: int) -> str:
        """kind() one level deeper, keeping None as its own answer."""
        return self._guarded(("kind", expr), lambda: self._kind(expr, depth + 1), depth + 1)

    def _i(self, expr, depth: int, iterate: bool) -> str:
        key = ("iter" if iterate else "items", expr)
        return self._guarded(key, lambda: self._items(expr, depth + 1, iterate), depth + 1)

    def _name(self, name: cst.Name, depth: int) -> str:
        if name.value in ("True", "False"):
            return NOT_SEQUENCE
        if name.value == "None":
            return _NONE
        source = self._comprehension_source(name)
        if source is not None:
            return self._part(source[0], source[1], depth)
        values, _ = self.flow.name_values(name)
        values = self.flow.live_bindings(name, values)
        if not values:
            if self._from_the_tree(name):
                return ARGUMENT  # `from .consts import XP`: another module's value, maybe a list
            return OPAQUE  # imported, a builtin, bound where the analysis does not see
        return self._combine(self._binding(name.value, value, statement, depth)
                       for value, statement in values)

    def _from_the_tree(self, name: cst.Name) -> bool:
        """Whether `name` is imported from another module of this module's package (a
        relative import, or an absolute one of the same top-level package), whose value
        this module cannot see (a list there reaches JAX here). Top-level modules importing
        each other are not told apart from libraries."""
        collector = self.flow.collector
        package = collector.context.name.split(".")[0]  # "" for a lone file
        return bool(package) and any(qualname.split(".")[0] == package
                                     for qualname in collector.imported_names(name))

    def _binding(self, name: str, value, statement, depth: int) -> str:
        if value == "param":
            if isinstance(statement, cst.Param) and statement.star in ("*", "**"):
                return SEQUENCE if statement.star == "*" else NOT_SEQUENCE
            return ARGUMENT
        if value == CONTAINER:  # `*rest = ...`
            return SEQUENCE
        if value == SCALAR:
            return NOT_SEQUENCE
        if isinstance(value, cst.CSTNode):
            if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) \
                    and value.value.value == name:
                return NOT_SEQUENCE  # `data = data[:n]`: a part of what the other bindings give
            return self._k(value, depth)
        if isinstance(statement, cst.For):
            position = _target_position(statement.target, name)
            return self._part(statement.iter, position, depth) if position is not False else OPAQUE
        if isinstance(statement, (cst.Assign, cst.AnnAssign)) and statement.value is not None:
            target = statement.targets[0].target if isinstance(statement, cst.Assign) \
                else statement.target
            position = _target_position(target, name)
            if position is False:
                return OPAQUE
            if isinstance(statement.value, cst.Call) \
                    and self.flow.value_kind(statement.value) == ARRAY:
                return NOT_SEQUENCE
            if position is not None and isinstance(statement.value, cst.Call):
                function = self.flow.module_function(statement.value) \
                    if isinstance(statement.value.func, cst.Name) else self._method(statement.value)
                if function is not None:  # `x, y = make(n)`: the parts every return gives
                    parts = self.flow.returned_values(function, (position, len(target.elements)))
                    return OPAQUE if parts is None else self._combine(
                        self._k(part, depth) for part in parts)
            if position is None:
                return self._k(statement.value, depth)
            items = _literal_items(statement.value)
            if items is not None:  # a, b = [1.0], x
                return self._k(items[position].value, depth) if position < len(items) else OPAQUE
            return self._part(statement.value, position, depth)
        return OPAQUE

    def _part(self, source, position, depth: int) -> str:
        """What a name bound by iterating over `source` holds: an item (`position` None), or
        that item's part at `position` (`for k, v in d.items()`: 1 is a value of d)."""
        if position is None:
            return self._i(source, depth, True)
        if isinstance(source, cst.Call) and self.collector.ref_by_call.get(source) is not None:
            return NOT_SEQUENCE  # `w, v = np.linalg.eig(a)`: arrays
        if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) \
                and source.func.attr.value == "items" and not source.args and position in (0, 1):
            return NOT_SEQUENCE if position == 0 else self._i(source.func.value, depth, False)
        if isinstance(source, cst.Call) and isinstance(source.func, cst.Name):
            function = source.func.value
            arguments = [a.value for a in source.args if a.keyword is None and not a.star]
            if function == "enumerate" and arguments and position in (0, 1):
                return NOT_SEQUENCE if position == 0 else self._i(arguments[0], depth, True)
            if function == "zip" and position < len(arguments) \
                    and len(arguments) == len(source.args):
                return self._i(arguments[position], depth, True)
        items = _literal_items(source)
        if items:  # for dr, dc in ((0, 1), (1, 0)): the parts at `position` of its items
            parts = [_literal_items(item.value) for item in items]
            if all(part is not None and position < len(part) for part in parts):
                return self._combine(self._k(part[position].value, depth) for part in parts)
        return OPAQUE

    def _comprehension_source(self, name: cst.Name):
        """(iterable, position in the target or None) when `name` is a comprehension's variable."""
        binding = self.flow.comprehension_binding(name)
        if binding is None:
            return None
        position = _target_position(binding[1].target, name.value)
        return None if position is False else (binding[1].iter, position)

    def _attribute(self, attribute: cst.Attribute, depth: int) -> str:
        if attribute.attr.value in _ARRAY_ATTRIBUTES:
            return NOT_SEQUENCE
        if self.collector.is_api(attribute):  # np.pi, np.newaxis
            return NOT_SEQUENCE
        if any(name.startswith(_NUMBER_MODULES) for name in self.collector.qualified_names(attribute)):
            return NOT_SEQUENCE
        bindings = self.attribute_bindings(attribute)
        if not bindings:
            method = self._class_function(attribute)
            if method is None:
                return OPAQUE
            if any(isinstance(d.decorator, cst.Name) and d.decorator.value == "property"
                   for d in method.decorators):
                return self._returns(method, depth)
            return NOT_SEQUENCE if not method.decorators else OPAQUE  # a bound method
        return self._combine(self._attribute_binding(value, statement, depth)
                       for value, statement in bindings)

    def _attribute_binding(self, value, statement, depth: int) -> str:
        if isinstance(value, cst.Name) and value.value != "self":
            # `self.hi = hi`: what the caller passed, or None where the parameter's default is
            values, _ = self.flow.name_values(value)
            params = [s for v, s in values if v == "param"]
            if any(isinstance(p, cst.Param) and p.default is not None
                   and isinstance(p.default, cst.Name) and p.default.value == "None"
                   for p in params):
                return self._combine((_NONE, self._k(value, depth)))
        if isinstance(value, cst.CSTNode):
            return self._k(value, depth)
        return OPAQUE if value in (UNKNOWN, "param", "global") else self._binding("", value, statement, depth)

    def attribute_bindings(self, attribute: cst.Attribute) -> list:
        """[(value, statement)] of every binding of `self.X` in the class the attribute is
        read in, or of `obj.X` where obj is an instance of a class of this module (the
        class's methods' `self.X = ...`, its body's `X = ...`); [] for attributes of other
        objects or where the class binds none."""
        owner = self._owner(attribute)
        if owner is None:
            return []
        name = attribute.attr.value
        bindings = list(self.collector.self_attr_bindings.get((owner, name), ()))
        for line in owner.body.body if isinstance(owner.body, cst.IndentedBlock) else ():
            for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and any(
                        isinstance(t.target, cst.Name) and t.target.value == name
                        for t in small.targets):
                    bindings.append((small.value, small))
                elif isinstance(small, cst.AnnAssign) and small.value is not None \
                        and isinstance(small.target, cst.Name) and small.target.value == name:
                    bindings.append((small.value, small))
        return bindings

    def _subscript(self, subscript: cst.Subscript, depth: int) -> str:
        base = subscript.value
        if self.flow.kind_of(base) == ARRAY:
            return NOT_SEQUENCE
        if len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Slice):
            return self._k(base, depth)  # a list's slice is a list
        if len(subscript.slice) != 1:
            return NOT_SEQUENCE  # x[i, j]: an array's element
        items = self._i(base, depth, False)
        if items in (SEQUENCE, ARGUMENT, _NONE):
            return items
        base_kind = self._k(base, depth)
        if items == OPAQUE and base_kind == ARGUMENT:
            return ARGUMENT  # `cfg["w"]`: an item of what the caller passed
        # an array's element or part (`v[order]`, v no list), else what the items may be
        return NOT_SEQUENCE if base_kind == NOT_SEQUENCE else items

    def _call(self, call: cst.Call, depth: int) -> str:
        func = call.func
        flow = self.flow
        ref = self.collector.ref_by_call.get(call)
        if ref is not None:
            return SEQUENCE if ref.qualname in flow.sequence_results else NOT_SEQUENCE
        if isinstance(func, cst.Name):
            if func.value in ("list", "tuple", "sorted", "range"):
                return SEQUENCE  # jnp.asarray(range(n)) is NumPy's array of it too
            if func.value in SCALAR_CALLS or func.value in PURE_BUILTINS \
                    or func.value in ("dict", "set", "frozenset", "str", "iter", "next"):
                return NOT_SEQUENCE if func.value not in ("min", "max") else OPAQUE
            if flow.module_class(func) is not None:
                return NOT_SEQUENCE  # an instance of the module's own class
            function = flow.module_function(call)
            if function is not None:
                return self._returns(function, depth)
            return OPAQUE
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if call in flow.draws_on_jax():  # `rng.uniform(1, 50, n)` of a generator parameter
                return NOT_SEQUENCE
            if method in ("tolist", "nonzero"):
                return SEQUENCE
            if method == "copy" and not call.args:
                return self._k(func.value, depth)
            if method in ("get", "pop", "setdefault") and call.args \
                    and flow.container_type(func.value) is not None:
                items = self._i(func.value, depth, False)
                if len(call.args) > 1:  # `d.setdefault(k, [])`: it may give the default
                    return self._combine((items, self._k(call.args[1].value, depth)))
                return items
            function = self._method(call)
            if function is not None:
                return self._returns(function, depth)
            receiver = func.value
            if self._owner(func) is not None or self._own_instance(receiver):
                return OPAQUE  # a method of the module's own class we cannot follow
            if method in _ARRAY_METHODS or self._k(receiver, depth) == NOT_SEQUENCE:
                # an array's method, or a method of a value that is no list (a NumPy
                # generator's draws: `rng.normal(size=3)`)
                return NOT_SEQUENCE
        return OPAQUE

    def _owner(self, attribute: cst.Attribute) -> cst.ClassDef | None:
        """The class of this module `self.X` is read in, or whose instance `obj` of `obj.X`
        is (every binding of obj a call of that class, module_class)."""
        receiver = attribute.value
        if isinstance(receiver, cst.Call):  # `Model().weights()`
            return self.flow.module_class(receiver.func)
        if not isinstance(receiver, cst.Name):
            return None
        if receiver.value == "self":
            return self.flow.class_of(attribute)
        if not self.flow.module_class_instance(receiver):
            return None
        values, _ = self.flow.name_values(receiver)
        classes = {self.flow.module_class(value.func) for value, _ in values
                   if isinstance(value, cst.Call)}
        return classes.pop() if len(classes) == 1 else None

    def _own_instance(self, receiver) -> bool:
        """`self`, or an instance of a class of this module: its methods are the module's."""
        return (isinstance(receiver, cst.Name) and receiver.value == "self") \
            or self.flow.module_class_instance(receiver)

    def _method(self, call: cst.Call) -> cst.FunctionDef | None:
        """The method `self.m(...)` calls: a plain method of the class the call is in."""
        if not isinstance(call.func, cst.Attribute):
            return None
        found = self._class_function(call.func)
        if found is None or found.decorators or found.asynchronous:
            return None
        return found

    def _class_function(self, attribute: cst.Attribute) -> cst.FunctionDef | None:
        """The function `self.m` (`obj.m`) names: defined once in the body of its class."""
        owner = self._owner(attribute)
        if owner is None or not isinstance(owner.body, cst.IndentedBlock):
            return None
        found = [s for s in owner.body.body
                 if isinstance(s, cst.FunctionDef) and s.name.value == attribute.attr.value]
        return found[0] if len(found) == 1 else None

    def _returns(self, function: cst.FunctionDef, depth: int) -> str:
        returns = self.flow.function_returns(function)
        if returns is None:
            return OPAQUE
        return self._combine(self._k(value, depth) for value in returns)

    # what the items of a value may be
    def _items(self, expr, depth: int, iterate: bool) -> str:
        """The items of `expr`: what iterating over it gives (`iterate`), or what indexing it
        gives (a dict's values)."""
        flow = self.flow
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            return self._combine(self._i(e.value, depth, True) if isinstance(e, cst.StarredElement)
                           else self._k(e.value, depth) for e in expr.elements)
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return self._k(expr.elt, depth)
        if isinstance(expr, cst.Dict):
            if iterate:
                return NOT_SEQUENCE  # its keys
            return self._combine(self._k(e.value, depth) if isinstance(e, cst.DictElement)
                           else self._i(e.value, depth, False) for e in expr.elements)
        if isinstance(expr, cst.DictComp):
            return NOT_SEQUENCE if iterate else self._k(expr.value, depth)
        if isinstance(expr, (cst.IfExp,)):
            return self._combine((self._i(expr.body, depth, iterate), self._i(expr.orelse, depth, iterate)))
        if isinstance(expr, cst.Call):
            func = expr.func
            arguments = [a.value for a in expr.args]
            if isinstance(func, cst.Name) and func.value in ("list", "tuple", "sorted", "reversed") \
                    and len(arguments) == 1 and not expr.args[0].star:
                return self._i(arguments[0], depth, True)
            if isinstance(func, cst.Name) and func.value == "range":
                return NOT_SEQUENCE  # numbers
            if isinstance(func, cst.Attribute) and func.attr.value == "values" and not arguments:
                return self._i(func.value, depth, False)
            if isinstance(func, cst.Attribute) and func.attr.value == "items" and not arguments:
                return SEQUENCE  # (key, value) tuples
            if isinstance(func, cst.Attribute) and func.attr.value == "tolist":
                return OPAQUE  # lists where the array has two dimensions
            ref = self.collector.ref_by_call.get(expr)
            if ref is not None:
                return NOT_SEQUENCE  # arrays, or the arrays of a tuple NumPy gives
            function = flow.module_function(expr) if isinstance(func, cst.Name) else self._method(expr)
            if function is not None:
                returns = flow.function_returns(function)
                if returns is None:
                    return OPAQUE
                return self._combine(self._i(value, depth, iterate) for value in returns)
            return OPAQUE
        if isinstance(expr, cst.Name):
            return self._name_items(expr, depth, iterate)
        if isinstance(expr, cst.Attribute):
            bindings = self.attribute_bindings(expr)
            if not bindings:
                return OPAQUE
            kinds = [self._i(v, depth, iterate) if isinstance(v, cst.CSTNode) else OPAQUE
                     for v, _ in bindings]
            kinds += [self._added(added, depth) for added in self._attribute_additions(expr)]
            return self._combine(kinds)
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 \
                and isinstance(expr.slice[0].slice, cst.Slice):
            return self._i(expr.value, depth, iterate)
        return OPAQUE

    def _name_items(self, name: cst.Name, depth: int, iterate: bool) -> str:
        flow = self.flow
        if flow.kind_of(name) == ARRAY:
            return NOT_SEQUENCE
        scope, values, _ = flow.name_bindings(name)
        values = flow.live_bindings(name, values)
        if not values:
            return OPAQUE
        kinds = []
        for value, _statement in values:
            if not isinstance(value, cst.CSTNode):
                kinds.append(OPAQUE)  # a parameter, a loop variable: items of any kind
            elif not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name)
                      and value.value.value == name.value):  # `rows = rows[1:]` adds none
                kinds.append(self._i(value, depth, iterate))
        if scope is not None:
            kinds += [self._added(added, depth) for added in self._name_additions(scope, name.value)
                      if not (iterate and added[0] is None)]  # a dict's values are not its keys
            if not (iterate and flow.container_type(name) == "builtins.dict"):
                kinds += [self._k(v, depth) for v in self._stored(scope, name.value)]
        return self._combine(kinds)

    def _added(self, added, depth: int) -> str:
        many, value = added
        return self._i(value, depth, True) if many else self._k(value, depth)

    def _name_additions(self, scope, name: str) -> list:
        """(many, value) of each `name.append(v)` (False, v), `name.extend(vs)` (True, vs),
        `name.insert(i, v)`, and (None, v) of a dict's `name.setdefault(k, v)` (a value, not
        a key), in the scope that binds `name`."""
        added = []
        for access in scope.accesses[name] if name in scope.accesses else ():
            added += self._addition(access.node)
        return added

    def _addition(self, receiver) -> list:
        parent = self.flow.parents.get(receiver)
        call = self.flow.parents.get(parent)
        if not (isinstance(parent, cst.Attribute) and parent.value is receiver
                and isinstance(call, cst.Call) and call.func is parent and call.args):
            return []
        method = parent.attr.value
        if method in ("append", "add"):
            return [(False, call.args[0].value)]
        if method == "extend":
            return [(True, call.args[0].value)]
        if method == "insert" and len(call.args) > 1:
            return [(False, call.args[1].value)]
        if method == "setdefault" and len(call.args) > 1:
            return [(None, call.args[1].value)]
        return []

    def _stored(self, scope, name: str) -> list:
        """The values `name[k] = v` stores into what `name` holds, in the scope that binds it."""
        stored = []
        for statement, target, operator in self.collector.subscript_stores:
            if operator is None and isinstance(target.value, cst.Name) \
                    and target.value.value == name and self.flow.scopes.get(target.value) is scope \
                    and isinstance(statement, cst.Assign):
                stored.append(statement.value)
        return stored

    def _attribute_additions(self, attribute: cst.Attribute) -> list:
        """(many, value) of what `self.X.append(v)` (extend, insert) and `self.X[k] = v` add
        to `self.X`, in the class the attribute is read in."""
        owner = self._owner(attribute)
        name = attribute.attr.value
        added = []
        for use in self.collector.attribute_loads.get(name, ()):
            if not (isinstance(use.value, cst.Name) and use.value.value == "self") \
                    or self.flow.class_of(use) is not owner:
                continue
            added += self._addition(use)
        for statement, target, operator in self.collector.subscript_stores:
            if operator is None and isinstance(statement, cst.Assign) \
                    and isinstance(target.value, cst.Attribute) \
                    and target.value.attr.value == name \
                    and isinstance(target.value.value, cst.Name) \
                    and target.value.value.value == "self" \
                    and self.flow.class_of(target) is owner:
                added.append((False, statement.value))
        return added


def _target_position(target, name: str):
    """None when `target` is the name itself, its position when `target` is a flat tuple of
    names holding it (`for k, v in ...`), False when `name` is not bound there that way."""
    if isinstance(target, cst.Name):
        return None if target.value == name else False
    if isinstance(target, (cst.Tuple, cst.List)):
        for position, element in enumerate(target.elements):
            if isinstance(element.value, cst.Name) and element.value.value == name \
                    and not isinstance(element, cst.StarredElement):
                return position
    return False


def _literal_items(node) -> list | None:
    """The elements of a list or tuple literal without `*`, else None."""
    if isinstance(node, (cst.Tuple, cst.List)) \
            and not any(isinstance(e, cst.StarredElement) for e in node.elements):
        return list(node.elements)
    return None
