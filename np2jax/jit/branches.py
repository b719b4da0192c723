"""`if` on a 0-d array value inside a compiled function: jnp.where, jax.lax.cond or
jax.lax.switch, when the branches provably leave values of the same shape and dtype.

A one-statement if/else (`if c: return a / else: return b`, or one assignment to the same
name in each branch) becomes jnp.where (where_if). The rest, branches of several
statements, an `if` without `else`, and `if/elif` chains, go to array_branches. Each branch
becomes a local function taking the names the branches rebind that exist before the `if`
(the operands) and returning the names read after it (the outputs), or what the branch
returns when every branch ends in `return`:

    def if_true(y):             def if_false(y):
        <body>                      <else body>
        return y, z                 return y, z
    y, z = jax.lax.cond(test, if_true, if_false, y)

Under jit both branches are traced and their outputs must agree in shape and dtype; that is
proven here from the NumPy source (the proof of where_if, np2jax.jit.proofs.like, followed
through the branch's assignments), else the function stays eager with the reason. Both
functions take the checker (np2jax.jit.traceable.TraceChecker) and record the rewrite in it
(the code it writes: np2jax.jit.rewrites).
"""

from __future__ import annotations

import libcst as cst

from np2jax.jit.lattice import ARRAY, LIST, MAY_BE_ARRAY, MIXED, STATIC
from np2jax.jit.names import collect_names, loop_stores, names_mentioned
from np2jax.jit.patterns import Chain, if_else_values
from np2jax.jit.proofs import like, scalar_operand, scalar_test
from np2jax.jit.rewrites import BranchFix, where_statement
from np2jax.jit.verdicts import Rewrite, RewriteKind
from np2jax.syntax import code_of
from np2jax.syntax.walk import children, walk

# 0-d integer results: the full argmax/argmin, the count of a comparison.
_INDEX_FUNCTIONS = frozenset({"argmax", "argmin"})
_COUNT_FUNCTIONS = frozenset({"sum", "count_nonzero"})


def where_if(checker, node: cst.If) -> bool:
    """`if c: return a / else: return b` (or one assignment to the same name in each
    branch) on a 0-d array `c`: becomes jnp.where(c, a, b) when a and b provably have
    the same shape and dtype (the same array, or float expressions of it)."""
    if checker.expr(node.test) not in MAY_BE_ARRAY:
        return False
    branches = if_else_values(node)
    if branches is None or not scalar_test(checker, node.test):
        return False
    kind, target, first, second = branches
    likes = [like(checker, v) for v in (first, second)]
    if likes[0] is None or likes[0] != likes[1]:
        return False
    if checker.record:
        fix = where_statement(kind, target, checker.m.analysis.jnp_alias)
        checker.rewrites.append(Rewrite(RewriteKind.WHERE_IF, node, fix,
                                        f"if {code_of(node.test)}: ..."))
    return True


def array_branches(checker, node: cst.If) -> bool:
    """The hook of TraceChecker.statement for an `if` where_if did not take: False when its
    test is a Python value (the caller handles it); else the chain is judged (a rewrite
    recorded, or the function refused with the reason) and walked, and True."""
    if checker.expr(node.test) not in MAY_BE_ARRAY:
        return False
    chain = Chain.of(node)
    if checker.check and checker.record and checker.function is not None:
        verdict = _judge(checker, node, chain)
        if isinstance(verdict, str):
            checker.refuse(node.test, f"the `if` test `{code_of(node.test)}` is an array, and the "
                                      f"`if` cannot become lax.cond or lax.switch: {verdict}")
        else:
            checker.rewrites.append(Rewrite(verdict.kind, node, verdict, verdict.spelled))
            checker.requires.append(node)  # without it the function does not compile
    for test in chain.tests[1:]:
        checker.expr(test)
    for block in chain.blocks:
        checker.block(block)
    return True


# --- the verdict ------------------------------------------------------------------------


