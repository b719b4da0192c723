"""Analysis: one pass over a parsed module that gathers the facts the rules report on.

- every reference to NumPy/SciPy (resolved by libcst's QualifiedNameProvider, so aliases,
  `from ... import`, local imports, shadowing and parameters named `np` are handled), each
  with a plan: convert to its JAX counterpart, or keep on NumPy and why;
- the role of each argument of those calls (array, shape, sequence of arrays, out, ...);
- in-place writes (subscript stores, augmented assignments, in-place methods and attributes);
- what each local name may hold (container, scalar, array, unknown) and whether an array
  may be seen through another name (aliases, views, escapes).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import (
    CodeRange,
    GlobalScope,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    QualifiedNameSource,
    ScopeProvider,
)

from np2jax.catalog import api_policy, api_table
from np2jax.tree import ModuleContext, resolve

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
    positions: dict
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
    jnp_alias: str
    uses_numpy: bool
    dataflow: "_Dataflow"
    mutators: list[MutatorFunction]
    # calls of other modules' functions rewritten to return their argument (NJ209)
    external_calls: list  # (call, argument name, qualified name) to assign back
    external_refusals: list  # (node, qualified name, reason)
    tree_references: dict  # qualified name -> how many references this file makes
    context: ModuleContext

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        """1-based line and column of a node."""
        code_range: CodeRange = self.positions[node]
        return code_range.start.line, code_range.start.column + 1


def analyze(module: cst.Module, context: ModuleContext = ModuleContext()) -> ModuleAnalysis:
    """`context`: what the other files of the converted tree mean for this one (np2jax.tree)."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    collector = _Collector(context)
    wrapper.visit(collector)
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    scopes = wrapper.resolve(ScopeProvider)
    dataflow = _Dataflow(collector, parents, positions, scopes)
    for ref in collector.refs:
        _plan(ref, parents, collector)
    mutators = dataflow.mutator_functions(wrapper.module, context)
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


class _Collector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ParentNodeProvider, ScopeProvider)

    def __init__(self, context: ModuleContext = ModuleContext()) -> None:
        super().__init__()
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

    def _reference(self, node: cst.BaseExpression) -> None:
        parent = self.get_metadata(ParentNodeProvider, node, None)
        if isinstance(parent, cst.Attribute) and (parent.value is node or parent.attr is node):
            return  # only the outermost node of a dotted chain
        chain = _dotted_chain(node)
        if chain is None or self._in_annotation(node):
            return
        names = self.get_metadata(QualifiedNameProvider, node, set())
        if self.context.external_mutators:
            self._tree_reference(node, names)
        qualname = _numpy_qualname(names)
        if qualname is None:
            return
        target = node
        if qualname:
            known = _longest_known(qualname)
            drop = qualname.count(".") - known.count(".")
            if drop < len(chain):  # `from numpy import unknown_name` has no shorter node
                target, qualname = chain[drop], known
        if isinstance(self.get_metadata(ParentNodeProvider, target, None), (cst.Param,)):
            return
        target_parent = self.get_metadata(ParentNodeProvider, target, None)
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
        parent = self.get_metadata(ParentNodeProvider, node, None)
        while parent is not None and not isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            if isinstance(parent, cst.Annotation):
                return True
            parent = self.get_metadata(ParentNodeProvider, parent, None)
        return False

    # bindings, for value kinds and aliasing
    def _scope(self, node):
        return self.get_metadata(ScopeProvider, node, None)

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
        parent = self.get_metadata(ParentNodeProvider, node, None)
        while parent is not None and not isinstance(parent, cst.ClassDef):
            parent = self.get_metadata(ParentNodeProvider, parent, None)
        return parent

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
        for name in self.get_metadata(QualifiedNameProvider, func, set()):
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
        used = not isinstance(self.get_metadata(ParentNodeProvider, node, None), cst.Expr)
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
        parent = self.get_metadata(ParentNodeProvider, node, None)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.Del)) or \
                (isinstance(parent, cst.AnnAssign) and parent.target is node):
            return
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.List):
                self.list_indices.append(index.value)

    def _is_api(self, node) -> bool:
        return _numpy_qualname(self.get_metadata(QualifiedNameProvider, node, set())) is not None

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

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        """2**40, 1 << 40, 100000 * 100000: constants beyond int32."""
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


# --- value kinds and aliasing ---------------------------------------------------------------


