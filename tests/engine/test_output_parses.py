"""Every output of the tool parses: a fix that would break the syntax makes the file an
internal error, left untouched, never a converted file that does not run."""

from __future__ import annotations

import ast
from dataclasses import replace

import libcst as cst
import pytest

from helpers import FIXTURES
from np2jax.api import convert_paths, convert_source
from np2jax.config import Config
from np2jax.rules.base import all_rules

CASES = sorted(FIXTURES.glob("*/*.in.py"))


# each fixture's own mode: test_fixtures' conversion test compiles it
@pytest.mark.parametrize("config", [Config(jit=True), Config(x64=False)], ids=["jit", "x32"])
def test_every_fixture_converts_to_code_that_parses(config):
    for case in CASES:
        converted = convert_source(case.read_text(), config, str(case)).converted
        ast.parse(converted, str(case))


def test_a_fix_that_breaks_the_syntax_fails_the_file(tmp_path, monkeypatch):
    """A planted bug: NJ110's fix also turns the line into `f(v) -= 1`, which libcst prints
    but Python refuses. The file is an internal error and stays as it was."""
    rule = all_rules()["NJ110"]
    original_run = rule.run

    def broken_run(self):
        for report in original_run(self):
            line = self.analysis.module.body[-1]
            yield report
            yield replace(report, node=line, requires=(report.node,), fix=lambda node: node.with_changes(
                body=[cst.AugAssign(target=cst.Call(cst.Name("f"), [cst.Arg(cst.Name("v"))]),
                                    operator=cst.SubtractAssign(), value=cst.Integer("1"))]))

    monkeypatch.setattr(rule, "run", broken_run)
    source = tmp_path / "planted.py"
    text = "import numpy as np\nt = np.sum([1, 2])\n"
    source.write_text(text)
    run = convert_paths([source], Config(cache=False), in_place=True, jobs=1)
    assert [e.problem for e in run.errors] == [
        "internal error (RuntimeError: the converted code does not parse (line 5: 'function "
        "call' is an illegal expression for augmented assignment)); the file was left "
        "untouched; please report it with this file"]
    assert source.read_text() == text
