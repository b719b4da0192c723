"""check's fixable findings: the message says what `np2jax convert` would do (not that it was
done), and with --format json each carries its edit, as ruff's JSON has it (np2jax.edits)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from helpers import FIXTURES, fixture_config
from np2jax.cli import app
from np2jax.engine import process_text

INPLACE = "import numpy as np\nx = np.zeros(3)\nx[0] = 1.0\ny = np.sum([1, 2])\n"
MUTATOR = """import numpy as np


def normalize(v):
    v /= v.sum()


def main():
    p = np.ones(4)
    normalize(p)
    return p
"""


def run(*args, cwd: Path) -> SimpleNamespace:
    """The CLI in this process (typer's CliRunner), in `cwd`: returncode, stdout, stderr."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, [str(a) for a in args])
    finally:
        os.chdir(old)
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout,
                           stderr=result.stderr)


def test_check_says_what_convert_would_do(tmp_path):
    (tmp_path / "a.py").write_text(INPLACE)
    check = run("check", "a.py", "--no-cache", cwd=tmp_path)
    assert check.stdout.splitlines()[:2] == [
        "a.py:3:1: NJ201 `x[0] = ...` writes into an array in place, and JAX arrays are "
        "immutable: fixable (`np2jax convert` rewrites it as `.at[...].set(...)`)",
        "a.py:4:12: NJ110 `[1, 2]` passed to `np.sum`: JAX refuses lists and tuples where it "
        "wants an array (literals become jnp.array(...), names that hold lists "
        "jnp.asarray(...)) (fixable: `np2jax convert` rewrites it)"]
    # convert did it: its report keeps the past tense
    convert = run("convert", "a.py", "--diff", "--format", "json", cwd=tmp_path)
    (change,) = [c for c in json.loads(convert.stdout)["changes"] if c["code"] == "NJ201"]
    assert change["message"].endswith(": rewritten as `.at[...].set(...)`")


def test_json_gives_each_fixable_finding_its_edit(tmp_path):
    (tmp_path / "m.py").write_text(MUTATOR)
    done = run("check", "m.py", "--format", "json", "--no-cache", cwd=tmp_path)
    assert done.returncode == 1
    findings = {(f["line"], f["code"]): f for f in json.loads(done.stdout)["findings"]}
    definition, call = findings[4, "NJ209"], findings[10, "NJ209"]
    assert definition["fixable"] is True
    fix = definition["fix"]
    assert fix["applicability"] == "safe" and fix["standalone"] is False
    # the function returns its argument: a line inserted, at the body's indentation...
    assert fix["edits"] == [{"content": "    return v\n", "location": {"row": 6, "column": 1},
                             "end_location": {"row": 6, "column": 1}}]
    # ...only together with its call assigning the result back
    assert fix["applies_with"] == [{"code": "NJ209", "location": {"row": 10, "column": 5}}]
    assert call["fix"]["edits"] == [{"content": "p = normalize(p)",
                                     "location": {"row": 10, "column": 5},
                                     "end_location": {"row": 10, "column": 17}}]
    # `v /= ...` stays as it is: a fix with no edit of its own, part of the function's
    assert findings[5, "NJ203"]["fix"]["edits"] == []
    assert findings[5, "NJ203"]["fix"]["applies_with"] == [
        {"code": "NJ209", "location": {"row": 4, "column": 1}}]
    text = run("check", "m.py", "--no-cache", cwd=tmp_path)
    assert '"fix"' not in text.stdout and "applies_with" not in text.stdout


