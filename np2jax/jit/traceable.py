"""Which module-level functions jax.jit can compile unchanged, with which static arguments.

Every expression of a function is classified as
  STATIC  a hashable Python value known while tracing (literals, shapes, range counters,
          parameters that every call site passes as a hashable Python value),
  ARRAY   an array (a tracer under jit),
  MIXED   either (a name bound to both),
  LIST    a Python list/dict/set (usable where Python values are wanted, not hashable),
  UNKNOWN anything else.
A function is compiled when: every place that needs a Python value (shapes, axes, dtypes,
range bounds, `if`/`while` tests, `and`/`or`/`not`, host conversions such as float(x)) gets a
STATIC one; every call it makes is to converted NumPy API, array methods, a few builtins or
other compiled functions; it writes no globals and does no I/O; its return values are arrays;
and every call site in the module passes, for each parameter, arrays only or hashable Python
values only (these become static_argnames, which keeps Python semantics for them exactly).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import libcst as cst

from np2jax.analysis import ModuleAnalysis
from np2jax.analysis.values import always_leaves
from np2jax.syntax import code_of
from np2jax.jit import scan
from np2jax.jit.gather import non_boolean_index
from np2jax.jit.syntax import loop_function, operand, walk
from np2jax.jit.masks import (selection_axis_reduction, selection_count,
                              selection_in_where_write, selection_of_mask, size_hint)

STATIC, ARRAY, MIXED, LIST, UNKNOWN = "static", "array", "mixed", "list", "unknown"
_MAY_BE_ARRAY = (ARRAY, MIXED)
_PYTHON = (STATIC, LIST)

# Output shape depends on the values: jax.jit refuses these without size= (not given here).
DATA_DEPENDENT = frozenset({
    "nonzero", "argwhere", "flatnonzero", "unique", "unique_values", "unique_counts",
    "unique_inverse", "unique_all", "compress", "extract", "setdiff1d", "intersect1d",
    "union1d", "setxor1d", "trim_zeros", "bincount", "roots", "repeat", "apply_along_axis",
    "apply_over_axes", "vectorize", "frompyfunc", "fromfunction", "piecewise", "nanargmax",
    "nanargmin",
})
# NumPy functions answering with a Python value (a shape, a dtype, a flag) for static input.
STATIC_RESULTS = frozenset({"shape", "ndim", "size", "dtype", "result_type", "promote_types",
                            "iinfo", "finfo", "issubdtype", "isscalar", "can_cast"})
# Array methods: the result is an array; the arguments must be Python values, except for
# the methods in ARRAY_ARGUMENT_METHODS.
ARRAY_METHODS = frozenset({
    "sum", "mean", "std", "var", "max", "min", "prod", "argmax", "argmin", "reshape",
    "astype", "transpose", "flatten", "ravel", "cumsum", "cumprod", "squeeze", "copy", "any",
    "all", "conj", "conjugate", "round", "swapaxes", "dot", "clip", "ptp", "trace",
    "diagonal",
})
ARRAY_ARGUMENT_METHODS = frozenset({"dot", "clip"})
HOST_METHODS = frozenset({"item", "tolist", "tobytes", "tofile", "__array__", "nonzero"})
STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes"})
ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})
# Builtins that take Python values and give one (host conversions when given an array).
STATIC_BUILTINS = frozenset({
    "int", "float", "bool", "complex", "str", "repr", "format", "round", "min", "max", "sum",
    "any", "all", "sorted", "list", "tuple", "dict", "set", "zip", "enumerate", "reversed",
    "isinstance", "type", "divmod", "pow", "hash", "range", "map", "filter",
})
# Builtin types read as values (dtypes): Python values known while compiling.
BUILTIN_TYPES = frozenset({"int", "float", "bool", "complex"})
HOST_CONVERSIONS = frozenset({"int", "float", "bool", "complex", "str", "repr", "format",
                              "round", "list", "tuple"})
# Reductions over a mask selection, and their form with `where` (max/min fill with the
# opposite extreme of the array, NaN ignored: the same result whenever the selection is not
# empty).
MASK_REDUCTIONS = frozenset({"sum", "mean", "prod", "any", "all", "max", "min"})
UNROLL_LIMIT = 10_000  # a known loop count above this would unroll into too big a program
# A `for` over range() with at most this many iterations (a literal count) stays a Python
# loop, unrolled while tracing (cheap to compile, and XLA fuses across the iterations);
# other counts become lax.fori_loop when the loop allows it (NJ506).
FORI_MIN_COUNT = 16


def join(a: str | None, b: str | None) -> str | None:
    if a is None or a == b:
        return b
    if b is None:
        return a
    if a in (STATIC, ARRAY, MIXED) and b in (STATIC, ARRAY, MIXED):
        return MIXED
    return UNKNOWN


@dataclass
class CallSite:
    callee: str
    call: cst.Call
    passed: dict  # parameter name -> class of the argument
    problem: str | None = None  # why the call cannot be bound (a *args, an unknown keyword)


@dataclass
class Rewrite:
    """A change the compiled function needs: `fix` applies to `node` as converted so far."""

    code: str
    node: cst.CSTNode
    fix: object
    spelled: str


@dataclass
class LoopVerdict:
    """A `for ... in range(...)` of a compiled function: its lax.fori_loop rewrite (`fix`,
    applied to the loop as converted so far), or why it stays a Python loop (`reason`)."""

    node: cst.For
    spelled: str
    fix: object = None
    reason: str = ""
    carried: tuple = ()
    widens: bool = False  # a carried array is updated by `x += <array>` (dtype may promote)
    peeled: bool = False  # the first iteration runs before fori_loop (it settles the types)
    placeholders: tuple = ()  # carried names first bound in the loop: None before it (peeled)
    code: str = "NJ506"  # NJ510 when it collects histories (lax.scan)
    histories: tuple = ()  # the scan.History lists it collects
    exit: str = ""  # "break" or "continue": its one `if <test>: break/continue`, by a flag
    guard: cst.If | None = None  # that `if`


@dataclass
class JitPlan:
    """The verdict on one module-level function."""

    function: cst.FunctionDef
    compiled: bool
    reason: str = ""  # why it is left uncompiled
    static: tuple = ()  # static_argnames, in parameter order
    requires: tuple = ()  # nodes whose conversion the compiled function relies on
    rewrites: tuple = ()  # the Rewrites it needs
    loops: tuple = ()  # LoopVerdicts of its top-level range() loops


@dataclass
class _Violation:
    node: cst.CSTNode
    reason: str


class _Stop(Exception):
    """The first violation found in check mode: the rest of the function does not matter."""


@dataclass
class _Module:
    analysis: ModuleAnalysis
    functions: dict  # candidate name -> FunctionDef
    refs_by_node: dict
    refs_by_call: dict
    globals: dict = field(default_factory=dict)  # constant module names -> class
    compiled: set = field(default_factory=set)  # current candidates
    histories: dict = field(default_factory=dict)  # FunctionDef -> scan.Histories, found once
    sites: dict = field(default_factory=dict)  # callee name -> [CallSite] of the last pass


class _Walker:
    """Classifies the names and expressions of one function body (or the module body)."""

    def __init__(self, module: _Module, function: cst.FunctionDef | None, params: dict,
                 check: bool) -> None:
        self.m = module
        self.function = function
        self.params = params
        self.check = check
        self.env: dict = dict(params)
        self.bound = _bound_names(function) if function is not None else set()
        self.calls: list[CallSite] = []
        self.violation: _Violation | None = None
        self.requires: list = []
        self.rewrites: list[Rewrite] = []  # what must change for jit to compile the body
        self.returns: list = []  # classes of returned values
        self.loops: list[LoopVerdict] = []
        self.counter: str | None = None  # a fori_loop counter (a 0-d integer tracer)
        self.branch_names: set = set()  # names given to lax.cond/switch branch functions
        self.probing = False  # walking a loop body to see whether it can become fori_loop
        self.record = False
        self.histories = _histories(module, function)  # lists collected in loops (NJ510)
        self.exit_guards: set = set()  # `if t: break/continue` of converted loops: t traced

    # --- driving ----------------------------------------------------------------------
    def run(self, body) -> None:
        for _ in range(12):  # names bound in loops settle in a few rounds
            before = dict(self.env)
            self._quiet(body)
            if self.env == before:
                break
        self.record = True
        self.calls, self.requires, self.returns, self.rewrites = [], [], [], []
        self.loops = []
        try:
            self.block(body)
        except _Stop:
            pass

    def _quiet(self, body) -> None:
        check, self.check = self.check, False
        try:
            self.block(body)
        finally:
            self.check = check

    def refuse(self, node: cst.CSTNode, reason: str) -> None:
        if self.check and self.record:
            self.violation = _Violation(node, reason)
            raise _Stop

    def need_static(self, node: cst.BaseExpression, what: str) -> str:
        kind = self.expr(node)
        if kind not in _PYTHON:
            self.refuse(node, f"{what} `{code_of(node)}` is "
                              f"{'an array' if kind in _MAY_BE_ARRAY else 'not known'} "
                              "while compiling")
        return kind

    # --- statements -------------------------------------------------------------------
    def block(self, body) -> None:
        statements = body.body if isinstance(body, (cst.IndentedBlock, cst.Module)) else body
        if isinstance(body, cst.SimpleStatementSuite):
            statements = body.body
        for statement in statements:
            self.statement(statement)

    def statement(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                self.small(small, node)
        elif isinstance(node, cst.If):
            history = self.histories.of_guard(node)
            if history is not None and self.probing:
                # `if counter % k == 0: h.append(v)`: lax.cond in the scan (k stays Python)
                for part in (history.step, history.offset):
                    if part is not None:
                        self.need_static(part, "the step of the recording test")
                self.expr(node.test)
            elif node in self.exit_guards:
                if self.expr(node.test) in _MAY_BE_ARRAY and not scan.zero_d_test(node.test, self):
                    self.refuse(node.test, f"the exit test `{code_of(node.test)}` is not provably "
                                           "one value")
            elif not self.array_if(node):
                from np2jax.jit.branches import array_branches  # lax.cond, lax.switch

                if array_branches(self, node):
                    return
                self.need_static(node.test, "the `if` test")
            self.block(node.body)
            if node.orelse is not None:
                if isinstance(node.orelse, cst.If):
                    self.statement(node.orelse)
                else:
                    self.block(node.orelse.body)
        elif isinstance(node, cst.For):
            self.loop(node)
        elif isinstance(node, cst.While):
            if not self.array_while(node):
                self.need_static(node.test, "the `while` test")
            self.block(node.body)
            if node.orelse is not None:
                self.block(node.orelse.body)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self.refuse(node, f"it defines `{node.name.value}` inside itself")
        elif isinstance(node, (cst.With, cst.Try)) or type(node).__name__ in ("TryStar", "Match"):
            self.refuse(node, f"it uses a `{type(node).__name__.lower()}` statement "
                              "(I/O or exceptions run once, while compiling)")
            for child in node.children:  # not compiled: still find its calls and names
                if isinstance(child, (cst.IndentedBlock, cst.BaseSuite)):
                    self.block(child)
                elif isinstance(child, (cst.ExceptHandler, cst.Finally, cst.Else)):
                    self.block(child.body)
        else:
            self.refuse(node, f"it uses `{type(node).__name__}`, which the analysis does not follow")

    def loop(self, node: cst.For) -> None:
        iterable = node.iter
        if isinstance(iterable, cst.Call) and _is_builtin(iterable.func, "range", self):
            for arg in iterable.args:
                self.need_static(arg.value, "the range bound")
            count = _literal_count(iterable, self)
            verdict = None
            if self.check and self.record and not self.probing and self.function is not None:
                verdict = self.fori_verdict(node, count)
                if verdict is not None:
                    self.loops.append(verdict)
            if count is not None and count > UNROLL_LIMIT:
                if verdict is not None and verdict.fix is not None:
                    self.requires.append(node)  # compiles only as a fori_loop
                else:
                    self.refuse(node, f"the loop would unroll {count} times while compiling")
            kind = STATIC
        else:
            kind = self.expr(iterable)
            if kind == ARRAY:
                pass  # iterating an array of known shape: one slice per row, as eagerly
            elif kind not in _PYTHON:
                self.refuse(iterable, f"the loop runs over `{code_of(iterable)}`, whose length "
                                      "is not known while compiling")
                kind = UNKNOWN
            else:
                kind = STATIC if kind == STATIC else UNKNOWN
        self.bind(node.target, kind, node)
        self.block(node.body)
        if node.orelse is not None:
            self.block(node.orelse.body)

    def fori_verdict(self, node: cst.For, count: int | None) -> LoopVerdict | None:
        """Whether this top-level `for i in range(...)` can become lax.fori_loop: the state it
        carries from one iteration to the next (names it updates and reads again, or that
        are read after it) must be arrays whose shape and dtype cannot change, and its body
        must trace with the counter as a 0-d integer array. None: a small literal count or a
        nested loop, which stay Python loops without a word."""
        top = self.function.body.body
        if count is not None and count <= FORI_MIN_COUNT or not any(s is node for s in top):
            return None
        verdict = LoopVerdict(node, f"for {code_of(node.target)} in {code_of(node.iter)}")
        verdict.histories = tuple(self.histories.by_loop.get(node, ()))
        if verdict.histories:
            verdict.code = "NJ510"
        verdict.reason = self._fori_refusal(node, top, verdict)
        if not verdict.reason and verdict.guard is not None:
            self.exit_guards.add(verdict.guard)  # the flag takes the test: it may be traced
        kept = {name: self._fresh(f"{name}_kept") for name in verdict.carried} \
            if verdict.exit else {}
        if not verdict.reason and verdict.exit == "break":
            verdict.fix = scan.BreakLoopFix(verdict.carried, self._fresh("loop_cond"),
                                            self._fresh("loop_body"), self._fresh("carry"),
                                            self._fresh("done"), kept, self.m.analysis.jnp_alias)
        elif not verdict.reason and verdict.histories:
            verdict.fix = scan.ScanFix(
                verdict.carried, list(verdict.histories), self._fresh("loop_body"),
                self._fresh("carry"),
                {h.name: self._fresh(f"{h.name}_item") for h in verdict.histories},
                {h.name: self._fresh(f"{h.name}_steps") if h.initial else h.name
                 for h in verdict.histories}, self.m.analysis.jnp_alias)
        elif not verdict.reason:
            verdict.fix = _ForiLoopFix(verdict.carried, self._fresh("loop_body"),
                                       self._fresh("carry"), verdict.peeled)
        if verdict.fix is not None:
            verdict.fix.placeholders = verdict.placeholders
            verdict.fix.peeled = verdict.peeled
        if not verdict.reason and verdict.exit == "continue":
            verdict.fix.body_fix = scan.ContinueBody(verdict.carried, self._fresh("skipped"),
                                                     kept, self.m.analysis.jnp_alias)
        return verdict

    def _fresh(self, base: str) -> str:
        taken = self.bound | set(self.m.functions) | set(self.m.globals) | {
            loop.fix.name for loop in self.loops if loop.fix is not None}
        name, number = base, 1
        while name in taken or name in _names_in(self.function):
            number += 1
            name = f"{base}_{number}"
        return name

    def _fori_refusal(self, node: cst.For, top: list, verdict: LoopVerdict) -> str:
        args = node.iter.args
        if len(args) not in (1, 2) or any(a.keyword is not None or a.star for a in args):
            return "its range has a step (fori_loop counts by one)"
        if node.orelse is not None:
            return "it has an `else` clause"
        if not isinstance(node.target, cst.Name):
            return "its target is not a plain name"
        exit_ = _loop_exit(node.body)
        if exit_ in ("break", "continue"):
            guard, why = scan.exit_guard(node.body)
            if guard is None:
                return f"{why} (a flag replaces only that form)"
            verdict.exit, verdict.guard = scan._exit_of(guard), guard
            if verdict.histories and verdict.exit == "break":
                return ("`break` ends it early, so how many values it collects depends on the "
                        "data (lax.scan collects one per iteration)")
            if verdict.histories and any(
                    h.append in set(walk(s)) for h in verdict.histories
                    for s in node.body.body[list(node.body.body).index(guard):]):
                return ("it appends after `continue`, so how many values it collects depends "
                        "on the data (lax.scan collects one per iteration)")
        elif exit_ is not None:
            return (f"`{exit_}` inside it (fori_loop runs every iteration; an early exit "
                    "would need a flag and lax.while_loop)")
        counter = node.target.value
        index = next(i for i, s in enumerate(top) if s is node)
        read_after = _names_in(top[index + 1:])
        bound_before = _stored_names(top[:index]) | set(self.params)
        stores = _loop_stores(node.body)
        if counter in read_after:
            return f"the counter `{counter}` is read after the loop, which fori_loop does not set"
        if counter in stores:
            return f"it assigns to its counter `{counter}`"
        carried, rebound, placeholders = [], [], []
        for name, kinds in stores.items():
            if name not in read_after and (kinds == {"loop"} or _assigned_first(node.body, name)):
                continue  # a temporary of one iteration (an inner loop's counter included)
            carried.append(name)
            if name not in bound_before:
                if _assigned_first(node.body, name) and self.env.get(name) == ARRAY:
                    # the last iteration's value, read after the loop: bound by the first
                    # iteration (run before the compiled loop), then carried
                    placeholders.append(name)
                    continue
                return f"`{name}` is first bound inside it and read again later"
            kind = self.env.get(name)
            if kind not in (ARRAY, MIXED):
                what = {LIST: "a Python list", STATIC: "a Python value"}.get(
                    kind, "a value the analysis cannot classify")
                return (f"it carries `{name}`, {what} (fori_loop carries arrays of a fixed "
                        "shape and dtype)")
            if kinds == {"plain"} and kind == ARRAY and scan.rebound_as_initialized(
                    node, top, name, stores, counter):
                continue  # the same expression as before the loop: the same shape and dtype
            if kinds & {"plain", "loop"} or kind == MIXED:
                rebound.append(name)
            else:
                verdict.widens |= "widening" in kinds
        if not carried and not verdict.histories:
            return "it carries no array from one iteration to the next"
        if rebound and verdict.exit:
            return (f"it rebinds the carried `{rebound[0]}`, whose shape or dtype may change in "
                    f"the first iteration, and has a `{verdict.exit}` (a loop with an exit is "
                    "not peeled)")
        if placeholders and verdict.exit:
            return (f"`{placeholders[0]}` is first bound inside it and read after it, and it has "
                    f"a `{verdict.exit}` (a loop with an exit is not peeled)")
        if placeholders and rebound:
            return (f"`{placeholders[0]}` is first bound inside it and read after it, while it "
                    f"also rebinds the carried `{rebound[0]}`, whose type may settle only in the "
                    "first iteration")
        if placeholders and counter in scan.names_outside_guards(node.body, verdict.histories):
            return (f"`{placeholders[0]}` is first bound inside it and read after it, and it "
                    f"reads its counter `{counter}` (the first iteration, run before the "
                    "compiled loop, would see a Python int)")
        if rebound:
            why = self._peel_refusal(node, counter, carried, rebound, stores, verdict.histories)
            if why:
                return why
        verdict.peeled = bool(rebound or placeholders)
        verdict.placeholders = tuple(placeholders)
        probe = _Walker(self.m, self.function, self.params, check=True)
        probe.env, probe.bound = dict(self.env), self.bound
        probe.env[counter] = ARRAY
        probe.record = probe.probing = True
        probe.counter = counter
        if verdict.guard is not None:
            probe.exit_guards.add(verdict.guard)
        try:
            probe.block(node.body)
        except _Stop:
            pass
        if probe.violation is not None:
            return (f"with the counter `{counter}` traced (an array, as fori_loop passes it), "
                    f"{probe.violation.reason}")
        verdict.carried = tuple(carried)
        return ""

    def array_while(self, node: cst.While) -> bool:
        """`while <0-d array test>:` at the top of the body, carrying arrays updated in place:
        lax.while_loop (NJ507), which the compiled function then needs."""
        if self.expr(node.test) not in _MAY_BE_ARRAY:
            return False
        if not (self.check and self.record) or self.probing or self.function is None:
            return True  # decided in the checked pass
        carried: list = []
        widens: list = []
        reason = self._while_refusal(node, carried, widens)
        if reason:
            self.refuse(node.test, f"the `while` test `{code_of(node.test)}` is an array, and "
                                   f"the loop cannot become lax.while_loop: {reason}")
            return True
        fix = _WhileLoopFix(tuple(carried), self._fresh("loop_cond"), self._fresh("loop_body"),
                            self._fresh("carry"))
        fix.widens = bool(widens)
        self.rewrites.append(Rewrite("NJ507", node, fix, f"while {code_of(node.test)}"))
        self.requires.append(node)  # without it the function does not compile
        return True

    def _while_refusal(self, node: cst.While, carried: list, widens: list) -> str:
        top = self.function.body.body
        if not any(s is node for s in top):
            return "it is nested in another statement"
        if node.orelse is not None:
            return "it has an `else` clause"
        exit_ = _loop_exit(node.body)
        if exit_ is not None:
            return f"`{exit_}` inside it"
        if not self.scalar_test(node.test):
            return ("its test is not provably one value (a comparison of full reductions such "
                    "as `x.sum()`, numbers and static values, or `x.any()`/`x.all()`)")
        index = next(i for i, s in enumerate(top) if s is node)
        read_again = _names_in(top[index + 1:]) | _names_in(node.test)
        bound_before = _stored_names(top[:index]) | set(self.params)
        for name, kinds in _loop_stores(node.body).items():
            if name not in read_again and (kinds == {"loop"} or _assigned_first(node.body, name)):
                continue
            carried.append(name)
            if name not in bound_before:
                return f"`{name}` is first bound inside it and read again later"
            if self.env.get(name) != ARRAY:
                return f"it carries `{name}`, which is not always an array"
            if kinds & {"plain", "loop"}:
                return (f"it rebinds the carried `{name}` (`{name} = ...`), whose shape or "
                        "dtype may then change (lax.while_loop needs them fixed; in-place "
                        f"updates `{name}[...] = ...`, `{name} += ...` keep them)")
            if "widening" in kinds:
                widens.append(name)
        if not carried:
            return "it changes no array"
        return ""

    def _peel_refusal(self, node: cst.For, counter: str, carried: list, rebound: list,
                      stores: dict, histories: tuple = ()) -> str:
        """A carried value rebound each iteration (`x = r * x * (1 - x)`, or a Python number
        `t = 0.0` then `t += a`) may change its shape or dtype in the first iteration only
        when its new value is elementwise in itself and in values the loop does not change:
        broadcasting and type promotion give the same result when applied again. The first
        iteration is then run before fori_loop (peeled), the others inside it."""
        changing = set(stores) | {counter}
        if counter in scan.names_outside_guards(node.body, histories):
            return (f"it rebinds the carried `{rebound[0]}` and reads its counter "
                    f"`{counter}` (the first iteration, run before fori_loop, would see a "
                    "Python int)")
        for name in rebound:
            update = _single_update(node.body, name)
            if update is None:
                return (f"it rebinds the carried `{name}` other than by one `{name} = ...` "
                        "(or `+=`) at the top of its body, so its shape or dtype may change")
            if not self.elementwise(update, name, changing):
                return (f"`{name}`'s new value `{code_of(update)}` is not elementwise in `{name}` "
                        "and values the loop leaves alone, so its shape or dtype may change "
                        "from one iteration to the next")
        for name in carried:
            if name in rebound:
                continue
            for statement in _statements_storing(node.body, name):
                if _names_in(statement) & set(rebound):
                    return (f"the update of `{name}` reads `{', '.join(rebound)}`, whose type "
                            "is settled only after the first iteration")
        return ""

    def elementwise(self, node: cst.BaseExpression, name: str, changing: set) -> bool:
        if not (_names_in(node) & changing):
            return True  # computed from values the loop leaves alone: the same every time
        if isinstance(node, cst.Name):
            return node.value == name
        if isinstance(node, cst.UnaryOperation):
            return isinstance(node.operator, (cst.Minus, cst.Plus)) and \
                self.elementwise(node.expression, name, changing)
        if isinstance(node, cst.BinaryOperation):
            return not isinstance(node.operator, cst.MatrixMultiply) and \
                self.elementwise(node.left, name, changing) and \
                self.elementwise(node.right, name, changing)
        if isinstance(node, cst.Call):
            ref = self.m.refs_by_call.get(node)
            return ref is not None and ref.converted and ref.qualname.startswith("numpy.") \
                and ref.qualname.rsplit(".", 1)[-1] in _ELEMENTWISE \
                and all(a.keyword is None and not a.star
                        and self.elementwise(a.value, name, changing) for a in node.args)
        return False

    def small(self, node: cst.CSTNode, line: cst.SimpleStatementLine) -> None:
        if isinstance(node, cst.Assign) and self.histories.of_init(node) is not None:
            self.collected(node.value.elements, node)  # the stacked array, after the loop
            self.env[node.targets[0].target.value] = ARRAY
        elif isinstance(node, cst.Assign):
            value = self.expr(node.value)
            for target in node.targets:
                self.store(target.target, value, node, line)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.store(node.target, self.expr(node.value), node, line)
        elif isinstance(node, cst.AugAssign):
            value = self.expr(node.value)
            target = node.target
            if isinstance(target, cst.Name):
                old = self.env.get(target.value)
                if target.value in self.params and old in _MAY_BE_ARRAY:
                    self.refuse(node, f"it changes its argument `{target.value}` in place")
                self.env[target.value] = join(old, _arith(old, value))
            else:
                self.store(target, value, node, line)
        elif isinstance(node, cst.Return):
            kind = self.returned(node.value) if node.value is not None else STATIC
            self.returns.append((node, kind))
        elif isinstance(node, cst.Expr):
            value = node.value
            if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
                return  # a docstring
            if isinstance(value, cst.Call) and _is_builtin(value.func, "print", self):
                self.print_call(value)
                return
            if isinstance(value, cst.Call) and self.histories.of_append(value) is not None:
                self.collected(value.args, value)
                return
            self.expr(value)
            self.refuse(node, f"`{code_of(value)}` is called for its effect, which under jit "
                              "happens once, while compiling")
        elif isinstance(node, (cst.Pass, cst.Break, cst.Continue)):
            return
        elif isinstance(node, cst.Raise):
            if node.exc is not None:
                self.expr(node.exc)
        elif isinstance(node, cst.Assert):
            self.need_static(node.test, "the `assert` test")
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            self.refuse(node, "it writes global state (`global`), which a compiled function "
                              "reads once, while compiling")
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            self.refuse(node, "it imports inside the function")
        else:
            self.refuse(node, f"it uses `{code_of(node).strip()}`, which the analysis does not follow")

    def collected(self, elements, node) -> None:
        """Values a history list collects: arrays or numbers, stacked into one array."""
        for element in elements:
            kind = self.expr(element.value)
            if kind not in (ARRAY, MIXED, STATIC):
                self.refuse(node, f"the value `{code_of(element.value)}` collected in a list "
                                  "is not an array")

    def returned(self, value: cst.BaseExpression) -> str:
        if isinstance(value, (cst.Tuple, cst.List)):
            kinds = [self.returned(e.value) for e in value.elements
                     if not isinstance(e, cst.StarredElement)]
            if len(kinds) != len(value.elements) or not kinds:
                return UNKNOWN
            return _pytree(kinds)
        if isinstance(value, cst.Dict):
            kinds = []
            for element in value.elements:
                if not isinstance(element, cst.DictElement) or not isinstance(
                        element.key, (cst.SimpleString, cst.Integer)):
                    return UNKNOWN
                kinds.append(self.returned(element.value))
            return _pytree(kinds) if kinds else UNKNOWN
        if isinstance(value, cst.Name) and value.value == "None":
            return STATIC
        return self.expr(value)

    def store(self, target, value: str, statement, line) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = join(self.env.get(target.value), value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            element_kind = ARRAY if value in _MAY_BE_ARRAY else (STATIC if value == STATIC else UNKNOWN)
            for element in target.elements:
                if isinstance(element, cst.StarredElement):
                    self.refuse(target, "it unpacks with a starred target")
                    continue
                self.store(element.value, element_kind, statement, line)
        elif isinstance(target, cst.Subscript):
            self.subscript_store(target, statement)
        else:
            self.refuse(target, f"it stores into `{code_of(target)}` (an attribute: state "
                                "outside the function)")

    def subscript_store(self, target: cst.Subscript, statement) -> None:
        base = target.value
        if not (isinstance(base, cst.Name) and base.value in self.bound
                and base.value not in self.params):
            self.refuse(target, f"it writes into `{code_of(target)}`, an array it did not make")
            return
        if self.env.get(base.value) != ARRAY:
            self.refuse(target, f"`{base.value}` may not be an array")
            return
        plan = self.m.analysis.write_plan(statement)
        if plan.eager_mask:
            self.refuse(target, f"the store `{code_of(target)} = ...` selects with a boolean "
                                f"mask not provably of `{base.value}`'s own shape, so it "
                                "stays `.at[mask]`, which jax.jit cannot compile")
            return
        if plan.where:  # a mask of the array's own shape: jnp.where(mask, v, x)
            self.expr(target.slice[0].slice.value)
        else:
            self.index(target)
        if plan.fix is None:
            self.refuse(target, f"the store `{code_of(target)} = ...` is not rewritten to a "
                                "form jax.jit compiles")
            return
        if self.record:
            self.requires.append(plan.fix[0])

    def bind(self, target, kind: str, statement) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = join(self.env.get(target.value), kind)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.bind(element.value, kind if kind != LIST else UNKNOWN, statement)
        else:
            self.refuse(target, f"the loop target `{code_of(target)}` is not a plain name")

    # --- expressions ------------------------------------------------------------------
    def expr(self, node: cst.BaseExpression) -> str:
        ref = self.m.refs_by_node.get(node)
        if ref is not None:
            return self.api_value(node, ref)
        if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                             cst.ConcatenatedString, cst.Ellipsis)):
            return STATIC
        if isinstance(node, cst.FormattedString):
            for part in node.parts:
                if isinstance(part, cst.FormattedStringExpression):
                    self.need_static(part.expression, "the value formatted into a string")
            return STATIC
        if isinstance(node, cst.Name):
            return self.name(node)
        if isinstance(node, cst.Attribute):
            return self.attribute(node)
        if isinstance(node, cst.Call):
            return self.call(node)
        if isinstance(node, cst.Subscript):
            return self.subscript(node)
        if isinstance(node, cst.BinaryOperation):
            left, right = self.expr(node.left), self.expr(node.right)
            if isinstance(node.operator, cst.Modulo) and isinstance(
                    node.left, (cst.SimpleString, cst.FormattedString)) and right not in _PYTHON:
                self.refuse(node, "it formats an array into a string")
            return _arith(left, right)
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Not):
                return self.need_static(node.expression, "the operand of `not`")
            return self.expr(node.expression)
        if isinstance(node, cst.BooleanOperation):
            self.need_static(node.left, "the operand of `and`/`or`")
            self.need_static(node.right, "the operand of `and`/`or`")
            return STATIC
        if isinstance(node, cst.Comparison):
            kinds = [self.expr(node.left)] + [self.expr(c.comparator) for c in node.comparisons]
            identity = any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn))
                           for c in node.comparisons)
            if identity and any(k not in _PYTHON for k in kinds):
                self.refuse(node, f"`{code_of(node)}` asks Python about an array "
                                  "(`is`/`in`), which a tracer answers differently")
            if len(node.comparisons) > 1 and any(k not in _PYTHON for k in kinds):
                self.refuse(node, f"the chained comparison `{code_of(node)}` needs a Python bool")
            result = kinds[0]
            for kind in kinds[1:]:
                result = _arith(result, kind)
            return STATIC if result == LIST else result
        if isinstance(node, cst.IfExp):
            self.need_static(node.test, "the test of the conditional expression")
            return join(self.expr(node.body), self.expr(node.orelse))
        if isinstance(node, cst.Tuple):
            kinds = [self.expr(e.value) for e in node.elements]
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                return UNKNOWN
            if all(k == STATIC for k in kinds):
                return STATIC
            return ARRAY if kinds and all(k in _MAY_BE_ARRAY or k == STATIC for k in kinds) else UNKNOWN
        if isinstance(node, (cst.List, cst.Set)):
            kinds = [self.expr(e.value) for e in node.elements]
            if all(k in _PYTHON for k in kinds):
                return LIST
            return UNKNOWN
        if isinstance(node, cst.Dict):
            for element in node.elements:
                if isinstance(element, cst.DictElement):
                    self.expr(element.key)
                    self.expr(element.value)
            return UNKNOWN
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            return self.comprehension(node)
        if isinstance(node, cst.Lambda):
            self.refuse(node, "it makes a lambda, whose calls the analysis does not follow")
            return UNKNOWN
        self.refuse(node, f"it uses `{code_of(node)}`, which the analysis does not follow")
        return UNKNOWN

    def name(self, node: cst.Name) -> str:
        name = node.value
        if name in self.env or name in self.bound:
            return self.env.get(name)  # None: not known yet (settling) or unbound
        if name in ("True", "False", "None"):
            return STATIC
        if name in self.m.functions:
            return STATIC  # a function: hashable, usable as a static argument
        if name in self.m.globals:
            return self.m.globals[name]
        if name in BUILTIN_TYPES and self.m.analysis.dataflow.name_bindings(node)[0] is None:
            return STATIC  # the builtin type, bound nowhere in the file (`.astype(int)`)
        self.refuse(node, f"it reads `{name}`, a global the analysis cannot follow")
        return UNKNOWN

    def attribute(self, node: cst.Attribute) -> str:
        attr = node.attr.value
        if attr == "size" and selection_count(self, node):  # x[m].size: the mask's count
            return ARRAY
        base = self.expr(node.value)
        if base in _MAY_BE_ARRAY:
            if attr in STATIC_ATTRIBUTES:
                return STATIC
            if attr in ARRAY_ATTRIBUTES:
                return base
            self.refuse(node, f"it reads `.{attr}` of an array")
            return UNKNOWN
        if base == STATIC:
            return STATIC
        return UNKNOWN

    def api_value(self, node: cst.BaseExpression, ref) -> str:
        if not ref.converted:
            self.refuse(node, f"`{code_of(node)}` stays on NumPy, which cannot take a tracer")
            return UNKNOWN
        if ref.qualname.startswith("numpy.random"):
            self.refuse(node, f"`{code_of(node)}` draws random numbers through a key the "
                              "conversion threads through globals")
            return UNKNOWN
        if self.record:
            self.requires.append(ref.node)
        return STATIC  # a function, a constant (np.pi) or a dtype

    def call(self, node: cst.Call) -> str:
        ref = self.m.refs_by_call.get(node)
        func = node.func
        if ref is not None:
            return self.api_call(node, ref)
        if isinstance(func, cst.Name):
            name = func.value
            if name not in self.env and name not in self.bound:
                if name in self.m.functions:
                    return self.user_call(node, name)
                if name in STATIC_BUILTINS or name in ("len", "abs", "print"):
                    return self.builtin_call(node, name)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Subscript) \
                and func.attr.value in MASK_REDUCTIONS:
            kind = self.mask_reduction(node, func.attr.value)
            if kind is not None:
                return kind
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.value.value in self.histories.refused:
            for arg in node.args:
                self.expr(arg.value)
            self.refuse(node, f"`{code_of(node)}` changes a Python list, which under jit "
                              f"happens once, while compiling, and the list `{func.value.value}` "
                              f"cannot become a lax.scan history: "
                              f"{self.histories.refused[func.value.value]}")
            return UNKNOWN
        if isinstance(func, cst.Attribute):
            receiver = self.expr(func.value)
            method = func.attr.value
            if receiver in _MAY_BE_ARRAY:
                return self.method_call(node, method)
            if receiver == STATIC:
                for arg in node.args:
                    self.need_static(arg.value, f"the argument of `.{method}()`")
                return STATIC
            if receiver == LIST:
                self.refuse(node, f"`{code_of(node)}` changes or reads a Python container")
                return UNKNOWN
        for arg in node.args:
            self.expr(arg.value)
        self.refuse(node, f"it calls `{code_of(func)}`, which cannot be traced (not NumPy, "
                          "not a compiled function of this file)")
        return UNKNOWN

    def api_call(self, node: cst.Call, ref) -> str:
        self.api_value(ref.node, ref)
        short = ref.qualname.rsplit(".", 1)[-1]
        if short in DATA_DEPENDENT or (short == "where" and len(node.args) == 1):
            self.refuse(node, size_hint(code_of(node.func)))
        kinds = []
        roles = {id(a.arg): a.role for a in ref.arguments}
        if ref.qualname == "numpy.array":  # np.array(x) of an array (a stacked history): a copy
            roles.update({id(a.arg): "array" for a in ref.arguments
                          if a.name == "object" and self.expr(a.arg.value) in _MAY_BE_ARRAY})
        for arg in node.args:
            role = roles.get(id(arg))
            if arg.star:
                self.refuse(node, "it passes `*args` to NumPy")
            if role in ("array", "arrays"):
                kinds.append(self.expr(arg.value))
            else:
                kinds.append(self.need_static(arg.value, f"the argument `{code_of(arg.value)}` "
                                                         f"of `{code_of(node.func)}`, which must "
                                                         "be a Python value,"))
        if short in STATIC_RESULTS:  # a shape, a dtype, a flag: Python values even for tracers
            return STATIC
        return ARRAY

    def method_call(self, node: cst.Call, method: str) -> str:
        if method in HOST_METHODS:
            self.refuse(node, f"`.{method}()` copies an array to the host, which a tracer "
                              "cannot do")
            return UNKNOWN
        if method not in ARRAY_METHODS:
            self.refuse(node, f"it calls the method `.{method}()`, which the analysis does "
                              "not follow")
            return UNKNOWN
        for arg in node.args:
            if method in ARRAY_ARGUMENT_METHODS:
                self.expr(arg.value)
            else:
                self.need_static(arg.value, f"the argument of `.{method}()`")
        return ARRAY

    def array_if(self, node: cst.If) -> bool:
        """`if c: return a / else: return b` (or one assignment to the same name in each
        branch) on a 0-d array `c`: becomes jnp.where(c, a, b) when a and b provably have
        the same shape and dtype (the same array, or float expressions of it)."""
        if self.expr(node.test) not in _MAY_BE_ARRAY:
            return False
        branches = _if_else_values(node)
        if branches is None or not self.scalar_test(node.test):
            return False
        kind, target, first, second = branches
        likes = [_like(v, self) for v in (first, second)]
        if likes[0] is None or likes[0] != likes[1]:
            return False
        if self.record:
            fix = _where_statement(kind, target, self.m.analysis.jnp_alias)
            self.rewrites.append(Rewrite("NJ505", node, fix, f"if {code_of(node.test)}: ..."))
        return True

    def scalar_test(self, test: cst.BaseExpression) -> bool:
        """Whether the `if` test is provably 0-d: a comparison of full reductions and numbers."""
        if isinstance(test, cst.Comparison):
            if len(test.comparisons) != 1 or isinstance(
                    test.comparisons[0].operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
                return False
            return all(self.scalar_operand(o) for o in (test.left, test.comparisons[0].comparator))
        return isinstance(test, cst.Call) and _full_reduction(test, self) is not None \
            and _full_reduction(test, self)[1] in ("any", "all")

    def scalar_operand(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            node = node.expression
        if isinstance(node, (cst.Integer, cst.Float)):
            return True
        if self.expr(node) == STATIC and not isinstance(node, (cst.Tuple, cst.List)):
            return isinstance(node, cst.Name)  # a static number passed in (a threshold)
        return isinstance(node, cst.Call) and _full_reduction(node, self) is not None

    def print_call(self, node: cst.Call) -> None:
        """print(...) of arrays becomes jax.debug.print, which prints on every call."""
        kinds = []
        for arg in node.args:
            if arg.keyword is not None or arg.star:
                self.refuse(node, "it prints with keywords or `*args` (under jit a print "
                                  "runs once, while compiling)")
            literal = isinstance(arg.value, cst.SimpleString) and \
                arg.value.prefix.lower() in ("", "r")
            if literal and ("{" in arg.value.value or "}" in arg.value.value):
                # jax.debug.print does not format a text that opens with an escaped brace
                self.refuse(node, "it prints text with braces, which jax.debug.print reads "
                                  "as a format")
            kinds.append("text" if literal else self.expr(arg.value))
        if not any(k in _MAY_BE_ARRAY for k in kinds) or \
                any(k not in _MAY_BE_ARRAY and k != "text" for k in kinds):
            self.refuse(node, "it prints Python values (under jit a print runs once, while "
                              "compiling)")
        if self.record:
            self.rewrites.append(Rewrite("NJ503", node, _debug_print, code_of(node)))

    def mask_reduction(self, node: cst.Call, method: str) -> str | None:
        """x[mask].sum() with a boolean mask of x's own shape (np2jax.analysis.shapes), or x[mask].sum(
        axis=0) with any boolean mask: the same reduction over x with the mask as `where` (the
        shape no longer depends on the values)."""
        mask = None if node.args else selection_of_mask(self, node.func.value)
        if mask is None:
            # x[m].mean(axis=0): over x's first m.ndim axes, m as `where`
            return ARRAY if selection_axis_reduction(self, node, method) else None
        self.expr(mask)
        if self.record:
            self.rewrites.append(Rewrite("NJ504", node, _masked(method, self.m.analysis.jnp_alias),
                                         code_of(node)))
        return ARRAY

    def builtin_call(self, node: cst.Call, name: str) -> str:
        if name == "print":
            for arg in node.args:
                self.expr(arg.value)
            self.refuse(node, "it prints (under jit a print runs once, while compiling)")
            return STATIC
        if name == "len":
            if selection_count(self, node):  # len(x[m]) / n: jnp.count_nonzero(m) / n
                return ARRAY
            kinds = [self.expr(arg.value) for arg in node.args]
            return STATIC if all(k in (STATIC, LIST, ARRAY) for k in kinds) else UNKNOWN
        if name == "abs":
            kinds = [self.expr(arg.value) for arg in node.args]
            return kinds[0] if len(kinds) == 1 else UNKNOWN
        kinds = []
        for arg in node.args:
            kind = self.expr(arg.value)
            if kind not in _PYTHON:
                what = ("converts an array to a Python value on the host"
                        if name in HOST_CONVERSIONS else "needs Python values")
                self.refuse(node, f"`{code_of(node)}` {what}, which a tracer cannot do")
            kinds.append(kind)
        if name in ("list", "dict", "set", "sorted", "map", "filter", "zip", "enumerate",
                    "reversed"):
            return LIST
        return STATIC

    def user_call(self, node: cst.Call, name: str) -> str:
        function = self.m.functions[name]
        passed, problem = _bind(node, function, [self.expr(a.value) for a in node.args])
        if self.record:
            self.calls.append(CallSite(name, node, passed, problem))
        if name not in self.m.compiled:
            self.refuse(node, f"it calls `{name}`, which is left uncompiled")
            return UNKNOWN
        if self.record:  # traced inline: it must be compiled too (its rewrites applied)
            self.requires.append(function)
        if self.function is not None and name == self.function.name.value:
            self.refuse(node, "it calls itself")
        return ARRAY

    def subscript(self, node: cst.Subscript) -> str:
        base = self.expr(node.value)
        if node.value in self.m.refs_by_node:  # np.mgrid[...], np.r_[...]: arrays
            self.index(node)
            return ARRAY
        if base in _MAY_BE_ARRAY:
            if selection_in_where_write(self, node):  # x[m] = y[m] * 2: y, in jnp.where
                self.expr(node.slice[0].slice.value)
            else:
                self.index(node)
            return base
        for element in node.slice:
            self.index_element(element, need=False)
        return STATIC if base == STATIC else UNKNOWN

    def index(self, node: cst.Subscript) -> None:
        for element in node.slice:
            self.index_element(element, need=True)

    def index_element(self, element: cst.SubscriptElement, need: bool) -> None:
        piece = element.slice
        if isinstance(piece, cst.Slice):
            for part in (piece.lower, piece.upper, piece.step):
                if part is not None:
                    (self.need_static(part, "the slice bound") if need else self.expr(part))
        elif need and self.counter is not None and isinstance(piece.value, cst.Name) \
                and piece.value.value == self.counter:
            return  # the fori_loop counter: a 0-d integer, a dynamic index
        elif need:
            kind = self.expr(piece.value)
            if kind in _MAY_BE_ARRAY and non_boolean_index(self, piece.value):
                return  # an integer-array index: a gather of a static shape (np2jax.jit.gather)
            if kind not in _PYTHON or kind == LIST:
                self.refuse(piece, f"the index `{code_of(piece.value)}` is " + (
                    "not a Python integer or slice" if kind not in _MAY_BE_ARRAY
                    else "a boolean mask, and the selection is kept (its shape depends on the "
                         "values; only reductions and counts of it are rewritten)"
                    if self.m.analysis.dataflow.is_mask(piece.value)
                    else "an array not provably of integers (a boolean array would select a "
                         "number of elements that depends on the values)"))
        else:
            self.expr(piece.value)

    def comprehension(self, node) -> str:
        saved = dict(self.env)
        clause = node.for_in
        while clause is not None:
            if isinstance(clause.iter, cst.Call) and _is_builtin(clause.iter.func, "range", self):
                for arg in clause.iter.args:
                    self.need_static(arg.value, "the range bound")
                kind = STATIC
            else:
                kind = self.expr(clause.iter)
                if kind not in (ARRAY, STATIC, LIST):
                    self.refuse(clause.iter, f"the comprehension runs over `{code_of(clause.iter)}`")
                kind = {LIST: UNKNOWN}.get(kind, kind)
            self._comp_bind(clause.target, kind)
            for condition in clause.ifs:
                self.need_static(condition.test, "the comprehension's `if`")
            clause = clause.inner_for_in
        if isinstance(node, cst.DictComp):
            self.expr(node.key)
            element = self.expr(node.value)
        else:
            element = self.expr(node.elt)
        self.env = saved
        if isinstance(node, cst.GeneratorExp):
            return UNKNOWN
        if element in _PYTHON and not isinstance(node, cst.DictComp):
            return LIST
        return UNKNOWN

    def _comp_bind(self, target, kind) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = kind
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._comp_bind(element.value, kind)
        else:
            self.refuse(target, "the comprehension target is not a plain name")


def _histories(module: _Module, function) -> scan.Histories:
    if function is None:
        return scan.Histories()
    if function not in module.histories:
        module.histories[function] = scan.find_histories(function, module.refs_by_call,
                                                         module.functions)
    return module.histories[function]


def _pytree(kinds: list) -> str:
    """The class of a tuple or dict of these: ARRAY when all are arrays, MIXED when some may
    be Python values (jax.jit would return those as arrays)."""
    if all(k == ARRAY for k in kinds):
        return ARRAY
    return MIXED if all(k in _MAY_BE_ARRAY for k in kinds) else UNKNOWN


def _arith(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return None  # an operand not known yet (while settling): nor is the result
    if UNKNOWN in (a, b) or LIST in (a, b):
        return UNKNOWN
    if ARRAY in (a, b):
        return ARRAY
    if MIXED in (a, b):
        return MIXED
    return STATIC


def _is_builtin(func, name: str, walker: _Walker) -> bool:
    return isinstance(func, cst.Name) and func.value == name and name not in walker.env \
        and name not in walker.bound and name not in walker.m.functions \
        and name not in walker.m.globals


def _literal_count(call: cst.Call, walker: _Walker) -> int | None:
    """range(...)'s length when its bounds are integer literals."""
    values = []
    for arg in call.args:
        if not isinstance(arg.value, cst.Integer):
            return None
        values.append(int(arg.value.evaluated_value))
    try:
        return len(range(*values))
    except (TypeError, ValueError):
        return None


