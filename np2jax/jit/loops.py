"""Loops in the trace check: a `for` over range() that carries arrays becomes lax.fori_loop
(lax.scan when it collects a history, lax.while_loop with a `break`), a `while` on a 0-d
array lax.while_loop; or the reason it stays a Python loop (a mixin of
np2jax.jit.traceable.TraceChecker; the code written: np2jax.jit.loop_rewrites)."""

from __future__ import annotations

import libcst as cst

from np2jax.jit.checker import Stop, TraceCheckerBase
from np2jax.jit.lattice import ARRAY, LIST, MAY_BE_ARRAY, MIXED, PYTHON, STATIC, UNKNOWN, join
from np2jax.jit.loop_rewrites import (BreakLoopFix, ContinueBody, ForiLoopFix, ScanFix,
                                      WhileLoopFix)
from np2jax.jit.names import (assigned_first, loop_stores, names_mentioned, names_stored_in,
                              single_update, statements_storing)
from np2jax.jit.patterns import exit_guard, exit_of, loop_exit
from np2jax.jit.proofs import FLOAT_UFUNCS, scalar_test
from np2jax.jit.scan import names_outside_guards, rebound_as_initialized
from np2jax.jit.statements import view_carry_in
from np2jax.jit.verdicts import LoopVerdict, Rewrite, RewriteKind
from np2jax.analysis.dtypes import promote
from np2jax.analysis.effects import parameter_for
from np2jax.syntax import code_of
from np2jax.syntax.walk import walk

# A loop left a Python loop is unrolled while compiling: compile time grows faster than the
# count (a 12-line body: 2.5 s at 25 iterations, 23 s at 100 on a 2-core machine). Above
# this literal count, or one the module's calls give the parameter it reads, the function
# stays eager.
UNROLL_LIMIT = 64
# A `for` over range() with at most this many iterations (a literal count) stays a Python
# loop, unrolled while tracing (cheap to compile, and XLA fuses across the iterations);
# other counts become lax.fori_loop when the loop allows it.
FORI_MIN_COUNT = 16
# Elementwise NumPy functions: the result's shape is the broadcast of the arguments', its
# dtype a function of theirs that gives the same when applied again.
ELEMENTWISE = FLOAT_UFUNCS | frozenset({"abs", "absolute", "square", "maximum", "minimum",
                                        "negative", "fabs", "arcsin", "arccos", "arctanh",
                                        "arcsinh", "arccosh", "exp2", "cbrt"})


