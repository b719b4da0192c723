"""NJ417 unsigned-zero-result: the form it writes gives NumPy's zeros (their signs too), and
it reaches exactly the calls whose JAX version the proof showed giving -0.0 where NumPy's
zeros are 0.0."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from np2jax.analysis.references import unsigned_zeros, zero_signs_only
from np2jax.api import convert_source
from np2jax.catalog import api_proof
from np2jax.config import Config


@pytest.fixture(autouse=True)
def _numpy_dtypes():
    jax.config.update("jax_enable_x64", True)


DATA = np.array([-0.0, 0.0, 2.5, -3.0, np.nan, -np.inf, np.inf])


def _converted_sign():
    source = ("import numpy as np\n\n\ndef f(v):\n    return np.sign(v)\n")
    result = convert_source(source, Config(x64=True))
    compile(result.converted, "<converted>", "exec")
    assert "NJ417" in {f.code for f in result.changes}
    namespace: dict = {}
    exec(result.converted, namespace)
    return namespace["f"]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "complex128", "int64", "int8"])
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
def test_converted_sign_gives_numpys_zeros(dtype, compiled):
    # (complex infinities aside: NumPy 2's sign of one is NaN, JAX's ±1, zeros or not)
    data = DATA if dtype.startswith("float") else DATA[:5] if dtype.startswith("complex") \
        else np.array([0, -3, 4, 0])
    data = data.astype(dtype)
    f = _converted_sign()
    got = np.asarray((jax.jit(f) if compiled else f)(jnp.asarray(data)))
    with np.errstate(invalid="ignore"):
        expected = np.sign(data)
    assert got.dtype == expected.dtype
    assert np.array_equal(got, expected, equal_nan=True)
    for part in ((np.real, np.imag) if dtype.startswith("complex") else (lambda x: x,)):
        assert np.array_equal(np.signbit(part(got)), np.signbit(part(expected)))


def test_the_rule_reads_the_proof_not_a_list():
    """The functions NJ417 rewrites are those the table gives the unsigned-zero verdict."""
    proof = api_proof()
    flagged = {name for name in proof if unsigned_zeros(name)}
    assert "numpy.sign" in flagged
    # never where NumPy kept a -0.0 in some case (the mend would make it 0.0 there)
    assert not any("zeros whose sign differs" in str(proof[name]) for name in flagged)
    assert "numpy.cumsum" not in flagged and "numpy.abs" not in flagged
    # np.cumsum's zeros differ the other way round: converted as equal numbers, not mended
    assert zero_signs_only(proof["numpy.cumsum"]["edges"]["negative-zero"])


def test_a_call_of_another_function_is_left_alone():
    result = convert_source("import numpy as np\nx = np.abs(np.array([-0.0, 1.0]))\n", Config(x64=True))
    assert "jnp.abs" in result.converted and "optimization_barrier" not in result.converted
    assert "NJ417" not in {f.code for f in result.findings + result.changes}