def _judge(checker, node: cst.If, chain: Chain):
    """A BranchFix, or why the chain cannot become lax.cond / lax.switch."""
    parent = checker.m.analysis.parents.get(node)
    if isinstance(parent, cst.If):
        return "it is an `elif` of a test on a Python value (the chain would mix Python and traced tests)"
    for test in chain.tests:
        if checker.expr(test) not in MAY_BE_ARRAY:
            return (f"the chain mixes tests on arrays and on Python values (`{code_of(test)}`)")
    for block in chain.blocks:
        effect = _side_effect(block)
        if effect:
            return f"a branch {effect}, which lax.cond cannot express"
    selector, literals = _switch_selector(checker, chain)
    for test in chain.tests:
        if selector is None and not _scalar_test(checker, test):
            return (f"the test `{code_of(test)}` is not provably one value (a comparison of full "
                    "reductions such as `x.sum()`, numbers and static values, `x.any()`/"
                    "`x.all()`, or of a 0-d integer such as `x.argmax()` with an integer)")
    ends = [_ends_in_return(block) for block in chain.blocks]
    returns = all(ends) and chain.orelse is not None
    if all(ends) and chain.orelse is None:
        return ("it returns and has no `else` (the code after it is the other branch: under "
                "`else:` it could become lax.cond)")
    if any(ends) and not returns:
        return ("only some branches end in `return` (under jit every branch must give the same "
                "kind of result)")
    for block in chain.blocks:
        inner = _inner_return(block)
        if inner:
            return f"a branch returns from inside a nested statement (`{inner}`)"
    stores = [loop_stores(block) for block in chain.blocks]
    assigned = [name for s in stores for name in s]
    assigned = list(dict.fromkeys(assigned))
    before = _bound_before(checker, node)
    operands = [name for name in assigned if name in before]
    for name in operands:
        kind = checker.env.get(name)
        if kind != ARRAY:
            what = {STATIC: "a Python value", LIST: "a Python list", MIXED:
                    "sometimes a Python value"}.get(kind, "a value the analysis cannot classify")
            return (f"a branch rebinds `{name}`, {what} (lax.cond passes and returns arrays "
                    "only)")
    for name in assigned:
        if name in operands:
            continue
        for block, stored in zip(chain.blocks, stores):
            if name in stored and stored[name] != {"loop"} and not _bound_first(block, name):
                return (f"a branch reads `{name}` before assigning it, and `{name}` is not "
                        "certainly bound before the `if` (it could not be passed in)")
    outputs: list = []
    if returns:
        why = _same_returns(checker, chain, node)
        if why:
            return why
    else:
        after = _read_after(checker, node)
        outputs = [name for name in assigned if name in after]
        if not outputs:
            return "it changes nothing that is read after it"
        why = _same_outputs(checker, chain, stores, outputs, before, node)
        if why:
            return why
    if selector is not None:
        names = [_fresh(checker, f"case_{i}") for i in range(len(chain.tests) + 1)]
        spelled = f"if {code_of(chain.tests[0])}: ... elif ..."
        return BranchFix(RewriteKind.SWITCH, spelled, tuple(outputs), tuple(operands), returns,
                         names, selector, literals, checker.m.analysis.jnp_alias)
    names = [_fresh(checker, base) for _ in chain.tests for base in ("if_true", "if_false")]
    spelled = f"if {code_of(chain.tests[0])}: ..." + (" elif ..." if len(chain.tests) > 1 else "")
    return BranchFix(RewriteKind.COND, spelled, tuple(outputs), tuple(operands), returns, names,
                     None, (), checker.m.analysis.jnp_alias)


def _side_effect(block) -> str:
    """What in a branch a compiled lax.cond branch cannot do (other effects, such as calls
    for their effect, are refused by the checker itself)."""
    for node, inside_loop in _nodes(block, False):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) \
                and node.func.value == "print":
            return "prints (both branches are traced: a print would show for the branch not taken)"
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            return "writes global state"
        if isinstance(node, cst.Raise):
            return "raises an exception"
        if isinstance(node, cst.Del):
            return "deletes a name"
        if isinstance(node, (cst.Yield, cst.Await)):
            return "yields"
        if isinstance(node, (cst.Break, cst.Continue)) and not inside_loop:
            return f"leaves the enclosing loop (`{type(node).__name__.lower()}`)"
    return ""


