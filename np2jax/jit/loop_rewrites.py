"""The compiled loops --jit writes: `for` over range() as lax.fori_loop, lax.scan (a list
collecting a history) or, with a `break`, lax.while_loop; `while` on a 0-d array as
lax.while_loop; `if <test>: continue` as a flag. Each is a fix: a callable from the loop, as
converted so far, to its replacement (np2jax.jit.loops decides which loop gets which; the
lax.scan of a history: np2jax.jit.scan's docstring)."""

from __future__ import annotations

import libcst as cst

from np2jax.jit.patterns import guard_index, int_literal, only_small, parenthesized
from np2jax.jit.rewrites import loop_function, operand
from np2jax.jit.scan import History
from np2jax.syntax import code_of


class ForiLoopFix:
    """for i in range(a, b): <body>  ->
         def loop_body(i, x): <body>; return x      (several: carry, unpacked and packed)
         x = jax.lax.fori_loop(a, b, loop_body, x)"""

    body_fix = None  # ContinueBody, for `if <test>: continue`
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


class WhileLoopFix:
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


# --- lax.scan (np2jax.jit.scan finds the histories) ----------------------------------------


class _ItemAssignments(cst.CSTTransformer):
    """`h.append(v)` -> `h_item = v`; `if <guard>: h.append(v)` -> `h_item = lax.cond(...)`."""

    def __init__(self, histories: list, items: dict, jnp: str) -> None:
        self.histories, self.items, self.jnp = histories, items, jnp

    def _history(self, call) -> History | None:
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
                and call.func.attr.value == "append" and isinstance(call.func.value, cst.Name):
            return next((h for h in self.histories if h.name == call.func.value.value), None)
        return None

    def leave_If(self, original, updated):
        inner = updated.body.body
        small = inner[0] if isinstance(updated.body, cst.SimpleStatementSuite) else (
            only_small(inner[0]) if len(inner) == 1 else None)
        if len(inner) != 1 or not isinstance(small, cst.Expr):
            return updated
        history = self._history(small.value)
        if history is None or history.guard is None:
            return updated
        value = small.value.args[0].value
        cond = cst.parse_expression(
            f"jax.lax.cond(test, lambda: value, lambda: {self.jnp}.zeros_like(value))")
        cond = cond.with_changes(args=[
            cst.Arg(updated.test),
            cond.args[1].with_changes(value=cond.args[1].value.with_changes(body=value)),
            cond.args[2].with_changes(value=cond.args[2].value.with_changes(
                body=cond.args[2].value.body.with_changes(args=[cst.Arg(value)])))])
        return cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(self.items[history.name]))], cond)],
            leading_lines=updated.leading_lines)

    def leave_Expr(self, original, updated):
        history = self._history(updated.value)
        if history is None or history.guard is not None:
            return updated
        return cst.Assign([cst.AssignTarget(cst.Name(self.items[history.name]))],
                          updated.value.args[0].value)


