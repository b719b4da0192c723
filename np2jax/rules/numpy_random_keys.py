"""NJ302 numpy-random-keys.

NumPy random draws (global state, Generator, RandomState) converted to keyed jax.random,
split before every draw.
"""

from __future__ import annotations

from collections import defaultdict

import libcst as cst

from np2jax.analysis.randomness import UNSEEDED_SEED, absent, bind, random_table
from np2jax.rules.base import Rule
from np2jax.rules.mutated_argument import assign_back, return_pair, return_param, take_pair
from np2jax.syntax import code_of
from np2jax.syntax.walk import fresh_name, names_in

CONVERTED = ("converted to keyed jax.random: the key is made where the seed was set and split "
             "before every draw (same distributions, different numbers)")


UNSEEDED = ("it was not seeded, so NumPy drew different numbers every run; the converted code "
            f"seeds jax.random.key({UNSEEDED_SEED}) and draws the same numbers every run")


def _declared_global(key: str):
    """`global key` as the function's first statement (after its docstring)."""
    def fix(function: cst.FunctionDef):
        body = list(function.body.body)
        docstring = bool(body) and isinstance(body[0], cst.SimpleStatementLine) and \
            isinstance(body[0].body[0], cst.Expr) and isinstance(body[0].body[0].value, cst.SimpleString)
        at = 1 if docstring else 0
        body.insert(at, cst.parse_statement(f"global {key}\n"))
        return function.with_changes(body=function.body.with_changes(body=body))
    return fix


def _replaced(line: str):
    def fix(node: cst.SimpleStatementLine):
        new = cst.parse_statement(line + "\n")
        return new.with_changes(leading_lines=node.leading_lines,
                                trailing_whitespace=node.trailing_whitespace)
    return fix


_ALONE = (cst.Assign, cst.AnnAssign, cst.Return, cst.Arg, cst.Element, cst.DictElement, cst.Expr)


def _draw_fix(draw, subkey: str, jnp: str, alone: bool):
    def fix(node: cst.Call):
        new = draw_expression(node, draw.method, subkey, jnp)
        if not alone and isinstance(new, (cst.BinaryOperation, cst.UnaryOperation)):
            new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return new
    return fix


def _prefixed(lines: list[str], shuffle: bool):
    """The split lines before the statement; a shuffle statement becomes `x = <permutation>`."""
    def fix(node):
        if shuffle and isinstance(node, cst.SimpleStatementLine):
            expr = node.body[0]
            call = expr.value
            target = call.args[1].value  # jax.random.permutation(subkey, x)
            node = node.with_changes(body=[cst.Assign(
                targets=[cst.AssignTarget(target=target)], value=call)])
        new = [cst.parse_statement(line + "\n") for line in lines]
        after = list(node.nodes) if isinstance(node, cst.FlattenSentinel) else [node]
        new[0] = new[0].with_changes(leading_lines=after[0].leading_lines)
        after[0] = after[0].with_changes(leading_lines=[])
        return cst.FlattenSentinel([*new, *after])  # after lines another fix put there too
    return fix


