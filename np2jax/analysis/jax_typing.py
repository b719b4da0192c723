"""Whether a value is a JAX array once converted, and the converted references that answer
relies on: `Values.jax_typed`, `jax_refs` and `may_be_jax` ask one `JaxTyping` each. It
follows names to their bindings, calls to what module functions return, loops to the items
of what they iterate, and parameters to what the module's calls pass."""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.facts import CONTAINER, ELEMENTWISE_COMPARISONS, UNKNOWN
from np2jax.syntax import integer_index, unpacked_position

# builtins giving a value of their first argument's type (a 0-d JAX array of a JAX array)
_SAME_TYPE_BUILTINS = frozenset({"builtins.round", "builtins.abs"})
# Sequence results holding a Python number beside arrays in NumPy (lstsq's rank, polyfit's
# rcond with full=True)
_NUMBER_ITEMS = frozenset({"numpy.linalg.lstsq", "numpy.polyfit"})
# index grids: np.mgrid[...] one array, np.ogrid[...] a list of them
_GRIDS = frozenset({"numpy.mgrid", "numpy.ogrid"})
# index expressions that make one array (`np.r_[[1, 2], [3]]`, `np.c_[a, b]`)
_CONCATENATORS = frozenset({"numpy.r_", "numpy.c_"})
# attributes of a JAX array that are JAX arrays too (not .shape, .dtype, .size...)
_ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "at"})
# builtins whose result gives their argument's items, one by one (JaxTyping._elements)
_ITEM_KEEPING = frozenset({"builtins.list", "builtins.tuple", "builtins.sorted", "builtins.reversed"})
# iterators of tuples of their arguments' elements (JaxTyping._combined_items)
_COMBINING = frozenset({"builtins.zip", "itertools.product", "itertools.combinations",
                        "itertools.permutations", "itertools.combinations_with_replacement"})


