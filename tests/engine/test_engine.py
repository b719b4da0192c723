"""The conversion engine through its Python API: what it rewrites, what it leaves, and why.

These tests convert in the 32-bit mode (X32) unless they say otherwise: the 64-bit default
adds its `jax.config.update("jax_enable_x64", True)` line to every converted module, which
tests/rules/test_precision.py covers and which would only repeat itself in every expected text."""

from __future__ import annotations

import textwrap

import pytest

from np2jax.api import Config, convert_source
from np2jax.files import SourceError


X32 = Config(x64=False)


def convert(source: str, **config):
    return convert_source(textwrap.dedent(source).lstrip("\n"), Config(**{"x64": False, **config}))


def converted(source: str, **config) -> str:
    return convert(source, **config).converted


def codes(source: str, **config) -> list[str]:
    return sorted(f.code for f in convert(source, **config).findings)


CONVERSIONS = {
    "import-as": (
        "import numpy as np\nx = np.sum(np.ones(3))\n",
        "import jax.numpy as jnp\n\nx = jnp.sum(jnp.ones(3))\n",
    ),
    "plain-import": (
        "import numpy\nx = numpy.mean(numpy.ones(3))\n",
        "import jax.numpy as jnp\n\nx = jnp.mean(jnp.ones(3))\n",
    ),
    "from-import-alias": (
        "from numpy import sum as npsum\nimport numpy as np\ny = npsum(np.ones(3))\n",
        "import jax.numpy as jnp\n\ny = jnp.sum(jnp.ones(3))\n",
    ),
    "from-submodule": (
        "from numpy.linalg import norm\nimport numpy as np\ny = norm(np.ones(2))\n",
        "import jax.numpy as jnp\n\ny = jnp.linalg.norm(jnp.ones(2))\n",
    ),
    "scipy-module": (
        "import scipy.signal\nimport numpy as np\nz = scipy.signal.convolve2d(np.eye(3), np.ones((2, 2)))\n",
        "import jax.scipy.signal\nimport jax.numpy as jnp\n\n"
        "z = jax.scipy.signal.convolve2d(jnp.eye(3), jnp.ones((2, 2)))\n",
    ),
    "scipy-from": (
        "from scipy import special\nimport numpy as np\nz = special.erf(np.ones(2))\n",
        "import jax.scipy.special\nimport jax.numpy as jnp\n\nz = jax.scipy.special.erf(jnp.ones(2))\n",
    ),
    "local-import": (
        "def f():\n    import numpy as np\n    return np.ones(2)\n",
        "import jax.numpy as jnp\n\ndef f():\n    return jnp.ones(2)\n",
    ),
    "list-arguments": (
        "import numpy as np\nt = np.sum([1, 2]) + np.dot([1, 2], [3, 4]) + np.max((3.0, 9.5))\n",
        "import jax.numpy as jnp\n\nt = jnp.sum(jnp.array([1, 2])) + jnp.dot(jnp.array([1, 2]), "
        "jnp.array([3, 4])) + jnp.max(jnp.array((3.0, 9.5)))\n",
    ),
    "lists-left-in-shape-and-sequence-positions": (
        "import numpy as np\nz = np.zeros([3, 4])\nc = np.concatenate([z, z])\na = np.array([1, 2])\n",
        "import jax.numpy as jnp\n\nz = jnp.zeros([3, 4])\nc = jnp.concatenate([z, z])\na = jnp.array([1, 2])\n",
    ),
    "renamed-keywords": (
        "import numpy as np\nx = np.clip(np.ones(3), a_min=0, a_max=0.5)\n",
        "import jax.numpy as jnp\n\nx = jnp.clip(jnp.ones(3), min=0, max=0.5)\n",
    ),
    # libcst names `np.cos(x).reshape` `numpy.cos.reshape`; only dotted names are references.
    "method-on-a-call-result": (
        "import numpy as np\nX = np.cos(np.arange(6.0)).reshape(2, 3)\n",
        "import jax.numpy as jnp\n\nX = jnp.cos(jnp.arange(6.0)).reshape(2, 3)\n",
    ),
    "static-shape-work-stays-numpy": (
        "import numpy as np\ndef flat(x):\n    return x.reshape((np.prod(x.shape),)) + np.zeros(1)\n",
        "import numpy as np\nimport jax.numpy as jnp\n\ndef flat(x):\n"
        "    return x.reshape((np.prod(x.shape),)) + jnp.zeros(1)\n",
    ),
    "taken-alias": (
        "import numpy as np\njnp = 3\nx = np.ones(2)\n",
        "import jax.numpy as jnp_\n\njnp = 3\nx = jnp_.ones(2)\n",
    ),
    "existing-jax-import-reused": (
        "import jax.numpy as J\nimport numpy as np\nx = np.ones(2) + J.zeros(2)\n",
        "import jax.numpy as J\nx = J.ones(2) + J.zeros(2)\n",
    ),
}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_conversion(name):
    source, expected = CONVERSIONS[name]
    result = convert_source(source, X32)
    assert result.converted == expected
    assert convert_source(expected, X32).converted == expected  # idempotent