class NumpyRandomKeys(Rule):
    code = "NJ302"

    def _threads(self, states, threadeds, group):
        """Functions taking a key for their generator parameter, and their calls."""
        hoisted: dict = {}  # statement -> [(pass, key, requires)] of the calls it runs first
        for threaded in threadeds:
            state = next(s for s in states if threaded in s.threaded)
            requires = tuple(group[state])
            param = threaded.param.name.value
            returned = "beside its result" if threaded.pair else ""
            yield self.report(threaded.function, fix=_takes_key(threaded), requires=requires,
                              name=threaded.name, outcome=(
                                  f"converted: `{threaded.name}` takes a key `{threaded.key}` for "
                                  f"`{param}`, splits it before each draw and returns the new "
                                  f"key {returned}".rstrip()))
            for passed in threaded.passes:
                key = passed.holder.key if passed.holder is not None else next(
                    s.key for s in states if passed in s.passes)
                outcome = f"converted: the call passes the key `{key}` and takes the new one back"
                if passed.mode != "hoist":
                    yield self.report(passed.line, fix=_call_takes_key(passed, key),
                                      requires=requires, name=code_of(passed.call.func),
                                      outcome=outcome)
                    continue
                hoisted.setdefault(passed.line, []).append((passed, key, requires))
        taken = names_in(self.analysis.module)
        for statement, passes in hoisted.items():
            passes.sort(key=lambda entry: self.analysis.dataflow.start(entry[0].call))
            stash: dict = {}
            lines = []
            for passed, key, requires in passes:
                result = fresh_name(f"{passed.callee.name}_result", taken)
                lines.append((passed, key, result))
                yield self.report(passed.call, fix=_stashed(stash, passed, result),
                                  requires=requires + (statement,), name=code_of(passed.call.func),
                                  outcome=f"converted: the call runs first, on a line of its own "
                                          f"(`{result}, {key} = ...`), passing the key `{key}` "
                                          "and taking the new one back")
            yield self.report(statement, fix=_hoisted(stash, lines), requires=passes[0][2],
                              name=code_of(passes[0][0].call.func), outcome="", listed=False,
                              report_if_unfixed=False, converts=False)

    def run(self):
        states = [s for s in self.analysis.random_states if s.refused is None]
        if not states:
            return
        jnp = self.analysis.jnp_alias
        imports = [("jax", None)]
        with_jnp = imports + [("jax.numpy", jnp)]
        # statement -> [(state, draw)] in source order; statements shared by states tie them
        by_statement: dict = defaultdict(list)
        owned = []  # (state, draw): each draw once, a threaded function's with one of its states
        threadeds = list(dict.fromkeys(t for s in states for t in s.threaded))
        for state in states:
            owned += [(state, draw) for draw in state.draws]
            owned += [(state, draw) for method in state.methods for draw in method.draws]
        for threaded in threadeds:
            state = next(s for s in states if threaded in s.threaded)
            owned += [(state, draw) for draw in threaded.draws]
        for state, draw in owned:
            by_statement[draw.statement].append((state, draw))
        position = self.analysis.dataflow.start
        most = max((len(v) for v in by_statement.values()), default=0)
        pool = subkey_names(self.analysis.module, {s.key for s in states} | {t.key for t in threadeds},
                            most)
        subkey_of = {}
        for pairs in by_statement.values():
            pairs.sort(key=lambda pair: position(pair[1].call))
            for (_state, draw), name in zip(pairs, pool):
                subkey_of[draw.call] = name
        group = {state: set(state.nodes) for state in states}
        for threaded in threadeds:  # states whose keys meet in a function
            sharing = [s for s in states if threaded in s.threaded]
            union = set().union(*(group[s] for s in sharing))
            for s in sharing:
                group[s] = union
        for state in states:  # a function returning a generator and the states it makes
            if state.made_by is not None and state.made_by in group:
                union = group[state] | group[state.made_by]
                for s in [state.made_by, *state.made_by.made]:
                    if s in group:
                        group[s] = union
                group[state] = union
        for pairs in by_statement.values():  # a shared statement ties its states together
            union = set().union(*(group[s] for s, _ in pairs))
            for s, _ in pairs:
                group[s] = union
        for state in states:
            requires = tuple(group[state])
            name = code_of(state.binding.body[0]) if state.binding is not None else "np.random"
            seed = code_of(state.seed) if state.seed is not None else UNSEEDED_SEED
            key_line = f"{state.key} = jax.random.key({seed})"
            if state.returned:
                key_line = f"return jax.random.key({seed})"
            if state.made_by is not None:
                yield self.report(state.binding, fix=_rebound(state.key), requires=requires,
                                  name=name, outcome=(
                                      f"converted: `{code_of(state.binding.body[0].value.func)}` "
                                      f"returns a key, bound to `{state.key}`"))
            elif state.binding is not None and state.binding not in by_statement:
                yield self.report(state.binding, fix=_replaced(key_line), imports=imports,
                                  requires=requires, moves=(_bound_call(state.binding),),
                                  name=name, outcome=CONVERTED)
            if state.seed is None and state.made_by is None:
                node = state.binding.body[0] if state.binding is not None else state.draws[0].call
                # about the conversion: shown only if the state is converted (requires)
                yield self.report(node, name=code_of(node) if state.binding is None else name,
                                  outcome=UNSEEDED, requires=requires)
        for state, draw in owned:
            uses_jnp = "{jnp}" in random_table()["draws"][draw.method]["template"]
            parent = self.analysis.parents.get(draw.call)
            alone = isinstance(parent, _ALONE)  # else an operand: parenthesize compounds
            yield self.report(draw.call, fix=_draw_fix(draw, subkey_of[draw.call], jnp, alone),
                              imports=with_jnp if uses_jnp else imports,
                              requires=tuple(group[state]), moves=(draw.call,),
                              name=code_of(draw.call.func), outcome=CONVERTED)
        yield from self._threads(states, threadeds, group)
        for state in states:  # functions drawing from a module-level key declare it global
            for function in state.functions:
                yield self.report(function, fix=_declared_global(state.key),
                                  requires=tuple(group[state]), name=function.name.value,
                                  outcome=f"converted: `{function.name.value}` declares "
                                          f"`global {state.key}` and splits it before each draw")
        anchors = {s.anchor: s for s in states if s.binding is None}
        for statement, pairs in by_statement.items():
            states_here = list(dict.fromkeys(s for s, _ in pairs))
            requires = tuple(group[states_here[0]])
            lines = []
            if statement in anchors:
                lines.append(f"{anchors[statement].key} = jax.random.key({UNSEEDED_SEED})")
            keys = list(dict.fromkeys(_key_of(s, d) for s, d in pairs))
            for key in keys:
                names = [subkey_of[d.call] for s, d in pairs if _key_of(s, d) == key]
                count = "" if len(names) == 1 else f", {len(names) + 1}"
                lines.append(f"{key}, {', '.join(names)} = jax.random.split({key}{count})")
            shuffle = any(d.shuffle for _, d in pairs)
            # the split line belongs to the draws, each reported (and counted) at its call;
            # the line that makes an unseeded module's key is a change of its own
            yield self.report(statement, fix=_prefixed(lines, shuffle), imports=imports,
                              requires=requires, name=code_of(pairs[0][1].call.func),
                              outcome=CONVERTED, listed=statement in anchors,
                              report_if_unfixed=False, converts=shuffle)
        for statement, state in anchors.items():
            if statement not in by_statement:
                yield self.report(statement, fix=_prefixed(
                    [f"{state.key} = jax.random.key({UNSEEDED_SEED})"], False),
                    imports=imports, requires=tuple(group[state]), name="np.random",
                    outcome=CONVERTED)


