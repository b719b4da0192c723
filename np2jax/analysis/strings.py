"""Whether a value may be Python strings (or bytes), or hold `None`, as the code shows them:
JAX has no string or object arrays (`jnp.array(["a", "b"])` and `jnp.array([None])` raise),
so a NumPy call given such data stays on NumPy."""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.facts import ARRAY_CONSTRUCTORS, TEXT_NODES
from np2jax.analysis.kept import HELPER as KEPT_HELPER

# str methods that give a str (of a value that is one)
_STRING_METHODS = frozenset({
    "upper", "lower", "strip", "lstrip", "rstrip", "title", "capitalize", "casefold", "join",
    "replace", "format", "zfill", "center", "ljust", "rjust", "swapcase", "removeprefix",
    "removesuffix", "expandtabs"})
# methods that give a str or a list of them, whatever the receiver (`os.path.join` too)
_STRING_MAKING_METHODS = frozenset({"join", "split", "rsplit", "splitlines", "hex", "findall"})
# the standard library's functions giving strings, lists of them or rows of them, and its
# string constants (`string.ascii_lowercase`)
_STRING_FUNCTIONS = frozenset({
    "re.findall", "re.split", "re.sub", "re.escape", "csv.reader", "os.listdir", "glob.glob",
    "os.path.join", "os.path.basename", "os.path.dirname", "os.path.splitext", "shlex.split",
    "textwrap.wrap", "json.dumps", "string.capwords"})
_STRING_MODULES = ("string.", "os.sep", "os.linesep")
# NumPy functions whose result keeps the strings of their first argument
_STRING_KEEPING = frozenset(f"numpy.{name}" for name in (
    "unique", "sort", "concatenate", "stack", "hstack", "vstack", "column_stack", "reshape",
    "ravel", "flip", "roll", "repeat", "tile", "atleast_1d", "atleast_2d", "squeeze",
    "transpose", "take", "copy", "append", "insert", "delete", "char.upper", "char.lower",
    "char.strip", "char.add", "char.join", "char.replace", "char.zfill", "char.mod"))
# functions whose result is made of the values given after the first argument (conditions,
# indices): strings there give a string array
_STRING_CHOOSING = frozenset({"numpy.where", "numpy.select", "numpy.choose", "numpy.piecewise"})

# dicts whose keys `_keys_hold_string` reads from the stores into them
_KEYED = frozenset({"builtins.dict", "collections.Counter", "collections.defaultdict",
                    "collections.OrderedDict"})


