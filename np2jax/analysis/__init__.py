"""The analysis layer: the one home of facts about a module's values.

Layered, each module importing only those above it in this list:

    facts        kinds of value, reasons to keep NumPy, the records handed to rules
    references   which NumPy/SciPy name a reference is, and its plan (convert or keep)
    collect      the one walk over the module
    shapes       shapes proven equal, and static shapes
    strings      whether a value may be Python strings or hold None (kept on NumPy)
    jax_typing   whether a value is a JAX array once converted, and what that relies on
    values       value kinds, what functions return, indexes and masks (asks the two above)
    decorators   decorators that hand back what the function they wrap returns
    effects      per function: fresh returns; per parameter: written, returned, escaping
    aliasing     whether an array may be seen through another name (privacy proofs)
    mutators     functions that change an argument in place, and their call sites
    dtypes       the NumPy dtype of a value, where the code shows it
    casts        float-to-integer casts: values that may leave the range, NumPy's result in JAX
    views        names holding views of private arrays; carrying a write through them
    writes       how a write through a subscript becomes functional
    randomness   NumPy random states and their draws
    module       ModuleAnalysis, the facade the rules read, and analyze()
"""

from np2jax.analysis.module import ModuleAnalysis, analyze

__all__ = ["ModuleAnalysis", "analyze"]
