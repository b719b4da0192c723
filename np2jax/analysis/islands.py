"""NumPy islands: what must stay on NumPy so that a write np2jax leaves in place still runs.

A write np2jax cannot convert (`b[0] = 1` where `b` is a view of `a`, a write into a
parameter, `np.nan_to_num(x, copy=False)`, ...) stays NumPy code, so whatever array it can
reach must be a writable NumPy array at run time. From each such write the island reaches
backwards through the value written into: the names and attributes bound to it, the views
it is taken from (`a.reshape(...)`, `a[1:]`, `a.T`), the functions returning it, and the
arguments the callers pass for a parameter it writes. Along the way:

- a NumPy call that makes a new array whatever its input (`np.zeros`, `np.array`, ...) or a
  view of an array the island keeps (`np.reshape(a, ...)`) is kept on NumPy (its rename is
  dropped);
- a fresh array made by converted code (a jnp call, arithmetic on JAX arrays, a function of
  the module returning a new array nobody else holds) is copied into a NumPy array where it
  is made: `np.array(...)` (never `np.asarray`, a read-only view of a JAX array), which
  preserves every write, since no one else holds that array;
- a copy of a value that may be a list as well as a JAX array (`x = xs.copy()` of a
  parameter whose callers np2jax cannot see, given what a converted function returns) reads
  the value with the kept functions' helper first, `_np2jax_as_numpy(xs).copy()`: a JAX
  array becomes a writable NumPy copy, a list stays a list;
- a function whose result is not such a fresh array stays NumPy along the path to what it
  returns (its returned values join the island);
- a converted write or call that would rebind a name of the island to a JAX array (`x =
  x.at[i].set(v)`, `x = jnp.sort(x)`, `x = normalize(x)`) is undone: the write stays in
  place, on NumPy, where it works.

The pipeline asks again after undoing conversions (an undone write is a refused write of
its own), until nothing changes. Each refused write's finding then says what stayed NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import libcst as cst
from libcst.metadata import GlobalScope

from np2jax.analysis.facts import (
    TEXT_NODES,
    ARRAY,
    GENERATOR_FACTORIES,
    CONTAINER,
    KEEP_IN_PLACE_FUNCTION,
    KEEP_OUT,
    KEEP_UFUNC_AT,
    SCALAR,
    UNKNOWN,
)
from np2jax.analysis.values import ReturnsFinder
from np2jax.catalog import api_policy
from np2jax.syntax import argument_for, code_of

# NumPy calls whose result is a new, writable ndarray whatever their arguments are (JAX
# arrays included): kept on NumPy where an island starts. (Not np.cumsum and the like: for
# an argument with a method of the same name, NumPy calls it, and a JAX array answers.)
NUMPY_CREATORS = frozenset({
    "numpy.array", "numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.zeros_like",
    "numpy.ones_like", "numpy.empty_like", "numpy.full_like", "numpy.copy", "numpy.arange",
    "numpy.linspace", "numpy.eye", "numpy.identity",
})
# Fresh methods that lists and dicts have too, or whose result is not an array: a value
# they give is not surely an array, so an island copies it only when it is a JAX array.
_NOT_ONLY_ARRAY_METHODS = frozenset({"copy", "tolist", "item", "nonzero"})
# Attributes of an array that are views of it.
VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "flat"})
# The rule codes of in-place writes: their findings say what stayed on NumPy.
WRITE_CODES = frozenset({"NJ201", "NJ202", "NJ203", "NJ204", "NJ205", "NJ206", "NJ207", "NJ209"})
# Builtins that only iterate what they are given: `list(m.flat)`, `sum(m.flat)`.
ITERATING_BUILTINS = frozenset({"list", "tuple", "sorted", "sum", "min", "max", "enumerate",
                                "zip", "iter", "any", "all", "set", "frozenset", "map"})
ISLAND_DROPPED = "left as it was, because the array stays on NumPy for a write np2jax leaves in place"


class ModuleFacts(Protocol):
    """What this module reads of np2jax.analysis.module.ModuleAnalysis."""

    module: cst.Module
    parents: dict
    dataflow: Any
    refs: list
    subscript_writes: list
    aug_assigns: list
    method_writes: list
    out_method_calls: list
    mutators: list
    external_calls: list
    random_states: Any
    random_shuffles: list

    def ref_of_call(self, call: cst.Call) -> Any: ...

    def attribute_loads(self, attribute: str) -> list: ...

    def nodes(self, kind: type) -> list: ...

    numpy_only_attribute_reads: list
    subclass_views: list
    kept_functions: dict
    external_numpy_arguments: list
    kept_reads: list


@dataclass
class WriteSite:
    """A place that changes an array in place, and how its conversion shows."""

    node: cst.CSTNode  # the statement or the call that writes
    target: cst.BaseExpression  # what it writes into
    fixed_by: tuple  # nodes whose applied fix converts it (any of them)
    drop: cst.CSTNode | None  # the node whose fix to drop to keep it on NumPy
    always: bool = False  # converted with no fix (`a += v` on a private array)
    keeps: tuple = ()  # NumPy references it needs kept (`np.add(a, b, out=c)`)


@dataclass
class Island:
    """What one refused write needs kept on NumPy."""

    names: list = field(default_factory=list)  # shown names and attributes
    keys: set = field(default_factory=set)  # (scope, name) and ("attr", name)
    kept: list = field(default_factory=list)  # NumPy reference nodes kept
    copies: list = field(default_factory=list)  # expressions copied with np.array
    # receivers of `.copy()` that may be a list or a JAX array: read with the helper first
    as_numpy: list = field(default_factory=list)
    functions: list = field(default_factory=list)  # functions kept on NumPy up to their result
    notes: list = field(default_factory=list)  # what the island cannot reach


@dataclass
class Islands:
    drops: set  # nodes whose fixes are dropped (NumPy kept, conversions undone)
    copies: list  # expressions to wrap in np.array(...)
    sentences: dict  # node of a refused write (statement, call, target, line) -> sentence
    # operands of `a op= v` into an island's array, read as NumPy arrays: np.asarray(v).
    # (`a -= v` with a JAX `v` is JAX's `v.__rsub__(a)`, a new JAX array: JAX arrays carry a
    # higher __array_priority__, and NumPy gives way even in place.)
    reads: list = field(default_factory=list)
    # `xs` of `x = xs.copy()` where `xs` may be a list or a JAX array (a parameter whose
    # callers np2jax cannot see, given what another converted function returns): read with
    # the kept functions' helper, `_np2jax_as_numpy(xs).copy()` (np2jax.analysis.kept), a
    # JAX array as a NumPy one, a list as a list; np.array(xs.copy()) would make a list an
    # array
    as_numpy: list = field(default_factory=list)
    # (read of an island's array handed to JAX, the conversions that make its consumer
    # JAX): a converted call's argument, an operand beside a JAX value, copied there,
    # `np.array(c)`, since JAX reads NumPy memory when its computation runs, after the
    # writes left in place that follow (_handed_to_jax)
    handed: list = field(default_factory=list)


def _method_out(call: cst.Call, method: str) -> cst.BaseExpression | None:
    """The array an ndarray method's call writes into: its `out=`, or the positional
    argument at the method's out position (`d.dot(d, e)`: e; policy.toml
    [method_out_positions]). NumPy wants an ndarray there: it stays NumPy with the receiver."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "out":
            return arg.value
    position = api_policy()["method_out_positions"].get(method)
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if position is None or len(positional) <= position:
        return None
    return positional[position].value


