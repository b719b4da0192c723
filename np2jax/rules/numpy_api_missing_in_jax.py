"""NJ102 numpy-api-missing-in-jax.

A NumPy/SciPy name JAX lacks, or a call JAX cannot take as written, stays on NumPy.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis import facts
from np2jax.catalog import api_policy
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
    facts.KEEP_OBJECT_VALUES: "the module {detail}: values JAX cannot hold (JAX has no object "
                              "arrays) may reach this call, so the module stays on NumPy",
}


class NumpyApiMissingInJax(Rule):
    code = "NJ102"

    def run(self):
        for ref in self.analysis.refs:
            why = _MISSING_REASONS.get(ref.keep)
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
            yield self.report(ref.node, name=code_of(ref.node),
                              reason=why.format(name=name, detail=ref.detail))
        yield from self._missing_attributes()
        for star in self.analysis.star_imports:
            yield self.report(star, name=code_of(star).strip(),
                              reason="the names a star import brings in cannot be resolved, so "
                                     "none of them is converted")

    def _missing_attributes(self):
        """`m.flat` read in a NumPy module: once `m` holds a JAX array (from a converted call
        here or in the caller), the attribute does not exist."""
        if not self.analysis.uses_numpy:
            return
        policy = api_policy()
        on_arrays = policy.get("missing_array_attributes_on_arrays", [])
        for attribute in policy["missing_array_attributes"] + on_arrays:
            for node in self.analysis.attribute_loads(attribute):
                receiver = node.value
                if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
                    continue
                if attribute in on_arrays and not (
                        self.analysis.dataflow.kind_of(receiver) == facts.ARRAY
                        or self.analysis.dataflow.jax_typed(receiver)):
                    continue
                parent = self.analysis.parents.get(node)
                if isinstance(parent, cst.AssignTarget) or (
                        isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node):
                    continue  # `x.flat = ...`: an in-place write (NJ205)
                if any(ref.node is receiver and ref.qualname for ref in self.analysis.refs) or \
                        self.analysis.dataflow.kind_of(receiver) in (facts.CONTAINER, facts.SCALAR):
                    continue  # np.<name>, or a value that is never an array
                yield self.report(node, name=code_of(node),
                                  reason=f"JAX arrays have no `.{attribute}`, so this raises once "
                                         f"`{code_of(receiver)}` holds a converted array")

    def _class_base(self, node: cst.CSTNode) -> bool:
        parent = self.analysis.parents.get(node)
        return isinstance(parent, cst.Arg) and isinstance(self.analysis.parents.get(parent), cst.ClassDef)

    def _in_type_check(self, node: cst.CSTNode) -> bool:
        parent = self.analysis.parents.get(node)
        while isinstance(parent, (cst.Tuple, cst.Element, cst.Arg)):
            parent = self.analysis.parents.get(parent)
        return isinstance(parent, cst.Call) and isinstance(parent.func, cst.Name) \
            and parent.func.value in ("isinstance", "issubclass")
