"""NJ204 out-argument.

A call that writes its result into `out=`: rewritten to assign the result where provably
equivalent.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis import facts
from np2jax.catalog import api_policy
from np2jax.rules._in_place import NOT_ARRAYS, left_because, rewritten_as, statement_fix
from np2jax.rules.base import Rule
from np2jax.rules.call_differs_in_jax import numpy_dispatch
from np2jax.syntax import code_of, is_none, updates


def _drop_out(call: cst.Call, out_arg_index: int) -> list[cst.Arg]:
    args = [a for i, a in enumerate(call.args) if i != out_arg_index]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return args


def _out_argument(call, position: int | None) -> str:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "out":
            return code_of(arg.value)
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return code_of(positional[position].value) if position is not None else "?"



class OutArgument(Rule):
    code = "NJ204"

    def run(self):
        for ref in self.analysis.refs:
            if ref.out_arg is None or (ref.keep is not None and ref.keep != facts.KEEP_OUT):
                continue
            out = code_of(ref.out_arg.value)
            if ref.keep == facts.KEEP_OUT:
                reason = self.analysis.dataflow.out_call_convertible(ref) if ref.call is not None \
                    else "it is a ufunc method"
                fields = {"call": code_of(ref.node), "out": out,
                          "outcome": left_because(reason or "its arguments cannot be checked")}
                yield self.report(ref.call or ref.node, **fields)
                yield from numpy_dispatch(self, ref, **fields)  # np.cumprod(a, out=b): a.cumprod
                continue
            yield self._converted_call(ref, out)
        for ref in self.analysis.refs:  # np.maximum.accumulate(x, out=x) and friends
            if ref.keep == facts.KEEP_OUT and ref.out_arg is None:
                yield self.report(ref.node, call=code_of(ref.node), out=ref.detail,
                                  outcome=left_because("ufunc methods are not rewritten"))
        positions = api_policy()["method_out_positions"]
        for write in self.analysis.out_method_calls:
            if write.receiver_kind not in NOT_ARRAYS:
                yield self._method(write, positions.get(write.method))

    def _converted_call(self, ref, out: str):
        index = next(i for i, a in enumerate(ref.call.args) if a is ref.out_arg)
        inputs = [a.value for i, a in enumerate(ref.call.args) if i != index]
        same = any(v.deep_equals(ref.out_arg.value) for v in inputs)

        def build(new_call):
            target = new_call.args[index].value
            value = new_call.with_changes(args=_drop_out(new_call, index))
            if not same:  # NumPy casts the result into out's dtype
                value = updates.call(updates.attr(value, "astype"), updates.attr(target, "dtype"))
            return target, value

        line, fix, requires, reason = statement_fix(self.analysis, ref.call, ref.out_arg.value, build)
        return self.report(line, fix=fix, requires=(ref.node, *requires), call=code_of(ref.node),
                           out=out, outcome=rewritten_as(f"`{out} = {code_of(ref.node)}(...)`"))

    def _method(self, write, position):
        call = write.node
        out = _out_argument(call, position)
        out_index = next((i for i, a in enumerate(call.args)
                          if a.keyword is not None and a.keyword.value == "out"), None)
        if out_index is None and position is not None:
            positional = [i for i, a in enumerate(call.args) if a.keyword is None and not a.star]
            out_index = positional[position] if len(positional) > position else None
        target = call.args[out_index].value if out_index is not None else None
        if target is None or is_none(target) or not target.deep_equals(write.receiver):
            return self.report(call, call=code_of(call.func), out=out,
                               outcome=left_because("only `x.method(..., out=x)` is rewritten"))

        def build(new_call):
            return new_call.func.value, new_call.with_changes(args=_drop_out(new_call, out_index))

        line, fix, requires, reason = statement_fix(self.analysis, call, write.receiver, build)
        if fix is None:
            return self.report(call, call=code_of(call.func), out=out, outcome=left_because(reason))
        return self.report(line, fix=fix, requires=requires, call=code_of(call.func), out=out,
                           outcome=rewritten_as(f"`{out} = {code_of(call.func)}(...)`"))
