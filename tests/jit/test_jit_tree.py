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


def helper(x):
    return x + 1.0


def local():
    return {"h": helper(np.ones(2))}
"""

APP = """
import numpy as np

from pkg.ops import spread


def main():
    helper = np.arange(4.0)  # a local of the same name: not ops.helper
    return {"s": spread(helper, 2), "t": spread([1.0, 2.0], n=3)}
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


def _run(root: Path, module: str, function: str):
    code = ("import pickle, sys; import numpy as np; sys.path.insert(0, sys.argv[1]); "
            f"from pkg.{module} import {function}; "
            f"sys.stdout.buffer.write(pickle.dumps({{k: np.asarray(v) for k, v in {function}().items()}}))")
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, check=True)
    return pickle.loads(done.stdout)


def test_a_same_named_function_of_another_module_does_not_block_compiling(tmp_path):
    source, out, run = _convert(tmp_path, first=FIRST, second=SECOND)
    verdicts = _verdicts(run)
    assert verdicts[("first.py", "scale")] == "compiled"
    assert verdicts[("second.py", "scale")] == "compiled"
    first = (out / "pkg" / "first.py").read_text()
    assert '@functools.partial(jax.jit, static_argnames=("k",))\ndef scale(x, k):' in first
    assert compare_values("main()", _run(source, "first", "main"), _run(out, "first", "main")) is None
    assert compare_values("run()", _run(source, "second", "run"), _run(out, "second", "run")) is None


def test_a_function_another_module_imports_is_judged_on_its_own_body(tmp_path):
    source, out, run = _convert(tmp_path, ops=OPS, app=APP)
    verdicts = _verdicts(run)
    # no call in ops.py, imported by app.py: `n` is a shape, static from its body
    assert verdicts[("ops.py", "spread")] == "compiled"
    ops = (out / "pkg" / "ops.py").read_text()
    assert '@functools.partial(jax.jit, static_argnames=("n",))\ndef spread(x, n):' in ops
    # app.py's word `helper` is a local, not an import: helper keeps its call-site verdict
    assert verdicts[("ops.py", "helper")] == "compiled"
    assert "@jax.jit\ndef helper(x):" in ops
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
    assert imports("def broken(:\n") == dict.fromkeys(modules)


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
