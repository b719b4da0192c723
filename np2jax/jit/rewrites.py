"""The code --jit writes in place of what jax.jit cannot compile, except loops
(np2jax.jit.loop_rewrites): reductions over a mask, counts of a selection, prints of arrays,
`if`s on array values. Each builder returns a fix: a function from the node, as converted so
far, to its replacement. What is rewritten, and whether it may be, is decided elsewhere."""

from __future__ import annotations

import json
import re

import libcst as cst

from np2jax.jit.patterns import Chain, if_else_values
from np2jax.jit.verdicts import RewriteKind
from np2jax.syntax import code_of


def loop_function(name: str, params: str, prefix: list, block, returned: str | None,
                  leading_lines=()) -> cst.FunctionDef:
    """`def name(params):` with the statements of `block` (a loop body, as converted), after
    `prefix`, ending with `return returned`."""
    statements = list(block.body) if isinstance(block, cst.IndentedBlock) else [
        cst.SimpleStatementLine(block.body)]
    if returned is not None:
        statements.append(cst.parse_statement(f"return {returned}\n"))
    function = cst.parse_statement(f"def {name}({params}):\n    pass\n")
    return function.with_changes(body=function.body.with_changes(body=[*prefix, *statements]),
                                 leading_lines=leading_lines)


def operand(code: str) -> str:
    """The bound's code, parenthesized unless it is a name, a number or an item of one."""
    return code if re.fullmatch(r"[\w.\[\]]+", code) else f"({code})"


# --- selections by a mask (np2jax.jit.masks) ------------------------------------------------


def masked_reduction(method: str, jnp: str):
    """x[m].<method>() -> jnp.<method>(x, where=m); max and min as jnp.<method> of
    jnp.where(m, x, <the opposite extreme of x>)."""
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


def masked_rows_reduction(method: str, whole: bool, jnp: str):
    """x[m].<method>(axis=0) -> jnp.<method>(x, where=m) for a mask of x's shape, else
    jnp.<method>(x, axis=tuple(range(m.ndim)),
                 where=jnp.expand_dims(m, tuple(range(m.ndim, x.ndim))))."""
    def fix(call: cst.Call) -> cst.BaseExpression:
        subscript = call.func.value
        array, mask = code_of(subscript.value), code_of(subscript.slice[0].slice.value)
        if whole:
            where, axis = mask, ""
        else:
            ndim = f"{operand(mask)}.ndim"
            where = f"{jnp}.expand_dims({mask}, tuple(range({ndim}, {array}.ndim)))"
            axis = f", axis=tuple(range({ndim}))"
        if method in ("max", "min"):
            fill = f"{jnp}.{'nanmin' if method == 'max' else 'nanmax'}({array})"
            code = f"{jnp}.{method}({jnp}.where({where}, {array}, {fill}){axis})"
        else:
            code = f"{jnp}.{method}({array}{axis}, where={where})"
        return cst.parse_expression(code).with_changes(lpar=call.lpar, rpar=call.rpar)
    return fix


def mask_count(jnp: str):
    """len(x[m]), x[m].size -> jnp.count_nonzero(m)."""
    def fix(node: cst.BaseExpression) -> cst.BaseExpression:
        selection = node.args[0].value if isinstance(node, cst.Call) else node.value
        mask = selection.slice[0].slice.value
        return cst.Call(func=cst.parse_expression(f"{jnp}.count_nonzero"), args=[cst.Arg(mask)],
                        lpar=node.lpar, rpar=node.rpar)
    return fix


# --- print ------------------------------------------------------------------------------


def debug_print(call: cst.Call) -> cst.Call:
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


# --- `if` on an array value (np2jax.jit.branches) -----------------------------------------


def where_statement(kind: str, target: str | None, jnp: str):
    """if c: return a / else: return b -> return jnp.where(c, a, b) (kind "return"), or the
    same for one assignment to `target` in each branch (kind "assign")."""
    def fix(node: cst.If) -> cst.SimpleStatementLine:
        _, _, first, second = if_else_values(node)
        where = cst.parse_expression(f"{jnp}.where(c, a, b)").with_changes(
            args=[cst.Arg(node.test), cst.Arg(first), cst.Arg(second)])
        small = cst.Return(where) if kind == "return" else cst.Assign(
            [cst.AssignTarget(cst.Name(target))], where)
        return cst.SimpleStatementLine([small], leading_lines=node.leading_lines)
    return fix


class BranchFix:
    """The chain (as converted so far) -> its branch functions and the lax.cond /
    lax.switch call that picks one."""

    def __init__(self, kind: RewriteKind, spelled: str, outputs: tuple, operands: tuple,
                 returns: bool, names: list, selector: str | None, order: tuple,
                 jnp: str) -> None:
        self.kind, self.spelled = kind, spelled  # COND or SWITCH
        self.outputs, self.operands, self.returns = outputs, operands, returns
        self.names, self.selector, self.order, self.jnp = names, selector, order, jnp

    def _function(self, name: str, block, leading_lines=()) -> cst.FunctionDef:
        returned = None if self.returns else ", ".join(self.outputs)
        if block is None:  # the `else` an `if` without one has: everything passes through
            block = cst.IndentedBlock([])
        return loop_function(name, ", ".join(self.operands), [], block, returned,
                             leading_lines)

    def _call(self, function: str, choice: cst.BaseExpression, branches: str):
        """`outputs = function(choice, branches, operands)`, or `return function(...)`."""
        operands = "".join(f", {name}" for name in self.operands)
        call = cst.parse_expression(f"{function}(CHOICE, {branches}{operands})")
        call = call.with_changes(args=[call.args[0].with_changes(value=choice), *call.args[1:]])
        if self.returns:
            return cst.SimpleStatementLine([cst.Return(call)])
        targets = cst.parse_expression(", ".join(self.outputs)) if len(self.outputs) > 1 \
            else cst.Name(self.outputs[0])
        return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(targets)], call)])

    def __call__(self, node: cst.If):
        chain = Chain.of(node)
        if self.selector is not None:
            return self._switch(node, chain)
        return cst.FlattenSentinel(self._cond(chain, 0, node.leading_lines))

    def _cond(self, chain: Chain, index: int, leading_lines) -> list:
        """`if tests[index]: ... else: <the rest of the chain>` as lax.cond."""
        on_true, on_false = self.names[2 * index], self.names[2 * index + 1]
        statements = [self._function(on_true, chain.bodies[index], leading_lines)]
        if index + 1 < len(chain.tests):
            rest = self._cond(chain, index + 1, ())
            function = cst.parse_statement(f"def {on_false}({', '.join(self.operands)}):\n    pass\n")
            rest[-1] = rest[-1].with_changes(body=[cst.Return(rest[-1].body[0].value)])
            statements.append(function.with_changes(body=function.body.with_changes(body=rest)))
        else:
            statements.append(self._function(on_false, chain.orelse))
        statements.append(self._call("jax.lax.cond", chain.tests[index], f"{on_true}, {on_false}"))
        return statements

    def _switch(self, node: cst.If, chain: Chain):
        count = len(chain.tests)
        by_literal = dict(zip(self.order, chain.bodies))
        statements = [self._function(self.names[i], by_literal[i],
                                     node.leading_lines if i == 0 else ())
                      for i in range(count)]
        statements.append(self._function(self.names[count], chain.orelse))
        k = self.selector
        index = cst.parse_expression(
            f"{self.jnp}.where(({k} >= 0) & ({k} < {count}), {k}, {count})")
        statements.append(self._call("jax.lax.switch", index, f"({', '.join(self.names)})"))
        return cst.FlattenSentinel(statements)
