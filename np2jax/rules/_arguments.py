"""Helpers of the argument rules (NJ110-NJ112)."""

from __future__ import annotations

import libcst as cst


def as_array(jnp: str):
    return lambda node: cst.Call(func=cst.Attribute(cst.Name(jnp), cst.Name("asarray")),
                                 args=[cst.Arg(node)])
