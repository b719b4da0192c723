"""Converting a tree: a function that changes its argument in place (NJ209) is rewritten
with all its calls in other modules, or not at all."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path


from np2jax.api import Config, convert_paths
from np2jax.verify.compare import compare_values

OPS = """
import numpy as np


def normalize(v):
    v /= v.sum()


def clip_negative(m):
    m[m < 0] = 0.0
"""

APP = """
import numpy as np

from pkg.ops import normalize
from . import ops


def main():
    p = np.arange(1.0, 5.0)
    normalize(p)
    q = np.linspace(-1.0, 1.0, 5)
    ops.clip_negative(q)
    return {"p": p, "q": q}
"""


def _tree(root: Path, **modules: str) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    for name, text in modules.items():
        (root / "pkg" / f"{name}.py").write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def _run_main(root: Path):
    """pkg.app.main() of the tree at root, in its own interpreter, as NumPy arrays."""
    code = ("import pickle, sys; import numpy as np; sys.path.insert(0, sys.argv[1]); "
            "from pkg.app import main; "
            "sys.stdout.buffer.write(pickle.dumps({k: np.asarray(v) for k, v in main().items()}))")
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, check=True)
    return pickle.loads(done.stdout)


def _convert(tmp_path: Path, **modules: str):
    source = _tree(tmp_path / "src", **modules)
    out = tmp_path / "out"
    run = convert_paths([source], Config(), out=out)
    return source, out, run


def test_a_function_and_its_calls_in_other_modules_are_rewritten_together(tmp_path):
    source, out, run = _convert(tmp_path, ops=OPS, app=APP)
    ops = (out / "pkg" / "ops.py").read_text()
    app = (out / "pkg" / "app.py").read_text()
    assert "    v /= v.sum()\n    return v\n" in ops
    assert "    m = jnp.where(m < 0, 0.0, m).astype(m.dtype)\n    return m\n" in ops
    assert "p = normalize(p)" in app and "q = ops.clip_negative(q)" in app
    assert run.findings == []
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


def test_one_call_that_cannot_assign_back_stops_the_rewrite_everywhere(tmp_path):
    other = """
    import numpy as np

    from pkg.ops import clip_negative


    def run():
        r = np.linspace(-2.0, 2.0, 5)
        alias = r
        clip_negative(r)
        return alias
    """
    source, out, run = _convert(tmp_path, ops=OPS, app=APP, other=other)
    ops = (out / "pkg" / "ops.py").read_text()
    app = (out / "pkg" / "app.py").read_text()
    assert "    m[m < 0] = 0.0\n" in ops and "return m" not in ops  # clip_negative left as it was
    assert "    ops.clip_negative(q)\n" in app
    assert "p = normalize(p)" in app  # normalize has no such caller: still rewritten
    assert any(f.code == "NJ209" and "clip_negative" in f.message for f in run.findings)


def test_a_suppressed_call_in_another_module_drops_the_whole_rewrite(tmp_path):
    app = APP.replace("    normalize(p)\n", "    normalize(p)  # np2jax: ignore[NJ209]\n")
    source, out, run = _convert(tmp_path, ops=OPS, app=app)
    ops = (out / "pkg" / "ops.py").read_text()
    assert "    v /= v.sum()\n\n" in ops and "return v" not in ops
    assert "    normalize(p)  # np2jax: ignore[NJ209]\n" in (out / "pkg" / "app.py").read_text()


def test_a_function_only_mentioned_elsewhere_is_not_rewritten(tmp_path):
    app = """
    import numpy as np


    def main():
        # normalize is documented here, but never called
        return {"p": np.ones(2)}
    """
    source, out, run = _convert(tmp_path, ops=OPS, app=app)
    assert "return v" not in (out / "pkg" / "ops.py").read_text()


GRID = """
import numpy as np

KEPT = []


def readings(n):
    h = np.arange(n * 4.0)
    return np.where(h % 3 == 0, np.nan, h).reshape(n, 4)


def predict(A, m):
    return A @ m


def keep(m):
    KEPT.append(m)
    return m.sum()


