"""--interface numpy (NJ105): a converted library keeps a NumPy interface for its callers
outside the converted tree (its users, its test suite), while its own modules keep handing
each other JAX arrays."""

from __future__ import annotations

import inspect
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import invoke
from np2jax.api import Config, convert_paths, convert_source
from np2jax.config import ConfigError, load_config
from np2jax.rules.numpy_interface import DECORATOR, MARKER
from np2jax.verify.compare import compare_values

# the library: pkg/geometry.py (public functions and a class) and pkg/frames.py, which
# writes into what geometry returns (converted to `.at[]`: it relies on getting JAX arrays)
GEOMETRY = """
import numpy as np


def rotation(theta):
    c, s = np.cos(theta), np.sin(theta)
    R = np.eye(2)
    R[0, 0], R[0, 1], R[1, 0], R[1, 1] = c, -s, s, c
    return R


def norm(v):
    return np.sqrt(np.sum(np.square(v)))


def bounds(points):
    points = np.asarray(points, dtype=float)
    return points.min(axis=0), points.max(axis=0)


class Path2D:
    def __init__(self, points):
        self.points = np.asarray(points, dtype=float)

    @property
    def length(self):
        return np.sum(np.sqrt(np.sum(np.diff(self.points, axis=0) ** 2, axis=1)))

    def turned(self, theta):
        return Path2D(self.points @ rotation(theta).T)
"""

FRAMES = """
import numpy as np

from pkg.geometry import rotation


def flipped(theta):
    R = rotation(theta)
    R[1] = -R[1]
    return R
"""

# a module with no function of its own: its code at import writes into a result (`.at[]`)
TABLES = """
import numpy as np

from pkg.geometry import rotation

SHEAR = rotation(0.0)
SHEAR[0, 1] = 0.5
"""

# code outside the converted tree: the library's users (here its test code)
USER = """
import pickle
import sys

import numpy as np

from pkg import geometry
from pkg.frames import flipped
from pkg.tables import SHEAR

R = geometry.rotation(0.5)
R[0, 0] = 2.0                              # writes into a result
lo, hi = geometry.bounds([[0.0, 1.0], [2.0, -1.0]])
same = "same" if lo[:1] == [0.0] else "differs"   # `a == b` of an array and a list in an `if`
shifted = hi + [1.0, 1.0]                  # an array plus a list
n = geometry.norm([3.0, 4.0])
path = geometry.Path2D([[0.0, 0.0], [3.0, 4.0]]).turned(0.25)
F = flipped(0.5)
F[0, 1] = 9.0
out = {"R": R, "same": same, "shifted": shifted, "n": n, "n_type": type(n).__name__,
       "length": path.length, "length_type": type(path.length).__name__,
       "points": path.points, "F": F, "shear": np.asarray(SHEAR), "types": [type(v).__name__ for v in (R, lo, hi, F)]}
sys.stdout.buffer.write(pickle.dumps(out))
"""


