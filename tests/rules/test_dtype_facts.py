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
])
def test_the_dtype_the_analysis_gives_is_numpys(body):
    assert _dtype_at_return(body) == _numpy_dtype(body)


@pytest.mark.parametrize("body", [
    # a binding inside a branch or a loop may or may not have run: not known
    "    w = np.arange(3)\n    if len(w) > 2:\n        w = w.astype(np.int32)\n    return w\n",
    "    w = np.arange(3)\n    for _ in range(2):\n        w = w.astype(np.int32)\n    return w\n",
    # an item of unknown dtype
    "    return [len, 2.0]\n",
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
