"""The promise: a conversion computes the same result, or a finding says why not.

Each expression is a common NumPy call with lists, tuples, shapes or axes as arguments. It
is converted inside a tiny program, both versions run, and the converted one must give
equal results or carry a finding. A silent difference fails the test.
"""

from __future__ import annotations

import textwrap

import pytest

from np2jax.api import convert_source
from np2jax.verify.compare import compare_values

EXPRESSIONS = [
    'np.roll(x, shift=(1, 2), axis=(0, 1))',
    'np.split(x, [1, 2])',
    'np.histogram(x.ravel(), bins=[0, 1, 2, 3])',
    'np.histogram(x.ravel(), range=(0, 3))',
    'np.select([x > 1, x > 0], [x, -x])',
    'np.interp([0.5, 1.5], [0, 1, 2], [0, 10, 20])',
    'np.percentile(x, [25, 75])',
    'np.pad(x, ((1, 1), (2, 2)))',
    'np.tile(x, (2, 1))',
    'np.transpose(x, (1, 0))',
    'np.reshape(x, [3, 3])',
    'np.full((2, 2), 3.0)',
    'np.broadcast_to(np.ones(3), (2, 3))',
    'np.linalg.norm(x, ord=2)',
    'np.einsum("ij,jk->ik", x, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])',
    'np.where(x > 1, [1.0, 2.0, 3.0], 0.0)',
    'np.clip(x, [0, 1, 2], 5)',
    'np.isin(x, [1, 2])',
    'np.searchsorted([1, 2, 3], 2)',
    'np.convolve([1, 2, 3], [0, 1, 0.5])',
    'np.polyval([1, 0, -2], x)',
    'np.cross([1, 0, 0], [0, 1, 0])',
    'np.outer([1, 2], [3, 4])',
    'np.diag([1, 2, 3])',
    'np.mean(x, axis=(0, 1))',
    'np.sum(x, axis=(0,))',
    'np.max([x.min(), x.max()])',
    'np.linspace([0, 1], [1, 2], 3)',
    'np.meshgrid([1, 2], [3, 4, 5])',
    'np.unravel_index(5, (3, 3))',
    'np.ravel_multi_index(([0, 1], [1, 2]), (3, 3))',
    'np.take(x, [0, 2])',
    'np.take_along_axis(x, np.array([[0], [1], [2]]), axis=1)',
    'np.delete(x, [0], axis=0)',
    'np.insert(np.arange(4.0), 1, [9.0, 8.0])',
    'np.append(x.ravel(), [1, 2])',
    'np.array_equal([1, 2], [1, 2])',
    'np.allclose(x, x + 1e-9)',
    'np.bincount([0, 1, 1, 3])',
    'np.digitize([0.5, 1.5], [0, 1, 2])',
    'np.cumsum([1, 2, 3])',
    'np.prod((2, 3))',
    'np.any([True, False])',
    'np.argsort([3, 1, 2])',
    'np.lexsort(([1, 2, 1], [3, 3, 1]))',
    'np.vstack([x, x])',
    'np.column_stack(([1, 2], [3, 4]))',
    'np.dot([[1, 2], [3, 4]], [1, 1])',
    'np.matmul([[1.0, 2.0]], [[1.0], [2.0]])',
    'np.linalg.solve([[2.0, 0.0], [0.0, 4.0]], [2.0, 4.0])',
    'np.fft.fft([1.0, 0.0, 0.0, 0.0])',
    'np.unique([3, 1, 1, 2])',
    'np.count_nonzero([0, 1, 2])',
    'np.std([1.0, 2.0, 4.0], ddof=1)',
    'np.round([1.234, 2.345], 2)',
    'np.kron([1, 2], [1, 1])',
    'np.ones_like([1.0, 2.0])',
    'np.zeros_like([[1, 2]])',
    'np.flip([1, 2, 3])',
    'np.sort([3, 1, 2])[::-1]',
    'np.triu([[1, 2], [3, 4]])',
    'np.trace([[1, 2], [3, 4]])',
    'np.vander([1, 2, 3])',
    'np.correlate([1, 2, 3], [0, 1])',
    'np.nanmean([1.0, np.nan, 3.0])',
    'np.gradient([1.0, 4.0, 9.0])',
    'np.diff([1, 4, 9], n=1)',
    'np.hypot([3.0], [4.0])',
    'np.maximum([1, 5], [3, 2])',
    'np.logical_and([True, False], [True, True])',
    'np.argmax([[1, 5], [7, 2]], axis=1)',
    'np.diag([2.0] * 3)',  # transforms3d zooms.zfdir2mat
    'np.sum(list(range(4)) + [1])',
    'np.mean(tuple(x.ravel()))',
]


