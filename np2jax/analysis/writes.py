"""The write planner: how a statement that writes through subscripts becomes functional
(`x = x.at[i].set(v)`, `jnp.where(mask, v, x)`, a tuple of updates), or why it cannot.

A write becomes a functional update only when the analysis proves the array private (a
fresh JAX array no other name can see), so rebinding it computes what NumPy's in-place
write computed. NJ201, NJ202, NJ208 and --jit read the plans.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import libcst as cst

from np2jax.analysis.casts import int32_wrap
from np2jax.analysis.dtypes import int_literal, integer_range, is_integer, needs_cast, stored
from np2jax.analysis.shapes import same_shape
from np2jax.syntax import code_of, updates



class ModuleFacts(Protocol):
    """What this module reads of np2jax.analysis.module.ModuleAnalysis (the facade, which
    imports this module and hands itself in)."""

    module: cst.Module
    parents: dict
    dataflow: Any
    jnp_alias: str
    bound_names: set
    shapes: Any
    dtypes: Any
    views: Any
    casts: Any

    def ref_of_call(self, call: cst.Call) -> Any: ...



@dataclass
class WritePlan:
    """How one statement that writes through subscripts becomes functional, or why not."""

    fix: object | None  # line -> replacement
    reason: str | None  # why it is left as it was
    how: str = ""  # what it becomes, for the message
    eager_mask: bool = False  # uses a boolean mask in .at[], which jax.jit cannot compile
    requires: tuple = ()
    where: bool = False  # a mask of the array's own shape: jnp.where(mask, v, x)
    # (function, name): the write rebinds a module global in a function that does not
    # declare it `global` yet; the fix needs `global name` at the top of its body
    declare: tuple | None = None
    # float values that may leave the integer array's range are cast as NumPy casts them
    # (casts.int32_wrap) rather than saturated as JAX's astype does
    wraps: bool = False


def _flatten(target: cst.Subscript, dataflow) -> tuple[cst.BaseExpression, list] | None:
    """x[i][j] -> (x, [i, j]) when the inner indices are single integers (so x[i] is a view
    of one row); None for chains that NumPy copies (x[1:][0], x[idx][j] with fancy idx)."""
    index = list(target.slice)
    base = target.value
    while isinstance(base, cst.Subscript):
        inner = base.slice
        if len(inner) != 1 or not isinstance(inner[0].slice, cst.Index) \
                or not dataflow.is_scalar(inner[0].slice.value) \
                or isinstance(inner[0].slice.value, cst.Float):
            return None
        index = [inner[0].with_changes(comma=cst.MaybeSentinel.DEFAULT), *index]
        index[0] = index[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        base = base.value
    return base, index


def _temporary(analysis, stem: str, taken: set) -> str:
    name = stem
    number = 0
    while name in analysis.bound_names or name in taken:
        number += 1
        name = f"{stem}{number}"
    taken.add(name)
    return name


def plan_write(analysis: ModuleFacts, statement) -> WritePlan:
    """The plan for an Assign or AugAssign whose targets include subscripts (the facade
    memoises it: ModuleAnalysis.write_plan)."""
    dataflow = analysis.dataflow
    line = dataflow.expression_statement_line(statement)
    if line is None:
        return WritePlan(None, "the statement shares its line with others")
    if isinstance(statement, cst.AugAssign):
        return _plan_single(analysis, statement, statement.target, line, statement.operator)
    if isinstance(statement, cst.AnnAssign):
        return WritePlan(None, "annotated subscript assignments are not rewritten")
    targets = [t.target for t in statement.targets]
    if len(targets) == 1 and isinstance(targets[0], cst.Subscript):
        return _plan_single(analysis, statement, targets[0], line, None)
    return _plan_multiple(analysis, statement, targets, line)


def _form(analysis, statement, target: cst.Subscript, base, index, value, operator) -> tuple:
    """(form, reason): the functional form for one write `base[index] (op)= value`."""
    dataflow = analysis.dataflow
    flat = cst.Subscript(value=base, slice=index)
    kind = dataflow.index_kind(flat)
    uniform = dataflow.is_scalar(value)
    # a value the array's dtype cannot hold is computed and cast as NumPy stores it
    cast = "-cast" if _stores_other_dtype(analysis, base, value, operator) else ""
    if kind in ("basic", "distinct"):
        if cast:
            return ("set-cast" if operator is None else "set-op-cast"), None
        if operator is None:
            return "set", None
        return ("at-" + updates.AT_METHODS[operator] if operator in updates.AT_METHODS
                else "set-op"), None
    if kind == "mask-of-base":
        if uniform:
            return "where", None
        if _elementwise_in_selections(analysis, value, index[0].slice.value, base):
            return "where-map", None
    if kind in ("mask", "mask-of-base") or uniform:  # a mask is eager-only: reported by NJ208
        return ("set" if operator is None else "set-op") + cast, None
    return None, ("the index may repeat, and JAX does not define which value `.at[].set` "
                  "keeps where NumPy keeps the last")


def _stores_other_dtype(analysis, base, value, operator) -> bool:
    """Whether the value a write stores has a dtype the array's cannot hold safely (float
    into integers, float64 into float32), as far as the code shows. NumPy computes the stored
    value (`a[i] + 2.5`) and casts it into the array; JAX's `.at[]` is handed the operand
    instead and warns that it cannot cast it safely (a FutureWarning: an error in later
    releases). The rewrite then computes and casts as NumPy does."""
    dtypes = analysis.dtypes
    target = dtypes.dtype_of(base)
    # a list of Python numbers is an array of the default dtype (`a[1:3] = [20, 30]` into
    # int32 hands JAX int64), where a single number is weak and takes the array's
    operand = dtypes.operand_of(value)
    if operand is None and is_integer(target) and target != "int" and operator is None:
        # nothing shows what the stored values are (`table[i] = gains[i]`, gains from
        # json): cast, as NumPy does, so that a float among them is not handed to the
        # scatter (JAX warns it cannot cast it safely; NJ403 reports the store)
        return True
    return needs_cast(target, stored(target, operator, operand))


# the operators whose Python int operand NumPy converts to the array's dtype first, raising
# OverflowError where it cannot hold it (NumPy 2: `a[i] += 300` of uint8; not `/=`, which
# computes in float64)
_CHECKED_OPERATORS = (None, "+=", "-=", "*=", "//=", "%=", "**=")


def python_int_checked(analysis, base, value, operator) -> bool:
    """Whether a write stores a Python int into an integer array narrower than 64 bits that
    cannot hold it: NumPy 2 raises OverflowError (`a[0] = 300`, `a[0] = -1` of uint8, and
    `a[0] += 300`), where JAX's `.at[]` wraps it. The rewrite then hands JAX
    `jnp.asarray(value, dtype=a.dtype)`, which raises the same OverflowError (and casts a
    NumPy integer as NumPy stores it, where the facts were wrong). A literal the array holds
    is left as it is."""
    if operator not in _CHECKED_OPERATORS:
        return False
    bounds = integer_range(analysis.dtypes.dtype_of(base))
    if bounds is None or bounds[1] >= 2**63 - 1:
        return False
    literal = int_literal(value)
    if literal is not None:
        return not bounds[0] <= literal <= bounds[1]
    # a Python int the code does not show the value of (`a[i] = n`, `a[i] = i + 250`)
    return analysis.dtypes.dtype_of(value) == "int"


def _list_names(dataflow, index, jnp: str, updated_index) -> list:
    """Index names bound only to list literals become jnp.asarray(name) in `.at[...]`."""
    result = []
    for original, element in zip(index, updated_index):
        value = original.slice.value if isinstance(original.slice, cst.Index) else None
        if isinstance(value, cst.Name):
            values, _ = dataflow.values_of(value)
            if values and all(isinstance(v, (cst.List, cst.ListComp)) for v, _ in values):
                element = element.with_changes(slice=element.slice.with_changes(
                    value=updates.jnp_call(jnp, "asarray", element.slice.value)))
        result.append(element)
    return result


def _new_value(form: str, base, index, value, operator, target, jnp: str, wraps: bool = False):
    if operator is not None and isinstance(value, (cst.List, cst.Tuple)) and not form.startswith("at-"):
        value = updates.jnp_call(jnp, "asarray", value)  # a JAX array refuses `x + [1, 2]`
    if form == "set":
        return updates.at_update(base, index, "set", value, jnp)
    if form == "set-op":
        return updates.at_update(base, index, "set",
                                 updates.binary(updates.read(base, index, jnp), operator, value), jnp)
    if form == "set-cast":  # jnp.asarray: the value may be a Python number
        cast = int32_wrap(value, updates.attr(base, "dtype"), jnp) if wraps else updates.jnp_call(
            jnp, "asarray", value, dtype=updates.attr(base, "dtype"))
        return updates.at_update(base, index, "set", cast, jnp)
    if form == "set-op-cast":
        new = updates.binary(updates.read(base, index, jnp), operator, value)
        cast = int32_wrap(new, updates.attr(base, "dtype"), jnp) if wraps else _keep_dtype(new, base)
        return updates.at_update(base, index, "set", cast, jnp)
    if form.startswith("at-"):
        return updates.at_update(base, index, form[3:], value, jnp)
    mask = index[0].slice.value
    if form == "where":  # .astype: NumPy casts what it stores into the array's dtype
        new = value if operator is None else updates.binary(base, operator, value)
    elif form == "where-map":  # y[m] * 2 -> y * 2: elementwise, so the selected values agree
        whole = _unselected(value, mask)
        new = whole if operator is None else updates.binary(base, operator, whole)
    else:
        raise ValueError(form)
    if wraps:
        return updates.jnp_call(jnp, "where", mask, int32_wrap(new, updates.attr(base, "dtype"), jnp), base)
    return _keep_dtype(updates.jnp_call(jnp, "where", mask, new, base), base)


def _wraps(analysis, statement, form: str, base, index, value, operator) -> bool:
    """Whether the write stores float values that may leave the integer array's range and
    int32_wrap computes NumPy's cast of them: the forms that cast (`set-cast`,
    `set-op-cast`, `where`, `where-map`), a target and a stored dtype casts.wraps_exactly
    takes, and an index that can be read twice (`a[i] += v` reads `a[i]` again)."""
    if form not in ("set-cast", "set-op-cast", "where", "where-map"):
        return False
    dtypes, casts = analysis.dtypes, analysis.casts
    target = dtypes.dtype_of(base)
    source = stored(target, operator, dtypes.dtype_of(value))
    data = value if operator is None else None
    if not casts.may_leave_range(statement, data, source, target, value):
        return False
    if not casts.wraps_exactly(source, target, value):
        return False
    return all(casts.is_pure(element) for element in index) and casts.is_pure(base)


def _elementwise_in_selections(analysis, node, mask, base, depth: int = 0) -> bool:
    """Whether `node` computes elementwise from numbers and selections `y[mask]` of arrays
    `y` provably of base's shape (`x[m] = y[m] * 2`, `x[m] = np.sqrt(x[m])`): then computing
    it on whole arrays and keeping the masked elements gives the values NumPy stores."""
    dataflow = analysis.dataflow
    if depth > 16:
        return False
    if dataflow.is_scalar(node):
        return True
    if isinstance(node, cst.Subscript):
        return _selection_by(node, mask) and same_shape(dataflow, node.value, base)
    if isinstance(node, cst.BinaryOperation):
        return not isinstance(node.operator, cst.MatrixMultiply) and all(
            _elementwise_in_selections(analysis, side, mask, base, depth + 1)
            for side in (node.left, node.right))
    if isinstance(node, cst.UnaryOperation):
        return not isinstance(node.operator, cst.Not) and _elementwise_in_selections(
            analysis, node.expression, mask, base, depth + 1)
    if isinstance(node, cst.Call):
        ref = analysis.ref_of_call(node)
        return ref is not None and ref.converted and (ref.entry or {}).get("kind") == "ufunc" \
            and not any(a.keyword is not None or a.star for a in node.args) \
            and all(_elementwise_in_selections(analysis, a.value, mask, base, depth + 1)
                    for a in node.args)
    return False


def _selection_by(node, mask) -> bool:
    return isinstance(node, cst.Subscript) and len(node.slice) == 1 \
        and isinstance(node.slice[0].slice, cst.Index) and node.slice[0].slice.value.deep_equals(mask)


def _unselected(value, mask):
    """`value` (as converted) with every selection `y[mask]` replaced by `y`."""

    class _Whole(cst.CSTTransformer):
        def leave_Subscript(self, original_node, updated_node):
            return updated_node.value if _selection_by(updated_node, mask) else updated_node

    return value.visit(_Whole())


def _keep_dtype(value, base):
    return updates.call(updates.attr(updates.parenthesized(value), "astype"), updates.attr(base, "dtype"))


def _describe(form: str) -> str:
    if form.startswith("where"):
        return "`jnp.where(mask, ...)`"
    return f"`.at[...].{form[3:] if form.startswith('at-') else 'set'}(...)`"


def _plan_single(analysis, statement, target: cst.Subscript, line, operator) -> WritePlan:
    dataflow = analysis.dataflow
    flat = _flatten(target, dataflow)
    if flat is None:
        return WritePlan(None, f"`{code_of(target)}` writes into a copy made by an inner index")
    base, index = flat
    reason = dataflow.unconvertible_because(base, statement, module_global=True)
    carried = None
    declare = None  # a module global written in a function: `global G` declared there
    if reason is None and isinstance(base, cst.Name) and dataflow.module_global_written(base):
        declare = None if dataflow.declares_global(base) else (
            dataflow.enclosing(base, (cst.FunctionDef,)), base.value)
    if reason is not None:
        carried = analysis.views.carry(base, statement)  # a view, or the base of views
        if carried is None or carried.reason is not None:
            return WritePlan(None, reason if carried is None else carried.reason)
    op = None if operator is None else code_of(operator).strip()
    form, reason = _form(analysis, statement, target, base, index, statement.value, op)
    if form is None:
        return WritePlan(None, reason)
    jnp = analysis.jnp_alias
    depth = len(index) - len(target.slice)
    wraps = _wraps(analysis, statement, form, base, index, statement.value, op)
    checked = python_int_checked(analysis, base, statement.value, op)

    def fix(new_line):
        new_statement = new_line.body[0]
        new_target = new_statement.target if isinstance(new_statement, cst.AugAssign) \
            else new_statement.targets[0].target
        new_base, new_index = _rebuild(new_target, depth)
        new_index = _list_names(dataflow, index, jnp, new_index)
        stored_value = new_statement.value
        if checked:  # NumPy raises OverflowError: so does jnp.asarray, where .at[] would wrap
            stored_value = updates.jnp_call(jnp, "asarray", stored_value,
                                            dtype=updates.attr(new_base, "dtype"))
        value = _new_value(form, new_base, new_index, stored_value, op, new_target, jnp, wraps)
        after = carried.statements() if carried is not None else []
        return updates.replace_line(new_line, [updates.assign(new_base, value), *after])

    eager = dataflow.index_kind(cst.Subscript(value=base, slice=index)) in ("mask", "mask-of-base", "distinct") \
        and not form.startswith("where")
    how = _describe(form) + (f", {carried.describe()}" if carried is not None else "")
    if wraps:
        how += ", its float values cast to the integer dtype as NumPy casts them (through int32)"
    if checked:
        how += (", the Python int given as `jnp.asarray(v, dtype=...)`, which raises NumPy's "
                "OverflowError (the array's dtype cannot hold it)")
    requires = carried.requires if carried is not None else dataflow.binding_refs(base)
    if isinstance(base, cst.Name) and dataflow.module_global_written(base):
        requires = dataflow.global_binding_refs(base)
        how += f" of the module global `{base.value}`"
    return WritePlan((line, fix), None, how, eager, requires, where=form.startswith("where"),
                     declare=declare, wraps=wraps)


def _rebuild(target: cst.Subscript, depth: int) -> tuple:
    """The (base, index) of an already rewritten chained target, `depth` subscripts deep."""
    index = list(target.slice)
    base = target.value
    for _ in range(depth):
        index = [*base.slice, *index]
        base = base.value
    return base, updates.with_commas(index)


def _plan_multiple(analysis, statement: cst.Assign, targets, line) -> WritePlan:
    """Tuple targets (`a[0], a[1] = a[1], a[0]`) and chained ones (`a[0] = b[0] = 1`): the
    right side is evaluated first, once, as Python does; then each write in order."""
    dataflow = analysis.dataflow
    flat_targets = []
    for target in targets:
        if isinstance(target, (cst.Tuple, cst.List)) and len(targets) == 1:
            flat_targets.extend(e.value for e in target.elements)
        elif isinstance(target, (cst.Tuple, cst.List)):
            return WritePlan(None, "a tuple target inside a chained assignment is not rewritten")
        else:
            flat_targets.append(target)
    requires = []
    for target in flat_targets:
        if isinstance(target, cst.StarredElement):
            return WritePlan(None, "starred targets are not rewritten")
        if not isinstance(target, cst.Subscript):
            continue
        flat = _flatten(target, dataflow)
        if flat is None or dataflow.index_kind(cst.Subscript(value=flat[0], slice=flat[1])) != "basic":
            return WritePlan(None, "a tuple or chained target is rewritten only with basic indices")
        reason = dataflow.unconvertible_because(flat[0], statement)
        if reason is not None:
            return WritePlan(None, reason)
        requires.extend(dataflow.binding_refs(flat[0]))
    bases = [_flatten(t, dataflow)[0] for t in flat_targets if isinstance(t, cst.Subscript)]
    for base in bases:
        if _may_view(statement.value, base, dataflow, analysis.parents):
            return WritePlan(None, f"the right side may hold views of `{code_of(base)}`, which "
                             "NumPy reads after the first write (a row swap that copies one row "
                             "twice); rewriting would change the result")
    unpacking = len(targets) == 1
    depths = [len(_flatten(t, dataflow)[1]) - len(t.slice) if isinstance(t, cst.Subscript) else 0
              for t in flat_targets]
    casts = [_multiple_cast(analysis, statement, target, position, unpacking)
             for position, target in enumerate(flat_targets)]
    taken: set = set()
    temps = [_temporary(analysis, "_value", taken) if isinstance(t, cst.Subscript) else None
             for t in flat_targets]
    simple = isinstance(statement.value, (cst.Integer, cst.Float, cst.SimpleString, cst.Name))
    single_temp = None if unpacking or simple else _temporary(analysis, "_value", taken)
    jnp = analysis.jnp_alias

    def fix(new_line):
        new_statement = new_line.body[0]
        new_targets = [t.target for t in new_statement.targets]
        if unpacking:
            elements = list(new_targets[0].elements)
            new_flat = [e.value for e in elements]
            names = [cst.Name(temp) if temp else target for temp, target in zip(temps, new_flat)]
            first = cst.Assign(targets=[cst.AssignTarget(new_targets[0].with_changes(elements=[
                e.with_changes(value=name) for e, name in zip(elements, names)]))],
                value=new_statement.value)
            statements = [first]
            values = names
        else:
            new_flat = new_targets
            if single_temp is None:  # a literal or a name: reading it again gives the same value
                statements, values = [], [new_statement.value] * len(new_flat)
            else:
                statements = [updates.assign(cst.Name(single_temp), new_statement.value)]
                values = [cst.Name(single_temp)] * len(new_flat)
        for target, value, depth, cast in zip(new_flat, values, depths, casts):
            if isinstance(target, cst.Subscript):
                base, index = _rebuild(target, depth)
                if cast == "wrap":
                    value = int32_wrap(value, updates.attr(base, "dtype"), jnp)
                elif cast == "cast":  # jnp.asarray: the value may be a Python number
                    value = updates.jnp_call(jnp, "asarray", value, dtype=updates.attr(base, "dtype"))
                statements.append(updates.assign(base, updates.at_update(base, index, "set", value, jnp)))
            elif not unpacking:
                statements.append(updates.assign(target, value))
        return updates.replace_line(new_line, statements)

    # NJ403 stays silent on the statement only when every store that may leave the range wraps
    wraps = "wrap" in casts and "cast-leaving" not in casts
    casts = ["cast" if c == "cast-leaving" else c for c in casts]
    how = "a tuple of `.at[...].set(...)` updates"
    if wraps:
        how += ", their float values cast to the integer dtype as NumPy casts them (through int32)"
    return WritePlan((line, fix), None, how, False, tuple(requires), wraps=wraps)


def _multiple_cast(analysis, statement: cst.Assign, target, position: int, unpacking: bool) -> str | None:
    """How the value a tuple or chained target stores is cast into the array's dtype: None
    (it holds it), "cast" (`jnp.asarray(v, dtype=a.dtype)`: its values fit), "wrap"
    (casts.int32_wrap: float values that may leave the integer range, cast as NumPy does) or
    "cast-leaving" (cast, and NJ403 reports the values that may leave the range). The values
    are read from temporaries or literals, which can be read twice."""
    if not isinstance(target, cst.Subscript):
        return None
    value = statement.value
    if unpacking:
        if not isinstance(value, (cst.Tuple, cst.List)) or any(
                isinstance(e, cst.StarredElement) for e in value.elements) \
                or position >= len(value.elements):
            return None
        value = value.elements[position].value
    dtypes, casts = analysis.dtypes, analysis.casts
    base = _flatten(target, analysis.dataflow)[0]
    if python_int_checked(analysis, base, value, None):
        return "cast"  # `a[0], a[1] = 300, 1` of uint8: NumPy raises OverflowError, as jnp.asarray does
    array, source = dtypes.dtype_of(base), dtypes.dtype_of(value)
    if not needs_cast(array, source):
        return None
    if not casts.may_leave_range(statement, value, source, array):
        return "cast"
    return "wrap" if casts.wraps_exactly(source, array, cst.Name("_value")) else "cast-leaving"


def _may_view(value: cst.CSTNode, base: cst.BaseExpression, dataflow, parents) -> bool:
    """Whether `value` reads from `base` in a way that may be a view of it: anything but
    an integer index into a 1-D array (a number, copied)."""
    if isinstance(value, cst.BaseExpression) and value.deep_equals(base):
        read = parents.get(value)
        return not (isinstance(read, cst.Subscript) and read.value is value
                    and dataflow.scalar_read(read))
    return any(_may_view(child, base, dataflow, parents) for child in value.children)
