"""What a value is: the kind of value a name may hold (container, scalar, array), whether
it is a JAX array once converted (and which conversions that relies on), what functions
return, and the kinds of index and mask a subscript uses."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
from libcst.metadata import GlobalScope

from np2jax.analysis.collect import Collector
from np2jax.analysis.facts import (
    TEXT_NODES,
    ARRAY,
    ARRAY_CONSTRUCTORS,
    CONTAINER,
    CONTAINER_CALLS,
    CONTAINER_METHODS,
    ELEMENTWISE_COMPARISONS,
    LITERALS,
    SCALAR,
    SCALAR_CALLS,
    UNKNOWN,
)
from np2jax.analysis.kept import HELPER as KEPT_HELPER
from np2jax.analysis.shapes import same_shape
from np2jax.catalog import api_policy
from np2jax.syntax import argument_for, integer_index
from np2jax.syntax.walk import OwnScopeVisitor


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
# builtins giving a value of their first argument's type (a 0-d JAX array of a JAX array)
_SAME_TYPE_BUILTINS = frozenset({"builtins.round", "builtins.abs"})
# NumPy functions whose result keeps the strings of their first argument
_STRING_KEEPING = frozenset(f"numpy.{name}" for name in (
    "unique", "sort", "concatenate", "stack", "hstack", "vstack", "column_stack", "reshape",
    "ravel", "flip", "roll", "repeat", "tile", "atleast_1d", "atleast_2d", "squeeze",
    "transpose", "take", "copy", "append", "insert", "delete", "char.upper", "char.lower",
    "char.strip", "char.add", "char.join", "char.replace", "char.zfill", "char.mod"))
# functions whose result is made of the values given after the first argument (conditions,
# indices): strings there give a string array
_STRING_CHOOSING = frozenset({"numpy.where", "numpy.select", "numpy.choose", "numpy.piecewise"})
# jax modules whose functions return JAX arrays (not jax.device_get, which gives NumPy's)
JAX_ARRAY_MODULES = ("jax.numpy.", "jax.lax.", "jax.random.", "jax.nn.", "jax.scipy.")


class Values:
    """Facts about values, read from the collector's bindings and the scopes."""

    def __init__(self, collector: Collector, parents, positions, scopes) -> None:
        self.collector = collector
        self.parents = parents
        self.positions = positions
        self.scopes = scopes
        # the draw calls of NumPy random states that become keyed jax.random (JAX arrays):
        # np2jax.analysis.randomness, above this module, hands them down (ModuleAnalysis)
        self.draws_on_jax: Callable[[], frozenset] = frozenset
        policy = api_policy()
        self.view_functions = frozenset(policy["view_functions"])
        self.fresh_methods = frozenset(policy["fresh_methods"])
        self.sequence_results = frozenset(policy["sequence_results"])
        self.maybe_sequence_results = frozenset(policy["maybe_sequence_results"])
        self.sequence_methods = frozenset(policy["sequence_methods"])
        self.non_array_results = frozenset(policy["non_array_results"])
        self._returns: dict = {}  # FunctionDef -> function_returns
        # memoised by np2jax.analysis.shapes: node -> its shape root, (node, env) -> shape
        self.shape_roots: dict = {}
        self.static_shapes: dict = {}

    def _passed_kind(self, param) -> str:
        """A parameter every call of whose function in this module passes a Python number
        literal (`fib(90)`): SCALAR; a container (`bump(counts, w)`, `counts = {}`):
        CONTAINER; anything else is not followed (UNKNOWN)."""
        passed = self.passed_arguments(param)
        if passed:  # solve(g, stats) inside solve: the parameter handed on, not a new value
            passed = [a for a in passed if not self.handed_on(a, param)]
        if passed and all(self.value_kind(a) == SCALAR for a in passed):
            return SCALAR
        if passed and all(self.value_kind(a) == CONTAINER or self.container_type(a) is not None
                          or isinstance(a, cst.Name) and self._local_kind(a) == CONTAINER
                          for a in passed):
            return CONTAINER
        return UNKNOWN

    def handed_on(self, argument, param: cst.Param) -> bool:
        """`argument` is `param` itself, passed by a call inside its own function (a
        recursion), the parameter never rebound there."""
        if not isinstance(argument, cst.Name) or argument.value != param.name.value:
            return False
        values, _ = self.values_of(argument)
        return bool(values) and all(v == "param" and statement is param for v, statement in values)

    def _local_kind(self, name: cst.Name) -> str:
        """kind_of a name bound by its own scope only (`seen = [False] * n`), parameters left
        out, so that two functions passing each other's parameters do not recurse."""
        values, _ = self.values_of(name)
        if not values or any(isinstance(v, str) for v, _ in values):
            return UNKNOWN
        kinds = {self.value_kind(v) for v, _ in values}
        return kinds.pop() if len(kinds) == 1 else UNKNOWN

    def value_kind(self, value) -> str:
        if isinstance(value, str):  # markers: "param", "global", UNKNOWN, CONTAINER, SCALAR
            return value if value in (CONTAINER, UNKNOWN, SCALAR) else UNKNOWN
        if isinstance(value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp,
                              cst.SetComp, cst.SimpleString, cst.ConcatenatedString,
                              cst.FormattedString, cst.Tuple)):
            return CONTAINER
        if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary)):
            return SCALAR
        if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, (cst.Integer, cst.Float)):
            return SCALAR
        if isinstance(value, cst.BinaryOperation) and (
                isinstance(value.left, (cst.List, cst.Tuple)) or isinstance(value.right, (cst.List, cst.Tuple))):
            return CONTAINER  # [0] * n, [a] + rest
        if isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Name) and func.value in CONTAINER_CALLS:
                return CONTAINER
            if isinstance(func, cst.Name) and func.value in SCALAR_CALLS:
                return SCALAR
            if isinstance(func, cst.Attribute) and func.attr.value in CONTAINER_METHODS:
                return CONTAINER
            if isinstance(func, cst.Attribute) and func.attr.value in self.sequence_methods:
                return UNKNOWN
            ref = self.collector.ref_by_call.get(value)
            if ref is not None:
                if ref.qualname in self.sequence_results:
                    return CONTAINER
                if ref.qualname in self.non_array_results:
                    return UNKNOWN
                return ARRAY if self._one_array_result(ref) else UNKNOWN
        return UNKNOWN

    def _one_array_result(self, ref) -> bool:
        """False when the call may return a tuple or list (maybe_sequence_results), unless its
        arguments show the one-array form: np.where(c, x, y), np.unique(x), np.atleast_1d(x)."""
        if ref.qualname not in self.maybe_sequence_results:
            return True
        call = ref.call
        if call is None or any(a.star for a in call.args):
            return False
        positional = [a for a in call.args if a.keyword is None]
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        if ref.qualname == "numpy.where":
            return len(call.args) == 3
        if ref.qualname == "numpy.unique":
            return not any(k.startswith("return_") for k in keywords) and len(positional) <= 1
        if ref.qualname.startswith("numpy.atleast_"):
            return len(call.args) == 1
        if ref.qualname == "numpy.indices":  # one grid array unless sparse=
            return len(positional) <= 2 and keywords <= {"dtype"}
        return False

    def holds_only_scalars(self, value) -> bool:
        """A container literal of numbers and strings (or a comprehension of one number),
        `[0] * n`, or defaultdict(int)."""
        def scalar(node) -> bool:
            return isinstance(node, LITERALS) or (
                isinstance(node, cst.UnaryOperation) and isinstance(node.expression, LITERALS)) \
                or (isinstance(node, cst.Name) and node.value in ("True", "False", "None"))
        if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            return all(scalar(e.value) for e in value.elements)
        if isinstance(value, cst.Dict):
            return all(isinstance(e, cst.DictElement) and scalar(e.value) for e in value.elements)
        if isinstance(value, cst.DictComp):  # {name: 0.0 for name in names}
            return scalar(value.value)
        if isinstance(value, (cst.ListComp, cst.SetComp)):
            return scalar(value.elt)
        if isinstance(value, cst.BinaryOperation):
            return all(self.holds_only_scalars(side) for side in (value.left, value.right)
                       if isinstance(side, (cst.List, cst.Tuple)))
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            if value.func.value in ("list", "tuple", "set") and len(value.args) == 1:
                return self.holds_only_scalars(value.args[0].value)
            if value.func.value in ("defaultdict", "Counter"):
                return all(isinstance(a.value, cst.Name) and a.value.value in ("int", "float")
                           for a in value.args[:1])
        return False

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
                q.startswith(_STRING_MODULES) for q in self.collector.qualified_names(node)):
            return True  # string.ascii_lowercase, from string import digits
        if isinstance(node, cst.Param):
            annotation = node.annotation.annotation if node.annotation is not None else None
            if annotation is not None and _names_str(annotation):
                return True
            passed = self.passed_arguments(node)
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
            values, aug_values = self.name_values(node)
            bound = [v for v, _ in self.live_bindings(node, values)]
            return bool(bound) and not aug_values and all(
                isinstance(v, cst.BaseExpression) for v in bound) and any(
                self.holds_none(v, depth + 1) for v in bound)
        return False

    def _call_holds_string(self, node: cst.Call, depth: int, seen: frozenset) -> bool:
        func = node.func
        first = next((a.value for a in node.args if a.keyword is None and not a.star), None)
        if self.collector.qualified_names(func) & _STRING_FUNCTIONS:
            return True  # re.findall(pattern, text), csv.reader(f)
        if isinstance(func, cst.Name) and func.value == KEPT_HELPER and first is not None:
            return self.holds_string(first, depth, seen)  # a kept function's prologue: its argument
        if isinstance(func, cst.Name) and not self.collector.is_api(func):
            if func.value in ("str", "repr", "format", "chr", "ascii", "bytes"):
                return True
            if func.value in ("list", "tuple", "sorted", "reversed", "set", "frozenset"):
                return first is not None and (self.holds_string(first, depth, seen)
                                              or self._keys_hold_string(first, depth, seen))
            function = self.module_function(node)
            if function is not None:
                if function.returns is not None and _names_str(function.returns.annotation):
                    return True
                returns = self.function_returns(function)
                return bool(returns) and any(self.holds_string(v, depth, seen) for v in returns)
            return False
        if isinstance(func, cst.Attribute):
            ref = self.collector.ref_by_call.get(node)
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
            if self.collector.qualified_names(func) & _STRING_KEEPING:
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
            names = self.collector.qualified_names(node.func)
            if first is None:
                return False
            if names & {"collections.Counter", "collections.OrderedDict", "builtins.dict"} or (
                    isinstance(node.func, cst.Attribute) and node.func.attr.value == "fromkeys"):
                if isinstance(first, cst.Call) and self.collector.qualified_names(first.func) == {"builtins.zip"}:
                    first = next((a.value for a in first.args if a.keyword is None), None)
                    return first is not None and self.holds_string(first, deeper, seen)
                return self.holds_string(first, deeper, seen) or self._keys_hold_string(first, deeper, seen)
            return False
        if not isinstance(node, cst.Name):
            return False
        scope, values, _ = self.name_bindings(node)
        if any(isinstance(v, cst.CSTNode) and self._keys_hold_string(v, deeper, seen) for v, _ in values):
            return True
        if scope is None or self.container_type(node) not in _KEYED:
            return False
        return any(isinstance(subscript.value, cst.Name) and subscript.value.value == node.value
                   and len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index)
                   and self.name_bindings(subscript.value)[0] is scope
                   and self.holds_string(subscript.slice[0].slice.value, deeper, seen)
                   for _statement, subscript, _operator in self.collector.subscript_stores)

    def _iterated_holds_string(self, iterable, depth: int, seen: frozenset) -> bool:
        """What iterating `iterable` gives may be strings: its items, or a dict's keys."""
        return self.holds_string(iterable, depth, seen) or self._keys_hold_string(iterable, depth, seen)

    def _name_holds_string(self, node: cst.Name, depth: int, seen: frozenset) -> bool:
        iterated = self.comprehension_iter(node)
        if iterated is not None:
            return self._iterated_holds_string(iterated, depth, seen)
        scope, values, aug_values = self.name_bindings(node)
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
            return any(self.holds_string(v, depth, seen) for v in self._appended(scope, node.value))
        return False

    def comprehension_binding(self, name: cst.Name) -> tuple | None:
        """(comprehension, clause) of the comprehension whose `for` clause binds `name` (as
        its target, or inside a tuple target: `for i, row in ...`), or None when `name` is
        no comprehension's variable."""
        node = self.parents.get(name)
        while node is not None and not isinstance(node, (cst.BaseSmallStatement,
                                                          cst.BaseCompoundStatement)):
            if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                clause = node.for_in
                while clause is not None:
                    if _binds(clause.target, name.value):
                        return node, clause
                    clause = clause.inner_for_in
            node = self.parents.get(node)
        return None

    def comprehension_iter(self, name: cst.Name):
        """What a comprehension's own variable `name` iterates over (`w` in `[w.upper() for w
        in WORDS]`: WORDS), or None when `name` is no comprehension's variable (or one of a
        tuple target's)."""
        binding = self.comprehension_binding(name)
        return binding[1].iter if binding is not None and isinstance(binding[1].target, cst.Name) else None

    def _appended(self, scope, name: str) -> list:
        """The values `name.append(v)`, `name.extend(vs)` and `name.insert(i, v)` add to the
        list `name` holds, in the scope that binds it."""
        added = []
        for access in scope.accesses[name] if name in scope.accesses else ():
            attribute = self.parents.get(access.node)
            call = self.parents.get(attribute)
            if isinstance(attribute, cst.Attribute) and attribute.value is access.node \
                    and isinstance(call, cst.Call) and call.func is attribute and call.args:
                if attribute.attr.value in ("append", "extend", "add"):
                    added.append(call.args[0].value)
                elif attribute.attr.value == "insert" and len(call.args) > 1:
                    added.append(call.args[1].value)
        return added

    def name_values(self, expr: cst.Name):
        """Bindings and `op=` values of a name, looked up from its scope outwards as Python does."""
        _, values, aug_values = self.name_bindings(expr)
        return values, aug_values

    def name_bindings(self, expr: cst.Name) -> tuple:
        """(scope, bindings, `op=` values) of a name: the scope is the one that binds it."""
        scope = self.scopes.get(expr)
        seen = set()
        while scope is not None and id(scope) not in seen:
            seen.add(id(scope))
            key = (scope, expr.value)
            if key in self.collector.bindings:
                return scope, self.collector.bindings[key], self.collector.aug_values.get(key, [])
            scope = getattr(scope, "parent", None)
        return None, [], []

    def live_bindings(self, read: cst.Name, values: list) -> list:
        """A name's bindings less the parameter binding that cannot reach `read`: its
        function rebinds the parameter unconditionally (`x = np.asarray(x)` at the top level
        of the body) before the read, which is a later statement or in a function defined
        after it (`thresholds` read by a nested function)."""
        kept = []
        for value, statement in values:
            if value == "param" and self._rebound_before(statement, read):
                continue
            kept.append((value, statement))
        return kept if kept else values

    def reaching_bindings(self, read: cst.Name, values: list) -> list:
        """The bindings of a name that may reach `read`, in straight-line code: where a
        statement at the top level of the function (or module) body holding the read binds
        the name unconditionally (`w = w.astype(np.int32)`) before the statement holding the
        read, the earlier bindings cannot reach it (`w = np.arange(3)` does not decide what
        a later `w + x` holds). Bindings inside the read's own statement count when it is
        compound (a loop may carry them back); `global` names are left as they are."""
        if any(value == "global" for value, _ in values):
            return values
        node, child = self.parents.get(read), read
        while node is not None and not isinstance(node, (cst.IndentedBlock, cst.Module)):
            node, child = self.parents.get(node), node
        block = node
        if block is None or not isinstance(block, cst.Module) and not isinstance(
                self.parents.get(block), cst.FunctionDef):
            return values  # inside a loop, a branch, a with: bindings may come round again
        statements = list(block.body)
        if child not in statements:
            return values
        here = statements.index(child)

        def index_of(statement):
            node, child = statement, None
            while node is not None and node is not block:
                node, child = self.parents.get(node), node
            return statements.index(child) if node is block and child in statements else None

        last = None
        for _, statement in values:
            at = index_of(statement)
            if at is not None and at < here and isinstance(statement, cst.Assign) \
                    and self.parents.get(statement) is statements[at] \
                    and any(isinstance(t.target, cst.Name) and t.target.value == read.value
                            for t in statement.targets):
                last = at if last is None else max(last, at)
        compound = not isinstance(statements[here], cst.SimpleStatementLine)
        if last is None:  # a simple statement is not reached by the bindings after it
            kept = [(value, statement) for value, statement in values
                    if compound or (at := index_of(statement)) is None or at < here]
            return kept or values
        kept = [(value, statement) for value, statement in values
                if (at := index_of(statement)) is not None
                and (last <= at < here or (at == here and compound))]
        return kept or values

    def _rebound_before(self, param, read: cst.Name) -> bool:
        function = self.parents.get(self.parents.get(param))
        if not isinstance(function, cst.FunctionDef) \
                or not isinstance(function.body, cst.IndentedBlock):
            return False
        inside = set()
        node = self.parents.get(read)
        while node is not None and node is not function:
            inside.add(node)
            node = self.parents.get(node)
        if node is not function:
            return False
        read_at = self.start(read)
        name = param.name.value
        for statement in function.body.body:
            if statement in inside or self.start(statement) >= read_at:
                return False
            if isinstance(statement, cst.SimpleStatementLine) and any(
                    isinstance(small, cst.Assign) and any(
                        isinstance(t.target, cst.Name) and t.target.value == name
                        for t in small.targets)
                    for small in statement.body):
                return True
        return False

    def own_bindings(self, name: cst.Name) -> list:
        """The bindings of a name in the scope it is read in (not the enclosing ones):
        [(value or marker, statement)]."""
        return self.collector.bindings.get((self.scopes.get(name), name.value), [])

    def values_of(self, expr):
        if isinstance(expr, cst.Name):
            return self.name_values(expr)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
                and expr.value.value == "self":
            key = (self.class_of(expr), expr.attr.value)
            return (self.collector.self_attr_bindings.get(key, []),
                    self.collector.self_attr_aug_values.get(key, []))
        return None, None

    def kind_of(self, expr: cst.BaseExpression, statement=None) -> str:
        if isinstance(expr, cst.Call):
            return self.value_kind(expr)
        values, aug_values = self.values_of(expr)
        if isinstance(expr, cst.Name):  # `args = list(args)` before the read: a list
            values = self.live_bindings(expr, values)
        if not values:
            return UNKNOWN
        kinds = {CONTAINER if _star_param(v, s) else self._passed_kind(s) if v == "param"
                 else self.value_kind(v) for v, s in values}
        if kinds == {SCALAR}:  # `total = 0; total += g` makes total an array when g is one
            kinds |= {self.value_kind(v) for v in aug_values}
        return kinds.pop() if len(kinds) == 1 else UNKNOWN

    def array_method_out(self, call: cst.Call, receiver: cst.BaseExpression) -> bool:
        """Whether `receiver.method(...)`, which passes an out argument by the shape of an
        ndarray method's call, may be that method writing into it. Positionally (`x.clip(0,
        1, x)`, `a.dot(b, c)`) only on a receiver known to be an array, or with the receiver
        itself as the out: `lib.dot(a, b)` and `self.max(a, b)` are other objects'
        functions. With `out=`, unless the receiver is known not to be an array: a module or
        another imported name (`torch.add(a, b, out=c)`), an instance of the module's own
        class."""
        if any(a.keyword is not None and a.keyword.value == "out" for a in call.args):
            return not (self.collector.imported_names(receiver, sole=True)
                        or self.module_class_instance(receiver))
        if any(not a.keyword and a.value.deep_equals(receiver) for a in call.args):
            return True
        return self.kind_of(receiver, call) == ARRAY

    def may_hold_argument(self, name: cst.Name) -> bool:
        """Whether the name, where it is read, may hold what the caller passed to a parameter
        (a list, a tuple, an array) or a part of it (`data = data[:n]`): it is a parameter,
        not rebound to a JAX array by an assignment of the function's own body that comes
        before the read (`x = np.asarray(x)`)."""
        values, _ = self.name_values(name)
        params = [statement for value, statement in values if value == "param"]
        if not params:
            return False
        function = self.parents.get(self.parents.get(params[0]))
        if self.enclosing(name, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) is not function:
            return True  # read in a nested function or class: called at any time
        for value, statement in values:
            line = self.parents.get(statement)
            if isinstance(statement, (cst.Assign, cst.AnnAssign)) and not _part_of(value, name.value) \
                    and self.parents.get(self.parents.get(line)) is function \
                    and self.start(statement) < self.start(name) and self.jax_typed(value):
                return False
        return True

    def container_type(self, expr: cst.BaseExpression) -> str | None:
        """The Python container class a name holds, where every binding of it makes the same
        one: "builtins.dict" (`{}`, `{k: v}`, a dict comprehension, `dict(...)`, `**kwargs`),
        "builtins.set" (`{1, 2}`, a set comprehension, `set(...)`), "builtins.frozenset",
        "collections.Counter", "collections.defaultdict", "collections.OrderedDict"; else None
        (a parameter, a value of another kind, bindings that differ)."""
        if not isinstance(expr, cst.Name):
            return None
        values, _ = self.name_values(expr)
        kinds = {self._container_of(value, statement) for value, statement in values}
        return kinds.pop() if len(kinds) == 1 else None

    def _container_of(self, value, statement=None) -> str | None:
        if isinstance(value, (cst.Dict, cst.DictComp)) or (
                _star_param(value, statement) and statement.star == "**"):
            return "builtins.dict"
        if isinstance(value, (cst.Set, cst.SetComp)):
            return "builtins.set"
        if isinstance(value, cst.Call) and self.collector.may_name(value.func, _CONTAINER_NAMES):
            names = self.collector.qualified_names(value.func)
            if len(names) == 1 and (name := names.pop()) in CONTAINER_CLASSES:
                return name
        return None

    def enclosing(self, node, kinds: tuple[type, ...]):
        """The nearest ancestor of `node` of one of `kinds`, or None."""
        node = self.parents.get(node)
        while node is not None and not isinstance(node, kinds):
            node = self.parents.get(node)
        return node

    def class_of(self, node):
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, cst.ClassDef):
            parent = self.parents.get(parent)
        return parent

    def start(self, node):
        return self.positions.start(node)

    def expression_statement_line(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        """The line holding `node` as its only statement (`node` is the whole expression of
        an expression statement, or the statement itself)."""
        parent = self.parents.get(node)
        if isinstance(parent, cst.Expr):
            node, parent = parent, self.parents.get(parent)
        if isinstance(parent, cst.SimpleStatementLine) and len(parent.body) == 1 \
                and parent.body[0] is node:
            return parent
        return None

    def generator_shuffles(self, calls) -> list:
        """`rng.shuffle(x)`, `np.random.default_rng(0).shuffle(x)`, `rngs[0].shuffle(x)`,
        Python's random.shuffle(x): each shuffles x in place. Any receiver but an instance of
        a class of the module (its own method): a generator may come from anywhere, and a
        shuffle taken for one only keeps x on NumPy."""
        return [call for call in calls if not self.module_class_instance(call.func.value)]

    def jax_typed(self, value, certain: bool = False) -> bool:
        """Whether `value` is a JAX array once the module is converted.

        certain=False also trusts a parameter of a module-level function when every call
        of the function in this module passes a JAX array for it (the module run as a
        program): a caller elsewhere passing a NumPy array makes the converted `.at` fail
        loudly. certain=True (alias analysis, NJ209 call sites) trusts no parameter."""
        return _JaxTyping(self, certain).of(value)[0]

    def jax_refs(self, value, certain: bool = False) -> tuple:
        """The converted API references `jax_typed(value)` relies on (empty when False)."""
        return tuple(_JaxTyping(self, certain).of(value)[1])

    def may_be_jax(self, value) -> tuple:
        """The converted references by which `value` may be a JAX array once converted: one
        binding, branch or caller giving one is enough (jax_typed asks every one); () when
        none does. For checks whose answer a JAX array changes (isinstance(v, float))."""
        return tuple(_JaxTyping(self, False, some=True).of(value)[1])

    def parameter_bound(self, value) -> bool:
        """A name one of whose live bindings is a function parameter (what a caller passes)."""
        if not isinstance(value, cst.Name):
            return False
        values, _ = self.name_values(value)
        return any(bound == "param" for bound, _ in self.live_bindings(value, values))

    def parameter_may_be_jax(self, value) -> tuple:
        """may_be_jax of a name bound only to parameters of module-level functions: the
        converted references by which some call in this module passes a JAX array for it
        (empty when none is known to). jax_typed asks that every call does; a function
        called with a JAX array by one caller and a NumPy array by another (a function kept
        on NumPy, NJ104, passing its own) still meets a JAX array."""
        if not isinstance(value, cst.Name):
            return ()
        values, _ = self.name_values(value)
        live = self.live_bindings(value, values)
        if not live or any(bound != "param" for bound, _ in live):
            return ()
        return self.may_be_jax(value)

    def attribute_may_be_jax(self, array) -> tuple:
        """`self.table` bound in its class to a JAX array once converted (by one of its
        bindings at least): the converted references that make it one, else ()."""
        if not (isinstance(array, cst.Attribute) and isinstance(array.value, cst.Name)
                and array.value.value == "self"):
            return ()
        values, _ = self.values_of(array)
        refs: set = set()
        for value, _statement in values or ():
            if not isinstance(value, str) and self.jax_typed(value):
                refs |= set(self.jax_refs(value))
        return tuple(refs)

    def passed_arguments(self, param: cst.Param) -> list | None:
        """What every call in this module passes for a parameter of a module-level function
        (its default where a call leaves it out), or None: the function's name is used by
        something other than those calls (listed in __all__, mentioned by other files of the
        tree, passed as a value, hidden by *args), or a call passes nothing for it."""
        function = self.parents.get(self.parents.get(param))
        if not isinstance(function, cst.FunctionDef):
            return None
        name = function.name.value
        if name in self.collector.exported_names or name in self.collector.context.external_names \
                or name in self.collector.dynamic_names:
            return None
        return self._call_arguments(param, every=True)

    def _call_arguments(self, param: cst.Param, every: bool) -> list | None:
        """What the calls of a module-level function in this module pass for `param` (its
        default where a call leaves it out); with `every`, None unless they are all its uses
        and each passes something (passed_arguments); without, what some of them pass
        (others may pass anything: a caller in another module, a call with *args)."""
        function = self.parents.get(self.parents.get(param))
        if param.star or not isinstance(function, cst.FunctionDef):
            return None
        if function in self.collector.kept_functions:
            return None  # its prologue reads a JAX array passed as a NumPy one (analysis.kept)
        name = function.name.value
        if name.startswith("__") or function.decorators or function.asynchronous \
                or self.collector.dynamic_scopes:
            return None
        global_scope = self.scopes.get(function)
        if not isinstance(global_scope, GlobalScope) or len(global_scope.assignments[name]) != 1:
            return None
        (assignment,) = global_scope.assignments[name]
        if param in function.params.kwonly_params:
            position = None
        else:
            positional = [*function.params.posonly_params, *function.params.params]
            position = positional.index(param) if param in positional else None
        passed = []
        for access in assignment.references:
            call = self.parents.get(access.node)
            if not (isinstance(call, cst.Call) and call.func is access.node) \
                    or any(a.star for a in call.args):
                if every:
                    return None  # used as a value, or *args/**kwargs hide the argument
                continue
            argument = argument_for(call, position, param.name.value)
            passed.append(argument if argument is not None else param.default)
        if every and (not passed or any(a is None for a in passed)):
            return None
        return [a for a in passed if a is not None]

    def already_jax(self, value, depth: int = 6, _seen: frozenset = frozenset()) -> bool:
        """Whether `value` is a JAX array (or a tuple of them) in the source as written, code
        already converted: a jax.numpy call, `x.at[i].set(v)`, another call of `jax` (a
        lax loop), arithmetic, a method or an index of one, a name every binding of which is
        one, a parameter of a function compiled with jax.jit or passed only to jax.lax, or
        one every caller passes one for. NumPy's in-place semantics never reach such a
        value, before or after the conversion (the conversion does not make it JAX)."""
        if depth <= 0 or value is None:
            return False
        if isinstance(value, cst.Name):
            scope, values, _ = self.name_bindings(value)
            key = (id(scope), value.value)
            if key in _seen:
                return True  # `x = x.at[i].set(v)`: JAX if its other bindings are
            return bool(values) and all(
                self._binding_already_jax(v, statement, depth - 1, _seen | {key}, value.value)
                for v, statement in values)
        if isinstance(value, cst.Call):
            if value in self.collector.jax_calls:
                return True
            func = value.func
            if any(name.startswith(JAX_ARRAY_MODULES)
                   for name in self.collector.qualified_names(func)):
                return True  # jax.lax.while_loop(...), jax.random.normal(key, ...)
            if isinstance(func, cst.Attribute) and func.attr.value not in (
                    "item", "tolist", "tobytes", "__array__"):
                return self.already_jax(func.value, depth, _seen)  # x.sum(), x.at[i].set(v)
            function = self.module_function(value)  # p = normalize(p): what it returns
            returns = self.function_returns(function) if function is not None else None
            return bool(returns) and all(self.already_jax(r, depth - 1, _seen) for r in returns)
        if isinstance(value, cst.Subscript):
            parts = self._indexed_returns(value)  # `kmeans(X, c, 1)[1]`: that element
            if parts is not None:
                return all(self.already_jax(part, depth - 1, _seen) for part in parts)
            return self.already_jax(value.value, depth, _seen)
        if isinstance(value, cst.Attribute):
            return self.already_jax(value.value, depth, _seen)
        if isinstance(value, cst.BinaryOperation):
            return self.already_jax(value.left, depth, _seen) or self.already_jax(value.right, depth, _seen)
        if isinstance(value, cst.UnaryOperation):
            return self.already_jax(value.expression, depth, _seen)
        return False

    def never_numpy(self, value) -> bool:
        """Whether `value` is a JAX array (already_jax) or a Python number, or a name bound
        only to those: NumPy's in-place semantics never reach it."""
        if self.already_jax(value) or self.value_kind(value) == SCALAR:
            return True
        if not isinstance(value, cst.Name):
            return False
        values, aug_values = self.name_values(value)
        if not values or not all(
                (not isinstance(v, str) and self.value_kind(v) == SCALAR)
                or self._binding_already_jax(v, statement, 5, frozenset(), value.value)
                for v, statement in values):
            return False
        # `total = 0; total += g` with g a NumPy array makes total one (then changed in place)
        return all(self.already_jax(v) or self.value_kind(v) == SCALAR
                   or (isinstance(v, cst.Name) and self.kind_of(v) == SCALAR) for v in aug_values)

    def _binding_already_jax(self, value, statement, depth: int, seen: frozenset,
                             name: str) -> bool:
        if value == "param":
            return self._param_already_jax(statement, depth, seen)
        if isinstance(value, str):  # unpacked (`i, x = carry`) or a loop's target
            if isinstance(statement, cst.Assign):
                parts = self._unpacked_parts(statement, name)
                if parts is not None:
                    return all(self.already_jax(part, depth, seen) for part in parts)
                return self.already_jax(statement.value, depth, seen)
            if isinstance(statement, cst.For):
                return self.already_jax(statement.iter, depth, seen)
            return False
        return self.already_jax(value, depth, seen)

    def _unpacked_parts(self, statement: cst.Assign, name: str) -> list | None:
        """What `name` is bound to by `a, b = value`: the element at its position of a tuple
        `value`, or of every tuple a function of this module returns (`(c, labels),
        centers = kmeans(X, centers, 3)`: `centers` is the second element of each of
        kmeans's returns). None when that is not known (a nested target, another value)."""
        position = _unpacked_position(statement, name)
        if position is None:
            return None
        value = statement.value
        if isinstance(value, cst.Tuple):
            index, count = position
            elements = value.elements
            if len(elements) != count or any(isinstance(e, cst.StarredElement) for e in elements):
                return None
            return [elements[index].value]
        if isinstance(value, cst.Call):
            function = self.module_function(value)
            parts = self.returned_values(function, position) if function is not None else None
            return parts or None
        return None

    def _indexed_returns(self, subscript: cst.Subscript) -> list | None:
        """`f(...)[k]`, f a function of this module every return of which is a tuple (no
        starred element) longer than the integer k: the k-th element of each; else None."""
        call = subscript.value
        if not isinstance(call, cst.Call) or len(subscript.slice) != 1:
            return None
        index = subscript.slice[0].slice
        if not isinstance(index, cst.Index) or not isinstance(index.value, cst.Integer):
            return None
        position = int(index.value.evaluated_value)
        function = self.module_function(call)
        returns = self.function_returns(function) if function is not None else None
        if not returns or not all(
                isinstance(r, cst.Tuple) and len(r.elements) > position
                and not any(isinstance(e, cst.StarredElement) for e in r.elements)
                for r in returns):
            return None
        return [r.elements[position].value for r in returns]

    def _param_already_jax(self, param, depth: int, seen: frozenset = frozenset()) -> bool:
        function = self.parents.get(self.parents.get(param))
        if not isinstance(param, cst.Param) or not isinstance(function, cst.FunctionDef) \
                or function in self.collector.kept_functions:
            return False
        if any(self._jit_decorator(d.decorator) for d in function.decorators):
            return True  # jax.jit passes tracers: the caller's array is never changed
        scope = self.scopes.get(function)
        name = function.name.value
        if scope is not None and not isinstance(scope, GlobalScope) \
                and not self.collector.dynamic_scopes and name in scope.assignments \
                and len(scope.assignments[name]) == 1:
            (assignment,) = scope.assignments[name]
            accesses = list(assignment.references)
            if accesses and all(self._passed_to_lax(access.node)
                                or self._called_with_jax(access.node, function, param)
                                for access in accesses):
                return True  # a lax.while_loop body: called by JAX with tracers
        passed = self.passed_arguments(param)
        return bool(passed) and all(self.already_jax(a, depth - 1, seen) for a in passed)

    def _called_with_jax(self, node, function: cst.FunctionDef, param: cst.Param) -> bool:
        """`body(0, total)`: a direct call passing a JAX array or a Python number."""
        call = self.parents.get(node)
        if not isinstance(call, cst.Call) or call.func is not node or param.star:
            return False
        positional = [*function.params.posonly_params, *function.params.params]
        position = positional.index(param) if param in positional else None
        argument = argument_for(call, position, param.name.value)
        return argument is not None and self.never_numpy(argument)

    def _jit_decorator(self, decorator) -> bool:
        """`@jax.jit` or `@functools.partial(jax.jit, ...)`."""
        if isinstance(decorator, cst.Call):
            return "functools.partial" in self.collector.qualified_names(decorator.func) \
                and bool(decorator.args) and self._jit_decorator(decorator.args[0].value)
        return "jax.jit" in self.collector.qualified_names(decorator)

    def _passed_to_lax(self, node) -> bool:
        arg = self.parents.get(node)
        call = self.parents.get(arg)
        return isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and any(
            name.startswith("jax.lax.") for name in self.collector.qualified_names(call.func))

    def module_function(self, call: cst.Call) -> cst.FunctionDef | None:
        """The function a call `f(...)` calls when `f` is a plain function of this module,
        bound once at module level (not redefined, not a method), undecorated, synchronous,
        and the module runs no exec/eval/globals() that could rebind it."""
        return self.function_named(call.func)

    def function_named(self, func: cst.BaseExpression) -> cst.FunctionDef | None:
        """The plain module-level function the name `func` refers to (module_function)."""
        if not isinstance(func, cst.Name) or self.collector.dynamic_scopes:
            return None
        scope = self.scopes.get(func)
        assignments = list(scope[func.value]) if scope is not None else []
        if len(assignments) != 1:
            return None
        (assignment,) = assignments
        node = getattr(assignment, "node", None)
        global_scope = getattr(scope, "globals", None)
        if not isinstance(node, cst.FunctionDef) or assignment.scope is not global_scope \
                or len(global_scope.assignments[func.value]) != 1 \
                or node.decorators or node.asynchronous:
            return None
        return node

    def module_method(self, call: cst.Call) -> cst.FunctionDef | None:
        """The method a call `obj.m(...)` calls when `obj` is a new instance of a class of
        this module (`Source().m(...)`), a name bound only to such instances, or `self` in a
        method of a class no class of the module derives from, and `m` is a plain method of
        that class's own body (undecorated, synchronous, defined once there). Else None."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        receiver = func.value
        if isinstance(receiver, cst.Call):
            cls = self.module_class(receiver.func)
        elif isinstance(receiver, cst.Name):
            values, aug_values = self.name_values(receiver)
            classes = {self._class_of_self(statement) if v == "param" else
                       self.module_class(v.func) if isinstance(v, cst.Call) else None
                       for v, statement in values}
            cls = classes.pop() if len(classes) == 1 and not aug_values and values else None
        else:
            return None
        if cls is None or not isinstance(cls.body, cst.IndentedBlock):
            return None
        found = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)
                 and s.name.value == func.attr.value]
        named = [s for s in cls.body.body if func.attr.value in _bound_names(s)]
        if len(found) != 1 or len(named) != 1 or found[0].decorators or found[0].asynchronous:
            return None
        return found[0]

    def module_class(self, name: cst.BaseExpression, depth: int = 0) -> cst.ClassDef | None:
        """The class `name` names when it is a class of this module, bound once at module
        level, undecorated, none of whose bases may be an array type: no base, `object`,
        or classes of the module that are such classes themselves. Else None."""
        if not isinstance(name, cst.Name) or self.collector.names_may_rebind or depth > 8:
            return None
        scope = self.scopes.get(name)
        assignments = list(scope[name.value]) if scope is not None else []
        if len(assignments) != 1:
            return None
        node = getattr(assignments[0], "node", None)
        global_scope = getattr(scope, "globals", None)
        if not isinstance(node, cst.ClassDef) or assignments[0].scope is not global_scope \
                or len(global_scope.assignments[name.value]) != 1 or node.decorators:
            return None
        for base in node.bases:
            if base.keyword is not None or base.star:
                return None
            if not (isinstance(base.value, cst.Name) and base.value.value == "object"
                    and not self.collector.is_api(base.value)) \
                    and self.module_class(base.value, depth + 1) is None:
                return None
        return node

    def module_class_instance(self, expr: cst.BaseExpression, augmented: bool = False) -> bool:
        """Whether `expr` holds an instance of a class of this module that is not an array
        (module_class): a name every binding of which is a call of such a class (`bag =
        Bag()`), or `self` in a method of such a class (its first parameter, the method
        neither a staticmethod nor a classmethod). Its `.sort()`, `.fill(v)`, `.put(...)`
        are the class's own methods, not NumPy's in-place ones. With `augmented`, the name
        may also be bound by `name op= v`: the question is then whose operator that runs."""
        if not isinstance(expr, cst.Name):
            return False
        values, aug_values = self.name_values(expr)
        if not values or (aug_values and not augmented):
            return False
        for value, statement in values:
            if value == "param":
                if not self._self_of_module_class(statement):
                    return False
            elif not (isinstance(value, cst.Call) and self.module_class(value.func) is not None):
                return False
        return True

    def _class_of_self(self, param) -> cst.ClassDef | None:
        """The class of which `param` is `self` (_self_of_module_class), when no class of
        the module names it among its bases (whose methods could override the class's)."""
        if not self._self_of_module_class(param):
            return None
        function = self.parents.get(self.parents.get(param))
        cls = self.parents.get(self.parents.get(function))
        derived = any(isinstance(b.value, cst.Name) and b.value.value == cls.name.value
                      for other in self.collector.nodes.get(cst.ClassDef, [])
                      for b in other.bases)
        return None if derived else cls

    def _self_of_module_class(self, param) -> bool:
        function = self.parents.get(self.parents.get(param))
        if not isinstance(function, cst.FunctionDef) or not function.params.params \
                or function.params.params[0] is not param or function.decorators:
            return False
        block = self.parents.get(function)
        owner = self.parents.get(block)
        return isinstance(owner, cst.ClassDef) and self.module_class(owner.name) is owner

    def plain_module_function(self, function: cst.FunctionDef, decorated: bool = False) -> bool:
        """A function defined at module level, its name bound once there, undecorated
        (unless `decorated`), synchronous, in a module running no exec/eval/globals():
        module_function's callee."""
        if self.collector.dynamic_scopes or (function.decorators and not decorated) \
                or function.asynchronous:
            return False
        scope = self.scopes.get(function)
        return isinstance(scope, GlobalScope) and len(scope.assignments[function.name.value]) == 1

    def tree_function_effects(self, call: cst.Call) -> tuple | None:
        """(every return a fresh JAX array, the parameters it only reads) of the function of
        another module of the tree that `call` calls through an import (ModuleContext), or
        None."""
        context = self.collector.context
        if self.collector.dynamic_scopes or not isinstance(call.func, (cst.Name, cst.Attribute)):
            return None
        (qualname,) = self.collector.imported_names(call.func, sole=True) or (None,)
        if qualname is None:
            return None
        self.collector.wanted_effects.add(qualname)  # the tree hands them on the next pass
        return context.function_effects(qualname)

    def package_function(self, call: cst.Call) -> bool:
        """`call` calls a function imported from this module's own top-level package
        (`from .rcurve import meridian_arc`): another module of the library being converted,
        whose code may stay on NumPy."""
        own = self.collector.context.name.split(".")[0]
        if not own or not isinstance(call.func, (cst.Name, cst.Attribute)):
            return False
        (qualname,) = self.collector.imported_names(call.func, sole=True) or (None,)
        return qualname is not None and qualname.split(".")[0] == own and "." in qualname

    def function_returns(self, function: cst.FunctionDef) -> list | None:
        """The values `function` returns, or None when it may return None (a bare return,
        falling off its end) or is a generator."""
        cache = self._returns
        if function not in cache:
            finder = ReturnsFinder()
            function.body.visit(finder)
            values = [r.value for r in finder.returns]
            cache[function] = None if finder.yields or any(v is None for v in values) \
                or not always_leaves(function.body.body) else values
        return cache[function]

    def returned_param(self, function: cst.FunctionDef) -> cst.Param | None:
        """The parameter every `return` of `function` gives back as it is (`return u`, the
        function never rebinding `u`), or None."""
        returns = self.function_returns(function)
        if not returns or not all(isinstance(v, cst.Name) and v.value == returns[0].value
                                  for v in returns):
            return None
        params = function.params
        param = next((p for p in [*params.posonly_params, *params.params, *params.kwonly_params]
                      if p.name.value == returns[0].value), None)
        if param is None or any(value != "param" for value, _ in self.own_bindings(param.name)):
            return None
        return param

    def passes_through(self, value, name: str) -> bool:
        """Whether `value`, bound to `name`, is a call `f(..., name, ...)` of a function of
        this module that returns that very argument (`u = step(u, r)`): `name` then holds
        the array it held before."""
        if not isinstance(value, cst.Call):
            return False
        function = self.module_function(value)
        if function is None:  # another module's function, rewritten with its calls (NJ209)
            names = self.collector.imported_names(value.func, sole=True) \
                if self.collector.context.external_mutators else set()
            (qualname,) = names or (None,)
            signature = self.collector.context.mutator_parameter(qualname) if qualname else None
            if signature is None or len(signature) < 3 or not signature[2]:
                return False
            argument = argument_for(value, signature[0], signature[1])
            return isinstance(argument, cst.Name) and argument.value == name
        param = self.returned_param(function)
        if param is None or param.star:
            return False
        params = function.params
        positional = [*params.posonly_params, *params.params]
        position = positional.index(param) if param in positional else None
        argument = argument_for(value, position, param.name.value)
        return isinstance(argument, cst.Name) and argument.value == name

    def returned_values(self, function: cst.FunctionDef | None, item=None) -> list | None:
        """What every `return` of `function` gives (function_returns); with `item`, (position,
        length) of a returned tuple, the value at that position of each. None when a return
        gives no such tuple, or function_returns says None."""
        returns = self.function_returns(function) if function is not None else None
        if returns is None or item is None:
            return returns
        position, length = item
        values = []
        for value in returns:
            if not isinstance(value, cst.Tuple) or len(value.elements) != length or any(
                    isinstance(e, cst.StarredElement) for e in value.elements):
                return None
            values.append(value.elements[position].value)
        return values

    def index_kind(self, subscript: cst.Subscript) -> str:
        """"basic" (ints, slices, ..., None: no index repeats), "mask-of-base" (a boolean
        mask provably of the array's own shape, np2jax.shapes), "mask" (another boolean
        mask), "distinct" (fancy, found from the data, each position once: `np.nonzero(m)`),
        or "other" (fancy or unknown: may repeat)."""
        elements = subscript.slice
        if all(self._basic(e.slice) for e in elements):
            return "basic"
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            index = elements[0].slice.value
            if self.is_mask(index):
                return "mask-of-base" if same_shape(self, index, subscript.value) else "mask"
            if self._distinct_positions(index, whole=True):
                return "distinct"
        others = [e for e in elements if not self._basic(e.slice)]
        if len(others) == 1 and isinstance(others[0].slice, cst.Index) \
                and self._distinct_positions(others[0].slice.value, whole=False):
            return "distinct"
        return "other"

    def _distinct_positions(self, node, whole: bool, depth: int = 0) -> bool:
        """An index array that names each position at most once, though it is fancy (its
        length depends on the data): `np.nonzero(m)`, `np.where(m)` (one argument), as the
        whole index, `np.flatnonzero(m)`, `np.unique(i)`, `np.nonzero(m)[0]`, anywhere, or a
        name bound only to those."""
        if depth > 8:
            return False
        if isinstance(node, cst.Name):
            values, aug_values = self.name_values(node)
            return bool(values) and not aug_values and all(
                not isinstance(v, str) and self._distinct_positions(v, whole, depth + 1)
                for v, _ in values)
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 \
                and isinstance(node.slice[0].slice, cst.Index) \
                and isinstance(node.slice[0].slice.value, cst.Integer):
            return self._distinct_positions(node.value, True, depth + 1)  # np.nonzero(m)[0]
        if not isinstance(node, cst.Call) or any(a.star or a.keyword for a in node.args):
            return False
        ref = self.collector.ref_by_call.get(node)
        if ref is None:
            return whole and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value == "nonzero" and not node.args
        if ref.qualname in ("numpy.flatnonzero", "numpy.unique"):
            return len(node.args) == 1
        return whole and len(node.args) == 1 and ref.qualname in ("numpy.nonzero", "numpy.where")

    def _basic(self, index) -> bool:
        if isinstance(index, cst.Slice):
            return True  # a slice never repeats an index, whatever its bounds (NumPy takes
            # only integers there, and refuses the others as JAX does)
        value = index.value
        return isinstance(value, cst.Ellipsis) or (isinstance(value, cst.Name) and value.value == "None") \
            or (self.is_scalar(value) and not isinstance(value, cst.Float)) \
            or self._one_position(value)

    def _one_position(self, node, depth: int = 0) -> bool:
        """`np.argmax(x)` (no axis: one integer), integer arithmetic on it, or a name bound
        only to such values: an index that selects one position, so it cannot repeat."""
        if depth > 8:
            return False
        if isinstance(node, cst.BinaryOperation) and isinstance(
                node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)):
            sides = (node.left, node.right)
            return any(self._one_position(s, depth + 1) for s in sides) and all(
                self._one_position(s, depth + 1) or isinstance(s, cst.Integer) or (
                    isinstance(s, cst.Name) and self.kind_of(s) == SCALAR) for s in sides)
        if isinstance(node, cst.Call):
            ref = self.collector.ref_by_call.get(node)
            return ref is not None and ref.qualname in ("numpy.argmax", "numpy.argmin") \
                and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star
        if isinstance(node, cst.Name):
            values, aug_values = self.name_values(node)
            return bool(values) and not aug_values and all(
                self._one_position(v, depth + 1) if not isinstance(v, str)
                else self._counted_by_loop(node.value, s) for v, s in values)
        return False

    def _counted_by_loop(self, name: str, statement) -> bool:
        """`name` is bound by `for name in range(...)`, `for name, x in enumerate(...)`, or
        `for name in np.flatnonzero(m)` (an index array's items): one integer each time."""
        if not isinstance(statement, cst.For):
            return False
        target, iterated = statement.target, statement.iter
        if not isinstance(iterated, cst.Call) or any(a.star for a in iterated.args):
            return False
        builtin = self.collector.qualified_names(iterated.func)
        if isinstance(target, cst.Name) and target.value == name:
            return builtin == {"builtins.range"} or self._distinct_positions(iterated, whole=False)
        return isinstance(target, cst.Tuple) and len(target.elements) == 2 \
            and isinstance(target.elements[0].value, cst.Name) \
            and target.elements[0].value.value == name and builtin == {"builtins.enumerate"}

    def is_scalar(self, node) -> bool:
        """A Python number: literals, names bound only to numbers, arithmetic of them."""
        if isinstance(node, (cst.Integer, cst.Float)):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            return self.is_scalar(node.expression)
        if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.MatrixMultiply):
            return self.is_scalar(node.left) and self.is_scalar(node.right)
        if isinstance(node, cst.Name):
            return node.value in ("True", "False") or self.kind_of(node) == SCALAR
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            return node.func.value in ("int", "float", "len", "bool")
        return False

    def is_mask(self, node, depth: int = 0) -> bool:
        if depth > 8:
            return False
        if isinstance(node, cst.Comparison):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
            return self.is_mask(node.expression, depth + 1)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self.is_mask(node.left, depth + 1) and self.is_mask(node.right, depth + 1)
        if isinstance(node, cst.Call):
            ref = self.collector.ref_by_call.get(node)
            masks = api_policy()["masks"]
            if ref is not None and ref.qualname in ARRAY_CONSTRUCTORS and node.args \
                    and isinstance(node.args[0].value, cst.List):  # np.array([True, False])
                return all(isinstance(e.value, cst.Name) and e.value.value in ("True", "False")
                           for e in node.args[0].value.elements)
            return ref is not None and ref.qualname in (masks["elementwise_predicates"] + masks["mask_combinators"]
                                                        + masks["reductions"]["names"])
        if isinstance(node, cst.Name):
            values, _ = self.name_values(node)
            return bool(values) and all(not isinstance(v, str) and self.is_mask(v, depth + 1)
                                        for v, _ in values)
        return False

    def one_dimensional(self, name: cst.BaseExpression) -> bool:
        """Whether every binding of `name` makes a 1-D array (so `name[i]` is a scalar copy,
        never a view): np.zeros(n), np.arange(...), np.linspace(...), np.array([numbers])."""
        values, _ = self.values_of(name) if isinstance(name, (cst.Name, cst.Attribute)) else (None, None)
        if not values:
            return False
        for value, _statement in values:
            ref = self.collector.ref_by_call.get(value) if isinstance(value, cst.Call) else None
            if ref is None or not value.args:
                return False
            first = value.args[0].value
            short = ref.qualname.rsplit(".", 1)[-1]
            if short in ("arange", "linspace", "geomspace", "logspace"):
                continue
            if short in ("zeros", "ones", "empty", "full") and self.is_scalar(first):
                continue
            if short in ("array", "asarray") and isinstance(first, (cst.List, cst.Tuple)) and all(
                    self.is_scalar(e.value) for e in first.elements):
                continue
            return False
        return True


