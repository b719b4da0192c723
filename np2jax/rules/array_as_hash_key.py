"""NJ113 array-as-hash-key.

A JAX array, or an element of one, hashed by plain Python (set, frozenset, Counter,
dict.fromkeys, a dict key, a set member) is given as Python numbers (.tolist(), .item()):
JAX arrays and their elements are unhashable, NumPy's scalars hash like Python numbers.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.dtypes import DTYPES
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, updates

MEMBER = "a dict key or set member"
# decorators whose function keeps a dict keyed by its arguments
CACHES = frozenset({"functools.lru_cache", "functools.cache"})
_CACHES = frozenset({"lru_cache", "cache"})
# calls that hash every member of their first argument: qualified name -> how it is spelled
HASHING_CALLS = {"builtins.set": "set", "builtins.frozenset": "frozenset",
                 "collections.Counter": "Counter"}
# `receiver.update(values)` hashes every member when the receiver holds one of these
UPDATED = frozenset({"builtins.set", "collections.Counter"})
DICTS = frozenset({"builtins.dict", "collections.Counter", "collections.defaultdict",
                   "collections.OrderedDict"})
SETS = frozenset({"builtins.set", "builtins.frozenset"})
# what a call must be spelled as (or an alias an import binds) to be asked about
_SPELLINGS = frozenset(name.rsplit(".", 1)[1] for name in HASHING_CALLS)
_DICT = frozenset({"dict"})
# the builtins the rule looks through: sorted(x), enumerate(x), range(n)...
_BUILTINS = frozenset({"sorted", "list", "tuple", "reversed", "enumerate", "range", "zip", "map"})
# methods hashing their first argument, by the container they are called on
KEY_METHODS = {"dict": frozenset({"get", "setdefault", "pop"}),
               "set": frozenset({"add", "discard", "remove"})}
# builtins giving the members of their argument in a list, or one by one: what they give
# hashes as the argument's members do
PASS_THROUGH = frozenset({"builtins.sorted", "builtins.list", "builtins.tuple",
                          "builtins.reversed"})

TOLIST = "rewritten to `{}`: Python numbers, which hash and compare equal to NumPy's scalars"
ITEM = "rewritten to `{}`: a Python number, which hashes and compares equal to NumPy's scalar"
NARROW = ("left as it is: its elements are {dtype}, whose arithmetic Python numbers do not "
          "share (no wrapping), should a key be computed with later; pass `.tolist()` or "
          "`.item()` where that cannot matter")
OTHER_USES = ("left as it is: the comprehension uses `{name}` for more than the key (Python "
              "numbers would compute there); iterate over `{array}.tolist()` if they compute the same")
NOT_ELEMENT = ("left as it is: give the key as Python numbers (`.item()` for one element, "
               "`tuple(x.tolist())` for several)")
TUPLES = ("left as it is: its members are tuples of the array's elements, 0-d JAX arrays, "
          "which do not hash; give them as Python numbers (`map(tuple, x.tolist())`, "
          "`zip(*(i.tolist() for i in ...))`)")
HELD = ("left as it is: it holds elements of a JAX array, 0-d JAX arrays, which do not "
        "hash; make them Python numbers where they are taken (`y[i].item()`, `x.tolist()`)")
MAY_BE = ("left as it is: `{name}` may be a JAX array (one of its bindings, or what a caller "
          "passes for it, is one); key with Python numbers (`int(...)`, `.item()`)")
LOOP = ("left as it is: `{name}` is a 0-d JAX array at each turn of the loop over `{array}`; "
        "iterate over `{array}.tolist()` if the loop's other uses of it compute the same on "
        "Python numbers, or key with `{name}.item()`")


def _narrow(dtype: str | None) -> bool:
    """Elements whose arithmetic a Python number does not share: bool and the types under
    64 bits (np.uint8(200) * 2 wraps; 200 * 2 does not)."""
    return dtype in DTYPES and (DTYPES[dtype][0] == "b" or DTYPES[dtype][1] < 64)


def _positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


def _tolist(node: cst.BaseExpression) -> cst.Call:
    return updates.call(updates.attr(updates.parenthesized(node), "tolist"))


def _item(node: cst.BaseExpression) -> cst.Call:
    return updates.call(updates.attr(updates.parenthesized(node), "item"))


def _names_in(node: cst.CSTNode, name: str) -> list[cst.Name]:
    found = []

    def walk(n: cst.CSTNode) -> None:
        if isinstance(n, cst.Name) and n.value == name:
            found.append(n)
        elif not isinstance(n, cst.Attribute):
            for child in n.children:
                walk(child)
        else:
            walk(n.value)  # `x.v` does not read v

    walk(node)
    return found


class ArrayAsHashKey(Rule):
    code = "NJ113"

    def run(self):
        """Where a value the analysis knows to be a JAX array once converted meets Python's
        hashing: its members (set, frozenset, Counter, dict.fromkeys, Counter/set .update, a
        dict or set comprehension over it) become `.tolist()`; one element used as a key
        (`d[x[i]]`, `x[i] in seen`, `seen.add(x[i])`) becomes `.item()`. The rest is
        reported: keys computed from elements, loop variables over an array."""
        self.flow = self.analysis.dataflow
        self.done: set = set()  # comprehensions and keys already judged
        for call in self.analysis.nodes(cst.Call):
            hashed = self._hashing_call(call)
            if hashed is not None:
                consumer, members = hashed
                yield from self._members(members, consumer)
        for comprehension in self.analysis.nodes(cst.DictComp) + self.analysis.nodes(cst.SetComp):
            if comprehension not in self.done:
                key = comprehension.key if isinstance(comprehension, cst.DictComp) \
                    else comprehension.elt
                found = list(self._comprehension(comprehension, key))
                if found:
                    self.done.add(comprehension)
                yield from found
        for key, consumer in self._keys():
            if key not in self.done:
                self.done.add(key)
                yield from self._key(key, consumer)

    # --- the members of a value ---------------------------------------------------------
    def _hashing_call(self, call: cst.Call) -> tuple[str, cst.BaseExpression] | None:
        """(how the consumer is spelled, the argument whose members it hashes), or None."""
        positional = _positional(call)
        if not positional or call.args[0].keyword is not None or call.args[0].star:
            return None
        func = call.func
        names = self.analysis.qualified_names(func, _SPELLINGS)
        if len(names) == 1 and (name := next(iter(names))) in HASHING_CALLS:
            return f"{HASHING_CALLS[name]}(...)", positional[0]
        if self.analysis.qualified_names(func, _DICT) == {"builtins.dict"} and len(call.args) == 1 \
                and isinstance(positional[0], cst.Call) \
                and self._builtin(positional[0].func) == "builtins.zip" and _positional(positional[0]):
            return "dict(zip(...))", _positional(positional[0])[0]  # its first items are keys
        if isinstance(func, cst.Attribute) and func.attr.value == "fromkeys" \
                and self.analysis.qualified_names(func.value, _DICT) == {"builtins.dict"}:
            return "dict.fromkeys(...)", positional[0]
        if isinstance(func, cst.Attribute) and func.attr.value == "update" \
                and len(call.args) == 1 and self.flow.container_type(func.value) in UPDATED:
            return f"{code_of(func)}(...)", positional[0]
        return None

    def _members(self, value: cst.BaseExpression, consumer: str):
        if isinstance(value, cst.GeneratorExp):  # set(v for v in x)
            self.done.add(value)
            yield from self._comprehension(value, value.elt, consumer)
            return
        if isinstance(value, cst.Call) and self._builtin(value.func) in ("builtins.zip", "builtins.map"):
            # set(zip(*np.nonzero(m))), set(map(tuple, points)): tuples of elements
            parts = [a.value for a in value.args if a.keyword is None]
            parts = parts[1:] if self._builtin(value.func) == "builtins.map" else parts
            for part in parts:
                ref = self.analysis.ref_of_call(part) if isinstance(part, cst.Call) else None
                if self.flow.jax_typed(part) or ref is not None and ref.converted:  # np.nonzero(m)
                    requires = self.flow.jax_refs(part) or (ref.node,)
                    yield self.report(part, requires=requires, argument=code_of(part),
                                      consumer=consumer, outcome=TUPLES)
                    return
            return
        array = self._iterated(value)
        if array is not None:
            yield self._fix(array, consumer, _tolist, TOLIST)
            return
        held = self._held(value)
        if held is not None:  # Counter(labels), labels = [y[i] for i in nearest]
            yield self.report(value, requires=self.flow.jax_refs(held), argument=code_of(value),
                              consumer=consumer, outcome=HELD)

    def _held(self, value, depth: int = 0) -> cst.BaseExpression | None:
        """A JAX value among the items of `value`: a list, tuple or comprehension holding
        one (`[y[i] for i in idx]`), `list(x)`/`tuple(x)`/`sorted(x)` of a JAX array, or a
        name bound once to one of those."""
        flow = self.flow
        if depth > 3:
            return None
        if isinstance(value, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            # `tuple(round(x, 8) for x in combo)`, combo from itertools.product of a JAX array
            return value.elt if flow.jax_typed(value.elt) or flow.may_be_jax(value.elt) else None
        if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            return next((e.value for e in value.elements
                         if isinstance(e, cst.Element) and flow.jax_typed(e.value)), None)
        if isinstance(value, cst.Call) and self._builtin(value.func) in PASS_THROUGH:
            positional = _positional(value)
            if len(positional) == 1 and isinstance(positional[0], cst.Name):
                loop = self._loop_over_array(positional[0])  # tuple(row), for row in pts
                if loop is not None:
                    return loop
            if len(positional) == 1 and isinstance(positional[0], (cst.ListComp, cst.GeneratorExp)):
                return self._held(positional[0], depth + 1)
            return self._iterated(value)
        if isinstance(value, cst.Name):  # any of its bindings (`key` bound in two loops)
            values, _ = flow.name_values(value)
            return next((held for bound, _ in flow.live_bindings(value, values)
                         if isinstance(bound, cst.CSTNode)
                         and (held := self._held(bound, depth + 1)) is not None), None)
        return None

    def _iterated(self, value: cst.BaseExpression) -> cst.BaseExpression | None:
        """The JAX array whose members `value` gives, one by one: the value itself, or the
        argument of sorted(...), list(...), tuple(...), reversed(...) (sorted with no key:
        Python numbers sort as NumPy's scalars do)."""
        if isinstance(value, cst.Call) and self._builtin(value.func) in PASS_THROUGH:
            positional = _positional(value)
            if len(positional) != 1 or len(value.args) > 2 or any(
                    a.keyword is not None and a.keyword.value != "reverse" for a in value.args):
                return None
            value = positional[0]
        return value if self.flow.jax_typed(value) else None

    def _builtin(self, func: cst.BaseExpression) -> str | None:
        names = self.analysis.qualified_names(func, _BUILTINS)
        name = next(iter(names)) if len(names) == 1 else None
        return name if name is not None and name.startswith("builtins.") else None

    # --- comprehensions -----------------------------------------------------------------
    def _comprehension(self, comprehension, key: cst.BaseExpression, consumer: str | None = None):
        """`{v: i for i, v in enumerate(x)}`, `{v for v in x}`, `set(v for v in x)`: the key
        is an element of a JAX array. The iterable becomes `x.tolist()` when the element is
        used only where a Python number behaves as NumPy's scalar: as the key itself, an
        operand of a comparison, or a condition."""
        clause = comprehension.for_in
        while clause is not None:
            clause_now, clause = clause, clause.inner_for_in
            hashed = [(array, name, uses) for array, name in self._elements(clause_now.iter, clause_now.target)
                      for uses in [[n for n in _names_in(comprehension, name)
                                    if not self._in(n, clause_now.target)]]
                      if any(self._in(n, key) for n in uses)]
            if not hashed:
                continue  # no element is hashed
            array, name, uses = hashed[0]
            where = consumer or ("a dict comprehension's key" if isinstance(
                comprehension, cst.DictComp) else "a set comprehension")
            if all(self._plain_use(n, key) for n in uses):
                yield self._fix(array, where, _tolist, TOLIST)
            else:
                yield self.report(array, requires=self.flow.jax_refs(array),
                                  argument=code_of(array), consumer=where,
                                  outcome=OTHER_USES.format(name=name, array=code_of(array)))

    def _elements(self, iterable, target) -> list[tuple[cst.BaseExpression, str]]:
        """(a JAX array, the name its elements are bound to) for `for v in x`, `for i, v in
        enumerate(x)` (also over sorted(x)...) and each array of `for k, c in zip(x, y)`."""
        if isinstance(iterable, cst.Call) and self._builtin(iterable.func) == "builtins.enumerate":
            positional = _positional(iterable)
            if len(positional) != 1 or not (isinstance(target, cst.Tuple)
                                            and len(target.elements) == 2):
                return []
            iterable, target = positional[0], target.elements[1].value
        if isinstance(iterable, cst.Call) and self._builtin(iterable.func) == "builtins.zip":
            positional = _positional(iterable)
            if not (isinstance(target, cst.Tuple) and len(target.elements) == len(positional)
                    == len(iterable.args)):
                return []
            return [(array, element.value.value) for element, part in zip(target.elements, positional)
                    if isinstance(element.value, cst.Name)
                    and (array := self._iterated(part)) is not None]
        if isinstance(target, cst.Tuple) and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name)
                                                 for e in target.elements):
            array = self._iterated(iterable)  # `for y, x in np.argwhere(m)`: a row's elements
            return [(array, e.value.value) for e in target.elements] if array is not None else []
        if not isinstance(target, cst.Name):
            return []
        array = self._iterated(iterable)
        return [(array, target.value)] if array is not None else []

    def _in(self, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
        while node is not None:
            if node is ancestor:
                return True
            node = self.analysis.parents.get(node)
        return False

    def _plain_use(self, name: cst.Name, key: cst.BaseExpression) -> bool:
        parent = self.analysis.parents.get(name)
        if name is key or isinstance(parent, cst.CompIf):
            return True
        if isinstance(parent, cst.ComparisonTarget):
            return not isinstance(parent.operator, (cst.Is, cst.IsNot))
        return isinstance(parent, cst.Comparison) and parent.left is name

    # --- one key ------------------------------------------------------------------------
    def _keys(self):
        """(expression, what hashes it) for every expression Python hashes as a key or a
        member: `d[k]` (d a dict), `k in s` (s a set or a dict), `s.add(k)`, `d.get(k)`...,
        dict and set displays, the keys of comprehensions, the arguments of a function
        with a cache (`@functools.lru_cache`)."""
        flow = self.flow
        for subscript in self.analysis.nodes(cst.Subscript):
            if flow.container_type(subscript.value) in DICTS and len(subscript.slice) == 1 \
                    and isinstance(subscript.slice[0].slice, cst.Index):
                yield subscript.slice[0].slice.value, MEMBER
        for comparison in self.analysis.nodes(cst.Comparison):
            if len(comparison.comparisons) == 1 and isinstance(
                    comparison.comparisons[0].operator, (cst.In, cst.NotIn)):
                container = comparison.comparisons[0].comparator
                if isinstance(container, (cst.Set, cst.Dict, cst.SetComp, cst.DictComp)) \
                        or flow.container_type(container) in DICTS | SETS:
                    yield comparison.left, MEMBER
        for call in self.analysis.nodes(cst.Call):
            func = call.func
            if not isinstance(func, cst.Attribute) or not _positional(call):
                continue
            kind = flow.container_type(func.value)
            family = "dict" if kind in DICTS or func.attr.value == "setdefault" \
                else "set" if kind in SETS else None  # only dicts have setdefault
            if family is not None and func.attr.value in KEY_METHODS[family]:
                yield _positional(call)[0], MEMBER
        for display in self.analysis.nodes(cst.Dict) + self.analysis.nodes(cst.Set):
            for element in display.elements:
                if isinstance(element, cst.DictElement):
                    yield element.key, MEMBER
                elif isinstance(element, cst.Element):
                    yield element.value, MEMBER
        for comprehension in self.analysis.nodes(cst.DictComp):
            yield comprehension.key, MEMBER
        for comprehension in self.analysis.nodes(cst.SetComp):
            yield comprehension.elt, MEMBER
        cached = self._cached_functions()
        for call in self.analysis.nodes(cst.Call) if cached else ():
            if isinstance(call.func, cst.Name) and call.func.value in cached:
                for argument in call.args:  # the cache's key: every argument
                    if not argument.star:
                        yield argument.value, f"the cache of `{call.func.value}` (its arguments are its keys)"

    def _cached_functions(self) -> set[str]:
        """The module's functions decorated with functools.lru_cache or functools.cache
        (`@lru_cache(maxsize=None)` too), by name: their arguments are a dict's keys."""
        found = set()
        for statement in self.analysis.module.body:
            if not isinstance(statement, cst.FunctionDef):
                continue
            for decorator in statement.decorators:
                spelled = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) \
                    else decorator.decorator
                if self.analysis.qualified_names(spelled, _CACHES) & CACHES:
                    found.add(statement.name.value)
        return found

    def _key(self, key: cst.BaseExpression, consumer: str = MEMBER):
        flow = self.flow
        if isinstance(key, cst.Tuple):  # `seen.add((y, x))`: each item is hashed
            for element in key.elements:
                if isinstance(element, cst.Element) and element.value not in self.done:
                    self.done.add(element.value)
                    yield from self._key(element.value, consumer)
            return
        if isinstance(key, cst.Name) and (comprehension := self._comprehension_of(key)) is not None:
            # `[names[i] for i in np.argsort(x)]`: judged with the comprehension binding it
            if comprehension not in self.done:
                self.done.add(comprehension)
                yield from self._comprehension(comprehension, key, consumer)
            return
        loop = self._loop_over_array(key) if isinstance(key, cst.Name) else None
        if flow.jax_typed(key) and loop is None:
            if self._element_of_array(key):
                yield self._fix(key, consumer, _item, ITEM)
            else:
                yield self.report(key, requires=flow.jax_refs(key), argument=code_of(key),
                                  consumer=consumer, outcome=NOT_ELEMENT)
            return
        if isinstance(key, (cst.Call, cst.GeneratorExp)):  # seen.add(tuple(round(x, 8) for x in p))
            held = self._held(key)
            if held is not None:
                yield self.report(key, requires=flow.jax_refs(held), argument=code_of(key),
                                  consumer=consumer, outcome=HELD)
            return
        if isinstance(key, cst.Name):
            if loop is not None and loop not in self.done:
                self.done.add(loop)  # once for the loop
                yield self.report(key, requires=flow.jax_refs(loop), argument=code_of(key),
                                  consumer=consumer,
                                  outcome=LOOP.format(name=key.value, array=code_of(loop)))
                return
            if loop is not None:
                return
            held = self._held(key)
            if held is not None:  # key = tuple(row), row a JAX array's row
                yield self.report(key, requires=flow.jax_refs(held), argument=code_of(key),
                                  consumer=consumer, outcome=HELD)
                return
            requires = self._may_be_jax(key)
            if requires:  # state = 0, later state = table[state, 0]; a helper's parameter
                yield self.report(key, requires=requires, argument=code_of(key),
                                  consumer=consumer, outcome=MAY_BE.format(name=key.value))

    def _may_be_jax(self, name: cst.Name) -> tuple:
        """The converted references by which `name` may be a JAX array: one of its live
        bindings is one, or some call of its function passes one for it."""
        flow = self.flow
        if flow.parameter_may_be_jax(name):
            return flow.parameter_may_be_jax(name)
        values, _ = flow.name_values(name)
        live = flow.live_bindings(name, values)
        for value, _statement in live:
            if isinstance(value, cst.CSTNode) and flow.jax_typed(value):
                return flow.jax_refs(value)
        if any(isinstance(statement, cst.For) for _value, statement in live):
            return flow.may_be_jax(name)  # `for k in keys`, keys = list(x) of a caller's
        return ()

    def _comprehension_of(self, name: cst.Name):
        """The comprehension whose `for` binds `name`, or None."""
        binding = self.flow.comprehension_binding(name)
        return binding[0] if binding is not None else None

    def _element_of_array(self, key: cst.BaseExpression) -> bool:
        """`x[i]`, `x[i, j]`: integer indices only (each a Python integer), so one element
        where NumPy gives a scalar."""
        return isinstance(key, cst.Subscript) and all(
            isinstance(e.slice, cst.Index) and e.slice.star is None
            and not isinstance(e.slice.value, cst.Float)
            and (self.flow.is_scalar(e.slice.value) or self._counter(e.slice.value))
            for e in key.slice)

    def _counter(self, name: cst.BaseExpression) -> bool:
        """A comprehension's variable over range(...): `{x[j]: j for j in range(n)}`."""
        iterated = self.flow.comprehension_iter(name) if isinstance(name, cst.Name) else None
        return isinstance(iterated, cst.Call) and self._builtin(iterated.func) == "builtins.range"

    def _loop_over_array(self, name: cst.Name) -> cst.BaseExpression | None:
        """The JAX array a `for` statement binds `name` to the elements of, when every binding
        of the name is such a loop."""
        values, _ = self.flow.name_values(name)
        arrays = []
        for _value, statement in values:
            if not isinstance(statement, cst.For):
                return None
            found = [array for array, bound in self._elements(statement.iter, statement.target)
                     if bound == name.value]
            if not found:
                return None
            arrays.append(found[0])
        return arrays[0] if arrays else None

    # --- the finding --------------------------------------------------------------------
    def _fix(self, node: cst.BaseExpression, consumer: str, build, outcome: str):
        dtype = self.analysis.dtypes.dtype_of(node)
        requires = self.flow.jax_refs(node)
        if _narrow(dtype):
            return self.report(node, requires=requires, argument=code_of(node), consumer=consumer,
                               outcome=NARROW.format(dtype=dtype))
        return self.report(node, fix=build, requires=requires, argument=code_of(node),
                           consumer=consumer, outcome=outcome.format(code_of(build(node))),
                           report_if_unfixed=False)
