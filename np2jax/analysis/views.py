"""Views: names that hold a NumPy view of a private array, so that a write through the
view can be carried to its base and to the base's other views, or why it cannot.

NumPy's `v = a[::2]` (basic indices: integers, slices, `...`, None), `a.T`,
`np.transpose(a)`, and, for an array known C-contiguous, `a.reshape(...)`, `np.reshape`,
`a.ravel()`, `np.ravel` share `a`'s memory: a write into `v` changes `a`, and a write into
`a` changes `v`. JAX has no views, so a write into either becomes a rebinding followed by
the statements that give the other names their new values:

    v[0] = x        ->  v = v.at[0].set(x)
                        a = a.at[::2].set(v)        (a = v.T, a = v.reshape(a.shape))
                        w = a[1:]                   (every other view of `a` made before)

This holds only where the relation is known at the write: `v` bound once, to that view;
`a` and the names in the index not bound again after the view is made; the view made
before the write in a block around it (not in a branch or an earlier loop); `a`, `v` and
every other view of `a` held by no one else (no container, no call that may keep them, no
chain of views). Everything else is refused with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import GlobalScope

from np2jax.analysis.facts import ARRAY_CONSTRUCTORS
from np2jax.analysis.shapes import static_shape
from np2jax.syntax import code_of, updates

SLICE, TRANSPOSE, RESHAPE, RAVEL = "slice", "transpose", "reshape", "ravel"

# NumPy calls whose result is a new C-contiguous array (unless order= says otherwise):
# a reshape or ravel of it is a view.
# name -> how many positional arguments come before a positional `order` (or the end).
C_CONTIGUOUS_CONSTRUCTORS = {
    "numpy.zeros": 2, "numpy.ones": 2, "numpy.empty": 2, "numpy.full": 3,
    "numpy.arange": 4, "numpy.linspace": 9, "numpy.eye": 4, "numpy.identity": 2,
}
# np.array([...]) of numbers is C-ordered; np.array(x) of an array keeps x's order (K).
LITERAL_CONSTRUCTORS = frozenset(ARRAY_CONSTRUCTORS)


@dataclass(frozen=True)
class View:
    """`name = <view of base>`, one binding."""

    name: str
    statement: cst.Assign
    base: cst.Name  # the base as the view's value names it
    kind: str  # SLICE, TRANSPOSE, RESHAPE, RAVEL
    index: tuple = ()  # SLICE: the subscript elements; RESHAPE: the shape arguments


@dataclass
class Carry:
    """How the other names of a write's base get their new values, or why they cannot."""

    reason: str | None = None
    view: View | None = None  # the view written into, None for a write into the base
    path: list = field(default_factory=list)  # the view written into, its base's view, ...
    others: list = field(default_factory=list)  # views re-derived from the new base
    requires: tuple = ()
    copy: bool = False  # the name holds a copy made by advanced indexing: nothing to carry

    def statements(self) -> list[cst.BaseSmallStatement]:
        """What follows the rewritten write (built from plain names and literal indices,
        which no other fix changes)."""
        found = [_write_back(view) for view in self.path]
        found.extend(updates.assign(cst.Name(v.name), _derive(v)) for v in self.others)
        return found

    def describe(self) -> str:
        if self.copy:
            return "a copy made by advanced indexing, which the write does not carry to its base"
        parts = []
        if self.path:
            names = ", ".join(f"`{v.base.value}`" for v in self.path)
            parts.append(f"carried to {names}")
        if self.others:
            names = ", ".join(f"`{v.name}`" for v in self.others)
            parts.append(f"re-deriving {names}")
        return " and ".join(parts)


def _write_back(view: View) -> cst.Assign:
    base, name = cst.Name(view.base.value), cst.Name(view.name)
    if view.kind == SLICE:
        return updates.assign(base, updates.at_update(base, list(view.index), "set", name, ""))
    if view.kind == TRANSPOSE:
        return updates.assign(base, updates.attr(name, "T"))
    return updates.assign(base, updates.call(updates.attr(name, "reshape"),
                                             updates.attr(base, "shape")))


def _derive(view: View) -> cst.BaseExpression:
    base = cst.Name(view.base.value)
    if view.kind == SLICE:
        return updates.read(base, updates.with_commas(list(view.index)), "")
    if view.kind == TRANSPOSE:
        return updates.attr(base, "T")
    if view.kind == RAVEL:
        return updates.call(updates.attr(base, "ravel"))
    return cst.Call(func=updates.attr(base, "reshape"), args=list(view.index))


