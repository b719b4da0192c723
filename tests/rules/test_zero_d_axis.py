"""NJ407 zero-d-axis, run against NumPy: every function of ZERO_D_AXIS, converted with the
axis written as a literal and given by a parameter, keepdims absent, False, True and given
by a parameter, on 0-d, 1-d and 2-d data, gives NumPy's result (value, shape and dtype),
or raises where NumPy raises."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from np2jax.api import check_source, convert_source
from np2jax.config import Config
from np2jax.rules.zero_d_axis import ZERO_D_AXIS

NAMES = sorted(name.split(".", 1)[1] for name in ZERO_D_AXIS)
# the functions without a keepdims parameter
NO_KEEPDIMS = {"argsort", "squeeze"}
DATA = ("np.array(2.5)", "np.float64(-1.5)", "np.array(0.0)", "np.array([3.0, np.nan, 1.0])",
        "np.arange(6.0).reshape(2, 3) - 2.0")
# squeeze takes only axes of length one
SQUEEZABLE = ("np.array(2.5)", "np.float64(-1.5)", "np.array([4.0])", "np.full((1, 1), 7.0)")


def _source(name: str) -> str:
    keepdims = name not in NO_KEEPDIMS
    lines = ["import numpy as np", "", "",
             "def by_parameter(x, axis):", f"    return np.{name}(x, axis=axis)", "", ""]
    if keepdims:
        lines += ["def kept(x, axis, keepdims):",
                  f"    return np.{name}(x, axis=axis, keepdims=keepdims)", "", ""]
    lines += ["def literal(x):",
              f"    return [np.{name}(x, axis=0), np.{name}(x, axis=-1)"
              + (f", np.{name}(x, axis=0, keepdims=True), np.{name}(x, axis=-1, keepdims=True),"
                 f" np.{name}(x, axis=-1, keepdims=False)]" if keepdims else "]"), "", "",
              "def main():", "    out = []", f"    for x in [{', '.join(SQUEEZABLE if name == 'squeeze' else DATA)}]:",
              "        out.append(literal(x))", "        for axis in (None, 0, -1):",
              "            out.append(by_parameter(x, axis))"]
    if keepdims:
        lines += ["            out.append(kept(x, axis, True))", "            out.append(kept(x, axis, False))"]
    lines += ["    return out", ""]
    return "\n".join(lines)


def _run(source: str):
    namespace: dict = {"__name__": "_zero_d_axis_case"}
    exec(compile(source, "<case>", "exec"), namespace)
    return namespace["main"]()


def _same(reference, converted) -> None:
    assert len(reference) == len(converted)
    for want, got in zip(reference, converted):
        if isinstance(want, list):
            _same(want, got)
            continue
        want, got = np.asarray(want), np.asarray(got)
        assert (want.shape, want.dtype) == (got.shape, got.dtype)
        np.testing.assert_array_equal(want, got)


@pytest.mark.parametrize("name", NAMES)
def test_every_reduction_gives_numpys_result(name):
    source = _source(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanargmax of all-NaN rows: none here
        reference = _run(source)
    result = convert_source(source, Config())
    assert "atleast_1d" in result.converted
    if name not in NO_KEEPDIMS:
        assert "None if jnp.ndim(jnp.asarray(x)) == 0 and axis in (0, -1) else axis" in result.converted
        assert "None if jnp.ndim(jnp.asarray(x)) == 0 else -1" in result.converted
    _same(reference, _run(result.converted))


def test_an_axis_numpy_refuses_on_0d_data_raises_in_both():
    source = ("import numpy as np\n\ndef total(x, axis):\n    return np.sum(x, axis=axis)\n\n"
              "def main():\n    return total(np.array(2.0), 1)\n")
    converted = convert_source(source, Config()).converted
    assert "jnp.atleast_1d" in converted
    with pytest.raises(np.exceptions.AxisError):
        _run(source)
    with pytest.raises(ValueError):
        _run(converted)


def test_keepdims_of_data_that_cannot_be_written_twice_is_reported_and_left():
    source = ("import numpy as np\n\ndef energy(x, keepdims):\n"
              "    return np.sum(np.square(x), axis=-1, keepdims=keepdims)\n")
    result = convert_source(source, Config())
    assert "axis=-1, keepdims=keepdims" in result.converted
    assert "atleast_1d" not in result.converted
    findings = [f for f in check_source(source, Config()) if f.code == "NJ407"]
    assert len(findings) == 1 and "left as it was" in findings[0].message
    assert not findings[0].fixable


def test_literal_axes_numpy_and_jax_agree_on_are_left():
    source = ("import numpy as np\n\ndef f(x):\n"
              "    return np.sum(x, axis=None, keepdims=True), np.max(x, axis=1), np.min(x, axis=(0,))\n")
    result = convert_source(source, Config())
    assert "atleast_1d" not in result.converted and "ndim" not in result.converted
