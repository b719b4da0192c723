"""What every rule is: the Rule base class, the Report it yields, and the discovery of
the rules (one module of np2jax.rules per catalog entry, one Rule class in it).

A rule reads the facts of `np2jax.analysis` and reports; it never edits the tree. A report
may carry a fix (a function from the node, as rewritten so far, to its replacement) that
the engine applies when converting. Messages and docs come from the catalog (rules/).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Callable, ClassVar, Iterable

import libcst as cst

from np2jax.analysis import ModuleAnalysis
from np2jax.catalog import CatalogError, RuleDoc, rule_codes, rule_doc, rule_name
from np2jax.config import Config
from np2jax.syntax.walk import names_in

Fix = Callable[[cst.CSTNode], cst.CSTNode]
DEPENDENCY_DROPPED = ("left as it was, because a conversion it depends on is suppressed or "
                      "not selected")


@dataclass(frozen=True)
class Report:
    code: str
    node: cst.CSTNode  # where the finding points
    message: str
    fix: Fix | None = None  # applied to `node` when converting
    imports: tuple[tuple[str, str | None], ...] = ()  # (module, alias) the fix needs
    requires: tuple[cst.CSTNode, ...] = ()  # this fix only makes sense if these nodes' fixes apply
    # When the fix is dropped because a required fix was (a suppressed `np.sum` keeps its
    # list argument on NumPy), is what it fixed still a problem to report?
    report_if_unfixed: bool = True
    unfixed_message: str | None = None  # the message when the fix is dropped
    key: tuple | None = None  # what the fix stands for across files (np2jax.tree checks it)
    # False: an edit that belongs to another report's change (the split line before a draw
    # NJ302 reports at the draw), applied but not listed or counted as a change of its own
    listed: bool = True
    # the NumPy/SciPy call sites (Call nodes) the fix makes JAX code: the coverage figure
    # (np2jax.findings.Coverage) counts them as moved when the fix is applied
    moves: tuple[cst.CSTNode, ...] = ()
    # False: the fix adds to its node without converting what the node itself does (NJ302's
    # split line before a statement that draws, which may also be a write left in place):
    # the islands do not count the node as converted (np2jax.analysis.islands)
    converts: bool = True
    # True: the fix adds a NumPy call at the edge of JAX code (`np.asarray(a)` handed to a
    # NumPy function, NJ115's `np.asarray(m).flat`): the coverage figure's boundaries
    boundary: bool = False
    # True: the finding says that the function it lies in needs NumPy arrays in its body
    # (the rule's `keeps-function` in its catalog entry): if it still stands once the
    # module is converted, the pipeline keeps that function on NumPy (NJ104) and converts
    # again, so that the body runs as written on NumPy arrays
    keeps_function: bool = False


class RuleContext:
    """What the rules of one file share: its analysis, the configuration, and what is
    worked out once for all of them."""

    def __init__(self, analysis: ModuleAnalysis, config: Config) -> None:
        self.analysis = analysis
        self.config = config

    @cached_property
    def jit_plans(self) -> list:
        """The --jit verdict on every module-level function (np2jax.jit), for NJ501-NJ510."""
        from np2jax.jit import jit_plans  # loaded only when --jit is on

        return jit_plans(self.analysis)

    @cached_property
    def traced_functions(self) -> frozenset:
        """The module-level functions whose bodies may run under jax.jit's trace: those
        --jit compiles, and the module's functions they name, on down."""
        if not self.config.jit:
            return frozenset()
        functions = {s.name.value: s for s in self.analysis.module.body
                     if isinstance(s, cst.FunctionDef)}
        traced = {plan.function for plan in self.jit_plans if plan.compiled}
        waiting = list(traced)
        while waiting:
            for name in names_in(waiting.pop()):
                called = functions.get(name)
                if called is not None and called not in traced:
                    traced.add(called)
                    waiting.append(called)
        return frozenset(traced)

    def may_be_traced(self, node: cst.CSTNode) -> bool:
        """Whether `node` may run under jax.jit's trace once converted (only with --jit): it
        lies in a traced function (traced_functions), or in a class while --jit compiles
        something (a method a compiled function calls is traced too)."""
        if not self.config.jit:
            return False
        top = node
        while self.analysis.parents.get(top) is not None \
                and not isinstance(self.analysis.parents.get(top), cst.Module):
            top = self.analysis.parents.get(top)
        if isinstance(top, cst.FunctionDef):
            return top in self.traced_functions
        return isinstance(top, cst.ClassDef) and bool(self.traced_functions)


