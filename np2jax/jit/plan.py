"""Which module-level functions jax.jit can compile, with which static arguments: the
plans (JitPlan) the --jit rules read.

A function is compiled when its body traces (np2jax.jit.traceable.TraceChecker), its return
values are arrays, and every call site in the module passes, for each parameter, arrays
only or hashable Python values only (these become static_argnames, which keeps Python
semantics for them exactly). The parameters' classes come from the call sites, to a fixed
point: a compiled caller's own parameters decide what it passes on; a function whose
caller is refused is judged again.

A function whose callers the module does not show (no call in it, imported by another
module of the tree by the import graph, ModuleContext.imported_names, or a public function
of a package's module), or whose calls pass values that cannot be classified, is judged on
its own body instead (_judge_own): every parameter may be anything (MIXED) except those
the body uses whole where a Python value is needed, found one stop at a time
(TraceCheckerBase.static_cause) and made static when nothing suggests a caller could pass
an array or a float there.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from np2jax.analysis import ModuleAnalysis
from np2jax.analysis.decorators import decorator_use, jit_safe_decorators, star_imported_name
from np2jax.analysis.values import always_leaves
from np2jax.jit.checker import SHAPE_LIKE, JitModule, Stop, string_test
from np2jax.jit.lattice import ARRAY, LIST, MAY_BE_ARRAY, MIXED, STATIC, UNKNOWN, join
from np2jax.jit.names import declared_globals, module_bindings, parameters
from np2jax.jit.patterns import int_literal
from np2jax.jit.traceable import TraceChecker
from np2jax.syntax import argument_for, code_of
from np2jax.syntax.walk import walk


@dataclass
class JitPlan:
    """The verdict on one module-level function."""

    function: cst.FunctionDef
    compiled: bool
    reason: str = ""  # why it is left uncompiled
    static: tuple = ()  # static_argnames, in parameter order
    requires: tuple = ()  # nodes whose conversion the compiled function relies on
    rewrites: tuple = ()  # the Rewrites it needs
    loops: tuple = ()  # LoopVerdicts of its top-level range() loops


def jit_plans(analysis: ModuleAnalysis) -> list[JitPlan]:
    """The verdict on every module-level function (the rules memoise it: RuleContext)."""
    try:
        return _plan_module(analysis)
    except Exception as exc:  # noqa: BLE001 - a bug here must not cost the conversion
        analysis._jit_external = {}  # (external_arguments)
        return [JitPlan(s, False, f"the jit analysis failed on this file (an np2jax bug, please "
                                  f"report it): {type(exc).__name__}: {exc}")
                for s in analysis.module.body if isinstance(s, cst.FunctionDef)]


def external_arguments(analysis: ModuleAnalysis) -> dict:
    """Qualified name -> sorted [[position or None, keyword or None], ...]: the arguments
    this module passes to other modules' functions that are not Python values (arrays, or
    values the analysis cannot classify). The tree hands them to the defining module, whose
    static parameters must not be given one (a 0-d JAX array is not hashable: jax.jit
    refuses it as a static argument, where NumPy took the NumPy number). After jit_plans."""
    if not hasattr(analysis, "_jit_external"):
        jit_plans(analysis)
    return {q: sorted(found, key=repr) for q, found in analysis._jit_external.items()
            if found}


def compiled_exports(analysis: ModuleAnalysis, plans: list[JitPlan]) -> dict:
    """Name -> (its signature, as `def f(a, dtype=None): pass`, its static argument names)
    of the module's functions compiled with jax.jit, by NJ501 (`plans`) or already: other
    modules' compiled functions may call them (ModuleContext.compiled)."""
    found = {}
    jitted = _candidates(analysis)[2]
    body = cst.IndentedBlock([cst.SimpleStatementLine([cst.Pass()])])
    for statement in analysis.module.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        name = statement.name.value
        plan = next((p for p in plans if p.function is statement), None)
        static = plan.static if plan is not None and plan.compiled else jitted.get(name)
        if static is None or len(statement.decorators) > (0 if plan is not None else 1):
            continue  # decorators of its own run above jax.jit, at each call (no tracers)
        bare = statement.with_changes(decorators=[], body=body, leading_lines=[], returns=None)
        found[name] = (cst.Module([bare]).code.strip(), list(static))
    return found


