"""Prove a refactoring changed no output: record what np2jax produces, then compare.

    python tools/same_outputs.py record SNAPSHOT [--only NAME ...]
    python tools/same_outputs.py compare BEFORE AFTER

`record` runs, over each input set, `convert --out` (the converted tree and the JSON
report), `check --format json` and `convert --jit --out`, all with --no-cache, and writes
them under SNAPSHOT/<set>/. The sets: every fixture, examples/, ../shared/corpus and
../shared/corpus-semantics when present (they are not part of the project), and the
installed NumPy and SciPy source trees. `compare` diffs two snapshots file by file and
exits 1 on any difference, printing the first lines of each.

Run `record` on the commit before a change and on the commit after, with the same
installed NumPy, SciPy, JAX and libcst, then `compare`.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = {  # name -> the arguments after the input, and whether the run writes a tree
    "convert": (["convert", "--format", "json", "--no-cache", "--quiet"], True),
    "check": (["check", "--format", "json", "--no-cache", "--quiet"], False),
    "jit": (["convert", "--jit", "--format", "json", "--no-cache", "--quiet"], True),
}


def input_sets() -> dict[str, Path]:
    sets = {"fixtures": ROOT / "fixtures", "examples": ROOT / "examples"}
    for name in ("corpus", "corpus-semantics"):
        shared = ROOT.parent / "shared" / name
        if shared.is_dir():
            sets[name] = shared
    for package in ("numpy", "scipy"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            sets[package] = Path(list(spec.submodule_search_locations)[0])
    return sets


def record(snapshot: Path, only: list[str]) -> None:
    for name, source in input_sets().items():
        if only and name not in only:
            continue
        for run, (arguments, writes_tree) in RUNS.items():
            target = snapshot / name / run
            target.mkdir(parents=True, exist_ok=True)
            # relative input, placeholder output: reports name the same paths from any checkout
            # the venv's console script, not `-m np2jax`: that would import a np2jax package
            # lying in the current directory (a checkout) instead of the installed one
            command = [str(Path(sys.executable).parent / "np2jax"), arguments[0], source.name,
                       *arguments[1:]]
            tree = str((target / "tree").resolve())
            if writes_tree:
                command += ["--out", tree]
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, cwd=source.parent,
                                  env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
            for suffix, text in (("report.json", done.stdout), ("stderr.txt", done.stderr)):
                (target / suffix).write_text(text.replace(tree, "<OUT>"), encoding="utf-8")
            (target / "exit.txt").write_text(f"{done.returncode}\n", encoding="utf-8")
            print(f"{name:>17} {run:>8}: exit {done.returncode}, "
                  f"{time.perf_counter() - started:6.1f} s", flush=True)


def compare(before: Path, after: Path) -> int:
    files_before = {p.relative_to(before) for p in before.rglob("*") if p.is_file()}
    files_after = {p.relative_to(after) for p in after.rglob("*") if p.is_file()}
    differences = 0
    for only_in, root in ((files_before - files_after, before), (files_after - files_before, after)):
        for path in sorted(only_in):
            print(f"only in {root}: {path}")
            differences += 1
    for path in sorted(files_before & files_after):
        old = (before / path).read_bytes()
        new = (after / path).read_bytes()
        if old != new:
            differences += 1
            print(f"differs: {path}")
            lines = difflib.unified_diff(old.decode(errors="replace").splitlines(),
                                         new.decode(errors="replace").splitlines(),
                                         lineterm="", n=1)
            for line in list(lines)[:12]:
                print(f"    {line}")
    print(f"{len(files_before & files_after)} files compared, {differences} differences")
    return 1 if differences else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    recording = commands.add_parser("record")
    recording.add_argument("snapshot", type=Path)
    recording.add_argument("--only", action="append", default=[], help="one input set (repeatable)")
    comparing = commands.add_parser("compare")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        record(args.snapshot, args.only)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
