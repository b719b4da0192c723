"""The test suite's own settings (tests/conftest.py): the names the quick subset leaves out
exist, so that a renamed heavy test does not slip into `-m quick` unnoticed."""

from __future__ import annotations

import ast
from pathlib import Path

import conftest

TESTS = Path(__file__).resolve().parent


def test_every_heavy_test_named_in_conftest_exists():
    for module, names in conftest.HEAVY.items():
        path = TESTS / module
        assert path.is_file(), module
        defined = {node.name for node in ast.parse(path.read_text()).body
                   if isinstance(node, ast.FunctionDef) and node.name.startswith("test")}
        assert names == "all" or names <= defined, (module, set(names) - defined)
