"""NJ410 caught-overflow-error.

Arithmetic on narrow integer data with a Python int inside a try whose except catches
OverflowError: NumPy raises for an int the dtype cannot hold, JAX wraps it, so the handler
never runs.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import DTYPES, int_literal
from np2jax.analysis.kept import HELPER
from np2jax.analysis.references import NUMPY_RAISES, data_arguments, python_number_cases
from np2jax.rules.base import Rule
from np2jax.rules.narrow_integer_promotion import AUGMENTED, CHECKED_OPERATORS
from np2jax.syntax import code_of, handler_names
from np2jax.syntax.walk import OwnScopeVisitor

# What an `except` must name to catch the OverflowError NumPy 2 raises for a Python int
# out of a narrow integer dtype's range (`uint8_data + 300`).
CATCHES_OVERFLOW_ERROR = frozenset({"OverflowError", "ArithmeticError"})
# np2jax's own output converted again: a function it kept on NumPy for this reason, whose
# callers pass JAX arrays (they are jnp calls already, which no conversion makes)
KEPT_BEFORE = ("kept before",)


class CaughtOverflowError(Rule):
    code = "NJ410"

    def run(self):
        """In the body of a `try` one of whose handlers catches OverflowError or
        ArithmeticError (functions defined inside it run elsewhere): each operator (`+`,
        `*`, `<<`...), augmented assignment, `.fill()` and call of a function that running
        both showed raising in NumPy only for a Python int beside narrow data
        (`np.maximum(img, level)`), that meets narrow integer data JAX computes on and an
        operand that may be a Python int whose value the code does not show. A literal is
        NJ402's (rewritten to raise as NumPy does); an option such as full_like's fill
        value keeps the call on NumPy (NJ103)."""
        for statement in self.analysis.nodes(cst.Try):
            if any(CATCHES_OVERFLOW_ERROR.intersection(handler_names(h)) for h in statement.handlers):
                yield from self._body(statement.body)

    def _body(self, body: cst.CSTNode):
        found = []

        class Arithmetic(OwnScopeVisitor):
            def visit_BinaryOperation(self, node):
                if isinstance(node.operator, CHECKED_OPERATORS):
                    found.append((node, [(node.left, node.right), (node.right, node.left)]))

            def visit_AugAssign(self, node):
                if type(node.operator).__name__.removesuffix("Assign") in AUGMENTED:
                    found.append((node, [(node.target, node.value)]))

            def visit_Call(visitor, node):
                if isinstance(node.func, cst.Attribute) and node.func.attr.value == "fill" \
                        and len(node.args) == 1:
                    found.append((node, [(node.func.value, node.args[0].value)]))
                ref = self.analysis.ref_of_call(node)
                if ref is not None and ref.converted and ref.call is not None:
                    found.append((node, self._refused_numbers(ref)))

        body.visit(Arithmetic())
        for node, pairs in found:
            for data, number in pairs:
                requires, dtype = self._narrow_jax_data(data)
                if requires and self._may_be_python_int(number):
                    yield self.report(node, requires=() if requires is KEPT_BEFORE else requires,
                                      spelled=code_of(node).strip(), dtype=dtype,
                                      number=code_of(number).strip())
                    break

    @staticmethod
    def _refused_numbers(ref) -> list:
        """(other data, argument) of a call's data arguments where running both showed
        NumPy raising for a Python int out of narrow data's range (`np.maximum(img, 300)`)
        and JAX returning a value."""
        data = data_arguments(ref)
        pairs = []
        for argument in data:
            verdict = python_number_cases(ref.qualname, argument.name, "int").get("uint8", "")
            if verdict.startswith(NUMPY_RAISES):
                pairs += [(other.arg.value, argument.arg.value) for other in data if other is not argument]
        return pairs

    def _narrow_jax_data(self, data) -> tuple[tuple, str | None]:
        """(the converted references that make `data` a JAX array, its dtype) for data of
        an integer dtype narrower than 64 bits; ((), None) otherwise."""
        flow = self.analysis.dataflow
        passed = self._passed_through_prologue(data)
        if passed is not None:  # kept before, for what its converted callers pass
            dtypes = {self.analysis.dtypes.dtype_of(a) for a in passed}
            dtype = dtypes.pop() if len(dtypes) == 1 else None
            return (KEPT_BEFORE, dtype) if _narrow(dtype) else ((), None)
        dtype = self.analysis.dtypes.dtype_of(data)
        if not _narrow(dtype):
            return (), None
        if flow.jax_typed(data):
            return flow.jax_refs(data), dtype
        if self.analysis.kept_functions and flow.parameter_may_be_jax(data):
            # a parameter some callers pass JAX arrays for, and a function kept on NumPy
            # passes a NumPy one (NJ104): the JAX calls' arithmetic wraps
            return flow.parameter_may_be_jax(data), dtype
        return flow.attribute_may_be_jax(data), dtype

    def _passed_through_prologue(self, data) -> list | None:
        """`img` bound by the line `img = _np2jax_as_numpy(img)` with which np2jax keeps a
        function on NumPy (its output converted again): what every call in this module
        passes for the parameter (None where not known)."""
        if not isinstance(data, cst.Name):
            return None
        flow = self.analysis.dataflow
        values, _ = flow.name_values(data)
        # the parameter's own binding too, where the read is not in straight-line code
        reaching = flow.reaching_bindings(data, values or [])
        helpers = [v for v, _ in reaching if isinstance(v, cst.Call) and isinstance(v.func, cst.Name)
                   and v.func.value == HELPER]
        params = [s for v, s in reaching if v == "param"]
        if len(helpers) != 1 or len(params) != 1 or len(reaching) != 2:
            return None
        return flow.passed_arguments(params[0])

    def _may_be_python_int(self, number) -> bool:
        """A Python int (its dtype fact "int") or a value the analysis knows nothing of (a
        parameter); not a literal (NJ402's), not an array or a NumPy scalar, not a float."""
        if int_literal(number) is not None:
            return False
        return self.analysis.dtypes.dtype_of(number) in (None, "int")


def _narrow(dtype: str | None) -> bool:
    """An integer dtype narrower than 64 bits (uint8, int16...)."""
    return dtype in DTYPES and DTYPES[dtype][0] in "ui" and DTYPES[dtype][1] < 64
