"""convert --prove (np2jax.proving): a conversion made wrong on purpose by a test-only rule is
caught by replaying the suite's calls, kept on NumPy (NJ104), and the package converted again;
the suite then passes on the result as on the original. A second planted change makes a
converted function never finish on one call the original finishes at once: it is slow, not an
error, and kept on NumPy too, its reason naming the time limit and NumPy's time."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import np2jax.pipeline
from helpers import ROOT
from np2jax.config import Config
from np2jax.proving import ProveUsageError, _fewest, convert_proved
from np2jax.verify.prove import ProveOptions
from np2jax.verify.prove import tests_of_calls as callers_by_function

EXAMPLE = ROOT / "tests" / "data" / "prove_example"
CONVERTED_LINE = "sums = sums.at[n:].set(sums[n:] - sums[:-n])"
SPOILED_LINE = "sums = sums.at[n:].set(sums[n:] + sums[:-n])"
# rescale converted, its first line: on a 2-D array (the suite's second call) the converted
# rescale sleeps past the replay's time limit
RESCALE_LINE = '    """Scale to [0, 1]."""\n    x = jnp.asarray(x, dtype=float)\n'
SLEEPING = ('    """Scale to [0, 1]."""\n    if jnp.ndim(x) == 2:\n        import time\n'
            '        time.sleep(600)\n    x = jnp.asarray(x, dtype=float)\n')
TIMEOUT_S = 10


def _planting(process):
    """The pipeline with a test-only rule that changes the converted moving_average (the
    functional update a NumPy `sums[n:] = ...` becomes): a wrong conversion to catch; and one
    that makes the converted rescale sleep on 2-D input: a slow conversion to catch."""
    def process_with_planted_rule(text, *args, **kwargs):
        result = process(text, *args, **kwargs)
        result.converted = result.converted.replace(CONVERTED_LINE, SPOILED_LINE)
        result.converted = result.converted.replace(RESCALE_LINE, SLEEPING)
        return result
    return process_with_planted_rule


@pytest.fixture(scope="module")
def proved(tmp_path_factory):
    base = tmp_path_factory.mktemp("convert-prove")
    project = base / "project"
    shutil.copytree(EXAMPLE, project)
    patch = pytest.MonkeyPatch()
    patch.setattr(np2jax.pipeline, "process", _planting(np2jax.pipeline.process))
    try:
        result = convert_proved(project / "smallstats", base / "out" / "smallstats",
                                Config(cache=False), project=project, pytest_args=["tests"],
                                options=ProveOptions(jobs=2, timeout_s=TIMEOUT_S), jobs=1)
    finally:
        patch.undo()
    return base, result


def test_the_planted_wrong_conversion_is_caught_and_kept_on_numpy(proved):
    base, result = proved
    first, last = result.rounds[0], result.rounds[-1]
    by_key = {f.key: f for f in first.functions}
    spoiled = by_key["smallstats/core.py::moving_average"]
    assert spoiled.verdict == "differs" and "result" in spoiled.first_difference
    assert [entry.partition("=")[0] for entry in result.kept] == [
        "smallstats/core.py::rescale", "smallstats/core.py::moving_average"]
    assert len(result.rounds) == 2
    last_verdicts = {f.key: f.verdict for f in last.functions}
    assert last_verdicts["smallstats/core.py::moving_average"] == "equal"
    assert last_verdicts["smallstats/core.py::rescale"] == "equal"
    assert not [f for f in last.functions if f.verdict in ("differs", "error", "slow")]
    converted = (base / "out" / "smallstats" / "core.py").read_text()
    compile(converted, "core.py", "exec")
    assert SPOILED_LINE not in converted and "sums[n:] = sums[n:] - sums[:-n]" in converted
    assert "time.sleep" not in converted and 'x = np.asarray(x, dtype=float)' in converted
    assert "jnp.asarray(x, dtype=float)" in converted  # the other functions stay converted
    kept = sorted(f.message for f in result.run.findings if f.code == "NJ104")
    assert len(kept) == 2 and "moving_average" in kept[0] and "differs" in kept[0]
    assert "rescale" in kept[1] and "slow" in kept[1]


def test_a_converted_function_slow_on_a_call_the_original_finishes_is_slow_and_kept(proved):
    """Not an error: the first call was equal, the second ran past the limit on JAX only; the
    verdict, the JSON and the NJ104 reason say so with both times."""
    _base, result = proved
    slow = {f.key: f for f in result.rounds[0].functions}["smallstats/core.py::rescale"]
    assert slow.verdict == "slow" and slow.compared == 1
    assert slow.slow["call"] == 2 and slow.slow["timeout_s"] == TIMEOUT_S
    assert slow.slow["test"].endswith("test_rescale")
    assert 0 <= slow.slow["numpy_s"] < 1
    assert slow.first_difference.startswith("call 2 (") and \
        f"the converted did not finish in {TIMEOUT_S} s; the original took" in slow.first_difference
    assert slow.as_dict()["slow"] == slow.slow
    assert result.rounds[0].totals()["slow"] == 1
    assert result.rounds[0].totals()["kept_on_numpy"] == 2
    message = next(f.message for f in result.run.findings
                   if f.code == "NJ104" and "`rescale`" in f.message)
    assert "slow: call 2 (" in message and f"did not finish in {TIMEOUT_S} s" in message


def test_the_suite_passes_on_the_result_as_on_the_original(proved):
    _base, result = proved
    assert result.tests_summary() == {"passed_before": 7, "passed_after": 7, "error": None}
    assert result.newly_failing() == [] and result.ok
    data = result.as_dict()
    assert data["rounds"] == 2 and data["totals"]["kept_on_numpy"] == 0
    assert len(data["kept_on_numpy"]) == 2
    json.dumps(data)


def test_the_package_must_be_inside_the_project_and_out_outside(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project)
    with pytest.raises(ProveUsageError, match="not inside the project"):
        convert_proved(EXAMPLE / "smallstats", tmp_path / "out", Config(), project=project)
    with pytest.raises(ProveUsageError, match="must be outside the project"):
        convert_proved(project / "smallstats", project / "converted", Config(), project=project)


def test_command_line(tmp_path):
    """`np2jax convert PKG --out DST --prove -- tests`, run from the project's root."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project)
    done = subprocess.run([sys.executable, "-m", "np2jax", "convert", "smallstats", "--out",
                           str(tmp_path / "out" / "smallstats"), "--prove", "--format", "json",
                           "--", "tests"], cwd=project, capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)}, timeout=900)
    report = json.loads(done.stdout)
    assert report["prove"]["rounds"] == 1 and report["prove"]["kept_on_numpy"] == []
    assert report["prove"]["tests"]["passed_after"] == 7
    verdicts = {f["qualname"]: f["verdict"] for f in report["prove"]["functions"]}
    assert verdicts["moving_average"] == "equal" and verdicts["unused_cube"] == "not-exercised"