def _bound_names(function: cst.FunctionDef) -> set:
    """Names the function binds (its locals), comprehension targets excluded."""
    names = {p.name.value for p in _params(function)}

    class _Targets(cst.CSTVisitor):
        def visit_AssignTarget(self, node):
            _collect(node.target, names)

        def visit_AugAssign(self, node):
            _collect(node.target, names)

        def visit_AnnAssign(self, node):
            _collect(node.target, names)

        def visit_For(self, node):
            _collect(node.target, names)

        def visit_NamedExpr(self, node):
            _collect(node.target, names)

        def visit_WithItem(self, node):
            if node.asname is not None:
                _collect(node.asname.name, names)

        def visit_ExceptHandler(self, node):
            if node.name is not None:
                _collect(node.name.name, names)

        def visit_FunctionDef(self, node):
            if node is function:
                return True
            names.add(node.name.value)
            return False

        def visit_ClassDef(self, node):
            names.add(node.name.value)
            return False

        def visit_Lambda(self, node):
            return False

        def visit_Import(self, node):
            for alias in node.names:
                names.add((alias.evaluated_alias or alias.evaluated_name).split(".")[0])

        def visit_ImportFrom(self, node):
            if not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    names.add(alias.evaluated_alias or alias.evaluated_name)

    function.visit(_Targets())
    return names


