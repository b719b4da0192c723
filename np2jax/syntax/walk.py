"""The one read-only walk of the analysis: a node's children without whitespace, the
nodes under a node, and a walker that records parents.

Whitespace, newlines and comments are half of a module's nodes, and nothing of np2jax asks
about them, so no walk goes into them. `children` reads a node's fields in the order libcst
visits them (the generated table np2jax.syntax.field_order), which is several times quicker
than libcst's `node.children` (found by visiting, which rebuilds the node); a node type the
table does not know, another libcst release than the table's, or NP2JAX_PUBLIC_LIBCST=1,
gets `node.children` itself.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import libcst as cst
from libcst._version import __version__ as _LIBCST_VERSION

from np2jax.syntax import PUBLIC_LIBCST
from np2jax.syntax.field_order import FIELD_ORDER, LIBCST_VERSION

# The table is libcst's visiting order in one release; another release gets `node.children`.
_TABLE = FIELD_ORDER if LIBCST_VERSION == _LIBCST_VERSION and not PUBLIC_LIBCST else {}

# Whitespace and what it holds (it holds nothing else).
WHITESPACE_NODES = (cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace,
                    cst.EmptyLine, cst.Comment, cst.Newline)

_FIELDS: dict[type, tuple[str, ...] | None] = {}  # per node type: the table's entry, or None
# Whether a type is a libcst node other than whitespace, by a dict lookup: isinstance
# against CSTNode, an ABC, costs a call of ABCMeta.__instancecheck__ each time.
_IS_SYNTAX: dict[type, bool] = {}


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node.children` without whitespace, newlines and comments, in the same order."""
    kind = type(node)
    try:
        fields = _FIELDS[kind]
    except KeyError:
        fields = _TABLE.get(kind.__name__)
        if not fields and node.children:  # children it does not name: libcst's own way
            fields = None
        _FIELDS[kind] = fields
    if fields is None:
        return [child for child in node.children if _is_syntax(type(child))]
    found = []
    is_syntax = _IS_SYNTAX
    for name in fields:
        value = getattr(node, name)
        value_type = type(value)
        if value_type is tuple or value_type is list:
            for item in value:
                item_type = type(item)
                if is_syntax.get(item_type) or (item_type not in is_syntax and _is_syntax(item_type)):
                    found.append(item)
        elif is_syntax.get(value_type) or (value_type not in is_syntax and _is_syntax(value_type)):
            found.append(value)
    return found


def _is_syntax(value_type: type) -> bool:
    try:
        return _IS_SYNTAX[value_type]
    except KeyError:
        _IS_SYNTAX[value_type] = is_syntax = issubclass(value_type, cst.CSTNode) and \
            not issubclass(value_type, WHITESPACE_NODES)
        return is_syntax


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `node`, `node` first, in source order (whitespace aside)."""
    yield node
    for child in children(node):
        yield from walk(child)


def names_in(node: cst.CSTNode) -> set[str]:
    """Every identifier written under `node` (bound or read, imports included)."""
    return {n.value for n in walk(node) if type(n) is cst.Name}


def fresh_name(base: str, taken: set[str]) -> str:
    """`base`, or `base_2`, `base_3`... whichever is not in `taken`; then taken."""
    name, number = base, 2
    while name in taken:
        name, number = f"{base}_{number}", number + 1
    taken.add(name)
    return name


class Walker:
    """A read-only walk in libcst's visiting order that calls `visit_<Node>(node)` (False:
    skip its children), records each node's parent, as ParentNodeProvider gives it
    (whitespace and comments aside), and lists the nodes it walks by type. Several times
    quicker than a CSTVisitor, which rebuilds every node it leaves."""

    def __init__(self) -> None:
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.nodes: defaultdict[type, list[cst.CSTNode]] = defaultdict(list)  # by type, walked
        self._path: list[cst.CSTNode] = []  # the nodes from the module down to this one
        self._visits: dict[type, object] = {}

    def walk(self, node: cst.CSTNode) -> None:
        kind = type(node)
        try:
            visit = self._visits[kind]
        except KeyError:
            visit = self._visits[kind] = getattr(self, f"visit_{kind.__name__}", None)
        self.nodes[kind].append(node)
        self._path.append(node)
        descend = visit is None or visit(node) is not False
        parents = self.parents
        for child in children(node):
            parents[child] = node
            if descend:
                self.walk(child)
            else:
                record_parents(child, parents)
        self._path.pop()


def record_parents(node: cst.CSTNode, parents: dict) -> None:
    """Every node under `node` -> its parent, into `parents`."""
    for child in children(node):
        parents[child] = node
        record_parents(child, parents)


class OwnScopeVisitor(cst.CSTVisitor):
    """A visitor of the code that runs where it is written: it does not go into the
    functions, classes and lambdas defined there (their bodies run elsewhere, or later)."""

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False
