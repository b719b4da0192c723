"""The one pass over a module: every fact the analysis needs that a single walk can see
(references to NumPy and SciPy, bindings, in-place writes, dtype spellings, dynamic code).
Only np2jax.analysis reads the Collector; the rules read the facts of ModuleAnalysis."""

from __future__ import annotations

import ast
import textwrap
from collections import defaultdict

import libcst as cst
from libcst.metadata import QualifiedNameSource

from np2jax.analysis.facts import (
    CONTAINER,
    DYNAMIC_CALLS,
    ELEMENTWISE_COMPARISONS,
    MODULE_ROOTS,
    OBJECT_VALUE_MODULES,
    OPERAND_NODES,
    SCALAR,
    UNKNOWN,
    ApiRef,
)
from np2jax.analysis.references import longest_known, numpy_qualname
from np2jax.catalog import api_policy, api_table
from np2jax.syntax import code_of, dotted_chain, is_none
from np2jax.syntax.walk import Walker
from np2jax.tree import ModuleContext, resolve

# NumPy's index-expression objects, whose brackets hold data, not an index
INDEX_EXPRESSIONS = frozenset({"numpy.r_", "numpy.c_", "numpy.s_", "numpy.index_exp",
                               "numpy.mgrid", "numpy.ogrid"})


