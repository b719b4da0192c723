"""Shared test helpers: loading a program from a file and running its main(); the CLI in
process."""

from __future__ import annotations

import importlib.util
import itertools
import json
import subprocess
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
_counter = itertools.count()


def run_main(path: Path):
    """Import the program at `path` under a fresh module name and return main()."""
    name = f"_np2jax_case_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        return module.main()
    finally:
        sys.modules.pop(name, None)


# what JAX and NumPy say will become an error in a later release
BREAKING = (FutureWarning, DeprecationWarning)


def recording_breaking(run):
    """(run(), the FutureWarnings and DeprecationWarnings it raised, as "Category: message"
    strings). The same message raised again is one entry; a run that raises propagates."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run()
    return result, {f"{w.category.__name__}: {w.message}" for w in caught
                    if issubclass(w.category, BREAKING)}


def new_breaking_warnings(original: set, converted: set) -> list:
    """The warnings of what a later release refuses that the converted program raises and
    the original did not: the converted code must not contain what JAX says will become an
    error (the original's own NumPy deprecations, raised by the code left on NumPy, are
    not the conversion's)."""
    return sorted(converted - original)


def header(text: str, key: str) -> str | None:
    """The value of a `# key: value` line at the top of a fixture."""
    for line in text.splitlines():
        if line.startswith(f"# {key}:"):
            return line.split(":", 1)[1].strip()
    return None


def fixture_config(text: str):
    """The configuration a fixture converts with: `# x64: false` (the 32-bit mode),
    `# jit: true`, `# interface: numpy` and `# keep-numpy: QUALNAME[=REASON]; ...`
    (functions of the fixture kept on NumPy, each entry matching any file: `*::QUALNAME`)
    headers."""
    from np2jax.config import Config

    kept = tuple(f"*::{entry.strip()}" for entry in (header(text, "keep-numpy") or "").split(";")
                 if entry.strip())
    return Config(x64=header(text, "x64") != "false", jit=header(text, "jit") == "true",
                  keep_numpy=kept, interface=header(text, "interface") or "jax")


def invoke(*args):
    """The CLI in this process (typer's CliRunner): no exception but SystemExit escapes it,
    and no traceback is printed."""
    from typer.testing import CliRunner

    from np2jax.cli import app

    result = CliRunner().invoke(app, [str(a) for a in args])
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), \
        f"np2jax raised {result.exception!r}"
    assert "Traceback" not in result.output
    return result


# Runs the real entry point in a fresh interpreter and prints what it loaded, on stderr.
_PROBE = """
import json, sys
from np2jax.cli import main
sys.argv = ["np2jax", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def modules_loaded(*args, env=None) -> tuple[set[str], str]:
    """The modules `np2jax ARGS` loads, run in a fresh interpreter, and its output."""
    done = subprocess.run([sys.executable, "-c", _PROBE, *map(str, args)], capture_output=True,
                          text=True, env=env, check=True)
    return set(json.loads(done.stderr.splitlines()[-1])), done.stdout


def fail_on(monkeypatch, suffix: str) -> None:
    """np2jax.pipeline.process raises (a planted bug) for the files whose path ends so."""
    from np2jax import pipeline

    real = pipeline.process

    def flaky(text, config, path, *args):
        if path.endswith(suffix):
            raise RuntimeError("planted")
        return real(text, config, path, *args)

    monkeypatch.setattr(pipeline, "process", flaky)


def run_in_pty(args, cwd: Path, *, stop_when=None, timeout: float = 120.0, columns: int = 120,
               env: dict | None = None) -> list[tuple[float, str]]:
    """`np2jax ARGS` with a pseudo-terminal as stdin, stdout and stderr (rich sees a
    terminal): what it wrote, as (seconds since the start, text) chunks. `stop_when(text so
    far)` true ends the run early (SIGINT, then SIGKILL, to the child alone)."""
    import fcntl
    import os
    import pty
    import select
    import signal
    import struct
    import termios
    import time

    base = {k: v for k, v in os.environ.items()
            if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS")}
    started = time.monotonic()
    pid, fd = pty.fork()
    if pid == 0:  # the child: np2jax in the terminal
        try:
            os.chdir(cwd)
            os.execve(sys.executable, [sys.executable, "-m", "np2jax", *map(str, args)],
                      {**base, **(env or {}), "TERM": "xterm-256color"})
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    chunks: list[tuple[float, str]] = []
    try:
        while time.monotonic() - started < timeout:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append((time.monotonic() - started, data.decode("utf-8", "replace")))
                if stop_when is not None and stop_when("".join(c for _, c in chunks)):
                    break
    finally:
        for sig in (signal.SIGINT, signal.SIGKILL):
            for _ in range(40):  # up to 2 s for it to end by itself or on SIGINT
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break
                if sig == signal.SIGKILL or _ == 0:
                    os.kill(pid, sig)
                time.sleep(0.05)
            else:
                continue
            break
        else:
            os.waitpid(pid, 0)
        os.close(fd)
    return chunks


# The head of a module converted in the default 64-bit mode: `import jax` for the config line
# that follows the imports (tests/rules/test_precision.py says where it goes and when).
X64_IMPORTS = 'import jax\nimport jax.numpy as jnp\njax.config.update("jax_enable_x64", True)\n'