def write_sites(analysis: ModuleFacts) -> list[WriteSite]:
    """Every in-place write of the module into something that may be an array."""
    flow = analysis.dataflow
    line = flow.expression_statement_line
    sites = []
    shared_items = _shared_items(analysis)
    for write in analysis.subscript_writes:
        if write.base_kind == CONTAINER and id(write.statement) in shared_items:
            # `kwargs["x"] += 1` left as it was (NJ203): NumPy updates the array the item
            # holds, which the caller passed: it stays NumPy
            at = line(write.statement)
            sites.append(WriteSite(write.statement, write.target, (at,) if at else (), at))
            continue
        if write.base_kind in (CONTAINER, SCALAR):
            continue
        at = line(write.statement)
        sites.append(WriteSite(write.statement, write.target, (at,) if at else (), at))
    for fact in analysis.aug_assigns:
        if isinstance(fact.node.target, cst.Subscript):
            continue
        at = line(fact.node)  # a write carried through a view is fixed on its line (NJ203)
        sites.append(WriteSite(fact.node, fact.node.target, (fact.node, at) if at else (fact.node,),
                               None, always=fact.shared_because is None))
    for write in analysis.method_writes + analysis.out_method_calls:
        if write.receiver_kind in (CONTAINER, SCALAR):
            continue
        at = line(write.node)
        sites.append(WriteSite(write.node, write.receiver, (at,) if at else (), at))
        if isinstance(write.node, cst.Call):
            out = _method_out(write.node, write.method)
            if out is not None:
                sites.append(WriteSite(write.node, out, (at,) if at else (), at))
    for ref in analysis.refs:
        call = ref.call
        if ref.out_arg is not None and call is not None:
            at = line(call)
            sites.append(WriteSite(call, ref.out_arg.value, (at,) if at else (), at,
                                   keeps=(ref.node,)))
        elif ref.keep in (KEEP_IN_PLACE_FUNCTION, KEEP_UFUNC_AT):
            if ref.keep == KEEP_UFUNC_AT:
                call = analysis.parents.get(analysis.parents.get(ref.node))
                call = call if isinstance(call, cst.Call) else None
            if call is not None and call.args and not call.args[0].star:
                at = line(call)
                sites.append(WriteSite(call, call.args[0].value, (at,) if at else (), at))
        elif ref.keep == KEEP_OUT:  # np.maximum.accumulate(x, out=x): the call is the method's
            call = analysis.parents.get(analysis.parents.get(ref.node))
            for arg in call.args if isinstance(call, cst.Call) else ():
                if arg.keyword is not None and arg.keyword.value == "out":
                    sites.append(WriteSite(call, arg.value, (), None))
    collector = flow.collector
    for attr in sorted(collector.context.external_attribute_writes):  # `kf.H[i] = 1.0` elsewhere
        bound = [statement for (_cls, name), values in collector.self_attr_bindings.items()
                 if name == attr for _value, statement in values]
        if bound:
            sites.append(WriteSite(bound[0], cst.Attribute(cst.Name("self"), cst.Name(attr)), (), None))
    for call, argument in _numpy_only_arguments(analysis):
        sites.append(WriteSite(call, argument, (), None))
    for fact in analysis.mutators:  # normalize(p) -> p = normalize(p) rebinds p
        for call, argument in fact.call_sites:  # (`total, p = f(p)`: the assignment's line)
            at = line(call) or line(analysis.parents.get(call))
            sites.append(WriteSite(call, argument, (at,) if at else (), at))
    for call, argument in analysis.external_numpy_arguments:  # kept on NumPy elsewhere (NJ104)
        sites.append(WriteSite(call, argument, (), None))
    for function, node in analysis.kept_reads:  # what a kept function reads stays NumPy
        sites.append(WriteSite(function.name, node, (), None))
    for call, argument, _qualname in analysis.external_calls:
        at = line(call) or line(analysis.parents.get(call))
        sites.append(WriteSite(call, argument, (at,) if at else (), at))
    for state in analysis.random_states:
        for draw in state.draws:
            if draw.shuffle and draw.call.args:
                # rng.shuffle(x) becomes x = jax.random.permutation(...); the state's
                # fixes stand or fall together
                sites.append(WriteSite(draw.call, draw.call.args[-1].value,
                                       (draw.statement,), draw.statement))
    for node in analysis.numpy_only_attribute_reads:  # `it = m.flat`, `m.strides`: m stays NumPy
        sites.append(WriteSite(node, node.value, (), None))
    for call in analysis.subclass_views:  # `obj.view(cls)`: only a NumPy array can be viewed so
        sites.append(WriteSite(call, call.func.value, (), None))
    draws = {d.call for state in analysis.random_states for d in state.draws}
    shuffles = list(analysis.random_shuffles) + [
        ref.call for ref in analysis.refs
        if ref.qualname == "numpy.random.shuffle" and ref.call is not None]
    for call in shuffles:  # a shuffle left on NumPy
        if call not in draws and call.args and not call.args[0].star:
            sites.append(WriteSite(call, call.args[0].value, (), None))
    return sites


def _shared_items(analysis: ModuleFacts) -> set:
    """id of each `d[k] += v` left as it was (NJ203) because the container's item may be an
    array other names hold: NumPy updates that array, where JAX would replace the item."""
    return {id(fact.node) for fact in analysis.aug_assigns
            if isinstance(fact.node.target, cst.Subscript) and fact.shared_because}