def _collect(target, names: set) -> None:
    if isinstance(target, cst.Name):
        names.add(target.value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _collect(element.value, names)
    elif isinstance(target, cst.StarredElement):
        _collect(target.value, names)


def _params(function: cst.FunctionDef) -> list:
    p = function.params
    return [*p.posonly_params, *p.params, *p.kwonly_params]


def _bind(call: cst.Call, function: cst.FunctionDef, kinds: list) -> tuple[dict, str | None]:
    """Parameter -> class of the argument passed for it at this call."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    by_name = {p.name.value for p in _params(function)}
    passed: dict = {}
    for index, (arg, kind) in enumerate(zip(call.args, kinds)):
        if arg.star:
            return passed, f"the call `{code_of(call)}` passes `{arg.star}` arguments"
        if arg.keyword is None:
            if index >= len(positional):
                return passed, f"the call `{code_of(call)}` passes too many arguments"
            passed[positional[index].name.value] = kind
        elif arg.keyword.value in by_name:
            passed[arg.keyword.value] = kind
        else:
            return passed, f"the call `{code_of(call)}` passes an unknown keyword"
    return passed, None


# --- the module -------------------------------------------------------------------------


def _candidates(analysis: ModuleAnalysis) -> tuple[dict, dict]:
    """Module-level functions that could be compiled, and why the others are not."""
    module = analysis.module
    counts: dict = {}
    for statement in module.body:
        for name in _module_bindings(statement):
            counts[name] = counts.get(name, 0) + 1
    declared_global = _declared_globals(module)
    candidates, refused = {}, {}
    for statement in module.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        name = statement.name.value
        why = None
        if statement.asynchronous is not None:
            why = "it is asynchronous"
        elif statement.decorators:
            why = "it is decorated"
        elif counts.get(name, 0) != 1 or name in declared_global:
            why = f"the name `{name}` is bound more than once in the module"
        elif isinstance(statement.params.star_arg, cst.Param) or statement.params.star_kwarg:
            why = "it takes `*args` or `**kwargs`"
        elif name in analysis.context.external_names:
            why = (f"another file of the tree uses the name `{name}`, and calls from other "
                   "files are not checked")
        elif _yields(statement):
            why = "it is a generator"
        if why is None:
            candidates[name] = statement
        else:
            refused[name] = (statement, why)
    return candidates, refused


def _module_bindings(statement) -> list:
    names: set = set()
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return [statement.name.value]
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    _collect(_store_base(target.target), names)
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                _collect(_store_base(small.target), names)
            elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
                    getattr(small, "names", None), cst.ImportStar):
                for alias in small.names:
                    names.add((alias.evaluated_alias or alias.evaluated_name).split(".")[0])
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                # x.sort(), np.copyto(x, y), np.add(a, b, out=x): converted to rebind x
                call = small.value
                if isinstance(call.func, cst.Attribute):
                    _collect(_store_base(call.func.value), names)
                for arg in call.args:
                    _collect(_store_base(arg.value), names)
                names.update(n + "\0" for n in set(names))  # counted twice: never a constant
                return [n.rstrip("\0") for n in names]
        return list(names)
    # compound statements at module level: count every name they may bind
    for node in walk(statement):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
            _collect(_store_base(node.target), names)
        elif isinstance(node, cst.For):
            _collect(node.target, names)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            names.add(node.name.value)
    return [n for n in names] * 2  # bound conditionally: never a constant


def _store_base(target):
    while isinstance(target, (cst.Subscript, cst.Attribute)):
        target = target.value
    return target


def _declared_globals(module: cst.Module) -> set:
    names = set()
    for node in walk(module):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            names.update(n.name.value for n in node.names)
    return names


def _yields(function: cst.FunctionDef) -> bool:
    for node in walk(function.body):
        if isinstance(node, (cst.Yield, cst.Await)):
            return True
    return False


def _module_globals(m: _Module, counts_once: set) -> dict:
    """Module names bound exactly once by a plain assignment: their class (constants)."""
    walker = _Walker(m, None, {}, check=False)
    walker.record = True
    result = {}
    for statement in m.analysis.module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                    small.targets[0].target, cst.Name):
                name = small.targets[0].target.value
                if name in counts_once:
                    try:
                        kind = walker.expr(small.value)
                    except _Stop:
                        kind = UNKNOWN
                    if kind in (STATIC, ARRAY):
                        result[name] = kind
                        walker.env[name] = kind
    return result


def jit_plans(analysis: ModuleAnalysis) -> list[JitPlan]:
    """The verdict on every module-level function (the rules memoise it: RuleContext)."""
    try:
        return _plan_module(analysis)
    except Exception as exc:  # noqa: BLE001 - a bug here must not cost the conversion
        return [JitPlan(s, False, f"the jit analysis failed on this file (an np2jax bug, please "
                                  f"report it): {type(exc).__name__}: {exc}")
                for s in analysis.module.body if isinstance(s, cst.FunctionDef)]


def _plan_module(analysis: ModuleAnalysis) -> list[JitPlan]:
    candidates, refused = _candidates(analysis)
    m = _Module(analysis, candidates,
                refs_by_node={ref.node: ref for ref in analysis.refs},
                refs_by_call={ref.call: ref for ref in analysis.refs if ref.call is not None})
    counts: dict = {}
    for statement in analysis.module.body:
        for name in _module_bindings(statement):
            counts[name] = counts.get(name, 0) + 1
    once = {n for n, c in counts.items() if c == 1} - _declared_globals(analysis.module) \
        - set(candidates)
    m.globals = _module_globals(m, once)
    m.compiled = set(candidates)
    reasons: dict = {}
    plans: dict = {}
    for _ in range(len(candidates) + 2):
        params = _settle_parameters(m)
        changed = False
        plans = {}
        for name in sorted(m.compiled):
            plan = _judge(m, name, params)
            plans[name] = plan
            if not plan.compiled:
                reasons[name] = plan.reason
                changed = True
        m.compiled = {n for n, p in plans.items() if p.compiled}
        if not changed:
            break
    result = []
    for statement in analysis.module.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        name = statement.name.value
        if name in plans and plans[name].compiled:
            result.append(plans[name])
        elif name in refused:
            result.append(JitPlan(statement, False, refused[name][1]))
        elif name in reasons:
            result.append(JitPlan(statement, False, reasons[name]))
    return result


def _all_walkers(m: _Module, params: dict) -> list[_Walker]:
    """Every body of the module, walked: the module itself, every function and method."""
    walkers = []
    module_walker = _Walker(m, None, {}, check=False)
    module_walker.bound = set()
    module_walker.env = dict(m.globals)
    top = [s for s in m.analysis.module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
    module_walker.run(top)
    walkers.append(module_walker)
    for node in walk(m.analysis.module):
        if isinstance(node, cst.FunctionDef):
            name = node.name.value
            own = params.get(name) if m.functions.get(name) is node else None
            walker = _Walker(m, node, own if own is not None else
                             {p.name.value: UNKNOWN for p in _params(node)}, check=False)
            walker.run(node.body)
            walkers.append(walker)
        elif isinstance(node, cst.ClassDef):
            class_walker = _Walker(m, None, {}, check=False)
            class_walker.bound = set()
            class_walker.run([s for s in node.body.body
                              if not isinstance(s, (cst.FunctionDef, cst.ClassDef))])
            walkers.append(class_walker)
    return walkers


def _settle_parameters(m: _Module) -> dict:
    """Parameter classes of every candidate, from what its call sites pass (to a fixed point:
    a compiled caller's own parameters decide what it passes on)."""
    params: dict = {name: {} for name in m.functions}
    for _ in range(8):
        walkers = _all_walkers(m, {n: _param_classes(m.functions[n], params[n], final=False)
                                   for n in m.compiled})
        sites: dict = {name: [] for name in m.functions}
        for walker in walkers:
            for site in walker.calls:
                sites[site.callee].append(site)
        new = {name: _passed_join(m.functions[name], sites[name]) for name in m.functions}
        m.sites = sites
        if new == params:
            break
        params = new
    return params


def _passed_join(function: cst.FunctionDef, sites: list) -> dict:
    joined: dict = {}
    for site in sites:
        if site.problem is not None:
            return {"__problem__": site.problem}
        for param in _params(function):
            name = param.name.value
            if name in site.passed:
                joined[name] = join(joined.get(name), site.passed[name])
            else:
                joined.setdefault(name, None)
                joined[f"__omitted__{name}"] = True
    return joined


def _param_classes(function: cst.FunctionDef, passed: dict, final: bool = True) -> dict:
    """The class each parameter has inside the body (None while still unknown, unless final)."""
    classes = {}
    for param in _params(function):
        name = param.name.value
        kind = passed.get(name)
        if param.default is not None and (kind is None or passed.get(f"__omitted__{name}")):
            kind = join(kind, _default_class(param.default))
        classes[name] = kind if kind is not None or not final else UNKNOWN
    return classes


def _default_class(default: cst.BaseExpression) -> str:
    if isinstance(default, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
        return STATIC
    if isinstance(default, cst.Name) and default.value in ("True", "False", "None"):
        return STATIC
    if isinstance(default, cst.UnaryOperation) and isinstance(
            default.expression, (cst.Integer, cst.Float)):
        return STATIC
    return UNKNOWN


def _judge(m: _Module, name: str, params: dict) -> JitPlan:
    function = m.functions[name]
    passed = params.get(name, {})
    sites = m.sites.get(name, [])
    if "__problem__" in passed:
        return JitPlan(function, False, passed["__problem__"])
    escaped = _escapes(m, function, sites)
    if escaped is not None:
        return JitPlan(function, False, escaped)
    # A function without parameters (main()) needs no call site: there is nothing to infer.
    entry = not sites and not _params(function)
    if not sites and not entry:
        return JitPlan(function, False, "no call in this file shows what it is called with "
                                        "(arrays, or lists, strings and other Python values)")
    for param in _params(function):
        pname = param.name.value
        kind = passed.get(pname)
        if kind in (MIXED, UNKNOWN, LIST):
            what = {MIXED: "both arrays and Python values",
                    LIST: "a Python list or dict (not hashable, not an array)",
                    UNKNOWN: "a value the analysis cannot classify"}[kind]
            return JitPlan(function, False, f"its calls pass {what} for `{pname}`")
        if param.default is not None and _default_class(param.default) == UNKNOWN and (
                kind is None or passed.get(f"__omitted__{pname}")):
            return JitPlan(function, False, f"the default of `{pname}` is not a plain constant")
    classes = _param_classes(function, passed)
    walker = _Walker(m, function, classes, check=True)
    walker.run(function.body)
    if walker.violation is not None:
        line = m.analysis.position(walker.violation.node)[0]
        return JitPlan(function, False, f"{walker.violation.reason} (line {line})")
    if not any(kind in _MAY_BE_ARRAY for _, kind in walker.returns):
        return JitPlan(function, False, "it returns no array")
    for node, kind in walker.returns:
        if entry and kind == MIXED:
            # uncalled here, so called from outside: a Python number it may return must
            # stay one, not come back from jax.jit as an array
            return JitPlan(function, False, f"`{code_of(node).strip()}` may return Python "
                                            "numbers, which jax.jit would turn into arrays")
        if kind not in _MAY_BE_ARRAY and not _returns_none(node):
            what = ("a Python value, which jax.jit would turn into an array" if kind == STATIC
                    else "a value the analysis cannot show to be arrays")
            return JitPlan(function, False, f"`{code_of(node).strip()}` returns {what}")
    if _falls_off_end(function) and any(not _returns_none(n) for n, _ in walker.returns):
        return JitPlan(function, False, "some paths return an array and others None")
    static = tuple(p.name.value for p in _params(function)
                   if classes[p.name.value] == STATIC and p.name.value in passed
                   and passed[p.name.value] is not None)
    return JitPlan(function, True, static=static, requires=tuple(walker.requires),
                   rewrites=tuple(walker.rewrites), loops=tuple(walker.loops))


def _returns_none(node: cst.Return) -> bool:
    return node.value is None or (isinstance(node.value, cst.Name) and node.value.value == "None")


def _falls_off_end(function: cst.FunctionDef) -> bool:
    return not always_leaves(function.body.body)


def _escapes(m: _Module, function: cst.FunctionDef, sites: list) -> str | None:
    """Every use of the function's name must be one of the calls seen."""
    scope = m.analysis.dataflow.scopes.get(m.analysis.module)
    if scope is None:
        return "the module's scopes are not known"
    name = function.name.value
    calls = {id(site.call) for site in sites}
    # libcst keeps accesses in sets: in source order, the line named is the same every run
    accesses = [access for assignment in scope.assignments[name] for access in assignment.references]
    for access in sorted(accesses, key=lambda access: m.analysis.position(access.node)):
        parent = m.analysis.parents.get(access.node)
        if not (isinstance(parent, cst.Call) and parent.func is access.node
                and id(parent) in calls):
            line = m.analysis.position(access.node)[0]
            return (f"it is used as a value on line {line} (passed or stored), so its "
                    "arguments cannot be checked")
    return None


def _masked(method: str, jnp: str):
    def fix(call: cst.Call) -> cst.BaseExpression:
        subscript = call.func.value
        array, mask = subscript.value, subscript.slice[0].slice.value
        if method in ("max", "min"):
            fill = cst.parse_expression(f"{jnp}.{'nanmin' if method == 'max' else 'nanmax'}(a)")
            fill = fill.with_changes(args=[cst.Arg(array)])
            where = cst.parse_expression(f"{jnp}.where(m, a, f)").with_changes(
                args=[cst.Arg(mask), cst.Arg(array), cst.Arg(fill)])
            return cst.parse_expression(f"{jnp}.{method}(w)").with_changes(args=[cst.Arg(where)])
        return cst.parse_expression(f"{jnp}.{method}(a, where=m)").with_changes(
            args=[cst.Arg(array), cst.Arg(mask, keyword=cst.Name("where"),
                                          equal=cst.AssignEqual(cst.SimpleWhitespace(""),
                                                                cst.SimpleWhitespace("")))])
    return fix


def _debug_print(call: cst.Call) -> cst.Call:
    """print("loss", x) -> jax.debug.print("loss {}", x): text inlined, arrays as {}."""
    pieces, arrays = [], []
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.SimpleString) and value.prefix.lower() in ("", "r"):
            pieces.append(str(value.evaluated_value))  # no braces: refused before
        else:
            pieces.append("{}")
            arrays.append(cst.Arg(value))
    text = cst.SimpleString(json.dumps(" ".join(pieces), ensure_ascii=False))
    return cst.Call(func=cst.parse_expression("jax.debug.print"), args=[cst.Arg(text), *arrays])


# Elementwise float functions: on an array of any dtype they give the float dtype JAX
# promotes it to (the same for every such function).
_FLOAT_UFUNCS = frozenset({"sin", "cos", "tan", "exp", "log", "log1p", "expm1", "sqrt",
                           "tanh", "sinh", "cosh", "arctan", "log2", "log10"})
_FULL_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "prod", "std", "var", "any", "all"})
_FLOAT_REDUCTIONS = frozenset({"mean", "std", "var"})


