"""Aliasing: whether an array may be seen through another name (aliases, views, escapes,
globals, attributes), and so whether an in-place write can become a rebinding."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import FunctionScope, GlobalScope

from np2jax.analysis.facts import (
    TEXT_NODES,
    ARRAY,
    CONTAINER,
    CONTAINER_CALLS,
    DYNAMIC_CALLS,
    GENERATOR_FACTORIES,
    KEEP_OUT,
    PURE_BUILTINS,
    SCALAR,
    SCALAR_CALLS,
    UFUNC_METHODS,
    ApiRef,
)
from np2jax.analysis.decorators import (
    decorator_use, star_imports, transparent_decorators, transparent_kind)
from np2jax.analysis.effects import Effects
from np2jax.analysis.values import ReturnsFinder, Values
from np2jax.syntax import all_parameters, code_of
from np2jax.syntax.walk import walk
from np2jax.tree import resolve

# The methods of JAX's `x.at[i]`: each gives a new array (np2jax's own output, read again).
_AT_UPDATES = frozenset({"set", "add", "subtract", "multiply", "divide", "power", "min", "max",
                         "apply"})


class Aliasing(Values):
    """Privacy proofs: an array no other name, view or object can see."""

    def __init__(self, collector, parents, positions, scopes) -> None:
        super().__init__(collector, parents, positions, scopes)
        # Param -> FunctionDef rewritten to return it (np2jax.analysis.mutators fills it)
        self.fresh_params: dict = {}
        self._refs_in: dict = {}  # value -> the converted references inside it
        self.effects = Effects(self)  # what the module's functions do with arguments and returns

    def unconvertible_because(self, target: cst.BaseExpression, at: cst.CSTNode,
                              need_jax: bool = True, certain: bool = False,
                              excused: frozenset = frozenset(),
                              module_global: bool = False) -> str | None:
        """Why an in-place write at `at` into the array held by `target` (a name, or an
        attribute of self) cannot become `target = <new array>`; None when `target` provably
        holds a fresh JAX array that no other name can see, so rebinding it is equivalent.
        `certain`: see jax_typed (a wrong guess must fail loudly, else pass True).
        `excused`: statements that hold the array but are followed by np2jax.analysis.views.
        `module_global`: a function's write into a module global may become `global G;
        G = ...` (global_write_unconvertible); the caller then declares the name global."""
        dynamic = self._dynamic_code(target)
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
        # a parameter rebound at the top of the body before the write is not written
        values = self.live_bindings(target, self.collector.bindings.get((scope, name), []))
        if module_global and self.module_global_written(target):
            return self.global_write_unconvertible(target)
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
            if not self._before_or_looping(statement, at) or self.keeps_same_array(value, name):
                continue
            relevant = True
            if isinstance(value, str):
                return f"`{name}` is bound by a loop or an unpacking, so it may be shared"
            if not self._fresh(value):
                return f"`{name}` may share memory with `{code_of(value)}`{self._returns_shared(value)}"
            if need_jax and not self.jax_typed(value, certain):
                return f"`{name}` may not hold a JAX array (it is bound to `{code_of(value)}`)"
        if not relevant:
            return f"`{name}` is not bound before this write"
        if isinstance(scope, GlobalScope):
            for _access in self._accesses_from_nested_scopes(scope, name):
                return f"`{name}` is a module global read by functions"
        escape = self._escape(scope, name, at, skip=target, excused=excused)
        if escape is not None:
            return f"`{name}` is also reachable through `{code_of(escape)}`{self._keeps_argument(escape)}"
        return None

    def exported_effects(self, module: cst.Module, context) -> dict:
        """The summaries other files of the tree may rely on (FileResult.effects), of the
        module-level functions they mention: name -> (every return a fresh array that is a
        JAX array once converted, ((position or None, name), ...) of the parameters it only
        reads). Only functions a call here would reach (module_function's conditions)."""
        found = {}
        local_decorators = transparent_decorators(module)
        for statement in module.body:
            if not isinstance(statement, cst.FunctionDef) \
                    or statement.name.value not in context.external_names:
                continue
            if statement.decorators:
                # only what it returns, and only when every decorator hands that back
                needs = self._transparent_decorators_needed(statement, module, local_decorators)
                if needs is None or not self.plain_module_function(statement, decorated=True):
                    continue
                if self._fresh_jax_returns(statement):
                    found[statement.name.value] = (True, (), needs)
                continue
            if not self.plain_module_function(statement):
                continue
            fresh = self._fresh_jax_returns(statement)
            read_only = all_parameters(
                statement, lambda p, f=statement: self.effects.param_effect(f, p).read_only)
            if fresh or read_only:
                found[statement.name.value] = (fresh, read_only, ())
        return found

    def transparently_decorated_function(self, call: cst.Call) -> cst.FunctionDef | None:
        """The function `call` calls when it is module_function's callee but for decorators
        that are all transparent ones of this module (np2jax.analysis.decorators): a call of
        it returns what the function returns. Only for following returns: the decorators
        may copy or change the arguments, so what the function does to its parameters says
        nothing of the caller's arrays."""
        func = call.func
        if not isinstance(func, cst.Name) or self.collector.dynamic_scopes:
            return None
        node = self._module_level_function(func)
        if node is None or not node.decorators or not self.plain_module_function(node, decorated=True):
            return None
        for decorator in node.decorators:
            use = decorator_use(decorator)
            if use is None or not isinstance(use[0], cst.Name):
                return None
            definition = self._module_level_function(use[0])
            if definition is None or transparent_kind(definition) != use[1]:
                return None
        return node

    def _module_level_function(self, name: cst.Name) -> cst.FunctionDef | None:
        scope = self.scopes.get(name)
        assignments = list(scope[name.value]) if scope is not None else []
        if len(assignments) != 1:
            return None
        node = getattr(assignments[0], "node", None)
        if isinstance(node, cst.FunctionDef) and isinstance(self.scopes.get(node), GlobalScope):
            return node
        return None

    def _fresh_jax_returns(self, function: cst.FunctionDef) -> bool:
        returns = self.function_returns(function)
        return self.effects.fresh_return(function) and bool(returns) and all(
            self.jax_typed(value, certain=True) for value in returns)

    def _transparent_decorators_needed(self, function: cst.FunctionDef, module: cst.Module,
                                       local: dict[str, str]) -> tuple | None:
        """What the tree must confirm before the summary of `function`'s returns holds for
        the decorated function (np2jax.analysis.decorators): ((qualified name, kind), ...)
        of its decorators defined in other modules; () when all are this module's
        transparent ones; None when one is not, or cannot be named."""
        needs = []
        for decorator in function.decorators:
            use = decorator_use(decorator)
            if use is None:
                return None
            expression, kind = use
            if isinstance(expression, cst.Name) and expression.value in local:
                if local[expression.value] != kind:
                    return None
                continue
            (qualname,) = self.collector.imported_names(expression, sole=True) or (None,)
            if qualname is not None:
                needs.append((qualname, kind))
                continue
            stars = star_imports(module)
            if not isinstance(expression, cst.Name) or len(stars) != 1 \
                    or self.scopes.get(expression) is None \
                    or self.scopes.get(expression)[expression.value]:
                return None  # bound here, or several modules could give the name
            source = stars[0]
            base = code_of(source.module) if source.module is not None else ""
            context = self.collector.context
            base = resolve("." * len(source.relative) + base, context.name, context.is_package)
            needs.append((f"{base}.{expression.value}", kind))
        return tuple(needs)

    def keeps_same_array(self, value, name: str) -> bool:
        """`u = step(u, r)` where step gives back the array passed for that parameter and
        keeps it nowhere else (np2jax.analysis.effects): `u` holds the array it held before,
        and no one else gained a reference to it."""
        if not self.passes_through(value, name):
            return False
        function = self.module_function(value)
        if function is None:
            return True  # another module's, which NJ209 rewrites only when it keeps nothing
        return not self.effects.param_effect(function, self.returned_param(function)).escapes

    def _rebinds_argument(self, call: cst.Call, argument: cst.Name) -> bool:
        """`u = step(u, r)`, the call the whole value of a statement binding `u` alone, and
        step giving `u` back without keeping it (keeps_same_array)."""
        statement = self.parents.get(call)
        return isinstance(statement, cst.Assign) and statement.value is call \
            and len(statement.targets) == 1 and isinstance(statement.targets[0].target, cst.Name) \
            and statement.targets[0].target.value == argument.value \
            and self.keeps_same_array(call, argument.value)

    def _catches_index_error(self, node) -> bool:
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
            if isinstance(parent, cst.Try) and any(_catches(h, "IndexError") for h in parent.handlers):
                return True
            parent = self.parents.get(parent)
        return False

    def _dynamic_code(self, target) -> str | None:
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

    def _attribute_unconvertible(self, target: cst.Attribute, at: cst.CSTNode,
                                 need_jax: bool = True) -> str | None:
        """Why `self.attr` may hold an array another object can see, or None: the class
        binds it to fresh arrays only (JAX arrays, with `need_jax`), no other module of the
        tree names `.attr`, and every read of it outside the methods that bind it neither
        writes nor keeps the array (`a.w.sum()`, `a.w.copy()`), or hands it out only as a
        function's last act on an object no one else holds (_returned_for_good)."""
        if not (isinstance(target.value, cst.Name) and target.value.value == "self"):
            return f"`{code_of(target)}` is an attribute of another object"
        attr = target.attr.value
        cls = self.class_of(target)
        values = self.collector.self_attr_bindings.get((cls, attr), [])
        if not values:
            return f"`self.{attr}` is not assigned in this class"
        for value, _statement in values:
            if isinstance(value, str) or not self._fresh(value) \
                    or (need_jax and not self.jax_typed(value)):
                shown = value if isinstance(value, str) else code_of(value)
                return f"`self.{attr}` may not hold a fresh JAX array (it is bound to `{shown}`)"
        if attr in self.collector.context.external_attributes:
            return f"`.{attr}` is named in another module of the tree, where the array may be shared"
        for use in self.collector.attribute_loads.get(attr, ()):
            inside = isinstance(use.value, cst.Name) and use.value.value == "self" \
                and self.class_of(use) is cls
            if not inside:
                reason = self._outside_use(use)
                if reason is not None:
                    return reason
                continue
            holder = self._holder(use, returns_escape=True) if use is not target else None
            if holder is not None:
                return f"`self.{attr}` is also reachable through `{code_of(holder).strip()}`"
        return None

    def module_global_written(self, target: cst.Name) -> bool:
        """Whether `target`, in a function, names a module global (declared `global`, or
        read there and bound nowhere but at module level)."""
        scope = self.scopes.get(target)
        module_scope = getattr(scope, "globals", None)
        if scope is None or module_scope is None or scope is module_scope \
                or not isinstance(self.enclosing(target, (cst.FunctionDef, cst.Lambda,
                                                          cst.ClassDef)), cst.FunctionDef):
            return False
        if not isinstance(scope, FunctionScope):
            return False  # in a comprehension
        found = list(scope[target.value])
        return bool(found) and all(a.scope is module_scope for a in found)

    def global_write_unconvertible(self, target: cst.Name, need_jax: bool = True) -> str | None:
        """Why a function's write into the module global `target` cannot become `global
        G; G = <new array>`, or None: G is the module's own (not in __all__, not named by
        another module of the tree, not read through globals()), every binding of it (at
        module level, or in a function declaring it global) is a fresh JAX array, and no
        use of it anywhere lets a name, a container, a call or a caller keep the array
        (a function may run at any time, so every use counts, not only earlier ones)."""
        name = target.value
        module_scope = self.scopes.get(target).globals
        context = self.collector.context
        if name in self.collector.exported_names or name in context.external_names \
                or name in self.collector.dynamic_names or name.startswith("__"):
            return (f"`{name}` is a module global other modules may import (or `globals()` "
                    "reads it), where the array would be shared")
        values = self.global_values(module_scope, name)
        if values is None:
            return f"`{name}` is a module global bound other than by plain assignments"
        for value, _statement in values:
            if not self._fresh(value):
                return f"`{name}` may share memory with `{code_of(value)}`{self._returns_shared(value)}"
            if need_jax and not self.jax_typed(value):
                return f"`{name}` may not hold a JAX array (it is bound to `{code_of(value)}`)"
        accesses = set(module_scope.accesses[name]) if name in module_scope.accesses else set()
        for assignment in module_scope.assignments[name]:
            accesses.update(assignment.references)
        for access in sorted(accesses, key=lambda a: self.start(a.node)):
            use = access.node
            if not isinstance(use, cst.Name):
                return f"`{name}` is named in a string annotation or similar"
            if use is target:
                continue
            holder = self._holder(use, returns_escape=True)
            if holder is not None:
                return (f"`{name}` is a module global also reachable through "
                        f"`{code_of(holder).strip()}`{self._keeps_argument(holder)}")
        return None

    def global_values(self, module_scope, name: str) -> list | None:
        """(value, statement) of every binding of a module global, at module level or in a
        function declaring it `global`; None when one is not a plain assignment."""
        found = []
        for (scope, bound), values in self.collector.bindings.items():
            values = [(v, st) for v, st in values if v != "global"]  # the declarations
            if bound != name or scope is None or not values:
                continue
            if scope is module_scope:
                found.extend(values)
            elif all(a.scope is module_scope for a in scope[name]):
                found.extend(values)  # a function declaring it global
        plain = [a for a in module_scope.assignments[name]
                 if not isinstance(self.parents.get(a.node), cst.AugAssign)]  # `G op= v`
        if len(found) != len(plain) \
                or any(isinstance(v, str) for v, _ in found):
            return None
        return found

    def global_binding_refs(self, target: cst.Name) -> tuple:
        """binding_refs of a module global written in a function: the conversions that
        make its every binding a JAX array."""
        module_scope = self.scopes.get(target).globals
        found = []
        for value, _ in self.global_values(module_scope, target.value) or ():
            for node in [*self._converted_refs_in(value), *self.jax_refs(value)]:
                if node not in found:
                    found.append(node)
        return tuple(found)

    def declares_global(self, target: cst.Name) -> bool:
        """Whether the function holding `target` already says `global <name>`."""
        function = self.enclosing(target, (cst.FunctionDef,))
        return any(self.enclosing(statement, (cst.FunctionDef,)) is function
                   for (_scope, bound), values in self.collector.bindings.items()
                   if bound == target.value
                   for v, statement in values if v == "global")

    def module_array_changed(self, module_scope, name: str) -> bool:
        """Whether the array a module global holds may change after it is bound: some use
        writes into it (`G[i] = v`, `G += v`, `G.sort()`, `out=G`, a function of this
        module that writes its argument) or lets a name, a container or a call keep it
        (which may write it later). jax.jit takes such a global for a constant, and would
        keep its first value."""
        accesses = set(module_scope.accesses[name]) if name in module_scope.accesses else set()
        for assignment in module_scope.assignments[name] if name in module_scope.assignments else ():
            accesses.update(assignment.references)
        for access in accesses:
            use = access.node
            if not isinstance(use, cst.Name):
                return True
            if self._written_through(use) or self._holder(use, returns_escape=True) is not None:
                return True
            arg = self.parents.get(use)
            call = self.parents.get(arg)
            if isinstance(arg, cst.Arg) and isinstance(call, cst.Call):
                ref = self.collector.ref_by_call.get(call)
                if (arg.keyword is not None and arg.keyword.value == "out") or (
                        ref is not None and ref.keep is not None and call.args and call.args[0] is arg):
                    return True  # out=G, np.copyto(G, ...): kept on NumPy, written
                if ref is None and self.effects.argument_effect(call, arg).written:
                    return True
        return False

    def _outside_use(self, use: cst.Attribute) -> str | None:
        """Why a use of `.attr` outside its class may share or change the array, or None."""
        attr = use.attr.value
        if self._written_through(use):
            return f"`.{attr}` is written outside the class (`{code_of(use)}`)"
        holder = self._holder(use, returns_escape=True)
        while isinstance(holder, (cst.Dict, cst.List, cst.Tuple, cst.Set)):
            holder = self._holder(holder, returns_escape=True)  # `return {"w": a.w}`: the return
        if holder is None or self._returned_for_good(use, holder):
            return None
        return (f"`.{attr}` is read outside the class, where the array may be shared "
                f"(`{code_of(holder).strip()}` keeps it)")

    def _written_through(self, use: cst.Attribute) -> bool:
        """`a.w = v`, `a.w[0] = v`, `a.w += v`, `del a.w`, `a.w.sort()`, `a.w.T[0] = v`,
        `for a.w in ...`: the array (or the attribute) changed through this use."""
        node, parent = use, self.parents.get(use)
        while True:
            if isinstance(parent, (cst.Subscript, cst.Attribute)) and parent.value is node:
                call = self.parents.get(parent)
                if isinstance(parent, cst.Attribute) and isinstance(call, cst.Call) \
                        and call.func is parent:
                    if any(call is w[0] for w in self.collector.method_writes) \
                            or any(call is w[0] for w in self.collector.out_method_calls):
                        return True
                    node, parent = call, self.parents.get(call)
                    continue
                node, parent = parent, self.parents.get(parent)
                continue
            if isinstance(parent, (cst.Element, cst.StarredElement)) and self._is_store_target(
                    self.parents.get(parent)):
                return True
            if isinstance(parent, (cst.AssignTarget, cst.Del)) or (
                    isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor))
                    and parent.target is node) or (
                    isinstance(parent, cst.AsName) and parent.name is node):
                return True
            return False

    def _returned_for_good(self, use: cst.Attribute, holder) -> bool:
        """`return {"w": model.w}` in a function where `model` is a local bound only to new
        objects of classes of this module that never let `self` out, used only as
        `model.attr` and `model.method(...)` in that function's own body, and the return
        calls none of its methods: once it returns, no code can reach the object, so
        nothing changes the array NumPy hands out (JAX's copy is the same values)."""
        obj = use.value
        if not isinstance(holder, cst.Return) or not isinstance(obj, cst.Name) \
                or obj.value == "self":
            return False
        function = self.parents.get(holder)
        while function is not None and not isinstance(function, (cst.FunctionDef, cst.Lambda,
                                                                  cst.ClassDef)):
            if isinstance(function, cst.With) or (
                    isinstance(function, cst.Try) and function.finalbody is not None):
                return False  # code may run after the return
            function = self.parents.get(function)
        if not isinstance(function, cst.FunctionDef):
            return False
        finder = ReturnsFinder()
        function.body.visit(finder)
        scope = self.scopes.get(obj)
        if finder.yields or scope is None or scope is not self.scopes.get(function.body) \
                or obj.value not in scope.assignments:
            return False
        values = self.collector.bindings.get((scope, obj.value), [])
        if not values or any(not self._closed_class_instance(value) for value, _ in values):
            return False
        accesses = set(scope.accesses[obj.value])
        for assignment in scope.assignments[obj.value]:
            accesses.update(assignment.references)
        for access in accesses:
            node = access.node
            parent = self.parents.get(node)
            if not self._run_at_once(node, function) or not (
                    isinstance(parent, cst.Attribute) and parent.value is node):
                return False
            if self._inside(node, holder):
                call = self.parents.get(parent)
                if isinstance(call, cst.Call) and call.func is parent:
                    return False  # `return model.w, model.step()`: a method runs after the read
        return True

    def _run_at_once(self, node, function: cst.FunctionDef) -> bool:
        """Whether `node`, in `function`'s body, runs during the call: not in a nested
        function, lambda or class, nor in a generator expression that is not consumed at
        once by a builtin (`sum(m.step(x) for x in xs)`)."""
        parent = self.parents.get(node)
        while parent is not None and parent is not function:
            if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(parent, cst.GeneratorExp):
                arg = self.parents.get(parent)
                call = self.parents.get(arg)
                if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call)
                        and isinstance(call.func, cst.Name)
                        and call.func.value in PURE_BUILTINS | {"list", "tuple", "set"}):
                    return False
            parent = self.parents.get(parent)
        return parent is function

    def _inside(self, node, ancestor) -> bool:
        while node is not None:
            if node is ancestor:
                return True
            node = self.parents.get(node)
        return False

    def _closed_class_instance(self, value) -> bool:
        """`Model(...)`: a call of a class defined once at module level, undecorated, with
        no base but `object`, whose body uses `self` only as `self.attr` (it never stores,
        passes, returns or captures the object itself)."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
            return False
        scope = self.scopes.get(value.func)
        assignments = list(scope[value.func.value]) if scope is not None else []
        if len(assignments) != 1:
            return False
        cls = getattr(assignments[0], "node", None)
        if not isinstance(cls, cst.ClassDef) or cls.decorators \
                or not isinstance(self.scopes.get(cls), GlobalScope) \
                or any(not (isinstance(b.value, cst.Name) and b.value.value == "object")
                       for b in cls.bases) or cls.keywords:
            return False
        for node in walk(cls.body):
            if isinstance(node, cst.Name) and node.value == "self":
                parent = self.parents.get(node)
                if isinstance(parent, cst.Param) and parent.name is node:
                    continue
                if not (isinstance(parent, cst.Attribute) and parent.value is node):
                    return False
        return True

    def settle_out_calls(self, refs: list[ApiRef]) -> None:
        """`np.f(..., out=x)` is planned KEEP_OUT until every reference is planned; then the
        calls whose out= target is a private JAX array convert (NJ204 rewrites them as
        `x = jnp.f(...)`), and the others stay on NumPy."""
        for ref in refs:
            if ref.keep == KEEP_OUT and ref.call is not None and ref.out_arg is not None \
                    and self.out_call_convertible(ref) is None:
                ref.keep = None

    def out_call_convertible(self, ref: ApiRef) -> str | None:
        """Why `np.f(..., out=x)` cannot become `x = jnp.f(...)`, or None."""
        if self.expression_statement_line(ref.call) is None:
            return "its result is used, or it shares its line"
        target = ref.out_arg.value
        if not isinstance(target, cst.Name):
            return f"`{code_of(target)}` is not a plain name"
        return self.unconvertible_because(target, ref.call)

    def binding_refs(self, target: cst.BaseExpression) -> tuple:
        """The converted API references the bindings of `target` rely on to be JAX arrays:
        a functional update of `target` is only valid if those conversions happen."""
        values, _ = self.values_of(target)
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
        cache = self._refs_in
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

    def shared_because(self, node: cst.AugAssign) -> str | None:
        """Why the array updated by `node` may be visible through another name, or None
        when the analysis proves it private (then `a op= v` and `a = a op v` agree)."""
        target = node.target
        if isinstance(target, cst.Subscript):
            return self._shared_item(target)
        if isinstance(target, cst.Attribute):
            if self.kind_of(target, node) in (SCALAR, CONTAINER):
                return None
            dynamic = self._dynamic_code(target)
            private = None if dynamic is not None else \
                self._attribute_unconvertible(target, node, need_jax=False)
            if dynamic is None and private is None:
                return None  # no one else holds the array: rebinding the attribute agrees
            return (f"`{code_of(target)}` is an attribute: other references to the object "
                    f"may hold the same array ({private or f'the code calls `{dynamic}`'})")
        name = target.value
        scope = self.scopes.get(target)
        values = self.collector.bindings.get((scope, name), [])
        if isinstance(node.value, TEXT_NODES):
            return None  # `label += " = "`: text (an array of strings is never JAX's)
        if self.kind_of(target, node) in (SCALAR, CONTAINER):
            return None  # numbers are immutable; containers are not arrays
        if self.never_numpy(target):
            return None  # code already JAX: `a op= v` rebinds, as it did before
        if self.module_class_instance(target, augmented=True):
            return None  # `total += fee` of the module's own class: its operator, not NumPy's
        if self.module_global_written(target):  # `global G; G op= v` in a function
            return self.global_write_unconvertible(target, need_jax=False)
        for value, statement in values:
            if value == "param" and statement in self.fresh_params:
                continue  # its function is rewritten to return it (NJ209)
            if value == "param":
                return f"`{name}` is a parameter: NumPy would change the caller's array too"
            if value == "global":
                return f"`{name}` is global or nonlocal: other code may hold the same array"
            if not self._before_or_looping(statement, node) or self.keeps_same_array(value, name):
                continue
            if isinstance(value, str) and self._unpacked_fresh(statement, name):
                continue
            if isinstance(value, str) or not self._fresh(value):
                if isinstance(value, str):
                    return f"`{name}` may share memory with `a loop or unpacking`"
                return f"`{name}` may share memory with `{code_of(value)}`{self._returns_shared(value)}"
        if isinstance(scope, GlobalScope):
            for _child_access in self._accesses_from_nested_scopes(scope, name):
                return (f"`{name}` is a module global read by functions, which may keep the "
                        f"array under another name; if none does, write `{rebinding(node)}`: "
                        "the functions then read the new array, as they do in NumPy")
        escape = self._escape(scope, name, node)
        if escape is not None:
            return f"`{name}` is also reachable through `{code_of(escape)}`{self._keeps_argument(escape)}"
        return None

    def _shared_item(self, target: cst.Subscript) -> str | None:
        """`params["w"] -= g`: NumPy updates the array the item holds, which other names may
        see; JAX stores a new array in the item. Arrays themselves are NJ202's business."""
        if self.kind_of(target.value) != CONTAINER:
            return None
        values = self._container_values(target.value)
        if values is not None and all(self.holds_only_scalars(v) for v in values):
            return None
        return (f"`{code_of(target.value)}` is a container whose item may be an array also "
                "referenced elsewhere (NumPy updates that array; JAX replaces the item)")

    def _container_values(self, container: cst.BaseExpression) -> list | None:
        """The values a container may be: its bindings, and for a parameter what the calls
        of its function pass (`solve(g, {"tries": 0})`, or a name bound to such a literal
        there); None where one is not seen."""
        values, _ = self.values_of(container)
        found = []
        for value, statement in values:
            if value == "param" and isinstance(statement, cst.Param):
                passed = self.passed_arguments(statement)
                if passed is None:
                    return None
                for argument in passed:
                    if self.handed_on(argument, statement):
                        continue
                    if isinstance(argument, cst.Name):
                        bound, _ = self.values_of(argument)
                        if not bound or any(isinstance(v, str) for v, _ in bound):
                            return None
                        found.extend(v for v, _ in bound)
                    else:
                        found.append(argument)
            elif isinstance(value, str):
                return None
            else:
                found.append(value)
        return found

    def _accesses_from_nested_scopes(self, scope, name):
        """Reads of a module global from inside functions (libcst records those accesses
        in the function's scope, so follow the global assignments' references)."""
        for assignment in scope.assignments[name] if name in scope.assignments else ():
            for access in assignment.references:
                if self.scopes.get(access.node) is not scope:
                    yield access

    def _loops_around(self, node):
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
            if isinstance(parent, (cst.For, cst.While)):
                yield parent
            parent = self.parents.get(parent)

    def _before_or_looping(self, earlier, later) -> bool:
        """Whether `earlier` may run before `later`: it comes first, or a loop holds both."""
        if self.start(earlier) < self.start(later):
            return True
        loops = set(self._loops_around(later))
        return any(loop in loops for loop in self._loops_around(earlier))

    def _unpacked_fresh(self, statement, name: str) -> bool:
        """`pos, vel, mass = initial_state(n)`: `name` unpacked from a call of the module's
        own function whose every return is a tuple holding a new array at that place."""
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1 \
                or not isinstance(statement.value, cst.Call):
            return False
        target = statement.targets[0].target
        if not isinstance(target, (cst.Tuple, cst.List)) \
                or not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name)
                           for e in target.elements):
            return False
        names = [e.value.value for e in target.elements]
        if names.count(name) != 1:
            return False
        function = self.module_function(statement.value) or self.module_method(statement.value)
        return function is not None and self.effects.fresh_return_item(
            function, names.index(name), len(names))

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
            func = value.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Subscript) \
                    and isinstance(func.value.value, cst.Attribute) \
                    and func.value.value.attr.value == "at" and func.attr.value in _AT_UPDATES:
                return True  # x.at[i].add(v): JAX's update gives a new array
            if value in self.collector.jax_calls:
                return True  # a jax.numpy function: JAX arrays are never views of another
            function = self.module_function(value) or self.module_method(value)
            if function is not None:
                return self.effects.fresh_return(function)  # every return a new array
            effects = self.tree_function_effects(value)
            if effects is not None:
                return effects[0]  # a function of another module of the tree, by its import
            ref = self.collector.ref_by_call.get(value)
            if ref is not None:
                if ref.qualname in self.view_functions:
                    return all(self._fresh(a.value) for a in value.args[:1])
                return True
            if isinstance(value.func, cst.Attribute) and value.func.attr.value in self.fresh_methods:
                return True
            if isinstance(value.func, cst.Attribute) and self._draws(value.func):
                return True  # rng.normal(...): a new array of draws
            if isinstance(value.func, cst.Attribute) and ref is None:
                return self._fresh(value.func.value)  # np.arange(9).reshape(3, 3): a view of a temporary
            if isinstance(value.func, cst.Name) and value.func.value in SCALAR_CALLS | CONTAINER_CALLS:
                return True
        return False

    def _draws(self, method: cst.Attribute) -> bool:
        """`rng.normal` where every value `rng` takes is a NumPy random generator or state:
        its draws are new arrays (its `shuffle` works in place and returns None)."""
        if not isinstance(method.value, cst.Name) or method.attr.value in ("shuffle", "bit_generator"):
            return False
        values, aug_values = self.name_values(method.value)
        return bool(values) and not aug_values and all(
            isinstance(v, cst.Call) and (ref := self.collector.ref_by_call.get(v)) is not None
            and ref.qualname in GENERATOR_FACTORIES for v, _statement in values)

    def _escape(self, scope, name: str, aug: cst.CSTNode, skip: cst.CSTNode | None = None,
                excused: frozenset = frozenset()) -> cst.CSTNode | None:
        """An expression through which the array of `name` may be kept by someone else
        before `aug` runs: stored in another name or container, passed to a function that
        may keep it, yielded."""
        skip = aug.target if skip is None else skip
        if scope is None:
            return None
        accesses = set(scope.accesses[name]) if name in scope.accesses else set()
        for assignment in scope.assignments[name] if name in scope.assignments else ():
            accesses.update(assignment.references)  # uses inside nested functions too
        bindings = self.collector.bindings.get((scope, name), [])

        def reaching(read) -> set:
            return {id(s) for _, s in self.live_bindings(read, self.reaching_bindings(read, bindings))}

        written = reaching(skip) if isinstance(skip, cst.Name) else None
        for access in sorted(accesses, key=lambda a: self.start(a.node)):
            use = access.node
            if use is skip or not self._before_or_looping(use, aug):
                continue
            if written is not None and isinstance(use, cst.Name) and not reaching(use) & written:
                continue  # `x = np.asarray(x) * k`: that `x` is the array before, not this one
            holder = self._holder(use)
            if holder is not None and holder not in excused:
                return holder
        return None

    def _returns_shared(self, value) -> str:
        """Why a call of a function of this module is not a fresh array, for a message."""
        function = self.module_function(value) if isinstance(value, cst.Call) else None
        if function is None:
            return ""
        return (f" (not every return of `{function.name.value}` is a new array that no other "
                "name holds)")

    def _keeps_argument(self, holder) -> str:
        """Why a call of a function of this module keeps its argument, for a message."""
        function = self.module_function(holder) if isinstance(holder, cst.Call) else None
        if function is None:
            return ""
        return (f" (`{function.name.value}` may change, return or keep it, or its effects "
                "are not followed: recursion, a generator)")

    def _holder(self, use: cst.Name, returns_escape: bool = False) -> cst.CSTNode | None:
        """The node that keeps a reference to `use`'s value, walking up through views.
        `returns_escape`: a returned value outlives the function (for attributes)."""
        node, parent = use, self.parents.get(use)
        while parent is not None:
            if isinstance(parent, cst.Attribute) and parent.value is node:
                if parent.attr.value == "at":
                    return None  # x.at[i].add(v): JAX's update, a new array (np2jax's output)
                call = self.parents.get(parent)
                if isinstance(call, cst.Call) and call.func is parent:  # x.method(...)
                    if parent.attr.value in self.fresh_methods and not _may_not_copy(call):
                        return None  # x.copy(), x.sum(): a new array
                    node, parent = call, self.parents.get(call)  # x.reshape(...): a view
                    continue
                node, parent = parent, self.parents.get(parent)  # x.T, x.real: views
                continue
            if isinstance(parent, cst.Subscript) and parent.value is node:
                if node is use and self.scalar_read(parent):
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
                if node is use and parent.value is use and self._rebinds_argument(call, use):
                    return None  # u = step(u, r): u keeps its array, no one else gets it
                return None if self._call_keeps_nothing(call, parent) else call
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

    def scalar_read(self, subscript: cst.Subscript) -> bool:
        return len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index) \
            and self.is_scalar(subscript.slice[0].slice.value) \
            and self.one_dimensional(subscript.value)

    def _is_store_target(self, node) -> bool:
        parent = self.parents.get(node)
        while isinstance(parent, (cst.Element, cst.Tuple, cst.List)):
            node, parent = parent, self.parents.get(parent)
        return isinstance(parent, (cst.AssignTarget, cst.For, cst.CompFor)) and \
            getattr(parent, "target", None) is node

    def _call_keeps_nothing(self, call: cst.Call, arg: cst.Arg) -> bool:
        """Whether `call` neither keeps nor returns what `arg` passes (a function of this
        module keeps nothing of an argument it neither returns nor lets escape, even if it
        writes into it when passed a name: np2jax.analysis.effects)."""
        ref = self.collector.ref_by_call.get(call)
        if ref is not None:
            return ref.qualname not in self.view_functions and not _may_not_copy(call)
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in UFUNC_METHODS:
            ufunc = self.collector.ref_by_node.get(func.value)
            if ufunc is not None and (ufunc.entry or {}).get("kind") == "ufunc":
                return True  # np.add.at(x, ...), np.add.reduce(x): a new array or None
        if isinstance(call.func, cst.Name) and self.module_function(call) is not None:
            effect = self.effects.argument_effect(call, arg)
            if effect.written and not isinstance(arg.value, cst.Name):
                return False  # f(x[0]) writing x's row: no rewrite can take it back (NJ209)
            return not (effect.returned or effect.escapes)  # f(x) writing x keeps nothing
        effects = self.tree_function_effects(call)
        if effects is not None:
            return _passes_read_only(call, arg, effects[1])
        return isinstance(call.func, cst.Name) and call.func.value in PURE_BUILTINS


def _passes_read_only(call: cst.Call, arg: cst.Arg, read_only: tuple) -> bool:
    """Whether `arg` binds one of the parameters (position or None, name) another module's
    function only reads."""
    if any(a.star for a in call.args):
        return False
    if arg.keyword is not None:
        return any(name == arg.keyword.value for _position, name in read_only)
    index = [a for a in call.args if a.keyword is None].index(arg)
    return any(position == index for position, _name in read_only)


def _may_not_copy(call: cst.Call) -> bool:
    """A `copy=` argument other than True: the result may be the input itself."""
    return any(a.keyword is not None and a.keyword.value == "copy"
               and not (isinstance(a.value, cst.Name) and a.value.value == "True")
               for a in call.args)


_INDEX_ERROR_BASES = {"IndexError", "LookupError", "Exception", "BaseException"}


def _catches(handler: cst.ExceptHandler, name: str) -> bool:
    """Whether an except clause catches IndexError (bare, or a base class of it)."""
    if handler.type is None:
        return True
    types = [e.value for e in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
    return any((code_of(t).split(".")[-1]) in _INDEX_ERROR_BASES for t in types)


def rebinding(node: cst.AugAssign) -> str:
    """`a += v` spelled as the rebinding JAX makes of it: `a = a + v`."""
    operator = code_of(node.operator).strip()[:-1]
    value = code_of(node.value).strip()
    if isinstance(node.value, (cst.BinaryOperation, cst.BooleanOperation, cst.Comparison,
                               cst.IfExp, cst.Lambda, cst.NamedExpr)) and not node.value.lpar:
        value = f"({value})"
    target = code_of(node.target).strip()
    return f"{target} = {target} {operator} {value}"
