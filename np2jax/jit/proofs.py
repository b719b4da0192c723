"""What the --jit analysis proves about the shape and dtype of a value: that a test or a
value is one number (0-d), and that two expressions have the shape and dtype of the same
array (`like`). Each proof reads the checker (np2jax.jit.traceable.TraceChecker) it is
given: its classes of names (`env`), the module's references (`m`), its loop counter, and
its `expr` where an operand's class decides."""

from __future__ import annotations

import libcst as cst

from np2jax.jit.lattice import ARRAY, STATIC

# Elementwise float functions: on an array of any dtype they give the float dtype JAX
# promotes it to (the same for every such function).
FLOAT_UFUNCS = frozenset({"sin", "cos", "tan", "exp", "log", "log1p", "expm1", "sqrt",
                          "tanh", "sinh", "cosh", "arctan", "log2", "log10"})
# Reductions of a whole array to a 0-d array of its dtype (mean, std, var: a float dtype).
FULL_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "prod", "std", "var", "any", "all"})
FLOAT_REDUCTIONS = frozenset({"mean", "std", "var"})
# Reductions that give one number (0-d) when called without arguments.
ONE_NUMBER_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "prod", "std", "var", "any",
                                   "all", "ptp", "argmax", "argmin"})


def full_reduction(checker, call: cst.Call) -> tuple | None:
    """(array name, reduction) for `x.sum()` / `np.sum(x)` with no other argument: 0-d."""
    if isinstance(call.func, cst.Attribute) and call.func.value not in checker.m.refs_by_node:
        if call.args or call.func.attr.value not in FULL_REDUCTIONS:
            return None
        array = call.func.value
        name = call.func.attr.value
    else:
        ref = checker.m.refs_by_call.get(call)
        if ref is None or not ref.converted or len(call.args) != 1 or call.args[0].keyword \
                or call.args[0].star:
            return None
        name = ref.qualname.rsplit(".", 1)[-1]
        if ref.qualname not in {f"numpy.{n}" for n in FULL_REDUCTIONS}:
            return None
        array = call.args[0].value
    if isinstance(array, cst.Name) and checker.env.get(array.value) == ARRAY:
        return array.value, name
    return None


def like(checker, node: cst.BaseExpression) -> tuple | None:
    """(array name, "same") for the array itself, (array name, "float") for an elementwise
    float expression of it (float literals, `/`, float functions, its mean/std): such
    expressions all have the array's shape and the same dtype. None: not proven."""
    if isinstance(node, cst.Name):
        return (node.value, "same") if checker.env.get(node.value) == ARRAY else None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = like(checker, node.expression)
        return inner if inner is not None and inner[1] == "float" else None
    if isinstance(node, cst.Call):
        ref = checker.m.refs_by_call.get(node)
        if ref is not None and ref.converted and len(node.args) == 1 and not node.args[0].keyword \
                and ref.qualname.rsplit(".", 1)[-1] in FLOAT_UFUNCS \
                and ref.qualname.startswith("numpy."):
            inner = like(checker, node.args[0].value)
            return (inner[0], "float") if inner is not None else None
        return None
    if not isinstance(node, cst.BinaryOperation) or not isinstance(
            node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
        return None
    left, right = like(checker, node.left), like(checker, node.right)
    if left is not None and right is not None:
        return (left[0], "float") if left[0] == right[0] and "float" in (left[1], right[1]) \
            or (left[0] == right[0] and isinstance(node.operator, cst.Divide)) else None
    array, other = (left, node.right) if left is not None else (right, node.left)
    if array is None:
        return None
    if isinstance(other, cst.UnaryOperation) and isinstance(other.operator, cst.Minus):
        other = other.expression
    if isinstance(other, cst.Float):
        return array[0], "float"
    if isinstance(other, cst.Integer) and isinstance(node.operator, cst.Divide) and left is not None:
        return array[0], "float"
    if isinstance(other, cst.Call):
        reduced = full_reduction(checker, other)
        if reduced is not None and reduced[0] == array[0] and (
                reduced[1] in FLOAT_REDUCTIONS or isinstance(node.operator, cst.Divide)):
            return array[0], "float"
    return None


def scalar_test(checker, test: cst.BaseExpression) -> bool:
    """Whether the `if` test is provably 0-d: a comparison of full reductions and numbers."""
    if isinstance(test, cst.Comparison):
        if len(test.comparisons) != 1 or isinstance(
                test.comparisons[0].operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
            return False
        return all(scalar_operand(checker, o)
                   for o in (test.left, test.comparisons[0].comparator))
    return isinstance(test, cst.Call) and full_reduction(checker, test) is not None \
        and full_reduction(checker, test)[1] in ("any", "all")


def scalar_operand(checker, node: cst.BaseExpression) -> bool:
    """A number, a static name (a threshold passed in) or a full reduction."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if checker.expr(node) == STATIC and not isinstance(node, (cst.Tuple, cst.List)):
        return isinstance(node, cst.Name)  # a static number passed in (a threshold)
    return isinstance(node, cst.Call) and full_reduction(checker, node) is not None


def zero_d_test(checker, test) -> bool:
    """Whether an exit test is provably one value: a comparison of the counter, numbers,
    Python values and full reductions (`x.sum()`), or `x.any()`/`x.all()`."""
    if scalar_test(checker, test):
        return True
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or isinstance(
            test.comparisons[0].operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
        return False
    return all(_scalar(checker, o) for o in (test.left, test.comparisons[0].comparator))


def _scalar(checker, node) -> bool:
    if isinstance(node, cst.Name) and node.value == checker.counter:
        return True
    if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.MatrixMultiply):
        return _scalar(checker, node.left) and _scalar(checker, node.right)
    if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
        return _scalar(checker, node.expression)
    return scalar_operand(checker, node) or zero_d(node, checker.m.refs_by_call)


def zero_d(value, refs_by_call: dict) -> bool:
    """Whether `value` is provably one number (a full reduction, arithmetic of such)."""
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.UnaryOperation):
        return zero_d(value.expression, refs_by_call)
    if isinstance(value, cst.BinaryOperation):
        return zero_d(value.left, refs_by_call) and zero_d(value.right, refs_by_call)
    if isinstance(value, cst.Call):
        ref = refs_by_call.get(value)
        if ref is not None:
            return ref.converted and ref.qualname.rsplit(".", 1)[-1] in ONE_NUMBER_REDUCTIONS \
                and len(value.args) == 1 and value.args[0].keyword is None
        return isinstance(value.func, cst.Attribute) and not value.args \
            and value.func.attr.value in ONE_NUMBER_REDUCTIONS
    return False