def test_a_kept_function_still_slow_has_the_package_functions_it_calls_kept(tmp_path):
    """Its body is NumPy: the JAX it still runs is in the package's functions it calls (nolds'
    hurst_rs calling the converted rs), which the next round keeps; not those of other
    functions, nor generators, nor what a function kept only this round calls."""
    from np2jax.proving import _callees_to_keep
    from np2jax.verify.prove import (FunctionProof, ProveResult, defined_functions,
                                     package_callees, package_files)

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "m.py").write_text(
        "import numpy as np\n\n"
        "def rs(x, n):\n    return np.std(x[:n])\n\n"
        "def other(x):\n    return x\n\n"
        "def gen(x):\n    yield x\n\n"
        "def hurst(x):\n    helper = len\n"
        "    return np.array([rs(x, n) for n in range(2, 5)]), list(gen(x)), helper(x), np.mean(x)\n\n"
        "def fresh(x):\n    return other(x)\n\n"
        "class C:\n    def step(self, x):\n        return self.scale(x) + rs(x, 2)\n\n"
        "    def scale(self, x):\n        return 2 * x\n")

    defined = defined_functions(tmp_path, package_files(tmp_path, "pkg"))
    assert package_callees(tmp_path, "pkg/m.py::hurst", defined) == ["pkg/m.py::rs", "pkg/m.py::gen"]
    assert package_callees(tmp_path, "pkg/m.py::C.step", defined) == [
        "pkg/m.py::C.scale", "pkg/m.py::rs"]
    slow = "call 1: the converted did not finish in 60 s; the original took 2 ms on the same call"
    proof = ProveResult(functions=[
        FunctionProof("pkg/m.py::hurst", "slow", first_difference=slow),
        FunctionProof("pkg/m.py::fresh", "slow", first_difference=slow),
        FunctionProof("pkg/m.py::rs", "equal"), FunctionProof("pkg/m.py::other", "equal")])
    kept = {("pkg/m.py", "hurst")}
    entries = _callees_to_keep(tmp_path, Path("pkg"), proof, kept, kept | {("pkg/m.py", "fresh")})
    assert entries == [f"pkg/m.py::rs=called by hurst, kept on NumPy and still slow with it on "
                       f"JAX: {slow}"]