def _nodes(node, inside_loop: bool):
    yield node, inside_loop
    for child in children(node):
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        yield from _nodes(child, inside_loop or isinstance(node, (cst.For, cst.While)))


def _ends_in_return(block) -> bool:
    last = _statements(block)[-1]
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)


def _inner_return(block) -> str:
    """A `return` other than the block's last statement (nested in a loop or an `if`)."""
    statements = _statements(block)
    for index, statement in enumerate(statements):
        for node, _ in _nodes(statement, False):
            if isinstance(node, cst.Return) and not (
                    index == len(statements) - 1 and isinstance(statement, cst.SimpleStatementLine)
                    and node is statement.body[-1]):
                return code_of(node).strip()
    return ""


def _bound_first(block, name: str) -> bool:
    """Whether the branch binds `name` by a plain assignment (`name = ...`, `name, b = ...`)
    at its top level before anything reads it: then it is a local of the branch function."""
    for statement in _statements(block):
        smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement]
        for small in smalls:
            if isinstance(small, cst.Assign) and name not in names_mentioned(small.value):
                targets: set = set()
                for target in small.targets:
                    collect_names(target.target, targets)
                if name in targets:
                    return True
            if name in names_mentioned(small):
                return False
    return False


def _statements(block) -> list:
    if isinstance(block, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(block.body)] if block.body else []
    return list(block.body)


