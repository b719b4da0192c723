"""The analysis of one module: the facts the rules report on, behind one facade.

- every reference to NumPy/SciPy (resolved by libcst's scopes' qualified names, so aliases,
  `from ... import`, local imports, shadowing and parameters named `np` are handled), each
  with a plan: convert to its JAX counterpart, or keep on NumPy and why;
- the role of each argument of those calls (array, shape, sequence of arrays, out, ...);
- in-place writes (subscript stores, augmented assignments, in-place methods and attributes);
- what each local name may hold (container, scalar, array, unknown) and whether an array
  may be seen through another name (aliases, views, escapes).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst

from np2jax.analysis.casts import Casts
from np2jax.analysis.collect import Collector
from np2jax.analysis.foreign_arrays import foreign_array_functions
from np2jax.analysis.dtypes import Dtypes, is_integer
from np2jax.analysis.ranges import Ranges
from np2jax.analysis.mutators import Dataflow
from np2jax.analysis.facts import (
    ARRAY,
    ARRAY_CONSTRUCTORS,
    CONTAINER,
    JNP_DEFAULT_ALIAS,
    KEEP_KEPT,
    KEEP_OBJECT_VALUES,
    KEEP_UNSUPPORTED_ARGUMENT,
    KEEP_OUT,
    KEEP_STATIC,
    MODULE_ROOTS,
    ApiRef,
    AugAssignFact,
    MethodWrite,
    MutatorFunction,
    SCALAR,
    SubscriptWrite,
)
from np2jax.analysis.islands import Islands, numpy_alias, read_for_elements
from np2jax.analysis.kept import find_kept
from np2jax.analysis.islands import islands as find_islands
from np2jax.analysis.quotients import Quotients
from np2jax.analysis.randomness import RandomState, find_random_states
from np2jax.analysis.references import (
    call_site, check_data_dtypes, keep_dispatch_arguments, plan, replan_for_integer_data)
from np2jax.analysis.sequences import Sequences
from np2jax.analysis.views import Views
from np2jax.analysis.writes import WritePlan, plan_write
from np2jax.catalog import api_policy
from np2jax.syntax import all_parameters, code_of
from np2jax.syntax.fast import ScopeMap, SourcePositions, scopes_of
from np2jax.tree import ModuleContext

@dataclass
class ModuleAnalysis:
    module: cst.Module
    positions: SourcePositions
    parents: dict
    refs: list[ApiRef]
    subscript_writes: list[SubscriptWrite]
    aug_assigns: list[AugAssignFact]
    method_writes: list[MethodWrite]
    out_method_calls: list[MethodWrite]
    star_imports: list[cst.ImportFrom]
    random_shuffles: list[cst.Call]  # rng.shuffle(x): in place, on a Generator kept on NumPy
    list_indices: list[cst.List]  # x[[0, 2]]: a list literal used as an index
    # `a - b`, `a < b`, `a -= b` with a name or a subscript as one operand: (node, left, right)
    operations: list[tuple[cst.CSTNode, cst.BaseExpression, cst.BaseExpression]]
    jnp_alias: str
    uses_numpy: bool
    dataflow: Dataflow
    mutators: list[MutatorFunction]
    # calls of other modules' functions rewritten to return their argument (NJ209)
    external_calls: list  # (call, argument name, qualified name) to assign back
    external_refusals: list  # (node, qualified name, reason)
    tree_references: dict  # qualified name -> how many references this file makes
    context: ModuleContext
    # what shows that values JAX cannot hold may reach the NumPy calls (then none converts)
    object_values: list = field(default_factory=list)
    # functions kept on NumPy as written (np2jax.analysis.kept): FunctionDef -> KeptFunction
    kept_functions: dict = field(default_factory=dict)
    _write_plans: dict = field(default_factory=dict, repr=False)  # statement -> WritePlan

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        """1-based line and column of a node."""
        line, column = self.positions.start(node)
        return line, column + 1

    @property
    def bound_names(self) -> set[str]:
        """Every name the module binds anywhere (imports, assignments, parameters, defs)."""
        return self.dataflow.collector.bound_names

    def ref_of_call(self, call: cst.Call) -> ApiRef | None:
        """The NumPy/SciPy reference a call calls, if it calls one."""
        return self.dataflow.collector.ref_by_call.get(call)

    @cached_property
    def sequences(self) -> Sequences:
        """Which values may be Python lists or tuples (np2jax.analysis.sequences)."""
        return Sequences(self.dataflow, self.module)

    @cached_property
    def numpy_call_sites(self) -> dict[cst.Call, ApiRef]:
        """Every call of a NumPy/SciPy name, with the reference it calls (call_site), in
        the order of the walk: what the coverage figure counts."""
        sites: dict[cst.Call, ApiRef] = {}
        for ref in self.refs:
            call = call_site(ref, self.parents)
            if call is not None:
                sites.setdefault(call, ref)
        return sites

    @cached_property
    def kept_calls_given_jax_values(self) -> list[tuple[ApiRef, cst.Call, cst.BaseExpression]]:
        """(reference, call, argument) for each call kept on NumPy or SciPy (not converted, and
        not host-side shape work) that is handed a value the converted code computes (a
        JAX array once converted: Dataflow.jax_typed) of a dtype that is not shown to be
        an integer or boolean one: in the 32-bit mode that value comes as float32 where
        NumPy's program handed it float64, and the kept call computes with what it gets
        (`np.gradient` of float32 samples, `scipy.optimize.minimize(f, x0)` whose
        finite-difference step follows x0's dtype), or a function returning such a value
        (SciPy's finite differences of a float32 objective vanish). One per call: its first
        such argument."""
        found = []
        flow, dtype_of = self.dataflow, self.dtypes.dtype_of
        for ref in self.refs:
            # `optimize.minimize(...)` of `from scipy import optimize`: a call through a module
            # the table does not map (`np.add.at` is np.add's, which NJ207 rewrites)
            module = ref.entry is None or ref.entry.get("kind") == "module"
            call = ref.call if ref.call is not None or not module else call_site(ref, self.parents)
            if call is None or ref.converted or ref.keep == KEEP_STATIC or ref.qualname in _PRECISION_BLIND:
                continue
            for arg in call.args:
                for value in self._handed_values(arg.value):
                    dtype = dtype_of(value)
                    if dtype == "bool" or is_integer(dtype) or not flow.jax_typed(value):
                        continue
                    found.append((ref, call, arg.value))
                    break
                else:
                    continue
                break
        return found

    def _handed_values(self, argument: cst.BaseExpression) -> list:
        """What a kept call computes with when handed `argument`: the value itself, or what
        a function handed to it returns (`minimize(lambda p: jnp.sum(...), x0)`, `brentq(f,
        0, 1)`: SciPy calls it and steps by its float32 results)."""
        if isinstance(argument, cst.Lambda):
            return [argument.body]
        function = self.dataflow.function_named(argument)
        if function is not None:
            return list(self.dataflow.function_returns(function) or ())
        return [argument]

    def attribute_loads(self, attribute: str) -> list[cst.Attribute]:
        """Every `<value>.<attribute>` of the module."""
        return self.dataflow.collector.attribute_loads.get(attribute, [])

    @cached_property
    def numpy_only_attribute_reads(self) -> list[cst.Attribute]:
        """`m.strides`, `it = m.flat`, `m.base` (on an array): attributes JAX arrays lack
        (rules/api/policy.toml), read in a module using NumPy where the value may hold an
        array, and not a `.flat` read only for its elements (NJ115 reads those through a
        NumPy view) nor a write (`m.flat = ...`: NJ205)."""
        if not self.uses_numpy:
            return []
        policy = api_policy()
        on_arrays = policy.get("missing_array_attributes_on_arrays", [])
        dataflow = self.dataflow
        found = []
        for attribute in policy["missing_array_attributes"] + on_arrays:
            for node in self.attribute_loads(attribute):
                receiver = node.value
                if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
                    continue
                if attribute in on_arrays and not (
                        dataflow.kind_of(receiver) == ARRAY or dataflow.jax_typed(receiver)):
                    continue
                if attribute == "flat" and read_for_elements(self, node):
                    continue
                parent = self.parents.get(node)
                if isinstance(parent, cst.AssignTarget) or (
                        isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node):
                    continue
                if any(ref.node is receiver and ref.qualname for ref in self.refs) or \
                        dataflow.kind_of(receiver) in (CONTAINER, SCALAR):
                    continue  # np.<name>, or a value that is never an array
                found.append(node)
        return found

    @cached_property
    def kept_reads(self) -> list[tuple]:
        """(function, node) of each value a function kept on NumPy (NJ104) reads from
        outside its body, other than its parameters: a module global or a name of the
        function around it bound to a value (`G`), an attribute (`self.w`), the result of a
        call of another function of the module (`helper(x)`). The islands keep
        each NumPy along its path, as the body's NumPy code expects (`np.cumsum(self.w)` of
        a JAX array is a JAX array, which a write then refuses)."""
        kept = self.kept_functions
        if not kept:
            return []
        from np2jax.analysis.kept import inside

        dataflow = self.dataflow
        collector = dataflow.collector
        attributes = {name for _, name in collector.self_attr_bindings} | {
            t.target.attr.value for a in self.nodes(cst.Assign) for t in a.targets
            if isinstance(t.target, cst.Attribute)}
        found = []
        for function in kept:
            seen = set()
            for call in _calls(function.body):  # what a function of the module gives it
                called = dataflow.module_function(call)
                if called is not None and called not in kept:
                    found.append((function, call))
            for node in _loads(function.body, self.parents):
                if isinstance(node, cst.Name):
                    _scope, values, _ = dataflow.name_bindings(node)
                    if node.value in seen or not values or collector.is_api(node) or any(
                            isinstance(v, str) or inside(s, self.parents, kept) for v, s in values) \
                            or dataflow.kind_of(node) in (CONTAINER, SCALAR):
                        continue
                elif node.attr.value not in attributes or node.attr.value in seen \
                        or collector.is_api(node) or dataflow.kind_of(node) in (CONTAINER, SCALAR):
                    continue
                seen.add(node.value if isinstance(node, cst.Name) else node.attr.value)
                found.append((function, node))
            if _reads_attributes_by_name(function):  # `getattr(self, item)`: any of them
                owner = self.parents.get(self.parents.get(function))
                for cls, name in list(collector.self_attr_bindings):
                    if cls is owner and name not in seen:
                        seen.add(name)
                        found.append((function, cst.Attribute(cst.Name("self"), cst.Name(name))))
        return found

    @cached_property
    def external_numpy_arguments(self) -> list[tuple]:
        """(call, argument) of each call of another module's function kept on NumPy
        (keep-numpy, NJ104) passing something for a parameter its body writes, returns or
        keeps (ModuleContext.external_numpy_params), and of this module's functions compiled
        by numba passing anything (analysis.kept.numba_compiled): the islands keep it NumPy.
        A name bound by such an import in a `try` and to a Python function in its `except`
        counts: the import is what runs where numba is installed."""
        wanted = dict(self.context.external_numpy_params)
        local = {f.name.value: all_parameters(f) for f, fact in self.kept_functions.items()
                 if fact.numba and _in_module_blocks(f, self.module, self.parents)}
        if not wanted and not local:
            return []
        from np2jax.syntax import argument_for

        collector = self.dataflow.collector
        found = []
        for call in self.nodes(cst.Call):
            if not isinstance(call.func, (cst.Name, cst.Attribute)):
                continue
            params = None
            for qualname in collector.imported_names(call.func):
                params = params or wanted.get(qualname)
            if params is None and isinstance(call.func, cst.Name):
                params = local.get(call.func.value)
            for position, name in params or ():
                argument = argument_for(call, position, name)
                if argument is not None:
                    found.append((call, argument))
        return found

    @cached_property
    def subclass_views(self) -> list[cst.Call]:
        """`obj.view(cls)`, `obj.view(Matrix33)`, `obj.view(type=C)`: a view of an array as
        a class of this module (or `cls`, `type(self)`), which only a NumPy array can be
        (JAX arrays cannot be viewed as or derive from a class)."""
        classes = {c.name.value for c in self.nodes(cst.ClassDef)}
        found = []
        for call in self.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "view") \
                    or self.dataflow.collector.is_api(func.value):
                continue
            for arg in call.args:
                value = arg.value
                as_class = (isinstance(value, cst.Name) and (value.value == "cls"
                                                             or value.value in classes)) or (
                    isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
                    and value.func.value == "type")
                if (arg.keyword is None and as_class and arg is call.args[0]) or (
                        arg.keyword is not None and arg.keyword.value == "type"):
                    found.append(call)
                    break
        return found

    def nodes(self, kind: type[cst.CSTNode]) -> list:
        """Every node of one type, in the order of the walk (import statements aside)."""
        return self.dataflow.collector.nodes.get(kind, [])

    def names_numpy(self, node: cst.CSTNode) -> bool:
        """Whether a name or a dotted name refers to NumPy or SciPy (or may)."""
        return self.dataflow.collector.is_api(node)

    def under_errstate(self, node: cst.CSTNode) -> bool:
        """Whether a node runs inside `with np.errstate(...)`: the code expects NaN,
        infinities or a division by zero there (and JAX ignores errstate)."""
        while node is not None:
            if isinstance(node, cst.With) and any(
                    isinstance(item.item, cst.Call) and (ref := self.ref_of_call(item.item))
                    is not None and ref.qualname == "numpy.errstate" for item in node.items):
                return True
            node = self.parents.get(node)
        return False

    def qualified_names(self, node: cst.CSTNode, spelled: frozenset | None = None) -> set[str]:
        """What a name or a dotted name refers to, builtins included ("builtins.set",
        "collections.Counter"); empty when unknown (Collector.qualified_names). With
        `spelled`, asked only of a node spelled as one of those names (its last part) or
        bound by an import: empty for the others, which are quicker to rule out."""
        collector = self.dataflow.collector
        if spelled is not None and not collector.may_name(node, spelled):
            return set()
        return collector.qualified_names(node)

    def write_plan(self, statement: cst.CSTNode) -> WritePlan:
        """How a statement that writes through subscripts becomes functional, or why not."""
        if statement not in self._write_plans:
            self._write_plans[statement] = plan_write(self, statement)
        return self._write_plans[statement]

    @cached_property
    def views(self) -> Views:
        """Names holding views of private arrays, and how a write through one is carried."""
        return Views(self.dataflow)

    @cached_property
    def numpy_alias(self) -> tuple[str, tuple | None]:
        """The name NumPy is imported as, and the import to add when it is not imported."""
        return numpy_alias(self.module, self.bound_names)

    def islands(self, fixed: set, compiled: frozenset = frozenset()) -> Islands:
        """What must stay on NumPy for the writes left in place, given the nodes whose fixes
        apply and the functions compiled with jax.jit (np2jax.analysis.islands)."""
        return find_islands(self, fixed, self.numpy_alias[0], compiled)

    @cached_property
    def dtypes(self) -> Dtypes:
        """The NumPy dtype of values, where the code shows it (dtypes.dtype_of)."""
        return Dtypes(self.dataflow)

    @cached_property
    def ranges(self) -> Ranges:
        """The range of integer values, where the code spells them (ranges.integer_range)."""
        return Ranges(self.dataflow)

    @cached_property
    def casts(self) -> Casts:
        """Casts of float values to integers: whether they may leave the range, and when
        JAX can compute NumPy's result (casts.Casts)."""
        return Casts(self.dataflow, self.dtypes, self.under_errstate)

    @cached_property
    def quotients(self) -> Quotients:
        """Where values are rounded to integers, and the divisions they come from
        (quotients.Quotients)."""
        return Quotients(self.dataflow, self.dtypes)

    @cached_property
    def random_states(self) -> list[RandomState]:
        """The module's NumPy random states, each with its draws and why it is refused."""
        return find_random_states(self)

    def __post_init__(self) -> None:
        # the values analysis sits below randomness: it asks for the draws that become
        # jax.random (JAX arrays) through this, when first it needs them
        self._draws: frozenset | None = None
        self._finding_draws = False
        self.dataflow.draws_on_jax = self._draws_on_jax

    def _draws_on_jax(self) -> frozenset:
        if self._draws is None:
            if self._finding_draws:  # asked while the states are being found: not yet known
                return frozenset()
            self._finding_draws = True
            try:
                self._draws = frozenset(
                    draw.call for state in self.random_states if state.refused is None
                    for draw in state.all_draws if not draw.shuffle)
            finally:
                self._finding_draws = False
        return self._draws


def analyze(module: cst.Module, context: ModuleContext = ModuleContext(), keep: tuple = (),
            text: str | None = None, automatic: dict | None = None) -> ModuleAnalysis:
    """`context`: what the other files of the converted tree mean for this one (np2jax.tree).
    `keep`: the functions the configuration keeps on NumPy ((entry, qualname, reason) each,
    Config.kept_in); `text`: the source, read for `# np2jax: keep-numpy` pragmas;
    `automatic`: FunctionDef -> (qualname, reason) of the functions kept because a finding
    says their body needs NumPy arrays (np2jax.pipeline, a rule's `keeps-function`).

    Of libcst's metadata only the scopes are resolved: parents are recorded by the
    collector's own walk, qualified names asked of the scopes for just the nodes that need
    them, and positions computed on first use (each of libcst's providers is a walk of the
    whole tree, and together they cost several times the parse)."""
    scopes = _scopes(module)
    collector = Collector(scopes, context)
    collector.walk(module)
    collector.settle_globals_reads(module)
    parents = collector.parents
    positions = SourcePositions(module)
    pragmas = text is not None and "keep-numpy" in text
    foreign = foreign_array_functions(collector) if collector.foreign_calls else {}
    if foreign:  # kept as written, where the arrays they hold stay (analysis.foreign_arrays)
        automatic = {**foreign, **(automatic or {})}
    given_objects = _given_objects(module, context)
    if given_objects:  # other modules of the tree pass them object or string arrays
        automatic = {**given_objects, **(automatic or {})}
    if foreign is not None:
        collector.object_values = [(node, why) for node, why in collector.object_values
                                   if node not in collector.foreign_calls]
    if keep or pragmas or automatic or (text is not None and ("numba" in text or "__array" in text)):
        collector.kept_functions = find_kept(
            module, keep, lambda node: positions.start(node)[0],
            text.splitlines() if pragmas else None, automatic)
    dataflow = Dataflow(collector, parents, positions, scopes)
    # `bag.sort()` of an instance of the module's own class is its method, not an array's
    collector.method_writes = [w for w in collector.method_writes
                               if not dataflow.module_class_instance(w[1])]
    # `lib.dot(a, b)` is another object's function, not the method `a.dot(b, out)`
    collector.out_method_calls = [w for w in collector.out_method_calls
                                  if dataflow.array_method_out(w[0], w[1])]
    for ref in collector.refs:
        plan(ref, parents, collector)
    _keep_for_data_jax_cannot_hold(collector, dataflow)
    _keep_for_data_dtypes(collector, parents, Dtypes(dataflow))
    keep_dispatch_arguments(collector.refs, collector)
    _keep_for_object_values(collector)
    _keep_in_kept_functions(collector)
    mutators = dataflow.mutator_functions(module, context)
    external_calls, external_refusals = dataflow.external_call_sites(collector.tree_refs, context)
    dataflow.settle_out_calls(collector.refs)  # needs every plan: which arrays are JAX
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
        list_indices=collector.list_indices,
        operations=collector.operations,
        star_imports=collector.star_imports,
        random_shuffles=dataflow.generator_shuffles(collector.shuffle_calls),
        jnp_alias=_choose_jnp_alias(collector),
        dataflow=dataflow,
        mutators=mutators,
        external_calls=external_calls,
        external_refusals=external_refusals,
        tree_references=dict(Counter(q for _, q in collector.tree_refs)),
        context=context,
        uses_numpy=collector.imports_numpy or bool(collector.refs),
        object_values=collector.object_values,
        kept_functions=collector.kept_functions,
    )