@pytest.mark.parametrize("source", [
    "def f(np):\n    return np.sum(3)\n",  # a parameter called np
    "import numpy as np\ndef g():\n    np = 3\n    return np.real\n",  # a local that shadows np
    "x = 1  # numpy is mentioned, not imported\n",
    "import jax.numpy as jnp\ny = jnp.sum(jnp.ones(3))\n",
])
def test_code_that_is_not_numpy_is_left_alone(source):
    result = convert_source(source, X32)
    assert result.converted == source
    assert result.findings == []


def test_shadowed_name_inside_function_is_left_while_module_level_converts():
    out = converted("""
        import numpy as np
        def g():
            np = {"sum": 1}
            return np["sum"]
        z = np.zeros(2)
    """)
    assert 'np = {"sum": 1}' in out and 'return np["sum"]' in out
    assert "z = jnp.zeros(2)" in out


def test_names_jax_lacks_stay_numpy_and_are_reported():
    result = convert("""
        import numpy as np
        from scipy.ndimage import gaussian_filter
        w = np.lib.stride_tricks.sliding_window_view(np.arange(6), 3)
        s = gaussian_filter(np.ones((4, 4)), sigma=1)
    """)
    assert "np.lib.stride_tricks.sliding_window_view(jnp.arange(6), 3)" in result.converted
    assert "gaussian_filter(jnp.ones((4, 4)), sigma=1)" in result.converted
    assert "import numpy as np" in result.converted
    assert "from scipy.ndimage import gaussian_filter" in result.converted
    # and in the 32-bit mode the filter, kept on SciPy, is handed float32 data (NJ401)
    assert sorted(f.code for f in result.findings) == ["NJ102", "NJ102", "NJ401"]


@pytest.mark.parametrize("call", ["np.isscalar(y)", "np.vectorize(abs)(y)",
                                  "np.apply_along_axis(sum, 0, y)"])
def test_names_whose_jax_version_answers_differently_stay_numpy(call):
    result = convert_source(f"import numpy as np\ny = np.ones(2)\nr = {call}\n", X32)
    assert f"r = {call}" in result.converted
    # a kept call whose answer follows the values' precision is handed float32 data: NJ401
    precision = ["NJ401"] if "apply_along_axis" in call else []
    assert [f.code for f in result.findings] == ["NJ102", *precision]


def test_unsupported_keyword_keeps_the_call_on_numpy():
    source = "import numpy as np\nr = np.round(np.ones(2), decimals=1, casting='unsafe')\n"
    result = convert_source(source, Config())
    assert "np.round(" in result.converted
    assert [f.code for f in result.findings] == ["NJ102"]


@pytest.mark.parametrize("source, expected", [
    # writes into parameters: NumPy changes the caller's array, a rebinding would not
    ("import numpy as np\ndef f(x):\n    x[0] = 1.0\n", ["NJ201", "NJ209"]),
    ("import numpy as np\ndef f(x):\n    x[0] += 1.0\n", ["NJ202", "NJ209"]),
    ("import numpy as np\ndef f(v):\n    v /= v.sum()\n", ["NJ203", "NJ209"]),
    ("import numpy as np\na = np.ones(3)\nb = a\na += 1\n", ["NJ203"]),
    ("import numpy as np\ndef f(d):\n    np.negative(d, out=d)\n", ["NJ204", "NJ209"]),
    ("import numpy as np\ndef f(z):\n    np.multiply(z, z, z)\n", ["NJ204", "NJ209"]),
    ("import numpy as np\ndef f(a):\n    a.sort()\n", ["NJ205", "NJ209"]),
    ("import numpy as np\ndef f(b):\n    b.shape = (2, 2)\n", ["NJ205", "NJ209"]),
    ("import numpy as np\ndef f(c):\n    np.fill_diagonal(c, 0.0)\n", ["NJ206", "NJ209"]),
    ("import numpy as np\ndef f(z):\n    np.add.at(z, [0, 0], 1.0)\n", ["NJ207"]),
    ("import numpy as np\na = np.ones(3)\nb = a\na[0] = 5.0\n", ["NJ201"]),  # an alias
    ("import numpy as np\ndef f(b):\n    a = b[1:]\n    a[0] = 5.0\n", ["NJ201"]),  # a view of a parameter
    ("import numpy as np\nm = np.arange(6.0).reshape(2, 3)\nm[0], m[1] = m[1], m[0]\n", ["NJ201", "NJ201"]),
    ("import numpy as np\nnp.random.seed(0)\n", ["NJ301"]),
    ("import numpy as np\nx = np.zeros(3, dtype=np.float64)\n", ["NJ401"]),
    ("import numpy as np\nx = np.zeros(3).astype(float)\n", ["NJ401"]),
    ("import numpy as np\ntol = 1e-10\n", ["NJ401"]),
])
def test_left_unconverted_always_has_a_finding(source, expected):
    assert codes(source) == expected