class Collector(Walker):
    def __init__(self, scopes, context: ModuleContext = ModuleContext()) -> None:
        super().__init__()
        self.scopes = scopes  # libcst's ScopeProvider
        self._import_roots = getattr(scopes, "import_roots", None)
        self._qualified_names: dict[cst.CSTNode, set] = {}
        self._python_names: dict[cst.CSTNode, set] = {}  # qualified_names, builtins included
        self.context = context
        # functions kept on NumPy as written: FunctionDef -> KeptFunction (analysis.kept)
        self.kept_functions: dict = {}
        self.tree_refs: list[tuple[cst.CSTNode, str]] = []  # references to other modules' mutators
        # imported functions whose effects the analysis asked for (np2jax.analysis.effects)
        self.wanted_effects: set[str] = set()
        policy = api_policy()
        self._in_place_methods = frozenset(policy["in_place_methods"])
        self._in_place_attributes = frozenset(policy["in_place_attributes"])
        self.refs: list[ApiRef] = []
        self.ref_by_call: dict[cst.Call, ApiRef] = {}
        self.ref_by_node: dict[cst.CSTNode, ApiRef] = {}
        self.subscript_stores: list[tuple[cst.CSTNode, cst.Subscript, str | None]] = []
        self.aug_assigns: list[cst.AugAssign] = []
        self.method_writes: list[tuple[cst.CSTNode, cst.BaseExpression, str]] = []
        self.out_method_calls: list[tuple[cst.CSTNode, cst.BaseExpression, str]] = []
        self.list_indices: list[cst.List] = []
        self.operations: list[tuple[cst.CSTNode, cst.BaseExpression, cst.BaseExpression]] = []
        self.star_imports: list[cst.ImportFrom] = []
        self.shuffle_calls: list[cst.Call] = []
        self.jax_calls: dict[cst.Call, str] = {}  # jnp.zeros(...) -> "numpy.zeros"
        self.attribute_loads: dict[str, list[cst.Attribute]] = defaultdict(list)
        self.exported_names: set[str] = set()  # from __all__
        # module names read through `globals()` by code the walk cannot follow (a timeit
        # statement given as a string, `globals()["name"]`): they have unseen users
        self.dynamic_names: set[str] = set()
        self.imported_modules: set[str] = set()  # names `import m` / `import m as a` bind
        self._globals_reads: list[tuple[cst.Name, tuple]] = []  # (globals, (names, code?))
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
        # what shows that values JAX cannot hold may reach the module's NumPy calls:
        # (node, "imports `decimal.Decimal`"), in source order
        self.object_values: list[tuple[cst.CSTNode, str]] = []
        # of object_values, the calls making dates, times or masked arrays -> which of them:
        # followed to the functions holding them (analysis.foreign_arrays)
        self.foreign_calls: dict[cst.Call, str] = {}

    # imports: names bound by them are not references
    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            bound = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
            self.bound_names.add(bound)
            self.imported_modules.add(bound)
            self.imports_numpy |= alias.evaluated_name.split(".")[0] in MODULE_ROOTS
            if alias.evaluated_name == "jax.numpy" and alias.evaluated_alias:
                self.jax_numpy_aliases.add(alias.evaluated_alias)
            root = alias.evaluated_name.split(".")[0]
            if root in OBJECT_VALUE_MODULES:
                self.object_values.append((node, "imports " + OBJECT_VALUE_MODULES[root]))
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.module is not None and not node.relative:
            from_numpy = code_of(node.module).split(".")[0] in MODULE_ROOTS
            self.imports_numpy |= from_numpy
            if from_numpy and isinstance(node.names, cst.ImportStar):
                self.star_imports.append(node)
            root = code_of(node.module).split(".")[0]
            if root in OBJECT_VALUE_MODULES:
                self.object_values.append((node, "imports " + OBJECT_VALUE_MODULES[root]))
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
        chain = dotted_chain(node)
        if chain is None:
            return
        names = self._names_of(node)
        if not names or self._in_annotation(node):
            return  # (without a name it is neither NumPy nor another module's function)
        if self.context.external_mutators:
            self._tree_reference(node)
        qualname = numpy_qualname(names)
        if qualname is None:
            return
        target, target_parent, full_name = node, parent, None
        if qualname:
            known = longest_known(qualname)
            drop = qualname.count(".") - known.count(".")
            if drop < len(chain):  # `from numpy import unknown_name` has no shorter node
                if drop:
                    full_name = qualname
                target, qualname = chain[drop], known
                if drop:  # the walk has not reached it yet: its parent is the chain's
                    target_parent = chain[drop - 1]
        if isinstance(target_parent, cst.Param):
            return
        ref = ApiRef(target, qualname, api_table().get(qualname), full_name=full_name)
        if isinstance(target_parent, cst.Call) and target_parent.func is target:
            ref.call = target_parent
            self.ref_by_call[target_parent] = ref
        self.refs.append(ref)
        self.ref_by_node[target] = ref

    def _tree_reference(self, node) -> None:
        """A reference to a function of another module of the tree that is rewritten to
        return its argument: its calls here must assign the result."""
        for qualname in self.imported_names(node, sole=True):
            if self.context.mutator_parameter(qualname) is not None:
                self.tree_refs.append((node, qualname))

    def imported_names(self, node, *, sole: bool = False) -> set[str]:
        """The absolute qualified names the imports among the bindings of a name or a
        dotted name give it (`from .grid import make` -> {"pkg.grid.make"}); empty for any
        other expression.

        sole=False: every import counts, whatever else binds the name: one bound by `from
        ._fast import f as g` in a `try` and by `g = slow_f` in its `except` has one (what
        runs where the import succeeds). For a question any of them may answer yes to.
        sole=True: the name must have one binding, an import; else the empty set. For
        treating every use of the name as that function (its effects, its decorators, its
        compiled signature): at most one name, taken with `(q,) = ... or (None,)`."""
        if dotted_chain(node) is None:
            return set()
        names = self._names_of(node)
        if sole and len(names) != 1:
            return set()
        return {resolve(name.name, self.context.name, self.context.is_package)
                for name in names if name.source is QualifiedNameSource.IMPORT}

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
            # `x, c = k, 0`: each name bound to its item, where both sides spell them alike
            items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) \
                and len(value.elements) == len(target.elements) and not any(
                    isinstance(e, cst.StarredElement) for e in (*value.elements, *target.elements)) \
                else [UNKNOWN] * len(target.elements)
            for element, item in zip(target.elements, items):
                self._bind_target(element.value, item, statement)
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
        # a = b = np.zeros(3): two names, one array; i = j = 0: two numbers, which nothing shares
        shared = len(node.targets) > 1 and not _number_literal(node.value)
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
            self.subscript_stores.append((node, target, code_of(node.operator).strip()))
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
        if _makes_object_array(node):
            self.object_values.append((node, "makes an object array (`" + code_of(node) + "`)"))
            self.foreign_calls[node] = "object arrays"
        elif _makes_records(node):
            self.object_values.append((node, "makes a structured array (`" + code_of(node) + "`)"))
            self.foreign_calls[node] = "structured arrays"
        elif _makes_datetimes(node):
            self.object_values.append((node, "makes dates or times (`" + code_of(node) + "`)"))
            self.foreign_calls[node] = "dates or times"
        elif _makes_extended_precision(node):
            self.object_values.append((node, "makes extended-precision floats (`" + code_of(node) + "`)"))
            self.foreign_calls[node] = "extended-precision floats"
        elif any(n.name.startswith("numpy.ma.") for n in self._names_of(func)):
            self.object_values.append((node, "makes a masked array (`" + code_of(node) + "`)"))
            self.foreign_calls[node] = "masked arrays"
        if isinstance(func, cst.Name) and func.value in DYNAMIC_CALLS:
            read = self._globals_read(node) if func.value == "globals" else None
            if read is None:
                self.dynamic_scopes.setdefault(self._scope(func), set()).add(func.value)
            else:
                self._globals_reads.append((func, read))
        for name in self._names_of(func):
            if name.source is QualifiedNameSource.IMPORT and name.name.startswith("jax.numpy."):
                self.jax_calls[node] = "numpy." + name.name[len("jax.numpy."):]
        if not isinstance(func, cst.Attribute) or node in self.jax_calls:
            return  # jnp.clip(x, 0, 1) is a function of JAX's, not the method x.clip(0, 1, out)
        if func.attr.value == "shuffle" and not (
                isinstance(func.value, (cst.Name, cst.Attribute)) and self.is_api(func.value)):
            # a generator's (`np.random.default_rng(0).shuffle(x)` too); np.random.shuffle is a ref
            self.shuffle_calls.append(node)
        method = func.attr.value
        # NumPy's in-place methods return None: a call whose result is used is something else
        # (str.partition, jnp's functional sort...).
        used = not isinstance(self.parents.get(node), cst.Expr)
        # str.partition returns a tuple: a partition whose result is used is not NumPy's.
        if method in self._in_place_methods and not (used and method == "partition") \
                and not self.is_api(func.value):
            self.method_writes.append((node, func.value, method))
        if not self._is_api_call(node) and self._passes_out(node, method):
            self.out_method_calls.append((node, func.value, method))

    def _globals_read(self, node: cst.Call) -> set | None:
        """The module names a `globals()` call can reach when its dictionary is only read
        by name: `globals()["name"]` or `globals().get("name")` read (not stored, not
        deleted), `"name" in globals()` (nothing), or `globals=globals()` given to
        timeit.timeit/repeat/Timer whose statement and setup are string literals of code
        that binds, deletes and imports nothing and calls no exec/globals()... (the names
        that code reads). None for any other use: the dictionary may then rebind or reach
        any name (`globals()["x"] = v`, `globals().update(...)`, passed to exec/eval)."""
        if node.args:
            return None
        parent = self.parents.get(node)
        if isinstance(parent, cst.Subscript) and parent.value is node:
            holder = self.parents.get(parent)
            if isinstance(holder, (cst.AssignTarget, cst.AugAssign, cst.Del, cst.For,
                                   cst.CompFor, cst.WithItem, cst.AnnAssign)) \
                    or isinstance(holder, (cst.Element, cst.StarredElement)):
                return None  # a store, a deletion, or maybe an unpacking target
            key = _literal_key(parent.slice)
            return None if key is None else (key, False)
        if isinstance(parent, cst.Attribute) and parent.value is node \
                and parent.attr.value == "get":
            call = self.parents.get(parent)
            if isinstance(call, cst.Call) and call.func is parent and call.args \
                    and call.args[0].keyword is None and not call.args[0].star:
                name = _string_literal(call.args[0].value)
                return None if name is None else ({name}, False)
            return None
        if isinstance(parent, cst.ComparisonTarget) and parent.comparator is node \
                and isinstance(parent.operator, (cst.In, cst.NotIn)):
            return (set(), False)
        if isinstance(parent, cst.Arg) and parent.keyword is not None \
                and parent.keyword.value == "globals":
            call = self.parents.get(parent)
            if isinstance(call, cst.Call) and any(
                    n.name in _TIMEIT_CALLS for n in self._names_of(call.func)):
                names = _timeit_code_reads(call, self.imported_modules)
                return None if names is None else (names, True)
        return None

    def settle_globals_reads(self, module: cst.Module) -> None:
        """After the walk: a `globals()` whose dictionary is only read (_globals_read) is
        not dynamic code when what it reads is a function or class defined once at module
        level (calling it unseen is a use the tree cannot see, as from another module: its
        name joins dynamic_names), or any module name for timeit's code, which only reads
        and calls. `globals()["G"]` reading an array is dynamic code: the array would be
        held, and maybe written, where the analysis cannot follow."""
        defined = {s.name.value for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
        module_scope = self.scopes.get(module)
        for func, (names, from_code) in self._globals_reads:
            if not from_code and any(
                    n not in defined or self.bindings.get((module_scope, n))
                    or sum(isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value == n
                           for s in module.body) != 1
                    for n in names):
                self.dynamic_scopes.setdefault(self._scope(func), set()).add("globals")
                continue
            self.dynamic_names |= names

    def _passes_out(self, node: cst.Call, method: str) -> bool:
        """x.clip(0, 1, out=x) or x.clip(0, 1, x). JAX's methods take no out, not even None."""
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "out":
                return not (is_none(arg.value) and method in self._accept_out_none)
        position = self._method_out_positions.get(method)
        positional = [a for a in node.args if a.keyword is None and not a.star]
        return position is not None and len(positional) > position

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """x[[0, 2]]: JAX refuses a list as an index. Stores are reported by NJ201/NJ202."""
        parent = self.parents.get(node)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.Del)) or \
                (isinstance(parent, cst.AnnAssign) and parent.target is node):
            return
        # a type, not an index: `f: Callable[[], float]`, `Handler = Callable[[int], None]`
        if self._in_annotation(node) or any(
                name.startswith(("typing.", "collections.abc.", "typing_extensions."))
                for name in self.qualified_names(node.value)):
            return
        # `np.r_[[1, 2], [3]]`, `np.s_[...]`: NumPy's index-expression objects read lists as data
        if isinstance(node.value, (cst.Name, cst.Attribute)) and any(
                n.name.replace("jax.numpy.", "numpy.", 1) in INDEX_EXPRESSIONS
                for n in self._names_of(node.value)):
            return  # jnp.r_ of a conversion run before too
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.List):
                self.list_indices.append(index.value)

    def qualified_names(self, node) -> set[str]:
        """The names libcst's scopes give a name or a dotted name, builtins included:
        `Counter` after `from collections import Counter` is {"collections.Counter"}, `set`
        bound nowhere in the module {"builtins.set"}, a parameter named `set` something else.
        Empty where the module runs exec/globals()... (a name there can change unseen); not
        for getattr, which reads and binds nothing."""
        found = self._python_names.get(node)
        if found is None:
            scope = self.scopes.get(node)
            found = set() if scope is None or self.names_may_rebind else {
                name.name for name in scope.get_qualified_names_for(node)}
            self._python_names[node] = found
        return set(found)

    @property
    def names_may_rebind(self) -> bool:
        """Whether the module runs what can bind names unseen (exec, globals(), setattr...);
        getattr, which only reads, does not count (it reaches functions unseen, which
        dynamic_scopes still says)."""
        return any(calls - {"getattr"} for calls in self.dynamic_scopes.values())

    def may_name(self, node, names: frozenset) -> bool:
        """A quick test before qualified_names: whether `node` (a name or a dotted name) is
        spelled as one of `names` (its last part), or is a name an import binds (an alias)."""
        if isinstance(node, cst.Attribute):
            return node.attr.value in names
        return isinstance(node, cst.Name) and (node.value in names or self._import_roots is None
                                               or node.value in self._import_roots)

    def is_api(self, node) -> bool:
        """Whether a node names NumPy or SciPy (or may: an ambiguous name counts)."""
        return numpy_qualname(self._names_of(node)) is not None

    def api_name(self, node) -> str | None:
        """The NumPy or SciPy name a node spells through an import (`np.complex128`:
        "numpy.complex128"), also where no reference was recorded (a parameter's default);
        None for anything else, "" where ambiguous."""
        return numpy_qualname(self._names_of(node))

    def _is_api_call(self, node: cst.Call) -> bool:
        return any(self.is_api(n) for n in dotted_chain(node.func) or ())

    def _operation(self, node, left, right) -> None:
        if isinstance(left, OPERAND_NODES) or isinstance(right, OPERAND_NODES):
            self.operations.append((node, left, right))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._operation(node, node.left, node.right)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, ELEMENTWISE_COMPARISONS):
            self._operation(node, node.left, node.comparisons[0].comparator)


