"""NJ114 array-scalar-as-python-value.

A value that NumPy gives as a scalar (np.float64 is a Python float) but JAX as a 0-d array,
checked with isinstance(v, float) or handed to json: the answer changes or json raises.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.facts import JSON_WRITERS
from np2jax.rules.base import Rule
from np2jax.syntax import code_of

# Types a NumPy scalar is an instance of and a 0-d JAX array is not: np.float64 derives from
# float and np.complex128 from complex, and NumPy registers its scalars with the numbers ABCs.
# (np.int64 is no int: `isinstance(v, int)` is False on both sides.)
PYTHON_TYPES = frozenset({"builtins.float", "builtins.complex", "numbers.Number", "numbers.Real",
                          "numbers.Complex", "numbers.Integral", "numbers.Rational"})
_SPELLED = frozenset({"float", "complex", "Number", "Real", "Complex", "Integral", "Rational"})
NUMPY_TYPES = frozenset({"numpy.ndarray", "numpy.generic", "numpy.number", "numpy.floating",
                         "numpy.integer", "numpy.inexact", "numpy.float64", "numpy.complexfloating"})

_TYPE_CHECK = ("is True for a NumPy scalar such as `x.mean()` (NumPy's {why}) but not for the "
               "0-d JAX array the converted code gives there, so it would change its answer; "
               "test `jnp.ndim({subject}) == 0`, or take `float({subject})` first")
_SPELLING = ("spells the value's type, `{numpy}` in NumPy and `{jax}` for the "
             "JAX array the converted code gives there: take `float({subject})` or "
             "`np.asarray({subject})` first if the text matters")
# Python float's own methods, which NumPy's float64 scalar inherits and a JAX array lacks
FLOAT_METHODS = frozenset({"is_integer", "as_integer_ratio", "hex"})
_FLOAT_METHOD = ("calls `{method}`, a method of Python's float that NumPy's float64 scalar "
                 "has and the 0-d JAX array the converted code gives there has not "
                 "(AttributeError): call it on `float({subject})`")
_STATISTICS = ("is given `{value}`, which holds NumPy scalars that become 0-d JAX arrays, "
               "which the statistics module does not take for numbers (TypeError): give it "
               "Python numbers (`[float(v) for v in ...]`)")
# repr() of a 0-d value in each library
_REPRS = ("np.float64(4.0)", "Array(4., dtype=float64)")
_JSON = ("is given `{value}`, a NumPy scalar or array that becomes a JAX array, which json "
         "cannot write (NumPy's float64 scalars are floats): pass `{value}.tolist()` or "
         "`float({value})`")


class ArrayScalarAsPythonValue(Rule):
    code = "NJ114"

    def run(self):
        """isinstance(v, float) and `type(v) is float` where v is a JAX array once converted,
        or where the same function tells NumPy values apart by type (isinstance(v,
        np.ndarray) beside it: a helper that turns results into Python values); json.dump(s)
        of a value, or of a literal container holding one, that is a JAX array once converted."""
        for call in self.analysis.nodes(cst.Call):
            if isinstance(call.func, cst.Name) and call.func.value == "isinstance" \
                    and len(call.args) == 2 and not any(a.keyword or a.star for a in call.args):
                yield from self._type_check(call, call.args[0].value, call.args[1].value)
            elif self.analysis.qualified_names(call.func) & JSON_WRITERS and call.args:
                yield from self._json(call, call.args[0].value)
            elif self._builtin(call, "repr"):  # repr(m)
                yield from self._spelled(call, call.args[0].value, *_REPRS)
            elif self._builtin(call, "str"):  # str([m.max(), m.min()]): its items' reprs
                yield from self._items_spelled(call, call.args[0].value)
            elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "format" \
                    and isinstance(call.func.value, (cst.SimpleString, cst.ConcatenatedString)):
                for argument in call.args:  # "{}".format([lo, hi])
                    if not argument.star:
                        yield from self._items_spelled(call, argument.value)
            elif any(q.startswith("statistics.") for q in self.analysis.qualified_names(call.func)) \
                    and call.args and not call.args[0].star:
                yield from self._statistics(call, call.args[0].value)
            elif isinstance(call.func, cst.Attribute) and call.func.attr.value in FLOAT_METHODS:
                subject = call.func.value  # v.is_integer(): Python's float has it, JAX's arrays not
                requires = self._jax(subject)
                if requires:
                    yield self.report(call, requires=requires, code=code_of(call),
                                      reason=_FLOAT_METHOD.format(method=call.func.attr.value,
                                                                  subject=code_of(subject)))
        for part in self.analysis.nodes(cst.FormattedStringExpression):
            if part.conversion == "r":  # f"{m!r}"
                yield from self._spelled(part, part.expression, *_REPRS)
            elif part.conversion in (None, "s"):  # f"{pair}" of a tuple holding m
                yield from self._items_spelled(part, part.expression)
        for attribute in self.analysis.nodes(cst.Attribute):
            call = attribute.value  # type(m).__name__
            if attribute.attr.value in ("__name__", "__qualname__") and isinstance(call, cst.Call) \
                    and self._builtin(call, "type"):
                yield from self._spelled(attribute, call.args[0].value, "float64", "ArrayImpl")
        for comparison in self.analysis.nodes(cst.Comparison):
            left = comparison.left
            if isinstance(left, cst.Call) and isinstance(left.func, cst.Name) \
                    and left.func.value == "type" and len(left.args) == 1 \
                    and len(comparison.comparisons) == 1 and isinstance(
                        comparison.comparisons[0].operator, (cst.Is, cst.Equal, cst.IsNot, cst.NotEqual)):
                yield from self._type_check(comparison, left.args[0].value,
                                            comparison.comparisons[0].comparator, exact=True)

    def _type_check(self, check, subject, types, exact: bool = False):
        names = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
        found = [q for n in names for q in self.analysis.qualified_names(n, _SPELLED)
                 if q in PYTHON_TYPES]
        if not found or (exact and found[0] != "builtins.float" and found[0] != "builtins.complex"):
            return
        requires = self._jax(subject)
        if not requires and not self._told_apart_from_numpy(check, subject):
            return
        kind = found[0].rsplit(".", 1)[-1]
        why = f"float64 derives from {kind}" if kind in ("float", "complex") else \
            f"scalars are registered as numbers.{kind}"
        yield self.report(check, requires=requires, code=code_of(check),
                          reason=_TYPE_CHECK.format(why=why, subject=code_of(subject)))

    def _jax(self, subject) -> tuple:
        """The converted references by which `subject` may be a JAX array: a loop's or a
        comprehension's variable over one too, a parameter some call passes one for
        (show(x.mean()) beside show(len(x))), an attribute one binding of which is one
        (`self.a = w if w is not None else np.ones(2)`); else ()."""
        return self.analysis.dataflow.may_be_jax(subject)

    def _builtin(self, call: cst.Call, name: str) -> bool:
        return isinstance(call.func, cst.Name) and call.func.value == name and len(call.args) == 1 \
            and not call.args[0].star and call.args[0].keyword is None \
            and self.analysis.qualified_names(call.func) == {f"builtins.{name}"}

    def _spelled(self, node, subject, numpy: str, jax: str):
        """`type(m).__name__`, `repr(m)`, `f"{m!r}"` of a value that is a JAX array once
        converted."""
        flow = self.analysis.dataflow
        if flow.jax_typed(subject):
            yield self.report(node, requires=flow.jax_refs(subject), code=code_of(node),
                              reason=_SPELLING.format(numpy=numpy, jax=jax, subject=code_of(subject)))

    def _items_spelled(self, node, container):
        """`str(items)`, `print(items)`, `f"{items}"` of a list, tuple or dict (or a name bound
        once to one) holding a value that is a JAX array once converted: a container prints
        its items' reprs (`[np.float64(1.5)]` becomes `[Array(1.5, dtype=float64)]`)."""
        leaves = list(self._leaves(container))
        if leaves == [container]:
            return  # not a container the code shows
        for leaf in leaves:
            yield from self._spelled(node, leaf, *_REPRS)
            if self.analysis.dataflow.jax_typed(leaf):
                return

    def _told_apart_from_numpy(self, check, subject) -> bool:
        """The function around `check` also asks whether the same value is a NumPy type."""
        scope = self._function(check)
        text = code_of(subject)
        for call in self.analysis.nodes(cst.Call):
            if not (isinstance(call.func, cst.Name) and call.func.value == "isinstance"
                    and len(call.args) == 2 and code_of(call.args[0].value) == text
                    and self._function(call) is scope):
                continue
            types = call.args[1].value
            names = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
            if any(q in NUMPY_TYPES for n in names for q in self.analysis.qualified_names(n)):
                return True
        return False

    def _function(self, node):
        parent = self.analysis.parents.get(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda)):
            parent = self.analysis.parents.get(parent)
        return parent

    def _statistics(self, call, value):
        """statistics.mean(values) of values holding what becomes a 0-d JAX array: the
        module takes numbers only (NumPy's float64 is a float)."""
        flow = self.analysis.dataflow
        for leaf in self._leaves(value):
            if flow.jax_typed(leaf):
                yield self.report(call, requires=flow.jax_refs(leaf), code=code_of(call.func),
                                  reason=_STATISTICS.format(value=code_of(value)))
                return

    def _json(self, call, value):
        flow = self.analysis.dataflow
        for leaf in self._leaves(value):
            if flow.jax_typed(leaf):
                yield self.report(call, requires=flow.jax_refs(leaf), code=code_of(call.func),
                                  reason=_JSON.format(value=code_of(leaf)))
                return

    def _container_call(self, value) -> bool:
        """`sorted(a)`, `list(a)`, `tuple(a)`, `zip(keys, a)`, `dict(zip(keys, a))`: a
        container of a's elements (the builtins, not names bound otherwise)."""
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
            and value.func.value in ("sorted", "list", "tuple", "zip", "dict") and value.args \
            and not any(a.star or a.keyword for a in value.args) \
            and self.analysis.qualified_names(value.func) == {f"builtins.{value.func.value}"}

    def _leaves(self, value, depth: int = 0):
        """The value, and what a literal container (or a name bound once to one) holds."""
        if depth > 4:
            return
        if isinstance(value, cst.Name):
            values, aug_values = self.analysis.dataflow.values_of(value)
            if len(values) == 1 and not aug_values and isinstance(
                    values[0][0], (cst.Dict, cst.List, cst.Tuple, cst.ListComp)):
                value = values[0][0]
        if isinstance(value, cst.Name):
            values, aug_values = self.analysis.dataflow.values_of(value)
            if len(values) == 1 and not aug_values and self._container_call(values[0][0]):
                value = values[0][0]  # by_name = dict(zip(keys, counts))
        if isinstance(value, (cst.ListComp, cst.GeneratorExp)):  # [a[:k].mean() for k in ...]
            yield from self._leaves(value.elt, depth + 1)
            return
        if isinstance(value, cst.DictComp):
            yield from self._leaves(value.value, depth + 1)
            return
        if isinstance(value, cst.Subscript) and any(isinstance(e.slice, cst.Slice) for e in value.slice) \
                and self._container_call(value.value):
            yield from self._leaves(value.value, depth + 1)  # sorted(a)[-2:]: a list still
            return
        if self._container_call(value):
            if value.func.value == "dict" and isinstance(value.args[0].value, cst.Call):
                value = value.args[0].value  # dict(zip(names, a)): zip's
            for argument in value.args:  # sorted(a), zip(names, a): a's elements, JAX arrays
                yield argument.value
            return
        if isinstance(value, cst.Dict):
            for element in value.elements:
                if isinstance(element, cst.DictElement):
                    yield from self._leaves(element.value, depth + 1)
        elif isinstance(value, (cst.List, cst.Tuple)):
            for element in value.elements:
                yield from self._leaves(element.value, depth + 1)
        else:
            yield value