class _Dataflow:
    """What a name may hold, and whether writes through it may be seen elsewhere."""

    def __init__(self, collector: _Collector, parents, positions, scopes) -> None:
        self.collector = collector
        self.parents = parents
        self.positions = positions
        self.scopes = scopes
        policy = api_policy()
        self.view_functions = frozenset(policy["view_functions"])
        self.fresh_params: dict = {}  # Param -> FunctionDef rewritten to return it
        self.fresh_methods = frozenset(policy["fresh_methods"])

    # kinds
    def value_kind(self, value) -> str:
        if isinstance(value, str):  # markers: "param", "global", UNKNOWN, CONTAINER, SCALAR
            return value if value in (CONTAINER, UNKNOWN, SCALAR) else UNKNOWN
        if isinstance(value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp,
                              cst.SetComp, cst.SimpleString, cst.ConcatenatedString,
                              cst.FormattedString, cst.Tuple)):
            return CONTAINER
        if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary)):
            return SCALAR
        if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, (cst.Integer, cst.Float)):
            return SCALAR
        if isinstance(value, cst.BinaryOperation) and (
                isinstance(value.left, (cst.List, cst.Tuple)) or isinstance(value.right, (cst.List, cst.Tuple))):
            return CONTAINER  # [0] * n, [a] + rest
        if isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Name) and func.value in CONTAINER_CALLS:
                return CONTAINER
            if isinstance(func, cst.Name) and func.value in SCALAR_CALLS:
                return SCALAR
            if isinstance(func, cst.Attribute) and func.attr.value in CONTAINER_METHODS:
                return CONTAINER
            if value in self.collector.ref_by_call:
                return ARRAY
        return UNKNOWN

    def holds_only_scalars(self, value) -> bool:
        """A container literal of numbers and strings, `[0] * n`, or defaultdict(int)."""
        def scalar(node) -> bool:
            return isinstance(node, _LITERALS) or (
                isinstance(node, cst.UnaryOperation) and isinstance(node.expression, _LITERALS)) \
                or (isinstance(node, cst.Name) and node.value in ("True", "False", "None"))
        if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            return all(scalar(e.value) for e in value.elements)
        if isinstance(value, cst.Dict):
            return all(isinstance(e, cst.DictElement) and scalar(e.value) for e in value.elements)
        if isinstance(value, cst.BinaryOperation):
            return all(self.holds_only_scalars(side) for side in (value.left, value.right)
                       if isinstance(side, (cst.List, cst.Tuple)))
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            if value.func.value in ("list", "tuple", "set") and len(value.args) == 1:
                return self.holds_only_scalars(value.args[0].value)
            if value.func.value in ("defaultdict", "Counter"):
                return all(isinstance(a.value, cst.Name) and a.value.value in ("int", "float")
                           for a in value.args[:1])
        return False

    def _name_values(self, expr: cst.Name):
        """Bindings and `op=` values of a name, looked up from its scope outwards as Python does."""
        scope = self.scopes.get(expr)
        seen = set()
        while scope is not None and id(scope) not in seen:
            seen.add(id(scope))
            key = (scope, expr.value)
            if key in self.collector.bindings:
                return self.collector.bindings[key], self.collector.aug_values.get(key, [])
            scope = getattr(scope, "parent", None)
        return [], []

    def _values(self, expr):
        if isinstance(expr, cst.Name):
            return self._name_values(expr)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
                and expr.value.value == "self":
            key = (self.collector_class_of(expr), expr.attr.value)
            return (self.collector.self_attr_bindings.get(key, []),
                    self.collector.self_attr_aug_values.get(key, []))
        return None, None

    def kind_of(self, expr: cst.BaseExpression, statement=None) -> str:
        if isinstance(expr, cst.Call):
            return self.value_kind(expr)
        values, aug_values = self._values(expr)
        if not values:
            return UNKNOWN
        kinds = {self.value_kind(v) for v, _ in values}
        if kinds == {SCALAR}:  # `total = 0; total += g` makes total an array when g is one
            kinds |= {self.value_kind(v) for v in aug_values}
        return kinds.pop() if len(kinds) == 1 else UNKNOWN

    def sequence_arguments(self, refs) -> set:
        """Names passed where JAX wants an array that hold Python lists or tuples (every
        binding is a list/tuple literal, a comprehension, or list()/tuple())."""
        found = set()
        for ref in refs:
            for argument in ref.arguments if ref.converted else ():
                value = argument.arg.value
                if argument.role != "array" or not isinstance(value, cst.Name):
                    continue
                values, _ = self._name_values(value)
                if values and all(_is_sequence_value(v) for v, _ in values):
                    found.add(value)
        return found

    def generator_shuffles(self, calls) -> list:
        """rng.shuffle(x) with rng from np.random: shuffles x in place."""
        shuffles = []
        for call in calls:
            receiver = call.func.value
            values, _ = self._values(receiver) if isinstance(receiver, cst.Name) else (None, None)
            if any(isinstance(v, cst.Call) and (ref := self.collector.ref_by_call.get(v)) is not None
                   and ref.qualname.startswith("numpy.random") for v, _ in values or ()):
                shuffles.append(call)
        return shuffles

    # functions that change an argument in place
    def mutator_functions(self, module: cst.Module, context: ModuleContext) -> list:
        found = []
        for statement in module.body:
            if isinstance(statement, cst.FunctionDef):
                fact = self._mutator(statement, module, context)
                if fact is not None:
                    found.append(fact)
                    if fact.refused is None:
                        self.fresh_params[fact.param] = fact.node
        return found

    def _mutator(self, function: cst.FunctionDef, module, context):
        params = [p for p in function.params.params] + list(function.params.kwonly_params) \
            + list(function.params.posonly_params)
        by_name = {p.name.value: p for p in params}
        scope = self.scopes.get(function.body.body[0]) if function.body.body else None
        writes: dict[str, list] = defaultdict(list)
        other = set()
        for statement, target, _op in self.collector.subscript_stores:
            base = target.value
            while isinstance(base, cst.Subscript):
                base = base.value
            if isinstance(base, cst.Name) and base.value in by_name and self.scopes.get(base) is scope:
                writes[base.value].append(statement)
        for node in self.collector.aug_assigns:
            if isinstance(node.target, cst.Name) and node.target.value in by_name \
                    and self.scopes.get(node.target) is scope:
                writes[node.target.value].append(node)
        for node, receiver, _method in self.collector.method_writes + self.collector.out_method_calls:
            if isinstance(receiver, cst.Name) and receiver.value in by_name and self.scopes.get(receiver) is scope:
                other.add(receiver.value)
        for ref in self.collector.refs:  # out=, np.copyto(p, ...), np.add.at(p, ...)
            for arg in (ref.call.args if ref.call is not None else ()):
                value = arg.value
                if isinstance(value, cst.Name) and value.value in by_name and self.scopes.get(value) is scope \
                        and (ref.keep in (KEEP_OUT, KEEP_IN_PLACE_FUNCTION) or ref.out_arg is arg):
                    other.add(value.value)
        mutated = [name for name in writes if not all(
            isinstance(w, cst.AugAssign) and isinstance(w.target, cst.Name) and
            self.kind_of(w.target) in (SCALAR, CONTAINER) for w in writes[name])]
        if not mutated and not other:
            return None
        param = by_name[mutated[0]] if mutated else by_name[sorted(other)[0]]
        fact = MutatorFunction(function, param, writes.get(param.name.value, []), [], None)
        fact.refused = self._mutator_refusal(function, fact, mutated, other, scope, module, context)
        return fact

    def _mutator_refusal(self, function, fact, mutated, other, scope, module, context):
        name, param = function.name.value, fact.param.name.value
        if other:
            return f"`{param}` is changed by a method, an out= or an in-place function"
        if len(set(mutated)) > 1:
            return "it changes more than one argument"
        if function.decorators or function.asynchronous:
            return "it is decorated or async"
        finder = _Returns()
        function.body.visit(finder)
        if finder.value_returned or finder.yields:
            return "it already returns a value (or yields), so it cannot return the array too"
        exported = name in context.exported_mutators  # its calls elsewhere are rewritten too
        if name in context.external_names and not exported:
            return (f"`{name}` is used by another module of the tree, where not every use is "
                    "a call that can assign the result")
        if name in self.collector.exported_names or name.startswith("__"):
            return f"`{name}` is public API (listed in __all__), with callers the tool cannot see"
        if fact.param.star:
            return f"`{param}` is a star argument"
        for assignment in self.collector.bindings.get((scope, param), []):
            if assignment[0] != "param":
                return f"`{param}` is rebound inside the function"
        for access in self._nested_accesses(scope, param):
            return f"`{param}` is used by a nested function"
        return self._call_sites(function, fact, exported)

    def _nested_accesses(self, scope, name):
        for assignment in scope.assignments[name] if scope is not None and name in scope.assignments else ():
            for access in assignment.references:
                if self.scopes.get(access.node) is not scope:
                    yield access

    def _call_sites(self, function: cst.FunctionDef, fact, exported: bool = False) -> str | None:
        """Every reference to the function must be a call statement whose argument for the
        parameter is a plain name the caller alone holds (NumPy changed the caller's array
        in place, so its other holders saw the change; a rebinding would not show it them)."""
        name = function.name.value
        global_scope = self.scopes.get(function.name)
        assignments = list(global_scope.assignments[name]) if global_scope and name in global_scope.assignments else []
        if len(assignments) != 1:
            return f"`{name}` is defined more than once"
        params = list(function.params.params)
        position = params.index(fact.param) if fact.param in params else None
        for access in assignments[0].references:
            argument, reason = self.assignable_call(access.node, name, position, fact.param.name.value)
            if reason is not None:
                return reason
            fact.call_sites.append((self.parents.get(access.node), argument))
        if not fact.call_sites and not exported:
            return f"`{name}` is never called in this file, so its callers are elsewhere"
        return None

    def assignable_call(self, reference, name: str, position, param: str):
        """(argument, None) when `reference` is the function of a call statement whose
        argument for `param` is a name holding a private JAX array, else (None, reason)."""
        call = self.parents.get(reference)
        if not (isinstance(call, cst.Call) and call.func is reference):
            return None, f"`{name}` is used other than by calling it (as a callback?), so not every caller can be rewritten"
        argument = _argument_for(call, position, param)
        if argument is None:
            return None, f"a call of `{name}` passes the argument through * or ** or leaves it out"
        if self.expression_statement_line(call) is None:
            return None, f"a call of `{name}` uses its result or shares its line"
        if not isinstance(argument, cst.Name):
            return None, f"`{_code(call)}` passes `{_code(argument)}`, which cannot be assigned back"
        # A JAX array: `n += 1` on an int argument changes nothing for the caller, so
        # `x = f(x)` would be wrong there.
        reason = self.unconvertible_because(argument, call)
        if reason is not None:
            return None, f"at `{_code(call)}`: {reason}"
        return argument, None

    def external_call_sites(self, tree_refs, context: ModuleContext):
        calls, refusals = [], []
        for node, qualname in tree_refs:
            position, param = context.mutator_parameter(qualname)
            argument, reason = self.assignable_call(node, qualname, position, param)
            if reason is None:
                calls.append((self.parents.get(node), argument, qualname))
            else:
                refusals.append((node, qualname, reason))
        return calls, refusals

    # functional updates
    def unconvertible_because(self, target: cst.BaseExpression, at: cst.CSTNode,
                              need_jax: bool = True) -> str | None:
        """Why an in-place write at `at` into the array held by `target` (a name, or an
        attribute of self) cannot become `target = <new array>`; None when `target` provably
        holds a fresh JAX array that no other name can see, so rebinding it is equivalent."""
        dynamic = self._dynamic_code(target)
        if dynamic is not None:
            return f"the code calls `{dynamic}`, through which the array may be changed unseen"
        if self._catches_index_error(at):
            return ("it is inside a try that catches IndexError: NumPy raises for an index out "
                    "of bounds, JAX drops the write silently")
        if isinstance(target, cst.Attribute):
            return self._attribute_unconvertible(target, at)
        if not isinstance(target, cst.Name):
            return f"`{_code(target)}` is not a plain name"
        name, scope = target.value, self.scopes.get(target)
        values = self.collector.bindings.get((scope, name), [])
        if not values:
            return f"`{name}` is not assigned in this scope (a global or enclosing variable)"
        relevant = False
        for value, statement in values:
            if value == "param" and statement in self.fresh_params:
                relevant = True  # the function is rewritten to return it (MutatorFunction)
                continue
            if value == "param":
                return (f"`{name}` is a parameter: NumPy changes the caller's array, which a "
                        "rebinding would not")
            if value == "global":
                return f"`{name}` is global or nonlocal: other code may hold the same array"
            if not self._before_or_looping(statement, at):
                continue
            relevant = True
            if isinstance(value, str):
                return f"`{name}` is bound by a loop or an unpacking, so it may be shared"
            if not self._fresh(value):
                return f"`{name}` may share memory with `{_code(value)}`"
            if need_jax and not self.jax_typed(value):
                return f"`{name}` may not hold a JAX array (it is bound to `{_code(value)}`)"
        if not relevant:
            return f"`{name}` is not bound before this write"
        if isinstance(scope, GlobalScope):
            for _access in self._accesses_from_nested_scopes(scope, name):
                return f"`{name}` is a module global read by functions"
        escape = self._escape(scope, name, at, skip=target)
        if escape is not None:
            return f"`{name}` is also reachable through `{escape}`"
        return None

    def _catches_index_error(self, node) -> bool:
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
            if isinstance(parent, cst.Try) and any(_catches(h, "IndexError") for h in parent.handlers):
                return True
            parent = self.parents.get(parent)
        return False

    def _dynamic_code(self, target) -> str | None:
        """exec/eval/globals()/setattr... in the write's scope, or at module level (where
        they can reach every global); getattr/setattr/vars anywhere, for attribute targets."""
        dynamic = self.collector.dynamic_scopes
        if not isinstance(target, (cst.Name, cst.Attribute)):
            return None
        scope = self.scopes.get(target if isinstance(target, cst.Name) else target.value)
        local_reach = DYNAMIC_CALLS - {"getattr"}  # getattr cannot touch a local name
        for candidate in (scope, getattr(scope, "globals", None)):
            found = sorted(dynamic.get(candidate, set()) & local_reach)
            if found:
                return found[0]
        everywhere = sorted(set().union(*dynamic.values()) if dynamic else set())
        for call in everywhere:
            if call in ("exec", "eval", "globals"):
                return call
        if isinstance(target, cst.Attribute):
            for call in everywhere:
                if call in ("setattr", "getattr", "vars", "delattr"):
                    return call
        return None

    def _attribute_unconvertible(self, target: cst.Attribute, at: cst.CSTNode) -> str | None:
        if not (isinstance(target.value, cst.Name) and target.value.value == "self"):
            return f"`{_code(target)}` is an attribute of another object"
        attr = target.attr.value
        cls = self.collector_class_of(target)
        values = self.collector.self_attr_bindings.get((cls, attr), [])
        if not values:
            return f"`self.{attr}` is not assigned in this class"
        for value, _statement in values:
            if isinstance(value, str) or not self._fresh(value) or not self.jax_typed(value):
                shown = value if isinstance(value, str) else _code(value)
                return f"`self.{attr}` may not hold a fresh JAX array (it is bound to `{shown}`)"
        for use in self.collector.attribute_loads.get(attr, ()):
            inside = isinstance(use.value, cst.Name) and use.value.value == "self" \
                and self.collector_class_of(use) is cls
            if not inside:
                return f"`.{attr}` is read outside the class, where the array may be shared"
            holder = self._holder(use, returns_escape=True) if use is not target else None
            if holder is not None:
                return f"`self.{attr}` is also reachable through `{_code(holder).strip()}`"
        return None

    def jax_typed(self, value, depth: int = 0) -> bool:
        """Whether `value` is a JAX array once the module is converted."""
        if depth > 8 or isinstance(value, str):
            return False
        if isinstance(value, cst.Call):
            ref = self.collector.ref_by_call.get(value)
            if ref is not None:
                return ref.converted and (ref.entry or {}).get("kind") in ("function", "ufunc")
            func = value.func
            return isinstance(func, cst.Attribute) and self.jax_typed(func.value, depth + 1)
        if isinstance(value, cst.BinaryOperation):
            return self.jax_typed(value.left, depth + 1) or self.jax_typed(value.right, depth + 1)
        if isinstance(value, cst.UnaryOperation):
            return self.jax_typed(value.expression, depth + 1)
        if isinstance(value, (cst.Attribute, cst.Subscript)):
            return self.jax_typed(value.value, depth + 1)
        if isinstance(value, cst.Name):
            values, _ = self._name_values(value)
            return bool(values) and all(self.jax_typed(v, depth + 1) for v, _ in values)
        return False

    def expression_statement_line(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        """The line holding `node` as its only statement (`node` is the whole expression of
        an expression statement, or the statement itself)."""
        parent = self.parents.get(node)
        if isinstance(parent, cst.Expr):
            node, parent = parent, self.parents.get(parent)
        if isinstance(parent, cst.SimpleStatementLine) and len(parent.body) == 1 \
                and parent.body[0] is node:
            return parent
        return None

    def out_call_convertible(self, ref: "ApiRef") -> str | None:
        """Why `np.f(..., out=x)` cannot become `x = jnp.f(...)`, or None."""
        if self.expression_statement_line(ref.call) is None:
            return "its result is used, or it shares its line"
        target = ref.out_arg.value
        if not isinstance(target, cst.Name):
            return f"`{_code(target)}` is not a plain name"
        return self.unconvertible_because(target, ref.call)

    # indices and values of writes
    def index_kind(self, subscript: cst.Subscript) -> str:
        """"basic" (ints, slices, ..., None: no index repeats), "mask-of-base" (a boolean
        mask computed elementwise from the array itself, so of its shape), "mask" (another
        boolean mask), or "other" (fancy or unknown: may repeat)."""
        elements = subscript.slice
        if all(self._basic(e.slice) for e in elements):
            return "basic"
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            index = elements[0].slice.value
            if self.is_mask(index):
                return "mask-of-base" if self.mask_of(index, subscript.value) else "mask"
        return "other"

    def _basic(self, index) -> bool:
        if isinstance(index, cst.Slice):
            return all(part is None or self.is_scalar(part)
                       for part in (index.lower, index.upper, index.step))
        value = index.value
        return isinstance(value, cst.Ellipsis) or (isinstance(value, cst.Name) and value.value == "None") \
            or (self.is_scalar(value) and not isinstance(value, cst.Float))

    def is_scalar(self, node) -> bool:
        """A Python number: literals, names bound only to numbers, arithmetic of them."""
        if isinstance(node, (cst.Integer, cst.Float)):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            return self.is_scalar(node.expression)
        if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.MatrixMultiply):
            return self.is_scalar(node.left) and self.is_scalar(node.right)
        if isinstance(node, cst.Name):
            return node.value in ("True", "False") or self.kind_of(node) == SCALAR
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            return node.func.value in ("int", "float", "len", "bool")
        return False

    def is_mask(self, node, depth: int = 0) -> bool:
        if depth > 8:
            return False
        if isinstance(node, cst.Comparison):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
            return self.is_mask(node.expression, depth + 1)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self.is_mask(node.left, depth + 1) and self.is_mask(node.right, depth + 1)
        if isinstance(node, cst.Call):
            ref = self.collector.ref_by_call.get(node)
            masks = api_policy()["masks"]
            if ref is not None and ref.qualname in ARRAY_CONSTRUCTORS and node.args \
                    and isinstance(node.args[0].value, cst.List):  # np.array([True, False])
                return all(isinstance(e.value, cst.Name) and e.value.value in ("True", "False")
                           for e in node.args[0].value.elements)
            return ref is not None and ref.qualname in (masks["elementwise_predicates"] + masks["mask_combinators"]
                                                        + masks["reductions"]["names"])
        if isinstance(node, cst.Name):
            values, _ = self._name_values(node)
            return bool(values) and all(not isinstance(v, str) and self.is_mask(v, depth + 1)
                                        for v, _ in values)
        return False

    def mask_of(self, node, base, depth: int = 0) -> bool:
        """Whether the mask `node` is computed elementwise from `base` and numbers only, so it
        has exactly base's shape (a row mask of a 2-D array would broadcast wrongly)."""
        if depth > 8:
            return False
        if isinstance(node, cst.Comparison):
            operands = [node.left, *(c.comparator for c in node.comparisons)]
            return any(_contains_equal(o, base) for o in operands) and all(
                self.elementwise_in(o, base) for o in operands)
        if isinstance(node, cst.UnaryOperation):
            return self.mask_of(node.expression, base, depth + 1)
        if isinstance(node, cst.BinaryOperation):
            return self.mask_of(node.left, base, depth + 1) and self.mask_of(node.right, base, depth + 1)
        if isinstance(node, cst.Call):
            ref = self.collector.ref_by_call.get(node)
            masks = api_policy()["masks"]
            if ref is None or not node.args:
                return False
            if ref.qualname in masks["elementwise_predicates"]:
                return node.args[0].value.deep_equals(base)
            return ref.qualname in masks["mask_combinators"] and all(
                self.mask_of(a.value, base, depth + 1) or self.is_scalar(a.value) for a in node.args)
        if isinstance(node, cst.Name):
            values, _ = self._name_values(node)
            return len(values) == 1 and not isinstance(values[0][0], str) \
                and self.mask_of(values[0][0], base, depth + 1)
        return False

    def elementwise_in(self, node, part: cst.BaseExpression, depth: int = 0) -> bool:
        """Whether `node` computes elementwise from `part` (x[m]) and numbers: then applying
        it to the whole array and selecting with the mask gives the same values."""
        if depth > 16:
            return False
        if node.deep_equals(part) or self.is_scalar(node):
            return True
        if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.MatrixMultiply):
            return self.elementwise_in(node.left, part, depth + 1) and self.elementwise_in(node.right, part, depth + 1)
        if isinstance(node, cst.UnaryOperation):
            return self.elementwise_in(node.expression, part, depth + 1)
        if isinstance(node, cst.Call):
            ref = self.collector.ref_by_call.get(node)
            return ref is not None and ref.converted and (ref.entry or {}).get("kind") == "ufunc" \
                and not any(a.keyword is not None for a in node.args) \
                and all(self.elementwise_in(a.value, part, depth + 1) for a in node.args)
        return False

    def binding_refs(self, target: cst.BaseExpression) -> tuple:
        """The converted API references the bindings of `target` rely on to be JAX arrays:
        a functional update of `target` is only valid if those conversions happen."""
        values, _ = self._values(target)
        found = []
        for value, statement in values or ():
            if value == "param" and statement in self.fresh_params:
                found.append(self.fresh_params[statement])  # the function must return it
                continue
            if isinstance(value, str):
                continue
            for ref in self.collector.refs:
                if ref.converted and _contains(value, ref.node):
                    found.append(ref.node)
        return tuple(found)

    def collector_class_of(self, node):
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, cst.ClassDef):
            parent = self.parents.get(parent)
        return parent

    # aliasing
    def shared_because(self, node: cst.AugAssign) -> str | None:
        """Why the array updated by `node` may be visible through another name, or None
        when the analysis proves it private (then `a op= v` and `a = a op v` agree)."""
        target = node.target
        if isinstance(target, cst.Subscript):
            return self._shared_item(target)
        if isinstance(target, cst.Attribute):
            if self.kind_of(target, node) in (SCALAR, CONTAINER):
                return None
            return (f"`{_code(target)}` is an attribute: other references to the object "
                    "may hold the same array")
        name = target.value
        scope = self.scopes.get(target)
        values = self.collector.bindings.get((scope, name), [])
        if self.kind_of(target, node) in (SCALAR, CONTAINER):
            return None  # numbers are immutable; containers are not arrays
        for value, statement in values:
            if value == "param" and statement in self.fresh_params:
                continue  # its function is rewritten to return it (NJ209)
            if value == "param":
                return f"`{name}` is a parameter: NumPy would change the caller's array too"
            if value == "global":
                return f"`{name}` is global or nonlocal: other code may hold the same array"
            if not self._before_or_looping(statement, node):
                continue
            if isinstance(value, str) or not self._fresh(value):
                bound = _code(value) if not isinstance(value, str) else "a loop or unpacking"
                return f"`{name}` may share memory with `{bound}`"
        if isinstance(scope, GlobalScope):
            for child_access in self._accesses_from_nested_scopes(scope, name):
                return f"`{name}` is a module global read by functions"
        escape = self._escape(scope, name, node)
        if escape is not None:
            return f"`{name}` is also reachable through `{escape}`"
        return None

    def _shared_item(self, target: cst.Subscript) -> str | None:
        """`params["w"] -= g`: NumPy updates the array the item holds, which other names may
        see; JAX stores a new array in the item. Arrays themselves are NJ202's business."""
        if self.kind_of(target.value) != CONTAINER:
            return None
        values, _ = self._values(target.value)
        if all(not isinstance(v, str) and self.holds_only_scalars(v) for v, _ in values):
            return None
        return (f"`{_code(target.value)}` is a container whose item may be an array also "
                "referenced elsewhere (NumPy updates that array; JAX replaces the item)")

    def _accesses_from_nested_scopes(self, scope, name):
        """Reads of a module global from inside functions (libcst records those accesses
        in the function's scope, so follow the global assignments' references)."""
        for assignment in scope.assignments[name] if name in scope.assignments else ():
            for access in assignment.references:
                if self.scopes.get(access.node) is not scope:
                    yield access

    def _position(self, node):
        code_range = self.positions[node]
        return (code_range.start.line, code_range.start.column)

    def _loops_around(self, node):
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
            if isinstance(parent, (cst.For, cst.While)):
                yield parent
            parent = self.parents.get(parent)

    def _before_or_looping(self, earlier, later) -> bool:
        """Whether `earlier` may run before `later`: it comes first, or a loop holds both."""
        if self._position(earlier) < self._position(later):
            return True
        loops = set(self._loops_around(later))
        return any(loop in loops for loop in self._loops_around(earlier))

    def _fresh(self, value: cst.BaseExpression) -> bool:
        """Whether `value` is a new array that no other name refers to."""
        if isinstance(value, (cst.Attribute, cst.Subscript)) and not isinstance(value.value, cst.Name):
            return self._fresh(value.value)  # np.zeros((3, 3)).T, np.ones(9)[2:]: views of temporaries
        if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                              cst.ConcatenatedString, cst.List, cst.Dict, cst.Set,
                              cst.ListComp, cst.DictComp, cst.SetComp, cst.Tuple)):
            return True
        if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
            return True
        if isinstance(value, cst.Call):
            if _may_not_copy(value):
                return False  # astype(..., copy=False), np.array(b, copy=None): maybe b itself
            ref = self.collector.ref_by_call.get(value)
            if ref is not None:
                if ref.qualname in self.view_functions:
                    return all(self._fresh(a.value) for a in value.args[:1])
                return True
            if isinstance(value.func, cst.Attribute) and value.func.attr.value in self.fresh_methods:
                return True
            if isinstance(value.func, cst.Attribute) and ref is None:
                return self._fresh(value.func.value)  # np.arange(9).reshape(3, 3): a view of a temporary
            if isinstance(value.func, cst.Name) and value.func.value in SCALAR_CALLS | CONTAINER_CALLS:
                return True
        return False

    def _escape(self, scope, name: str, aug: cst.CSTNode, skip: cst.CSTNode | None = None) -> str | None:
        """An expression through which the array of `name` may be kept by someone else
        before `aug` runs: stored in another name or container, passed to a function that
        may keep it, yielded."""
        skip = aug.target if skip is None else skip
        if scope is None:
            return None
        accesses = set(scope.accesses[name]) if name in scope.accesses else set()
        for assignment in scope.assignments[name] if name in scope.assignments else ():
            accesses.update(assignment.references)  # uses inside nested functions too
        for access in sorted(accesses, key=lambda a: self._position(a.node)):
            use = access.node
            if use is skip or not self._before_or_looping(use, aug):
                continue
            holder = self._holder(use)
            if holder is not None:
                return _code(holder)
        return None

    def _holder(self, use: cst.Name, returns_escape: bool = False) -> cst.CSTNode | None:
        """The node that keeps a reference to `use`'s value, walking up through views.
        `returns_escape`: a returned value outlives the function (for attributes)."""
        node, parent = use, self.parents.get(use)
        while parent is not None:
            if isinstance(parent, cst.Attribute) and parent.value is node:
                call = self.parents.get(parent)
                if isinstance(call, cst.Call) and call.func is parent:  # x.method(...)
                    if parent.attr.value in self.fresh_methods and not _may_not_copy(call):
                        return None  # x.copy(), x.sum(): a new array
                    node, parent = call, self.parents.get(call)  # x.reshape(...): a view
                    continue
                node, parent = parent, self.parents.get(parent)  # x.T, x.real: views
                continue
            if isinstance(parent, cst.Subscript) and parent.value is node:
                if node is use and self._scalar_read(parent):
                    return None  # a[1] of a 1-D array: a number, not a view
                node, parent = parent, self.parents.get(parent)  # x[1:]: a view
                continue
            if isinstance(parent, (cst.Element, cst.DictElement, cst.StarredElement,
                                   cst.StarredDictElement)):
                container = self.parents.get(parent)
                if self._is_store_target(container):
                    return None  # `a[0], a[1] = ...` writes into a; it keeps nothing
                return container  # in a container literal
            if isinstance(parent, cst.Assign) and parent.value is node and all(
                    isinstance(t.target, cst.Subscript) and self._array_store(t.target)
                    for t in parent.targets):
                return None  # `a[:] = v` copies v's values into a
            if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.NamedExpr)) \
                    and parent.value is node:
                return parent
            if isinstance(parent, cst.Return) and returns_escape:
                return parent
            if isinstance(parent, (cst.Yield, cst.Lambda, cst.Param)):
                return parent  # yielded, captured, or a default argument
            if isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp)) and parent.elt is node:
                return parent
            if isinstance(parent, cst.DictComp) and node in (parent.key, parent.value):
                return parent
            if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node:
                return parent  # iterating an array yields views of its rows
            if isinstance(parent, cst.Arg):
                call = self.parents.get(parent)
                return None if self._call_keeps_nothing(call) else call
            if isinstance(parent, (cst.IfExp, cst.BooleanOperation)):
                node, parent = parent, self.parents.get(parent)  # `a or b` is one of them
                continue
            return None
        return None

    def _array_store(self, target: cst.Subscript) -> bool:
        base = target.value
        while isinstance(base, cst.Subscript):
            base = base.value
        return self.kind_of(base) == ARRAY or self.jax_typed(base)

    def _scalar_read(self, subscript: cst.Subscript) -> bool:
        return len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index) \
            and self.is_scalar(subscript.slice[0].slice.value) \
            and self.one_dimensional(subscript.value)

    def _is_store_target(self, node) -> bool:
        parent = self.parents.get(node)
        while isinstance(parent, (cst.Element, cst.Tuple, cst.List)):
            node, parent = parent, self.parents.get(parent)
        return isinstance(parent, (cst.AssignTarget, cst.For, cst.CompFor)) and \
            getattr(parent, "target", None) is node

    def one_dimensional(self, name: cst.BaseExpression) -> bool:
        """Whether every binding of `name` makes a 1-D array (so `name[i]` is a scalar copy,
        never a view): np.zeros(n), np.arange(...), np.linspace(...), np.array([numbers])."""
        values, _ = self._values(name) if isinstance(name, (cst.Name, cst.Attribute)) else (None, None)
        if not values:
            return False
        for value, _statement in values:
            ref = self.collector.ref_by_call.get(value) if isinstance(value, cst.Call) else None
            if ref is None or not value.args:
                return False
            first = value.args[0].value
            short = ref.qualname.rsplit(".", 1)[-1]
            if short in ("arange", "linspace", "geomspace", "logspace"):
                continue
            if short in ("zeros", "ones", "empty", "full") and self.is_scalar(first):
                continue
            if short in ("array", "asarray") and isinstance(first, (cst.List, cst.Tuple)) and all(
                    self.is_scalar(e.value) for e in first.elements):
                continue
            return False
        return True

    def _call_keeps_nothing(self, call: cst.Call) -> bool:
        ref = self.collector.ref_by_call.get(call)
        if ref is not None:
            return ref.qualname not in self.view_functions and not _may_not_copy(call)
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in UFUNC_METHODS:
            ufunc = self.collector.ref_by_node.get(func.value)
            if ufunc is not None and (ufunc.entry or {}).get("kind") == "ufunc":
                return True  # np.add.at(x, ...), np.add.reduce(x): a new array or None
        return isinstance(call.func, cst.Name) and call.func.value in PURE_BUILTINS