class Rule:
    code: ClassVar[str]

    def __init__(self, context: RuleContext) -> None:
        self.context = context
        self.analysis = context.analysis
        self.config = context.config

    @classmethod
    def doc(cls) -> RuleDoc:
        return rule_doc(cls.code)

    def run(self) -> Iterable[Report]:
        raise NotImplementedError

    def report(self, node: cst.CSTNode, *, fix: Fix | None = None, imports=(), requires=(),
               report_if_unfixed: bool = True, key: tuple | None = None, listed: bool = True,
               moves=(), converts: bool = True, boundary: bool = False,
               keeps_function: bool | None = None, **fields) -> Report:
        """`keeps_function`: None is what the rule's catalog entry declares (its
        `keeps-function`); False for a finding of such a rule that says nothing of the
        function's body (NJ102's names JAX lacks), True only in a rule that declares it."""
        message = one_line(self.doc().message.format(**fields))
        if isinstance(requires, cst.CSTNode):
            requires = (requires,)
        unfixed = None
        if fix is not None and "outcome" in fields:
            unfixed = one_line(self.doc().message.format(**{**fields, "outcome": DEPENDENCY_DROPPED}))
        declared = self.doc().keeps_function is not None
        if keeps_function and not declared:
            raise ValueError(f"{self.code} marks a finding as keeping its function, but its "
                             "catalog entry declares no keeps-function")
        return Report(self.code, node, message, fix, tuple(imports), tuple(requires),
                      report_if_unfixed, unfixed, key, listed,
                      tuple(m for m in moves if m is not None), converts, boundary,
                      declared if keeps_function is None else keeps_function)


QUOTED_CODE_LIMIT = 60  # characters of code quoted in a message, beyond which it is cut


def one_line(message: str) -> str:
    """A finding is one line: code quoted in it (between backticks) loses its line breaks
    and indentation and, past QUOTED_CODE_LIMIT characters, its middle (`f(a, ... z)`)."""
    def shorten(match: re.Match) -> str:
        code = " ".join(match.group(1).split())
        if len(code) > QUOTED_CODE_LIMIT:
            code = code[:QUOTED_CODE_LIMIT - 16] + " ... " + code[-11:]
        return f"`{code}`"

    return " ".join(re.sub(r"`([^`]*)`", shorten, message).split())


@cache
def all_rules() -> dict[str, type[Rule]]:
    """Every rule, by code: the one Rule class of each module of this package named after a
    catalog entry (rules/NJ201_subscript-assignment.toml: subscript_assignment.py, class
    SubscriptAssignment). Modules starting with an underscore hold what a family shares."""
    import np2jax.rules as package

    rules: dict[str, type[Rule]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_") or info.name in ("base", "catalog"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found = [value for value in vars(module).values() if isinstance(value, type)
                 and issubclass(value, Rule) and value.__module__ == module.__name__
                 and "code" in value.__dict__]
        if len(found) != 1:
            raise CatalogError(f"np2jax/rules/{info.name}.py defines {len(found)} rules, not one")
        rule = found[0]
        name = rule_name(rule.code)
        if name.replace("-", "_") != info.name or rule.__name__ != class_name(name):
            raise CatalogError(f"np2jax/rules/{info.name}.py: {rule.code} is `{name}`, so the "
                               f"module must be {name.replace('-', '_')}.py and the class "
                               f"{class_name(name)}")
        rules[rule.code] = rule
    missing = sorted(set(rule_codes()) - set(rules))
    if missing:
        raise CatalogError(f"no rule module for {', '.join(missing)} (see CONTRIBUTING.md)")
    return dict(sorted(rules.items()))


def class_name(name: str) -> str:
    """The class of the rule named `subscript-assignment`: SubscriptAssignment."""
    return "".join(part.capitalize() for part in name.split("-"))
