"""Random states and their draws: which can become keyed jax.random.

A *state* is NumPy's implicit global one (set by `np.random.seed(s)`, drawn from by
`np.random.normal(...)` and friends), or a name bound once to `np.random.default_rng(s)` /
`np.random.RandomState(s)` and used only by calling its methods. A state converts when all
of it sits in one scope (a function body, or the module): the binding (or seed call) is a
statement of that body, the seed is a literal or a name, every draw comes after it, in the
same scope (not in a nested function, lambda or comprehension), at a place where a line can
be put before it, and maps through the table (rules/api/random.toml) with every argument
understood. Then the binding becomes `key = jax.random.key(seed)` and each statement that
draws gets `key, subkey = jax.random.split(key)` on the line before it, so a key is never
used twice.

The key is threaded where the generator goes: a function of the module it is handed to
(`Threaded`: it takes a key for that parameter and returns the new key beside its result,
each call taking it back, `r, key = f(key)`; `Pass` is one such call, hoisted before its
statement when it sits inside an expression), a function returning a new generator (the
state's binding is that `return`; each name its calls bind is a state of its own, `made`),
an attribute of the instance set in `__init__` (`MethodKey`: each method drawing from
`self.rng` splits `self.key`). States whose keys meet in a function convert together or
none does (`_Finder._tie`); a function whose callers are not all in this file keeps its
interface (Dataflow.interface_refusal, NJ209's decision). Anything else keeps the whole
state on NumPy, with the reason (NJ301).

Analysis only: the rules (np2jax/rules/numpy_random.py, numpy_random_keys.py) report, and
NJ302 builds the jax.random code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

import libcst as cst
from libcst.metadata import ComprehensionScope, FunctionScope, GlobalScope

from np2jax.analysis.effects import parameter_for
from np2jax.analysis.facts import GENERATOR_FACTORIES
from np2jax.analysis.values import ReturnsFinder
from np2jax.catalog import catalog_dir, tomllib
from np2jax.syntax import code_of, is_none
from np2jax.syntax.walk import fresh_name, names_in


class ModuleFacts(Protocol):
    """What this module reads of np2jax.analysis.module.ModuleAnalysis (the facade, which
    imports this module and hands itself in)."""

    module: cst.Module
    parents: dict
    refs: list
    dataflow: Any
    object_values: list
    mutators: list
    context: Any

    def ref_of_call(self, call: cst.Call) -> Any: ...


# numpy.random names that are not the global state's functions
NOT_GLOBAL = frozenset({"default_rng", "RandomState", "Generator", "PCG64", "PCG64DXSM",
                        "MT19937", "Philox", "SFC64", "SeedSequence", "BitGenerator"})
UNSEEDED_SEED = "0"


@cache
def random_table() -> dict:
    """rules/api/random.toml: {"draws": {name: entry}, "missing": {name: reason}}."""
    return tomllib.loads((catalog_dir() / "api" / "random.toml").read_text(encoding="utf-8"))


@dataclass
class Draw:
    call: cst.Call
    method: str  # the NumPy name: "normal", "shuffle", ...
    statement: cst.CSTNode  # the statement before which the split goes
    shuffle: bool = False
    # a function drawing from a module-level state: it declares `global <key>`, so its
    # draws advance the module's key at call time, as they advanced NumPy's state
    function: cst.FunctionDef | None = None
    # a draw from a generator parameter: the function taking the key (None: the state's own)
    holder: Threaded | None = None


@dataclass(eq=False)
class Pass:
    """`f(rng, ...)`: a generator handed to a function of the module that draws from it; the
    call becomes `r, key = f(key, ...)` (`key = f(key, ...)` when f returns nothing)."""

    call: cst.Call
    line: cst.CSTNode  # the call's line, rewritten to take the key back
    argument: cst.Arg  # the generator passed, which becomes the caller's key
    holder: Threaded | None  # the caller's generator: a parameter (None: the state itself)
    callee: Threaded
    # "alone": `f(rng)`; "pair": `r = f(rng)`; "hoist": inside an expression, the call moves
    # to a line of its own before `line` (then the statement, maybe compound)
    mode: str = "alone"
    # a function handing a module-level generator on: it declares `global key` (as a
    # function drawing from it does)
    function: cst.FunctionDef | None = None


@dataclass(eq=False)
class Threaded:
    """A function of the module with a generator parameter: it takes a key there instead,
    splits it before each draw and returns the new key beside its result (`pair`) or alone."""

    function: cst.FunctionDef
    param: cst.Param
    pair: bool = False
    key: str = "key"  # the key parameter's name
    draws: list[Draw] = field(default_factory=list)
    passes: list[Pass] = field(default_factory=list)  # its calls (every one, once it converts)
    onward: list[Pass] = field(default_factory=list)  # the calls it passes its own key to
    refused: str | None = None

    @property
    def name(self) -> str:
        return self.function.name.value


@dataclass(eq=False)
class MethodKey:
    """A method drawing from its instance's generator (`self.rng.normal(...)`): its draws
    split the instance's key attribute (`self.key`), set in `__init__`."""

    function: cst.FunctionDef
    instance: str  # the method's instance parameter: `self`
    key: str = "self.{key}"  # the expression of the key, once its attribute is named
    draws: list[Draw] = field(default_factory=list)
    passes: list = field(default_factory=list)
    refused: str | None = None