def _may_not_copy(call: cst.Call) -> bool:
    """A `copy=` argument other than True: the result may be the input itself."""
    return any(a.keyword is not None and a.keyword.value == "copy"
               and not (isinstance(a.value, cst.Name) and a.value.value == "True")
               for a in call.args)


def _is_sequence_value(value) -> bool:
    if isinstance(value, (cst.List, cst.Tuple, cst.ListComp)):
        return True
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
        and value.func.value in ("list", "tuple")


def _contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    if tree is node:
        return True
    return any(_contains(child, node) for child in tree.children)


class _Returns(cst.CSTVisitor):
    """Whether a function body returns a value or yields (not looking into nested functions)."""

    def __init__(self) -> None:
        super().__init__()
        self.value_returned = False
        self.yields = False

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and not (isinstance(node.value, cst.Name) and node.value.value == "None"):
            self.value_returned = True

    def visit_Yield(self, node: cst.Yield) -> None:
        self.yields = True

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False


def _argument_for(call: cst.Call, position: int | None, name: str):
    """The expression a call passes for a parameter (by position or keyword), or None."""
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if position is not None and position < len(positional):
        return positional[position].value
    return None


_INDEX_ERROR_BASES = {"IndexError", "LookupError", "Exception", "BaseException"}


def _catches(handler: cst.ExceptHandler, name: str) -> bool:
    """Whether an except clause catches IndexError (bare, or a base class of it)."""
    if handler.type is None:
        return True
    types = [e.value for e in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
    return any((_code(t).split(".")[-1]) in _INDEX_ERROR_BASES for t in types)


def _contains_equal(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    if isinstance(tree, cst.BaseExpression) and tree.deep_equals(node):
        return True
    return any(_contains_equal(child, node) for child in tree.children)
