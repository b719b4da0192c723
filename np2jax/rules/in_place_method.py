"""NJ205 in-place-method.

An array method or attribute assignment that changes the array in place: rewritten to a new
array assigned back where provably equivalent.
"""

from __future__ import annotations

import libcst as cst

from np2jax.rules._in_place import (
    NOT_ARRAYS,
    array_literal,
    distinct_indices,
    left_because,
    rewritten_as,
    statement_fix,
)
from np2jax.rules.base import Rule
from np2jax.syntax import argument_for, code_of, updates


def _inplace_method(call: cst.Call, method: str, jnp: str):
    """The builder for x.<method>(...) as a functional form, or the reason there is none."""
    if any(a.star for a in call.args):
        return None, "its arguments pass through `*` or `**`, which cannot be checked"
    args = list(call.args)
    if method == "sort":
        if argument_for(call, 2, "order") is not None:
            return None, "sorting by fields (`order=`) is not rewritten"
        axis_index = next((i for i, a in enumerate(call.args)
                           if (a.keyword is None and i == 0) or
                           (a.keyword is not None and a.keyword.value == "axis")), None)

        def build(new_call):
            receiver = new_call.func.value
            extra = {"axis": new_call.args[axis_index].value} if axis_index is not None else {}
            return receiver, updates.jnp_call(jnp, "sort", receiver, **extra)
        return build, None
    if method == "fill" and len(args) == 1 and args[0].keyword is None:
        return (lambda new_call: (new_call.func.value, updates.jnp_call(
            jnp, "full_like", new_call.func.value, new_call.args[0].value))), None
    if method == "put" and len(args) == 2 and all(a.keyword is None for a in args):
        if not distinct_indices(args[0].value):
            return None, "the indices may repeat, and JAX does not define which value it keeps"
        return (lambda new_call: (new_call.func.value, updates.jnp_call(
            jnp, "put", new_call.func.value, array_literal(new_call.args[0].value, jnp),
            array_literal(new_call.args[1].value, jnp), inplace=cst.Name("False")))), None
    if method == "resize":
        return _resize(call, jnp)
    reasons = {"partition": "JAX orders the partitions differently, and NumPy leaves the order unspecified",
               "itemset": "itemset is not rewritten"}
    return None, reasons.get(method, f"`.{method}(...)` is not rewritten")


def _resize(call: cst.Call, jnp: str):
    """x.resize(2, 3) or x.resize((2, 3)): ndarray.resize keeps the data in C order and pads
    with zeros, which is jnp.pad(x.ravel(), (0, max(0, n - x.size)))[:n].reshape(shape)."""
    args = [a for a in call.args if a.keyword is None and not a.star]
    if any(a.keyword is not None and a.keyword.value != "refcheck" for a in call.args) or not args:
        return None, "only `x.resize(shape)` with a literal shape is rewritten"
    dims = list(args[0].value.elements) if len(args) == 1 and isinstance(args[0].value, (cst.Tuple, cst.List)) \
        else args
    if not all(isinstance(d.value, cst.Integer) for d in dims):
        return None, "only `x.resize(shape)` with a literal shape is rewritten"
    sizes = [int(d.value.value, 0) for d in dims]
    total = 1
    for size in sizes:
        total *= size
    shape = cst.parse_expression(f"({', '.join(map(str, sizes))}{',' if len(sizes) == 1 else ''})")

    def build(new_call):
        receiver = new_call.func.value
        padding = cst.parse_expression(f"(0, max(0, {total} - {code_of(receiver)}.size))")
        padded = updates.jnp_call(jnp, "pad", updates.call(updates.attr(receiver, "ravel")), padding)
        cut = cst.Subscript(value=padded, slice=[cst.SubscriptElement(cst.Slice(lower=None, upper=cst.Integer(str(total))))])
        return receiver, updates.call(updates.attr(cut, "reshape"), shape)
    return build, None


class InPlaceMethod(Rule):
    code = "NJ205"

    def run(self):
        jnp = self.analysis.jnp_alias
        for write in self.analysis.method_writes:
            if write.receiver_kind in NOT_ARRAYS:
                continue
            fields = dict(receiver=code_of(write.receiver), method=write.method)
            if isinstance(write.node, cst.Call):
                build, reason = _inplace_method(write.node, write.method, jnp)
                line = fix = None
                requires = ()
                if build is not None:
                    line, fix, requires, reason = statement_fix(self.analysis, write.node,
                                                                 write.receiver, build)
            else:  # x.shape = (2, 3)
                line, fix, requires, reason = self._shape_assignment(write)
            if fix is None:
                yield self.report(write.node, outcome=left_because(reason), **fields)
            else:
                yield self.report(line, fix=fix, imports=[("jax.numpy", jnp)], requires=requires,
                                  outcome=rewritten_as("a new array assigned back"), **fields)

    def _shape_assignment(self, write):
        statement = write.node
        if write.method != "shape":
            return None, None, (), f"assigning `.{write.method}` is not rewritten"
        dataflow = self.analysis.dataflow
        line = dataflow.expression_statement_line(statement)
        if line is None or len(statement.targets) != 1:
            return None, None, (), "the statement shares its line or assigns several targets"
        reason = dataflow.unconvertible_because(write.receiver, statement)
        if reason is not None:
            return None, None, (), reason

        def fix(new_line):
            new_statement = new_line.body[0]
            receiver = new_statement.targets[0].target.value
            return updates.replace_line(new_line, [updates.assign(
                receiver, updates.call(updates.attr(receiver, "reshape"), new_statement.value))])

        return line, fix, dataflow.binding_refs(write.receiver), None