def _plan_module(analysis: ModuleAnalysis) -> list[JitPlan]:
    candidates, refused, jitted = _candidates(analysis)
    m = JitModule(analysis, candidates,
                  refs_by_node={ref.node: ref for ref in analysis.refs},
                  refs_by_call={ref.call: ref for ref in analysis.refs if ref.call is not None},
                  jitted=jitted, imported=analysis.context.imported_names)
    # a module of a package is a library: its public functions have callers outside the
    # tree (its users, its tests), whatever calls of them it shows
    m.library = "." in analysis.context.name or analysis.context.is_package
    m.array_arguments = {name: {tuple(a) for a in found}
                         for name, found in analysis.context.array_arguments}
    m.external_compiled = {qualname: (cst.parse_statement(signature), tuple(static))
                           for qualname, signature, static in analysis.context.compiled}
    m.own = {name: dict.fromkeys((p.name.value for p in parameters(f)), MIXED)
             for name, f in candidates.items() if _outside_callers(m, name) and parameters(f)}
    once = {n for n, c in _binding_counts(analysis.module).items() if c == 1} \
        - declared_globals(analysis.module) - set(candidates)
    m.globals = _module_globals(m, once)
    m.compiled = set(candidates)
    reasons: dict = {}
    plans: dict = {}
    for _ in range(2 * len(candidates) + 2):
        params = _settle_parameters(m)
        # uncalled functions are judged on their own body: what they pass on to the
        # functions they call is their parameters' own classes (any value, until inferred)
        uncalled = {n: dict.fromkeys((p.name.value for p in parameters(m.functions[n])), MIXED)
                    for n in m.compiled if n not in m.own and not m.sites.get(n)
                    and parameters(m.functions[n])}
        if uncalled:
            m.own.update(uncalled)
            params = _settle_parameters(m)
        changed = False
        plans = {}
        own_before = (dict(m.own), dict(m.own_static))
        for name in sorted(m.compiled):
            plan = _judge(m, name, params)
            plans[name] = plan
            if not plan.compiled:
                reasons[name] = plan.reason
                changed = True
                m.own.pop(name, None)
                m.own_static.pop(name, None)
        m.compiled = {n for n, p in plans.items() if p.compiled}
        if not changed and own_before == (m.own, m.own_static):
            break
    m.external = {}
    # what each function passes on, for any value its own parameters may hold (MIXED) when
    # it is not compiled with classes from its calls
    try:
        _all_checkers(m, {n: m.own[n] if n in m.own else
                          _param_classes(m.functions[n], params[n]) if n in m.compiled else
                          dict.fromkeys((p.name.value for p in parameters(m.functions[n])), MIXED)
                          for n in m.functions})
    except Exception:  # noqa: BLE001 - an np2jax bug: the plans stand, every call is unknown
        m.external = {q: {(None, "*")} for q in m.external}
    analysis._jit_external = m.external  # what external_arguments reads
    result = []
    for statement in analysis.module.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        name = statement.name.value
        if name in plans and plans[name].compiled:
            result.append(plans[name])
        elif name in refused:
            result.append(JitPlan(statement, False, refused[name][1]))
        elif name in reasons:
            result.append(JitPlan(statement, False, reasons[name]))
    return result


# --- the candidates and the module's constants ------------------------------------------


# the names of the functions np2jax itself writes into converted modules
GENERATED_PREFIX = "_np2jax_"