def _full_reduction(call: cst.Call, walker) -> tuple | None:
    """(array name, reduction) for `x.sum()` / `np.sum(x)` with no other argument: 0-d."""
    if isinstance(call.func, cst.Attribute) and call.func.value not in walker.m.refs_by_node:
        if call.args or call.func.attr.value not in _FULL_REDUCTIONS:
            return None
        array = call.func.value
        name = call.func.attr.value
    else:
        ref = walker.m.refs_by_call.get(call)
        if ref is None or not ref.converted or len(call.args) != 1 or call.args[0].keyword \
                or call.args[0].star:
            return None
        name = ref.qualname.rsplit(".", 1)[-1]
        if ref.qualname not in {f"numpy.{n}" for n in _FULL_REDUCTIONS}:
            return None
        array = call.args[0].value
    if isinstance(array, cst.Name) and walker.env.get(array.value) == ARRAY:
        return array.value, name
    return None


def _like(node: cst.BaseExpression, walker) -> tuple | None:
    """(array name, "same") for the array itself, (array name, "float") for an elementwise
    float expression of it (float literals, `/`, float functions, its mean/std): such
    expressions all have the array's shape and the same dtype. None: not proven."""
    if isinstance(node, cst.Name):
        return (node.value, "same") if walker.env.get(node.value) == ARRAY else None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _like(node.expression, walker)
        return inner if inner is not None and inner[1] == "float" else None
    if isinstance(node, cst.Call):
        ref = walker.m.refs_by_call.get(node)
        if ref is not None and ref.converted and len(node.args) == 1 and not node.args[0].keyword \
                and ref.qualname.rsplit(".", 1)[-1] in _FLOAT_UFUNCS \
                and ref.qualname.startswith("numpy."):
            inner = _like(node.args[0].value, walker)
            return (inner[0], "float") if inner is not None else None
        return None
    if not isinstance(node, cst.BinaryOperation) or not isinstance(
            node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
        return None
    left, right = _like(node.left, walker), _like(node.right, walker)
    if left is not None and right is not None:
        return (left[0], "float") if left[0] == right[0] and "float" in (left[1], right[1]) \
            or (left[0] == right[0] and isinstance(node.operator, cst.Divide)) else None
    array, other = (left, node.right) if left is not None else (right, node.left)
    if array is None:
        return None
    if isinstance(other, cst.UnaryOperation) and isinstance(other.operator, cst.Minus):
        other = other.expression
    if isinstance(other, cst.Float):
        return array[0], "float"
    if isinstance(other, cst.Integer) and isinstance(node.operator, cst.Divide) and left is not None:
        return array[0], "float"
    if isinstance(other, cst.Call):
        reduced = _full_reduction(other, walker)
        if reduced is not None and reduced[0] == array[0] and (
                reduced[1] in _FLOAT_REDUCTIONS or isinstance(node.operator, cst.Divide)):
            return array[0], "float"
    return None


def _if_else_values(node: cst.If):
    """("return", None, a, b) or ("assign", name, a, b) for an if/else of single returns, or
    of single assignments to the same name; None for any other shape."""
    if node.orelse is None or not isinstance(node.orelse, cst.Else):
        return None
    first, second = _single(node.body), _single(node.orelse.body)
    if first is None or second is None:
        return None
    if isinstance(first, cst.Return) and isinstance(second, cst.Return) \
            and first.value is not None and second.value is not None:
        return "return", None, first.value, second.value
    if isinstance(first, cst.Assign) and isinstance(second, cst.Assign) \
            and len(first.targets) == len(second.targets) == 1 \
            and isinstance(first.targets[0].target, cst.Name) \
            and isinstance(second.targets[0].target, cst.Name) \
            and first.targets[0].target.value == second.targets[0].target.value:
        return "assign", first.targets[0].target.value, first.value, second.value
    return None


def _single(block) -> cst.BaseSmallStatement | None:
    statements = block.body
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine) \
            or len(statements[0].body) != 1:
        return None
    return statements[0].body[0]


