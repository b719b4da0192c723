"""A module that shows values JAX cannot hold (Decimal, Fraction, object arrays) stays on
NumPy, each reference that would have converted reported (NJ102), its random states too."""

from __future__ import annotations

import pytest

from np2jax.api import convert_source

RANDOM = """\
import numpy as np
{evidence}

def noisy(amounts):
    rng = np.random.default_rng(0)
    return np.asarray(amounts) + rng.normal(size=3)
"""


@pytest.mark.parametrize("evidence, shown", [
    ("from decimal import Decimal", "imports `decimal.Decimal`"),
    ("import fractions", "imports `fractions.Fraction`"),
    ("LABELS = np.zeros(2).astype(object)", "makes an object array"),
])
def test_module_with_object_values_stays_numpy(evidence, shown):
    source = RANDOM.format(evidence=evidence)
    result = convert_source(source)
    assert result.converted == source
    assert not result.changes
    kept = [f for f in result.findings if f.code == "NJ102" and "np.asarray" in f.message]
    assert len(kept) == 1 and shown in kept[0].message
    random = [f for f in result.findings if f.code == "NJ301"]
    assert random and all(shown in f.message for f in random)


def test_module_without_object_values_converts():
    source = RANDOM.format(evidence="import datetime")
    result = convert_source(source)
    assert "jnp.asarray" in result.converted and "jax.random.normal" in result.converted
    assert not any("JAX cannot hold" in f.message for f in result.findings)
