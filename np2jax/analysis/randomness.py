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
used twice. Anything else keeps the whole state on NumPy, with the reason (NJ301).

Analysis only: the rules (np2jax/rules/numpy_random.py, numpy_random_keys.py) report, and
NJ302 builds the jax.random code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

import libcst as cst
from libcst.metadata import ComprehensionScope, FunctionScope, GlobalScope

from np2jax.analysis.facts import GENERATOR_FACTORIES
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

    @property
    def nodes(self) -> list:
        """Every node a fix of this state is attached to (they stand or fall together)."""
        found = [self.binding if self.binding is not None else self.anchor]
        for draw in self.draws:
            found += [draw.call, draw.statement]
        found += self.functions
        return list(dict.fromkeys(found))

    @property
    def functions(self) -> list:
        """The functions that draw from this module-level state and declare its key global."""
        return list(dict.fromkeys(d.function for d in self.draws if d.function is not None))


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

    def states(self) -> list[RandomState]:
        states = [s for s in (self._generator(ref) for ref in self.analysis.refs
                              if ref.qualname in GENERATOR_FACTORIES) if s is not None]
        global_state = self._global()
        if global_state is not None:
            states.append(global_state)
        taken = None  # the module's names, walked for only when a key needs naming
        for state in states:
            if state.refused is None and self.analysis.object_values:
                # the module stays on NumPy (KEEP_OBJECT_VALUES): its draws must give NumPy arrays
                state.refused = ("the module " + self.analysis.object_values[0][1]
                                 + ": values JAX cannot hold may reach its NumPy calls, so it "
                                   "stays on NumPy")
            if state.refused is None:
                state.refused = self._check(state)
            if state.refused is None:
                taken = names_in(self.analysis.module) if taken is None else taken
                state.key = fresh_name("key", taken)
        return states

    # finding states
    def _generator(self, ref) -> RandomState | None:
        call = ref.call
        assign = self.parents.get(call) if call is not None else None
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
        reasons = []  # every reason at once, not one per run
        for access in sorted(assignments[0].references, key=lambda a: self.flow.start(a.node)):
            use = access.node
            attribute = self.parents.get(use)
            call_ = self.parents.get(attribute)
            if not (isinstance(attribute, cst.Attribute) and attribute.value is use
                    and isinstance(call_, cst.Call) and call_.func is attribute):
                reasons.append(f"`{target.value}` is used other than by calling its methods "
                               "(passed to a function or stored), and threading a key there is "
                               "not done")
                continue
            reasons.append(self._add_draw(state, call_, attribute.attr.value))
        state.refused = _all_of(reasons)
        return state

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
        if isinstance(value, (cst.Integer, cst.Name)):
            return value
        return f"the seed `{code_of(value)}` is not an integer literal or a name"

    # draws
    def _add_draw(self, state: RandomState, call: cst.Call, method: str) -> str | None:
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
        if scope is not state.scope:
            function = self._module_state_function(scope, state)
            if function is None:
                return (f"{shown} draws in another function than the one holding the state; only "
                        "a state made at module level is shared with functions (as a global key)")
        if function is None and state.binding is not None \
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
        draw = Draw(call, method, statement, shuffle=method == "shuffle", function=function)
        if draw.shuffle:
            reason = self._shuffle(call, bound)
            if reason is not None:
                return f"{shown} shuffles in place, and {reason}"
        reason = self._changed_later(call, scope)
        if reason is not None:
            return reason
        state.draws.append(draw)
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
        if not state.draws:
            return f"nothing draws from `{state.name}`"
        return None


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
