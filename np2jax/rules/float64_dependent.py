"""NJ401 float64-dependent.

In the 32-bit mode (--x32), code whose results depend on 64-bit types, which JAX then makes
32-bit: wide dtypes, rounding to decimals, integers beyond int32, dtype comparisons,
tolerances below float32's precision, float constants beyond float32's exact integers
(epoch seconds, Julian dates), the limits `finfo` gives, sums and products of integer data
and integer data scaled by large constants (int32 overflows past 2**31 where NumPy's int64
does not), linear solves (float32's digits go to an ill-conditioned matrix), and matrix
products (TF32 on NVIDIA GPUs).
"""

from __future__ import annotations

import math

import libcst as cst

from np2jax.analysis.casts import is_float
from np2jax.analysis.dtypes import is_integer
from np2jax.analysis.shapes import static_shape
from np2jax.catalog import api_policy
from np2jax.rules._digits import shown_values
from np2jax.rules.base import Rule
from np2jax.syntax import argument_for, code_of

INT32_LIMIT = 2**31
FLOAT32_EPSILON = 1e-7  # about float32's machine epsilon (1.2e-7): smaller tolerances vanish
FLOAT32_OFFSET = 2**20  # float32 steps here are 1/8: times and dates lose their fractions
CLOSE_SPREAD = 1e-2  # values this close keep under 5 digits of their differences in float32
SCALE = 1000  # a unit change (s to ms, ms to us): data past 2.1 million passes 2**31
# functions whose float32 result leaves float32's range long before float64's does
_PRODUCTS = frozenset({"numpy.prod", "numpy.cumprod", "numpy.nanprod", "numpy.nancumprod"})
_RANGE_FUNCTIONS = _PRODUCTS | {"numpy.exp", "numpy.expm1", "numpy.exp2", "numpy.cosh",
                                "numpy.sinh"}
# the largest magnitude of an element of each narrow integer dtype
_NARROW_INTEGERS = {"bool": 1, "int8": 128, "uint8": 255, "int16": 32768, "uint16": 65535}
ACCUMULATING = frozenset({"sum", "prod", "cumsum", "cumprod", "dot", "matmul", "trace",
                          "nansum", "nanprod", "nancumsum", "nancumprod", "einsum"})
TF32 = ("JAX multiplies float32 matrices on NVIDIA GPUs in TF32 by default (inputs rounded "
        "to 10 bits of mantissa: relative errors near 1e-3, where a full float32 product "
        "keeps about 1e-7); for float32's digits run it under `with "
        "jax.default_matmul_precision(\"highest\"):`, or set "
        "JAX_DEFAULT_MATMUL_PRECISION=highest for the process")
# data made as it is given: float32 holds these values as float64 does (small ones)
MADE_AS_GIVEN = frozenset(f"numpy.{name}" for name in (
    "ones", "zeros", "full", "empty", "ones_like", "zeros_like", "full_like", "eye",
    "identity", "array", "asarray"))
_FOLDED = {cst.Power: lambda a, b: a ** b, cst.LeftShift: lambda a, b: a << b,
           cst.Multiply: lambda a, b: a * b}