def _where_statement(kind: str, target: str | None, jnp: str):
    def fix(node: cst.If) -> cst.SimpleStatementLine:
        _, _, first, second = _if_else_values(node)
        where = cst.parse_expression(f"{jnp}.where(c, a, b)").with_changes(
            args=[cst.Arg(node.test), cst.Arg(first), cst.Arg(second)])
        small = cst.Return(where) if kind == "return" else cst.Assign(
            [cst.AssignTarget(cst.Name(target))], where)
        return cst.SimpleStatementLine([small], leading_lines=node.leading_lines)
    return fix


# --- for over range() -> lax.fori_loop ---------------------------------------------------


class _Names(cst.CSTVisitor):
    """Every name an expression or statement mentions (attribute names and keywords aside)."""

    def __init__(self) -> None:
        self.names: set = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False


def _names_in(nodes) -> set:
    visitor = _Names()
    for node in nodes if isinstance(nodes, (list, tuple)) else [nodes]:
        node.visit(visitor)
    return visitor.names


def _stored_names(statements) -> set:
    names: set = set()
    for statement in statements:
        for node in walk(statement):
            if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
                _collect(node.target, names)
            elif isinstance(node, cst.For):
                _collect(node.target, names)
    return names


def _loop_stores(body) -> dict:
    """name -> how the loop body stores to it: "plain" (`x = ...`), "loop" (a for target),
    "subscript" (`x[...] = ...`: the .at[] rewrite keeps shape and dtype), "augmented"
    (`x += <Python value or array>`), "widening" too when the operand is not a literal."""
    stores: dict = {}

    def add(name: str, kind: str) -> None:
        stores.setdefault(name, set()).add(kind)

    def plain(target) -> None:
        if isinstance(target, cst.Name):
            add(target.value, "plain")
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                plain(element.value)
        elif isinstance(target, cst.StarredElement):
            plain(target.value)
        else:
            base = _store_base(target)
            if isinstance(base, cst.Name):
                add(base.value, "subscript")

    for node in walk(body):
        if isinstance(node, cst.AssignTarget):
            plain(node.target)
        elif isinstance(node, cst.AnnAssign):
            plain(node.target)
        elif isinstance(node, cst.AugAssign):
            if isinstance(node.target, cst.Name):
                add(node.target.value, "augmented")
                if not isinstance(node.value, (cst.Integer, cst.Float)):
                    add(node.target.value, "widening")
            else:
                plain(node.target)
        elif isinstance(node, cst.For):
            loop_targets: set = set()
            _collect(node.target, loop_targets)
            for name in loop_targets:
                add(name, "loop")
        elif isinstance(node, cst.NamedExpr):
            plain(node.target)
    return stores


