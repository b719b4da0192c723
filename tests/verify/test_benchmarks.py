"""Smoke test of benchmarks/converted_speed.py: one program at a tiny size, converted by the
real np2jax, run by the verifier. No timing is asserted (the machine may be loaded)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "converted_speed.py"


@pytest.mark.slow  # converts, and three child processes import NumPy or JAX: about 20 s
def test_small_heat_stencil_prints_a_table_of_equal_results(tmp_path):
    out = tmp_path / "speed.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "--size", "small", "--only", "heat_stencil",
                           "--repeat", "1", "--device", "cpu", "--json", str(out)],
                          check=False, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("| heat_stencil"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1] == "yes"  # loop-heavy
    eager, jit, hand = cells[-1].split(" / ")
    assert eager == "equal" and hand == "equal"
    assert jit in ("equal", "n/a")
    figures = json.loads(out.read_text())
    program = figures["programs"][0]
    assert program["name"] == "heat_stencil" and figures["size"] == "small"
    assert program["variants"]["eager"]["verdict"] == "equal"
    assert program["variants"]["eager"]["uses_jax"] is True
    assert program["speedup"]["cpu"]["hand"] > 0
    if not figures["jit_available"]:
        assert "n/a (convert --jit unavailable)" in done.stdout


def test_unknown_program_is_a_usage_error():
    done = subprocess.run([sys.executable, str(SCRIPT), "--only", "no_such_program"],
                          check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "no program 'no_such_program'" in done.stderr
    assert "Traceback" not in done.stderr
