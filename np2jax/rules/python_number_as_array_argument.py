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
from np2jax.analysis.facts import ARRAY_CONSTRUCTORS
from np2jax.analysis.references import (
    AS_ARRAY,
    AS_FLOAT_ARRAY,
    data_arguments,
    fine,
    list_items,
    number_differs,
    numbers_alone_verdict,
    python_number_cases,
)
from np2jax.catalog import api_policy
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates

# the Python numbers NumPy makes 64-bit arrays of, and the dtype= that spells each
_NUMBERS = {"int": "int", "float": "float", "complex": "complex"}
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
        lists = api_policy()["lists"]
        structural = set(lists["nested_lists_are_structure"])  # np.block's lists
        for ref in self.analysis.refs:
            if not ref.converted or not ref.jax_takes_arguments or ref.qualname in structural:
                continue
            static = set(lists["static_parameters"].get(ref.qualname, ()))
            data = [a for a in data_arguments(ref) if a.name and a.name not in static]
            numbers = self._weak_numbers(ref, data)
            if numbers:
                yield from self._numbers_alone(ref, numbers)
                continue
            for argument in data:
                value = argument.arg.value
                members = list_items(value)
                if members is not None:
                    # NJ110 makes a list given for an array jnp.array(...): np.array's proof
                    proven_by = ("numpy.array", "object") if argument.role == "array" \
                        else (ref.qualname, argument.name)
                    for member in members:
                        others = [m for m in members if m is not member]
                        if others:  # `[5.0]`: nothing beside it to promote with
                            yield from self._number(ref, argument, member, others, proven_by)
                elif argument.role == "array":
                    others = [a.arg.value for a in data if a is not argument]
                    yield from self._number(ref, argument, value, others,
                                            (ref.qualname, argument.name))
                elif argument.role != "arrays":  # np.array(2.0), np.asarray(n)
                    yield from self._alone(ref, value)

    def _number(self, ref, argument, member, beside, proven_by):
        """`member`, given for `argument` beside the data `beside`: a Python number the
        proof shows JAX takes otherwise than NumPy, wrapped as the array NumPy makes of it."""
        dtype_of = self.analysis.dtypes.dtype_of
        jnp = self.analysis.jnp_alias
        kind = dtype_of(member)
        cases = python_number_cases(*proven_by, kind)
        others = [dtype_of(other) for other in beside]
        wanted = {d for other in (others or [None]) for d in _proof_dtypes(other)}
        verdicts = [v for d, v in cases.items() if d in wanted]
        if all(fine(v) for v in verdicts):
            return
        place = "in" if argument.role == "arrays" else "as"
        where = f"given {place} `{argument.name}` of `{code_of(ref.node)}`"
        different = [v for v in verdicts if number_differs(v)]
        if different:
            if others and None not in others:  # beside data known to be narrow
                yield self.report(member, argument=code_of(member), where=where,
                                  outcome=f"left as it was: JAX's version differs even so "
                                          f"({different[0].split(': ', 1)[-1]})")
            return
        # beside integer data an integer is NumPy's int64 array; beside float32 data only a
        # float64 array promotes the result as NumPy's int64 does
        wraps = {v for v in verdicts if not fine(v)}
        dtype: cst.BaseExpression = cst.Name(
            "float" if kind == "float" or wraps == {AS_FLOAT_ARRAY} else "int")
        if not self.config.x64:
            # 32 bits chosen: a weak float becomes the float32 NumPy's float64 stands for;
            # an int must still not wrap into the narrower dtype
            if dtype.value == "float":
                return
            dtype = updates.attr(cst.Name(jnp), "int32")
        spelled = code_of(dtype)
        yield self.report(
            member, argument=code_of(member), where=where,
            outcome=f"wrapped in {jnp}.asarray(..., dtype={spelled}), the array NumPy makes of it",
            fix=lambda node: updates.jnp_call(jnp, "asarray", node, dtype=dtype),
            imports=[("jax.numpy", jnp)], requires=(ref.node,), report_if_unfixed=False)

    def _weak_numbers(self, ref, data) -> list:
        """The Python numbers whose weak type JAX's result of `ref` keeps where NumPy's is
        64-bit: every data argument of a function the proof ran on Python numbers alone and
        found weakly typed in JAX (`np.sqrt(d)`, `np.maximum(2, 3.5)`, `np.clip(alpha, 0,
        1)`: AS_ARRAY in `python_numbers`), np.where's two values, np.full's fill value; []
        unless all of them are numbers a name does not take from a parameter (a caller may
        pass an array) and no dtype= is given."""
        call = ref.call
        if call is None or not data or ref.dtype_argument is not None:
            return []  # a dtype given, by keyword or position (`np.full(s, -1, np.int64)`)
        if ref.qualname == "numpy.where" and len(data) == 3:
            values = data[1:]  # beside a condition array (the proof gave all three numbers)
        elif ref.qualname == "numpy.full":
            values = [a for a in ref.arguments if a.name == "fill_value"]  # an option there
        elif ref.qualname not in ARRAY_CONSTRUCTORS and numbers_alone_verdict(ref.qualname) == AS_ARRAY:
            values = data  # np.array(2.0) is _alone's
        else:
            return []
        dtype_of = self.analysis.dtypes.dtype_of
        flow = self.analysis.dataflow
        numbers = [a.arg.value for a in values]
        if not numbers or not all(dtype_of(v) in _NUMBERS and not flow.parameter_bound(v)
                                  for v in numbers):
            return []
        return numbers

    def _numbers_alone(self, ref, numbers):
        """NumPy's result of a ufunc of Python numbers alone is a 64-bit NumPy scalar, and
        np.full's and np.where's of numbers a 64-bit array, which promotes the float32 data
        it meets later (`q32 @ q32.T / np.sqrt(d)` is float64); JAX's is weakly typed and
        takes float32: each number is given as the 64-bit array NumPy makes of it, which
        the proof shows giving NumPy's result (np.where's and np.full's: checked by running
        JAX in tests/rules/test_api_arguments.py)."""
        if not self.config.x64:
            return  # 32 bits chosen: the weak result is the 32-bit type NumPy's stands for
        jnp = self.analysis.jnp_alias
        if ref.qualname == "numpy.full":  # `jnp.full(3, 10.0, dtype=float)`
            (value,) = numbers
            kind = _NUMBERS[self.analysis.dtypes.dtype_of(value)]
            yield self.report(ref.call, argument=code_of(value),
                              where=f"given alone to `{code_of(ref.node)}`",
                              outcome=f"given NumPy's dtype, `dtype={kind}`",
                              fix=lambda node: updates.with_keyword(node, "dtype", cst.Name(kind)),
                              requires=(ref.node,), report_if_unfixed=False)
            return
        kinds = [_NUMBERS[self.analysis.dtypes.dtype_of(value)] for value in numbers]
        if len(set(kinds)) == 1:  # one 64-bit array of the kind makes the result 64-bit
            numbers, kinds = numbers[:1], kinds[:1]
        for value, kind in zip(numbers, kinds):
            dtype = cst.Name(kind)
            yield self.report(
                value, argument=code_of(value), where=f"given alone to `{code_of(ref.node)}`",
                outcome=f"wrapped in {jnp}.asarray(..., dtype={dtype.value}), the array NumPy "
                        f"makes of it",
                fix=lambda node, dtype=dtype: updates.jnp_call(jnp, "asarray", node, dtype=dtype),
                imports=[("jax.numpy", jnp)], requires=(ref.node,), report_if_unfixed=False)

    def _alone(self, ref, value):
        """`np.array(2.0)`: NumPy's float64 array, JAX's weakly typed one, which a float32
        value it meets later turns into float32 (NumPy's stays float64): given NumPy's
        dtype, `jnp.array(2.0, dtype=float)`. Not proven by the API table, which compares
        dtypes but not weak types; the JAX documentation's type promotion page states it."""
        call, kind = ref.call, self.analysis.dtypes.dtype_of(value)
        if not self.config.x64:
            return  # 32 bits chosen: the weak number becomes the 32-bit type NumPy's stands for
        if kind not in ("int", "float") or call is None or ref.dtype_argument is not None \
                or sum(a.keyword is None for a in call.args) > 1:
            return
        yield self.report(call, argument=code_of(value),
                          where=f"given alone to `{code_of(ref.node)}`",
                          outcome=f"given NumPy's dtype, `dtype={kind}`",
                          fix=lambda node: updates.with_keyword(node, "dtype", cst.Name(kind)),
                          requires=(ref.node,), report_if_unfixed=False)
