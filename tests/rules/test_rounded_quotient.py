"""NJ414 rounded-quotient: the division form it writes, run against NumPy's division bit for
bit, and the facts of np2jax.analysis.quotients (which quotients are rounded)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import libcst as cst
import numpy as np
import pytest

from np2jax.analysis import analyze
from np2jax.api import convert_source
from np2jax.config import Config
from np2jax.rules.rounded_quotient import exact_quotient
from np2jax.syntax import code_of



@pytest.fixture(autouse=True)
def _numpy_dtypes():
    """NumPy's 64-bit dtypes, as converted programs run (conftest turns them off after)."""
    jax.config.update("jax_enable_x64", True)


def _written_division():
    """The form NJ414 writes for `a / b`, compiled into a function of a and b."""
    node = cst.parse_expression("a / b")
    namespace: dict = {}
    exec(f"import jax\nimport jax.numpy as jnp\ndef divide(a, b):\n"
         f"    return {code_of(exact_quotient(node, 'jnp'))}\n", namespace)
    return namespace["divide"]


DIVIDE = _written_division()
RNG = np.random.default_rng(7)
GRID = np.arange(2000) * 0.1  # multiples of 0.1: quotients by 0.1 land on integers
CASES = {
    "grid by 0.1": (GRID, 0.1),
    "integers by a rate": (np.arange(20000), 44100),
    "uniform by 7.3": (RNG.uniform(0, 1000, (200, 50)), 7.3),
    "rows by their sums": ((m := RNG.uniform(1, 9, (300, 7))), m.sum(axis=1, keepdims=True)),
    "columns by their maxima": ((m := np.arange(1.0, 301.0).reshape(30, 10)), m.max(axis=0)),
    "a 0-d divisor": (GRID, np.float64(0.3)),
    "float32 by a float32 scalar": (GRID.astype(np.float32), np.float32(0.1)),
    "float32 by a Python float": (GRID.astype(np.float32), 0.1),
    "int64 by an int": (np.arange(5000), 7),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
def test_written_division_is_numpys_to_the_bit(name, compiled):
    a, b = CASES[name]
    expected = np.asarray(a) / b
    divide = jax.jit(DIVIDE) if compiled else DIVIDE
    got = np.asarray(divide(jnp.asarray(a), b if np.ndim(b) == 0 and not isinstance(
        b, np.ndarray) else jnp.asarray(b)))
    assert got.dtype == expected.dtype
    assert np.array_equal(got, expected), f"{int((got != expected).sum())} quotients differ"


def test_plain_division_differs_where_the_rule_applies():
    """What the rule is for: XLA's division by a broadcast scalar is a product with its
    reciprocal (if a later XLA divides, the rule is harmless and this says it is not needed)."""
    got = np.floor(np.asarray(jnp.asarray(GRID) / 0.1))
    if np.array_equal(got, np.floor(GRID / 0.1)):
        pytest.skip("this XLA divides by a broadcast scalar exactly")
    assert np.array_equal(np.floor(np.asarray(DIVIDE(jnp.asarray(GRID), 0.1))),
                          np.floor(GRID / 0.1))


def test_written_division_keeps_weak_types_and_transforms():
    assert DIVIDE(1.0, 4.0).weak_type == (jnp.asarray(1.0) / 4.0).weak_type
    assert DIVIDE(jnp.ones(3, jnp.float32), 0.1).dtype == jnp.float32
    grad = jax.grad(lambda v: DIVIDE(v, 3.0).sum())(jnp.arange(3.0))
    assert np.allclose(np.asarray(grad), 1 / 3)
    assert jax.vmap(lambda v: DIVIDE(v, 3.0))(jnp.ones((2, 3))).shape == (2, 3)


def _divisions(source: str) -> list[str]:
    analysis = analyze(cst.parse_module(source))
    quotients = analysis.quotients
    nodes = [*analysis.nodes(cst.Call), *analysis.nodes(cst.BinaryOperation)]
    return sorted({code_of(d) for _, value in quotients.rounded_values(nodes)
                   for d in quotients.divisions(value)})


def test_divisions_reaching_a_rounding_through_names_and_arithmetic():
    source = """
import math
import numpy as np
SR = 44100
t = np.arange(100) / SR
idx = (t * SR).astype(np.int64)
x = np.arange(10) * 0.1
a = np.floor(np.abs(x / 0.3) + 1)
b = np.rint(np.divide(x, 0.7))
c = (x / 0.9) // 1
d = int(math.floor(x[3] / 1.1))
"""
    assert _divisions(source) == ["(x / 0.9)", "np.arange(100) / SR", "np.divide(x, 0.7)",
                                  "x / 0.3", "x[3] / 1.1"]


def test_exact_divisions_and_unrounded_quotients_are_not_followed():
    source = """
import numpy as np
x = np.arange(10) * 0.1
half = np.floor(x / 2)
quarter = np.floor(x / 0.25)
inverse = np.floor(1 / x)
weights = x / x.sum()
steps = int(3.0 / 0.01)
same = np.floor(x / (x + 1.0))
cents = np.round(np.array([10.0, 7.5]) / np.array([4.0, 3.0]) * 100).astype(np.int64)
ratio = np.floor(x.max() / np.min(x))
inverse_mean = np.ceil(1.0 / np.mean(x))
"""
    assert _divisions(source) == []


def test_a_division_numpy_still_computes_is_not_rewritten():
    """A parameter nothing shows to be a JAX array, rounded by a method: the division is
    NumPy's, and rewriting it would hand the caller a JAX array."""
    source = "import numpy as np\n\ndef index(t, rate):\n    return (t / rate).astype(int)\n"
    result = convert_source(source, Config())
    assert "optimization_barrier" not in result.converted
    assert "NJ414" not in {c.code for c in result.changes}


def test_rewritten_in_the_32_bit_mode_and_under_jit_too():
    source = ("import numpy as np\n\ndef main():\n    x = np.arange(1000) * 0.1\n"
              "    return {'bins': np.floor(x / 0.1)}\n")
    for config in (Config(x64=False), Config(jit=True)):
        result = convert_source(source, config)
        compile(result.converted, "<converted>", "exec")
        assert "NJ414" in {c.code for c in result.changes}, config