def _run(source: str):
    namespace: dict = {}
    exec(compile(source, "<case>", "exec"), namespace)
    return namespace["main"]()


def assert_equal_or_flagged(source: str):
    """Convert `source`, run both, and fail on a difference that no finding explains."""
    result = convert_source(source)
    reference = _run(source)
    try:
        problem = compare_values("main()", reference, _run(result.converted))
    except Exception as exc:  # noqa: BLE001 - a crash is a difference too
        problem = f"{type(exc).__name__}: {exc}"
    assert problem is None or result.findings, f"silent difference: {problem}\n{result.converted}"
    return result, problem


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_equal_or_flagged(expression):
    source = ("import numpy as np\n\ndef main():\n    x = np.arange(9.0).reshape(3, 3)\n"
              f"    return {{'r': {expression}}}\n")
    assert_equal_or_flagged(source)


# Whole programs (bodies of main()), from a review that hunted for silent differences:
# each must convert to something equal, or carry a finding.
PROGRAMS = {
"S1 array stored into np.split's list": """
    x = np.arange(6.0)
    parts = np.split(x, 3)
    y = np.zeros(2)
    parts[0] = y
    y[0] = 5.0
    return {"p0": parts[0], "y": y}""",
"S2 array stored into tolist's list": """
    x = np.arange(3.0)
    items = x.tolist()
    w = np.ones(2)
    items[0] = w
    w[1] = 3.0
    return {"first": items[0], "w": w}""",
"S3 array stored into meshgrid's result": """
    grids = list(np.meshgrid(np.arange(2.0), np.arange(3.0)))
    w = np.ones((3, 2))
    grids[0] = w
    w[0, 0] = 9.0
    return {"g0": grids[0]}""",
"S4 where with three arguments and unique are arrays": """
    x = np.arange(6.0)
    z = np.where(x > 2, x, 0.0)
    z[0] = 7.0
    u = np.unique(x)
    u[0] = -1.0
    return {"z": z, "u": u}""",
"A1 number->array": """
    total = 0
    hist = []
    for g in [np.ones(3), np.ones(3)]:
        total += g
        hist.append(total)
    return {"h": hist}""",
"A2 abs sort": """
    v = np.array([3., -5., 1.])
    m = abs(v)
    m.sort()
    return {"m": m}""",
"A2 abs alias": """
    v = np.array([3., -5., 1.])
    m = abs(v)
    s = m
    m += 1
    return {"s": s}""",
"A3 dict item": """
    w = np.ones(3)
    params = {"w": w}
    params["w"] -= 0.5
    return {"w": w}""",
"A3 list item": """
    w1 = np.ones(3)
    layers = [w1, np.ones(2)]
    layers[0] -= 0.5
    return {"w": w1}""",
"A4 comprehension": """
    a = np.zeros(2)
    copies = [a for _ in range(2)]
    a += 1.0
    return {"c": copies}""",
"A4 iterate rows": """
    a = np.zeros((2, 2))
    rows = []
    for r in a:
        rows.append(r)
    a += 1.0
    return {"r": rows}""",
"A4 default arg": """
    a = np.zeros(2)
    get = lambda x=a: x
    a += 1.0
    return {"g": get()}""",
"A4 nested fn": """
    a = np.zeros(2)
    saved = []
    def keep():
        saved.append(a)
    keep()
    a += 1.0
    return {"s": saved}""",
"A5 astype copy=False": """
    b = np.zeros(2, dtype=np.float32)
    a = b.astype(np.float32, copy=False)
    a += 1.0
    return {"b": b}""",
"A5 trim_zeros": """
    b = np.array([0.0, 1.0, 2.0, 0.0])
    a = np.trim_zeros(b)
    a += 1.0
    return {"b": b}""",
"B6 clip positional out": """
    x = np.array([0.5, 2.0, -1.0])
    x.clip(0.0, 1.0, x)
    return {"x": x}""",
"B7 accumulate out": """
    x = np.array([1.0, 3.0, 2.0])
    np.maximum.accumulate(x, out=x)
    return {"x": x}""",
"B7 sin.reduce": """
    x = np.array([1.0, 3.0, 2.0])
    return {"x": np.add.reduce(x), "y": np.multiply.outer(x, x)}""",
"B8 kwargs out": """
    a = np.ones(2)
    opts = {"out": a}
    np.add(a, 1.0, **opts)
    return {"a": a}""",
"B9 clip out None": """
    a = np.array([0.5, 2.0])
    return {"c": a.clip(0, 1, out=None)}""",
"B10 ufunc alias at": """
    z = np.zeros(4)
    add = np.add
    add.at(z, [0, 0, 2], 1.0)
    return {"z": z}""",
"B10 fill_diagonal alias": """
    c = np.ones((3, 3))
    fd = np.fill_diagonal
    fd(c, 0.0)
    return {"c": c}""",
"B12 unbound sort": """
    a = np.array([3.0, 1.0])
    np.ndarray.sort(a)
    return {"a": a}""",
"B13 list index": """
    x = np.arange(5.0)
    i, j = 0, 2
    return {"y": x[[0, 2]], "z": x[[i, j]], "w": x[[1, -1], ...] if x.ndim > 1 else x[[1, -1]]}""",
"D17 reshape": """
    x = np.reshape(np.arange(6), (2, 3))
    return {"x": x}""",
"C14 self.shape": """
    class Grid:
        def __init__(self, r, c):
            self.shape = (r, c)
            self.data = np.zeros(self.shape)
    g = Grid(2, 3)
    return {"d": g.data}""",
"C15 partition": """
    key, _, value = "a=b".partition("=")
    return {"k": key}""",
"C16 lists": """
    counts = [0] * 3
    counts[1] += 1
    flags = [False] * 2
    flags[1] = True
    d = {"b": 1, "a": 2}
    keys = sorted(d)
    keys.sort()
    words = "b a".split()
    words.sort()
    vals = np.arange(3).tolist()
    vals[0] = 1
    return {"c": counts, "k": keys, "w": words, "v": vals, "x": np.ones(2)}""",
"E1 list held by a name": """
    values = [1.0, 2.0, 4.0]
    return {"m": np.mean(values)}""",
"E2 sort kind": """
    x = np.array([3.0, 1.0, 2.0])
    return {"s": np.sort(x, kind="mergesort"), "a": np.argsort(x, kind="stable")}""",
"E3 ufunc method lists": """
    return {"r": np.add.reduceat(np.arange(8.0), [0, 3, 5]), "o": np.multiply.outer([1, 2], [3, 4])}""",
"E4 string arrays": """
    labels = np.array(["a", "b", "a"])
    return {"n": int(np.sum(labels == "a"))}""",
"E5 generator shuffle": """
    deck = np.arange(10)
    rng = np.random.default_rng(0)
    rng.shuffle(deck)
    return {"d": np.sort(deck), "moved": bool(len(deck) == 10)}""",
"E6 legacy shuffle": """
    deck = np.arange(10)
    np.random.seed(0)
    np.random.shuffle(deck)
    return {"d": np.sort(deck), "moved": bool(len(deck) == 10)}""",
"E7 big integers": """
    return {"b": np.array([2**40]), "p": np.arange(3) * 3000000000}""",
"E8 dtype check": """
    x = np.arange(5)
    return {"is32": x.dtype == np.int32}""",
"E9 finfo": """
    return {"eps": np.finfo(float).eps * np.ones(1)}""",
"E10 dotted scipy import kept": """
    import scipy.ndimage
    return {"g": scipy.ndimage.gaussian_filter(np.ones((4, 4)), 1.0)}""",
"F1 view by method": """
    a = np.arange(6.0)
    b = a.reshape(2, 3)
    a[0] = 50.0
    return {"b": b}""",
"F2 chained binding": """
    a = b = np.zeros(3)
    a[0] = 5.0
    return {"b": b}""",
"F3 attribute handed out": """
    class T:
        def __init__(self):
            self.w = np.zeros(3)
        def weights(self):
            return self.w
        def bump(self):
            self.w[0] = 1.0
    t = T()
    seen = t.weights()
    t.bump()
    return {"seen": seen}""",
"F4 1-D tuple with slice views": """
    b = np.arange(4.0)
    b[0], b[1:] = b[3], b[:3]
    return {"b": b}""",
"F5 mask store keeps the dtype": """
    x = np.arange(5)
    x[x > 2] = 0.5
    return {"x": x}""",
"F6 sort in a comprehension": """
    m = np.array([[3.0, 1.0], [2.0, 0.0]])
    [row.sort() for row in m]
    return {"m": m}""",
"F7 out of bounds in try": """
    x = np.zeros(3)
    try:
        x[5] = 1.0
    except IndexError:
        x[0] = -1.0
    return {"x": x}""",
"F8 list held in a name as index": """
    w = np.zeros(4)
    idx = [2, 0]
    w[idx] = 5.0
    z = np.zeros(3)
    np.add.at(z, idx, 1.0)
    return {"w": w, "z": z}""",
"F9 fill_diagonal list and wrap": """
    a = np.zeros((3, 3))
    np.fill_diagonal(a, [1.0, 2.0, 3.0])
    b = np.zeros((5, 2))
    np.fill_diagonal(b, 1.0, wrap=True)
    return {"a": a, "b": b}""",
"F10 fill result used": """
    a = np.zeros(2)
    ok = a.fill(2.0) is None
    return {"a": a, "ok": ok}""",
"G1 flat of a parameter": """
    def corners(m):
        a, b, c, d = m.flat
        return a + d
    return {"s": corners(np.eye(2))}""",
"G2 polyfit over integer x": """
    x = np.arange(6)
    return {"p": np.polyfit(x, 2.0 * x + 1.0, 1)}""",
"G3 ndarray subclass": """
    class Vec(np.ndarray):
        pass
    v = np.zeros(3).view(Vec)
    return {"v": np.asarray(v)}""",
"G4 list passed to a parameter": """
    def compose(zooms):
        return np.diag(zooms)
    return {"a": compose([1.0, 2.0]), "b": compose((3.0, 4.0))}""",
"G5 list parameter minus its mean (nolds dfa)": """
    def detrend(data):
        return data - np.mean(data)
    return {"d": detrend([1.0, 2.0, 4.0])}""",
"G6 parameter rebound to a slice of itself (nolds rs)": """
    def head(data, n):
        data = data[:n]
        return np.reshape(data, (2, 2))
    return {"h": head([1.0, 2.0, 3.0, 4.0, 5.0], 4)}""",
"G7 array times a part of a list argument (pyrr rectangle.scale_by_vector)": """
    def scale(rect, vec):
        rect = np.array(rect)
        return rect * vec[:2]
    return {"s": scale([[1.0, 2.0]], [2.0, 3.0, 4.0])}""",
"G8 parameter rebound after its use (pyrr matrix33.create_direction_scale)": """
    def unit(v):
        return v / np.linalg.norm(v)
    def direction_scale(direction):
        length = np.linalg.norm(direction)
        direction = unit(direction)
        return np.outer(direction, direction) * length
    return {"d": direction_scale([3.0, 4.0])}""",
"G10 a slice of a list meets a parameter of unknown kind (pyrr rectangle.scale_by_vector)": """
    def scale(rect, vec):
        return rect * vec[:2]
    scale.exported = True  # used as a value: np2jax cannot see every caller
    return {"s": scale(np.array([[1.0, 2.0]]), [2.0, 3.0, 4.0])}""",
"G9 parameter rebound later in a loop": """
    def total(data):
        t = 0.0
        for _ in range(2):
            t = t + np.sum(data)
            data = np.asarray(data) * 2
        return t
    return {"t": total([1.0, 2.0])}""",
}