def _scalar_test(checker, test) -> bool:
    """Provably 0-d: what where_if accepts, or a comparison of a 0-d integer with a number."""
    if scalar_test(checker, test):
        return True
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or isinstance(
            test.comparisons[0].operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
        return False
    operands = (test.left, test.comparisons[0].comparator)
    return all(scalar_operand(checker, o) or _integer_0d(checker, o) for o in operands)


def _integer_0d(checker, node) -> bool:
    """A 0-d integer array: `x.argmax()`, `np.argmin(x)`, `(x > 0).sum()`,
    `np.count_nonzero(x > 0)`, or a name bound once in the function to one of those."""
    if isinstance(node, cst.Name):
        value = _single_binding(checker, node.value)
        return value is not None and not isinstance(value, cst.Name) and _integer_0d(checker, value)
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    ref = checker.m.refs_by_call.get(node)
    if ref is not None:
        short = ref.qualname.rsplit(".", 1)[-1]
        if not ref.converted or len(node.args) != 1 or node.args[0].keyword or node.args[0].star:
            return False
        argument = node.args[0].value
        if short in _INDEX_FUNCTIONS:
            return checker.expr(argument) in MAY_BE_ARRAY
        return short in _COUNT_FUNCTIONS and _comparison(argument)
    if isinstance(func, cst.Attribute) and not node.args:
        receiver = func.value
        if func.attr.value in _INDEX_FUNCTIONS:
            return checker.expr(receiver) in MAY_BE_ARRAY
        return func.attr.value == "sum" and _comparison(receiver)
    return False


def _comparison(node) -> bool:
    """An elementwise comparison (a boolean array: its sum counts, an integer)."""
    return isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and isinstance(
        node.comparisons[0].operator, (cst.LessThan, cst.GreaterThan, cst.LessThanEqual,
                                       cst.GreaterThanEqual, cst.Equal, cst.NotEqual))


def _single_binding(checker, name: str):
    """The value of the only binding of `name` in the function (`name = value`), if any."""
    found = []
    for node in walk(checker.function.body):
        if isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            names: set = set()
            collect_names(node.target, names)
            if name in names:
                return None
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                names = set()
                collect_names(target.target, names)
                if name in names:
                    if not isinstance(target.target, cst.Name) or len(node.targets) != 1:
                        return None
                    found.append(node.value)
    if name in checker.params:
        return None
    return found[0] if len(found) == 1 else None


def _switch_selector(checker, chain: Chain) -> tuple:
    """(`k`, the literal of each test) when the tests are `k == 0`, `k == 1`, ... (in any
    order, each once, at least two) on a 0-d integer `k`: lax.switch picks the branch by
    index. (None, ()) otherwise."""
    if len(chain.tests) < 2:
        return None, ()
    selector, literals = None, []
    for test in chain.tests:
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 \
                or not isinstance(test.comparisons[0].operator, cst.Equal):
            return None, ()
        left, right = test.left, test.comparisons[0].comparator
        if isinstance(left, cst.Integer) and isinstance(right, cst.Name):
            left, right = right, left
        if not (isinstance(left, cst.Name) and isinstance(right, cst.Integer)) \
                or selector not in (None, left.value):
            return None, ()
        selector = left.value
        literals.append(int(right.evaluated_value))
    if sorted(literals) != list(range(len(literals))) or not _integer_0d(checker, cst.Name(selector)):
        return None, ()
    return selector, tuple(literals)


# --- which names flow where ------------------------------------------------------------


def _climb(checker, node):
    """(statement, the block holding it) from `node` up to the function body, and each
    enclosing loop."""
    parents = checker.m.analysis.parents
    child, parent = node, parents.get(node)
    while parent is not None and child is not checker.function:
        yield child, parent
        child, parent = parent, parents.get(parent)


def _read_after(checker, node) -> set:
    """Names the code after the `if` may read (over-approximated: every name mentioned after
    it, and everywhere in an enclosing loop, which runs again)."""
    names: set = set()
    for child, parent in _climb(checker, node):
        if isinstance(parent, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            body = list(parent.body)
            index = next(i for i, s in enumerate(body) if s is child)
            names |= names_mentioned(body[index + 1:])
        elif isinstance(parent, (cst.For, cst.While)):
            names |= names_mentioned(parent)
    return names


def _bound_before(checker, node) -> set:
    """Names certainly bound when the `if` runs: the parameters, and the targets of plain
    assignments before it in the blocks around it."""
    names = set(checker.params)
    for child, parent in _climb(checker, node):
        if not isinstance(parent, cst.IndentedBlock):
            continue
        for statement in parent.body:
            if statement is child:
                break
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        collect_names(target.target, names)
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    collect_names(small.target, names)
    return names


# --- same shape and dtype in every branch ----------------------------------------------


def _resolve(proof, mapping: dict):
    """A proof of np2jax.jit.proofs.like ((array name, "same" or "float")) in terms of the
    values the names had before the branch: a name the branch rebinds stands for its own
    proof."""
    if proof is None:
        return None
    base, kind = proof
    if base not in mapping:
        return proof
    outer = mapping[base]
    if outer is None:
        return None
    return outer[0], "float" if "float" in (kind, outer[1]) else "same"


def _branch_mapping(checker, block) -> dict:
    """name -> proof of its shape and dtype after the branch (None: not proven), for every
    name the branch rebinds."""
    mapping: dict = {}
    for statement in _statements(block):
        if not isinstance(statement, cst.SimpleStatementLine):
            for name in loop_stores(statement):
                mapping[name] = None
            continue
        for small in statement.body:
            if isinstance(small, (cst.Assign, cst.AnnAssign)):
                targets = [x.target for x in small.targets] if isinstance(small, cst.Assign) \
                    else [small.target]
                value = small.value
                for target in targets:
                    if isinstance(target, cst.Name) and value is not None:
                        mapping[target.value] = _resolve(like(checker, value), mapping)
                    elif _pairs(target, value):
                        # `a, b = b, a`: every value is read before any name is bound
                        proofs = [(n.value, _resolve(like(checker, v), mapping))
                                  for n, v in _pairs(target, value)]
                        mapping.update(proofs)
                    elif isinstance(target, cst.Subscript):
                        continue  # `x[i] = v` keeps x's shape and dtype (NumPy casts v)
                    else:
                        for name in loop_stores(cst.SimpleStatementLine([small])):
                            mapping[name] = None
            elif isinstance(small, cst.AugAssign):
                target = small.target
                if isinstance(target, cst.Name):
                    operator = type(small.operator).__name__.replace("Assign", "")
                    update = cst.BinaryOperation(cst.Name(target.value), getattr(cst, operator)(),
                                                 small.value) if hasattr(cst, operator) else None
                    mapping[target.value] = None if update is None else _resolve(
                        like(checker, update), mapping)
    return mapping


def _reaching_value(checker, node, name: str):
    """The value of the plain `name = value` that certainly reaches `node` (the last store to
    `name` before it in the blocks around it, with no loop around both storing it again);
    None when there is no such assignment."""
    for child, parent in _climb(checker, node):
        if isinstance(parent, (cst.For, cst.While)) and name in loop_stores(parent.body):
            return None
        if not isinstance(parent, cst.IndentedBlock):
            continue
        body = list(parent.body)
        for statement in reversed(body[:next(i for i, s in enumerate(body) if s is child)]):
            if name not in loop_stores(statement):
                continue
            small = statement.body[-1] if isinstance(statement, cst.SimpleStatementLine) else None
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                    small.targets[0].target, cst.Name) and len(statement.body) == 1:
                return small.value
            return None
    return None


def _settle_floats(checker, node, proofs: list) -> list:
    """A float expression of an array that already holds floats has its dtype: ("x", "float")
    is ("x", "same") when the value `x` has at the `if` was itself made by a float expression
    (`x = x * 1.0`)."""
    settled = []
    for proof in proofs:
        if proof is not None and proof[1] == "float":
            value = _reaching_value(checker, node, proof[0])
            made = like(checker, value) if value is not None else None
            if made is not None and made[1] == "float":
                proof = (proof[0], "same")
        settled.append(proof)
    return settled


def _pairs(target, value) -> list:
    """[(name, value)] for `a, b = x, y` (plain names and as many values, no starred one)."""
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))
            and len(target.elements) == len(value.elements)):
        return []
    if any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
        return []
    pairs = [(e.value, v.value) for e, v in zip(target.elements, value.elements)]
    return pairs if all(isinstance(name, cst.Name) for name, _ in pairs) else []


