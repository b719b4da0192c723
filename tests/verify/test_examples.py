"""The bundled examples (examples/*.py), which the README's quickstart converts.

Each example is converted with the API, the converted program is run under JAX and its
main() compared with the NumPy original. An example whose conversion leaves an in-place
write to the user may raise under JAX; then the findings must name an in-place rule.
"""

from __future__ import annotations

import subprocess
import sys

import jax
import pytest

from helpers import ROOT, run_main
from np2jax.api import convert_source
from np2jax.config import Config
from np2jax.verify.compare import compare_values

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
IN_PLACE_CODES = {"NJ201", "NJ202", "NJ203", "NJ204", "NJ205", "NJ206", "NJ207"}
HEAT = ROOT / "examples" / "heat_and_stats.py"


def _convert(path):
    return convert_source(path.read_text(encoding="utf-8"), Config(), str(path))


def test_there_are_examples():
    assert HEAT in EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_converts_runs_and_agrees(example, tmp_path):
    result = _convert(example)
    assert result.changed, f"{example.name}: nothing was converted"
    converted = tmp_path / example.name
    converted.write_text(result.converted, encoding="utf-8")
    reference = run_main(example)
    try:
        got = run_main(converted)
    except Exception as exc:  # noqa: BLE001 - JAX refusing an unconverted write is reported
        codes = {f.code for f in result.findings}
        assert codes & IN_PLACE_CODES, \
            f"{example.name}: the converted program raised {exc!r}, and no finding says why"
        return
    assert compare_values("main()", reference, got) is None


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_conversion_is_idempotent(example):
    once = _convert(example).converted
    assert convert_source(once, Config()).converted == once


def test_heat_and_stats_what_is_converted_and_what_is_left():
    result = _convert(HEAT)
    assert sorted(f.code for f in result.findings) == ["NJ103", "NJ201", "NJ301"]
    changed = {c.code for c in result.changes}
    assert {"NJ101", "NJ110"} <= changed
    text = result.converted
    assert "from scipy" not in text
    assert "jax.scipy.special.erf(" in text and "jax.scipy.signal.convolve(" in text
    assert "jnp.array([1.0, -2.0, 1.0])" in text  # a list argument, wrapped
    assert "int(np.sqrt(n))" in text  # shape work stays on NumPy, with no finding
    assert "np.random.default_rng(0)" in text  # reported (NJ301) and kept
    assert "np.trapezoid(u, x)" in text  # differs for infinite data: reported (NJ103) and kept


def test_heat_and_stats_really_runs_on_jax(tmp_path):
    converted = tmp_path / HEAT.name
    converted.write_text(_convert(HEAT).converted, encoding="utf-8")
    got = run_main(converted)
    assert all(isinstance(value, jax.Array) for key, value in got.items() if key != "heat")
    assert not isinstance(got["heat"], jax.Array)  # np.trapezoid, kept on NumPy (NJ103)


def test_quickstart_command_shows_the_diff_and_both_columns():
    """`np2jax convert examples --diff`: exit 1, as it leaves findings for the user."""
    before = HEAT.read_text(encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "np2jax", "convert", "examples", "--diff"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "+++ b/examples/heat_and_stats.py" in run.stdout
    assert "rewritten: NJ101" in run.stdout and "left for you: NJ301" in run.stdout
    assert HEAT.read_text(encoding="utf-8") == before, "--diff must write nothing"
