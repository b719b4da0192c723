"""Effects of the module's own functions, seen from their calls: per function, whether
every value it returns is a fresh array (so a caller may write into the result), and per
parameter whether the function writes the argument, returns it, or lets it escape (stores
it, yields it, captures it in a nested function, hands it to code that may keep it).

A call into a function whose summary says it only reads an argument keeps nothing of it
(np2jax.analysis.aliasing: the argument stays private to its caller), and a call of a
function whose every return is fresh gives a fresh array. What the summary cannot see
stays conservative: a function met again while its own summary is being worked out
(recursion), a generator, a decorated or async function, a function defined twice, code
that runs exec/globals()... (the module function lookup refuses those), a parameter
rebound inside the function. Computed once per function and module (memoised), on the
facts of the analysis that owns it, which it reads through the protocol `Flow`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import libcst as cst

from np2jax.analysis.facts import UFUNC_METHODS
from np2jax.analysis.references import written_arguments
from np2jax.analysis.values import ReturnsFinder
from np2jax.syntax.walk import names_in


class Flow(Protocol):
    """What this module reads of np2jax.analysis.aliasing.Aliasing (which imports this
    module and hands itself in)."""

    collector: Any
    parents: dict
    scopes: Any

    def module_function(self, call: cst.Call) -> cst.FunctionDef | None: ...
    def function_returns(self, function: cst.FunctionDef) -> list | None: ...
    def _fresh(self, value: cst.BaseExpression) -> bool: ...
    def _holder(self, use: cst.Name, returns_escape: bool = False) -> cst.CSTNode | None: ...


@dataclass(frozen=True)
class ParamEffect:
    """What a function does with the array passed for one parameter."""

    written: bool  # changed in place (directly, or by a function of the module it is passed to)
    returned: bool  # returned as it is (`return u`)
    escapes: bool  # kept elsewhere: stored, yielded, captured, returned inside something, ...

    @property
    def read_only(self) -> bool:
        return not (self.written or self.returned or self.escapes)


UNKNOWN_EFFECT = ParamEffect(written=True, returned=True, escapes=True)


class Effects:
    """The summaries of one module's functions, worked out on demand and memoised."""

    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        self._params: dict = {}  # (FunctionDef, parameter name) -> ParamEffect
        self._fresh_returns: dict = {}  # FunctionDef -> bool
        self._busy: set = set()  # summaries being worked out: met again, a recursion

    # --- returns -----------------------------------------------------------------------

    def fresh_return(self, function: cst.FunctionDef) -> bool:
        """Whether every `return` of `function` gives a new array no other name holds: a
        fresh expression (`np.where(...)`, `a * 2`, a call of another such function), or a
        local name every binding of which is fresh and which nothing else keeps."""
        if function in self._fresh_returns:
            return self._fresh_returns[function]
        key = ("returns", function)
        if key in self._busy:
            return False  # recursion: not known
        self._busy.add(key)
        try:
            answer = self._every_return_fresh(function)
        finally:
            self._busy.discard(key)
        self._fresh_returns[function] = answer
        return answer

    def _every_return_fresh(self, function: cst.FunctionDef) -> bool:
        if _is_generator(function):
            return False
        returns = self.flow.function_returns(function)
        if not returns:
            return False
        return all(self._fresh_value(value, function) for value in returns)

    def _fresh_value(self, value, function: cst.FunctionDef) -> bool:
        if isinstance(value, cst.Name):
            return self._fresh_local(value, function)
        return self.flow._fresh(value)

    def fresh_return_item(self, function: cst.FunctionDef, index: int, count: int) -> bool:
        """Whether every `return` of `function` is a tuple of `count` items whose item `index`
        is a new array no other name holds (`return pos, vel, mass`, each made there): a
        caller unpacking the result may write into that item."""
        key = ("item", function, index, count)
        if key in self._fresh_returns:
            return self._fresh_returns[key]
        answer = False
        if not _is_generator(function) and key not in self._busy:
            self._busy.add(key)
            try:
                returns = self.flow.function_returns(function)
                answer = bool(returns) and all(
                    self._fresh_tuple_item(value, index, count, function) for value in returns)
            finally:
                self._busy.discard(key)
        self._fresh_returns[key] = answer
        return answer

    def _fresh_tuple_item(self, value, index: int, count: int, function: cst.FunctionDef) -> bool:
        if not isinstance(value, cst.Tuple) or len(value.elements) != count \
                or any(isinstance(e, cst.StarredElement) for e in value.elements):
            return False
        item = value.elements[index].value
        if not isinstance(item, cst.Name):
            return self.flow._fresh(item)
        others = [e.value for i, e in enumerate(value.elements) if i != index]
        if any(item.value in names_in(other) for other in others):
            return False  # `return a, a.T`: the other item shares its memory
        return self._fresh_local(item, function, returned_in=value)

    def _fresh_local(self, name: cst.Name, function: cst.FunctionDef,
                     returned_in: cst.Tuple | None = None) -> bool:
        """A local name of `function`, bound only to fresh values, read only in the
        function's own scope and never kept by anything but the return (or, with
        `returned_in`, by its own item of that returned tuple)."""
        flow = self.flow
        scope = flow.scopes.get(name)
        if scope is None or _function_of_scope(scope) is not function:
            return False
        values = flow.collector.bindings.get((scope, name.value), [])
        if not values or any(isinstance(v, str) for v, _statement in values):
            return False  # a parameter, a global, a loop or unpacking target
        if not all(flow._fresh(v) for v, _statement in values):
            return False
        for access in _accesses(scope, name.value):
            if flow.scopes.get(access.node) is not scope:
                return False  # captured by a nested function or class
            holder = flow._holder(access.node)
            if holder is not None and not (holder is returned_in
                                           and flow.parents.get(access.node) in returned_in.elements):
                return False  # stored, passed on, yielded...: someone else may hold it
        return True

    # --- parameters --------------------------------------------------------------------

    def argument_effect(self, call: cst.Call, arg: cst.Arg) -> ParamEffect:
        """What the module function `call` calls does with the argument `arg`; the unknown
        effect when the callee is not a function of this module the summary can read, or
        the argument goes through `*`/`**`."""
        function = self.flow.module_function(call)
        if function is None or arg.star:
            return UNKNOWN_EFFECT
        param = parameter_for(function, call, arg)
        if param is None:
            return UNKNOWN_EFFECT
        return self.param_effect(function, param)

    def param_effect(self, function: cst.FunctionDef, param: cst.Param) -> ParamEffect:
        key = (function, param.name.value)
        if key in self._params:
            return self._params[key]
        if key in self._busy:
            return UNKNOWN_EFFECT  # recursion
        self._busy.add(key)
        try:
            effect = self._param_effect(function, param)
        finally:
            self._busy.discard(key)
        self._params[key] = effect
        return effect

    def _param_effect(self, function: cst.FunctionDef, param: cst.Param) -> ParamEffect:
        flow = self.flow
        if param.star or function.decorators or function.asynchronous or _is_generator(function):
            return UNKNOWN_EFFECT  # a generator's body runs after the call returns
        name = param.name.value
        scope = flow.scopes.get(param.name)
        if scope is None:
            return UNKNOWN_EFFECT
        if any(v != "param" for v, _statement in flow.collector.bindings.get((scope, name), [])):
            return UNKNOWN_EFFECT  # rebound: which array a later line means is not followed
        written = self._written(scope, name)
        returned = escapes = False
        for access in _accesses(scope, name):
            use = access.node
            if flow.scopes.get(use) is not scope:
                escapes = True  # captured by a nested function or class
                continue
            passed = _argument_of(use, flow.parents)
            if passed is not None:  # handed to a function of the module that may write it
                call = flow.parents.get(passed)
                if flow.module_function(call) is not None and self.argument_effect(call, passed).written:
                    written = True
            holder = flow._holder(use, returns_escape=True)
            if holder is None:
                continue
            if isinstance(holder, cst.Return) and isinstance(holder.value, cst.Name) \
                    and holder.value is use:
                returned = True
            else:
                escapes = True
        return ParamEffect(written=written, returned=returned, escapes=escapes)

    def _written(self, scope, name: str) -> bool:
        """Whether the function whose scope is `scope` changes the array `name` holds in
        place: a subscript or attribute store into it (or a view of it), `name op= v`, an
        in-place method, an out= argument, an in-place NumPy function, `np.add.at(name...)`."""
        flow = self.flow
        collector = flow.collector

        def ours(expression) -> bool:
            base = _base(expression)
            return isinstance(base, cst.Name) and base.value == name and flow.scopes.get(base) is scope

        if any(ours(target) for _statement, target, _op in collector.subscript_stores):
            return True
        if any(isinstance(node.target, cst.Name) and ours(node.target) for node in collector.aug_assigns):
            return True
        if any(ours(receiver) for _node, receiver, _method in
               collector.method_writes + collector.out_method_calls):
            return True
        for ref in collector.refs:
            call = ref.call
            if call is None:
                parent = flow.parents.get(ref.node)  # np.add.at(x, i, v)
                grand = flow.parents.get(parent)
                if isinstance(parent, cst.Attribute) and parent.value is ref.node \
                        and parent.attr.value in UFUNC_METHODS and isinstance(grand, cst.Call) \
                        and grand.func is parent and parent.attr.value == "at" \
                        and grand.args and ours(grand.args[0].value):
                    return True
                continue
            if any(ours(arg.value) for arg in written_arguments(ref)):
                return True
        return False