class Views:
    """The views of each scope, and the carry plan of a write."""

    def __init__(self, dataflow: Any) -> None:
        self.dataflow = dataflow
        self._by_scope: dict = {}

    # --- which bindings are views -------------------------------------------------------

    def _scope_views(self, scope) -> dict[str, list]:
        """name -> [(View or a reason it may be a view we cannot follow, statement)] for
        the names of `scope` bound to something whose base is a plain name."""
        if scope not in self._by_scope:
            found: dict[str, list] = {}
            for (bound_scope, name), values in self.dataflow.collector.bindings.items():
                if bound_scope is not scope:
                    continue
                for value, statement in values:
                    if isinstance(statement, cst.Assign) and not isinstance(value, str):
                        view = self._view(name, value, statement)
                        if view is not None:
                            found.setdefault(name, []).append(view)
            self._by_scope[scope] = found
        return self._by_scope[scope]

    def _view(self, name: str, value, statement) -> View | None:
        dataflow = self.dataflow
        if len(statement.targets) != 1 or not isinstance(statement.targets[0].target, cst.Name):
            return None
        if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name):
            if dataflow.index_kind(value) != "basic" or dataflow.scalar_read(value):
                return None  # a copy (fancy index) or a number
            if all(_integer(e) for e in value.slice):  # a row of a 2-D array, or a number?
                shape = static_shape(dataflow, value.value)
                if shape is None or len(shape) <= len(value.slice):
                    return None
            return View(name, statement, value.value, SLICE, tuple(value.slice))
        if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) \
                and value.attr.value == "T":
            return View(name, statement, value.value, TRANSPOSE)
        if not isinstance(value, cst.Call):
            return None
        ref = dataflow.collector.ref_by_call.get(value)
        args = list(value.args)
        if ref is not None:
            if not args or not isinstance(args[0].value, cst.Name) or args[0].keyword is not None:
                return None
            base, rest = args[0].value, args[1:]
            kind = {"numpy.transpose": TRANSPOSE, "numpy.reshape": RESHAPE,
                    "numpy.ravel": RAVEL}.get(ref.qualname)
        elif isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Name):
            base, rest = value.func.value, args
            kind = {"transpose": TRANSPOSE, "reshape": RESHAPE,
                    "ravel": RAVEL}.get(value.func.attr.value)
        else:
            return None
        if kind is None:
            return None
        if kind == TRANSPOSE and rest:
            return View(name, statement, base, "unknown", ())  # axes: not followed
        return View(name, statement, base, kind, tuple(
            a.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(rest) - 1 else a
            for i, a in enumerate(rest)))

    # --- the plan of one write ----------------------------------------------------------

    def carry(self, target: cst.BaseExpression, at: cst.CSTNode) -> Carry | None:
        """For a write at `at` (a statement) into the array of `target`: None when `target`
        is neither a view nor the base of one (the write's own reason stands), else the
        Carry (with its reason when the relation is not known at the write). Views of
        views (`w = v[1:]` of `v = a[2:]`) form a tree under the array they all share."""
        if not isinstance(target, cst.Name):
            return None
        dataflow = self.dataflow
        scope = dataflow.scopes.get(target)
        if scope is None:
            return None
        name = target.value
        views = self._scope_views(scope)
        own = dataflow.collector.bindings.get((scope, name), [])
        if len(own) == 1 and self._copy(own[0][0]):
            return self._private_copy(target, at, scope, own[0][1])
        path: list[View] = []  # the written view, its base's view, ... up to the root
        root = name
        while root in views:
            if len(dataflow.collector.bindings.get((scope, root), [])) != 1 or len(views[root]) != 1:
                return Carry(f"`{root}` is a view of `{views[root][0].base.value}` on some paths "
                             "only (it is bound more than once)")
            path.append(views[root][0])
            root = path[-1].base.value
            if len(path) > 8:
                return Carry(f"`{name}` is a view of a view of ... too deep to follow")
        group = [v for vs in views.values() for v in vs if self._root(views, v) == root]
        if not group:
            return None
        written = path[0] if path else None
        for view in sorted(group, key=lambda v: v not in path):  # the written ones first
            reason = self._relation_unknown(view, at, scope, path, group)
            if reason is not None:
                return Carry(reason if view in path or not path else
                             f"`{name}` shares memory with `{root}`, and {reason}")
        root_node = path[-1].base if path else target
        reason = dataflow.unconvertible_because(root_node, at, excused=frozenset(
            v.statement for v in group if v.base.value == root))
        if reason is not None:
            return Carry(f"`{name}` shares memory with `{root}`, and {reason}" if path else reason)
        live = [v for v in group if v not in path and self._dominates(v.statement, at)]
        needed = {v.name for v in live if self._read_after(scope, v.name, at)}
        for view in reversed(live):  # a view read later needs its base's new value first
            if view.name in needed:
                needed.add(view.base.value)
        requires = dataflow.binding_refs(target)
        if written is not None:
            requires += tuple(n for n in dataflow.binding_refs(root_node) if n not in requires)
        return Carry(view=written, path=path,
                     others=[v for v in live if v.name in needed], requires=requires)

    def _root(self, views: dict, view: View) -> str | None:
        """The array at the top of a view's chain of bases."""
        seen = {view.name}
        base = view.base.value
        while base in views and base not in seen and len(views[base]) == 1:
            seen.add(base)
            base = views[base][0].base.value
        return None if base in views else base

    def _copy(self, value) -> bool:
        """`a[[0, 2]]`, `a[a > 0]`: NumPy's advanced indexing makes a new array."""
        dataflow = self.dataflow
        if not isinstance(value, cst.Subscript) or not isinstance(value.value, cst.Name) \
                or len(value.slice) != 1 or not isinstance(value.slice[0].slice, cst.Index):
            return False
        index = value.slice[0].slice.value
        return isinstance(index, cst.List) or dataflow.is_mask(index)

    def _private_copy(self, target: cst.Name, at, scope, statement) -> Carry:
        """A write into `v = a[[0, 2]]` (a copy): it must reach neither `a` nor anyone else."""
        dataflow = self.dataflow
        name = target.value
        made = f"`{name} = {code_of(statement.value).strip()}`"
        if not self._dominates(statement, at):
            return Carry(f"{made} may or may not have run before this write")
        if not dataflow.jax_typed(statement.value.value):
            return Carry(f"`{code_of(statement.value.value)}` may not hold a JAX array")
        dynamic = dataflow._dynamic_code(target)
        if dynamic is not None:
            return Carry(f"the code calls `{dynamic}`, through which the array may be changed unseen")
        if dataflow._catches_index_error(at):
            return Carry(dataflow.unconvertible_because(target, at))
        if isinstance(scope, GlobalScope) and any(
                True for _ in dataflow._accesses_from_nested_scopes(scope, name)):
            return Carry(f"`{name}` is a module global read by functions")
        escape = dataflow._escape(scope, name, at, skip=target)
        if escape is not None:
            return Carry(f"`{name}` is also reachable through `{code_of(escape)}`")
        return Carry(copy=True, requires=dataflow.binding_refs(target))

    def _relation_unknown(self, view: View, at, scope, path: list, group: list) -> str | None:
        """Why the view relation of `view` at the write `at` is not known, or None (`path`:
        the views written through, which must have been made before the write)."""
        dataflow = self.dataflow
        made = f"`{view.name} = {code_of(view.statement.value).strip()}`"
        if view.kind == "unknown":
            return f"{made} is a view whose axes the analysis does not follow"
        if not self._dominates(view.statement, at):
            if any(v is view for v in path) or dataflow._before_or_looping(view.statement, at):
                return (f"{made} may or may not have run before this write (a branch or a "
                        "loop), so which array it views is not known")
            return None  # made after the write, from the new base
        bindings = dataflow.collector.bindings
        if len(bindings.get((scope, view.name), [])) != 1:  # (its `v op= x` are carried)
            return f"`{view.name}` is bound more than once, so it may not stay {made}"
        for part in (view.base, *_names_in(view.index)):
            for value, statement in bindings.get((scope, part.value), []):
                if value in ("global",) or (value != "param"
                                            and not dataflow.start(statement) < dataflow.start(view.statement)):
                    return f"`{part.value}` may be bound again after {made}"
            if part is not view.base and (scope, part.value) not in bindings and any(
                    value == "global" for (_, bound), values in bindings.items()
                    if bound == part.value for value, _ in values):
                return f"`{part.value}` is a global some function rebinds"
            if part is not view.base and any(  # `k += 1`: a new number
                    not dataflow.start(value) < dataflow.start(view.statement)
                    for value in dataflow.collector.aug_values.get((scope, part.value), ())):
                return f"`{part.value}` may be bound again after {made}"
        if view.kind in (RESHAPE, RAVEL):
            reason = self._reshape_is_view(view, made)
            if reason is not None:
                return reason
        if isinstance(scope, GlobalScope) and any(
                True for _ in dataflow._accesses_from_nested_scopes(scope, view.name)):
            return f"`{view.name}` is a module global read by functions"
        children = frozenset(v.statement for v in group if v.base.value == view.name)
        escape = dataflow._escape(scope, view.name, at, skip=at, excused=children)
        if escape is not None:
            return f"{made} is also reachable through `{code_of(escape)}`"
        return None

    def _reshape_is_view(self, view: View, made: str) -> str | None:
        """NumPy's reshape and ravel give a view only of a contiguous array (else a copy,
        which a write must not carry back): the base must be fresh from a constructor."""
        dataflow = self.dataflow
        for arg in view.index:
            if arg.keyword is not None or arg.star:
                return f"{made} passes `{code_of(arg).strip().rstrip(',')}`, which may make a copy"
            if not _static_shape(dataflow, arg.value):
                return f"{made} has a shape the analysis cannot re-evaluate"
        values, _ = dataflow.values_of(view.base)
        for value, _statement in values or [("?", None)]:
            if isinstance(value, str) or not self._c_contiguous(value):
                shown = value if isinstance(value, str) else code_of(value).strip()
                return (f"{made} is a view only if `{view.base.value}` is C-contiguous, which "
                        f"its value `{shown}` does not show (NumPy may have copied)")
        return None

    def _c_contiguous(self, value, depth: int = 0) -> bool:
        """A new C-ordered array: a constructor without `order=`, np.array of a list
        literal, or a reshape of one (`np.arange(12.0).reshape(3, 4)`)."""
        if not isinstance(value, cst.Call) or depth > 4:
            return False
        dataflow = self.dataflow
        args = list(value.args)
        if any(a.star or (a.keyword is not None and a.keyword.value == "order") for a in args):
            return False
        positional = [a for a in args if a.keyword is None]
        ref = dataflow.collector.ref_by_call.get(value)
        if ref is None:
            func = value.func
            return isinstance(func, cst.Attribute) and func.attr.value == "reshape" \
                and all(_static_shape(dataflow, a.value) for a in args) \
                and self._c_contiguous(func.value, depth + 1)
        if ref.qualname in LITERAL_CONSTRUCTORS:
            return len(positional) <= 2 and bool(positional) and isinstance(
                positional[0].value, (cst.List, cst.Tuple, cst.ListComp))
        limit = C_CONTIGUOUS_CONSTRUCTORS.get(ref.qualname)
        return limit is not None and len(positional) <= limit

    def _read_after(self, scope, name: str, at: cst.CSTNode) -> bool:
        """Whether `name` may be read after the write `at` (later, or in a loop around both)."""
        dataflow = self.dataflow
        accesses = set(scope.accesses[name]) if name in scope.accesses else set()
        for assignment in scope.assignments[name] if name in scope.assignments else ():
            accesses.update(assignment.references)
        return any(dataflow._before_or_looping(at, access.node) for access in accesses)

    def _dominates(self, statement: cst.CSTNode, at: cst.CSTNode) -> bool:
        """Whether `statement` runs before `at` every time `at` runs: it comes earlier in a
        block that holds `at`, in the same function."""
        parents = self.dataflow.parents
        line = parents.get(statement)
        block = parents.get(line)
        node, parent = at, parents.get(at)
        while parent is not None and parent is not block:
            if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            node, parent = parent, parents.get(parent)
        if parent is None:
            return False
        body = list(getattr(block, "body", ()))
        return line in body and node in body and body.index(line) < body.index(node)


def _integer(element: cst.SubscriptElement) -> bool:
    """An index element that selects one position (not a slice, `...` or None)."""
    index = element.slice
    return isinstance(index, cst.Index) and not isinstance(index.value, cst.Ellipsis) and not (
        isinstance(index.value, cst.Name) and index.value.value == "None")


def _names_in(index: tuple) -> list[cst.Name]:
    found: list = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if node.value not in ("None", "True", "False"):
                found.append(node)

    for element in index:
        element.visit(_Names())
    return found


def _static_shape(dataflow, node) -> bool:
    """A shape argument made of numbers (`2, 5`, `(-1, 2)`, `n`)."""
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(_static_shape(dataflow, e.value) for e in node.elements)
    return dataflow.is_scalar(node)
