"""What a value is: the kind of value a name may hold (container, scalar, array), whether
it is a JAX array once converted (and which conversions that relies on), what functions
return, and the kinds of index and mask a subscript uses."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
from libcst.metadata import GlobalScope

from np2jax.analysis.collect import Collector
from np2jax.analysis.facts import (
    ARRAY,
    ARRAY_CONSTRUCTORS,
    CONTAINER,
    CONTAINER_CALLS,
    CONTAINER_METHODS,
    LITERALS,
    SCALAR,
    SCALAR_CALLS,
    UNKNOWN,
)
from np2jax.analysis.jax_typing import JaxTyping
from np2jax.analysis.shapes import same_shape
from np2jax.analysis.strings import Strings
from np2jax.catalog import api_policy
from np2jax.syntax import argument_for, unpacked_position
from np2jax.syntax.walk import OwnScopeVisitor


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
        self.strings = Strings(self)  # may a value be Python strings (or hold None)

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
        if values and all(_star_param(v, s) for v, s in values):
            return CONTAINER  # `make(args)` in `def rand(*args)`: a tuple
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

    def appended(self, scope, name: str) -> list:
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
        return JaxTyping(self, certain).of(value)[0]

    def jax_refs(self, value, certain: bool = False) -> tuple:
        """The converted API references `jax_typed(value)` relies on (empty when False)."""
        return tuple(JaxTyping(self, certain).of(value)[1])

    def may_be_jax(self, value) -> tuple:
        """The converted references by which `value` may be a JAX array once converted: one
        binding, branch or caller giving one is enough (jax_typed asks every one); () when
        none does. For checks whose answer a JAX array changes (isinstance(v, float))."""
        return tuple(JaxTyping(self, False, some=True).of(value)[1])

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
        return self.call_arguments(param, every=True)

    def call_arguments(self, param: cst.Param, every: bool) -> list | None:
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
        position = unpacked_position(statement, name)
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
