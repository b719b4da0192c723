"""benchmarks/library_speed.py's own logic, on a tiny package made here (the pinned sdists
and their conversion are not needed): a jitted function whose static argument changes each
call recompiles on every steady run, a plain jitted one never does, and both agree with the
NumPy version. No timing is asserted (the machine may be loaded)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "library_speed.py"
sys.path.insert(0, str(SCRIPT.parent))

import library_speed  # noqa: E402

JAX_LIBRARY = '''
from functools import partial

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)


@partial(jax.jit, static_argnums=1)
def scaled(x, factor):  # a new factor, a new compilation
    return jnp.sin(x) * factor


@jax.jit
def plain(x, factor):
    return jnp.sin(x) * factor
'''

NUMPY_LIBRARY = '''
import numpy as np


def scaled(x, factor):
    return np.sin(x) * factor


def plain(x, factor):
    return np.sin(x) * factor
'''

# the spec table the child reads instead of library_speed.HOT (it runs with Hot and np defined)
TABLE = '''
HOT = {"tinylib": [
    Hot("tinylib", "scaled", lambda r: [(r.normal(size=16), float(r.uniform(1, 2)))], "16 values"),
    Hot("tinylib", "plain", lambda r: [(r.normal(size=16), float(r.uniform(1, 2)))], "16 values"),
]}
'''


def _tree(root: Path, source: str) -> Path:
    (root / "tinylib").mkdir(parents=True)
    (root / "tinylib" / "__init__.py").write_text(source)
    return root


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("libspeed")
    table = base / "table.py"
    table.write_text(TABLE)
    labels = ["tinylib.scaled", "tinylib.plain"]
    found = {}
    for variant, source in (("numpy", NUMPY_LIBRARY), ("jit", JAX_LIBRARY)):
        found[variant] = library_speed.run_child(_tree(base / variant, source), "tinylib", labels,
                                                 repeat=4, platform="cpu", timeout_s=240, table=table)
    return found


def test_a_static_argument_that_changes_each_call_recompiles_every_call(runs):
    jit = runs["jit"]
    assert jit["error"] is None and jit["jax"] and jit["x64"]
    scaled = jit["functions"]["tinylib.scaled"]
    assert scaled["ok"] and scaled["jitted"] and len(scaled["times_s"]) == 4
    assert scaled["first_compiles"] >= 1
    assert scaled["steady_compiles"] == 4  # seeds 1..4: four new factors, four compilations
    assert library_speed.recompile_verdict(scaled) == "every call"


def test_a_plain_jit_compiles_once_then_never(runs):
    plain = runs["jit"]["functions"]["tinylib.plain"]
    assert plain["ok"] and plain["jitted"]
    assert plain["first_compiles"] >= 1
    assert plain["steady_compiles"] == 0
    assert library_speed.recompile_verdict(plain) == "none"


def test_numpy_side_has_no_jax_and_results_agree(runs):
    numpy = runs["numpy"]
    assert numpy["error"] is None and not numpy["jax"]
    for label in ("tinylib.scaled", "tinylib.plain"):
        found = numpy["functions"][label]
        assert found["ok"] and not found["jitted"] and found["steady_compiles"] == 0
        assert found["defined_in"] == f"tinylib.{label.split('.')[1]}"
        assert library_speed.compare(found, runs["jit"]["functions"][label], x64=True) == (True, None)


def test_a_different_result_is_reported_not_hidden(runs):
    numpy = runs["numpy"]["functions"]["tinylib.plain"]
    other = runs["numpy"]["functions"]["tinylib.scaled"]  # seed 0: the same inputs, equal
    assert library_speed.compare(numpy, other, x64=True)[0] is True
    broken = {**other, "tree": ("array", "numpy", "float64", numpy["tree"][3] + 1.0, False)}
    equal, problem = library_speed.compare(numpy, broken, x64=True)
    assert equal is False and "max abs error 1" in problem
    assert library_speed.compare(numpy, {"ok": False, "error": "ValueError: x"}, x64=True) == \
        (False, "ValueError: x")


def test_recompile_verdict_counts_runs_that_compiled():
    assert library_speed.recompile_verdict({"ok": True, "times_s": [1, 1, 1], "steady_compiles": 0}) == "none"
    assert library_speed.recompile_verdict({"ok": True, "times_s": [1, 1, 1], "steady_compiles": 1}) == \
        "1 in 3 runs"
    assert library_speed.recompile_verdict({"ok": True, "times_s": [1, 1, 1], "steady_compiles": 7}) == \
        "every call"
    assert library_speed.recompile_verdict({"ok": False}) == "-"


def test_short_reason_keeps_the_first_clause():
    assert library_speed.short_reason(
        "it uses a `try` statement (I/O or exceptions run once, while compiling) (line 193)") == \
        "it uses a `try` statement"
    assert library_speed.short_reason(
        "it is decorated (`@all_parameters_as_numpy_arrays`), and the analysis does not follow "
        "decorators other than jax.jit") == "it is decorated (`@all_parameters_as_numpy_arrays`)"


def test_hot_table_names_three_to_six_functions_of_each_pinned_package():
    from real_projects import PROJECTS

    assert set(library_speed.HOT) == {p.name for p in PROJECTS}
    for name, hots in library_speed.HOT.items():
        assert 3 <= len(hots) <= 6, name
        assert len({h.label for h in hots}) == len(hots)


def test_run_without_prepare_is_a_usage_error(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "run", "--work", str(tmp_path), "--device", "cpu"],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "run `prepare --work" in done.stderr and "Traceback" not in done.stderr


def test_the_report_names_the_recompiling_function_and_show_prints_it_again(runs, tmp_path):
    namespace = {"Hot": library_speed.Hot, "np": library_speed.np}
    exec(TABLE, namespace)  # noqa: S102 - the same table the children ran
    hots = namespace["HOT"]["tinylib"]
    facts = {"tinylib.scaled": {"compiled": True, "reason": None, "line": 10},
             "tinylib.plain": {"compiled": False, "reason": "it uses a `try` statement (line 3)", "line": 14}}
    by_variant = {"numpy": runs["numpy"], ("eager", "cpu"): runs["jit"], ("jit", "cpu"): runs["jit"]}
    rows = [library_speed.function_figures(h, by_variant, "cpu", facts) for h in hots]
    assert [r["compiled_cell"] for r in rows] == ["yes (NJ501)",
                                                  "no: it uses a `try` statement [the jit tree's function is a jax.jit]"]
    assert [r["jit"]["recompiles"] for r in rows] == ["every call", "none"]
    assert all(r["jit"]["equal"] for r in rows)
    lines = library_speed.report_lines(rows, True, {})
    assert "recompiles every call: 2 (tinylib.scaled (eager), tinylib.scaled (jit))" in lines
    report = {"np2jax_commit": None, "repeat": 4, "wall_s": 1.0, "packages": {"tinylib": {
        "version": "0", "children": {}, "devices": {"cpu": {
            "label": "cpu", "uses_jax": True, "functions": rows, "problems": []}}}}}
    saved = tmp_path / "figures.json"
    saved.write_text(library_speed.json.dumps(report, default=str))
    done = subprocess.run([sys.executable, str(SCRIPT), "show", "--json", str(saved)],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("| tinylib.scaled"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2] == "yes (NJ501)" and cells[-2] == "every call / every call"
    assert cells[-1] == "equal / equal"


def _row(function: str, eager_error: str | None, jit_error: str | None) -> dict:
    """A report row as function_figures makes it, each variant ok or failed with an error."""
    def variant(error):
        return {"ok": error is None, "error": error, "steady_s": None if error else 0.001,
                "speedup": None if error else 1.0, "recompiles": "-" if error else "none"}
    return {"function": function, "compiled": False, "eager": variant(eager_error),
            "jit": variant(jit_error)}


def test_every_converted_variant_failing_is_reported_as_failed_with_the_first_error():
    """properscoring on a GPU: every converted variant failed, so the children never imported
    JAX; the summary must say they failed, and why, not that the library does not use JAX."""
    rows = [_row("pkg.crps", "ImportError: numba needs NumPy arrays", "ImportError: second"),
            _row("pkg.brier", "TypeError: third", "TypeError: fourth")]
    lines = library_speed.report_lines(rows, False, {"NJ104": 2})
    assert lines[0] == ("every converted variant failed (eager and jit, 2 function(s)), nothing "
                        "converted was measured; the first error: pkg.crps eager: ImportError: "
                        "numba needs NumPy arrays")
    assert not any("does not use JAX" in line for line in lines)


def test_a_library_left_on_numpy_whose_variants_ran_says_it_does_not_use_jax():
    rows = [_row("pkg.crps", None, None), _row("pkg.brier", "TypeError: x", "TypeError: y")]
    assert library_speed.first_failure(rows) is None
    lines = library_speed.report_lines(rows, False, {"NJ104": 2})
    assert lines[0].startswith("the converted library does not use JAX: convert left it on "
                               "NumPy (its findings: NJ104 2)")
    assert not any(line.startswith("jit faster than NumPy") for line in lines)
    assert library_speed.report_lines(rows, True, {})[0].startswith("hot functions --jit compiled")
    assert library_speed.first_failure([]) is None
