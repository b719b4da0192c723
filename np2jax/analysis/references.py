"""References to NumPy and SciPy: which name each one is, how a call's arguments bind to the
API table's parameters, and the plan for each reference: convert to its JAX counterpart,
or keep it on NumPy and why (a KEEP_* reason of np2jax.analysis.facts)."""

from __future__ import annotations

import ast
import math
from typing import Protocol

import libcst as cst
from libcst.metadata import QualifiedNameSource

from np2jax.analysis.facts import (
    TEXT_NODES,
    KEEP_AMBIGUOUS,
    KEEP_BOUND_TO_NAME,
    KEEP_BY_DESIGN,
    KEEP_DIFFERS,
    KEEP_IN_PLACE_FUNCTION,
    KEEP_MISSING,
    KEEP_MODULE_VALUE,
    KEEP_NO_METHOD,
    KEEP_OUT,
    KEEP_PROVEN_DIFFERENT,
    KEEP_RANDOM,
    KEEP_STATIC,
    KEEP_TYPE_CHECK,
    KEEP_UFUNC_AT,
    KEEP_UNPROVEN,
    KEEP_UNSUPPORTED_ARGUMENT,
    MODULE_ROOTS,
    STATIC_ATTRIBUTES,
    UFUNC_METHODS,
    ARRAY_CONSTRUCTORS,
    ApiRef,
    Argument,
)
from np2jax.analysis.dtypes import DTYPES, mended_by_promotion
from np2jax.catalog import api_policy, api_proof, api_table
from np2jax.syntax import code_of, dotted_chain, is_none


class CallIndex(Protocol):
    """What the planning reads of the collector (np2jax.analysis.collect, which imports
    this module): the reference each call calls and each node is, and the jax.numpy calls."""

    ref_by_call: dict
    ref_by_node: dict
    jax_calls: dict
    nodes: dict  # node type -> the module's nodes of that type


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
                bound.append(_checked(arg, positional[index], qualname))
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
            bound.append(_checked(arg, by_name[name], qualname))
        elif var_keyword is not None:
            bound.append(Argument(arg, "other"))
        else:
            bound.append(Argument(arg, None, f"keyword `{arg.keyword.value}`"))
    return bound


def _checked(arg: cst.Arg, param: dict, qualname: str) -> Argument:
    """An argument bound to a JAX parameter; JAX takes some (sort's kind=) only as None,
    unless running both proved JAX's spelling of the value NumPy's (kind="stable")."""
    if param["role"] == "none" and not is_none(arg.value) \
            and jax_spelling(qualname, Argument(arg, "scalar", name=param["name"])) is None:
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
            _plan_ufunc_method(ref, parent, parents, entry, collector)
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
    if ref.call is None and entry.get("kind") in ("function", "ufunc"):
        _check_value_reference(ref, parents)  # `key=np.abs`, `f = np.mean`: called with what, unknown
        return
    if ref.call is not None:
        ref.arguments = bind_arguments(ref.call, entry, qualname)
        if _computed_by_numpy(ref, policy):  # NumPy computes it: JAX's signature does not matter
            if _handed_to_jax(ref.call, parents):
                ref.keep = KEEP_BY_DESIGN  # jnp.asarray(np.linspace(...)): converted already
            elif _feeds_shape(ref.call, parents, collector) and all(
                    _is_static(a.value) for a in ref.call.args) or _iterated_by_python(ref.call, parents, collector):
                ref.keep = KEEP_STATIC
            else:
                ref.computed_by_numpy = True
            return
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
        if entry.get("kind") in ("function", "ufunc", "class") or qualname in api_proof():
            verdict = check_call(qualname, ref.arguments, collector) or \
                _check_caught(qualname, ref.call, parents, ref.arguments, collector) or \
                _caught_conversion(qualname, ref.call, parents)
            if verdict is not None:
                ref.keep, ref.detail = verdict
                return
        _plan_proven_call(ref, parents, collector)


def _plan_proven_call(ref: ApiRef, parents: dict, collector: CallIndex) -> None:
    """The last of `plan`, for a call within what was proven: its out= or a shape it feeds."""
    if ref.out_arg is not None:  # the out rule may still convert it: see release_out_calls
        ref.keep, ref.detail = KEEP_OUT, code_of(ref.out_arg.value)
        return
    if _feeds_shape(ref.call, parents, collector) and all(
            _is_static(a.value) for a in ref.call.args):
        ref.keep = KEEP_STATIC


# the edge values integer and bool data cannot hold
FLOAT_EDGES = frozenset({"nan", "inf", "negative-zero"})


def replan_for_integer_data(ref: ApiRef, parents: dict, collector: CallIndex, dtype_of) -> None:
    """A call kept on NumPy for an edge value (NaN, infinities, -0.0) its data cannot hold,
    every data argument being of an integer or bool dtype the code shows
    (`gammaln(counts)`): planned again with those edges ruled out."""
    if ref.keep != KEEP_PROVEN_DIFFERENT or ref.call is None:
        return
    data = data_arguments(ref)
    if not data or not all(DTYPES.get(dtype_of(a.arg.value) or "", ("f",))[0] in "uib" for a in data):
        return
    verdict = check_call(ref.qualname, ref.arguments, collector, ruled_out=FLOAT_EDGES) or \
        _check_caught(ref.qualname, ref.call, parents, ref.arguments, collector)
    if verdict is None:
        ref.keep, ref.detail = None, ""
        _plan_proven_call(ref, parents, collector)


def _handed_to_jax(call: cst.Call, parents: dict) -> bool:
    """`call` is the one argument of an `asarray` (`jnp.asarray(np.linspace(...))`, what
    np2jax writes for a grid NumPy computes; `np.asarray(...)`, which becomes it): the grid
    stays NumPy's, and is converted by that call. Read by its spelling, so that the output
    checked again before its imports are added (check's fix edits) says the same."""
    arg = parents.get(call)
    outer = parents.get(arg)
    return isinstance(arg, cst.Arg) and isinstance(outer, cst.Call) and len(outer.args) == 1 \
        and arg.keyword is None and not arg.star and isinstance(outer.func, cst.Attribute) \
        and outer.func.attr.value == "asarray"


