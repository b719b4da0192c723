"""The analysis computes libcst's metadata its own cheaper way (np2jax.syntax.fast: parents from
its own walk, in libcst's visiting order, qualified names asked of the scopes per node,
positions from one light code generation, the scope provider run without a MetadataWrapper
on stored names found by one walk). Each must say exactly what
libcst's provider says (over every fixture, the examples and a few of NumPy's own files),
and the findings and conversions must be the same either way."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import libcst as cst
import numpy
import pytest
from libcst.metadata import (
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    QualifiedNameSource,
    ScopeProvider,
)

from helpers import FIXTURES, ROOT
from np2jax.analysis import module as analysis_module
from np2jax.analysis.collect import Collector
from np2jax.syntax import fast, walk
from np2jax.syntax.field_order import FIELD_ORDER
from np2jax.config import Config
from np2jax.pipeline import process

NUMPY = Path(numpy.__file__).parent
FILES = [
    *sorted(FIXTURES.glob("*/*.in.py")),
    *sorted((ROOT / "examples").glob("**/*.py")),
    *(NUMPY / name for name in ("_core/_methods.py", "lib/_shape_base_impl.py",
                                "fft/_pocketfft.py", "polynomial/polyutils.py",
                                "lib/_index_tricks_impl.py", "random/tests/test_regression.py")),
]
IDS = [str(p.relative_to(NUMPY if p.is_relative_to(NUMPY) else ROOT)) for p in FILES]
# Windows line ends and a backslash continuation: the positions count lines as libcst does
EXTRA = {"crlf": "import numpy as np\r\n\r\nx = np.zeros(3)\r\nx[0] = \\\r\n  1\r\n",
         "cr": "import numpy as np\rx = np.ones(2)\r"}


def _syntax_only(metadata) -> dict:
    """libcst's metadata of every node but whitespace, newlines and comments, which the
    analysis neither walks into nor asks about."""
    return {node: value for node, value in metadata.items()
            if not isinstance(node, walk.WHITESPACE_NODES)}


def _libcst_metadata(module: cst.Module):
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    return (wrapper.resolve(ParentNodeProvider), wrapper.resolve(PositionProvider),
            wrapper.resolve(ScopeProvider), wrapper.resolve(QualifiedNameProvider))


def _scope_shape(scopes: dict) -> tuple[list, list]:
    """Each node's scope (numbered in order of appearance), and each scope told apart by its
    kind, its node, what it assigns (with how often each is read) and what it reads (with
    what each read may refer to)."""
    numbers: dict[int, int] = {}
    described = []
    nodes = []
    for node, scope in scopes.items():
        if id(scope) not in numbers:
            numbers[id(scope)] = len(numbers)
            described.append((type(scope).__name__, id(getattr(scope, "node", None)),
                              getattr(scope, "_assignment_count", None),
                              sorted((a.name, id(a.node), len(a.references))
                                     for a in getattr(scope, "assignments", ())),
                              sorted((id(a.node), sorted((r.name, id(getattr(r, "node", None)))
                                                         for r in a.referents))
                                     for a in getattr(scope, "accesses", ()))))
        nodes.append((id(node), numbers[id(scope)]))
    return nodes, described


TEXTS = [*(pytest.param(path.read_text(encoding="utf-8"), id=name)
           for path, name in zip(FILES, IDS)),
         *(pytest.param(text, id=name) for name, text in EXTRA.items())]


@pytest.mark.parametrize("text", TEXTS)
def test_metadata_is_libcst_s(text):
    module = cst.parse_module(text)
    parents, positions, scopes, qualified_names = _libcst_metadata(module)
    fast_scopes = fast.scopes_of(module)
    assert _scope_shape(fast_scopes) == _scope_shape(_syntax_only(scopes))
    collector = Collector(fast_scopes)
    collector.walk(module)
    assert collector.parents == _syntax_only(parents)
    for node in [module, *collector.parents]:  # the walk visits in libcst's order
        assert [id(c) for c in walk.children(node)] == [
            id(c) for c in node.children if not isinstance(c, walk.WHITESPACE_NODES)]
    fast_positions = fast.SourcePositions(module)
    positions = _syntax_only(positions)
    assert {node: fast_positions.start(node) for node in positions} == {
        node: (where.start.line, where.start.column) for node, where in positions.items()}
    lazy = {node: set(value() if callable(value) else value)  # LazyValue
            for node, value in qualified_names.items()}
    for node, expected in lazy.items():
        names = collector._names_of(node)
        # a name no import binds is not asked about: what libcst says of it (a builtin, a
        # local) then names no import and nothing under numpy or scipy
        assert names == expected or (names == set() and not any(
            n.source is QualifiedNameSource.IMPORT or n.name.split(".")[0] in ("numpy", "scipy")
            for n in expected)), (node, names, expected)


class _LibcstPositions:
    def __init__(self, module: cst.Module) -> None:
        self._positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)

    def start(self, node):
        start = self._positions[node].start
        return start.line, start.column


def _libcst_scopes(module: cst.Module):
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)


def _results(text: str, path: str, config: Config) -> list:
    results = []
    for rewrite in (False, True):
        result = process(text, config, path, rewrite=rewrite)
        results.append((result.converted, result.findings, result.changes, result.applied_keys,
                        result.mutators, result.tree_references))
    return results


# every rule's first fixture (all of them run in test_metadata_is_libcst_s), and the rest
ONE_PER_RULE = [(p, name) for p, name in zip(FILES, IDS) if p.parent.parent != FIXTURES
                or p == min(p.parent.glob("*.in.py"))]


@pytest.mark.parametrize("path", [p for p, _ in ONE_PER_RULE], ids=[n for _, n in ONE_PER_RULE])
def test_findings_are_the_same_with_libcst_providers(path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    configs = [Config(), Config(jit=True)]
    fast = [_results(text, str(path), config) for config in configs]
    monkeypatch.setattr(analysis_module, "SourcePositions", _LibcstPositions)
    monkeypatch.setattr(analysis_module, "scopes_of", _libcst_scopes)
    assert [_results(text, str(path), config) for config in configs] == fast


@pytest.mark.parametrize("path", [p for p, _ in ONE_PER_RULE], ids=[n for _, n in ONE_PER_RULE])
def test_the_public_twins_give_the_same_findings(path, monkeypatch):
    """NP2JAX_PUBLIC_LIBCST=1 (np2jax.syntax.fast): scopes through MetadataWrapper, positions
    from PositionProvider, children from `node.children`; nothing the user sees changes."""
    text = path.read_text(encoding="utf-8")
    configs = [Config(), Config(jit=True)]
    fast_results = [_results(text, str(path), config) for config in configs]
    monkeypatch.setattr(fast, "PUBLIC_ONLY", True)
    monkeypatch.setattr(walk, "_TABLE", {})
    monkeypatch.setattr(walk, "_FIELDS", {})
    module = cst.parse_module(text)
    assert fast.scopes_of(module).import_roots == fast._fast_scopes(module).import_roots
    assert [_results(text, str(path), config) for config in configs] == fast_results


def test_the_environment_variable_turns_the_public_twins_on():
    probe = "from np2jax.syntax import fast, walk; print(fast.PUBLIC_ONLY, bool(walk._TABLE))"
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           env={**os.environ, "NP2JAX_PUBLIC_LIBCST": value}).stdout.split()
            for value in ("1", "0")]
    assert runs == [["True", "False"], ["False", "True"]]


@pytest.mark.parametrize("name", ["ma/core.py", "_core/tests/test_nditer.py"])
def test_scopes_are_libcst_s_on_large_files(name):
    """Classes, decorators, comprehensions, lambdas and globals by the thousand."""
    module = cst.parse_module((NUMPY / name).read_text(encoding="utf-8"))
    assert _scope_shape(fast.scopes_of(module)) == \
        _scope_shape(_syntax_only(_libcst_scopes(module)))


def test_the_in_place_scope_walk_leaves_other_visitors_alone():
    """scopes_of swaps CSTNode.visit only while its own visitor runs, and the swapped visit
    hands any other visitor (a transformer in another thread, say) to libcst's."""
    original = cst.CSTNode.visit
    module = cst.parse_module("import numpy as np\nx = np.zeros(3)\n")
    fast.scopes_of(module)
    assert cst.CSTNode.visit is original

    class Rename(cst.CSTTransformer):
        def leave_Name(self, original_node, updated_node):
            return updated_node.with_changes(value=updated_node.value.upper())

    renamed = fast._visit_in_place(module, Rename())
    assert renamed.code == "import NUMPY as NP\nX = NP.ZEROS(3)\n"


