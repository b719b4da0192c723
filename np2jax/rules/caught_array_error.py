"""NJ418 caught-array-error.

Array code inside a try whose except catches what NumPy raises for bad shapes or values
(ValueError, LinAlgError, FloatingPointError, a RuntimeWarning made an error, or
everything): JAX raises another exception or none, so the handler would not run
as it does.
"""

from __future__ import annotations

import libcst as cst

from np2jax.analysis.kept import enclosing_function, entry_parameters, has_prologue
from np2jax.rules.base import Rule
from np2jax.syntax import code_of, handler_names
from np2jax.syntax.walk import OwnScopeVisitor

# What an `except` names to catch an error NumPy raises for an array's shape or values:
# ValueError (shapes that do not broadcast, reshape, concatenate, matmul, np.bincount of a
# negative count, a percentile past 100; AxisError derives from it), LinAlgError (a
# singular matrix), FloatingPointError under np.errstate(...="raise"), and the
# RuntimeWarning NumPy emits for invalid values where warnings are errors. IndexError and
# OverflowError are NJ404's and NJ410's; TypeError, which NumPy and JAX both raise for
# values that are not arrays, and ZeroDivisionError, which only Python's numbers raise, are
# left alone.
CATCHES_ARRAY_ERRORS = frozenset({
    "ValueError", "AxisError", "LinAlgError", "FloatingPointError", "ArithmeticError",
    "RuntimeWarning", "Warning", "Exception", "BaseException"})


def catches_array_errors(handler: cst.ExceptHandler) -> bool:
    """A handler for what NumPy raises for shapes and values (a bare `except:` too) that
    does more than raise it again (`except: print(x); raise` changes nothing)."""
    names = handler_names(handler)
    if names and not CATCHES_ARRAY_ERRORS.intersection(names):
        return False
    body = handler.body.body if isinstance(handler.body, cst.IndentedBlock) else ()
    last = body[-1] if body else None
    reraises = isinstance(last, cst.SimpleStatementLine) and any(
        isinstance(s, cst.Raise) and s.exc is None for s in last.body)
    return not reraises


class CaughtArrayError(Rule):
    code = "NJ418"

    def run(self):
        """In the body of a `try` one of whose handlers catches an error NumPy raises for
        shapes or values (catches_array_errors), the first computation JAX makes once
        converted: a NumPy call converted to JAX given more than constants, an operator on
        a JAX array or a method of one (the finding stands only if those conversions
        happen). A function or method of the module called there runs inside the `try` too:
        its own first computation is reported (keeping that function on NumPy), and so on
        through the functions it calls (_called).
        Functions defined inside the body run elsewhere and are not searched. In a function
        an earlier conversion kept on NumPy (its prologue), the first computation stands
        for the JAX arrays its callers pass."""
        parents = self.analysis.parents
        reported: set = set()
        for statement in self.analysis.nodes(cst.Try):
            caught = [h for h in statement.handlers if catches_array_errors(h)]
            if not caught:
                continue
            function = enclosing_function(statement, parents)
            caller = f"`{function.name.value}`" if function is not None else "the module"
            yield from self._first_computation(statement.body, function, "inside a `try`",
                                               caught)
            for callee in self._called(statement.body, function):
                if callee in reported:
                    continue
                reported.add(callee)
                where = f"in `{callee.name.value}`, which {caller} calls inside a `try`"
                yield from self._first_computation(callee.body, callee, where, caught)

    def _first_computation(self, body, function, where: str, caught: list):
        """The report of the first computation JAX makes in `body` (of `function`, or of
        the module when None)."""
        flow, parents = self.analysis.dataflow, self.analysis.parents
        # kept on NumPy by an earlier conversion (its output converted again): its entry
        # reads the JAX arrays its converted callers pass as NumPy's
        kept_before = function is not None and bool(entry_parameters(function, parents)) \
            and has_prologue(function, parents)
        for node, operands, ref in self._computations(body):
            if kept_before:
                requires = ()
            elif ref is not None:  # JAX's function runs, whatever it is given
                if all(_constant(o) for o in operands):
                    continue
                requires = (ref.node,)
            elif any(flow.jax_typed(o) for o in operands):
                requires = tuple(r for o in operands for r in flow.jax_refs(o))
            else:
                continue
            yield self.report(node, requires=requires, code=_shown(node), where=where,
                              caught=_caught(caught))
            return

    def _called(self, body: cst.CSTNode, caller) -> list:
        """The functions and methods of the module (values.module_function, module_method)
        a call in `body` runs, and those their bodies call, a few calls deep: each raises
        inside the `try` as if written there. Recursion into `caller` is not followed."""
        flow = self.analysis.dataflow
        found: list = []
        pending = [body]
        for _ in range(_CALL_DEPTH):
            calls = [c for b in pending for c in _calls(b)]
            pending = []
            for call in calls:
                callee = flow.module_function(call) or flow.module_method(call)
                if callee is None or callee is caller or callee in found:
                    continue
                found.append(callee)
                pending.append(callee.body)
        return found

    def _computations(self, body: cst.CSTNode) -> list:
        """(computation, what it computes on, its NumPy reference or None) in `body`,
        outermost first, outside nested functions, classes and lambdas: an operator (its
        operands), a NumPy call converted to JAX (its arguments: JAX's function runs on
        whatever it is given, NumPy's arrays too; `np.ones(3)`, given constants only, raises
        nothing) and a method of an array (its object: `a.reshape(3, 3)`). An index is
        NJ404's; a call of a function of the module is followed by run (_called)."""
        found = []
        analysis = self.analysis

        class Computations(OwnScopeVisitor):
            def visit_BinaryOperation(self, node):
                found.append((node, [node.left, node.right], None))

            def visit_Call(self, node):
                arguments = [e.value if isinstance(e, cst.Element) else e
                             for a in node.args for e in (
                                 a.value.elements if isinstance(a.value, (cst.List, cst.Tuple))
                                 else [a.value])]  # np.vstack([a, b]): its rows
                ref = analysis.ref_of_call(node)
                if ref is not None:
                    if ref.converted:
                        found.append((node, arguments, ref))
                elif isinstance(node.func, cst.Attribute):
                    found.append((node, [node.func.value], None))  # a method of its object

        body.visit(Computations())
        return found


_CALL_DEPTH = 3  # calls followed from a `try`: its helpers, theirs, and theirs


def _calls(body: cst.CSTNode) -> list:
    """The calls in `body`, outside nested functions, classes and lambdas."""
    found = []

    class Calls(OwnScopeVisitor):
        def visit_Call(self, node):
            found.append(node)

    body.visit(Calls())
    return found


def _constant(node) -> bool:
    """A literal number, string, True/False/None, or a tuple or list of those (`np.ones(3)`,
    `np.zeros((2, 2))`)."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation):
        return _constant(node.expression)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(_constant(e.value) for e in node.elements)
    return False


def _caught(handlers: list) -> str:
    names = [n for h in handlers for n in handler_names(h)]
    if any(not handler_names(h) for h in handlers) or "BaseException" in names:
        return "everything"
    shown = list(dict.fromkeys(names))
    return ", ".join(shown[:-1]) + " or " + shown[-1] if len(shown) > 1 else shown[0]


def _shown(node: cst.CSTNode) -> str:
    text = " ".join(code_of(node).split())
    return text if len(text) <= 60 else text[:57] + "..."
