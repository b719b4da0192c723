"""In-place writes: JAX arrays are immutable.

A write becomes a functional update (`x = x.at[i].set(v)`, `x = jnp.sort(x)`, ...) only when
the analysis proves `x` holds a fresh JAX array that no other name can see, so rebinding `x`
computes what NumPy's in-place write computed. Every other write is left as it was and
reported with the reason.
"""

from __future__ import annotations

from functools import partial

import libcst as cst

from np2jax.analysis import facts
from np2jax.syntax import updates
from np2jax.catalog import api_policy
from np2jax.checks import Rule
from np2jax.syntax import code_of

_NOT_ARRAYS = (facts.CONTAINER, facts.SCALAR)


def _what(kind: str) -> str:
    return "an array" if kind == facts.ARRAY else "a value that may be an array"


def _converted(how: str) -> str:
    return f"rewritten as {how}"


def _left(reason: str) -> str:
    return f"left as it was, because {reason}"



def _report_writes(rule, augmented: bool):
    """Reports of NJ201 (plain stores) or NJ202 (augmented): one fix per statement, on its
    line; the other writes of the same statement ride on it."""
    for write in rule.analysis.subscript_writes:
        if (write.operator is not None) != augmented or write.base_kind in _NOT_ARRAYS:
            continue
        plan = rule.analysis.write_plan(write.statement)
        fields = dict(target=code_of(write.target), what=_what(write.base_kind),
                      operator=write.operator or "")
        if plan.fix is None:
            yield rule.report(write.target, outcome=_left(plan.reason), **fields)
            continue
        line, fix = plan.fix
        imports = [("jax.numpy", rule.analysis.jnp_alias)]
        first = write.target is _first_target(rule.analysis, write.statement)
        if first:
            yield rule.report(line, fix=fix, imports=imports, requires=plan.requires,
                              outcome=_converted(plan.how), **fields)
        else:
            yield rule.report(write.target, fix=lambda node: node, requires=(line,),
                              outcome=_converted(plan.how), **fields)


def _first_target(analysis, statement) -> cst.Subscript:
    return next(w.target for w in analysis.subscript_writes if w.statement is statement)


class SubscriptAssignment(Rule):
    code = "NJ201"

    def run(self):
        yield from _report_writes(self, augmented=False)


class AugmentedSubscriptAssignment(Rule):
    code = "NJ202"

    def run(self):
        yield from _report_writes(self, augmented=True)


class EagerMaskUpdate(Rule):
    code = "NJ208"

    def run(self):
        for write in self.analysis.subscript_writes:
            if write.base_kind in _NOT_ARRAYS:
                continue
            plan = self.analysis.write_plan(write.statement)
            if plan.fix is not None and plan.eager_mask:
                yield self.report(write.target, target=code_of(write.target))


class SharedAugmentedAssignment(Rule):
    code = "NJ203"

    def run(self):
        dataflow = self.analysis.dataflow
        for fact in self.analysis.aug_assigns:
            statement = code_of(fact.node).strip()
            function = _returning_function(dataflow, fact.node.target)
            if function is not None:
                # `v /= v.sum()` in a function rewritten to return v (NJ209): nothing to change
                # here, but only if that rewrite happens; otherwise this is reported.
                yield self.report(fact.node, fix=lambda node: node, requires=(function,),
                                  statement=statement, outcome=_converted(
                                      f"a rebinding, since `{function.name.value}` now returns it"))
            elif fact.shared_because is not None:
                yield self.report(fact.node, statement=statement, outcome=_left(fact.shared_because))


def _returning_function(dataflow, target):
    if not isinstance(target, cst.Name):
        return None
    for value, statement in dataflow.own_bindings(target):
        if value == "param" and statement in dataflow.fresh_params:
            return dataflow.fresh_params[statement]
    return None