class ScanFix:
    """for i in range(a, b): <body appending to h>  ->
         def loop_body(x, i): <body, `h_item = v` for `h.append(v)`>; return x, h_item
         x, h = jax.lax.scan(loop_body, x, jnp.arange(a, b))
       (several carried: a tuple; none: None; several histories: a tuple of items)."""

    body_fix = None  # ContinueBody, for `if <test>: continue`
    peeled = False  # the first iteration runs before the scan (it binds or settles values)
    placeholders = ()  # carried names first bound in the loop: None for that iteration

    def __init__(self, carried: tuple, histories: list, name: str, carry: str, items: dict,
                 scanned: dict, jnp: str) -> None:
        self.carried, self.histories, self.name, self.carry = carried, histories, name, carry
        self.items, self.scanned, self.jnp = items, scanned, jnp

    def __call__(self, loop: cst.For):
        names = ", ".join(self.carried)
        several = len(self.carried) > 1
        if not self.carried:
            parameter, init, target, returned = self.carry, "None", "_", "None"
        elif several:
            parameter, init, target, returned = self.carry, f"({names})", f"({names})", f"({names})"
        else:
            parameter = init = target = returned = names
        unpack = [cst.parse_statement(f"{names} = {self.carry}\n")] if several else []
        items = [self.items[h.name] for h in self.histories]
        outputs = items[0] if len(items) == 1 else f"({', '.join(items)})"
        body = loop.body.visit(_ItemAssignments(self.histories, self.items, self.jnp))
        if self.body_fix is not None:
            body = self.body_fix(body)
        function = loop_function(self.name, f"{parameter}, {loop.target.value}", unpack, body,
                                  f"{returned}, {outputs}", loop.leading_lines)
        bounds = [code_of(a.value) for a in loop.iter.args]
        scanned = [self.scanned[h.name] for h in self.histories]
        results = scanned[0] if len(scanned) == 1 else f"({', '.join(scanned)})"
        start = loop.iter.args[0].value if len(loop.iter.args) == 2 else None
        if not self.peeled:
            lines = [f"{target}, {results} = jax.lax.scan({self.name}, {init}, "
                     f"{self.jnp}.arange({', '.join(bounds)}))"]
            for history in self.histories:
                lines.extend(self._after(history, start))
            statements = [cst.parse_statement(line + "\n") for line in lines]
            return cst.FlattenSentinel([function, *statements])
        # the first iteration binds (or settles the types of) what the scan then carries
        first, stop = (["0"] + bounds)[-2:]
        if self.placeholders:
            values = [("None" if n in self.placeholders else n) for n in self.carried]
            init = f"({', '.join(values)})" if several else values[0]
        after = str(int(first) + 1) if first.isdigit() else f"{operand(first)} + 1"
        lines = [f"{target}, {outputs} = {self.name}({init}, {first})",
                 f"{target}, {results} = jax.lax.scan({self.name}, {returned}, "
                 f"{self.jnp}.arange({after}, {stop}))"]
        for history in self.histories:
            scanned = self.scanned[history.name]
            item = self.items[history.name]
            lines.append(f"{scanned} = {self.jnp}.concatenate([{self.jnp}.asarray({item})[None], "
                         f"{scanned}])")
            lines.extend(self._after(history, start))
        block = "".join(f"    {line}\n" for line in lines)
        test = f"{operand(stop)} > {operand(first)}"
        return cst.FlattenSentinel([function, cst.parse_statement(f"if {test}:\n{block}")])

    def _after(self, history: History, start) -> list:
        name, scanned = history.name, self.scanned[history.name]
        lines = []
        if history.guard is not None:
            recorded = f"{scanned}[{recorded_slice(history, start)}]"
            if scanned == name:
                lines.append(f"{name} = {recorded}")
                recorded = name
        else:
            recorded = scanned
        if history.initial:
            lines.append(f"{name} = {self.jnp}.concatenate([{self.jnp}.stack({name}), {recorded}])")
        elif not history.zero_d:
            # np.array([]) is 1-D: an empty stack of arrays has their shape after its 0
            lines.append(f"{name} = {name} if len({name}) else {self.jnp}.array([])")
        if history.returned:
            lines.append(f"{name} = list({name})")
        return lines


def recorded_slice(history: History, start) -> str:
    """The slice of the per-iteration outputs holding the iterations `counter % k == 0` (of
    `(counter + c) % k == 0`) records: from the first such iteration, every |k|."""
    k = history.step
    shift = [n for n in (start, history.offset) if n is not None]
    literal_k = isinstance(k, cst.Integer) or (
        isinstance(k, cst.UnaryOperation) and isinstance(k.operator, cst.Minus)
        and isinstance(k.expression, cst.Integer))
    stride = str(abs(int(code_of(k)))) if literal_k else f"abs({code_of(k)})"
    if not shift:
        first = ""
    elif literal_k and all(int_literal(n) is not None for n in shift):
        first = str(-sum(int_literal(n) for n in shift) % int(stride))
        first = "" if first == "0" else first
    elif all(int_literal(n) is not None for n in shift):
        first = f"{-sum(int_literal(n) for n in shift)} % {stride}"
    else:
        total = " + ".join(code_of(parenthesized(n)) for n in shift)
        first = f"-({total}) % {stride}"
    return f"{first}::{stride}"