def _write_project(project: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    return project


TESTED_PACKAGE = {
    "tally/__init__.py": "from .core import counts, scaled\n",
    "tally/core.py": (
        "import numpy as np\n\n\n"
        "def counts(n):\n"
        "    return np.arange(n) * 2.0\n\n\n"
        "def scaled(x, k):\n"
        "    return np.asarray(x) * k\n"),
    "tests/test_core.py": (
        "import numpy as np\n\nfrom tally import counts, scaled\n\n\n"
        "def test_counts_can_be_edited():\n"
        "    c = counts(4)\n"
        "    c[0] = 7.0  # the caller writes into the result: NumPy allows it\n"
        "    assert c.tolist() == [7.0, 2.0, 4.0, 6.0]\n\n\n"
        "def test_scaled():\n"
        "    assert np.allclose(scaled([1.0, 2.0], 3.0), [3.0, 6.0])\n"),
}


def test_functions_a_newly_failing_test_calls_are_kept_and_the_suite_passes(tmp_path):
    """Every call proven equal, and a test still fails on the result (it writes into what
    `counts` returns, a JAX array once converted): the functions that test calls are kept
    on NumPy, the package converted once more, and the suite passes as on the original."""
    project = _write_project(tmp_path / "project", TESTED_PACKAGE)
    result = convert_proved(project / "tally", tmp_path / "out" / "tally", Config(cache=False),
                            project=project, pytest_args=["tests"],
                            options=ProveOptions(jobs=1, timeout_s=TIMEOUT_S), jobs=1)
    assert [f.verdict for f in result.proof.functions if f.qualname == "counts"] == ["equal"]
    kept = {entry.partition("=")[0]: entry for entry in result.kept}
    assert list(kept) == ["tally/core.py::counts"], result.kept
    assert "test_counts_can_be_edited" in kept["tally/core.py::counts"]
    assert result.tests_summary()["passed_after"] == result.tests_summary()["passed_before"] == 2
    assert result.newly_failing() == []
    converted = (tmp_path / "out" / "tally" / "core.py").read_text()
    assert "jnp.asarray(x) * k" in converted  # scaled, whose test passes, stays on JAX


CAPPED_PACKAGE = {
    "ledger/__init__.py": "from .core import doubled, total\n",
    "ledger/core.py": (
        "import numpy as np\n\n\n"
        "def doubled(x):\n"
        "    return np.asarray(x) * 2.0\n\n\n"
        "def total(n):\n"
        "    return float(np.sum(np.arange(n)))\n"),
    "tests/test_core.py": (
        "import numpy as np\n\nfrom ledger import doubled, total\n\n\n"
        "def test_doubled_on_many_sizes():\n"
        "    for n in range(6):\n"
        "        assert doubled(np.arange(n)).shape == (n,)\n\n\n"
        "def test_table_can_be_edited():\n"
        "    assert total(4) == 6.0\n"
        "    t = doubled(np.arange(4))\n"
        "    t[0] = 7.0  # the caller writes into the result: NumPy allows it\n"
        "    assert t.tolist() == [7.0, 2.0, 4.0, 6.0]\n"),
}


def test_the_fewest_functions_a_newly_failing_test_needs_are_kept(tmp_path):
    """`doubled`'s three recorded calls all come from the test before (3 calls a function
    are recorded here), yet the failing test calls it too and writes into its result: every
    call is counted for its test, so `doubled` is a candidate; the failing test is rerun
    alone on conversions keeping fewer candidates, and `total`, which it calls too but does
    not need on NumPy, stays on JAX."""
    project = _write_project(tmp_path / "project", CAPPED_PACKAGE)
    progress: list[str] = []
    result = convert_proved(project / "ledger", tmp_path / "out" / "ledger", Config(cache=False),
                            project=project, pytest_args=["tests"],
                            options=ProveOptions(jobs=1, timeout_s=TIMEOUT_S, max_calls=3),
                            jobs=1, progress=progress.append)
    records = callers_by_function(tmp_path / "out" / ".ledger-prove" / "records")
    assert records["ledger/core.py::doubled"] == {
        "tests/test_core.py::test_doubled_on_many_sizes", "tests/test_core.py::test_table_can_be_edited"}
    assert result.blame["candidates"] == ["ledger/core.py::doubled", "ledger/core.py::total"]
    assert result.blame["passed"] and result.blame["trials"] == 3  # both, total alone, doubled alone
    assert [entry.partition("=")[0] for entry in result.kept] == ["ledger/core.py::doubled"]
    assert all("tests.test_core::test_table_can_be_edited" in entry for entry in result.kept)
    assert result.newly_failing() == []
    assert result.tests_summary()["passed_after"] == result.tests_summary()["passed_before"] == 2
    converted = (tmp_path / "out" / "ledger" / "core.py").read_text()
    assert "jnp.sum(jnp.arange(n))" in converted  # total stays on JAX


def test_fewest_keeps_what_the_test_needs_within_its_budget():
    calls = []

    def passes(keys):
        calls.append(list(keys))
        return {"c", "f"} <= set(keys)

    assert _fewest(list("abcdefgh"), passes, 15) == ["c", "f"]
    assert len(calls) <= 15
    calls.clear()
    assert set(_fewest(list("abcdefgh"), passes, 2)) >= {"c", "f"}  # out of budget: a superset
    assert len(calls) == 2


MIXED_PACKAGE = {
    "mixed/__init__.py": "",
    "mixed/core.py": (
        "import numpy as np\n\n\n"
        "def doubled(x):\n"
        "    return np.asarray(x) * 2.0\n"),
    # a module np2jax leaves on NumPy as a whole (it imports decimal: NJ102)
    "mixed/money.py": (
        "import decimal\n\nimport numpy as np\n\n\n"
        "def total(x):\n"
        "    return np.sum(np.asarray(x) * 2.0)\n\n\n"
        "def cents(x):\n"
        "    return np.round(np.asarray(x) * 100.0)\n"),
    "tests/test_mixed.py": (
        "import numpy as np\n\nfrom mixed.core import doubled\nfrom mixed.money import cents, total\n\n\n"
        "def test_doubled():\n"
        "    assert np.allclose(doubled([1.0, 2.0]), [2.0, 4.0])\n\n\n"
        "def test_money():\n"
        "    assert float(total([1.0, 2.0])) == 6.0\n"
        "    assert float(total([3.0])) == 6.0\n"
        "    assert np.allclose(cents([0.5]), [50.0])\n"),
}


def test_functions_of_a_module_left_on_numpy_are_not_counted_on_jax(tmp_path):
    """numpy-financial's report counted 13 functions "on JAX", none converted: a function
    proven equal in a module the conversion left on NumPy replays NumPy against NumPy. Only
    the functions of modules whose conversion uses JAX are on JAX; the others are counted
    apart (functions_left_on_numpy)."""
    project = _write_project(tmp_path / "project", MIXED_PACKAGE)
    result = convert_proved(project / "mixed", tmp_path / "out" / "mixed", Config(cache=False),
                            project=project, pytest_args=["tests"],
                            options=ProveOptions(jobs=1, timeout_s=TIMEOUT_S), jobs=1)
    money = (tmp_path / "out" / "mixed" / "money.py").read_text()
    assert money == MIXED_PACKAGE["mixed/money.py"]  # left on NumPy as a whole
    assert "jnp." in (tmp_path / "out" / "mixed" / "core.py").read_text()
    verdicts = {f.key: (f.verdict, f.calls) for f in result.proof.functions}
    assert verdicts == {"mixed/core.py::doubled": ("equal", 1), "mixed/money.py::total": ("equal", 2),
                        "mixed/money.py::cents": ("equal", 1)}
    assert result.paths_on_jax() == {"mixed/core.py"}
    assert result.calls_on_jax() == {"calls": 4, "calls_on_jax": 1, "share": 0.25,
                                     "functions_on_jax": 1, "functions_left_on_numpy": 2}
    assert result.as_dict()["calls_on_jax"]["functions_left_on_numpy"] == 2
    json.dumps(result.as_dict())