class MutatedArgument(Rule):
    code = "NJ209"

    def run(self):
        for fact in self.analysis.mutators:
            fields = dict(function=fact.node.name.value, param=fact.param.name.value)
            reason = fact.refused or self._write_refused(fact)
            if reason is not None:
                yield self.report(fact.node.name, outcome=_left(reason), **fields)
                continue
            lines = [self.analysis.dataflow.expression_statement_line(call) for call, _ in fact.call_sites]
            yield self.report(fact.node, fix=partial(_return_param, param=fact.param.name.value),
                              requires=tuple(lines), key=("def", fields["function"]), outcome=_converted(
                                  f"a function returning `{fields['param']}`, and its "
                                  f"{len(lines)} call(s) assign the result"), **fields)
            for (call, argument), line in zip(fact.call_sites, lines):
                yield self.report(line, fix=partial(_assign_back, name=argument.value),
                                  requires=(fact.node,), outcome=_converted(
                                      f"`{argument.value} = {code_of(call)}`"), **fields)
        yield from self._external_calls()

    def _external_calls(self):
        """Calls of another module's function rewritten to return its argument: they assign
        the result; the tree checks that the function and all its calls were rewritten."""
        dataflow = self.analysis.dataflow
        for call, argument, qualname in self.analysis.external_calls:
            line = dataflow.expression_statement_line(call)
            param = self.analysis.context.mutator_parameter(qualname)[1]
            yield self.report(line, fix=partial(_assign_back, name=argument.value),
                              requires=dataflow.binding_refs(argument), key=("call", qualname),
                              function=qualname, param=param, outcome=_converted(
                                  f"`{argument.value} = {code_of(call)}`, since it now returns it"))
        for node, qualname, reason in self.analysis.external_refusals:
            param = self.analysis.context.mutator_parameter(qualname)[1]
            yield self.report(node, function=qualname, param=param, outcome=_left(reason))

    def _write_refused(self, fact) -> str | None:
        for write in fact.writes:
            if isinstance(write, cst.AugAssign) and isinstance(write.target, cst.Name):
                continue  # `v op= ...`: a rebinding once the function returns v
            plan = self.analysis.write_plan(write)
            if plan.fix is None:
                return f"`{code_of(write).strip()}` cannot be rewritten: {plan.reason}"
        return None


def _return_param(function: cst.FunctionDef, param: str) -> cst.FunctionDef:
    """Every `return` returns the parameter, and so does falling off the end."""
    body = function.body.visit(_ReturnParam(param))
    statements = list(body.body)
    last = statements[-1] if statements else None
    ends_with_return = isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)
    if not ends_with_return:
        statements.append(cst.SimpleStatementLine(body=[cst.Return(value=cst.Name(param))]))
    return function.with_changes(body=body.with_changes(body=statements))


class _ReturnParam(cst.CSTTransformer):
    def __init__(self, param: str) -> None:
        super().__init__()
        self.param = param

    def visit_FunctionDef(self, node) -> bool:
        return False  # nested functions keep their returns

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_Return(self, original_node, updated_node):
        if updated_node.value is None or (isinstance(updated_node.value, cst.Name)
                                          and updated_node.value.value == "None"):
            return updated_node.with_changes(value=cst.Name(self.param),
                                             whitespace_after_return=cst.SimpleWhitespace(" "))
        return updated_node


def _assign_back(line: cst.SimpleStatementLine, name: str):
    """`normalize(p)` -> `p = normalize(p)`."""
    return updates.replace_line(line, [updates.assign(cst.Name(name), line.body[0].value)])


# --- calls that write into an argument ------------------------------------------------------


def _statement_fix(analysis, call: cst.Call, target: cst.BaseExpression, build):
    """(line, fix, requires, reason) for an expression statement `call` that writes into
    `target`, to become `target = build(updated call)`."""
    dataflow = analysis.dataflow
    line = dataflow.expression_statement_line(call)
    if line is None:
        return None, None, (), "its result is used, or it shares its line"
    if not isinstance(target, (cst.Name, cst.Attribute)):
        return None, None, (), f"`{code_of(target)}` is not a plain name"
    reason = dataflow.unconvertible_because(target, call)
    if reason is not None:
        return None, None, (), reason

    def fix(new_line):
        new_call = new_line.body[0].value
        new_target, new_value = build(new_call)
        return updates.replace_line(new_line, [updates.assign(new_target, new_value)])

    return line, fix, dataflow.binding_refs(target), None