def shared():
    return KEPT[0]
"""

READER = """
import numpy as np

from pkg.grid import readings
from . import grid


def main():
    pm = readings(3)
    np.nan_to_num(pm, copy=False)
    A = np.eye(4) * 0.5
    means = np.zeros((3, 4))
    means[0] = 1.0
    for t in range(1, 3):
        means[t] = grid.predict(A, means[t - 1])
    return {"pm": pm, "means": means}
"""


def test_functions_of_other_modules_returning_fresh_arrays_or_only_reading(tmp_path):
    """The effects of another module's functions, by their import: a write into the
    result of one whose every return is a new JAX array converts, and so do writes into
    an array passed to one that only reads it."""
    source, out, run = _convert(tmp_path, grid=GRID, app=READER)
    app = (out / "pkg" / "app.py").read_text()
    assert "pm = jnp.nan_to_num(pm)" in app
    assert "means = means.at[t].set(grid.predict(A, means[t - 1]))" in app
    assert run.findings == []
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


def test_functions_of_other_modules_that_keep_their_argument_or_return_a_kept_array(tmp_path):
    app = """
    import numpy as np

    from pkg.grid import keep, shared


    def main():
        a = np.ones(2)
        keep(a)
        a[1] = 3.0
        b = shared()
        b[0] = 5.0
        return {"a": a, "b": b}
    """
    source, out, run = _convert(tmp_path, grid=GRID, app=app)
    converted = (out / "pkg" / "app.py").read_text()
    assert "    a[1] = 3.0\n" in converted and "    b[0] = 5.0\n" in converted
    messages = sorted(f.message for f in run.findings if f.code == "NJ201")
    assert "`a` is also reachable through `keep(a)`" in messages[0]
    assert "`b` may share memory with `shared()`" in messages[1]


HEAT = """
import numpy as np


def step(u, r):
    u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return u
"""

ROD = """
import numpy as np

from pkg.heat import step


def main():
    u = np.full(9, 20.0)
    u[3:6] = 180.0
    for _ in range(5):
        u = step(u, 0.25)
    v = np.zeros(9)
    v[4] = 1.0
    step(v, 0.1)
    return {"u": u, "v": v}
"""


def test_a_function_returning_the_argument_it_writes_with_calls_rebinding_it_elsewhere(tmp_path):
    """`u = step(u, r)` in another module needs no rewrite; a bare `step(v, r)` assigns."""
    source, out, run = _convert(tmp_path, heat=HEAT, app=ROD)
    heat = (out / "pkg" / "heat.py").read_text()
    app = (out / "pkg" / "app.py").read_text()
    assert "    u = u.at[1:-1].set(" in heat and heat.endswith("    return u\n")
    assert "        u = step(u, 0.25)\n" in app and "    v = step(v, 0.1)\n" in app
    assert run.findings == []
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


def test_a_call_elsewhere_binding_the_result_to_another_name_stops_the_rewrite(tmp_path):
    other = """
    import numpy as np

    from pkg.heat import step


    def run():
        u = np.ones(5)
        w = step(u, 0.5)
        return u, w
    """
    source, out, run = _convert(tmp_path, heat=HEAT, app=ROD, other=other)
    heat = (out / "pkg" / "heat.py").read_text()
    assert "    u[1:-1] = u[1:-1] + r" in heat
    assert any(f.code == "NJ209" and "step" in f.message for f in run.findings)


def test_a_function_returning_something_else_used_elsewhere_keeps_its_interface(tmp_path):
    ops = """
    import numpy as np


    def scale_and_total(v, k):
        v[:] *= k
        return float(v.sum())
    """
    app = """
    import numpy as np

    from pkg.ops import scale_and_total


    def main():
        p = np.ones(4)
        total = scale_and_total(p, 3.0)
        return {"p": p, "total": total}
    """
    source, out, run = _convert(tmp_path, ops=ops, app=app)
    assert "    return float(v.sum())\n" in (out / "pkg" / "ops.py").read_text()
    assert "    total = scale_and_total(p, 3.0)\n" in (out / "pkg" / "app.py").read_text()
    assert any(f.code == "NJ209" and "it keeps its interface" in f.message for f in run.findings)


SHAPES = """
import numpy as np