def _candidates(analysis: ModuleAnalysis) -> tuple[dict, dict, dict]:
    """Module-level functions that could be compiled, why the others are not, and those
    already compiled (decorated with jax.jit: nothing to report, their static_argnames)."""
    module = analysis.module
    counts = _binding_counts(module)
    declared_global = declared_globals(module)
    candidates, refused, jitted = {}, {}, {}
    for statement in module.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        name = statement.name.value
        if name.startswith(GENERATED_PREFIX):
            continue  # np2jax's own helper (`_np2jax_numpy_interface`, NJ105): not compiled
        why = None
        static = _jit_decoration(analysis, statement)
        if static is not None and counts.get(name, 0) == 1 and name not in declared_global:
            jitted[name] = static
            continue
        outer = _decorators_above_jit(analysis, statement)
        if outer is not None and outer < len(statement.decorators):
            # already `@deco` above `@jax.jit` (what NJ501 writes for a decorated function)
            inner = statement.with_changes(decorators=statement.decorators[outer:])
            static = _jit_decoration(analysis, inner)
            if static is not None and counts.get(name, 0) == 1 and name not in declared_global:
                jitted[name] = static
                continue
        if statement in analysis.kept_functions:
            why = "it is kept on NumPy (NJ104)"
        elif statement.asynchronous is not None:
            why = "it is asynchronous (jax.jit compiles plain functions)"
        elif statement.decorators and outer != len(statement.decorators):
            why = (f"it is decorated (`@{code_of(statement.decorators[0].decorator)}`), and "
                   "the analysis follows only decorators that hand back what the function "
                   "returns and do nothing with it but call it (`@wraps(fn) def wrapper(*args, "
                   "**kwargs): ...; return fn(*args, **kwargs)`), defined in the tree")
        elif counts.get(name, 0) != 1 or name in declared_global:
            why = (f"the name `{name}` is bound more than once in the module: give each "
                   "function its own name")
        elif isinstance(statement.params.star_arg, cst.Param) or statement.params.star_kwarg:
            why = ("it takes `*args` or `**kwargs`, whose values the calls cannot show: name "
                   "its parameters")
        elif _yields(statement):
            why = "it is a generator (it yields): return an array instead"
        if why is None:
            candidates[name] = statement
        else:
            refused[name] = (statement, why)
    return candidates, refused, jitted


def _decorators_above_jit(analysis: ModuleAnalysis, function: cst.FunctionDef) -> int | None:
    """How many of the function's decorators, from the top, are transparent ones that may
    sit above jax.jit (np2jax.analysis.decorators.calls_only: they hand back what the
    function returns, and only call, wrap or inspect it), this module's or the tree's
    (ModuleContext.jit_decorators); None when it has no decorator."""
    if not function.decorators:
        return None
    local = jit_safe_decorators(analysis.module)
    tree = dict(analysis.context.jit_decorators)
    count = 0
    for decorator in function.decorators:
        use = decorator_use(decorator)
        if use is None:
            break
        expression, kind = use
        if isinstance(expression, cst.Name) and expression.value.startswith(GENERATED_PREFIX):
            count += 1  # np2jax's own outermost decorator (NJ105), over what it compiled
            continue
        if isinstance(expression, cst.Name) and expression.value in local \
                and _bound_once(analysis, expression):
            if local[expression.value] != kind:
                break
        else:
            (qualname,) = analysis.dataflow.collector.imported_names(expression, sole=True) or (None,)
            if qualname is None:
                qualname = _star_imported(analysis, expression)
            if qualname is None or tree.get(qualname) != kind:
                break
        count += 1
    return count


def _bound_once(analysis: ModuleAnalysis, name: cst.Name) -> bool:
    return _binding_counts(analysis.module).get(name.value, 0) == 1


def _star_imported(analysis: ModuleAnalysis, expression: cst.BaseExpression) -> str | None:
    """`deco` of the one `from M import *` of the module, the name bound nowhere else."""
    if not isinstance(expression, cst.Name) \
            or _binding_counts(analysis.module).get(expression.value, 0):
        return None
    context = analysis.context
    return star_imported_name(analysis.module, expression.value, context.name, context.is_package)


def _jit_decoration(analysis: ModuleAnalysis, function: cst.FunctionDef) -> tuple | None:
    """The static_argnames of a function whose one decorator is `jax.jit` or
    `functools.partial(jax.jit, static_argnames=(...))` (what NJ501 writes); None otherwise."""
    if len(function.decorators) != 1:
        return None
    decorator = function.decorators[0].decorator
    if "jax.jit" in analysis.qualified_names(decorator):
        return ()
    if not (isinstance(decorator, cst.Call) and decorator.args
            and "functools.partial" in analysis.qualified_names(decorator.func)
            and decorator.args[0].keyword is None
            and "jax.jit" in analysis.qualified_names(decorator.args[0].value)):
        return None
    static: list = []
    for arg in decorator.args[1:]:
        if arg.keyword is None or arg.keyword.value != "static_argnames":
            return None
        value = arg.value
        elements = value.elements if isinstance(value, (cst.Tuple, cst.List)) else [value]
        for element in elements:
            node = getattr(element, "value", element)
            if not isinstance(node, cst.SimpleString):
                return None
            static.append(node.evaluated_value)
    return tuple(static)


