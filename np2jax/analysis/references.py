"""References to NumPy and SciPy: which name each one is, how a call's arguments bind to the
API table's parameters, and the plan for each reference: convert to its JAX counterpart,
or keep it on NumPy and why (a KEEP_* reason of np2jax.analysis.facts)."""

from __future__ import annotations

import ast
from typing import Protocol

import libcst as cst
from libcst.metadata import QualifiedNameSource

from np2jax.analysis.facts import (
    KEEP_AMBIGUOUS,
    KEEP_BOUND_TO_NAME,
    KEEP_BY_DESIGN,
    KEEP_DIFFERS,
    KEEP_IN_PLACE_FUNCTION,
    KEEP_MISSING,
    KEEP_MODULE_VALUE,
    KEEP_NO_METHOD,
    KEEP_OUT,
    KEEP_RANDOM,
    KEEP_STATIC,
    KEEP_TYPE_CHECK,
    KEEP_UFUNC_AT,
    KEEP_UNSUPPORTED_ARGUMENT,
    MODULE_ROOTS,
    STATIC_ATTRIBUTES,
    UFUNC_METHODS,
    ARRAY_CONSTRUCTORS,
    ApiRef,
    Argument,
)
from np2jax.catalog import api_policy, api_table
from np2jax.syntax import code_of, is_none


class CallIndex(Protocol):
    """What the planning reads of the collector (np2jax.analysis.collect, which imports
    this module): the reference each call calls, and the jax.numpy calls."""

    ref_by_call: dict
    jax_calls: dict


def numpy_qualname(names) -> str | None:
    """The single NumPy/SciPy name a node refers to, or None (not NumPy, or ambiguous)."""
    names = list(names)
    if len(names) != 1:
        return "" if any(n.name.split(".")[0] in MODULE_ROOTS for n in names) else None
    (name,) = names
    if name.source is QualifiedNameSource.IMPORT and name.name.split(".")[0] in MODULE_ROOTS:
        return name.name
    return None


def call_site(ref: ApiRef, parents: dict) -> cst.Call | None:
    """The call that calls the NumPy/SciPy name `ref` (np2jax.findings.Coverage counts
    them): `np.sum(x)`, and through attributes of the name, `np.add.reduce(x)`,
    `np.add.at(a, i, v)`, `scipy.spatial.distance.cdist(a, b)` (whose reference is the
    known prefix); None for a name not called (`np.pi`, `map(np.sqrt, xs)`)."""
    if ref.call is not None:
        return ref.call
    node, parent = ref.node, parents.get(ref.node)
    while isinstance(parent, cst.Attribute) and parent.value is node:
        node, parent = parent, parents.get(parent)
    return parent if isinstance(parent, cst.Call) and parent.func is node else None


def longest_known(qualname: str) -> str:
    parts = qualname.split(".")
    table = api_table()
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in table:
            return candidate
    return qualname


def bind_arguments(call: cst.Call, entry: dict, qualname: str) -> list[Argument]:
    params = entry.get("params")
    if params is None:
        return [Argument(arg, None) for arg in call.args]
    positional = [p for p in params if p["kind"] == "positional"]
    by_name = {p["name"]: p for p in params if p["kind"] in ("positional", "keyword")}
    var_positional = next((p for p in params if p["kind"] == "var_positional"), None)
    var_keyword = next((p for p in params if p["kind"] == "var_keyword"), None)
    renames = api_policy()["keyword_renames"].get(qualname, {})
    nin = entry.get("nin")
    bound = []
    index = 0
    for arg in call.args:
        if arg.star == "**":  # its keywords (out=?) cannot be checked
            bound.append(Argument(arg, None, f"`**{code_of(arg.value)}`, whose keywords cannot be checked"))
            continue
        if arg.star:
            bound.append(Argument(arg, None))
            continue
        if arg.keyword is None:
            if nin is not None and index >= nin:
                bound.append(Argument(arg, "out", name="out"))
            elif index < len(positional):
                bound.append(_checked(arg, positional[index]))
            elif var_positional is not None:
                bound.append(Argument(arg, var_positional["role"], name=var_positional["name"]))
            else:
                bound.append(Argument(arg, None, f"{index + 1} positional arguments"))
            index += 1
            continue
        name = arg.keyword.value
        name = renames.get(name, name)
        if name == "out":
            bound.append(Argument(arg, "out", name="out"))
        elif name in by_name:
            bound.append(_checked(arg, by_name[name]))
        elif var_keyword is not None:
            bound.append(Argument(arg, "other"))
        else:
            bound.append(Argument(arg, None, f"keyword `{arg.keyword.value}`"))
    return bound