def _drop_out(call: cst.Call, out_arg_index: int) -> list[cst.Arg]:
    args = [a for i, a in enumerate(call.args) if i != out_arg_index]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return args


def _out_argument(call, position: int | None) -> str:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "out":
            return code_of(arg.value)
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return code_of(positional[position].value) if position is not None else "?"


class OutArgument(Rule):
    code = "NJ204"

    def run(self):
        for ref in self.analysis.refs:
            if ref.out_arg is None or (ref.keep is not None and ref.keep != facts.KEEP_OUT):
                continue
            out = code_of(ref.out_arg.value)
            if ref.keep == facts.KEEP_OUT:
                reason = self.analysis.dataflow.out_call_convertible(ref) if ref.call is not None \
                    else "it is a ufunc method"
                yield self.report(ref.call or ref.node, call=code_of(ref.node), out=out,
                                  outcome=_left(reason or "its arguments cannot be checked"))
                continue
            yield self._converted_call(ref, out)
        for ref in self.analysis.refs:  # np.maximum.accumulate(x, out=x) and friends
            if ref.keep == facts.KEEP_OUT and ref.out_arg is None:
                yield self.report(ref.node, call=code_of(ref.node), out=ref.detail,
                                  outcome=_left("ufunc methods are not rewritten"))
        positions = api_policy()["method_out_positions"]
        for write in self.analysis.out_method_calls:
            if write.receiver_kind not in _NOT_ARRAYS:
                yield self._method(write, positions.get(write.method))

    def _converted_call(self, ref, out: str):
        index = next(i for i, a in enumerate(ref.call.args) if a is ref.out_arg)
        inputs = [a.value for i, a in enumerate(ref.call.args) if i != index]
        same = any(v.deep_equals(ref.out_arg.value) for v in inputs)

        def build(new_call):
            target = new_call.args[index].value
            value = new_call.with_changes(args=_drop_out(new_call, index))
            if not same:  # NumPy casts the result into out's dtype
                value = updates.call(updates.attr(value, "astype"), updates.attr(target, "dtype"))
            return target, value

        line, fix, requires, reason = _statement_fix(self.analysis, ref.call, ref.out_arg.value, build)
        return self.report(line, fix=fix, requires=(ref.node, *requires), call=code_of(ref.node),
                           out=out, outcome=_converted(f"`{out} = {code_of(ref.node)}(...)`"))

    def _method(self, write, position):
        call = write.node
        out = _out_argument(call, position)
        out_index = next((i for i, a in enumerate(call.args)
                          if a.keyword is not None and a.keyword.value == "out"), None)
        if out_index is None and position is not None:
            positional = [i for i, a in enumerate(call.args) if a.keyword is None and not a.star]
            out_index = positional[position] if len(positional) > position else None
        target = call.args[out_index].value if out_index is not None else None
        if target is None or _is_none(target) or not target.deep_equals(write.receiver):
            return self.report(call, call=code_of(call.func), out=out,
                               outcome=_left("only `x.method(..., out=x)` is rewritten"))

        def build(new_call):
            return new_call.func.value, new_call.with_changes(args=_drop_out(new_call, out_index))

        line, fix, requires, reason = _statement_fix(self.analysis, call, write.receiver, build)
        if fix is None:
            return self.report(call, call=code_of(call.func), out=out, outcome=_left(reason))
        return self.report(line, fix=fix, requires=requires, call=code_of(call.func), out=out,
                           outcome=_converted(f"`{out} = {code_of(call.func)}(...)`"))


