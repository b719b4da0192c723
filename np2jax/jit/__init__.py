"""--jit: which functions of a module can be compiled with jax.jit, and why the others cannot.

The analysis works on the NumPy source, before conversion, and is deliberately narrow: a
function is compiled only when every value in it is classified as a Python value known at
compile time (STATIC) or an array (ARRAY), every place that needs a Python value (shapes,
range bounds, `if` tests, dtypes) gets a STATIC one, and every call site in the module passes
arrays or hashable Python values. Anything it cannot classify leaves the function as it was
(eager JAX), with the reason.

It hands the rules plans (JitPlan), one per module-level function, with the rewrites each
compiled function needs and the verdicts on its loops, each tagged with a RewriteKind; the
rules decide which catalog entry reports which kind. Layered, each module importing only
those above it in this list (and np2jax.syntax, np2jax.analysis):

    lattice        the value classes (STATIC, ARRAY, ...) and how they combine
    names          names a function binds, stores, mentions; how a loop body stores them
    patterns       shapes of statements: one-line blocks, if/elif chains, a loop's exits
    verdicts       RewriteKind, Rewrite, LoopVerdict: what the analysis hands on
    rewrites       the code written for masks, prints, `if`s on arrays (the fixes)
    proofs         0-d tests and values; expressions of the shape and dtype of one array
    scan           the lists a loop collects (lax.scan histories)
    loop_rewrites  the code written for loops: fori_loop, scan, while_loop, flags
    gather         integer-array indexes (provably not boolean)
    masks          boolean selections: reductions, counts, selections in where-writes
    branches       `if` on a 0-d array: jnp.where, lax.cond, lax.switch
    checker        the state of a trace check (TraceCheckerBase) and of the module (JitModule)
    expressions    the checks of expressions  \\
    calls          ... of calls                | mixins of TraceChecker
    statements     ... of statements           |
    loops          ... of loops               /
    traceable      TraceChecker: whether a body traces
    plan           JitPlan, jit_plans: which functions compile, with which static arguments
"""

from np2jax.jit.plan import JitPlan, jit_plans
from np2jax.jit.verdicts import LoopVerdict, Rewrite, RewriteKind

__all__ = ["JitPlan", "LoopVerdict", "Rewrite", "RewriteKind", "jit_plans"]
