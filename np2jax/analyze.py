"""Analysis: one pass over a parsed module that gathers the facts the rules report on.

- every reference to NumPy/SciPy (resolved by libcst's scopes' qualified names, so aliases,
  `from ... import`, local imports, shadowing and parameters named `np` are handled), each
  with a plan: convert to its JAX counterpart, or keep on NumPy and why;
- the role of each argument of those calls (array, shape, sequence of arrays, out, ...);
- in-place writes (subscript stores, augmented assignments, in-place methods and attributes);
- what each local name may hold (container, scalar, array, unknown) and whether an array
  may be seen through another name (aliases, views, escapes).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from itertools import accumulate
from typing import TYPE_CHECKING

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import (
    ExpressionContext,
    ExpressionContextProvider,
    QualifiedNameSource,
    ScopeProvider,
)
from libcst.metadata.scope_provider import _ASSIGNMENT_LIKE_NODES, ScopeVisitor

from np2jax.catalog import api_policy, api_table
from np2jax.tree import ModuleContext, resolve

if TYPE_CHECKING:
    from np2jax.dataflow import Dataflow

MODULE_ROOTS = ("numpy", "scipy")
JNP_DEFAULT_ALIAS = "jnp"

# Why a reference stays on NumPy; the rule that reports each reason names it.
KEEP_MISSING = "missing"  # JAX has no counterpart
KEEP_UNSUPPORTED_ARGUMENT = "unsupported-argument"
KEEP_MODULE_VALUE = "module-value"  # `xp = np`: a module used as a value
KEEP_TYPE_CHECK = "type-check"  # isinstance(x, np.ndarray)
KEEP_OUT = "out"
KEEP_IN_PLACE_FUNCTION = "in-place-function"
KEEP_UFUNC_AT = "ufunc-at"
KEEP_RANDOM = "random"
KEEP_STATIC = "static"  # host computation feeding a shape: stays NumPy, no finding
KEEP_BY_DESIGN = "by-design"  # I/O, print options, testing: stays NumPy, no finding
KEEP_AMBIGUOUS = "ambiguous"  # the name may refer to NumPy or to something else
KEEP_DIFFERS = "differs"  # JAX has the name but answers differently (policy.toml [differs])
KEEP_NO_METHOD = "no-method"  # np.sin.reduce: JAX's sin is a plain function
KEEP_BOUND_TO_NAME = "bound-to-name"  # add = np.add: later uses (.at, out=) cannot be checked

# Operators NumPy applies elementwise (not `is`, `in`), and the operands np2jax may wrap.
ELEMENTWISE_COMPARISONS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual,
                           cst.Equal, cst.NotEqual)
_OPERAND_NODES = (cst.Name, cst.Subscript)

UFUNC_METHODS = ("reduce", "accumulate", "outer", "at", "reduceat")

# Builtins that neither keep a reference to their arguments nor return them.
PURE_BUILTINS = frozenset({
    "print", "len", "float", "int", "complex", "bool", "str", "repr", "format", "abs",
    "round", "isinstance", "issubclass", "type", "id", "hash", "range", "sum", "min", "max",
    "any", "all", "sorted", "divmod", "pow",
})
CONTAINER_CALLS = frozenset({"list", "dict", "set", "frozenset", "tuple", "defaultdict",
                             "OrderedDict", "Counter", "deque", "str", "bytearray", "sorted",
                             "globals", "locals", "vars"})
CONTAINER_METHODS = frozenset({"split", "rsplit", "splitlines", "tolist"})
# Not abs() or round(): on an array they return an array.
SCALAR_CALLS = frozenset({"int", "float", "complex", "bool", "len"})
_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)
STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "size"})

# Builtins through which code reads or writes names and attributes the analysis cannot see.
DYNAMIC_CALLS = frozenset({"exec", "eval", "globals", "locals", "vars", "setattr", "delattr",
                           "getattr", "__import__"})

# Kinds of value a name may hold.
CONTAINER, SCALAR, ARRAY, UNKNOWN = "container", "scalar", "array", "unknown"


@dataclass
class Argument:
    arg: cst.Arg
    role: str | None  # from the API table; None when it cannot be known (*args)
    problem: str | None = None  # why JAX cannot take it as written
    name: str | None = None  # the JAX parameter it binds to


@dataclass
class ApiRef:
    """One reference to a NumPy/SciPy API, e.g. the `np.linalg.norm` in `np.linalg.norm(x)`."""

    node: cst.BaseExpression
    qualname: str  # the longest name known to the table, e.g. "numpy.linalg.norm"
    entry: dict | None
    call: cst.Call | None = None  # the call whose function this reference is
    arguments: list[Argument] = field(default_factory=list)
    keep: str | None = None  # None: convert to `jax_path`; else why it stays on NumPy
    detail: str = ""  # for findings: the offending argument, the missing name, ...
    out_arg: cst.Arg | None = None  # the out= argument of the call, when it has one

    @property
    def jax_path(self) -> str | None:
        return (self.entry or {}).get("jax")

    @property
    def converted(self) -> bool:
        return self.keep is None


@dataclass
class SubscriptWrite:
    statement: cst.CSTNode  # the Assign / AugAssign
    target: cst.Subscript
    operator: str | None  # "+=" for augmented writes, None for plain stores
    base_kind: str  # what the subscripted object may be


@dataclass
class AugAssignFact:
    node: cst.AugAssign
    target: cst.BaseExpression  # a Name or an Attribute
    shared_because: str | None  # why another name may see the array; None when provably private


@dataclass
class MethodWrite:
    node: cst.CSTNode  # the call, or the Assign for `x.shape = ...`
    receiver: cst.BaseExpression
    method: str
    receiver_kind: str


@dataclass
class DtypeUse:
    node: cst.CSTNode
    spelled: str  # how the source names the wide dtype


@dataclass
class MutatorFunction:
    """`def normalize(v): v /= v.sum()`: a function that changes one argument in place and
    returns nothing. It can return the new array instead, if every caller can take it."""

    node: cst.FunctionDef
    param: cst.Param
    writes: list  # the statements changing the parameter (subscript writes, `v op= ...`)
    call_sites: list  # (call, argument expression) of every call
    refused: str | None  # why the function is not rewritten


@dataclass
class ModuleAnalysis:
    module: cst.Module
    positions: "SourcePositions"
    parents: dict
    refs: list[ApiRef]
    subscript_writes: list[SubscriptWrite]
    aug_assigns: list[AugAssignFact]
    method_writes: list[MethodWrite]
    out_method_calls: list[MethodWrite]
    wide_dtypes: list[DtypeUse]
    tiny_literals: list[cst.Float]
    decimal_roundings: list[cst.Call]
    wide_literals: list[cst.BaseExpression]  # integer constants that do not fit in int32
    dtype_comparisons: list[cst.Comparison]  # x.dtype == np.int32
    star_imports: list[cst.ImportFrom]
    sequence_names: set  # Name arguments that hold lists where JAX wants an array
    random_shuffles: list[cst.Call]  # rng.shuffle(x): in place, on a Generator kept on NumPy
    list_indices: list[cst.List]  # x[[0, 2]]: a list literal used as an index
    # `a - b`, `a < b`, `a -= b` with a name or a subscript as one operand: (node, left, right)
    operations: list[tuple[cst.CSTNode, cst.BaseExpression, cst.BaseExpression]]
    jnp_alias: str
    uses_numpy: bool
    dataflow: "Dataflow"
    mutators: list[MutatorFunction]
    # calls of other modules' functions rewritten to return their argument (NJ209)
    external_calls: list  # (call, argument name, qualified name) to assign back
    external_refusals: list  # (node, qualified name, reason)
    tree_references: dict  # qualified name -> how many references this file makes
    context: ModuleContext

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        """1-based line and column of a node."""
        line, column = self.positions.start(node)
        return line, column + 1


def analyze(module: cst.Module, context: ModuleContext = ModuleContext()) -> ModuleAnalysis:
    """`context`: what the other files of the converted tree mean for this one (np2jax.tree).

    Of libcst's metadata only the scopes are resolved: parents are recorded by the
    collector's own walk, qualified names asked of the scopes for just the nodes that need
    them, and positions computed on first use (each of libcst's providers is a walk of the
    whole tree, and together they cost several times the parse)."""
    scopes = scopes_of(module)
    collector = _Collector(scopes, context)
    collector.walk(module)
    parents = collector.parents
    positions = SourcePositions(module)
    from np2jax.dataflow import Dataflow  # it builds on this module's facts

    dataflow = Dataflow(collector, parents, positions, scopes)
    for ref in collector.refs:
        _plan(ref, parents, collector)
    mutators = dataflow.mutator_functions(module, context)
    external_calls, external_refusals = dataflow.external_call_sites(collector.tree_refs, context)
    for ref in collector.refs:  # needs every plan: which arrays are JAX depends on them
        if ref.keep == KEEP_OUT and ref.call is not None and ref.out_arg is not None:
            if dataflow.out_call_convertible(ref) is None:
                ref.keep = None
    return ModuleAnalysis(
        module=module,
        positions=positions,
        parents=parents,
        refs=collector.refs,
        subscript_writes=[
            SubscriptWrite(stmt, target, op, dataflow.kind_of(target.value, stmt))
            for stmt, target, op in collector.subscript_stores
        ],
        aug_assigns=[AugAssignFact(node, node.target, dataflow.shared_because(node))
                     for node in collector.aug_assigns],
        method_writes=[MethodWrite(n, recv, meth, dataflow.kind_of(recv, n))
                       for n, recv, meth in collector.method_writes],
        out_method_calls=[MethodWrite(n, recv, meth, dataflow.kind_of(recv, n))
                          for n, recv, meth in collector.out_method_calls],
        wide_dtypes=collector.wide_dtypes,
        tiny_literals=collector.tiny_literals,
        list_indices=collector.list_indices,
        operations=collector.operations,
        wide_literals=collector.wide_literals,
        dtype_comparisons=collector.dtype_comparisons,
        star_imports=collector.star_imports,
        sequence_names=dataflow.sequence_arguments(collector.refs),
        random_shuffles=dataflow.generator_shuffles(collector.shuffle_calls),
        decimal_roundings=collector.round_methods + [
                           r.call for r in collector.refs if r.call is not None and r.converted
                           and r.qualname in api_policy()["precision"]["decimal_rounding"]
                           and (len(r.call.args) > 1 or any(
                               a.keyword is not None and a.keyword.value == "decimals"
                               for a in r.call.args))],
        jnp_alias=_choose_jnp_alias(collector),
        dataflow=dataflow,
        mutators=mutators,
        external_calls=external_calls,
        external_refusals=external_refusals,
        tree_references=dict(Counter(q for _, q in collector.tree_refs)),
        context=context,
        uses_numpy=collector.imports_numpy or bool(collector.refs),
    )


# --- metadata -----------------------------------------------------------------------------


def scopes_of(module: cst.Module) -> dict:
    """libcst's ScopeProvider mapping (node -> Scope) for `module`. Its ScopeVisitor runs
    directly (through a MetadataWrapper it costs one more walk of the tree, the batch walk
    that only calls its visit_Module), without rebuilding the tree (`_visit_in_place`),
    and what it reads of ExpressionContextProvider, which names are stored to, comes from
    `_stored_names` (the provider is a walk that spawns a visitor per target, attribute and
    subscript). tests/test_metadata_fast_path.py checks the scopes equal libcst's own."""
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
    module_scope = found.get(module)
    for root in MODULE_ROOTS:  # `numpy = ...`, `def numpy()`: names of it start with numpy.
        if module_scope is not None and root in module_scope.assignments and any(
                not isinstance(a.node, (cst.Import, cst.ImportFrom))
                for a in module_scope.assignments[root]):
            found.import_roots = None
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
        for child in _children(node):
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
            for child in _children(node):
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
            for child in _children(node):  # not the type parameters: the provider skips them
                if child is not node.name and child is not node.type_parameters:
                    walk(child, store)
        elif kind is cst.Param:
            walk(node.name, True)
            for child in (node.annotation, node.default):
                if child is not None:
                    walk(child, store)
        else:
            for child in _children(node):
                walk(child, store)

    walk(module, False)
    return stored


