"""NJ206 in-place-function.

A NumPy function that writes into its first argument (copyto, fill_diagonal, put, ...):
rewritten to its functional form where provably equivalent.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis import facts
from np2jax.rules._in_place import array_literal, distinct_indices, left_because, rewritten_as, statement_fix
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates


def _not_in_place(name: str, jnp: str):
    """np.put(a, i, v) / np.place(a, m, v) -> a = jnp.<name>(a, i, v, inplace=False)."""
    def build(new_call):
        target = new_call.args[0].value
        rest = (array_literal(a.value, jnp) for a in new_call.args[1:3])
        return target, updates.jnp_call(jnp, name, target, *rest, inplace=cst.Name("False"))
    return build


def _inplace_function(qualname: str, call: cst.Call, jnp: str):
    """The builder for np.<function>(a, ...) as `a = <functional form>`, or the reason."""
    args = call.args
    if any(a.star for a in args) or not args or args[0].keyword is not None:
        return None, "its arguments cannot be checked"
    rest = {a.keyword.value: a.value for a in args if a.keyword is not None}
    positional = [a.value for a in args if a.keyword is None]
    def cast(target, value):
        return updates.jnp_call(jnp, "asarray", value, dtype=updates.attr(target, "dtype"))

    if qualname == "numpy.copyto" and len(positional) == 2 and set(rest) <= {"where", "casting"}:
        def build(new_call):
            target, source = new_call.args[0].value, new_call.args[1].value
            where = next((a.value for a in new_call.args if a.keyword and a.keyword.value == "where"), None)
            value = cast(target, source)
            if where is None:
                return target, updates.jnp_call(jnp, "broadcast_to", value, updates.attr(target, "shape"))
            return target, updates.jnp_call(jnp, "where", where, value, target)
        return build, None
    if qualname == "numpy.fill_diagonal" and len(positional) == 2 and set(rest) <= {"wrap"}:
        if "wrap" in rest and not (isinstance(rest["wrap"], cst.Name) and rest["wrap"].value == "False"):
            return None, "JAX's fill_diagonal does not wrap (wrap=True)"
        def build(new_call):
            target = new_call.args[0].value
            return target, updates.jnp_call(jnp, "fill_diagonal", target,
                                            array_literal(new_call.args[1].value, jnp),
                                            inplace=cst.Name("False"))
        return build, None
    if qualname == "numpy.put" and len(positional) == 3 and not rest:
        if not distinct_indices(positional[1]):
            return None, "the indices may repeat, and JAX does not define which value it keeps"
        return _not_in_place("put", jnp), None
    if qualname == "numpy.place" and len(positional) == 3 and not rest:
        return _not_in_place("place", jnp), None
    if qualname == "numpy.putmask" and len(positional) == 3 and not rest:
        def build(new_call):  # values repeat over the whole array, as np.resize repeats them
            target, mask, values = (a.value for a in new_call.args)
            repeated = updates.jnp_call(jnp, "resize", cast(target, values), updates.attr(target, "shape"))
            return target, updates.jnp_call(jnp, "where", array_literal(mask, jnp), repeated, target)
        return build, None
    if qualname == "numpy.nan_to_num" and len(positional) <= 2 and set(rest) <= {
            "copy", "nan", "posinf", "neginf"}:
        def build(new_call):  # the copy argument goes: JAX's result is always new
            target = new_call.args[0].value
            keywords = {a.keyword.value: a.value for a in new_call.args[1:]
                        if a.keyword is not None and a.keyword.value != "copy"}
            return target, updates.jnp_call(jnp, "nan_to_num", target, **keywords)
        return build, None
    if qualname == "numpy.put_along_axis":
        return None, "its indices may repeat, and JAX does not define which value it keeps"
    return None, "this form of the call is not rewritten"


class InPlaceFunction(Rule):
    code = "NJ206"

    def run(self):
        jnp = self.analysis.jnp_alias
        for ref in self.analysis.refs:
            if ref.keep != facts.KEEP_IN_PLACE_FUNCTION:
                continue
            node = ref.call or ref.node
            if ref.call is None:
                yield self.report(node, function=code_of(ref.node),
                                  outcome=left_because("it is used as a value, not called"))
                continue
            build, reason = _inplace_function(ref.qualname, ref.call, jnp)
            line = fix = None
            requires = ()
            if build is not None:
                line, fix, requires, reason = statement_fix(
                    self.analysis, ref.call, ref.call.args[0].value, build)
            if fix is None:
                yield self.report(node, function=code_of(ref.node), outcome=left_because(reason))
            else:
                yield self.report(line, fix=fix, imports=[("jax.numpy", jnp)], requires=requires,
                                  moves=(ref.call,), function=code_of(ref.node),
                                  outcome=rewritten_as("a new array assigned back"))
