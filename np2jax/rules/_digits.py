"""Where a value is written out with all its digits: `f"{m}"`, `str(m)`, `repr(m)`,
`print(m)`, `"%s" % m`, json.dump(s) of it or of a literal container holding it. Read by the
rules whose values differ from NumPy's in their last digits (NJ416's reductions, NJ401's
float32 values): formatted digits (`f"{m:.3f}"`, `"%.2f" % m`) hide such differences."""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.facts import JSON_WRITERS

_SHOWING_BUILTINS = ("str", "repr", "print")


def shown_values(analysis):
    """(where, value) for each value the module writes out with all its digits."""
    for part in analysis.nodes(cst.FormattedStringExpression):
        if part.format_spec is None and part.conversion in (None, "s", "r"):
            yield part, part.expression
    for call in analysis.nodes(cst.Call):
        func = call.func
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if isinstance(func, cst.Name) and func.value in _SHOWING_BUILTINS \
                and analysis.qualified_names(func) == {f"builtins.{func.value}"}:
            yield from ((call, value) for value in positional)
        elif positional and analysis.qualified_names(func) & JSON_WRITERS:
            yield from ((call, leaf) for leaf in _leaves(positional[0]))
    for operation in analysis.nodes(cst.BinaryOperation):
        template = operation.left
        if isinstance(operation.operator, cst.Modulo) and isinstance(template, cst.SimpleString) \
                and ("%s" in template.value or "%r" in template.value):
            right = operation.right
            values = [e.value for e in right.elements] if isinstance(right, cst.Tuple) else [right]
            yield from ((operation, value) for value in values)


def _leaves(node: cst.BaseExpression):
    """The values of a literal dict, list or tuple (nested), or `node` itself."""
    if isinstance(node, cst.Dict):
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                yield from _leaves(element.value)
    elif isinstance(node, (cst.List, cst.Tuple)):
        for element in node.elements:
            if isinstance(element, cst.Element):
                yield from _leaves(element.value)
    else:
        yield node
