"""NJ402 narrow-integer-promotion.

With 64-bit types on (the default), JAX still computes a mean, a true division or a float
function of bool and int8-int32 data in float32, and a cumsum in the input's dtype, where
NumPy uses float64 (float16/float32 for the float functions of 8- and 16-bit data) and
int64: rewritten to ask JAX for NumPy's dtype.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import (
    ACCUMULATING, DTYPES, FLOAT_RESULTS, FLOAT_UFUNCS, NARROW, STATISTICS, accumulated, int_literal,
    integer_range, promote, true_division)
from np2jax.analysis.references import AS_FLOAT_ARRAY, data_arguments, int_array_verdict, list_items
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates

METHODS = ACCUMULATING | STATISTICS
# arithmetic between an integer (or bool) array and a float (or complex) one
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo,
               cst.Power)
# the ufuncs of those operators, whose operands NumPy and JAX promote as theirs
ARITHMETIC_UFUNCS = frozenset(f"numpy.{name}" for name in (
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod",
    "power"))
_INTEGER_FLOAT = frozenset(a + b for a in "bui" for b in "fc") | frozenset(b + a for a in "bui" for b in "fc")
REWRITTEN = "rewritten to compute in {} as NumPy does"
NARROWER = "NumPy computes it in {}, JAX in another type"
X32_REWRITTEN = "rewritten to accumulate in {}, the widest integer of the 32-bit mode"
X32_WIDEST = {"int64": "int32", "uint64": "uint32"}
# the operators whose Python int operand NumPy 2 converts to the array's integer dtype,
# raising OverflowError where the dtype cannot hold it (JAX wraps it); not `/` (float64)
CHECKED_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo,
                     cst.Power, cst.BitAnd, cst.BitOr, cst.BitXor, cst.LeftShift,
                     cst.RightShift)
AUGMENTED = frozenset(operator.__name__ for operator in CHECKED_OPERATORS)
# the ufuncs of two operands that raise the same OverflowError (NumPy 2.4, checked by running)
CHECKED_UFUNCS = frozenset(f"numpy.{name}" for name in (
    "add", "subtract", "multiply", "floor_divide", "remainder", "mod", "power", "maximum",
    "minimum", "fmax", "fmin", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
    "right_shift"))


def ufunc_float(dtype: str) -> str:
    kind, bits = DTYPES[dtype]
    return "float16" if bits == 8 else "float32" if bits == 16 else "float64"


class NarrowIntegerPromotion(Rule):
    code = "NJ402"

    def run(self):
        x32 = not self.config.x64
        jnp = self.analysis.jnp_alias
        dtype_of = self.analysis.dtypes.dtype_of
        for ref in self.analysis.refs:
            if ref.call is None or not ref.converted or not ref.call.args \
                    or not ref.qualname.startswith("numpy."):
                continue
            name = ref.qualname.removeprefix("numpy.")
            data = ref.call.args[0]
            dtype = dtype_of(data.value) if data.keyword is None and not data.star else None
            if dtype not in NARROW or _has_dtype(ref.call) or ref.dtype_argument is not None:
                continue
            fix = self._in_mode(name, dtype, jnp, method=False)
            if fix is not None:
                numpy_dtype, build, outcome = fix
                yield self.report(ref.call, fix=build, requires=(ref.node,),
                                  imports=[("jax.numpy", jnp)], spelled=code_of(ref.node),
                                  dtype=dtype, difference=NARROWER.format(numpy_dtype),
                                  outcome=outcome)
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in METHODS) \
                    or self.analysis.ref_of_call(call) is not None:
                continue
            dtype = dtype_of(func.value)
            if dtype not in NARROW or _has_dtype(call):
                continue
            flow = self.analysis.dataflow
            if flow.jax_typed(func.value):
                requires = flow.jax_refs(func.value)
            elif self._from_parameter(func.value):
                # what a caller passes may be a JAX array; NumPy's own dtype for the result
                # changes nothing where it is a NumPy array
                requires = ()
            else:
                continue
            fix = self._in_mode(func.attr.value, dtype, jnp, method=True)
            if fix is None:
                continue
            numpy_dtype, build, outcome = fix
            yield self.report(call, fix=build, requires=requires,
                              imports=[("jax.numpy", jnp)], spelled=f".{func.attr.value}()",
                              dtype=dtype, difference=NARROWER.format(numpy_dtype),
                              outcome=outcome)
        if x32:
            return  # a true division of narrow integers is float32 in the 32-bit mode (NJ401)
        for operation in self.analysis.nodes(cst.BinaryOperation):
            yield from self._integer_with_float(operation, jnp)
            if not isinstance(operation.operator, cst.Divide):
                continue
            dtype = promote(dtype_of(operation.left), dtype_of(operation.right))
            sides = [s for s in (operation.left, operation.right) if self.analysis.dataflow.jax_typed(s)]
            if dtype not in NARROW or not sides:
                continue
            yield self.report(operation, fix=_cast_left("float64", jnp),
                              requires=self.analysis.dataflow.jax_refs(sides[0]),
                              imports=[("jax.numpy", jnp)], spelled="/", dtype=dtype,
                              difference=NARROWER.format("float64"),
                              outcome=REWRITTEN.format("float64"))
        yield from self._integer_with_float_ufuncs(jnp)
        yield from self._integer_with_float_calls(jnp)
        yield from self._python_ints()
        yield from self._widened_data(jnp)

    def _from_parameter(self, value, depth: int = 0) -> bool:
        """`x.astype(np.int32)`, `x[1:]`, `x.T` of a parameter `x` (`x` itself too), or a
        name every binding of which is one."""
        flow = self.analysis.dataflow
        while True:
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and self.analysis.ref_of_call(value) is None:
                value = value.func.value
            elif isinstance(value, (cst.Subscript, cst.Attribute)):
                value = value.value
            else:
                break
        if not isinstance(value, cst.Name) or depth > 4:
            return False
        if flow.parameter_bound(value):
            return True
        values, aug_values = flow.name_values(value)
        bound = [v for v, _ in flow.live_bindings(value, flow.reaching_bindings(value, values))]
        return bool(bound) and not aug_values and all(
            isinstance(v, cst.BaseExpression) and self._from_parameter(v, depth + 1) for v in bound)

    def _widened_data(self, jnp: str):
        """The data of a call NumPy computes in float64 where JAX keeps its dtype, which
        running both showed JAX computes as NumPy does given float64 data (the proof's
        `same as float64 data`: np.cov and np.interp of float32, scipy.stats of int64):
        each such argument becomes `jnp.asarray(x, dtype=jnp.float64)`."""
        dtype_of = self.analysis.dtypes.dtype_of
        for ref in self.analysis.refs:
            if not ref.converted or not ref.widened:
                continue
            dtype = dtype_of(ref.widened[0].value)
            for arg in ref.widened:
                yield self.report(arg, fix=_as_float64(jnp), requires=(ref.node,),
                                  imports=[("jax.numpy", jnp)], spelled=code_of(ref.node),
                                  dtype=dtype, difference=NARROWER.format("float64"),
                                  outcome=REWRITTEN.format("float64"))

    def _python_ints(self):
        """A Python int literal the narrow integer dtype of the array beside it cannot hold
        (`a + 300`, `a * -1`, `np.add(a, 300)` of uint8): NumPy 2 raises OverflowError, where
        JAX wraps the literal into the array's dtype (`a + 300` is `a + 44`). The literal
        becomes `jnp.asarray(300, dtype=jnp.uint8)`, which raises NumPy's OverflowError.
        Comparisons and np.clip's bounds, which NumPy computes by value: NJ408."""
        jnp = self.analysis.jnp_alias
        flow = self.analysis.dataflow
        dtype_of = self.analysis.dtypes.dtype_of

        def narrow(side):
            dtype = dtype_of(side)
            bounds = integer_range(dtype)
            if bounds is None or DTYPES[dtype][1] >= 64 or not flow.jax_typed(side):
                return None
            return dtype, bounds

        for operation in self.analysis.nodes(cst.BinaryOperation):
            if not isinstance(operation.operator, CHECKED_OPERATORS):
                continue
            for literal_side, array_side in (("right", "left"), ("left", "right")):
                value = int_literal(getattr(operation, literal_side))
                found = narrow(getattr(operation, array_side))
                if value is None or found is None or found[1][0] <= value <= found[1][1]:
                    continue
                dtype = found[0]

                def fix(node, side=literal_side, dtype=dtype):
                    literal = getattr(node, side)
                    return node.with_changes(**{side: updates.jnp_call(
                        jnp, "asarray", literal.with_changes(lpar=[], rpar=[]),
                        dtype=_dtype_node(dtype, jnp))})

                yield self.report(operation, fix=fix, requires=flow.jax_refs(getattr(operation, array_side)),
                                  imports=[("jax.numpy", jnp)], spelled=code_of(operation),
                                  dtype=dtype, difference=(
                                      f"NumPy 2 raises OverflowError for the Python int {value}, "
                                      f"which {dtype} cannot hold, JAX wraps it"),
                                  outcome=f"rewritten to `{jnp}.asarray({value}, dtype={jnp}.{dtype})`, "
                                          "which raises the same error")
                break
        for ref in self.analysis.refs:  # np.add(a, 300)
            if not ref.converted or ref.call is None or any(a.star for a in ref.call.args):
                continue
            positional = [a for a in ref.call.args if a.keyword is None]
            if ref.qualname not in CHECKED_UFUNCS or len(positional) != 2:
                continue  # np.clip's bounds: NJ408
            found = next((f for f in (narrow(a.value) for a in positional) if f), None)
            if found is None:
                continue
            dtype, (low, high) = found
            for arg in positional:
                value = int_literal(arg.value)
                if value is None or low <= value <= high:
                    continue

                def fix(node, dtype=dtype):
                    return node.with_changes(value=updates.jnp_call(
                        jnp, "asarray", node.value.with_changes(lpar=[], rpar=[]),
                        dtype=_dtype_node(dtype, jnp)))

                yield self.report(arg, fix=fix, requires=(ref.node,), imports=[("jax.numpy", jnp)],
                                  spelled=code_of(ref.call), dtype=dtype, difference=(
                                      f"NumPy 2 raises OverflowError for the Python int {value}, "
                                      f"which {dtype} cannot hold, JAX wraps it"),
                                  outcome=f"rewritten to `{jnp}.asarray({value}, dtype={jnp}.{dtype})`, "
                                          "which raises the same error")
        for statement in self.analysis.nodes(cst.AugAssign):  # a += 300 of a whole array
            if not isinstance(statement.target, cst.Name) \
                    or type(statement.operator).__name__.removesuffix("Assign") not in AUGMENTED:
                continue
            value = int_literal(statement.value)
            found = narrow(statement.target)
            if value is None or found is None or found[1][0] <= value <= found[1][1]:
                continue
            dtype = found[0]

            def fix(node, dtype=dtype):
                return updates.jnp_call(jnp, "asarray", node.with_changes(lpar=[], rpar=[]),
                                        dtype=_dtype_node(dtype, jnp))

            yield self.report(statement.value, fix=fix, requires=flow.jax_refs(statement.target),
                              imports=[("jax.numpy", jnp)], spelled=code_of(statement).strip(),
                              dtype=dtype, difference=(
                                  f"NumPy 2 raises OverflowError for the Python int {value}, "
                                  f"which {dtype} cannot hold, JAX wraps it"),
                              outcome=f"rewritten to `{jnp}.asarray({value}, dtype={jnp}.{dtype})`, "
                                      "which raises the same error")

    def _integer_with_float_ufuncs(self, jnp: str):
        """`np.add(counts, weights)` and the other arithmetic ufuncs: as the operators."""
        for ref in self.analysis.refs:
            if not ref.converted or ref.call is None or ref.qualname not in ARITHMETIC_UFUNCS:
                continue
            args = ref.call.args
            if len(args) != 2 or any(a.keyword is not None or a.star for a in args):
                continue
            divide = ref.qualname in ("numpy.divide", "numpy.true_divide")
            found = self._numpy_float(args[0].value, args[1].value, divide)
            if found is None:
                continue
            float_first, numpy_dtype, spelled_dtypes = found

            def fix(call: cst.Call, index=0 if float_first else 1, dtype=numpy_dtype) -> cst.Call:
                arg = call.args[index]
                new = arg.with_changes(value=_astype(arg.value, dtype, jnp))
                return call.with_changes(args=[new if i == index else a for i, a in enumerate(call.args)])

            yield self.report(ref.call, fix=fix, requires=(ref.node,), imports=[("jax.numpy", jnp)],
                              spelled=code_of(ref.node), dtype=spelled_dtypes,
                              difference=NARROWER.format(numpy_dtype), outcome=REWRITTEN.format(numpy_dtype))

    def _integer_with_float_calls(self, jnp: str):
        """`np.dot(weights32, counts)`, `np.where(m, x32, counts)`, `np.concatenate([x32,
        counts])`: an integer array given beside float32 (float16) data to a call that NumPy
        computes in the float wide enough for the integers (float64) and JAX in the float
        data's own dtype, as the API proof shows for that argument (an int64 array beside
        float32: AS_FLOAT_ARRAY). The integer argument is cast to NumPy's float, as the proof
        ran it."""
        for ref in self.analysis.refs:
            if not ref.converted or ref.call is None or ref.qualname in ARITHMETIC_UFUNCS:
                continue
            data = data_arguments(ref)
            for argument in data:
                if int_array_verdict(ref.qualname, argument.name) != AS_FLOAT_ARRAY:
                    continue
                value = argument.arg.value
                if argument.role != "array":  # a sequence of arrays, or np.array([x32[0], n32])
                    members = list_items(value)
                    if members is None:
                        continue
                    pairs = [(m, [o for o in members if o is not m]) for m in members]
                else:  # a list literal too (`[1, 2]`: NumPy's int64 array, NJ110's jnp.array)
                    pairs = [(value, [a.arg.value for a in data if a is not argument])]
                for integer, beside in pairs:
                    found = next((f for f in (self._numpy_float(other, integer, False)
                                              for other in beside) if f is not None and f[0]), None)
                    if found is None:
                        continue
                    _, numpy_dtype, spelled_dtypes = found
                    item = None if integer is value else [
                        e.value for e in value.elements].index(integer)
                    fix = _cast_argument(ref.call.args.index(argument.arg), item, numpy_dtype, jnp)
                    yield self.report(ref.call, fix=fix,
                                      requires=(ref.node,), imports=[("jax.numpy", jnp)],
                                      spelled=code_of(ref.node), dtype=spelled_dtypes,
                                      difference=NARROWER.format(numpy_dtype),
                                      outcome=REWRITTEN.format(numpy_dtype))
                    break

    def _numpy_float(self, first, second, divide: bool):
        """(the float operand is the first, NumPy's dtype, "int32 and float32") where an
        integer and a float array compute in a wider float in NumPy than in JAX, else None."""
        dtype_of = self.analysis.dtypes.dtype_of
        left, right = dtype_of(first), dtype_of(second)
        if left not in DTYPES or right not in DTYPES:
            return None  # a Python number is weak: the array's dtype wins in both
        kinds = DTYPES[left][0] + DTYPES[right][0]
        if kinds not in _INTEGER_FLOAT:
            return None
        float_first = kinds[0] in "fc"
        floating, integer = (left, right) if float_first else (right, left)
        numpy_dtype = true_division(left, right) if divide else promote(left, right)
        if numpy_dtype == floating:
            return None
        return float_first, numpy_dtype, f"{integer} and {floating}"

    def _integer_with_float(self, operation: cst.BinaryOperation, jnp: str):
        """`counts + weights` of an int32 (int64, uint32, uint64) array and a float32 (float16)
        one: NumPy computes in the float wide enough for the integers (float64; float32 for a
        16-bit integer with float16), JAX in the float operand's own dtype. The float operand
        is cast to NumPy's dtype."""
        if not isinstance(operation.operator, _ARITHMETIC):
            return
        found = self._numpy_float(operation.left, operation.right,
                                  isinstance(operation.operator, cst.Divide))
        if found is None:
            return
        float_left, numpy_dtype, spelled_dtypes = found
        sides = [s for s in (operation.left, operation.right) if self.analysis.dataflow.jax_typed(s)]
        if not sides:
            return
        yield self.report(operation, fix=_cast_side(float_left, numpy_dtype, jnp),
                          requires=self.analysis.dataflow.jax_refs(sides[0]),
                          imports=[("jax.numpy", jnp)], spelled=code_of(operation.operator).strip(),
                          dtype=spelled_dtypes, difference=NARROWER.format(numpy_dtype),
                          outcome=REWRITTEN.format(numpy_dtype))

    def _in_mode(self, name: str, dtype: str, jnp: str, method: bool):
        """(NumPy's result dtype, the fix, its outcome) in the mode converted to, or None.
        The 32-bit mode keeps NumPy's float16 and accumulates narrow integers in the widest
        integer it has (JAX's cumsum of int8 stays int8, wrapping past 127; NumPy's is int64):
        the rest computes in 32 bits, which NJ401 reports."""
        fix = self._fix(name, dtype, jnp, method)
        if fix is None or self.config.x64:
            return None if fix is None else (*fix, REWRITTEN.format(fix[0]))
        numpy_dtype, build = fix
        if numpy_dtype == "float16":
            return numpy_dtype, build, REWRITTEN.format(numpy_dtype)
        if name in ACCUMULATING and numpy_dtype in X32_WIDEST:
            widest = X32_WIDEST[numpy_dtype]
            return numpy_dtype, _keyword_dtype(widest, jnp), X32_REWRITTEN.format(widest)
        return None

    @staticmethod
    def _fix(name: str, dtype: str, jnp: str, method: bool):
        """(NumPy's result dtype, the fix) for a call of `name` on `dtype` data, or None."""
        if name in ACCUMULATING:
            target = accumulated(dtype)
            return target, _keyword_dtype(target, jnp)
        if name in STATISTICS:
            return "float64", _keyword_dtype("float64", jnp)
        if method:
            return None
        if name in FLOAT_RESULTS:
            return "float64", _cast_first("float64", jnp)
        if name in FLOAT_UFUNCS:
            return ufunc_float(dtype), _cast_first(ufunc_float(dtype), jnp)
        return None


