"""Calls in the trace check: NumPy API, array methods, builtins, print, and the other
functions of the module (a mixin of np2jax.jit.traceable.TraceChecker)."""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.facts import KEEP_STATIC
from np2jax.analysis.references import bind_arguments as bind_api_arguments
from np2jax.catalog import api_table
from np2jax.jit.checker import CallSite, Stop, TraceCheckerBase
from np2jax.jit.lattice import (ARRAY, LIST, MAY_BE_ARRAY, MIXED, PYTHON, STATIC,
                                TRACER_SHAPE_QUESTIONS, UNKNOWN)
from np2jax.jit.masks import selection_count, selection_reduction, size_hint
from np2jax.jit.names import parameters
from np2jax.jit.rewrites import debug_print
from np2jax.jit.verdicts import Rewrite, RewriteKind
from np2jax.syntax import code_of

# Output shape depends on the values: jax.jit refuses these without size= (not given here).
DATA_DEPENDENT = frozenset({
    "nonzero", "argwhere", "flatnonzero", "unique", "unique_values", "unique_counts",
    "unique_inverse", "unique_all", "compress", "extract", "setdiff1d", "intersect1d",
    "union1d", "setxor1d", "trim_zeros", "bincount", "roots", "repeat", "apply_along_axis",
    "apply_over_axes", "vectorize", "frompyfunc", "fromfunction", "piecewise", "nanargmax",
    "nanargmin",
})
# NumPy functions answering with a Python value (a shape, a dtype, a flag) for static input.
STATIC_RESULTS = frozenset({"shape", "ndim", "size", "dtype", "result_type", "promote_types",
                            "iinfo", "finfo", "issubdtype", "isscalar", "can_cast"})
# Array methods: the result is an array; the arguments must be Python values, except for
# the methods in ARRAY_ARGUMENT_METHODS.
ARRAY_METHODS = frozenset({
    "sum", "mean", "std", "var", "max", "min", "prod", "argmax", "argmin", "reshape",
    "astype", "transpose", "flatten", "ravel", "cumsum", "cumprod", "squeeze", "copy", "any",
    "all", "conj", "conjugate", "round", "swapaxes", "dot", "clip", "ptp", "trace",
    "diagonal",
})
# The updates of `x.at[i]` (code already converted, or written by hand).
AT_UPDATES = frozenset({"set", "add", "subtract", "multiply", "divide", "power", "min", "max",
                        "get", "apply"})
ARRAY_ARGUMENT_METHODS = frozenset({"dot", "clip"})
HOST_METHODS = frozenset({"item", "tolist", "tobytes", "tofile", "__array__", "nonzero"})
# Builtins that take Python values and give one (host conversions when given an array).
STATIC_BUILTINS = frozenset({
    "int", "float", "bool", "complex", "str", "repr", "format", "round", "min", "max", "sum",
    "any", "all", "sorted", "list", "tuple", "dict", "set", "zip", "enumerate", "reversed",
    "isinstance", "type", "divmod", "pow", "hash", "range", "map", "filter",
})
HOST_CONVERSIONS = frozenset({"int", "float", "bool", "complex", "str", "repr", "format",
                              "round", "list", "tuple"})
# Reductions over a mask selection, and their form with `where` (max/min fill with the
# opposite extreme of the array, NaN ignored: the same result whenever the selection is not
# empty).
MASK_REDUCTIONS = frozenset({"sum", "mean", "prod", "any", "all", "max", "min"})


# Arguments the API table lets be arrays that decide the result's shape: under jax.jit they
# must be Python values (np.arange(n) of a traced `n` does not compile).
SHAPE_ARGUMENTS = frozenset({
    *(("numpy.arange", name) for name in ("start", "stop", "step")),
    *((f"numpy.{split}", "indices_or_sections")
      for split in ("split", "array_split", "hsplit", "vsplit", "dsplit")),
    ("numpy.pad", "pad_width"), ("numpy.repeat", "repeats"),
    *((f"numpy.{histogram}", "bins") for histogram in (
        "histogram", "histogram2d", "histogramdd", "histogram_bin_edges")),
})
# NumPy's constructors of an array from an array or a literal of numbers and arrays.
ARRAY_CONSTRUCTORS = frozenset({"numpy.array", "numpy.asarray"})


