"""SIGKILL in the middle of `convert --in-place`: every file is exactly its old or its new
version, none torn, and no temporary file is left: files.write_atomic writes into an unnamed
file (O_TMPFILE) that gets a `.NAME.PID.XXXX.np2jax-tmp` name only for the instant before the
rename, and the next run in that folder removes such names whose process is gone."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from np2jax import files
from np2jax.api import convert_source

FILES = 200


def _source(i: int) -> str:
    return (f"import numpy as np\n\n\ndef main():\n    x = np.zeros({i % 7 + 3})\n"
            f"    x[{i % 3}] = {i}.0\n    y = np.sum([{i}, 2])\n    return {{'x': x, 'y': y}}\n")


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    stamps = {}
    for entry in os.scandir(folder):
        try:
            info = entry.stat()
        except FileNotFoundError:  # a temporary file renamed away while listing
            continue
        stamps[entry.name] = (info.st_mtime_ns, info.st_ino)
    return stamps


def test_sigkill_mid_run_leaves_every_file_old_or_new(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    old = {f"m{i:03}.py": _source(i) for i in range(FILES)}
    new = {name: convert_source(text).converted for name, text in old.items()}
    assert all(new[name] != old[name] for name in old)
    for name, text in old.items():
        (src / name).write_text(text)
    before = _snapshot(src)
    process = subprocess.Popen([sys.executable, "-m", "np2jax", "convert", str(src), "--in-place"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and process.poll() is None:
            now = _snapshot(src)
            if sum(now.get(name) != stamp for name, stamp in before.items()) >= 3:
                break  # a few files replaced: the run is writing
            time.sleep(0.0005)
        killed = process.poll() is None
        if killed:
            os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    contents = {p.name: p.read_text() for p in src.iterdir()}
    temporary = sorted(name for name in contents if name not in old)
    # Only the instant between link and rename can leave a name: at most one, of our pattern.
    assert len(temporary) <= 1, temporary
    for name in temporary:
        assert name.startswith(".m") and name.endswith(".np2jax-tmp"), temporary
    torn = [name for name in old if contents.get(name) not in (old[name], new[name])]
    assert not torn, f"torn or lost: {torn[:5]}"
    done = sum(contents[name] == new[name] for name in old)
    print(f"\nSIGKILL {'sent' if killed else 'not sent (the run ended first)'}: "
          f"{done} of {FILES} files new, {FILES - done} old, {len(temporary)} temporary files left")
    assert done >= 1

    # A re-run converts the rest and removes any name the killed run left.
    rerun = subprocess.run([sys.executable, "-m", "np2jax", "convert", str(src), "--in-place"],
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "Traceback" not in rerun.stdout + rerun.stderr
    assert {name: (src / name).read_text() for name in old} == new
    assert sorted(p.name for p in src.iterdir()) == sorted(old)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_next_write_removes_temporaries_of_dead_runs_only(tmp_path, monkeypatch):
    files._swept_folders.clear()
    dead = tmp_path / f".a.py.{_dead_pid()}.x1y2{files.TEMPORARY_SUFFIX}"
    alive = tmp_path / f".b.py.{os.getppid()}.z3{files.TEMPORARY_SUFFIX}"
    user_file = tmp_path / ".notes.123.np2jax-tmp.txt"  # not our pattern: never touched
    for path in (dead, alive, user_file):
        path.write_text("partial")
    files.write_atomic(tmp_path / "c.py", "x = 1\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, user_file.name, "c.py"])


def test_new_files_get_the_usual_permissions_and_copies_keep_the_originals(tmp_path):
    mask = os.umask(0o022)
    try:
        files.write_atomic(tmp_path / "new.py", "x = 1\n")
        original = tmp_path / "tool.py"
        original.write_text("x = 1\n")
        original.chmod(0o750)
        files.write_atomic(tmp_path / "copy.py", "x = 2\n", like=original)
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.py").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "copy.py").stat().st_mode) == 0o750
    assert (tmp_path / "copy.py").read_text() == "x = 2\n"
