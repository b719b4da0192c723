"""The calls of accumulating reductions the float-accumulation rules read (NJ406, NJ413)."""

from __future__ import annotations

import libcst as cst


def accumulation_calls(analysis, names: frozenset):
    """(call, data, position of its dtype argument, the references it relies on, how it is
    spelled) for each converted `np.NAME(x, ...)` and each `x.NAME(...)` of a JAX `x`, NAME
    among `names` (np.cumsum's dtype is its third argument, the method's its second)."""
    for ref in analysis.refs:
        name = ref.qualname.removeprefix("numpy.")
        if ref.call is None or not ref.converted or name not in names \
                or not ref.call.args or ref.call.args[0].keyword is not None \
                or ref.call.args[0].star:
            continue
        yield ref.call, ref.call.args[0].value, 2, (ref.node,), f"np.{name}(...)"
    flow = analysis.dataflow
    for call in analysis.nodes(cst.Call):
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in names) \
                or analysis.ref_of_call(call) is not None or not flow.jax_typed(func.value):
            continue
        yield call, func.value, 1, flow.jax_refs(func.value), f".{func.attr.value}()"