class SourcePositions:
    """Where each node starts: the line (1-based) and column (0-based) of libcst's
    PositionProvider, which ignores the whitespace and comments a node owns in front.

    Computed on first use by one code generation that notes, for each node, how many
    characters come before it (integers in a dict, where the provider builds position
    objects for both ends of every node at several times the cost)."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._offsets: dict[cst.CSTNode, int] | None = None
        self._line_starts: list[int] = []

    def start(self, node: cst.CSTNode) -> tuple[int, int]:
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


_FIELD_ORDER: dict[type, tuple[str, ...] | None] = {}


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node.children` without whitespace, newlines and comments, in the same order, read
    straight from the node's fields (libcst finds them by visiting, rebuilding the node).
    The order is the one its `_visit_and_replace_children` visits the fields in
    (`_field_order`). Whitespace is half of a module's nodes; nothing is asked of it, so
    no walk of the analysis (the scopes' included) goes into it."""
    kind = type(node)
    try:
        fields = _FIELD_ORDER[kind]
    except KeyError:
        fields = _field_order(kind)
        if not fields and node.children:  # children it does not name: libcst's own way
            fields = None
        _FIELD_ORDER[kind] = fields
    if fields is None:
        return [child for child in node.children if _is_syntax(type(child))]
    children = []
    is_syntax = _IS_SYNTAX
    for name in fields:
        value = getattr(node, name)
        value_type = type(value)
        if value_type is tuple or value_type is list:
            for item in value:
                item_type = type(item)
                if is_syntax.get(item_type) or (item_type not in is_syntax and _is_syntax(item_type)):
                    children.append(item)
        elif is_syntax.get(value_type) or (value_type not in is_syntax and _is_syntax(value_type)):
            children.append(value)
    return children