@pytest.mark.parametrize("source", [
    "import numpy as np\nd = {}\nd['a'] = np.ones(2)\n",  # a dict store
    "import numpy as np\nnames = ['b', 'a']\nnames.sort()\nx = np.ones(2)\n",  # a list method
    "import numpy as np\ntotal = 0\nfor i in range(3):\n    total += i\n",  # numbers
    "import numpy as np\ndef f():\n    a = np.ones(3)\n    a += 1\n    return a\n",  # private array
    "import numpy as np\ny = np.negative(np.ones(2), out=None)\n",
])
def test_no_false_alarm(source):
    assert codes(source) == []


def test_x64_adds_the_config_line_after_the_imports_and_silences_float64_findings():
    source = '"""Doc."""\nfrom __future__ import annotations\nimport numpy as np\nx = np.zeros(3, dtype=np.float64)\n'
    result = convert_source(source, Config(x64=True))
    assert result.converted == (
        '"""Doc."""\nfrom __future__ import annotations\nimport jax\nimport jax.numpy as jnp\n'
        'jax.config.update("jax_enable_x64", True)\n\nx = jnp.zeros(3, dtype=jnp.float64)\n')
    assert result.findings == []
    assert convert_source(result.converted, Config(x64=True)).converted == result.converted


def test_suppression_comments():
    result = convert("""
        import numpy as np
        x = np.sum([1, 2])  # np2jax: ignore
        def f(z):
            z[0] = 1  # np2jax: ignore[NJ201]
            z[1] = 2  # np2jax: ignore[NJ999]
    """)
    assert "x = np.sum([1, 2])  # np2jax: ignore" in result.converted
    assert [(f.code, f.line) for f in result.findings if f.code != "NJ209"] == [("NJ201", 5)]


def test_suppressing_an_in_place_rewrite_keeps_the_array_on_numpy():
    out = converted("import numpy as np\nx = np.zeros(3)\nx[0] = 1.0  # np2jax: ignore[NJ201]\n")
    assert out == "import numpy as np\nx = np.zeros(3)\nx[0] = 1.0  # np2jax: ignore[NJ201]\n"


def test_suppressing_a_companion_fix_keeps_the_whole_call_on_numpy():
    # Never half-converted: jnp.sum([1, 2]) would raise TypeError.
    out = converted("import numpy as np\ny = np.sum([1, 2])  # np2jax: ignore[NJ110]\n")
    assert "y = np.sum([1, 2])" in out
    assert converted("import numpy as np\ny = np.sum([1, 2])\n", ignore=("NJ110",)) == \
        "import numpy as np\ny = np.sum([1, 2])\n"


def test_select_and_ignore_filter_findings_by_code_or_prefix():
    source = "import numpy as np\nx = np.zeros(3, dtype=np.float64)\ndef f(x):\n    x[0] = 1\n"
    assert codes(source) == ["NJ201", "NJ209", "NJ401"]
    assert codes(source, select=("NJ20",)) == ["NJ201", "NJ209"]
    assert codes(source, ignore=("NJ4", "NJ209")) == ["NJ201"]


def test_findings_have_positions_and_names():
    (finding,) = convert("import numpy as np\ndef f(x):\n    x[0] = 1.0\n", ignore=("NJ209",)).findings
    assert (finding.line, finding.col, finding.code, finding.name) == (3, 5, "NJ201", "subscript-assignment")
    assert finding.severity == "error" and finding.fixable is False
    assert finding.format() == f"<string>:3:5: NJ201 {finding.message}"


