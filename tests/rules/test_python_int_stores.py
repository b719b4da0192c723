"""A Python int stored into an integer array narrower than 64 bits that its dtype cannot
hold: NumPy 2 raises OverflowError, JAX's .at[] wraps; the write hands JAX
jnp.asarray(v, dtype=a.dtype), which raises as NumPy does. Literals the dtype holds, wide
and float arrays, and true division are left as they were."""

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
