"""The coverage figure through the real CLI: the line of convert's text summary, the
"coverage" object of the JSON report (convert and check), the HTML report's card and its
line per file, convert's report on standard input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# 5 call sites, 4 moved: np.zeros, np.sum, np.exp, np.eye; np.linalg.eig stays (NJ103)
PARTLY = ("import numpy as np\n\n\ndef main():\n    x = np.zeros(3)\n"
          "    return np.sum(np.exp(x)), np.linalg.eig(np.eye(2) + 1.0)\n")
# 2 call sites, both kept on NumPy on purpose (I/O, print options)
ON_PURPOSE = "import numpy as np\n\nnp.savetxt('out.txt', [1.0])\nnp.set_printoptions(precision=3)\n"
NO_NUMPY = "x = [1, 2]\n"


def run_cli(*args, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS")}
    return subprocess.run([sys.executable, "-m", "np2jax", *map(str, args), "--no-cache"],
                          cwd=cwd, check=False, capture_output=True, text=True, input=stdin,
                          env={**env, "NO_COLOR": "1"}, timeout=300)


@pytest.fixture
def tree(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "partly.py").write_text(PARTLY)
    (src / "on_purpose.py").write_text(ON_PURPOSE)
    (src / "plain.py").write_text(NO_NUMPY)
    return tmp_path


LINE = "moved to JAX: 4 of 7 NumPy call sites (57%); 2 kept on NumPy on purpose"


def test_convert_text_summary_says_how_much_moved(tree):
    done = run_cli("convert", "src", "--out", "out", cwd=tree)
    assert done.returncode == 1, done.stderr  # NJ102 is left for the user
    lines = done.stdout.splitlines()
    assert LINE in lines
    # after the summary table, before where the tree went
    assert lines.index(LINE) > next(i for i, text in enumerate(lines) if "files converted" in text)
    assert lines.index(LINE) < next(i for i, text in enumerate(lines) if "converted tree written" in text)


def test_quiet_and_check_text_leave_it_out(tree):
    """--quiet prints findings only; check's text report is for a commit hook: findings and
    what convert fixes, not a progress figure (its JSON has it)."""
    quiet = run_cli("convert", "src", "--diff", "--quiet", cwd=tree)
    check = run_cli("check", "src", cwd=tree)
    assert "moved to JAX" not in quiet.stdout + quiet.stderr
    assert check.returncode == 1 and "files checked" in check.stdout
    assert "moved to JAX" not in check.stdout + check.stderr


def _coverage(stdout: str) -> dict:
    report = json.loads(stdout)
    coverage = report["coverage"]
    coverage["files"] = {Path(f.pop("path")).name: f for f in coverage["files"]}
    return coverage


@pytest.mark.parametrize("command", [("convert", "src", "--diff"), ("check", "src")])
def test_json_has_the_totals_and_each_file(tree, command):
    """convert's figure, and check's (what convert would move): the same numbers."""
    coverage = _coverage(run_cli(*command, "--format", "json", cwd=tree).stdout)
    files = coverage.pop("files")
    assert coverage == {"call_sites": 7, "moved": 4, "left": 3, "on_purpose": 2, "percent": 57.1,
                        "boundaries": 0}
    assert files == {
        "partly.py": {"call_sites": 5, "moved": 4, "left": 1, "on_purpose": 0, "percent": 80.0,
                      "boundaries": 0},
        "on_purpose.py": {"call_sites": 2, "moved": 0, "left": 2, "on_purpose": 2, "percent": 0.0,
                          "boundaries": 0},
        "plain.py": {"call_sites": 0, "moved": 0, "left": 0, "on_purpose": 0, "percent": None,
                     "boundaries": 0}}


# `clamp_first` is public (its callers elsewhere pass NumPy arrays): its write stays, and the
# array main makes with converted code is copied into a NumPy array for it, `np.array(...)`
ISLAND = ("import numpy as np\n\n__all__ = [\"clamp_first\"]\n\n\ndef clamp_first(x):\n"
          "    x[0] = 0.0\n    return x\n\n\ndef main():\n    data = np.arange(5.0) + 3.0\n"
          "    clamp_first(data)\n    y = np.arange(2.0) * 2.0\n    clamp_first(y)\n"
          "    return data, y\n")


@pytest.mark.parametrize("command", ["convert", "check"])
def test_json_counts_the_calls_islands_add_at_their_edges(tmp_path, command):
    """`boundaries`: the `np.array(...)` copies (and `np.asarray` reads) convert adds where a
    NumPy island meets converted code, which are no call sites of the program; per file
    and in the total, the same in check (what convert would add)."""
    (tmp_path / "island.py").write_text(ISLAND)
    (tmp_path / "plain.py").write_text(PARTLY)
    args = ("convert", ".", "--diff") if command == "convert" else ("check", ".")
    done = run_cli(*args, "--format", "json", cwd=tmp_path)
    coverage = _coverage(done.stdout)
    assert coverage["boundaries"] == 2
    assert coverage["files"]["island.py"]["boundaries"] == 2
    assert coverage["files"]["plain.py"]["boundaries"] == 0
    assert coverage["files"]["island.py"]["moved"] == 2  # the two np.arange calls


def test_html_report_has_the_card_and_a_line_per_file(tree):
    done = run_cli("convert", "src", "--out", "out", "--html", "report.html", cwd=tree)
    assert done.returncode == 1, done.stderr
    page = (tree / "report.html").read_text()
    assert ('<div class="card coverage" id="coverage"><div class="n">57%</div>'
            '<div class="label">moved to JAX: 4 of 7 NumPy call sites, 2 kept on NumPy on '
            "purpose</div></div>") in page
    sections = page.split('<section class="file"')[1:]
    by_file = {Path(s.split("<h3>")[1].split(" ")[0]).name: s for s in sections}
    assert '<p class="note coverage">moved to JAX: 4 of 5 NumPy call sites (80%).</p>' \
        in by_file["partly.py"]
    assert '<p class="note coverage">No NumPy call sites.</p>' in by_file["plain.py"]


def test_convert_from_stdin_reports_it_on_stderr(tmp_path):
    done = run_cli("convert", "-", cwd=tmp_path, stdin=PARTLY)
    assert "jnp.sum(jnp.exp(x))" in done.stdout
    assert "moved to JAX: 4 of 5 NumPy call sites (80%)" in done.stderr
    assert "moved to JAX" not in done.stdout
