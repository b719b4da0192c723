"""The layering of the package: cli -> api -> engine -> pipeline (issue 15). A module only
imports the layers below it: the engine never the API or the CLI, the pipeline (and what
it uses) never the engine."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "np2jax"
LAYERS = ["np2jax.cli", "np2jax.api", "np2jax.engine", "np2jax.pipeline"]
# Who may import each layer (besides the layer above it): the package root's lazy facade.
ALSO_ALLOWED = {"np2jax.api": {"np2jax"}, "np2jax.cli": {"np2jax.__main__"}}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every np2jax module a file imports, at the top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name == "np2jax" or name.startswith("np2jax.")}


MODULES = {module_name(p): imported(p) for p in sorted(PACKAGE.rglob("*.py"))}


@pytest.mark.parametrize("layer", LAYERS)
def test_only_the_layer_above_imports_a_layer(layer):
    above = LAYERS[LAYERS.index(layer) - 1] if LAYERS.index(layer) > 0 else None
    allowed = {above, layer} | ALSO_ALLOWED.get(layer, set())
    if layer == "np2jax.pipeline":  # the pipeline is the engine's: anything below may use it
        allowed |= {m for m in MODULES if m not in LAYERS}
    importers = {m for m, names in MODULES.items() if layer in names} - allowed
    assert not importers, f"{layer} is imported from above its layer's neighbour by {importers}"


def test_nothing_below_imports_anything_above():
    upper = set(LAYERS[:3])  # cli, api, engine
    for module, names in MODULES.items():
        if module not in LAYERS and module not in ("np2jax", "np2jax.__main__"):
            assert not names & upper, f"{module} imports {names & upper}"
    assert MODULES["np2jax.engine"] & {"np2jax.api", "np2jax.cli"} == set()
    assert MODULES["np2jax.pipeline"] & upper == set()
    assert "np2jax.engine" in MODULES["np2jax.api"]  # the facade is built on the engine
