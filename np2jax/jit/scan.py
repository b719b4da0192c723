"""--jit: the lists a `for ... in range(...)` loop collects (histories), for `jax.lax.scan`.

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
an array) is decided as for lax.fori_loop (np2jax.jit.loops); the rewrite is
np2jax.jit.loop_rewrites.ScanFix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from np2jax.jit.names import mentions, names_mentioned, names_stored_in
from np2jax.jit.patterns import int_literal, only_small, parenthesized
from np2jax.jit.proofs import zero_d
from np2jax.syntax import code_of
from np2jax.syntax.walk import children, walk

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
        if mentions(top[i], name):
            init, init_index = top[i], i
            break
    small = only_small(init) if init is not None else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
            and small.targets[0].target.value == name and isinstance(small.value, cst.List)
            and not any(isinstance(e, cst.StarredElement) for e in small.value.elements)
            and not mentions(small.value, name)):
        return None, (f"it is not made by `{name} = []` (or a list of values) just before "
                      "the loop")
    if any(mentions(s, name) for s in top[:init_index]):
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
        if int_literal(history.step) == 0:
            return None, f"it is appended to under `if {code_of(where.test)}:`, a modulo by 0"
    if len(mentions(loop.body, name)) != 1:
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
        for mention in mentions(statement, name):
            use = _use(statement, mention, refs_by_call)
            if use is None:
                return None, (f"after the loop `{name}` is used other than as a whole (only "
                              f"`np.array({name})` and other NumPy array arguments, "
                              f"`len({name})` and returning it are the same on the stacked "
                              "array)")
            if use == "returned":
                history.returned = True
    history.zero_d = zero_d(value, refs_by_call)
    return history, ""


def _append_place(body, call) -> cst.CSTNode | None:
    """The top-level statement of the loop body holding the append: its own line, or an
    `if` (no else) whose only statement it is; None when it sits anywhere else."""
    for statement in body.body:
        if isinstance(statement, cst.If) and statement.orelse is None:
            inner = statement.body.body
            small = None
            if len(inner) == 1:
                small = inner[0] if isinstance(statement.body, cst.SimpleStatementSuite) \
                    else only_small(inner[0])
            if isinstance(small, cst.Expr) and small.value is call:
                return statement
        small = only_small(statement)
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
    if mentions(k, counter):
        return None
    if isinstance(dividend, cst.Name) and dividend.value == counter:
        return k, None
    if isinstance(dividend, cst.BinaryOperation) and isinstance(
            dividend.operator, (cst.Add, cst.Subtract)):
        a, b = dividend.left, dividend.right
        if isinstance(a, cst.Name) and a.value == counter and not mentions(b, counter):
            if isinstance(dividend.operator, cst.Subtract):
                return k, cst.UnaryOperation(cst.Minus(), parenthesized(b))
            return k, b
        if isinstance(dividend.operator, cst.Add) and isinstance(b, cst.Name) \
                and b.value == counter and not mentions(a, counter):
            return k, a
    return None


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
                elif mentions(target.target, name):
                    return []  # bound by unpacking: not followed
        elif isinstance(node, (cst.For, cst.AnnAssign, cst.NamedExpr)) and mentions(
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
        for child in children(node):
            parents[child] = node
    return parents


def names_outside_guards(body, histories) -> set:
    """Names the loop body reads, the recording tests of its histories aside (a Python int
    counter decides lax.cond in a peeled first iteration as a traced one does later)."""
    guards = {h.guard for h in histories if h.guard is not None}
    names: set = set()
    for statement in body.body:
        names |= names_mentioned(statement.body if statement in guards else statement)
    return names


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
    updates = [small for s in loop.body.body if isinstance(small := only_small(s), cst.Assign)
               and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
               and small.targets[0].target.value == name]
    stored_in_body = [n for n in walk(loop.body) if isinstance(n, (cst.AssignTarget, cst.AugAssign,
                                                                    cst.AnnAssign, cst.For))
                      and mentions(n.target, name)]
    if len(updates) != 1 or len(stored_in_body) != 1:
        return False
    update = updates[0].value
    index = next(i for i, s in enumerate(top) if s is loop)
    init_index = next((i for i in range(index - 1, -1, -1) if name in names_stored_in([top[i]])),
                      None)
    if init_index is None:
        return False
    init = only_small(top[init_index])
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
    return not (names_stored_in(top[init_index + 1:index]) & reads)