# the classes whose instances hash their keys or members
CONTAINER_CLASSES = frozenset({"builtins.dict", "builtins.set", "builtins.frozenset",
                               "collections.Counter", "collections.defaultdict",
                               "collections.OrderedDict"})
_CONTAINER_NAMES = frozenset(name.rsplit(".", 1)[1] for name in CONTAINER_CLASSES)


def _star_param(value, statement) -> bool:
    """A binding of `*args` (a tuple) or `**kwargs` (a dict): Python makes them, never an
    array, whatever the caller passes."""
    return value == "param" and isinstance(statement, cst.Param) and statement.star in ("*", "**")


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


def _part_of(value, name: str) -> bool:
    """`name[...]`: a part of what the name holds (a list's slice is a list)."""
    return isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) \
        and value.value.value == name


class ReturnsFinder(OwnScopeVisitor):
    """Whether a function body returns a value or yields (not looking into nested functions)."""

    def __init__(self) -> None:
        super().__init__()
        self.value_returned = False
        self.yields = False
        self.returns: list[cst.Return] = []
        self.yielded: list[cst.BaseExpression] = []  # `yield v`: v; `yield from g`: g

    def visit_Return(self, node: cst.Return) -> None:
        self.returns.append(node)
        if node.value is not None and not (isinstance(node.value, cst.Name) and node.value.value == "None"):
            self.value_returned = True

    def visit_Yield(self, node: cst.Yield) -> None:
        self.yields = True
        value = node.value.item if isinstance(node.value, cst.From) else node.value
        if value is not None:
            self.yielded.append(value)