def _binding_counts(module: cst.Module) -> dict:
    """Name -> how many times the module's statements bind it (twice for a conditional
    binding: never a constant)."""
    counts: dict = {}
    for statement in module.body:
        for name in module_bindings(statement):
            counts[name] = counts.get(name, 0) + 1
    return counts


def _yields(function: cst.FunctionDef) -> bool:
    for node in walk(function.body):
        if isinstance(node, (cst.Yield, cst.Await)):
            return True
    return False


def _module_globals(m: JitModule, counts_once: set) -> dict:
    """Module names bound exactly once by a plain assignment: their class (constants)."""
    checker = TraceChecker(m, None, {}, check=False)
    checker.record = True
    result = {}
    for statement in m.analysis.module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                    small.targets[0].target, cst.Name):
                name = small.targets[0].target.value
                if name in counts_once:
                    try:
                        kind = checker.expr(small.value)
                    except Stop:
                        kind = UNKNOWN
                    if kind == ARRAY and m.analysis.dataflow.module_array_changed(
                            m.analysis.dataflow.scopes.get(small.targets[0].target), name):
                        m.changed_globals.add(name)  # written in place or kept: not a constant
                        continue
                    if kind in (STATIC, ARRAY):
                        result[name] = kind
                        checker.env[name] = kind
    return result


# --- parameters, from the call sites ----------------------------------------------------