class LoopChecks(TraceCheckerBase):
    """`for` and `while` loops: their verdicts and rewrites."""

    def loop(self, node: cst.For) -> None:
        iterable = node.iter
        if isinstance(iterable, cst.Call) and self.is_builtin(iterable.func, "range"):
            for arg in iterable.args:
                self.need_static(arg.value, "the range bound")
            count = _literal_count(iterable)
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
            elif count is None and verdict is not None and verdict.fix is None:
                given = self._largest_count_given(iterable)
                if given is not None and given[0] > UNROLL_LIMIT:
                    self.refuse(node, f"the loop over `{code_of(iterable)}` stays a Python loop "
                                      f"(NJ506: {verdict.reason}), which would unroll "
                                      f"{given[0]} times while compiling (`{given[1]}`)")
            kind = STATIC
        else:
            kind = self.expr(iterable)
            if kind == ARRAY:
                pass  # iterating an array of known shape: one slice per row, as eagerly
            elif kind not in PYTHON:
                self.refuse(iterable, f"the loop runs over `{code_of(iterable)}`, whose length "
                                      "is not known while compiling")
                kind = UNKNOWN
            else:
                kind = STATIC if kind == STATIC else UNKNOWN
        self.bind(node.target, kind, node)
        self.block(node.body)
        if node.orelse is not None:
            self.block(node.orelse.body)

    def _largest_count_given(self, iterable: cst.Call) -> tuple[int, str] | None:
        """(count, call) for the largest integer literal the module's calls of this function
        give the parameter that bounds `range(n)` (`boris(x, v, 0.05, 400)`), or None."""
        args = iterable.args
        bound = args[0].value if len(args) == 1 else args[1].value if len(args) > 1 else None
        if not isinstance(bound, cst.Name) or self.function is None:
            return None
        found = None
        for call in self.m.analysis.nodes(cst.Call):
            if self.m.analysis.dataflow.module_function(call) is not self.function:
                continue
            for arg in call.args:
                param = parameter_for(self.function, call, arg)
                if param is not None and param.name.value == bound.value \
                        and isinstance(arg.value, cst.Integer) \
                        and (found is None or arg.value.evaluated_value > found[0]):
                    found = (arg.value.evaluated_value, code_of(call))
        return found

    def bind(self, target, kind: str, statement) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = join(self.env.get(target.value), kind)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.bind(element.value, kind if kind != LIST else UNKNOWN, statement)
        else:
            self.refuse(target, f"the loop target `{code_of(target)}` is not a plain name")

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
            verdict.kind = RewriteKind.SCAN
        verdict.reason = self._fori_refusal(node, top, verdict)
        if not verdict.reason and verdict.guard is not None:
            self.exit_guards.add(verdict.guard)  # the flag takes the test: it may be traced
        kept = {name: self.fresh_name(f"{name}_kept") for name in verdict.carried} \
            if verdict.exit else {}
        if not verdict.reason and verdict.exit == "break":
            verdict.fix = BreakLoopFix(verdict.carried, self.fresh_name("loop_cond"),
                                       self.fresh_name("loop_body"), self.fresh_name("carry"),
                                       self.fresh_name("done"), kept, self.m.analysis.jnp_alias)
        elif not verdict.reason and verdict.histories:
            verdict.fix = ScanFix(
                verdict.carried, list(verdict.histories), self.fresh_name("loop_body"),
                self.fresh_name("carry"),
                {h.name: self.fresh_name(f"{h.name}_item") for h in verdict.histories},
                {h.name: self.fresh_name(f"{h.name}_steps") if h.initial else h.name
                 for h in verdict.histories}, self.m.analysis.jnp_alias)
        elif not verdict.reason:
            verdict.fix = ForiLoopFix(verdict.carried, self.fresh_name("loop_body"),
                                      self.fresh_name("carry"), verdict.peeled)
        if verdict.fix is not None:
            verdict.fix.placeholders = verdict.placeholders
            verdict.fix.peeled = verdict.peeled
        if not verdict.reason and verdict.exit == "continue":
            verdict.fix.body_fix = ContinueBody(verdict.carried, self.fresh_name("skipped"),
                                                kept, self.m.analysis.jnp_alias)
        return verdict

    def _fori_refusal(self, node: cst.For, top: list, verdict: LoopVerdict) -> str:
        args = node.iter.args
        if len(args) not in (1, 2) or any(a.keyword is not None or a.star for a in args):
            return "its range has a step (fori_loop counts by one)"
        if node.orelse is not None:
            return "it has an `else` clause"
        if not isinstance(node.target, cst.Name):
            return "its target is not a plain name"
        exit_ = loop_exit(node.body)
        if exit_ in ("break", "continue"):
            guard, why = exit_guard(node.body)
            if guard is None:
                return f"{why} (a flag replaces only that form)"
            verdict.exit, verdict.guard = exit_of(guard), guard
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
        carried_too = view_carry_in(self.m.analysis, node.body)
        if carried_too:
            return f"{carried_too}, which lax.fori_loop would not carry"
        counter = node.target.value
        index = next(i for i, s in enumerate(top) if s is node)
        read_after = names_mentioned(top[index + 1:])
        bound_before = names_stored_in(top[:index]) | set(self.params)
        stores = loop_stores(node.body)
        if counter in read_after:
            return f"the counter `{counter}` is read after the loop, which fori_loop does not set"
        if counter in stores:
            return f"it assigns to its counter `{counter}`"
        carried, rebound, placeholders = [], [], []
        for name, kinds in stores.items():
            if name not in read_after and (kinds == {"loop"} or assigned_first(node.body, name)):
                continue  # a temporary of one iteration (an inner loop's counter included)
            carried.append(name)
            if name not in bound_before:
                if assigned_first(node.body, name) and self.env.get(name) == ARRAY:
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
            if kinds == {"plain"} and kind == ARRAY and rebound_as_initialized(
                    node, top, name, stores, counter):
                continue  # the same expression as before the loop: the same shape and dtype
            if kinds & {"plain", "loop"} or kind == MIXED:
                rebound.append(name)
            else:
                verdict.widens |= "widening" in kinds and self._may_widen(node.body, name)
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
        if placeholders and counter in names_outside_guards(node.body, verdict.histories):
            return (f"`{placeholders[0]}` is first bound inside it and read after it, and it "
                    f"reads its counter `{counter}` (the first iteration, run before the "
                    "compiled loop, would see a Python int)")
        if rebound:
            why = self._peel_refusal(node, counter, carried, rebound, stores, verdict.histories)
            if why:
                return why
        verdict.peeled = bool(rebound or placeholders)
        verdict.placeholders = tuple(placeholders)
        probe = type(self)(self.m, self.function, self.params, check=True)
        probe.env, probe.bound = dict(self.env), self.bound
        probe.env[counter] = ARRAY
        probe.record = probe.probing = True
        probe.counter = counter
        if verdict.guard is not None:
            probe.exit_guards.add(verdict.guard)
        try:
            probe.block(node.body)
        except Stop:
            pass
        if probe.violation is not None:
            return (f"with the counter `{counter}` traced (an array, as fori_loop passes it), "
                    f"{probe.violation.reason}")
        verdict.carried = tuple(carried)
        return ""

    def _peel_refusal(self, node: cst.For, counter: str, carried: list, rebound: list,
                      stores: dict, histories: tuple = ()) -> str:
        """A carried value rebound each iteration (`x = r * x * (1 - x)`, or a Python number
        `t = 0.0` then `t += a`) may change its shape or dtype in the first iteration only
        when its new value is elementwise in itself and in values the loop does not change:
        broadcasting and type promotion give the same result when applied again. The first
        iteration is then run before fori_loop (peeled), the others inside it."""
        changing = set(stores) | {counter}
        if counter in names_outside_guards(node.body, histories) \
                and not _counter_only_indexes(node.body, counter):
            return (f"it rebinds the carried `{rebound[0]}` and reads its counter "
                    f"`{counter}` (the first iteration, run before fori_loop, would see a "
                    "Python int)")
        for name in rebound:
            update = single_update(node.body, name)
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
            for statement in statements_storing(node.body, name):
                if _stores_into_elements(statement, name):
                    continue  # `path[i] = x`: `.at[i].set(x)` keeps `path`'s shape and dtype
                if names_mentioned(statement) & set(rebound):
                    return (f"the update of `{name}` reads `{', '.join(rebound)}`, whose type "
                            "is settled only after the first iteration")
        return ""

    def elementwise(self, node: cst.BaseExpression, name: str, changing: set) -> bool:
        if not (names_mentioned(node) & changing):
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
                and ref.qualname.rsplit(".", 1)[-1] in ELEMENTWISE \
                and all(a.keyword is None and not a.star
                        and self.elementwise(a.value, name, changing) for a in node.args)
        return False

    def array_while(self, node: cst.While) -> bool:
        """`while <0-d array test>:` at the top of the body, carrying arrays updated in place:
        lax.while_loop, which the compiled function then needs."""
        if self.expr(node.test) not in MAY_BE_ARRAY:
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
        fix = WhileLoopFix(tuple(carried), self.fresh_name("loop_cond"),
                           self.fresh_name("loop_body"), self.fresh_name("carry"))
        fix.widens = bool(widens)
        self.rewrites.append(Rewrite(RewriteKind.WHILE_LOOP, node, fix,
                                     f"while {code_of(node.test)}"))
        self.requires.append(node)  # without it the function does not compile
        return True

    def _while_refusal(self, node: cst.While, carried: list, widens: list) -> str:
        top = self.function.body.body
        if not any(s is node for s in top):
            return "it is nested in another statement"
        if node.orelse is not None:
            return "it has an `else` clause"
        exit_ = loop_exit(node.body)
        if exit_ is not None:
            return f"`{exit_}` inside it"
        carried_too = view_carry_in(self.m.analysis, node.body)
        if carried_too:
            return f"{carried_too}, which lax.while_loop would not carry"
        if not scalar_test(self, node.test):
            return ("its test is not provably one value (a comparison of full reductions such "
                    "as `x.sum()`, numbers and static values, or `x.any()`/`x.all()`)")
        index = next(i for i, s in enumerate(top) if s is node)
        read_again = names_mentioned(top[index + 1:]) | names_mentioned(node.test)
        bound_before = names_stored_in(top[:index]) | set(self.params)
        for name, kinds in loop_stores(node.body).items():
            if name not in read_again and (kinds == {"loop"} or assigned_first(node.body, name)):
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
            if "widening" in kinds and self._may_widen(node.body, name):
                widens.append(name)
        if not carried:
            return "it changes no array"
        return ""


    def _may_widen(self, body, name: str) -> bool:
        """Whether an update `name op= value` in the loop may change the carried array's dtype
        (float32 + float64 makes float64, which a compiled loop refuses): unless the dtypes of
        both sides are known and NumPy's promotion keeps the target's (np2jax.analysis.dtypes)."""
        dtype_of = self.m.analysis.dtypes.dtype_of
        for node in walk(body):
            if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name) \
                    and node.target.value == name:
                target = dtype_of(node.target)
                if target in (None, "int", "float", "complex") \
                        or promote(target, dtype_of(node.value)) != target:
                    return True
        return False

def _stores_into_elements(statement, name: str) -> bool:
    """`name[...] = v` or `name[...] += v`: a store into elements of the array `name`."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        statement = statement.body[0]
    targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) \
        else [statement.target] if isinstance(statement, cst.AugAssign) else []
    return bool(targets) and all(isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name)
                                 and t.value.value == name for t in targets)


def _counter_only_indexes(body: cst.CSTNode, counter: str) -> bool:
    """Whether every read of the loop counter in `body` is a whole index (`xs[i] = x`,
    `a[i, :]`): a Python int there (the peeled first iteration) and the traced one give the
    same element, so peeling the first iteration changes nothing."""
    indexes = set()
    for node in walk(body):
        if isinstance(node, cst.SubscriptElement) and isinstance(node.slice, cst.Index) \
                and isinstance(node.slice.value, cst.Name) and node.slice.value.value == counter:
            indexes.add(id(node.slice.value))
    reads = [n for n in walk(body) if isinstance(n, cst.Name) and n.value == counter]
    return bool(reads) and all(id(n) in indexes for n in reads)


def _literal_count(call: cst.Call) -> int | None:
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