def _field_order(kind: type) -> tuple[str, ...]:
    """The fields `kind._visit_and_replace_children` visits, in order: each visit names its
    field as a string constant, and a function's constants are listed in the order they
    first appear. A leaf (Newline, SimpleWhitespace) visits none."""
    names = {f.name for f in dataclass_fields(kind)}
    constants = kind._visit_and_replace_children.__code__.co_consts
    return tuple(dict.fromkeys(c for c in constants if isinstance(c, str) and c in names))


# Whitespace and what it holds (it holds nothing else).
WHITESPACE_NODES = (cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace,
                    cst.EmptyLine, cst.Comment, cst.Newline)
_WHITESPACE_TYPES = frozenset(WHITESPACE_NODES)
# Whether a type is a libcst node other than whitespace, by a dict lookup: isinstance
# against CSTNode, an ABC, costs a call of ABCMeta.__instancecheck__ each time.
_IS_SYNTAX: dict[type, bool] = {}


def _is_syntax(value_type: type) -> bool:
    try:
        return _IS_SYNTAX[value_type]
    except KeyError:
        _IS_SYNTAX[value_type] = is_syntax = issubclass(value_type, cst.CSTNode) and \
            not issubclass(value_type, WHITESPACE_NODES)
        return is_syntax


class _Walker:
    """A read-only walk in libcst's visiting order that calls `visit_<Node>(node)` (False:
    skip its children) and records each node's parent, as ParentNodeProvider gives it
    (whitespace and comments aside: `_children`).
    Several times quicker than a CSTVisitor, which rebuilds every node it leaves."""

    def __init__(self) -> None:
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self._path: list[cst.CSTNode] = []  # the nodes from the module down to this one
        self._visits: dict[type, object] = {}

    def walk(self, node: cst.CSTNode) -> None:
        kind = type(node)
        try:
            visit = self._visits[kind]
        except KeyError:
            visit = self._visits[kind] = getattr(self, f"visit_{kind.__name__}", None)
        self._path.append(node)
        descend = visit is None or visit(node) is not False
        parents = self.parents
        for child in _children(node):
            parents[child] = node
            if descend:
                self.walk(child)
            else:
                _record_parents(child, parents)
        self._path.pop()