@pytest.mark.parametrize("text", ["numpy = __import__('numpy')\nx = numpy.zeros(3)\n",
                                  "def scipy():\n    y = 1\n    return y\n"])
def test_a_module_binding_numpy_itself_has_every_name_resolved(text):
    """Names under a module-level `numpy` or `scipy` that is no import are qualified as
    numpy.* too: the analysis then asks the scopes about every name."""
    assert analysis_module._scopes(cst.parse_module(text)).import_roots is None


def test_import_roots_are_the_names_imports_bind():
    module = cst.parse_module("import numpy as np\nimport os.path\nfrom scipy import linalg as la, fft\n"
                              "def f():\n    from numpy import zeros\n    from math import *\n")
    assert fast.scopes_of(module).import_roots == {"np", "os", "la", "fft", "zeros"}


def _concrete_node_classes() -> list[type]:
    found, stack = set(), [cst.CSTNode]
    while stack:
        for sub in stack.pop().__subclasses__():
            found.add(sub)
            stack.append(sub)
    return sorted((k for k in found if not inspect.isabstract(k)), key=lambda k: k.__name__)


@pytest.mark.parametrize("kind", _concrete_node_classes(), ids=lambda k: k.__name__)
def test_the_field_order_is_the_order_libcst_visits_them_in(kind):
    """For every node class of the installed libcst, not only those in the fixtures: the
    fields `children` reads (np2jax.syntax.field_order), in the order `_visit_and_replace_children` visits them."""
    source = inspect.getsource(kind._visit_and_replace_children)
    visited = tuple(dict.fromkeys(re.findall(r'visit_\w+\(\s*self,\s*"(\w+)"', source)))
    assert FIELD_ORDER.get(kind.__name__, ()) == visited