# iterators giving their arguments' elements (or tuples of them) one by one
_ELEMENT_ITERATORS = frozenset({"builtins.enumerate", "builtins.zip", "itertools.product",
                                "itertools.combinations", "itertools.permutations",
                                "itertools.combinations_with_replacement"})


def _iterated_by_python(call: cst.Call, parents: dict, collector: CallIndex) -> bool:
    """`call` is what a `for` statement or a comprehension iterates over, alone or inside
    `enumerate(...)`, `zip(...)`, `itertools.product(...)`... (`for v in np.linspace(0, 1,
    n)`): a grid NumPy computes gains nothing from being handed to JAX there, and its
    elements would be 0-d JAX arrays meeting Python (hashing, `round`, formatting) where
    NumPy gives scalars."""
    node, parent = call, parents.get(call)
    if isinstance(parent, cst.Arg) and parent.keyword is None and not parent.star:
        outer = parents.get(parent)
        if isinstance(outer, cst.Call) and collector.qualified_names(outer.func) & _ELEMENT_ITERATORS:
            node, parent = outer, parents.get(outer)
    return isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node


def _computed_by_numpy(ref: ApiRef, policy: dict) -> bool:
    """A grid whose values JAX rounds differently (policy.toml computed_by_numpy)."""
    if ref.qualname not in policy["computed_by_numpy"]:
        return False
    given = {a.name: a.arg.value for a in ref.arguments if a.name is not None}
    if "retstep" in given and _literal(given["retstep"]) is not False:
        return False  # a tuple (array, step): left as JAX's
    if ref.qualname == "numpy.arange":
        step = given.get("step")
        return step is not None and not isinstance(_literal(step), int)
    return True


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


def _writes_in_place(ref: ApiRef, policy: dict) -> bool:
    """policy.toml [in_place_unless_true]: `np.nan_to_num(x, copy=False)` writes into `x`
    (a value np2jax cannot read may be False)."""
    parameter = policy["in_place_unless_true"].get(ref.qualname)
    if parameter is None or ref.call is None or ref.entry is None:
        return False
    bound = bind_arguments(ref.call, ref.entry, ref.qualname)
    given = next((a.arg.value for a in bound if a.name == parameter), None)
    return given is not None and _literal(given) is not True


def data_arguments(ref: ApiRef) -> list[Argument]:
    """A call's data: the arguments JAX takes as arrays (roles array and arrays), and the
    value np.array/np.asarray/np.asanyarray make an array of."""
    return [a for a in ref.arguments if a.role in ("array", "arrays")
            or (ref.qualname in ARRAY_CONSTRUCTORS and a is ref.arguments[0])]


def written_arguments(ref: ApiRef) -> list[cst.Arg]:
    """The arguments a NumPy call writes into: its out= (`np.clip(a, lo, hi, out=a)` writes
    a, not hi), or an in-place function's first argument (`np.copyto(dst, src)`)."""
    if ref.call is None:
        return []
    positional = [a for a in ref.call.args if a.keyword is None and not a.star]
    return [arg for arg in ref.call.args
            if ref.out_arg is arg
            or (ref.keep == KEEP_OUT and arg.keyword is not None and arg.keyword.value == "out")
            or (ref.keep == KEEP_IN_PLACE_FUNCTION and positional and arg is positional[0])]


