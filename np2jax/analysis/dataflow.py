"""Dataflow: what a name may hold, and whether a write through it may be seen elsewhere.

Kinds of values (container, scalar, array), freshness and aliasing (views, escapes,
globals), the conditions under which an in-place write can become a rebinding, masks and
index kinds, and functions that change an argument in place (NJ209).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import libcst as cst
from libcst.metadata import GlobalScope

from np2jax.analysis.collect import Collector
from np2jax.analysis.facts import (
    ARRAY,
    ARRAY_CONSTRUCTORS,
    CONTAINER,
    CONTAINER_CALLS,
    CONTAINER_METHODS,
    DYNAMIC_CALLS,
    ELEMENTWISE_COMPARISONS,
    KEEP_IN_PLACE_FUNCTION,
    KEEP_OUT,
    LITERALS,
    PURE_BUILTINS,
    SCALAR,
    SCALAR_CALLS,
    UFUNC_METHODS,
    UNKNOWN,
    ApiRef,
    MutatorFunction,
)
from np2jax.analysis.shapes import same_shape
from np2jax.catalog import api_policy
from np2jax.syntax import argument_for, code_of
from np2jax.tree import ModuleContext


class Dataflow:
    """What a name may hold, and whether writes through it may be seen elsewhere."""

    def __init__(self, collector: Collector, parents, positions, scopes) -> None:
        self.collector = collector
        self.parents = parents
        self.positions = positions
        self.scopes = scopes
        policy = api_policy()
        self.view_functions = frozenset(policy["view_functions"])
        self.fresh_params: dict = {}  # Param -> FunctionDef rewritten to return it
        self.fresh_methods = frozenset(policy["fresh_methods"])
        self.sequence_results = frozenset(policy["sequence_results"])
        self.maybe_sequence_results = frozenset(policy["maybe_sequence_results"])
        self.sequence_methods = frozenset(policy["sequence_methods"])
        self.non_array_results = frozenset(policy["non_array_results"])

    # kinds
    def value_kind(self, value) -> str:
        if isinstance(value, str):  # markers: "param", "global", UNKNOWN, CONTAINER, SCALAR
            return value if value in (CONTAINER, UNKNOWN, SCALAR) else UNKNOWN
        if isinstance(value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp,
                              cst.SetComp, cst.SimpleString, cst.ConcatenatedString,
                              cst.FormattedString, cst.Tuple)):
            return CONTAINER
        if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary)):
            return SCALAR
        if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, (cst.Integer, cst.Float)):
            return SCALAR
        if isinstance(value, cst.BinaryOperation) and (
                isinstance(value.left, (cst.List, cst.Tuple)) or isinstance(value.right, (cst.List, cst.Tuple))):
            return CONTAINER  # [0] * n, [a] + rest
        if isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Name) and func.value in CONTAINER_CALLS:
                return CONTAINER
            if isinstance(func, cst.Name) and func.value in SCALAR_CALLS:
                return SCALAR
            if isinstance(func, cst.Attribute) and func.attr.value in CONTAINER_METHODS:
                return CONTAINER
            if isinstance(func, cst.Attribute) and func.attr.value in self.sequence_methods:
                return UNKNOWN
            ref = self.collector.ref_by_call.get(value)
            if ref is not None:
                if ref.qualname in self.sequence_results:
                    return CONTAINER
                if ref.qualname in self.non_array_results:
                    return UNKNOWN
                return ARRAY if self._one_array_result(ref) else UNKNOWN
        return UNKNOWN

    def _one_array_result(self, ref) -> bool:
        """False when the call may return a tuple or list (maybe_sequence_results), unless its
        arguments show the one-array form: np.where(c, x, y), np.unique(x), np.atleast_1d(x)."""
        if ref.qualname not in self.maybe_sequence_results:
            return True
        call = ref.call
        if call is None or any(a.star for a in call.args):
            return False
        positional = [a for a in call.args if a.keyword is None]
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        if ref.qualname == "numpy.where":
            return len(call.args) == 3
        if ref.qualname == "numpy.unique":
            return not any(k.startswith("return_") for k in keywords) and len(positional) <= 1
        if ref.qualname.startswith("numpy.atleast_"):
            return len(call.args) == 1
        if ref.qualname == "numpy.indices":  # one grid array unless sparse=
            return len(positional) <= 2 and keywords <= {"dtype"}
        return False

    def holds_only_scalars(self, value) -> bool:
        """A container literal of numbers and strings, `[0] * n`, or defaultdict(int)."""
        def scalar(node) -> bool:
            return isinstance(node, LITERALS) or (
                isinstance(node, cst.UnaryOperation) and isinstance(node.expression, LITERALS)) \
                or (isinstance(node, cst.Name) and node.value in ("True", "False", "None"))
        if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            return all(scalar(e.value) for e in value.elements)
        if isinstance(value, cst.Dict):
            return all(isinstance(e, cst.DictElement) and scalar(e.value) for e in value.elements)
        if isinstance(value, cst.BinaryOperation):
            return all(self.holds_only_scalars(side) for side in (value.left, value.right)
                       if isinstance(side, (cst.List, cst.Tuple)))
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            if value.func.value in ("list", "tuple", "set") and len(value.args) == 1:
                return self.holds_only_scalars(value.args[0].value)
            if value.func.value in ("defaultdict", "Counter"):
                return all(isinstance(a.value, cst.Name) and a.value.value in ("int", "float")
                           for a in value.args[:1])
        return False

    def _name_values(self, expr: cst.Name):
        """Bindings and `op=` values of a name, looked up from its scope outwards as Python does."""
        _, values, aug_values = self.name_bindings(expr)
        return values, aug_values

    def name_bindings(self, expr: cst.Name) -> tuple:
        """(scope, bindings, `op=` values) of a name: the scope is the one that binds it."""
        scope = self.scopes.get(expr)
        seen = set()
        while scope is not None and id(scope) not in seen:
            seen.add(id(scope))
            key = (scope, expr.value)
            if key in self.collector.bindings:
                return scope, self.collector.bindings[key], self.collector.aug_values.get(key, [])
            scope = getattr(scope, "parent", None)
        return None, [], []

    def _values(self, expr):
        if isinstance(expr, cst.Name):
            return self._name_values(expr)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
                and expr.value.value == "self":
            key = (self.collector_class_of(expr), expr.attr.value)
            return (self.collector.self_attr_bindings.get(key, []),
                    self.collector.self_attr_aug_values.get(key, []))
        return None, None

    def kind_of(self, expr: cst.BaseExpression, statement=None) -> str:
        if isinstance(expr, cst.Call):
            return self.value_kind(expr)
        values, aug_values = self._values(expr)
        if not values:
            return UNKNOWN
        kinds = {self.value_kind(v) for v, _ in values}
        if kinds == {SCALAR}:  # `total = 0; total += g` makes total an array when g is one
            kinds |= {self.value_kind(v) for v in aug_values}
        return kinds.pop() if len(kinds) == 1 else UNKNOWN

    def may_hold_argument(self, name: cst.Name) -> bool:
        """Whether the name, where it is read, may hold what the caller passed to a parameter
        (a list, a tuple, an array) or a part of it (`data = data[:n]`): it is a parameter,
        not rebound to a JAX array by an assignment of the function's own body that comes
        before the read (`x = np.asarray(x)`)."""
        values, _ = self._name_values(name)
        params = [statement for value, statement in values if value == "param"]
        if not params:
            return False
        function = self.parents.get(self.parents.get(params[0]))
        if self.enclosing(name, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) is not function:
            return True  # read in a nested function or class: called at any time
        for value, statement in values:
            line = self.parents.get(statement)
            if isinstance(statement, (cst.Assign, cst.AnnAssign)) and not _part_of(value, name.value) \
                    and self.parents.get(self.parents.get(line)) is function \
                    and self._position(statement) < self._position(name) and self.jax_typed(value):
                return False
        return True

    def enclosing(self, node, kinds: tuple[type, ...]):
        """The nearest ancestor of `node` of one of `kinds`, or None."""
        node = self.parents.get(node)
        while node is not None and not isinstance(node, kinds):
            node = self.parents.get(node)
        return node

    def sequence_arguments(self, refs) -> set:
        """Names passed where JAX wants an array that hold Python lists or tuples (every
        binding is a list/tuple literal, a comprehension, or list()/tuple())."""
        found = set()
        for ref in refs:
            for argument in ref.arguments if ref.converted else ():
                value = argument.arg.value
                if argument.role != "array" or not isinstance(value, cst.Name):
                    continue
                values, _ = self._name_values(value)
                if values and all(_is_sequence_value(v) for v, _ in values):
                    found.add(value)
        return found

    def generator_shuffles(self, calls) -> list:
        """rng.shuffle(x) with rng from np.random: shuffles x in place."""
        shuffles = []
        for call in calls:
            receiver = call.func.value
            values, _ = self._values(receiver) if isinstance(receiver, cst.Name) else (None, None)
            if any(isinstance(v, cst.Call) and (ref := self.collector.ref_by_call.get(v)) is not None
                   and ref.qualname.startswith("numpy.random") for v, _ in values or ()):
                shuffles.append(call)
        return shuffles

    # functions that change an argument in place
    def mutator_functions(self, module: cst.Module, context: ModuleContext) -> list:
        found = self._mutator_facts(module, context)
        self.exportable_mutators = self._exportable_mutators(found, module, context)
        return found

    def _mutator_facts(self, module: cst.Module, context: ModuleContext) -> list:
        found = []
        for statement in module.body:
            if isinstance(statement, cst.FunctionDef):
                fact = self._mutator(statement, module, context)
                if fact is not None:
                    found.append(fact)
                    if fact.refused is None:
                        self.fresh_params[fact.param] = fact.node
        return found

    def _exportable_mutators(self, found: list, module: cst.Module, context: ModuleContext) -> list:
        """Of the functions refused only because other files of the tree use them, the facts
        of those that would be rewritten if every function those files use were rewritten
        together with its calls there (the tree then checks each: np2jax.tree). Worked out
        by a Dataflow of its own, so that no fact of this analysis (the parameters of the
        functions it rewrites) leaks into it, nor one of its into this analysis."""
        elsewhere = {fact.node.name.value for fact in found
                     if fact.refused == self._used_by_other_modules(fact.node.name.value)}
        if not elsewhere:
            return []
        all_exported = replace(context, exported_mutators=context.external_names)
        fresh = Dataflow(self.collector, self.parents, self.positions, self.scopes)
        return [fact for fact in fresh._mutator_facts(module, all_exported)
                if fact.refused is None and fact.node.name.value in elsewhere]

    def _mutator(self, function: cst.FunctionDef, module, context):
        params = [p for p in function.params.params] + list(function.params.kwonly_params) \
            + list(function.params.posonly_params)
        by_name = {p.name.value: p for p in params}
        scope = self.scopes.get(function.body.body[0]) if function.body.body else None
        writes: dict[str, list] = defaultdict(list)
        other = set()
        for statement, target, _op in self.collector.subscript_stores:
            base = target.value
            while isinstance(base, cst.Subscript):
                base = base.value
            if isinstance(base, cst.Name) and base.value in by_name and self.scopes.get(base) is scope:
                writes[base.value].append(statement)
        for node in self.collector.aug_assigns:
            if isinstance(node.target, cst.Name) and node.target.value in by_name \
                    and self.scopes.get(node.target) is scope:
                writes[node.target.value].append(node)
        for _node, receiver, _method in self.collector.method_writes + self.collector.out_method_calls:
            if isinstance(receiver, cst.Name) and receiver.value in by_name and self.scopes.get(receiver) is scope:
                other.add(receiver.value)
        for ref in self.collector.refs:  # out=, np.copyto(p, ...), np.add.at(p, ...)
            for arg in (ref.call.args if ref.call is not None else ()):
                value = arg.value
                if isinstance(value, cst.Name) and value.value in by_name and self.scopes.get(value) is scope \
                        and (ref.keep in (KEEP_OUT, KEEP_IN_PLACE_FUNCTION) or ref.out_arg is arg):
                    other.add(value.value)
        mutated = [name for name in writes if not all(
            isinstance(w, cst.AugAssign) and isinstance(w.target, cst.Name) and
            self.kind_of(w.target) in (SCALAR, CONTAINER) for w in writes[name])]
        if not mutated and not other:
            return None
        param = by_name[mutated[0]] if mutated else by_name[sorted(other)[0]]
        fact = MutatorFunction(function, param, writes.get(param.name.value, []), [], None)
        fact.refused = self._mutator_refusal(function, fact, mutated, other, scope, module, context)
        return fact

    def _mutator_refusal(self, function, fact, mutated, other, scope, module, context):
        name, param = function.name.value, fact.param.name.value
        if other:
            return f"`{param}` is changed by a method, an out= or an in-place function"
        if len(set(mutated)) > 1:
            return "it changes more than one argument"
        if function.decorators or function.asynchronous:
            return "it is decorated or async"
        finder = _Returns()
        function.body.visit(finder)
        if finder.value_returned or finder.yields:
            return "it already returns a value (or yields), so it cannot return the array too"
        exported = name in context.exported_mutators  # its calls elsewhere are rewritten too
        if name in context.external_names and not exported:
            return self._used_by_other_modules(name)
        if name in self.collector.exported_names or name.startswith("__"):
            return f"`{name}` is public API (listed in __all__), with callers the tool cannot see"
        if fact.param.star:
            return f"`{param}` is a star argument"
        for assignment in self.collector.bindings.get((scope, param), []):
            if assignment[0] != "param":
                return f"`{param}` is rebound inside the function"
        for _access in self._nested_accesses(scope, param):
            return f"`{param}` is used by a nested function"
        return self._call_sites(function, fact, exported)

    @staticmethod
    def _used_by_other_modules(name: str) -> str:
        return (f"`{name}` is used by another module of the tree, where not every use is a "
                "call that can assign the result")

    def _nested_accesses(self, scope, name):
        for assignment in scope.assignments[name] if scope is not None and name in scope.assignments else ():
            for access in assignment.references:
                if self.scopes.get(access.node) is not scope:
                    yield access

    def _call_sites(self, function: cst.FunctionDef, fact, exported: bool = False) -> str | None:
        """Every reference to the function must be a call statement whose argument for the
        parameter is a plain name the caller alone holds (NumPy changed the caller's array
        in place, so its other holders saw the change; a rebinding would not show it them)."""
        name = function.name.value
        global_scope = self.scopes.get(function.name)
        assignments = list(global_scope.assignments[name]) if global_scope and name in global_scope.assignments else []
        if len(assignments) != 1:
            return f"`{name}` is defined more than once"
        params = list(function.params.params)
        position = params.index(fact.param) if fact.param in params else None
        # in source order: the first refused call names the reason, the same in every run
        for access in sorted(assignments[0].references, key=lambda a: self._position(a.node)):
            argument, reason = self.assignable_call(access.node, name, position, fact.param.name.value)
            if reason is not None:
                return reason
            fact.call_sites.append((self.parents.get(access.node), argument))
        if not fact.call_sites and not exported:
            return f"`{name}` is never called in this file, so its callers are elsewhere"
        return None

    def assignable_call(self, reference, name: str, position, param: str):
        """(argument, None) when `reference` is the function of a call statement whose
        argument for `param` is a name holding a private JAX array, else (None, reason)."""
        call = self.parents.get(reference)
        if not (isinstance(call, cst.Call) and call.func is reference):
            return None, f"`{name}` is used other than by calling it (as a callback?), so not every caller can be rewritten"
        argument = argument_for(call, position, param)
        if argument is None:
            return None, f"a call of `{name}` passes the argument through * or ** or leaves it out"
        if self.expression_statement_line(call) is None:
            return None, f"a call of `{name}` uses its result or shares its line"
        if not isinstance(argument, cst.Name):
            return None, f"`{code_of(call)}` passes `{code_of(argument)}`, which cannot be assigned back"
        # A JAX array: `n += 1` on an int argument changes nothing for the caller, so
        # `x = f(x)` would be wrong there.
        reason = self.unconvertible_because(argument, call, certain=True)
        if reason is not None:
            return None, f"at `{code_of(call)}`: {reason}"
        return argument, None

    def external_call_sites(self, tree_refs, context: ModuleContext):
        calls, refusals = [], []
        for node, qualname in tree_refs:
            position, param = context.mutator_parameter(qualname)
            argument, reason = self.assignable_call(node, qualname, position, param)
            if reason is None:
                calls.append((self.parents.get(node), argument, qualname))
            else:
                refusals.append((node, qualname, reason))
        return calls, refusals

    # functional updates
    def unconvertible_because(self, target: cst.BaseExpression, at: cst.CSTNode,
                              need_jax: bool = True, certain: bool = False) -> str | None:
        """Why an in-place write at `at` into the array held by `target` (a name, or an
        attribute of self) cannot become `target = <new array>`; None when `target` provably
        holds a fresh JAX array that no other name can see, so rebinding it is equivalent.
        `certain`: see jax_typed (a wrong guess must fail loudly, else pass True)."""
        dynamic = self._dynamiccode_of(target)
        if dynamic is not None:
            return f"the code calls `{dynamic}`, through which the array may be changed unseen"
        if self._catches_index_error(at):
            return ("it is inside a try that catches IndexError: NumPy raises for an index out "
                    "of bounds, JAX drops the write silently")
        if isinstance(target, cst.Attribute):
            return self._attribute_unconvertible(target, at)
        if not isinstance(target, cst.Name):
            return f"`{code_of(target)}` is not a plain name"
        name, scope = target.value, self.scopes.get(target)
        values = self.collector.bindings.get((scope, name), [])
        if not values:
            return f"`{name}` is not assigned in this scope (a global or enclosing variable)"
        relevant = False
        for value, statement in values:
            if value == "param" and statement in self.fresh_params:
                relevant = True  # the function is rewritten to return it (MutatorFunction)
                continue
            if value == "param":
                return (f"`{name}` is a parameter: NumPy changes the caller's array, which a "
                        "rebinding would not")
            if value == "global":
                return f"`{name}` is global or nonlocal: other code may hold the same array"
            if not self._before_or_looping(statement, at):
                continue
            relevant = True
            if isinstance(value, str):
                return f"`{name}` is bound by a loop or an unpacking, so it may be shared"
            if not self._fresh(value):
                return f"`{name}` may share memory with `{code_of(value)}`"
            if need_jax and not self.jax_typed(value, certain):
                return f"`{name}` may not hold a JAX array (it is bound to `{code_of(value)}`)"
        if not relevant:
            return f"`{name}` is not bound before this write"
        if isinstance(scope, GlobalScope):
            for _access in self._accesses_from_nested_scopes(scope, name):
                return f"`{name}` is a module global read by functions"
        escape = self._escape(scope, name, at, skip=target)
        if escape is not None:
            return f"`{name}` is also reachable through `{escape}`"
        return None

    def _catches_index_error(self, node) -> bool:
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
            if isinstance(parent, cst.Try) and any(_catches(h, "IndexError") for h in parent.handlers):
                return True
            parent = self.parents.get(parent)
        return False

    def _dynamiccode_of(self, target) -> str | None:
        """exec/eval/globals()/setattr... in the write's scope, or at module level (where
        they can reach every global); getattr/setattr/vars anywhere, for attribute targets."""
        dynamic = self.collector.dynamic_scopes
        if not isinstance(target, (cst.Name, cst.Attribute)):
            return None
        scope = self.scopes.get(target if isinstance(target, cst.Name) else target.value)
        local_reach = DYNAMIC_CALLS - {"getattr"}  # getattr cannot touch a local name
        for candidate in (scope, getattr(scope, "globals", None)):
            found = sorted(dynamic.get(candidate, set()) & local_reach)
            if found:
                return found[0]
        everywhere = sorted(set().union(*dynamic.values()) if dynamic else set())
        for call in everywhere:
            if call in ("exec", "eval", "globals"):
                return call
        if isinstance(target, cst.Attribute):
            for call in everywhere:
                if call in ("setattr", "getattr", "vars", "delattr"):
                    return call
        return None

    def _attribute_unconvertible(self, target: cst.Attribute, at: cst.CSTNode) -> str | None:
        if not (isinstance(target.value, cst.Name) and target.value.value == "self"):
            return f"`{code_of(target)}` is an attribute of another object"
        attr = target.attr.value
        cls = self.collector_class_of(target)
        values = self.collector.self_attr_bindings.get((cls, attr), [])
        if not values:
            return f"`self.{attr}` is not assigned in this class"
        for value, _statement in values:
            if isinstance(value, str) or not self._fresh(value) or not self.jax_typed(value):
                shown = value if isinstance(value, str) else code_of(value)
                return f"`self.{attr}` may not hold a fresh JAX array (it is bound to `{shown}`)"
        for use in self.collector.attribute_loads.get(attr, ()):
            inside = isinstance(use.value, cst.Name) and use.value.value == "self" \
                and self.collector_class_of(use) is cls
            if not inside:
                return f"`.{attr}` is read outside the class, where the array may be shared"
            holder = self._holder(use, returns_escape=True) if use is not target else None
            if holder is not None:
                return f"`self.{attr}` is also reachable through `{code_of(holder).strip()}`"
        return None

    def jax_typed(self, value, certain: bool = False) -> bool:
        """Whether `value` is a JAX array once the module is converted.

        certain=False also trusts a parameter of a module-level function when every call
        of the function in this module passes a JAX array for it (the module run as a
        program): a caller elsewhere passing a NumPy array makes the converted `.at` fail
        loudly. certain=True (alias analysis, NJ209 call sites) trusts no parameter."""
        return _JaxTyping(self, certain).of(value)[0]

    def jax_refs(self, value, certain: bool = False) -> tuple:
        """The converted API references `jax_typed(value)` relies on (empty when False)."""
        return tuple(_JaxTyping(self, certain).of(value)[1])

    def module_function(self, call: cst.Call) -> cst.FunctionDef | None:
        """The function a call `f(...)` calls when `f` is a plain function of this module,
        bound once at module level (not redefined, not a method), undecorated, synchronous,
        and the module runs no exec/eval/globals() that could rebind it."""
        func = call.func
        if not isinstance(func, cst.Name) or self.collector.dynamic_scopes:
            return None
        scope = self.scopes.get(func)
        assignments = list(scope[func.value]) if scope is not None else []
        if len(assignments) != 1:
            return None
        (assignment,) = assignments
        node = getattr(assignment, "node", None)
        global_scope = getattr(scope, "globals", None)
        if not isinstance(node, cst.FunctionDef) or assignment.scope is not global_scope \
                or len(global_scope.assignments[func.value]) != 1 \
                or node.decorators or node.asynchronous:
            return None
        return node

    def function_returns(self, function: cst.FunctionDef) -> list | None:
        """The values `function` returns, or None when it may return None (a bare return,
        falling off its end) or is a generator."""
        cache = self.__dict__.setdefault("_returns", {})
        if function not in cache:
            finder = _Returns()
            function.body.visit(finder)
            values = [r.value for r in finder.returns]
            cache[function] = None if finder.yields or any(v is None for v in values) \
                or not always_leaves(function.body.body) else values
        return cache[function]

    def returned_values(self, function: cst.FunctionDef | None, item=None) -> list | None:
        """What every `return` of `function` gives (function_returns); with `item`, (position,
        length) of a returned tuple, the value at that position of each. None when a return
        gives no such tuple, or function_returns says None."""
        returns = self.function_returns(function) if function is not None else None
        if returns is None or item is None:
            return returns
        position, length = item
        values = []
        for value in returns:
            if not isinstance(value, cst.Tuple) or len(value.elements) != length or any(
                    isinstance(e, cst.StarredElement) for e in value.elements):
                return None
            values.append(value.elements[position].value)
        return values

    def expression_statement_line(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        """The line holding `node` as its only statement (`node` is the whole expression of
        an expression statement, or the statement itself)."""
        parent = self.parents.get(node)
        if isinstance(parent, cst.Expr):
            node, parent = parent, self.parents.get(parent)
        if isinstance(parent, cst.SimpleStatementLine) and len(parent.body) == 1 \
                and parent.body[0] is node:
            return parent
        return None

    def out_call_convertible(self, ref: "ApiRef") -> str | None:
        """Why `np.f(..., out=x)` cannot become `x = jnp.f(...)`, or None."""
        if self.expression_statement_line(ref.call) is None:
            return "its result is used, or it shares its line"
        target = ref.out_arg.value
        if not isinstance(target, cst.Name):
            return f"`{code_of(target)}` is not a plain name"
        return self.unconvertible_because(target, ref.call)

    # indices and values of writes
    def index_kind(self, subscript: cst.Subscript) -> str:
        """"basic" (ints, slices, ..., None: no index repeats), "mask-of-base" (a boolean
        mask provably of the array's own shape, np2jax.shapes), "mask" (another boolean
        mask), or "other" (fancy or unknown: may repeat)."""
        elements = subscript.slice
        if all(self._basic(e.slice) for e in elements):
            return "basic"
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            index = elements[0].slice.value
            if self.is_mask(index):
                return "mask-of-base" if same_shape(self, index, subscript.value) else "mask"
        return "other"

    def _basic(self, index) -> bool:
        if isinstance(index, cst.Slice):
            return all(part is None or self.is_scalar(part)
                       for part in (index.lower, index.upper, index.step))
        value = index.value
        return isinstance(value, cst.Ellipsis) or (isinstance(value, cst.Name) and value.value == "None") \
            or (self.is_scalar(value) and not isinstance(value, cst.Float))

    def is_scalar(self, node) -> bool:
        """A Python number: literals, names bound only to numbers, arithmetic of them."""
        if isinstance(node, (cst.Integer, cst.Float)):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            return self.is_scalar(node.expression)
        if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.MatrixMultiply):
            return self.is_scalar(node.left) and self.is_scalar(node.right)
        if isinstance(node, cst.Name):
            return node.value in ("True", "False") or self.kind_of(node) == SCALAR
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            return node.func.value in ("int", "float", "len", "bool")
        return False

    def is_mask(self, node, depth: int = 0) -> bool:
        if depth > 8:
            return False
        if isinstance(node, cst.Comparison):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
            return self.is_mask(node.expression, depth + 1)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self.is_mask(node.left, depth + 1) and self.is_mask(node.right, depth + 1)
        if isinstance(node, cst.Call):
            ref = self.collector.ref_by_call.get(node)
            masks = api_policy()["masks"]
            if ref is not None and ref.qualname in ARRAY_CONSTRUCTORS and node.args \
                    and isinstance(node.args[0].value, cst.List):  # np.array([True, False])
                return all(isinstance(e.value, cst.Name) and e.value.value in ("True", "False")
                           for e in node.args[0].value.elements)
            return ref is not None and ref.qualname in (masks["elementwise_predicates"] + masks["mask_combinators"]
                                                        + masks["reductions"]["names"])
        if isinstance(node, cst.Name):
            values, _ = self._name_values(node)
            return bool(values) and all(not isinstance(v, str) and self.is_mask(v, depth + 1)
                                        for v, _ in values)
        return False

    def binding_refs(self, target: cst.BaseExpression) -> tuple:
        """The converted API references the bindings of `target` rely on to be JAX arrays:
        a functional update of `target` is only valid if those conversions happen."""
        values, _ = self._values(target)
        found = []
        for value, statement in values or ():
            if value == "param" and statement in self.fresh_params:
                found.append(self.fresh_params[statement])  # the function must return it
                continue
            if not isinstance(value, str):
                found.extend(self._converted_refs_in(value))
        # and those that make it a JAX array: in a called function, an unpacked call, the
        # arguments of a parameter's callers
        relied = self.jax_refs(target) if isinstance(target, cst.Name) else [
            n for value, _ in values or () for n in self.jax_refs(value)]
        found.extend(n for n in relied if n not in found)
        return tuple(found)

    def _converted_refs_in(self, value: cst.CSTNode) -> list:
        """The converted API reference nodes inside `value`: one walk, cached per value."""
        cache = self.__dict__.setdefault("_refs_in", {})
        if value not in cache:
            converted = {ref.node for ref in self.collector.refs if ref.converted}
            found: list = []

            class _Find(cst.CSTVisitor):
                def on_visit(self, node) -> bool:
                    if node in converted:
                        found.append(node)
                    return True

            value.visit(_Find())
            cache[value] = found
        return cache[value]

    def collector_class_of(self, node):
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, cst.ClassDef):
            parent = self.parents.get(parent)
        return parent

    # aliasing
    def shared_because(self, node: cst.AugAssign) -> str | None:
        """Why the array updated by `node` may be visible through another name, or None
        when the analysis proves it private (then `a op= v` and `a = a op v` agree)."""
        target = node.target
        if isinstance(target, cst.Subscript):
            return self._shared_item(target)
        if isinstance(target, cst.Attribute):
            if self.kind_of(target, node) in (SCALAR, CONTAINER):
                return None
            return (f"`{code_of(target)}` is an attribute: other references to the object "
                    "may hold the same array")
        name = target.value
        scope = self.scopes.get(target)
        values = self.collector.bindings.get((scope, name), [])
        if self.kind_of(target, node) in (SCALAR, CONTAINER):
            return None  # numbers are immutable; containers are not arrays
        for value, statement in values:
            if value == "param" and statement in self.fresh_params:
                continue  # its function is rewritten to return it (NJ209)
            if value == "param":
                return f"`{name}` is a parameter: NumPy would change the caller's array too"
            if value == "global":
                return f"`{name}` is global or nonlocal: other code may hold the same array"
            if not self._before_or_looping(statement, node):
                continue
            if isinstance(value, str) or not self._fresh(value):
                bound = code_of(value) if not isinstance(value, str) else "a loop or unpacking"
                return f"`{name}` may share memory with `{bound}`"
        if isinstance(scope, GlobalScope):
            for _child_access in self._accesses_from_nested_scopes(scope, name):
                return f"`{name}` is a module global read by functions"
        escape = self._escape(scope, name, node)
        if escape is not None:
            return f"`{name}` is also reachable through `{escape}`"
        return None

    def _shared_item(self, target: cst.Subscript) -> str | None:
        """`params["w"] -= g`: NumPy updates the array the item holds, which other names may
        see; JAX stores a new array in the item. Arrays themselves are NJ202's business."""
        if self.kind_of(target.value) != CONTAINER:
            return None
        values, _ = self._values(target.value)
        if all(not isinstance(v, str) and self.holds_only_scalars(v) for v, _ in values):
            return None
        return (f"`{code_of(target.value)}` is a container whose item may be an array also "
                "referenced elsewhere (NumPy updates that array; JAX replaces the item)")

    def _accesses_from_nested_scopes(self, scope, name):
        """Reads of a module global from inside functions (libcst records those accesses
        in the function's scope, so follow the global assignments' references)."""
        for assignment in scope.assignments[name] if name in scope.assignments else ():
            for access in assignment.references:
                if self.scopes.get(access.node) is not scope:
                    yield access

    def _position(self, node):
        return self.positions.start(node)

    def _loops_around(self, node):
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
            if isinstance(parent, (cst.For, cst.While)):
                yield parent
            parent = self.parents.get(parent)

    def _before_or_looping(self, earlier, later) -> bool:
        """Whether `earlier` may run before `later`: it comes first, or a loop holds both."""
        if self._position(earlier) < self._position(later):
            return True
        loops = set(self._loops_around(later))
        return any(loop in loops for loop in self._loops_around(earlier))

    def _fresh(self, value: cst.BaseExpression) -> bool:
        """Whether `value` is a new array that no other name refers to."""
        if isinstance(value, (cst.Attribute, cst.Subscript)) and not isinstance(value.value, cst.Name):
            return self._fresh(value.value)  # np.zeros((3, 3)).T, np.ones(9)[2:]: views of temporaries
        if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                              cst.ConcatenatedString, cst.List, cst.Dict, cst.Set,
                              cst.ListComp, cst.DictComp, cst.SetComp, cst.Tuple)):
            return True
        if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
            return True
        if isinstance(value, cst.Call):
            if _may_not_copy(value):
                return False  # astype(..., copy=False), np.array(b, copy=None): maybe b itself
            ref = self.collector.ref_by_call.get(value)
            if ref is not None:
                if ref.qualname in self.view_functions:
                    return all(self._fresh(a.value) for a in value.args[:1])
                return True
            if isinstance(value.func, cst.Attribute) and value.func.attr.value in self.fresh_methods:
                return True
            if isinstance(value.func, cst.Attribute) and ref is None:
                return self._fresh(value.func.value)  # np.arange(9).reshape(3, 3): a view of a temporary
            if isinstance(value.func, cst.Name) and value.func.value in SCALAR_CALLS | CONTAINER_CALLS:
                return True
        return False

    def _escape(self, scope, name: str, aug: cst.CSTNode, skip: cst.CSTNode | None = None) -> str | None:
        """An expression through which the array of `name` may be kept by someone else
        before `aug` runs: stored in another name or container, passed to a function that
        may keep it, yielded."""
        skip = aug.target if skip is None else skip
        if scope is None:
            return None
        accesses = set(scope.accesses[name]) if name in scope.accesses else set()
        for assignment in scope.assignments[name] if name in scope.assignments else ():
            accesses.update(assignment.references)  # uses inside nested functions too
        for access in sorted(accesses, key=lambda a: self._position(a.node)):
            use = access.node
            if use is skip or not self._before_or_looping(use, aug):
                continue
            holder = self._holder(use)
            if holder is not None:
                return code_of(holder)
        return None

    def _holder(self, use: cst.Name, returns_escape: bool = False) -> cst.CSTNode | None:
        """The node that keeps a reference to `use`'s value, walking up through views.
        `returns_escape`: a returned value outlives the function (for attributes)."""
        node, parent = use, self.parents.get(use)
        while parent is not None:
            if isinstance(parent, cst.Attribute) and parent.value is node:
                call = self.parents.get(parent)
                if isinstance(call, cst.Call) and call.func is parent:  # x.method(...)
                    if parent.attr.value in self.fresh_methods and not _may_not_copy(call):
                        return None  # x.copy(), x.sum(): a new array
                    node, parent = call, self.parents.get(call)  # x.reshape(...): a view
                    continue
                node, parent = parent, self.parents.get(parent)  # x.T, x.real: views
                continue
            if isinstance(parent, cst.Subscript) and parent.value is node:
                if node is use and self._scalar_read(parent):
                    return None  # a[1] of a 1-D array: a number, not a view
                node, parent = parent, self.parents.get(parent)  # x[1:]: a view
                continue
            if isinstance(parent, (cst.Element, cst.DictElement, cst.StarredElement,
                                   cst.StarredDictElement)):
                container = self.parents.get(parent)
                if self._is_store_target(container):
                    return None  # `a[0], a[1] = ...` writes into a; it keeps nothing
                return container  # in a container literal
            if isinstance(parent, cst.Assign) and parent.value is node and all(
                    isinstance(t.target, cst.Subscript) and self._array_store(t.target)
                    for t in parent.targets):
                return None  # `a[:] = v` copies v's values into a
            if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.NamedExpr)) \
                    and parent.value is node:
                return parent
            if isinstance(parent, cst.Return) and returns_escape:
                return parent
            if isinstance(parent, (cst.Yield, cst.Lambda, cst.Param)):
                return parent  # yielded, captured, or a default argument
            if isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp)) and parent.elt is node:
                return parent
            if isinstance(parent, cst.DictComp) and node in (parent.key, parent.value):
                return parent
            if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node:
                return parent  # iterating an array yields views of its rows
            if isinstance(parent, cst.Arg):
                call = self.parents.get(parent)
                return None if self._call_keeps_nothing(call) else call
            if isinstance(parent, (cst.IfExp, cst.BooleanOperation)):
                node, parent = parent, self.parents.get(parent)  # `a or b` is one of them
                continue
            return None
        return None

    def _array_store(self, target: cst.Subscript) -> bool:
        base = target.value
        while isinstance(base, cst.Subscript):
            base = base.value
        return self.kind_of(base) == ARRAY or self.jax_typed(base, certain=True)

    def _scalar_read(self, subscript: cst.Subscript) -> bool:
        return len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index) \
            and self.is_scalar(subscript.slice[0].slice.value) \
            and self.one_dimensional(subscript.value)

    def _is_store_target(self, node) -> bool:
        parent = self.parents.get(node)
        while isinstance(parent, (cst.Element, cst.Tuple, cst.List)):
            node, parent = parent, self.parents.get(parent)
        return isinstance(parent, (cst.AssignTarget, cst.For, cst.CompFor)) and \
            getattr(parent, "target", None) is node

    def one_dimensional(self, name: cst.BaseExpression) -> bool:
        """Whether every binding of `name` makes a 1-D array (so `name[i]` is a scalar copy,
        never a view): np.zeros(n), np.arange(...), np.linspace(...), np.array([numbers])."""
        values, _ = self._values(name) if isinstance(name, (cst.Name, cst.Attribute)) else (None, None)
        if not values:
            return False
        for value, _statement in values:
            ref = self.collector.ref_by_call.get(value) if isinstance(value, cst.Call) else None
            if ref is None or not value.args:
                return False
            first = value.args[0].value
            short = ref.qualname.rsplit(".", 1)[-1]
            if short in ("arange", "linspace", "geomspace", "logspace"):
                continue
            if short in ("zeros", "ones", "empty", "full") and self.is_scalar(first):
                continue
            if short in ("array", "asarray") and isinstance(first, (cst.List, cst.Tuple)) and all(
                    self.is_scalar(e.value) for e in first.elements):
                continue
            return False
        return True

    def _call_keeps_nothing(self, call: cst.Call) -> bool:
        ref = self.collector.ref_by_call.get(call)
        if ref is not None:
            return ref.qualname not in self.view_functions and not _may_not_copy(call)
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in UFUNC_METHODS:
            ufunc = self.collector.ref_by_node.get(func.value)
            if ufunc is not None and (ufunc.entry or {}).get("kind") == "ufunc":
                return True  # np.add.at(x, ...), np.add.reduce(x): a new array or None
        return isinstance(call.func, cst.Name) and call.func.value in PURE_BUILTINS


