"""Calls JAX computes as NumPy/SciPy does only for some values of a parameter (policy.toml
[same_only_for]): each value listed there is shown here to compute alike by running both
libraries, in 64-bit mode, on inputs that reach the parameter's work (edges, out-of-range
coordinates, ties); a call with another value, or one np2jax cannot read, stays on NumPy
with an NJ102 that names the argument."""

from __future__ import annotations

import importlib

import jax
import numpy as np
import pytest

from np2jax.api import Config, convert_source
from np2jax.catalog import api_policy, api_table

DEFAULT = "<default>"
RNG = np.random.default_rng(7)
_SAMPLE = RNG.normal(size=25)
_SAMPLE[3] = _SAMPLE[4]  # a tie
_IMAGE = RNG.normal(size=(8, 9))
# coordinates inside, on and beyond the edges of _IMAGE
_COORDINATES = np.array([RNG.uniform(-2.0, 10.0, 40), RNG.uniform(-2.0, 11.0, 40)])
_KERNEL = RNG.normal(size=(3, 3))


def _quantiles(name):
    return [5.0, 50.0, 97.5] if "percentile" in name else [0.05, 0.5, 0.975]


# The arguments each function is run with besides the parameter under test; variants for
# the parameters the work depends on (convolve2d's mode, gradient's spacing).
SAMPLES = {
    "scipy.signal.convolve2d": [((_IMAGE, _KERNEL), {"mode": mode}) for mode in ("full", "same", "valid")],
    "scipy.signal.correlate2d": [((_IMAGE, _KERNEL), {"mode": mode}) for mode in ("full", "same", "valid")],
    "numpy.gradient": [((np.sin(_SAMPLE.cumsum()),), {}),
                       ((np.sin(_SAMPLE.cumsum()), np.abs(_SAMPLE).cumsum()), {}),
                       ((_IMAGE,), {"axis": 1})],
    "scipy.ndimage.map_coordinates": [((_IMAGE, _COORDINATES), {})],
    "numpy.percentile": [((_SAMPLE, _quantiles("percentile")), {})],
    "numpy.quantile": [((_SAMPLE, _quantiles("quantile")), {})],
    "numpy.nanpercentile": [((np.where(_SAMPLE > 1, np.nan, _SAMPLE), _quantiles("percentile")), {})],
    "numpy.nanquantile": [((np.where(_SAMPLE > 1, np.nan, _SAMPLE), _quantiles("quantile")), {})],
    "numpy.take": [((_SAMPLE, [0, 3, 24, -1, -25]), {}), ((_IMAGE, [[0, 7], [-1, 2]]), {"axis": 0})],
}
SAME_ONLY_FOR = api_policy()["same_only_for"]


def _function(dotted: str):
    module, name = dotted.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def _variants(qualname: str):
    """(parameter, value, the other listed parameters' first values): one case per value
    listed, the other parameters held at a value listed for them."""
    listed = SAME_ONLY_FOR[qualname]
    for parameter, values in listed.items():
        for value in values:
            others = {p: vs[0] for p, vs in listed.items() if p != parameter}
            yield parameter, value, others


CASES = [(q, *v) for q in sorted(SAME_ONLY_FOR) for v in _variants(q)]


def test_every_listed_function_has_samples_and_a_jax_counterpart():
    assert set(SAME_ONLY_FOR) == set(SAMPLES)
    for qualname in SAME_ONLY_FOR:
        assert api_table()[qualname]["jax"], qualname


@pytest.mark.parametrize("qualname,parameter,value,others", CASES,
                         ids=[f"{q}-{p}={v}" for q, p, v, _ in CASES])
def test_each_listed_value_computes_alike_in_both_libraries(qualname, parameter, value, others):
    jax.config.update("jax_enable_x64", True)  # the converted code's mode (conftest resets it)
    numpy_version, jax_version = _function(qualname), _function(api_table()[qualname]["jax"])
    for args, keywords in SAMPLES[qualname]:
        chosen = {p: v for p, v in {**others, parameter: value}.items() if v != DEFAULT}
        expected = numpy_version(*args, **keywords, **chosen)
        got = jax_version(*[np.asarray(a) for a in args], **keywords, **chosen)
        for want, have in zip(*(r if isinstance(r, (list, tuple)) else [r] for r in (expected, got))):
            have = np.asarray(have)
            assert have.dtype == np.asarray(want).dtype and have.shape == np.shape(want)
            np.testing.assert_allclose(have, want, rtol=1e-9, atol=1e-12)