def test_changes_record_each_rewrite():
    result = convert("import numpy as np\nt = np.sum([1, 2])\n")
    assert sorted(c.code for c in result.changes) == ["NJ101", "NJ110"]
    assert all(c.fixable for c in result.changes)


def test_syntax_error_names_the_line():
    with pytest.raises(SourceError) as error:
        convert_source("import numpy as np\nx = (1,\n", path="bad.py")
    assert str(error.value).startswith("bad.py:")
    assert "syntax error" in str(error.value)


def test_comments_and_formatting_survive():
    source = "import numpy as np  # arrays\n\n\n# the total\nx = np.sum(  np.ones(3)  )  # keep me\n"
    assert converted(source) == (
        "import jax.numpy as jnp\n\n\n# the total\nx = jnp.sum(  jnp.ones(3)  )  # keep me\n")


ALIASED = {
    "global-read-by-a-function": "a = np.ones(3)\ndef get():\n    return a\nb = get()\na += 1\n",
    "appended-in-a-loop": "def f():\n    a = np.ones(3)\n    hist = []\n    for i in range(3):\n"
                          "        hist.append(a)\n        a += 1\n    return hist\n",
    # a view of a private array is carried to its base (views); of a parameter, it is not
    "basic-slice-view": "def f(b):\n    a = b[1:]\n    a += 1\n    return b\n",
    "asarray-view": "def f(b):\n    a = np.asarray(b)\n    a += 1\n    return a\n",
    "call-result": "def f(g):\n    a = g()\n    a += 1\n    return a\n",
    "passed-to-a-function-first": "def f(store):\n    a = np.zeros(2)\n    store(a)\n    a += 1\n    return a\n",
    "transpose-kept": "def f():\n    a = np.zeros((2, 2, 2))\n    t = np.transpose(a, (1, 0, 2))\n    a += 1\n    return t\n",
    "conditional-alias": "def f(b, c):\n    a = b if c else np.zeros(2)\n    a += 1\n    return a\n",
    # the object hands its array out: another name may hold it
    "attribute-handed-out": "class A:\n    def __init__(self):\n        self.w = np.zeros(2)\n"
                            "    def step(self):\n        self.w -= 1\n    def weights(self):\n"
                            "        return self.w\n",
}
PRIVATE = {
    # an attribute only the object holds: `self.w -= 1` rebinds it (issue 17)
    "private-attribute": "class A:\n    def __init__(self):\n        self.w = np.zeros(2)\n"
                         "    def step(self):\n        self.w -= 1\n",
    "stored-only-after": "def f():\n    a = np.ones(3)\n    a += 1\n    return [a]\n",
    "copy": "def f(b):\n    a = b.copy()\n    a += 1\n    return a\n",
    "printed-first": "def f():\n    a = np.zeros(2)\n    print(a)\n    a += 1\n    return a\n",
    "module-level-private": "a = np.ones(3)\na += 1\nprint(a)\n",
    "number-attribute": "class A:\n    def __init__(self):\n        self.n = 0\n    def step(self):\n        self.n += 1\n",
}


@pytest.mark.parametrize("name", sorted(ALIASED))
def test_update_seen_through_another_name_is_reported(name):
    assert "NJ203" in codes("import numpy as np\n" + ALIASED[name])


@pytest.mark.parametrize("name", sorted(PRIVATE))
def test_private_update_is_not_reported(name):
    assert "NJ203" not in codes("import numpy as np\n" + PRIVATE[name])


def test_members_of_a_sequence_of_arrays_are_wrapped_but_block_structure_is_not():
    out = converted("import numpy as np\ns = np.column_stack(([1, 2], [3, 4]))\nb = np.block([[1, 2], [3, 4]])\n")
    assert "jnp.column_stack((jnp.array([1, 2]), jnp.array([3, 4])))" in out
    assert "jnp.block([[1, 2], [3, 4]])" in out


def test_rounding_to_decimals_is_reported_unless_x64():
    source = "import numpy as np\nx = np.ones(2)\nr = np.round(x, 2)\ns = x.round(1)\nt = np.round(x)\n"
    assert codes(source) == ["NJ401", "NJ401"]
    assert codes(source, x64=True) == []


def test_shape_work_inside_converted_calls_is_idempotent():
    once = converted("import numpy as np\nx = np.ones(4)\nz = np.zeros(np.prod(x.shape))\n")
    assert "jnp.zeros(np.prod(x.shape))" in once
    assert convert_source(once, X32).converted == once


