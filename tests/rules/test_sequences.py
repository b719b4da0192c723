"""Which values may be Python lists or tuples (np2jax.analysis.sequences), and what NJ110
wraps with it: the kind of each argument of `np.sum(...)` in a small module, and the
converted call."""

from __future__ import annotations

import libcst as cst
import pytest

from np2jax.analysis import analyze
from np2jax.analysis.sequences import ARGUMENT, NOT_SEQUENCE, OPAQUE, SEQUENCE
from np2jax.api import convert_source

KINDS = [
    # literals, names, function returns (a literal, a comprehension, a loop's list)
    ("x = [1.0, 2.0]", "x", SEQUENCE),
    ("def f():\n    return [1.0]", "f()", SEQUENCE),
    ("def f(n):\n    out = []\n    for i in range(n):\n        out.append(i)\n    return out",
     "f(3)", SEQUENCE),
    ("def f():\n    return np.zeros(3)", "f()", NOT_SEQUENCE),
    # attributes: a list in __init__, a class tuple, a constructor argument, None
    ("class C:\n    lo = (0.0, 1.0)\n    def g(self):\n        return self.lo\n", "C().g()",
     SEQUENCE),
    ("class C:\n    def __init__(self, hi):\n        self.hi = hi\nc = C((1.0, 2.0))", "c.hi",
     ARGUMENT),
    ("class C:\n    def __init__(self, hi=None):\n        self.hi = hi\nc = C()", "c.hi",
     NOT_SEQUENCE),
    ("class C:\n    def __init__(self):\n        self.w = np.ones(2)\nc = C()", "c.w", NOT_SEQUENCE),
    # items of dicts and lists
    ("d = {'a': [1.0], 'b': [2.0]}", "d['a']", SEQUENCE),
    ("d = {'a': np.ones(2)}", "d['a']", NOT_SEQUENCE),
    ("rows = []\nrows.append([1.0, 2.0])", "rows[0]", SEQUENCE),
    ("rows = [np.ones(2)]", "rows[0]", NOT_SEQUENCE),
    # arrays, their methods and parts; a generator's draws
    ("x = np.arange(4.0)", "x.reshape(2, 2)", NOT_SEQUENCE),
    ("x = np.arange(4.0)", "x[np.argsort(x)]", NOT_SEQUENCE),
    ("rng = np.random.default_rng(0)", "rng.normal(size=3)", NOT_SEQUENCE),
    ("x = np.arange(4.0)", "x.tolist()", SEQUENCE),
    # nothing in the module shows what these are
    ("import json", "json.loads('[1]')", OPAQUE),
    ("import json\ny = json.loads('[1]')", "y", OPAQUE),
]


def _argument(setup: str, expression: str):
    source = f"import numpy as np\n{setup}\ntotal = np.sum({expression})\n"
    analysis = analyze(cst.parse_module(source))
    (ref,) = [r for r in analysis.refs if r.qualname == "numpy.sum"]
    return analysis, ref.arguments[0].arg.value


@pytest.mark.parametrize("setup, expression, kind", KINDS)
def test_the_kind_of_a_value(setup, expression, kind):
    analysis, value = _argument(setup, expression)
    assert analysis.sequences.kind(value) == kind


ITEMS = [
    ("rows = []\nfor i in range(2):\n    rows.append([i, 1.0])", "rows", SEQUENCE),
    ("d = {'a': [1.0], 'b': [2.0]}", "list(d.values())", SEQUENCE),
    ("parts = [np.ones(2)]\nparts.extend([[3.0]])", "parts", SEQUENCE),
    ("parts = [np.ones(2), np.zeros(3)]", "parts", NOT_SEQUENCE),
    ("class C:\n    def __init__(self):\n        self.rows = []\n"
     "    def add(self, r):\n        self.rows.append(r)\nc = C()", "c.rows", ARGUMENT),
]


@pytest.mark.parametrize("setup, expression, kind", ITEMS)
def test_the_kind_of_the_items_of_a_value(setup, expression, kind):
    analysis, value = _argument(setup, expression)
    assert analysis.sequences.items_kind(value) == kind


