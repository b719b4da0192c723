"""Rules: each one a small class named by its catalog code, discovered from this package.

A rule reads the facts of `np2jax.analysis` and reports; it never edits the tree. A report
may carry a fix (a function from the node, as rewritten so far, to its replacement) that
the engine applies when converting. Messages and docs come from the catalog (rules/).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache
from typing import Callable, ClassVar, Iterable

import libcst as cst

from np2jax.analysis import ModuleAnalysis
from np2jax.catalog import RuleDoc, rule_doc
from np2jax.config import Config

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


class Rule:
    code: ClassVar[str]

    def __init__(self, analysis: ModuleAnalysis, config: Config) -> None:
        self.analysis = analysis
        self.config = config

    @classmethod
    def doc(cls) -> RuleDoc:
        return rule_doc(cls.code)

    def run(self) -> Iterable[Report]:
        raise NotImplementedError

    def report(self, node: cst.CSTNode, *, fix: Fix | None = None, imports=(), requires=(),
               report_if_unfixed: bool = True, key: tuple | None = None, **fields) -> Report:
        message = self.doc().message.format(**fields)
        if isinstance(requires, cst.CSTNode):
            requires = (requires,)
        unfixed = None
        if fix is not None and "outcome" in fields:
            unfixed = self.doc().message.format(**{**fields, "outcome": DEPENDENCY_DROPPED})
        return Report(self.code, node, message, fix, tuple(imports), tuple(requires),
                      report_if_unfixed, unfixed, key)


@cache
def all_rules() -> dict[str, type[Rule]]:
    """Every Rule subclass in this package's modules, by code."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    rules: dict[str, type[Rule]] = {}
    pending = list(Rule.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if "code" in cls.__dict__:
            if cls.code in rules:
                raise RuntimeError(f"two rules claim {cls.code}: {rules[cls.code]} and {cls}")
            rules[cls.code] = cls
    return dict(sorted(rules.items()))