def _same_outputs(checker, chain: Chain, stores: list, outputs: list, before: set,
                  node) -> str:
    mappings = [_branch_mapping(checker, block) for block in chain.blocks]
    if chain.orelse is None:
        mappings.append({})  # the implicit `else`: every name passes through unchanged
        stores = stores + [{}]
    for name in outputs:
        proofs = []
        for mapping, stored in zip(mappings, stores):
            if name in stored:
                proofs.append(mapping.get(name, (name, "same")))
            elif name in before:
                if checker.env.get(name) != ARRAY:
                    return f"`{name}` is not always an array"
                proofs.append((name, "same"))
            else:
                return (f"`{name}` is read after it but bound in only some branches, and not "
                        "before it")
        proofs = _settle_floats(checker, node, proofs)
        if proofs[0] is None or any(p != proofs[0] for p in proofs):
            return (f"the branches may leave `{name}` with different shapes or dtypes (proven "
                    "only for the same array, or float expressions of the same array)")
    return ""


def _same_returns(checker, chain: Chain, node) -> str:
    proofs = []
    for block in chain.blocks:
        mapping = _branch_mapping(checker, block)
        value = _statements(block)[-1].body[-1].value
        if value is None:
            return "a branch returns None"
        values = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
        if any(isinstance(v, cst.StarredElement) for v in values):
            return "a branch returns a starred tuple"
        proofs.append(_settle_floats(checker, node, [_resolve(like(checker, v), mapping)
                                                     for v in values]))
    first = proofs[0]
    if any(p is None for p in first) or any(p != first for p in proofs):
        return ("the branches may return values of different shapes or dtypes (proven only "
                "for the same array, or float expressions of the same array)")
    return ""


def _fresh(checker, base: str) -> str:
    taken = checker.branch_names
    name, number = checker.fresh_name(base), 1
    while name in taken:
        number += 1
        name = checker.fresh_name(f"{base}_{number}")
    taken.add(name)
    return name