class CallChecks(TraceCheckerBase):
    """The class of a call's result, and what its arguments must be."""

    def call(self, node: cst.Call) -> str:
        ref = self.m.refs_by_call.get(node)
        func = node.func
        if ref is not None:
            return self.api_call(node, ref)
        jax_name = self.m.analysis.dataflow.collector.jax_calls.get(node)
        if jax_name is not None:
            return self.jax_call(node, jax_name)
        if self.m.external is not None and not self.check:
            self.record_external(node)
        if self.m.external_compiled and ref is None and jax_name is None:
            (qualname,) = self.m.analysis.dataflow.collector.imported_names(func, sole=True) or (None,)
            if qualname in self.m.external_compiled and not (
                    isinstance(func, cst.Name) and (func.value in self.env or func.value in self.bound)):
                return self.external_compiled_call(node, qualname)
        if isinstance(func, cst.Name):
            name = func.value
            if name not in self.env and name not in self.bound:
                if name in self.m.functions:
                    return self.user_call(node, name)
                if name in self.m.jitted:
                    return self.jitted_call(node, name)
                if name in STATIC_BUILTINS or name in ("len", "abs", "print"):
                    return self.builtin_call(node, name)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Subscript) \
                and func.attr.value in MASK_REDUCTIONS:
            kind = selection_reduction(self, node, func.attr.value)
            if kind is not None:
                return kind
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.value.value in self.histories.refused:
            for arg in node.args:
                self.expr(arg.value)
            self.refuse(node, f"`{code_of(node)}` changes a Python list, which under jit "
                              f"happens once, while compiling, and the list `{func.value.value}` "
                              f"cannot become a lax.scan history: "
                              f"{self.histories.refused[func.value.value]}")
            return UNKNOWN
        if isinstance(func, cst.Attribute) and func.attr.value in AT_UPDATES \
                and isinstance(func.value, cst.Subscript) \
                and isinstance(func.value.value, cst.Attribute) \
                and func.value.value.attr.value == "at" \
                and self.expr(func.value.value.value) in MAY_BE_ARRAY:
            # x.at[i].set(v) (code already converted): the index as a read's, the values
            self.index(func.value)
            for arg in node.args:
                if arg.keyword is not None or arg.star:
                    self.refuse(node, f"`{code_of(node)}` passes keywords or `*args` to `.at`")
                self.expr(arg.value)
            return ARRAY
        if isinstance(func, cst.Attribute):
            receiver = self.expr(func.value)
            method = func.attr.value
            if receiver in MAY_BE_ARRAY:
                return self.method_call(node, method)
            if receiver == STATIC:
                for arg in node.args:
                    self.need_static(arg.value, f"the argument of `.{method}()`")
                return STATIC
            if receiver == LIST:
                self.refuse(node, f"`{code_of(node)}` changes or reads a Python container")
                return UNKNOWN
        for arg in node.args:
            self.expr(arg.value)
        self.refuse(node, f"it calls `{code_of(func)}`, which cannot be traced (not NumPy, "
                          "not a compiled function of this file)",
                    "call it outside the function and pass its result as an argument, or "
                    "make it a function of this file the analysis can compile")
        return UNKNOWN

    def record_external(self, node: cst.Call) -> None:
        """A call of a function another module defines (`from pkg.ops import spread`,
        `ops.spread(...)`): which of its arguments are not Python values (JitModule.external;
        that module's static parameters must not be given them: np2jax.engine)."""
        (qualname,) = self.m.analysis.dataflow.collector.imported_names(node.func, sole=True) or (None,)
        if qualname is None:
            return
        found = self.m.external.setdefault(qualname, set())
        position = 0
        for arg in node.args:
            if arg.star:
                found.add((None, "*"))
                continue
            try:
                kind = self.expr(arg.value)
            except Stop:
                kind = UNKNOWN
            if kind != STATIC:
                found.add((position if arg.keyword is None else None,
                           arg.keyword.value if arg.keyword is not None else None))
            if arg.keyword is None:
                position += 1

    def api_call(self, node: cst.Call, ref) -> str:
        self.api_value(ref.node, ref)
        if ref.qualname in TRACER_SHAPE_QUESTIONS:  # np.size(x, 0): x's shape, a tracer's too
            for arg in node.args:
                if self.expr(arg.value) == LIST:  # NumPy makes an array of it: of tracers
                    self.refuse(node, f"`{code_of(node.func)}` is given `{code_of(arg.value)}`, "
                                      "a Python list that holds tracers while compiling")
            return STATIC
        short = ref.qualname.rsplit(".", 1)[-1]
        if short in DATA_DEPENDENT or (short == "where" and len(node.args) == 1):
            self.refuse(node, size_hint(code_of(node.func)))
        kinds = []
        # A grid NumPy computes (jnp.asarray(np.linspace(...))) takes Python values only.
        roles = {id(a.arg): None if (ref.qualname, a.name) in SHAPE_ARGUMENTS
                 or ref.computed_by_numpy or ref.keep == KEEP_STATIC else a.role for a in ref.arguments}
        if ref.qualname in ARRAY_CONSTRUCTORS:  # np.array(x) of an array: a copy
            roles.update({id(a.arg): "array" for a in ref.arguments
                          if a.name in ("object", "a") and self.array_object(a.arg.value)})
        for arg in node.args:
            role = roles.get(id(arg))
            if arg.star:
                self.refuse(node, "it passes `*args` to NumPy")
            if role in ("array", "arrays"):
                kinds.append(self.expr(arg.value))
            else:
                kinds.append(self.need_static(arg.value, f"the argument `{code_of(arg.value)}` "
                                                         f"of `{code_of(node.func)}`, which must "
                                                         "be a Python value,"))
        if short in STATIC_RESULTS or ref.keep == KEEP_STATIC:
            return STATIC  # a shape, a dtype, a flag; NumPy's grid of Python values
        return ARRAY

    def array_object(self, node: cst.BaseExpression) -> bool:
        """What np.array / np.asarray makes an array of, traced: an array (a stacked
        history), or a list or tuple literal holding arrays among numbers (`[x, y, 0.0]`,
        `[[c, -s], [s, c]]`), which jnp.array stacks as NumPy does."""
        return self._literal_class(node) in MAY_BE_ARRAY

    def _literal_class(self, node: cst.BaseExpression) -> str:
        if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
            kinds = [UNKNOWN if isinstance(e, cst.StarredElement) else self._literal_class(e.value)
                     for e in node.elements]
            if all(k == STATIC for k in kinds):
                return STATIC
            return ARRAY if all(k in MAY_BE_ARRAY or k == STATIC for k in kinds) else UNKNOWN
        return self.expr(node)

    def jax_call(self, node: cst.Call, qualname: str) -> str:
        """A jax.numpy call (code already converted): the API table's roles of NumPy's
        function of the same name say which arguments may be arrays."""
        short = qualname.rsplit(".", 1)[-1]
        if short in DATA_DEPENDENT or (short == "where" and len(node.args) == 1):
            self.refuse(node, size_hint(code_of(node.func)))
        entry = api_table().get(qualname)
        roles = {} if entry is None else {
            id(a.arg): None if (qualname, a.name) in SHAPE_ARGUMENTS else a.role
            for a in bind_api_arguments(node, entry, qualname)}
        if qualname in ARRAY_CONSTRUCTORS:  # jnp.array(x) of an array: a copy
            roles.update({id(a): "array" for a in node.args[:1]
                          if a.keyword is None and self.array_object(a.value)})
        for arg in node.args:
            if arg.star:
                self.refuse(node, f"it passes `{arg.star}{code_of(arg.value)}` to "
                                  f"`{code_of(node.func)}`")
            if roles.get(id(arg)) in ("array", "arrays"):
                self.expr(arg.value)
            else:
                self.need_static(arg.value, f"the argument `{code_of(arg.value)}` of "
                                            f"`{code_of(node.func)}`, which must be a Python "
                                            "value,")
        return STATIC if short in STATIC_RESULTS else ARRAY

    def external_compiled_call(self, node: cst.Call, qualname: str) -> str:
        """A call of another module's function compiled with jax.jit (`vector3.cross(a, b)`,
        `from .vector import normalize`): traced inline, as jax.jit does a jax.jit function
        it meets. Its static arguments must be Python values; the others may be anything
        (it was judged on its own body, for any caller: another module imports it)."""
        function, static = self.m.external_compiled[qualname]
        kinds = [self.expr(a.value) for a in node.args]
        passed, problem = bind_arguments(node, function, kinds)
        if problem is not None:
            self.refuse(node, problem)
        positional = [p.name.value for p in [*function.params.posonly_params, *function.params.params]]
        for index, arg in enumerate(node.args):
            param = arg.keyword.value if arg.keyword is not None else positional[index]
            if param in static and passed[param] not in PYTHON:
                what = f"the static argument `{param}` of `{code_of(node.func)}`"
                self.static_cause(arg.value, what)
                self.refuse(node, f"{what} `{code_of(arg.value)}` is not a Python value while "
                                  "compiling")
        return ARRAY

    def refuse_decorated(self, node: cst.Call, name: str, function: cst.FunctionDef) -> None:
        """A compiled function under its own decorators is compiled below them: they run
        at each call, and inside another compiled function they would run while tracing,
        on tracers (`np.array(v)` of one fails)."""
        self.refuse(node, f"it calls `{name}`, whose decorator "
                          f"`@{code_of(function.decorators[0].decorator)}` runs at each call, "
                          "above its jax.jit: inside a compiled function it would run on "
                          "tracers, which it may not take",
                    f"call `{name}` outside this function and pass its result")

    def jitted_call(self, node: cst.Call, name: str) -> str:
        """A call of a function of this file already compiled with jax.jit: its static
        arguments must be Python values, the others may be arrays."""
        function = next(s for s in self.m.analysis.module.body
                        if isinstance(s, cst.FunctionDef) and s.name.value == name)
        if len(function.decorators) > 1:  # its own decorators above jax.jit
            self.refuse_decorated(node, name, function)
        kinds = [self.expr(a.value) for a in node.args]
        passed, problem = bind_arguments(node, function, kinds)
        if problem is not None:
            self.refuse(node, problem)
        for param, kind in passed.items():
            if param in self.m.jitted[name] and kind not in PYTHON:
                self.refuse(node, f"`{code_of(node)}` passes an array for `{param}`, a static "
                                  f"argument of `{name}`")
            elif param not in self.m.jitted[name] and kind not in (ARRAY, STATIC):
                self.refuse(node, f"`{code_of(node)}` passes a value the analysis cannot "
                                  f"classify for `{param}`")
        return ARRAY

    def method_call(self, node: cst.Call, method: str) -> str:
        if method in HOST_METHODS:
            self.refuse(node, f"`.{method}()` copies an array to the host, which a tracer "
                              "cannot do")
            return UNKNOWN
        if method not in ARRAY_METHODS:
            self.refuse(node, f"it calls the method `.{method}()`, which the analysis does "
                              "not follow", f"call NumPy's function of that name instead "
                                            f"of `.{method}()`, where there is one")
            return UNKNOWN
        for arg in node.args:
            if method in ARRAY_ARGUMENT_METHODS:
                self.expr(arg.value)
            else:
                self.need_static(arg.value, f"the argument of `.{method}()`")
        return ARRAY

    def builtin_call(self, node: cst.Call, name: str) -> str:
        if name == "print":
            for arg in node.args:
                self.expr(arg.value)
            self.refuse(node, f"`{code_of(node)}` prints (under jit a print runs once, "
                              "while compiling)", "print outside the function, on its result")
            return STATIC
        if name == "len":
            if selection_count(self, node):  # len(x[m]) / n: jnp.count_nonzero(m) / n
                return ARRAY
            kinds = [self.expr(arg.value) for arg in node.args]
            return STATIC if all(k in (STATIC, LIST, ARRAY, MIXED) for k in kinds) else UNKNOWN
        if name == "abs":
            kinds = [self.expr(arg.value) for arg in node.args]
            return kinds[0] if len(kinds) == 1 else UNKNOWN
        kinds = []
        for arg in node.args:
            kind = self.expr(arg.value)
            if kind not in PYTHON:
                self.static_cause(arg.value, f"the argument of `{name}()`")
                what = ("converts an array to a Python value on the host"
                        if name in HOST_CONVERSIONS else "needs Python values")
                self.refuse(node, f"`{code_of(node)}` {what}, which a tracer cannot do")
            kinds.append(kind)
        if name in ("list", "dict", "set", "sorted", "map", "filter", "zip", "enumerate",
                    "reversed"):
            return LIST
        return STATIC

    def user_call(self, node: cst.Call, name: str) -> str:
        function = self.m.functions[name]
        passed, problem = bind_arguments(node, function, [self.expr(a.value) for a in node.args])
        if self.record:
            self.calls.append(CallSite(name, node, passed, problem))
        if name not in self.m.compiled:
            self.refuse(node, f"it calls `{name}`, which is left uncompiled",
                        f"`{name}`'s own finding says why")
            return UNKNOWN
        if function.decorators:
            self.refuse_decorated(node, name, function)
        static = self.m.own_static.get(name, ())
        if static and problem is None:  # judged on its own body: its static arguments
            positional = [*function.params.posonly_params, *function.params.params]
            for index, arg in enumerate(node.args):
                param = (positional[index].name.value if arg.keyword is None
                         and index < len(positional) else arg.keyword.value if arg.keyword
                         else None)
                if param in static:
                    self.need_static(arg.value, f"the static argument `{param}` of `{name}`,")
        if self.record:  # traced inline: it must be compiled too (its rewrites applied)
            self.requires.append(function)
        if self.function is not None and name == self.function.name.value:
            self.refuse(node, "it calls itself")
        return ARRAY

    def print_call(self, node: cst.Call) -> None:
        """print(...) of arrays becomes jax.debug.print, which prints on every call."""
        kinds = []
        for arg in node.args:
            if arg.keyword is not None or arg.star:
                self.refuse(node, "it prints with keywords or `*args` (under jit a print "
                                  "runs once, while compiling)")
            literal = isinstance(arg.value, cst.SimpleString) and \
                arg.value.prefix.lower() in ("", "r")
            if literal and ("{" in arg.value.value or "}" in arg.value.value):
                # jax.debug.print does not format a text that opens with an escaped brace
                self.refuse(node, "it prints text with braces, which jax.debug.print reads "
                                  "as a format")
            kinds.append("text" if literal else self.expr(arg.value))
        if not any(k in MAY_BE_ARRAY for k in kinds) or \
                any(k not in MAY_BE_ARRAY and k != "text" for k in kinds):
            self.refuse(node, f"`{code_of(node)}` prints Python values (under jit a print "
                              "runs once, while compiling)",
                        "print them outside the function, or print arrays only (those "
                        "become jax.debug.print)")
        if self.record:
            self.rewrites.append(Rewrite(RewriteKind.DEBUG_PRINT, node, debug_print,
                                         code_of(node)))


def bind_arguments(call: cst.Call, function: cst.FunctionDef,
                   kinds: list) -> tuple[dict, str | None]:
    """Parameter -> class of the argument passed for it at this call."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    by_name = {p.name.value for p in parameters(function)}
    passed: dict = {}
    for index, (arg, kind) in enumerate(zip(call.args, kinds)):
        if arg.star:
            return passed, f"the call `{code_of(call)}` passes `{arg.star}` arguments"
        if arg.keyword is None:
            if index >= len(positional):
                return passed, f"the call `{code_of(call)}` passes too many arguments"
            passed[positional[index].name.value] = kind
        elif arg.keyword.value in by_name:
            passed[arg.keyword.value] = kind
        else:
            return passed, f"the call `{code_of(call)}` passes an unknown keyword"
    return passed, None