def list_items(node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The items of a list or tuple literal (starred ones left out), else None."""
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    return [e.value for e in node.elements if not isinstance(e, cst.StarredElement)]


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
    if argument in data_arguments(ref) and _holds_strings(value):
        return "strings (JAX has no string arrays)"
    return None


def _holds_strings(node: cst.BaseExpression) -> bool:
    """String literals, lists of them, `str(...)`, and an array made of them in place
    (`np.unique(np.array(["b", "a"]))`: the inner array stays NumPy, so must the call)."""
    if isinstance(node, TEXT_NODES):
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


def _plan_ufunc_method(ref: ApiRef, attribute: cst.Attribute, parents: dict, entry: dict,
                       collector: CallIndex) -> None:
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
        verdict = check_call(f"{ref.qualname}.{method}", _method_arguments(
            call, operands, f"{ref.qualname}.{method}"), collector)
        if verdict is not None:
            ref.keep, ref.detail = verdict
    elif method in ("reduce", "accumulate", "outer"):  # np.add.reduce taken as a value
        record = api_proof().get(f"{ref.qualname}.{method}")
        if record is None or not fine(record.get("verdict", DIFFERS)):
            ref.keep, ref.detail = KEEP_UNPROVEN, f"`.{method}` taken as a value: " + (
                _unproven_why(record) if record is None or "verdict" not in record else
                f"JAX's version differs: {_why(record['verdict'])}")


def _method_arguments(call: cst.Call, operands: int, name: str) -> list[Argument]:
    """The arguments of `np.add.reduce(a, 0, keepdims=True)` named after the parameters of
    JAX's method, in the proven table's order."""
    names = (api_proof().get(name) or {}).get("positional", [])
    bound = []
    index = 0
    for arg in call.args:
        if arg.keyword is not None:
            bound.append(Argument(arg, "out" if arg.keyword.value == "out" else None,
                                  name=arg.keyword.value))
        elif arg.star:
            bound.append(Argument(arg, None))
        else:
            role = "array" if index < operands else None
            bound.append(Argument(arg, role, name=names[index] if index < len(names) else None))
            index += 1
    return bound




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


# --- the API table proven by running both (rules/api/proven.json) ----------------------------

SAME, RAISES, NUMPY_RAISES, DIFFERS = "same", "raises", "numpy raises", "differs"
# equal numbers whose zeros differ in sign (np2jax.apiproof.UNSIGNED_ZEROS, SIGNED_ZEROS);
# ZERO_SIGN_ITEM: in one item of a tuple result, which NJ417's rewrite cannot reach
UNSIGNED_ZEROS = "-0.0 where every zero of NumPy's result is 0.0"
SIGNED_ZEROS = "zeros whose sign differs from NumPy's"
ZERO_SIGN_ITEM = " (item "
OMITTED = "<omitted>"
# The proof's edge values that data may hold whatever its shape (np2jax.apiproof.variant):
# a call whose JAX version differs for one stays on NumPy. The shape edges (0-d, empty,
# another ndim) do not keep a call: planning sees no shapes, and most of those raise in JAX.
# Nor does the data scaled near zero ("tiny"): scaling also makes counts and probabilities
# no longer integers (scipy.stats.binom.pmf), so its verdicts mix other differences in;
# they are recorded, and complex data near zero is part of the complex dtypes' verdicts.
VALUE_EDGES = {"nan": "NaN", "inf": "infinities", "ties": "ties (equal values)",
               "negative-zero": "-0.0"}
# a Python number given for a data argument: NumPy's result once it is NumPy's 64-bit
# array, or (an integer) a float64 array (np2jax.apiproof.AS_ARRAY, AS_FLOAT_ARRAY)
AS_ARRAY, AS_FLOAT_ARRAY = "same as a 64-bit array", "same as a float64 array"
INT_ARRAY_CASE = "int64 array beside float32"  # np2jax.apiproof.INT_ARRAY_CASE
DTYPE_AS_FLOAT64 = "same as float64 data"  # np2jax.apiproof.DTYPE_AS_FLOAT64
# an option value JAX refuses, NumPy's result with JAX's spelling of it (np2jax.apiproof.AS_SPELLED)
AS_SPELLED = "same as JAX's"
# the options proven again with int64 data, read for data of any integer dtype
INTEGER_PARAMS = "int64_params"  # np2jax.apiproof.INTEGER_PARAMS
# the options taking arrays given arrays of other dtypes (np2jax.apiproof.OPTION_DTYPES)
OPTION_DTYPES = "option_dtypes"
INTEGER_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
# the proof's Python numbers by the kind of number each stands for (np2jax.apiproof.PYTHON_NUMBERS)
_NUMBER_CASES = {"int": ("300 ", "5 "), "float": ("0.1 ",)}
_NOT_LITERAL = object()
# dtype spellings -> the name the proven table tries (`dtype='float32'`)
_DTYPE_ALIASES = {
    "float": "float64", "double": "float64", "float_": "float64", "f8": "float64", "d": "float64",
    "single": "float32", "f4": "float32", "f": "float32", "half": "float16", "f2": "float16",
    "int": "int64", "int_": "int64", "intp": "int64", "i8": "int64", "l": "int64", "q": "int64",
    "longlong": "int64", "i4": "int32", "intc": "int32", "u1": "uint8", "ubyte": "uint8",
    "B": "uint8", "bool": "bool", "bool_": "bool", "b1": "bool", "?": "bool",
    "complex": "complex128", "complex_": "complex128", "cdouble": "complex128", "c16": "complex128",
    "D": "complex128",
}
_DTYPE_NAMES = {"float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint64",
                "uint32", "uint16", "uint8", "bool", "complex128", "complex64"}


def fine(verdict: str) -> bool:
    """Same, both raise, or only NumPy raises (no NumPy program that runs gets there); or
    equal numbers whose zeros differ in sign (`zero_signs_only`)."""
    return verdict in (SAME, RAISES) or verdict.startswith(NUMPY_RAISES) \
        or zero_signs_only(verdict)


def zero_signs_only(verdict: str) -> bool:
    """JAX's results equal NumPy's as numbers, their zeros' signs aside (-0.0 == 0.0): the
    call converts. Where every zero of NumPy's (one-array) result is 0.0, NJ417 gives JAX's
    zeros that sign (`unsigned_zeros`); the other way round (NumPy's `np.cumsum` keeps a
    leading -0.0, JAX's gives 0.0) nothing mends, and the guide's Precision section says so."""
    return verdict.startswith(DIFFERS) and _why(verdict).startswith((UNSIGNED_ZEROS, SIGNED_ZEROS))


def unsigned_zeros(qualname: str) -> bool:
    """Running both showed JAX's one-array result with -0.0 where every zero of NumPy's is
    0.0 (`np.sign(-0.0)`, `scipy.special.erfinv(-0.0)`), for some dtype, edge or option:
    NJ417 writes each converted call so that its zeros are 0.0."""
    def verdicts(value):
        if isinstance(value, dict):
            for item in value.values():
                yield from verdicts(item)
        elif isinstance(value, str):
            yield value
    return any(_why(v).startswith(UNSIGNED_ZEROS) and ZERO_SIGN_ITEM not in v
               for v in verdicts(api_proof().get(qualname) or {}) if v.startswith(DIFFERS))


def _why(verdict: str) -> str:
    return verdict.split(": ", 1)[1] if ": " in verdict else verdict


def _check_value_reference(ref: ApiRef, parents: dict) -> None:
    """A function taken as a value (`key=np.abs`, `f = np.mean`): whoever calls it passes
    arguments nothing here sees, so it converts when its call with NumPy's defaults was
    proven the same and JAX requires nothing NumPy defaults, and it is not returned: its
    callers may hand it what only NumPy's takes."""
    if _returned(ref.node, parents):  # what its callers give it was not run beside JAX's
        ref.keep, ref.detail = KEEP_UNPROVEN, \
            "it is returned as a value, and its callers may call it with what only NumPy's " \
            "version takes (a list, an object whose method NumPy calls: `np.cos(z)` is `z.cos()`)"
        return
    record = api_proof().get(ref.qualname)
    if record is None or "verdict" not in record:
        ref.keep, ref.detail = KEEP_UNPROVEN, _unproven_why(record)
        return
    if not fine(record["verdict"]):
        ref.keep, ref.detail = KEEP_PROVEN_DIFFERENT, f"run side by side, JAX's version differs: " \
                                                     f"{_why(record['verdict'])}"
        return
    if unsigned_zeros(ref.qualname):
        ref.keep, ref.detail = KEEP_PROVEN_DIFFERENT, \
            f"it is taken as a value, and JAX's version gives {UNSIGNED_ZEROS} (NJ417 mends " \
            "the calls it sees)"
        return
    for name, param in record.get("params", {}).items():
        omitted = param.get("values", {}).get(OMITTED)
        if omitted is not None and not fine(omitted):
            ref.keep, ref.detail = KEEP_PROVEN_DIFFERENT, \
                f"it is taken as a value, and called without `{name}` JAX's version differs: " \
                f"{_why(omitted)}"
            return


def _returned(node, parents: dict) -> bool:
    """Whether `node` is what a `return` gives, or an item of it (`return (np.cos, dcos)[n]`,
    `return {"cos": np.cos}`, `return np.sin if odd else np.cos`)."""
    parent = parents.get(node)
    while isinstance(parent, (cst.Tuple, cst.List, cst.Set, cst.Dict, cst.Element, cst.DictElement,
                              cst.IfExp, cst.BooleanOperation, cst.Subscript)):
        if isinstance(parent, cst.Subscript) and parent.value is not node \
                or isinstance(parent, cst.DictElement) and parent.value is not node \
                or isinstance(parent, cst.IfExp) and parent.test is node:
            return False  # an index, a key, a condition
        node, parent = parent, parents.get(parent)
    return isinstance(parent, cst.Return)


def _unproven_why(record: dict | None) -> str:
    if record is None:
        return "it was not run beside its JAX version (rules/api/proven.json)"
    return f"it was not run beside its JAX version: {record.get('skipped', 'no verdict')}"


def check_call(qualname: str, arguments: list[Argument], collector,
               ruled_out: frozenset = frozenset()) -> tuple[str, str] | None:
    """(KEEP_*, detail) when the call's arguments are outside what running NumPy/SciPy and
    JAX side by side proved the same, else None. `arguments`: bound by bind_arguments;
    `ruled_out`: edge values the data cannot hold (FLOAT_EDGES for integer data)."""
    record = api_proof().get(qualname)
    if record is None or "verdict" not in record:
        return KEEP_UNPROVEN, _unproven_why(record)
    if record.get("identical"):
        return None
    params = record.get("params", {})
    given = set()
    for argument in arguments:
        arg = argument.arg
        if argument.role == "out":
            continue
        if arg.star:
            return KEEP_UNPROVEN, f"`{arg.star}{code_of(arg.value)}`, whose values cannot be " \
                                  "matched with what was proven"
        name = argument.name or (arg.keyword.value if arg.keyword is not None else None)
        if name is None:
            continue  # a positional argument of a function without a signature: its data
        given.add(name)
        if argument.role in ("array", "arrays"):
            problem = _check_python_numbers(qualname, name, argument)
            if problem is not None:
                return problem
        param = params.get(name)
        if param is None:
            if argument.role in ("array", "arrays"):
                continue  # data (ufuncs' *args): proven by the dtypes and edges
            return KEEP_UNPROVEN, f"`{name}={code_of(arg.value)}` was not run beside JAX's version"
        problem = _check_value(name, arg.value, param, collector)
        if problem is not None:
            return problem
    if not fine(record["verdict"]):
        return KEEP_PROVEN_DIFFERENT, f"run side by side, JAX's version differs: {_why(record['verdict'])}"
    for edge, data in VALUE_EDGES.items():
        verdict = record.get("edges", {}).get(edge, SAME) if edge not in ruled_out else SAME
        if not fine(verdict):
            return KEEP_PROVEN_DIFFERENT, f"for data holding {data}, which nothing here rules " \
                                          f"out, JAX's version differs: {_why(verdict)}"
    # parameters left to NumPy's default, those JAX requires first (the more telling reason)
    for name, param in sorted(params.items(), key=lambda item: not item[1].get("required_by_jax")):
        omitted = param.get("values", {}).get(OMITTED)
        if name in given or omitted is None or fine(omitted):
            continue
        if param.get("required_by_jax"):
            default = param.get("numpy_default")
            if default is not None and not fine(param["values"].get(default, DIFFERS)):
                return KEEP_PROVEN_DIFFERENT, \
                    f"a missing `{name}`: JAX's version requires it, and differs for NumPy's " \
                    f"default `{name}={default}` ({_why(param['values'][default])})"
            return KEEP_PROVEN_DIFFERENT, f"a missing `{name}`: JAX's version requires it"
        default = param.get("numpy_default")
        shown = f"`{name}` left to its default `{default}`" if default else f"`{name}` left out"
        return KEEP_PROVEN_DIFFERENT, f"{shown}, for which JAX's version differs: {_why(omitted)}"
    return None


def jax_spelling(qualname: str, argument: Argument) -> str | None:
    """JAX's spelling (`stable=True`) of a literal option value JAX refuses
    (`kind="stable"`), where running both proved JAX so given computes NumPy's result
    (AS_SPELLED), for float64 and int64 data alike; None otherwise."""
    literal = _literal(argument.arg.value)
    if argument.name is None or literal is _NOT_LITERAL:
        return None
    record = api_proof().get(qualname) or {}
    verdicts = [record.get("params", {}).get(argument.name, {}).get("values", {}).get(repr(literal), ""),
                record.get(INTEGER_PARAMS, {}).get(argument.name, {}).get(repr(literal), "")]
    if not all(v.startswith(AS_SPELLED) for v in verdicts if v):
        return None
    return next((v.removeprefix(AS_SPELLED).strip() for v in verdicts if v), None)


def check_data_dtypes(ref: ApiRef, parents: dict, dtype_of) -> tuple[str, str] | None:
    """(KEEP_PROVEN_DIFFERENT, detail) for a call whose data has a dtype the code shows
    (`dtype_of`: np2jax.analysis.dtypes) for which running both showed JAX's version
    differing (np.convolve of int64 data: float64; np.cov of float32: float32;
    np.add.accumulate of uint8: uint8; scipy.special.ndtr of int64: JAX raises), unless
    NJ402 rewrites the call to NumPy's dtype (mended_by_promotion); None otherwise. float64
    data is the base call's; a dtype the proof did not run is not decided here. Options on
    integer data are checked against the grid's second run on int64 data, for every integer
    dtype. The proof gives every data argument the dtype at once: data of mixed dtypes, or
    with a Python number among it, promotes otherwise (NJ402, NJ116 rewrite those), and is
    not decided here either; nor is an integer floor division, whose difference is a zero
    divisor's (NJ405)."""
    qualname, call = ref.qualname, ref.call
    attribute = parents.get(ref.node)
    if call is None and isinstance(attribute, cst.Attribute) and attribute.value is ref.node \
            and isinstance(parents.get(attribute), cst.Call) and parents[attribute].func is attribute:
        qualname, call = f"{qualname}.{attribute.attr.value}", parents[attribute]  # np.add.accumulate(x)
    record = api_proof().get(qualname) or {}
    if call is None or any(a.star for a in call.args):
        return None
    for argument in ref.arguments:  # np.bincount(labels, weights=w32): float32 in JAX
        verdicts = record.get(OPTION_DTYPES, {}).get(argument.name or "", {})
        dtype = dtype_of(argument.arg.value) if verdicts else None
        verdict = verdicts.get(_OPTION_CASES.get(DTYPES[dtype][0] + str(DTYPES[dtype][1]), "")) \
            if dtype in DTYPES else None
        if verdict is not None and not fine(verdict):
            return KEEP_PROVEN_DIFFERENT, f"for `{argument.name}` of {dtype} (`{code_of(argument.arg.value)}`), " \
                                          f"JAX's version differs: {_why(verdict)}"
    verdicts = record.get("dtypes")
    if not verdicts or qualname in _ZERO_DIVISOR_RULED:
        return None
    params = record.get("params", {})
    array_options = _array_options(record)
    # `np.percentile(x32, 50)`: the proof's q was an array, whose float64 promotes the result
    # where a Python number does not; the dtype verdict does not describe the call
    numbers_for_arrays = any(argument.name in array_options and dtype_of(argument.arg.value) in ("int", "float")
                             for argument in ref.arguments)
    found, data = set(), []
    for argument in data_arguments(ref):
        if argument.name in array_options or not params.get(argument.name or "", {"data": True}).get("data"):
            continue  # an option taking arrays (bincount's weights): not the data cast
        dtype = dtype_of(argument.arg.value)
        if dtype in ("int", "float"):  # a Python number, weak in NumPy as in JAX ...
            if any(v in (AS_ARRAY, AS_FLOAT_ARRAY) for v in
                   python_number_cases(qualname, argument.name, dtype).values()):
                return None  # ... unless NumPy makes it an array (NJ116 rewrites it)
            continue
        found.add(dtype)
        data.append(argument.arg.value)
    if len(found) != 1:
        return None
    (dtype,) = found
    verdict = verdicts.get(dtype) if dtype != "float64" and not numbers_for_arrays else None
    if verdict is not None and not fine(verdict) \
            and not mended_by_promotion(qualname.removeprefix("numpy."), dtype):
        if verdict == DTYPE_AS_FLOAT64:  # NJ402 gives JAX the data as float64
            ref.widened = tuple(a.arg for a in data_arguments(ref) if a.arg.value in data)
            return None
        return KEEP_PROVEN_DIFFERENT, f"for {dtype} data (`{code_of(data[0])}`), " \
                                      f"JAX's version differs: {_why(verdict)}"
    if dtype in INTEGER_DTYPES:
        return _check_integer_options(record.get(INTEGER_PARAMS, {}), ref, dtype)
    return None


# ndarray methods that are their NumPy function with the array first (`counts.round(-1)` is
# np.round(counts, -1)); not the in-place ones (sort, fill) nor those whose arguments differ
# (reshape(*shape), transpose(*axes), compress(condition))
FUNCTION_METHODS = frozenset({
    "round", "clip", "sum", "prod", "mean", "std", "var", "min", "max", "cumsum", "cumprod",
    "argmax", "argmin", "argsort", "repeat", "take", "trace", "searchsorted", "all", "any",
    "diagonal", "squeeze", "swapaxes", "dot", "nonzero", "conj", "conjugate"})


def check_method(call: cst.Call, dtype_of) -> tuple[str, str] | None:
    """(KEEP_PROVEN_DIFFERENT, detail) for `x.round(-1)`, a method of FUNCTION_METHODS on
    data of a dtype the code shows, for which running both showed the function
    (`np.round(x, -1)`) differing in JAX: its dtype verdicts and, on integer data, its
    options as run on int64 data (check_data_dtypes); None otherwise. Its base call and
    edges are not read here: the methods of JAX arrays were converted with the array."""
    ref = _method_as_function(call)
    if ref is None:
        return None
    problem = next((a.problem for a in ref.arguments if a.role == "none"), None)
    if problem is not None:  # x.argsort(kind="quicksort"): JAX takes only None
        return KEEP_UNSUPPORTED_ARGUMENT, problem
    return check_data_dtypes(ref, {}, dtype_of)  # the receiver is the tree's own node


def method_spellings(call: cst.Call) -> list[tuple[cst.Arg, str]]:
    """(argument, JAX's spelling) for each option of a FUNCTION_METHODS call given a value
    JAX refuses but spells otherwise (`x.argsort(kind="stable")`: `stable=True`)."""
    ref = _method_as_function(call)
    if ref is None:
        return []
    return [(a.arg, spelling) for a in ref.arguments[1:]
            if (spelling := jax_spelling(ref.qualname, a)) is not None]


def _method_as_function(call: cst.Call) -> ApiRef | None:
    """`x.round(-1)` as the call `round(x, -1)` of np.round, its arguments bound; None for
    a method that is no such function or takes an argument the function does not."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in FUNCTION_METHODS:
        return None
    qualname = f"numpy.{func.attr.value}"
    entry = api_table().get(qualname)
    if entry is None or "params" not in entry:
        return None
    as_function = call.with_changes(func=cst.Name(func.attr.value),
                                    args=[cst.Arg(func.value), *call.args])
    ref = ApiRef(node=as_function.func, qualname=qualname, entry=entry, call=as_function,
                 arguments=bind_arguments(as_function, entry, qualname))
    if any(argument.role is None for argument in ref.arguments):
        return None  # an argument the function does not take: not the same call
    return ref


def _array_options(record: dict) -> frozenset:
    """The options the proof's base call gave an array sample (`percentile(@M, @q)`: q, an
    array of float64 the dtype runs leave as it is), whose dtype takes part in the result's
    as a Python number's would not."""
    call = record.get("call", "")
    inside = call[call.find("(") + 1:-1] if "(" in call else ""
    items, depth, start = [], 0, 0
    for index, char in enumerate(inside):  # the top-level items: "(0, 1)" is one
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            items.append(inside[start:index].strip())
            start = index + 1
    items.append(inside[start:].strip())
    positional = record.get("positional", [])
    params = record.get("params", {})
    named = [item.split("=", 1) if "=" in item and not item.startswith("@") else
             [positional[index] if index < len(positional) else "", item]
             for index, item in enumerate(items) if item]
    # an array the grid also tries numbers or None for (percentile's q, histogram's weights)
    return frozenset(name for name, value in named if value.startswith("@") and name in params
                     and any(not key.startswith("@") for key in params[name].get("values", {})))


def _check_integer_options(proven: dict, ref: ApiRef, dtype: str) -> tuple[str, str] | None:
    """The options of a call on integer data, against what running both showed with int64
    data (the proof's options ran on float64 data first): `np.round(counts, -1)` raises in
    JAX for integers, `np.quantile(counts, 0.5, method="lower")` is NumPy's integer and
    JAX's float. An option whose value the code does not spell must be the same for every
    value tried."""
    for argument in ref.arguments:
        values = proven.get(argument.name or "")
        if not values or argument.role in ("array", "arrays", "out"):
            continue
        literal = _dtype_literal(argument.arg.value, None) if argument.name == "dtype" \
            else _literal(argument.arg.value)
        written = f"`{argument.name}={code_of(argument.arg.value)}`"
        if literal is not _NOT_LITERAL and repr(literal) in values:
            verdict = values[repr(literal)]
            if not fine(verdict) and not verdict.startswith(AS_SPELLED):
                return KEEP_PROVEN_DIFFERENT, f"JAX's version differs for {written} on {dtype} " \
                                              f"data: {_why(verdict)}"
        elif not all(fine(v) for k, v in values.items() if k != OMITTED):
            return KEEP_PROVEN_DIFFERENT, f"{written} on {dtype} data, which may take a value " \
                                          f"for which JAX's version differs"
    return None


# the dtype an array given for an option stands for, by kind and bits, among the proof's
# cases for options taking arrays (np2jax.apiproof.OPTION_DTYPE_CASES)
_OPTION_CASES = {"b8": "bool", **{f"{k}{b}": "int64" for k in "ui" for b in (8, 16, 32, 64)},
                 "f16": "float32", "f32": "float32"}


# integer floor divisions, which differ for a zero divisor alone: NJ405 rewrites or reports them
_ZERO_DIVISOR_RULED = frozenset({"numpy.floor_divide", "numpy.divmod"})


def python_number_cases(qualname: str, parameter: str | None, kind: str) -> dict[str, str]:
    """What running both showed for a Python number of `kind` ("int" or "float") given as
    the data argument `parameter` (as an item of it, for a sequence of arrays): {the dtype of
    the data beside it: verdict}, a verdict being fine (JAX takes the number as NumPy does,
    or both raise), AS_ARRAY or AS_FLOAT_ARRAY (JAX gives NumPy's result once the number is
    that array), or a difference; empty where it was not run."""
    cases = (api_proof().get(qualname) or {}).get("python_numbers", {}).get(parameter) or {}
    prefixes = _NUMBER_CASES.get(kind, ())
    return {case.rsplit(" beside ", 1)[1]: verdict for case, verdict in cases.items()
            if prefixes and case.startswith(prefixes)}


def int_array_verdict(qualname: str, parameter: str | None) -> str | None:
    """What running both showed for an int64 array given as the data argument `parameter`
    (an item of it, for a sequence of arrays) beside float32 data: fine, AS_FLOAT_ARRAY
    (NumPy computes in float64, JAX in float32 unless the integers are float64), a
    difference, or None where it was not run (np2jax.apiproof.INT_ARRAY_CASE)."""
    cases = (api_proof().get(qualname) or {}).get("python_numbers", {}).get(parameter) or {}
    return cases.get(INT_ARRAY_CASE)


# every data argument given as the Python number 2.5 (np2jax.apiproof.NUMBERS_ALONE,
# ALONE_CASE): AS_ARRAY where JAX's result is weakly typed and NumPy's 64-bit array of the
# number gives NumPy's (strong) result
NUMBERS_ALONE, ALONE_CASE = "*", "2.5 alone"


def numbers_alone_verdict(qualname: str) -> str | None:
    """What running both showed for `qualname` given Python numbers for all its data
    (`np.sqrt(2.5)`): SAME, AS_ARRAY (JAX's result is weakly typed; as NumPy's 64-bit array
    the number gives NumPy's dtype), a difference, or None where it was not run."""
    cases = (api_proof().get(qualname) or {}).get("python_numbers", {}).get(NUMBERS_ALONE) or {}
    return cases.get(ALONE_CASE)


def number_differs(verdict: str) -> bool:
    """A verdict of python_number_cases that no wrapping of the number mends."""
    return not fine(verdict) and verdict not in (AS_ARRAY, AS_FLOAT_ARRAY)


def _check_python_numbers(qualname: str, name: str, argument: Argument) -> tuple[str, str] | None:
    """A Python number literal given for a data argument (an item of a sequence of arrays)
    for which JAX's version differs however it is given and whatever data is beside it
    (np.searchsorted(a, 300): JAX's index is int32; np.argsort(0.5) raises). Differences
    beside one narrow dtype only are NJ116's (python-number-as-array-argument)."""
    value = argument.arg.value
    members = (list_items(value) if argument.role == "arrays" else None) or [value]
    for member in members:
        number = _literal(member)
        if type(number) not in (int, float):
            continue
        verdicts = list(python_number_cases(qualname, name, type(number).__name__).values())
        if verdicts and all(number_differs(v) for v in verdicts):
            verdict = verdicts[0]
            place = "in" if argument.role == "arrays" else "as"
            return KEEP_PROVEN_DIFFERENT, f"JAX's version differs for the Python number " \
                                          f"`{code_of(member)}` given {place} `{name}`: {_why(verdict)}"
    return None


def _check_caught(qualname: str, call: cst.Call, parents: dict, arguments: list[Argument],
                  collector) -> tuple[str, str] | None:
    """A call inside `try` whose handler catches what NumPy raises for some data (np.take
    with an index past the end: IndexError) or for a Python number it may be given
    (np.full_like(mask, value) with 300 for uint8 data: OverflowError), where JAX's version
    returns something: the program relies on the error, which JAX never raises."""
    record = api_proof().get(qualname) or {}
    raised = [(_why(v).split(":", 1)[0], "some data") for v in _data_verdicts(record)
              if v.startswith(NUMPY_RAISES)]
    numbers = record.get("python_numbers", {})
    for argument in arguments:
        # a data argument's number (np.maximum(img, level)) needs the data's dtype: NJ402,
        # NJ410; an option's (full_like's fill value) raises for whatever data is beside it
        option = record.get("params", {}).get(argument.name, {"data": True})
        if not option.get("data") and argument.name in numbers \
                and _may_be_python_number(argument.arg.value, collector):
            raised += [(_why(v).split(":", 1)[0],
                        f"a Python number given as `{argument.name}` (`{code_of(argument.arg.value)}`)")
                       for v in numbers[argument.name].values() if v.startswith(NUMPY_RAISES)]
    if not raised:
        return None
    caught = _caught_around(call, parents)
    for exception, given in raised:
        if caught is True or _EXCEPTION_BASES.get(exception, {exception, "Exception"}) & caught:
            return KEEP_PROVEN_DIFFERENT, \
                f"it is inside `try` catching {exception}, which NumPy raises for {given} " \
                f"where JAX's version returns a value"
    return None


def _caught_conversion(qualname: str, call: cst.Call, parents: dict) -> tuple[str, str] | None:
    """`np.array(values)` inside `try` catching ValueError or TypeError (or everything): the
    program tries whether its values make an array. NumPy makes an object array of values
    JAX cannot hold (callables, None, objects: filterpy's Saver turns every attribute it
    recorded into an array this way), where JAX raises, so the handler would run instead."""
    if qualname not in ARRAY_CONSTRUCTORS or not call.args or any(
            a.keyword is not None and a.keyword.value == "dtype" for a in call.args):
        return None
    caught = _caught_around(call, parents)
    if caught is not True and not caught & {"ValueError", "TypeError", "Exception"}:
        return None
    return KEEP_PROVEN_DIFFERENT, ("it is inside `try` catching what JAX raises for values it "
                                   "cannot hold (callables, None, objects), of which NumPy "
                                   "makes an object array")


def _may_be_python_number(node: cst.BaseExpression, collector) -> bool:
    """An argument that may be a Python number NumPy refuses for narrow data (`value`, 300
    for uint8): anything but a literal every integer dtype holds (0 to 127, a float, a
    string...) and a NumPy/SciPy call's result (an array, which NumPy casts as JAX does)."""
    literal = _literal(node, collector)
    if literal is not _NOT_LITERAL:
        return type(literal) is int and not 0 <= literal <= 127
    return not (isinstance(node, cst.Call) and collector.ref_by_node.get(node.func) is not None)


def _data_verdicts(record: dict):
    yield record.get("verdict", SAME)
    yield from record.get("edges", {}).values()
    for param in record.get("params", {}).values():
        if param.get("data"):
            yield from param.get("values", {}).values()


# Exceptions NumPy/SciPy raise, and the handlers that catch them.
_EXCEPTION_BASES = {
    "IndexError": {"IndexError", "LookupError", "Exception"},
    "KeyError": {"KeyError", "LookupError", "Exception"},
    "ValueError": {"ValueError", "Exception"},
    "LinAlgError": {"LinAlgError", "ValueError", "Exception"},
    "TypeError": {"TypeError", "Exception"},
    "ZeroDivisionError": {"ZeroDivisionError", "ArithmeticError", "Exception"},
    "FloatingPointError": {"FloatingPointError", "ArithmeticError", "Exception"},
    "OverflowError": {"OverflowError", "ArithmeticError", "Exception"},
    "AxisError": {"AxisError", "ValueError", "IndexError", "LookupError", "Exception"},
}


def _caught_around(node: cst.CSTNode, parents: dict):
    """The exception names the `try` statements around `node` catch (True: everything),
    up to the enclosing function."""
    caught: set[str] = set()
    child, parent = node, parents.get(node)
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda)):
        if isinstance(parent, cst.Try) and child is parent.body:
            for handler in parent.handlers:
                if handler.type is None:
                    return True
                types = handler.type.elements if isinstance(handler.type, cst.Tuple) else \
                    [cst.Element(handler.type)]
                for element in types:
                    name = code_of(element.value).rsplit(".", 1)[-1]
                    if name == "BaseException":
                        return True
                    caught.add(name)
        child, parent = parent, parents.get(parent)
    return caught


