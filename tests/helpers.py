"""Shared test helpers: loading a program from a file and running its main(); the CLI in
process."""

from __future__ import annotations

import importlib.util
import itertools
import json
import subprocess
import sys
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


def header(text: str, key: str) -> str | None:
    """The value of a `# key: value` line at the top of a fixture."""
    for line in text.splitlines():
        if line.startswith(f"# {key}:"):
            return line.split(":", 1)[1].strip()
    return None


def fixture_config(text: str):
    """The configuration a fixture converts with: `# x64: false` (the 32-bit mode) and
    `# jit: true` headers."""
    from np2jax.config import Config

    return Config(x64=header(text, "x64") != "false", jit=header(text, "jit") == "true")


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
