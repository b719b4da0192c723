"""The expression classifier of the trace check: the class (np2jax.jit.lattice) of every
expression, refusing, in check mode, what jax.jit cannot trace (a mixin of
np2jax.jit.traceable.TraceChecker; calls: np2jax.jit.calls)."""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.facts import KEEP_STATIC
from np2jax.jit.checker import TraceCheckerBase
from np2jax.jit.gather import non_boolean_index
from np2jax.jit.lattice import (ARRAY, LIST, MAY_BE_ARRAY, PYTHON, STATIC, TRACER_SHAPE_QUESTIONS,
                                UNKNOWN, arith,
                                join)
from np2jax.jit.masks import selection_count, selection_in_where_write
from np2jax.syntax import code_of

# Attributes of an array, a tracer too, that are Python values while tracing.
TRACE_TIME_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes"})
ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})
# Builtin types read as values (dtypes): Python values known while compiling.
BUILTIN_TYPES = frozenset({"int", "float", "bool", "complex"})


class ExpressionChecks(TraceCheckerBase):
    """The class of each expression; names, attributes, subscripts, comprehensions."""

    def expr(self, node: cst.BaseExpression) -> str:
        ref = self.m.refs_by_node.get(node)
        if ref is not None:
            return self.api_value(node, ref)
        if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                             cst.ConcatenatedString, cst.Ellipsis)):
            return STATIC
        if isinstance(node, cst.FormattedString):
            for part in node.parts:
                if isinstance(part, cst.FormattedStringExpression):
                    self.need_static(part.expression, "the value formatted into a string")
            return STATIC
        if isinstance(node, cst.Name):
            return self.name(node)
        if isinstance(node, cst.Attribute):
            return self.attribute(node)
        if isinstance(node, cst.Call):
            return self.call(node)
        if isinstance(node, cst.Subscript):
            return self.subscript(node)
        if isinstance(node, cst.BinaryOperation):
            left, right = self.expr(node.left), self.expr(node.right)
            if isinstance(node.operator, cst.Modulo) and isinstance(
                    node.left, (cst.SimpleString, cst.FormattedString)) and right not in PYTHON:
                self.refuse(node, "it formats an array into a string")
            return arith(left, right)
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Not):
                return self.need_static(node.expression, "the operand of `not`")
            return self.expr(node.expression)
        if isinstance(node, cst.BooleanOperation):
            self.need_static(node.left, "the operand of `and`/`or`")
            self.need_static(node.right, "the operand of `and`/`or`")
            return STATIC
        if isinstance(node, cst.Comparison):
            kinds = [self.expr(node.left)] + [self.expr(c.comparator) for c in node.comparisons]
            identity = any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn))
                           for c in node.comparisons)
            if len(node.comparisons) == 1 and isinstance(
                    node.comparisons[0].operator, (cst.Is, cst.IsNot)) and any(
                    isinstance(side, cst.Name) and side.value == "None"
                    for side in (node.left, node.comparisons[0].comparator)):
                return STATIC  # `x is None`: an array (a tracer) never is, as in NumPy
            if identity and any(k not in PYTHON for k in kinds):
                self.static_cause(node, "the membership or identity test")
                self.refuse(node, f"`{code_of(node)}` asks Python about an array "
                                  "(`is`/`in`), which a tracer answers differently")
            if len(node.comparisons) > 1 and any(k not in PYTHON for k in kinds):
                self.static_cause(node, "the chained comparison")
                self.refuse(node, f"the chained comparison `{code_of(node)}` needs a Python bool")
            result = kinds[0]
            for kind in kinds[1:]:
                result = arith(result, kind)
            return STATIC if result == LIST else result
        if isinstance(node, cst.IfExp):
            self.need_static(node.test, "the test of the conditional expression")
            return join(self.expr(node.body), self.expr(node.orelse))
        if isinstance(node, cst.Tuple):
            kinds = [self.expr(e.value) for e in node.elements]
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                return UNKNOWN
            if all(k == STATIC for k in kinds):
                return STATIC
            return ARRAY if kinds and all(k in MAY_BE_ARRAY or k == STATIC for k in kinds) else UNKNOWN
        if isinstance(node, (cst.List, cst.Set)):
            kinds = [self.expr(e.value) for e in node.elements]
            if all(k in PYTHON for k in kinds):
                return LIST
            return UNKNOWN
        if isinstance(node, cst.Dict):
            for element in node.elements:
                if isinstance(element, cst.DictElement):
                    self.expr(element.key)
                    self.expr(element.value)
            return UNKNOWN
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            return self.comprehension(node)
        if isinstance(node, cst.Lambda):
            self.refuse(node, "it makes a lambda, whose calls the analysis does not follow")
            return UNKNOWN
        self.refuse(node, f"it uses `{code_of(node)}`, which the analysis does not follow",
                    "compute it outside the function and pass the result as an argument")
        return UNKNOWN

    def name(self, node: cst.Name) -> str:
        name = node.value
        if name in self.env or name in self.bound:
            return self.env.get(name)  # None: not known yet (settling) or unbound
        if name in ("True", "False", "None"):
            return STATIC
        if name in self.m.functions or name in self.m.jitted:
            return STATIC  # a function: hashable, usable as a static argument
        if name in self.m.analysis.dataflow.collector.jax_numpy_aliases \
                and "jax.numpy" in self.m.analysis.qualified_names(node):
            return STATIC  # jax.numpy itself (`jnp.float64`, `jnp.pi`): already JAX
        if name in self.m.globals:
            return self.m.globals[name]
        if name in self.m.changed_globals:
            self.refuse(node, f"it reads `{name}`, a global array changed in place or kept "
                              "elsewhere (jax.jit would keep its first value)",
                        f"pass `{name}` as an argument")
            return UNKNOWN
        if name in BUILTIN_TYPES and self.m.analysis.dataflow.name_bindings(node)[0] is None:
            return STATIC  # the builtin type, bound nowhere in the file (`.astype(int)`)
        self.refuse(node, f"it reads `{name}`, a global the analysis cannot follow",
                    f"pass `{name}` as an argument, or bind it once at module level to a "
                    "number, a string, a tuple or a NumPy array")
        return UNKNOWN

    def attribute(self, node: cst.Attribute) -> str:
        attr = node.attr.value
        if attr == "size" and selection_count(self, node):  # x[m].size: the mask's count
            return ARRAY
        base = self.expr(node.value)
        if base in MAY_BE_ARRAY:
            if attr in TRACE_TIME_ATTRIBUTES:
                return STATIC
            if attr in ARRAY_ATTRIBUTES:
                return base
            self.refuse(node, f"it reads `.{attr}` of an array")
            return UNKNOWN
        if base == STATIC:
            return STATIC
        return UNKNOWN

    def api_value(self, node: cst.BaseExpression, ref) -> str:
        if not ref.converted:
            if ref.qualname in TRACER_SHAPE_QUESTIONS:
                return STATIC  # NumPy's np.shape(x) reads a tracer's shape
            if ref.keep == KEEP_STATIC:
                return STATIC  # host arithmetic of Python values (api_call asks them static)
            self.refuse(node, f"`{code_of(node)}` stays on NumPy, which cannot take a tracer")
            return UNKNOWN
        if ref.qualname.startswith("numpy.random"):
            self.refuse(node, f"`{code_of(node)}` draws random numbers through a key the "
                              "conversion threads through globals")
            return UNKNOWN
        if self.record:
            self.requires.append(ref.node)
        return STATIC  # a function, a constant (np.pi) or a dtype

    def subscript(self, node: cst.Subscript) -> str:
        base = self.expr(node.value)
        if node.value in self.m.refs_by_node:  # np.mgrid[...], np.r_[...]: arrays
            self.index(node)
            return ARRAY
        if base in MAY_BE_ARRAY:
            if selection_in_where_write(self, node):  # x[m] = y[m] * 2: y, in jnp.where
                self.expr(node.slice[0].slice.value)
            else:
                self.index(node)
            return base
        for element in node.slice:
            piece = element.slice
            if base in PYTHON and not isinstance(piece, cst.Slice) \
                    and self.expr(piece.value) in MAY_BE_ARRAY:
                # `zs[i]` of a list (a list of tracers inside jax.jit) at a traced index
                self.refuse(piece, f"it indexes `{code_of(node.value)}`, a Python "
                                   f"{'list' if base == LIST else 'value'}, with "
                                   f"`{code_of(piece.value)}`, an array while compiling")
            self.index_element(element, need=False)
        return STATIC if base == STATIC else UNKNOWN

    def index(self, node: cst.Subscript) -> None:
        for element in node.slice:
            self.index_element(element, need=True)

    def index_element(self, element: cst.SubscriptElement, need: bool) -> None:
        piece = element.slice
        if isinstance(piece, cst.Slice):
            for part in (piece.lower, piece.upper, piece.step):
                if part is not None:
                    (self.need_static(part, "the slice bound") if need else self.expr(part))
        elif need and self.counter is not None and isinstance(piece.value, cst.Name) \
                and piece.value.value == self.counter:
            return  # the fori_loop counter: a 0-d integer, a dynamic index
        elif need:
            kind = self.expr(piece.value)
            if kind in MAY_BE_ARRAY and non_boolean_index(self, piece.value):
                return  # an integer-array index: a gather of a static shape (np2jax.jit.gather)
            if kind not in PYTHON or kind == LIST:
                self.static_cause(piece.value, "the index")
                self.refuse(piece, f"the index `{code_of(piece.value)}` is " + (
                    "not a Python integer or slice" if kind not in MAY_BE_ARRAY
                    else "a boolean mask, and the selection is kept (its shape depends on the "
                         "values; only reductions and counts of it are rewritten)"
                    if self.m.analysis.dataflow.is_mask(piece.value)
                    else "an array not provably of integers (a boolean array would select a "
                         "number of elements that depends on the values)"))
        else:
            self.expr(piece.value)

    def comprehension(self, node) -> str:
        saved = dict(self.env)
        clause = node.for_in
        while clause is not None:
            if isinstance(clause.iter, cst.Call) and self.is_builtin(clause.iter.func, "range"):
                for arg in clause.iter.args:
                    self.need_static(arg.value, "the range bound")
                kind = STATIC
            else:
                kind = self.expr(clause.iter)
                if kind not in (ARRAY, STATIC, LIST):
                    self.refuse(clause.iter, f"the comprehension runs over `{code_of(clause.iter)}`")
                kind = {LIST: UNKNOWN}.get(kind, kind)
            self._comp_bind(clause.target, kind)
            for condition in clause.ifs:
                self.need_static(condition.test, "the comprehension's `if`")
            clause = clause.inner_for_in
        if isinstance(node, cst.DictComp):
            self.expr(node.key)
            element = self.expr(node.value)
        else:
            element = self.expr(node.elt)
        self.env = saved
        if isinstance(node, cst.GeneratorExp):
            return UNKNOWN
        if element in PYTHON and not isinstance(node, cst.DictComp):
            return LIST
        return UNKNOWN

    def _comp_bind(self, target, kind) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = kind
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._comp_bind(element.value, kind)
        else:
            self.refuse(target, "the comprehension target is not a plain name")
