"""--jit: which functions get jax.jit, with which static arguments, and why others do not."""

from __future__ import annotations

import json
import textwrap

import pytest
from typer.testing import CliRunner

from helpers import FIXTURES, run_main
from np2jax.api import convert_source
from np2jax.cli import app
from np2jax.config import Config, load_config

JIT = Config(jit=True)


def _verdicts(source: str) -> dict:
    """function name -> "compiled" or the NJ502 message, for the given source with --jit."""
    result = convert_source(textwrap.dedent(source), JIT)
    verdicts = {}
    for finding in result.changes + result.findings:
        if finding.code in ("NJ501", "NJ502"):
            name = finding.message.split("`")[1]
            verdicts[name] = "compiled" if finding.code == "NJ501" else finding.message
    return verdicts


def test_without_jit_nothing_is_decorated_and_no_jit_finding_is_made():
    source = (FIXTURES / "compilable-function" / "range_bound_loop.in.py").read_text()
    result = convert_source(source)
    assert "jax.jit" not in result.converted
    assert not [f for f in result.findings + result.changes if f.code.startswith("NJ5")]


@pytest.mark.parametrize("case", sorted((FIXTURES / "compilable-function").glob("*.out.py")),
                         ids=lambda p: p.name)
def test_decorated_functions_really_are_compiled(case):
    """The converted fixture's decorated functions are jax.jit functions, and running main()
    compiles them (those called from main() fill their cache; the ones they call are traced
    inline)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(f"_jit_case_{case.stem}", case)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        module.main()
        jitted = [name for name in vars(module) if hasattr(getattr(module, name), "lower")
                  and callable(getattr(module, name))]
        assert jitted, "no function of the converted fixture is compiled"
        assert any(getattr(module, name)._cache_size() >= 1 for name in jitted)
    finally:
        sys.modules.pop(spec.name, None)


@pytest.mark.parametrize("source, function, reason", [
    ("""
     import numpy as np
     def f(x):
         return x * 2
     def g(fn, x):
         return fn(x)
     def main():
         return {"y": g(f, np.ones(2))}
     """, "f", "used as a value"),
    ("""
     import numpy as np
     def f(x, n):
         if n == 0:
             return x
         return f(x * 2, n - 1)
     def main():
         return {"y": f(np.ones(2), 3)}
     """, "f", "calls itself"),
    ("""
     import numpy as np
     def f(x):
         with open("log.txt", "a") as log:
             log.write("x")
         return x
     def main():
         return {"y": f(np.ones(2))}
     """, "f", "with"),
    ("""
     import numpy as np
     K = np.ones(2)
     def f(x):
         return x * K
     def main():
         global K
         K = K * 3
         return {"y": f(np.ones(2))}
     """, "f", "global"),
    ("""
     import numpy as np
     def f(x):
         return x.tolist()
     def main():
         return {"y": np.array(f(np.ones(2)))}
     """, "f", "host"),
    ("""
     import numpy as np
     def f(x, n):
         return x[:n]
     def main():
         x = np.ones(4)
         return {"y": f(x, np.argmax(x))}
     """, "f", "slice bound"),
    ("""
     import numpy as np
     def f(x):
         return np.unique(x)
     def main():
         return {"y": f(np.ones(4))}
     """, "f", "shape depends on the values"),
    ("""
     import numpy as np
     def f(x, k):
         return x.shape[0] + k
     def main():
         return {"y": np.array(f(np.ones(4), 2))}
     """, "f", "returns no array"),
    ("""
     import numpy as np
     def f(x):
         return np.random.normal(size=x.shape) + x
     def main():
         np.random.seed(0)
         return {"y": f(np.ones(4))}
     """, "f", "random"),
    ("""
     import numpy as np
     def f(x):
         return x * 2
     class Model:
         def run(self, x):
             return f(x)
     def main():
         return {"y": Model().run(np.ones(2))}
     """, "f", "cannot classify"),
])
def test_refused_with_the_reason(source, function, reason):
    verdicts = _verdicts(source)
    assert verdicts[function] != "compiled"
    assert reason in verdicts[function]


def test_mask_store_under_jit_is_refused():
    """x[m] = v on a mask other than x's own is converted to .at[m].set, which jit cannot
    compile: the function is left eager."""
    verdicts = _verdicts("""
        import numpy as np
        def f(x, y):
            z = x * 1.0
            z[y > 0] = 0.0
            return z
        def main():
            return {"z": f(np.arange(4.0), np.arange(4.0) - 2)}
        """)
    assert verdicts["f"] != "compiled"


def test_check_and_convert_accept_jit_and_the_config_key(tmp_path):
    source = FIXTURES / "compilable-function" / "range_bound_loop.in.py"
    program = tmp_path / "prog.py"
    program.write_text(source.read_text())
    runner = CliRunner()
    checked = runner.invoke(app, ["check", str(program), "--jit", "--format", "json"])
    codes = {f["code"] for f in json.loads(checked.stdout)["findings"]}
    assert "NJ502" in codes  # main() has no call site
    out = tmp_path / "out"
    converted = runner.invoke(app, ["convert", str(program), "--out", str(out), "--jit"])
    assert converted.exit_code in (0, 1), converted.output
    assert "@functools.partial(jax.jit" in (out / "prog.py").read_text()
    assert run_main(out / "prog.py")["logistic"].shape == (9,)
    (tmp_path / "pyproject.toml").write_text("[tool.np2jax]\njit = true\n")
    assert load_config(tmp_path).jit is True
    (tmp_path / "pyproject.toml").write_text('[tool.np2jax]\njit = "yes"\n')
    with pytest.raises(Exception, match="jit must be true or false"):
        load_config(tmp_path)


@pytest.mark.parametrize("case", ["text_and_array", "several_arrays"])
def test_debug_print_prints_what_print_printed(case, capsys):
    import jax

    original = FIXTURES / "print-of-array" / f"{case}.in.py"
    run_main(original)
    expected = capsys.readouterr().out
    run_main(original.with_name(f"{case}.out.py"))
    jax.effects_barrier()
    assert capsys.readouterr().out == expected


def test_check_with_jit_does_not_import_jax():
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from np2jax.api import check_paths; "
            "from np2jax.config import Config; "
            f"run = check_paths([Path({str(FIXTURES / 'compilable-function')!r})], Config(jit=True)); "
            "assert any(p.code == 'NJ502' for p in run.problems); "
            "print(any(m == 'jax' or m.startswith('jax.') for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_suppressing_a_rewrite_the_function_needs_keeps_it_eager():
    source = (FIXTURES / "if-on-array-value" / "return_branches.in.py").read_text().replace(
        "if x.max() > 1.0:", "if x.max() > 1.0:  # np2jax: ignore[NJ505]")
    result = convert_source(source, JIT)
    assert "jax.jit" not in result.converted and "jnp.where" not in result.converted
    assert any(f.code == "NJ501" and "suppressed" in f.message for f in result.findings)
    ignored = convert_source(source.replace("  # np2jax: ignore[NJ505]", ""),
                             Config(jit=True, ignore=("NJ501",)))
    assert "jax.jit" not in ignored.converted and "jnp.where" not in ignored.converted
