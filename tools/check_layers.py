"""The layering contract of np2jax, checked over the import graph of its sources.

    python tools/check_layers.py      # prints the layers and any violation; exit 1 on one

Layers, lowest first; a module may import its own layer and those below, never one above:

    foundation  catalog, config, files, findings, tree, _version: data and plain Python
    syntax      np2jax.syntax: libcst helpers
    analysis    np2jax.analysis: facts about values
    jit         np2jax.jit: compilation plans on those facts
    rules       np2jax.rules: one module per catalog entry
    pipeline    pipeline, rewrite, notebooks, edits: one source text through the rules
    engine      engine, cache: files, workers, the cache
    api         api and the package root: the public facade
    cli         cli, report, html_report: the command line and its output

np2jax.verify stands alone: it imports only itself and the foundation (no libcst, no
analysis), so a hand-written port can be verified without the converter. np2jax.apigen and
np2jax.apiproof are developer tools nothing imports. Every import counts, function-local ones included (they
defer loading, they do not change who depends on whom); imports under `if TYPE_CHECKING:`
do not (annotations only). The graph must have no cycle between modules.

tests/test_layering.py runs this check with the rest of the suite.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "np2jax"
LAYERS = ["foundation", "syntax", "analysis", "jit", "rules", "pipeline", "engine", "api", "cli"]
# module (or package prefix) -> layer; the longest matching prefix wins
PLACES = {
    "np2jax._version": "foundation", "np2jax.catalog": "foundation", "np2jax.config": "foundation",
    "np2jax.files": "foundation", "np2jax.findings": "foundation", "np2jax.tree": "foundation",
    "np2jax.syntax": "syntax", "np2jax.analysis": "analysis", "np2jax.jit": "jit",
    "np2jax.rules": "rules",
    "np2jax.pipeline": "pipeline", "np2jax.rewrite": "pipeline", "np2jax.notebooks": "pipeline",
    "np2jax.edits": "pipeline",
    "np2jax.engine": "engine", "np2jax.cache": "engine",
    "np2jax.api": "api", "np2jax": "api", "np2jax.__main__": "cli",
    "np2jax.cli": "cli", "np2jax.report": "cli", "np2jax.html_report": "cli",
    "np2jax.verify": "verify", "np2jax.apigen": "tool", "np2jax.apiproof": "tool",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        place = PLACES.get(".".join(parts[:end]))
        if place is not None:
            return place
    raise KeyError(f"{module} has no layer in tools/check_layers.py: add it to PLACES")


def _type_checking_blocks(tree: ast.Module) -> set[int]:
    """The ids of the import nodes under `if TYPE_CHECKING:`."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found.update(id(n) for statement in node.body for n in ast.walk(statement))
    return found


def imports_of(path: Path, modules: set[str]) -> dict[str, int]:
    """The np2jax modules `path` imports -> the line of the first import."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_blocks(tree)
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            # `from np2jax.analysis import facts` imports the module np2jax.analysis.facts
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        for target in targets:
            if target.split(".")[0] == "np2jax" and target != name:
                while target not in modules and "." in target:
                    target = target.rpartition(".")[0]
                found.setdefault(target, node.lineno)
    return found


def graph() -> dict[str, dict[str, int]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    return {name: imports_of(path, modules) for name, path in sorted(files.items())}


def violations(edges: dict[str, dict[str, int]]) -> list[str]:
    problems = []
    for module, imported in edges.items():
        place = layer_of(module)
        for target, line in imported.items():
            target_place = layer_of(target)
            where = f"{module} (line {line}) imports {target}"
            if place == "verify":
                if target_place not in ("verify", "foundation"):
                    problems.append(f"{where}: np2jax.verify imports only itself and the foundation")
            elif target_place == "verify":
                if place not in ("cli", "api", "engine"):
                    problems.append(f"{where}: only the engine and above run the verifier")
            elif place == "tool" or target_place == "tool":
                if not (place == target_place and _tool(module) == _tool(target)):
                    problems.append(f"{where}: np2jax.apigen and np2jax.apiproof are developer tools")
            elif LAYERS.index(target_place) > LAYERS.index(place):
                problems.append(f"{where}: {place} must not import {target_place} (a layer above)")
    return problems + [f"import cycle: {' -> '.join(cycle)}" for cycle in cycles(edges)]


def _tool(module: str) -> str:
    """The developer tool a module belongs to: np2jax.apiproof for np2jax.apiproof.grid."""
    return ".".join(module.split(".")[:2])


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in edges:
        if node not in index:
            visit(node)
    return [_cycle_in(component, edges) for component in components]


def _cycle_in(component: list[str], edges) -> list[str]:
    """A shortest path from the component's first module back to itself."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in edges.get(node, {}):
            if target == start:
                return paths[node] + [start]
            if target in members and target not in paths:
                paths[target] = paths[node] + [target]
                queue.append(target)
    return component


def main() -> int:
    edges = graph()
    counts = {layer: 0 for layer in [*LAYERS, "verify", "tool"]}
    for module in edges:
        counts[layer_of(module)] += 1
    print("layers: " + ", ".join(f"{layer} ({n})" for layer, n in counts.items()))
    problems = violations(edges)
    for problem in problems:
        print(f"  {problem}")
    print(f"{len(edges)} modules, {sum(map(len, edges.values()))} imports between them: "
          f"{len(problems) or 'no'} violation{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
