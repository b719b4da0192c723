"""NJ110 list-as-array-argument.

A list or tuple literal where JAX wants an array is wrapped in jnp.array(...).
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis import facts
from np2jax.catalog import api_policy
from np2jax.rules.base import Rule
from np2jax.syntax import code_of

_SEQUENCE_LITERALS = (cst.List, cst.Tuple, cst.ListComp)


def _is_int_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer) or (
        isinstance(node, cst.Name) and node.value in ("True", "False"))


class ListAsArrayArgument(Rule):
    code = "NJ110"

    def run(self):
        lists = api_policy()["lists"]
        structural = set(lists["nested_lists_are_structure"])
        for ref in self.analysis.refs:
            if not ref.jax_takes_arguments:
                continue
            static = set(lists["static_parameters"].get(ref.qualname, ()))
            for argument in ref.arguments:
                value = argument.arg.value
                if argument.name in static:
                    continue  # jnp.pad(x, (1, 2)): JAX wants the Python sequence itself
                if value in self.analysis.sequence_names:
                    yield self._wrap(value, ref, "asarray")
                    continue
                if not isinstance(value, _SEQUENCE_LITERALS) and not self._built_list(value):
                    continue
                if argument.role == "array":
                    yield self._wrap(value, ref)
                elif argument.role == "arrays" and ref.qualname not in structural \
                        and isinstance(value, (cst.List, cst.Tuple)):
                    # A sequence of arrays: JAX wants each member to be an array.
                    for element in value.elements:
                        if isinstance(element.value, _SEQUENCE_LITERALS):
                            yield self._wrap(element.value, ref)

        yield from self._list_indices()

    def _built_list(self, value: cst.BaseExpression) -> bool:
        """`[factor] * 3`, `[a, b] + [c]`, `list(...)`, `tuple(...)`: a list or tuple built in place."""
        if isinstance(value, cst.Call):
            return isinstance(value.func, cst.Name) and value.func.value in ("list", "tuple")
        return isinstance(value, cst.BinaryOperation) \
            and self.analysis.dataflow.value_kind(value) == facts.CONTAINER

    def _list_indices(self):
        """x[[0, 2]] raises TypeError in JAX. A list of integer literals becomes an array; any
        other list index is reported (it may index a pandas frame by labels)."""
        for index in self.analysis.list_indices:
            if all(_is_int_literal(e.value) for e in index.elements):
                yield self._wrap(index, None)
            else:
                yield self.report(index, where="used as an index", argument=code_of(index))

    def _wrap(self, value: cst.BaseExpression, ref, constructor: str = "array"):
        jnp = self.analysis.jnp_alias
        return self.report(
            value, where=f"passed to `{code_of(ref.node)}`" if ref is not None else "used as an index",
            argument=code_of(value),
            fix=lambda node: cst.Call(func=cst.Attribute(cst.Name(jnp), cst.Name(constructor)),
                                      args=[cst.Arg(node)]),
            imports=[("jax.numpy", jnp)], requires=(ref.node,) if ref is not None else (),
            report_if_unfixed=False)
