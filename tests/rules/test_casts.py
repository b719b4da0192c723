"""np2jax.analysis.casts: the float-to-integer cast facts NJ403 and the write planner read,
and the JAX form of NumPy's cast (casts.int32_wrap), run against NumPy's own casts."""

from __future__ import annotations

import platform
import warnings

import libcst as cst
import numpy as np
import pytest

from np2jax.analysis import analyze
from np2jax.analysis.casts import WRAPPED_TARGETS, int32_wrap
from np2jax.api import check_source, convert_source
from np2jax.config import Config


def _grid(source_dtype) -> np.ndarray:
    """Finite values around every integer width's edges, huge ones, infinities and NaN,
    in `source_dtype`, with a random tail so the vector loops see them too."""
    edges = [0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 127.5, 128.0, -128.5, -129.0,
             255.9, 256.0, 300.7, -300.7, 32767.5, 32768.0, -32768.5, -32769.0, 65535.9,
             65536.0, 70000.25, -70000.25, 1e9, -1e9, 2.0**31 - 1, 2.0**31 - 0.5, 2.0**31,
             -(2.0**31), -(2.0**31) - 0.5, -(2.0**31) - 1, 2.0**32, 3e9, -3e9, 5e9, 1e10, 1e19,
             -1e19, 2.0**63, 1e20, -1e20, 1e300, -1e300, np.inf, -np.inf, np.nan]
    rng = np.random.default_rng(0)
    tail = rng.choice([-1, 1], 301) * 10.0 ** rng.uniform(-1, 20, 301)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.concatenate([edges, tail, edges]).astype(source_dtype)