def _as_float64(jnp: str):
    def fix(arg: cst.Arg) -> cst.Arg:
        return arg.with_changes(value=updates.jnp_call(
            jnp, "asarray", arg.value.with_changes(lpar=[], rpar=[]), dtype=_dtype_node("float64", jnp)))
    return fix


def _has_dtype(call: cst.Call) -> bool:
    """`dtype=` given (NumPy and JAX both compute in it) or a `**kwargs` that may give it."""
    return any(arg.star == "**" or (arg.keyword is not None and arg.keyword.value == "dtype")
               for arg in call.args)


def _dtype_node(dtype: str, jnp: str) -> cst.Attribute:
    return updates.attr(cst.Name(jnp), dtype)


def _keyword_dtype(dtype: str, jnp: str):
    def fix(call: cst.Call) -> cst.Call:
        return updates.with_keyword(call, "dtype", _dtype_node(dtype, jnp))
    return fix


def _astype(value: cst.BaseExpression, dtype: str, jnp: str) -> cst.Call:
    return updates.call(updates.attr(updates.parenthesized(value), "astype"), _dtype_node(dtype, jnp))


def _cast_first(dtype: str, jnp: str):
    def fix(call: cst.Call) -> cst.Call:
        first, *rest = call.args
        return call.with_changes(args=[first.with_changes(value=_astype(first.value, dtype, jnp)), *rest])
    return fix


def _cast_argument(position: int, item: int | None, dtype: str, jnp: str):
    """The call with its argument at `position` (the item at `item` of its list) cast."""
    def fix(call: cst.Call) -> cst.Call:
        args = list(call.args)
        new = args[position]
        if item is None:
            new = new.with_changes(value=_astype(new.value, dtype, jnp))
        else:
            elements = list(new.value.elements)
            elements[item] = elements[item].with_changes(value=_astype(elements[item].value, dtype, jnp))
            new = new.with_changes(value=new.value.with_changes(elements=elements))
        args[position] = new
        return call.with_changes(args=args)
    return fix


def _cast_side(left: bool, dtype: str, jnp: str):
    def fix(operation: cst.BinaryOperation) -> cst.BinaryOperation:
        if left:
            return operation.with_changes(left=_astype(operation.left, dtype, jnp))
        return operation.with_changes(right=_astype(operation.right, dtype, jnp))
    return fix


def _cast_left(dtype: str, jnp: str):
    def fix(operation: cst.BinaryOperation) -> cst.BinaryOperation:
        return operation.with_changes(left=_astype(operation.left, dtype, jnp))
    return fix
