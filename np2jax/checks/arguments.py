"""Lists and tuples where a JAX function wants an array."""

from __future__ import annotations

import libcst as cst

from np2jax.analysis import facts
from np2jax.analysis.facts import UNKNOWN
from np2jax.catalog import api_policy
from np2jax.checks import Rule
from np2jax.syntax import code_of

_SEQUENCE_LITERALS = (cst.List, cst.Tuple, cst.ListComp)


class ListArgument(Rule):
    code = "NJ110"

    def run(self):
        lists = api_policy()["lists"]
        structural = set(lists["nested_lists_are_structure"])
        for ref in self.analysis.refs:
            if not ref.converted:
                continue
            static = set(lists["static_parameters"].get(ref.qualname, ()))
            for argument in ref.arguments:
                value = argument.arg.value
                if argument.name in static:
                    continue  # jnp.pad(x, (1, 2)): JAX wants the Python sequence itself
                if value in self.analysis.sequence_names:
                    yield self._wrap(value, ref, "asarray")
                    continue
                if not isinstance(value, _SEQUENCE_LITERALS) and not self._built_list(value):
                    continue
                if argument.role == "array":
                    yield self._wrap(value, ref)
                elif argument.role == "arrays" and ref.qualname not in structural \
                        and isinstance(value, (cst.List, cst.Tuple)):
                    # A sequence of arrays: JAX wants each member to be an array.
                    for element in value.elements:
                        if isinstance(element.value, _SEQUENCE_LITERALS):
                            yield self._wrap(element.value, ref)

        yield from self._list_indices()

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

    def _wrap(self, value: cst.BaseExpression, ref, constructor: str = "array"):
        jnp = self.analysis.jnp_alias
        return self.report(
            value, where=f"passed to `{code_of(ref.node)}`" if ref is not None else "used as an index",
            argument=code_of(value),
            fix=lambda node: cst.Call(func=cst.Attribute(cst.Name(jnp), cst.Name(constructor)),
                                      args=[cst.Arg(node)]),
            imports=[("jax.numpy", jnp)], requires=(ref.node,) if ref is not None else (),
            report_if_unfixed=False)


def _is_int_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer) or (
        isinstance(node, cst.Name) and node.value in ("True", "False"))


class ParameterArgument(Rule):
    """`def compose(T, R, Z): ... np.diag(Z)`: callers may pass a list or a tuple, which NumPy
    converts and JAX refuses. A parameter passed where JAX wants an array (and never rebound)
    is wrapped in jnp.asarray(...), which converts it as NumPy does and returns an array
    unchanged."""

    code = "NJ111"

    def run(self):
        lists = api_policy()["lists"]
        writers = set(api_policy()["in_place_functions"])
        dataflow = self.analysis.dataflow
        jnp = self.analysis.jnp_alias
        for ref in self.analysis.refs:
            if not ref.converted or ref.qualname in writers or ref.out_arg is not None:
                continue
            static = set(lists["static_parameters"].get(ref.qualname, ()))
            for argument in ref.arguments:
                value = argument.arg.value
                if argument.role != "array" or argument.name in static \
                        or not isinstance(value, cst.Name) or not dataflow.may_hold_argument(value):
                    continue
                yield self.report(value, argument=value.value, call=code_of(ref.node),
                                  fix=_as_array(jnp), imports=[("jax.numpy", jnp)],
                                  requires=(ref.node,), report_if_unfixed=False)