def _reads_attributes_by_name(function: cst.FunctionDef) -> bool:
    """Whether a method reads its object's attributes by a name it computes:
    `getattr(self, item)`, `self.__getattribute__(item)`, `self.__dict__`, `vars(self)`."""
    for node in _calls(function.body):
        func = node.func
        if isinstance(func, cst.Name) and func.value in ("getattr", "vars") and node.args \
                and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "self" \
                and not (len(node.args) > 1 and isinstance(node.args[1].value, cst.SimpleString)):
            return True
        if isinstance(func, cst.Attribute) and func.attr.value == "__getattribute__" \
                and isinstance(func.value, cst.Name) and func.value.value == "self":
            return True
    return any(isinstance(n, cst.Attribute) and n.attr.value == "__dict__"
               and isinstance(n.value, cst.Name) and n.value.value == "self"
               for n in _loads(function.body, {}))


def _calls(body):
    stack = [body]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if isinstance(node, cst.Call):
            yield node


def _loads(body, parents: dict):
    """The names and attributes a block reads as values (not a call's function, not the
    attribute part of `a.b`, not a store)."""
    stack = [body]
    while stack:
        node = stack.pop()
        for child in node.children:
            stack.append(child)
        if not isinstance(node, (cst.Name, cst.Attribute)):
            continue
        parent = parents.get(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            continue  # the `b` of `a.b`
        if isinstance(parent, cst.Call) and parent.func is node:
            continue
        if isinstance(parent, (cst.AssignTarget, cst.Param, cst.Arg, cst.FunctionDef, cst.ClassDef,
                               cst.ImportAlias, cst.AsName, cst.Global, cst.NameItem)) \
                and not (isinstance(parent, cst.Arg) and parent.value is node):
            continue
        if isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node:
            continue
        yield node


def _keep_in_kept_functions(collector: Collector) -> None:
    """Every NumPy reference inside a function kept on NumPy (np2jax.analysis.kept) that
    would convert stays NumPy (a reference kept for its own reason keeps it: an in-place
    function's write is a write left in place, which the islands follow)."""
    kept = collector.kept_functions
    if not kept:
        return
    from np2jax.analysis.kept import inside

    for ref in collector.refs:
        if ref.keep is None and inside(ref.node, collector.parents, kept):
            ref.keep = KEEP_KEPT


# kept calls whose answer does not depend on the values' precision (kinds, shapes, memory)
_PRECISION_BLIND = frozenset(f"numpy.{name}" for name in (
    "isscalar", "ndim", "shape", "size", "iscomplexobj", "isrealobj", "isfortran",
    "may_share_memory", "shares_memory", "result_type", "min_scalar_type"))


def _keep_for_data_jax_cannot_hold(collector: Collector, dataflow: Dataflow) -> None:
    """A call whose array data is a Python string the code shows (`np.array(word)`, `word` a
    parameter annotated `str` or passed strings, a name bound to `name.upper()`), holds
    None (`np.array([[None] * n]).T`, a placeholder NumPy makes an object array), or is an
    instance of a class of the module (`np.exp(d)` calls `d.exp()`): JAX has no string or
    object arrays (`jnp.array("abc")`, `jnp.array([None])` raise) and takes no objects, so
    the call stays on NumPy, with the reason (NJ102). String literals are caught when the
    call is planned."""
    for ref in collector.refs:
        if ref.keep is not None or ref.call is None:
            continue
        for argument in ref.arguments:
            value = argument.arg.value
            is_data = argument.role in ("array", "arrays") or (
                ref.qualname in ARRAY_CONSTRUCTORS and argument is ref.arguments[0])
            if is_data and not argument.arg.star and dataflow.strings.holds_string(value):
                ref.keep = KEEP_UNSUPPORTED_ARGUMENT
                ref.detail = f"`{code_of(value)}`, which holds strings (JAX has no string arrays)"
                ref.holds_objects = True
                break
            if is_data and not argument.arg.star and dataflow.strings.holds_none(value):
                ref.keep = KEEP_UNSUPPORTED_ARGUMENT
                ref.detail = (f"`{code_of(value)}`, which holds None (an object array in NumPy; "
                              "JAX has no object arrays)")
                ref.holds_objects = True
                break
            if is_data and not argument.arg.star and _instance_jax_refuses(dataflow, value):
                ref.keep = KEEP_UNSUPPORTED_ARGUMENT
                ref.detail = (f"`{code_of(value)}`, an instance of a class of this module (NumPy "
                              "calls its method of the same name or makes an object array; "
                              "JAX takes arrays and numbers)")
                ref.holds_objects = True
                break


def _given_objects(module: cst.Module, context: ModuleContext) -> dict:
    """FunctionDef -> (name, reason) of the module-level functions other modules of the
    tree pass string or object arrays (ModuleContext.given_objects): kept on NumPy, which
    takes them (`reshape_z(np.array([None] * n), ...)`: JAX has no object arrays)."""
    given = dict(context.given_objects)
    return {s: (s.name.value, f"another module passes it what JAX has no arrays of: {given[s.name.value]}")
            for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value in given}


def object_arguments(analysis: "ModuleAnalysis") -> dict:
    """Qualified name of another module's function -> the code of a string or object array
    this module passes it (a NumPy call kept for data JAX cannot hold, ApiRef.holds_objects,
    or a name bound to one): FileResult.object_arguments, from which the tree keeps the
    function on NumPy where it is defined (np2jax.engine.tree_object_arguments)."""
    collector = analysis.dataflow.collector
    made = {ref.call for ref in analysis.refs if ref.holds_objects and ref.call is not None}
    if not made:
        return {}

    def objects(value):
        if value in made:
            return value
        if isinstance(value, cst.Name):
            for bound, _ in analysis.dataflow.name_values(value)[0]:
                if bound in made:
                    return bound
        return None

    found: dict = {}
    for call in collector.nodes.get(cst.Call, []):
        if call in collector.ref_by_call:
            continue  # NumPy's or SciPy's own
        names = collector.imported_names(call.func, sole=True)
        if len(names) != 1:
            continue
        (qualname,) = names
        for arg in call.args:
            held = objects(arg.value) if not arg.star else None
            if held is not None:
                found.setdefault(qualname, f"`{code_of(held)}`")
                break
    return found


def _instance_jax_refuses(dataflow: Dataflow, value) -> bool:
    """An instance of a class of this module (`Dual(1.0, 1.0)`, `self` in its methods) that
    does not give JAX an array (`__jax_array__`)."""
    if not dataflow.module_class_instance(value):
        return False
    classes = [dataflow.module_class(v.func) for v, _ in dataflow.name_values(value)[0]
               if isinstance(v, cst.Call)]
    return not any(isinstance(s, cst.FunctionDef) and s.name.value == "__jax_array__"
                   for c in classes if c is not None for s in c.body.body)


def _keep_for_data_dtypes(collector: Collector, parents: dict, dtypes: Dtypes) -> None:
    """A call whose data has a dtype the code shows for which running both showed JAX's
    version differing stays on NumPy, with the dtype named (NJ103; references.check_data_dtypes);
    one kept for NaN or infinities its integer data cannot hold is planned again first."""
    for ref in collector.refs:
        replan_for_integer_data(ref, parents, collector, dtypes.dtype_of)
        if ref.keep is not None or ref.computed_by_numpy:
            continue
        verdict = check_data_dtypes(ref, parents, dtypes.dtype_of)
        if verdict is not None:
            ref.keep, ref.detail = verdict


def _keep_for_object_values(collector: Collector) -> None:
    """A module that shows values JAX cannot hold (it imports `decimal` or `fractions`, or
    makes an object array) may hand them to any of its NumPy calls: its callers pass
    `Decimal`s to its functions, and JAX has no object arrays ("dtype object is not a valid
    JAX array type"). Which calls they reach is not followed yet, so every reference that
    would convert stays on NumPy, with the reason (NJ102), and the module runs as before."""
    if not collector.object_values:
        return
    _, shown = collector.object_values[0]
    for ref in collector.refs:
        if ref.keep in (None, KEEP_OUT):
            ref.keep, ref.detail = KEEP_OBJECT_VALUES, shown


# --- metadata -----------------------------------------------------------------------------


def _scopes(module: cst.Module) -> ScopeMap:
    """The scopes, with `import_roots` dropped when the module binds `numpy` or `scipy`
    itself (`numpy = ...`, `def numpy()`): every name under it is then asked about."""
    scopes = scopes_of(module)
    module_scope = scopes.get(module)
    for root in MODULE_ROOTS:
        if module_scope is not None and root in module_scope.assignments and any(
                not isinstance(a.node, (cst.Import, cst.ImportFrom))
                for a in module_scope.assignments[root]):
            scopes.import_roots = None
    return scopes


def _choose_jnp_alias(collector: Collector) -> str:
    if len(collector.jax_numpy_aliases) == 1:
        return next(iter(collector.jax_numpy_aliases))
    alias = JNP_DEFAULT_ALIAS
    while alias in collector.bound_names:
        alias += "_"
    return alias


def _in_module_blocks(node, module: cst.Module, parents: dict) -> bool:
    """Whether a def lies at module level, or in module-level `if`/`try` blocks only."""
    parent = parents.get(node)
    while parent is not None and parent is not module:
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
            return False
        parent = parents.get(parent)
    return True
