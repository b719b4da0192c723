"""The test suite's own settings (tests/conftest.py): the names the quick subset leaves out
exist, so that a renamed heavy test does not slip into `-m quick` unnoticed."""

from __future__ import annotations

import ast
from pathlib import Path

import conftest

TESTS = Path(__file__).resolve().parent


def test_test_files_are_grouped_by_layer_and_have_distinct_names():
    """tests/<rules|jit|engine|cli|verify|syntax>/test_*.py beside the few about the whole
    package; pytest imports each by its file name, so no two may share one."""
    files = sorted(TESTS.rglob("test_*.py"))
    assert len({f.name for f in files}) == len(files)
    assert {f.parent.name for f in files} <= {"tests", "rules", "jit", "engine", "cli",
                                               "verify", "syntax"}


def test_every_heavy_test_named_in_conftest_exists():
    for module, names in conftest.HEAVY.items():
        (path,) = TESTS.rglob(module)  # tests/<family>/test_*.py: one file of each name
        defined = {node.name for node in ast.parse(path.read_text()).body
                   if isinstance(node, ast.FunctionDef) and node.name.startswith("test")}
        assert names == "all" or names <= defined, (module, set(names) - defined)