def create_scaled(n, k):
    return np.arange(float(n)) * k
"""

OBJECTS = """
import numpy as np

from pkg import shapes


class Vector(np.ndarray):
    def __new__(cls, n=3):
        obj = shapes.create_scaled(n, 2.0)
        obj = obj.view(cls)
        return obj


def main():
    v = Vector()
    v[0] = 9.0
    return {"v": np.asarray(v), "name": type(v).__name__}
"""


def test_a_new_array_from_another_module_is_copied_where_only_numpy_will_do(tmp_path):
    """`obj.view(cls)` needs a NumPy array; `obj` comes from another module's function whose
    every return is a new JAX array once converted: it is copied into a NumPy array where
    it is made, and the program runs as it did (issue 17, a NumPy island across modules)."""
    source, out, run = _convert(tmp_path, shapes=SHAPES, app=OBJECTS)
    app = (out / "pkg" / "app.py").read_text()
    assert "obj = np.array(shapes.create_scaled(n, 2.0))" in app
    assert "jnp.arange" in (out / "pkg" / "shapes.py").read_text()


ACC = """
import numpy as np


class Acc:
    def __init__(self, n):
        self.w = np.zeros(n)

    def add(self, v):
        self.w[0] += v
"""


def test_an_attribute_another_module_reads_stays_numpy(tmp_path):
    """`w = acc.w` in another module keeps the array the class then updates in place:
    rebinding `self.w` would leave that `w` behind (it did, silently)."""
    app = """
    from pkg.acc import Acc


    def main():
        acc = Acc(3)
        w = acc.w
        acc.add(2.0)
        return {"w": w}
    """
    source, out, run = _convert(tmp_path, acc=ACC, app=app)
    assert "        self.w[0] += v\n" in (out / "pkg" / "acc.py").read_text()
    assert any(f.code == "NJ202" and "named in another module" in f.message for f in run.findings)
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


def test_an_attribute_no_other_module_names_is_rebound(tmp_path):
    app = """
    from pkg.acc import Acc


    def main():
        acc = Acc(3)
        acc.add(2.0)
        return {"total": acc.total()}
    """
    acc = ACC + """
    def total(self):
        return float(self.w.sum())
"""
    source, out, run = _convert(tmp_path, acc=acc, app=app)
    assert "        self.w = self.w.at[0].add(v)\n" in (out / "pkg" / "acc.py").read_text()
    assert run.findings == []
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


def test_a_local_variable_of_the_same_name_elsewhere_is_no_attribute_use(tmp_path):
    """Another module's local `w` (and a local `rng`) does not read `Acc.w` or
    `Sampler.rng`: the attribute is rebound, the generator becomes keys."""
    sampler = """
    import numpy as np


    class Sampler:
        def __init__(self, seed):
            self.rng = np.random.default_rng(seed)

        def draw(self, n):
            return self.rng.normal(size=n)
    """
    app = """
    import numpy as np

    from pkg.acc import Acc
    from pkg.sampler import Sampler


    def main():
        w = np.arange(3.0)
        rng = 4
        acc = Acc(3)
        acc.add(2.0)
        return {"total": acc.total() + w.sum() + rng, "n": len(Sampler(0).draw(5))}
    """
    acc = ACC + """
    def total(self):
        return float(self.w.sum())
"""
    source, out, run = _convert(tmp_path, acc=acc, app=app, sampler=sampler)
    assert "        self.w = self.w.at[0].add(v)\n" in (out / "pkg" / "acc.py").read_text()
    assert "jax.random" in (out / "pkg" / "sampler.py").read_text()
    assert not [f for f in run.findings if "another module" in f.message], run.findings
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


FILTER = """
import numpy as np


class Filter:
    def __init__(self, n):
        self.H = np.zeros((n, n))
        self.x = np.ones(n)

    def measure(self):
        return np.dot(self.H, self.x)
