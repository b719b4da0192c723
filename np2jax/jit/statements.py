"""Statements in the trace check: assignments and stores, returns, `if`s (on Python values,
or on arrays: np2jax.jit.branches), prints, list appends that become a lax.scan history
(a mixin of np2jax.jit.traceable.TraceChecker; loops: np2jax.jit.loops)."""

from __future__ import annotations

import libcst as cst

from np2jax.jit.branches import array_branches, where_if
from np2jax.jit.checker import Stop, TraceCheckerBase, string_test
from np2jax.jit.lattice import ARRAY, MAY_BE_ARRAY, MIXED, STATIC, UNKNOWN, arith, join, pytree
from np2jax.jit.proofs import zero_d_test
from np2jax.syntax import code_of
from np2jax.syntax.walk import children, walk


# Exceptions a function raises under Python control flow, with Python-valued messages.
BUILTIN_EXCEPTIONS = frozenset({
    "ValueError", "TypeError", "IndexError", "KeyError", "RuntimeError", "NotImplementedError",
    "ArithmeticError", "ZeroDivisionError", "AssertionError", "Exception",
})


class StatementChecks(TraceCheckerBase):
    """Blocks and statements: what they bind, store and return."""

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
                if self.expr(node.test) in MAY_BE_ARRAY and not zero_d_test(self, node.test):
                    self.refuse(node.test, f"the exit test `{code_of(node.test)}` is not provably "
                                           "one value")
            elif (string_test(node.test) and self.static_cause(node.test, "the `if` test")) \
                    or not where_if(self, node):
                try:
                    if array_branches(self, node):  # lax.cond, lax.switch
                        return
                except Stop:  # no rewrite of an array test: a static parameter may do
                    self.static_cause(node.test, "the `if` test")
                    raise
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
            self.static_cause(node.test, "the `while` test")
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
            for child in children(node):  # not compiled: still find its calls and names
                if isinstance(child, (cst.IndentedBlock, cst.BaseSuite)):
                    self.block(child)
                elif isinstance(child, (cst.ExceptHandler, cst.Finally, cst.Else)):
                    self.block(child.body)
        else:
            self.refuse(node, f"it uses `{type(node).__name__}`, which the analysis does not follow")

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
                if target.value in self.params and old in MAY_BE_ARRAY:
                    self.refuse(node, f"it changes its argument `{target.value}` in place")
                elif old in MAY_BE_ARRAY and (shared := self.m.shared_update(node)) is not None:
                    # `arr = np.asarray(data); arr -= m`: NumPy's update reaches `data` too
                    self.refuse(node, f"`{code_of(node).strip()}` changes in place an array "
                                      f"another name may hold ({shared})")
                self.carried_in_control_flow(target, node)
                self.env[target.value] = join(old, arith(old, value))
            else:
                self.store(target, value, node, line)
        elif isinstance(node, cst.Return):
            kind = self.returned(node.value) if node.value is not None else STATIC
            self.returns.append((node, kind))
        elif isinstance(node, cst.Expr):
            value = node.value
            if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
                return  # a docstring
            if isinstance(value, cst.Call) and self.is_builtin(value.func, "print"):
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
            exc = node.exc
            call = exc if isinstance(exc, cst.Call) else None
            name = call.func if call is not None else exc
            if isinstance(name, cst.Name) and name.value in BUILTIN_EXCEPTIONS \
                    and self.is_builtin(name, name.value) and node.cause is None:
                # raised while tracing, under Python control flow: the caller gets the
                # same exception as in NumPy (an `if` on an array with a raise is refused)
                for arg in call.args if call is not None else ():
                    self.need_static(arg.value, "the message of the exception")
            elif exc is not None:
                self.expr(exc)
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
            return pytree(kinds)
        if isinstance(value, cst.Dict):
            kinds = []
            for element in value.elements:
                if not isinstance(element, cst.DictElement) or not isinstance(
                        element.key, (cst.SimpleString, cst.Integer)):
                    return UNKNOWN
                kinds.append(self.returned(element.value))
            return pytree(kinds) if kinds else UNKNOWN
        if isinstance(value, cst.Name) and value.value == "None":
            return STATIC
        return self.expr(value)

    def store(self, target, value: str, statement, line) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = join(self.env.get(target.value), value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            element_kind = ARRAY if value in MAY_BE_ARRAY else (STATIC if value == STATIC else UNKNOWN)
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

    def carried_in_control_flow(self, target: cst.Name, statement) -> None:
        """A write through a view (or into the base of views) rebinds other names too
        (np2jax.analysis.views): inside a loop or a branch that becomes a lax form
        (lax.fori_loop, lax.while_loop, lax.cond, jnp.where), which would not carry them,
        the function stays eager. A Python loop (unrolled while compiling) or an `if` on a
        Python value carries them as the eager code does. Loops decline their lax form for
        such a write beforehand (view_carry_in), so that the loop stays a Python loop."""
        why = view_carry(self.m.analysis, target, statement)
        if not why:
            return
        traced = {r.node for r in self.rewrites} | {
            loop.node for loop in self.loops if loop.fix is not None}
        parent = self.m.analysis.parents.get(statement)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
            if parent in traced:
                self.refuse(statement, f"{why}, which the loop and branch forms of --jit do "
                                       "not carry")
                return
            parent = self.m.analysis.parents.get(parent)

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
        self.carried_in_control_flow(base, statement)
        if self.record:
            self.requires.append(plan.fix[0])


def view_carry(analysis, target, statement) -> str:
    """Why a write at `statement` into `target` rebinds other names too (a view and its
    base, np2jax.analysis.views), or ""."""
    if not isinstance(target, cst.Name):
        return ""
    carried = analysis.views.carry(target, statement)
    if carried is None or carried.reason is not None or not (carried.path or carried.others):
        return ""
    names = [v.base.value for v in carried.path] + [v.name for v in carried.others]
    return (f"the write into `{target.value}` also gives "
            f"{', '.join(f'`{n}`' for n in names)} new values (views)")


def view_carry_in(analysis, body) -> str:
    """The first write in `body` that rebinds other names too (view_carry), or "": the
    writes carried_in_control_flow judges, `v op= w` and `v[i] = w` / `v[i] op= w` (a plain
    `v = ...` rebinds `v` alone)."""
    for node in walk(body):
        if isinstance(node, cst.AugAssign):
            target = node.target
        elif isinstance(node, cst.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0].target, cst.Subscript):
            target = node.targets[0].target
        else:
            continue
        if isinstance(target, cst.Subscript):
            target = target.value
        why = view_carry(analysis, target, node)
        if why:
            return f"{why} on line {analysis.position(node)[0]}"
    return ""