def _is_object_dtype(value: cst.BaseExpression) -> bool:
    """`object`, `"O"`, `"object"`, `np.object_`: NumPy's object dtype, which JAX lacks."""
    if isinstance(value, cst.Name):
        return value.value == "object"
    if isinstance(value, cst.Attribute):
        return value.attr.value == "object_"
    if isinstance(value, cst.SimpleString):
        return value.evaluated_value in ("O", "object", "|O")
    return False


def _number_literal(node: cst.BaseExpression) -> bool:
    """`0`, `-1.5`, `2j`, `True`: an immutable number."""
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)) \
        or isinstance(node, cst.Name) and node.value in ("True", "False")


def _makes_object_array(call: cst.Call) -> bool:
    """`np.array(values, dtype=object)`, `x.astype(object)`: an array of Python objects."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dtype" and _is_object_dtype(arg.value):
            return True
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "astype" \
        and bool(call.args) and call.args[0].keyword is None and _is_object_dtype(call.args[0].value)


# functions reading a table into a structured array when given field names (`names=True`)
# or left to guess the dtype per column (`dtype=None`)
_TABLE_READERS = ("genfromtxt", "loadtxt", "recfromcsv", "recfromtxt", "fromregex")


def _makes_records(call: cst.Call) -> bool:
    """A structured or record array, which JAX has no arrays of: `np.dtype([("sku", "U4"),
    ("qty", int)])`, a `dtype=[...]` or `dtype={...}` of fields, `np.rec.fromarrays(...)`,
    `np.recarray(...)`, `np.genfromtxt(f, names=True)` or `dtype=None`."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    chain = code_of(func).split(".")
    if "rec" in chain[:-1] or name == "recarray":
        return True
    fields = (cst.List, cst.Dict)
    if name == "dtype" and call.args and isinstance(call.args[0].value, fields):
        return True
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if isinstance(keywords.get("dtype"), fields):
        return True
    if name in _TABLE_READERS:
        names = keywords.get("names")
        return (names is not None and not (isinstance(names, cst.Name) and names.value in ("None", "False"))) \
            or (isinstance(keywords.get("dtype"), cst.Name) and keywords["dtype"].value == "None")
    return False


