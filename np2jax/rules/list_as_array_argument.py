"""NJ110 list-as-array-argument.

A list or tuple literal where JAX wants an array is wrapped in jnp.array(...); any other
value that may be a list or tuple (np2jax.analysis.sequences: a name, an attribute, a
function's result, an item of a list or dict) in jnp.asarray(...), and a sequence of arrays
whose items may be lists has each item converted.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis import facts
from np2jax.analysis.facts import UNKNOWN
from np2jax.analysis.dtypes import is_integer
from np2jax.analysis.sequences import ARGUMENT, OPAQUE, SEQUENCE
from np2jax.analysis.shapes import static_shape
from np2jax.catalog import api_policy
from np2jax.rules.base import Rule
from np2jax.syntax import all_parameters, argument_for, code_of, updates
from np2jax.syntax.walk import walk

_MAY_BE_LIST = (SEQUENCE, ARGUMENT)
# operators Python lacks for lists: with one, the other operand was an array
_ARRAY_ONLY_OPERATORS = (cst.Subtract, cst.Divide, cst.FloorDivide, cst.Power,
                         cst.MatrixMultiply)

_SEQUENCE_LITERALS = (cst.List, cst.Tuple, cst.ListComp)
# `q /= norm` of a list: operators Python lacks for lists, which NumPy's array computed
_ARRAY_ONLY_AUGMENTED = (cst.SubtractAssign, cst.DivideAssign, cst.FloorDivideAssign,
                         cst.PowerAssign, cst.MatrixMultiplyAssign)


def _is_int_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer) or (
        isinstance(node, cst.Name) and node.value in ("True", "False"))


class ListAsArrayArgument(Rule):
    code = "NJ110"

    def run(self):
        lists = api_policy()["lists"]
        structural = set(lists["nested_lists_are_structure"])
        writers = set(api_policy()["in_place_functions"])
        # np.shape, np.ndim, np.isscalar...: JAX's take what NumPy's take (lists too), and
        # read the value's Python type: a value that is no literal is given as it is
        inspecting = set(api_policy()["non_array_results"])
        sequences = self.analysis.sequences
        for ref in self.analysis.refs:
            if not ref.jax_takes_arguments:
                continue
            static = set(lists["static_parameters"].get(ref.qualname, ()))
            writes = ref.qualname in writers or ref.out_arg is not None \
                or ref.qualname in inspecting
            data = _data_parameter(ref)
            for argument in ref.arguments:
                value = argument.arg.value
                if argument.name in static:
                    continue  # jnp.pad(x, (1, 2)): JAX wants the Python sequence itself
                literal = isinstance(value, _SEQUENCE_LITERALS) or self._built_list(value)
                if argument.role == "array":
                    if literal:
                        yield self._wrap(value, ref)
                    elif not writes and not self._parameter_read(value):
                        # The data argument (`np.sum(x)`) takes a value nothing shows the
                        # kind of through jnp.asarray too: free on an array, NumPy's
                        # conversion of a list; None there is an error in NumPy as well.
                        # Not in a module importing pandas or torch: np.sum(frame) is the
                        # frame's own sum, which an array of it would not give.
                        first = argument.name == data
                        kind = sequences.kind(value, none_blocks=not first)
                        if kind in _MAY_BE_LIST or (kind == OPAQUE and first
                                                    and not sequences.array_libraries):
                            yield self._wrap(value, ref, "asarray")
                elif argument.role == "arrays" and ref.qualname not in structural:
                    if isinstance(value, (cst.List, cst.Tuple)):
                        # A sequence of arrays: JAX wants each member to be an array.
                        for element in value.elements:
                            member = element.value
                            if isinstance(element, cst.StarredElement):
                                continue
                            if isinstance(member, _SEQUENCE_LITERALS):
                                yield self._wrap(member, ref)
                            elif sequences.kind(member) in _MAY_BE_LIST:
                                yield self._wrap(member, ref, "asarray")
                    elif not writes and sequences.items_kind(value) in _MAY_BE_LIST:
                        yield self._wrap_items(value, ref)

        yield from self._operands()
        yield from self._list_indices()
        yield from self._lists_handed_to_an_index()

    def _operands(self):
        """`self.w * x`, `x - [1.0, 2.0]`, `x == w`: a list or tuple meeting a JAX array
        through an operator. NumPy's operator converts the list; JAX's raises TypeError (or,
        for `==`, compares identities). Wrapped when the other operand is known to be a JAX
        array, or the operator is one Python lacks for lists (`-`, `/`, `**`, `@`); with a
        number or another list, Python's own operators apply in both programs (`w * 2`
        repeats the list), so `w * x` with `x` of unknown kind is reported and left. Only a
        value the module shows to be a list counts; a parameter is NJ112's
        (parameter-as-array-operand)."""
        dataflow = self.analysis.dataflow
        sequences = self.analysis.sequences
        operations = list(self.analysis.operations)
        recorded = {node for node, _, _ in operations}
        # the collector keeps operations with a name or subscript on a side; a list is also
        # met as an attribute of a call (`Model().w * x`)
        operations += [(node, node.left, node.right) for node in self.analysis.nodes(cst.BinaryOperation)
                       if node not in recorded]
        for node, left, right in operations:
            if isinstance(node, cst.AugAssign) and not isinstance(node.target, cst.Name):
                continue  # `a[i] += v`, `self.w += v`: the in-place rules rewrite them whole
            if isinstance(node, cst.AugAssign) and isinstance(node.operator, _ARRAY_ONLY_AUGMENTED) \
                    and sequences.kind(node.target) == SEQUENCE and not self._parameter_read(node.target) \
                    and dataflow.jax_typed(node.value):
                yield self._augmented(node)
                continue
            for operand, other in ((left, right), (right, left)):
                if isinstance(node, cst.AugAssign) and operand is node.target:
                    continue  # `rows += x` extends the list, in both programs
                literal = isinstance(operand, _SEQUENCE_LITERALS)
                # only what the module shows to be a list: a value stored from a parameter
                # (`self.lr * g`) is most often a number, which an operator takes as it is;
                # an array's `.shape` is a tuple (`idx < f.shape`)
                if not literal and not _shape_of(operand) and (
                        self._parameter_read(operand) or sequences.kind(operand) != SEQUENCE):
                    continue
                constructor = "array" if literal else "asarray"
                other_dtype = self.analysis.dtypes.dtype_of(other)
                if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply) \
                        and other_dtype is None and dataflow.value_kind(other) != facts.SCALAR \
                        and static_shape(dataflow, other) == () and dataflow.jax_typed(other):
                    # `column * outer`, outer = np.prod(sizes): NumPy repeats the list where
                    # the number is an integer, multiplies where it is a float
                    yield self.report(
                        operand, argument=code_of(operand),
                        where=f"repeated or multiplied by the number `{code_of(other)}` in "
                              f"`{code_of(node)}`, left as it was: if it is an integer, NumPy "
                              f"repeats the list (write `int({code_of(other)})`); if a float, "
                              "wrap the list in jnp.asarray(...)")
                    continue
                if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply) \
                        and dataflow.value_kind(other) != facts.SCALAR \
                        and is_integer(self.analysis.dtypes.dtype_of(other)):
                    if static_shape(dataflow, other) == ():
                        # `lvl * np.prod(levels)`: NumPy's integer scalar repeats the list;
                        # JAX's 0-d array refuses the list, a Python int repeats it
                        if dataflow.jax_typed(other):
                            yield self.report(
                                other, argument=code_of(operand),
                                where=f"repeated by the integer `{code_of(other)}` in "
                                      f"`{code_of(node)}`, rewritten to `int({code_of(other)})`",
                                fix=lambda n: updates.call(cst.Name("int"), n),
                                requires=dataflow.jax_refs(other), report_if_unfixed=False)
                        continue
                    if static_shape(dataflow, other) is None and dataflow.may_be_jax(other):
                        yield self.report(
                            operand, argument=code_of(operand),
                            where=f"meeting the integer `{code_of(other)}` in `{code_of(node)}`, "
                                  f"left as it was: if `{code_of(other)}` is one number, Python "
                                  "repeats the list; if it is an array, wrap the list in "
                                  "jnp.asarray(...)")
                        continue
                if dataflow.jax_typed(other):
                    yield self._wrap(operand, None, constructor,
                                     where=f"meeting a JAX array in `{code_of(node)}`",
                                     requires=dataflow.jax_refs(other))
                elif isinstance(node, cst.BinaryOperation) \
                        and isinstance(node.operator, _ARRAY_ONLY_OPERATORS):
                    # Python has no `-`, `/`, `**`, `@` for lists: the original ran only
                    # with an array (or a NumPy number) on the other side
                    yield self._wrap(operand, None, constructor,
                                     where=f"in `{code_of(node)}`, which only an array computes")
                elif not literal and dataflow.kind_of(other) == UNKNOWN \
                        and isinstance(other, (cst.Name, cst.Attribute, cst.Subscript)) \
                        and sequences.kind(other) != SEQUENCE:
                    yield self.report(
                        operand, argument=code_of(operand),
                        where=f"meeting `{code_of(other)}` in `{code_of(node)}`, left as it was: "
                              f"if `{code_of(other)}` is an array, wrap the list in "
                              "jnp.asarray(...); if it is a number or a list, Python's own "
                              "operator applies")

    def _augmented(self, node: cst.AugAssign):
        """`q /= norm` of a list `q`: Python lists have no `/=`, so NumPy's array on the right
        made `q` an array; JAX's refuses the list. Becomes `q = jnp.asarray(q) / norm`."""
        jnp = self.analysis.jnp_alias

        def fix(statement):
            operator = code_of(statement.operator).strip()  # "/=": updates.BINARY_OPERATORS
            return updates.assign(statement.target, updates.binary(
                updates.jnp_call(jnp, "asarray", statement.target), operator, statement.value))
        return self.report(node, where=f"updated by `{code_of(node).strip()}`, which only an "
                                       "array computes",
                           argument=code_of(node.target), fix=fix,
                           imports=[("jax.numpy", jnp)],
                           requires=self.analysis.dataflow.jax_refs(node.value),
                           report_if_unfixed=False)

    def _parameter_read(self, value: cst.BaseExpression) -> bool:
        """What NJ111 (parameter-as-array-argument) wraps: a parameter, or a subscript of
        one, that may hold what the caller passed."""
        while isinstance(value, cst.Subscript):
            value = value.value
        return isinstance(value, cst.Name) and self.analysis.dataflow.may_hold_argument(value)

    def _built_list(self, value: cst.BaseExpression) -> bool:
        """`[factor] * 3`, `[a, b] + [c]`, `list(...)`, `tuple(...)`: a list or tuple built in place."""
        if isinstance(value, cst.Call):
            return isinstance(value.func, cst.Name) and value.func.value in ("list", "tuple")
        return isinstance(value, cst.BinaryOperation) \
            and self.analysis.dataflow.value_kind(value) == facts.CONTAINER

    def _list_indices(self):
        """x[[0, 2]] raises TypeError in JAX. A list of integer literals becomes an array; any
        other list index is reported (it may index a pandas frame by labels)."""
        for index in self.analysis.list_indices:
            if all(_is_int_literal(e.value) for e in index.elements):
                yield self._wrap(index, None)
            else:
                yield self.report(index, where="used as an index", argument=code_of(index))
        # `X[idx]`, idx a list the module builds (`idx.append(...)`), X a JAX array: NumPy
        # indexes with the list as with an array of it, JAX refuses a list
        dataflow, sequences, parents = self.analysis.dataflow, self.analysis.sequences, self.analysis.parents
        for subscript in self.analysis.nodes(cst.Subscript):
            if isinstance(parents.get(subscript), (cst.AssignTarget, cst.AugAssign, cst.Del)):
                continue
            # `X[range(3), :]`: NumPy reads a range as an index array, JAX refuses it
            ranges = [e.slice.value for e in subscript.slice if isinstance(e.slice, cst.Index)
                      and self._range(e.slice.value)]
            if ranges and dataflow.jax_typed(subscript.value):
                for index in ranges:
                    yield self._wrap(index, None, "asarray", requires=dataflow.jax_refs(subscript.value))
            if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
                continue
            index = subscript.slice[0].slice.value
            if not isinstance(index, (cst.Name, cst.Attribute)) or sequences.kind(index) != SEQUENCE:
                continue  # (a parameter alone is ARGUMENT: only a list the module shows counts)
            # a NumPy array takes the JAX array of the list as the list itself: wrapped where
            # the indexed value may be JAX (`x[cols]`, x a parameter a caller passes one for)
            requires = dataflow.may_be_jax(subscript.value)
            if requires:
                yield self._wrap(index, None, "asarray", requires=requires)

    def _lists_handed_to_an_index(self):
        """`take(f, ids)`, `self.take(f, ids)` with `take = lambda arr, ids: arr[ids]` (or a
        function of the module): a list handed to a parameter that the callee reads only as
        the index of another parameter, for which the same call passes a value that may be
        JAX (or is a parameter itself). NumPy indexes with the list as with an array of it,
        JAX refuses a list: the list is handed over as `jnp.asarray(ids)`, which indexes a
        NumPy array as the list does."""
        flow = self.analysis.dataflow
        for call in self.analysis.nodes(cst.Call):
            callees = self._callees(call)
            if not callees or any(a.star for a in call.args):
                continue
            # (index position, array position, their names) of each callee; a pair every
            # callee shares is wrapped, one only some have (two lambdas chosen by an `if`,
            # one iterating the list) is reported
            pairs = [self._index_positions(call, callee) for callee in callees]
            if any(found is None for found in pairs):
                continue
            shared = set.intersection(*(set(p) for p in pairs))
            for index_at, array_at, index_name, array_name in sorted(set().union(*pairs)):
                index = argument_for(call, index_at, index_name)
                array = argument_for(call, array_at, array_name)
                if index is None or array is None or not self._list_value(index):
                    continue
                # a NumPy array indexes with the JAX array of the list as with the list: a
                # parameter whose callers the module does not show (a method's) is wrapped too
                requires = flow.may_be_jax(array)
                if not requires and not flow.parameter_bound(array):
                    continue
                where = f"used as an index of `{array_name}` by `{code_of(call.func)}`"
                if (index_at, array_at, index_name, array_name) in shared:
                    yield self._wrap(index, None, "asarray", requires=requires, where=where)
                else:
                    yield self.report(index, where=where + " (one of the functions it may be)",
                                      argument=code_of(index))

    def _index_positions(self, call: cst.Call, callee) -> list | None:
        """(index position, array position, index name, array name) for `callee`'s
        parameter pairs of _index_params, positions as the call passes them; None for a
        callee with *args or **kwargs."""
        params = callee.params
        if params.star_arg is not cst.MaybeSentinel.DEFAULT and params.star_arg is not None \
                or params.star_kwarg is not None:
            return None
        positional = [*params.posonly_params, *params.params]
        if isinstance(callee, cst.FunctionDef) and isinstance(call.func, cst.Attribute) \
                and positional and positional[0].name.value == "self":
            positional = positional[1:]  # a method: `self` is the receiver
        return [(positional.index(i), positional.index(a), i.name.value, a.name.value)
                for i, a in self._index_params(positional, callee.body)]

    def _callees(self, call: cst.Call) -> list:
        """The lambdas or the module function (or method) a call may call, where the module
        shows them: `f(...)`, `obj.m(...)`, or a name or `self.attr` bound only to lambdas."""
        flow = self.analysis.dataflow
        function = flow.module_function(call) or flow.module_method(call)
        if function is not None:
            return [function]
        values, aug_values = flow.values_of(call.func)
        if values and not aug_values and all(isinstance(v, cst.Lambda) for v, _ in values):
            return [v for v, _ in values]
        return []

    def _index_params(self, positional: list, body) -> list:
        """(index parameter, array parameter) pairs: every read of the first is `a[i]`, the
        whole index of a subscript of the second, neither rebound in the body."""
        reads: dict[str, list] = {p.name.value: [] for p in positional}

        def collect(node):
            if isinstance(node, (cst.Lambda, cst.FunctionDef)) and node is not body:
                for _, name in all_parameters(node):
                    reads.pop(name, None)  # shadowed or captured: not followed
            if isinstance(node, cst.Name) and node.value in reads:
                reads[node.value].append(node)
            if isinstance(node, cst.Attribute):
                collect(node.value)  # `x.ids` does not read ids
                return
            for child in node.children:
                collect(child)

        collect(body)
        found = []
        parents = self.analysis.parents
        by_name = {p.name.value: p for p in positional}
        for name, names in reads.items():
            subscripts = [parents.get(parents.get(parents.get(n))) for n in names]
            if not names or not all(
                    isinstance(s, cst.Subscript) and len(s.slice) == 1
                    and isinstance(s.slice[0].slice, cst.Index) and s.slice[0].slice.value is n
                    and isinstance(s.value, cst.Name) and s.value.value in by_name
                    and s.value.value != name and not isinstance(parents.get(s), (cst.AssignTarget, cst.AugAssign))
                    for s, n in zip(subscripts, names)):
                continue
            arrays = {s.value.value for s in subscripts}
            if len(arrays) == 1 and self._not_rebound(body, {name, *arrays}):
                found.append((by_name[name], by_name[arrays.pop()]))
        return found

    def _not_rebound(self, body, names: set) -> bool:
        for node in walk(body):
            if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.For, cst.NamedExpr)) \
                    and any(isinstance(n, cst.Name) and n.value in names
                            for n in walk(getattr(node, "target", node))):
                return False
        return True

    def _list_value(self, value: cst.BaseExpression) -> bool:
        """A list (not a tuple: `a[(i, j)]` is two indices): a display, a comprehension,
        `list(...)`, a sum of lists, or a name every binding of which is one."""
        if isinstance(value, (cst.List, cst.ListComp)):
            return True
        if isinstance(value, cst.Call):
            return isinstance(value.func, cst.Name) and self.analysis.qualified_names(value.func) == {"builtins.list"}
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            return self._list_value(value.left) and self._list_value(value.right)  # a + b
        if isinstance(value, cst.Name):
            values, aug_values = self.analysis.dataflow.name_values(value)
            return bool(values) and all(isinstance(v, cst.BaseExpression) and not isinstance(v, cst.Name)
                                        and self._list_value(v) for v, _ in values)
        return False

    def _range(self, value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
            and self.analysis.qualified_names(value.func) == {"builtins.range"}

    def _wrap_items(self, value: cst.BaseExpression, ref):
        """`np.concatenate(rows)`, rows a list of lists: `[jnp.asarray(part) for part in
        rows]`, each item converted as NumPy converts it (ragged rows too, which one array
        of the whole could not hold)."""
        jnp = self.analysis.jnp_alias

        def fix(node):
            part = cst.Name("part")
            return cst.ListComp(
                elt=cst.Call(func=cst.Attribute(cst.Name(jnp), cst.Name("asarray")),
                             args=[cst.Arg(part)]),
                for_in=cst.CompFor(target=part, iter=node))
        return self.report(value, where=f"passed to `{code_of(ref.node)}`",
                           argument=code_of(value), fix=fix, imports=[("jax.numpy", jnp)],
                           requires=(ref.node,), report_if_unfixed=False)

    def _wrap(self, value: cst.BaseExpression, ref, constructor: str = "array",
              where: str | None = None, requires: tuple = ()):
        jnp = self.analysis.jnp_alias
        if where is None:
            where = f"passed to `{code_of(ref.node)}`" if ref is not None else "used as an index"
        return self.report(
            value, where=where, argument=code_of(value),
            fix=lambda node: cst.Call(func=cst.Attribute(cst.Name(jnp), cst.Name(constructor)),
                                      args=[cst.Arg(node)]),
            imports=[("jax.numpy", jnp)],
            requires=(ref.node,) if ref is not None else tuple(requires),
            report_if_unfixed=False)


def _shape_of(value: cst.BaseExpression) -> bool:
    """`f.shape`: a tuple of Python ints."""
    return isinstance(value, cst.Attribute) and value.attr.value == "shape"


def _data_parameter(ref) -> str | None:
    """The name of the call's first array parameter (`a` of np.sum): its data."""
    for param in (ref.entry or {}).get("params", ()):
        if param.get("role") in ("array", "arrays"):
            return param.get("name")
    return None
