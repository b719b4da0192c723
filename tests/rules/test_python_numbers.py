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
    # an item of a list beside narrow items: np.array's proof (NJ110 makes the list jnp.array)
    ("a = np.float32(1.5)", "np.array([a, 2.25])", "jnp.asarray(2.25, dtype=float)"),
    ("b = np.int32(7)", "np.asarray([b, 3_000_000_000])", "jnp.asarray(3_000_000_000, dtype=int)"),
    ("b = np.int32(7)", "np.max([b, 2**40])", "jnp.asarray(2**40, dtype=int)"),
    ("a = np.float32(1.5)", "np.sum([a, 0.1])", "jnp.asarray(0.1, dtype=float)"),
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
    try:
        got = np.asarray(_run(unwrapped))
    except OverflowError:  # jnp.array([int32 scalar, 2**40]): JAX refuses the number
        return
    assert got.dtype != expected.dtype or not np.array_equal(got, expected)


@pytest.mark.parametrize(("setup", "expression"), [
    ("x = np.zeros(3)", "np.append(x, 1.5)"),          # beside float64: alike either way
    ("x = np.arange(4)", "np.hstack([x, 7])"),         # beside int64
    ("a = np.array([3, 250], dtype=np.uint8)", "np.where(a > 5, a, 7)"),  # weak in NumPy too
    ("w = np.ones(3, dtype=np.float32)", "np.maximum(w, 0.5)"),
    ("a = np.array([3, 250], dtype=np.uint8)", "np.append(a, 0.5)"),  # float beside ints: float64
    ("a = np.float32(1.5)", "np.array([2.0]) * a"),   # a list of numbers alone: alike
    ("x = np.ones(2, dtype=np.float32)", "np.pad(x, (1, 2))"),  # pad widths stay Python's
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


def test_with_32_bits_chosen_an_int_is_an_int32_array_and_a_float_weak():
    """--x32: an int must still not wrap into uint8 (JAX's int32 holds 300, as NumPy's int64
    does); a float beside float32 data is float32 either way, what the mode stands for."""
    source = _program("a = np.array([3, 250], dtype=np.uint8)\n    w = np.ones(2, dtype=np.float32)",
                      "np.append(a, 300), np.append(w, 0.5), np.array(2.0)")
    result = convert_source(source, Config(x64=False))
    converted = result.converted
    assert "jnp.append(a, jnp.asarray(300, dtype=jnp.int32))" in converted, converted
    assert "jnp.append(w, 0.5)" in converted and "jnp.array(2.0)" in converted
    assert "jax_enable_x64" not in converted
    extended, _, _ = _run(converted)
    np.testing.assert_array_equal(extended, [3, 250, 300])


@pytest.mark.parametrize(("setup", "expression", "converted"), [
    ("a = np.float32(1.5)", "np.array(2.0) + a", "jnp.array(2.0, dtype=float) + a"),
    ("c = np.int32(3)", "np.asarray(len([1, 2])) * c", "jnp.asarray(len([1, 2]), dtype=int) * c"),
    ("c = np.int8(3)", "np.array(5, dtype=np.int8) * c", "jnp.array(5, dtype=jnp.int8) * c"),
])
def test_a_number_alone_given_to_a_constructor_keeps_numpy_s_dtype(setup, expression, converted):
    """np.array(2.0) is a float64 array; JAX's jnp.array(2.0) is weakly typed, and turns
    float32 when it meets a float32 value (NumPy's stays float64)."""
    source = _program(setup, expression)
    result = convert_source(source, Config())
    assert converted in result.converted, result.converted
    _same(_run(source), _run(result.converted))


@pytest.mark.parametrize(("expression", "converted"), [
    ("np.dot(w, counts)", "jnp.dot(w, counts.astype(jnp.float64))"),
    ("np.where(counts > 1, w, counts)", "jnp.where(counts > 1, w, counts.astype(jnp.float64))"),
    ("np.concatenate([w, counts])", "jnp.concatenate([w, counts.astype(jnp.float64)])"),
    ("np.take(w, counts - counts)", "jnp.take(w, counts - counts)"),  # indices: not promoted
    ("np.dot(w, [16_777_217, 1])", "jnp.dot(w, jnp.array([16_777_217, 1]).astype(jnp.float64))"),
    ("np.dot(w, [0.5, 1.5])", "jnp.dot(w, jnp.array([0.5, 1.5]))"),  # float64 either way
    # items of np.array: NumPy's array of a float32 and an int32 scalar is float64
    ("np.array([w[0], counts[0]])", "jnp.array([w[0], counts[0].astype(jnp.float64)])"),
])
def test_an_integer_array_beside_float32_data_is_computed_in_float64(expression, converted):
    """NJ402, from the proof's `int64 array beside float32` case: NumPy promotes int32 (and
    int64) with float32 to float64, JAX to float32."""
    source = _program("w = np.array([0.5, 1.5], dtype=np.float32)\n"
                      "    counts = np.array([16_777_217, 1], dtype=np.int32)", expression)
    result = convert_source(source, Config())
    assert converted in result.converted, result.converted
    _same(_run(source), _run(result.converted))
