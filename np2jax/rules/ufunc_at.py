"""NJ207 ufunc-at.

`np.add.at(x, i, v)` and the other unbuffered in-place ufunc updates: rewritten to
`x.at[i].add(v)` where provably equivalent.
"""

from __future__ import annotations

from functools import partial

import libcst as cst

from np2jax.analysis import facts
from np2jax.analysis.dtypes import needs_cast, stored
from np2jax.rules._in_place import array_literal, left_because, rewritten_as, statement_fix
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates


def _ufunc_at(new_call: cst.Call, method: str, jnp: str, list_name: bool = False):
    """np.add.at(x, idx, v) -> x.at[idx].add(v); a tuple of index arrays indexes each axis."""
    target, index, values = (a.value for a in new_call.args)
    if list_name:  # a name bound to a list: .at[] refuses lists
        index = updates.jnp_call(jnp, "asarray", index)
    # a tuple indexes each axis; `()` (the whole array) is an index of its own
    parts = list(index.elements) if isinstance(index, cst.Tuple) and index.elements \
        else [cst.Element(index)]
    elements = updates.with_commas([cst.SubscriptElement(slice=cst.Index(p.value)) for p in parts])
    return target, updates.at_update(target, elements, method, array_literal(values, jnp), jnp)


class UfuncAt(Rule):
    code = "NJ207"

    def run(self):
        jnp = self.analysis.jnp_alias
        for ref in self.analysis.refs:
            if ref.keep != facts.KEEP_UFUNC_AT:
                continue
            at = self.analysis.parents.get(ref.node)
            call = self.analysis.parents.get(at)
            if not (isinstance(call, cst.Call) and call.func is at):
                yield self.report(at, ufunc=code_of(ref.node), outcome=left_because("it is not called"))
                continue
            method = updates.UFUNC_AT_METHODS.get(ref.qualname)
            args = call.args
            if method is None or len(args) != 3 or any(a.keyword or a.star for a in args):
                yield self.report(call, ufunc=code_of(ref.node), outcome=left_because(
                    f"`{code_of(ref.node)}.at` with these arguments has no `.at[]` counterpart"))
                continue
            cast = self._cast_per_update(args[0].value, args[2].value, method)
            if cast is not None:
                yield self.report(call, ufunc=code_of(ref.node), outcome=left_because(cast))
                continue
            index = args[1].value
            values, _ = self.analysis.dataflow.values_of(index) if isinstance(index, cst.Name) else (None, None)
            list_name = bool(values) and all(isinstance(v, (cst.List, cst.ListComp)) for v, _ in values)
            build = partial(_ufunc_at, method=method, jnp=jnp, list_name=list_name)
            line, fix, requires, reason = statement_fix(self.analysis, call, args[0].value, build)
            if fix is None:
                yield self.report(call, ufunc=code_of(ref.node), outcome=left_because(reason))
            else:
                yield self.report(line, fix=fix, imports=[("jax.numpy", jnp)], requires=requires,
                                  moves=(call,), ufunc=code_of(ref.node),
                                  outcome=rewritten_as(f"`.at[...].{method}(...)`"))

    def _cast_per_update(self, target, values, method: str) -> str | None:
        """NumPy casts each update back into the array's dtype before the next one at the same
        index (an integer array gets -3 + 0.7 -> -2, then -2 + 0.7 -> -1); JAX's `.at[]`
        casts the values first (-3 + 0 + 0: -3)."""
        dtypes = self.analysis.dtypes
        array, value = dtypes.dtype_of(target), dtypes.dtype_of(values)
        if not needs_cast(array, stored(array, method, value)):
            return None
        return (f"`{code_of(target)}` holds {array} and the update computes {stored(array, method, value)}: "
                "NumPy casts the result back after each update at an index, where JAX's `.at[]` "
                "casts the values first")