def _library(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    for name, text in (("geometry", GEOMETRY), ("frames", FRAMES), ("tables", TABLES)):
        (root / "pkg" / f"{name}.py").write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def _run_user(tree: Path) -> subprocess.CompletedProcess:
    script = tree.parent / f"user_of_{tree.name}.py"
    script.write_text(USER)
    return subprocess.run([sys.executable, str(script)], capture_output=True,
                          cwd=tree, env={"PYTHONPATH": str(tree), "JAX_PLATFORMS": "cpu"})


def _convert(tmp_path: Path, interface: str):
    source = _library(tmp_path / "src")
    out = tmp_path / f"out-{interface}"
    run = convert_paths([source], Config(interface=interface), out=out)
    return source, out, run


def test_outside_callers_get_what_numpy_gave_and_the_tree_keeps_jax(tmp_path):
    source, out, run = _convert(tmp_path, "numpy")
    geometry = (out / "pkg" / "geometry.py").read_text()
    frames = (out / "pkg" / "frames.py").read_text()
    # the in-tree caller was converted assuming JAX arrays from rotation(): `.at[]`
    assert "R = R.at[1].set(-R[1])" in frames
    tables = (out / "pkg" / "tables.py").read_text()
    assert "SHEAR = SHEAR.at[0, 1].set(0.5)" in tables
    assert all(f'{MARKER} = "pkg"' in text for text in (geometry, frames, tables))
    assert DECORATOR not in tables  # no function: the marker only
    for name in ("rotation", "norm", "bounds", "turned", "length"):
        assert f"@{DECORATOR}\n    def {name}(" in geometry or f"@{DECORATOR}\ndef {name}(" in geometry
    assert f"@property\n    @{DECORATOR}\n    def length" in geometry
    assert "def __init__(self, points):" in geometry and f"@{DECORATOR}\n    def __init__" not in geometry
    listed = [c for c in run.changes if c.code == "NJ105"]
    assert len(listed) == 2  # one a file, naming its functions
    assert "`rotation`, `norm`, `bounds`, `Path2D.length`, `Path2D.turned`" in next(
        c.message for c in listed if c.path.endswith("geometry.py"))
    original, converted = _run_user(source), _run_user(out)
    assert original.returncode == 0, original.stderr.decode()
    assert converted.returncode == 0, converted.stderr.decode()
    before, after = pickle.loads(original.stdout), pickle.loads(converted.stdout)
    assert after["types"] == ["ndarray"] * 4 and after["n_type"] == after["length_type"] == "float64"
    assert compare_values("user", before, after) is None


def test_without_the_option_the_same_callers_meet_jax_arrays(tmp_path):
    source, out, run = _convert(tmp_path, "jax")
    assert DECORATOR not in (out / "pkg" / "geometry.py").read_text()
    assert not [c for c in run.changes if c.code == "NJ105"]
    converted = _run_user(out)
    assert converted.returncode != 0  # the write into the result is refused
    assert b"immutable" in converted.stderr or b"does not support item assignment" in converted.stderr


LIBRARY = '''
import numpy as np


def scaled(x, k):
    """Scale x by k."""
    return np.asarray(x, dtype=float) * k


def total(x):
    return np.sum(x)


def pair(x):
    return np.cumsum(x), {"n": 3, "max": np.max(x)}
'''


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """The converted library as the module `lib_pkg.lib`, imported in this process, and a
    second module of the same tree (it carries the tree's marker), `lib_pkg.inside`."""
    import importlib

    root = tmp_path_factory.mktemp("interface")
    (root / "lib_pkg").mkdir()
    (root / "lib_pkg" / "__init__.py").write_text("")
    converted = convert_source(LIBRARY, Config(interface="numpy")).converted
    (root / "lib_pkg" / "lib.py").write_text(converted.replace('"__main__"', '"lib_pkg"'))
    (root / "lib_pkg" / "inside.py").write_text(
        f'{MARKER} = "lib_pkg"\n\nfrom lib_pkg import lib\n\n\ndef call(f, *args):\n'
        "    return f(*args)\n")
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("lib_pkg.lib"), importlib.import_module("lib_pkg.inside")
    finally:
        sys.path.remove(str(root))
        for name in ("lib_pkg", "lib_pkg.lib", "lib_pkg.inside"):
            sys.modules.pop(name, None)


def test_the_decorator_gives_numpy_outside_and_jax_inside(library):
    import jax
    import numpy as np

    lib, inside = library
    outside = lib.scaled([1.0, 2.0], 2.0)
    assert type(outside) is np.ndarray and outside.flags.writeable
    outside[0] = 5.0  # a copy: writable
    assert isinstance(inside.call(lib.scaled, [1.0, 2.0], 2.0), jax.Array)
    total = lib.total(np.arange(4.0))
    assert type(total) is np.float64 and total == 6.0  # a 0-d result: NumPy's scalar
    assert isinstance(inside.call(lib.total, np.arange(4.0)), jax.Array)
    running, info = lib.pair(np.arange(3.0))
    assert type(running) is np.ndarray and type(info["max"]) is np.float64 and info["n"] == 3
    assert type(info["n"]) is int  # other values as they are


def test_values_jax_traces_pass_through(library):
    import jax
    import jax.numpy as jnp

    lib, _ = library
    compiled = jax.jit(lambda x: lib.scaled(x, 3.0) + lib.total(x))
    result = compiled(jnp.arange(3.0))  # traced from outside the tree: tracers pass through
    assert isinstance(result, jax.Array) and result.tolist() == [3.0, 6.0, 9.0]
    assert jax.vmap(lib.total)(jnp.ones((2, 3))).tolist() == [3.0, 3.0]
    assert jax.grad(lambda x: lib.total(x * x))(jnp.arange(3.0)).tolist() == [0.0, 2.0, 4.0]


def test_the_decorated_function_keeps_its_name_doc_and_signature(library):
    lib, _ = library
    assert lib.scaled.__name__ == "scaled" and lib.scaled.__doc__ == "Scale x by k."
    assert str(inspect.signature(lib.scaled)) == "(x, k)"


def test_converting_the_converted_library_again_changes_nothing():
    converted = convert_source(LIBRARY, Config(interface="numpy")).converted
    again = convert_source(converted, Config(interface="numpy"))
    assert again.converted == converted
    assert converted.count(f"def {DECORATOR}(") == 1


def test_the_option_from_pyproject_and_the_command_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.np2jax]\ninterface = "numpy"\n')
    assert load_config(tmp_path).interface == "numpy"
    (tmp_path / "pyproject.toml").write_text('[tool.np2jax]\ninterface = "torch"\n')
    with pytest.raises(ConfigError, match="interface must be one of"):
        load_config(tmp_path)
    (tmp_path / "pyproject.toml").unlink()
    source = tmp_path / "lib.py"
    source.write_text(LIBRARY)
    result = invoke("convert", source, "--diff", "--interface", "numpy", "--no-cache")
    assert f"+@{DECORATOR}\n def total(x):" in result.output
    assert "NJ105" in result.output
    assert DECORATOR not in invoke("convert", source, "--diff", "--no-cache").output


