"""--jit: which functions of a module can be compiled with jax.jit, and why the others cannot.

The analysis works on the NumPy source, before conversion, and is deliberately narrow: a
function is compiled only when every value in it is classified as a Python value known at
compile time (STATIC) or an array (ARRAY), every place that needs a Python value (shapes,
range bounds, `if` tests, dtypes) gets a STATIC one, and every call site in the module passes
arrays or hashable Python values. Anything it cannot classify leaves the function as it was
(eager JAX), with the reason.
"""

from np2jax.jit.traceable import JitPlan, jit_plans

__all__ = ["JitPlan", "jit_plans"]
