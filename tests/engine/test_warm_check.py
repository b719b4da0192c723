"""A warm re-check: the whole run stored in one entry (np2jax.cache.StoredRun), what
`np2jax check` loads, and the text report written without a console.print a line.

No timings: each test checks what must never change (the report, the findings) and that
the fast path is taken (nothing processed, nothing heavy imported)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from helpers import fail_on, invoke, modules_loaded
from np2jax import engine as engine_module
from np2jax.api import check_paths
from np2jax.config import Config
from np2jax.findings import Finding
from np2jax.report.text import finding_text, print_findings

MUTATOR = "import numpy as np\n\n\ndef normalize(v):\n    v /= v.sum()\n"
CALLER = ("import numpy as np\nfrom pkg.mod_a import normalize\n\n\ndef main():\n"
          "    x = np.ones(3)\n    normalize(x)\n    return x\n")
LISTS = ("import numpy as np\n\n\ndef main():\n"
         "    return np.sum([1, 2]) + np.float64(3) + np.isscalar(2)\n")  # NJ102 stays
BROKEN = "import numpy as np\nx = (\n"
NOTEBOOK = json.dumps({"cells": [{"cell_type": "code", "execution_count": 1, "metadata": {},
                                  "outputs": [], "source": "import numpy as np\nnp.sum([1, 2])\n"}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _tree(root: Path) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    for name, text in {"__init__.py": "", "mod_a.py": MUTATOR, "mod_b.py": CALLER,
                       "lists.py": LISTS, "broken.py": BROKEN, "use.ipynb": NOTEBOOK}.items():
        (pkg / name).write_text(text)
    return pkg


def _summary(run):
    return ([(r.path, r.original, r.converted, r.findings, r.changes, r.applied_keys,
              r.tree_references, r.mutators) for r in run.files], [str(e) for e in run.errors])


@pytest.fixture
def computed(monkeypatch):
    """The names of the files np2jax processed, and whether the tree was analysed."""
    seen: list[str] = []
    process_job, process_tree = engine_module.process_job, engine_module.process_tree

    def job_spy(job):
        seen.append(Path(job[0]).name)
        return process_job(job)

    def tree_spy(*args):
        seen.append("<tree>")
        return process_tree(*args)

    monkeypatch.setattr(engine_module, "process_job", job_spy)
    monkeypatch.setattr(engine_module, "process_tree", tree_spy)
    return seen


def _stored_runs(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / "runs").glob("*.json"))


def test_a_warm_recheck_takes_the_stored_run_and_reports_the_same(tmp_path, cache_dir, computed):
    pkg = _tree(tmp_path)
    cold = check_paths([pkg], Config(cache=False), jobs=1)
    assert len(cold.errors) == 1 and cold.problems  # the tree has findings and an error
    computed.clear()
    filled = check_paths([pkg], Config(), jobs=1)
    assert "<tree>" in computed and len(_stored_runs(cache_dir)) == 1
    computed.clear()
    warm = check_paths([pkg], Config(), jobs=1)
    assert computed == []
    assert _summary(warm) == _summary(filled) == _summary(cold)


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github"])
def test_the_warm_report_is_the_cold_one(tmp_path, cache_dir, output_format):
    pkg = _tree(tmp_path)
    args = ("check", "-j", "1", "--show-fixes", "--format", output_format, pkg)
    cold = invoke(*args[:1], "--no-cache", *args[1:])
    filled, warm = invoke(*args), invoke(*args)
    assert _stored_runs(cache_dir)
    assert cold.exit_code == filled.exit_code == warm.exit_code == 2  # broken.py
    assert warm.output == filled.output == cold.output
    assert "NJ110" in warm.output


def test_a_changed_file_is_processed_again_alone(tmp_path, cache_dir, computed):
    pkg = _tree(tmp_path)
    check_paths([pkg], Config(), jobs=1)
    # a new number, no new identifier: the other files' view of the tree is the same
    (pkg / "lists.py").write_text(LISTS.replace("np.float64(3)", "np.float64(4)"))
    computed.clear()
    run = check_paths([pkg], Config(), jobs=1)
    assert set(computed) == {"<tree>", "lists.py"}  # the others come from their own entries
    assert _summary(run) == _summary(check_paths([pkg], Config(cache=False), jobs=1))
    computed.clear()
    assert _summary(check_paths([pkg], Config(), jobs=1)) == _summary(run)
    assert computed == []  # the stored run was replaced by the new one
    assert len(_stored_runs(cache_dir)) == 1


def test_an_added_or_removed_file_is_another_run(tmp_path, cache_dir, computed):
    pkg = _tree(tmp_path)
    first = check_paths([pkg], Config(), jobs=1)
    (pkg / "more.py").write_text(LISTS)
    computed.clear()
    run = check_paths([pkg], Config(), jobs=1)
    assert computed[0] == "<tree>" and len(run.files) == len(first.files) + 1
    (pkg / "more.py").unlink()
    computed.clear()
    assert _summary(check_paths([pkg], Config(), jobs=1)) == _summary(first)
    assert computed == []  # the first tree's own stored run


def test_another_configuration_is_another_run(tmp_path, cache_dir, computed):
    pkg = _tree(tmp_path)
    check_paths([pkg], Config(), jobs=1)
    computed.clear()
    run = check_paths([pkg], Config(ignore=("NJ110",)), jobs=1)
    assert "<tree>" in computed
    assert "NJ110" not in {p.code for p in run.problems}


@pytest.mark.parametrize("damage", [
    "{not json", "", "[]", json.dumps({"key": "0" * 64, "outcomes": []}),
    "same key, too few outcomes", "same key, a finding row too short",
    "same key, outcomes of another shape"])
def test_a_damaged_stored_run_is_ignored_and_replaced(tmp_path, cache_dir, computed, damage):
    pkg = _tree(tmp_path)
    first = check_paths([pkg], Config(), jobs=1)
    (entry,) = _stored_runs(cache_dir)
    stored = json.loads(entry.read_text())
    if damage == "same key, too few outcomes":
        damage = json.dumps({**stored, "outcomes": stored["outcomes"][1:]})
    elif damage == "same key, a finding row too short":
        damaged = json.loads(entry.read_text())
        for outcome in damaged["outcomes"]:
            if outcome.get("result", {}).get("findings"):
                outcome["result"]["findings"][0] = outcome["result"]["findings"][0][:3]
        damage = json.dumps(damaged)
    elif damage == "same key, outcomes of another shape":
        damage = json.dumps({**stored, "outcomes": [[1, 2]] * len(stored["outcomes"])})
    entry.write_text(damage)
    computed.clear()
    second = check_paths([pkg], Config(), jobs=1)
    assert "<tree>" in computed and _summary(second) == _summary(first)
    assert json.loads(entry.read_text()) == stored  # rewritten whole


def test_a_run_with_an_internal_error_is_not_stored(tmp_path, cache_dir, monkeypatch):
    fail_on(monkeypatch, "lists.py")
    pkg = _tree(tmp_path)
    run = check_paths([pkg], Config(), jobs=1)
    assert any("internal error" in str(e) for e in run.errors)
    assert _stored_runs(cache_dir) == []
    monkeypatch.undo()  # the bug mended: the run is stored and clean
    monkeypatch.setenv("NP2JAX_CACHE_DIR", str(cache_dir))
    assert not any("internal error" in str(e) for e in check_paths([pkg], Config(), jobs=1).errors)


def test_concurrent_checks_both_report_and_leave_a_readable_entry(tmp_path, cache_dir):
    pkg = _tree(tmp_path)
    command = [sys.executable, "-m", "np2jax", "check", "-j", "1", "--format", "json", str(pkg)]
    env = {**os.environ, "NP2JAX_CACHE_DIR": str(cache_dir)}
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env) for _ in range(2)]
    outputs = [run.communicate()[0] for run in runs]
    assert outputs[0] == outputs[1] and json.loads(outputs[0])["findings"]
    (entry,) = _stored_runs(cache_dir)
    assert json.loads(entry.read_text())["outcomes"]
    warm = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert warm.stdout == outputs[0]


def _modules_loaded_by_check(*args, env) -> set[str]:
    loaded, output = modules_loaded("check", *args, env=env)
    assert "NJ110" in output
    return loaded


def test_a_warm_one_file_check_loads_neither_jax_nor_libcst(tmp_path, cache_dir):
    source = tmp_path / "one_file.py"
    source.write_text(LISTS)
    env = {**os.environ, "NP2JAX_CACHE_DIR": str(cache_dir)}
    cold = _modules_loaded_by_check(source, env=env)
    assert "libcst" in cold and "jax" not in cold
    warm = _modules_loaded_by_check(source, env=env)
    heavy = {"jax", "libcst", "np2jax.pipeline", "np2jax.analysis"}
    assert not heavy & warm, heavy & warm
    for output_format in ("sarif", "github"):
        assert not heavy & _modules_loaded_by_check(source, "--format", output_format, env=env)
    # JSON gives each fix its edit: a run of its own, warm the second time
    assert "libcst" in _modules_loaded_by_check(source, "--format", "json", env=env)
    assert not heavy & _modules_loaded_by_check(source, "--format", "json", env=env)


FINDINGS = [
    Finding("a.py", 3, 4, "NJ110", "list-as-array-argument", "`[1, 2]` passed é 中文", "error", True),
    Finding("a.py", 5, 1, "NJ401", "float64", "a tab\there", "warning", False),
    Finding("b.ipynb", 5, 1, "NJ201", "rename", "renamed", "info", True, cell=3),
    Finding("c.py", 1, 1, "NJ999", "odd", "another severity; a bell \a", "other", True),
    Finding("d.py", 2, 1, "NJ110", "list-as-array-argument", "two\nlines", "error", True),
]


@pytest.mark.parametrize("console", [
    {"color_system": None}, {"force_terminal": True, "color_system": "standard"},
    {"force_terminal": True, "color_system": "256"},
    {"force_terminal": True, "color_system": "truecolor"}], ids=str)
def test_findings_are_written_as_rich_prints_them(console):
    by_rich, by_us = io.StringIO(), io.StringIO()
    rich_console = Console(file=by_rich, width=40, highlight=False, **console)
    for finding in FINDINGS:
        rich_console.print(finding_text(finding), highlight=False, soft_wrap=True)
    print_findings(Console(file=by_us, width=40, highlight=False, **console), FINDINGS)
    assert by_us.getvalue() == by_rich.getvalue()
    assert by_us.getvalue().count("NJ110") == 2