def _numpy_only_arguments(analysis: ModuleFacts):
    """(call, argument) of the calls left on NumPy that need a NumPy array there: the
    array `np.nditer(a, op_flags=["readwrite"])` writes into, and what a NumPy function
    tells apart by type (np.piecewise's conditions: policy.toml numpy_typed_arguments)."""
    typed = api_policy()["numpy_typed_arguments"]
    for ref in analysis.refs:
        call = ref.call
        if call is None or ref.keep is None or not call.args or call.args[0].star:
            continue
        if ref.qualname == "numpy.nditer":
            flags = argument_for(call, 2, "op_flags")  # nditer(op, flags, op_flags, ...)
            if flags is not None and ("write" in code_of(flags)  # "readwrite", "writeonly"
                                      or not isinstance(flags, (cst.List, cst.Tuple, cst.SimpleString))):
                yield call, call.args[0].value
        elif ref.qualname in typed:
            name, position = typed[ref.qualname]
            argument = argument_for(call, position, name)
            if argument is not None:
                yield call, argument


def islands(analysis: ModuleFacts, fixed: set, numpy_alias: str,
            compiled: frozenset = frozenset()) -> Islands:
    """What stays on NumPy for the writes not converted, given the nodes whose fixes apply
    and the functions compiled with jax.jit (`compiled`: a write there is traced as JAX's
    rebinding, which the jit plan accepted, and no NumPy array can live there)."""
    sites = write_sites(analysis)
    kept_names = {f.name for f in analysis.kept_functions}
    left = [not s.always and not any(n in fixed for n in s.fixed_by) for s in sites]
    refused = [s for s, no in zip(sites, left) if no and not _inside(analysis.parents, s.node, compiled)]
    converted = [s for s, no in zip(sites, left) if not no and s.drop is not None]
    drops: set = set()
    copies: list = []
    as_numpy: list = []
    sentences: dict = {}
    finder = _Reach(analysis)
    all_keys: set = set()
    kept = analysis.kept_functions
    if kept:
        from np2jax.analysis.kept import inside

    def copied(node) -> bool:
        """A kept function's body stays as written: its parameters are NumPy at entry (its
        prologue), so are the values made of them; but a value a converted function of the
        module gives it (`w = helper(v)`) is JAX, and a write left in place needs its copy."""
        return not kept or not inside(node, analysis.parents, kept) \
            or analysis.dataflow.jax_typed(node)

    for site in refused:
        island = finder.island(site.target)
        drops.update(island.kept)
        drops.update(site.keeps)
        # a function the island follows to its result (`h = head(a, 2)`, a view of `a`) gives
        # JAX arrays once compiled: it stays eager, NumPy in, NumPy out
        drops.update(f for f in compiled if f.name.value in island.functions)
        all_keys |= island.keys
        island.copies = [c for c in island.copies if copied(c)]
        for copy in island.copies:
            if copy not in copies:
                copies.append(copy)
        as_numpy.extend(r for r in island.as_numpy if r not in as_numpy and copied(r))
        sentence = describe(island, numpy_alias)
        if sentence and site.node in kept_names and site.node in sentences:
            if sentence not in sentences[site.node]:  # what a kept function reads: each island
                sentences[site.node] += " " + sentence
        elif sentence:
            for node in _site_nodes(analysis, site):
                sentences.setdefault(node, sentence)
    for site in converted:
        # a write into the island, or into a copy of it (`new = grid.copy()`: NumPy's copy
        # of a NumPy array, which has no `.at`), stays as written
        if finder.root_keys(site.target) & all_keys or finder.copy_of(site.target, all_keys):
            drops.add(site.drop)
    reads = []
    shared_items = _shared_items(analysis)
    for site in sites:
        value = getattr(site.node, "value", None)
        # `a -= v`, `params[k] -= v` on a NumPy array with a JAX `v`: NumPy's in-place
        # operator declines JAX's operand and Python rebinds to a new JAX array (a dict's
        # item replaced), which the array's other names do not see: v is read as NumPy
        if isinstance(site.node, cst.AugAssign) and finder.root_keys(site.target) & all_keys \
                and (not isinstance(site.target, cst.Subscript) or id(site.node) in shared_items) \
                and value not in reads and _may_be_jax(analysis.dataflow, finder, value, all_keys):
            ref = analysis.ref_of_call(value) if isinstance(value, cst.Call) else None
            if ref is not None and ref.qualname in ("numpy.asarray", "numpy.array"):
                drops.add(ref.node)  # already read as NumPy (a conversion run twice)
            else:
                reads.append(value)
    for node in [*copies, *reads, *as_numpy, *drops]:  # no NumPy array inside a compiled function
        for function in _functions_around(analysis.parents, node):
            if function in compiled:
                drops.add(function)
    for fact in analysis.mutators:  # NJ209's finding on a function names its parameter's island
        for write in fact.writes:
            sentence = sentences.get(write)
            if sentence:
                sentences.setdefault(fact.node.name, sentence)
                break
    drops.discard(None)
    reads = [r for r in reads if copied(r)]
    handed, copied_there = _handed_to_jax(analysis, finder, all_keys, fixed, drops, {*copies, *reads}) \
        if all_keys else ([], set())
    drops |= copied_there
    return Islands(drops, copies, sentences, reads, as_numpy, handed)


