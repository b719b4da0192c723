"""tools/add_rule.py: a rule scaffolded into a copy of the checkout is found by name (the
discovery, the catalog, the rule reference), with nothing else edited."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from helpers import ROOT

ADD_RULE = ROOT / "tools" / "add_rule.py"


def _checkout(tmp_path):
    for folder in ("np2jax", "rules", "docs", "fixtures"):
        shutil.copytree(ROOT / folder, tmp_path / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.out.py", "*.in.py"))
    return tmp_path


def _run(args, cwd):
    # the copy's np2jax first on the path, ahead of the installed one
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_a_scaffolded_rule_is_found_by_name(tmp_path):
    root = _checkout(tmp_path)
    before = {p for p in root.rglob("*") if p.is_file()}
    made = _run([str(ADD_RULE), "NJ499", "demo-pattern", "--summary", "A demonstration.",
                 "--root", str(root)], root)
    assert made.returncode == 0, made.stderr
    written = {p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts} - before
    assert {p.relative_to(root).as_posix() for p in written} == {
        "np2jax/rules/demo_pattern.py", "rules/NJ499_demo-pattern.toml",
        "fixtures/demo-pattern/first_case.in.py", "fixtures/demo-pattern/first_case.out.py"}
    assert "## NJ499 `demo-pattern`" in (root / "docs" / "rules.md").read_text()
    probe = ("from np2jax.rules.base import all_rules\nfrom np2jax.catalog import rule_doc\n"
             "rule = all_rules()['NJ499']\nprint(rule.__name__, rule.__module__, rule_doc('NJ499').name)")
    found = _run(["-c", probe], root)
    assert found.stdout.split() == ["DemoPattern", "np2jax.rules.demo_pattern", "demo-pattern"], found.stderr


def test_a_taken_code_is_refused(tmp_path):
    root = _checkout(tmp_path)
    refused = _run([str(ADD_RULE), "NJ201", "another-name", "--summary", "x", "--root", str(root)], root)
    assert refused.returncode != 0 and "NJ201 is taken" in refused.stderr
    assert not (root / "np2jax" / "rules" / "another_name.py").exists()


def test_a_module_not_named_after_its_rule_is_refused(tmp_path):
    root = _checkout(tmp_path)
    source = root / "np2jax" / "rules" / "ufunc_at.py"
    source.rename(source.with_name("ufunc_at_rule.py"))
    found = _run(["-c", "from np2jax.rules.base import all_rules; all_rules()"], root)
    assert "ufunc_at_rule.py: NJ207 is `ufunc-at`, so the module must be ufunc_at.py" in found.stderr