def _argument_of(use, parents) -> cst.Arg | None:
    """The argument `use` (or a view of it: `use[1:]`, `use.T`, `use.reshape(...)`) is."""
    node, parent = use, parents.get(use)
    while parent is not None:
        if isinstance(parent, cst.Subscript) and parent.value is node:
            node, parent = parent, parents.get(parent)
        elif isinstance(parent, cst.Attribute) and parent.value is node:
            call = parents.get(parent)
            node = call if isinstance(call, cst.Call) and call.func is parent else parent
            parent = parents.get(node)
        elif isinstance(parent, cst.Arg) and parent.value is node:
            return parent
        else:
            return None
    return None


def _base(expression):
    """`x[1:][0]`, `x.T[0]`, `x.flat`: the name whose array the expression is part of."""
    while isinstance(expression, (cst.Subscript, cst.Attribute)):
        expression = expression.value
    return expression


def _accesses(scope, name: str) -> list:
    """Every read of `name` as bound in `scope`, nested scopes' reads included."""
    found = set(scope.accesses[name]) if name in scope.accesses else set()
    for assignment in scope.assignments[name] if name in scope.assignments else ():
        found.update(assignment.references)
    return list(found)


def _function_of_scope(scope):
    return getattr(scope, "node", None)


def _is_generator(function: cst.FunctionDef) -> bool:
    finder = ReturnsFinder()
    function.body.visit(finder)
    return finder.yields


def parameter_for(function: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> cst.Param | None:
    """The parameter of `function` that `arg` of `call` binds, or None (through `*`/`**`, a
    positional argument past the named parameters, an unknown keyword)."""
    params = function.params
    if arg.keyword is not None:
        return next((p for p in [*params.params, *params.kwonly_params]
                     if p.name.value == arg.keyword.value), None)
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[: positional.index(arg) + 1]):
        return None
    named = [*params.posonly_params, *params.params]
    index = positional.index(arg)
    return named[index] if index < len(named) else None