def _assigned_first(body, name: str) -> bool:
    """Whether each iteration binds `name` (a plain `name = ...` at the body's top level,
    not reading it) before anything reads it: then it carries nothing between iterations."""
    statements = list(body.body)
    for index, statement in enumerate(statements):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                        small.targets[0].target, cst.Name) \
                        and small.targets[0].target.value == name:
                    return name not in _names_in(small.value)
                if name in _names_in(small):
                    return False
        elif name in _names_in(statement):
            # a temporary of a nested loop's iterations, read nowhere else in this body
            return isinstance(statement, cst.For) and statement.orelse is None \
                and name not in _names_in([statement.target, statement.iter]) \
                and _assigned_first(statement.body, name) \
                and name not in _names_in(statements[index + 1:])
    return False


def _loop_exit(body) -> str | None:
    own = scan._exits_in(body)  # those of loops nested in the body are theirs
    if own:
        return "break" if isinstance(own[0], cst.Break) else "continue"
    for node in walk(body):
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        if isinstance(node, cst.Return):
            return "return"
        if isinstance(node, (cst.Yield, cst.Await)):
            return "yield"
        if isinstance(node, cst.Raise):
            return "raise"
    return None


class _ForiLoopFix:
    """for i in range(a, b): <body>  ->
         def loop_body(i, x): <body>; return x      (several: carry, unpacked and packed)
         x = jax.lax.fori_loop(a, b, loop_body, x)"""

    body_fix = None  # scan.ContinueBody, for `if <test>: continue`
    placeholders = ()  # carried names first bound in the loop: None for the peeled iteration

    def __init__(self, carried: tuple, name: str, carry: str, peeled: bool) -> None:
        self.carried, self.name, self.carry, self.peeled = carried, name, carry, peeled

    def __call__(self, loop: cst.For):
        names = ", ".join(self.carried)
        several = len(self.carried) > 1
        unpack = [cst.parse_statement(f"{names} = {self.carry}\n")] if several else []
        body = loop.body if self.body_fix is None else self.body_fix(loop.body)
        function = loop_function(
            self.name, f"{loop.target.value}, {self.carry if several else names}", unpack,
            body, names, loop.leading_lines)
        bounds = [code_of(a.value) for a in loop.iter.args]
        start, stop = (["0"] + bounds)[-2:]
        init = f"({names})" if several else names
        if self.placeholders:
            values = ", ".join("None" if n in self.placeholders else n for n in self.carried)
            init = f"({values})" if several else values
        if not self.peeled:
            call = cst.parse_statement(
                f"{names} = jax.lax.fori_loop({start}, {stop}, {self.name}, {init})\n")
            return cst.FlattenSentinel([function, call])
        # the first iteration settles the carried types; the bounds are Python ints
        after = str(int(start) + 1) if start.isdigit() else f"{operand(start)} + 1"
        test = f"{operand(stop)} > {operand(start)}"
        call = cst.parse_statement(
            f"if {test}:\n    {names} = jax.lax.fori_loop({after}, {stop}, {self.name}, "
            f"{self.name}({start}, {init}))\n")
        return cst.FlattenSentinel([function, call])