def _binds(target: cst.BaseExpression, name: str) -> bool:
    """Whether an assignment target binds `name` (`x`, `i, x`, `(i, (a, b))`, `*rest`)."""
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(e.value, name) for e in target.elements)
    return False


def always_leaves(statements) -> bool:
    """Whether every path through these statements (a block's body) ends in a return or a
    raise, never falling off the end."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, (cst.Return, cst.Raise)):  # `def f(x): return x` on one line
        return True
    if isinstance(last, cst.SimpleStatementLine):
        return isinstance(last.body[-1], (cst.Return, cst.Raise))
    if isinstance(last, cst.If):
        if last.orelse is None:
            return False
        rest = [last.orelse] if isinstance(last.orelse, cst.If) else last.orelse.body.body
        return always_leaves(last.body.body) and always_leaves(rest)
    if isinstance(last, cst.With):
        return always_leaves(last.body.body)
    return False


def _unpacked_position(statement, name: str) -> tuple[int, int] | None:
    """(index, count) when `statement` is `a, b, c = value` binding `name` once at top
    level (no starred target, one target list)."""
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    elements = [e.value for e in target.elements]
    if any(isinstance(e, cst.StarredElement) for e in target.elements):
        return None
    found = [i for i, e in enumerate(elements) if isinstance(e, cst.Name) and e.value == name]
    return (found[0], len(elements)) if len(found) == 1 else None


# Sequence results holding a Python number beside arrays in NumPy (lstsq's rank, polyfit's
# rcond with full=True)
_NUMBER_ITEMS = frozenset({"numpy.linalg.lstsq", "numpy.polyfit"})
# index grids: np.mgrid[...] one array, np.ogrid[...] a list of them
_GRIDS = frozenset({"numpy.mgrid", "numpy.ogrid"})
# index expressions that make one array (`np.r_[[1, 2], [3]]`, `np.c_[a, b]`)
_CONCATENATORS = frozenset({"numpy.r_", "numpy.c_"})


# Attributes of a JAX array that are JAX arrays too (not .shape, .dtype, .size...).
_ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "at"})


# dicts whose keys `_keys_hold_string` reads from the stores into them
_KEYED = frozenset({"builtins.dict", "collections.Counter", "collections.defaultdict",
                    "collections.OrderedDict"})
# builtins whose result gives their argument's items, one by one (values._JaxTyping._elements)
_ITEM_KEEPING = frozenset({"builtins.list", "builtins.tuple", "builtins.sorted", "builtins.reversed"})
# iterators of tuples of their arguments' elements (values._JaxTyping._combined_items)
_COMBINING = frozenset({"builtins.zip", "itertools.product", "itertools.combinations",
                        "itertools.permutations", "itertools.combinations_with_replacement"})


class _JaxTyping:
    """One `Values.jax_typed` question: whether a value is a JAX array once converted, and
    the converted references that answer relies on. Each node is judged once; a node met
    again while being judged (a cycle: `x = x + 1`, recursion) counts as not JAX, which
    only ever makes the answer more cautious."""

    def __init__(self, flow: Values, certain: bool, some: bool = False) -> None:
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
                added = self._all(flow._appended(scope, value.value.value)) if scope is not None \
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
                passed = [a for a in flow._call_arguments(statement, every=False) or ()
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
        if scope is not None and any(isinstance(v, (cst.List, cst.ListComp)) for v, _ in values):
            for added in flow._appended(scope, iterable.value):  # pts.append((g, 0.5))
                typed, relied = self.of(added)
                if typed:
                    return True, relied
        return found

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
        if scope is not None and any(isinstance(v, cst.List) for v, _ in values):
            items += self.flow._appended(scope, iterable.value)
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
        position = _unpacked_position(statement, name)
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
        passed = self.flow._call_arguments(param, every=False) if self.some \
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


def _bound_names(statement) -> set:
    """The names a statement of a class body binds (a def, an assignment)."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return {statement.name.value}
    names = set()
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else []
            for target in targets:
                for node in [target, *getattr(target, "elements", [])]:
                    node = getattr(node, "value", node) if isinstance(node, cst.Element) else node
                    if isinstance(node, cst.Name):
                        names.add(node.value)
    return names