@dataclass(eq=False)
class RandomState:
    kind: str  # "global" or "generator"
    name: str  # how findings name it: `rng`, `np.random`
    binding: cst.CSTNode | None  # the line binding it / calling seed; None: unseeded global
    seed: cst.BaseExpression | None  # None: unseeded
    scope: object
    refs: list  # the NJ301 reference nodes that belong to it
    draws: list[Draw] = field(default_factory=list)
    refused: str | None = None
    key: str = "key"
    anchor: cst.CSTNode | None = None  # unseeded global: the statement the key line precedes
    passes: list[Pass] = field(default_factory=list)  # its own calls handing it to functions
    # the functions its key is threaded through (directly or on from them), and the states
    # sharing one of them: they all convert together or none does
    threaded: list[Threaded] = field(default_factory=list)
    methods: list[MethodKey] = field(default_factory=list)  # an instance's: its methods drawing
    attribute: bool = False  # `self.rng = ...`: the key is an attribute of the instance
    # `def make(): return np.random.default_rng(0)`: the binding is that return line, which
    # returns a key; `made` are the states its calls bind (`rng = make()` -> `key = make()`)
    returned: bool = False
    made: list = field(default_factory=list)
    made_by: RandomState | None = None

    @property
    def nodes(self) -> list:
        """Every node a fix of this state is attached to (they stand or fall together)."""
        found = [self.binding if self.binding is not None else self.anchor]
        for draw in self.all_draws:
            found += [draw.call, draw.statement]
        found += self.functions
        for threaded in self.threaded:
            found += [threaded.function] + [p.line for p in threaded.passes] + [
                p.call for p in threaded.passes if p.mode == "hoist"]
        return list(dict.fromkeys(found))

    @property
    def all_draws(self) -> list[Draw]:
        """Its draws and those of the functions its key is threaded through."""
        return self.draws + [d for t in self.threaded + self.methods for d in t.draws]

    @property
    def functions(self) -> list:
        """The functions that draw from this module-level state and declare its key global."""
        return list(dict.fromkeys([d.function for d in self.draws if d.function is not None]
                                  + [p.function for p in self.passes if p.function is not None]))


def find_random_states(analysis: ModuleFacts) -> list[RandomState]:
    """The module's random states, each with its draws and why it is refused (None: it
    converts). Memoised by the facade: ModuleAnalysis.random_states."""
    return _Finder(analysis).states()