def _all_checkers(m: JitModule, params: dict) -> list[TraceChecker]:
    """Every body of the module, walked: the module itself, every function and method."""
    checkers = []
    module_checker = TraceChecker(m, None, {}, check=False)
    module_checker.bound = set()
    module_checker.env = dict(m.globals)
    top = [s for s in m.analysis.module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
    module_checker.run(top)
    checkers.append(module_checker)
    for node in walk(m.analysis.module):
        if isinstance(node, cst.FunctionDef):
            name = node.name.value
            own = params.get(name) if m.functions.get(name) is node else None
            checker = TraceChecker(m, node, own if own is not None else
                                   {p.name.value: UNKNOWN for p in parameters(node)},
                                   check=False)
            checker.run(node.body)
            checkers.append(checker)
        elif isinstance(node, cst.ClassDef):
            class_checker = TraceChecker(m, None, {}, check=False)
            class_checker.bound = set()
            class_checker.run([s for s in node.body.body
                               if not isinstance(s, (cst.FunctionDef, cst.ClassDef))])
            checkers.append(class_checker)
    return checkers


def _settle_parameters(m: JitModule) -> dict:
    """Parameter classes of every candidate, from what its call sites pass (to a fixed point:
    a compiled caller's own parameters decide what it passes on)."""
    params: dict = {name: {} for name in m.functions}
    for _ in range(8):
        checkers = _all_checkers(m, {n: m.own[n] if n in m.own else
                                     _param_classes(m.functions[n], params[n], final=False)
                                     for n in m.compiled})
        sites: dict = {name: [] for name in m.functions}
        for checker in checkers:
            for site in checker.calls:
                sites[site.callee].append(site)
        new = {name: _passed_join(m.functions[name], sites[name]) for name in m.functions}
        m.sites = sites
        if new == params:
            break
        params = new
    return params


def _passed_join(function: cst.FunctionDef, sites: list) -> dict:
    joined: dict = {}
    for site in sites:
        if site.problem is not None:
            return {"__problem__": site.problem}
        for param in parameters(function):
            name = param.name.value
            if name in site.passed:
                joined[name] = join(joined.get(name), site.passed[name])
            else:
                joined.setdefault(name, None)
                joined[f"__omitted__{name}"] = True
    return joined


def _param_classes(function: cst.FunctionDef, passed: dict, final: bool = True) -> dict:
    """The class each parameter has inside the body (None while still unknown, unless final)."""
    classes = {}
    for param in parameters(function):
        name = param.name.value
        kind = passed.get(name)
        if param.default is not None and (kind is None or passed.get(f"__omitted__{name}")):
            kind = join(kind, _default_class(param.default))
        classes[name] = kind if kind is not None or not final else UNKNOWN
    return classes


def _default_class(default: cst.BaseExpression) -> str:
    if isinstance(default, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
        return STATIC
    if isinstance(default, cst.Name) and default.value in ("True", "False", "None"):
        return STATIC
    if isinstance(default, cst.UnaryOperation) and isinstance(
            default.expression, (cst.Integer, cst.Float)):
        return STATIC
    return UNKNOWN


# --- the verdict on one function --------------------------------------------------------


def _judge(m: JitModule, name: str, params: dict) -> JitPlan:
    """A function other modules import, a public function of a package's module, or one no
    call of its file shows, is judged on its own body (whoever calls it: _judge_own); the
    others on what their calls pass, and on their own body when the calls' values cannot be
    classified."""
    plan = _judge_undecorated(m, name, params)
    function = plan.function
    if plan.compiled and plan.static and function.decorators:
        # the decorator runs first, on what callers pass: it may turn a Python value into
        # an array (pyrr's `np.array(v)`), which a static argument cannot take
        m.own.pop(name, None)
        m.own_static.pop(name, None)
        return JitPlan(function, False, f"`{plan.static[0]}` would be a static argument, "
                                        f"and the decorator `@{code_of(function.decorators[0].decorator)}` "
                                        "runs before jax.jit on what callers pass: it may turn "
                                        "that Python value into an array, which a static "
                                        "argument cannot take")
    return plan


def _judge_undecorated(m: JitModule, name: str, params: dict) -> JitPlan:
    function = m.functions[name]
    sites = m.sites.get(name, [])
    if parameters(function) and (_outside_callers(m, name) or not sites):
        return _judge_own(m, name, sites)
    plan = _judge_calls(m, name, params)
    if plan.compiled or not plan.reason.startswith(_FROM_CALLS):
        return plan
    own = _judge_own(m, name, sites)
    # a Python list a call passes stays a list (of tracers) inside jax.jit: its body may
    # take its length and its items at Python indices, not an item at an index a loop
    # compiled into fori_loop traces
    lists = {p for site in sites for p, kind in site.passed.items() if kind == LIST}
    if own.compiled and _indexed_by_a_name(function, lists):
        return plan
    return own if own.compiled else plan


_FROM_CALLS = "its calls pass"


def _outside_callers(m: JitModule, name: str) -> bool:
    """Whether calls the module does not show may reach the function: another module of
    the tree imports it, or it is a public function of a package's module (a library's
    API, called by its users and tests)."""
    return name in m.imported or (m.library and not name.startswith("_"))


def _judge_calls(m: JitModule, name: str, params: dict) -> JitPlan:
    function = m.functions[name]
    passed = params.get(name, {})
    sites = m.sites.get(name, [])
    if "__problem__" in passed:
        return JitPlan(function, False, passed["__problem__"])
    escaped = _escapes(m, function, sites)
    if escaped is not None:
        return JitPlan(function, False, escaped)
    # A function without parameters (main()) needs no call site: there is nothing to infer.
    entry = not sites and not parameters(function)
    for param in parameters(function):
        pname = param.name.value
        kind = passed.get(pname)
        if kind in (MIXED, UNKNOWN, LIST):
            return JitPlan(function, False, _passed_reason(m, function, param, kind, sites))
        if param.default is not None and _default_class(param.default) == UNKNOWN and (
                kind is None or passed.get(f"__omitted__{pname}")):
            line = m.analysis.position(param.default)[0]
            return JitPlan(function, False, f"the default of `{pname}`, "
                                            f"`{code_of(param.default).strip()}` on line {line}, "
                                            "is not a plain constant: make it a number, a "
                                            "string, True, False or None, or pass the value at "
                                            "every call")
    classes = _param_classes(function, passed)
    checker = TraceChecker(m, function, classes, check=True)
    checker.run(function.body)
    refused = _body_verdict(m, function, checker, entry)
    if refused is not None:
        return refused
    static = tuple(p.name.value for p in parameters(function)
                   if classes[p.name.value] == STATIC and p.name.value in passed
                   and passed[p.name.value] is not None)
    return JitPlan(function, True, static=static, requires=tuple(checker.requires),
                   rewrites=tuple(checker.rewrites), loops=tuple(checker.loops))


def _body_verdict(m: JitModule, function: cst.FunctionDef, checker: TraceChecker,
                  entry: bool) -> JitPlan | None:
    """The refusal of a function whose body the checker walked (its first violation, or
    what it returns), or None when it compiles. `entry`: its callers are not seen, so a
    Python number it may return must stay one."""
    if checker.violation is not None:
        line = m.analysis.position(checker.violation.node)[0]
        hint = checker.violation.hint
        return JitPlan(function, False, f"{checker.violation.reason} (line {line})"
                                        + (f": {hint}" if hint else ""))
    if not any(kind in MAY_BE_ARRAY for _, kind in checker.returns):
        shown = "; ".join(f"`{code_of(node).strip()}` on line {m.analysis.position(node)[0]}"
                          for node, _ in checker.returns[:2])
        return JitPlan(function, False, "it returns no array" + (
            f" ({shown})" if shown else " (it has no `return`)") + ": jax.jit compiles "
            "functions that compute arrays; one run for its effects stays eager")
    for node, kind in checker.returns:
        if entry and kind == MIXED:
            # uncalled here, so called from outside: a Python number it may return must
            # stay one, not come back from jax.jit as an array
            return JitPlan(function, False, f"`{code_of(node).strip()}` on line "
                                            f"{m.analysis.position(node)[0]} may return Python "
                                            "numbers, which jax.jit would turn into arrays: "
                                            "return arrays on every path (jnp.asarray(...))")
        if kind not in MAY_BE_ARRAY and not _returns_none(node):
            what = ("a Python value, which jax.jit would turn into an array" if kind == STATIC
                    else "a value the analysis cannot show to be arrays")
            return JitPlan(function, False, f"`{code_of(node).strip()}` on line "
                                            f"{m.analysis.position(node)[0]} returns {what}: "
                                            "return arrays (or tuples and dicts of arrays) only")
    if _falls_off_end(function) and any(not _returns_none(n) for n, _ in checker.returns):
        last = m.analysis.position(function.body.body[-1])[0]
        return JitPlan(function, False, "some paths return an array and others None (they "
                                        f"run past the last statement, line {last}): return "
                                        "an array on every path")
    return None


def _indexed_by_a_name(function: cst.FunctionDef, names: set) -> bool:
    """Whether the body subscripts one of `names` with something other than literals
    (`zs[i]`, not `zs[0]` or `zs[1:]`)."""
    if not names:
        return False
    for node in walk(function.body):
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) \
                and node.value.value in names and not all(
                    isinstance(e.slice, cst.Index) and int_literal(e.slice.value) is not None
                    or isinstance(e.slice, cst.Slice) and all(
                        part is None or int_literal(part) is not None
                        for part in (e.slice.lower, e.slice.upper, e.slice.step))
                    for e in node.slice):
            return True
    return False


def _judge_own(m: JitModule, name: str, sites: list) -> JitPlan:
    """A function judged on its own body, whoever calls it (another module, a user of the
    library): each parameter is any value (an array or a Python number) except those its
    body uses where jax.jit needs a Python value (a shape, a range bound, an axis, an index,
    a Python branch...), which become static. It compiles when the body traces for every
    call its signature admits: a static parameter a caller could give an array or a float
    (a Python `if` on it, a float default: each value would compile again) leaves it eager,
    the parameter named."""
    function = m.functions[name]
    own = dict.fromkeys((p.name.value for p in parameters(function)), MIXED)
    needs: dict = {}  # static parameter -> (what needs it, the node)
    checker = None
    for _ in range(len(own) + 1):
        checker = TraceChecker(m, function, own, check=True)
        checker.inferring = {n for n, k in own.items() if k != STATIC}
        checker.run(function.body)
        violation = checker.violation
        if violation is None or not violation.params:
            break
        for param in violation.params:
            needs[param] = (violation.what, violation.node)
            own[param] = STATIC
    by_name = {p.name.value: p for p in parameters(function)}
    shapes = _shape_uses(m, function, own, {p for p, (what, _) in needs.items()
                                             if not what.startswith(SHAPE_LIKE)})
    positional = [*function.params.posonly_params, *function.params.params]
    given = {pname for position, keyword in m.array_arguments.get(name, ())
             for pname in (list(by_name) if keyword == "*" else [keyword] if keyword is not None else
                           [p.name.value for p in positional[position:position + 1]]
                           if position is not None else list(by_name))}
    for pname, (what, node) in needs.items():
        default = by_name[pname].default
        line = m.analysis.position(node)[0]
        where = f"{what} `{code_of(node).strip()}` on line {line}"
        if pname in given and not _never_an_array(what, node) \
                and not _used_as_dtype(function, pname):
            # NumPy took the NumPy number the other module computed; converted, it is a
            # 0-d JAX array, which jax.jit cannot hash as a static argument
            return JitPlan(function, False, f"`{pname}` would be a static argument ({where} "
                                            "needs a Python value), but another module of the "
                                            "tree passes it a value that may be an array (a "
                                            "0-d JAX array once converted, which jax.jit "
                                            "cannot take as a static argument: arrays are not "
                                            "hashable): pass `int(...)` there, or it stays eager")
        if default is not None and _float_literal(default):
            return JitPlan(function, False, f"`{pname}` must be static ({where} needs a Python "
                                            f"value) and its default is a float: each new value "
                                            "would compile again, so it stays eager")
        if what.startswith(SHAPE_LIKE) or pname in shapes or _plain_default(default) \
                or string_test(node):
            continue
        return JitPlan(function, False, f"whether `{pname}` can be static depends on its "
                                        f"callers: {where} needs a Python value, but nothing "
                                        f"shows `{pname}` is not an array or a float (an array "
                                        "cannot be static, each float would compile again); "
                                        "give it a default of the kind it takes (a bool, an int, "
                                        "a string), or call it in this file with the values it takes")
    refused = _body_verdict(m, function, checker, entry=True)
    if refused is not None:
        return refused
    static = tuple(p for p in own if own[p] == STATIC)
    positional = [*function.params.posonly_params, *function.params.params]
    for site in sites:
        for param in parameters(function):
            pname = param.name.value
            value = argument_for(site.call, positional.index(param) if param in positional
                                 else None, pname)
            if pname not in static and isinstance(value, (cst.SimpleString, cst.FormattedString,
                                                          cst.ConcatenatedString)):
                line = m.analysis.position(site.call)[0]
                return JitPlan(function, False, f"`{code_of(site.call).strip()}` on line {line} "
                                                f"passes a string for `{pname}`, which its body "
                                                "uses as a value jax.jit traces (a string "
                                                "cannot be traced)")
        for pname in static:
            kind = site.passed.get(pname)
            if kind in (ARRAY, MIXED, LIST):
                line = m.analysis.position(site.call)[0]
                return JitPlan(function, False, f"`{pname}` must be static (a Python value: "
                                                f"{needs[pname][0]} `{code_of(needs[pname][1]).strip()}`), "
                                                f"but `{code_of(site.call).strip()}` on line {line} "
                                                "passes " + ("a list" if kind == LIST else "an array")
                                                + " for it")
    if static:
        escaped = _escapes(m, function, sites)
        if escaped is not None:
            return JitPlan(function, False, escaped)
    for node, _ in checker.returns:
        value = node.value
        if isinstance(value, cst.Name) and value.value in own:
            return JitPlan(function, False, f"`{code_of(node).strip()}` on line "
                                            f"{m.analysis.position(node)[0]} returns its "
                                            "argument, which jax.jit would hand back as a new "
                                            "JAX array where the caller got its own array back")
    m.own[name] = own
    m.own_static[name] = static
    return JitPlan(function, True, static=static, requires=tuple(checker.requires),
                   rewrites=tuple(checker.rewrites), loops=tuple(checker.loops))


def _shape_uses(m: JitModule, function: cst.FunctionDef, own: dict, probed: set) -> set:
    """Which of the `probed` static parameters (made static for a Python test) the body
    also uses whole as a shape, a bound, an axis or an index: an integer, then."""
    if not probed:
        return set()
    checker = TraceChecker(m, function, {**own, **dict.fromkeys(probed, MIXED)}, check=False)
    checker.inferring = set(probed)
    checker.shape_probe = True
    checker.run(function.body)
    return checker.shape_uses & probed


def _never_an_array(what: str, node: cst.CSTNode) -> bool:
    """Whether a static parameter of this use takes only values no caller has as an array:
    a dtype (`np.zeros(3, dtype=dtype)`) or a string (`if mode == "valid":`)."""
    return what.startswith("the argument `dtype` of") or string_test(node)


def _used_as_dtype(function: cst.FunctionDef, name: str) -> bool:
    """Whether the body passes the parameter as a dtype (`dtype=name`, `.astype(name)`)
    somewhere: an array there fails in NumPy too, so no caller gives it one."""
    for node in walk(function.body):
        if isinstance(node, cst.Arg) and isinstance(node.value, cst.Name) \
                and node.value.value == name and node.keyword is not None \
                and node.keyword.value == "dtype":
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value == "astype" and len(node.args) == 1 \
                and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == name:
            return True
    return False


def _float_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, cst.Float)


