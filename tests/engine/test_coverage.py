"""The coverage figure (np2jax.findings.Coverage): a file's NumPy/SciPy call sites and how
many of them the conversion made JAX code. The figure is worked out from the fixes applied
(Report.moves); every fixture's conversion is analysed again to check it against the NumPy
calls really left in the converted code."""

from __future__ import annotations


import json

import pytest

from helpers import FIXTURES, fixture_config
from np2jax.analysis import analyze
from np2jax.api import check_paths, check_source, convert_paths, convert_source
from np2jax.config import Config
from np2jax.findings import Coverage, FileResult, format_percent
from np2jax.syntax.parse import parse

CASES = sorted(FIXTURES.glob("*/*.in.py"))
IDS = [f"{p.parent.name}/{p.name[:-6]}" for p in CASES]


def numpy_calls_in(text: str) -> int:
    """The NumPy/SciPy call sites of a source, counted by analysing it afresh."""
    return len(analyze(parse(text, "<converted>")).numpy_call_sites)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_figure_counts_every_numpy_call_left_in_the_converted_code(case):
    """Each fixture: the call sites not counted as moved are exactly the NumPy calls the
    converted code still makes (a fix that turns a NumPy call into JAX code without saying
    so in Report.moves, or one that says so and keeps it, makes the two differ)."""
    text = case.read_text()
    result = convert_source(text, fixture_config(text), str(case))
    assert result.coverage.call_sites == numpy_calls_in(text)
    # NumPy islands add boundary calls of their own (`np.array(...)` copies a fresh JAX array
    # where a write left in place needs a NumPy one, `np.asarray(v)` reads an operand): they
    # are no call sites of the program's, so they are not counted
    assert result.coverage.left == numpy_calls_in(result.converted) - result.coverage.boundaries, \
        result.coverage


def test_the_fixtures_move_calls_by_every_kind_of_fix():
    """The check above is not vacuous: the fixtures move calls by renames (NJ101), in-place
    functions (NJ206), ufunc.at (NJ207) and random keys (NJ302), and leave some."""
    by_rule = {}
    for family in ("numpy-reference", "in-place-function", "ufunc-at", "numpy-random-keys"):
        total = Coverage()
        for case in sorted((FIXTURES / family).glob("*.in.py")):
            text = case.read_text()
            total += convert_source(text, fixture_config(text), str(case)).coverage
        by_rule[family] = total
    assert all(c.moved > 0 for c in by_rule.values()), by_rule
    assert any(c.left > 0 for c in by_rule.values()), by_rule


SOURCE = """\
import numpy as np
import scipy.spatial
from scipy.special import erf


def main():
    a = np.ones(3)
    m = np.zeros((2, 2))
    m[0, 0] = 1.0
    np.savetxt("out.txt", a)
    flat = m.reshape((np.prod(m.shape),))
    d = scipy.spatial.distance.cdist(m, m)
    rng = np.random.default_rng(0)
    s = np.add.reduce(a) + erf(a).sum() + np.linalg.norm(a)
    return np.linalg.eig(np.eye(2)), d, rng.normal(size=2), flat, s, np.pi
"""
# call sites: np.ones, np.zeros, np.savetxt (I/O: on purpose), np.prod (shape arithmetic: on
# purpose), scipy.spatial.distance.cdist (JAX has none: NJ102), np.random.default_rng (the
# key line), np.add.reduce, erf, np.linalg.norm, np.linalg.eig (NJ103), np.eye = 11; not
# m.reshape, erf(a).sum() nor rng.normal (methods), nor np.pi (not called)


def test_what_a_call_site_is_and_which_moved():
    result = convert_source(SOURCE)
    assert result.coverage == Coverage(call_sites=11, moved=7, on_purpose=2)
    assert result.coverage.left == 4
    assert result.coverage.summary() == ("moved to JAX: 7 of 11 NumPy call sites (64%); "
                                         "2 kept on NumPy on purpose")


def test_a_suppressed_conversion_is_not_moved():
    """`# np2jax: ignore[NJ101]` keeps the line's three calls (np.add.reduce, erf,
    np.linalg.norm) on NumPy; without NJ302 the random state stays on NumPy."""
    text = SOURCE.replace("np.linalg.norm(a)\n", "np.linalg.norm(a)  # np2jax: ignore[NJ101]\n")
    assert convert_source(text).coverage == Coverage(11, 4, 2)
    assert convert_source(SOURCE, Config(ignore=("NJ302",))).coverage == Coverage(11, 6, 2)


def test_check_gives_what_convert_would_move(tmp_path):
    (tmp_path / "model.py").write_text(SOURCE)
    (tmp_path / "plain.py").write_text("x = [1, 2]\n")
    checked = check_paths([tmp_path], Config(cache=False), jobs=1)
    converted = convert_paths([tmp_path], Config(cache=False), jobs=1)
    assert checked.coverage() == converted.coverage() == Coverage(11, 7, 2)
    assert [(r.path.endswith("plain.py"), r.coverage) for r in checked.files] == [
        (False, Coverage(11, 7, 2)), (True, Coverage())]
    assert check_source(SOURCE)  # the findings themselves are unchanged: NJ102, NJ201, ...


def test_a_notebook_counts_its_cells_together(tmp_path):
    """The code cells as one module; a magic's line is kept as it was, and not counted."""
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": source}
             for source in ("import numpy as np\nx = np.zeros(3)\n", "%time y = np.sum(x)\n",
                            "np.savetxt('x.txt', x)\nz = np.ones(2)\n")]
    notebook = {"cells": cells, "metadata": {"language_info": {"name": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    result = convert_source(json.dumps(notebook), path=str(tmp_path / "nb.ipynb"))
    assert result.coverage == Coverage(3, 2, 1)  # np.zeros, np.ones moved; np.savetxt


def test_the_figure_survives_the_cache_and_a_file_without_numpy_has_none():
    result = convert_source(SOURCE)
    again = FileResult.from_json(json.loads(json.dumps(result.to_json())), result.path, SOURCE)
    assert again.coverage == result.coverage
    assert convert_source("x = [1, 2]\n").coverage == Coverage()
    assert Coverage().percent is None and Coverage().summary() == "moved to JAX: no NumPy call sites"


@pytest.mark.parametrize("moved, total, shown", [(412, 480, "86%"), (479, 480, "99%"),
                                                 (1, 480, "<1%"), (0, 3, "0%"), (3, 3, "100%")])
def test_percents_never_round_to_all_or_nothing(moved, total, shown):
    assert format_percent(Coverage(total, moved).percent) == shown
    assert Coverage(total, moved).as_dict()["left"] == total - moved
