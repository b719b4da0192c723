"""The syntax layer: what every other layer needs to read and build libcst trees.

Nothing here knows about NumPy, JAX or the analysis; nothing here imports another part of
np2jax but np2jax.files (for SourceError).

    np2jax.syntax          small questions about nodes (this module)
    np2jax.syntax.walk     the one read-only walk: children without whitespace, parents
    np2jax.syntax.fast     libcst's scopes and positions, quickly (the only module that
                           touches libcst's private internals; NP2JAX_PUBLIC_LIBCST=1 turns
                           them off)
    np2jax.syntax.updates  builders of the code that replaces in-place writes
    np2jax.syntax.parse    source text -> libcst Module (and CPython's ast), with a one-line error
"""

from __future__ import annotations

import os

import libcst as cst

_EMPTY_MODULE = cst.Module([])

# Only libcst's public API (np2jax.syntax.fast): set to check that the shortcuts change nothing.
PUBLIC_LIBCST = os.environ.get("NP2JAX_PUBLIC_LIBCST", "") not in ("", "0")


def code_of(node: cst.CSTNode) -> str:
    """The source text of a node, as libcst prints it."""
    return _EMPTY_MODULE.code_for_node(node)


def is_none(node: cst.CSTNode) -> bool:
    """The name `None` (not Python's None: a missing node is the caller's question)."""
    return isinstance(node, cst.Name) and node.value == "None"


def single_index(subscript: cst.Subscript) -> cst.BaseExpression | None:
    """`a[i]`: the index of a subscript with one index and no slice, else None."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    return subscript.slice[0].slice.value


def integer_index(subscript: cst.Subscript) -> int | None:
    """`a[1]`, `a[-1]`: a literal integer index, else None."""
    index = single_index(subscript)
    negative = isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus)
    if negative:
        index = index.expression
    if not isinstance(index, cst.Integer):
        return None
    return -int(index.evaluated_value) if negative else int(index.evaluated_value)


def dotted_chain(node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """[np.linalg.norm, np.linalg, np] for `np.linalg.norm`: the node and its prefixes.

    None unless the node is a pure dotted name: libcst also gives `np.cos(x).reshape` the
    qualified name `numpy.cos.reshape`, which is not a reference to NumPy's namespace.
    """
    chain = [node]
    while isinstance(chain[-1], cst.Attribute):
        chain.append(chain[-1].value)
    return chain if isinstance(chain[-1], cst.Name) else None


def all_parameters(function: cst.FunctionDef, where=None) -> tuple:
    """((position or None, name), ...) of every parameter a caller can pass (position among
    the positional ones; None for keyword-only), or of those `where(param)` holds for:
    what argument_for takes to find the argument a call passes for one."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    return tuple((positional.index(p) if p in positional else None, p.name.value)
                 for p in [*positional, *params.kwonly_params] if where is None or where(p))


def argument_for(call: cst.Call, position: int | None, name: str):
    """The expression a call passes for a parameter (by keyword `name`, or at `position`
    among the positional arguments), or None: not passed, or hidden by `*`/`**`."""
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if position is not None and position < len(positional):
        return positional[position].value
    return None


def handler_names(handler: cst.ExceptHandler) -> list[str]:
    """The exception names an `except` clause lists, last dotted part (`np.linalg.LinAlgError`:
    "LinAlgError"); empty for a bare `except:`."""
    kind = handler.type
    names = [e.value for e in kind.elements] if isinstance(kind, cst.Tuple) else \
        [kind] if kind is not None else []
    return [code_of(n).rsplit(".", 1)[-1] for n in names]


def unpacked_position(statement, name: str) -> tuple[int, int] | None:
    """(index, count) when `statement` is `a, b, c = value` binding `name` once at top
    level (no starred target, one target list)."""
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    elements = [e.value for e in target.elements]
    if any(isinstance(e, cst.StarredElement) for e in target.elements):
        return None
    found = [i for i, e in enumerate(elements) if isinstance(e, cst.Name) and e.value == name]
    return (found[0], len(elements)) if len(found) == 1 else None
