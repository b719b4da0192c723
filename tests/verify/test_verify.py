"""The verifier (np2jax verify, convert --verify, np2jax.verify): real child processes.

Most programs here are small NumPy ports written by hand (the verifier must check those
too), so that only a few children pay for starting JAX; one tree of cases is verified once
and its JSON shared by several tests.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from np2jax.cli import app
from np2jax.verify import (Tolerance, VerifyOptions, compare_trees, compare_values,
                           parse_devices, verify_paths)
from np2jax.verify.core import VerifyUsageError
from np2jax.verify.stats import ks_2samp

ROOT = Path(__file__).resolve().parents[2]


def _write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


def _np2jax(*args, cwd=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "np2jax", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout)


# -- one tree of cases, verified once ---------------------------------------------------------

CASES = {
    # name: (original, converted)
    "equal.py": ("""
        import dataclasses
        import numpy as np

        @dataclasses.dataclass
        class Stats:
            mean: float
            count: int

        def main():
            x = np.linspace(0.0, 1.0, 200)
            return {"wave": np.sin(x), "pair": (np.cumsum(x), "label"), "n": 7,
                    "stats": Stats(float(x.mean()), 200), "mask": x > 0.5}
        """, """
        import dataclasses
        import jax.numpy as jnp

        @dataclasses.dataclass
        class Stats:
            mean: float
            count: int

        def main():
            x = jnp.linspace(0.0, 1.0, 200)
            return {"wave": jnp.sin(x), "pair": (jnp.cumsum(x), "label"), "n": 7,
                    "stats": Stats(float(x.mean()), 200), "mask": x > 0.5}
        """),
    "small.py": ("""
        import numpy as np

        def main():
            return {"y": np.linspace(1.0, 2.0, 50)}
        """, """
        import numpy as np

        def main():
            return {"y": np.linspace(1.0, 2.0, 50) * (1 + 3e-7)}
        """),
    "large.py": ("""
        import numpy as np

        def main():
            return {"grid": np.ones((4, 5)), "ok": np.arange(3)}
        """, """
        import numpy as np

        def main():
            grid = np.ones((4, 5))
            grid[2, 3] += 0.5
            grid[1, 1] += 0.01
            return {"grid": grid, "ok": np.arange(3)}
        """),
    "raises.py": ("""
        def main():
            return 1.0
        """, """
        def main():
            raise ValueError("boom\\nsecond line of the message")
        """),
    "crash.py": ("""
        def main():
            return 1.0
        """, """
        import os

        def main():
            os.abort()
        """),
    "random_ok.py": ("""
        import numpy as np

        STOCHASTIC = {"mean": 0.05, "draws": 0.05}

        def main():
            rng = np.random.default_rng(0)
            draws = rng.normal(size=4000)
            return {"mean": draws.mean(), "draws": draws, "exact": np.arange(3)}
        """, """
        import numpy as np

        STOCHASTIC = {"mean": 0.05, "draws": 0.05}

        def main():
            rng = np.random.default_rng(1)  # other numbers, same distribution
            draws = rng.normal(size=4000)
            return {"mean": draws.mean(), "draws": draws, "exact": np.arange(3)}
        """),
    "random_bad.py": ("""
        import numpy as np

        STOCHASTIC = {"draws": 0.05}

        def main():
            return {"draws": np.random.default_rng(0).normal(size=4000)}
        """, """
        import numpy as np

        STOCHASTIC = {"draws": 0.05}

        def main():
            return {"draws": np.random.default_rng(0).normal(loc=0.3, size=4000)}
        """),
    "random_cli.py": ("""
        import numpy as np

        def main():
            return {"cli_mean": np.random.default_rng(0).uniform(size=5000).mean()}
        """, """
        import numpy as np

        def main():
            return {"cli_mean": np.random.default_rng(7).uniform(size=5000).mean()}
        """),
    "script.py": ("""
        import numpy as np

        x = np.arange(6.0)
        total = x.sum()
        count = 6
        _private = 1.0
        """, """
        import jax.numpy as jnp

        x = jnp.arange(6.0)
        total = x.sum()
        count = 6
        extra_only_in_converted = jnp.zeros(2)
        """),
    "uses_helper.py": ("""
        import helper

        def main():
            return {"scale": helper.scale()}
        """, """
        import helper

        def main():
            return {"scale": helper.scale()}
        """),
    # each side must import its own tree's helper: the converted one answers differently
    "helper.py": ("""
        def scale():
            return 2.0
        """, """
        def scale():
            return 3.0
        """),
    # equal outputs, but JAX warns that a later release refuses the scatter: unclean
    "warns.py": ("""
        import numpy as np

        def main():
            a = np.arange(-5, 5)
            a[1] += 2.5
            return {"a": a}
        """, """
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)

        def main():
            a = jnp.arange(-5, 5)
            return {"a": a.at[1].add(2.5)}
        """),
    # a warning the original raises too is the program's own: equal
    "warns_both.py": ("""
        import warnings

        def main():
            warnings.warn("old API", DeprecationWarning)
            return {"n": 1}
        """, """
        import warnings

        def main():
            warnings.warn("old API", DeprecationWarning)
            return {"n": 1}
        """),
    # the first call agrees, a repeat of the converted program does not: unsteady
    "unsteady.py": ("""
        import numpy as np

        def main():
            return {"s": np.ones(4).sum()}
        """, """
        import jax.numpy as jnp
        CALLS = []

        def main():
            CALLS.append(1)
            return {"s": jnp.ones(4).sum() * (1 if len(CALLS) == 1 else 2)}
        """),
    # results that change from call to call on both sides are the program's own: equal
    "unsteady_both.py": ("""
        CALLS = []

        def main():
            CALLS.append(1)
            return {"n": len(CALLS)}
        """, """
        CALLS = []

        def main():
            CALLS.append(1)
            return {"n": len(CALLS)}
        """),
    "tests/test_skipped.py": ("""
        def test_nothing():
            pass
        """, """
        def test_nothing():
            pass
        """),
}


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp("verify")
    for name, (original, converted) in CASES.items():
        _write(base / "orig", name, original)
        _write(base / "conv", name, converted)
    return base / "orig", base / "conv"


@pytest.fixture(scope="module")
def tree_json(trees):
    """`np2jax verify ORIG CONV --format json`: the whole tree, once. --memory 1024 also shows
    that JAX starts under the memory limit."""
    done = _np2jax("verify", *trees, "--devices", "cpu", "--repeat", "2", "--memory", "1024",
                   "--stochastic", "cli_mean=0.02", "--format", "json")
    assert done.returncode == 1, done.stderr  # some cases differ or fail on purpose
    assert "Traceback" not in done.stderr
    payload = json.loads(done.stdout)
    return {Path(r["original"]).relative_to(trees[0]).as_posix(): r for r in payload["results"]}, payload


def _outputs(result):
    return {o["name"]: o for o in result["outputs"]}


def test_json_schema(tree_json):
    results, payload = tree_json
    assert set(results) == set(CASES)
    assert payload["devices"] == ["cpu"]
    for result in results.values():
        assert {"original", "converted", "verdict", "outputs", "timings", "error"} <= set(result)
        assert result["verdict"] in ("equal", "stochastic-equal", "unclean", "unsteady", "differs",
                                     "error", "skipped")
        assert set(result["timings"]) == {"numpy", "jax"}
        for output in result["outputs"]:
            assert {"name", "shape", "dtype_original", "dtype_converted", "max_abs_err",
                    "max_rel_err", "equal"} <= set(output)
    timings = results["equal.py"]["timings"]
    assert timings["numpy"]["runs"] == 2 and timings["numpy"]["median_s"] > 0
    cpu = timings["jax"]["cpu"]
    assert cpu["runs"] == 2 and cpu["first_call_s"] > 0 and cpu["median_s"] > 0


def test_equal_programs(tree_json):
    result = tree_json[0]["equal.py"]
    assert result["verdict"] == "equal", result
    assert result["uses_jax"] is True and result["mode"] == "main()"
    outputs = _outputs(result)
    assert set(outputs) == {"wave", "pair[0]", "pair[1]", "n", "stats['mean']", "stats['count']", "mask"}
    wave = outputs["wave"]
    assert wave["shape"] == [200] and wave["converted_origin"] == "jax"
    # float64 against float32 is reported, and judged by the float32 tolerance
    assert (wave["dtype_original"], wave["dtype_converted"]) == ("float64", "float32")
    assert "float64 -> float32" in wave["note"]
    assert outputs["mask"]["dtype_converted"] == "bool" and outputs["mask"]["max_abs_err"] == 0


def test_a_little_off_is_equal_a_lot_off_differs(tree_json):
    results = tree_json[0]
    small = results["small.py"]
    assert small["verdict"] == "equal"
    assert 0 < _outputs(small)["y"]["max_rel_err"] < 1e-6
    large = results["large.py"]
    assert large["verdict"] == "differs"
    grid = _outputs(large)["grid"]
    assert grid["equal"] is False
    assert grid["max_abs_err"] == pytest.approx(0.5)
    assert grid["max_rel_err"] == pytest.approx(0.5)
    assert grid["worst_index"] == [2, 3]
    assert _outputs(large)["ok"]["equal"] is True


def test_errors_are_verdicts_with_one_line(tree_json):
    raised = tree_json[0]["raises.py"]
    assert raised["verdict"] == "error"
    assert raised["error"] == "converted on cpu: ValueError: boom"
    crashed = tree_json[0]["crash.py"]
    assert crashed["verdict"] == "error"
    assert crashed["error"].startswith("converted on cpu: killed by SIGABRT")


def test_warnings_a_later_jax_turns_into_errors_make_a_run_unclean(tree_json):
    warns = tree_json[0]["warns.py"]
    assert warns["verdict"] == "unclean", warns
    assert all(o["equal"] for o in warns["outputs"])
    assert len(warns["warnings"]) == 1
    assert warns["warnings"][0].startswith("FutureWarning: scatter inputs have incompatible types")
    both = tree_json[0]["warns_both.py"]
    assert both["verdict"] == "equal" and both["warnings"] == []


def test_results_that_change_between_runs_of_the_converted_program_only_are_unsteady(tree_json):
    unsteady = tree_json[0]["unsteady.py"]
    assert unsteady["verdict"] == "unsteady", unsteady
    assert all(o["equal"] for o in unsteady["outputs"])
    assert unsteady["unsteady"] == {"cpu": 2}  # the first timed repeat, the second run
    both = tree_json[0]["unsteady_both.py"]
    assert both["verdict"] == "equal" and both["unsteady"] == {}


def test_random_outputs_by_statistics(tree_json):
    results = tree_json[0]
    ok = results["random_ok.py"]
    assert ok["verdict"] == "stochastic-equal", ok
    outputs = _outputs(ok)
    assert outputs["draws"]["stochastic"] and "KS" in outputs["draws"]["note"]
    assert outputs["exact"]["stochastic"] is False and outputs["exact"]["equal"]
    bad = results["random_bad.py"]
    assert bad["verdict"] == "differs"
    assert _outputs(bad)["draws"]["equal"] is False
    # --stochastic NAME=TOL on the command line, for a module without STOCHASTIC
    assert results["random_cli.py"]["verdict"] == "stochastic-equal"


def test_script_mode_compares_module_globals(tree_json):
    result = tree_json[0]["script.py"]
    assert result["mode"] == "script"
    assert result["verdict"] == "equal", result
    # the original's public arrays and numbers; names only the converted has are not outputs
    assert set(_outputs(result)) == {"x", "total", "count"}


def test_a_tree_pair_uses_each_trees_own_modules(tree_json):
    results = tree_json[0]
    helper_user = results["uses_helper.py"]
    assert helper_user["verdict"] == "differs"
    assert _outputs(helper_user)["scale"]["max_abs_err"] == pytest.approx(1.0)
    assert results["helper.py"]["verdict"] == "skipped"  # no main(), nothing at module level
    assert results["tests/test_skipped.py"]["verdict"] == "skipped"


# -- limits ---------------------------------------------------------------------------------

def test_a_program_that_loops_forever_times_out(tmp_path):
    original = _write(tmp_path, "a.py", "def main():\n    return 1\n")
    converted = _write(tmp_path, "b.py", "def main():\n    while True:\n        pass\n")
    run = verify_paths(original, converted, VerifyOptions(devices=("cpu",), timeout_s=1.5))
    result = run.results[0]
    assert not run.ok and result.verdict == "error"
    assert result.error == "converted on cpu: timeout: no result after 1.5 s"


def test_a_program_that_allocates_without_bound_hits_the_memory_limit(tmp_path):
    original = _write(tmp_path, "a.py", """
        import numpy as np

        def main():
            keep = []
            while True:
                keep.append(np.ones(2_000_000))
        """)
    run = verify_paths(original, original, VerifyOptions(devices=("cpu",), timeout_s=30,
                                                         memory_bytes=400 << 20))
    result = run.results[0]
    assert result.verdict == "error"
    assert result.error.startswith("original: memory: ")
    assert "MemoryError" in result.error or "resident memory" in result.error


def test_a_program_that_writes_files_writes_them_in_a_scratch_folder(tmp_path, monkeypatch):
    """Each side runs in its own temporary working directory, removed afterwards: relative
    writes land there, not in the user's folder or next to the script, and the two sides
    do not see each other's files (the converted side would otherwise read the original's)."""
    program = """
        import os
        import numpy as np

        def main():
            seen_before = os.path.exists("state.npy")
            np.save("state.npy", np.arange(4.0))
            os.makedirs("results", exist_ok=True)
            with open(os.path.join("results", "log.txt"), "a") as log:
                log.write("ran\\n")
            return {"seen_before": seen_before, "state": np.load("state.npy"),
                    "log_lines": len(open("results/log.txt").read().splitlines())}
        """
    original = _write(tmp_path / "src", "a.py", program)
    converted = _write(tmp_path / "out", "a.py", program)
    user_folder = tmp_path / "cwd"
    user_folder.mkdir()
    monkeypatch.chdir(user_folder)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    run = verify_paths(original, converted, VerifyOptions(devices=("cpu",), repeat=3))
    result = run.results[0]
    assert result.verdict == "equal", result
    outputs = _outputs(result.as_dict())
    assert set(outputs) == {"seen_before", "state", "log_lines"}
    assert all(item["equal"] for item in outputs.values()), outputs
    # Nothing in the user's folder or next to either script; the scratch folders are gone.
    assert list(user_folder.iterdir()) == []
    assert sorted(p.name for p in original.parent.iterdir()) == ["a.py"]
    assert sorted(p.name for p in converted.parent.iterdir()) == ["a.py"]
    assert list(scratch.iterdir()) == []


def test_call_and_x64(tmp_path):
    """--call picks the function; --x64 runs the converted side with jax_enable_x64, and then a
    float32 result where NumPy had float64 would differ."""
    original = _write(tmp_path, "a.py", """
        import numpy as np

        def compute():
            return np.linspace(0.0, 1.0, 7) ** 2
        """)
    converted = _write(tmp_path, "b.py", """
        import jax.numpy as jnp

        def compute():
            return jnp.linspace(0.0, 1.0, 7) ** 2
        """)
    run = verify_paths(original, converted, VerifyOptions(call="compute", x64=True,
                                                          devices=("cpu",), repeat=0))
    result = run.results[0]
    assert result.verdict == "equal", result.as_dict()
    assert result.mode == "compute()"
    [output] = result.outputs
    assert (output.dtype_original, output.dtype_converted) == ("float64", "float64")
    assert result.jax["cpu"].runs == 0 and result.jax["cpu"].median_s is None


# -- the command line -----------------------------------------------------------------------

def test_text_table_without_colour(tmp_path):
    original = _write(tmp_path, "a.py", "import numpy as np\n\ndef main():\n    return np.arange(4.0)\n")
    done = _np2jax("verify", original, original, "--devices", "cpu", "--repeat", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "\x1b[" not in done.stdout
    for column in ("verdict", "outputs", "max abs err", "max rel err", "numpy", "cpu first",
                   "cpu steady", "cpu speed-up"):
        assert column in done.stdout
    assert "a.py" in done.stdout and "equal" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["a.py", "b.py", "c.py"], "unexpected argument"),
    (["a.py"], "two paths"),
    (["a.py", "a.py", "--devices", "quantum"], "unknown device"),
    (["a.py", "a.py", "--stochastic", "pi"], "NAME=TOLERANCE"),
    (["a.py", "missing.py"], "no such file"),
    (["--tests", "a.py", "a.py"], "two folders"),
])
def test_usage_errors_exit_2(tmp_path, monkeypatch, args, message):
    _write(tmp_path, "a.py", "def main():\n    return 1\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["verify", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_tests_mode_reports_the_test_that_changed(tmp_path):
    for side, factor in (("orig", 2), ("conv", 3)):
        _write(tmp_path / side, "calc.py", f"""
            import numpy as np

            def add(a, b):
                return np.add(a, b)

            def double(a):
                return np.multiply(a, {factor})
            """)
        _write(tmp_path / side, "tests/test_calc.py", """
            import numpy as np
            from calc import add, double

            def test_add():
                assert add(1, 2) == 3

            def test_double():
                np.testing.assert_allclose(double(np.arange(3)), [0, 2, 4])
            """)
    done = _np2jax("verify", "--tests", tmp_path / "orig", tmp_path / "conv", "--devices", "cpu",
                   "--format", "json", "--", "-q")
    assert done.returncode == 1, done.stdout + done.stderr
    tests = json.loads(done.stdout)["tests"]
    assert tests["verdict"] == "differs"
    assert tests["original"]["counts"] == {"passed": 2}
    assert tests["converted"]["cpu"]["counts"] == {"passed": 1, "failed": 1}
    [change] = tests["changed"]
    assert change["test"].endswith("test_double")
    assert (change["original"], change["converted"], change["device"]) == ("passed", "failed", "cpu")


def test_convert_verify(tmp_path):
    source = tmp_path / "src"
    _write(source, "prog.py", """
        import numpy as np

        def main():
            x = np.linspace(0.0, 1.0, 50)
            return {"y": np.sin(x) * 2.0, "total": np.sum(x)}
        """)
    _write(source, "lib.py", "import numpy as np\n\nONE = np.ones(3)\n")
    out = tmp_path / "out"
    done = _np2jax("convert", source, "--out", out, "--verify", "--format", "json")
    payload = json.loads(done.stdout)
    assert done.returncode == (1 if payload["findings"] else 0), done.stderr
    results = {Path(r["original"]).name: r for r in payload["verify"]["results"]}
    assert results["prog.py"]["verdict"] == "equal", results["prog.py"]
    assert results["prog.py"]["uses_jax"] is True
    assert "cpu" in results["prog.py"]["timings"]["jax"]  # default --devices all includes cpu
    assert results["lib.py"]["verdict"] == "skipped"  # no main(): convert --verify does not run it
    assert payload["summary"]["verified equal"] == 1

    text = _np2jax("convert", source, "--out", tmp_path / "out2", "--verify")
    assert "np2jax verify" in text.stdout and "prog.py" in text.stdout
    assert "files verified equal" in text.stdout
    assert "1 file(s) without main() not verified" in text.stdout


def test_convert_verify_needs_out(tmp_path):
    _write(tmp_path, "a.py", "def main():\n    return 1\n")
    result = CliRunner().invoke(app, ["convert", str(tmp_path / "a.py"), "--diff", "--verify"])
    assert result.exit_code == 2 and "--verify needs --out" in result.output


def test_the_verifier_needs_neither_libcst_nor_jax(tmp_path):
    original = _write(tmp_path, "a.py", "def main():\n    return {'x': 1.5}\n")
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        import np2jax.verify, np2jax.verify.report
        from np2jax.verify import VerifyOptions, verify_paths
        run = verify_paths(Path({str(original)!r}), Path({str(original)!r}), VerifyOptions(devices=("cpu",)))
        assert run.ok, run.as_dict()
        assert "libcst" not in sys.modules, "libcst"
        assert "jax" not in sys.modules, "jax"
        print("fine")
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "fine", done.stderr


# -- comparing result trees in-process ------------------------------------------------------

def _one(ref, got, **kwargs):
    [output] = compare_trees(ref, got, **kwargs)
    return output


def test_float_tolerances_by_dtype():
    x = np.linspace(1, 2, 10)
    # float32 against float64: float32 tolerance, and the dtypes reported
    out = _one(x, x.astype(np.float32))
    assert out.equal and (out.dtype_original, out.dtype_converted) == ("float64", "float32")
    # two float64 arrays in-process (the converter's tests): float64 tolerance
    assert not _one(x, x * (1 + 1e-7)).equal
    # the verifier without --x64 judges floats by float32 at least
    assert _one(x, x * (1 + 1e-7), tolerance=Tolerance(floor32=True)).equal
    # with --x64 a float32 result where NumPy had float64 is judged by float64
    assert not _one(x, x.astype(np.float32), tolerance=Tolerance(x64=True)).equal
    # explicit tolerances win
    assert _one(x, x + 0.01, tolerance=Tolerance(atol=0.02, rtol=0)).equal
    assert not _one(x, x + 0.01, tolerance=Tolerance(atol=0.001, rtol=0)).equal


def test_half_precision_complex_ints_bools():
    from np2jax.verify.compare import Leaf

    x = np.linspace(1, 2, 10)
    bf16 = Leaf(x.astype(np.float32) * (1 + 3e-3), "jax", "bfloat16")  # as a child sends it
    out = _one(x, bf16)
    assert out.equal and out.dtype_converted == "bfloat16"
    assert not _one(x, Leaf(x.astype(np.float32) * 1.05, "jax", "bfloat16")).equal
    assert _one(x.astype(np.float16), (x * (1 + 5e-4)).astype(np.float16)).equal
    z = x + 1j * x
    assert _one(z, z.astype(np.complex64)).equal
    assert not _one(z, z + 1e-3j).equal
    ints = np.arange(5)
    assert _one(ints, ints.astype(np.int32)).equal
    bumped = ints.copy()
    bumped[3] += 1
    out = _one(ints, bumped)
    assert not out.equal and out.worst_index == (3,) and out.max_abs_err == 1
    assert not _one(np.array([True, False]), np.array([True, True])).equal


def test_nan_and_inf_positions():
    a = np.array([1.0, np.nan, 3.0, np.inf])
    assert _one(a, a.copy()).equal
    out = _one(a, np.array([1.0, 2.0, np.nan, np.inf]))
    assert not out.equal and "NaN positions differ" in out.note and out.worst_index == (1,)
    out = _one(a, np.array([1.0, np.nan, 3.0, -np.inf]))
    assert not out.equal and math.isinf(out.max_abs_err) and out.as_dict()["max_abs_err"] is None


def test_structure_differences():
    outputs = compare_trees({"a": 1, "b": [1, 2]}, {"a": 1, "c": 3})
    problems = {o.name: o.note for o in outputs if not o.equal}
    assert problems == {"b": "missing from the converted results", "c": "only in the converted results"}
    assert not _one(np.zeros(3), np.zeros(4)).equal
    assert compare_values("main()", {"a": [np.ones(2), "s"]}, {"a": [np.ones(2), "s"]}) is None
    problem = compare_values("main()", {"a": np.ones(3)}, {"a": np.array([1.0, 1.0, 9.0])})
    assert problem.startswith("main()['a']:") and "at [2]" in problem


def test_stochastic_comparisons():
    rng = np.random.default_rng(0)
    draws, other = rng.normal(size=3000), rng.normal(size=3000)
    assert _one(draws, other, stochastic={"result": 0.1}).equal
    assert not _one(draws, other + 0.5, stochastic={"result": 0.1}).equal
    # the same mean and spread but another shape of distribution: KS catches it
    uniform = rng.uniform(-math.sqrt(3), math.sqrt(3), size=3000)
    out = _one(draws, uniform, stochastic={"result": 0.1})
    assert not out.equal and "KS" in out.note
    assert _one({"pi": 3.14}, {"pi": 3.16}, stochastic={"pi": 0.05}).equal
    assert not _one({"pi": 3.14}, {"pi": 3.3}, stochastic={"pi": 0.05}).equal


def test_ks_statistic_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    for x, y in ((rng.normal(size=500), rng.normal(size=300)),
                 (rng.normal(size=400), rng.normal(0.3, size=400)),
                 (rng.integers(0, 3, 1000), rng.integers(0, 3, 800))):
        d, p = ks_2samp(x, y)
        reference = stats.ks_2samp(x, y)
        assert d == pytest.approx(reference.statistic)
        assert p == pytest.approx(reference.pvalue, rel=0.05, abs=1e-4)


def test_parse_devices():
    assert parse_devices("all") is None
    assert parse_devices("cpu, gpu") == ("cpu", "gpu")
    with pytest.raises(VerifyUsageError):
        parse_devices("cpu,all")


def test_the_child_blocks_on_every_array_it_times():
    from np2jax.verify import _child

    class Pending:
        blocked = 0

        def block_until_ready(self):
            Pending.blocked += 1
            return self

    _child._block({"a": Pending(), "b": [Pending(), (1, Pending())], "c": "text"})
    assert Pending.blocked == 3


def test_readme_quickstart_converts_and_verifies_the_example(tmp_path):
    """The README's first quickstart command, minus the install: the example converts, keeps
    its two findings (exit 1) and verifies equal."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    commands = [block.split("```", 1)[0].strip() for block in quickstart.split("```bash")[1:]]
    # the main job, the proof loop on the bundled example package, the tests
    assert len(commands) == 3
    assert commands[0].endswith("np2jax convert examples --out converted --diff --verify")
    assert "np2jax convert smallstats --out" in commands[1] and "--prove -- tests" in commands[1]
    assert commands[2].endswith("-m pytest -q")
    done = _np2jax("convert", "examples", "--out", tmp_path / "converted", "--diff", "--verify",
                   cwd=ROOT)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "+import jax.numpy as jnp" in done.stdout  # the diff, before the report
    table = done.stdout.split("np2jax verify", 1)[1]
    row = next(line for line in table.splitlines() if "heat_and_stats.py" in line)
    assert " equal " in row
    assert "files verified equal" in done.stdout and "error" not in table