def _is_none(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _keyword(call: cst.Call, name: str, position: int | None = None):
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if position is not None and len(positional) > position:
        return positional[position].value
    return None


def _distinct_indices(node) -> bool:
    """An index argument that cannot repeat: one integer, or a list of distinct integers.
    (With repeats, NumPy keeps the last value and JAX does not say which.)"""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, (cst.List, cst.Tuple)):
        values = [e.value for e in node.elements]
        if all(isinstance(v, cst.Integer) for v in values):
            numbers = [int(v.value, 0) for v in values]
            return len(set(numbers)) == len(numbers) and all(n >= 0 for n in numbers)
    return False


def _array_literal(node, jnp: str):
    return updates.jnp_call(jnp, "array", node) if isinstance(node, (cst.List, cst.Tuple)) else node


def _inplace_method(call: cst.Call, method: str, jnp: str):
    """The builder for x.<method>(...) as a functional form, or the reason there is none."""
    args = [a for a in call.args if not a.star]
    if method == "sort":
        if _keyword(call, "order", 2) is not None:
            return None, "sorting by fields (`order=`) is not rewritten"
        axis_index = next((i for i, a in enumerate(call.args)
                           if (a.keyword is None and i == 0) or
                           (a.keyword is not None and a.keyword.value == "axis")), None)

        def build(new_call):
            receiver = new_call.func.value
            extra = {"axis": new_call.args[axis_index].value} if axis_index is not None else {}
            return receiver, updates.jnp_call(jnp, "sort", receiver, **extra)
        return build, None
    if method == "fill" and len(args) == 1 and args[0].keyword is None:
        return (lambda new_call: (new_call.func.value, updates.jnp_call(
            jnp, "full_like", new_call.func.value, new_call.args[0].value))), None
    if method == "put" and len(args) == 2 and all(a.keyword is None for a in args):
        if not _distinct_indices(args[0].value):
            return None, "the indices may repeat, and JAX does not define which value it keeps"
        return (lambda new_call: (new_call.func.value, updates.jnp_call(
            jnp, "put", new_call.func.value, _array_literal(new_call.args[0].value, jnp),
            _array_literal(new_call.args[1].value, jnp), inplace=cst.Name("False")))), None
    if method == "resize":
        return _resize(call, jnp)
    reasons = {"partition": "JAX orders the partitions differently, and NumPy leaves the order unspecified",
               "itemset": "itemset is not rewritten"}
    return None, reasons.get(method, f"`.{method}(...)` is not rewritten")


def _resize(call: cst.Call, jnp: str):
    """x.resize(2, 3) or x.resize((2, 3)): ndarray.resize keeps the data in C order and pads
    with zeros, which is jnp.pad(x.ravel(), (0, max(0, n - x.size)))[:n].reshape(shape)."""
    args = [a for a in call.args if a.keyword is None and not a.star]
    if any(a.keyword is not None and a.keyword.value != "refcheck" for a in call.args) or not args:
        return None, "only `x.resize(shape)` with a literal shape is rewritten"
    dims = list(args[0].value.elements) if len(args) == 1 and isinstance(args[0].value, (cst.Tuple, cst.List)) \
        else args
    if not all(isinstance(d.value, cst.Integer) for d in dims):
        return None, "only `x.resize(shape)` with a literal shape is rewritten"
    sizes = [int(d.value.value, 0) for d in dims]
    total = 1
    for size in sizes:
        total *= size
    shape = cst.parse_expression(f"({', '.join(map(str, sizes))}{',' if len(sizes) == 1 else ''})")

    def build(new_call):
        receiver = new_call.func.value
        padding = cst.parse_expression(f"(0, max(0, {total} - {code_of(receiver)}.size))")
        padded = updates.jnp_call(jnp, "pad", updates.call(updates.attr(receiver, "ravel")), padding)
        cut = cst.Subscript(value=padded, slice=[cst.SubscriptElement(cst.Slice(lower=None, upper=cst.Integer(str(total))))])
        return receiver, updates.call(updates.attr(cut, "reshape"), shape)
    return build, None


