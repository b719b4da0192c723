"""How fast np2jax itself is, against the floor it builds on (libcst's parse + codegen).

    python benchmarks/tool_speed.py TREE [--sample N] [--jobs N]

prints, in one run, over the Python files of TREE:
- lines/s of a bare libcst parse + codegen (in this process, no np2jax);
- lines/s of `np2jax check` and of `np2jax convert --out` cold (--no-cache, -j 1), and their
  ratio to the bare parse (target: within 2.0x);
- the speed-up of `np2jax check -j 2` over -j 1 (target: 1.7x on 2 cores);
- the wall time of a warm re-check: `np2jax check` again over an unchanged tree whose
  results are cached (target: under 1 s for numpy's own source tree);
- the start-up: `np2jax check one_file.py`, without and with a cached result (wall and CPU
  seconds; target: under 0.3 s);
- a 10 MB data module without `import` or NumPy next to a small NumPy file: `np2jax
  convert --in-place` and `--jit` of the two (wall and CPU seconds; target: a few seconds
  of CPU, reading and scanning the text: the big module is never parsed, which
  tests/engine/test_bad_input.py checks; a parse took 12 s of CPU). Alone, without TREE:
  `python benchmarks/tool_speed.py --big-module`.

Every np2jax figure is a fresh process of the console script, as a user runs it; the
cache lives in a temporary folder (NP2JAX_CACHE_DIR). --sample N takes N files spread evenly
over the tree (passed by name) for a quicker run. Timings on a loaded machine are only
upper bounds: the CPU seconds (user + sys of the child) are printed alongside.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

NP2JAX = [sys.executable, "-m", "np2jax"]
ONE_FILE = "import numpy as np\n\n\ndef main():\n    return np.sum([1, 2]) + np.ones(3)\n"


def python_files(tree: Path, sample: int | None) -> list[Path]:
    files = sorted(p for p in tree.rglob("*.py") if "__pycache__" not in p.parts) \
        if tree.is_dir() else [tree]
    if sample and sample < len(files):
        step = len(files) / sample
        files = [files[int(i * step)] for i in range(sample)]
    return files


def bare_parse(files: list[Path]) -> tuple[float, float, int]:
    """Wall and CPU seconds for libcst to parse and regenerate every file, and the lines."""
    import libcst

    lines, wall, cpu = 0, 0.0, 0.0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            regenerated = libcst.parse_module(text).code
        except Exception:  # noqa: BLE001, S112 - np2jax reports these; the floor skips them
            continue
        assert regenerated == text
        wall += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        lines += text.count("\n")
    return wall, cpu, lines


def timed(command: list[str], env: dict, cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (this child and its workers) and the exit code. Run away
    from any checkout (`-m np2jax` in a checkout's root would import the checkout, not the
    installed np2jax); a run with an internal error measures nothing and stops the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1, 2) or "internal error" in done.stdout + done.stderr:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}): "
                 f"{(done.stdout + done.stderr)[-2000:]}")
    return wall, cpu, done.returncode


BIG_LINE = "value_{i} = {i} * 2 + 1  # padding padding padding padding\n"


def big_module(scratch: Path, env: dict) -> None:
    """Prints the time of converting a 10 MB data module without `import` or NumPy beside a
    small NumPy file, eager and --jit (a fresh copy each time: --in-place)."""
    data = "".join(BIG_LINE.format(i=i) for i in range(180_000))
    for flags in ([], ["--jit"]):
        tree = scratch / f"big{len(flags)}"
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        (tree / "big.py").write_text(data)
        (tree / "z_good.py").write_text(ONE_FILE)
        wall, cpu, _ = timed([*NP2JAX, "convert", "--no-cache", "--in-place", *flags, str(tree)],
                             env, scratch)
        print(f"a {len(data) / 1e6:.0f} MB module without import or NumPy and a NumPy file, "
              f"`np2jax convert --in-place{' ' if flags else ''}{' '.join(flags)}`: {wall:.2f} s wall, "
              f"{cpu:.2f} s CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path, nargs="?")
    parser.add_argument("--sample", type=int, default=None, help="only N files, spread evenly")
    parser.add_argument("--jobs", type=int, default=2, help="the -j compared with -j 1")
    parser.add_argument("--big-module", action="store_true",
                        help="only the 10 MB module without NumPy (no TREE needed)")
    args = parser.parse_args()
    if args.big_module:
        scratch = Path(tempfile.mkdtemp(prefix="np2jax-tool-speed-"))
        try:
            big_module(scratch, {**os.environ, "NP2JAX_CACHE_DIR": str(scratch / "cache")})
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return
    if args.tree is None:
        parser.error("TREE is needed (or --big-module)")
    files = python_files(args.tree, args.sample)
    targets = [str(p) for p in files] if args.sample else [str(args.tree)]
    scratch = Path(tempfile.mkdtemp(prefix="np2jax-tool-speed-"))
    env = {**os.environ, "NP2JAX_CACHE_DIR": str(scratch / "cache")}
    try:
        print(f"# np2jax tool speed, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")
        print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python "
              f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}")
        print(f"tree: {args.tree} ({len(files)} files{', sampled' if args.sample else ''})")
        bare_s, bare_cpu, lines = bare_parse(files)
        print(f"lines: {lines}")
        rows = [("libcst parse + codegen (floor)", bare_s, bare_cpu, None)]

        def measure(label, command):
            wall, cpu, _ = timed(command, env, scratch)
            rows.append((label, wall, cpu, command))
            return wall

        check_1 = measure("np2jax check, cold, -j 1",
                          [*NP2JAX, "check", "--no-cache", "-j", "1", "--format", "json", *targets])
        measure("np2jax convert, cold, -j 1",
                [*NP2JAX, "convert", "--no-cache", "-j", "1", "--out", str(scratch / "out"),
                 "--format", "json", *targets])
        check_n = measure(f"np2jax check, cold, -j {args.jobs}",
                          [*NP2JAX, "check", "--no-cache", "-j", str(args.jobs), "--format",
                           "json", *targets])
        measure("np2jax check, filling the cache",
                [*NP2JAX, "check", "-j", str(args.jobs), "--format", "json", *targets])
        warm = measure("np2jax check, warm re-check",
                       [*NP2JAX, "check", "--format", "json", *targets])
        one = scratch / "one_file.py"
        one.write_text(ONE_FILE)
        starts = [timed([*NP2JAX, "check", "--no-cache", str(one)], env, scratch)
                  for _ in range(5)]
        timed([*NP2JAX, "check", str(one)], env, scratch)  # fills the cache
        warm_starts = [timed([*NP2JAX, "check", str(one)], env, scratch) for _ in range(5)]
        print()
        print("| run | wall s | CPU s | lines/s (wall) | lines/s (CPU) | x bare, wall | x bare, CPU |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for label, wall, cpu, _ in rows:
            print(f"| {label} | {wall:.2f} | {cpu:.2f} | {lines / wall:,.0f} | "
                  f"{lines / cpu:,.0f} | {wall / bare_s:.1f} | {cpu / bare_cpu:.1f} |")
        print()
        print(f"-j {args.jobs} speed-up over -j 1 (check, cold, wall): {check_1 / check_n:.2f}x")
        print(f"warm re-check: {warm:.2f} s")
        for label, runs in (("--no-cache", starts), ("cached", warm_starts)):
            best = min(runs)
            print(f"start-up, `np2jax check one_file.py` ({label}, best of 5): {best[0]:.2f} s "
                  f"wall, {best[1]:.2f} s CPU")
        big_module(scratch, env)
        print()
        print("commands (NP2JAX_CACHE_DIR set to a fresh temporary folder):")
        for label, _, _, command in rows[1:]:
            named = command[: len(command) - len(targets)]
            shown = [*named, f"<the {len(files)} files>" if args.sample else str(args.tree)]
            print(f"  {label}: {' '.join(shown)}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