# --- break / continue: a flag ------------------------------------------------------------


def guarded_statements(body, carried: tuple, flag: str, kept: dict, jnp: str) -> list:
    """The body's statements with `if <test>: break/continue` replaced by a flag: the state at
    that point is kept, the rest of the body runs, and each carried value is then put back
    to the kept one where the flag holds (`x = jnp.where(flag, x_kept, x)`)."""
    statements = list(body.body) if isinstance(body, cst.IndentedBlock) else [
        cst.SimpleStatementLine(body.body)]
    index = guard_index(cst.IndentedBlock(statements))
    guard = statements[index]
    flag_line = cst.SimpleStatementLine(
        [cst.Assign([cst.AssignTarget(cst.Name(flag))], guard.test)],
        leading_lines=guard.leading_lines)
    names = list(carried)
    keep = []
    if names:
        keep = [cst.parse_statement(f"{', '.join(kept[n] for n in names)} = {', '.join(names)}\n")]
    restore = [cst.parse_statement(f"{n} = {jnp}.where({flag}, {kept[n]}, {n})\n") for n in names]
    return [*statements[:index], flag_line, *keep, *statements[index + 1:], *restore]


class BreakLoopFix:
    """for i in range(a, b): <pre>; if <test>: break; <rest>  ->
         def loop_cond(carry): i, done, x = carry; return (i < b) & ~done
         def loop_body(carry):
             i, done, x = carry
             <pre>; done = <test>; x_kept = x; <rest>; x = jnp.where(done, x_kept, x)
             return i + 1, done, x
         _, _, x = jax.lax.while_loop(loop_cond, loop_body, (a, False, x))"""

    def __init__(self, carried: tuple, cond: str, name: str, carry: str, flag: str, kept: dict,
                 jnp: str) -> None:
        self.carried, self.cond, self.name, self.carry = carried, cond, name, carry
        self.flag, self.kept, self.jnp = flag, kept, jnp

    def __call__(self, loop: cst.For):
        counter = loop.target.value
        names = ", ".join((counter, self.flag, *self.carried))
        unpack = [cst.parse_statement(f"{names} = {self.carry}\n")]
        bounds = [code_of(a.value) for a in loop.iter.args]
        start, stop = (["0"] + bounds)[-2:]
        test = cst.IndentedBlock([cst.parse_statement(
            f"return {self.jnp}.logical_and({counter} < {stop}, "
            f"{self.jnp}.logical_not({self.flag}))\n")])
        cond_def = loop_function(self.cond, self.carry, unpack, test, None, loop.leading_lines)
        body = cst.IndentedBlock(guarded_statements(loop.body, self.carried, self.flag,
                                                    self.kept, self.jnp))
        returned = ", ".join((f"{counter} + 1", self.flag, *self.carried))
        body_def = loop_function(self.name, self.carry, unpack, body, returned)
        targets = ", ".join(("_", "_", *self.carried))
        init = ", ".join((start, "False", *self.carried))
        call = cst.parse_statement(
            f"{targets} = jax.lax.while_loop({self.cond}, {self.name}, ({init}))\n")
        return cst.FlattenSentinel([cond_def, body_def, call])


class ContinueBody:
    """`if <test>: continue` in a fori_loop/scan body -> the rest of the body runs and its
    effect on the carried values is dropped where the test holds (jnp.where)."""

    def __init__(self, carried: tuple, flag: str, kept: dict, jnp: str) -> None:
        self.carried, self.flag, self.kept, self.jnp = carried, flag, kept, jnp

    def __call__(self, body):
        return cst.IndentedBlock(guarded_statements(body, self.carried, self.flag, self.kept,
                                                    self.jnp))
