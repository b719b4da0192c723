"""How the analysis uses rules/api/proven.json (the API table proven by running NumPy/SciPy
and JAX side by side, tests/rules/test_api_proof.py): a call converts only with arguments
shown there to compute alike; another value, one np2jax cannot read where some value
differs, a parameter left to a default that differs, or a result of another type keeps the
call on NumPy with an NJ103 that names the argument."""

from __future__ import annotations

import numpy as np
import pytest

from np2jax.api import Config, convert_source
from np2jax.analysis.references import AS_ARRAY, numbers_alone_verdict
from np2jax.catalog import api_proof


def _kept(source: str, code: str = "NJ103") -> list[str]:
    result = convert_source(source, Config())
    return [f.message for f in result.findings if f.code == code]


@pytest.mark.parametrize("call,names", [
    ("convolve2d(a, k, boundary='wrap')", "differs for `boundary='wrap'`: JAX raises NotImplementedError"),
    ("convolve2d(a, k, 'same', 'symm')", "differs for `boundary='symm'`"),  # positional
    ("convolve2d(a, k, fillvalue=1.5)", "differs for `fillvalue=1.5`: JAX raises NotImplementedError"),
    ("convolve2d(a, k, fillvalue=2.5)", "`fillvalue=2.5` was not run beside JAX's version, which differs for"),
    # 0 was run, not 0.0: a value is matched by its spelling (0 and 0.0 make other dtypes)
    ("convolve2d(a, k, fillvalue=0.0)", "`fillvalue=0.0` was not run beside JAX's version"),
    ("convolve2d(a, k, boundary=edge)", "`boundary=edge` may be a value for which JAX's version differs"),
    ("map_coordinates(a, [[0.5], [1.5]])", "a missing `order`: JAX's version requires it"),
    ("map_coordinates(a, [[0.5], [1.5]], order=1)", "`mode` left to its default `'constant'`"),
    ("map_coordinates(a, [[0.5], [1.5]], order=3, mode='nearest')", "differs for `order=3`"),
    ("np.gradient(a, edge_order=2)", "differs for `edge_order=2`"),
    ("np.percentile(a, 50, method='weibull')", "differs for `method='weibull'`"),
    # JAX rounds a position halfway between two elements the other way
    ("np.percentile(a, 50, method='nearest')", "differs for `method='nearest'`: values differ"),
])
def test_a_value_not_proven_alike_keeps_the_call_on_numpy(call, names):
    source = ("import numpy as np\nfrom scipy.signal import convolve2d\n"
              "from scipy.ndimage import map_coordinates\nedge = 'fill'\n"
              f"a = np.ones((4, 4))\nk = np.ones((2, 2))\nr = {call}\n")
    result = convert_source(source, Config())
    assert f"r = {call}\n" in result.converted  # the call itself is as it was
    assert "a = jnp.ones((4, 4))" in result.converted  # the rest converts
    (message,) = [f.message for f in result.findings if f.code == "NJ103"]
    assert names in message, message


@pytest.mark.parametrize("call", [
    "np.percentile(x, 50, method='midpoint')", "np.quantile(x, 0.5)", "np.take(x, [0, 1], mode='clip')",
    "np.gradient(x)", "convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary='fill', fillvalue=0)",
])
def test_a_listed_value_converts(call):
    source = f"import numpy as np\nfrom scipy.signal import convolve2d\nx = np.ones(4)\nr = {call}\n"
    result = convert_source(source, Config())
    assert "r = np." not in result.converted and "r = convolve2d" not in result.converted
    assert _kept(source) == [] and _kept(source, "NJ102") == []