def _check_value(name: str, node: cst.BaseExpression, param: dict, collector):
    if param.get("data"):
        return None  # proven by the dtypes, edges and alternates of the base call
    values = {k: v for k, v in param.get("values", {}).items() if k != OMITTED}
    written = f"`{name}={code_of(node)}`"
    literal = _dtype_literal(node, collector) if name == "dtype" else _literal(node, collector)
    if literal is not _NOT_LITERAL:
        key = repr(literal)
        if key in values:
            verdict = values[key]
            if fine(verdict) or verdict.startswith(AS_SPELLED):  # NJ101 writes JAX's spelling
                return None
            return KEEP_PROVEN_DIFFERENT, f"JAX's version differs for {written}: {_why(verdict)}"
    if not values:
        return KEEP_UNPROVEN, f"{written} was not run beside JAX's version"
    different = [(k, v) for k, v in values.items() if not fine(v)]
    if not different:
        return None  # every value tried was the same: the parameter is
    example, verdict = different[0]
    if literal is not _NOT_LITERAL:
        return KEEP_UNPROVEN, f"{written} was not run beside JAX's version, which differs for " \
                              f"`{name}={example}` ({_why(verdict)})"
    return KEEP_PROVEN_DIFFERENT, f"{written} may be a value for which JAX's version differs, " \
                                  f"such as `{name}={example}` ({_why(verdict)})"