def _wrap_function(target: str):
    """The form int32_wrap writes for `value`, compiled into a function of it."""
    expression = int32_wrap(cst.Name("value"), cst.Attribute(cst.Name("jnp"), cst.Name(target)), "jnp",
                            64 if target == "int64" else 32)
    namespace: dict = {}
    exec(f"import jax.numpy as jnp\ndef cast(value):\n    return {cst.Module([]).code_for_node(expression)}\n",
         namespace)
    return namespace["cast"]


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="the form reproduces NumPy's casts on x86-64, where they are taken from")
@pytest.mark.parametrize("target", sorted(WRAPPED_TARGETS | {"int64"}))
@pytest.mark.parametrize("source", ["float16", "float32", "float64"])
def test_the_wrap_form_computes_numpys_cast_for_every_value(source, target):
    import jax

    jax.config.update("jax_enable_x64", True)
    values = _grid(source)
    cast = _wrap_function(target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for view in (values, values[::3], values[::-1]):
            expected = view.astype(target)
            got = np.asarray(cast(jax.numpy.asarray(view)))
            assert got.dtype == expected.dtype
            wrong = np.flatnonzero(got != expected)
            assert wrong.size == 0, (f"{source} {view[wrong[0]]!r} -> {target}: NumPy "
                                     f"{expected[wrong[0]]}, the form {got[wrong[0]]}")
        # what JAX's own astype gives differs: the form is needed, not decorative
        assert not np.array_equal(np.asarray(jax.numpy.asarray(values).astype(target)),
                                  values.astype(target))


def _casts(source: str):
    analysis = analyze(cst.parse_module(source))
    return analysis, analysis.casts


def _last_astype(analysis):
    return [c for c in analysis.nodes(cst.Call)
            if isinstance(c.func, cst.Attribute) and c.func.attr.value == "astype"][-1]


@pytest.mark.parametrize("binding", [
    "y = a if a[1] > 1 else b",
    "if a[1] > 1:\n        y = a * 1.5\n    else:\n        y = np.arange(5)",
    "y = np.arange(5)\n    if a[0] > 0:\n        y = a",
])
def test_float_values_are_followed_through_conditionals(binding):
    source = (f"import numpy as np\n\ndef main():\n    a = np.arange(5.0) * 100\n    b = np.ones(5)\n"
              f"    {binding}\n    return y.astype(np.uint8)\n")
    analysis, casts = _casts(source)
    call = _last_astype(analysis)
    assert casts.float_source(call.func.value) == "float64"
    assert [f.code for f in check_source(source) if f.code.startswith("NJ403")] == ["NJ403"]


def test_integer_values_on_every_branch_are_not_suspected():
    source = ("import numpy as np\n\ndef main():\n    a = np.arange(5)\n"
              "    y = a if a[1] > 1 else a * 2\n    return y.astype(np.uint8)\n")
    analysis, casts = _casts(source)
    assert casts.float_source(_last_astype(analysis).func.value) is None
    assert [f.code for f in check_source(source) if f.code.startswith("NJ403")] == []


@pytest.mark.parametrize("data, nan", [
    ("np.array([np.nan, 1.5])", True),
    ("np.sqrt(np.linspace(-1.0, 1.0, 5))", True),
    ("np.full(3, float('nan'))", True),
    ("np.log(np.arange(3.0))", True),
    ("np.empty(4)", True),
    ("np.floor(np.linspace(0.0, 9.0, 4))", False),
    ("np.arange(4.0) * 2.5", False),
])
def test_a_64_bit_cast_is_suspected_where_nan_may_occur(data, nan):
    source = f"import numpy as np\n\ndef main():\n    x = {data}\n    return x.astype(np.int64)\n"
    analysis, casts = _casts(source)
    call = _last_astype(analysis)
    assert casts.may_leave_range(call, call.func.value, "float64", "int64") is nan
    assert [f.code for f in check_source(source) if f.code.startswith("NJ403")] == (["NJ403"] if nan else [])


def test_a_write_of_values_that_may_leave_the_range_casts_as_numpy_does():
    source = ("import numpy as np\n\ndef main():\n    img = np.arange(0, 250, 50).astype(np.uint8)\n"
              "    img[:] = img * 1.7\n    img[img > 100] = img[img > 100] * 2.0\n"
              "    img[0] -= np.float64(7.5)\n    return img\n")
    result = convert_source(source)
    assert [f.code for f in result.findings] == []
    assert result.converted.count("jnp.abs(") == 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        namespace: dict = {}
        exec(source, namespace)
        expected = namespace["main"]()
        namespace = {}
        exec(result.converted, namespace)
        got = np.asarray(namespace["main"]())
    assert expected.tolist() == got.tolist() and got.dtype == np.uint8


@pytest.mark.parametrize("write, why", [
    ("big[:] = big * 1.7", "uint32: NumPy's cast is not reproduced"),
    ("img[0] = 300.7", "a Python float: NumPy raises"),
    ("img[:] = next_values(img)", "a call of the module's own function: read once"),
])
def test_a_write_the_form_does_not_reproduce_keeps_its_finding(write, why):
    source = ("import numpy as np\n\ndef next_values(v):\n    return v * 3.5\n\n"
              "def main():\n    img = np.arange(5).astype(np.uint8)\n"
              "    big = np.arange(5).astype(np.uint32)\n"
              f"    {write}\n    return img, big\n")
    result = convert_source(source)
    assert [f.code for f in result.findings] == ["NJ403"], why
    assert "jnp.abs(" not in result.converted


def _run(source: str):
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(source, namespace)
        return namespace["main"]()


def test_casts_that_may_leave_the_range_are_rewritten_to_numpys_result():
    source = ("import numpy as np\n\ndef main():\n    level = np.linspace(-0.5, 1.5, 7) * 255\n"
              "    picked = level if level[0] < 0 else level * 2\n"
              "    cents = np.array([12.5, np.nan, -3e30])\n"
              "    return [picked.astype(np.uint8), np.asarray(level * 300, dtype=np.int16),\n"
              "            cents.astype(np.int64), (level * 1e7).astype('i4')]\n")
    result = convert_source(source)
    assert result.findings == [] and [c.code for c in result.changes].count("NJ403") == 4
    expected, got = _run(source), _run(result.converted)
    for numpy_value, jax_value in zip(expected, got):
        assert np.asarray(jax_value).dtype == numpy_value.dtype
        assert np.asarray(jax_value).tolist() == numpy_value.tolist()
    # 32-bit JAX has no int64: that cast is reported, the others still rewritten
    narrow = convert_source(source, Config(x64=False))
    assert [f.code for f in narrow.findings if f.code == "NJ403"] == ["NJ403"]
    assert "2.0 ** 63" not in narrow.converted and narrow.converted.count("2.0 ** 31") == 3


def test_a_cast_of_data_with_an_integer_path_is_reported_not_rewritten():
    source = ("import numpy as np\n\ndef main():\n    level = np.linspace(-0.5, 1.5, 7) * 255\n"
              "    picked = level if level[0] < 0 else np.arange(7)\n"
              "    return picked.astype(np.uint8), level.astype(np.uint8, copy=False)\n")
    result = convert_source(source)
    assert [f.code for f in result.findings] == ["NJ403", "NJ403"]
    assert "jnp.abs(" not in result.converted


def test_under_jit_the_casts_are_reported_not_rewritten():
    """Compiled, a sine fused into the samples' arithmetic can land an ulp off an integer
    NumPy's lands on (corpus-semantics s17: 128.0), which truncation turns into another
    integer: under --jit the cast keeps its finding."""
    source = ("import numpy as np\n\ndef pcm(x):\n    return (x * 300.0 + 128.0).astype(np.uint8)\n\n"
              "def main():\n    return pcm(np.sin(np.linspace(0.0, 6.0, 9)))\n")
    assert [c.code for c in convert_source(source).changes].count("NJ403") == 1
    compiled = convert_source(source, Config(jit=True))
    assert [f.code for f in compiled.findings if f.code == "NJ403"] == ["NJ403"]
    assert "jnp.abs(" not in compiled.converted


@pytest.mark.parametrize("write", [
    "img[keep] = x[keep] * 150.0",  # a mask not proven of the array's shape: eager .at[mask]
    "img[0], img[1] = x[1] * 150.0, x[4] * -90.0",  # a tuple of stores
    "img[2] = img[1] = x[4] * 150.0",  # one value, two stores
])
def test_every_store_of_float_values_casts_as_numpy_does(write):
    """Each form a store takes casts float values into the integer array as NumPy does
    (through int32, out-of-range values wrapping), with no warning that a later JAX refuses
    the store: nothing reported, equal bytes."""
    source = ("import numpy as np\n\ndef main():\n    x = np.linspace(-2.0, 3.0, 5)\n"
              "    keep = np.array([True, False, True, True, False])\n"
              f"    img = np.arange(5).astype(np.uint8)\n    {write}\n    return img\n")
    result = convert_source(source)
    assert [f.code for f in result.findings if f.code != "NJ208"] == []
    assert "jnp.abs(" in result.converted
    expected = _run(source)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        namespace: dict = {}
        exec(result.converted, namespace)
        got = np.asarray(namespace["main"]())
    assert not [w for w in caught if issubclass(w.category, (FutureWarning, DeprecationWarning))]
    assert expected.tolist() == got.tolist() and got.dtype == np.uint8


def test_a_tuple_of_stores_the_form_does_not_reproduce_is_reported():
    """uint32 is not reproduced: the tuple's stores are cast (no warning) and reported."""
    source = ("import numpy as np\n\ndef main():\n    x = np.linspace(-2.0, 3.0, 5)\n"
              "    big = np.zeros(3, dtype=np.uint32)\n"
              "    big[0], big[1] = x[0] * 1e9, x[1]\n    return big\n")
    result = convert_source(source)
    assert [f.code for f in result.findings] == ["NJ403", "NJ403"]
    assert "jnp.abs(" not in result.converted and "dtype=big.dtype" in result.converted
