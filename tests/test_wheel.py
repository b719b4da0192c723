"""The wheel: built from the checkout, installed into a fresh venv outside it, and run there.

This catches what the editable install hides: a rule file or API table missing from the
package data, or code that reads the checkout instead of the installed package. The fresh
venv gets the test environment's dependencies (jax, libcst, ...) through a .pth file, so
nothing is downloaded for it; its own site-packages comes first, so the np2jax it imports
is the wheel's. Slow (a build); deselect with -m "not slow".
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from helpers import ROOT

pytestmark = pytest.mark.slow

# Never copied into the build: environments, build outputs, caches.
_NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info",
                                     "__pycache__", ".pytest_cache", ".whl", "converted",
                                     ".np2jax_cache")
CODES = sorted(p.name.split("_", 1)[0] for p in (ROOT / "rules").glob("NJ*.toml"))


def _run(args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=900, **kwargs)


def _setuptools_is_new_enough() -> bool:
    try:
        from importlib.metadata import version

        return int(version("setuptools").split(".")[0]) >= 68
    except Exception:  # noqa: BLE001 - not installed, or an odd version string
        return False


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # Build from a copy of the source, so a stale build/ in the checkout cannot leak into
    # the wheel and the build writes nothing into the checkout.
    source = tmp_path_factory.mktemp("source") / "np2jax"
    shutil.copytree(ROOT, source, ignore=_NOT_SOURCE)
    out = tmp_path_factory.mktemp("wheelhouse")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, source]
    if _setuptools_is_new_enough():
        command.insert(4, "--no-build-isolation")
    build = _run(command, env=_clean_env())
    assert build.returncode == 0, build.stdout + build.stderr
    wheels = list(out.glob("np2jax-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("fresh") / "venv"
    made = _run([sys.executable, "-m", "venv", home])
    assert made.returncode == 0, made.stdout + made.stderr
    python = _python(home)
    installed = _run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel],
                     env=_clean_env(), cwd=home.parent)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    # The test environment's dependencies, appended after the venv's own site-packages.
    own = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
               env=_clean_env(), cwd=home.parent)
    purelib = Path(own.stdout.strip())
    (purelib / "_np2jax_test_dependencies.pth").write_text(
        "".join(f"{path}\n" for path in site.getsitepackages()), encoding="utf-8")
    return home


def _python(home: Path) -> Path:
    return home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _np2jax(home: Path) -> Path:
    return home / ("Scripts/np2jax.exe" if os.name == "nt" else "bin/np2jax")


def _inside(path: str, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def test_wheel_contains_the_catalog(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"np2jax/rules/catalog/{p.name}" for p in (ROOT / "rules").glob("*.toml")}
    expected |= {f"np2jax/rules/catalog/api/{p.name}" for p in (ROOT / "rules" / "api").glob("*.json")}
    expected |= {"np2jax/rules/catalog/api/policy.toml", "np2jax/rules/catalog/__init__.py"}
    assert len(expected) > 3
    assert expected <= names, f"missing from the wheel: {sorted(expected - names)}"
    assert "np2jax/rules/base.py" in names and "np2jax/verify/compare.py" in names
    assert "np2jax/jit/traceable.py" in names
    assert not any(n.startswith(("tests/", "fixtures/", "rules/")) for n in names)


def test_fresh_venv_imports_the_wheel_not_the_checkout(venv, tmp_path):
    probe = ("import importlib.resources, np2jax, np2jax.catalog\n"
             "print(np2jax.__file__)\n"
             "print(np2jax.catalog.__file__)\n"
             "print(importlib.resources.files('np2jax.rules.catalog'))\n"
             "print(len(np2jax.catalog.rule_docs()))\n")
    run = _run([_python(venv), "-c", probe], env=_clean_env(), cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    package, catalog, rules_dir, count = run.stdout.split("\n")[:4]
    for path in (package, catalog, rules_dir):
        assert _inside(path, venv), f"{path} is not inside the fresh venv {venv}"
        assert not _inside(path, ROOT), f"{path} comes from the checkout"
    assert int(count) == len(CODES)


def test_rule_lists_every_code(venv, tmp_path):
    run = _run([_np2jax(venv), "rule"], env=_clean_env(), cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    listed = sorted(line.split()[0] for line in run.stdout.splitlines() if line.strip())
    assert listed == CODES


def test_rule_prints_one_rule(venv, tmp_path):
    run = _run([_np2jax(venv), "rule", "NJ201"], env=_clean_env(), cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "NJ201" in run.stdout and "subscript-assignment" in run.stdout


def test_check_and_convert_run_from_the_wheel(venv, tmp_path):
    source = tmp_path / "inplace.py"
    source.write_text("import numpy as np\nx = np.zeros(3)\nx[0] = 1.0\n", encoding="utf-8")
    check = _run([_np2jax(venv), "check", source.name], env=_clean_env(), cwd=tmp_path)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "NJ201" in check.stdout
    convert = _run([_np2jax(venv), "convert", source.name, "--diff"], env=_clean_env(),
                   cwd=tmp_path)
    assert convert.returncode == 0, convert.stdout + convert.stderr  # everything converted
    assert "+x = jnp.zeros(3)" in convert.stdout  # the API table shipped and was read
    assert "+x = x.at[0].set(1.0)" in convert.stdout