class Strings:
    """The string facts of one module, read through `flow`, its `np2jax.analysis.values.Values`
    (bindings, calls, returns), which holds this as `flow.strings`."""

    def __init__(self, flow) -> None:
        self.flow = flow

    def holds_string(self, node, depth: int = 0, seen: frozenset = frozenset()) -> bool:
        """Whether `node` may be Python strings (or bytes) as the code shows them, alone or
        as the items of an array's data (JAX has no string arrays: `jnp.array("abc")` and
        `jnp.array(["a", "b"])` raise): a string or bytes literal or f-string, `str(...)`,
        `bytes(...)`, a string's method that gives a string (`name.upper()`, `s.encode()`),
        `"-".join(parts)`, `line.split(",")`, `+`, `*` or `%` of a string, a slice or item
        of a string or of a list of them (`WORDS[0]`, `s[1:3]`), a list, tuple or
        comprehension with one string item, `list(...)`/`sorted(...)` of strings, a NumPy
        array made of strings (`np.array(words)`, kept on NumPy), a call of a function of
        this module that may return strings (or annotated `-> str`), a conditional one of
        whose branches is, and a name one of whose bindings is: a parameter annotated `str`
        (`list[str]`, `Optional[str]`, ...) or one some call of its function passes strings
        for, a loop variable over strings, a list strings are appended to. "May": one
        string is enough to keep a call on NumPy."""
        if depth > 12 or id(node) in seen:
            return False
        seen = seen | {id(node)}
        deeper = depth + 1
        if isinstance(node, TEXT_NODES):
            return True
        if isinstance(node, (cst.Name, cst.Attribute)) and any(
                q.startswith(_STRING_MODULES) for q in self.flow.collector.qualified_names(node)):
            return True  # string.ascii_lowercase, from string import digits
        if isinstance(node, cst.Param):
            annotation = node.annotation.annotation if node.annotation is not None else None
            if annotation is not None and _names_str(annotation):
                return True
            passed = self.flow.passed_arguments(node)
            return bool(passed) and any(self.holds_string(a.value if isinstance(a, cst.Arg) else a,
                                                          deeper, seen) for a in passed)
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            return any(self.holds_string(e.value, deeper, seen) for e in node.elements)
        if isinstance(node, cst.Dict):  # what a subscript or `.values()` gives
            return any(isinstance(e, cst.DictElement) and self.holds_string(e.value, deeper, seen)
                       for e in node.elements)
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            return self.holds_string(node.elt, deeper, seen)
        if isinstance(node, cst.Call):
            return self._call_holds_string(node, deeper, seen)
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Modulo):
                return self.holds_string(node.left, deeper, seen)
            if isinstance(node.operator, (cst.Add, cst.Multiply)):
                return self.holds_string(node.left, deeper, seen) \
                    or self.holds_string(node.right, deeper, seen)
            return False
        if isinstance(node, cst.Subscript):  # an item or slice of strings
            return self.holds_string(node.value, deeper, seen)
        if isinstance(node, cst.IfExp):
            return self.holds_string(node.body, deeper, seen) \
                or self.holds_string(node.orelse, deeper, seen)
        if isinstance(node, (cst.StarredElement, cst.Element, cst.Arg)):
            return self.holds_string(node.value, deeper, seen)
        if isinstance(node, cst.Name):
            return self._name_holds_string(node, deeper, seen)
        return False

    def holds_none(self, node, depth: int = 0) -> bool:
        """Whether `node` is array data with `None` among its items as the code shows them:
        `[[None] * n]`, `(None, 1.0)`, a name bound only to such (NumPy makes an object
        array of it, which JAX cannot hold: `jnp.array([None])` raises)."""
        if depth > 8:
            return False
        if isinstance(node, (cst.List, cst.Tuple)):
            return any(isinstance(e.value, cst.Name) and e.value.value == "None"
                       or self.holds_none(e.value, depth + 1) for e in node.elements)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Add)):
            return self.holds_none(node.left, depth + 1) or self.holds_none(node.right, depth + 1)
        if isinstance(node, cst.Name):
            values, aug_values = self.flow.name_values(node)
            bound = [v for v, _ in self.flow.live_bindings(node, values)]
            return bool(bound) and not aug_values and all(
                isinstance(v, cst.BaseExpression) for v in bound) and any(
                self.holds_none(v, depth + 1) for v in bound)
        return False

    def _call_holds_string(self, node: cst.Call, depth: int, seen: frozenset) -> bool:
        func = node.func
        first = next((a.value for a in node.args if a.keyword is None and not a.star), None)
        if self.flow.collector.qualified_names(func) & _STRING_FUNCTIONS:
            return True  # re.findall(pattern, text), csv.reader(f)
        if isinstance(func, cst.Name) and func.value == KEPT_HELPER and first is not None:
            return self.holds_string(first, depth, seen)  # a kept function's prologue: its argument
        if isinstance(func, cst.Name) and not self.flow.collector.is_api(func):
            if func.value in ("str", "repr", "format", "chr", "ascii", "bytes"):
                return True
            if func.value in ("list", "tuple", "sorted", "reversed", "set", "frozenset"):
                return first is not None and (self.holds_string(first, depth, seen)
                                              or self._keys_hold_string(first, depth, seen))
            function = self.flow.module_function(node)
            if function is not None:
                if function.returns is not None and _names_str(function.returns.annotation):
                    return True
                returns = self.flow.function_returns(function)
                return bool(returns) and any(self.holds_string(v, depth, seen) for v in returns)
            return False
        if isinstance(func, cst.Attribute):
            ref = self.flow.collector.ref_by_call.get(node)
            if ref is not None:  # `np.array(words)`: NumPy keeps the strings, unless cast
                if ref.qualname in _STRING_CHOOSING:  # np.where(ok, "pass", "fail")
                    return any(self.holds_string(a.value, depth, seen)
                               for a in node.args[1:] if not a.star)
                dtype = next((a.value for a in node.args
                              if a.keyword is not None and a.keyword.value == "dtype"), None)
                if dtype is not None and _names_str(dtype):
                    return True  # np.loadtxt(f, dtype=str), np.array(xs, dtype="U10")
                if ref.qualname not in ARRAY_CONSTRUCTORS and ref.qualname not in _STRING_KEEPING:
                    return False
                if dtype is not None:
                    return False
                return first is not None and self.holds_string(first, depth, seen)
            if self.flow.collector.qualified_names(func) & _STRING_KEEPING:
                # np.char.lower(words): a call of a module JAX lacks, no reference of its own
                return first is not None and self.holds_string(first, depth, seen)
            method = func.attr.value
            if method in _STRING_MAKING_METHODS:  # `", ".join(...)`, `line.split()`: str's
                return True
            if method in ("keys", "items") and not node.args:  # a dict's keys (and values)
                return self._keys_hold_string(func.value, depth, seen) or (
                    method == "items" and self.holds_string(func.value, depth, seen))
            if method in _STRING_METHODS or method in ("encode", "decode", "copy", "tolist"):
                return self.holds_string(func.value, depth, seen)
            if method == "astype":
                return first is not None and _names_str(first)
        return False

    def _keys_hold_string(self, node, depth: int, seen: frozenset) -> bool:
        """Whether the keys of a dict `node` (what iterating it, `list(d)`, `sorted(d)`,
        `d.keys()` give) may be strings: a display or comprehension with one, `Counter(words)`,
        `dict(zip(names, ...))`, `dict.fromkeys(names)`, a name bound to one or given such a
        key by a store (`freq[w] = freq.get(w, 0) + 1`, w a word)."""
        if depth > 12:
            return False
        deeper = depth + 1
        if isinstance(node, cst.Dict):
            return any(isinstance(e, cst.DictElement) and self.holds_string(e.key, deeper, seen)
                       for e in node.elements)
        if isinstance(node, cst.DictComp):
            return self.holds_string(node.key, deeper, seen)
        if isinstance(node, cst.Call):
            first = next((a.value for a in node.args if a.keyword is None and not a.star), None)
            names = self.flow.collector.qualified_names(node.func)
            if first is None:
                return False
            if names & {"collections.Counter", "collections.OrderedDict", "builtins.dict"} or (
                    isinstance(node.func, cst.Attribute) and node.func.attr.value == "fromkeys"):
                if isinstance(first, cst.Call) and self.flow.collector.qualified_names(first.func) == {"builtins.zip"}:
                    first = next((a.value for a in first.args if a.keyword is None), None)
                    return first is not None and self.holds_string(first, deeper, seen)
                return self.holds_string(first, deeper, seen) or self._keys_hold_string(first, deeper, seen)
            return False
        if not isinstance(node, cst.Name):
            return False
        scope, values, _ = self.flow.name_bindings(node)
        if any(isinstance(v, cst.CSTNode) and self._keys_hold_string(v, deeper, seen) for v, _ in values):
            return True
        if scope is None or self.flow.container_type(node) not in _KEYED:
            return False
        return any(isinstance(subscript.value, cst.Name) and subscript.value.value == node.value
                   and len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index)
                   and self.flow.name_bindings(subscript.value)[0] is scope
                   and self.holds_string(subscript.slice[0].slice.value, deeper, seen)
                   for _statement, subscript, _operator in self.flow.collector.subscript_stores)

    def _iterated_holds_string(self, iterable, depth: int, seen: frozenset) -> bool:
        """What iterating `iterable` gives may be strings: its items, or a dict's keys."""
        return self.holds_string(iterable, depth, seen) or self._keys_hold_string(iterable, depth, seen)

    def _name_holds_string(self, node: cst.Name, depth: int, seen: frozenset) -> bool:
        iterated = self.flow.comprehension_iter(node)
        if iterated is not None:
            return self._iterated_holds_string(iterated, depth, seen)
        scope, values, aug_values = self.flow.name_bindings(node)
        for value, statement in values:
            if value == "param":
                if self.holds_string(statement, depth, seen):
                    return True
            elif isinstance(value, cst.CSTNode):
                if self.holds_string(value, depth, seen):
                    return True
            elif isinstance(statement, cst.For) and isinstance(statement.target, cst.Name) \
                    and statement.target.value == node.value:
                if self._iterated_holds_string(statement.iter, depth, seen):
                    return True
        if any(self.holds_string(v, depth, seen) for v in aug_values):
            return True
        if scope is not None and any(isinstance(v, (cst.List, cst.Set)) for v, _ in values):
            return any(self.holds_string(v, depth, seen) for v in self.flow.appended(scope, node.value))
        return False


def _names_str(annotation) -> bool:
    """Whether a type (an annotation, `astype`'s argument) names `str` or `bytes` (or a
    NumPy string dtype): `str`, `list[str]`, `Optional[str]`, `"U10"`, `np.str_`."""
    if isinstance(annotation, cst.SimpleString):
        text = annotation.evaluated_value
        return isinstance(text, str) and (text.lstrip("<>=|")[:1] in ("U", "S")
                                          or "str" in text or "bytes" in text)
    return any(isinstance(n, cst.Name) and n.value in ("str", "bytes", "str_", "bytes_")
               or isinstance(n, cst.Attribute) and n.attr.value in ("str_", "bytes_")
               for n in _walk(annotation))


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)