"""


def test_an_attribute_another_module_writes_into_stays_numpy(tmp_path):
    """`f.H[i, i] = 1.0` in another module writes into the array the class binds to `.H`:
    left in place (NJ201), so every array bound to `.H` stays NumPy, or the write would
    meet a JAX array (it crashed: JAX arrays are immutable)."""
    app = """
    import numpy as np

    from pkg.model import Filter


    def main():
        f = Filter(3)
        for i in range(3):
            f.H[i, i] = 1.0
        return {"m": f.measure(), "h": f.H, "s": np.sum(f.x)}
    """
    source, out, run = _convert(tmp_path, model=FILTER, app=app)
    model = (out / "pkg" / "model.py").read_text()
    assert "        self.H = np.zeros((n, n))\n" in model
    assert "        self.x = jnp.ones(n)\n" in model  # an attribute no one writes still moves
    assert [f.code for f in run.findings] == ["NJ201"]
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


STATE = """
import numpy as np

COUNTS = np.zeros(3)


def bump():
    COUNTS[0] += 1.0
"""


def test_a_module_global_another_module_imports_stays_numpy(tmp_path):
    """`from pkg.state import COUNTS` holds the array itself: a rebinding in pkg.state
    would not reach it, so the write stays and the array stays NumPy."""
    app = """
    from pkg.state import COUNTS, bump


    def main():
        bump()
        return {"counts": COUNTS}
    """
    source, out, run = _convert(tmp_path, state=STATE, app=app)
    assert "    COUNTS[0] += 1.0\n" in (out / "pkg" / "state.py").read_text()
    assert any(f.code == "NJ202" and "other modules may import" in f.message for f in run.findings)
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


def test_a_module_global_of_its_own_module_is_rebound_with_global(tmp_path):
    app = """
    from pkg.state import bump, total


    def main():
        bump()
        bump()
        return {"total": total()}
    """
    state = STATE + """

def total():
    return float(COUNTS.sum())
"""
    source, out, run = _convert(tmp_path, state=state, app=app)
    assert "    global COUNTS\n    COUNTS = COUNTS.at[0].add(1.0)\n" in (out / "pkg" / "state.py").read_text()
    assert run.findings == []
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


def test_a_function_taking_a_generator_used_elsewhere_keeps_its_interface(tmp_path):
    """NJ302 threads a key through a function only when every caller is in its file: one
    used by another module keeps taking a generator (NJ209's decision for `r, p = f(p)`),
    and the generators handed to it stay on NumPy, in both modules; the tree still runs."""
    ops = """
    import numpy as np


    def jitter(x, rng):
        return x + rng.normal(0.0, 0.01, size=x.shape)


    def local(x, rng):
        return x * rng.uniform(0.9, 1.1)


    def own():
        rng = np.random.default_rng(2)
        return jitter(np.ones(3), rng)


    def other():
        rng = np.random.default_rng(3)
        return local(np.ones(3), rng)
    """
    app = """
    import numpy as np

    from pkg.ops import jitter, own
    from pkg.ops import other as ops_other


    def main():
        rng = np.random.default_rng(1)
        return {"a": jitter(np.zeros(3), rng), "b": own(), "c": ops_other()}
    """
    source, out, run = _convert(tmp_path, ops=ops, app=app)
    converted = (out / "pkg" / "ops.py").read_text()
    assert "def jitter(x, rng):\n" in converted  # used by app.py: keeps its interface
    assert "def local(x, key):\n" in converted  # called only in its own file: threaded
    assert "rng = np.random.default_rng(2)\n" in converted  # handed to jitter: NumPy
    assert "rng = np.random.default_rng(1)\n" in (out / "pkg" / "app.py").read_text()
    reasons = [f.message for f in run.findings if f.code == "NJ301"]
    assert any("`jitter` is used by another module of the tree: it keeps its interface" in m
               for m in reasons), reasons
    assert any("`rng` is passed to `jitter`, not a function of this module" in m
               for m in reasons), reasons
    assert set(_run_main(out)) == {"a", "b", "c"}


UTILS = """
import inspect
from functools import wraps

import numpy as np


def parameters_as_arrays(*names):
    def decorator(fn):
        @wraps(fn)
        def wrapper(*args, **kwargs):
            spec = inspect.getfullargspec(fn)
            args = list(args)
            for i, (k, v) in enumerate(zip(spec.args, args)):
                if k in names and v is not None:
                    args[i] = np.array(v)
            return fn(*args, **kwargs)
        return wrapper
    return decorator


def all_parameters_as_arrays(fn):
    @wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*[np.array(a) for a in args], **kwargs)
    return wrapper