def _key_of(state, draw) -> str:
    """The key a draw splits: its function's key parameter, or its state's key."""
    return draw.holder.key if draw.holder is not None else state.key


def _takes_key(threaded):
    """The function takes a key for its generator parameter and returns the new key beside
    its result (`(result, key)`) or alone."""
    def fix(function: cst.FunctionDef):
        params = function.params

        def renamed(group):
            return [p.with_changes(name=cst.Name(threaded.key))
                    if p.name.value == threaded.param.name.value else p for p in group]
        function = function.with_changes(params=params.with_changes(
            posonly_params=renamed(params.posonly_params), params=renamed(params.params),
            kwonly_params=renamed(params.kwonly_params)))
        if threaded.pair:
            return return_pair(function, threaded.key)
        return return_param(function, threaded.key)
    return fix


def _call_takes_key(passed, key: str):
    """`r = f(rng, x)` -> `r, key = f(key, x)`; `f(rng)` -> `key = f(key)` (a function
    returning nothing) or `key = f(key)[1]`."""
    index = [id(a) for a in passed.call.args].index(id(passed.argument))

    def fix(line: cst.SimpleStatementLine):
        statement = line.body[0]
        call = statement.value
        args = list(call.args)
        args[index] = args[index].with_changes(value=cst.parse_expression(key))
        if args[index].keyword is not None:  # `f(x, rng=rng)`: the parameter is renamed too
            args[index] = args[index].with_changes(keyword=cst.Name(passed.callee.key))
        line = line.with_changes(body=[statement.with_changes(value=call.with_changes(args=args))])
        if isinstance(statement, cst.Expr) and not passed.callee.pair:
            return assign_back(line, key)
        return take_pair(line, key)
    return fix


def _stashed(stash: dict, passed, result: str):
    """A call moved before its statement: its place reads `result`, and the call as
    rewritten so far (its arguments converted) waits in `stash` for the statement's fix."""
    def fix(call: cst.Call):
        stash[passed] = call
        return cst.Name(result)
    return fix


def _hoisted(stash: dict, lines: list):
    """The statement gets, before it, `result, key = f(key, ...)` for each call moved out of
    it, in their order."""
    def fix(node):
        new = []
        for passed, key, result in lines:
            call = stash[passed]
            index = [id(a) for a in passed.call.args].index(id(passed.argument))
            args = list(call.args)
            args[index] = args[index].with_changes(value=cst.Name(key))
            if args[index].keyword is not None:
                args[index] = args[index].with_changes(keyword=cst.Name(passed.callee.key))
            new.append(cst.SimpleStatementLine(body=[cst.Assign(
                targets=[cst.AssignTarget(cst.Tuple(elements=[
                    cst.Element(cst.Name(result), comma=cst.Comma(
                        whitespace_after=cst.SimpleWhitespace(" "))),
                    cst.Element(cst.Name(key))], lpar=[], rpar=[]))],
                value=call.with_changes(args=args))]))
        after = list(node.nodes) if isinstance(node, cst.FlattenSentinel) else [node]
        new[0] = new[0].with_changes(leading_lines=after[0].leading_lines)
        after[0] = after[0].with_changes(leading_lines=[])
        return cst.FlattenSentinel([*new, *after])
    return fix


