"""NJ302 numpy-random-keys.

NumPy random draws (global state, Generator, RandomState) converted to keyed jax.random,
split before every draw.
"""

from __future__ import annotations

from collections import defaultdict

import libcst as cst

from np2jax.analysis.randomness import UNSEEDED_SEED, draw_expression, random_table, subkey_names
from np2jax.rules.base import Rule
from np2jax.syntax import code_of

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
        new[0] = new[0].with_changes(leading_lines=node.leading_lines)
        return cst.FlattenSentinel([*new, node.with_changes(leading_lines=[])])
    return fix


class NumpyRandomKeys(Rule):
    code = "NJ302"

    def run(self):
        states = [s for s in self.analysis.random_states if s.refused is None]
        if not states:
            return
        jnp = self.analysis.jnp_alias
        imports = [("jax", None)]
        with_jnp = imports + [("jax.numpy", jnp)]
        # statement -> [(state, draw)] in source order; statements shared by states tie them
        by_statement: dict = defaultdict(list)
        for state in states:
            for draw in state.draws:
                by_statement[draw.statement].append((state, draw))
        position = self.analysis.dataflow.start
        most = max((len(v) for v in by_statement.values()), default=0)
        pool = subkey_names(self.analysis.module, {s.key for s in states}, most)
        subkey_of = {}
        for pairs in by_statement.values():
            pairs.sort(key=lambda pair: position(pair[1].call))
            for (_state, draw), name in zip(pairs, pool):
                subkey_of[draw.call] = name
        group = {state: set(state.nodes) for state in states}
        for pairs in by_statement.values():  # a shared statement ties its states together
            union = set().union(*(group[s] for s, _ in pairs))
            for s, _ in pairs:
                group[s] = union
        for state in states:
            requires = tuple(group[state])
            name = code_of(state.binding.body[0]) if state.binding is not None else "np.random"
            seed = code_of(state.seed) if state.seed is not None else UNSEEDED_SEED
            key_line = f"{state.key} = jax.random.key({seed})"
            if state.binding is not None and state.binding not in by_statement:
                yield self.report(state.binding, fix=_replaced(key_line), imports=imports,
                                  requires=requires, name=name, outcome=CONVERTED)
            if state.seed is None:
                node = state.binding.body[0] if state.binding is not None else state.draws[0].call
                # about the conversion: shown only if the state is converted (requires)
                yield self.report(node, name=code_of(node) if state.binding is None else name,
                                  outcome=UNSEEDED, requires=requires)
            for draw in state.draws:
                uses_jnp = "{jnp}" in random_table()["draws"][draw.method]["template"]
                parent = self.analysis.parents.get(draw.call)
                alone = isinstance(parent, _ALONE)  # else an operand: parenthesize compounds
                yield self.report(draw.call, fix=_draw_fix(draw, subkey_of[draw.call], jnp, alone),
                                  imports=with_jnp if uses_jnp else imports, requires=requires,
                                  name=code_of(draw.call.func), outcome=CONVERTED)
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
            for state in states_here:
                names = [subkey_of[d.call] for s, d in pairs if s is state]
                count = "" if len(names) == 1 else f", {len(names) + 1}"
                lines.append(f"{state.key}, {', '.join(names)} = jax.random.split({state.key}{count})")
            shuffle = any(d.shuffle for _, d in pairs)
            yield self.report(statement, fix=_prefixed(lines, shuffle), imports=imports,
                              requires=requires, name=code_of(pairs[0][1].call.func),
                              outcome=CONVERTED)
        for statement, state in anchors.items():
            if statement not in by_statement:
                yield self.report(statement, fix=_prefixed(
                    [f"{state.key} = jax.random.key({UNSEEDED_SEED})"], False),
                    imports=imports, requires=tuple(group[state]), name="np.random",
                    outcome=CONVERTED)
