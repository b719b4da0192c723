"""Functions that change an argument in place (NJ209): which can return the array instead,
and the calls that must then assign it, in this module and in other modules of the tree."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import libcst as cst

from np2jax.analysis.aliasing import Aliasing
from np2jax.analysis.facts import CONTAINER, SCALAR, TEXT_NODES, MutatorFunction
from np2jax.analysis.references import written_arguments
from np2jax.analysis.values import ReturnsFinder
from np2jax.syntax import argument_for, code_of
from np2jax.tree import ModuleContext


class Dataflow(Aliasing):
    """The whole of the value analysis: values, aliasing, and functions that change an
    argument (the facade np2jax.analysis.module hands the rules)."""

    def __init__(self, collector, parents, positions, scopes) -> None:
        super().__init__(collector, parents, positions, scopes)
        # the functions refused only because other files use them (np2jax.tree decides)
        self.exportable_mutators: list = []

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

        def argument(name) -> bool:
            """`name` is a parameter here and still holds the argument (`x = x.copy()` at
            the top of the body makes the writes after it its own array's)."""
            return isinstance(name, cst.Name) and name.value in by_name \
                and self.scopes.get(name) is scope \
                and not self._rebound_before(by_name[name.value], name)

        for statement, target, _op in self.collector.subscript_stores:
            base = target.value
            while isinstance(base, cst.Subscript):
                base = base.value
            if argument(base):
                writes[base.value].append(statement)
        for node in self.collector.aug_assigns:
            if argument(node.target):
                writes[node.target.value].append(node)
        for _node, receiver, _method in self.collector.method_writes + self.collector.out_method_calls:
            if argument(receiver):
                other.add(receiver.value)
        for ref in self.collector.refs:  # out=, np.copyto(p, ...)
            for arg in written_arguments(ref):
                if argument(arg.value):
                    other.add(arg.value.value)
        # a parameter every call passes a list or dict (`bump(counts, w)`) is no array
        containers = {name for name in (*writes, *other) if self._passed_kind(by_name[name]) == CONTAINER}
        other -= containers
        mutated = [name for name in writes if name not in containers and not all(
            isinstance(w, cst.AugAssign) and isinstance(w.target, cst.Name) and
            (self.kind_of(w.target) in (SCALAR, CONTAINER) or self.never_numpy(w.target)
             or isinstance(w.value, TEXT_NODES))  # `label += " = "`
            for w in writes[name])]
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
        finder = ReturnsFinder()
        function.body.visit(finder)
        if finder.yields:
            return "it yields, so it cannot return the array too"
        if finder.value_returned:
            if self.effects.param_effect(function, fact.param).escapes:
                return (f"it also keeps `{param}` elsewhere (stores, yields or captures it), "
                        "where the new array would not show")
            returned = self.returned_param(function)
            if returned is not None and returned.name.value == param:
                fact.returns_param = True  # `u = step(u, r)`: its callers take the array back
            else:
                reason = self._pair_refusal(function, param, context)
                if reason is not None:
                    return reason
                fact.returns_pair = True  # `r = f(u)` -> `r, u = f(u)`
        exported = name in context.exported_mutators  # its calls elsewhere are rewritten too
        if name in context.external_names and not exported:
            return self._used_by_other_modules(name)
        if name in self.collector.exported_names or name.startswith("__"):
            return f"`{name}` is public API (listed in __all__), with callers the tool cannot see"
        if name in self.collector.dynamic_names:
            return (f"`{name}` is reached through `globals()` (by name, or by a timeit "
                    "statement), by callers the tool cannot see")
        if fact.param.star:
            return f"`{param}` is a star argument"
        for assignment in self.collector.bindings.get((scope, param), []):
            if assignment[0] != "param":
                return f"`{param}` is rebound inside the function"
        for _access in self._nested_accesses(scope, param):
            return f"`{param}` is used by a nested function"
        return self._call_sites(function, fact, exported)

    def _pair_refusal(self, function, param: str, context) -> str | None:
        """Why a function that changes `param` and returns something else cannot return
        both, `(result, param)`, with every call taking both back."""
        if self.function_returns(function) is None:
            return (f"it returns a value on some paths only, so it cannot return `{param}` "
                    "beside it")
        return self.interface_refusal(function, f"returning `{param}` beside its result",
                                      context)

    def interface_refusal(self, function, change: str, context) -> str | None:
        """Why `function` must keep its interface (its callers are not all in this file),
        which `change` (`returning `p` beside its result`) would break; None: it may change.
        The one decision for every rewrite that changes what a function takes or returns
        (NJ209's `r, p = f(p)`, NJ302's threaded keys)."""
        name = function.name.value
        if name in context.external_names:
            return (f"`{name}` is used by another module of the tree: it keeps its interface "
                    f"({change} would change it)")
        if name in self.collector.exported_names or name.startswith("__"):
            return (f"`{name}` is public API (listed in __all__): it keeps its interface "
                    f"({change} would change it)")
        if name in self.collector.dynamic_names:
            return (f"`{name}` is reached through `globals()`: it keeps its interface "
                    f"({change} would change it)")
        return None

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
        for access in sorted(assignments[0].references, key=lambda a: self.start(a.node)):
            argument, reason = self.assignable_call(access.node, name, position, fact.param.name.value,
                                                    fact.returns_param, fact.returns_pair)
            if reason is not None:
                return reason
            call = self.parents.get(access.node)
            if self.expression_statement_line(call) is None and not fact.returns_pair:
                fact.rebinding_calls.append((call, argument))  # already `u = step(u, r)`
            else:
                fact.call_sites.append((call, argument))
        if not fact.call_sites and not fact.rebinding_calls and not exported:
            return f"`{name}` is never called in this file, so its callers are elsewhere"
        return None

    def assignable_call(self, reference, name: str, position, param: str, rebinds: bool = False,
                        pair: bool = False):
        """(argument, None) when `reference` is the function of a call statement whose
        argument for `param` is a name holding a private JAX array, else (None, reason).
        `rebinds`: the function returns the parameter, so `u = f(u, ...)` (the result bound
        to the very name passed, alone on its line) is such a call too."""
        call = self.parents.get(reference)
        if not (isinstance(call, cst.Call) and call.func is reference):
            return None, f"`{name}` is used other than by calling it (as a callback?), so not every caller can be rewritten"
        argument = argument_for(call, position, param)
        if argument is None:
            return None, f"a call of `{name}` passes the argument through * or ** or leaves it out"
        if self.expression_statement_line(call) is None and not (
                rebinds and isinstance(argument, cst.Name) and self._rebinding_statement(call, argument)) \
                and not (pair and isinstance(argument, cst.Name) and self._pair_statement(call, argument)):
            if pair:
                return None, (f"a call of `{name}` uses its result other than by binding it to "
                              f"names other than `{code_of(argument)}`, alone on its line")
            if rebinds:
                return None, (f"a call of `{name}` binds its result to another name than the "
                              "one it passes, or shares its line")
            return None, f"a call of `{name}` uses its result or shares its line"
        if not isinstance(argument, cst.Name):
            return None, f"`{code_of(call)}` passes `{code_of(argument)}`, which cannot be assigned back"
        # A JAX array: `n += 1` on an int argument changes nothing for the caller, so
        # `x = f(x)` would be wrong there.
        reason = self.unconvertible_because(argument, call, certain=True)
        if reason is not None:
            return None, f"at `{code_of(call)}`: {reason}"
        return argument, None

    def _rebinding_statement(self, call: cst.Call, argument: cst.Name) -> bool:
        """`u = f(u, ...)` alone on its line."""
        statement = self.parents.get(call)
        return isinstance(statement, cst.Assign) and statement.value is call \
            and len(statement.targets) == 1 and isinstance(statement.targets[0].target, cst.Name) \
            and statement.targets[0].target.value == argument.value \
            and self.expression_statement_line(statement) is not None

    def _pair_statement(self, call: cst.Call, argument: cst.Name) -> bool:
        """`r = f(u, ...)` or `a, b = f(u, ...)`, alone on its line, binding names other than
        `u`: it can become `r, u = f(u, ...)`."""
        statement = self.parents.get(call)
        if not (isinstance(statement, cst.Assign) and statement.value is call
                and len(statement.targets) == 1 and self.expression_statement_line(statement) is not None):
            return False
        target = statement.targets[0].target
        names = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
        return all(isinstance(n, cst.Name) and n.value != argument.value for n in names)

    def external_call_sites(self, tree_refs, context: ModuleContext):
        calls, refusals = [], []
        for node, qualname in tree_refs:
            position, param, *returns_param = context.mutator_parameter(qualname)
            argument, reason = self.assignable_call(node, qualname, position, param,
                                                    bool(returns_param and returns_param[0]))
            if reason is None:
                calls.append((self.parents.get(node), argument, qualname))
            else:
                refusals.append((node, qualname, reason))
        return calls, refusals