"""

# re-exports the decorators, as pyrr's vector.py does for vector3.py's `import *`
VECTOR = """
import numpy as np

from .utils import all_parameters_as_arrays, parameters_as_arrays
"""

VECTOR3 = """
import numpy as np

from .vector import *


@parameters_as_arrays("mat")
def from_translation(mat, dtype=None):
    return np.array(mat[3, :3], dtype=dtype)


@all_parameters_as_arrays
def scaled(v, s):
    return np.full(3, s) * v
"""

VECTOR3_OBJECTS = """
import numpy as np

from pkg import vector3


class Vector3(np.ndarray):
    def __new__(cls, matrix):
        obj = vector3.from_translation(matrix)
        obj = obj.view(cls)
        return obj


class Scaled(np.ndarray):
    def __new__(cls, v):
        obj = vector3.scaled(v, 2.0)
        obj = obj.view(cls)
        return obj


def main():
    v = Vector3(np.arange(16.0).reshape(4, 4))
    s = Scaled(np.ones(3))
    v[0] = -1.0
    return {"v": np.asarray(v), "s": np.asarray(s), "names": [type(v).__name__, type(s).__name__]}
"""


def test_a_new_array_from_a_decorated_function_of_another_module_is_copied(tmp_path):
    """pyrr's `@parameters_as_numpy_arrays("mat")`: a decorator whose wrapper returns what
    the function returns (np2jax.analysis.decorators) keeps the function's summary, even
    reached through `from .vector import *` and vector.py's own import; so the new JAX array
    is copied where `.view(cls)` needs a NumPy array, and the program gives NumPy's result."""
    source, out, run = _convert(tmp_path, utils=UTILS, vector=VECTOR, vector3=VECTOR3,
                                app=VECTOR3_OBJECTS)
    app = (out / "pkg" / "app.py").read_text()
    assert "obj = np.array(vector3.from_translation(matrix))" in app
    assert "obj = np.array(vector3.scaled(v, 2.0))" in app
    assert "jnp.array(mat[3, :3]" in (out / "pkg" / "vector3.py").read_text()
    compile(app, "app.py", "exec")
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


def test_a_decorator_that_may_not_hand_back_the_result_keeps_nothing(tmp_path):
    """A caching decorator returns a stored value, not a new array: the decorated function's
    summary is not exported, and the call is not copied as a new array."""
    utils = UTILS + '''

def cached(fn):
    store = {}

    def wrapper(n):
        if n not in store:
            store[n] = fn(n)
        return store[n]
    return wrapper
'''
    vector3 = VECTOR3 + '''

from .utils import cached


@cached
def ones(n):
    return np.ones(n)
'''
    app = VECTOR3_OBJECTS.replace("vector3.scaled(v, 2.0)", "vector3.ones(3) * 0 + v")
    app = app.replace("obj = vector3.from_translation(matrix)", "obj = vector3.ones(3)")
    _source, out, _run = _convert(tmp_path, utils=utils, vector=VECTOR, vector3=vector3, app=app)
    converted = (out / "pkg" / "app.py").read_text()
    assert "np.array(vector3.ones(3))" not in converted


NUMBA_STAND_IN = '''
"""A stand-in for numba (not installed in the test environment): what it compiles refuses
anything but NumPy arrays and numbers, as numba does (TypingError)."""
import functools

import numpy as np


def _numpy_only(function):
    @functools.wraps(function)
    def compiled(*args):
        for arg in args:
            if not isinstance(arg, (np.ndarray, int, float, np.generic)):
                raise TypeError(f"numba: {type(arg).__name__} argument")
        return function(*args)
    return compiled


def njit(*args, **kwargs):
    return _numpy_only(args[0]) if args and callable(args[0]) else _numpy_only


def guvectorize(signatures, layout, **kwargs):
    return _numpy_only
'''

