"""--jit: a `for ... in range(...)` loop that collects a history becomes `jax.lax.scan` (NJ510).

    history = []                              history = []
    for step in range(n):                     def loop_body(u, step):
        u = <update of u>                         u = <update of u>
        history.append(u.sum())       ->          history_item = u.sum()
    out = np.array(history)                       return u, history_item
                                              u, history = jax.lax.scan(loop_body, u, jnp.arange(n))
                                              out = jnp.array(history)

A list is such a history when (find_histories): it is made by `h = [...]` (empty, or a
literal of arrays) at the top level of the function before the loop and mentioned nowhere
else in the function but there, in one `h.append(v)` at the top level of the loop body (or
as the only statement of an `if <counter> % k == 0:` there), and after the loop only where a
stacked array gives what the list gives: the array argument of a NumPy function
(`np.array(h)`, `np.stack(h)`, `np.mean(h)`), `len(h)`, or returned (then as `list(h)`).
`v` must be a new value each iteration (arithmetic, a reduction, a copy, a function of this
file returning such values): a list holding an array that the program goes on to change in
place (`h.append(u)`, `h.append(u[0])`) sees those changes, a stacked array does not.

Everything else about the loop (what it carries, that its body traces with the counter as
an array) is decided as for lax.fori_loop (np2jax.jit.traceable, NJ506).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from np2jax.syntax import code_of
from np2jax.jit.syntax import loop_function, operand, walk

# Methods and NumPy functions whose result may share memory with an argument: a history
# entry made by them would see later in-place changes of that argument.
VIEW_METHODS = frozenset({"reshape", "ravel", "transpose", "squeeze", "swapaxes", "diagonal",
                          "view", "T", "mT", "real", "imag"})
VIEW_FUNCTIONS = frozenset({
    "asarray", "asanyarray", "ascontiguousarray", "reshape", "ravel", "transpose", "squeeze",
    "expand_dims", "moveaxis", "swapaxes", "rollaxis", "broadcast_to", "broadcast_arrays",
    "atleast_1d", "atleast_2d", "atleast_3d", "diagonal", "diag", "real", "imag", "flip",
    "fliplr", "flipud", "rot90", "split", "array_split", "hsplit", "vsplit", "dsplit",
    "unstack", "matrix_transpose", "permute_dims", "require",
})
# Reductions that give one number (0-d) when called without arguments.
FULL_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "prod", "std", "var", "any", "all",
                             "ptp", "argmax", "argmin"})


@dataclass
class History:
    """A list the loop `loop` collects values in, turned into the stacked scan output."""

    name: str
    loop: cst.For
    init: cst.Assign  # `name = [...]` before the loop
    initial: int  # how many elements the list starts with
    append: cst.Call  # `name.append(value)` in the loop body
    guard: cst.If | None = None  # `if <counter> % k == 0:` around the append
    step: cst.BaseExpression | None = None  # k of the guard
    offset: cst.BaseExpression | None = None  # c of `(counter + c) % k == 0` (negated for -)
    returned: bool = False  # the list is returned as a list
    zero_d: bool = False  # the value is provably 0-d


@dataclass
class Histories:
    """The histories of one function: by loop, by append call, and the lists that are not."""

    by_loop: dict = field(default_factory=dict)  # For -> [History]
    by_name: dict = field(default_factory=dict)  # name -> History
    refused: dict = field(default_factory=dict)  # name -> why the list is not a history

    def of_append(self, call: cst.Call) -> History | None:
        if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name):
            history = self.by_name.get(call.func.value.value)
            if history is not None and history.append is call:
                return history
        return None

    def of_init(self, assign: cst.Assign) -> History | None:
        for history in self.by_name.values():
            if history.init is assign:
                return history
        return None

    def of_guard(self, node: cst.If) -> History | None:
        for history in self.by_name.values():
            if history.guard is node:
                return history
        return None


def _mentions(node, name: str) -> list:
    return [n for n in walk(node) if isinstance(n, cst.Name) and n.value == name]


def _append_calls(body) -> dict:
    """name -> the `name.append(...)` calls in a loop body."""
    calls: dict = {}
    for node in walk(body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value == "append" and isinstance(node.func.value, cst.Name):
            calls.setdefault(node.func.value.value, []).append(node)
    return calls


def _is_range_loop(node) -> bool:
    return isinstance(node, cst.For) and isinstance(node.iter, cst.Call) \
        and isinstance(node.iter.func, cst.Name) and node.iter.func.value == "range"


def find_histories(function: cst.FunctionDef, refs_by_call: dict, functions: dict) -> Histories:
    result = Histories()
    top = list(function.body.body)
    loops = [(i, s) for i, s in enumerate(top) if isinstance(s, cst.For)]
    nested_appends: set = set()
    for node in walk(function.body):
        if isinstance(node, (cst.For, cst.While)) and not any(node is s for _, s in loops):
            nested_appends.update(_append_calls(node.body))
    for index, loop in loops:
        for name, calls in _append_calls(loop.body).items():
            if name in result.by_name or name in result.refused:
                continue
            if not _is_range_loop(loop):
                result.refused[name] = "the loop is not a `for` over `range(...)`"
                continue
            history, reason = _history(function, top, index, loop, name, calls, refs_by_call,
                                       functions)
            if history is None:
                result.refused[name] = reason
            else:
                result.by_name[name] = history
                result.by_loop.setdefault(loop, []).append(history)
    for name in nested_appends:
        result.refused.setdefault(name, "it is appended to in a loop nested in another "
                                        "statement (only loops at the top of the function "
                                        "become lax.scan)")
    return result


def _history(function, top, index, loop, name, calls, refs_by_call, functions):
    if len(calls) != 1:
        return None, "it is appended to more than once in the loop"
    call = calls[0]
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None, "its `.append` call does not pass one value"
    counter = loop.target.value if isinstance(loop.target, cst.Name) else None
    # the init: the last top-level statement before the loop that mentions the name
    init, init_index = None, None
    for i in range(index - 1, -1, -1):
        if _mentions(top[i], name):
            init, init_index = top[i], i
            break
    small = _only_small(init) if init is not None else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
            and small.targets[0].target.value == name and isinstance(small.value, cst.List)
            and not any(isinstance(e, cst.StarredElement) for e in small.value.elements)
            and not _mentions(small.value, name)):
        return None, (f"it is not made by `{name} = []` (or a list of values) just before "
                      "the loop")
    if any(_mentions(s, name) for s in top[:init_index]):
        return None, f"`{name}` is also used before it is made"
    # in the loop: one statement `name.append(v)`, at the top of the body or alone in a guard
    history = History(name, loop, small, len(small.value.elements), call)
    where = _append_place(loop.body, call)
    if where is None:
        return None, ("its `.append` is inside another statement of the loop body (it must "
                      "run every iteration, or under `if <counter> % k == 0:` alone)")
    if isinstance(where, cst.If):
        guard = _guard(where, counter)
        if guard is None:
            return None, (f"it is appended to only under `if {code_of(where.test)}:` (a lax.scan "
                          "records every iteration; only `if <counter> % k == 0:` alone around "
                          "the `.append` is followed)")
        history.guard = where
        history.step, history.offset = guard
        if _int_literal(history.step) == 0:
            return None, f"it is appended to under `if {code_of(where.test)}:`, a modulo by 0"
    if len(_mentions(loop.body, name)) != 1:
        return None, f"the loop body uses `{name}` other than by appending to it"
    value = call.args[0].value
    mutated = _mutated_in_place(function)
    for held in [value, *(e.value for e in small.value.elements)]:
        if not _fresh(held, mutated, function, functions, refs_by_call, depth=0):
            return None, (f"the value `{code_of(held)}` it holds may share memory with an array "
                          "the program changes in place, which a list entry would see and a "
                          "stacked array does not")
    # after the loop: only whole-list reads a stacked array answers the same
    for statement in top[index + 1:]:
        for mention in _mentions(statement, name):
            use = _use(statement, mention, refs_by_call)
            if use is None:
                return None, (f"after the loop `{name}` is used other than as a whole (only "
                              f"`np.array({name})` and other NumPy array arguments, "
                              f"`len({name})` and returning it are the same on the stacked "
                              "array)")
            if use == "returned":
                history.returned = True
    history.zero_d = _zero_d(value, refs_by_call)
    return history, ""


def _only_small(statement):
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        return statement.body[0]
    return None


def _append_place(body, call) -> cst.CSTNode | None:
    """The top-level statement of the loop body holding the append: its own line, or an
    `if` (no else) whose only statement it is; None when it sits anywhere else."""
    for statement in body.body:
        if isinstance(statement, cst.If) and statement.orelse is None:
            inner = statement.body.body
            small = None
            if len(inner) == 1:
                small = inner[0] if isinstance(statement.body, cst.SimpleStatementSuite) \
                    else _only_small(inner[0])
            if isinstance(small, cst.Expr) and small.value is call:
                return statement
        small = _only_small(statement)
        if isinstance(small, cst.Expr) and small.value is call:
            return statement
    return None


def _guard(node: cst.If, counter: str | None):
    """(k, c) for `if (counter + c) % k == 0:` (c None when absent, negated for `-`)."""
    test = node.test
    if counter is None or not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    comparison = test.comparisons[0]
    if not isinstance(comparison.operator, cst.Equal) or not (
            isinstance(comparison.comparator, cst.Integer)
            and comparison.comparator.evaluated_value == 0):
        return None
    left = test.left
    if not (isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Modulo)):
        return None
    k, dividend = left.right, left.left
    if _mentions(k, counter):
        return None
    if isinstance(dividend, cst.Name) and dividend.value == counter:
        return k, None
    if isinstance(dividend, cst.BinaryOperation) and isinstance(
            dividend.operator, (cst.Add, cst.Subtract)):
        a, b = dividend.left, dividend.right
        if isinstance(a, cst.Name) and a.value == counter and not _mentions(b, counter):
            if isinstance(dividend.operator, cst.Subtract):
                return k, cst.UnaryOperation(cst.Minus(), _parenthesized(b))
            return k, b
        if isinstance(dividend.operator, cst.Add) and isinstance(b, cst.Name) \
                and b.value == counter and not _mentions(a, counter):
            return k, a
    return None


def _parenthesized(node):
    if isinstance(node, (cst.Name, cst.Integer)):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _mutated_in_place(function) -> set:
    """Names whose array the function may change in place (`x[...] = `, `x += `), and the
    names those arrays may be views or aliases of (`x = y`, `x = y[1:]`, `x = y.T`)."""
    names: set = set()
    for node in walk(function.body):
        targets = []
        if isinstance(node, cst.AugAssign):
            targets = [node.target]
        elif isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets if not isinstance(t.target, cst.Name)]
        for target in targets:
            while isinstance(target, (cst.Subscript, cst.Attribute)):
                target = target.value
            if isinstance(target, cst.Name):
                names.add(target.value)
    while True:
        more = set()
        for name in names:
            for value in _assignments(function, name):
                more |= _viewed(value)
        if more <= names:
            return names
        names |= more


def _viewed(value) -> set:
    """Names whose array `value` may be (or share memory with)."""
    if isinstance(value, cst.Name):
        return {value.value}
    if isinstance(value, (cst.Subscript, cst.Attribute)):
        return _viewed(value.value)
    if isinstance(value, cst.Call):
        names = set()
        if isinstance(value.func, cst.Attribute):
            names |= _viewed(value.func.value)
        for arg in value.args:
            names |= _viewed(arg.value)
        return names
    return set()


def _fresh(value, mutated: set, function, functions: dict, refs_by_call: dict, depth: int) -> bool:
    """Whether no in-place change of the program can reach the array `value` gives: a new
    array (arithmetic, a reduction, a copy), or a view of arrays nothing changes in place."""
    if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary)):
        return True
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
        return True  # arithmetic makes a new array (or an immutable scalar)
    if isinstance(value, cst.Name):
        if value.value in mutated or depth > 8:
            return False
        assigned = _assignments(function, value.value)
        return bool(assigned) and all(
            _fresh(v, mutated, function, functions, refs_by_call, depth + 1) for v in assigned)
    if isinstance(value, (cst.Subscript, cst.Attribute)):
        return _fresh(value.value, mutated, function, functions, refs_by_call, depth)
    if not isinstance(value, cst.Call):
        return False
    ref = refs_by_call.get(value)
    if ref is not None:
        if ref.qualname.rsplit(".", 1)[-1] not in VIEW_FUNCTIONS:
            return True
        return all(_fresh(a.value, mutated, function, functions, refs_by_call, depth)
                   for a in value.args)
    func = value.func
    if isinstance(func, cst.Attribute):
        if func.attr.value in VIEW_METHODS or any(
                a.keyword is not None and a.keyword.value == "copy" for a in value.args):
            return _fresh(func.value, mutated, function, functions, refs_by_call, depth)
        return True
    if isinstance(func, cst.Name) and func.value in functions and depth < 4:
        callee = functions[func.value]
        returns = [n.value for n in walk(callee.body)
                   if isinstance(n, cst.Return) and n.value is not None]
        return bool(returns) and all(
            _fresh(r, _mutated_in_place(callee), callee, functions, refs_by_call, depth + 1)
            for r in returns)
    return False


def _assignments(function, name: str) -> list:
    values = []
    for node in walk(function.body):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    values.append(node.value)
                elif _mentions(target.target, name):
                    return []  # bound by unpacking: not followed
        elif isinstance(node, (cst.For, cst.AnnAssign, cst.NamedExpr)) and _mentions(
                node.target, name):
            return []
    return values


def _use(statement, mention: cst.Name, refs_by_call: dict) -> str | None:
    """How the statement reads the list: "array" (a NumPy array argument), "len",
    "returned", or None for any other use."""
    parents = _parents(statement)
    parent = parents.get(mention)
    if isinstance(parent, cst.Arg) and parent.value is mention and parent.star == "":
        call = parents.get(parent)
        if isinstance(call, cst.Call):
            if isinstance(call.func, cst.Name) and call.func.value == "len" and len(call.args) == 1:
                return "len"
            ref = refs_by_call.get(call)
            if ref is not None and ref.converted:
                for argument in ref.arguments:
                    if argument.arg is parent and (argument.role in ("array", "arrays") or (
                            ref.qualname == "numpy.array" and argument.name == "object")):
                        return "array"
        return None
    # returned: the value of a return, or an element of a returned tuple/list/dict literal
    node = mention
    while True:
        up = parents.get(node)
        if isinstance(up, cst.Return):
            return "returned"
        if isinstance(up, (cst.Element, cst.DictElement)) and up.value is node:
            node = parents.get(up)
            if not isinstance(node, (cst.Tuple, cst.List, cst.Dict)):
                return None
            continue
        return None


def _parents(statement) -> dict:
    parents: dict = {}
    for node in walk(statement):
        for child in node.children:
            parents[child] = node
    return parents


def _zero_d(value, refs_by_call: dict) -> bool:
    """Whether `value` is provably one number (a full reduction, arithmetic of such)."""
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.UnaryOperation):
        return _zero_d(value.expression, refs_by_call)
    if isinstance(value, cst.BinaryOperation):
        return _zero_d(value.left, refs_by_call) and _zero_d(value.right, refs_by_call)
    if isinstance(value, cst.Call):
        ref = refs_by_call.get(value)
        if ref is not None:
            return ref.converted and ref.qualname.rsplit(".", 1)[-1] in FULL_REDUCTIONS \
                and len(value.args) == 1 and value.args[0].keyword is None
        return isinstance(value.func, cst.Attribute) and not value.args \
            and value.func.attr.value in FULL_REDUCTIONS
    return False


# --- the rewrite ------------------------------------------------------------------------


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
            _only_small(inner[0]) if len(inner) == 1 else None)
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
            recorded = f"{scanned}[{_slice(history, start)}]"
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


def names_outside_guards(body, histories) -> set:
    """Names the loop body reads, the recording tests of its histories aside (a Python int
    counter decides lax.cond in a peeled first iteration as a traced one does later)."""
    from np2jax.jit.traceable import _names_in

    guards = {h.guard for h in histories if h.guard is not None}
    names: set = set()
    for statement in body.body:
        names |= _names_in(statement.body if statement in guards else statement)
    return names


def _slice(history: History, start) -> str:
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
    elif literal_k and all(_int_literal(n) is not None for n in shift):
        first = str(-sum(_int_literal(n) for n in shift) % int(stride))
        first = "" if first == "0" else first
    elif all(_int_literal(n) is not None for n in shift):
        first = f"{-sum(_int_literal(n) for n in shift)} % {stride}"
    else:
        total = " + ".join(code_of(_parenthesized(n)) for n in shift)
        first = f"-({total}) % {stride}"
    return f"{first}::{stride}"


def _int_literal(node) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _int_literal(node.expression)
        return -inner if inner is not None else None
    return None


# --- a carried value rebound to the expression it was made with --------------------------


def rebound_as_initialized(loop: cst.For, top: list, name: str, stores: dict,
                           counter: str) -> bool:
    """Whether the loop rebinds the carried `name` by one `name = e` at the top of its body,
    where `name = e`, the same text, is also the last statement binding it before the loop,
    and `e` reads neither `name`, nor the counter, nor a name the loop rebinds (only values it
    leaves alone or changes in place), nor a name stored between that statement and the
    loop. `e` then has the same shape and dtype before the loop and after every iteration
    (`acc = accelerations(pos, mass)` before a leapfrog loop that updates `pos += ...` and
    recomputes `acc` the same way): lax.fori_loop/scan can carry it as it is."""
    from np2jax.jit.traceable import _stored_names

    updates = [small for s in loop.body.body if isinstance(small := _only_small(s), cst.Assign)
               and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
               and small.targets[0].target.value == name]
    stored_in_body = [n for n in walk(loop.body) if isinstance(n, (cst.AssignTarget, cst.AugAssign,
                                                                    cst.AnnAssign, cst.For))
                      and _mentions(n.target, name)]
    if len(updates) != 1 or len(stored_in_body) != 1:
        return False
    update = updates[0].value
    index = next(i for i, s in enumerate(top) if s is loop)
    init_index = next((i for i in range(index - 1, -1, -1) if name in _stored_names([top[i]])),
                      None)
    if init_index is None:
        return False
    init = _only_small(top[init_index])
    if not (isinstance(init, cst.Assign) and len(init.targets) == 1
            and isinstance(init.targets[0].target, cst.Name)
            and code_of(init.value) == code_of(update)):
        return False
    reads = {n.value for n in walk(update) if isinstance(n, cst.Name)}
    if name in reads or counter in reads:
        return False
    if any(r in stores and not stores[r] <= {"subscript", "augmented", "widening"}
           for r in reads):
        return False
    return not (_stored_names(top[init_index + 1:index]) & reads)


# --- break / continue: a flag ------------------------------------------------------------


def exit_guard(body) -> tuple[cst.If | None, str]:
    """The one `if <test>: break` (or `continue`) at the top level of a loop body, with no
    `else` and nothing else in it; (None, why) when the body's `break`/`continue` (those of
    loops nested in it aside) are anywhere else, or more than one."""
    guards, others = [], 0
    for statement in body.body:
        if isinstance(statement, cst.If) and statement.orelse is None and _exit_of(statement):
            guards.append(statement)
            continue
        others += len(_exits_in(statement))
    if others or len(guards) != 1:
        return None, ("`break`/`continue` other than one `if <test>: break` (or `continue`) "
                      "at the top of the body")
    return guards[0], ""


def _exit_of(node: cst.If) -> str | None:
    inner = node.body.body
    if len(inner) != 1:
        return None
    small = inner[0] if isinstance(node.body, cst.SimpleStatementSuite) else _only_small(inner[0])
    if isinstance(small, cst.Break):
        return "break"
    if isinstance(small, cst.Continue):
        return "continue"
    return None


def _exits_in(node) -> list:
    """break/continue statements of this loop in `node` (not those of loops nested in it)."""
    if isinstance(node, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return [] if not isinstance(node, (cst.For, cst.While)) or node.orelse is None else \
            _exits_in(node.orelse)
    if isinstance(node, (cst.Break, cst.Continue)):
        return [node]
    found = []
    for child in node.children:
        found.extend(_exits_in(child))
    return found


def _guard_index(body) -> int:
    """Where the exit guard is among the statements of a (converted) loop body."""
    return next(i for i, s in enumerate(body.body)
                if isinstance(s, cst.If) and s.orelse is None and _exit_of(s))


def guarded_statements(body, carried: tuple, flag: str, kept: dict, jnp: str) -> list:
    """The body's statements with `if <test>: break/continue` replaced by a flag: the state at
    that point is kept, the rest of the body runs, and each carried value is then put back
    to the kept one where the flag holds (`x = jnp.where(flag, x_kept, x)`)."""
    statements = list(body.body) if isinstance(body, cst.IndentedBlock) else [
        cst.SimpleStatementLine(body.body)]
    index = _guard_index(cst.IndentedBlock(statements))
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


def zero_d_test(test, walker) -> bool:
    """Whether an exit test is provably one value: a comparison of the counter, numbers,
    Python values and full reductions (`x.sum()`), or `x.any()`/`x.all()`."""
    if walker.scalar_test(test):
        return True
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or isinstance(
            test.comparisons[0].operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
        return False
    return all(_scalar(o, walker) for o in (test.left, test.comparisons[0].comparator))


def _scalar(node, walker) -> bool:
    if isinstance(node, cst.Name) and node.value == walker.counter:
        return True
    if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.MatrixMultiply):
        return _scalar(node.left, walker) and _scalar(node.right, walker)
    if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
        return _scalar(node.expression, walker)
    return walker.scalar_operand(node) or _zero_d(node, walker.m.refs_by_call)
