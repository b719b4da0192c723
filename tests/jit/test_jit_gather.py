"""Integer-array indexes under --jit (np2jax.jit.gather): an index provably not boolean is a
gather (or a `.at[].set` scatter) of a static shape, which compiles and computes what the
eager conversion computes; an index that may be boolean leaves the function eager, with the
reason. More cases: fixtures/compilable-function/integer_array_gather,
fixtures/uncompilable-function/boolean_array_index_refused."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import run_main
from np2jax.api import convert_source
from np2jax.config import Config
from np2jax.verify.compare import compare_values

JIT = Config(jit=True)


def _verdicts(result) -> dict:
    return {f.message.split("`")[1]: ("compiled" if f.code == "NJ501" else f.message)
            for f in result.changes + result.findings if f.code in ("NJ501", "NJ502")}


def _program(index_expression: str, setup: str = "") -> str:
    return textwrap.dedent(f"""
        import numpy as np


        def pick(x, n, k):
            {setup or "pass"}
            return x[{index_expression}]


        def main():
            return pick(np.arange(10.0) * 1.5, 7, 3)
    """)


@pytest.mark.parametrize("index", ["np.arange(n) % k", "np.arange(n) // 2",
                                   "np.argsort(-x)", "x.argmin(axis=0) + np.arange(k)",
                                   "(x * 2).astype(int) % 10", "(x > 3).astype(np.int32)",
                                   "rows", "-np.arange(1, k + 1)"])
def test_an_index_provably_not_boolean_compiles_and_agrees(tmp_path, index):
    source = _program(index, "rows = np.arange(n)[::2]")
    result = convert_source(source, JIT)
    assert _verdicts(result)["pick"] == "compiled"
    original, converted = tmp_path / "original.py", tmp_path / "converted.py"
    original.write_text(source)
    converted.write_text(result.converted)
    assert compare_values("main()", run_main(original), run_main(converted)) is None


@pytest.mark.parametrize("index, setup", [
    ("x > 3", ""),  # a mask: the selection is kept
    ("flags", "flags = (x > 3) | (x < 1)"),
    ("np.abs(x > 3)", ""),  # abs keeps a boolean boolean
    ("(x > 3) * (x < 9)", ""),  # bool * bool is bool
    ("n_list", "n_list = [0, 2]"),  # a Python list: not followed
])
def test_an_index_that_may_be_boolean_leaves_the_function_eager(index, setup):
    result = convert_source(_program(index, setup), JIT)
    reason = _verdicts(result)["pick"]
    assert reason != "compiled"
    assert "index" in reason


def test_an_item_of_a_module_functions_returned_tuple_is_followed():
    source = textwrap.dedent("""
        import numpy as np


        def split(n):
            return np.arange(n) * 0.5, np.arange(n) % 3


        def flagged(n):
            return np.arange(n) * 0.5, np.arange(n) % 3 == 0


        def gather(n):
            values, codes = split(n)
            return values[codes]


        def gather_flags(n):
            values, codes = flagged(n)
            return values[codes]


        def main():
            return gather(6), gather_flags(6)
    """)
    verdicts = _verdicts(convert_source(source, JIT))
    assert verdicts["gather"] == "compiled"
    assert "not provably of integers" in verdicts["gather_flags"]


def test_a_rebound_int_is_not_read_as_the_builtin_dtype():
    source = textwrap.dedent("""
        import numpy as np

        int = bool


        def codes(x):
            return x[(x * 2).astype(int)]


        def main():
            return codes(np.arange(4.0))
    """)
    assert "codes" not in [name for name, verdict in _verdicts(convert_source(source, JIT)).items()
                           if verdict == "compiled"]


_CONVERTED: dict = {}


def _converted_modules(tmp_path_factory):
    """The gather and scatter program, run as NumPy, as converted eagerly and under --jit."""
    if not _CONVERTED:
        source = textwrap.dedent("""
            import numpy as np


            def gather(x, i):
                return x[i * 1]  # (an integer array, whatever i is)


            def scatter(x, i):
                y = x.copy()
                y[i * 1] = -1.0
                return y


            def main():
                x = np.arange(4.0)
                return gather(x, np.array([0, 3])), scatter(x, np.array([1, 1]))
        """)
        folder = tmp_path_factory.mktemp("gather")
        for name, config in (("numpy", None), ("eager", Config()), ("jit", JIT)):
            path = folder / f"{name}_program.py"
            path.write_text(source if config is None else convert_source(source, config).converted)
            _CONVERTED[name] = _load(path)
        assert "@jax.jit" in (folder / "jit_program.py").read_text()
    return _CONVERTED


def _load(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=st.integers(1, 9), data=st.data())
def test_gathers_and_scatters_under_jit_equal_numpy_in_range_and_eager_jax_anywhere(
        tmp_path_factory, size, data):
    modules = _converted_modules(tmp_path_factory)
    x = np.arange(size, dtype=np.float32) * 1.5
    anywhere = np.array(data.draw(st.lists(st.integers(-2 * size, 2 * size), min_size=1,
                                           max_size=12)), dtype=np.int32)
    in_range = np.array(data.draw(st.lists(st.integers(-size, size - 1), min_size=1,
                                           max_size=12)), dtype=np.int32)
    import jax.numpy as jnp

    for function in ("gather", "scatter"):
        jitted = getattr(modules["jit"], function)
        # in range: NumPy's values (negative indices count from the end in both)
        assert compare_values(function, getattr(modules["numpy"], function)(x, in_range),
                              jitted(jnp.asarray(x), jnp.asarray(in_range))) is None
        # out of range NumPy raises; compiled or not, JAX clamps reads and drops writes: the
        # compiled function does exactly what the eager conversion does
        eager = getattr(modules["eager"], function)(jnp.asarray(x), jnp.asarray(anywhere))
        assert np.array_equal(np.asarray(eager), np.asarray(jitted(jnp.asarray(x),
                                                                   jnp.asarray(anywhere))))