FAST = """
from numba import guvectorize
import numba as nb


@guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()")
def weighted_gufunc(values, weights):
    return (values * weights).sum(axis=-1) / weights.sum(axis=-1)


@nb.njit
def sum_of_squares(values):
    return (values ** 2).sum()
"""

SCORES = """
import numpy as np


def _weighted_python(values, weights):
    return (values * weights).sum(axis=-1) / weights.sum(axis=-1)


try:
    from ._fast import weighted_gufunc as _weighted_core
    from ._fast import sum_of_squares
except ImportError:
    _weighted_core = _weighted_python

    def sum_of_squares(values):
        return (values ** 2).sum()


def score(observations, forecasts):
    observations = np.asarray(observations)
    forecasts = np.asarray(forecasts)
    centred = forecasts - observations[..., np.newaxis]
    return _weighted_core(np.abs(centred), np.ones_like(forecasts))


def total(values):
    return sum_of_squares(np.sqrt(np.asarray(values) * 2.0))
"""

SCORES_APP = """
import numpy as np

from pkg.scores import score, total


def main():
    forecasts = np.linspace(0.0, 1.0, 15).reshape(5, 3)
    return {"score": score(np.linspace(0.0, 1.0, 5), forecasts), "total": total(forecasts)}
"""


def test_functions_compiled_by_numba_are_handed_numpy_arrays(tmp_path):
    """numba compiles for NumPy arrays and refuses JAX arrays: a function another module
    imports from a module of numba functions (in a `try`, with a Python fallback in the
    `except`, as properscoring does) gets NumPy arrays from the converted code, which found
    properscoring's converted tree failing on a machine with numba installed (issue 17)."""
    (tmp_path / "stub" / "numba").mkdir(parents=True)
    (tmp_path / "stub" / "numba" / "__init__.py").write_text(textwrap.dedent(NUMBA_STAND_IN))
    source, out, run = _convert(tmp_path, _fast=FAST, scores=SCORES, app=SCORES_APP)
    scores = (out / "pkg" / "scores.py").read_text()
    assert "jnp.asarray(observations)" in scores  # the rest still moves to JAX
    assert "_weighted_core(np.array(jnp.abs(centred)), np.ones_like(forecasts))" in scores
    assert "sum_of_squares(np.array(jnp.sqrt(" in scores
    assert (out / "pkg" / "_fast.py").read_text() == (source / "pkg" / "_fast.py").read_text()
    for root in (source, out):  # numba's stand-in first on the path, as if installed
        (root / "numba").symlink_to(tmp_path / "stub" / "numba")
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


def test_a_module_calling_its_own_numba_function_hands_it_numpy_arrays(tmp_path):
    own = """
    import numpy as np
    from numba import njit


    @njit
    def peak(values):
        return values.max()


    def main():
        data = np.linspace(0.0, 2.0, 7)
        return {"peak": peak(np.sin(data) * 3.0), "mean": np.mean(data)}
    """
    (tmp_path / "stub" / "numba").mkdir(parents=True)
    (tmp_path / "stub" / "numba" / "__init__.py").write_text(textwrap.dedent(NUMBA_STAND_IN))
    source, out, run = _convert(tmp_path, app=own)
    app = (out / "pkg" / "app.py").read_text()
    assert "peak(np.array(jnp.sin(data) * 3.0))" in app or "peak(np.sin(data) * 3.0)" in app
    assert "    return values.max()\n" in app  # numba's body as written, no prologue
    for root in (source, out):
        (root / "numba").symlink_to(tmp_path / "stub" / "numba")
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