# NumPy's date and time types, which JAX has no arrays of ("M8[D]", "timedelta64[s]", np.datetime64)
_DATETIME_TYPES = ("datetime64", "timedelta64", "M8", "m8", "<M8", "<m8")


def _makes_datetimes(call: cst.Call) -> bool:
    """`np.datetime64("2024-01-28")`, `np.timedelta64(3, "D")`, a `dtype="datetime64[D]"`,
    `x.astype("M8[s]")`: dates or times, which a converted array beside them cannot meet."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    if name in ("datetime64", "timedelta64"):
        return True
    dtypes = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "dtype"]
    if name == "astype" and call.args and call.args[0].keyword is None:
        dtypes.append(call.args[0].value)
    return any(_is_datetime_dtype(d) for d in dtypes)


def _is_datetime_dtype(node: cst.BaseExpression) -> bool:
    text = _string_literal(node)
    if text is not None:
        return text.startswith(_DATETIME_TYPES)
    return isinstance(node, (cst.Attribute, cst.Name)) and code_of(node).rsplit(".", 1)[-1] in _DATETIME_TYPES


# NumPy's floats wider than float64 (np.longdouble, "g", "f16", np.clongdouble...), which
# JAX has no arrays of: its dtypes stop at 64-bit floats and 128-bit complex numbers
_EXTENDED_TYPES = frozenset({"longdouble", "longfloat", "float128", "float96", "clongdouble",
                             "clongfloat", "longcomplex", "complex256", "complex192"})
_EXTENDED_CODES = frozenset({"g", "G", "f16", "f12", "c32", "c24"})


def _makes_extended_precision(call: cst.Call) -> bool:
    """`np.longdouble(0.1)`, a `dtype="longdouble"` or `dtype=np.float128`, `x.astype("g")`:
    floats wider than float64, which JAX has no arrays of."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    if name in _EXTENDED_TYPES and call.args:
        return True
    if any(extended_type(a.value) for a in call.args):
        return True  # harmonic(n, np.longdouble): made with that dtype where it is handed
    dtypes = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "dtype"]
    if name == "astype" and call.args and call.args[0].keyword is None:
        dtypes.append(call.args[0].value)
    return any(_is_extended_dtype(d) for d in dtypes)