class InPlaceMethod(Rule):
    code = "NJ205"

    def run(self):
        jnp = self.analysis.jnp_alias
        for write in self.analysis.method_writes:
            if write.receiver_kind in _NOT_ARRAYS:
                continue
            fields = dict(receiver=code_of(write.receiver), method=write.method)
            if isinstance(write.node, cst.Call):
                build, reason = _inplace_method(write.node, write.method, jnp)
                line = fix = None
                requires = ()
                if build is not None:
                    line, fix, requires, reason = _statement_fix(self.analysis, write.node,
                                                                 write.receiver, build)
            else:  # x.shape = (2, 3)
                line, fix, requires, reason = self._shape_assignment(write)
            if fix is None:
                yield self.report(write.node, outcome=_left(reason), **fields)
            else:
                yield self.report(line, fix=fix, imports=[("jax.numpy", jnp)], requires=requires,
                                  outcome=_converted("a new array assigned back"), **fields)

    def _shape_assignment(self, write):
        statement = write.node
        if write.method != "shape":
            return None, None, (), f"assigning `.{write.method}` is not rewritten"
        dataflow = self.analysis.dataflow
        line = dataflow.expression_statement_line(statement)
        if line is None or len(statement.targets) != 1:
            return None, None, (), "the statement shares its line or assigns several targets"
        reason = dataflow.unconvertible_because(write.receiver, statement)
        if reason is not None:
            return None, None, (), reason

        def fix(new_line):
            new_statement = new_line.body[0]
            receiver = new_statement.targets[0].target.value
            return updates.replace_line(new_line, [updates.assign(
                receiver, updates.call(updates.attr(receiver, "reshape"), new_statement.value))])

        return line, fix, dataflow.binding_refs(write.receiver), None


def _not_in_place(name: str, jnp: str):
    """np.put(a, i, v) / np.place(a, m, v) -> a = jnp.<name>(a, i, v, inplace=False)."""
    def build(new_call):
        target = new_call.args[0].value
        rest = (_array_literal(a.value, jnp) for a in new_call.args[1:3])
        return target, updates.jnp_call(jnp, name, target, *rest, inplace=cst.Name("False"))
    return build


def _inplace_function(qualname: str, call: cst.Call, jnp: str):
    """The builder for np.<function>(a, ...) as `a = <functional form>`, or the reason."""
    args = call.args
    if any(a.star for a in args) or not args or args[0].keyword is not None:
        return None, "its arguments cannot be checked"
    rest = {a.keyword.value: a.value for a in args if a.keyword is not None}
    positional = [a.value for a in args if a.keyword is None]
    def cast(target, value):
        return updates.jnp_call(jnp, "asarray", value, dtype=updates.attr(target, "dtype"))

    if qualname == "numpy.copyto" and len(positional) == 2 and set(rest) <= {"where", "casting"}:
        def build(new_call):
            target, source = new_call.args[0].value, new_call.args[1].value
            where = next((a.value for a in new_call.args if a.keyword and a.keyword.value == "where"), None)
            value = cast(target, source)
            if where is None:
                return target, updates.jnp_call(jnp, "broadcast_to", value, updates.attr(target, "shape"))
            return target, updates.jnp_call(jnp, "where", where, value, target)
        return build, None
    if qualname == "numpy.fill_diagonal" and len(positional) == 2 and set(rest) <= {"wrap"}:
        if "wrap" in rest and not (isinstance(rest["wrap"], cst.Name) and rest["wrap"].value == "False"):
            return None, "JAX's fill_diagonal does not wrap (wrap=True)"
        def build(new_call):
            target = new_call.args[0].value
            return target, updates.jnp_call(jnp, "fill_diagonal", target,
                                            _array_literal(new_call.args[1].value, jnp),
                                            inplace=cst.Name("False"))
        return build, None
    if qualname == "numpy.put" and len(positional) == 3 and not rest:
        if not _distinct_indices(positional[1]):
            return None, "the indices may repeat, and JAX does not define which value it keeps"
        return _not_in_place("put", jnp), None
    if qualname == "numpy.place" and len(positional) == 3 and not rest:
        return _not_in_place("place", jnp), None
    if qualname == "numpy.putmask" and len(positional) == 3 and not rest:
        def build(new_call):  # values repeat over the whole array, as np.resize repeats them
            target, mask, values = (a.value for a in new_call.args)
            repeated = updates.jnp_call(jnp, "resize", cast(target, values), updates.attr(target, "shape"))
            return target, updates.jnp_call(jnp, "where", _array_literal(mask, jnp), repeated, target)
        return build, None
    if qualname == "numpy.put_along_axis":
        return None, "its indices may repeat, and JAX does not define which value it keeps"
    return None, "this form of the call is not rewritten"