def test_a_kept_call_that_hands_a_jax_array_to_its_method_gets_a_numpy_array():
    """np.take calls `a.take(...)` for an `a` that is not a NumPy array: kept on NumPy with a
    JAX array, it would run JAX's take, which raises for mode="raise"."""
    source = ("import numpy as np\n\n\ndef main():\n    a = np.arange(5.0)\n"
              "    try:\n        r = np.take(a, [0, 9], mode='raise')\n"
              "    except IndexError:\n        r = a[:2]\n    return {'r': r, 'a': a}\n")
    result = convert_source(source, Config())
    assert "a = jnp.arange(5.0)" in result.converted
    assert "r = np.take(np.asarray(a), [0, 9], mode='raise')" in result.converted
    assert [f.code for f in result.findings] == ["NJ103"]
    assert convert_source(result.converted, Config()).converted == result.converted
    namespace: dict = {}
    exec(compile(result.converted, "<converted>", "exec"), namespace)
    assert list(namespace["main"]()["r"]) == [0.0, 1.0]  # NumPy's IndexError, caught


def test_eig_stays_on_numpy_for_its_real_results():
    (message,) = _kept("import numpy as np\nw, v = np.linalg.eig(np.eye(2))\n")
    assert "complex128" in message


def test_a_value_the_analysis_cannot_see_converts_only_when_every_value_was_the_same():
    source = "import numpy as np\ndef f(x, i, m):\n    return np.take(x, i, mode=m)\n"
    assert "np.take(x, i, mode=m)" in convert_source(source, Config()).converted
    (message,) = _kept(source)
    assert "`mode=m` may be a value for which JAX's version differs" in message
    values = api_proof()["numpy.sum"]["params"]["keepdims"]["values"]
    assert set(values.values()) == {"same"}  # so an unseen keepdims converts
    source = "import numpy as np\ndef f(x, keep):\n    return np.sum(x, keepdims=keep)\n"
    assert "return jnp.sum(jnp.asarray(x), keepdims=keep)" in convert_source(source, Config()).converted
    assert _kept(source) == []


def test_a_dtype_argument_is_matched_by_its_name():
    assert api_proof()["numpy.sum"]["params"]["dtype"]["values"]["'float32'"] == "same"
    source = "import numpy as np\ns = np.sum(np.ones(3), dtype=np.float32)\n"
    assert "jnp.sum(" in convert_source(source, Config()).converted
    assert _kept(source) == []


def test_a_call_inside_try_catching_what_numpy_raises_stays():
    """np.linalg.inv raises LinAlgError for a singular matrix, where JAX's returns inf or
    NaN: a handler for it would never run."""
    source = ("import numpy as np\ndef f(m):\n    try:\n        return np.linalg.inv(m)\n"
              "    except np.linalg.LinAlgError:\n        return np.eye(2)\n")
    verdicts = api_proof()["numpy.linalg.inv"]
    assert any(v.startswith("numpy raises: LinAlgError") for v in
               [verdicts["verdict"], *verdicts.get("edges", {}).values()]) or pytest.skip(
        "the grid has no singular matrix for inv")
    assert "np.linalg.inv(m)" in convert_source(source, Config()).converted
    (message,) = _kept(source)
    assert "catching LinAlgError" in message


def test_an_import_read_by_a_code_string_stays():
    source = ("import timeit\nimport numpy as np\n\n\ndef main():\n    x = np.ones(3)\n"
              "    t = timeit.timeit('np.sum(x)', globals={**globals(), 'x': x}, number=1)\n"
              "    return np.sum(x), t\n")
    result = convert_source(source, Config())
    assert "import numpy as np" in result.converted
    assert "jnp.sum(x), t" in result.converted


def test_a_submodule_jax_lacks_keeps_the_whole_dotted_name():
    source = "import numpy as np\nimport scipy.spatial\nd = scipy.spatial.distance.cdist(np.eye(2), np.eye(2))\n"
    result = convert_source(source, Config())
    assert "d = scipy.spatial.distance.cdist(" in result.converted
    assert "import scipy.spatial\n" in result.converted and "jax.scipy.spatial" not in result.converted
    assert _kept(source, "NJ102") == ["`scipy.spatial` is left as it was: JAX has no `scipy.spatial.distance.cdist`"]


def test_an_unknown_numpy_name_is_not_renamed_into_jax():
    source = "import numpy as np\nr = np.ones(2) + np.some_future_function(3)\n"
    result = convert_source(source, Config())
    assert "np.some_future_function(3)" in result.converted
    assert any("JAX has no `numpy.some_future_function`" in m for m in _kept(source, "NJ102"))


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