class JaxTyping:
    """One `Values.jax_typed` question: whether a value is a JAX array once converted, and
    the converted references that answer relies on. Each node is judged once; a node met
    again while being judged (a cycle: `x = x + 1`, recursion) counts as not JAX, which
    only ever makes the answer more cautious. `flow` is the module's
    `np2jax.analysis.values.Values`."""

    def __init__(self, flow, certain: bool, some: bool = False) -> None:
        self.flow = flow
        self.certain = certain
        self.some = some  # may_be_jax: one path giving a JAX array is enough
        self.seen: dict = {}

    def of(self, value) -> tuple[bool, frozenset]:
        if isinstance(value, str) or value is None:
            return False, frozenset()
        if value not in self.seen:
            self.seen[value] = (False, frozenset())  # a cycle: not (yet) known to be JAX
            self.seen[value] = self._judge(value)
        return self.seen[value]

    def _all(self, values) -> tuple[bool, frozenset]:
        refs: set = set()
        values = list(values)
        found = False
        for value in values:
            typed, relied = self.of(value)
            if not typed and not self.some:
                return False, frozenset()
            found |= typed
            refs |= relied
        return bool(values) and found, frozenset(refs)

    def _judge(self, value) -> tuple[bool, frozenset]:
        flow = self.flow
        no = (False, frozenset())
        if isinstance(value, cst.Call):
            # `rng.uniform(...)` of a state NJ302 converts, `np.random.randn(...)` of NumPy's
            # global state NJ301 converts: its fix is on the draw (left out: NumPy's)
            if value in flow.draws_on_jax():
                return True, frozenset({value})
            ref = flow.collector.ref_by_call.get(value)
            if ref is not None:
                return (True, frozenset({ref.node})) if self._array_call(ref) else no
            function = flow.module_function(value) or flow.module_method(value)
            if function is not None:
                if function in flow.collector.kept_functions:
                    return no  # kept on NumPy (NJ104): NumPy's values, its arguments read so
                return self._all(flow.function_returns(function) or ())
            effects = flow.tree_function_effects(value)
            if effects is not None and effects[0]:
                return True, frozenset()  # another module's function giving new JAX arrays
            func = value.func
            if self.some and isinstance(func, cst.Name) and self._parameter_name(func):
                # `f(x)`, f a function the caller passes (np.exp, a lambda): of a JAX array,
                # it may give one
                return self._all(a.value for a in value.args if not a.star)
            builtin = flow.collector.qualified_names(func) if isinstance(func, cst.Name) else set()
            if builtin & _SAME_TYPE_BUILTINS and value.args and not value.args[0].star:
                return self.of(value.args[0].value)  # round(m, 1), abs(d): a JAX array of one
            if builtin & {"builtins.max", "builtins.min"} and len(value.args) > 1 \
                    and not any(a.star or a.keyword for a in value.args):
                return self._all(a.value for a in value.args)  # max(a, b): one of them
            if isinstance(func, cst.Name) and func.value == "sum" and value.args \
                    and flow.collector.qualified_names(func) == {"builtins.sum"}:
                # sum(x), sum(x[i:] * w[i] for i in ...): Python's + of JAX arrays
                summed = value.args[0].value
                if isinstance(summed, (cst.GeneratorExp, cst.ListComp)):
                    summed = summed.elt
                return self.of(summed)
            if isinstance(func, cst.Attribute) and func.attr.value not in flow.sequence_methods:
                return self.of(func.value)
            return no
        if isinstance(value, cst.BinaryOperation):
            if flow.value_kind(value) == CONTAINER:
                return no  # [0] * n: a list, whatever n is
            left, right = self.of(value.left), self.of(value.right)
            return left if left[0] else right
        if isinstance(value, cst.UnaryOperation):
            return self.of(value.expression)
        if isinstance(value, cst.Comparison) and len(value.comparisons) == 1 and isinstance(
                value.comparisons[0].operator, ELEMENTWISE_COMPARISONS):  # not `is`, `in`
            left, right = self.of(value.left), self.of(value.comparisons[0].comparator)
            return left if left[0] else right
        if isinstance(value, cst.IfExp):
            return self._all((value.body, value.orelse))
        if isinstance(value, cst.Attribute):
            if value.attr.value in _ARRAY_ATTRIBUTES:
                return self.of(value.value)
            if self.some and isinstance(value.value, cst.Name) and value.value.value == "self":
                bindings, _ = flow.values_of(value)  # `self.a = w if w is not None else np.ones(2)`
                return self._all(v for v, _ in bindings or () if not isinstance(v, str))
            return no
        if isinstance(value, cst.Subscript):
            ref = flow.collector.ref_by_node.get(value.value)
            if ref is not None and ref.converted and ref.qualname in _CONCATENATORS:
                return True, frozenset({ref.node})  # jnp.r_[...]: one JAX array
            if self.some and isinstance(value.value, cst.Name):
                scope, _, _ = flow.name_bindings(value.value)  # losses.append(loss); losses[-1]
                added = self._all(flow.appended(scope, value.value.value)) if scope is not None \
                    else (False, frozenset())
                if added[0]:
                    return added
            items = self._items_of(value.value)
            if items is not None:  # np.nonzero(m)[0], np.mgrid[0:4, 0:5]
                return items if integer_index(value) is not None or self._grid(value.value) else no
            if integer_index(value) is not None and isinstance(value.value, cst.Name):
                items = self._sequence_name(value.value)
                if items is not None:  # g = np.ogrid[0:4, 0:5]; g[0]
                    return items
            return self.of(value.value)
        if isinstance(value, cst.Name):
            iterated = flow.comprehension_iter(value)
            if iterated is not None:  # `[r.is_integer() for r in x]`: x's elements, or rows
                return self._elements(iterated) if self.some else self.of(iterated)
            values, _ = flow.name_values(value)
            return self._all_bindings(value.value, flow.live_bindings(value, flow.reaching_bindings(value, values)))
        return no

    def _parameter_name(self, name: cst.Name) -> bool:
        """`name` is bound only as a parameter of its function."""
        values, aug_values = self.flow.name_values(name)
        return bool(values) and not aug_values and all(bound == "param" for bound, _ in values)

    def _all_bindings(self, name: str, values) -> tuple[bool, frozenset]:
        # `u = step(u, r)` with step returning u: u holds what it held before
        values = [(v, s) for v, s in values if not self.flow.passes_through(v, name)]
        if not values:
            return False, frozenset()
        refs: set = set()
        found = False
        for bound, statement in values:
            if bound == "param":
                typed, relied = self._parameter(statement)
            elif bound == UNKNOWN and isinstance(statement, cst.For):
                typed, relied = self._iterated(statement, name)
            elif bound == UNKNOWN:
                typed, relied = self._unpacked(statement, name)
            else:
                typed, relied = self.of(bound)
            if not typed and not self.some:
                return False, frozenset()
            found |= typed
            refs |= relied
        return found, frozenset(refs)

    def _array_call(self, ref) -> bool:
        flow = self.flow
        if ref.converted and (ref.entry or {}).get("kind") == "dtype" and ref.call is not None:
            return True  # jnp.float32(3.0) is a 0-d JAX array, not a NumPy scalar
        return ref.converted and (ref.entry or {}).get("kind") in ("function", "ufunc") \
            and ref.qualname not in flow.sequence_results \
            and ref.qualname not in flow.non_array_results and flow._one_array_result(ref)

    def _sequence_call(self, ref) -> bool:
        """A converted call whose result is a tuple or list of arrays (np.meshgrid,
        np.nonzero, np.unique(..., return_inverse=True)): each item is a JAX array. Not
        lstsq's rank or polyfit's rcond, Python numbers in NumPy."""
        flow = self.flow
        return ref.converted and (ref.entry or {}).get("kind") in ("function", "ufunc") \
            and ref.qualname in (flow.sequence_results | flow.maybe_sequence_results) \
            and ref.qualname not in _NUMBER_ITEMS

    def _items_of(self, value) -> tuple[bool, frozenset] | None:
        """For a converted call giving a sequence of arrays, or np.mgrid/np.ogrid (JAX
        arrays once indexed or unpacked): (True, the references relied on); else None."""
        if isinstance(value, cst.Call):
            ref = self.flow.collector.ref_by_call.get(value)
            if ref is not None and self._sequence_call(ref):
                return True, frozenset({ref.node})
            return None
        ref = self.flow.collector.ref_by_node.get(value)
        if ref is not None and ref.converted and ref.qualname in _GRIDS:
            return True, frozenset({ref.node})
        return None

    def _sequence_name(self, name: cst.Name) -> tuple[bool, frozenset] | None:
        """A name every live binding of which is a sequence of JAX arrays (`_items_of`)."""
        flow = self.flow
        values, _ = flow.name_values(name)
        live = flow.live_bindings(name, flow.reaching_bindings(name, values))
        refs: set = set()
        for bound, _statement in live or ():
            if isinstance(bound, cst.Subscript) and not self._grid(bound.value):
                items = self._items_of(bound.value)  # np.ogrid[...]
            else:
                items = self._items_of(bound) if isinstance(bound, cst.Call) else None
            if items is None:
                return None
            refs |= items[1]
        return (True, frozenset(refs)) if live else None

    def _grid(self, value) -> bool:
        """np.mgrid (one array, not a list of them as np.ogrid)."""
        ref = self.flow.collector.ref_by_node.get(value)
        return ref is not None and ref.qualname == "numpy.mgrid"

    def _iterated(self, loop: cst.For, name: str) -> tuple[bool, frozenset]:
        """`for row in X` or `for i, row in enumerate(X)`, X a JAX array: each row (or
        element, a 0-d array) is one too."""
        target, iterable = loop.target, loop.iter
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
                and iterable.func.value == "enumerate" and len(iterable.args) == 1 \
                and not iterable.args[0].star and isinstance(target, cst.Tuple) \
                and len(target.elements) == 2:
            if self.flow.collector.qualified_names(iterable.func) != {"builtins.enumerate"}:
                return False, frozenset()
            target, iterable = target.elements[1].value, iterable.args[0].value
        combined = self._combined_items(target, iterable, name) if self.some else None
        if combined is not None:
            return combined
        if not (isinstance(target, cst.Name) and target.value == name):
            return False, frozenset()
        return self._elements(iterable) if self.some else self.of(iterable)

    def _elements(self, iterable, depth: int = 0) -> tuple[bool, frozenset]:
        """Whether what iterating over `iterable` gives may be JAX (some-mode): a JAX
        array's elements and rows are; so are the items of `list(x)`, `sorted(x)`,
        `tuple(x)` or `reversed(x)` of one, of a comprehension or display holding them, of
        a name bound to one of those, and of a parameter some call passes one for."""
        found = self.of(iterable)
        if found[0] or depth > 3:
            return found
        flow = self.flow
        if isinstance(iterable, cst.Call) and iterable.args and iterable.args[0].keyword is None \
                and not iterable.args[0].star \
                and flow.collector.qualified_names(iterable.func) & _ITEM_KEEPING:
            return self._elements(iterable.args[0].value, depth + 1)
        if isinstance(iterable, (cst.ListComp, cst.GeneratorExp)):
            return self.of(iterable.elt)
        if isinstance(iterable, (cst.List, cst.Tuple)):
            return self._all(e.value for e in iterable.elements if isinstance(e, cst.Element))
        if not isinstance(iterable, cst.Name) or flow.comprehension_iter(iterable) is not None:
            return found
        scope, values, _ = flow.name_bindings(iterable)
        for bound, statement in flow.live_bindings(iterable, flow.reaching_bindings(iterable, values)):
            if bound == "param":
                passed = [a for a in flow.call_arguments(statement, every=False) or ()
                          if not self.handed_on(a, statement)]
            elif isinstance(bound, cst.CSTNode):
                passed = [bound]
            elif isinstance(statement, cst.For) and isinstance(statement.target, cst.Name) \
                    and statement.target.value == iterable.value:
                passed = self._items(statement.iter)  # `for p in pts`: p is an item of pts
            else:
                passed = []
            for typed, relied in (self._elements(a, depth + 1) for a in passed):
                if typed:
                    return True, relied
        if scope is not None and any(isinstance(v, (cst.List, cst.ListComp)) or isinstance(
                v, cst.BinaryOperation) and flow.value_kind(v) == CONTAINER for v, _ in values):
            for added in flow.appended(scope, iterable.value):  # pts.append((g, 0.5))
                typed, relied = self.of(added)
                if typed:
                    return True, relied
            for added in self._stored(scope, iterable.value):  # point[dim] = coord
                typed, relied = self.of(added)
                if typed:
                    return True, relied
        return found

    def _stored(self, scope, name: str) -> list:
        """The values `name[i] = v` stores into what `name` holds, in the scope binding it."""
        flow = self.flow
        return [statement.value for statement, subscript, _ in flow.collector.subscript_stores
                if isinstance(statement, cst.Assign) and len(statement.targets) == 1
                and statement.targets[0].target is subscript
                and isinstance(subscript.value, cst.Name) and subscript.value.value == name
                and flow.name_bindings(subscript.value)[0] is scope]

    def _items(self, iterable) -> list:
        """The expressions the code shows as items of a list: a display's elements, and for
        a name bound to displays, theirs and what is appended to it."""
        if isinstance(iterable, (cst.List, cst.Tuple)):
            return [e.value for e in iterable.elements if isinstance(e, cst.Element)]
        if not isinstance(iterable, cst.Name):
            return []
        scope, values, _ = self.flow.name_bindings(iterable)
        items = [item for value, _ in values if isinstance(value, (cst.List, cst.Tuple))
                 for item in self._items(value)]
        items += [value.elt for value, _ in values if isinstance(value, cst.ListComp)]
        if scope is not None and any(isinstance(v, cst.List) for v, _ in values):
            items += self.flow.appended(scope, iterable.value)
        return items

    def _combined_items(self, target, iterable, name: str) -> tuple[bool, frozenset] | None:
        """`for combo in itertools.product(X, repeat=2)`, `for a, b in zip(X, Y)`: tuples of
        the arguments' elements, which may be JAX where an argument may be (some-mode: a
        tuple of JAX elements is no JAX array, but what is taken from it is one)."""
        if not isinstance(iterable, cst.Call) \
                or not self.flow.collector.qualified_names(iterable.func) & _COMBINING:
            return None
        arguments = [a.value for a in iterable.args if a.keyword is None and not a.star]
        if isinstance(target, cst.Tuple) and len(arguments) > 1:
            names = [e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements]
            if name not in names or names.index(name) >= len(arguments):
                return None
            return self.of(arguments[names.index(name)])
        if isinstance(target, cst.Tuple) or (isinstance(target, cst.Name) and target.value == name):
            return next((found for found in map(self.of, arguments) if found[0]), (False, frozenset()))
        return None

    def _unpacked(self, statement, name: str) -> tuple[bool, frozenset]:
        """`lo, hi = np.percentile(x, [1, 99])`: rows of one JAX array are JAX arrays.
        `a, b = f(x)` with every return of f a tuple `(p, q)` of that length: a is JAX
        when every return's p is."""
        no = (False, frozenset())
        position = unpacked_position(statement, name)
        if position is None:
            return no
        if isinstance(statement.value, cst.Subscript):  # yy, xx = np.mgrid[0:4, 0:5]
            grid = self._items_of(statement.value.value)
            return grid if grid is not None else no
        if not isinstance(statement.value, cst.Call):
            return no
        index, count = position
        call = statement.value
        if count == 2 and self.flow.collector.qualified_names(call.func) == {"builtins.divmod"} \
                and len(call.args) == 2:
            left, right = (self.of(a.value) for a in call.args)  # q, r = divmod(total, 4)
            return left if left[0] else right
        ref = self.flow.collector.ref_by_call.get(call)
        if ref is not None:
            typed = self._array_call(ref) or self._sequence_call(ref)
            return (True, frozenset({ref.node})) if typed else no
        function = self.flow.module_function(call) or self.flow.module_method(call)
        returns = self.flow.function_returns(function) if function is not None else None
        if not returns or not all(
                isinstance(r, cst.Tuple) and len(r.elements) == count
                and not any(isinstance(e, cst.StarredElement) for e in r.elements)
                for r in returns):
            return no
        return self._all(r.elements[index].value for r in returns)

    def _parameter(self, param: cst.Param) -> tuple[bool, frozenset]:
        """A parameter of a module-level function that every call in this module passes a
        JAX array (or omits, with a JAX default): trusted only when not `certain`."""
        if self.certain:
            return False, frozenset()
        passed = self.flow.call_arguments(param, every=False) if self.some \
            else self.flow.passed_arguments(param)
        # a recursive call handing the parameter on (`walk(grid, depth - 1)`) passes what
        # the other calls pass
        passed = [a for a in passed or () if not self.handed_on(a, param)]
        return self._all(passed) if passed else (False, frozenset())

    def handed_on(self, argument, param: cst.Param) -> bool:
        """`argument` is `param` itself, read inside its own function and bound there to
        nothing else."""
        if not isinstance(argument, cst.Name) or argument.value != param.name.value:
            return False
        values, aug_values = self.flow.name_values(argument)
        return not aug_values and bool(values) and all(statement is param for _, statement in values)
