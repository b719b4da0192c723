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
from np2jax.rules.base import Rule
from np2jax.syntax import code_of

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
        for ref in self.analysis.refs:
            if not ref.converted or not ref.jax_takes_arguments:
                continue
            data = [a for a in ref.arguments if a.role in ("array", "arrays") and a.name]
            for argument in data:
                value = argument.arg.value
                if argument.role == "arrays":
                    if not isinstance(value, (cst.List, cst.Tuple)):
                        continue
                    members = [e.value for e in value.elements
                               if not isinstance(e, cst.StarredElement)]
                    beside = members
                else:
                    members = [value]
                    beside = [a.arg.value for a in data if a is not argument]
                for member in members:
                    kind = dtype_of(member)
                    cases = python_number_cases(ref.qualname, argument.name, kind)
                    others = [dtype_of(other) for other in beside if other is not member]
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
                    yield self.report(
                        member, argument=code_of(member), where=where,
                        outcome=f"wrapped in {jnp}.asarray(..., dtype={dtype}), the array "
                                f"NumPy makes of it",
                        fix=_as_array(jnp, dtype), imports=[("jax.numpy", jnp)],
                        requires=(ref.node,))


def _as_array(jnp: str, kind: str):
    def fix(node: cst.BaseExpression) -> cst.BaseExpression:
        return cst.Call(func=cst.Attribute(cst.Name(jnp), cst.Name("asarray")),
                        args=[cst.Arg(node), cst.Arg(cst.Name(kind), keyword=cst.Name("dtype"),
                                                     equal=cst.AssignEqual(
                                                         whitespace_before=cst.SimpleWhitespace(""),
                                                         whitespace_after=cst.SimpleWhitespace("")))])
    return fix
