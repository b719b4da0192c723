"""NJ417 unsigned-zero-result.

A function whose NumPy results hold no -0.0 (np.sign, np.floor_divide, scipy.special.erfinv)
gives -0.0 in JAX for -0.0 data: it prints `-0.` and divides to -inf. The converted call
adds an opaque 0, which turns -0.0 into 0.0 and leaves every other value as it is.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.references import unsigned_zeros
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates

OUTCOME = "rewritten as `jnp.add(..., jax.lax.optimization_barrier(0))`, whose zeros are 0.0"


class UnsignedZeroResult(Rule):
    code = "NJ417"

    def run(self):
        """Each converted call of a function that running both showed giving -0.0 where
        every zero of NumPy's result is 0.0 (references.unsigned_zeros, from
        rules/api/proven.json): rewritten, never reported alone."""
        for ref in self.analysis.refs:
            if ref.call is None or not ref.jax_takes_arguments or not unsigned_zeros(ref.qualname):
                continue
            yield self.report(ref.call, fix=self._unsigned, requires=(ref.node,),
                              imports=[("jax", None), ("jax.numpy", self.analysis.jnp_alias)],
                              report_if_unfixed=False, call=code_of(ref.call),
                              outcome=OUTCOME)

    def _unsigned(self, node: cst.Call) -> cst.Call:
        """`jnp.add(<call>, jax.lax.optimization_barrier(0))`: -0.0 + 0 is 0.0, and the
        barrier keeps XLA from folding the addition of a zero away under `jax.jit`; the
        weakly typed 0 keeps the result's dtype."""
        zero = updates.call(updates.attr(updates.attr(cst.Name("jax"), "lax"), "optimization_barrier"),
                            cst.Integer("0"))
        return updates.jnp_call(self.analysis.jnp_alias, "add",
                                node.with_changes(lpar=[], rpar=[]), zero).with_changes(
            lpar=node.lpar, rpar=node.rpar)