def _apply(text: str, fixes: list[dict]) -> tuple[str, int]:
    """The edits applied outermost first, skipping those inside one already applied."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n?|\n", text)]

    def offset(place: dict) -> int:
        return starts[place["row"] - 1] + place["column"] - 1

    edits = sorted({(offset(e["location"]), offset(e["end_location"]), e["content"])
                    for fix in fixes for e in fix["edits"]}, key=lambda e: (e[0], -e[1]))
    out, at, applied = [], 0, 0
    for start, end, content in edits:
        if start < at:
            continue
        out += [text[at:start], content]
        at, applied = end, applied + 1
    return "".join(out) + text[at:], applied


def _code_lines(text: str) -> list[str]:
    """The lines, without the imports convert adds or removes, nor blank ones."""
    imports = re.compile(r"\s*(import (numpy|jax|scipy|functools)\b|from (numpy|jax|scipy)\S* "
                         r"import )|jax\.config\.update\(\"jax_enable_x64\"")
    return [line for line in text.splitlines() if line.strip() and not imports.match(line)]


# one fixture of each rule (the first of each folder)
SAMPLE = sorted(next(iter(sorted(folder.glob("*.in.py")))) for folder in FIXTURES.iterdir()
                if folder.is_dir() and any(folder.glob("*.in.py")))


@pytest.mark.parametrize("path", SAMPLE, ids=lambda p: p.parent.name)
def test_the_edits_applied_together_are_the_conversion(path):
    """A fixture's fix edits, applied to its source (outermost first), give what convert
    writes, but for the imports, which the fixes list apart; and no fixable finding of check
    reads as if the fix had been made."""
    text = path.read_text()
    config = fixture_config(text)
    expected = process_text(text, config, str(path)).converted
    current = text
    for _ in range(5):  # as ruff does: apply what does not overlap, check again
        result = process_text(current, config, str(path), rewrite=False, edits=True)
        changes = result.changes
        for finding in changes:  # check never says a fix happened, and says it is fixable
            if finding.severity != "info":
                assert "fixable" in finding.message, finding
                assert not re.search(r": (rewritten|converted|wrapped) ", finding.message), finding
        fixes = [c.fix for c in changes]
        assert all(fix is not None for fix in fixes)
        # an island's edge no fix accounts for rides on the finding of the write it serves
        fixes += [f.fix for f in result.findings if f.fix is not None]
        current, applied = _apply(current, fixes)
        if not applied:
            break
    assert _code_lines(current) == _code_lines(expected)


# fixtures where convert copies at an island's edge: a copy around a renamed call
# (`np.array(jnp.arange(5.0) + 3.0)`), one at a call of a helper whose renamed `np.zeros`
# makes its result JAX (`np.array(empty_flags(6))`), a read no fix accounts for
# (`self.w -= np.asarray(self.lr * g)`)
ISLANDS = ["subscript-assignment/island_public_function_parameter",
           "ufunc-at/island_bitwise_or_at_from_helper",
           "aliased-augmented-assignment/attribute_shared_with_caller"]


# `global key` added to a function whose statement NJ302 rewrites: the function's edit
# must not span exactly the statement's, or applying the statement's first loses the line
NESTED = ["numpy-random-keys/legacy_seed_draws_in_functions"]


@pytest.mark.parametrize("name", ISLANDS + NESTED)
def test_every_json_fix_applied_gives_convert_output_with_the_island_copies(tmp_path, name):
    """`check --format json --show-fixes`, every fix of the report applied (outermost first,
    then checked again, as ruff does), gives the code `convert` writes, the `np.array(...)`
    / `np.asarray(...)` at the island's edges included (edits of the fixes they go with)."""
    source = (FIXTURES / f"{name}.in.py").read_text()
    (tmp_path / "m.py").write_text(source)
    flags = ["--jit"] if fixture_config(source).jit else []
    convert = run("convert", "m.py", "--out", "out", "--no-cache", *flags, cwd=tmp_path)
    expected = (tmp_path / "out" / "m.py").read_text()
    island = name in ISLANDS
    assert not island or "np.array(" in expected or "np.asarray(" in expected, convert.stdout
    current = source
    for round_ in range(5):
        (tmp_path / "m.py").write_text(current)
        done = run("check", "m.py", "--format", "json", "--show-fixes", "--no-cache", *flags,
                   cwd=tmp_path)
        fixes = [f["fix"] for f in json.loads(done.stdout)["findings"] if "fix" in f]
        if round_ == 0 and island:
            edges = [fix for fix in fixes if any(
                e["content"].startswith(("np.array(", "np.asarray(")) for e in fix["edits"])]
            assert edges, fixes
        current, applied = _apply(current, fixes)
        if not applied:
            break
    assert _code_lines(current) == _code_lines(expected)


def test_a_notebook_fix_counts_rows_in_its_cell(tmp_path):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# title"},
             {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
              "source": "import numpy as np\n%matplotlib inline\nx = np.zeros(3)"},
             {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
              "source": "y = 2\nx[0] = 1.0"}]
    (tmp_path / "nb.ipynb").write_text(json.dumps(
        {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    done = run("check", "nb.ipynb", "--format", "json", "--no-cache", cwd=tmp_path)
    (finding,) = json.loads(done.stdout)["findings"]
    assert (finding["cell"], finding["line"], finding["col"]) == (3, 2, 1)
    assert finding["fix"]["edits"] == [{"content": "x = x.at[0].set(1.0)",
                                        "location": {"row": 2, "column": 1},
                                        "end_location": {"row": 2, "column": 11}}]
    assert finding["fix"]["applies_with"] == [
        {"code": "NJ101", "location": {"row": 3, "column": 5}, "cell": 2}]