class _Finder:
    def __init__(self, analysis: ModuleFacts) -> None:
        self.analysis = analysis
        self.flow = analysis.dataflow
        self.parents = analysis.parents
        self.scopes = self.flow.scopes
        self.table = random_table()
        self.threadeds: dict = {}  # (function, parameter name) -> Threaded
        self.refused_passes: dict = {}  # id(call.func) of a call refused -> the reason
        self.method_keys: dict = {}  # method -> MethodKey

    def states(self) -> list[RandomState]:
        states = [s for s in (self._generator(ref) for ref in self.analysis.refs
                              if ref.qualname in GENERATOR_FACTORIES) if s is not None]
        states += [made for s in states for made in s.made]
        global_state = self._global()
        if global_state is not None:
            states.append(global_state)
        for state in states:
            if state.refused is None and self.analysis.object_values:
                # the module stays on NumPy (KEEP_OBJECT_VALUES): its draws must give NumPy arrays
                state.refused = ("the module " + self.analysis.object_values[0][1]
                                 + ": values JAX cannot hold may reach its NumPy calls, so it "
                                   "stays on NumPy")
            if state.refused is None and not state.made:
                state.refused = self._check(state)
        self._tie(states)
        taken = None  # the module's names, walked for only when a key needs naming
        for state in states:
            if state.refused is None and not state.returned:  # a maker returns its key
                taken = names_in(self.analysis.module) if taken is None else taken
                state.key = fresh_name("key", taken)
                if state.attribute:  # `self.key`, in __init__ and in every method drawing
                    for method in state.methods:
                        method.key = method.key.format(key=state.key)
                    state.key = code_of(state.binding.body[0].targets[0].target.value) \
                        + "." + state.key
        globals_of: dict = {}  # function -> the module-level keys it declares global
        for state in states:
            if state.refused is None and isinstance(state.scope, GlobalScope):
                for function in state.functions:
                    globals_of.setdefault(function, set()).add(state.key)
        for threaded in dict.fromkeys(t for s in states if s.refused is None for t in s.threaded):
            # a parameter: clashing with no name of its function, nor a global key it uses
            threaded.key = fresh_name("key", names_in(threaded.function)
                                      | globals_of.get(threaded.function, set()))
        return states

    # finding states
    def _generator(self, ref) -> RandomState | None:
        call = ref.call
        assign = self.parents.get(call) if call is not None else None
        if isinstance(assign, cst.Return) and assign.value is call:
            return self._maker(ref, assign)
        if isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1 \
                and isinstance(assign.targets[0].target, cst.Attribute):
            return self._object_state(ref, assign)
        if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)):
            return None  # not a state this analysis follows: NJ301 reports it as before
        target = assign.targets[0].target
        scope = self.scopes.get(target)
        state = RandomState("generator", target.value, self.parents.get(assign), None, scope,
                            [ref.node])
        seed = self._seed(call)
        if isinstance(seed, str):
            state.refused = seed
            return state
        state.seed = seed
        if not self._top_level(state.binding, scope):
            state.refused = f"`{target.value}` is not bound by a plain statement of its function or module body"
            return state
        assignments = list(scope.assignments[target.value]) if target.value in scope.assignments else []
        if len(assignments) != 1:
            state.refused = f"`{target.value}` is bound more than once"
            return state
        state.refused = _all_of(self._uses(state, None, target.value, assignments[0].references))
        return state

    def _maker(self, ref, ret: cst.Return) -> RandomState:
        """`def make(seed): return np.random.default_rng(seed)`, every call of which binds a
        name alone on its line (`rng = make(1)`): make returns a key instead, and each name
        it binds is a state of its own, drawn from, handed on, as any generator (`key =
        make(1)`); all convert together or none does."""
        line = self.flow.expression_statement_line(ret)
        function = self.flow.enclosing(ret, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
        state = RandomState("generator", code_of(ref.call.func), line, None,
                            self.scopes.get(ref.call), [ref.node], returned=True)
        if line is None or not isinstance(function, cst.FunctionDef) \
                or not self.flow.plain_module_function(function):
            return self._refuse(state, "it is returned other than alone on its line by a "
                                       "function of the module, where a key cannot follow it")
        name = function.name.value
        seed = self._seed(ref.call)
        if isinstance(seed, str):
            return self._refuse(state, seed)
        state.seed = seed
        finder = ReturnsFinder()
        function.body.visit(finder)
        if finder.yields or finder.returns != [ret] or self.flow.function_returns(function) is None:
            return self._refuse(state, f"`{name}` returns it on some paths only")
        reason = self.flow.interface_refusal(function, "returning a key instead of a generator",
                                             self.analysis.context)
        if reason is not None:
            return self._refuse(state, reason)
        scope = self.scopes.get(function.name)
        assignments = list(scope.assignments[name]) if scope is not None and name in scope.assignments else []
        if len(assignments) != 1:
            return self._refuse(state, f"`{name}` is defined more than once")
        reasons = []
        for access in sorted(assignments[0].references, key=lambda a: self.flow.start(a.node)):
            call = self.parents.get(access.node)
            assign = self.parents.get(call)
            if not (isinstance(call, cst.Call) and call.func is access.node
                    and isinstance(assign, cst.Assign) and assign.value is call
                    and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
                    and self.flow.expression_statement_line(assign) is not None):
                reasons.append(f"`{code_of(self.parents.get(access.node))}` uses what `{name}` "
                               "returns other than by binding it to a name alone on its line")
                continue
            made = self._made(assign, state)
            state.made.append(made)
            reasons.append(None if made.refused is None else
                           f"`{made.name}` (made by `{name}`): {made.refused}")
        state.refused = _all_of(reasons)
        return state

    def _made(self, assign: cst.Assign, maker: RandomState) -> RandomState:
        """`rng = make()`: a state bound by a call of a function returning a generator."""
        target = assign.targets[0].target
        scope = self.scopes.get(target)
        state = RandomState("generator", target.value, self.parents.get(assign), None, scope, [],
                            made_by=maker)
        if not self._top_level(state.binding, scope):
            return self._refuse(state, f"`{target.value}` is not bound by a plain statement of "
                                       "its function or module body")
        assignments = list(scope.assignments[target.value]) if target.value in scope.assignments else []
        if len(assignments) != 1:
            return self._refuse(state, f"`{target.value}` is bound more than once")
        state.refused = _all_of(self._uses(state, None, target.value, assignments[0].references))
        return state

    def _object_state(self, ref, assign: cst.Assign) -> RandomState:
        """`self.rng = np.random.default_rng(seed)` in `__init__`, drawn from as `self.rng.m(...)`
        in the class's methods: `self.key = jax.random.key(seed)`, and each method's draws
        split `self.key`, which every instance keeps as it kept its generator."""
        target = assign.targets[0].target
        attr = target.attr.value
        shown = code_of(target)
        state = RandomState("generator", shown, self.parents.get(assign), None,
                            self.scopes.get(ref.call), [ref.node], attribute=True)
        init = self.flow.enclosing(assign, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
        cls = self.flow.enclosing(init, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) \
            if init is not None else None
        if not (isinstance(init, cst.FunctionDef) and init.name.value == "__init__"
                and isinstance(cls, cst.ClassDef) and self._instance_name(init) is not None
                and isinstance(target.value, cst.Name)
                and target.value.value == self._instance_name(init)):
            state.refused = (f"`{shown}` is stored other than as an attribute of the instance "
                             "in `__init__`, where a key cannot follow it")
            return state
        seed = self._seed(ref.call)
        if isinstance(seed, str):
            state.refused = seed
            return state
        state.seed = seed
        if not self._top_level(state.binding, state.scope):
            state.refused = f"`{shown}` is not set by a plain statement of `__init__`'s body"
            return state
        if attr in self.analysis.context.external_attributes:
            return self._refuse(state, f"`.{attr}` is used by another module of the tree, "
                                       "where the key would not follow it")
        if _imports_copy(self.analysis.module):
            return self._refuse(state, "the module imports `copy`: a shallow copy of the "
                                       "instance shares its generator, where copies of a key "
                                       "would draw the same numbers")
        if any(isinstance(s, cst.SimpleStatementLine) and "__slots__" in names_in(s)
               for s in cls.body.body):
            return self._refuse(state, f"`{cls.name.value}` declares __slots__, so the key "
                                       "attribute could not be added")
        methods = {}  # the class's plain methods -> their instance parameter's name
        for statement in cls.body.body:
            if isinstance(statement, cst.FunctionDef) and not statement.decorators \
                    and self._instance_name(statement) is not None:
                methods[statement] = self._instance_name(statement)
        reasons = []
        for node in self.analysis.attribute_loads(attr) + [target]:
            if node is target:
                continue
            reasons.append(self._object_use(state, node, cls, methods, shown))
        if self.flow.collector.dynamic_scopes:
            reasons.append("the module calls exec, globals() or setattr, which may reach "
                           f"`.{attr}` unseen")
        state.refused = _all_of(reasons)
        return state

    def _object_use(self, state, node: cst.Attribute, cls, methods: dict, shown: str):
        """A use of the instance's generator in a method: a draw, `self.rng.m(...)`, or a
        call handing it to a function of the module, `f(x, self.rng)` (which takes the
        instance's key and gives the new one back: `r, self.key = f(x, self.key)`)."""
        function = self.flow.enclosing(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
        owner = self.parents.get(node)
        call = self.parents.get(owner)
        own = function in methods and isinstance(node.value, cst.Name) \
            and node.value.value == methods[function] \
            and self.scopes.get(node.value) is self.scopes.get(function.body.body[0])
        drawn = isinstance(owner, cst.Attribute) and owner.value is node \
            and isinstance(call, cst.Call) and call.func is owner
        passed = isinstance(owner, cst.Arg) and owner.value is node \
            and isinstance(call, cst.Call) and owner in call.args
        if not (own and (drawn or passed)):
            return (f"`{code_of(node)}` is used other than by drawing from it or passing it to a "
                    f"function of the module in a method of `{cls.name.value}` (stored, or read "
                    "outside the class?), where the key would not follow it")
        if any(v != "param" for v, _ in self.flow.collector.bindings.get(
                (self.scopes.get(node.value), node.value.value), [])):
            return f"a method of `{cls.name.value}` rebinds `{node.value.value}`"
        holder = self.method_keys.get(function)
        if holder is None:
            holder = self.method_keys[function] = MethodKey(
                function, methods[function], f"{methods[function]}.{{key}}")
            state.methods.append(holder)
        if passed:
            return self._pass(state, holder, code_of(node), call, owner)
        return self._add_draw(state, call, owner.attr.value, holder)

    @staticmethod
    def _instance_name(function: cst.FunctionDef) -> str | None:
        params = [*function.params.posonly_params, *function.params.params]
        return params[0].name.value if params and not params[0].star else None

    @staticmethod
    def _refuse(state: RandomState, reason: str) -> RandomState:
        state.refused = reason
        return state

    def _uses(self, state: RandomState, holder: Threaded | None, name: str, accesses) -> list:
        """Every use of the generator `name` (the state's own name, or the parameter of the
        function `holder`): a draw, or a call handing it to a function of the module. The
        reasons it cannot convert (None for each use that can)."""
        reasons = []  # every reason at once, not one per run
        for access in sorted(accesses, key=lambda a: self.flow.start(a.node)):
            use = access.node
            attribute = self.parents.get(use)
            call_ = self.parents.get(attribute)
            if isinstance(attribute, cst.Attribute) and attribute.value is use \
                    and isinstance(call_, cst.Call) and call_.func is attribute:
                reasons.append(self._add_draw(state, call_, attribute.attr.value, holder))
            elif isinstance(attribute, cst.Arg) and attribute.value is use \
                    and isinstance(call_, cst.Call) and attribute in call_.args:
                reasons.append(self._pass(state, holder, name, call_, attribute))
            else:
                reasons.append(f"`{name}` is used other than by calling its methods or passing "
                               "it to a function of the module (stored, returned, put in a "
                               "container?), where a key cannot follow it")
        return reasons

    # threading a key through the module's functions
    def _pass(self, state: RandomState, holder: Threaded | None, name: str, call: cst.Call,
              arg: cst.Arg) -> str | None:
        function = self.flow.module_function(call)
        if function is None:
            return (f"`{name}` is passed to `{code_of(call.func)}`, not a function of this module "
                    "the tool can follow, so no key can be threaded there")
        reason = self._pass_refused(state, holder, name, call, arg, function)
        if reason is not None:
            self.refused_passes[id(call.func)] = reason
        return reason

    def _pass_refused(self, state, holder, name, call, arg, function) -> str | None:
        shown = f"`{code_of(call)}`"
        param = parameter_for(function, call, arg)
        if param is None or arg.keyword is not None and param.name.value != arg.keyword.value:
            return f"{shown} passes `{name}` through * or ** or past the named parameters"
        scope = self.scopes.get(call.func)
        owner = None  # a function handing a module-level generator on: `global key`
        if not self._in_lambda(call) and scope is not self._scope_of(state, holder) \
                and holder is None:
            owner = self._module_state_function(scope, state)
        if self._in_lambda(call) or scope is not self._scope_of(state, holder) and owner is None:
            return (f"{shown} hands `{name}` on from a nested function, lambda or comprehension, "
                    "where no key is threaded")
        line, mode = self._pass_line(call, arg)
        if isinstance(mode, str) and line is None:
            return f"{shown} {mode}"
        callee = self._threaded(function, param)
        if not callee.pair and mode != "alone":
            return (f"{shown} uses the result of `{callee.name}`, which returns nothing: it "
                    "could not take the key back too")
        reason = self._changed_later(call, self.scopes.get(call.func))
        if reason is not None:
            return reason
        passed = Pass(call, line, arg, holder, callee, mode, owner)
        # a method's key (`self.key`) starts from the instance's state, as the state's own does
        (holder.onward if isinstance(holder, Threaded) else state.passes).append(passed)
        callee.passes.append(passed)
        return None

    def _pass_line(self, call: cst.Call, arg: cst.Arg):
        """The statement of a call handing a generator on and how it takes the key back:
        `f(rng)` alone on its line ("alone"), `r = f(rng)` / `a, b = f(rng)` alone ("pair"),
        or inside an expression ("hoist": `r, key = f(key)` on a line before the statement,
        which reads `r`); else (None, why not)."""
        line = self.flow.expression_statement_line(call)
        if line is not None:
            return line, "alone"
        if isinstance(arg.value, cst.Name) and self.flow._pair_statement(call, arg.value):
            return self.flow.expression_statement_line(self.parents.get(call)), "pair"
        if isinstance(arg.value, cst.Attribute):  # `self.rng`: `r, self.key = f(self.key)`
            if self._attribute_pair(call, arg.value):
                return self.flow.expression_statement_line(self.parents.get(call)), "pair"
            return None, ("is not alone on its line nor the whole value of an assignment, "
                          "where the instance's key could be taken back")
        statement = self._statement(call)
        if isinstance(statement, str):
            return None, statement
        reason = self._not_hoistable(call, statement, arg.value)
        if reason is not None:
            return None, reason
        return statement, "hoist"

    def _attribute_pair(self, call: cst.Call, attribute: cst.Attribute) -> bool:
        """`r = f(self.rng)` or `self.w = f(self.w, self.rng)`, alone on its line, binding
        names or attributes other than the generator's."""
        statement = self.parents.get(call)
        if not (isinstance(statement, cst.Assign) and statement.value is call
                and len(statement.targets) == 1
                and self.flow.expression_statement_line(statement) is not None):
            return False
        target = statement.targets[0].target
        elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) \
            else [target]
        return all(isinstance(e, (cst.Name, cst.Attribute)) and code_of(e) != code_of(attribute)
                   for e in elements)

    def _not_hoistable(self, call: cst.Call, statement, passed) -> str | None:
        """Why the call cannot run on a line of its own before its statement: it runs only
        on some paths of its expression, or something of the statement that runs before it
        may act (a call other than NumPy's, a pure builtin's or another call handing the
        same generator on)."""
        node, parent = call, self.parents.get(call)
        while parent is not None and parent is not statement:
            if isinstance(parent, cst.IfExp) and node is not parent.test \
                    or isinstance(parent, cst.BooleanOperation) and node is parent.right:
                return "runs only on some paths of its expression, so it cannot run first"
            node, parent = parent, self.parents.get(parent)
        start = self.flow.start(call)
        inside = set(_walk(call))
        for other in _walk(statement):
            if not isinstance(other, cst.Call) or other in inside or other is call \
                    or self.flow.start(other) >= start or call in set(_walk(other)):
                continue
            if self.analysis.ref_of_call(other) is not None or (
                    isinstance(other.func, cst.Name) and other.func.value in PURE_BUILTINS) \
                    or isinstance(other.func, cst.Attribute) \
                    and other.func.attr.value in ARRAY_METHODS \
                    or isinstance(passed, cst.Name) and (
                        any(isinstance(a.value, cst.Name) and a.value.value == passed.value
                            for a in other.args)  # it hands the same generator on
                        or isinstance(other.func, cst.Attribute)  # it draws from it
                        and isinstance(other.func.value, cst.Name)
                        and other.func.value.value == passed.value):
                continue
            return (f"comes after `{code_of(other.func)}(...)` in its statement, which would then "
                    "run after it")
        return None

    def _scope_of(self, state: RandomState, holder: Threaded | None):
        if holder is None:
            return state.scope
        return self.scopes.get(holder.function.body.body[0]) if holder.function.body.body else None

    def _threaded(self, function: cst.FunctionDef, param: cst.Param) -> Threaded:
        """The function `function` taking a key for its generator parameter `param`, analysed
        once (its `refused` says why it cannot)."""
        memo = (function, param.name.value)
        if memo in self.threadeds:
            return self.threadeds[memo]
        threaded = self.threadeds[memo] = Threaded(function, param)
        finder = ReturnsFinder()
        function.body.visit(finder)
        threaded.pair = finder.value_returned
        name = param.name.value
        scope = self._scope_of(None, threaded)
        if param.star or finder.yields or function.decorators or function.asynchronous:
            threaded.refused = (f"`{threaded.name}` takes `{name}` as a star argument, yields, or "
                                "is decorated or async, so it cannot take a key and return it")
            return threaded
        if param.default is not None:
            threaded.refused = (f"`{threaded.name}` gives its generator parameter `{name}` a "
                                "default, which a key parameter could not keep")
            return threaded
        if any(fact.node is function and fact.refused is None for fact in self.analysis.mutators):
            threaded.refused = (f"`{threaded.name}` also changes an argument in place, and its "
                                "calls are rewritten to take that array back (NJ209)")
            return threaded
        change = f"taking a key for `{name}` and returning the new one"
        if threaded.pair:
            reason = self.flow._pair_refusal(function, "key", self.analysis.context)
        else:
            reason = self.flow.interface_refusal(function, change, self.analysis.context)
        if reason is not None:
            threaded.refused = f"`{threaded.name}`: {reason}"
            return threaded
        if scope is None or any(v != "param" for v, _ in self.flow.collector.bindings.get(
                (scope, name), [])):
            threaded.refused = f"`{threaded.name}` rebinds its generator parameter `{name}`"
            return threaded
        accesses = [a for assignment in scope.assignments[name] for a in assignment.references] \
            if name in scope.assignments else []
        threaded.refused = _all_of([f"`{threaded.name}`: {r}" if r is not None else None
                                    for r in self._uses(None, threaded, name, accesses)])
        return threaded

    def _tie(self, states: list[RandomState]) -> None:
        """States whose keys meet in a function (and those functions) convert together or
        none does; a function must be called, everywhere in the module, with a generator
        whose key reaches it."""
        parent = {s: s for s in states}

        def root(s):
            while parent[s] is not s:
                s = parent[s]
            return s

        reached: dict = {}  # Threaded -> the states reaching it
        for state in states:
            todo, seen = list(state.passes), set()
            while todo:
                threaded = todo.pop().callee
                if threaded in seen:
                    continue
                seen.add(threaded)
                state.threaded.append(threaded)
                reached.setdefault(threaded, []).append(state)
                todo += threaded.onward
        for owners in reached.values():
            for other in owners[1:]:
                parent[root(other)] = root(owners[0])
        for state in states:  # a function returning a generator and the states it makes
            for made in state.made:
                parent[root(made)] = root(state)
        components: dict = {}
        for state in states:
            components.setdefault(root(state), []).append(state)
        for members in components.values():
            functions = list(dict.fromkeys(t for s in members for t in s.threaded))
            if len(members) == 1 and not functions:
                continue
            reasons = [s.refused for s in members] + [self._calls_refused(t) for t in functions]
            by_function: dict = {}
            for threaded in functions:
                by_function.setdefault(threaded.function, []).append(threaded)
            for threaded in functions:
                if not threaded.draws and not threaded.onward:
                    reasons.append(f"`{threaded.name}` never draws from its generator "
                                   f"`{threaded.param.name.value}` (nothing to thread)")
                if len(by_function[threaded.function]) > 1:
                    reasons.append(f"`{threaded.name}` is handed a generator for more than one "
                                   "parameter")
            shuffles = {d.statement for s in members for d in s.all_draws if d.shuffle}
            for threaded in functions:
                for passed in threaded.passes:
                    if passed.line in shuffles:
                        reasons.append(f"`{code_of(passed.call)}` hands the generator on in "
                                       "a shuffle's statement")
            reason = _all_of(reasons)
            for state in members:
                state.threaded = functions
                state.refused = reason

    def _calls_refused(self, threaded: Threaded) -> str | None:
        """Every reference to the function must be a call passing a generator whose key
        reaches it (a call with anything else would get no key back)."""
        if threaded.refused is not None:
            return threaded.refused
        scope = self.scopes.get(threaded.function.name)
        name = threaded.name
        assignments = list(scope.assignments[name]) if scope is not None and name in scope.assignments else []
        if len(assignments) != 1:
            return f"`{name}` is defined more than once"
        passed = {id(p.call.func) for p in threaded.passes}
        for access in sorted(assignments[0].references, key=lambda a: self.flow.start(a.node)):
            if id(access.node) in self.refused_passes:  # a generator handed in a way refused
                return (f"a call of `{name}` cannot take a key back: "
                        f"{self.refused_passes[id(access.node)]}")
            if id(access.node) not in passed:
                call = self.parents.get(access.node)
                if not (isinstance(call, cst.Call) and call.func is access.node):
                    return (f"`{name}` is used other than by calling it (as a value, a "
                            "callback?), so not every call would pass a key and take it back")
                return (f"`{code_of(call)}` hands `{name}` no generator whose key the tool "
                        "follows, so it would get no key")
        return None

    def _global(self) -> RandomState | None:
        refs = [r for r in self.analysis.refs if r.qualname.startswith("numpy.random")
                and r.qualname.split(".")[-1] not in NOT_GLOBAL]
        if not refs:
            return None
        state = RandomState("global", "np.random", None, None, None, [r.node for r in refs])
        seeds = [r for r in refs if r.qualname == "numpy.random.seed"]
        if len(seeds) > 1:
            state.refused = "np.random.seed is called more than once"
            return state
        if seeds:
            seed_ref = seeds[0]
            state.binding = self.flow.expression_statement_line(seed_ref.call) \
                if seed_ref.call is not None else None
            if state.binding is None:
                state.refused = "np.random.seed is not called as a statement of its own"
                return state
            state.scope = self.scopes.get(seed_ref.node)
            seed = self._seed(seed_ref.call)
            if isinstance(seed, str):
                state.refused = seed
                return state
            if seed is None:
                state.refused = "np.random.seed() without a seed reseeds from the OS"
                return state
            state.seed = seed
            if not self._top_level(state.binding, state.scope):
                state.refused = "np.random.seed is not called by a plain statement of its function or module body"
                return state
        reasons = []  # every reason at once, not one per run
        for ref in refs:
            if ref.qualname == "numpy.random.seed":
                continue
            if ref.qualname == "numpy.random" or ref.call is None:
                reasons.append(f"`{code_of(ref.node)}` is used other than by calling it")
                continue
            if state.scope is None:
                state.scope = self.scopes.get(ref.node)
            reasons.append(self._add_draw(state, ref.call, ref.qualname.split(".")[-1]))
        state.refused = _all_of(reasons)
        if state.refused is not None:
            return state
        if state.binding is None and state.draws:
            first = min(state.draws, key=lambda d: self.flow.start(d.call))
            state.anchor = self._top_statement(first.call, state.scope)
            if state.anchor is None:
                state.refused = "its first draw is not inside a statement of its function or module body"
        return state

    def _seed(self, call: cst.Call):
        """The seed expression, None when unseeded, or why it cannot be used (a str)."""
        args = list(call.args)
        if not args:
            return None
        if len(args) > 1 or args[0].star or (args[0].keyword is not None
                                             and args[0].keyword.value != "seed"):
            return f"`{code_of(call)}`: only a single seed argument is understood"
        value = args[0].value
        if isinstance(value, cst.Name) and value.value == "None":
            return None
        if isinstance(value, cst.Name) and self._none_default(value):
            return (f"the seed `{value.value}` is a parameter whose default is None (NumPy then "
                    "seeds from the OS; jax.random.key cannot take None)")
        if isinstance(value, (cst.Integer, cst.Name)):
            return value
        return f"the seed `{code_of(value)}` is not an integer literal or a name"

    def _none_default(self, name: cst.Name) -> bool:
        function = self.flow.enclosing(name, (cst.FunctionDef, cst.Lambda))
        while function is not None:
            params = function.params
            for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
                if param.name.value == name.value:
                    return param.default is not None and is_none(param.default)
            function = self.flow.enclosing(function, (cst.FunctionDef, cst.Lambda))
        return False

    # draws
    def _add_draw(self, state: RandomState | None, call: cst.Call, method: str,
                  holder: Threaded | None = None) -> str | None:
        shown = f"`{code_of(call.func)}`"
        if method in self.table["missing"]:
            return f"{shown}: {self.table['missing'][method]}"
        entry = self.table["draws"].get(method)
        if entry is None:
            return f"{shown} is not in the table of jax.random counterparts"
        scope = self.scopes.get(call.func if isinstance(call.func, cst.Name) else call)
        if isinstance(scope, ComprehensionScope) or self._in_lambda(call):
            return f"{shown} draws inside a comprehension or lambda, where no split line can go"
        function = None
        if holder is not None:
            if scope is not self._scope_of(state, holder):
                return f"{shown} draws in a nested function, where no key is threaded"
        elif scope is not state.scope:
            function = self._module_state_function(scope, state)
            if function is None:
                return (f"{shown} draws in another function than the one holding the state; only "
                        "a state made at module level is shared with functions (as a global key)")
        if function is None and holder is None and state.binding is not None \
                and self.flow.start(call) < self.flow.start(state.binding):
            return f"{shown} draws before the state is seeded"
        bound = bind(call, entry)
        if isinstance(bound, str):
            return f"{shown}: {bound}"
        reason = self._shape_known(entry, bound)
        if reason is not None:
            return f"{shown}: {reason}"
        statement = self._statement(call)
        if isinstance(statement, str):
            return f"{shown} {statement}"
        draw = Draw(call, method, statement, shuffle=method == "shuffle", function=function,
                    holder=holder)
        if draw.shuffle:
            reason = self._shuffle(call, bound)
            if reason is not None:
                return f"{shown} shuffles in place, and {reason}"
        reason = self._changed_later(call, scope)
        if reason is not None:
            return reason
        (holder if holder is not None else state).draws.append(draw)
        return None

    def _module_state_function(self, scope, state: RandomState):
        """The function drawing from a state seeded at module level, which can own the key as
        a global (None when the state is not a seeded module-level one)."""
        if not isinstance(state.scope, GlobalScope) or state.binding is None:
            return None
        if isinstance(scope, FunctionScope) and isinstance(scope.node, cst.FunctionDef):
            return scope.node
        return None

    def _shape_known(self, entry: dict, bound: dict) -> str | None:
        size = bound.get("size")
        if entry.get("shape_sequence") and size is not None and not isinstance(
                size, (cst.Integer, cst.Tuple, cst.List)) and not absent(size) \
                and not self.flow.is_scalar(size):
            return f"size=`{code_of(size)}` may be an int, which this jax function refuses as a shape"
        if size is not None and not (isinstance(size, cst.Name) and size.value == "None"):
            return None
        for name in entry.get("broadcast", ()):
            value = bound.get(name)
            if value is not None and not self._number(value):
                return (f"size=None with `{name}={code_of(value)}`, which may be an array (the "
                        "shape would come from broadcasting)")
        return None

    def _number(self, node) -> bool:
        if isinstance(node, cst.UnaryOperation):
            node = node.expression
        return isinstance(node, (cst.Integer, cst.Float)) or self.flow.is_scalar(node)

    def _shuffle(self, call: cst.Call, bound: dict) -> str | None:
        if self.flow.expression_statement_line(call) is None:
            return "its result is used or it shares its line"
        target = bound["x"]
        if not isinstance(target, cst.Name):
            return f"`{code_of(target)}` is not a plain name"
        return self.flow.unconvertible_because(target, call)

    def _changed_later(self, call, scope) -> str | None:
        """A name holding a draw that is then written in place: the draw would be a JAX array."""
        assign = self.parents.get(call)
        while assign is not None and not isinstance(assign, (cst.Assign, cst.BaseStatement)):
            assign = self.parents.get(assign)
        if not isinstance(assign, cst.Assign):
            return None
        names = {t.target.value for t in assign.targets if isinstance(t.target, cst.Name)}
        names |= {e.value.value for t in assign.targets if isinstance(t.target, (cst.Tuple, cst.List))
                  for e in t.target.elements if isinstance(e.value, cst.Name)}
        collector = self.flow.collector
        written = [target.value for _s, target, _o in collector.subscript_stores] + \
            [n.target for n in collector.aug_assigns] + \
            [receiver for _n, receiver, _m in collector.method_writes + collector.out_method_calls]
        for base in written:
            while isinstance(base, (cst.Subscript, cst.Attribute)):
                base = base.value
            if isinstance(base, cst.Name) and base.value in names and self.scopes.get(base) is scope:
                return (f"`{base.value}` holds a draw and is changed in place later, which a "
                        "JAX array cannot be")
        return None

    def _in_lambda(self, node) -> bool:
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, cst.BaseStatement):
            if isinstance(parent, cst.Lambda):
                return True
            parent = self.parents.get(parent)
        return False

    def _statement(self, call):
        """The statement a split line can precede, or why there is none (a str)."""
        parent = self.parents.get(call)
        while parent is not None:
            if isinstance(parent, cst.BaseSmallStatement):
                line = self.parents.get(parent)
                if isinstance(line, cst.SimpleStatementLine):
                    return line
                return "is in a one-line block (`if c: x = ...`), where no line can go before it"
            if isinstance(parent, cst.While):
                return "is in a while condition, evaluated at every iteration"
            if isinstance(parent, cst.If):
                if isinstance(self.parents.get(parent), cst.If):
                    return "is in an elif condition, where no line can go before it"
                return parent
            if isinstance(parent, (cst.For, cst.With)):
                return parent
            if isinstance(parent, cst.BaseCompoundStatement):
                return "is in a compound statement header"
            parent = self.parents.get(parent)
        return "is not inside a statement"

    def _top_level(self, line, scope) -> bool:
        body = self._body(scope)
        return body is not None and any(s is line for s in body)

    def _body(self, scope):
        if isinstance(scope, GlobalScope):
            return self.analysis.module.body
        if isinstance(scope, FunctionScope) and isinstance(scope.node, cst.FunctionDef):
            block = scope.node.body
            return block.body if isinstance(block, cst.IndentedBlock) else None
        return None

    def _top_statement(self, node, scope):
        body = self._body(scope)
        if body is None:
            return None
        ids = {id(s) for s in body}
        while node is not None and id(node) not in ids:
            node = self.parents.get(node)
        return node

    def _check(self, state: RandomState) -> str | None:
        if not state.draws and not state.passes and not state.methods:
            return f"nothing draws from `{state.name}`"
        return None


# builtins that act on nothing but their arguments: a call of a threaded function may run
# before them (hoisted out of its statement)
PURE_BUILTINS = frozenset({"len", "float", "int", "abs", "min", "max", "sum", "round", "bool",
                           "tuple", "list", "range", "str", "complex"})

# array methods that only read their array: a call may run before them too
ARRAY_METHODS = frozenset({"sum", "mean", "std", "var", "min", "max", "prod", "any", "all",
                           "reshape", "astype", "copy", "ravel", "flatten", "transpose", "dot",
                           "argmax", "argmin", "cumsum", "round", "item", "tolist", "clip"})


def _imports_copy(module: cst.Module) -> bool:
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import) and any(
                    code_of(a.name).split(".")[0] == "copy" for a in small.names):
                return True
            if isinstance(small, cst.ImportFrom) and small.module is not None \
                    and code_of(small.module) == "copy":
                return True
    return False


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


