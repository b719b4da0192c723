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


@pytest.mark.parametrize("iterable", ["range(17)", "range(3, 17, 4)", "range(10, -5, -3)",
                                      "[0, 8, 16]", "(5, -2)"])
def test_a_loop_variable_ranges_over_what_it_iterates(iterable):
    body = f"    for e in {iterable}:\n        pass\n"
    found, _ = _range_of_e(body)
    values = list(eval(iterable))
    assert found == (min(values), max(values))


@pytest.mark.parametrize("iterable", ["range(n)", "range(5, 5)", "range(3, 0)", "x"])
def test_a_loop_over_what_the_code_does_not_spell_has_no_range(iterable):
    found, _ = _range_of_e(f"    x = [n]\n    for e in {iterable}:\n        pass\n")
    assert found is None


def _power_passes(body: str) -> bool:
    source = f"def main(n, base, top):\n{body}"
    analysis = analyze(cst.parse_module(source))
    (power,) = [b for b in analysis.nodes(cst.BinaryOperation) if isinstance(b.operator, cst.Power)]
    return analysis.ranges.may_pass_int64(power)


@pytest.mark.parametrize("body, passes", [
    ("    for o in range(17):\n        for k in range(17):\n            v = o ** k\n", True),   # 16**16
    ("    for o in range(16):\n        for k in range(16):\n            v = o ** k\n", False),  # 15**15
    ("    k = 1\n    while k < top:\n        v = base ** k\n        k += 1\n", True),
    ("    for k in range(1, top):\n        v = 3 ** k\n", True),
    ("    for k in range(1, top):\n        v = (-1) ** k\n", False),
    ("    v = base ** 2\n", False),
    ("    for k in range(70):\n        v = base ** k\n", True),
    ("    v = 2 ** 63\n", True),
    ("    v = 2 ** 62\n", False),
])
def test_an_integer_power_may_pass_int64_as_python_computes_it(body, passes):
    assert _power_passes(body) is passes
    if "top" not in body and "base" not in body:  # spelled in full: Python's own answer
        namespace: dict = {}
        traced = body.replace("v = ", "seen.append(").replace("\n", ")\n").replace(":)\n", ":\n")
        exec(f"def main(seen, n, base, top):\n{traced}", namespace)
        seen: list = []
        namespace["main"](seen, None, None, None)
        assert any(not -2 ** 63 <= v < 2 ** 63 for v in seen) is passes
