"""Functional updates: the code that replaces NumPy's in-place writes.

Builders only: which write may be replaced is decided by the analysis (np2jax/analysis/writes.py)
from the analysis. Every builder works on nodes as already rewritten by other fixes (so
`np.zeros` inside a statement is `jnp.zeros` by the time the statement is rebuilt).
"""

from __future__ import annotations

import libcst as cst

# `x[i] op= v` -> x.at[i].<method>(v) for basic indices; other operators use .set(x[i] op v).
AT_METHODS = {"+=": "add", "-=": "subtract", "*=": "multiply", "/=": "divide", "**=": "power"}
# ufunc.at -> the .at[] method with the same accumulation.
UFUNC_AT_METHODS = {"numpy.add": "add", "numpy.subtract": "subtract", "numpy.multiply": "multiply",
                    "numpy.divide": "divide", "numpy.true_divide": "divide",
                    "numpy.power": "power", "numpy.minimum": "min", "numpy.maximum": "max"}
BINARY_OPERATORS = {"+=": cst.Add, "-=": cst.Subtract, "*=": cst.Multiply, "/=": cst.Divide,
                    "//=": cst.FloorDivide, "%=": cst.Modulo, "**=": cst.Power,
                    "@=": cst.MatrixMultiply, "&=": cst.BitAnd, "|=": cst.BitOr,
                    "^=": cst.BitXor, "<<=": cst.LeftShift, ">>=": cst.RightShift}


def attr(value: cst.BaseExpression, name: str) -> cst.Attribute:
    return cst.Attribute(value=value, attr=cst.Name(name))


def keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value`, spelled without spaces."""
    return cst.Arg(value, keyword=cst.Name(name), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))


def spelled_keyword(spelling: str):
    """The fix writing an argument as `spelling`, `name=value` (JAX's spelling of an option
    value: `stable=True` for `kind="stable"`), keeping the argument's comma."""
    name, value = spelling.split("=", 1)
    return lambda node: keyword(name, cst.parse_expression(value)).with_changes(comma=node.comma)


def call(func: cst.BaseExpression, *args: cst.BaseExpression, **keywords) -> cst.Call:
    arguments = [cst.Arg(argument(a)) for a in args]
    arguments += [keyword(k, argument(v)) for k, v in keywords.items()]
    return cst.Call(func=func, args=arguments)


def argument(node: cst.BaseExpression) -> cst.BaseExpression:
    """The node as one argument of a call: a tuple written without parentheses (`rows[k] =
    a, a + 1` stores the tuple) gets them, as do a yield and an assignment expression,
    which an argument list would read otherwise."""
    if isinstance(node, (cst.Tuple, cst.Yield, cst.NamedExpr, cst.GeneratorExp)) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def with_keyword(node: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """`f(a)` -> `f(a, name=value)`."""
    args = list(node.args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return node.with_changes(args=[*args, keyword(name, value)])


def jnp_call(jnp: str, name: str, *args, **keywords) -> cst.Call:
    return call(attr(cst.Name(jnp), name), *args, **keywords)


def as_array_index(element: cst.SubscriptElement, jnp: str) -> cst.SubscriptElement:
    """`.at[[0, 2]]` raises in JAX: a list literal index becomes jnp.array([0, 2])."""
    index = element.slice
    if isinstance(index, cst.Index) and isinstance(index.value, cst.List):
        return element.with_changes(slice=index.with_changes(
            value=jnp_call(jnp, "array", index.value)))
    return element


def at_update(base: cst.BaseExpression, index: list[cst.SubscriptElement], method: str,
              value: cst.BaseExpression, jnp: str) -> cst.Call:
    """base.at[index].method(value)"""
    elements = [as_array_index(e, jnp) for e in index]
    elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    at = cst.Subscript(value=attr(base, "at"), slice=elements)
    return call(attr(at, method), value)


def read(base: cst.BaseExpression, index: list[cst.SubscriptElement], jnp: str) -> cst.Subscript:
    elements = [as_array_index(e, jnp) for e in index]
    elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return cst.Subscript(value=base, slice=elements)


def binary(left: cst.BaseExpression, operator: str, right: cst.BaseExpression) -> cst.BinaryOperation:
    return cst.BinaryOperation(left=parenthesized(left), operator=BINARY_OPERATORS[operator](),
                               right=parenthesized(right))


def parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    """The node in parentheses where an operator could otherwise bind to a part of it."""
    if isinstance(node, (cst.BinaryOperation, cst.BooleanOperation, cst.Comparison,
                         cst.IfExp, cst.Lambda, cst.UnaryOperation)) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def assign(target: cst.BaseExpression, value: cst.BaseExpression) -> cst.Assign:
    return cst.Assign(targets=[cst.AssignTarget(target=target.with_changes(lpar=[], rpar=[]))],
                      value=value)


def replace_line(line: cst.SimpleStatementLine, statements: list[cst.BaseSmallStatement]):
    """The statements, one per line, in place of `line`: comments above it stay above the
    first, and its trailing comment stays on the last."""
    lines = [cst.SimpleStatementLine(body=[s]) for s in statements]
    lines[0] = lines[0].with_changes(leading_lines=line.leading_lines)
    lines[-1] = lines[-1].with_changes(trailing_whitespace=line.trailing_whitespace)
    return lines[0] if len(lines) == 1 else cst.FlattenSentinel(lines)


def with_commas(index: list) -> list:
    """Subscript elements separated by `, ` (none after the last)."""
    return [e.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            if i < len(index) - 1 else e.with_changes(comma=cst.MaybeSentinel.DEFAULT)
            for i, e in enumerate(index)]


def declare_global(name: str):
    """A fix of a FunctionDef: `global name` as the first statement of its body (after its
    docstring), unless the body already says it; one per name however many writes ask."""
    def fix(function: cst.FunctionDef) -> cst.FunctionDef:
        body = function.body
        statement = cst.Global(names=[cst.NameItem(cst.Name(name))])
        if isinstance(body, cst.SimpleStatementSuite):
            if any(isinstance(s, cst.Global) and any(n.name.value == name for n in s.names)
                   for s in body.body):
                return function
            return function.with_changes(body=body.with_changes(body=[statement, *body.body]))
        lines = list(body.body)
        for line in lines:
            if isinstance(line, cst.SimpleStatementLine) and any(
                    isinstance(s, cst.Global) and any(n.name.value == name for n in s.names)
                    for s in line.body):
                return function
        first = 0
        if lines and isinstance(lines[0], cst.SimpleStatementLine) and len(lines[0].body) == 1 \
                and isinstance(lines[0].body[0], cst.Expr) \
                and isinstance(lines[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
            first = 1  # the docstring stays first
        lines.insert(first, cst.SimpleStatementLine(body=[statement]))
        return function.with_changes(body=body.with_changes(body=lines))
    return fix
