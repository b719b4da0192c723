"""The state of a trace check: what the --jit analysis knows of the module (JitModule), and
the base of TraceChecker (np2jax.jit.traceable): the classes of one body's names, what it
records (call sites, rewrites, loop verdicts, the nodes it relies on), and how it stops at
the first violation.

The checks themselves are mixins of this base, one module per concern: expressions
(np2jax.jit.expressions), calls (.calls), statements (.statements) and loops (.loops). A
mixin calls the others through `self` (`self.expr`, `self.call`, `self.block`, `self.loop`,
...); TraceChecker puts them together. The helpers of np2jax.jit.masks, .gather, .branches
and .proofs take the checker as their first argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from np2jax.analysis import ModuleAnalysis
from np2jax.jit.lattice import MAY_BE_ARRAY, PYTHON, STATIC
from np2jax.jit.names import bound_names, names_mentioned
from np2jax.jit.scan import Histories, find_histories
from np2jax.jit.verdicts import LoopVerdict, Rewrite
from np2jax.syntax import code_of
from np2jax.syntax.walk import walk


# Places where a static parameter is given an integer, a tuple or a dtype by any caller that
# runs in NumPy (shapes, axes, bounds): few distinct values, hashable. Not an index `x[i]`:
# callers may pass an int, a slice, or an array of indices (not hashable), so an index
# parameter is static only with other evidence (an int default, a use as a shape).
SHAPE_LIKE = ("the range bound", "the slice bound", "the argument `",
              "the argument of `.", "the argument of `int()`", "the static argument",
              "the step of")


@dataclass
class JitModule:
    """What the checks of one module share."""

    analysis: ModuleAnalysis
    functions: dict  # candidate name -> FunctionDef
    refs_by_node: dict
    refs_by_call: dict
    globals: dict = field(default_factory=dict)  # constant module names -> class
    changed_globals: set = field(default_factory=set)  # module arrays written or kept
    compiled: set = field(default_factory=set)  # current candidates
    histories: dict = field(default_factory=dict)  # FunctionDef -> Histories, found once
    sites: dict = field(default_factory=dict)  # callee name -> [CallSite] of the last pass
    # module functions already decorated with jax.jit (code np2jax or its user wrote):
    # name -> their static_argnames
    jitted: dict = field(default_factory=dict)
    # functions judged on their own body (np2jax.jit.plan, whoever calls them): the class of
    # each parameter inside it, and the static ones, which every call must pass Python values
    own: dict = field(default_factory=dict)
    own_static: dict = field(default_factory=dict)
    imported: frozenset = frozenset()  # names other modules of the tree import from this one
    library: bool = False  # a module of a package: its public functions have outside callers
    # calls to other modules' functions, recorded by a last walk (external_arguments):
    # qualified name -> {(position or None, keyword or None)} of arguments not Python values
    external: dict | None = None
    # this module's functions other modules of the tree call with values that are not
    # Python values: name -> {(position or None, keyword or None)} (ModuleContext)
    array_arguments: dict = field(default_factory=dict)
    # functions of other modules of the tree compiled with jax.jit (ModuleContext.compiled):
    # qualified name -> (their signature as a FunctionDef, their static argument names)
    external_compiled: dict = field(default_factory=dict)

    def shared_update(self, node: cst.AugAssign) -> str | None:
        """Why the analysis found that `a op= v` updates an array another name may hold
        (NJ203's `shared_because`: NumPy changes it there too, a rebinding would not), or None."""
        return next((fact.shared_because for fact in self.analysis.aug_assigns
                     if fact.node is node), None)

    def histories_of(self, function: cst.FunctionDef | None) -> Histories:
        """The lists the loops of `function` collect (np2jax.jit.scan), found once."""
        if function is None:
            return Histories()
        if function not in self.histories:
            self.histories[function] = find_histories(function, self.refs_by_call,
                                                      self.functions)
        return self.histories[function]


@dataclass
class CallSite:
    callee: str
    call: cst.Call
    passed: dict  # parameter name -> class of the argument
    problem: str | None = None  # why the call cannot be bound (a *args, an unknown keyword)


@dataclass
class Violation:
    node: cst.CSTNode
    reason: str
    hint: str = ""  # what the user can change, said after the line
    # the parameters (being inferred from the body) that would make `node` a Python value
    # if they were static, and what needs one there (TraceCheckerBase.static_cause)
    params: tuple = ()
    what: str = ""


class Stop(Exception):
    """The first violation found in check mode: the rest of the function does not matter."""


class TraceCheckerBase:
    """Classifies the names and expressions of one function body (or the module body), and
    with `check`, stops at the first thing jax.jit cannot trace (`violation`)."""

    def __init__(self, module: JitModule, function: cst.FunctionDef | None, params: dict,
                 check: bool) -> None:
        self.m = module
        self.function = function
        self.params = params
        self.check = check
        self.env: dict = dict(params)
        self.bound = bound_names(function) if function is not None else set()
        self.calls: list[CallSite] = []
        self.violation: Violation | None = None
        self.requires: list = []
        self.rewrites: list[Rewrite] = []  # what must change for jit to compile the body
        self.returns: list = []  # classes of returned values
        self.loops: list[LoopVerdict] = []
        self.counter: str | None = None  # a fori_loop counter (a 0-d integer tracer)
        self.branch_names: set = set()  # names given to lax.cond/switch branch functions
        self.probing = False  # walking a loop body to see whether it can become fori_loop
        self.record = False
        self.histories = module.histories_of(function)  # lists collected in loops (lax.scan)
        self.exit_guards: set = set()  # `if t: break/continue` of converted loops: t traced
        # parameters whose class comes from the body, not from call sites (np2jax.jit.plan's
        # own-body inference): a place needing a Python value that one of them would give
        # stops the check and names them (Violation.params), to be made static
        self.inferring: set = set()
        # probing (check off): the inferred parameters some shape-like place needs whole
        self.shape_probe = False
        self.shape_uses: set = set()

    # --- driving ----------------------------------------------------------------------
    def run(self, body) -> None:
        for _ in range(12):  # names bound in loops settle in a few rounds
            before = dict(self.env)
            self._quiet(body)
            if self.env == before:
                break
        self.record = True
        self.calls, self.requires, self.returns, self.rewrites = [], [], [], []
        self.loops = []
        try:
            self.block(body)
        except Stop:
            pass

    def _quiet(self, body) -> None:
        check, self.check = self.check, False
        try:
            self.block(body)
        finally:
            self.check = check

    def refuse(self, node: cst.CSTNode, reason: str, hint: str = "") -> None:
        if self.check and self.record:
            self.violation = Violation(node, reason, hint)
            raise Stop

    def static_cause(self, node: cst.BaseExpression, what: str) -> None:
        """In inference mode, when the parameters being inferred that `node` mentions would
        make it a Python value if they were static: stop, naming them."""
        if not self.inferring or not (self.check and self.record or self.shape_probe):
            return
        mentioned = sorted(n for n in _whole_values(node)
                           if n in self.inferring and self.env.get(n) not in PYTHON)
        if not mentioned:
            return
        env, check, record = dict(self.env), self.check, self.record
        self.check = self.record = False
        try:
            before = self.expr(node)
            for name in mentioned:
                self.env[name] = STATIC
            kind = self.expr(node)
        finally:
            self.env, self.check, self.record = env, check, record
        if before not in PYTHON and kind in PYTHON and self.shape_probe:
            if what.startswith(SHAPE_LIKE):
                self.shape_uses.update(mentioned)
        elif before not in PYTHON and kind in PYTHON:
            self.violation = Violation(node, f"{what} `{code_of(node)}` needs a Python value",
                                       params=tuple(mentioned), what=what)
            raise Stop

    def need_static(self, node: cst.BaseExpression, what: str) -> str:
        kind = self.expr(node)
        if kind not in PYTHON:
            self.static_cause(node, what)
            self.refuse(node, f"{what} `{code_of(node)}` is "
                              f"{'an array' if kind in MAY_BE_ARRAY else 'not known'} "
                              "while compiling")
        return kind

    # --- names ------------------------------------------------------------------------
    def is_builtin(self, func, name: str) -> bool:
        """Whether `func` is the builtin `name` (not a name of the function or module)."""
        return isinstance(func, cst.Name) and func.value == name and name not in self.env \
            and name not in self.bound and name not in self.m.functions \
            and name not in self.m.globals

    def fresh_name(self, base: str) -> str:
        """A name for a function or value the rewrite adds, free in the function."""
        taken = self.bound | set(self.m.functions) | set(self.m.globals) | {
            loop.fix.name for loop in self.loops if loop.fix is not None}
        name, number = base, 1
        while name in taken or name in names_mentioned(self.function):
            number += 1
            name = f"{base}_{number}"
        return name


# Builtins of numbers: a parameter they take whole is a number, not an array's element.
_NUMBER_BUILTINS = frozenset({"int", "float", "bool", "abs", "round", "min", "max", "str"})


def _whole_values(node: cst.CSTNode) -> set:
    """The names an expression uses as whole values: through arithmetic, comparisons,
    `and`/`or`/`not`, conditional expressions, tuples and lists, and number builtins
    (`n + 1`, `(n, 3)`, `mode == "fast"`, `int(n)`), not through a subscript, an attribute
    or another call (`x[0]`, `x.sum()`, `len(x)`): a parameter made static must be the
    Python value itself (an array there is data, which cannot be static)."""
    names: set = set()

    def visit(node) -> None:
        if isinstance(node, cst.Name):
            names.add(node.value)
        elif isinstance(node, cst.BinaryOperation):
            visit(node.left)
            visit(node.right)
        elif isinstance(node, (cst.UnaryOperation,)):
            visit(node.expression)
        elif isinstance(node, cst.BooleanOperation):
            visit(node.left)
            visit(node.right)
        elif isinstance(node, cst.Comparison):
            visit(node.left)
            for comparison in node.comparisons:
                visit(comparison.comparator)
        elif isinstance(node, cst.IfExp):
            for part in (node.test, node.body, node.orelse):
                visit(part)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                visit(element.value)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) \
                and node.func.value in _NUMBER_BUILTINS:
            for arg in node.args:
                visit(arg.value)

    visit(node)
    return names


def string_test(node: cst.CSTNode) -> bool:
    """A test comparing with strings (`mode == "fast"`, `method in ("a", "b")`): on a
    parameter, one a Python value decides (a string cannot be traced)."""
    return any(isinstance(n, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
               for n in walk(node))