OPS = """
import numpy as np


def normalize(v):
    v /= v.sum()


def clip_negative(x):
    x[x < 0] = 0.0
    return x


def fresh(n):
    out = np.zeros(n)
    out[0] = 1.0
    return out
"""

OPS_USER = """
import pickle
import sys

import numpy as np

from pkg.ops import clip_negative, fresh, normalize

p = np.array([1.0, 3.0])
normalize(p)
q = np.array([-1.0, 2.0])
r = clip_negative(q)
f = fresh(3)
f[1] = 2.0
sys.stdout.buffer.write(pickle.dumps({"p": p, "q": q, "same": r is q, "f": f}))
"""


def test_arguments_the_library_writes_stay_the_callers_arrays(tmp_path):
    """A write into an argument is left in place on NumPy (NJ209/NJ201 say so), and the
    interface hands back a NumPy argument as the same object: the caller sees the write."""
    root = tmp_path / "src"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "ops.py").write_text(textwrap.dedent(OPS).lstrip("\n"))
    out = tmp_path / "out"
    run = convert_paths([root], Config(interface="numpy"), out=out)
    assert {f.code for f in run.findings} == {"NJ209", "NJ203", "NJ201"}
    results = []
    for tree in (root, out):
        script = tree / "user.py"
        script.write_text(OPS_USER)
        done = subprocess.run([sys.executable, str(script)], capture_output=True, cwd=tree,
                              env={"PYTHONPATH": str(tree), "JAX_PLATFORMS": "cpu"})
        assert done.returncode == 0, done.stderr.decode()
        results.append(pickle.loads(done.stdout))
    assert results[1]["same"] is True
    assert compare_values("user", results[0], results[1]) is None