def _checked(arg: cst.Arg, param: dict) -> Argument:
    """An argument bound to a JAX parameter; JAX takes some (sort's kind=) only as None."""
    if param["role"] == "none" and not is_none(arg.value):
        return Argument(arg, "none", f"`{param['name']}={code_of(arg.value)}` (JAX accepts only None)",
                        param["name"])
    return Argument(arg, param["role"], name=param["name"])




def plan(ref: ApiRef, parents: dict, collector: CallIndex) -> None:
    """Decide whether `ref` converts to JAX, and if not, why."""
    policy = api_policy()
    qualname, entry = ref.qualname, ref.entry
    if qualname == "":
        ref.keep = KEEP_AMBIGUOUS
        return
    if qualname.startswith("numpy.random") or qualname == "numpy.random":
        ref.keep = KEEP_RANDOM
        return
    if any(qualname == k or qualname.startswith(k + ".") for k in policy["keep_numpy"]):
        ref.keep = KEEP_BY_DESIGN
        return
    if qualname in policy["type_checks"]:
        ref.keep = KEEP_TYPE_CHECK
        return
    if qualname in ("numpy.asarray", "numpy.array") and ref.call is not None and isinstance(
            flat := parents.get(ref.call), cst.Attribute) and flat.value is ref.call \
            and flat.attr.value == "flat":
        ref.keep = KEEP_BY_DESIGN  # np.asarray(m).flat: NumPy's elements of m (NJ115's form)
        return
    if qualname in policy["differs"]:
        ref.keep, ref.detail = KEEP_DIFFERS, policy["differs"][qualname]
        return
    if qualname in policy["in_place_functions"] or _writes_in_place(ref, policy):
        ref.keep = KEEP_IN_PLACE_FUNCTION  # called, or taken as a value
        return
    parent = parents.get(ref.node)
    if entry is not None and entry.get("kind") == "ufunc":
        if isinstance(parent, cst.Attribute) and parent.value is ref.node \
                and parent.attr.value in UFUNC_METHODS:
            _plan_ufunc_method(ref, parent, parents, entry)
            return
        if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is ref.node:
            ref.keep = KEEP_BOUND_TO_NAME
            return
    if entry is None or entry.get("jax") is None:
        ref.keep = KEEP_MISSING
        return
    if _beyond_the_table(ref):  # scipy.spatial.distance.cdist: JAX's scipy.spatial has no distance
        ref.keep, ref.detail = KEEP_MISSING, ref.full_name
        return
    if entry.get("kind") == "module" and not isinstance(parent, cst.Attribute):
        ref.keep = KEEP_MODULE_VALUE
        return
    if ref.call is not None:
        ref.arguments = bind_arguments(ref.call, entry, qualname)
        for argument in ref.arguments:
            if argument.role == "out" and not is_none(argument.arg.value):
                ref.out_arg = argument.arg
                continue
            if argument.problem is not None:
                ref.keep, ref.detail = KEEP_UNSUPPORTED_ARGUMENT, argument.problem
                return
            unsupported = _unsupported_data(argument, policy, ref)
            if unsupported is not None:
                ref.keep, ref.detail = KEEP_UNSUPPORTED_ARGUMENT, unsupported
                return
        unproven = _value_not_proven(ref, policy)
        if unproven is not None:
            ref.keep, ref.detail = KEEP_DIFFERS, unproven
            return
        if ref.out_arg is not None:  # the out rule may still convert it: see release_out_calls
            ref.keep, ref.detail = KEEP_OUT, code_of(ref.out_arg.value)
            return
        if _feeds_shape(ref.call, parents, collector) and all(
                _is_static(a.value) for a in ref.call.args):
            ref.keep = KEEP_STATIC


