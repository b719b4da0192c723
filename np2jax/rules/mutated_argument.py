"""NJ209 mutated-argument.

A function that changes an argument in place for its caller: rewritten to return it, with
its calls assigning the result.
"""

from __future__ import annotations

from functools import partial

import libcst as cst

from np2jax.analysis.values import always_leaves
from np2jax.rules._in_place import left_because, rewritten_as
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates


def return_param(function: cst.FunctionDef, param: str) -> cst.FunctionDef:
    """Every `return` returns the parameter, and so does falling off the end."""
    body = function.body.visit(_ReturnParam(param))
    statements = list(body.body)
    if not always_leaves(statements):
        statements.append(cst.SimpleStatementLine(body=[cst.Return(value=cst.Name(param))]))
    return function.with_changes(body=body.with_changes(body=statements))


class _ReturnParam(cst.CSTTransformer):
    def __init__(self, param: str) -> None:
        super().__init__()
        self.param = param

    def visit_FunctionDef(self, node) -> bool:
        return False  # nested functions keep their returns

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_Return(self, original_node, updated_node):
        if updated_node.value is None or (isinstance(updated_node.value, cst.Name)
                                          and updated_node.value.value == "None"):
            return updated_node.with_changes(value=cst.Name(self.param),
                                             whitespace_after_return=cst.SimpleWhitespace(" "))
        return updated_node


def return_pair(function: cst.FunctionDef, param: str) -> cst.FunctionDef:
    """Every `return v` returns `v, param` (the function returns a value on every path)."""
    return function.with_changes(body=function.body.visit(_ReturnPair(param)))


class _ReturnPair(_ReturnParam):
    def leave_Return(self, original_node, updated_node):
        value = updated_node.value
        if isinstance(value, cst.Tuple) and not value.lpar:
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return updated_node.with_changes(value=cst.Tuple(elements=[
            cst.Element(value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Element(cst.Name(self.param))], lpar=[], rpar=[]))


def _target(name: str) -> cst.BaseExpression:
    """A name, or an instance's attribute (`self.key`)."""
    return cst.parse_expression(name) if "." in name else cst.Name(name)


def take_pair(line: cst.SimpleStatementLine, name: str):
    """`r = f(p)` -> `r, p = f(p)`; `a, b = f(p)` -> `(a, b), p = f(p)`; `f(p)` ->
    `p = f(p)[1]`. `name` may be an attribute (`self.key`)."""
    statement = line.body[0]
    if isinstance(statement, cst.Expr):
        value = cst.Subscript(value=statement.value, slice=[
            cst.SubscriptElement(cst.Index(cst.Integer("1")))])
        return updates.replace_line(line, [updates.assign(_target(name), value)])
    target = statement.targets[0].target
    if isinstance(target, (cst.Tuple, cst.List)):
        target = cst.Tuple(elements=target.elements, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    pair = cst.Tuple(elements=[
        cst.Element(target, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
        cst.Element(_target(name))], lpar=[], rpar=[])
    return updates.replace_line(line, [cst.Assign(targets=[cst.AssignTarget(pair)], value=statement.value)])


def assign_back(line: cst.SimpleStatementLine, name: str):
    """`normalize(p)` -> `p = normalize(p)`."""
    return updates.replace_line(line, [updates.assign(_target(name), line.body[0].value)])


def _unchanged(line):
    """A call of another module's function that already rebinds what it returns: nothing
    to rewrite, but the tree counts it among the calls that take the array back."""
    return line


class MutatedArgument(Rule):
    code = "NJ209"

    def run(self):
        for fact in self.analysis.mutators:
            fields = dict(function=fact.node.name.value, param=fact.param.name.value)
            reason = fact.refused or self._write_refused(fact)
            if reason is not None:
                yield self.report(fact.node.name, outcome=left_because(reason), **fields)
                continue
            dataflow = self.analysis.dataflow
            lines = [dataflow.expression_statement_line(call) or
                     dataflow.expression_statement_line(self.analysis.parents[call])
                     for call, _ in fact.call_sites]
            if fact.returns_pair:
                yield from self._pair(fact, lines, fields)
                continue
            if fact.returns_param:  # `u = step(u, r)`: the writes become rebindings of u
                how = (f"a function rebinding `{fields['param']}`, which it already returns: "
                       f"its {len(fact.rebinding_calls) + len(lines)} call(s) take it back")
            else:
                how = (f"a function returning `{fields['param']}`, and its "
                       f"{len(lines)} call(s) assign the result")
            yield self.report(fact.node, fix=partial(return_param, param=fact.param.name.value),
                              requires=tuple(lines), key=("def", fields["function"]),
                              outcome=rewritten_as(how), **fields)
            for (call, argument), line in zip(fact.call_sites, lines):
                yield self.report(line, fix=partial(assign_back, name=argument.value),
                                  requires=(fact.node,), outcome=rewritten_as(
                                      f"`{argument.value} = {code_of(call)}`"), **fields)
        yield from self._external_calls()

    def _pair(self, fact, lines, fields):
        """A function that changes its argument and returns something else: it returns both,
        and each call takes both back."""
        param = fields["param"]
        yield self.report(fact.node, fix=partial(return_pair, param=param), requires=tuple(lines),
                          key=("def", fields["function"]), outcome=rewritten_as(
                              f"a function returning `{param}` beside its result, and its "
                              f"{len(lines)} call(s) take both back"), **fields)
        for (call, argument), line in zip(fact.call_sites, lines):
            yield self.report(line, fix=partial(take_pair, name=argument.value),
                              requires=(fact.node,), outcome=rewritten_as(
                                  f"a call taking `{argument.value}` back beside the result of "
                                  f"`{code_of(call)}`"), **fields)

    def _external_calls(self):
        """Calls of another module's function rewritten to return its argument: they assign
        the result; the tree checks that the function and all its calls were rewritten."""
        dataflow = self.analysis.dataflow
        for call, argument, qualname in self.analysis.external_calls:
            line = dataflow.expression_statement_line(call)
            param = self.analysis.context.mutator_parameter(qualname)[1]
            if line is None:  # `u = f(u, ...)`: already takes back the array f returns
                yield self.report(dataflow.expression_statement_line(self.analysis.parents[call]),
                                  fix=_unchanged, requires=dataflow.binding_refs(argument),
                                  key=("call", qualname), function=qualname, param=param,
                                  outcome=rewritten_as(f"`{argument.value} = {code_of(call)}`, "
                                                       "as it was: it takes back the array"))
                continue
            yield self.report(line, fix=partial(assign_back, name=argument.value),
                              requires=dataflow.binding_refs(argument), key=("call", qualname),
                              function=qualname, param=param, outcome=rewritten_as(
                                  f"`{argument.value} = {code_of(call)}`, since it now returns it"))
        for node, qualname, reason in self.analysis.external_refusals:
            param = self.analysis.context.mutator_parameter(qualname)[1]
            yield self.report(node, function=qualname, param=param, outcome=left_because(reason))

    def _write_refused(self, fact) -> str | None:
        for write in fact.writes:
            if isinstance(write, cst.AugAssign) and isinstance(write.target, cst.Name):
                continue  # `v op= ...`: a rebinding once the function returns v
            plan = self.analysis.write_plan(write)
            if plan.fix is None:
                return f"`{code_of(write).strip()}` cannot be rewritten: {plan.reason}"
        return None