def extended_type(node: cst.BaseExpression) -> bool:
    """`np.longdouble`, `np.float128`...: the type of floats wider than float64."""
    return isinstance(node, (cst.Attribute, cst.Name)) and code_of(node).rsplit(".", 1)[-1] in _EXTENDED_TYPES


def _is_extended_dtype(node: cst.BaseExpression) -> bool:
    text = _string_literal(node)
    if text is not None:
        return text.lstrip("<>=|") in _EXTENDED_TYPES | _EXTENDED_CODES
    return extended_type(node)


_TIMEIT_CALLS = frozenset({"timeit.timeit", "timeit.repeat", "timeit.Timer"})


def _string_literal(node) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _literal_key(elements) -> set | None:
    """`["name"]`: {"name"}; any other index: None."""
    if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
        name = _string_literal(elements[0].slice.value)
        if name is not None:
            return {name}
    return None


def _timeit_code_reads(call: cst.Call, modules) -> set | None:
    """The names read by the statement and setup of a timeit call given as string literals
    of code that only reads (see Collector._globals_read), or None."""
    names: set = set()
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        return None
    for arg in call.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        index = positional.index(arg) if keyword is None else None
        if keyword in ("stmt", "setup") or index in (0, 1):
            code = _string_literal(arg.value)
            read = None if code is None else _reads_only(code, modules)
            if read is None:
                return None
            names |= read
    return names


def _reads_only(code: str, modules) -> set | None:
    """The names `code` reads, when it binds, deletes and imports nothing, calls none of
    DYNAMIC_CALLS, calls no method but an imported module's and passes no name to a call
    (`x.sort()`, `f(x)`, `np.copyto(x, y)` may write an array the analysis cannot see;
    `work()`, `np.ones(3)` cannot); else None."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError):
        return None
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal,
                             ast.Delete, ast.AugAssign, ast.AnnAssign, ast.Assign,
                             ast.NamedExpr, ast.FunctionDef, ast.AsyncFunctionDef,
                             ast.ClassDef, ast.Lambda)):
            return None
        if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            return None
        if isinstance(node, ast.Call):
            root = node.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if root is not node.func and not (isinstance(root, ast.Name) and root.id in modules):
                return None
            passed = [*node.args, *(k.value for k in node.keywords)]
            if any(isinstance(n, ast.Name) and n.id not in modules
                   for a in passed for n in ast.walk(a)):
                return None  # `f(x)`, `np.copyto(x, y)`: may write an array unseen
        if isinstance(node, ast.Name):
            if node.id in DYNAMIC_CALLS:
                return None
            names.add(node.id)
    return names