def test_imported_names_every_import_binding_or_only_a_sole_one():
    """Collector.imported_names: by default the imports among a name's bindings (numba's
    `try: from ._fast import f as g` / `except: g = slow` has one); with sole=True only a
    name whose one binding is an import, as a caller treating every use as that function
    needs. Relative imports resolve from the module's own name."""
    import libcst as cst

    from np2jax.analysis import analyze
    from np2jax.syntax.parse import parse
    from np2jax.tree import ModuleContext

    source = textwrap.dedent("""
        import numpy as np
        from .grid import make
        try:
            from ._fast import kernel as g
        except ImportError:
            def g(x):
                return x
        g(1), make(2), len(3), np.linalg.norm(4), (lambda v: v)(5), make(6).copy()
        """)
    analysis = analyze(parse(source, "pkg/mod.py"), ModuleContext(name="pkg.mod"))
    collector = analysis.dataflow.collector
    calls = {cst.Module([]).code_for_node(c.func): c.func for c in analysis.nodes(cst.Call)}
    found = {code: (collector.imported_names(func), collector.imported_names(func, sole=True))
             for code, func in calls.items()}
    assert found == {"g": ({"pkg._fast.kernel"}, set()),
                     "make": ({"pkg.grid.make"}, {"pkg.grid.make"}),
                     "len": (set(), set()),
                     "np.linalg.norm": ({"numpy.linalg.norm"}, {"numpy.linalg.norm"}),
                     "(lambda v: v)": (set(), set()),
                     "make(6).copy": (set(), set())}


def test_a_list_imported_from_another_module_of_the_package_is_given_to_jax_as_an_array(tmp_path):
    """`from .consts import XP`: a module-level list of another module reaches JAX functions
    here; JAX refuses lists (TypeError), so it is wrapped in jnp.asarray(...) (NJ110)."""
    consts = """
    XP = [0.0, 1.0, 2.0]
    FP = (0.0, 10.0, 40.0)
    """
    app = """
    import numpy as np
    from .consts import XP, FP
    from pkg.consts import FP as LEVELS


    def main():
        x = np.array([0.5, 1.5])
        return {"at": np.interp(x, XP, FP), "dot": np.dot(x[:1], XP[:1]), "max": np.max(LEVELS)}
    """
    source, out, _ = _convert(tmp_path, consts=consts, app=app)
    converted = (out / "pkg" / "app.py").read_text()
    assert "jnp.interp(x, jnp.asarray(XP), jnp.asarray(FP))" in converted, converted
    assert "jnp.max(jnp.asarray(LEVELS))" in converted, converted
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


GEO = """
try:
    from numpy import cos, tan
except ImportError:
    from math import cos, tan


def isometric(lat):
    return tan(lat) + 0.0 * cos(lat)
"""

ROUTE = """
from numpy import broadcast_arrays

from .geo import isometric


def distance(lat1, lat2):
    lat1, lat2 = broadcast_arrays(lat1, lat2)
    dist = abs(isometric(lat2) - isometric(lat1)) / 2.0
    straight = dist < 0.1
    try:
        dist[straight] = 0.0
    except TypeError:
        if straight:
            dist = 0.0
    return dist
"""

ROUTE_APP = """
import numpy as np

from pkg.route import distance


def main():
    return {"many": distance(np.array([0.1, 0.5, 0.9]), np.array([0.15, 0.2, 0.95])),
            "one": distance(0.1, 0.6)}
"""


def test_arrays_handed_to_another_module_left_on_numpy_stay_numpy_where_a_write_stays(tmp_path):
    """pymap3d's loxodrome: `broadcast_arrays` made JAX arrays that went through another
    module's functions (NumPy's, by names that may also be `math`'s) and came back as the
    array `dist[...] = 0.0` writes into, inside `try/except TypeError`: JAX's "immutable"
    TypeError ran the except branch, which failed on an array. The write stays NumPy, so the
    arrays it is made of do too, through the other module's functions and `abs`."""
    source, out, run = _convert(tmp_path, geo=GEO, route=ROUTE, app=ROUTE_APP)
    route = (out / "pkg" / "route.py").read_text()
    assert "jnp.broadcast_arrays" not in route and "broadcast_arrays(lat1, lat2)" in route
    expected, converted = _run_main(source), _run_main(out)
    assert compare_values("main()", expected, converted) is None


