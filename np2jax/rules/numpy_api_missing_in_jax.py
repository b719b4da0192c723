"""NJ102 numpy-api-missing-in-jax.

A NumPy/SciPy name JAX lacks, or a call JAX cannot take as written, stays on NumPy.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis import facts
from np2jax.analysis.kept import enclosing_function, entry_parameters, has_prologue
from np2jax.analysis.references import call_site, numpy_only
from np2jax.analysis.shapes import static_shape
from np2jax.rules._arguments import as_array
from np2jax.rules.base import Rule
from np2jax.syntax import code_of

_MISSING_REASONS = {
    facts.KEEP_MISSING: "JAX has no `{name}`",
    facts.KEEP_UNSUPPORTED_ARGUMENT: "the JAX version of `{name}` does not take {detail}",
    facts.KEEP_MODULE_VALUE: "the module `{name}` is used as a value, so the names taken "
                               "from it cannot be checked",
    facts.KEEP_AMBIGUOUS: "`{name}` may refer to NumPy or to something else here",
    facts.KEEP_DIFFERS: "{detail}",
    facts.KEEP_NO_METHOD: "JAX's version is a plain function without `.{detail}`",
    facts.KEEP_BOUND_TO_NAME: "it is bound to a name, so its later uses (`.at`, `out=`) "
                                "cannot be checked",
    facts.KEEP_OBJECT_VALUES: "the module {detail}: values JAX cannot hold (JAX has no object, "
                              "structured, date, extended-precision or masked arrays) may reach this call, so the module "
                              "stays on NumPy",
}


class NumpyApiMissingInJax(Rule):
    code = "NJ102"

    def run(self):
        for ref in self.analysis.refs:
            why = _MISSING_REASONS.get(ref.keep)
            # a check of a value's type against NumPy's types in a function's body
            # (`isinstance(v, np.ndarray)`, `type(v) is np.ndarray`) needs NumPy values
            # there: the function is kept on NumPy (keeps-function); a name JAX lacks, a
            # dtype's type (`issubclass(x.dtype.type, np.inexact)`, `np.issubdtype(...)`,
            # `dtype=np.bool_`, which JAX arrays answer as NumPy's do), an unbound method or
            # a class deriving from np.ndarray says nothing of the values a body is given
            body_needs_numpy = ref.keep == facts.KEEP_TYPE_CHECK and self._value_type_check(ref.node) \
                or ref.keep == facts.KEEP_DIFFERS and self._scalar_question_of_jax(ref)
            if ref.keep == facts.KEEP_TYPE_CHECK:
                parent = self.analysis.parents.get(ref.node)
                if isinstance(parent, cst.Attribute) and parent.value is ref.node:
                    why = "NumPy's unbound methods take only NumPy arrays"
                elif self._in_type_check(ref.node):
                    why = ("a JAX array is not an instance of `{name}`, so this check would "
                           "change its answer")
                elif self._class_base(ref.node):
                    why = ("a class deriving from `{name}` stays a NumPy array: converted "
                           "functions return JAX arrays, which cannot be viewed as it "
                           "(`.view(cls)`) or subclassed")
                else:  # type(x) is np.ndarray, a dict of types, a default argument
                    why = ("a JAX array's type is not `{name}`, so a comparison with it would "
                           "change its answer")
            if why is None:
                continue
            name = ref.qualname or code_of(ref.node)
            if ref.keep == facts.KEEP_MISSING and ref.detail:  # scipy.spatial.distance.cdist
                name = ref.detail
            yield self.report(ref.node, name=code_of(ref.node), keeps_function=body_needs_numpy,
                              reason=why.format(name=name, detail=ref.detail))
            if ref.keep == facts.KEEP_MISSING and numpy_only(ref.qualname):
                yield from self._scipy_given_numpy(ref, name=code_of(ref.node),
                                                   keeps_function=body_needs_numpy,
                                                   reason=why.format(name=name, detail=ref.detail))
        yield from self._missing_attributes()
        for star in self.analysis.star_imports:
            yield self.report(star, name=code_of(star).strip(), keeps_function=False,
                              reason="the names a star import brings in cannot be resolved, so "
                                     "none of them is converted")

    def _scipy_given_numpy(self, ref, **fields):
        """A call into a SciPy module JAX lacks whose functions tell NumPy arrays apart
        (policy.toml numpy_only_modules: `scipy.sparse.diags(d, 0)`) is handed each JAX array
        argument as `np.asarray(...)`, unlisted, in this finding's name, as the original gave
        it (diags takes a 1-D JAX array for a list of diagonals)."""
        call = call_site(ref, self.analysis.parents)
        if call is None:
            return
        flow = self.analysis.dataflow
        alias, needed = self.analysis.numpy_alias
        for arg in call.args:
            if not arg.star and flow.jax_typed(arg.value):
                yield self.report(arg.value, **fields, fix=as_array(alias),
                                  imports=(needed,) if needed else (),
                                  requires=flow.jax_refs(arg.value), report_if_unfixed=False,
                                  listed=False, boundary=True)

    def _scalar_question_of_jax(self, ref) -> bool:
        """`np.isscalar(v)` kept on NumPy, of a value that may be a 0-d JAX array once
        converted (`x.mean()`, or a parameter its callers here pass one for): NumPy's answer
        is True for NumPy's scalar and False for the 0-d array, so the function needs
        NumPy's values (kept: its entry reads a 0-d JAX array as NumPy's scalar). Not where
        the value provably has dimensions."""
        call = ref.call
        if ref.qualname != "numpy.isscalar" or call is None or len(call.args) != 1 \
                or call.args[0].star:
            return False
        value, flow = call.args[0].value, self.analysis.dataflow
        parents = self.analysis.parents
        function = enclosing_function(call, parents)
        if isinstance(value, cst.Name) and function is not None and has_prologue(function, parents) \
                and value.value in {p.name.value for p in entry_parameters(function, parents)}:
            return True  # kept by an earlier conversion: its entry reads JAX arrays as NumPy's
        shape = static_shape(flow, value)
        return flow.jax_typed(value) and not (shape is not None and len(shape) > 0)

    def _missing_attributes(self):
        """`m.strides`, `it = m.flat` in a NumPy module: JAX arrays lack the attribute, so
        `m` stays NumPy (np2jax.analysis.islands) and the read is left as it was."""
        for node in self.analysis.numpy_only_attribute_reads:
            yield self.report(node, name=code_of(node), keeps_function=False,
                              reason=f"JAX arrays have no `.{node.attr.value}`, so this raises if "
                                     f"`{code_of(node.value)}` holds a converted array")

    def _value_type_check(self, node: cst.CSTNode) -> bool:
        """`isinstance(v, np.ndarray)` (in a tuple or a `|` union of types too), or `type(v)`
        compared with it (`is`, `==`, `is not`, `!=`)."""
        parent = self.analysis.parents.get(node)
        while isinstance(parent, (cst.Tuple, cst.Element, cst.BinaryOperation)):
            if isinstance(parent, cst.BinaryOperation) and not isinstance(parent.operator, cst.BitOr):
                return False
            node, parent = parent, self.analysis.parents.get(parent)
        if isinstance(parent, cst.Arg):
            call = self.analysis.parents.get(parent)
            return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) \
                and call.func.value == "isinstance" and len(call.args) == 2 \
                and call.args[1] is parent
        if isinstance(parent, cst.ComparisonTarget):
            parent = self.analysis.parents.get(parent)
        if not isinstance(parent, cst.Comparison) or len(parent.comparisons) != 1 \
                or not isinstance(parent.comparisons[0].operator,
                                  (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)):
            return False
        other = parent.left if parent.comparisons[0].comparator is node else \
            parent.comparisons[0].comparator if parent.left is node else None
        return isinstance(other, cst.Call) and isinstance(other.func, cst.Name) \
            and other.func.value == "type" and len(other.args) == 1

    def _class_base(self, node: cst.CSTNode) -> bool:
        parent = self.analysis.parents.get(node)
        return isinstance(parent, cst.Arg) and isinstance(self.analysis.parents.get(parent), cst.ClassDef)

    def _in_type_check(self, node: cst.CSTNode) -> bool:
        parent = self.analysis.parents.get(node)
        while isinstance(parent, (cst.Tuple, cst.Element, cst.Arg)):
            parent = self.analysis.parents.get(parent)
        return isinstance(parent, cst.Call) and isinstance(parent.func, cst.Name) \
            and parent.func.value in ("isinstance", "issubclass")
