"""np2jax prove: record the calls a project's tests make of its package's functions, replay
each function of the original and of the converted tree on them, and compare.

The example (tests/data/prove_example: the package smallstats and its own tests) is converted with
np2jax, then two conversions are spoiled by hand: one that computes something else (differs,
with the first difference named) and one that writes into a JAX array (error).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT
from np2jax.api import convert_paths
from np2jax.config import Config
from np2jax.verify.prove import ProveOptions, prove_functions

EXAMPLE = ROOT / "tests" / "data" / "prove_example"
PKG = "smallstats"


def _trees(base):
    original, converted = base / "original", base / "converted"
    shutil.copytree(EXAMPLE, original)
    shutil.copytree(EXAMPLE, converted)
    shutil.rmtree(converted / PKG)
    run = convert_paths([original / PKG], Config(), out=converted / PKG)
    assert not run.errors
    return original, converted


def _spoil(converted):
    core = converted / PKG / "core.py"
    text = core.read_text(encoding="utf-8")
    # a wrong conversion: the window's mean divided by n + 1
    assert "return sums[n - 1:] / n" in text
    text = text.replace("return sums[n - 1:] / n", "return sums[n - 1:] / (n + 1)")
    # a write into a JAX array, which raises
    assert "out = _subtract_mean(out)" in text
    text = text.replace("out = _subtract_mean(out)", "out[...] = _subtract_mean(out)")
    core.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def proved(tmp_path_factory):
    original, converted = _trees(tmp_path_factory.mktemp("prove"))
    _spoil(converted)
    result = prove_functions(original, converted, PKG, ["tests"], ProveOptions(jobs=2))
    return result, {f.key: f for f in result.functions}


def test_the_suite_ran_and_every_function_of_the_package_is_listed(proved):
    result, by_key = proved
    assert result.error is None and result.suite.counts() == {"passed": 7}
    assert set(by_key) == {f"smallstats/core.py::{name}" for name in (
        "rescale", "moving_average", "_subtract_mean", "center", "checked_log", "unused_cube",
        "apply_each", "jitter", "Scaler.__init__", "Scaler.apply")}


def test_a_correct_conversion_is_equal_on_every_recorded_call(proved):
    _, by_key = proved
    rescale = by_key["smallstats/core.py::rescale"]
    assert (rescale.verdict, rescale.calls, rescale.compared) == ("equal", 2, 2)
    assert rescale.numpy.first_call_s > 0 and rescale.jax.first_call_s > 0 and rescale.uses_jax
    # the original raises ValueError on one call: the converted must raise it too
    assert by_key["smallstats/core.py::checked_log"].verdict == "equal"
    assert by_key["smallstats/core.py::checked_log"].compared == 2
    # a method: self is an argument, its state after the call is compared (seen += 1)
    assert by_key["smallstats/core.py::Scaler.apply"].verdict == "equal"


def test_a_wrong_conversion_differs_and_names_the_first_difference(proved):
    _, by_key = proved
    proof = by_key["smallstats/core.py::moving_average"]
    assert proof.verdict == "differs"
    assert proof.first_difference.startswith(
        "call 1 (tests/test_core.py::test_moving_average): result: ")
    # the worst element: 4.0 where the spoiled conversion gives 3.0
    assert "at [3]" in proof.first_difference and "(numpy 4.0, jax 3.0)" in proof.first_difference


def test_a_converted_function_that_raises_is_an_error(proved):
    _, by_key = proved
    proof = by_key["smallstats/core.py::center"]
    assert proof.verdict == "error"
    assert "raises TypeError" in proof.first_difference


def test_a_function_the_tests_never_call_is_not_exercised(proved):
    _, by_key = proved
    proof = by_key["smallstats/core.py::unused_cube"]
    assert (proof.verdict, proof.calls, proof.numpy) == ("not-exercised", 0, None)


def test_a_helper_rewritten_to_return_the_argument_it_writes_is_equal(proved):
    _, by_key = proved
    proof = by_key["smallstats/core.py::_subtract_mean"]
    assert proof.verdict == "equal"
    assert any("returns the arguments it writes" in note for note in proof.notes)


def test_calls_that_cannot_be_copied_or_replayed_are_said_so(proved):
    _, by_key = proved
    lambda_arg = by_key["smallstats/core.py::apply_each"]
    assert lambda_arg.verdict == "unreplayable" and lambda_arg.calls == 1
    assert any("arguments cannot be copied" in note for note in lambda_arg.notes)
    random = by_key["smallstats/core.py::jitter"]
    assert random.verdict == "unreplayable"
    assert any("does not give its recorded result again" in note for note in random.notes)


def test_totals_and_the_keep_numpy_entries(proved):
    result, _ = proved
    totals = result.totals()
    assert (totals["proven"], totals["kept_on_numpy"], totals["not_exercised"],
            totals["unreplayable"]) == (5, 2, 1, 2)
    assert totals["calls"] == 11 and totals["calls_proven"] == 7
    assert [entry.partition("=")[0] for entry in result.keep_numpy()] == [
        "smallstats/core.py::moving_average", "smallstats/core.py::center"]


def test_max_calls_bounds_what_is_recorded(tmp_path):
    original, converted = _trees(tmp_path)
    result = prove_functions(original, converted, PKG, ["tests/test_core.py::test_rescale"],
                             ProveOptions(jobs=1, max_calls=1, repeat=0))
    by_key = {f.key: f for f in result.functions}
    rescale = by_key["smallstats/core.py::rescale"]
    assert (rescale.verdict, rescale.calls, rescale.recorded, rescale.compared) == ("equal", 2, 1, 1)
    assert by_key["smallstats/core.py::center"].verdict == "not-exercised"


def test_cli_json_and_html(tmp_path):
    original, converted = _trees(tmp_path)
    _spoil(converted)
    page = tmp_path / "prove.html"
    done = subprocess.run([sys.executable, "-m", "np2jax", "prove", str(original), str(converted),
                           "--package", PKG, "-j", "2", "--repeat", "1", "--format", "json",
                           "--html", str(page), "--", "tests"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    verdicts = {f["key"]: f["verdict"] for f in report["functions"]}
    assert verdicts["smallstats/core.py::moving_average"] == "differs"
    assert verdicts["smallstats/core.py::rescale"] == "equal"
    assert report["totals"]["kept_on_numpy"] == 2
    html = page.read_text(encoding="utf-8")
    assert "smallstats/core.py::moving_average" in html and 'id="prove-table"' in html


def test_a_call_past_the_time_limit_keeps_the_calls_done_and_is_slow(tmp_path):
    original, converted = _trees(tmp_path)
    core = converted / PKG / "core.py"
    text = core.read_text(encoding="utf-8")
    assert '    """Scale to [0, 1]."""\n' in text
    # the second call (a 2 x 3 array) never ends
    core.write_text(text.replace('    """Scale to [0, 1]."""\n', '    """Scale to [0, 1]."""\n'
                                 '    if jnp.ndim(x) == 2:\n        import time\n'
                                 '        time.sleep(600)\n', 1), encoding="utf-8")
    result = prove_functions(original, converted, PKG, ["tests/test_core.py"],
                             ProveOptions(jobs=1, timeout_s=8, repeat=0))
    by_key = {f.key: f for f in result.functions}
    rescale = by_key["smallstats/core.py::rescale"]
    # not an error: the original finished that call; the verdict names both times
    assert (rescale.verdict, rescale.compared) == ("slow", 1)
    assert rescale.first_difference.startswith("call 2 (") and \
        "the converted did not finish in 8 s; the original took " in rescale.first_difference
    assert rescale.slow["call"] == 2 and rescale.slow["numpy_s"] < 1
    assert [entry.partition(": ")[0] for entry in result.keep_numpy()] == [
        "smallstats/core.py::rescale=slow"]
    assert any("the converted stopped after 1 of 2 call(s): timeout: a call ran past 8 s" in note
               for note in rescale.notes)
    # the next child went on with the other functions of the module
    assert by_key["smallstats/core.py::Scaler.apply"].verdict == "equal"


def test_a_slow_function_in_the_text_and_html_reports():
    """The reports name a slow function with its call, the limit and NumPy's time, and count
    it among those to keep on NumPy."""
    import io

    from rich.console import Console

    from np2jax.html_report import render_prove_html
    from np2jax.verify.prove import FunctionProof, ProveResult
    from np2jax.verify.report import print_prove

    slow = FunctionProof("pkg/m.py::loop", "slow", calls=4, recorded=4, compared=0,
                         first_difference="call 1 (tests/test_m.py::test_loop): the converted "
                         "did not finish in 60 s; the original took 2.1 ms on the same call",
                         slow={"call": 1, "test": "tests/test_m.py::test_loop", "timeout_s": 60.0,
                               "numpy_s": 0.0021})
    result = ProveResult(functions=[slow, FunctionProof("pkg/m.py::f", "equal", calls=2,
                                                        recorded=2, compared=2)])
    assert not result.ok and result.totals()["slow"] == 1 and result.totals()["kept_on_numpy"] == 1
    assert result.keep_numpy() == [f"pkg/m.py::loop=slow: {slow.first_difference}"]
    buffer = io.StringIO()
    print_prove(Console(file=buffer, width=200), result)
    text = buffer.getvalue()
    assert f"pkg/m.py::loop: slow: {slow.first_difference}" in text
    assert "1 to keep on NumPy (differs, error or slow: 1 slow)" in text
    html = render_prove_html(result)
    assert 'class="badge bad">slow<' in html and "did not finish in 60 s" in html


def test_a_method_made_by_another_descriptor_is_replayed_bound(tmp_path):
    """A class attribute that is a descriptor other than a function (multipledispatch's
    @dispatch makes pyrr's `Matrix33.__add__` one): the replay binds it to the object as
    `m + other` does; called unbound it raised, and the function was unreplayable."""
    project = tmp_path / "original"
    (project / "pkg").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "m.py").write_text(
        "import functools\n\nimport numpy as np\n\n\n"
        "class Bound:\n    def __init__(self, f):\n        self.f = f\n\n"
        "    def __get__(self, obj, owner):\n        return functools.partial(self.f, obj)\n\n\n"
        "class V:\n    def __init__(self, x):\n        self.x = x\n\n"
        "    @Bound\n    def plus(self, other):\n        return np.asarray(self.x) + other\n")
    (project / "tests" / "test_m.py").write_text(
        "import numpy as np\n\nfrom pkg.m import V\n\n\n"
        "def test_plus():\n    assert np.allclose(V([1.0, 2.0]).plus(1.0), [2.0, 3.0])\n")
    converted = tmp_path / "converted"
    shutil.copytree(project, converted)
    assert not convert_paths([project / "pkg"], Config(), out=converted / "pkg").errors
    assert "jnp.asarray(self.x)" in (converted / "pkg" / "m.py").read_text()
    result = prove_functions(project, converted, "pkg", ["tests"], ProveOptions(jobs=1, repeat=0))
    plus = {f.key: f for f in result.functions}["pkg/m.py::V.plus"]
    assert (plus.verdict, plus.compared) == ("equal", 1), plus.notes


SCALE_TEST = ("from pkg.m import scale\n\n\ndef test_scale():\n"
              "    assert scale([1.0, 2.0], 3.0).tolist() == [3.0, 6.0]\n")


def _scale_project(tmp_path, test_text: str = SCALE_TEST):
    """A package `pkg` with one function, `scale`, its test module, and its conversion."""
    project = tmp_path / "original"
    (project / "pkg").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "m.py").write_text(
        "import numpy as np\n\n\ndef scale(x, k):\n    return np.asarray(x) * k\n")
    (project / "tests" / "test_m.py").write_text(test_text)
    converted = tmp_path / "converted"
    shutil.copytree(project, converted)
    assert not convert_paths([project / "pkg"], Config(), out=converted / "pkg").errors
    return project, converted


def test_calls_made_while_pytest_collects_are_recorded(tmp_path):
    """A test module that calls the package at import (a table of expected values built at
    module level, parameters of a parametrize): the call happens during collection, before
    any test runs, and is recorded (with no test) and replayed like the others."""
    project, converted = _scale_project(tmp_path, (
        "from pkg.m import scale\n\nEXPECTED = scale([1.0, 2.0], 3.0)\n\n\n"
        "def test_expected():\n    assert EXPECTED.tolist() == [3.0, 6.0]\n"))
    result = prove_functions(project, converted, "pkg", ["tests"], ProveOptions(jobs=1, repeat=0))
    scale = {f.key: f for f in result.functions}["pkg/m.py::scale"]
    assert (scale.verdict, scale.calls, scale.compared) == ("equal", 1, 1), scale.notes


def test_the_converted_side_is_replayed_and_timed_on_each_device(tmp_path, monkeypatch):
    """Two devices (this machine has one: the second is the CPU again under another name,
    the plumbing is what is tested): the converted function is replayed on each, its times
    reported per device in the table, JSON and HTML; equal on both is equal."""
    import np2jax.verify.prove as prove_module
    from np2jax.html_report import render_prove_html
    from np2jax.verify.report import prove_columns, prove_row

    monkeypatch.setattr(prove_module, "resolve_devices",
                        lambda requested: [("cpu", "cpu"), ("gpu", "cpu")])
    project, converted = _scale_project(tmp_path)
    result = prove_functions(project, converted, "pkg", ["tests"], ProveOptions(jobs=1, repeat=1))
    scale = {f.key: f for f in result.functions}["pkg/m.py::scale"]
    assert scale.verdict == "equal" and result.devices == ["cpu", "gpu"]
    assert set(scale.jax_by_device) == {"cpu", "gpu"}
    assert all(t is not None and t.first_call_s > 0 for t in scale.jax_by_device.values())
    columns = prove_columns(result.devices)
    assert "jax steady (gpu)" in columns and "speed-up (cpu)" in columns
    assert len(prove_row(scale, result.devices)) == len(columns)
    payload = json.loads(json.dumps(result.as_dict()))
    assert set(payload["functions"][0]["jax_by_device"]) == {"cpu", "gpu"}
    assert "jax first (gpu)" in render_prove_html(result)


def test_a_function_that_fails_on_one_device_only_is_not_equal(tmp_path, monkeypatch):
    """The second device's replays run under a JAX platform that does not exist: the
    converted function errs there only, and its verdict is that device's, named."""
    import np2jax.verify.prove as prove_module

    monkeypatch.setattr(prove_module, "resolve_devices",
                        lambda requested: [("cpu", "cpu"), ("gpu", "no-such-platform")])
    project, converted = _scale_project(tmp_path)
    result = prove_functions(project, converted, "pkg", ["tests"], ProveOptions(jobs=1, repeat=0))
    scale = {f.key: f for f in result.functions}["pkg/m.py::scale"]
    assert scale.verdict == "error", scale
    assert scale.first_difference.startswith("on gpu: ")
    assert result.keep_numpy()[0].startswith("pkg/m.py::scale=error: on gpu: ")