def _handed_to_jax(analysis: ModuleFacts, finder, keys: set, fixed: set, drops: set,
                   read_now: set) -> tuple[list, set]:
    """Reads of an island's array (or of a name bound only to one: `c = self.cells`) that
    converted code hands to JAX: an argument of a converted call, an operand beside a JAX
    value. JAX reads a NumPy array's memory when its computation runs, asynchronously (a
    NumPy argument is not copied when the call returns): a write left in place after the
    call may change what JAX reads (`jnp.array(c)` is no remedy: it copies lazily too).
    Each is handed over as `np.array(...)`, a copy NumPy makes there, which nothing else
    holds. Not where NumPy reads JAX's result at once (`np.asarray(jnp.mean(t))`, an island's
    copy or read, `read_now`): the computation is done before the next statement. A copy
    the code makes itself (`np.array(rows)`, `np.copy(a)`) stays NumPy's (its reference is
    returned, to keep), which is also what a conversion run again finds."""
    flow, parents = analysis.dataflow, analysis.parents

    def read_at_once(node) -> bool:
        while node not in read_now:
            parent = parents.get(node)
            if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
                node = parent
            elif isinstance(parent, cst.Arg) and isinstance(parents.get(parent), cst.Call):
                call = parents.get(parent)
                ref = analysis.ref_of_call(call)
                if ref is None:
                    return False
                if ref.node not in fixed or ref.node in drops:
                    return True  # a NumPy call: it reads JAX's result now
                node = call
            else:
                return False
        return True

    def island_read(node, depth: int = 0) -> bool:
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                and node.value.value == "self":
            return ("attr", node.attr.value) in keys
        if not isinstance(node, cst.Name) or depth > 3:
            return False
        if finder.root_keys(node) & keys:
            return True
        values, aug_values = flow.name_values(node)
        return bool(values) and not aug_values and all(
            isinstance(v, cst.BaseExpression) and island_read(v, depth + 1) for v, _ in values)

    found, copied_there = [], set()
    for node in [*analysis.nodes(cst.Name), *analysis.nodes(cst.Attribute)]:
        parent = parents.get(node)
        if node in fixed or not isinstance(parent, (cst.Arg, cst.BinaryOperation)):
            continue
        if isinstance(parent, cst.Arg):
            call = parents.get(parent)
            ref = analysis.ref_of_call(call) if isinstance(call, cst.Call) and parent.value is node else None
            handed = ref is not None and ref.node in fixed and ref.node not in drops \
                and not parent.star and (ref.entry or {}).get("kind") in ("function", "ufunc") \
                and not any(a.arg is parent and a.role == "shape" for a in ref.arguments)
            # a shape (`np.zeros(size)`) is read while the call is made, not later
            makers = (ref.node,) if handed else ()
        else:
            other = parent.right if parent.left is node else parent.left
            handed = flow.jax_typed(other)
            makers = flow.jax_refs(other) if handed else ()
        if not handed or not island_read(node) or read_at_once(node):
            continue
        if isinstance(parent, cst.Arg) and ref.qualname in ("numpy.array", "numpy.copy") \
                and parents.get(parent).args[0] is parent:
            copied_there.add(ref.node)  # np.array(rows): NumPy's copy, kept
        else:
            found.append((node, makers))
    return found, copied_there


def _may_be_jax(flow, finder, value, keys: set, depth: int = 0) -> bool:
    """Whether the operand of `a op= value` may be a JAX array once converted. Not when it
    is a number, an island's array, a method's result on one (`v.sum()`), or arithmetic of
    those; anything else may be (a parameter whose callers np2jax cannot see included)."""
    if depth > 20:
        return True
    if flow.is_scalar(value) or isinstance(value, (cst.Integer, cst.Float, cst.Imaginary)):
        return False
    if isinstance(value, TEXT_NODES):
        return False  # `label += " = "`: text, which JAX has no arrays of
    if isinstance(value, (cst.Tuple, cst.List, cst.ListComp)):
        # `size += (3,)`: NumPy converts a display itself (its items' JAX arrays too), and
        # np.asarray would turn a tuple's concatenation into an addition
        return False
    if isinstance(value, (cst.Name, cst.Attribute)) and not (
            isinstance(value, cst.Attribute) and value.attr.value in VIEW_ATTRIBUTES):
        return not finder.root_keys(value) <= keys or not finder.root_keys(value)
    if isinstance(value, (cst.Subscript, cst.Attribute)):
        return _may_be_jax(flow, finder, value.value, keys, depth + 1)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in flow.fresh_methods:
        return _may_be_jax(flow, finder, value.func.value, keys, depth + 1) or any(
            _may_be_jax(flow, finder, a.value, keys, depth + 1) for a in value.args)
    if isinstance(value, cst.BinaryOperation):
        return _may_be_jax(flow, finder, value.left, keys, depth + 1) \
            or _may_be_jax(flow, finder, value.right, keys, depth + 1)
    if isinstance(value, cst.UnaryOperation):
        return _may_be_jax(flow, finder, value.expression, keys, depth + 1)
    return True


def _functions_around(parents: dict, node) -> list:
    found = []
    node = parents.get(node)
    while node is not None:
        if isinstance(node, cst.FunctionDef):
            found.append(node)
        node = parents.get(node)
    return found


def _inside(parents: dict, node, functions) -> bool:
    return bool(functions) and any(f in functions for f in _functions_around(parents, node))


def _site_nodes(analysis, site: WriteSite) -> list:
    nodes = [site.node, site.target, *site.fixed_by]
    if isinstance(site.target, cst.BaseExpression):
        parent = analysis.parents.get(site.target)
        while parent is not None and not isinstance(parent, cst.BaseStatement):
            nodes.append(parent)
            parent = analysis.parents.get(parent)
        if parent is not None:
            nodes.append(parent)
    return nodes