# Whole modules, for what a name may hold across functions (Dataflow.jax_typed): a value
# wrongly taken for an array would hide an escape (`items[0] = w` keeps w) or turn a write
# into `.at`. Each must convert to something equal, or carry a finding, and the write the
# case is about (the second item) must stay as it was.
MODULES = {
"M1 user function returning a list": ("""
def make():
    return [np.zeros(2), np.zeros(2)]

def main():
    items = make()
    w = np.ones(2)
    items[0] = w
    w[1] = 3.0
    return {"first": items[0], "w": w}""", "w.at["),
"M2 user function returning a dict": ("""
def make():
    return {"a": np.zeros(2)}

def main():
    table = make()
    w = np.ones(2)
    table["a"] = w
    w[1] = 3.0
    return {"a": table["a"], "w": w}""", "w.at["),
"M3 unpacked tuple of a list and an array": ("""
def make():
    return [np.zeros(2)], np.zeros(2)

def main():
    items, arr = make()
    w = np.ones(2)
    items[0] = w
    w[1] = 3.0
    return {"first": items[0], "w": w, "arr": arr}""", "w.at["),
"M4 unpacked shape tuple": ("""
def main():
    x = np.zeros((2, 3))
    h, w = np.shape(x)
    rows = [None] * h
    v = np.ones(w)
    rows[0] = v
    v[1] = 3.0
    return {"row": rows[0], "v": v}""", "v.at["),
"M5 list sized by a shape attribute": ("""
def main():
    x = np.zeros(3)
    n = x.shape[0]
    buf = [None] * n
    w = np.ones(2)
    buf[0] = w
    w[1] = 3.0
    return {"b0": buf[0], "w": w}""", "w.at["),
"M6 parameter passed a NumPy array by one caller": ("""
def head(a):
    c = a[:2].copy()
    c[0] = 9.0
    return c

def main():
    x = head(np.arange(3.0))
    y = head(np.loadtxt(["1.0 2.0 3.0"]))  # file reading stays on NumPy: a NumPy array
    return {"x": x, "y_first": y[0]}""", "c.at["),
"M7 function passed as a value": ("""
def head(a):
    c = a[:2].copy()
    c[0] = 9.0
    return c

def main():
    x = head(np.arange(3.0))
    ys = list(map(head, [[1.0, 2.0, 3.0]]))
    return {"x": x, "y": ys[0]}""", "c.at["),
"M8 parameter of a public function": ("""
__all__ = ["head"]

def head(a):
    c = a[:2].copy()
    c[0] = 9.0
    return c

def main():
    return {"x": head(np.arange(3.0))}""", "c.at["),
"M9 parameter omitted, its default a list": ("""
def head(a=[1.0, 2.0, 3.0]):
    c = a[:2].copy()
    c[0] = 9.0
    return c

def main():
    return {"x": head(np.arange(3.0)), "y": head()}""", "c.at["),
"M10 list repeated by an array's number": ("""
def main():
    x = np.arange(3)
    buf = [None] * x.argmax()
    w = np.ones(2)
    buf[0] = w
    w[1] = 3.0
    return {"b0": buf[0], "w": w}""", "w.at["),
"M11 module function rebound through global": ("""
def make(n):
    return np.zeros(n)

def swap():
    global make
    make = lambda n: [0.0] * n

def main():
    swap()
    items = make(2)
    w = np.ones(2)
    items[0] = w
    w[1] = 3.0
    return {"first": items[0], "w": w}""", "w.at["),
"M12 the caller's conversion suppressed": ("""
def head(a):
    c = a[:2].copy()
    c[0] = 9.0
    return c

def main():
    x = np.arange(3.0)  # np2jax: ignore
    return {"x": head(x)}""", "c.at["),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_equal_or_flagged(name):
    source, never_written = MODULES[name]
    result, _problem = assert_equal_or_flagged("import numpy as np\n\n" + textwrap.dedent(source) + "\n")
    assert never_written not in result.converted, result.converted


def test_parameter_arrays_are_not_certain():
    """A parameter every local caller passes a JAX array is trusted to choose `.at` (a
    caller elsewhere passing NumPy fails loudly) but never by alias analysis."""
    from np2jax.analysis import analyze
    from np2jax.syntax.parse import parse

    source = ("import numpy as np\n\ndef head(a):\n    c = a[:2].copy()\n    return c\n\n"
              "def main():\n    return head(np.arange(3.0))\n")
    analysis = analyze(parse(source, "<case>"))
    function = analysis.module.body[1]
    returned = function.body.body[-1].body[0].value
    assert analysis.dataflow.jax_typed(returned)
    assert not analysis.dataflow.jax_typed(returned, certain=True)


# Found converting real packages (docs/real-projects.md): the finding each must carry.
REAL_PROJECT_FINDINGS = {"G2 polyfit over integer x": "NJ102",
                         "G3 ndarray subclass": "NJ102",
                         "G10 a slice of a list meets a parameter of unknown kind "
                         "(pyrr rectangle.scale_by_vector)": "NJ112"}

# Found converting real packages, and converted: equal results, no finding.
REAL_PROJECT_CONVERSIONS = tuple(name for name in PROGRAMS if name[:2] in ("G4", "G5", "G6", "G7", "G8", "G9")
                                 or name.startswith("G1 "))  # `m.flat` read: NJ115

# Plain Python code in NumPy modules: no finding may be raised on it.
NO_FINDINGS = ("C14 self.shape", "C15 partition", "C16 lists", "D17 reshape")


def _program(body: str) -> str:
    return "import numpy as np\n\ndef main():" + textwrap.dedent(body).replace("\n", "\n    ") + "\n"


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_equal_or_flagged(name):
    result, problem = assert_equal_or_flagged(_program(PROGRAMS[name]))
    if name in NO_FINDINGS or name in REAL_PROJECT_CONVERSIONS:
        assert result.findings == [] and problem is None
    if name in REAL_PROJECT_FINDINGS:
        assert REAL_PROJECT_FINDINGS[name] in {f.code for f in result.findings}
