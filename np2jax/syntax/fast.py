"""The fast path through libcst: scopes and positions without libcst's metadata wrapper.

The only module of np2jax that touches libcst's private internals: `CSTNode.visit` swapped
while the scope visitor runs (it only reads, so it needs no copy of each node),
`ScopeProvider._computed`, `Scope._assignment_count`, a `CodegenState` subclass that notes
where each node starts, and `Module._codegen`. Together they make the analysis about three
times quicker than libcst's MetadataWrapper (which copies the tree, then walks it once per
provider, ExpressionContextProvider spawning a visitor per target).

Each shortcut has a public twin that gives the same answers through libcst's public API
(MetadataWrapper, ScopeProvider, PositionProvider). The twins run when
NP2JAX_PUBLIC_LIBCST=1 is set, or when the installed libcst lacks an internal this module
relies on (`PUBLIC_ONLY`); CI runs the fixture suite both ways, and
tests/syntax/test_fast_path.py compares the two on every fixture and on large NumPy files.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

import libcst as cst
from libcst.metadata import (
    ExpressionContext,
    ExpressionContextProvider,
    MetadataWrapper,
    PositionProvider,
    ScopeProvider,
)

from np2jax.syntax import PUBLIC_LIBCST
from np2jax.syntax.walk import WHITESPACE_NODES, children

try:  # the internals; a libcst release without one of them gets the public twins
    from libcst._nodes.internal import CodegenState
    from libcst.metadata.scope_provider import _ASSIGNMENT_LIKE_NODES, ScopeVisitor

    _INTERNALS = all((hasattr(ScopeVisitor, "infer_accesses"), hasattr(cst.Module, "_codegen"),
                      hasattr(CodegenState, "record_syntactic_position"),
                      hasattr(ScopeProvider(), "_computed")))
except ImportError:  # pragma: no cover - a libcst that moved them
    ScopeVisitor = CodegenState = object  # (the classes below are then never used)
    _ASSIGNMENT_LIKE_NODES = ()
    _INTERNALS = False

PUBLIC_ONLY = PUBLIC_LIBCST or not _INTERNALS


def scopes_of(module: cst.Module) -> ScopeMap:
    """libcst's ScopeProvider mapping (node -> Scope) for `module`, with `import_roots`."""
    if PUBLIC_ONLY:
        return _public_scopes(module)
    return _fast_scopes(module)


def _public_scopes(module: cst.Module) -> ScopeMap:
    """The public twin: the wrapper on the tree itself (no copy: the analysis asks about
    the nodes it parsed), its ScopeProvider, and the names imports bind by a walk."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    found = ScopeMap(wrapper.resolve(ScopeProvider))
    found.import_roots = set()
    for node in found:
        if isinstance(node, cst.Import):
            found.import_roots.update(alias.evaluated_alias or alias.evaluated_name.split(".")[0]
                                      for alias in node.names)
        elif isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
            found.import_roots.update(alias.evaluated_alias or alias.evaluated_name
                                      for alias in node.names)
    return found


def _fast_scopes(module: cst.Module) -> ScopeMap:
    """libcst's ScopeProvider mapping, quickly. Its ScopeVisitor runs
    directly (through a MetadataWrapper it costs one more walk of the tree, the batch walk
    that only calls its visit_Module), without rebuilding the tree (`_visit_in_place`),
    and what it reads of ExpressionContextProvider, which names are stored to, comes from
    `_stored_names` (the provider is a walk that spawns a visitor per target, attribute and
    subscript)."""
    scopes = ScopeProvider()
    scopes.metadata = {ExpressionContextProvider: _stored_names(module)}
    scopes._computed = found = ScopeMap()
    visitor = _ScopeVisitor(scopes)
    original, cst.CSTNode.visit = cst.CSTNode.visit, _visit_in_place
    try:
        module.visit(visitor)
    finally:
        cst.CSTNode.visit = original
    visitor.infer_accesses()
    found.import_roots = visitor.import_roots
    return found




class ScopeMap(dict):
    """node -> Scope, as libcst's ScopeProvider gives it; and `import_roots`: every name an
    import statement binds, anywhere in the module (None: not to be relied on). A name that
    no import binds has no qualified name from an import, so it cannot name NumPy, SciPy or
    jax.numpy: the analysis does not ask the scopes about it."""

    import_roots: set[str] | None = None



class _ScopeVisitor(ScopeVisitor):
    """libcst's ScopeVisitor with its dispatch memoised per node type, and its on_leave
    without `isinstance` against a tuple of ABCs (each a call of ABCMeta.__instancecheck__,
    for every node of the tree)."""

    def __init__(self, provider: ScopeProvider) -> None:
        super().__init__(provider)
        self._visits: dict[type, object] = {}
        self._leaves: dict[type, object] = {}
        self.import_roots: set[str] = set()

    def visit_Import(self, node: cst.Import) -> bool | None:
        for alias in node.names:
            self.import_roots.add(alias.evaluated_alias or alias.evaluated_name.split(".")[0])
        return super().visit_Import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool | None:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                self.import_roots.add(alias.evaluated_alias or alias.evaluated_name)
        return super().visit_ImportFrom(node)

    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = type(node)
        try:
            visit = self._visits[kind]
        except KeyError:
            visit = self._visits[kind] = getattr(self, f"visit_{kind.__name__}", None)
        return visit is None or visit(node) is not False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        kind = type(original_node)
        self.provider._computed[original_node] = self.scope  # what set_metadata does
        try:
            leave = self._leaves[kind]
        except KeyError:
            leave = self._leaves[kind] = getattr(self, f"leave_{kind.__name__}", None)
            _ASSIGNMENT_LIKE[kind] = issubclass(kind, _ASSIGNMENT_LIKE_NODES)
        if _ASSIGNMENT_LIKE[kind]:
            self.scope._assignment_count += 1
        if leave is not None:
            leave(original_node)


_ASSIGNMENT_LIKE: dict[type, bool] = {}
_CSTNODE_VISIT = cst.CSTNode.visit


def _visit_in_place(node: cst.CSTNode, visitor):
    """CSTNode.visit for `_ScopeVisitor`, which only reads: the same order of calls, without
    building a copy of every node on the way back up. Any other visitor (another thread's
    transformer, say) gets libcst's own visit."""
    if type(visitor) is not _ScopeVisitor:
        return _CSTNODE_VISIT(node, visitor)
    if visitor.on_visit(node):
        for child in children(node):
            child.visit(visitor)
    visitor.on_leave(node)
    return node