# --- binding arguments and building the JAX expression --------------------------------------


def _all_of(reasons: list) -> str | None:
    """The reasons given (None: none), each once, in order, as one."""
    given = list(dict.fromkeys(r for r in reasons if r is not None))
    return "; ".join(given) if given else None


def bind(call: cst.Call, entry: dict):
    """NumPy parameter -> argument expression, or why an argument is not understood (a str).
    "*dims" binds every positional argument under "dims" (a list)."""
    params = entry["params"]
    if params == ["*dims"]:
        if any(a.keyword is not None or a.star for a in call.args):
            return "only positional dimensions are understood"
        return {"dims": [a.value for a in call.args]}
    bound: dict = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return f"`{'*' * len(arg.star)}{code_of(arg.value)}` cannot be checked"
        if arg.keyword is None:
            if index >= len(params):
                return "more positional arguments than understood"
            name = params[index]
        else:
            name = arg.keyword.value
            if name not in params:
                return f"`{name}=` has no jax.random counterpart here"
        bound[name] = arg.value
    missing = [p for p in params if p != "size" and p not in bound and p not in entry.get("defaults", {})]
    if missing:
        return f"required argument `{missing[0]}` is missing"
    return bound


def absent(node) -> bool:
    """Not passed, or passed as None: the argument takes its default."""
    return node is None or is_none(node)