def _plain_default(node: cst.BaseExpression | None) -> bool:
    """A default that says the parameter takes an int, a string, a bool or None."""
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.SimpleString, cst.ConcatenatedString)) or (
        isinstance(node, cst.Name) and node.value in ("True", "False", "None"))


def _passed_reason(m: JitModule, function: cst.FunctionDef, param: cst.Param, kind: str,
                   sites: list) -> str:
    """Why the calls' arguments for `param` leave the function eager: the call sites and
    the values they pass, and what would make them classifiable."""
    name = param.name.value
    positional = [*function.params.posonly_params, *function.params.params]
    position = positional.index(param) if param in positional else None

    def shown(site, wanted) -> str:
        value = argument_for(site.call, position, name)
        line = m.analysis.position(site.call)[0]
        spelled = f"`{code_of(value).strip()}`" if value is not None else "its default"
        return f"{spelled} in `{code_of(site.call).strip()}` on line {line}"

    def first(wanted):
        return next((site for site in sites if site.passed.get(name) in wanted), None)

    if kind == MIXED:
        array, python = first((ARRAY,)), first((STATIC,))
        if array is not None and python is not None:
            return (f"its calls pass both arrays and Python values for `{name}`: an array, "
                    f"{shown(array, ARRAY)}, and a Python value, {shown(python, STATIC)}; pass "
                    "the same kind at every call (jnp.asarray(...) for the Python value)")
        site = first((MIXED,))
        return (f"its calls pass both arrays and Python values for `{name}`" + (
            f": {shown(site, MIXED)} may be either" if site is not None else "") +
            "; pass the same kind at every call (jnp.asarray(...) for the Python value)")
    if kind == LIST:
        site = first((LIST,))
        return (f"its calls pass a Python list or dict (not hashable, not an array) for "
                f"`{name}`" + (f": {shown(site, LIST)}" if site is not None else "") +
                "; pass a tuple (a static argument) or an array (np.array(...)) instead")
    site = first((UNKNOWN, None))
    return (f"its calls pass a value the analysis cannot classify for `{name}`" + (
        f": {shown(site, UNKNOWN)}" if site is not None else "") + "; it follows arrays (NumPy "
        "results, and parameters every caller passes one for) and Python values (literals, "
        "shapes, constants bound once at module level): compute the value from those, or "
        "compile the caller too")


