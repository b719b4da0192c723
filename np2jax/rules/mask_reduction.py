"""NJ504 mask-reduction.

With --jit: a reduction over a boolean selection, `x[x > 0].sum()`, becomes the reduction
with `where=`, and a count of it, `len(x[m]) / n`, `jnp.count_nonzero(m) / n`: shapes that
do not depend on the values.
"""

from __future__ import annotations

from np2jax.rules._jit import CompiledRewrite


class MaskReduction(CompiledRewrite):
    code = "NJ504"
    kinds = ("masked-reduction", "mask-count")