HELPERS = """
import numpy as np


def reshape_z(z, dim_z):
    z = np.atleast_2d(z)
    if z.shape[1] == dim_z:
        z = z.T
    return z


def scaled(v, k):
    return np.asarray(v) * k
"""

PLACEHOLDERS = """
import numpy as np

from pkg.common import reshape_z, scaled


def main():
    empty = np.array([None] * 3)
    z = reshape_z(empty, 3)
    return {"empty": np.array(z == None), "z": reshape_z(np.arange(3.0), 3), "s": scaled(np.ones(2), 2.0)}
"""


def test_a_function_another_module_passes_an_object_array_stays_numpy(tmp_path):
    """`reshape_z(np.array([None] * 3), 3)` in another module, re-exported by a star import
    of a package's __init__.py: the object array, which JAX cannot hold, reaches the
    function, which stays on NumPy with its reason (it raised in jnp.asarray); the module's
    other functions convert."""
    source, out, run = _convert(tmp_path, app=PLACEHOLDERS)
    (source / "pkg" / "common").mkdir()
    (source / "pkg" / "common" / "__init__.py").write_text("from .helpers import *\n")
    (source / "pkg" / "common" / "helpers.py").write_text(HELPERS.lstrip("\n"))
    run = convert_paths([source], Config(), out=out)
    helpers = (out / "pkg" / "common" / "helpers.py").read_text()
    assert "    z = np.atleast_2d(z)\n" in helpers and "jnp.asarray(v) * k" in helpers
    kept = [f for f in run.findings if f.code == "NJ104"]
    assert len(kept) == 1 and "`np.array([None] * 3)` in pkg.app" in kept[0].message
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


FORMATS = """
import numpy as np


def fmt(v):
    if isinstance(v, float):
        return f"{v:.1f}"
    return "n/a"


def main():
    a = np.array([1.5, 2.25, 3.0])
    return {"m": fmt(a.mean())}
"""


def test_a_helper_whose_name_another_module_also_defines_still_sees_its_callers(tmp_path):
    """`fmt` defined in two modules: neither sees every caller of its own (the other file
    names it), but the one in this module passes `a.mean()`, a JAX array once converted, so
    `isinstance(v, float)` (True for NumPy's float64) keeps `fmt` on NumPy (NJ114) in both."""
    source, out, run = _convert(tmp_path, app=FORMATS, report=FORMATS)
    kept = sorted(f.path.rsplit("/", 1)[-1] for f in run.findings if f.code == "NJ104")
    assert kept == ["app.py", "report.py"], [f.message for f in run.findings]
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


ROWS = """
import numpy as np


def row_values(board, r):
    return set(board[r, :])


def main():
    board = np.arange(16).reshape(4, 4) % 3
    return {"n": np.array(len(row_values(board, 0))), "b": board[0]}
"""

OWN_ROWS = """
def row_values(rows, r):
    return set(rows[r])


def main():
    return {"n": len(row_values([[1, 2, 2]], 0))}
"""


def test_a_name_another_module_defines_for_itself_is_not_used_from_outside(tmp_path):
    """`row_values` defined in two modules, neither importing the other: each file's calls
    are its own function's, so app.py still sees every caller of its `row_values` (a JAX
    array once converted) and gives `set` Python numbers (NJ113's `.tolist()`)."""
    source, out, run = _convert(tmp_path, app=ROWS, other=OWN_ROWS)
    assert "return set(board[r, :].tolist())" in (out / "pkg" / "app.py").read_text()
    assert compare_values("main()", _run_main(source), _run_main(out)) is None
    # a module reading it as an attribute does use it: every caller is no longer seen
    reader = "from pkg import app\n\n\ndef row_values(b, r):\n    return app.row_values(b, r)\n"
    source, out, run = _convert(tmp_path / "again", app=ROWS, other=reader)
    assert "return set(board[r, :].tolist())" not in (out / "pkg" / "app.py").read_text()
