"""Precision: NumPy's 64-bit dtypes by default (converted modules enable jax_enable_x64),
JAX's 32-bit defaults when the user chooses them (--x32, `x64 = false`), where NJ401 then
reports what 32 bits may change."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import X64_IMPORTS, invoke, run_main
from np2jax.api import Config, check_source, convert_source

X64_LINE = 'jax.config.update("jax_enable_x64", True)'
X32 = Config(x64=False)


def test_the_default_enables_64_bits_and_the_32_bit_mode_does_not():
    source = "import numpy as np\nx = np.arange(5)\n"
    assert convert_source(source).converted == X64_IMPORTS + "\nx = jnp.arange(5)\n"
    assert convert_source(source, X32).converted == "import jax.numpy as jnp\n\nx = jnp.arange(5)\n"


def test_a_module_with_nothing_to_convert_is_left_as_it_is():
    source = "import numpy as np\nx = 1\n"
    result = convert_source(source)
    assert result.converted == source and result.changes == []


def test_the_line_follows_the_leading_imports_before_any_array_is_made():
    source = ('#!/usr/bin/env python\n"""Doc."""\nfrom __future__ import annotations\n'
              "import os\nimport numpy as np\n\nSEED = 1\nimport sys\ntotal = np.arange(5).sum()\n")
    converted = convert_source(source).converted
    assert converted == (
        '#!/usr/bin/env python\n"""Doc."""\nfrom __future__ import annotations\nimport os\n'
        f"import jax\nimport jax.numpy as jnp\n{X64_LINE}\n\nSEED = 1\nimport sys\n"
        "total = jnp.arange(5).sum()\n")
    assert convert_source(converted).converted == converted  # idempotent
    compile(converted, "<converted>", "exec")


@pytest.mark.parametrize("own", ["import jax\njax.config.update('jax_enable_x64', True)\n",
                                 "from jax import config\nconfig.update('jax_enable_x64', False)\n"])
def test_a_module_that_sets_its_own_precision_keeps_it(own):
    source = "import numpy as np\n" + own + "x = np.arange(3)\n"
    converted = convert_source(source).converted
    assert converted.count("jax_enable_x64") == 1 and own.splitlines()[-1] in converted
    assert "x = jnp.arange(3)" in converted


def test_the_converted_program_computes_in_numpys_dtypes(tmp_path):
    source = (
        "import numpy as np\n\n\ndef main():\n"
        "    counts = np.arange(100_000)\n"
        "    return {'total': counts.sum(), 'mean': (counts / 3).mean(),\n"
        "            'small': np.ones(3, dtype=np.float32).sum(), 'stamp': np.array([1.7e9]) + 0.25}\n")
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(source)
    after.write_text(convert_source(source).converted)
    expected, got = run_main(before), run_main(after)
    assert expected["total"] == 4_999_950_000  # past 2**31: JAX's 32-bit default overflows
    for key in expected:
        assert np.asarray(got[key]).dtype == np.asarray(expected[key]).dtype, key
        np.testing.assert_allclose(np.asarray(got[key]), expected[key], rtol=1e-12)  # sum order


def test_float64_dependent_is_the_32_bit_modes_rule():
    source = "import numpy as np\nx = np.zeros(3, dtype=np.float64)\nt = np.arange(5).sum()\n"
    assert "NJ401" not in {f.code for f in check_source(source)}
    assert "NJ401" in {f.code for f in check_source(source, X32)}


def test_the_cli_and_the_configuration_choose_the_mode(tmp_path):
    source = tmp_path / "pkg" / "a.py"
    source.parent.mkdir()
    source.write_text("import numpy as np\nx = np.arange(5)\n")
    assert X64_LINE in invoke("convert", source, "--diff").stdout
    assert X64_LINE in invoke("convert", source, "--diff", "--x64").stdout
    assert X64_LINE not in invoke("convert", source, "--diff", "--x32").stdout
    both = invoke("convert", source, "--diff", "--x64", "--x32")
    assert both.exit_code == 2 and "choose one of --x64" in both.output
    (tmp_path / "pyproject.toml").write_text("[tool.np2jax]\nx64 = false\n")
    assert X64_LINE not in invoke("convert", source, "--diff").stdout
    assert X64_LINE in invoke("convert", source, "--diff", "--x64").stdout  # the flag wins


def test_a_call_kept_on_scipy_handed_float32_values_is_reported_in_the_32_bit_mode():
    """`minimize(loss, x0)` stays on SciPy; under --x32 its x0 comes from converted code as
    float32, and its finite-difference step follows x0's dtype: NJ401 names the consumer
    and the value. Integer data handed to a kept call, and the default mode, report none."""
    source = ("import numpy as np\nfrom scipy.optimize import minimize\n\n"
              "def loss(v):\n    return float(np.sum((v - 1.5) ** 2))\n\n"
              "def main():\n    x0 = np.linspace(0.0, 1.0, 3) * 2.0\n"
              "    counts = np.arange(4)\n    np.savetxt('counts.txt', counts)\n"
              "    return minimize(loss, x0).x\n")
    found = [f for f in check_source(source, X32) if f.code == "NJ401"]
    assert len(found) == 1 and "`minimize(...)`" in found[0].message \
        and "`x0`" in found[0].message and "SciPy" in found[0].message
    assert [f for f in check_source(source) if f.code == "NJ401"] == []


def test_statistics_of_a_narrow_cast_of_a_parameter_give_numpys_dtype_for_either_array():
    """A library function no caller in the module shows: its parameter may be a NumPy array
    (the user's) or a JAX array (converted code's). `.mean(dtype=jnp.float64)` is NumPy's
    own dtype for int16 data, so both give NumPy's float64 (JAX alone gave float32)."""
    import jax
    import jax.numpy as jnp

    source = ("import numpy as np\n\n\ndef level_stats(frame):\n"
              "    levels = frame.astype(np.int16)\n"
              "    return levels.mean(), levels.var(), frame[1:].astype(np.int32).mean()\n")
    converted = convert_source(source, Config()).converted
    assert "levels.mean(dtype=jnp.float64)" in converted
    original, namespace = {}, {}
    exec(compile(source, "<original>", "exec"), original)
    exec(compile(converted, "<converted>", "exec"), namespace)
    frame = np.arange(24.0).reshape(4, 6) * 11.3
    expected = original["level_stats"](frame)
    for given in (frame, jnp.asarray(frame)):
        got = namespace["level_stats"](given)
        for want, value in zip(expected, got):
            assert np.asarray(value).dtype == want.dtype == np.float64
            assert np.allclose(np.asarray(value), want, rtol=1e-12)
    assert jax.config.jax_enable_x64