def _kept(source: str) -> list[str]:
    result = convert_source(source, Config())
    return [f.message for f in result.findings if f.code == "NJ102"]


@pytest.mark.parametrize("call,names", [
    ("convolve2d(a, k, boundary='wrap')", "`boundary='wrap'`"),
    ("convolve2d(a, k, 'same', 'symm')", "`boundary='symm'`"),  # positional
    ("convolve2d(a, k, fillvalue=1.5)", "`fillvalue=1.5`"),
    ("convolve2d(a, k, boundary=edge)", "`boundary=edge` is not a value np2jax can read"),
    ("map_coordinates(a, [[0.5], [1.5]])", "`order` is left to SciPy's default"),
    ("map_coordinates(a, [[0.5], [1.5]], order=1)", "`mode` is left to SciPy's default"),
    ("map_coordinates(a, [[0.5], [1.5]], order=3, mode='nearest')", "`order=3`"),
])
def test_a_value_not_shown_alike_keeps_the_call_on_numpy(call, names):
    source = ("import numpy as np\nfrom scipy.signal import convolve2d\n"
              "from scipy.ndimage import map_coordinates\nedge = 'fill'\n"
              f"a = np.ones((4, 4))\nk = np.ones((2, 2))\nr = {call}\n")
    result = convert_source(source, Config())
    assert f"r = {call}\n" in result.converted  # the call itself is as it was
    (message,) = [f.message for f in result.findings if f.code == "NJ102"]
    assert names in message


@pytest.mark.parametrize("call", [
    "np.percentile(x, 50, method='nearest')", "np.quantile(x, 0.5)", "np.take(x, [0, 1], mode='clip')",
    "np.gradient(x)", "convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary='fill', fillvalue=0.0)",
])
def test_a_listed_value_converts(call):
    source = f"import numpy as np\nfrom scipy.signal import convolve2d\nx = np.ones(4)\nr = {call}\n"
    result = convert_source(source, Config())
    assert "r = np." not in result.converted and "r = convolve2d" not in result.converted
    assert _kept(source) == []


def test_eig_stays_on_numpy_for_its_real_results():
    (message,) = _kept("import numpy as np\nw, v = np.linalg.eig(np.eye(2))\n")
    assert "complex" in message


def test_a_submodule_jax_lacks_keeps_the_whole_dotted_name():
    source = "import numpy as np\nimport scipy.spatial\nd = scipy.spatial.distance.cdist(np.eye(2), np.eye(2))\n"
    result = convert_source(source, Config())
    assert "d = scipy.spatial.distance.cdist(" in result.converted
    assert "import scipy.spatial\n" in result.converted and "jax.scipy.spatial" not in result.converted
    assert _kept(source) == ["`scipy.spatial` is left as it was: JAX has no `scipy.spatial.distance.cdist`"]


def test_an_unknown_numpy_name_is_not_renamed_into_jax():
    source = "import numpy as np\nr = np.ones(2) + np.some_future_function(3)\n"
    result = convert_source(source, Config())
    assert "np.some_future_function(3)" in result.converted
    assert any("JAX has no `numpy.some_future_function`" in m for m in _kept(source))


@pytest.mark.parametrize("statement,converted", [
    ("np.nan_to_num(x, copy=False)", "x = jnp.nan_to_num(x)"),
    ("np.nan_to_num(x, False)", "x = jnp.nan_to_num(x)"),
    ("np.nan_to_num(x, copy=False, nan=-1.0, posinf=9.0)", "x = jnp.nan_to_num(x, nan=-1.0, posinf=9.0)"),
])
def test_nan_to_num_copy_false_is_a_write_into_its_argument(statement, converted):
    source = f"import numpy as np\nx = np.array([1.0, np.nan, np.inf])\n{statement}\nprint(x)\n"
    result = convert_source(source, Config())
    assert converted in result.converted.splitlines()
    assert result.findings == []


def test_nan_to_num_that_may_write_keeps_its_call():
    source = "import numpy as np\ncopy = False\nx = np.array([1.0, np.nan])\ny = np.nan_to_num(x, copy=copy)\n"
    result = convert_source(source, Config())
    assert "y = np.nan_to_num(x, copy=copy)" in result.converted
    assert [f.code for f in result.findings] == ["NJ206"]