class Float64Dependent(Rule):
    code = "NJ401"

    def run(self):
        if self.config.x64:
            return
        for node, spelled in self._wide_dtypes():
            yield self.report(node, spelled=spelled,
                              reason="it is a 64-bit dtype, and JAX uses 32 bits unless "
                                     "jax_enable_x64 is on")
        for call in self._decimal_roundings():
            yield self.report(call, spelled=code_of(call.func) + "(..., decimals)",
                              reason="rounding to decimals depends on the exact binary value, "
                                     "which float32 changes (2.345 rounds to 2.34 in float64, "
                                     "2.35 in float32)")
        for literal in self._wide_literals():
            yield self.report(literal, spelled=code_of(literal),
                              reason="the integer does not fit in int32, JAX's default integer")
        for comparison in self.analysis.nodes(cst.Comparison):
            sides = [comparison.left, *(c.comparator for c in comparison.comparisons)]
            if any(isinstance(side, cst.Attribute) and side.attr.value == "dtype" for side in sides):
                yield self.report(comparison, spelled=code_of(comparison),
                                  reason="JAX's default integer and float types are 32-bit, so "
                                         "a dtype check can change its answer")
        for literal in self.analysis.nodes(cst.Float):
            try:
                number = float(literal.value.replace("_", ""))
            except ValueError:
                continue
            if 0.0 < abs(number) < FLOAT32_EPSILON:
                yield self.report(literal, spelled=code_of(literal),
                                  reason="a tolerance this small is below float32 precision "
                                         "(about 1.2e-7)")
            elif abs(number) >= FLOAT32_OFFSET:
                yield self.report(literal, spelled=code_of(literal),
                                  reason="float32 keeps about 7 significant digits: near this "
                                         "value its steps are "
                                         f"{2.0 ** (int(abs(number)).bit_length() - 24):g}, so "
                                         "offsets and differences from it lose precision")
        for values, spread, largest in self._close_values():
            digits = max(0, round(math.log10(spread / (largest * FLOAT32_EPSILON))))
            yield self.report(values, spelled=_abridged(values),
                              reason=f"float32 keeps about 7 significant digits, so differences "
                                     f"of these values (a spread of {spread:g} at {largest:g}) "
                                     f"keep about {digits}: a std, a var, `np.diff` or centring "
                                     "on the mean cancels the rest")
        for operation in self._scaled_integers():
            yield self.report(operation, spelled=code_of(operation),
                              reason="integer data scaled by a large constant passes 2**31, "
                                     "where JAX's int32 wraps and NumPy's int64 does not "
                                     "(microseconds of a day, byte offsets)")
        solves = frozenset(api_policy()["precision"]["linear_solves"])
        for ref in self.analysis.refs:
            if ref.call is not None and ref.converted and ref.qualname in solves:
                yield self.report(ref.call, spelled=code_of(ref.node) + "(...)",
                                  reason="float32 gives a linear solve about 7 significant "
                                         "digits, and an ill-conditioned matrix (normal "
                                         "equations, a Vandermonde matrix) takes most of them")
        for ref in self.analysis.refs:
            if ref.call is not None and ref.converted \
                    and ref.qualname in ("numpy.allclose", "numpy.isclose") \
                    and argument_for(ref.call, 3, "atol") is None:
                yield self.report(ref.call, spelled=code_of(ref.node) + "(...)",
                                  reason="its default atol=1e-08 is below float32 precision: "
                                         "a difference that is 1e-16 in float64 (a sum that "
                                         "cancels to zero) is about 1e-7 in float32")
        for operation, value in self._errors_against_exact_values():
            yield self.report(operation, spelled=code_of(operation),
                              requires=self.analysis.dataflow.jax_refs(value),
                              reason=f"`{code_of(value)}`, which JAX computes in float32, is "
                                     "compared with a value known to float64's 16 digits: an "
                                     "error below about 1e-7 of their size is float32's rounding, "
                                     "not the method's (a convergence order, a tolerance test)")
        for call, spelled in self._range_edges():
            yield self.report(call, spelled=spelled,
                              reason="float32 holds magnitudes from about 1.2e-38 to 3.4e38 "
                                     "(float64: 2.2e-308 to 1.8e308): exp overflows to inf past "
                                     "88.7 and underflows to 0 below -103, a product of many "
                                     "factors leaves the range sooner, and a log, a ratio or a "
                                     "normalization of the result gives inf, nan or -inf "
                                     "where NumPy's is finite")
        for operation in self._one_pass_variances():
            yield self.report(operation, spelled=code_of(operation),
                              reason="a variance taken as a mean of squares minus a squared "
                                     "mean cancels: in float32 the squares of data far from "
                                     "zero keep too few digits for their spread, down to none "
                                     "(`np.var(x)` or the mean of squared deviations keeps them)")
        yield from self._matrix_products()
        yield from self._float32_made_integers()
        flow = self.analysis.dataflow
        for update in self._running_totals():
            yield self.report(update, spelled=code_of(update).strip(),
                              requires=flow.jax_refs(update.value),
                              reason="a total a Python loop adds to step by step keeps float32's "
                                     "7 digits at each step (NumPy's float64: 16): the rounding "
                                     "adds up, and a loop that tests the total (`while t < "
                                     "t_end`) may run another number of times")
        for read in self._dtype_reads():
            yield self.report(read, spelled=code_of(read), requires=flow.jax_refs(read.value),
                              reason="the 32-bit mode gives the array JAX's 32-bit dtype where "
                                     "NumPy's was 64-bit: its dtype's name, item size and byte "
                                     "count change")
        dtype_of = self.analysis.dtypes.dtype_of
        for where, value in shown_values(self.analysis):
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value in ("tolist", "item") and not value.args:
                value = value.func.value  # str(x.tolist()): the float32 values as Python floats
            dtype = dtype_of(value)
            if dtype is not None and dtype.startswith(("float", "complex")) and flow.jax_typed(value):
                yield self.report(where, spelled=code_of(where), requires=flow.jax_refs(value),
                                  reason=f"it writes out all the digits of `{code_of(value)}`, "
                                         "which the converted code computes in float32: "
                                         "1.4142135381698608 where NumPy's float64 writes "
                                         "1.4142135623730951 (format fewer digits, "
                                         "`f\"{v:.6g}\"`, for text that agrees)")
        jax_refs = self.analysis.dataflow.jax_refs
        for ref, call, argument in self.analysis.kept_calls_given_jax_values:
            library = "SciPy" if ref.qualname.startswith("scipy") else "NumPy"
            yield self.report(call, spelled=code_of(call.func) + "(...)",
                              requires=jax_refs(argument),
                              reason=f"it stays on {library} and is handed "
                                     f"`{code_of(argument)}`, which the converted code "
                                     "computes in float32: it computes with the float32 "
                                     "values it gets where the original gave it float64 "
                                     "(differences of close samples, a finite-difference "
                                     "step, a tolerance, the digits of its result)")
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
            if name in ("finfo", "iinfo") and self.analysis.names_numpy(func):
                yield self.report(call, spelled=code_of(call),
                                  reason="its limits are float32's and int32's when JAX "
                                         "computes in 32 bits")
            elif name in ACCUMULATING:
                yield from self._integer_accumulation(call, name)

    def _running_totals(self):
        """`t += dt` (or `-=`) of a name inside a `for` or `while` loop, where `dt` is a JAX
        array once converted and not of an integer dtype the code shows."""
        flow, dtypes, parents = self.analysis.dataflow, self.analysis.dtypes, self.analysis.parents
        for update in self.analysis.nodes(cst.AugAssign):
            if not isinstance(update.target, cst.Name) \
                    or not isinstance(update.operator, (cst.AddAssign, cst.SubtractAssign)) \
                    or is_integer(dtypes.dtype_of(update.value)) or not flow.jax_typed(update.value):
                continue
            node = parents.get(update)
            while node is not None and not isinstance(node, (cst.For, cst.While, cst.FunctionDef)):
                node = parents.get(node)
            if isinstance(node, (cst.For, cst.While)):
                yield update

    def _dtype_reads(self):
        """`x.itemsize`, `x.nbytes`, and `x.dtype` shown (`str(x.dtype)`, `x.dtype.name`, in
        an f-string, printed, returned or put in a container), of an array converted code
        computes, whose dtype is 64-bit in NumPy or not known; not a dtype handed on
        (`astype(x.dtype)`, `dtype=x.dtype`: the data keep their own), nor compared
        (reported above)."""
        flow, parents = self.analysis.dataflow, self.analysis.parents
        for node in self.analysis.nodes(cst.Attribute):
            name = node.attr.value
            if name not in ("dtype", "itemsize", "nbytes") or not flow.jax_typed(node.value):
                continue
            dtype = self.analysis.dtypes.dtype_of(node.value)
            if dtype is not None and dtype not in ("float64", "int64", "uint64", "complex128",
                                                   "float", "int", "complex"):
                continue  # float32, int8, bool...: the same width in both
            if name == "dtype" and not _shown(node, parents):
                continue
            yield node

    def _matrix_products(self):
        """`a @ b`, `a @= b`, `np.dot`/`matmul`/`einsum`/`tensordot`/... converted, and
        `a.dot(b)` of a JAX array: on an NVIDIA GPU JAX multiplies float32 matrices in TF32
        by default, where NumPy's float32 product keeps float32's digits. Integer data (a
        dtype the code shows) is not reported: TF32 is for floats only."""
        dtype_of = self.analysis.dtypes.dtype_of
        jax_typed = self.analysis.dataflow.jax_typed

        def floats(*operands) -> bool:
            return not any(is_integer(dtype_of(o)) or dtype_of(o) == "bool" for o in operands)

        products = frozenset(api_policy()["precision"]["matrix_products"])
        for ref in self.analysis.refs:
            if ref.call is not None and ref.converted and ref.qualname in products:
                operands = [a.value for a in ref.call.args if a.keyword is None and not a.star]
                if ref.qualname == "numpy.einsum":
                    operands = operands[1:]
                if floats(*operands):
                    yield self.report(ref.call, spelled=code_of(ref.node) + "(...)",
                                      reason=TF32)
        for operation in self.analysis.nodes(cst.BinaryOperation):
            if isinstance(operation.operator, cst.MatrixMultiply) \
                    and (jax_typed(operation.left) or jax_typed(operation.right)) \
                    and floats(operation.left, operation.right):
                yield self.report(operation, spelled=code_of(operation), reason=TF32)
        for update in self.analysis.nodes(cst.AugAssign):
            if isinstance(update.operator, cst.MatrixMultiplyAssign) \
                    and (jax_typed(update.target) or jax_typed(update.value)) \
                    and floats(update.target, update.value):
                yield self.report(update, spelled=code_of(update).strip(), reason=TF32)
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "dot" \
                    and self.analysis.ref_of_call(call) is None and jax_typed(func.value) \
                    and floats(func.value, *(a.value for a in call.args[:1])):
                yield self.report(call, spelled=code_of(func) + "(...)", reason=TF32)

    def _float32_made_integers(self):
        """A float value of converted code rounded to an integer (the places of
        analysis.quotients: `np.floor(v)`, `int(v)`, `.astype(np.uint8)`), or stored into
        an integer array (`img[:2] = img[:2] * gain`): computed in float32, a value near an
        integer lands on its other side (180 * 1.3 is 233.99998 in float32, 234.00000000000003
        in float64, so uint8 233 for NumPy's 234)."""
        flow, dtype_of = self.analysis.dataflow, self.analysis.dtypes.dtype_of
        nodes = [*self.analysis.nodes(cst.Call), *self.analysis.nodes(cst.BinaryOperation)]
        places = [(where, value) for where, value in self.analysis.quotients.rounded_values(nodes)]
        for write in self.analysis.subscript_writes:
            statement = write.statement
            if isinstance(statement, cst.Assign) and is_integer(dtype_of(write.target.value)):
                places.append((statement, statement.value))
        done: set = set(self._decimal_roundings())  # reported as roundings to decimals
        for where, value in places:
            if where in done or not is_float(dtype_of(value)) or not flow.jax_typed(value) \
                    or not self._computed(value):
                continue
            done.add(where)
            yield self.report(where, spelled=" ".join(code_of(where).split()),
                              requires=flow.jax_refs(value),
                              reason=f"`{code_of(value)}` is made an integer, and JAX computes "
                                     "it in float32: a value near an integer lands on its "
                                     "other side (180 * 1.3 is 233.99998 in float32, "
                                     "234.00000000000003 in float64: uint8 233 for NumPy's 234)")
        for ref in self.analysis.refs:  # np.sign(np.sin(w * t)) at the sine's zeros
            value = ref.call.args[0].value if ref.call is not None and ref.call.args else None
            if ref.qualname != "numpy.sign" or not ref.converted or value is None \
                    or dtype_of(value) not in ("float", "float64") or not self._computed(value):
                continue
            yield self.report(ref.call, spelled=code_of(ref.call), requires=(ref.node,),
                              reason=f"`{code_of(value)}` is computed in float32, and a value "
                                     "that is zero but for rounding (a sine at its zeros, a "
                                     "difference of equal sums) is about 1e-7 from it there "
                                     "instead of 1e-16, with either sign: np.sign gives 1 or -1 "
                                     "where NumPy's may differ")

    def _computed(self, value, depth: int = 0) -> bool:
        """Arithmetic or a converted function's result, seen through names bound once: not
        data made as it is (`np.ones(2)`, a literal), whose float32 values are exact."""
        if depth > 4:
            return True
        if isinstance(value, cst.Name):
            values, aug_values = self.analysis.dataflow.values_of(value)
            if values and len(values) == 1 and not aug_values and not isinstance(values[0][0], str):
                return self._computed(values[0][0], depth + 1)
            return True
        if isinstance(value, (cst.Float, cst.Integer, cst.List, cst.Tuple)):
            return False
        ref = self.analysis.ref_of_call(value) if isinstance(value, cst.Call) else None
        return ref is None or ref.qualname not in MADE_AS_GIVEN

    def _integer_accumulation(self, call: cst.Call, name: str):
        """A sum or product of integer data: int32 wraps past 2**31."""
        ref = self.analysis.ref_of_call(call)
        if ref is not None:
            operands = [a.value for a in call.args if a.keyword is None and not a.star][:2]
        elif isinstance(call.func, cst.Attribute):
            operands = [call.func.value]
        else:
            return
        dtypes = [self.analysis.dtypes.dtype_of(operand) for operand in operands]
        if dtypes and all(is_integer(d) for d in dtypes) and not self._sum_fits(name, operands, dtypes):
            yield self.report(call, spelled=code_of(call.func) + "(...)",
                              reason=f"it accumulates {dtypes[0] if dtypes[0] != 'int' else 'integer'} "
                                     "data, which JAX sums in int32, wrapping past 2**31, "
                                     "where NumPy uses int64")

    def _range_edges(self):
        """(call, spelling) of each exp (expm1, exp2, cosh, sinh) of data other than a number
        literal and each product (prod, cumprod) of data not shown integer, NumPy computing
        wider than float32: its result may leave float32's range where NumPy's stays in
        float64's."""
        dtype_of = self.analysis.dtypes.dtype_of
        for call in self.analysis.nodes(cst.Call):
            ref = self.analysis.ref_of_call(call)
            func = call.func
            if ref is not None and ref.converted and ref.qualname in _RANGE_FUNCTIONS:
                positional = [a.value for a in call.args if a.keyword is None and not a.star]
                operand, spelled = (positional[0] if positional else None), code_of(ref.node) + "(...)"
                products = ref.qualname in _PRODUCTS
            elif ref is None and isinstance(func, cst.Attribute) and func.attr.value in ("prod", "cumprod") \
                    and self.analysis.dataflow.jax_typed(func.value):
                operand, spelled, products = func.value, f".{func.attr.value}(...)", True
            else:
                continue
            if operand is None or _number(operand) is not None:
                continue  # np.exp(-0.5): a constant in range
            dtype = dtype_of(operand)
            if dtype in ("float32", "float16", "complex64") or products and (
                    dtype == "bool" or is_integer(dtype)):
                continue  # integer products: _integer_accumulation
            yield call, spelled

    def _one_pass_variances(self):
        """`(x ** 2).mean() - x.mean() ** 2` (np.mean, np.average, `x * x`, np.square): a
        variance that cancels, of data NumPy holds wider than float32."""
        for operation in self.analysis.nodes(cst.BinaryOperation):
            if not isinstance(operation.operator, cst.Subtract):
                continue
            squares = self._mean_of(operation.left)
            squared_mean = self._squared(operation.right)
            if squares is None or squared_mean is None:
                continue
            data = self._squared(squares)
            mean = self._mean_of(squared_mean)
            if data is not None and mean is not None and code_of(data) == code_of(mean) \
                    and self.analysis.dtypes.dtype_of(data) not in ("float32", "float16", "complex64"):
                yield operation

    def _mean_of(self, node) -> cst.BaseExpression | None:
        """X of `X.mean()`, `np.mean(X)`, `np.average(X)` (no other arguments), else None."""
        if not isinstance(node, cst.Call) or len(node.args) > 1:
            return None
        ref = self.analysis.ref_of_call(node)
        if ref is not None and ref.qualname in ("numpy.mean", "numpy.average", "numpy.nanmean"):
            return node.args[0].value if node.args and node.args[0].keyword is None else None
        if ref is None and isinstance(node.func, cst.Attribute) and node.func.attr.value == "mean" \
                and not node.args:
            return node.func.value
        return None

    def _squared(self, node) -> cst.BaseExpression | None:
        """X of `X ** 2`, `X * X`, `np.square(X)`, else None."""
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Power) \
                and _number(node.right) == 2:
            return node.left
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply) \
                and code_of(node.left) == code_of(node.right):
            return node.left
        ref = self.analysis.ref_of_call(node) if isinstance(node, cst.Call) else None
        if ref is not None and ref.qualname == "numpy.square" and len(node.args) == 1:
            return node.args[0].value
        return None

    def _sum_fits(self, name: str, operands: list, dtypes: list) -> bool:
        """A sum of one array of a narrow integer dtype (bool, 8 or 16 bits) whose shape the
        code shows, which cannot pass int32 (a 64x64 uint8 image sums to at most 1044480)."""
        if name not in ("sum", "cumsum", "nansum", "nancumsum") or len(operands) != 1 \
                or dtypes[0] not in _NARROW_INTEGERS:
            return False
        shape = static_shape(self.analysis.dataflow, operands[0])
        return shape is not None and math.prod(shape) * _NARROW_INTEGERS[dtypes[0]] < 2 ** 31

    def _scaled_integers(self):
        """`x * 1_000_000` (either side) where `x` is a JAX array once converted, of integer
        data or of unknown type: the constant at least 1000, a unit change (Unix seconds in
        milliseconds pass 2**31; plain Python integers never wrap)."""
        dtype_of = self.analysis.dtypes.dtype_of
        jax_typed = self.analysis.dataflow.jax_typed
        for operation in self.analysis.nodes(cst.BinaryOperation):
            if not isinstance(operation.operator, cst.Multiply):
                continue
            for constant, data in ((operation.left, operation.right),
                                   (operation.right, operation.left)):
                if isinstance(constant, cst.Integer) and not isinstance(data, cst.Integer) \
                        and SCALE <= int(constant.value.replace("_", ""), 0) < INT32_LIMIT:
                    dtype = dtype_of(data)
                    if (dtype is None or is_integer(dtype)) and jax_typed(data):
                        yield operation
                    break

    def _wide_dtypes(self):
        """np.float64, np.int64... anywhere, and `float`, `int`, `complex`, "float64"... where a
        dtype is expected (dtype=, astype, finfo/iinfo/dtype: np.finfo(float) is float64's)."""
        policy = api_policy()
        names, strings = frozenset(policy["wide_dtypes"]), frozenset(policy["wide_dtype_strings"])
        for ref in self.analysis.refs:
            if ref.qualname in names:
                yield ref.node, code_of(ref.node)
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            callee = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
            dtypes = []
            if callee in ("finfo", "iinfo", "dtype") and call.args:
                dtypes.append(call.args[0].value)
            if isinstance(func, cst.Attribute):  # (`zeros(3, dtype=float)` is not looked at)
                if callee == "astype" and call.args:
                    dtypes.append(call.args[0].value)
                dtypes += [arg.value for arg in call.args
                           if arg.keyword is not None and arg.keyword.value == "dtype"]
            for value in dtypes:
                if isinstance(value, cst.Name) and value.value in ("float", "complex", "int") \
                        and not self.analysis.names_numpy(value):
                    yield value, value.value
                elif isinstance(value, cst.SimpleString) and value.evaluated_value in strings:
                    yield value, value.value

    def _decimal_roundings(self):
        """x.round(2) on what may be an array, and np.round(x, 2) / np.around(x, decimals=2)."""
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "round" and call.args \
                    and not self.analysis.names_numpy(func.value):
                yield call
        rounding = api_policy()["precision"]["decimal_rounding"]
        for ref in self.analysis.refs:
            if ref.call is not None and ref.converted and ref.qualname in rounding and (
                    len(ref.call.args) > 1 or any(a.keyword is not None and a.keyword.value == "decimals"
                                                  for a in ref.call.args)):
                yield ref.call

    def _errors_against_exact_values(self):
        """(operation, computed) of `computed - exact` (or `exact - computed`): a float value
        of converted code minus a constant known to many digits (`math.e - 1`, `np.pi / 4`,
        `0.7853981633974483`), the error of a numerical method."""
        flow, dtype_of = self.analysis.dataflow, self.analysis.dtypes.dtype_of
        for operation in self.analysis.nodes(cst.BinaryOperation):
            if not isinstance(operation.operator, cst.Subtract):
                continue
            for value, other in ((operation.left, operation.right), (operation.right, operation.left)):
                if self._exact_constant(other) and (flow.jax_typed(value) or flow.may_be_jax(value)) \
                        and dtype_of(value) not in ("float32", "float16", "complex64") \
                        and self._computed(value):  # float32 here, where NumPy's was wider
                    yield operation, value
                    break

    def _exact_constant(self, node) -> bool:
        """Arithmetic of numbers, `math`'s and NumPy's constants and `math`'s functions with
        one of those constants, a function of them, or a float literal of 8 or more
        significant digits in it (`math.e - 1`, `math.sqrt(2) / 2`, `0.7853981633974483`)."""
        return self._constant_digits(node, 0) is True

    def _constant_digits(self, node, depth: int) -> bool | None:
        """True: a constant known to many digits; None: a plain number (`1`, `0.5`); False:
        anything else."""
        if depth > 6:
            return False
        if isinstance(node, cst.Integer):
            return None
        if isinstance(node, cst.Float):
            digits = node.value.lower().split("e")[0].replace(".", "").replace("_", "").strip("0")
            return True if len(digits) >= 8 else None
        if isinstance(node, (cst.Name, cst.Attribute)):
            return True if self.analysis.qualified_names(node) & _EXACT_CONSTANTS else False
        if isinstance(node, cst.UnaryOperation):
            return self._constant_digits(node.expression, depth + 1)
        if isinstance(node, cst.BinaryOperation):
            sides = [self._constant_digits(n, depth + 1) for n in (node.left, node.right)]
        elif isinstance(node, cst.Call) and node.args \
                and self.analysis.qualified_names(node.func) & _EXACT_FUNCTIONS:
            sides = [True, *(self._constant_digits(a.value, depth + 1) for a in node.args)]
        else:
            return False
        return False if False in sides else True if True in sides else None

    def _close_values(self):
        """(list, spread, largest) of list or tuple literals of two or more numbers, floats
        among them, whose spread is below CLOSE_SPREAD of their size (readings near
        10000.1): float32 cancels most digits of their differences."""
        for node in (*self.analysis.nodes(cst.List), *self.analysis.nodes(cst.Tuple)):
            numbers = [_number(e.value) for e in node.elements]
            if len(numbers) < 2 or None in numbers or not any(isinstance(n, float) for n in numbers):
                continue
            largest, spread = max(abs(n) for n in numbers), max(numbers) - min(numbers)
            if 0 < spread < CLOSE_SPREAD * largest:
                yield node, spread, largest

    def _wide_literals(self):
        """Integer constants beyond int32: 3_000_000_000, 2**40, 1 << 40, 100000 * 100000."""
        for literal in self.analysis.nodes(cst.Integer):
            try:
                if int(literal.value.replace("_", ""), 0) >= INT32_LIMIT:
                    yield literal
            except ValueError:
                continue
        for operation in self.analysis.nodes(cst.BinaryOperation):
            fold = _FOLDED.get(type(operation.operator))
            if fold is None or not (isinstance(operation.left, cst.Integer)
                                    and isinstance(operation.right, cst.Integer)):
                continue
            left, right = (int(n.value.replace("_", ""), 0) for n in (operation.left, operation.right))
            if isinstance(operation.operator, (cst.Power, cst.LeftShift)) and right > 64:
                continue  # not folded; huge either way
            if abs(fold(left, right)) >= INT32_LIMIT:
                yield operation


