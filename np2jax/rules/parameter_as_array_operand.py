"""NJ112 parameter-as-array-operand.

A function parameter used as a sequence that meets a JAX array through an operator is
wrapped in jnp.asarray(...).
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.facts import UNKNOWN
from np2jax.analysis.sequences import SEQUENCE
from np2jax.rules._arguments import as_array
from np2jax.rules.base import Rule
from np2jax.syntax import argument_for, code_of

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


class ParameterAsArrayOperand(Rule):
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
                if isinstance(node, cst.AugAssign) and operand is node.target:
                    continue  # a target is stored to: `jnp.asarray(v) -= m` does not parse
                if not self._caller_value(operand, array_arguments):
                    continue
                relied = self._jax_operand(other, node)
                if relied is not None:
                    yield self.report(operand, operand=code_of(operand), operation=code_of(node),
                                      outcome="wrapped in jnp.asarray(...), which converts it as "
                                      "NumPy does", fix=as_array(jnp), imports=[("jax.numpy", jnp)],
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
                or dataflow.jax_typed(name) or dataflow.already_jax(name):
            return False
        return isinstance(operand, cst.Subscript) or self._used_as_sequence(name, array_arguments)

    def _passed_sequences(self, name: cst.Name) -> bool:
        """Every call of the function in this module passes a list or tuple for the
        parameter (`shift([1.0, 2.0], 3)`): what NumPy's operator converts, JAX's refuses."""
        dataflow = self.analysis.dataflow
        values, _ = dataflow.name_values(name)
        params = [statement for value, statement in values if value == "param"]
        if len(params) != 1:
            return False
        passed = dataflow.passed_arguments(params[0])
        if passed is None:
            passed = self._method_arguments(params[0])
        return bool(passed) and all(self.analysis.sequences.kind(a) == SEQUENCE for a in passed)

    def _method_arguments(self, param: cst.Param) -> list | None:
        """What the module's calls of a method pass for its parameter (its default where a
        call leaves it out), where the method is called through instances the module makes
        (`rng = Lcg(0); rng.normal([0, 0], 0.5)`: values_of's module_method) and named
        nowhere else; None when a call hides it (*args) or none is seen."""
        dataflow, parents = self.analysis.dataflow, self.analysis.parents
        method = parents.get(parents.get(param))
        if not isinstance(method, cst.FunctionDef) or not isinstance(
                parents.get(parents.get(method)), cst.ClassDef) or method.name.value.startswith("_"):
            return None
        positional = [*method.params.posonly_params, *method.params.params]
        if not positional or positional[0].name.value != "self" or param not in positional:
            return None
        position = positional.index(param) - 1
        calls = [c for c in self.analysis.nodes(cst.Call)
                 if isinstance(c.func, cst.Attribute) and c.func.attr.value == method.name.value]
        if not calls or any(dataflow.module_method(c) is not method or any(a.star for a in c.args)
                            for c in calls):
            return None  # a method of that name the module cannot tie to this one
        passed = [argument_for(c, position, param.name.value) or param.default for c in calls]
        return None if any(a is None for a in passed) else passed

    def _used_as_sequence(self, name: cst.Name, array_arguments) -> bool:
        if self._passed_sequences(name):
            return True
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