def _stored_names(module: cst.Module) -> dict:
    """The Names ExpressionContextProvider marks STORE (ScopeProvider takes every other name
    as a read, whatever its context): its rules, as one recursive walk."""
    stored: dict[cst.Name, ExpressionContext] = {}

    def walk(node: cst.CSTNode, store: bool) -> None:
        kind = type(node)
        if kind is cst.Name:
            if store:
                stored[node] = ExpressionContext.STORE
        elif kind is cst.Assign:
            for target in node.targets:
                walk(target, True)
            walk(node.value, store)
        elif kind in (cst.AnnAssign, cst.AugAssign, cst.NamedExpr):
            walk(node.target, True)
            for child in (getattr(node, "annotation", None), node.value):
                if child is not None:
                    walk(child, store)
        elif kind is cst.AsName:
            walk(node.name, True)
        elif kind in (cst.CompFor, cst.For):
            walk(node.target, True)
            for child in children(node):
                if child is not node.target:
                    walk(child, store)
        elif kind is cst.Del:
            walk(node.target, False)
        elif kind is cst.Attribute:
            walk(node.value, False)  # the attr Name has no context
        elif kind is cst.Subscript:
            walk(node.value, False)
            for element in node.slice:
                walk(element, False)
        elif kind in (cst.ClassDef, cst.FunctionDef):
            walk(node.name, True)
            for child in children(node):  # not the type parameters: the provider skips them
                if child is not node.name and child is not node.type_parameters:
                    walk(child, store)
        elif kind is cst.Param:
            walk(node.name, True)
            for child in (node.annotation, node.default):
                if child is not None:
                    walk(child, store)
        else:
            for child in children(node):
                walk(child, store)

    walk(module, False)
    return stored



class SourcePositions:
    """Where each node starts: the line (1-based) and column (0-based) of libcst's
    PositionProvider, which ignores the whitespace and comments a node owns in front.

    Computed on first use by one code generation that notes, for each node, how many
    characters come before it (integers in a dict, where the provider builds position
    objects for both ends of every node at several times the cost). The public twin asks
    the provider."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._offsets: dict[cst.CSTNode, int] | None = None
        self._line_starts: list[int] = []
        self._public: dict | None = None

    def start(self, node: cst.CSTNode) -> tuple[int, int]:
        if PUBLIC_ONLY:
            if self._public is None:
                wrapper = MetadataWrapper(self._module, unsafe_skip_copy=True)
                self._public = wrapper.resolve(PositionProvider)
            position = self._public[node].start
            return position.line, position.column
        if self._offsets is None:
            self._compute()
        offset = self._offsets[node]
        line = bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1]

    def _compute(self) -> None:
        state = _OffsetState(self._module.default_indent, self._module.default_newline)
        self._module._codegen(state)
        tokens = state.tokens
        ends = list(accumulate(map(len, tokens), initial=0))  # character offset of each token
        self._offsets = {node: ends[index] for node, index in state.starts.items()}
        code = "".join(tokens)
        if "\r" in code:  # libcst counts newlines token by token: "\r" + "\n" would be two
            self._line_starts = [0]
            for token, end in zip(tokens, ends[1:]):
                if _NEWLINE.search(token):
                    base = end - len(token)
                    self._line_starts.extend(base + m.end() for m in _NEWLINE.finditer(token))
        else:
            self._line_starts = [0, *(m.end() for m in _NEWLINE.finditer(code))]


_NEWLINE = re.compile(r"\r\n?|\n")  # libcst.metadata.position_provider.NEWLINE_RE
_WHITESPACE_TYPES = frozenset(WHITESPACE_NODES)


class _OffsetState(CodegenState):
    """Code generation that records the token index where each node starts, the way
    libcst's PositionProvidingCodegenState records positions: where its syntax starts
    (`record_syntactic_position`, possibly hoisted from a child) or else where its code
    starts, whitespace included."""

    def __init__(self, default_indent: str, default_newline: str) -> None:
        super().__init__(default_indent, default_newline)
        self.starts: dict[cst.CSTNode, int] = {}
        self._stack: list[int] = []

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._stack.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._stack.pop()
        if type(node) not in _WHITESPACE_TYPES and node not in self.starts:
            self.starts[node] = start  # (whitespace: half the nodes, never asked about)

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _SyntacticStart(self, node, start_node)


class _SyntacticStart:
    __slots__ = ("state", "node", "start_node", "index")

    def __init__(self, state: _OffsetState, node, start_node) -> None:
        self.state, self.node, self.start_node = state, node, start_node

    def __enter__(self) -> None:
        self.index = len(self.state.tokens)

    def __exit__(self, *exc) -> None:
        starts = self.state.starts
        starts[self.node] = self.index if self.start_node is None else starts[self.start_node]