def _returns_none(node: cst.Return) -> bool:
    return node.value is None or (isinstance(node.value, cst.Name) and node.value.value == "None")


def _falls_off_end(function: cst.FunctionDef) -> bool:
    return not always_leaves(function.body.body)


def _escapes(m: JitModule, function: cst.FunctionDef, sites: list) -> str | None:
    """Every use of the function's name must be one of the calls seen."""
    scope = m.analysis.dataflow.scopes.get(m.analysis.module)
    if scope is None:
        return "the module's scopes are not known"
    name = function.name.value
    calls = {id(site.call) for site in sites}
    # libcst keeps accesses in sets: in source order, the line named is the same every run
    accesses = [access for assignment in scope.assignments[name] for access in assignment.references]
    for access in sorted(accesses, key=lambda access: m.analysis.position(access.node)):
        parent = m.analysis.parents.get(access.node)
        if not (isinstance(parent, cst.Call) and parent.func is access.node
                and id(parent) in calls):
            line = m.analysis.position(access.node)[0]
            use = parent if isinstance(parent, (cst.Call, cst.Assign, cst.Arg)) else access.node
            return (f"it is used as a value on line {line} (`{code_of(use).strip()}`: passed or "
                    "stored), so its arguments cannot be checked: call it directly, or "
                    "decorate it with jax.jit yourself")
    return None