class _Reach:
    """The walk backwards from the value a refused write changes."""

    def __init__(self, analysis: ModuleFacts) -> None:
        self.analysis = analysis
        self.flow = analysis.dataflow
        self.collector = self.flow.collector
        self.parents = analysis.parents
        self._current = Island()
        self._seen: set = set()

    def island(self, target: cst.BaseExpression) -> Island:
        self._current = Island()
        self._seen = set()
        self._reach(target)
        return self._current

    # keys of what a converted write rebinds
    def root_keys(self, target) -> set:
        while True:
            if isinstance(target, cst.Subscript):
                target = target.value
            elif isinstance(target, cst.Attribute) and target.attr.value in VIEW_ATTRIBUTES:
                target = target.value
            else:
                break
        if isinstance(target, cst.Name):
            scope, _values, _ = self.flow.name_bindings(target)
            return {(scope, target.value)}
        if isinstance(target, cst.Attribute):
            return {("attr", target.attr.value)}
        return set()

    def copy_of(self, target, keys: set) -> bool:
        """Whether the name a converted write rebinds is bound only to copies of values the
        island keeps (`new = grid.copy()`, `np.copy(grid)`), `keys` being the island's."""
        while isinstance(target, cst.Subscript):
            target = target.value
        if not isinstance(target, cst.Name) or not keys:
            return False
        values, aug_values = self.flow.name_values(target)
        if aug_values or not values:
            return False
        for value, _statement in values:
            source, copies = value, 0
            while isinstance(source, cst.Call):  # np.array(grid.copy()): a conversion's output
                func = source.func
                ref = self.analysis.ref_of_call(source)
                if isinstance(func, cst.Attribute) and func.attr.value == "copy" and not source.args:
                    source = func.value
                elif ref is not None and ref.qualname in ("numpy.copy", "numpy.array") \
                        and len(source.args) == 1 and source.args[0].keyword is None:
                    source = source.args[0].value
                else:
                    return False
                copies += 1
            if not copies or not self.root_keys(source) & keys:
                return False
        return True

    def _note(self, text: str) -> None:
        if text not in self._current.notes:
            self._current.notes.append(text)

    def _reach(self, node, depth: int = 0) -> None:
        if node is None or depth > 200 or (id(node), "node") in self._seen:
            return
        self._seen.add((id(node), "node"))
        deeper = depth + 1
        if isinstance(node, cst.Name):
            if node.value not in ("None", "True", "False"):
                self._name(node, deeper)
        elif isinstance(node, cst.Attribute):
            if node.attr.value in VIEW_ATTRIBUTES:
                self._reach(node.value, deeper)
            elif not self.collector.is_api(node):
                self._attribute(node.attr.value, deeper)
        elif isinstance(node, cst.Subscript):
            self._reach(node.value, deeper)
        elif isinstance(node, cst.Call):
            self._call(node, deeper)
        elif isinstance(node, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
            if self._may_be_jax_array(node):
                self._copy(node)
            elif isinstance(node, cst.BinaryOperation) and self.flow.value_kind(node) != SCALAR:
                # not known to be an array, so not copied: what it is made of may be one
                # (`arc(lat2, lat1) / aux` of another module's function on JAX arrays), or
                # a list holding them (`[np.zeros(2)] * 3`: three times the same array)
                self._reach(node.left, deeper)
                self._reach(node.right, deeper)
        elif isinstance(node, cst.IfExp):
            self._reach(node.body, deeper)
            self._reach(node.orelse, deeper)
        elif isinstance(node, cst.BooleanOperation):
            self._reach(node.left, deeper)
            self._reach(node.right, deeper)
        elif isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            for element in node.elements:
                self._reach(element.value, deeper)
        elif isinstance(node, cst.Dict):
            for element in node.elements:
                self._reach(getattr(element, "value", None), deeper)
        elif isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            self._reach(node.elt, deeper)
        elif isinstance(node, cst.DictComp):
            self._reach(node.value, deeper)
        elif isinstance(node, cst.NamedExpr):
            self._reach(node.value, deeper)

    def _copy(self, node) -> None:
        if node not in self._current.copies:
            self._current.copies.append(node)

    def _keep(self, ref) -> None:
        if ref.converted and ref.node not in self._current.kept:
            self._current.kept.append(ref.node)

    def _name(self, node: cst.Name, depth: int) -> None:
        scope, values, _ = self.flow.name_bindings(node)
        key = (scope, node.value)
        if key in self._seen:
            return
        self._seen.add(key)
        self._current.keys.add(key)
        if node.value not in self._current.names:
            self._current.names.append(node.value)
        for value, statement in values:
            self._binding(node.value, value, statement, scope, depth)
        self._stored_into(node.value, scope, depth)
        self._views_taken(node.value, scope)
        if scope is not None and getattr(scope, "globals", None) is scope:
            # a module global: the functions declaring it `global` bind it too
            for (other, bound), others in list(self.collector.bindings.items()):
                if bound == node.value and other is not None and other is not scope \
                        and getattr(other, "globals", None) is scope \
                        and all(a.scope is scope for a in other[bound]):
                    for value, statement in others:
                        if value != "global":
                            self._binding(node.value, value, statement, other, depth)

    def _views_taken(self, name: str, scope) -> None:
        """A NumPy view function given the island's array (`d = np.diagonal(t)`) stays NumPy:
        its result shares the array's memory and sees its writes, where JAX's is a copy."""
        if scope is None or name not in scope.accesses:
            return
        for access in scope.accesses[name]:
            arg = self.parents.get(access.node)
            call = self.parents.get(arg)
            if isinstance(arg, cst.Arg) and arg.keyword is None and isinstance(call, cst.Call) \
                    and call.args and call.args[0] is arg:
                ref = self.analysis.ref_of_call(call)
                if ref is not None and ref.qualname in self.flow.view_functions:
                    self._keep(ref)

    def _stored_into(self, name: str, scope, depth: int) -> None:
        """The values stored into the container `name` holds (`_CACHE[n] = np.arange(n)`,
        `rows.append(v)`): what is read back from it (`t = _CACHE[n]; t[0] = 1`) is one of
        them."""
        for statement, target, operator in self.collector.subscript_stores:
            base = target.value
            if operator is None and isinstance(base, cst.Name) and base.value == name \
                    and isinstance(statement, cst.Assign) \
                    and self.flow.name_bindings(base)[0] is scope and self._container(base):
                self._reach(statement.value, depth)
        for call in self._container_additions.get(name, ()):
            if self.flow.name_bindings(call.func.value)[0] is scope:
                self._reach(call.args[-1].value, depth)

    def _container(self, name: cst.Name) -> bool:
        """A dict or list, whose items are the objects stored (an array's are copied in)."""
        return self.flow.container_type(name) is not None or self.flow.value_kind(name) == CONTAINER

    @cached_property
    def _container_additions(self) -> dict:
        """name -> the calls adding a value to the list or dict it holds (`name.append(v)`)."""
        found: dict = {}
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                    and len(call.args) == {"append": 1, "insert": 2, "setdefault": 2}.get(func.attr.value) \
                    and not any(a.star for a in call.args):
                found.setdefault(func.value.value, []).append(call)
        return found

    def _binding(self, name: str, value, statement, scope, depth: int) -> None:
        if value == "param":
            self._param(statement, depth)
        elif value == "global":
            module_scope = getattr(scope, "globals", None)
            for bound, at in self.collector.bindings.get((module_scope, name), []):
                if bound != "global":
                    self._binding(name, bound, at, module_scope, depth)
        elif isinstance(value, str):
            if value == UNKNOWN:
                self._unknown_binding(name, statement, depth)
        else:
            self._reach(value, depth)

    def _unknown_binding(self, name: str, statement, depth: int) -> None:
        """A name bound by `a = b = v`, an unpacking, a loop or a `with`."""
        if isinstance(statement, cst.Assign):
            if len(statement.targets) > 1:
                self._reach(statement.value, depth)
                return
            position = _unpacked_position(statement, name)
            value = statement.value
            if position is None:
                self._note(f"`{name}` is bound by an unpacking np2jax does not follow")
                return
            index, count = position
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == count:
                self._reach(value.elements[index].value, depth)
                return
            if isinstance(value, cst.Call):
                ref = self.collector.ref_by_call.get(value)
                if ref is not None:
                    self._keep(ref)
                    if ref.qualname in self.flow.view_functions and value.args:
                        self._reach(value.args[0].value, depth)  # `l, r = np.split(a, 2)`: views of a
                    return
                function = self.flow.module_function(value) or self.flow.module_method(value)
                if function is not None:
                    returned = _returned(function)
                    if returned and all(isinstance(r, cst.Tuple) and len(r.elements) == count
                                        for r in returned):
                        self._function(function)
                        for r in returned:
                            self._reach(r.elements[index].value, depth)
                        return
                if self.flow.package_function(value):
                    # `u, v, w = enu2uvw(e, n, u, ...)` of another module of the library:
                    # made of its arguments, as a single result is (_call)
                    for argument in value.args:
                        self._reach(argument.value, depth)
                    return
            self._note(f"`{name}` is unpacked from `{code_of(value)}`, which np2jax does not follow")
        elif isinstance(statement, cst.For):
            iterated = statement.iter
            if isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Name) \
                    and iterated.func.value in ("enumerate", "zip", "reversed"):
                for arg in iterated.args:
                    self._reach(arg.value, depth)
            else:
                self._reach(iterated, depth)  # rows of an array are views of it
        else:
            self._note(f"`{name}` is bound by `with`, which np2jax does not follow")

    def _function(self, function: cst.FunctionDef) -> None:
        if function.name.value not in self._current.functions:
            self._current.functions.append(function.name.value)

    def _param(self, param: cst.Param, depth: int) -> None:
        """A parameter the write reaches: the callers' arguments must be NumPy arrays."""
        if param.default is not None:
            self._reach(param.default, depth)
        function = self.parents.get(self.parents.get(param))
        if not isinstance(function, cst.FunctionDef):
            self._note("a lambda's callers are not followed")
            return
        name = function.name.value
        name_of = param.name.value
        positional = [*function.params.posonly_params, *function.params.params]
        position = positional.index(param) if param in positional else None
        cls = self.flow.enclosing(function, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
        if param.star == "*" and isinstance(cls, cst.ClassDef):
            self._note(f"the callers of `{name}` pass `{name_of}` through `*`")
            return
        if isinstance(cls, cst.ClassDef):
            self._method_callers(function, name, param, position, depth)
            return
        scope = self.flow.scopes.get(function)
        # a nested function kept on NumPy: its callers in the function around it are
        # followed (a JAX array would reach it as a read-only NumPy view: analysis.kept)
        if not isinstance(scope, GlobalScope) and function not in self.analysis.kept_functions:
            self._note(f"the callers of the nested function `{name}` are not followed")
            return
        assignments = list(scope.assignments[name]) if name in scope.assignments else []
        if len(assignments) != 1:
            self._note(f"`{name}` is defined more than once")
            return
        for access in sorted(assignments[0].references, key=lambda a: self.flow.start(a.node)):
            call = self.parents.get(access.node)
            if not (isinstance(call, cst.Call) and call.func is access.node):
                mapped = self._mapped(access.node)
                if mapped is None:
                    self._note(f"`{name}` is used as a value, whose calls are not followed")
                    continue
                if position is not None:  # map(f, xs, ys): the items of the position's iterable
                    self._reach(mapped.args[position + 1].value if position + 1 < len(mapped.args)
                                else None, depth)
                continue
            if param.star:  # `f(x=b)` into `**kwargs`, `f(a, b)` into `*args`
                for value in self._star_arguments(call, function, param):
                    self._reach(value, depth)
                continue
            argument = argument_for(call, position, name_of)
            if argument is None and any(a.star for a in call.args):
                self._note(f"a call of `{name}` passes `{name_of}` through `*`")
            self._reach(argument, depth)
        if name in self.collector.exported_names or name in self.collector.context.external_names:
            self._note(f"callers of `{name}` in other modules must pass NumPy arrays")
        if name in self.collector.dynamic_names:
            self._note(f"callers of `{name}` through `globals()` must pass NumPy arrays")

    def _star_arguments(self, call: cst.Call, function: cst.FunctionDef, param: cst.Param) -> list:
        """What a call passes into `*args` (the positional arguments past the named ones) or
        `**kwargs` (the keywords no named parameter takes); a `*xs`/`**d` of the call is
        noted, not followed."""
        params = function.params
        if param.star == "**":
            named = {p.name.value for p in [*params.posonly_params, *params.params,
                                             *params.kwonly_params]}
            passed = [a for a in call.args if a.keyword is not None and a.keyword.value not in named]
            unpacked = any(a.star == "**" for a in call.args)
        else:
            count = len(params.posonly_params) + len(params.params)
            passed = [a for a in call.args if a.keyword is None and not a.star][count:]
            unpacked = any(a.star == "*" for a in call.args)
        if unpacked:
            self._note(f"a call of `{function.name.value}` passes `{param.name.value}` through `*`")
        return [a.value for a in passed]

    def _mapped(self, reference):
        """`map(f, xs)`: the call of the builtin map passing the function first, or None."""
        arg = self.parents.get(reference)
        call = self.parents.get(arg)
        if isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and call.args \
                and call.args[0] is arg and isinstance(call.func, cst.Name) \
                and call.func.value == "map" and not any(a.star for a in call.args):
            return call
        return None

    def _method_callers(self, function, name, param: cst.Param, position, depth) -> None:
        """`obj.name(arg)` anywhere in the module, for a method (self is not passed); for
        `__init__`, the calls of the class too; into `**kwargs`, the keywords it takes."""
        if position is not None and not any(
                isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
                for d in function.decorators):
            position -= 1
        if position is not None and position < 0:
            return  # `self` (or `cls`): the object the method is called on, not an argument
        cls = self.flow.enclosing(function, (cst.ClassDef,))
        for call in self.collector.nodes.get(cst.Call, []):
            func = call.func
            if (isinstance(func, cst.Attribute) and func.attr.value == name) or (
                    name == "__init__" and isinstance(func, cst.Name) and cls is not None
                    and func.value == cls.name.value):
                if param.star == "**":
                    for value in self._star_arguments(call, function, param):
                        self._reach(value, depth)
                else:
                    self._reach(argument_for(call, position, param.name.value), depth)
        self._note(f"callers of the method `{name}` np2jax cannot see must pass NumPy arrays")

    def _attribute(self, attr: str, depth: int) -> None:
        """`self.w` or `obj.w`: every array bound to an attribute of that name."""
        key = ("attr", attr)
        if key in self._seen:
            return
        self._seen.add(key)
        self._current.keys.add(key)
        if f".{attr}" not in self._current.names:
            self._current.names.append(f".{attr}")
        for (_cls, name), values in self.collector.self_attr_bindings.items():
            if name == attr:
                for value, statement in values:
                    if not isinstance(value, str):
                        self._reach(value, depth)
                    elif value == UNKNOWN and isinstance(statement, cst.Assign):
                        self._reach(statement.value, depth)
        for assign in self.collector.nodes.get(cst.Assign, []):
            for target in assign.targets:
                t = target.target
                if isinstance(t, cst.Attribute) and t.attr.value == attr and not (
                        isinstance(t.value, cst.Name) and t.value.value == "self"):
                    self._reach(assign.value, depth)
        for value in self._dataclass_field_values(attr):
            self._reach(value, depth)

    def _dataclass_field_values(self, attr: str) -> list:
        """What the module's calls of its dataclasses give their field `attr` (`Body(start)`
        for `pos: np.ndarray`, the field's default): the generated `__init__` binds
        `self.pos` to the caller's array itself."""
        values = []
        for cls in self.collector.nodes.get(cst.ClassDef, []):
            if not any(code_of(d.decorator).split("(")[0].rsplit(".", 1)[-1] == "dataclass"
                       for d in cls.decorators):
                continue
            fields = [line.body[0] for line in cls.body.body
                      if isinstance(line, cst.SimpleStatementLine) and line.body
                      and isinstance(line.body[0], cst.AnnAssign)
                      and isinstance(line.body[0].target, cst.Name)]
            names = [f.target.value for f in fields]
            if attr not in names:
                continue
            position = names.index(attr)
            if fields[position].value is not None:
                values.append(fields[position].value)
            for call in self.analysis.nodes(cst.Call):
                if not (isinstance(call.func, cst.Name) and call.func.value == cls.name.value):
                    continue
                for index, arg in enumerate(call.args):
                    if arg.star:
                        break
                    if (arg.keyword is None and index == position) or \
                            (arg.keyword is not None and arg.keyword.value == attr):
                        values.append(arg.value)
        return values

    def _call(self, call: cst.Call, depth: int) -> None:
        flow = self.flow
        ref = self.collector.ref_by_call.get(call)
        if ref is not None and ref.qualname in GENERATOR_FACTORIES:
            self._keep(ref)  # a random generator, reached through its draws: no array to copy
            return
        if ref is not None:
            out = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "out"), None)
            if out is not None:  # np.add(a, b, out=c) is c
                self._keep(ref)
                self._reach(out, depth)
            elif ref.qualname in NUMPY_CREATORS and not _may_not_copy(call):
                self._keep(ref)
            elif ref.qualname in flow.view_functions or ref.keep == KEEP_IN_PLACE_FUNCTION \
                    or not flow._fresh(call):  # np.nan_to_num(x, copy=False) is x
                self._keep(ref)
                if call.args:
                    self._reach(call.args[0].value, depth)
            elif not ref.converted:
                return  # stays NumPy: a new NumPy array, even of JAX arguments
            elif flow.value_kind(call) == ARRAY:
                self._copy(call)
            else:
                self._keep(ref)
            return
        if call in self.collector.jax_calls:
            if flow.value_kind(call) != CONTAINER:
                self._copy(call)
            return
        effects = flow.tree_function_effects(call)
        if effects is not None and effects[0]:
            self._copy(call)  # another module's function giving new JAX arrays
            return
        decorated = flow.transparently_decorated_function(call)
        if decorated is not None and self._fresh_result(decorated):
            self._copy(call)  # the wrapper may convert its arguments: only a new array is followed
            return
        function = flow.module_function(call) or flow.module_method(call)
        if function is not None:
            if function in self.analysis.kept_functions and self._fresh_result(function):
                return  # a new NumPy array: the function is kept on NumPy
            returned = _returned(function, exact=True)
            if returned and all(self._island_copy(v) for v in returned):
                self._function(function)  # `return np.array(<JAX array>)`: an island's copy
                for value in returned:  # made by an earlier conversion, kept as it is
                    self._reach(value, depth)
                return
            if self._fresh_result(function):
                self._copy(call)
                return
            returned = _returned(function) or _yielded(function)
            if not returned:
                self._note(f"what `{function.name.value}` returns is not followed")
                return
            self._function(function)
            for value in returned:
                self._reach(value, depth)
            return
        func = call.func
        if isinstance(func, cst.Attribute) and not (
                isinstance(func.value, (cst.Name, cst.Attribute)) and self.collector.is_api(func.value)):
            method = func.attr.value
            if method in flow.fresh_methods and not _may_not_copy(call) or flow._draws(func):
                # a NumPy generator's draw is a NumPy array unless converted (jax_typed)
                if flow.jax_typed(call) if flow._draws(func) else self._may_be_jax_array(call):
                    self._copy(call)
                elif method == "copy" and not call.args and self._may_hold_jax(func.value):
                    self._current.as_numpy.append(func.value)
                return
            if method in ("get", "pop", "setdefault") and len(call.args) > 1:
                self._reach(call.args[1].value, depth)  # kwargs.get("P", np.identity(3))
            self._reach(func.value, depth)  # x.reshape(...), x.view(): a view of x
        elif isinstance(func, cst.Name) and flow.value_kind(call) != CONTAINER \
                and flow.jax_typed(call):
            self._copy(call)  # `sum(x[i:] * w[i] for i in ...)` of JAX arrays: a new one
        elif isinstance(func, cst.Name) and func.value == "abs" and len(call.args) == 1 \
                and self.collector.qualified_names(func) == {"builtins.abs"}:
            self._reach(call.args[0].value, depth)  # abs(a): a new array of a's type
        elif flow.package_function(call) and flow.value_kind(call) not in (CONTAINER, SCALAR):
            # another module of the library, whose code may stay on NumPy: what it returns
            # may be made of its arguments (NumPy's operators hand a JAX operand's type on:
            # `np.cos(a) / a` of a JAX `a` is a JAX array), so they stay NumPy with the island
            for argument in call.args:
                self._reach(argument.value, depth)

    def _island_copy(self, value) -> bool:
        """`np.array(<a JAX array>)`: what an island's copy looks like once converted (the
        argument made by JAX code already there: a conversion run twice)."""
        ref = self.collector.ref_by_call.get(value) if isinstance(value, cst.Call) else None
        return ref is not None and ref.qualname == "numpy.array" and len(value.args) == 1 \
            and not value.args[0].keyword and not value.args[0].star \
            and self._jax_value(value.args[0].value)

    def _jax_value(self, value) -> bool:
        """A JAX array already (`jnp.arange(n)`), or a builtin sum of those (`sum(x[i:] *
        w[i] for i in ...)`)."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
                and value.func.value == "sum" and value.args:
            summed = value.args[0].value
            return self._jax_value(summed.elt if isinstance(summed, (cst.GeneratorExp, cst.ListComp))
                                   else summed)
        return self.flow.already_jax(value)

    def _may_be_jax_array(self, value) -> bool:
        """Whether a fresh array expression (arithmetic, a comparison, `x.astype(...)`) may
        give a JAX array once converted, so that the island copies it: when it is one, or
        when it is surely an array and an operand may be one (a parameter of a nested
        function called with converted arrays). Copying a NumPy array again changes nothing
        but time; a value that may be a list or a number is never copied."""
        flow = self.flow
        kind = flow.value_kind(value)
        if kind in (CONTAINER, SCALAR):
            return False
        if flow.jax_typed(value):
            return True
        operands = [value.func.value] if isinstance(value, cst.Call) else []
        if isinstance(value, cst.BinaryOperation):
            operands = [value.left, value.right]
        elif isinstance(value, cst.UnaryOperation):
            operands = [value.expression]
        elif isinstance(value, cst.Comparison):
            operands = [value.left, *(c.comparator for c in value.comparisons)]
        surely_array = kind == ARRAY or isinstance(value, cst.Comparison) or (
            isinstance(value, cst.Call) and value.func.attr.value not in _NOT_ONLY_ARRAY_METHODS)
        return surely_array and any(_may_be_jax(flow, self, o, self._current.keys) for o in operands)

    def _may_hold_jax(self, receiver) -> bool:
        """Whether the receiver of a `.copy()` that is not surely an array may be a JAX
        array, or a list or tuple of them: a value whose kind np2jax does not know (a
        parameter, an attribute, what an unknown function returns) that is not already read
        with the helper."""
        if self.flow.value_kind(receiver) != UNKNOWN or not isinstance(
                receiver, (cst.Name, cst.Attribute, cst.Subscript)):
            return False
        return _may_be_jax(self.flow, self, receiver, self._current.keys)

    def _fresh_result(self, function: cst.FunctionDef) -> bool:
        """Whether every call of `function` returns a new array no one else holds: each
        return gives a fresh array expression, or a local name bound only to those that
        nothing else keeps."""
        returned = _returned(function, exact=True)
        if not returned:
            return False
        flow = self.flow
        for value in returned:
            if isinstance(value, cst.Name):
                scope = flow.scopes.get(value)
                values = self.collector.bindings.get((scope, value.value), [])
                if not values or any(isinstance(v, str) or not flow._fresh(v) or not self._array(v)
                                     for v, _ in values):
                    return False
                if flow._escape(scope, value.value, self.parents.get(value), skip=value) is not None:
                    return False
            elif not flow._fresh(value) or not self._array(value):
                return False
        return True

    def _array(self, value) -> bool:
        kind = self.flow.value_kind(value)
        return kind == ARRAY or (kind not in (CONTAINER, SCALAR) and self.flow.jax_typed(value))


def _returned(function: cst.FunctionDef, exact: bool = False) -> list:
    """The values the function's returns give (not nested functions'); with `exact`, empty
    when some path returns nothing or it is a generator."""
    finder = ReturnsFinder()
    function.body.visit(finder)
    if finder.yields:
        return []
    values = [r.value for r in finder.returns]
    if exact:
        from np2jax.analysis.values import always_leaves

        if any(v is None for v in values) or not always_leaves(function.body.body):
            return []
    return [v for v in values if v is not None]


def _yielded(function: cst.FunctionDef) -> list:
    """What a generator function yields (`yield a[s:s + n]`: views of its argument), and
    what it yields from (`yield from rows`)."""
    finder = ReturnsFinder()
    function.body.visit(finder)
    return finder.yielded


def _unpacked_position(statement, name: str):
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)) or any(
            isinstance(e, cst.StarredElement) for e in target.elements):
        return None
    found = [i for i, e in enumerate(target.elements)
             if isinstance(e.value, cst.Name) and e.value.value == name]
    return (found[0], len(target.elements)) if len(found) == 1 else None


def _may_not_copy(call: cst.Call) -> bool:
    return any(a.keyword is not None and a.keyword.value == "copy"
               and not (isinstance(a.value, cst.Name) and a.value.value == "True")
               for a in call.args)


def numpy_alias(module: cst.Module, bound: set) -> tuple[str, tuple | None]:
    """The name NumPy is imported as at module level, and the import to add when none is."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if alias.evaluated_name == "numpy":
                            return alias.evaluated_alias or "numpy", None
    for name in ("np", "numpy", "_np"):
        if name not in bound:
            return name, ("numpy", None if name == "numpy" else name)
    return "np_", ("numpy", "np_")


