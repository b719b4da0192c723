"""NJ116 python-number-as-array-argument.

A Python number given where NumPy makes it a 64-bit array (np.append's values, an item of
np.hstack's sequence), which JAX keeps weakly typed: wrapped in jnp.asarray(v, dtype=float)
or dtype=int. Which calls and parameters do so is read from the API proof
(rules/api/proven.json, `python_numbers`: both libraries run on a Python number beside
uint8, int32 and float32 data).
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import DTYPES
from np2jax.analysis.references import AS_FLOAT_ARRAY, fine, number_differs, python_number_cases
from np2jax.catalog import api_policy
from np2jax.rules.base import Rule
from np2jax.syntax import code_of

# the constructors whose list argument's items the proof gives Python numbers (the grid's
# `python_numbers = "items"`); a list given elsewhere becomes jnp.array(...) (NJ110)
_CONSTRUCTORS = frozenset({"numpy.array", "numpy.asarray"})

# beside these the number's weak type changes nothing: the result is 64-bit either way
_WIDE = frozenset({"float64", "int64", "uint64", "complex128", "int", "float", "complex"})


def _proof_dtypes(dtype: str | None) -> tuple[str, ...]:
    """The dtypes of the proof's cases (np2jax.apiproof.PYTHON_NUMBERS) that stand for
    data of `dtype` beside the number; all of them where it is not known."""
    if dtype in _WIDE:
        return ()
    if dtype is None or dtype not in DTYPES:
        return ("uint8", "int32", "float32")
    kind, bits = DTYPES[dtype]
    if kind in "fc":
        return ("float32",)
    return ("uint8", "int32") if bits < 32 or kind == "b" else ("int32",)


class PythonNumberAsArrayArgument(Rule):
    code = "NJ116"

    def run(self):
        dtype_of = self.analysis.dtypes.dtype_of
        jnp = self.analysis.jnp_alias
        lists = api_policy()["lists"]
        structural = set(lists["nested_lists_are_structure"])  # np.block's lists
        for ref in self.analysis.refs:
            if not ref.converted or not ref.jax_takes_arguments:
                continue
            static = set(lists["static_parameters"].get(ref.qualname, ()))
            data = [a for a in ref.arguments if a.name and a.name not in static
                    and ref.qualname not in structural
                    and (a.role in ("array", "arrays") or (ref.qualname in _CONSTRUCTORS
                                                           and a.name in ("object", "a")))]
            for argument in data:
                value = argument.arg.value
                proven_by = (ref.qualname, argument.name)
                if isinstance(value, (cst.List, cst.Tuple)):
                    members = [e.value for e in value.elements
                               if not isinstance(e, cst.StarredElement)]
                    beside = members
                    if argument.role == "array":
                        # NJ110 makes the list jnp.array(...): np.array's proof is the one
                        proven_by = ("numpy.array", "object")
                elif argument.role != "array":
                    if argument.role != "arrays":  # np.array(2.0), np.asarray(n)
                        yield from self._alone(ref, value, kind=dtype_of(value), jnp=jnp)
                    continue
                else:
                    members = [value]
                    beside = [a.arg.value for a in data if a is not argument]
                for member in members:
                    kind = dtype_of(member)
                    cases = python_number_cases(*proven_by, kind)
                    others = [dtype_of(other) for other in beside if other is not member]
                    if isinstance(value, (cst.List, cst.Tuple)) and not others:
                        continue  # `[5.0]`: nothing beside it to promote with
                    wanted = {d for other in (others or [None]) for d in _proof_dtypes(other)}
                    verdicts = [v for d, v in cases.items() if d in wanted]
                    if all(fine(v) for v in verdicts):
                        continue
                    place = "in" if argument.role == "arrays" else "as"
                    where = f"given {place} `{argument.name}` of `{code_of(ref.node)}`"
                    different = [v for v in verdicts if number_differs(v)]
                    if different:
                        if None not in others and others:  # beside data known to be narrow
                            yield self.report(member, argument=code_of(member), where=where,
                                              outcome=f"left as it was: JAX's version differs "
                                                      f"even so ({different[0].split(': ', 1)[-1]})")
                        continue
                    # beside integer data an integer is NumPy's int64 array; beside float32
                    # data only a float64 array promotes the result as NumPy's int64 does
                    wraps = {v for v in verdicts if not fine(v)}
                    dtype = "float" if kind == "float" or wraps == {AS_FLOAT_ARRAY} else "int"
                    if not self.config.x64:
                        # 32 bits chosen: a weak float becomes the float32 NumPy's float64
                        # stands for; an int must still not wrap into the narrower dtype
                        if dtype == "float":
                            continue
                        dtype = f"{jnp}.int32"
                    yield self.report(
                        member, argument=code_of(member), where=where,
                        outcome=f"wrapped in {jnp}.asarray(..., dtype={dtype}), the array "
                                f"NumPy makes of it",
                        fix=_as_array(jnp, dtype), imports=[("jax.numpy", jnp)],
                        requires=(ref.node,), report_if_unfixed=False)

    def _alone(self, ref, value, kind, jnp):
        """`np.array(2.0)`: NumPy's float64 array, JAX's weakly typed one, which a float32
        value it meets later turns into float32 (NumPy's stays float64): given NumPy's
        dtype, `jnp.array(2.0, dtype=float)`. Not proven by the API table, which compares
        dtypes but not weak types; the JAX documentation's type promotion page states it."""
        call = ref.call
        if not self.config.x64:
            return  # 32 bits chosen: the weak number becomes the 32-bit type NumPy's stands for
        if kind not in ("int", "float") or call is None or any(
                a.keyword is not None and a.keyword.value == "dtype" for a in call.args) \
                or sum(a.keyword is None for a in call.args) > 1:
            return
        def fix(node: cst.Call) -> cst.Call:
            return node.with_changes(args=[*node.args, _keyword("dtype", cst.Name(kind))])
        yield self.report(call, argument=code_of(value),
                          where=f"given alone to `{code_of(ref.node)}`",
                          outcome=f"given NumPy's dtype, `dtype={kind}`", fix=fix,
                          requires=(ref.node,), report_if_unfixed=False)


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value, keyword=cst.Name(name), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))


def _as_array(jnp: str, dtype: str):
    def fix(node: cst.BaseExpression) -> cst.BaseExpression:
        return cst.Call(func=cst.Attribute(cst.Name(jnp), cst.Name("asarray")),
                        args=[cst.Arg(node), _keyword("dtype", cst.parse_expression(dtype))])
    return fix