def test_a_call_that_differs_for_an_edge_value_the_data_may_hold_stays():
    """The proof gives every data argument NaN, infinities, ties and -0.0: a call whose JAX
    version differs for one stays on NumPy (nothing here shows the data free of them); a
    difference only for a shape edge (0-d, empty) does not keep it."""
    proof = api_proof()
    edges = ("nan", "inf", "ties", "negative-zero")
    differing = [name for name, record in proof.items() if name.startswith("scipy.special.")
                 and record.get("verdict") == "same"
                 and any(record.get("edges", {}).get(e, "same").startswith("differs") for e in edges)]
    alike = [name for name, record in proof.items() if name.startswith("scipy.special.")
             and record.get("verdict") == "same" and record.get("edges")
             and all(v == "same" for v in record["edges"].values())]
    assert "scipy.special.gammaln" in differing and "scipy.special.erf" in alike
    source = ("import numpy as np\nfrom scipy.special import gammaln, erf\n"
              "x = np.array([-np.inf, 1.0])\ng = gammaln(x)\ne = erf(x)\n")
    result = convert_source(source, Config())
    kept = [f.message for f in result.findings if f.code == "NJ103"]
    assert len(kept) == 1 and "for data holding infinities" in kept[0], kept
    assert "g = gammaln(x)" in result.converted and "jax.scipy.special.erf(" in result.converted
    # integer data holds no infinities: the same call converts, with NumPy's float64
    counts = ("import numpy as np\nfrom scipy.special import gammaln\n"
              "c = np.array([3, 7, 40], dtype=np.int32)\ng = gammaln(c + 1)\n")
    result = convert_source(counts, Config())
    assert not _kept(counts) and "gammaln(jnp.asarray(c + 1, dtype=jnp.float64))" in result.converted
    reference, converted = {}, {}
    exec(counts, reference)
    exec(compile(result.converted, "<converted>", "exec"), converted)
    np.testing.assert_allclose(np.asarray(converted["g"]), reference["g"], rtol=1e-14)
    # matrix_rank differs for 0-d data only (JAX's int32): converted
    assert proof["numpy.linalg.matrix_rank"]["edges"]["0-d"].startswith("differs")
    assert not _kept("import numpy as np\nr = np.linalg.matrix_rank(np.eye(3))\n")


@pytest.mark.parametrize("call, exception", [
    ("np.full_like(mask, value)", "OverflowError"),
    ("np.full_like(mask, 300 if value > 9 else value)", "OverflowError"),
    ("np.insert(mask, 1, value)", "OverflowError"),
    ("np.insert(mask, value, 1)", "IndexError"),
])
def test_a_call_given_a_python_number_numpy_refuses_stays_inside_a_try_catching_it(call, exception):
    """NumPy raises OverflowError for a Python int out of a uint8 array's range (JAX wraps
    it): inside `try/except OverflowError` the call stays on NumPy and the handler runs."""
    source = ("import numpy as np\n\n\ndef fill(mask, value):\n    try:\n"
              f"        return {call}\n    except {exception}:\n        return None\n\n\n"
              "def main():\n    mask = np.zeros(3, dtype=np.uint8)\n"
              "    return {'big': fill(mask, 300), 'small': fill(mask, 7)}\n")
    result = convert_source(source, Config())
    (message,) = [f.message for f in result.findings if f.code == "NJ103"]
    assert exception in message and ("Python number" in message or "some data" in message), message
    assert "mask = jnp.zeros(3, dtype=jnp.uint8)" in result.converted
    namespace: dict = {}
    exec(compile(result.converted, "<converted>", "exec"), namespace)
    assert namespace["main"]()["big"] is None  # NumPy's error, caught


@pytest.mark.parametrize("argument", ["7", "np.uint8(3)", "0.5"])
def test_a_number_numpy_takes_for_any_integer_data_converts_inside_a_try(argument):
    source = ("import numpy as np\nmask = np.zeros(3, dtype=np.uint8)\ntry:\n"
              f"    r = np.full_like(mask, {argument})\nexcept OverflowError:\n    r = None\n")
    result = convert_source(source, Config())
    assert "r = jnp.full_like(" in result.converted, result.converted
    namespace: dict = {}
    exec(compile(result.converted, "<converted>", "exec"), namespace)
    assert namespace["r"] is not None


