"""--jit on a tree of modules: a name is another module's only when the tree's import graph
says so (np2jax.tree.imports_of), and a function other modules import is judged on its own
body, whoever calls it (np2jax.jit.plan._judge_own)."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

from np2jax.api import Config, convert_paths
from np2jax.tree import imports_of
from np2jax.verify.compare import compare_values

JIT = Config(jit=True)

# two modules, each with its own `scale`, neither importing the other
FIRST = """
import numpy as np


def scale(x, k):
    return x * np.ones(k)


def main():
    return {"y": scale(np.arange(3.0), 3)}
"""

SECOND = """
import numpy as np


def scale(x, k):
    return x[:k] * 2.0


def run():
    return {"z": scale(np.arange(5.0), 2)}
"""

# a library module and the module that imports from it
OPS = """
import numpy as np


def spread(x, n):
    return np.outer(np.ones(n), x) / n


def _helper(x):
    return x + 1.0


def local():
    return {"h": _helper(np.ones(2))}
"""

APP = """
import numpy as np

from pkg.ops import spread


def main():
    _helper = np.arange(4.0)  # a local of the same name: not ops._helper
    return {"s": spread(_helper, 2), "t": spread([1.0, 2.0], n=3)}
"""


def _tree(root: Path, **modules: str) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    for name, text in modules.items():
        (root / "pkg" / f"{name}.py").write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def _convert(tmp_path: Path, **modules: str):
    source = _tree(tmp_path / "src", **modules)
    out = tmp_path / "out"
    run = convert_paths([source], JIT, out=out)
    return source, out, run


def _verdicts(run) -> dict:
    """(module file, function) -> "compiled" or the NJ502 message."""
    verdicts = {}
    for finding in run.changes + run.findings:
        if finding.code in ("NJ501", "NJ502"):
            key = (Path(finding.path).name, finding.message.split("`")[1])
            verdicts[key] = "compiled" if finding.code == "NJ501" else finding.message
    return verdicts


def _run(root: Path, module: str, function: str, package: bool = True):
    code = ("import pickle, sys; import numpy as np; sys.path.insert(0, sys.argv[1]); "
            f"from {'pkg.' if package else ''}{module} import {function}; "
            f"sys.stdout.buffer.write(pickle.dumps({{k: np.asarray(v) for k, v in {function}().items()}}))")
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, check=True)
    return pickle.loads(done.stdout)


def test_a_public_function_of_a_package_is_judged_on_its_own_body(tmp_path):
    """Its users and tests call it from outside the tree: the calls in its module do not
    decide (`mode` would be a constant for them: it is static from the body)."""
    ops = """
    import numpy as np


    def fill(x, mode=None):
        if mode == "zeros":
            return np.zeros(x.shape)
        return np.asarray(x) * 1.0


    def _private(x, scale):
        return np.asarray(x) * scale


    def run():
        return {"f": fill(np.ones(2)), "p": _private(np.ones(2), 2.0)}
    """
    _, out, run = _convert(tmp_path, ops=ops)
    verdicts = _verdicts(run)
    text = (out / "pkg" / "ops.py").read_text()
    assert verdicts[("ops.py", "fill")] == "compiled"
    assert '@functools.partial(jax.jit, static_argnames=("mode",))\ndef fill(' in text
    # private: its calls decide, and they pass a Python float for `scale`
    assert '@functools.partial(jax.jit, static_argnames=("scale",))\ndef _private(' in text


def test_a_same_named_function_of_another_module_does_not_block_compiling(tmp_path):
    """Two scripts side by side (no package), each with its own `scale` and the calls that
    show what it takes: neither imports the other, so each is compiled from its calls."""
    source = tmp_path / "src"
    source.mkdir()
    for name, text in (("first", FIRST), ("second", SECOND)):
        (source / f"{name}.py").write_text(textwrap.dedent(text).lstrip("\n"))
    out = tmp_path / "out"
    run = convert_paths([source], JIT, out=out)
    verdicts = _verdicts(run)
    assert verdicts[("first.py", "scale")] == "compiled"
    assert verdicts[("second.py", "scale")] == "compiled"
    first = (out / "first.py").read_text()
    assert '@functools.partial(jax.jit, static_argnames=("k",))\ndef scale(x, k):' in first
    second = (out / "second.py").read_text()
    assert '@functools.partial(jax.jit, static_argnames=("k",))\ndef scale(x, k):' in second
    assert compare_values("main()", _run(source, "first", "main", package=False),
                          _run(out, "first", "main", package=False)) is None
    assert compare_values("run()", _run(source, "second", "run", package=False),
                          _run(out, "second", "run", package=False)) is None


def test_a_function_another_module_imports_is_judged_on_its_own_body(tmp_path):
    source, out, run = _convert(tmp_path, ops=OPS, app=APP)
    verdicts = _verdicts(run)
    # no call in ops.py, imported by app.py: `n` is a shape, static from its body
    assert verdicts[("ops.py", "spread")] == "compiled"
    ops = (out / "pkg" / "ops.py").read_text()
    assert '@functools.partial(jax.jit, static_argnames=("n",))\ndef spread(x, n):' in ops
    # app.py's word `_helper` is a local, not an import: the private _helper keeps its
    # call-site verdict (`return x + 1.0` would be a Python number for a Python number in)
    assert verdicts[("ops.py", "_helper")] == "compiled"
    assert "@jax.jit\ndef _helper(x):" in ops
    assert compare_values("main()", _run(source, "app", "main"), _run(out, "app", "main")) is None


def test_an_imported_function_with_a_python_branch_on_a_parameter_names_it(tmp_path):
    ops = """
    import numpy as np


    def gate(x, level):
        if level > 0.5:
            return np.abs(x)
        return np.abs(x) * 2.0
    """
    app = """
    from pkg.ops import gate
    """
    _, _, run = _convert(tmp_path, ops=ops, app=app)
    verdict = _verdicts(run)[("ops.py", "gate")]
    assert "whether `level` can be static depends on its callers" in verdict


def test_imports_of_follows_the_import_graph():
    modules = {"pkg", "pkg.ops", "pkg.app", "pkg.sub", "pkg.sub.deep"}

    def imports(text, module="pkg.app", is_package=False):
        return imports_of(textwrap.dedent(text), module, is_package, modules)

    assert imports("from pkg.ops import spread, helper as h\n") == {"pkg.ops": {"spread", "helper"}}
    assert imports("from .ops import spread\n") == {"pkg.ops": {"spread"}}
    assert imports("from . import ops\n") == {"pkg": {"ops"}, "pkg.ops": None}
    assert imports("from .sub.deep import f\n") == {"pkg.sub.deep": {"f"}}
    assert imports("from ..ops import f\n", module="pkg.sub.deep") == {"pkg.ops": {"f"}}
    assert imports("from .deep import f\n", module="pkg.sub", is_package=True) == {
        "pkg.sub.deep": {"f"}}
    assert imports("from pkg.ops import *\n") == {"pkg.ops": ...}
    # `import pkg` reaches every module under it (pkg.ops.f)
    assert imports("import pkg.ops\n") == dict.fromkeys(modules)
    # modules outside the tree are not named; names looked up by string reach every module
    assert imports("import numpy as np\nfrom os import path\n") == {}
    assert imports("import importlib\nm = importlib.import_module('pkg.ops')\n") == \
        dict.fromkeys(modules)
    assert imports("from pkg import ops\ndef broken(:\n") == dict.fromkeys(modules)
    # no import statement, parsed or not: nothing imported (a large data module is not parsed)
    assert imports("def broken(:\n") == {}
    assert imports("X = [1, 2, 3]\n" * 1000) == {}


def test_an_imported_function_called_here_with_a_string_for_a_traced_parameter(tmp_path):
    ops = """
    import numpy as np


    def double(x, tag):
        return np.asarray(x) * 2.0


    def run():
        return {"a": double(np.ones(2), "first")}
    """
    app = """
    from pkg.ops import double
    """
    _, _, run = _convert(tmp_path, ops=ops, app=app)
    verdict = _verdicts(run)[("ops.py", "double")]
    assert "passes a string for `tag`" in verdict


def test_a_static_parameter_another_module_passes_an_array_stays_eager(tmp_path):
    """app.py passes `k = (x > 1).sum()` for `n`: a NumPy integer in NumPy, a 0-d JAX array
    once converted, which jax.jit cannot hash as a static argument (`TypeError: unhashable
    type` before this). `spread` stays eager, the finding naming `n`; `dtype` may stay
    static (no caller has a dtype as an array), so `fill`, given an array for `x` only,
    compiles with it."""
    ops = """
    import numpy as np


    def spread(x, n, dtype=None):
        return np.outer(np.ones(n, dtype=dtype), x) / n


    def fill(x, dtype=None):
        return np.zeros(3, dtype=dtype) + x
    """
    app = """
    import numpy as np

    from pkg import ops


    def main():
        x = np.arange(4.0)
        k = (x > 1).sum()
        return {"s": ops.spread(x, k), "t": ops.spread([1.0, 2.0], n=3, dtype=np.float32),
                "f": ops.fill(x[:3].sum(), dtype=np.float32)}
    """
    source, out, run = _convert(tmp_path, ops=ops, app=app)
    verdicts = _verdicts(run)
    assert "`n` would be a static argument" in verdicts[("ops.py", "spread")]
    assert "another module of the tree passes it a value that may be an array" \
        in verdicts[("ops.py", "spread")]
    assert verdicts[("ops.py", "fill")] == "compiled"
    text = (out / "pkg" / "ops.py").read_text()
    assert '@functools.partial(jax.jit, static_argnames=("dtype",))\ndef fill(x, dtype=None):' in text
    assert compare_values("main()", _run(source, "app", "main"), _run(out, "app", "main")) is None


DECO = """
import inspect
from functools import wraps

