"""Tests of rules/api/numpy_jax.json and its generator, np2jax/apigen.py."""

from __future__ import annotations

import importlib
import inspect
import json
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy

from np2jax import apigen

TABLE_PATH = Path(__file__).parents[2] / "rules" / "api" / "numpy_jax.json"
_MISSING = object()


@pytest.fixture(scope="module")
def table() -> dict:
    return json.loads(TABLE_PATH.read_text())


@pytest.fixture(scope="module")
def entries(table) -> dict:
    return table["entries"]


def resolve(dotted: str):
    """Independent of apigen.resolve on purpose: import a prefix, getattr the rest."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def first_role(entry: dict) -> str:
    return entry["params"][0]["role"]


# --- the key test: every counterpart exists in the installed JAX -------------


def test_every_jax_counterpart_resolves(entries):
    missing = [k for k, e in entries.items() if e["jax"] is not None and resolve(e["jax"]) is _MISSING]
    assert not missing, f"JAX lacks: {missing[:20]}"


def test_callable_entries_map_to_callables(entries):
    bad = [
        k for k, e in entries.items()
        if e["kind"] in ("function", "ufunc", "class", "dtype") and e["jax"] and not callable(resolve(e["jax"]))
    ]
    assert not bad


def test_keys_resolve_on_the_numpy_scipy_side(entries):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated submodules still resolve
        missing = [k for k in entries if resolve(k) is _MISSING]
    assert not missing


def test_ufunc_nin_matches_numpy(entries):
    for key, e in entries.items():
        if e["kind"] == "ufunc":
            assert e["nin"] == resolve(key).nin, key


# --- spot checks, each backed by how the libraries really behave ------------


def test_sum_takes_an_array_first(entries):
    # JAX rejects a list where it wants an array: that is what the role is for.
    assert first_role(entries["numpy.sum"]) == "array"
    with pytest.raises(TypeError):
        jnp.sum([1, 2])


def test_array_takes_anything_first(entries):
    assert first_role(entries["numpy.array"]) != "array"
    assert first_role(entries["numpy.asarray"]) != "array"
    assert jnp.array([1, 2]).shape == (2,)


def test_zeros_takes_a_shape_first(entries):
    assert first_role(entries["numpy.zeros"]) == "shape"
    assert jnp.zeros((2, 3)).shape == np.zeros((2, 3)).shape


def test_concatenate_takes_a_sequence_of_arrays_first(entries):
    assert first_role(entries["numpy.concatenate"]) == "arrays"
    assert jnp.concatenate([jnp.ones(2), jnp.zeros(1)]).shape == (3,)


def test_add_is_a_binary_ufunc(entries):
    e = entries["numpy.add"]
    assert (e["kind"], e["nin"], e["jax"]) == ("ufunc", np.add.nin, "jax.numpy.add")
    assert int(jnp.add(1, 2)) == 3


def test_convolve2d_maps_to_jax_and_agrees(entries):
    import jax.scipy.signal
    import scipy.signal

    assert entries["scipy.signal.convolve2d"]["jax"] == "jax.scipy.signal.convolve2d"
    x = np.arange(12.0).reshape(3, 4)
    k = np.array([[1.0, -1.0], [0.5, 2.0]])
    np.testing.assert_allclose(jax.scipy.signal.convolve2d(x, k), scipy.signal.convolve2d(x, k), rtol=1e-5)


@pytest.mark.parametrize(
    "key, jax_owner, attr",
    [
        ("scipy.ndimage.gaussian_filter", "jax.scipy.ndimage", "gaussian_filter"),
        ("numpy.random.rand", "jax.numpy", "random"),
        ("numpy.ma", "jax.numpy", "ma"),
    ],
)
def test_missing_in_jax_is_null(entries, key, jax_owner, attr):
    assert key in entries
    assert entries[key]["jax"] is None
    assert not hasattr(importlib.import_module(jax_owner), attr)


def test_distribution_methods(entries):
    import jax.scipy.stats
    import scipy.stats

    assert entries["scipy.stats.norm"] == {"kind": "other", "jax": None}
    assert entries["scipy.stats.norm.pdf"]["jax"] == "jax.scipy.stats.norm.pdf"
    np.testing.assert_allclose(jax.scipy.stats.norm.pdf(0.5), scipy.stats.norm.pdf(0.5), rtol=1e-6)


def test_excluded_modules(entries):
    assert entries["scipy.optimize"]["jax"] is None
    assert not any(k.startswith(("scipy.optimize.", "scipy.sparse.")) for k in entries)


# --- the role rules themselves ------------------------------------------------


def _param(name, annotation=inspect.Parameter.empty, kind=inspect.Parameter.POSITIONAL_OR_KEYWORD):
    return inspect.Parameter(name, kind, annotation=annotation)


@pytest.mark.parametrize(
    "param, role",
    [
        (_param("out", "ArrayLike"), "out"),
        (_param("dtype"), "dtype"),
        (_param("arrays"), "arrays"),
        (_param("xs", "ArrayLike"), "arrays"),
        (_param("reps", "ArrayLike"), "shape"),
        (_param("s", "Shape | None"), "shape"),
        (_param("k", "ArrayLike | DimSize"), "array"),
        (_param("axis", "int"), "axis"),
        (_param("a", "ArrayLike"), "array"),
        (_param("x"), "array"),
        (_param("m", int), "scalar"),
        (_param("args", kind=inspect.Parameter.VAR_POSITIONAL), "array"),
        (_param("args"), "other"),
        (_param("object", "typing.Any"), "other"),
        (_param("keepdims", bool), "scalar"),
        (_param("mode", "str | None"), "other"),
    ],
)
def test_param_role(param, role):
    assert apigen.param_role(param) == role


# --- the committed table is what the generator makes -------------------------


def test_table_is_canonically_formatted(table):
    assert TABLE_PATH.read_text() == apigen.dump(table)


def test_table_is_not_stale(table, tmp_path):
    installed = {"numpy": np.__version__, "scipy": scipy.__version__, "jax": jax.__version__}
    if installed != table["generated_with"]:
        pytest.skip(f"table generated with {table['generated_with']}, installed {installed}")
    out = tmp_path / "numpy_jax.json"
    apigen.main(["--out", str(out)])
    assert out.read_text() == TABLE_PATH.read_text(), "regenerate: python -m np2jax.apigen"


def test_every_rewritten_path_resolves_with_the_import_the_rewrite_adds(entries):
    """Each JAX path a reference is rewritten to, in a fresh interpreter that has run only
    the import the rewrite adds for it (one interpreter per import: a module imported for
    another path must not hide a missing one)."""
    import subprocess
    import sys
    from collections import defaultdict

    from np2jax.rules.numpy_reference import jax_expression

    by_import = defaultdict(list)
    for entry in entries.values():
        path = entry.get("jax")
        if path and entry["kind"] != "module":
            text, (module, alias) = jax_expression(path, "jnp")
            by_import[(module, alias)].append(text)
    for (module, alias), texts in sorted(by_import.items(), key=lambda item: str(item[0])):
        statement = f"import {module} as {alias}" if alias else f"import {module}"
        script = (f"{statement}\nmissing = []\nfor text in {sorted(set(texts))!r}:\n"
                  "    try:\n        eval(text)\n    except AttributeError:\n"
                  "        missing.append(text)\nprint(missing)\n")
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == "[]", f"after `{statement}`: {run.stdout.strip()}"
