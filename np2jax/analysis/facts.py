"""Facts about a module's values: the kinds of value a name may hold, why a NumPy reference
stays on NumPy, and the records the analysis hands to the rules. Data only."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

MODULE_ROOTS = ("numpy", "scipy")
JNP_DEFAULT_ALIAS = "jnp"

# Why a reference stays on NumPy; the rule that reports each reason names it.
KEEP_MISSING = "missing"  # JAX has no counterpart
KEEP_UNSUPPORTED_ARGUMENT = "unsupported-argument"
KEEP_MODULE_VALUE = "module-value"  # `xp = np`: a module used as a value
KEEP_TYPE_CHECK = "type-check"  # isinstance(x, np.ndarray)
KEEP_OUT = "out"
KEEP_IN_PLACE_FUNCTION = "in-place-function"
KEEP_UFUNC_AT = "ufunc-at"
KEEP_RANDOM = "random"
KEEP_STATIC = "static"  # host computation feeding a shape or a Python loop: stays NumPy, no finding
KEEP_BY_DESIGN = "by-design"  # I/O, print options, testing: stays NumPy, no finding
KEEP_AMBIGUOUS = "ambiguous"  # the name may refer to NumPy or to something else
KEEP_DIFFERS = "differs"  # JAX has the name but answers differently (policy.toml [differs])
KEEP_NO_METHOD = "no-method"  # np.sin.reduce: JAX's sin is a plain function
KEEP_BOUND_TO_NAME = "bound-to-name"  # add = np.add: later uses (.at, out=) cannot be checked
# the module shows values JAX cannot hold (Decimal, Fraction, object arrays): it stays NumPy
KEEP_OBJECT_VALUES = "object-values"
# in a function kept on NumPy as written (keep-numpy, np2jax.analysis.kept; NJ104 reports it)
KEEP_KEPT = "kept-function"

# Modules whose numbers JAX cannot hold (no object arrays): a module importing them may
# hand them to its NumPy calls (`npv(Decimal("0.05"), cashflows)`).
OBJECT_VALUE_MODULES = {"decimal": "`decimal.Decimal`", "fractions": "`fractions.Fraction`"}

# Calls making a NumPy random generator or state: its draws are new arrays.
GENERATOR_FACTORIES = ("numpy.random.default_rng", "numpy.random.RandomState")
# The API table proven by running both (rules/api/proven.json): JAX computes this call
# differently (an argument's value, a missing argument, the result's type), or nothing
# proved the arguments given. The detail names the argument.
KEEP_PROVEN_DIFFERENT = "proven-different"
KEEP_UNPROVEN = "unproven"

# Operators NumPy applies elementwise (not `is`, `in`), and the operands np2jax may wrap.
# string literals, concatenated or formatted: text, which JAX has no arrays of
TEXT_NODES = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
ELEMENTWISE_COMPARISONS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual,
                           cst.Equal, cst.NotEqual)
OPERAND_NODES = (cst.Name, cst.Subscript)

UFUNC_METHODS = ("reduce", "accumulate", "outer", "at", "reduceat")
ARRAY_CONSTRUCTORS = ("numpy.array", "numpy.asarray", "numpy.asanyarray")

# Builtins that neither keep a reference to their arguments nor return them.
PURE_BUILTINS = frozenset({
    "print", "len", "float", "int", "complex", "bool", "str", "repr", "format", "abs",
    "round", "isinstance", "issubclass", "type", "id", "hash", "range", "sum", "min", "max",
    "any", "all", "sorted", "divmod", "pow",
})
CONTAINER_CALLS = frozenset({"list", "dict", "set", "frozenset", "tuple", "defaultdict",
                             "OrderedDict", "Counter", "deque", "str", "bytearray", "sorted",
                             "globals", "locals", "vars"})
CONTAINER_METHODS = frozenset({"split", "rsplit", "splitlines", "tolist"})
# Not abs() or round(): on an array they return an array.
SCALAR_CALLS = frozenset({"int", "float", "complex", "bool", "len", "all", "any", "isinstance",
                          "hasattr", "callable"})
LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)
STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "size"})
# Writers of JSON text: a value given to them is written out with all its digits.
JSON_WRITERS = frozenset({"json.dumps", "json.dump"})

# Builtins through which code reads or writes names and attributes the analysis cannot see.
DYNAMIC_CALLS = frozenset({"exec", "eval", "globals", "locals", "vars", "setattr", "delattr",
                           "getattr", "__import__"})

# Kinds of value a name may hold.
CONTAINER, SCALAR, ARRAY, UNKNOWN = "container", "scalar", "array", "unknown"



@dataclass
class Argument:
    arg: cst.Arg
    role: str | None  # from the API table; None when it cannot be known (*args)
    problem: str | None = None  # why JAX cannot take it as written
    name: str | None = None  # the JAX parameter it binds to


@dataclass
class ApiRef:
    """One reference to a NumPy/SciPy API, e.g. the `np.linalg.norm` in `np.linalg.norm(x)`."""

    node: cst.BaseExpression
    qualname: str  # the longest name known to the table, e.g. "numpy.linalg.norm"
    entry: dict | None
    # the whole dotted name written, when the table knows only a prefix of it
    # (`scipy.spatial.distance.cdist`, of which the table knows `scipy.spatial`)
    full_name: str | None = None
    call: cst.Call | None = None  # the call whose function this reference is
    arguments: list[Argument] = field(default_factory=list)
    keep: str | None = None  # None: convert to `jax_path`; else why it stays on NumPy
    detail: str = ""  # for findings: the offending argument, the missing name, ...
    out_arg: cst.Arg | None = None  # the out= argument of the call, when it has one
    # converted as `jnp.asarray(np.linspace(...))`: NumPy computes it (policy.toml computed_by_numpy)
    computed_by_numpy: bool = False
    # data arguments to give JAX as float64, where running both showed that gives NumPy's
    # result for their dtype (np.cov of float32 data: NumPy computes in float64; NJ402)
    widened: tuple = ()
    # kept because its data hold what JAX has no arrays of (strings, None, objects): what it
    # makes is a string or object array, which another module's converted code cannot take
    holds_objects: bool = False

    @property
    def jax_path(self) -> str | None:
        return (self.entry or {}).get("jax")

    @property
    def converted(self) -> bool:
        return self.keep is None

    @property
    def jax_takes_arguments(self) -> bool:
        """JAX's function is called with the arguments (not a grid NumPy computes)."""
        return self.keep is None and not self.computed_by_numpy

    @property
    def dtype_argument(self) -> cst.BaseExpression | None:
        """The dtype the call gives, by keyword or by position (`np.full(s, -1, np.int64)`,
        `np.ones(7, np.int16)`), or None."""
        if self.call is None:
            return None
        for argument in self.arguments:
            if argument.name == "dtype":
                return argument.arg.value
        return next((a.value for a in self.call.args
                     if a.keyword is not None and a.keyword.value == "dtype"), None)


