"""NJ116 python-number-as-array-argument, and the calls the API proof keeps on NumPy for a
Python number: a number given for a data argument that NumPy makes a 64-bit array
(np.append's values, an item of np.hstack's sequence) is wrapped as that array, with the
dtype the proof found; a number JAX's version differs for however it is given stays on
NumPy (a literal) or is reported (a name). Each converted program is run beside the
original: same values and the same dtypes."""

from __future__ import annotations

import numpy as np
import pytest

from np2jax.api import convert_source
from np2jax.config import Config


def _program(setup: str, expression: str) -> str:
    return f"import numpy as np\n\ndef main():\n    {setup}\n    return {expression}\n"


def _run(source: str):
    namespace: dict = {"__name__": "_python_number_case"}
    exec(compile(source, "<case>", "exec"), namespace)
    return namespace["main"]()


def _same(expected, got) -> None:
    got = np.asarray(got)
    assert got.dtype == np.asarray(expected).dtype, (expected, got)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(("setup", "expression", "wrapped"), [
    ("a = np.array([3, 250], dtype=np.uint8)", "np.append(a, 300)", "jnp.asarray(300, dtype=int)"),
    ("a = np.array([3, 250], dtype=np.uint8)", "np.append(a, 7)", "jnp.asarray(7, dtype=int)"),
    ("a = np.array([1, 2], dtype=np.int32)", "np.append(a, 3_000_000_000)",
     "jnp.asarray(3_000_000_000, dtype=int)"),
    ("w = np.ones(3, dtype=np.float32) / 3", "np.hstack([w, 0.1])", "jnp.asarray(0.1, dtype=float)"),
    # an int beside float32 data: NumPy's int64 array promotes to float64, JAX's int64 would not
    ("w = np.ones(3, dtype=np.float32) / 3", "np.hstack([w, 1])", "jnp.asarray(1, dtype=float)"),
    ("w = np.ones(3, dtype=np.float32) / 3", "np.append(w, -2)", "jnp.asarray(-2, dtype=float)"),
    ("c = np.array([4, 9], dtype=np.int32)", "np.stack([c[0], c[1], 3_000_000_000])",
     "jnp.asarray(3_000_000_000, dtype=int)"),
    ("xp = np.linspace(0, 1, 5).astype(np.float32)", "np.interp(0.3, xp, xp ** 2)",
     "jnp.asarray(0.3, dtype=float)"),
    ("w = np.ones(3, dtype=np.float32)\n    pad = 0.1", "np.append(w, pad)",
     "jnp.asarray(pad, dtype=float)"),
])
def test_a_number_numpy_makes_an_array_is_wrapped_as_that_array(setup, expression, wrapped):
    source = _program(setup, expression)
    result = convert_source(source, Config())
    assert wrapped in result.converted, result.converted
    assert not [f for f in result.findings if f.code == "NJ116"]  # fixed: nothing left
    expected = _run(source)
    _same(expected, _run(result.converted))
    # and what JAX alone gives: another dtype, or 300 wrapped into uint8
    unwrapped = result.converted.replace(wrapped, wrapped.split("(", 1)[1].rsplit(",", 1)[0])
    got = np.asarray(_run(unwrapped))
    assert got.dtype != expected.dtype or not np.array_equal(got, expected)


@pytest.mark.parametrize(("setup", "expression"), [
    ("x = np.zeros(3)", "np.append(x, 1.5)"),          # beside float64: alike either way
    ("x = np.arange(4)", "np.hstack([x, 7])"),         # beside int64
    ("a = np.array([3, 250], dtype=np.uint8)", "np.where(a > 5, a, 7)"),  # weak in NumPy too
    ("w = np.ones(3, dtype=np.float32)", "np.maximum(w, 0.5)"),
    ("a = np.array([3, 250], dtype=np.uint8)", "np.append(a, 0.5)"),  # float beside ints: float64
])
def test_a_number_taken_alike_is_left(setup, expression):
    source = _program(setup, expression)
    result = convert_source(source, Config())
    assert "dtype=int)" not in result.converted and "dtype=float)" not in result.converted
    _same(_run(source), _run(result.converted))


def test_a_number_of_a_parameter_is_wrapped_whatever_the_data_beside():
    """Data of unknown dtype: the number is NumPy's array (an int64 one for an int, which
    gives NumPy's result beside integer and float64 data)."""
    source = ("import numpy as np\n\ndef extend(levels):\n    return np.append(levels, 300)\n\n"
              "def main():\n    return extend(np.array([3, 250], dtype=np.uint8))\n")
    converted = convert_source(source, Config()).converted
    assert "jnp.append(jnp.asarray(levels), jnp.asarray(300, dtype=int))" in converted
    _same(_run(source), _run(converted))


def test_a_literal_jax_differs_for_stays_on_numpy():
    source = _program("edges = np.array([0, 64, 128, 255], dtype=np.uint8)",
                      "np.searchsorted(edges, 100)")
    result = convert_source(source, Config())
    assert "np.searchsorted(" in result.converted
    kept = [f for f in result.findings if f.code == "NJ103"]
    assert kept and "Python number `100`" in kept[0].message, result.findings
    _same(_run(source), _run(result.converted))


def test_a_name_holding_a_number_jax_differs_for_is_reported():
    # np.arctan2 of uint8 data and 300: NumPy computes in float16, JAX in float32
    source = _program("a = np.array([3, 250], dtype=np.uint8)\n    n = 300", "np.arctan2(a, n)")
    result = convert_source(source, Config())
    found = [f for f in result.findings if f.code == "NJ116"]
    assert found and "left as it was" in found[0].message, result.findings


def test_with_32_bits_chosen_the_number_is_a_32_bit_array():
    source = _program("a = np.array([3, 250], dtype=np.uint8)", "np.append(a, 300)")
    converted = convert_source(source, Config(x64=False)).converted
    assert "jnp.asarray(300, dtype=int)" in converted and "jax_enable_x64" not in converted
    compile(converted, "<x32>", "exec")