def _beyond_the_table(ref: ApiRef) -> bool:
    """A dotted name longer than what the table knows: `scipy.spatial.distance.cdist` (of
    which the table knows the module `scipy.spatial`), `np.new_function`. Its JAX path, the
    known prefix's counterpart with the rest appended, is not known to exist. (An attribute
    of a known function, `np.sum.__name__`, is the function's.)"""
    if not ref.full_name:
        return False
    tail = ref.full_name[len(ref.qualname) + 1:].split(".")
    if (ref.entry or {}).get("kind") in ("module", "class"):
        return True
    return not (tail[0].startswith("__") and tail[0].endswith("__"))


DEFAULT = "<default>"  # policy.toml [same_only_for]: the parameter left out


def _literal(node: cst.BaseExpression):
    """The value of a literal argument (`"wrap"`, `2`, `-1.5`, `True`), else _UNREAD."""
    try:
        return ast.literal_eval(code_of(node))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _UNREAD


_UNREAD = object()


def _value_not_proven(ref: ApiRef, policy: dict) -> str | None:
    """policy.toml [same_only_for]: why this call's value of a parameter is not one shown to
    compute NumPy's result in JAX (tests/rules/test_api_arguments.py runs both), or None."""
    proven = policy["same_only_for"].get(ref.qualname)
    if proven is None:
        return None
    given = {a.name: a.arg.value for a in ref.arguments if a.name is not None}
    short = ref.qualname.rsplit(".", 1)[-1]
    library = "SciPy" if ref.qualname.startswith("scipy") else "NumPy"
    for parameter, values in proven.items():
        spelled = ["left out" if v == DEFAULT else repr(v) for v in values]
        allowed = " or ".join([", ".join(spelled[:-1]), spelled[-1]] if len(spelled) > 1 else spelled)
        said = f"JAX's `{short}` computes {library}'s result only with `{parameter}` {allowed}"
        if parameter not in given:
            if DEFAULT not in values:
                return f"`{parameter}` is left to {library}'s default; {said}"
            continue
        written = f"`{parameter}={code_of(given[parameter])}`"
        value = _literal(given[parameter])
        if value is _UNREAD:
            return f"{written} is not a value np2jax can read; {said}"
        if not any(_same_literal(value, v) for v in values if v != DEFAULT):
            return f"{written}: {said}"
    return None


def _same_literal(value, listed) -> bool:
    """`2` and `2.0` are one value; `True` and `1` are not (TOML keeps the two apart)."""
    if isinstance(value, bool) or isinstance(listed, bool):
        return value is listed
    return type(value) in (int, float) and type(listed) in (int, float) and value == listed \
        or type(value) is type(listed) and value == listed


def _writes_in_place(ref: ApiRef, policy: dict) -> bool:
    """policy.toml [in_place_unless_true]: `np.nan_to_num(x, copy=False)` writes into `x`
    (a value np2jax cannot read may be False)."""
    parameter = policy["in_place_unless_true"].get(ref.qualname)
    if parameter is None or ref.call is None or ref.entry is None:
        return False
    bound = bind_arguments(ref.call, ref.entry, ref.qualname)
    given = next((a.arg.value for a in bound if a.name == parameter), None)
    return given is not None and _literal(given) is not True


def _unsupported_data(argument: Argument, policy: dict, ref: ApiRef) -> str | None:
    """Strings and objects, which JAX arrays cannot hold (in a dtype, or in array data:
    `mode="same"` or einsum's subscripts are strings too, and fine)."""
    value = argument.arg.value
    if argument.role == "dtype" or argument.name == "dtype":
        spelled = value.evaluated_value if isinstance(value, cst.SimpleString) else code_of(value)
        names = policy["unsupported_dtypes"]
        if spelled in names or spelled.lstrip("<>=|").rstrip("0123456789") in names or \
                any(spelled.endswith("." + n.split(".")[-1]) for n in names if "." in n):
            return f"dtype `{code_of(value)}` (JAX has no string or object arrays)"
    is_data = argument.role in ("array", "arrays") or (
        ref.qualname in ARRAY_CONSTRUCTORS and argument is ref.arguments[0])
    if is_data and _holds_strings(value):
        return "strings (JAX has no string arrays)"
    return None