def test_annotations_are_left_alone():
    source = ("import numpy as np\nimport numpy.typing as npt\n\n"
              "def f(x: npt.NDArray[np.float64]) -> np.ndarray:\n    return np.sum(x)\n")
    result = convert_source(source, X32)
    assert "def f(x: npt.NDArray[np.float64]) -> np.ndarray:" in result.converted
    assert "return jnp.sum(jnp.asarray(x))" in result.converted  # x may be a list (NJ111, info)
    assert result.findings == []


def test_static_sequence_parameters_are_not_wrapped():
    out = converted("import numpy as np\nx = np.pad(np.ones(3), (1, 2))\ny = np.split(np.ones(6), [2, 4])\n")
    assert "jnp.pad(jnp.ones(3), (1, 2))" in out and "jnp.split(jnp.ones(6), [2, 4])" in out


def test_a_dotted_import_still_in_use_is_kept():
    out = converted("import numpy as np\nimport scipy.ndimage\ny = scipy.ndimage.gaussian_filter(np.ones((4, 4)), 1.0)\n")
    assert out.startswith("import scipy.ndimage\n")


def test_star_imports_are_reported():
    assert codes("from numpy import *\nx = sum(arange(4))\n") == ["NJ102"]


IN_PLACE_CONVERSIONS = {
    "store": ("x = np.zeros(3)\nx[0] = 1.0\n", "x = jnp.zeros(3)\nx = x.at[0].set(1.0)\n"),
    "chained-index": ("g = np.zeros((2, 3))\ng[1][2] = 5\n", "g = jnp.zeros((2, 3))\ng = g.at[1, 2].set(5)\n"),
    "augmented-basic": ("x = np.zeros(3)\nx[1:] += 2.0\n", "x = jnp.zeros(3)\nx = x.at[1:].add(2.0)\n"),
    "augmented-other-operator": ("x = np.arange(3)\nx[0] //= 2\n",
                                 "x = jnp.arange(3)\nx = x.at[0].set(x[0] // 2)\n"),
    "repeated-fancy-index": ("w = np.zeros(4)\nw[[1, 1, 3]] += 1.0\n",
                             "w = jnp.zeros(4)\nw = w.at[jnp.array([1, 1, 3])].set(w[jnp.array([1, 1, 3])] + 1.0)\n"),
    "mask-of-itself": ("x = np.arange(4.0)\nx[x > 2] = 0.0\n", "x = jnp.arange(4.0)\nx = jnp.where(x > 2, 0.0, x).astype(x.dtype)\n"),
    "mask-elementwise": ("x = np.arange(4.0) - 2\nx[x < 0] = np.sqrt(-x[x < 0])\n",
                         "x = jnp.arange(4.0) - 2\nx = jnp.where(x < 0, jnp.sqrt(-x), x).astype(x.dtype)\n"),
    "swap-1d": ("a = np.arange(3.0)\na[0], a[1] = a[1], a[0]\n",
                "a = jnp.arange(3.0)\n_value, _value1 = a[1], a[0]\na = a.at[0].set(_value)\na = a.at[1].set(_value1)\n"),
    "out": ("d = np.arange(3.0)\nnp.negative(d, out=d)\n", "d = jnp.arange(3.0)\nd = jnp.negative(d)\n"),
    "out-elsewhere-casts": ("d = np.zeros(3)\nnp.add(np.ones(3), 1, out=d)\n",
                            "d = jnp.zeros(3)\nd = jnp.add(jnp.ones(3), 1).astype(d.dtype)\n"),
    "sort": ("a = np.array([3.0, 1.0])\na.sort()\n", "a = jnp.array([3.0, 1.0])\na = jnp.sort(a)\n"),
    "ufunc-at": ("z = np.zeros(4)\nnp.add.at(z, [0, 0], 1.0)\n",
                 "z = jnp.zeros(4)\nz = z.at[jnp.array([0, 0])].add(1.0)\n"),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE_CONVERSIONS))
def test_in_place_writes_on_private_arrays_convert(name):
    source, expected = IN_PLACE_CONVERSIONS[name]
    result = convert_source("import numpy as np\n" + source, X32)
    assert result.converted == "import jax.numpy as jnp\n\n" + expected
    assert result.findings == []