# Elementwise NumPy functions: the result's shape is the broadcast of the arguments', its
# dtype a function of theirs that gives the same when applied again.
_ELEMENTWISE = _FLOAT_UFUNCS | frozenset({"abs", "absolute", "square", "maximum", "minimum",
                                          "negative", "fabs", "arcsin", "arccos", "arctanh",
                                          "arcsinh", "arccosh", "exp2", "cbrt"})


def _single_update(body, name: str) -> cst.BaseExpression | None:
    """The new value of `name` when the body stores it exactly once, by a top-level
    `name = value` or `name op= value` (as `name op value`); None otherwise."""
    found = None
    count = 0
    for node in walk(body):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)):
            target_names: set = set()
            _collect(_store_base(node.target), target_names)
            if name in target_names:
                count += 1
    for statement in body.body:
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
            small = statement.body[0]
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                    small.targets[0].target, cst.Name) and small.targets[0].target.value == name:
                found = small.value
            elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) \
                    and small.target.value == name:
                operator = type(small.operator).__name__.replace("Assign", "")
                if not hasattr(cst, operator):
                    return None
                found = cst.BinaryOperation(cst.Name(name), getattr(cst, operator)(), small.value)
    return found if count == 1 else None


def _statements_storing(body, name: str) -> list:
    statements = []
    for node in walk(body):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [
                node.target]
            names: set = set()
            for target in targets:
                _collect(_store_base(target), names)
            if name in names:
                statements.append(node)
    return statements


class _WhileLoopFix:
    """while <test>: <body>  ->
         def loop_cond(x): return <test>
         def loop_body(x): <body>; return x      (several: carry, unpacked and packed)
         x = jax.lax.while_loop(loop_cond, loop_body, x)"""

    widens = False  # a carried array is updated by `x += <array>` (dtype may promote)

    def __init__(self, carried: tuple, cond: str, name: str, carry: str) -> None:
        self.carried, self.cond, self.name, self.carry = carried, cond, name, carry

    def __call__(self, loop: cst.While):
        names = ", ".join(self.carried)
        several = len(self.carried) > 1
        parameter = self.carry if several else names
        unpack = [cst.parse_statement(f"{names} = {self.carry}\n")] if several else []
        test = cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(loop.test)])])
        cond_def = loop_function(self.cond, parameter, unpack, test, None, loop.leading_lines)
        body_def = loop_function(self.name, parameter, unpack, loop.body, names)
        init = f"({names})" if several else names
        call = cst.parse_statement(
            f"{names} = jax.lax.while_loop({self.cond}, {self.name}, {init})\n")
        return cst.FlattenSentinel([cond_def, body_def, call])
