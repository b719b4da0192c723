"""Facts about dtypes (np2jax.analysis.dtypes) that decide rewrites: a name's dtype where it is
read (the bindings that reach it in straight-line code), and the dtype of the array NumPy
makes of a list (its items' dtypes, Python numbers as int64/float64, promoted together).
Each is checked against NumPy itself."""

from __future__ import annotations

import libcst as cst
import numpy as np
import pytest

from np2jax.analysis.module import analyze
from np2jax.api import convert_source
from np2jax.config import Config


def _dtype_at_return(body: str) -> str | None:
    """The analysis' dtype of the value `main` returns."""
    source = f"import numpy as np\n\ndef main():\n{body}"
    analysis = analyze(cst.parse_module(source))
    (ret,) = analysis.nodes(cst.Return)
    return analysis.dtypes.dtype_of(ret.value)


def _numpy_dtype(body: str) -> str:
    namespace: dict = {}
    exec(f"import numpy as np\n\ndef main():\n{body}", namespace)
    return str(np.asarray(namespace["main"]()).dtype)


@pytest.mark.parametrize("body", [
    # rebound: the last unconditional binding before the read decides
    "    w = np.arange(3)\n    w = w.astype(np.int32)\n    return w\n",
    "    w = np.zeros(3, dtype=np.float32)\n    w = w.astype(np.float64)\n    return w\n",
    "    w = np.arange(3).astype(np.uint8)\n    n = 3\n    return w\n",
    # lists: NumPy's array of them
    "    a = np.float32(1.5)\n    return [a, 2.25]\n",
    "    b = np.int32(7)\n    return [b, 2]\n",
    "    b = np.int32(7)\n    return [b, b]\n",
    "    return [True, False]\n",
    "    a = np.float32(1.5)\n    b = np.int32(2)\n    return [a, b]\n",
    "    x = np.arange(4, dtype=np.int16)\n    return [v > 1 for v in x]\n",
    # np.unique's tuple: its values have x's dtype, its indices and counts are int64
    "    x = np.arange(6, dtype=np.uint8) % 4\n    return np.unique(x, return_inverse=True)[1]\n",
    "    x = np.arange(6, dtype=np.uint8) % 4\n    return np.unique(x, return_counts=True)[0]\n",
    "    x = np.arange(6, dtype=np.uint8) % 4\n    return np.unique(x, return_counts=True)[1]\n",
    # index grids and their parts: int64 from integer bounds, float64 from a float or a
    # complex count; np.meshgrid's parts have their arguments' dtypes
    "    yy, xx = np.mgrid[0:2, 0:8]\n    return xx\n",
    "    yy, xx = np.mgrid[0:1:5j, 0:2]\n    return yy\n",
    "    g = np.mgrid[0:2.5:0.5, 0:3]\n    return g\n",
    "    rows, cols = np.ogrid[0:3, 0:4]\n    return cols\n",
    "    ii, jj = np.indices((3, 3))\n    return jj\n",
    "    gx, gy = np.meshgrid(np.arange(5), np.linspace(0.0, 1.0, 3))\n    return gx\n",
    "    gx, gy = np.meshgrid(np.arange(5), np.linspace(0.0, 1.0, 3))\n    return gy\n",
    "    return np.nonzero(np.arange(5) > 2)[0]\n",
    "    return np.where(np.arange(5) > 2)[0]\n",
    "    return np.isin(np.arange(5), [1, 3])\n",
    "    return np.logical_xor(np.arange(5) > 2, np.arange(5) < 4)\n",
    # arrays joined: their dtypes promoted together
    "    a = np.arange(3, dtype=np.uint8)\n    return np.concatenate([a, a])\n",
    "    a = np.arange(3, dtype=np.uint8)\n    b = np.arange(3, dtype=np.int16)\n    return np.stack((a, b))\n",
    "    a = np.arange(3, dtype=np.int32)\n    return np.hstack([a, a.astype(np.float32)])\n",
    "    a = np.arange(3, dtype=np.uint16)\n    return np.column_stack([a, a])\n",
    "    a = np.arange(3, dtype=np.int8)\n    return np.append(a, np.arange(2, dtype=np.int8))\n",
])
def test_the_dtype_the_analysis_gives_is_numpys(body):
    assert _dtype_at_return(body) == _numpy_dtype(body)


