"""NJ403 float-to-integer-cast.

A cast of float values to an integer dtype, whose out-of-range values and NaN JAX converts
otherwise than NumPy.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.casts import WRAPPED_TARGETS, int32_wrap
from np2jax.analysis.dtypes import integer_range
from np2jax.rules.base import Rule
from np2jax.syntax import argument_for, code_of

# Functions whose dtype= casts their data: np.array(x, dtype=np.uint8).
CASTING_CONSTRUCTORS = frozenset({"numpy.array", "numpy.asarray", "numpy.asanyarray"})


LEFT = "clip them into the range first if they can leave it"
# the dtype in the message of a store whose values' dtype the analysis does not know
UNKNOWN = "possibly float (their dtype is not known here)"
# calls whose result is a Python int whatever they are given
_INTEGRAL_CALLS = frozenset({"int", "len", "round", "ord", "hash", "bool"})
REWRITTEN = "rewritten to cast them as NumPy does on x86-64 (through {}-bit integers)"


class FloatToIntegerCast(Rule):
    code = "NJ403"

    def run(self):
        """Float data cast to an integer dtype where the data is a JAX array once converted
        (the finding stands only if that conversion happened): `x.astype(np.uint8)`,
        `np.asarray(x, dtype=np.int16)`, `np.int16(x)`, `img[i] = v`, whose values may leave
        the target's range or be NaN (np2jax.analysis.casts decides). A cast of values of a
        NumPy float dtype to a target casts.int32_wrap reproduces is rewritten into it; a
        write whose conversion casts as NumPy does (its plan `wraps`) is not reported."""
        dtypes = self.analysis.dtypes
        casts = self.analysis.casts
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "astype"):
                continue
            target = argument_for(call, 0, "dtype")
            target_dtype = dtypes.spelled(target) if target is not None else None
            source = casts.float_source(func.value)
            requires = casts.jax_refs(func.value)
            if casts.may_leave_range(call, func.value, source, target_dtype) and requires is not None:
                fix = self._wrap(func.value, target_dtype, len(call.args) == 1,
                                 lambda new: (new.func.value, new.args[0].value))
                yield self._report(call, f"{code_of(func.value)}.astype(...)", source, target_dtype,
                                   requires, fix)
            elif source is None and target_dtype in WRAPPED_TARGETS and requires is not None \
                    and dtypes.dtype_of(func.value) is None and not _integral(func.value):
                # nothing shows what the values are (np.fromfunction's, a parameter's): floats
                # among them, out of range, give other integers
                yield self._report(call, f"{code_of(func.value)}.astype(...)", UNKNOWN,
                                   target_dtype, requires)
        for ref in self.analysis.refs:
            if ref.call is None or not ref.converted or not ref.call.args:
                continue
            data = ref.call.args[0]
            if data.keyword is not None or data.star:
                continue
            fix = None
            source = casts.float_source(data.value)
            if ref.qualname in CASTING_CONSTRUCTORS:
                target = argument_for(ref.call, 1, "dtype")
                target_dtype = dtypes.spelled(target) if target is not None else None
                if casts.may_leave_range(ref.call, data.value, source, target_dtype):
                    fix = self._wrap(data.value, target_dtype, len(ref.call.args) == 2, _data_and_dtype)
            else:  # np.uint8(x): the scalar type called as a function
                target_dtype = dtypes.spelled(ref.node)
            if casts.may_leave_range(ref.call, data.value, source, target_dtype):
                yield self._report(ref.call, code_of(ref.node), source, target_dtype, (ref.node,), fix)

        for node, array, value, combined in self._writes():
            source, target_dtype = casts.float_source(value), dtypes.dtype_of(array)
            data = None if combined else value  # `a[i] += v` stores a + v: no bound on it
            requires = casts.jax_refs(array)
            if casts.may_leave_range(node, data, source, target_dtype, value) and requires is not None \
                    and not (isinstance(node, (cst.Assign, cst.AugAssign))
                             and self.analysis.write_plan(node).wraps):
                yield self._report(node, code_of(node).strip().splitlines()[0], source,
                                   target_dtype, requires)
            elif source is None and target_dtype in WRAPPED_TARGETS and requires is not None \
                    and dtypes.operand_of(value) is None and not _integral(value) \
                    and not (isinstance(node, (cst.Assign, cst.AugAssign))
                             and self.analysis.write_plan(node).wraps):
                # nothing shows what the stored values are (a parameter's elements, a
                # function's result): floats among them would be cast, and out of range
                # they give other integers
                yield self._report(node, code_of(node).strip().splitlines()[0], UNKNOWN,
                                   target_dtype, requires)

    def _wrap(self, data: cst.BaseExpression, target: str, only_dtype: bool, parts):
        """The fix that casts `data` as NumPy does (casts.int32_wrap), or None: the data's
        dtype must be a NumPy float dtype on every path (dtype_of, not float_source: an
        integer branch would wrap otherwise), the call must say nothing but the dtype, and
        an int64 target needs JAX's 64-bit types. Not where --jit compiles it: compiled,
        the float computations before the cast (a sine, a product fused with a sum) come
        out with other last bits than NumPy's often enough that a value sitting on an
        integer truncates to its neighbour; reported, the cast says where to look.
        `parts(new_call)`: (data, dtype) as rewritten."""
        int64 = self.config.x64
        if self.context.may_be_traced(data) or not only_dtype or not self.analysis.casts.wraps_exactly(
                self.analysis.dtypes.dtype_of(data), target, data, int64=int64):
            return None
        jnp, bits = self.analysis.jnp_alias, 64 if target == "int64" else 32

        def fix(new_call):
            value, dtype = parts(new_call)
            return int32_wrap(value, dtype, jnp, bits).with_changes(
                lpar=new_call.lpar, rpar=new_call.rpar)
        return fix

    def _writes(self):
        """(node, array, value, combined) for each write of a value into an array element:
        `a[i] = v`, `a[i] += v` and `np.add.at(a, i, v)` (combined: the array's own value is
        computed with `v` before the cast back to the array's dtype)."""
        for statement in self.analysis.nodes(cst.Assign):
            for target in statement.targets:
                if isinstance(target.target, cst.Subscript):
                    yield statement, target.target.value, statement.value, False
                elif isinstance(target.target, (cst.Tuple, cst.List)) \
                        and isinstance(statement.value, (cst.Tuple, cst.List)):
                    # `a[0], a[1] = u, v`: each element into its own target
                    for element, value in zip(target.target.elements, statement.value.elements):
                        if isinstance(element.value, cst.Subscript) \
                                and not isinstance(value, cst.StarredElement):
                            yield statement, element.value.value, value.value, False
        for statement in self.analysis.nodes(cst.AugAssign):
            if isinstance(statement.target, cst.Subscript):
                yield statement, statement.target.value, statement.value, True
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "at" \
                    and self.analysis.names_numpy(func.value) and len(call.args) >= 3 \
                    and not any(a.star or a.keyword for a in call.args[:3]):
                yield call, call.args[0].value, call.args[2].value, True

    def _report(self, node, spelled: str, source: str, target: str, requires, fix=None):
        low, high = integer_range(target)
        bits = 64 if target == "int64" else 32
        return self.report(node, fix=fix, requires=requires, spelled=spelled, dtype=source,
                           target=target, low=str(low), high=str(high),
                           imports=[("jax.numpy", self.analysis.jnp_alias)] if fix else (),
                           report_if_unfixed=fix is None,
                           outcome=REWRITTEN.format(bits) if fix else LEFT)


def _integral(value: cst.BaseExpression) -> bool:
    """`int(v)`, `len(s)`, `round(v)` (one argument): Python integers however unknown their
    argument."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
        and value.func.value in _INTEGRAL_CALLS and len(value.args) == 1


def _data_and_dtype(new_call: cst.Call) -> tuple:
    """np.asarray(data, dtype=...) as rewritten: its data and its dtype argument."""
    dtype = argument_for(new_call, 1, "dtype")
    return new_call.args[0].value, dtype