def _list(items: list[str]) -> str:
    shown = [f"`{i}`" for i in items]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def describe(island: Island, numpy_alias: str) -> str:
    """One sentence: what stays on NumPy so that the write runs."""
    parts = []
    names = island.names[:6]
    if names:
        verb = "stays" if len(names) == 1 else "stay"
        parts.append(f"{_list(names)} {verb} NumPy")
    details = []
    if island.kept:
        details.append(f"{_list([code_of(n) for n in island.kept[:4]])} kept")
    if island.copies:
        details.append(f"{_list([code_of(n) for n in island.copies[:3]])} copied by "
                       f"`{numpy_alias}.array`")
    if island.functions:
        details.append(f"{_list(island.functions[:3])} returning NumPy")
    if not details and not island.notes:
        return ""  # nothing was kept on NumPy for it: the write runs as it is
    sentence = f"{parts[0]} so that it runs" if parts else "NumPy is kept so that it runs"
    if details:
        sentence += " (" + "; ".join(details) + ")"
    if island.notes:
        sentence += "; " + "; ".join(island.notes[:2])
    return sentence[0].upper() + sentence[1:] + "." if not sentence.startswith("`") else sentence + "."


def read_for_elements(analysis, node: cst.Attribute) -> bool:
    """Whether `node` (`m.flat`) is only iterated or indexed for reading where it is: unpacked,
    a loop's or a comprehension's iterable, `m.flat[i]` read, or given to a builtin that
    only iterates it (`sum(m.flat)`)."""
    parents = analysis.parents
    parent = parents.get(node)
    if isinstance(parent, cst.Assign):
        return parent.value is node and all(
            isinstance(t.target, (cst.Tuple, cst.List)) for t in parent.targets)
    if isinstance(parent, (cst.For, cst.CompFor)):
        return parent.iter is node
    if isinstance(parent, cst.Subscript):
        above = parents.get(parent)
        return parent.value is node and not isinstance(above, (cst.AssignTarget, cst.Del)) \
            and not (isinstance(above, (cst.AugAssign, cst.AnnAssign)) and above.target is parent)
    if isinstance(parent, cst.Arg) and not parent.keyword and not parent.star:
        call = parents.get(parent)
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) \
            and call.func.value in ITERATING_BUILTINS \
            and analysis.qualified_names(call.func) == {f"builtins.{call.func.value}"}
    return False
