"""The layering contract (tools/check_layers.py): no module imports a layer above its own,
np2jax.verify stands alone, and the import graph has no cycle."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from helpers import ROOT

_spec = importlib.util.spec_from_file_location("check_layers", ROOT / "tools" / "check_layers.py")
check_layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_layers)


def test_the_package_keeps_its_layers():
    assert check_layers.violations(check_layers.graph()) == []


def test_every_module_has_a_layer():
    for module in check_layers.graph():
        check_layers.layer_of(module)  # raises for a module nobody placed


def test_an_upward_import_and_a_cycle_are_caught():
    edges = {"np2jax.analysis.values": {"np2jax.rules.base": 3},
             "np2jax.rules.base": {"np2jax.syntax.walk": 1},
             "np2jax.syntax.walk": {"np2jax.syntax.fast": 2},
             "np2jax.syntax.fast": {"np2jax.syntax.walk": 4},
             "np2jax.verify.core": {"np2jax.analysis.values": 9}}
    found = check_layers.violations(edges)
    assert any("np2jax.analysis.values (line 3) imports np2jax.rules.base" in p for p in found)
    assert any("np2jax.verify.core (line 9)" in p for p in found)
    assert "import cycle: np2jax.syntax.fast -> np2jax.syntax.walk -> np2jax.syntax.fast" in found


def test_function_local_imports_count_and_type_checking_ones_do_not(tmp_path, monkeypatch):
    package = tmp_path / "np2jax"
    (package / "syntax").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "syntax" / "__init__.py").write_text("")
    (package / "syntax" / "walk.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from np2jax import api\n"
        "def f():\n    from np2jax.rules import base\n")
    (package / "api.py").write_text("")
    (package / "rules").mkdir()
    (package / "rules" / "__init__.py").write_text("")
    (package / "rules" / "base.py").write_text("")
    monkeypatch.setattr(check_layers, "PACKAGE", package)
    edges = check_layers.graph()
    assert edges["np2jax.syntax.walk"] == {"np2jax.rules.base": 5}


def test_the_command_prints_the_layers():
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "check_layers.py")],
                         capture_output=True, text=True)
    assert run.stdout.startswith("layers: foundation (")
    assert "modules," in run.stdout.splitlines()[-1]
