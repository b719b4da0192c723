"""Progress of long runs, through the real CLI in a pseudo-terminal (issue 20): a bar from
the first second, over every phase (finding files, reading, checking or converting,
writing), with counts and the time left; nothing on a pipe or with --quiet."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import run_in_pty

# Enough work for a run of several seconds with -j 1 and no cache: many small modules.
MODULE = """import numpy as np


def step_{i}(x, n):
    y = np.zeros(n)
    y[0] = 1.0
    for k in range(n):
        y[k] += np.sum([x, {i}]) * np.cos(k)
    return np.mean(y) + np.std(np.ones(3))
"""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("big")
    for package in range(12):
        folder = root / "src" / f"pkg{package}"
        folder.mkdir(parents=True)
        for i in range(50):
            (folder / f"mod{i}.py").write_text(MODULE.format(i=i))
    return root


@pytest.fixture
def small_tree(tmp_path) -> Path:
    """Enough files for a bar (more than five), few enough to run to the end quickly."""
    for i in range(12):
        (tmp_path / "src" / f"mod{i}.py").parent.mkdir(exist_ok=True)
        (tmp_path / "src" / f"mod{i}.py").write_text(MODULE.format(i=i))
    return tmp_path


def _screen(chunks) -> str:
    return ANSI.sub("", "".join(text for _, text in chunks))


def _first(chunks, pattern: str) -> float | None:
    """When the output first matched `pattern` (seconds since the start)."""
    seen = ""
    for at, text in chunks:
        seen += ANSI.sub("", text)
        if re.search(pattern, seen):
            return at
    return None


@pytest.mark.parametrize("command", [["check"], ["convert", "--diff"]])
def test_a_long_run_shows_progress_within_two_seconds(big_tree, command):
    counted = re.compile(r"(checking|converting) .*?(\d+)/600")
    # stop once the main phase has moved on twice: the bar advances while the run goes on
    chunks = run_in_pty([*command, "src", "--no-cache", "-j", "1"], big_tree,
                        stop_when=lambda text: len({m.group(2) for m in counted.finditer(
                            ANSI.sub("", text))}) >= 3, timeout=120)
    screen = _screen(chunks)
    first = _first(chunks, r"(finding files|reading|checking|converting) .*\d+/(\?|\d+)")
    assert first is not None and first < 2.0, (first, screen[:500])
    assert re.search(r"reading .*\d+/600", screen)  # the phases before the long one show too
    done = {int(m.group(2)) for m in counted.finditer(screen)}
    assert len(done) >= 3, screen[-500:]  # it counts files as they are done
    assert re.search(r"eta \d+:\d\d:\d\d", screen)  # and estimates the time left


def test_the_bar_covers_the_writing_phase_and_is_gone_at_the_end(small_tree):
    chunks = run_in_pty(["convert", "src", "--out", "out", "-j", "1", "--no-cache"], small_tree,
                        timeout=300)
    screen = _screen(chunks)
    assert re.search(r"writing .*12/12", screen)
    # transient: the report starts on a clean line, after the bar was erased
    assert "np2jax convert" in screen and "converted tree written to" in screen
    report = screen[screen.index("np2jax convert"):]
    assert "/12" not in report


def test_no_progress_on_a_pipe_or_with_quiet(small_tree):
    piped = subprocess.run([sys.executable, "-m", "np2jax", "check", "src", "--no-cache"],
                           cwd=small_tree, capture_output=True, text=True, check=False)
    assert piped.returncode == 1 and piped.stderr == ""
    quiet = run_in_pty(["check", "src", "--quiet", "--no-cache"], small_tree, timeout=120)
    screen = _screen(quiet)
    assert "NJ" in screen and not re.search(r"\d+/12", screen)
    shown = _screen(run_in_pty(["check", "src", "--no-cache"], small_tree, timeout=120))
    assert re.search(r"checking .*12/12", shown)  # the same run, not quiet, has its bar


def test_an_empty_input_says_so(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no Python here\n")
    for command in (["check"], ["convert", "--out", tmp_path / "out"]):
        done = subprocess.run([sys.executable, "-m", "np2jax", *command, "empty"], cwd=tmp_path,
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0
        assert done.stderr == "warning: no Python files found in empty\n"
        assert "converted tree written" not in done.stdout
    quiet = subprocess.run([sys.executable, "-m", "np2jax", "check", "empty", "-q"], cwd=tmp_path,
                           capture_output=True, text=True, check=False)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


class Recorder:
    """An np2jax.engine.Progress that notes what it is told."""

    def __init__(self):
        self.phases: list[list] = []

    def phase(self, description, total=None, size=None):
        self.phases.append([description, total, size, 0, 0])

    def advance(self, steps=1, size=0):
        self.phases[-1][3] += steps
        self.phases[-1][4] += size

    def tick(self):
        pass


def test_every_phase_is_told_and_the_passes_weigh_the_source(small_tree, tmp_path):
    from np2jax.api import check_paths, convert_paths
    from np2jax.config import Config

    (small_tree / "src" / "big.py").write_text(MODULE.format(i=99) + "# padding\n" * 2000)
    sizes = sum(len(p.read_text()) for p in (small_tree / "src").glob("*.py"))
    recorder = Recorder()
    check_paths([small_tree / "src"], Config(cache=False), jobs=1, progress=recorder)
    assert recorder.phases == [["finding files", None, None, 13, 0], ["reading", 13, None, 13, 0],
                               ["checking", 13, sizes, 13, sizes]]
    recorder = Recorder()
    convert_paths([small_tree / "src"], Config(cache=False), out=tmp_path / "out", jobs=1,
                  progress=recorder)
    assert [p[0] for p in recorder.phases] == ["finding files", "reading", "converting", "writing"]
    assert recorder.phases[-1][1:4] == [13, None, 13]


def test_the_bar_follows_the_size_and_counts_files():
    import io

    from rich.console import Console

    from np2jax.report.text import RunProgress

    progress = RunProgress(Console(file=io.StringIO(), force_terminal=True, width=100))
    progress.phase("checking", 8, size=1000)
    progress.advance(1, 900)  # the biggest file first: most of the work
    task = progress.bar.tasks[0]
    assert task.percentage == 90.0 and task.fields["files"] == "1/8"
    progress.phase("writing", 8)
    progress.advance(2)
    task = progress.bar.tasks[0]
    assert (task.description, task.percentage, task.fields["files"]) == ("writing", 25.0, "2/8")
    progress.close()
