"""A Python int beside an integer array narrower than 64 bits that its dtype cannot hold.
Stores (the writes planner): NumPy 2 raises OverflowError, JAX's .at[] wraps; the write
hands JAX jnp.asarray(v, dtype=a.dtype), which raises as NumPy does. Operations (NJ402):
arithmetic raises OverflowError in NumPy, so does the rewrite (jnp.asarray of the literal);
a comparison is exact in NumPy and in the rewrite (jnp.int64 of the literal). Literals the
dtype holds, wide and float arrays, and true division are left as they were."""

from __future__ import annotations

import numpy as np
import pytest

from np2jax.api import convert_source
from np2jax.config import Config


def _converted_store(dtype: str, statement: str) -> str:
    source = f"import numpy as np\na = np.zeros(3, dtype=np.{dtype})\n{statement}\n"
    return convert_source(source, Config()).converted.splitlines()[-1]


@pytest.mark.parametrize(("dtype", "statement", "expected"), [
    ("uint8", "a[0] = 300", "a = a.at[0].set(jnp.asarray(300, dtype=a.dtype))"),
    ("uint8", "a[0] = -1", "a = a.at[0].set(jnp.asarray(-1, dtype=a.dtype))"),
    ("int8", "a[1:] = 128", "a = a.at[1:].set(jnp.asarray(128, dtype=a.dtype))"),
    ("uint32", "a[0] += -1", "a = a.at[0].add(jnp.asarray(-1, dtype=a.dtype))"),
    ("int16", "a[0] *= 40000", "a = a.at[0].multiply(jnp.asarray(40000, dtype=a.dtype))"),
    ("uint8", "a[0] = 255", "a = a.at[0].set(255)"),
    ("int8", "a[0] = -128", "a = a.at[0].set(-128)"),
    ("int64", "a[0] = 300", "a = a.at[0].set(300)"),
    ("float32", "a[0] = 300", "a = a.at[0].set(300)"),
])
def test_store_of_a_python_int(dtype, statement, expected):
    assert _converted_store(dtype, statement) == expected


@pytest.mark.parametrize(("dtype", "value"), [("uint8", 300), ("uint8", -1), ("int8", 128),
                                              ("int16", -40000), ("uint16", 70000)])
def test_the_rewrite_raises_where_numpy_raises(dtype, value):
    import jax.numpy as jnp

    a = np.zeros(3, dtype=dtype)
    with pytest.raises(OverflowError):
        a[0] = value
    namespace = {"jnp": jnp, "a": jnp.zeros(3, dtype=dtype)}
    line = _converted_store(dtype, f"a[0] = {value}")
    with pytest.raises(OverflowError):
        exec(line, namespace)
    # what .at[].set alone does: wraps, silently
    assert int(jnp.zeros(3, dtype=dtype).at[0].set(value)[0]) != value


def _run(source: str):
    namespace: dict = {"__name__": "_python_int_case"}
    exec(compile(source, "<case>", "exec"), namespace)
    return namespace["main"]()


def _operation_source(dtype: str, expression: str) -> str:
    return ("import numpy as np\n\ndef main():\n"
            f"    a = np.array([0, 1, 100], dtype=np.{dtype})\n    return {expression}\n")


NARROW = ("uint8", "int8", "uint16", "int16", "uint32", "int32")


def _outside(dtype: str) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.max) + 1, int(info.min) - 1


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("operator", ["+", "-", "*", "//", "%", "&", "|", "^"])
def test_arithmetic_with_an_int_the_dtype_cannot_hold_raises_as_in_numpy(dtype, operator):
    for value in _outside(dtype):
        for expression in (f"a {operator} {value}", f"{value} {operator} a"):
            source = _operation_source(dtype, expression)
            with pytest.raises(OverflowError):
                _run(source)
            converted = convert_source(source, Config()).converted
            assert "jnp.asarray(" in converted, converted
            with pytest.raises(OverflowError):
                _run(converted)


@pytest.mark.parametrize("dtype", NARROW)
@pytest.mark.parametrize("operator", ["<", "<=", ">", ">=", "==", "!="])
def test_comparison_with_an_int_the_dtype_cannot_hold_is_numpys(dtype, operator):
    for value in _outside(dtype):
        for expression in (f"a {operator} {value}", f"{value} {operator} a"):
            source = _operation_source(dtype, expression)
            converted = convert_source(source, Config()).converted
            assert ".astype(jnp.int64)" in converted, converted  # NJ408
            want, got = _run(source), np.asarray(_run(converted))
            assert want.dtype == got.dtype and (want == got).all(), (expression, want, got)


@pytest.mark.parametrize("expression", ["a + 100", "a * 2", "a > 100", "a == -0", "a / 300"])
def test_ints_the_dtype_holds_and_true_division_are_left(expression):
    converted = convert_source(_operation_source("uint8", expression), Config()).converted
    assert "jnp.asarray(" not in converted and "jnp.int64" not in converted


@pytest.mark.parametrize("dtype", ["uint8", "int16"])
@pytest.mark.parametrize("ufunc", ["add", "subtract", "multiply", "floor_divide", "remainder",
                                   "power", "maximum", "minimum", "fmax", "fmin", "bitwise_and",
                                   "bitwise_or", "bitwise_xor", "left_shift", "right_shift"])
def test_ufunc_with_an_int_the_dtype_cannot_hold_raises_as_in_numpy(dtype, ufunc):
    value = _outside(dtype)[0]
    for expression in (f"np.{ufunc}(a, {value})", f"np.{ufunc}({value}, a)"):
        source = _operation_source(dtype, expression)
        with pytest.raises(OverflowError):
            _run(source)
        converted = convert_source(source, Config()).converted
        with pytest.raises(OverflowError):
            _run(converted)


@pytest.mark.parametrize(("bounds", "raises"), [
    ("0, 300", False), ("-5, 50", False), ("-5, 300", False), ("260, 300", True), ("0, -1", True)])
def test_clip_bounds_the_dtype_cannot_hold(bounds, raises):
    source = _operation_source("uint8", f"np.clip(a, {bounds})")
    converted = convert_source(source, Config()).converted
    if raises:
        with pytest.raises(OverflowError):
            _run(source)
        with pytest.raises(OverflowError):
            _run(converted)
    else:
        want, got = _run(source), np.asarray(_run(converted))
        assert want.dtype == got.dtype and (want == got).all(), (bounds, want, got)