@pytest.mark.parametrize("body", [
    # a binding inside a branch or a loop may or may not have run: not known
    "    w = np.arange(3)\n    if len(w) > 2:\n        w = w.astype(np.int32)\n    return w\n",
    "    w = np.arange(3)\n    for _ in range(2):\n        w = w.astype(np.int32)\n    return w\n",
    # an item of unknown dtype
    "    return [len, 2.0]\n",
    # a list of arrays of two dtypes
    "    a = np.arange(3, dtype=np.uint8)\n    return np.atleast_1d(a, np.ones(2))[1]\n",
    # a Python number joined with arrays: NumPy's 64-bit array of it (NJ116's)
    "    a = np.arange(3, dtype=np.uint8)\n    return np.hstack([a, 300])\n",
])
def test_what_is_not_known_is_none(body):
    assert _dtype_at_return(body) is None


def test_a_rebound_name_is_converted_with_its_dtype_at_the_read():
    """`w` is int64, then int32: `w + np.float32(0.5)` is float64 in NumPy (int32 with a
    float32 scalar), float32 in JAX unless rewritten (NJ402)."""
    source = ("import numpy as np\n\ndef main():\n    w = np.arange(20_000_000, 20_000_004)\n"
              "    w = w.astype(np.int32)\n    w = w + np.float32(0.5)\n    return w\n")
    converted = convert_source(source, Config()).converted
    namespace: dict = {}
    exec(source, namespace)
    expected = namespace["main"]()
    exec(converted, namespace)
    got = np.asarray(namespace["main"]())
    assert got.dtype == expected.dtype == np.float64
    np.testing.assert_array_equal(got, expected)


def test_a_draw_of_a_converted_random_state_is_a_jax_array():
    """`rng.uniform(...)` becomes jax.random.uniform: a JAX array, so the mean of a mask
    made of it is computed in float64 as NumPy's (NJ402), not JAX's float32."""
    source = ("import numpy as np\n\ndef main():\n    rng = np.random.default_rng(0)\n"
              "    pts = rng.uniform(-1.0, 1.0, size=(1000, 2))\n"
              "    inside = (pts ** 2).sum(1) <= 1.0\n    return 4.0 * inside.mean()\n")
    converted = convert_source(source, Config()).converted
    assert "inside.mean(dtype=jnp.float64)" in converted, converted
    namespace: dict = {}
    exec(converted, namespace)
    assert np.asarray(namespace["main"]()).dtype == np.float64


@pytest.mark.parametrize("body, expected", [
    # every binding of the attribute in its class gives the same dtype
    ("        self.px = np.zeros(4, dtype=np.int8)\n\n    def reset(self):\n"
     "        self.px = np.ones(4, dtype=np.int8)\n", "int8"),
    ("        self.px = np.zeros(4, dtype=np.uint16)\n        self.px += 1\n", "uint16"),
    # bindings that disagree, or a Python number grown by `+=`: not known
    ("        self.px = np.zeros(4, dtype=np.int8)\n\n    def widen(self):\n"
     "        self.px = self.px.astype(np.int64)\n", None),
    ("        self.px = 0\n        self.px += 0.5\n", None),
])
def test_an_attribute_of_self_has_the_dtype_of_its_bindings(body, expected):
    source = f"import numpy as np\n\nclass Canvas:\n    def __init__(self):\n{body}\n\n" \
             "    def read(self):\n        return self.px\n"
    analysis = analyze(cst.parse_module(source))
    ret = analysis.nodes(cst.Return)[-1]
    assert analysis.dtypes.dtype_of(ret.value) == expected


def test_names_unpacked_from_a_tuple_literal_have_its_items_values():
    """`x, c = k, 0`: c is the Python int 0, whose `c += 1` changes no array (no NJ203)."""
    body = "    x, c = np.float32(2.0), 0\n    return c\n"
    assert _dtype_at_return(body) == "int"
    assert _dtype_at_return("    x, c = np.float32(2.0), 0\n    return x\n") == "float32"
    source = ("import numpy as np\n\n\ndef steps(k):\n    x, c = k, 0\n    while x != 1:\n"
              "        x = x // 2 if x % 2 == 0 else 3 * x + 1\n        c += 1\n    return c\n\n\n"
              "def main():\n    return {'c': np.array([steps(k) for k in range(1, 6)])}\n")
    result = convert_source(source, Config())
    assert not [f for f in result.findings if f.code == "NJ203"], result.findings


def test_a_parameter_every_call_passes_a_number_literal_holds_no_array():
    """`fib(90)`: `n >>= 1` in fib changes no caller's array (no NJ203)."""
    source = ("import numpy as np\n\n\ndef fib(n):\n    r, m = np.eye(2), np.array([[1.0, 1.0], [1.0, 0.0]])\n"
              "    while n:\n        if n & 1:\n            r = r @ m\n        m = m @ m\n        n >>= 1\n"
              "    return r\n\n\ndef main():\n    return {'f': fib(30)}\n")
    result = convert_source(source, Config())
    assert not [f for f in result.findings if f.code == "NJ203"], result.findings
