"""SIGKILL in the middle of `convert --in-place`: every file is exactly its old or its new
version, none torn; what a kill can leave behind is only a `.NAME.*.np2jax-tmp` file (killed
between mkstemp and rename in files.write_atomic), which a re-run ignores and leaves alone
while converting the rest."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

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
    for name in temporary:  # only write_atomic's pattern, never anything else
        assert name.startswith(".m") and name.endswith(".np2jax-tmp"), temporary
    torn = [name for name in old if contents.get(name) not in (old[name], new[name])]
    assert not torn, f"torn or lost: {torn[:5]}"
    done = sum(contents[name] == new[name] for name in old)
    print(f"\nSIGKILL {'sent' if killed else 'not sent (the run ended first)'}: "
          f"{done} of {FILES} files new, {FILES - done} old, {len(temporary)} temporary files left")
    assert done >= 1

    # A re-run converts the rest; a temporary file left by the kill is not a *.py file: it
    # is neither converted nor removed.
    leftovers = {name: contents[name] for name in temporary}
    rerun = subprocess.run([sys.executable, "-m", "np2jax", "convert", str(src), "--in-place"],
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "Traceback" not in rerun.stdout + rerun.stderr
    assert {name: (src / name).read_text() for name in old} == new
    assert {name: (src / name).read_text() for name in leftovers} == leftovers