def _literal(node: cst.BaseExpression, collector=None):
    """The Python value a literal argument spells (lists as tuples), or _NOT_LITERAL."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
        return ast.literal_eval(node.value)
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else _NOT_LITERAL
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        value = _literal(node.expression, collector)
        if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
            return -value if isinstance(node.operator, cst.Minus) else value
        return _NOT_LITERAL
    if isinstance(node, (cst.Tuple, cst.List)):
        items = []
        for element in node.elements:
            if isinstance(element, cst.StarredElement):
                return _NOT_LITERAL
            value = _literal(element.value, collector)
            if value is _NOT_LITERAL:
                return _NOT_LITERAL
            items.append(value)
        return tuple(items)
    ref = collector.ref_by_node.get(node) if collector is not None else None
    if ref is not None and ref.qualname in ("numpy.inf", "numpy.nan"):
        return math.inf if ref.qualname == "numpy.inf" else math.nan
    return _NOT_LITERAL


def _dtype_literal(node: cst.BaseExpression, collector):
    """`np.float32`, `"f4"`, `float`: the dtype's name, or _NOT_LITERAL."""
    if isinstance(node, cst.Name) and node.value == "None":
        return None
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        spelled = node.evaluated_value
        if not isinstance(spelled, str):
            return _NOT_LITERAL
        spelled = spelled.lstrip("<>=|")
    elif isinstance(node, (cst.Name, cst.Attribute)) and dotted_chain(node) is not None:
        spelled = code_of(node).rsplit(".", 1)[-1]
        if isinstance(node, cst.Attribute):
            ref = collector.ref_by_node.get(node) if collector is not None else None
            if ref is None and not spelled.startswith(("float", "int", "uint", "bool", "complex")):
                return _NOT_LITERAL
    else:
        return _NOT_LITERAL
    name = _DTYPE_ALIASES.get(spelled, spelled)
    return name if name in _DTYPE_NAMES else _NOT_LITERAL


