"""The table of NumPy draws -> jax.random (rules/api/random.toml) against the installed JAX,
and NJ302's documentation listing it."""

from __future__ import annotations

import re

import jax
import numpy as np
import pytest

from np2jax.catalog import rule_docs
from np2jax.analysis.randomness import random_table

DRAWS = random_table()["draws"]


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_every_jax_function_of_the_table_exists(name):
    used = re.findall(r"jax\.random\.(\w+)", DRAWS[name]["template"] + DRAWS[name].get("standard", ""))
    assert used, f"{name}: the template names no jax.random function"
    for function in used:
        assert callable(getattr(jax.random, function, None)), f"{name}: jax.random.{function}"


@pytest.mark.parametrize("name", sorted(DRAWS) + sorted(random_table()["missing"]))
def test_every_numpy_name_exists_in_numpy(name):
    legacy = getattr(np.random, name, None) or getattr(np.random.RandomState, name, None)
    assert legacy is not None or hasattr(np.random.Generator, name), name


def test_the_rule_doc_lists_the_table():
    what = rule_docs()["NJ302"].doc["what"]
    for name in list(DRAWS) + list(random_table()["missing"]):
        assert f"`{name}" in what, f"NJ302's doc does not list {name}"