def _rebound(key: str):
    """`rng = make(1)` -> `key = make(1)` (the call as other fixes left it)."""
    def fix(line: cst.SimpleStatementLine):
        statement = line.body[0]
        return line.with_changes(body=[statement.with_changes(
            targets=[statement.targets[0].with_changes(target=cst.Name(key))])])
    return fix


def _bound_call(binding: cst.CSTNode) -> cst.Call | None:
    """The call of a state's binding line, which the key line replaces: the
    `np.random.default_rng(0)` of `rng = np.random.default_rng(0)`, `np.random.seed(0)`."""
    statement = binding.body[0] if isinstance(binding, cst.SimpleStatementLine) else None
    value = getattr(statement, "value", None)
    return value if isinstance(value, cst.Call) else None


def draw_expression(call: cst.Call, method: str, subkey: str, jnp: str) -> cst.BaseExpression:
    """The jax.random expression for the (already rewritten) NumPy draw `call`."""
    entry = random_table()["draws"][method]
    bound = bind(call, entry)
    assert isinstance(bound, dict), bound
    if "dims" in bound:
        dims = bound.pop("dims")
        size = cst.Tuple([]) if not dims else dims[0] if len(dims) == 1 else \
            cst.Tuple([cst.Element(d) for d in dims])
    else:
        size = bound.pop("size", None)
        size = cst.Tuple([]) if absent(size) else size
    if isinstance(size, cst.Integer) or (entry.get("shape_sequence") and not isinstance(
            size, (cst.Tuple, cst.List))):  # a number (the analysis checked it)
        size = cst.Tuple([cst.Element(size, comma=cst.Comma())])
    if entry.get("upper_only") and absent(bound.get("high")):
        bound["low"], bound["high"] = cst.Integer("0"), bound["low"]
    template = entry["template"]
    if "standard" in entry and all(p not in bound for p in entry.get("affine", ())):
        template = entry["standard"]
    defaults = entry.get("defaults", {})
    values = {"size": size}
    dropped = set()
    for name in entry["params"]:
        if name in ("size", "*dims"):
            continue
        if name in bound and not (absent(bound[name]) and defaults.get(name) == "None"):
            values[name] = bound[name]
        elif defaults.get(name) == "None":
            dropped.add(name)
        else:
            values[name] = cst.parse_expression(defaults[name])
    text = template.replace("{key}", subkey).replace("{jnp}", jnp)
    for name in list(values) + list(dropped):
        text = text.replace("{" + name + "}", f"__np2jax_{name}__")
    expression = cst.parse_expression(text)
    return expression.visit(_Substitute(values, dropped))


class _Substitute(cst.CSTTransformer):
    # unary minus binds tighter than every operator of the templates (none uses **)
    _COMPOUND = (cst.BinaryOperation, cst.BooleanOperation, cst.Comparison, cst.IfExp, cst.Lambda)

    def __init__(self, values: dict, dropped: set) -> None:
        super().__init__()
        self.values = values
        self.dropped = {f"__np2jax_{n}__" for n in dropped}
        self.placed: set[int] = set()

    def leave_Call(self, original_node, updated_node):
        args = [a for a in updated_node.args if not (
            a.keyword is not None and _mentions(a.value, self.dropped))]
        if len(args) != len(updated_node.args):
            if args:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated_node.with_changes(args=args)
        return updated_node

    def leave_Name(self, original_node, updated_node):
        value = updated_node.value
        if value.startswith("__np2jax_") and value[9:-2] in self.values:
            node = self.values[value[9:-2]]
            self.placed.add(id(node))
            return node
        return updated_node

    def _wrap(self, node):
        if id(node) in self.placed and isinstance(node, self._COMPOUND) and not node.lpar:
            return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return node

    def leave_BinaryOperation(self, original_node, updated_node):
        return updated_node.with_changes(left=self._wrap(updated_node.left),
                                         right=self._wrap(updated_node.right))


def _mentions(node, names: set) -> bool:
    if isinstance(node, cst.Name) and node.value in names:
        return True
    return any(_mentions(child, names) for child in node.children)


def subkey_names(module: cst.Module, reserved: set[str], count: int) -> list[str]:
    taken = names_in(module) | reserved
    return [fresh_name("subkey", taken) for _ in range(count)]