def numpy_only(qualname: str | None) -> bool:
    """Whether `qualname` is in a SciPy module whose functions need NumPy's arrays
    (policy.toml numpy_only_modules)."""
    return any(qualname == m or (qualname or "").startswith(m + ".")
               for m in api_policy().get("numpy_only_modules", ()))


def keep_dispatch_arguments(refs: list[ApiRef], collector: CallIndex) -> None:
    """`np.take(np.asarray(a), i)` kept on NumPy (NJ103, or NJ204's out=): its `np.asarray` stays NumPy too,
    on purpose. NumPy hands a first argument that is not a NumPy array to its method of the
    same name (policy.toml method_dispatch), so `jnp.asarray(a)` there would run JAX's
    `take` again; NJ103 writes that `np.asarray` where the argument is a JAX array."""
    dispatch = frozenset(api_policy()["method_dispatch"])
    dtype_arguments = frozenset(api_policy()["dtype_arguments"])
    for ref in refs:
        if ref.keep not in (KEEP_PROVEN_DIFFERENT, KEEP_UNPROVEN, KEEP_OUT) or ref.call is None \
                or not ref.call.args:
            continue
        read = ref.call.args[:1] if ref.qualname in dispatch else \
            ref.call.args if ref.qualname in dtype_arguments else ()
        for arg in read:
            inner = collector.ref_by_call.get(arg.value) if arg.keyword is None else None
            if inner is not None and inner.qualname == "numpy.asarray" and inner.keep is None:
                inner.keep = KEEP_BY_DESIGN
    # `sp.diags(np.asarray(d), 0)`: a call into a SciPy module that needs NumPy's arrays
    # (policy.toml numpy_only_modules; NJ102 writes this `np.asarray` for a JAX array argument)
    for call in collector.nodes.get(cst.Call, []):
        node, kept = call.func, None
        while kept is None and node is not None:
            kept = collector.ref_by_node.get(node)
            node = node.value if isinstance(node, cst.Attribute) else None
        if kept is None or kept.keep != KEEP_MISSING or not numpy_only(kept.qualname):
            continue
        for arg in call.args:
            inner = collector.ref_by_call.get(arg.value)
            if inner is not None and inner.qualname == "numpy.asarray" and inner.keep is None:
                inner.keep = KEEP_BY_DESIGN
    # `rng.choice(n, p=np.asarray(p))`: NumPy checks the sum of `p` within float32's
    # tolerance only for a NumPy float32 array (NJ301 writes this `np.asarray` for JAX `p`)
    for call in collector.nodes.get(cst.Call, []):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "choice":
            for arg in call.args:
                inner = collector.ref_by_call.get(arg.value) if arg.keyword is not None \
                    and arg.keyword.value == "p" else None
                if inner is not None and inner.qualname == "numpy.asarray" and inner.keep is None:
                    inner.keep = KEEP_BY_DESIGN
    # `np.random.default_rng(np.asarray(seed).tolist())`: NumPy's SeedSequence takes ints
    # and lists of them (NJ301 writes this form for a seed a converted generator drew)
    for ref in refs:
        if not ref.qualname.startswith("numpy.random.") or ref.call is None:
            continue
        for arg in ref.call.args:
            tolist = arg.value
            if isinstance(tolist, cst.Call) and isinstance(tolist.func, cst.Attribute) \
                    and tolist.func.attr.value == "tolist" and not tolist.args:
                inner = collector.ref_by_call.get(tolist.func.value)
                if inner is not None and inner.qualname == "numpy.asarray" and inner.keep is None:
                    inner.keep = KEEP_BY_DESIGN