def _number(node) -> float | int | None:
    """The value of a number literal (`-2.5` too), or None."""
    sign = 1
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        sign, node = -1, node.expression
    try:
        if isinstance(node, cst.Float):
            return sign * float(node.value.replace("_", ""))
        if isinstance(node, cst.Integer):
            return sign * int(node.value.replace("_", ""), 0)
    except ValueError:
        return None
    return None


def _abridged(node: cst.List | cst.Tuple) -> str:
    """`[10000.1, 10000.2, 10000.15, ...]`: the first three items."""
    items = [code_of(e.value) for e in node.elements[:3]] + (["..."] if len(node.elements) > 3 else [])
    return ("[{}]" if isinstance(node, cst.List) else "({})").format(", ".join(items))


_SHOWING_CALLS = frozenset({"str", "repr", "print", "format"})
# constants and functions a method's exact answer is written with (`math.e - 1`)
_EXACT_CONSTANTS = frozenset({"math.pi", "math.e", "math.tau", "numpy.pi", "numpy.e",
                              "numpy.euler_gamma"})
_EXACT_FUNCTIONS = frozenset(f"math.{name}" for name in (
    "sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "atan", "erf", "gamma",
    "lgamma", "cbrt"))


def _shown(node: cst.Attribute, parents: dict) -> bool:
    """Whether a dtype read gives its text or size to the program's results: `.name`,
    `.itemsize`, `.str`, `.char`, `.num` of it, `str(...)`/`repr`/`print`/`format` of it, an
    f-string, a `return`, or an item of a container."""
    parent = parents.get(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return parent.attr.value in ("name", "itemsize", "str", "char", "num", "descr")
    if isinstance(parent, cst.Arg):
        call = parents.get(parent)
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) \
            and call.func.value in _SHOWING_CALLS and parent.keyword is None
    return isinstance(parent, (cst.FormattedStringExpression, cst.Return, cst.Element,
                               cst.DictElement))
