"""Facts about integer ranges (np2jax.analysis.ranges): the lowest and highest value of an
integer the code spells, checked against NumPy itself; None where the code does not say."""

from __future__ import annotations

import libcst as cst
import numpy as np
import pytest

from np2jax.analysis.module import analyze


def _range_of_e(body: str):
    source = f"import numpy as np\n\ndef main(n):\n{body}    return e\n"
    analysis = analyze(cst.parse_module(source))
    (ret,) = analysis.nodes(cst.Return)
    return analysis.ranges.integer_range(ret.value), source


@pytest.mark.parametrize("body", [
    "    e = np.arange(0, 66, 8)\n",
    "    e = np.arange(5)\n",
    "    e = np.arange(10, 0, -3)\n",
    "    e = np.arange(-7, 2, dtype=np.int16)\n",
    "    e = [1, -2, 70]\n",
    "    e = np.array([[3, 4], [90, -1]])\n",
    "    e = 65\n",
    "    k = np.arange(1, 9)\n    e = k\n",
])
def test_a_spelled_range_is_numpys(body):
    found, source = _range_of_e(body)
    namespace: dict = {}
    exec(source, namespace)
    values = np.asarray(namespace["main"](3))
    assert found == (values.min(), values.max())


@pytest.mark.parametrize("body", [
    "    e = np.arange(n)\n",                       # a parameter
    "    e = np.arange(3, 3)\n",                    # empty: no values
    "    e = np.arange(4)\n    e = e * n\n",        # computed
    "    e = np.arange(4)\n    if n:\n        e = np.arange(90)\n",  # either binding
    "    e = np.linspace(0, 80, 3)\n",              # not an integer maker
])
def test_what_the_code_does_not_spell_is_none(body):
    found, _ = _range_of_e(body)
    assert found is None