@pytest.mark.parametrize("dynamic", ['exec("x = 1")', 'globals()["x"] = 1', 'setattr(obj, "x", 1)'])
def test_code_the_analysis_cannot_see_through_is_reported_not_guessed(dynamic):
    source = f"import numpy as np\nobj = None\ndef f():\n    x = np.zeros(3)\n    {dynamic}\n    x[0] = 1.0\n    return x\n"
    result = convert_source(source, X32)
    assert "x[0] = 1.0" in result.converted
    assert any(f.code == "NJ201" and "through which the array may be changed unseen" in f.message
               for f in result.findings)


def test_a_finding_about_a_conversion_goes_when_the_conversion_is_suppressed():
    source = "import numpy as np\nrng = np.random.default_rng()\nx = rng.normal(size=3)\n"
    assert "NJ302" in codes(source)  # converted with an explicit seed: says so
    suppressed = source.replace("size=3)", "size=3)  # np2jax: ignore[NJ302]")
    result = convert_source(suppressed, X32)
    assert "default_rng()" in result.converted
    assert not any("jax.random.key(0)" in f.message for f in result.findings)


def test_code_that_is_already_jax_gets_no_numpy_findings():
    """In a module importing both NumPy and jax.numpy, jnp's functions are JAX's:
    `jnp.clip(x, 0.0, 1.0)` passes no `out`, and `k /= s` of a fresh `jnp.ones` array has
    nothing that could see the change (issue 20, item 3)."""
    source = ("import numpy as np\nimport jax.numpy as jnp\n\nx = jnp.linspace(0.0, 2.0, 5)\n"
              "y = jnp.clip(x, 0.0, 1.0)\nk = jnp.ones((5, 5))\nk /= jnp.sum(k)\n"
              "z = np.zeros(3)\n")
    result = convert_source(source, X32)
    assert result.findings == []
    assert "y = jnp.clip(x, 0.0, 1.0)" in result.converted


def test_an_array_unpacked_or_indexed_from_a_call_returning_jax_arrays_is_jax():
    """`(labels, d), centers = step(X, centers)` and `step(X, centers)[1]`: `centers` is the
    element of step's returned tuples at that position, a JAX array when what the callers
    pass is (issue 20: np2jax run on its own output says nothing new). Passed a list, the
    parameter still gets its NJ112 note."""
    source = ("import numpy as np\nimport jax.numpy as jnp\n\n\ndef step(X, centers):\n"
              "    d = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)\n"
              "    return (d.argmin(axis=1), d), centers * 0.5\n\n\ndef main():\n"
              "    X = jnp.ones((4, 2))\n    centers = INIT\n"
              "    (labels, d), centers = step(X, centers)\n    centers = step(X, centers)[1]\n"
              "    return labels, centers\n")
    jax_source = source.replace("INIT", "jnp.zeros((2, 2))")
    result = convert_source(jax_source)
    assert result.findings == [] and result.converted == jax_source
    listed = convert_source(source.replace("INIT", "[[0.0, 0.0], [1.0, 1.0]]"))
    assert [(f.code, f.line) for f in listed.findings] == [("NJ112", 6)]


def test_a_finding_is_one_line_and_quotes_long_code_shortened():
    """Code quoted in a message loses its line breaks, and its middle past 60 characters
    (issue 20, item 4): a finding on a multi-line expression stays one line."""
    from np2jax.rules.base import QUOTED_CODE_LIMIT, one_line

    source = ("import numpy as np\nx = np.linspace(0.0, 4.0, 5)\nlevels = (x * 90.0\n"
              "          + 100.0\n          + np.sin(x) * 30.0 + np.cos(x) * 12.5).astype(np.uint32)\n")
    (finding,) = [f for f in convert_source(source).findings if f.code == "NJ403"]
    assert "\n" not in finding.message
    quoted = finding.message.split("`")[1]
    assert len(quoted) <= QUOTED_CODE_LIMIT and quoted.startswith("(x * 90.0 + 100.0") and " ... " in quoted
    assert one_line("`a`  and\n `b\n  + c`") == "`a` and `b + c`"


def test_a_draw_from_a_numpy_generator_is_a_new_array():
    """`rng.normal(...)` is fresh: a write into it is not said to share memory with the
    draw (issue 20, item 4); the draw stays NumPy, so the write stays as it was."""
    source = ("import numpy as np\nrng = np.random.default_rng(0)\nnoise = rng.normal(size=4)\n"
              "noise[0] = 0.0\n")
    (finding,) = [f for f in convert_source(source, X32).findings if f.code == "NJ201"]
    assert "share memory" not in finding.message and "may not hold a JAX array" in finding.message