@pytest.mark.parametrize("call, expected", [
    ("np.linalg.eigh(g)", "jnp.linalg.eigh(g, symmetrize_input=False)"),
    ("np.linalg.eigvalsh(g, UPLO='U')", "jnp.linalg.eigvalsh(g, UPLO='U', symmetrize_input=False)"),
    ("np.linalg.cholesky(g)", "jnp.linalg.cholesky(g, symmetrize_input=False)"),
])
def test_a_call_is_given_the_jax_options_running_both_proved_it_with(call, expected):
    source = f"import numpy as np\ng = np.tril(np.ones((3, 3))) + 2 * np.eye(3)\nr = {call}\n"
    result = convert_source(source, Config())
    assert f"r = {expected}\n" in result.converted, result.converted
    assert not [f for f in result.findings if f.code == "NJ103"]
    reference, converted = {}, {}
    exec(source, reference)
    exec(compile(result.converted, "<converted>", "exec"), converted)
    first = (lambda r: r[0]) if "eigh(" in call else (lambda r: r)  # eigh: the eigenvalues
    np.testing.assert_allclose(np.asarray(first(converted["r"])), first(reference["r"]))


@pytest.mark.parametrize("setup, call, reason", [
    # dtypes the code shows, for which running both showed JAX's version differing
    ("a = np.array([1, 2, 3])", "np.convolve(a, [1, 1])", "for int64 data"),
    ("a = np.array([1, 2, 4])", "np.reciprocal(a)", "for int64 data"),
    ("g = np.array([16, 16], dtype=np.uint8)", "np.multiply.accumulate(g)", "for uint8 data"),
    ("a = np.array([3, 9, 4, 7])", "np.polyder(a)", "for int64 data"),
    # an option proven again on int64 data
    ("a = np.array([3, 9, 4, 7])", "np.quantile(a, 0.5, method='lower')", "`method='lower'` on int64"),
    ("a = np.array([123, 456, 789])", "np.round(a, -1)", "`decimals=-1` on int64"),
    # an option taking an array, of a dtype the code shows
    ("lab = np.array([0, 1, 1])", "np.bincount(lab, weights=np.array([1, 2, 3]))", "`weights` of int64"),
])
def test_a_call_on_data_of_a_dtype_jax_differs_for_stays_on_numpy(setup, call, reason):
    source = f"import numpy as np\n{setup}\nr = {call}\n"
    result = convert_source(source, Config())
    (message,) = [f.message for f in result.findings if f.code == "NJ103"]
    assert reason in message, message
    reference, converted = {}, {}
    exec(source, reference)
    exec(compile(result.converted, "<converted>", "exec"), converted)
    assert np.asarray(converted["r"]).dtype == reference["r"].dtype
    np.testing.assert_array_equal(np.asarray(converted["r"]), reference["r"])


@pytest.mark.parametrize("setup, call", [
    ("a = np.array([1.0, 2.0, 3.0])", "np.convolve(a, [1.0, 1.0])"),   # float64: the base call
    ("p = np.array([200, 100, 7], dtype=np.uint8)", "np.mean(p)"),      # NJ402 asks for float64
    ("a = np.array([3, 9, 4, 7])", "np.quantile(a, 0.5)"),              # linear: proven the same
    ("a = np.array([123, 456, 789])", "np.round(a)"),
    # the proof's q was a float64 array, which promotes float32 data: a Python q does not
    ("x = np.linspace(0, 1, 5).astype(np.float32)", "np.percentile(x, 50)"),
    # NumPy computes in float64: JAX is given the data as float64 (NJ402)
    ("x = np.linspace(0, 1, 5).astype(np.float32)", "np.cov(x, x[::-1])"),
    ("x = np.linspace(0, 1, 5).astype(np.float32)", "np.interp(x, x, x ** 2)"),
])
def test_a_call_on_data_of_a_dtype_proven_the_same_converts(setup, call):
    source = f"import numpy as np\n{setup}\nr = {call}\n"
    result = convert_source(source, Config())
    assert not [f for f in result.findings if f.code == "NJ103"], result.findings
    assert "r = np." not in result.converted
    reference, converted = {}, {}
    exec(source, reference)
    exec(compile(result.converted, "<converted>", "exec"), converted)
    assert np.asarray(converted["r"]).dtype == np.asarray(reference["r"]).dtype