def _holds_strings(node: cst.BaseExpression) -> bool:
    """String literals, lists of them, `str(...)`, and an array made of them in place
    (`np.unique(np.array(["b", "a"]))`: the inner array stays NumPy, so must the call)."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return True
    if isinstance(node, (cst.List, cst.Tuple)):
        return any(_holds_strings(e.value) for e in node.elements)
    if isinstance(node, cst.Call) and node.args and not node.args[0].keyword:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
        if name == "str":
            return True
        if name in ("array", "asarray", "asanyarray") and isinstance(func, cst.Attribute):
            return _holds_strings(node.args[0].value)
    return False


def _plan_ufunc_method(ref: ApiRef, attribute: cst.Attribute, parents: dict, entry: dict) -> None:
    """np.add.at / np.add.reduce(...): JAX has these only on its real ufuncs, without out=."""
    method = attribute.attr.value
    if method == "at":
        ref.keep = KEEP_UFUNC_AT
        return
    if entry.get("jax") is None or method not in entry.get("jax_methods", ()):
        ref.keep, ref.detail = KEEP_NO_METHOD, method
        return
    call = parents.get(attribute)
    if isinstance(call, cst.Call) and call.func is attribute:
        for arg in call.args:
            if arg.star == "**":
                ref.keep, ref.detail = KEEP_UNSUPPORTED_ARGUMENT, f"`**{code_of(arg.value)}`"
                return
            if arg.keyword is not None and arg.keyword.value == "out" and not is_none(arg.value):
                ref.keep, ref.detail = KEEP_OUT, code_of(arg.value)
                return
        # Array operands of the method: reduce(a), accumulate(a), outer(a, b), reduceat(a, idx).
        operands = 1 if method in ("reduce", "accumulate") else 2
        positional = [a for a in call.args if a.keyword is None and not a.star]
        ref.arguments = [Argument(a, "array") for a in positional[:operands]]




def _is_static(node: cst.BaseExpression) -> bool:
    """A host-side value: literals, names, `.shape`/`.ndim`/`.size`, len(), and arithmetic of them."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Name)):
        return True
    if isinstance(node, cst.Attribute):
        return node.attr.value in STATIC_ATTRIBUTES
    if isinstance(node, cst.Subscript):
        return _is_static(node.value)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(_is_static(e.value) for e in node.elements)
    if isinstance(node, cst.BinaryOperation):
        return _is_static(node.left) and _is_static(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _is_static(node.expression)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        return node.func.value in ("len", "int") and all(_is_static(a.value) for a in node.args)
    return False


def _feeds_shape(call: cst.Call, parents: dict, collector: CallIndex) -> bool:
    """Whether the value of `call` is used as (part of) a shape: reshape/range/int arguments,
    or the shape argument of a NumPy call."""
    node: cst.CSTNode = call
    parent = parents.get(node)
    while isinstance(parent, (cst.Element, cst.Tuple, cst.List, cst.BinaryOperation,
                              cst.UnaryOperation)):
        node, parent = parent, parents.get(parent)
    if not isinstance(parent, cst.Arg):
        return False
    outer = parents.get(parent)
    if not isinstance(outer, cst.Call):
        return False
    outer_ref = collector.ref_by_call.get(outer)
    # np.reshape(a, shape) or an already converted jnp.zeros(shape): the table knows the roles.
    qualname = outer_ref.qualname if outer_ref is not None else collector.jax_calls.get(outer)
    if qualname is not None:
        entry = api_table().get(qualname)
        if entry is None:
            return False
        return any(argument.arg is parent and argument.role == "shape"
                   for argument in bind_arguments(outer, entry, qualname))
    func = outer.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("reshape", "resize"):
        return True
    return isinstance(func, cst.Name) and func.value in ("range", "int")
