"""In-place writes: JAX arrays are immutable. Reported here; converted by later rules."""

from __future__ import annotations

from np2jax import analyze
from np2jax.catalog import api_policy
from np2jax.checks import Rule, code_of

_NOT_ARRAYS = (analyze.CONTAINER, analyze.SCALAR)


def _what(kind: str) -> str:
    return "an array" if kind == analyze.ARRAY else "a value that may be an array"


def _out_argument(call, position: int | None) -> str:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "out":
            return code_of(arg.value)
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return code_of(positional[position].value) if position is not None else "?"


class SubscriptAssignment(Rule):
    code = "NJ201"

    def run(self):
        for write in self.analysis.subscript_writes:
            if write.operator is None and write.base_kind not in _NOT_ARRAYS:
                yield self.report(write.target, target=code_of(write.target),
                                  what=_what(write.base_kind))


class AugmentedSubscriptAssignment(Rule):
    code = "NJ202"

    def run(self):
        for write in self.analysis.subscript_writes:
            if write.operator is not None and write.base_kind not in _NOT_ARRAYS:
                yield self.report(write.target, target=code_of(write.target),
                                  operator=write.operator, what=_what(write.base_kind))


class SharedAugmentedAssignment(Rule):
    code = "NJ203"

    def run(self):
        for fact in self.analysis.aug_assigns:
            if fact.shared_because is not None:
                yield self.report(fact.node, statement=code_of(fact.node).strip(),
                                  reason=fact.shared_because)


class OutArgument(Rule):
    code = "NJ204"

    def run(self):
        for ref in self.analysis.refs:
            if ref.keep == analyze.KEEP_OUT:  # np.negative(d, out=d), np.maximum.accumulate(x, out=x)
                yield self.report(ref.call or ref.node, call=code_of(ref.node), out=ref.detail)
        positions = api_policy()["method_out_positions"]
        for write in self.analysis.out_method_calls:
            if write.receiver_kind not in _NOT_ARRAYS:
                yield self.report(write.node, call=code_of(write.node.func),
                                  out=_out_argument(write.node, positions.get(write.method)))


class InPlaceMethod(Rule):
    code = "NJ205"

    def run(self):
        for write in self.analysis.method_writes:
            if write.receiver_kind not in _NOT_ARRAYS:
                yield self.report(write.node, receiver=code_of(write.receiver),
                                  method=write.method)


class InPlaceFunction(Rule):
    code = "NJ206"

    def run(self):
        for ref in self.analysis.refs:
            if ref.keep == analyze.KEEP_IN_PLACE_FUNCTION:  # called, or taken as a value
                yield self.report(ref.call or ref.node, function=code_of(ref.node))


class UfuncAt(Rule):
    code = "NJ207"

    def run(self):
        for ref in self.analysis.refs:
            if ref.keep == analyze.KEEP_UFUNC_AT:
                node = self.analysis.parents.get(ref.node)
                call = self.analysis.parents.get(node)
                yield self.report(call if call is not None else node, ufunc=code_of(ref.node))
