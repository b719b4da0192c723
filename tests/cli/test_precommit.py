"""The pre-commit hooks (.pre-commit-hooks.yaml) through the real `pre-commit try-repo`,
in a temporary git repository: np2jax-check fails naming the file with a finding, and
np2jax-fix converts the files in place.

`try-repo` installs this checkout (with JAX, about 600 MB) into a fresh environment of its
own each time it runs, so the test runs it once: from pip's cache or a local wheel folder
when there is one, from PyPI otherwise. It uses the committed state of the checkout plus its
uncommitted changes to tracked files (an untracked .pre-commit-hooks.yaml is not seen).
Measured on a loaded 2-core machine with JAX in a local wheel folder: about 2.5 minutes.
Slow; deselect with -m "not slow".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, X64_IMPORTS

pytestmark = pytest.mark.slow

WITH_FINDING = "import numpy as np\n\nx = np.zeros(3)\ny = x\nx[0] = 1.0\n"  # y sees the write
FIXABLE = "import numpy as np\n\nz = np.sum([1, 2])\n"
CLEAN = "def add(a, b):\n    return a + b\n"
NOTEBOOK = {"cells": [{"cell_type": "code", "execution_count": 1, "id": "a1", "metadata": {},
                       "outputs": [], "source": ["%matplotlib inline\n", "import numpy as np\n",
                                                 "v = np.sum([1, 2])"]}],
            "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def _pre_commit() -> list[str]:
    if not (ROOT / ".git").exists():
        pytest.skip("try-repo needs np2jax as a git checkout")
    found = shutil.which("pre-commit", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("pre-commit is not installed (it is in the test extra)")
    return [found]


def _run(args, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=1500, check=False)


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict:
    home = tmp_path_factory.mktemp("pre-commit-home")  # never the user's own
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    environ.update(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never",
                   GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
                   PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    return environ


def _project(root: Path, env: dict) -> Path:
    project = root / "project"
    project.mkdir()
    (project / "with_finding.py").write_text(WITH_FINDING)
    (project / "fixable.py").write_text(FIXABLE)
    (project / "clean.py").write_text(CLEAN)
    (project / "analysis.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    for args in (["git", "init", "-q"], ["git", "add", "."]):
        done = _run(args, project, env)
        assert done.returncode == 0, done.stderr
    return project


def test_check_hook_fails_naming_the_file_and_fix_hook_converts(tmp_path, env):
    """One `try-repo` runs both hooks, in the order of .pre-commit-hooks.yaml (each call
    installs np2jax afresh): np2jax-check sees the files as they were, then np2jax-fix
    converts them."""
    project = _project(tmp_path, env)
    done = _run([*_pre_commit(), "try-repo", ROOT, "--all-files", "--verbose"], project, env)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "- hook id: np2jax-check" in output and "- hook id: np2jax-fix" in output, output
    check, fix = output.split("- hook id: np2jax-fix")
    assert "np2jax check" in check and "Failed" in check
    assert "with_finding.py:5:1: NJ201" in check
    assert "fixable.py:3:" in check and "analysis.ipynb:cell 1:3:" in check
    assert "clean.py" not in check
    assert "files were modified by this hook" in fix
    assert (project / "fixable.py").read_text() == \
        X64_IMPORTS + "\nz = jnp.sum(jnp.array([1, 2]))\n"
    notebook = json.loads((project / "analysis.ipynb").read_text())
    assert notebook["cells"][0]["source"] == [
        *X64_IMPORTS.splitlines(keepends=True), "\n", "%matplotlib inline\n",
        "v = jnp.sum(jnp.array([1, 2]))"]
    # the write left in place keeps its array on NumPy (an island), so nothing else changes
    assert (project / "with_finding.py").read_text() == WITH_FINDING
    assert (project / "clean.py").read_text() == CLEAN