class ParameterOperand(Rule):
    """`def detrend(data): return data - np.mean(data)`: called with a list, NumPy's operator
    converts it; JAX's `-` refuses a list (TypeError). A parameter (or a part of one) that
    meets a JAX array through an operator, and that the function also uses as a sequence,
    is wrapped in jnp.asarray(...)."""

    code = "NJ112"

    def run(self):
        analysis = self.analysis
        jnp = analysis.jnp_alias
        # the first argument of a NumPy function, its main array (`np.mean(data)`), not
        # the scalar-like arrays after it (`np.clip(x, lo, hi)`)
        array_arguments = {ref.arguments[0].arg.value for ref in analysis.refs if ref.converted
                           and ref.arguments and ref.arguments[0].role in ("array", "arrays")
                           and ref.call is not None and ref.arguments[0].arg is ref.call.args[0]}
        flagged: set = set()
        for node, left, right in analysis.operations:
            for operand, other in ((left, right), (right, left)):
                if not self._caller_value(operand, array_arguments):
                    continue
                relied = self._jax_operand(other, node)
                if relied is not None:
                    yield self.report(operand, operand=code_of(operand), operation=code_of(node),
                                      outcome="wrapped in jnp.asarray(...), which converts it as "
                                      "NumPy does", fix=_as_array(jnp), imports=[("jax.numpy", jnp)],
                                      requires=relied, report_if_unfixed=False)
                elif _is_slice(operand) and self._may_be_array(other, operand) \
                        and node not in flagged:  # `s2[:3] - s1[:3]`: one finding, not two
                    flagged.add(node)
                    # `rect * vec[:2]`, rect of unknown kind: if it is an array, JAX refuses the
                    # list; if it is a number, a list or another library's object, wrapping
                    # could change what Python or that library does with the list
                    yield self.report(operand, operand=code_of(operand), operation=code_of(node),
                                      outcome=f"left as it was, because `{code_of(other)}` may "
                                      "be a number, a list or another non-array value, with which "
                                      "Python treats the list its own way; if it is an array, JAX "
                                      "refuses the list: wrap it in jnp.asarray(...)")

    def _may_be_array(self, other, operand) -> bool:
        """`other` is of unknown kind (not a literal, a container, a number) and not a part of
        the same parameter as `operand` (`a[1:] - a[:-1]`: two lists, or two arrays)."""
        kind = self.analysis.dataflow.kind_of(other) if isinstance(other, (cst.Name, cst.Attribute)) \
            else self.analysis.dataflow.value_kind(other)
        return kind == UNKNOWN and isinstance(other, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) \
            and _root_name(other) != _root_name(operand)

    def _jax_operand(self, other, operation) -> tuple | None:
        """The converted references that make `other` a JAX array where `operation` reads it,
        or None. Beyond `jax_typed`: a parameter converted at the top of its function
        (`rect = np.array(rect)`) before the operation, in the same function."""
        dataflow = self.analysis.dataflow
        if dataflow.jax_typed(other):
            return dataflow.jax_refs(other)
        if not isinstance(other, cst.Name):
            return None
        values, _ = dataflow.name_values(other)  # `x op= y` keeps an array an array
        function = _enclosing_function(operation, self.analysis.parents)
        rebindings = [statement for value, statement in values if value != "param"]
        if not rebindings or len(rebindings) == len(values) or function is None:
            return None
        relied: tuple = ()
        for value, statement in values:
            if value == "param":
                continue
            line = self.analysis.parents.get(statement)
            if not (dataflow.jax_typed(value) and isinstance(statement, cst.Assign)
                    and self.analysis.parents.get(self.analysis.parents.get(line)) is function):
                return None
            relied += dataflow.jax_refs(value)
        if not any(self.analysis.position(s) < self.analysis.position(operation) for s in rebindings):
            return None
        return relied

    def _caller_value(self, operand, array_arguments) -> bool:
        """A parameter, or a subscript of one, that may hold a list the caller passed: not
        known to be a JAX array, and used as a sequence (subscripted, iterated, len(),
        passed first to a NumPy function) unless it is itself a subscript."""
        dataflow = self.analysis.dataflow
        name = operand.value if isinstance(operand, cst.Subscript) else operand
        if not isinstance(name, cst.Name) or not dataflow.may_hold_argument(name) \
                or dataflow.jax_typed(name):
            return False
        return isinstance(operand, cst.Subscript) or self._used_as_sequence(name, array_arguments)

    def _used_as_sequence(self, name: cst.Name, array_arguments) -> bool:
        parents = self.analysis.parents
        scope = self.analysis.dataflow.scopes.get(name)
        for assignment in scope.assignments[name.value] if scope is not None else ():
            default = getattr(assignment.node, "default", None)
            if isinstance(default, (cst.List, cst.Tuple)):
                return True
            for access in assignment.references:
                use = access.node
                parent = parents.get(use)
                if use in array_arguments or (isinstance(parent, cst.Subscript) and parent.value is use) \
                        or (isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is use):
                    return True
                call = parents.get(parent) if isinstance(parent, cst.Arg) else None
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) \
                        and call.func.value in _SEQUENCE_BUILTINS:
                    return True
        return False


_SEQUENCE_BUILTINS = frozenset({"len", "list", "tuple", "iter", "enumerate", "zip", "sorted",
                                "reversed"})


def _is_slice(node) -> bool:
    return isinstance(node, cst.Subscript) and any(isinstance(e.slice, cst.Slice) for e in node.slice)


def _root_name(node) -> str | None:
    while isinstance(node, (cst.Subscript, cst.Attribute)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _enclosing_function(node, parents) -> cst.FunctionDef | None:
    while node is not None and not isinstance(node, cst.FunctionDef):
        node = parents.get(node)
    return node


def _as_array(jnp: str):
    return lambda node: cst.Call(func=cst.Attribute(cst.Name(jnp), cst.Name("asarray")),
                                 args=[cst.Arg(node)])