def _may_not_copy(call: cst.Call) -> bool:
    """A `copy=` argument other than True: the result may be the input itself."""
    return any(a.keyword is not None and a.keyword.value == "copy"
               and not (isinstance(a.value, cst.Name) and a.value.value == "True")
               for a in call.args)


def _part_of(value, name: str) -> bool:
    """`name[...]`: a part of what the name holds (a list's slice is a list)."""
    return isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) \
        and value.value.value == name


def _is_sequence_value(value) -> bool:
    if isinstance(value, (cst.List, cst.Tuple, cst.ListComp)):
        return True
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
        and value.func.value in ("list", "tuple")


class _Returns(cst.CSTVisitor):
    """Whether a function body returns a value or yields (not looking into nested functions)."""

    def __init__(self) -> None:
        super().__init__()
        self.value_returned = False
        self.yields = False
        self.returns: list[cst.Return] = []

    def visit_Return(self, node: cst.Return) -> None:
        self.returns.append(node)
        if node.value is not None and not (isinstance(node.value, cst.Name) and node.value.value == "None"):
            self.value_returned = True

    def visit_Yield(self, node: cst.Yield) -> None:
        self.yields = True

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False


def always_leaves(statements) -> bool:
    """Whether every path through these statements (a block's body) ends in a return or a
    raise, never falling off the end."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, (cst.Return, cst.Raise)):  # `def f(x): return x` on one line
        return True
    if isinstance(last, cst.SimpleStatementLine):
        return isinstance(last.body[-1], (cst.Return, cst.Raise))
    if isinstance(last, cst.If):
        if last.orelse is None:
            return False
        rest = [last.orelse] if isinstance(last.orelse, cst.If) else last.orelse.body.body
        return always_leaves(last.body.body) and always_leaves(rest)
    if isinstance(last, cst.With):
        return always_leaves(last.body.body)
    return False


def _unpacked_position(statement, name: str) -> tuple[int, int] | None:
    """(index, count) when `statement` is `a, b, c = value` binding `name` once at top
    level (no starred target, one target list)."""
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    elements = [e.value for e in target.elements]
    if any(isinstance(e, cst.StarredElement) for e in target.elements):
        return None
    found = [i for i, e in enumerate(elements) if isinstance(e, cst.Name) and e.value == name]
    return (found[0], len(elements)) if len(found) == 1 else None


# Attributes of a JAX array that are JAX arrays too (not .shape, .dtype, .size...).
_ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "at"})


class _JaxTyping:
    """One `Dataflow.jax_typed` question: whether a value is a JAX array once converted, and
    the converted references that answer relies on. Each node is judged once; a node met
    again while being judged (a cycle: `x = x + 1`, recursion) counts as not JAX, which
    only ever makes the answer more cautious."""

    def __init__(self, flow: "Dataflow", certain: bool) -> None:
        self.flow = flow
        self.certain = certain
        self.seen: dict = {}

    def of(self, value) -> tuple[bool, frozenset]:
        if isinstance(value, str) or value is None:
            return False, frozenset()
        if value not in self.seen:
            self.seen[value] = (False, frozenset())  # a cycle: not (yet) known to be JAX
            self.seen[value] = self._judge(value)
        return self.seen[value]

    def _all(self, values) -> tuple[bool, frozenset]:
        refs: set = set()
        values = list(values)
        for value in values:
            typed, relied = self.of(value)
            if not typed:
                return False, frozenset()
            refs |= relied
        return bool(values), frozenset(refs)

    def _judge(self, value) -> tuple[bool, frozenset]:
        flow = self.flow
        no = (False, frozenset())
        if isinstance(value, cst.Call):
            ref = flow.collector.ref_by_call.get(value)
            if ref is not None:
                return (True, frozenset({ref.node})) if self._array_call(ref) else no
            function = flow.module_function(value)
            if function is not None:
                return self._all(flow.function_returns(function) or ())
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value not in flow.sequence_methods:
                return self.of(func.value)
            return no
        if isinstance(value, cst.BinaryOperation):
            if flow.value_kind(value) == CONTAINER:
                return no  # [0] * n: a list, whatever n is
            left, right = self.of(value.left), self.of(value.right)
            return left if left[0] else right
        if isinstance(value, cst.UnaryOperation):
            return self.of(value.expression)
        if isinstance(value, cst.Comparison) and len(value.comparisons) == 1 and isinstance(
                value.comparisons[0].operator, ELEMENTWISE_COMPARISONS):  # not `is`, `in`
            left, right = self.of(value.left), self.of(value.comparisons[0].comparator)
            return left if left[0] else right
        if isinstance(value, cst.IfExp):
            return self._all((value.body, value.orelse))
        if isinstance(value, cst.Attribute):
            return self.of(value.value) if value.attr.value in _ARRAY_ATTRIBUTES else no
        if isinstance(value, cst.Subscript):
            return self.of(value.value)
        if isinstance(value, cst.Name):
            values, _ = flow._name_values(value)
            return self._all_bindings(value.value, values)
        return no

    def _all_bindings(self, name: str, values) -> tuple[bool, frozenset]:
        if not values:
            return False, frozenset()
        refs: set = set()
        for bound, statement in values:
            if bound == "param":
                typed, relied = self._parameter(statement)
            elif bound == UNKNOWN:
                typed, relied = self._unpacked(statement, name)
            else:
                typed, relied = self.of(bound)
            if not typed:
                return False, frozenset()
            refs |= relied
        return True, frozenset(refs)

    def _array_call(self, ref) -> bool:
        flow = self.flow
        return ref.converted and (ref.entry or {}).get("kind") in ("function", "ufunc") \
            and ref.qualname not in flow.sequence_results \
            and ref.qualname not in flow.non_array_results and flow._one_array_result(ref)

    def _unpacked(self, statement, name: str) -> tuple[bool, frozenset]:
        """`lo, hi = np.percentile(x, [1, 99])`: rows of one JAX array are JAX arrays.
        `a, b = f(x)` with every return of f a tuple `(p, q)` of that length: a is JAX
        when every return's p is."""
        no = (False, frozenset())
        position = _unpacked_position(statement, name)
        if position is None or not isinstance(statement.value, cst.Call):
            return no
        index, count = position
        call = statement.value
        ref = self.flow.collector.ref_by_call.get(call)
        if ref is not None:
            return (True, frozenset({ref.node})) if self._array_call(ref) else no
        function = self.flow.module_function(call)
        returns = self.flow.function_returns(function) if function is not None else None
        if not returns or not all(
                isinstance(r, cst.Tuple) and len(r.elements) == count
                and not any(isinstance(e, cst.StarredElement) for e in r.elements)
                for r in returns):
            return no
        return self._all(r.elements[index].value for r in returns)

    def _parameter(self, param: cst.Param) -> tuple[bool, frozenset]:
        """A parameter of a module-level function that every call in this module passes a
        JAX array (or omits, with a JAX default): trusted only when not `certain`, and only
        when the function's name is used by nothing but those calls (not listed in __all__,
        not mentioned by other files of the tree, not passed as a value)."""
        no = (False, frozenset())
        flow = self.flow
        function = flow.parents.get(flow.parents.get(param))
        if self.certain or param.star or not isinstance(function, cst.FunctionDef):
            return no
        name = function.name.value
        context = flow.collector.context
        if name in flow.collector.exported_names or name in context.external_names \
                or name.startswith("__") or function.decorators or function.asynchronous \
                or flow.collector.dynamic_scopes:
            return no
        global_scope = flow.scopes.get(function)
        if not isinstance(global_scope, GlobalScope) or len(global_scope.assignments[name]) != 1:
            return no
        (assignment,) = global_scope.assignments[name]
        if param in function.params.kwonly_params:
            position = None
        else:
            positional = [*function.params.posonly_params, *function.params.params]
            position = positional.index(param) if param in positional else None
        passed = []
        for access in assignment.references:
            call = flow.parents.get(access.node)
            if not (isinstance(call, cst.Call) and call.func is access.node) \
                    or any(a.star for a in call.args):
                return no  # used as a value, or *args/**kwargs hide the argument
            argument = argument_for(call, position, param.name.value)
            passed.append(argument if argument is not None else param.default)
        if not passed or any(a is None for a in passed):
            return no
        return self._all(passed)



_INDEX_ERROR_BASES = {"IndexError", "LookupError", "Exception", "BaseException"}


def _catches(handler: cst.ExceptHandler, name: str) -> bool:
    """Whether an except clause catches IndexError (bare, or a base class of it)."""
    if handler.type is None:
        return True
    types = [e.value for e in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
    return any((code_of(t).split(".")[-1]) in _INDEX_ERROR_BASES for t in types)
