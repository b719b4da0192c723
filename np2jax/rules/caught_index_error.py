"""NJ404 caught-index-error.

An array read inside a try whose except catches IndexError: JAX clamps an out-of-bounds
index instead of raising, so the handler never runs.
"""

from __future__ import annotations

import libcst as cst

from np2jax.rules.base import Rule
from np2jax.syntax import code_of, handler_names
from np2jax.syntax.walk import OwnScopeVisitor

# What an `except` must name to catch the IndexError NumPy raises for an out-of-bounds index.
CATCHES_INDEX_ERROR = frozenset({"IndexError", "LookupError"})
# Functions that raise IndexError in NumPy for an index out of bounds (JAX fills or clamps).
INDEXING_FUNCTIONS = frozenset({"numpy.take", "numpy.take_along_axis", "numpy.choose"})


def _catches_index_error(handler: cst.ExceptHandler) -> bool:
    return any(name in CATCHES_INDEX_ERROR for name in handler_names(handler))


class CaughtIndexError(Rule):
    code = "NJ404"

    def run(self):
        """Each read of a JAX array (once converted: the finding stands only if that
        conversion happened) by subscript, `np.take` or `.take`, in the body of a `try`
        one of whose handlers catches IndexError or LookupError; functions defined inside
        the body run elsewhere and are not searched."""
        flow = self.analysis.dataflow
        for statement in self.analysis.nodes(cst.Try):
            if not any(_catches_index_error(h) for h in statement.handlers):
                continue
            for read, array in self._reads(statement.body):
                if flow.jax_typed(array):
                    yield self.report(read, requires=flow.jax_refs(array),
                                      read=code_of(read))
                elif self.analysis.kept_functions and flow.parameter_may_be_jax(array):
                    # a parameter some callers pass JAX arrays for, and a function kept on
                    # NumPy passes a NumPy one (NJ104): the JAX calls' reads clamp
                    yield self.report(read, requires=flow.parameter_may_be_jax(array),
                                      read=code_of(read))
                elif flow.attribute_may_be_jax(array):
                    yield self.report(read, requires=flow.attribute_may_be_jax(array),
                                      read=code_of(read))

    def _reads(self, body: cst.CSTNode):
        """(read, the array read) in `body`, outside nested functions, classes and lambdas."""
        found = []

        class Reads(OwnScopeVisitor):
            def visit_Subscript(visitor, node):
                if self._write_target(node):
                    return  # a write there is left in place, on NumPy (NJ201's finding)
                if not all(isinstance(e.slice, cst.Slice) for e in node.slice):
                    found.append((node, node.value))  # a slice never raises: NumPy clips it

            def visit_Call(visitor, node):
                ref = self.analysis.ref_of_call(node)
                # a call kept on NumPy (NJ103: it is inside this `try`) still raises
                if ref is not None and ref.qualname in INDEXING_FUNCTIONS and node.args \
                        and not node.args[0].star and ref.keep is None:
                    found.append((node, node.args[0].value))
                elif ref is None and isinstance(node.func, cst.Attribute) \
                        and node.func.attr.value == "take":
                    found.append((node, node.func.value))

        body.visit(Reads())
        return found

    def _write_target(self, node: cst.Subscript) -> bool:
        """`a[i] = v`, `a[i] += v`, `a[i]: float = v`: a write, which the write rules leave
        in place inside a `try` catching IndexError (JAX would drop it silently), its array
        kept NumPy so that it runs and raises (np2jax.analysis.islands)."""
        parent = self.analysis.parents.get(node)
        if isinstance(parent, cst.AssignTarget):
            return parent.target is node
        return isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node
