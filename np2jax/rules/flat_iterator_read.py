"""NJ115 flat-iterator-read.

An array's `.flat` read for its elements, which JAX arrays lack, read through a NumPy view instead.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis import facts
from np2jax.analysis.islands import read_for_elements
from np2jax.rules.base import Rule
from np2jax.syntax import code_of



class FlatIteratorRead(Rule):
    """`a, b, c = m.flat`, `for v in m.flat`, `m.flat[i]`: once `m` holds a JAX array, `.flat`
    raises (JAX has no flat iterator). `np.asarray(m).flat` reads the same elements in the
    same C order, as the same NumPy scalars, whether `m` is a NumPy or a JAX array (a JAX
    array is read through a read-only NumPy view of its buffer). Only reads: the iterator
    is never kept, written through or handed to code that may write."""

    code = "NJ115"

    def run(self):
        if not self.analysis.uses_numpy:
            return
        alias, needed = self.analysis.numpy_alias
        dataflow = self.analysis.dataflow
        for node in self.analysis.attribute_loads("flat"):
            receiver = node.value
            if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
                continue
            if isinstance(receiver, cst.Call) and (ref := self.analysis.ref_of_call(receiver)) \
                    is not None and ref.qualname in ("numpy.asarray", "numpy.array"):
                continue  # already NumPy's view: `np.asarray(m).flat`
            if any(ref.node is receiver and ref.qualname for ref in self.analysis.refs) \
                    or dataflow.kind_of(receiver) in (facts.CONTAINER, facts.SCALAR):
                continue  # np.<name>, or a value that is never an array
            if not read_for_elements(self.analysis, node):
                continue  # NJ102 reports it, left as it was
            yield self.report(node, name=code_of(node), receiver=code_of(receiver), numpy=alias,
                              fix=_through_numpy(alias), imports=(needed,) if needed else (),
                              boundary=True)


def _through_numpy(alias: str):
    def fix(node: cst.Attribute) -> cst.Attribute:
        return node.with_changes(value=cst.Call(
            func=cst.Attribute(cst.Name(alias), cst.Name("asarray")), args=[cst.Arg(node.value)]))
    return fix