class InPlaceFunction(Rule):
    code = "NJ206"

    def run(self):
        jnp = self.analysis.jnp_alias
        for ref in self.analysis.refs:
            if ref.keep != facts.KEEP_IN_PLACE_FUNCTION:
                continue
            node = ref.call or ref.node
            if ref.call is None:
                yield self.report(node, function=code_of(ref.node),
                                  outcome=_left("it is used as a value, not called"))
                continue
            build, reason = _inplace_function(ref.qualname, ref.call, jnp)
            line = fix = None
            requires = ()
            if build is not None:
                line, fix, requires, reason = _statement_fix(
                    self.analysis, ref.call, ref.call.args[0].value, build)
            if fix is None:
                yield self.report(node, function=code_of(ref.node), outcome=_left(reason))
            else:
                yield self.report(line, fix=fix, imports=[("jax.numpy", jnp)], requires=requires,
                                  function=code_of(ref.node),
                                  outcome=_converted("a new array assigned back"))


class UfuncAt(Rule):
    code = "NJ207"

    def run(self):
        jnp = self.analysis.jnp_alias
        for ref in self.analysis.refs:
            if ref.keep != facts.KEEP_UFUNC_AT:
                continue
            at = self.analysis.parents.get(ref.node)
            call = self.analysis.parents.get(at)
            if not (isinstance(call, cst.Call) and call.func is at):
                yield self.report(at, ufunc=code_of(ref.node), outcome=_left("it is not called"))
                continue
            method = updates.UFUNC_AT_METHODS.get(ref.qualname)
            args = call.args
            if method is None or len(args) != 3 or any(a.keyword or a.star for a in args):
                yield self.report(call, ufunc=code_of(ref.node), outcome=_left(
                    f"`{code_of(ref.node)}.at` with these arguments has no `.at[]` counterpart"))
                continue
            index = args[1].value
            values, _ = self.analysis.dataflow.values_of(index) if isinstance(index, cst.Name) else (None, None)
            list_name = bool(values) and all(isinstance(v, (cst.List, cst.ListComp)) for v, _ in values)
            build = partial(_ufunc_at, method=method, jnp=jnp, list_name=list_name)
            line, fix, requires, reason = _statement_fix(self.analysis, call, args[0].value, build)
            if fix is None:
                yield self.report(call, ufunc=code_of(ref.node), outcome=_left(reason))
            else:
                yield self.report(line, fix=fix, imports=[("jax.numpy", jnp)], requires=requires,
                                  ufunc=code_of(ref.node),
                                  outcome=_converted(f"`.at[...].{method}(...)`"))


def _ufunc_at(new_call: cst.Call, method: str, jnp: str, list_name: bool = False):
    """np.add.at(x, idx, v) -> x.at[idx].add(v); a tuple of index arrays indexes each axis."""
    target, index, values = (a.value for a in new_call.args)
    if list_name:  # a name bound to a list: .at[] refuses lists
        index = updates.jnp_call(jnp, "asarray", index)
    # a tuple indexes each axis; `()` (the whole array) is an index of its own
    parts = list(index.elements) if isinstance(index, cst.Tuple) and index.elements \
        else [cst.Element(index)]
    elements = updates.with_commas([cst.SubscriptElement(slice=cst.Index(p.value)) for p in parts])
    return target, updates.at_update(target, elements, method, _array_literal(values, jnp), jnp)