import numpy as np


def parameters_as_arrays(*names):
    def decorator(fn):
        @wraps(fn)
        def wrapper(*args, **kwargs):
            spec = inspect.getfullargspec(fn)
            args = [np.array(v) if k in names else v for k, v in zip(spec.args, args)]
            return fn(*args, **kwargs)
        return wrapper
    return decorator
"""


def test_a_function_decorated_by_another_modules_transparent_decorator_is_compiled(tmp_path):
    """pyrr's shape: the decorator is defined in utils.py and reached through a re-export
    (`from pkg.vec import *`, vec importing it from utils). jax.jit goes below it: the
    decorator converts the list first, the compiled function keeps its name, docstring and
    signature (the decorator reads it with inspect)."""
    vec = """
    import numpy as np

    from pkg.utils import parameters_as_arrays


    @parameters_as_arrays("v")
    def length(v):
        \"\"\"Euclidean length.\"\"\"
        return np.sqrt(np.sum(v * v, axis=-1))
    """
    mat = """
    import numpy as np

    from pkg.vec import *


    @parameters_as_arrays("m")
    def trace(m):
        return np.trace(m)
    """
    app = """
    import inspect

    import numpy as np

    from pkg.mat import trace
    from pkg.vec import length


    def total(v):
        return length(v) * 2.0


    def main():
        return {"l": length([3.0, 4.0]), "t": trace([[1.0, 2.0], [3.0, 4.0]]),
                "total": total(np.array([[3.0, 4.0], [6.0, 8.0]])),
                "interface": np.array([length.__name__ == "length",
                                       length.__doc__ == "Euclidean length.",
                                       list(inspect.signature(length).parameters) == ["v"]])}
    """
    source, out, run = _convert(tmp_path, utils=DECO, vec=vec, mat=mat, app=app)
    verdicts = _verdicts(run)
    assert verdicts[("vec.py", "length")] == "compiled"
    assert verdicts[("mat.py", "trace")] == "compiled"
    # the decorator of `length` runs at each call: inside a compiled `total` it would run
    # on tracers, so `total` stays eager
    assert verdicts[("app.py", "total")] != "compiled"
    assert '@parameters_as_arrays("v")\n@jax.jit\ndef length(v):' in (out / "pkg" / "vec.py").read_text()
    assert '@parameters_as_arrays("m")\n@jax.jit\ndef trace(m):' in (out / "pkg" / "mat.py").read_text()
    converted = _run(out, "app", "main")
    assert converted["interface"].all()
    assert compare_values("main()", _run(source, "app", "main"), converted) is None
    # converted again, the compiled functions are recognised as such: nothing changes
    again = convert_paths([out], JIT, out=tmp_path / "again")
    assert not [c for c in again.changes if c.code == "NJ501"]
    assert not [f for f in again.findings if f.code == "NJ502" and "length" in f.message]


def test_a_compiled_function_calls_compiled_functions_of_other_modules(tmp_path):
    """`vector.normalize(...)` through a module object, and `from pkg.vector3 import ...`,
    across a chain of three modules (each learns on a later pass that its callees compile):
    all compile, tracing their callees inline; a static argument of the callee is given a
    Python value (`vector.ones(3, dtype=...)`), and a caller passing an array for it stays
    eager, the finding naming the argument."""
    vector = """
    import numpy as np


    def normalize(v):
        return v / np.sqrt(np.sum(v * v, axis=-1, keepdims=True))


    def ones(n, dtype=None):
        return np.ones(n, dtype=dtype)
    """
    vector3 = """
    import numpy as np

    from pkg import vector


    def unit_cross(a, b):
        return vector.normalize(np.cross(a, b))


    def spread(a):
        return vector.ones(3, dtype=np.float64) * a


    def sized(a):
        return vector.ones(a.shape[0]) * a
    """
    app = """
    import numpy as np

    from pkg.vector3 import sized, spread, unit_cross


    def scaled_cross(a, b, k):
        return unit_cross(a, b) * k


    def main():
        return {"c": scaled_cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 2.0, 0.0]), 3.0),
                "s": spread(np.arange(3.0)), "z": sized(np.arange(4.0))}
    """
    source, out, run = _convert(tmp_path, vector=vector, vector3=vector3, app=app)
    verdicts = _verdicts(run)
    for key in [("vector.py", "normalize"), ("vector.py", "ones"), ("vector3.py", "unit_cross"),
                ("vector3.py", "spread"), ("vector3.py", "sized"), ("app.py", "scaled_cross")]:
        assert verdicts[key] == "compiled", key
    assert "@jax.jit\ndef unit_cross(a, b):\n    return vector.normalize(jnp.cross(" \
        in (out / "pkg" / "vector3.py").read_text()
    assert compare_values("main()", _run(source, "app", "main"), _run(out, "app", "main")) is None


def test_an_array_for_another_modules_static_argument_keeps_the_caller_eager(tmp_path):
    vector = """
    import numpy as np


    def ones(n, dtype=None):
        return np.ones(n, dtype=dtype)
    """
    app = """
    import numpy as np

    from pkg import vector


    def _first_ones(x):
        return vector.ones(x.argmax() + 1) * x[0]


    def main():
        return {"o": _first_ones(np.array([1.0, 3.0, 2.0]))}
    """
    source, out, run = _convert(tmp_path, vector=vector, app=app)
    verdicts = _verdicts(run)
    # app passes an array for `n`: `ones` is not compiled (n cannot be static)
    assert "another module of the tree passes it a value that may be an array" \
        in verdicts[("vector.py", "ones")]
    assert verdicts[("app.py", "_first_ones")] != "compiled"
    assert compare_values("main()", _run(source, "app", "main"), _run(out, "app", "main")) is None


def test_the_decorator_scan_parses_with_libcst_only_modules_that_may_define_one(monkeypatch):
    """--jit's scan of the tree's decorators (np2jax.engine.tree_jit_decorators) reads each
    file's ast, parsed once for the tree (Tree.syntax, shared with the import graph), and
    parses with libcst only the modules with a module-level `def` holding a `def`: not a
    module whose nested defs are methods, nor the one re-exporting the decorator (read from
    its ast), which still gives the re-exported name."""
    import ast

    import libcst

    from np2jax.engine import tree_jit_decorators
    from np2jax.files import InputFile, SourceText
    from np2jax.tree import Tree

    texts = {
        "pkg/__init__.py": "",
        "pkg/utils.py": textwrap.dedent(DECO),
        "pkg/vec.py": "from pkg.utils import parameters_as_arrays as as_arrays\n",
        "pkg/shapes.py": "import numpy as np\n\n\nclass Box:\n    def area(self, m):\n"
                         "        return np.prod(m)\n",
    }
    files = [InputFile(Path(p), Path(p)) for p in texts]
    tree = Tree.of(files, {Path(p): SourceText(t, "utf-8") for p, t in texts.items()})
    cst_parsed, ast_parsed = [], []

    def spy(parse, into):
        def parse_and_record(source, *args, **kwargs):
            into.append(source)
            return parse(source, *args, **kwargs)
        return parse_and_record

    monkeypatch.setattr(libcst, "parse_module", spy(libcst.parse_module, cst_parsed))
    monkeypatch.setattr(ast, "parse", spy(ast.parse, ast_parsed))
    assert tree_jit_decorators(tree) == {"pkg.utils.parameters_as_arrays": "factory",
                                         "pkg.vec.as_arrays": "factory"}
    assert cst_parsed == [texts["pkg/utils.py"]]
    tree.context(Path("pkg/shapes.py"), {})  # the import graph: no file parsed again
    assert sorted(ast_parsed) == sorted([texts["pkg/utils.py"], texts["pkg/vec.py"], texts["pkg/shapes.py"]])