def _converted_line(setup: str, line: str) -> str:
    source = f"import numpy as np\n{setup}\nresult = {line}\n"
    converted = convert_source(source).converted
    return converted.splitlines()[-1]


def test_a_list_of_lists_for_a_sequence_of_arrays_has_each_item_converted():
    setup = "rows = []\nfor i in range(3):\n    rows.append([float(j) for j in range(i + 1)])"
    assert _converted_line(setup, "np.concatenate(rows)") == \
        "result = jnp.concatenate([jnp.asarray(part) for part in rows])"


def test_a_list_of_arrays_for_a_sequence_of_arrays_is_left_as_it_is():
    setup = "rows = [np.ones(2), np.zeros(3)]"
    assert _converted_line(setup, "np.concatenate(rows)") == "result = jnp.concatenate(rows)"


def test_a_value_of_unknown_kind_is_wrapped_only_as_the_data_argument():
    setup = "import json\nlo = json.loads('0.5')\nx = np.arange(3.0)"
    assert _converted_line(setup, "np.clip(json.loads('[1.0, 2.0]'), lo, 3.0)") == \
        "result = jnp.clip(jnp.asarray(json.loads('[1.0, 2.0]')), lo, 3.0)"


def test_known_arrays_and_scalars_are_not_wrapped():
    setup = "x = np.arange(4.0).reshape(2, 2)\nk = 2.0"
    assert _converted_line(setup, "np.maximum(x.sum(axis=0), k)") == \
        "result = jnp.maximum(x.sum(axis=0), k)"


def test_an_attribute_that_may_be_none_is_not_wrapped():
    setup = ("class C:\n    def __init__(self, hi=None):\n        self.hi = hi\n"
             "    def f(self, x):\n        return np.clip(x, 0.0, self.hi)\n")
    converted = convert_source(f"import numpy as np\n{setup}").converted
    assert "jnp.clip(jnp.asarray(x), 0.0, self.hi)" in converted


def test_a_value_of_unknown_kind_is_left_in_a_module_importing_pandas():
    # np.sum(frame) is frame.sum(): an array of the frame would not give it
    setup = "import json\nimport pandas as pd"
    assert _converted_line(setup, "np.sum(json.loads('[1.0]'))") == \
        "result = jnp.sum(json.loads('[1.0]'))"
    # what the module shows to be a list is still wrapped
    assert _converted_line(setup + "\nv = [1.0, 2.0]", "np.sum(v)") == \
        "result = jnp.sum(jnp.asarray(v))"


def test_an_item_of_what_the_caller_passed_may_be_a_list():
    setup = ("class Model:\n    def __init__(self, cfg):\n        self.w = cfg['w']\n"
             "    def f(self, x):\n        return np.dot(x, self.w)\n")
    converted = convert_source(f"import numpy as np\n{setup}").converted
    assert "jnp.dot(jnp.asarray(x), jnp.asarray(self.w))" in converted


def test_a_range_is_converted_as_numpy_converts_it_and_inspections_are_left():
    assert _converted_line("n = 4", "np.cumsum(range(n))") == \
        "result = jnp.cumsum(jnp.asarray(range(n)))"
    # a shape question stays NumPy's: it answers for any list (one holding None too)
    assert _converted_line("v = [1.0, None]", "np.shape(v)") == "result = np.shape(v)"


def test_a_list_meeting_an_operand_of_unknown_kind_is_reported_and_left():
    source = ("import numpy as np\n\n\nclass M:\n    def __init__(self):\n"
              "        self.w = [0.5, 1.5]\n\n    def f(self, x):\n        return self.w * x\n")
    result = convert_source(source)
    assert "return self.w * x" in result.converted
    (finding,) = [f for f in result.findings if f.code == "NJ110"]
    assert "`self.w` meeting `x` in `self.w * x`, left as it was" in finding.message


def test_a_number_stored_from_a_parameter_meets_an_array_as_it_is():
    source = ("import numpy as np\n\n\nclass SGD:\n    def __init__(self, lr):\n"
              "        self.lr = lr\n\n    def step(self, g):\n        return self.lr * g\n")
    result = convert_source(source)
    assert not [f for f in result.findings if f.code == "NJ110"]
    assert "return self.lr * g" in result.converted