@pytest.mark.parametrize(("source", "code"), [
    ("import numpy as np\n\n\ndef main():\n    start = np.datetime64('2024-01-28')\n"
     "    days = start + np.arange(3)\n    return {'days': [str(d) for d in days]}\n", "NJ104"),
    ("import numpy as np\n\nSTART = np.datetime64('2024-01-28')\n\n\ndef main():\n"
     "    days = START + np.arange(3)\n    return {'days': [str(d) for d in days]}\n", "NJ102"),
])
def test_dates_keep_their_function_or_the_module_on_numpy(source, code):
    """JAX has no datetime arrays: `start + np.arange(3)` must add NumPy's range to NumPy's
    date. Made in a function, the function stays on NumPy as written (NJ104); made at
    module level, every call of the module does (NJ102)."""
    result = convert_source(source, Config())
    assert "np.arange(3)" in result.converted and "jnp.arange" not in result.converted
    assert any("makes dates or times" in f.message for f in result.findings if f.code == code)
    namespace: dict = {}
    exec(compile(result.converted, "<converted>", "exec"), namespace)
    assert namespace["main"]()["days"] == ["2024-01-28", "2024-01-29", "2024-01-30"]


@pytest.mark.parametrize("qualname", ["numpy.sqrt", "numpy.maximum", "numpy.clip", "numpy.round",
                                      "scipy.special.erf"])
def test_the_proof_records_which_results_of_python_numbers_are_weak_in_jax(qualname):
    """`np.sqrt(2.5)` is NumPy's float64 scalar and JAX's weakly typed array, which turns
    float32 beside float32 data: the proof runs every callable on Python numbers alone and
    records AS_ARRAY where NumPy's 64-bit array of the number gives JAX NumPy's result."""
    assert numbers_alone_verdict(qualname) == AS_ARRAY
    assert numbers_alone_verdict("numpy.sum") == "same"  # a reduction's result is strong


@pytest.mark.parametrize("call", ["full(3, 2.5)", "where(np.array([True, False]), 2.5, 0.5)"])
def test_np_full_and_np_where_of_python_numbers_are_weak_in_jax(call):
    """NJ116 reads np.full's fill value and np.where's two values apart from the proof (the
    proof gives np.full's fill value as an option and np.where's condition a number too):
    their JAX results of Python numbers are weakly typed, checked here."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)  # as every converted module does
    assert eval(f"jnp.{call}", {"jnp": jnp, "np": np}).weak_type


@pytest.mark.parametrize("expression", [
    "np.clip(alpha, 0.0, 1.0)", "np.round(2.567, 2)", "np.sqrt(d)", "np.abs(-3)",
    "np.where(x > 1, 1.0, 0.0)", "np.full(5, 0.5)", "np.maximum(2, 3.5)", "np.sinc(alpha)"])
def test_numbers_alone_keep_numpys_dtype_beside_float32_data(expression):
    """`x32 * np.sqrt(d)`: NumPy's 64-bit scalar or array makes the product 64-bit; JAX's
    weakly typed result would make it float32 unless NJ116 gives the number NumPy's dtype."""
    source = (f"import numpy as np\nx = np.linspace(0, 2, 5).astype(np.float32)\nalpha = 0.25\n"
              f"d = x.shape[0]\nr = x * {expression}\n")
    result = convert_source(source, Config())
    reference, converted = {}, {}
    exec(source, reference)
    exec(compile(result.converted, "<converted>", "exec"), converted)
    assert str(reference["r"].dtype) == "float64"
    assert str(np.asarray(converted["r"]).dtype) == "float64", result.converted
    np.testing.assert_allclose(np.asarray(converted["r"]), reference["r"], rtol=1e-15)
