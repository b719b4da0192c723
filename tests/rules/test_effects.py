"""The per-function effect summaries (np2jax.analysis.effects): which functions return only
fresh arrays, and what a function does with each argument (writes it, returns it, lets it
escape), as the aliasing analysis asks of them."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from np2jax.analysis import analyze
from np2jax.api import convert_source
from np2jax.syntax.parse import parse


def _analysis(source: str):
    return analyze(parse(textwrap.dedent(source), "<test>"))


def _function(analysis, name: str) -> cst.FunctionDef:
    return next(s for s in analysis.module.body if isinstance(s, cst.FunctionDef) and s.name.value == name)


def _fresh(source: str, name: str) -> bool:
    analysis = _analysis(source)
    return analysis.dataflow.effects.fresh_return(_function(analysis, name))


def _effect(source: str, name: str, param: str):
    analysis = _analysis(source)
    function = _function(analysis, name)
    (found,) = [p for p in function.params.params if p.name.value == param]
    return analysis.dataflow.effects.param_effect(function, found)


HEADER = "import numpy as np\nG = np.zeros(3)\nKEPT = []\n"


@pytest.mark.parametrize("body", [
    "def f(n):\n    return np.where(np.arange(n) > 2, np.nan, 1.0)\n",
    "def f(n):\n    a = np.zeros(n)\n    b = a * 2\n    return b\n",
    "def f(n):\n    a = np.zeros(n)\n    a[0] = 1.0\n    return a\n",
    "def g(n):\n    return np.ones(n)\n\ndef f(n):\n    return g(n) + 1\n",
    "def f(n):\n    a = np.zeros(n)\n    total = helper(a)\n    return a\n\n"
    "def helper(m):\n    return m.sum()\n",  # a local passed to a helper that only reads it
    "def f(n):\n    a, b = np.zeros(n), np.ones(n)\n    return a\n",  # unpacked from a tuple
])
def test_every_return_fresh(body):
    assert _fresh(HEADER + body, "f")


@pytest.mark.parametrize("body", [
    "def f(x):\n    return x\n",  # the argument itself
    "def f(x):\n    return x[1:]\n",  # a view of it
    "def f(x):\n    return x.reshape(-1)\n",
    "def f():\n    return G\n",  # a module global
    "def f(n):\n    a = np.zeros(n)\n    KEPT.append(a)\n    return a\n",  # kept elsewhere
    "def f(n):\n    a = np.zeros(n)\n    b = a\n    return a\n",  # an alias
    "def f(n):\n    a = np.zeros(n)\n    g = lambda: a\n    return a\n",  # captured
    "def f(n):\n    if n == 0:\n        return np.zeros(3)\n    return f(n - 1)\n",  # recursion
    "def f(n):\n    if n:\n        return np.zeros(n)\n",  # may return None
    "def f(n):\n    yield np.zeros(n)\n",  # a generator
    "def f(x):\n    a, b = x, 1\n    return a\n",  # unpacked: the argument itself
    "def f(n):\n    a, b = pair(n)\n    return a\n",  # unpacked from a call: not followed
])
def test_not_every_return_fresh(body):
    assert not _fresh(HEADER + body, "f")


def test_a_function_defined_twice_gives_no_fresh_array():
    source = HEADER + "def f(n):\n    return np.zeros(n)\n\ndef f(n):\n    return G\n\n" \
        "def main():\n    t = f(3)\n    t[0] = 1.0\n    return t\n"
    result = convert_source(source)
    assert [f.code for f in result.findings] == ["NJ201"]
    assert "t[0] = 1.0" in result.converted


def test_read_only_parameter():
    effect = _effect(HEADER + "def f(A, m):\n    s = m.sum()\n    return A @ m + s * np.dot(m, m)\n", "f", "m")
    assert effect.read_only


@pytest.mark.parametrize("body", [
    "def f(m):\n    m[0] = 1.0\n",
    "def f(m):\n    m[0][1] = 1.0\n",
    "def f(m):\n    m.T[0] = 1.0\n",
    "def f(m):\n    m += 1.0\n",
    "def f(m):\n    m.sort()\n",
    "def f(m):\n    np.copyto(m, 0.0)\n",
    "def f(m):\n    np.add.at(m, [0, 0], 1.0)\n",
    "def f(m):\n    np.cumsum(m, out=m)\n",
    "def f(m):\n    g(m)\n\ndef g(v):\n    v[0] = 1.0\n",  # through another function
])
def test_written_parameter(body):
    effect = _effect(HEADER + body, "f", "m")
    assert effect.written or effect.escapes
    assert not effect.read_only


@pytest.mark.parametrize("body", [
    "def f(m):\n    KEPT.append(m)\n",
    "def f(m):\n    global G\n    G = m\n",
    "def f(m):\n    return lambda: m\n",
    "def f(m):\n    def inner():\n        return m.sum()\n    return inner\n",
    "def f(m):\n    return (m, 1)\n",
    "def f(m):\n    for row in m:\n        KEPT.append(row)\n",
    "def f(m):\n    yield m.sum()\n",  # the body runs after the call
    "def f(m, k=3):\n    return m.sum() if k == 0 else f(m, k - 1)\n",  # recursion
    "def f(m):\n    m = np.asarray(m)\n    return m.sum()\n",  # rebound: not followed
    "def f(m):\n    return unknown(m)\n",  # a callee the analysis cannot see
])
def test_escaping_parameter(body):
    assert not _effect(HEADER + body, "f", "m").read_only


@pytest.mark.parametrize("body", [
    "def f(a, m):\n    np.clip(a, 0.0, m, out=a)\n",   # out= writes a, reads the bound m
    "def f(a, m):\n    np.copyto(a, m)\n",              # an in-place function writes its first
    "def f(a, m):\n    np.cumsum(m, out=a)\n",
])
def test_the_other_arguments_of_a_writing_call_are_read_only(body):
    assert _effect(HEADER + body, "f", "m").read_only
    assert _effect(HEADER + body, "f", "a").written


def test_returned_parameter():
    effect = _effect(HEADER + "def f(u, r):\n    u[1:] = u[1:] * r\n    return u\n", "f", "u")
    assert effect.written and effect.returned and not effect.escapes
    analysis = _analysis(HEADER + "def f(u, r):\n    u[1:] = u[1:] * r\n    return u\n")
    assert analysis.dataflow.returned_param(_function(analysis, "f")).name.value == "u"


def test_a_parameter_returned_on_one_path_only_is_not_the_returned_parameter():
    analysis = _analysis(HEADER + "def f(u, r):\n    if r:\n        return u\n    return u * r\n")
    assert analysis.dataflow.returned_param(_function(analysis, "f")) is None


def test_a_row_passed_to_a_reader_stays_private():
    source = HEADER + textwrap.dedent("""
        def predict(A, m):
            return A @ m

        def main():
            A = np.eye(2)
            means = np.zeros((4, 2))
            for t in range(1, 4):
                means[t] = predict(A, means[t - 1]) + 1.0
            return means
        """)
    result = convert_source(source)
    assert result.findings == []
    assert "means = means.at[t].set(predict(A, means[t - 1]) + 1.0)" in result.converted


def test_a_row_passed_to_a_writer_is_shared():
    source = HEADER + textwrap.dedent("""
        def damp(m):
            m *= 0.5
            return 1.0

        def main():
            means = np.ones((4, 2))
            s = damp(means[0])
            means[1] = 2.0
            return means, s
        """)
    findings = convert_source(source).findings
    assert any(f.code == "NJ201" and "`damp` may change, return or keep it" in f.message
               for f in findings)


def test_a_slice_with_unknown_bounds_is_a_basic_index():
    analysis = _analysis("def f(u, n):\n    u[n // 3: 2 * n // 3] = 1.0\n    u[:, n:] += 2.0\n")
    for _statement, target, _op in analysis.dataflow.collector.subscript_stores:
        assert analysis.dataflow.index_kind(target) == "basic"


def test_an_index_array_beside_a_slice_may_still_repeat():
    analysis = _analysis("def f(u, idx):\n    u[idx, 1:] = 1.0\n")
    (target,) = [t for _s, t, _op in analysis.dataflow.collector.subscript_stores]
    assert analysis.dataflow.index_kind(target) == "other"
