"""Fixes shared by the rules that hand a value over as an array: `jnp.asarray(x)` to JAX
(NJ111, NJ112), `np.asarray(x)` to a call left on NumPy (NJ103, NJ301)."""

from __future__ import annotations

import libcst as cst


def as_array(module: str):
    """The fix wrapping a node in `module.asarray(...)` (`module`: the alias written)."""
    return lambda node: cst.Call(func=cst.Attribute(cst.Name(module), cst.Name("asarray")),
                                 args=[cst.Arg(node)])