def _record_parents(node: cst.CSTNode, parents: dict) -> None:
    for child in _children(node):
        parents[child] = node
        _record_parents(child, parents)


# --- references -------------------------------------------------------------------------


def _dotted_chain(node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """[np.linalg.norm, np.linalg, np] for `np.linalg.norm`: the node and its prefixes.

    None unless the node is a pure dotted name: libcst also gives `np.cos(x).reshape` the
    qualified name `numpy.cos.reshape`, which is not a reference to NumPy's namespace.
    """
    chain = [node]
    while isinstance(chain[-1], cst.Attribute):
        chain.append(chain[-1].value)
    return chain if isinstance(chain[-1], cst.Name) else None


def _numpy_qualname(names) -> str | None:
    """The single NumPy/SciPy name a node refers to, or None (not NumPy, or ambiguous)."""
    names = list(names)
    if len(names) != 1:
        return "" if any(n.name.split(".")[0] in MODULE_ROOTS for n in names) else None
    (name,) = names
    if name.source is QualifiedNameSource.IMPORT and name.name.split(".")[0] in MODULE_ROOTS:
        return name.name
    return None


def _longest_known(qualname: str) -> str:
    parts = qualname.split(".")
    table = api_table()
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in table:
            return candidate
    return qualname


def _bind_arguments(call: cst.Call, entry: dict, qualname: str) -> list[Argument]:
    params = entry.get("params")
    if params is None:
        return [Argument(arg, None) for arg in call.args]
    positional = [p for p in params if p["kind"] == "positional"]
    by_name = {p["name"]: p for p in params if p["kind"] in ("positional", "keyword")}
    var_positional = next((p for p in params if p["kind"] == "var_positional"), None)
    var_keyword = next((p for p in params if p["kind"] == "var_keyword"), None)
    renames = api_policy()["keyword_renames"].get(qualname, {})
    nin = entry.get("nin")
    bound = []
    index = 0
    for arg in call.args:
        if arg.star == "**":  # its keywords (out=?) cannot be checked
            bound.append(Argument(arg, None, f"`**{_code(arg.value)}`, whose keywords cannot be checked"))
            continue
        if arg.star:
            bound.append(Argument(arg, None))
            continue
        if arg.keyword is None:
            if nin is not None and index >= nin:
                bound.append(Argument(arg, "out", name="out"))
            elif index < len(positional):
                bound.append(_checked(arg, positional[index]))
            elif var_positional is not None:
                bound.append(Argument(arg, var_positional["role"], name=var_positional["name"]))
            else:
                bound.append(Argument(arg, None, f"{index + 1} positional arguments"))
            index += 1
            continue
        name = arg.keyword.value
        name = renames.get(name, name)
        if name == "out":
            bound.append(Argument(arg, "out", name="out"))
        elif name in by_name:
            bound.append(_checked(arg, by_name[name]))
        elif var_keyword is not None:
            bound.append(Argument(arg, "other"))
        else:
            bound.append(Argument(arg, None, f"keyword `{arg.keyword.value}`"))
    return bound


def _checked(arg: cst.Arg, param: dict) -> Argument:
    """An argument bound to a JAX parameter; JAX takes some (sort's kind=) only as None."""
    if param["role"] == "none" and not _is_none(arg.value):
        return Argument(arg, "none", f"`{param['name']}={_code(arg.value)}` (JAX accepts only None)",
                        param["name"])
    return Argument(arg, param["role"], name=param["name"])


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _plan(ref: ApiRef, parents: dict, collector: "_Collector") -> None:
    """Decide whether `ref` converts to JAX, and if not, why."""
    policy = api_policy()
    qualname, entry = ref.qualname, ref.entry
    if qualname == "":
        ref.keep = KEEP_AMBIGUOUS
        return
    if qualname.startswith("numpy.random") or qualname == "numpy.random":
        ref.keep = KEEP_RANDOM
        return
    if any(qualname == k or qualname.startswith(k + ".") for k in policy["keep_numpy"]):
        ref.keep = KEEP_BY_DESIGN
        return
    if qualname in policy["type_checks"]:
        ref.keep = KEEP_TYPE_CHECK
        return
    if qualname in policy["differs"]:
        ref.keep, ref.detail = KEEP_DIFFERS, policy["differs"][qualname]
        return
    if qualname in policy["in_place_functions"]:  # called, or taken as a value
        ref.keep = KEEP_IN_PLACE_FUNCTION
        return
    parent = parents.get(ref.node)
    if entry is not None and entry.get("kind") == "ufunc":
        if isinstance(parent, cst.Attribute) and parent.value is ref.node \
                and parent.attr.value in UFUNC_METHODS:
            _plan_ufunc_method(ref, parent, parents, entry)
            return
        if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is ref.node:
            ref.keep = KEEP_BOUND_TO_NAME
            return
    if entry is None or entry.get("jax") is None:
        ref.keep = KEEP_MISSING
        return
    if entry.get("kind") == "module" and not isinstance(parent, cst.Attribute):
        ref.keep = KEEP_MODULE_VALUE
        return
    if ref.call is not None:
        ref.arguments = _bind_arguments(ref.call, entry, qualname)
        for argument in ref.arguments:
            if argument.role == "out" and not _is_none(argument.arg.value):
                ref.out_arg = argument.arg
                continue
            if argument.problem is not None:
                ref.keep, ref.detail = KEEP_UNSUPPORTED_ARGUMENT, argument.problem
                return
            unsupported = _unsupported_data(argument, policy, ref)
            if unsupported is not None:
                ref.keep, ref.detail = KEEP_UNSUPPORTED_ARGUMENT, unsupported
                return
        if ref.out_arg is not None:  # the out rule may still convert it: see release_out_calls
            ref.keep, ref.detail = KEEP_OUT, _code(ref.out_arg.value)
            return
        if _feeds_shape(ref.call, parents, collector) and all(
                _is_static(a.value) for a in ref.call.args):
            ref.keep = KEEP_STATIC


ARRAY_CONSTRUCTORS = ("numpy.array", "numpy.asarray", "numpy.asanyarray")


def _unsupported_data(argument: Argument, policy: dict, ref: ApiRef) -> str | None:
    """Strings and objects, which JAX arrays cannot hold (in a dtype, or in array data:
    `mode="same"` or einsum's subscripts are strings too, and fine)."""
    value = argument.arg.value
    if argument.role == "dtype" or argument.name == "dtype":
        spelled = value.evaluated_value if isinstance(value, cst.SimpleString) else _code(value)
        names = policy["unsupported_dtypes"]
        if spelled in names or spelled.lstrip("<>=|").rstrip("0123456789") in names or \
                any(spelled.endswith("." + n.split(".")[-1]) for n in names if "." in n):
            return f"dtype `{_code(value)}` (JAX has no string or object arrays)"
    is_data = argument.role in ("array", "arrays") or (
        ref.qualname in ARRAY_CONSTRUCTORS and argument is ref.arguments[0])
    if is_data and _holds_strings(value):
        return "strings (JAX has no string arrays)"
    return None


def _holds_strings(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return True
    if isinstance(node, (cst.List, cst.Tuple)):
        return any(_holds_strings(e.value) for e in node.elements)
    return False


def _plan_ufunc_method(ref: ApiRef, attribute: cst.Attribute, parents: dict, entry: dict) -> None:
    """np.add.at / np.add.reduce(...): JAX has these only on its real ufuncs, without out=."""
    method = attribute.attr.value
    if method == "at":
        ref.keep = KEEP_UFUNC_AT
        return
    if entry.get("jax") is None or method not in entry.get("jax_methods", ()):
        ref.keep, ref.detail = KEEP_NO_METHOD, method
        return
    call = parents.get(attribute)
    if isinstance(call, cst.Call) and call.func is attribute:
        for arg in call.args:
            if arg.star == "**":
                ref.keep, ref.detail = KEEP_UNSUPPORTED_ARGUMENT, f"`**{_code(arg.value)}`"
                return
            if arg.keyword is not None and arg.keyword.value == "out" and not _is_none(arg.value):
                ref.keep, ref.detail = KEEP_OUT, _code(arg.value)
                return
        # Array operands of the method: reduce(a), accumulate(a), outer(a, b), reduceat(a, idx).
        operands = 1 if method in ("reduce", "accumulate") else 2
        positional = [a for a in call.args if a.keyword is None and not a.star]
        ref.arguments = [Argument(a, "array") for a in positional[:operands]]


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _is_static(node: cst.BaseExpression) -> bool:
    """A host-side value: literals, names, `.shape`/`.ndim`/`.size`, len(), and arithmetic of them."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Name)):
        return True
    if isinstance(node, cst.Attribute):
        return node.attr.value in STATIC_ATTRIBUTES
    if isinstance(node, cst.Subscript):
        return _is_static(node.value)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(_is_static(e.value) for e in node.elements)
    if isinstance(node, cst.BinaryOperation):
        return _is_static(node.left) and _is_static(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _is_static(node.expression)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        return node.func.value in ("len", "int") and all(_is_static(a.value) for a in node.args)
    return False


def _feeds_shape(call: cst.Call, parents: dict, collector: "_Collector") -> bool:
    """Whether the value of `call` is used as (part of) a shape: reshape/range/int arguments,
    or the shape argument of a NumPy call."""
    node: cst.CSTNode = call
    parent = parents.get(node)
    while isinstance(parent, (cst.Element, cst.Tuple, cst.List, cst.BinaryOperation,
                              cst.UnaryOperation)):
        node, parent = parent, parents.get(parent)
    if not isinstance(parent, cst.Arg):
        return False
    outer = parents.get(parent)
    if not isinstance(outer, cst.Call):
        return False
    outer_ref = collector.ref_by_call.get(outer)
    # np.reshape(a, shape) or an already converted jnp.zeros(shape): the table knows the roles.
    qualname = outer_ref.qualname if outer_ref is not None else collector.jax_calls.get(outer)
    if qualname is not None:
        entry = api_table().get(qualname)
        if entry is None:
            return False
        return any(argument.arg is parent and argument.role == "shape"
                   for argument in _bind_arguments(outer, entry, qualname))
    func = outer.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("reshape", "resize"):
        return True
    return isinstance(func, cst.Name) and func.value in ("range", "int")


# --- the one pass -------------------------------------------------------------------------


class _Collector(_Walker):
    def __init__(self, scopes, context: ModuleContext = ModuleContext()) -> None:
        super().__init__()
        self.scopes = scopes  # libcst's ScopeProvider
        self._import_roots = getattr(scopes, "import_roots", None)
        self._qualified_names: dict[cst.CSTNode, set] = {}
        self.context = context
        self.tree_refs: list[tuple[cst.CSTNode, str]] = []  # references to other modules' mutators
        policy = api_policy()
        self._in_place_methods = frozenset(policy["in_place_methods"])
        self._in_place_attributes = frozenset(policy["in_place_attributes"])
        self._wide_dtype_names = frozenset(policy["wide_dtypes"])
        self._wide_dtype_strings = frozenset(policy["wide_dtype_strings"])
        self.refs: list[ApiRef] = []
        self.ref_by_call: dict[cst.Call, ApiRef] = {}
        self.ref_by_node: dict[cst.CSTNode, ApiRef] = {}
        self.subscript_stores: list[tuple[cst.CSTNode, cst.Subscript, str | None]] = []
        self.aug_assigns: list[cst.AugAssign] = []
        self.method_writes: list[tuple[cst.CSTNode, cst.BaseExpression, str]] = []
        self.out_method_calls: list[tuple[cst.CSTNode, cst.BaseExpression, str]] = []
        self.wide_dtypes: list[DtypeUse] = []
        self.tiny_literals: list[cst.Float] = []
        self.round_methods: list[cst.Call] = []  # x.round(2): decimals on a possible array
        self.list_indices: list[cst.List] = []
        self.operations: list[tuple[cst.CSTNode, cst.BaseExpression, cst.BaseExpression]] = []
        self.wide_literals: list[cst.Integer] = []
        self.dtype_comparisons: list[cst.Comparison] = []
        self.star_imports: list[cst.ImportFrom] = []
        self.shuffle_calls: list[cst.Call] = []
        self.jax_calls: dict[cst.Call, str] = {}  # jnp.zeros(...) -> "numpy.zeros"
        self.attribute_loads: dict[str, list[cst.Attribute]] = defaultdict(list)
        self.exported_names: set[str] = set()  # from __all__
        # scopes calling exec, globals(), setattr...: names there can change unseen
        self.dynamic_scopes: dict = {}
        # values combined into a name by `x op= v`: they can change what kind of value x holds
        self.aug_values: dict[tuple, list] = defaultdict(list)
        self.self_attr_aug_values: dict[tuple, list] = defaultdict(list)
        self._method_out_positions = policy["method_out_positions"]
        self._accept_out_none = frozenset(policy["methods"]["accept_out_none"])
        # name bindings per scope: (scope, name) -> [(value or marker, statement)]
        self.bindings: dict[tuple, list] = defaultdict(list)
        self.self_attr_bindings: dict[tuple, list] = defaultdict(list)
        self.bound_names: set[str] = set()
        self.jax_numpy_aliases: set[str] = set()
        self.imports_numpy = False

    # imports: names bound by them are not references
    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            bound = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
            self.bound_names.add(bound)
            self.imports_numpy |= alias.evaluated_name.split(".")[0] in MODULE_ROOTS
            if alias.evaluated_name == "jax.numpy" and alias.evaluated_alias:
                self.jax_numpy_aliases.add(alias.evaluated_alias)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.module is not None and not node.relative:
            from_numpy = _code(node.module).split(".")[0] in MODULE_ROOTS
            self.imports_numpy |= from_numpy
            if from_numpy and isinstance(node.names, cst.ImportStar):
                self.star_imports.append(node)
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                self.bound_names.add(alias.evaluated_alias or alias.evaluated_name)
        return False

    # references
    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._reference(node)
        self.attribute_loads[node.attr.value].append(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def _names_of(self, node: cst.CSTNode) -> set:
        """What QualifiedNameProvider says of `node`, asked of its scope only when needed."""
        names = self._qualified_names.get(node)
        if names is None:
            root = node
            while type(root) is cst.Attribute:
                root = root.value
            if self._import_roots is not None and type(root) is cst.Name \
                    and root.value not in self._import_roots:
                names = set()  # no import binds it (see ScopeMap)
            else:
                scope = self.scopes.get(node)
                names = scope.get_qualified_names_for(node) if scope else set()
            self._qualified_names[node] = names
        return names

    def _reference(self, node: cst.BaseExpression) -> None:
        parent = self.parents.get(node)
        if isinstance(parent, cst.Attribute) and (parent.value is node or parent.attr is node):
            return  # only the outermost node of a dotted chain
        chain = _dotted_chain(node)
        if chain is None:
            return
        names = self._names_of(node)
        if not names or self._in_annotation(node):
            return  # (without a name it is neither NumPy nor another module's function)
        if self.context.external_mutators:
            self._tree_reference(node, names)
        qualname = _numpy_qualname(names)
        if qualname is None:
            return
        target, target_parent = node, parent
        if qualname:
            known = _longest_known(qualname)
            drop = qualname.count(".") - known.count(".")
            if drop < len(chain):  # `from numpy import unknown_name` has no shorter node
                target, qualname = chain[drop], known
                if drop:  # the walk has not reached it yet: its parent is the chain's
                    target_parent = chain[drop - 1]
        if isinstance(target_parent, cst.Param):
            return
        ref = ApiRef(target, qualname, api_table().get(qualname))
        if isinstance(target_parent, cst.Call) and target_parent.func is target:
            ref.call = target_parent
            self.ref_by_call[target_parent] = ref
        self.refs.append(ref)
        self.ref_by_node[target] = ref
        if qualname in self._wide_dtype_names:
            self.wide_dtypes.append(DtypeUse(target, _code(target)))

    def _tree_reference(self, node, names) -> None:
        """A reference to a function of another module of the tree that is rewritten to
        return its argument: its calls here must assign the result."""
        if len(names) != 1:
            return
        (name,) = names
        if name.source is not QualifiedNameSource.IMPORT:
            return
        qualname = resolve(name.name, self.context.name, self.context.is_package)
        if self.context.mutator_parameter(qualname) is not None:
            self.tree_refs.append((node, qualname))

    def _in_annotation(self, node) -> bool:
        """Annotations compute nothing: `x: np.ndarray` and `npt.NDArray[np.float64]` stay."""
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            if isinstance(parent, cst.Annotation):
                return True
            parent = self.parents.get(parent)
        return False

    # bindings, for value kinds and aliasing
    def _scope(self, node):
        return self.scopes.get(node)

    def _bind_target(self, target: cst.BaseExpression, value, statement) -> None:
        if isinstance(target, cst.Name):
            self.bound_names.add(target.value)
            self.bindings[(self._scope(target), target.value)].append((value, statement))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind_target(element.value, UNKNOWN, statement)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, CONTAINER, statement)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                and target.value.value == "self":
            self.self_attr_bindings[(self._class_of(target), target.attr.value)].append(
                (value, statement))

    def _class_of(self, node):
        """The class around `node`, a target inside the node the walk is at (whose own
        parents are not recorded yet): the innermost class on the walk's path."""
        return next((n for n in reversed(self._path) if isinstance(n, cst.ClassDef)), None)

    def visit_Assign(self, node: cst.Assign) -> None:
        shared = len(node.targets) > 1  # a = b = np.zeros(3): two names, one array
        if any(isinstance(t.target, cst.Name) and t.target.value == "__all__" for t in node.targets) \
                and isinstance(node.value, (cst.List, cst.Tuple)):
            self.exported_names.update(e.value.evaluated_value for e in node.value.elements
                                       if isinstance(e.value, cst.SimpleString))
        for target in node.targets:
            self._bind_target(target.target, UNKNOWN if shared else node.value, node)
            self._store(target.target, node, None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, node.value, node)
            self._store(node.target, node, None)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        target = node.target
        self._operation(node, target, node.value)
        if isinstance(target, cst.Subscript):
            self.subscript_stores.append((node, target, _code(node.operator).strip()))
            self.aug_assigns.append(node)  # a container item may be an array seen elsewhere
        elif isinstance(target, cst.Name):
            self.aug_assigns.append(node)
            self.aug_values[(self._scope(target), target.value)].append(node.value)
        elif isinstance(target, cst.Attribute):
            self.aug_assigns.append(node)
            if isinstance(target.value, cst.Name) and target.value.value == "self":
                self.self_attr_aug_values[(self._class_of(target), target.attr.value)].append(
                    node.value)

    def _store(self, target: cst.BaseExpression, statement, operator) -> None:
        if isinstance(target, cst.Subscript):
            self.subscript_stores.append((statement, target, operator))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._store(element.value, statement, operator)
        elif isinstance(target, cst.Attribute) and target.attr.value in self._in_place_attributes \
                and not (isinstance(target.value, cst.Name) and target.value.value == "self"):
            # self.shape = ...: a class's own attribute, not an ndarray's
            self.method_writes.append((statement, target.value, target.attr.value))

    def visit_For(self, node: cst.For) -> None:
        over_range = isinstance(node.iter, cst.Call) and isinstance(node.iter.func, cst.Name) \
            and node.iter.func.value == "range"
        self._bind_target(node.target, SCALAR if over_range else UNKNOWN, node)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, UNKNOWN, node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, node.value, node)

    def visit_Param(self, node: cst.Param) -> None:
        self.bound_names.add(node.name.value)
        self.bindings[(self._scope(node.name), node.name.value)].append(("param", node))

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self.bindings[(self._scope(item.name), item.name.value)].append(("global", node))

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self.bindings[(self._scope(item.name), item.name.value)].append(("global", node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bound_names.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bound_names.add(node.name.value)

    # in-place methods and out= on methods
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value in DYNAMIC_CALLS:
            self.dynamic_scopes.setdefault(self._scope(func), set()).add(func.value)
        for name in self._names_of(func):
            if name.source is QualifiedNameSource.IMPORT and name.name.startswith("jax.numpy."):
                self.jax_calls[node] = "numpy." + name.name[len("jax.numpy."):]
        callee = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        if callee in ("finfo", "iinfo", "dtype") and node.args:
            self._dtype_argument(node.args[0].value)  # np.finfo(float): float64's limits
        if not isinstance(func, cst.Attribute):
            return
        if func.attr.value == "shuffle" and not self._is_api(func.value):
            self.shuffle_calls.append(node)
        method = func.attr.value
        # NumPy's in-place methods return None: a call whose result is used is something else
        # (str.partition, jnp's functional sort...).
        used = not isinstance(self.parents.get(node), cst.Expr)
        # str.partition returns a tuple: a partition whose result is used is not NumPy's.
        if method in self._in_place_methods and not (used and method == "partition") \
                and not self._is_api(func.value):
            self.method_writes.append((node, func.value, method))
        if not self._is_api_call(node) and self._passes_out(node, method):
            self.out_method_calls.append((node, func.value, method))
        if method == "round" and node.args and not self._is_api(func.value):
            self.round_methods.append(node)
        if method == "astype" and node.args:
            self._dtype_argument(node.args[0].value)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "dtype":
                self._dtype_argument(arg.value)

    def _passes_out(self, node: cst.Call, method: str) -> bool:
        """x.clip(0, 1, out=x) or x.clip(0, 1, x). JAX's methods take no out, not even None."""
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "out":
                return not (_is_none(arg.value) and method in self._accept_out_none)
        position = self._method_out_positions.get(method)
        positional = [a for a in node.args if a.keyword is None and not a.star]
        return position is not None and len(positional) > position

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """x[[0, 2]]: JAX refuses a list as an index. Stores are reported by NJ201/NJ202."""
        parent = self.parents.get(node)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.Del)) or \
                (isinstance(parent, cst.AnnAssign) and parent.target is node):
            return
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.List):
                self.list_indices.append(index.value)

    def _is_api(self, node) -> bool:
        return _numpy_qualname(self._names_of(node)) is not None

    def _is_api_call(self, node: cst.Call) -> bool:
        return any(self._is_api(n) for n in _dotted_chain(node.func) or ())

    def _dtype_argument(self, value: cst.BaseExpression) -> None:
        if isinstance(value, cst.Name) and value.value in ("float", "complex", "int") \
                and not self._is_api(value):
            self.wide_dtypes.append(DtypeUse(value, value.value))
        elif isinstance(value, cst.SimpleString) and value.evaluated_value in self._wide_dtype_strings:
            self.wide_dtypes.append(DtypeUse(value, value.value))

    def visit_Integer(self, node: cst.Integer) -> None:
        try:
            number = int(node.value.replace("_", ""), 0)
        except ValueError:
            return
        if number >= 2**31:
            self.wide_literals.append(node)

    def _operation(self, node, left, right) -> None:
        if isinstance(left, _OPERAND_NODES) or isinstance(right, _OPERAND_NODES):
            self.operations.append((node, left, right))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        """2**40, 1 << 40, 100000 * 100000: constants beyond int32."""
        self._operation(node, node.left, node.right)
        if isinstance(node.left, cst.Integer) and isinstance(node.right, cst.Integer) and \
                isinstance(node.operator, (cst.Power, cst.LeftShift, cst.Multiply)):
            left, right = (int(n.value.replace("_", ""), 0) for n in (node.left, node.right))
            if isinstance(node.operator, (cst.Power, cst.LeftShift)) and right > 64:
                return  # not folded; huge either way
            value = {cst.Power: lambda: left ** right, cst.LeftShift: lambda: left << right,
                     cst.Multiply: lambda: left * right}[type(node.operator)]()
            if abs(value) >= 2**31:
                self.wide_literals.append(node)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, ELEMENTWISE_COMPARISONS):
            self._operation(node, node.left, node.comparisons[0].comparator)
        if any(isinstance(side, cst.Attribute) and side.attr.value == "dtype" for side in sides):
            self.dtype_comparisons.append(node)

    def visit_Float(self, node: cst.Float) -> None:
        try:
            number = float(node.value.replace("_", ""))
        except ValueError:
            return
        if 0.0 < abs(number) < 1e-7:
            self.tiny_literals.append(node)


def _choose_jnp_alias(collector: _Collector) -> str:
    if len(collector.jax_numpy_aliases) == 1:
        return next(iter(collector.jax_numpy_aliases))
    alias = JNP_DEFAULT_ALIAS
    while alias in collector.bound_names:
        alias += "_"
    return alias