@dataclass
class SubscriptWrite:
    statement: cst.CSTNode  # the Assign / AugAssign
    target: cst.Subscript
    operator: str | None  # "+=" for augmented writes, None for plain stores
    base_kind: str  # what the subscripted object may be


@dataclass
class AugAssignFact:
    node: cst.AugAssign
    target: cst.BaseExpression  # a Name or an Attribute
    shared_because: str | None  # why another name may see the array; None when provably private


@dataclass
class MethodWrite:
    node: cst.CSTNode  # the call, or the Assign for `x.shape = ...`
    receiver: cst.BaseExpression
    method: str
    receiver_kind: str


@dataclass
class MutatorFunction:
    """`def normalize(v): v /= v.sum()`: a function that changes one argument in place and
    returns nothing. It can return the new array instead, if every caller can take it."""

    node: cst.FunctionDef
    param: cst.Param
    writes: list  # the statements changing the parameter (subscript writes, `v op= ...`)
    call_sites: list  # (call, argument expression) of every call statement, to assign back
    refused: str | None  # why the function is not rewritten
    # it already returns the parameter (`return u`): calls `u = f(u, ...)` need no rewrite
    returns_param: bool = False
    rebinding_calls: list = field(default_factory=list)  # (call, argument) of `u = f(u, ...)`
    # it returns something else: it returns `(result, u)`, calls `r = f(u)` become
    # `r, u = f(u)` and `f(u)` becomes `u = f(u)[1]`
    returns_pair: bool = False
