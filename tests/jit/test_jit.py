"""--jit: which functions get jax.jit, with which static arguments, and why others do not."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

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


def test_each_rewrite_kind_is_reported_by_one_rule():
    """np2jax.jit tags its rewrites with a RewriteKind and knows no rule code; the rules
    spell the kinds' values (a rule module cannot import np2jax.jit): each value one rule."""
    from np2jax.jit import RewriteKind
    from np2jax.rules._jit import JitRule
    from np2jax.rules.base import all_rules

    declared = [(kind, code) for code, rule in all_rules().items() if issubclass(rule, JitRule)
                for kind in rule.kinds]
    assert sorted(kind for kind, _ in declared) == sorted(kind.value for kind in RewriteKind), \
        declared


def test_jit_modules_import_only_the_layers_below_them():
    """np2jax.jit's docstring lists its modules bottom up: each imports (at its top, never
    inside a function) only modules listed before it, and nothing of np2jax above the
    analysis (rules, pipeline, ...)."""
    import ast
    import re

    import np2jax.jit as jit

    package = Path(jit.__file__).parent
    order = re.findall(r"^    (\w+) ", jit.__doc__, flags=re.MULTILINE)
    assert sorted(order) == sorted(p.stem for p in package.glob("*.py") if p.stem != "__init__")
    allowed = ("np2jax.syntax", "np2jax.analysis", "np2jax.catalog", "np2jax.config")
    for index, name in enumerate(order):
        tree = ast.parse((package / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            assert node.col_offset == 0, f"np2jax/jit/{name}.py imports inside a function"
            for module in ([node.module] if isinstance(node, ast.ImportFrom)
                           else [a.name for a in node.names]):
                if module.startswith("np2jax.jit."):
                    assert module.split(".")[2] in order[:index], f"{name} imports {module}"
                elif module.startswith("np2jax"):
                    assert module.startswith(allowed), f"{name} imports {module}"


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
        # a function under its own decorators: the jax.jit function they wrap (@wraps)
        functions = {name: value if hasattr(value, "lower") else getattr(value, "__wrapped__", value)
                     for name, value in vars(module).items() if callable(value)}
        jitted = [name for name, value in functions.items() if hasattr(value, "lower")]
        assert jitted, "no function of the converted fixture is compiled"
        assert any(functions[name]._cache_size() >= 1 for name in jitted)
    finally:
        sys.modules.pop(spec.name, None)


@pytest.mark.parametrize("source, function, reason", [
    ("""
     import numpy as np
     def f(x, n):
         return x * np.ones(n)
     def g(fn, x):
         return fn(x, 2)
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
    assert "NJ502" in codes  # main() passes a list comprehension to np.array
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


def test_a_function_without_parameters_needs_no_call_site():
    """main() is called from outside: with no parameter there is nothing to infer, so it is
    compiled when it returns arrays only; one with parameters and no call is judged on its
    own body (`n` is a shape: static)."""
    verdicts = _verdicts("""
        import numpy as np
        def main():
            x = np.linspace(0.0, 1.0, 5)
            return {"x": x * 2, "pair": (x.sum(), x.max())}
        def entry(n):
            return np.ones(n)
        """)
    assert verdicts["main"] == "compiled"
    assert verdicts["entry"] == "compiled"


@pytest.mark.parametrize("returned", ['{"n": 3.0, "x": x}', "total", '{"total": total}'])
def test_a_function_without_parameters_returning_python_numbers_is_refused(returned):
    """Uncalled here, its caller is outside: a Python number must not come back as an array."""
    verdicts = _verdicts(f"""
        import numpy as np
        def main():
            x = np.ones(3)
            total = 0.0
            for _ in range(3):
                total = total + x.sum()
            return {returned}
        """)
    assert verdicts["main"] != "compiled"


def _loop_verdicts(source: str, config: Config = JIT) -> list[str]:
    result = convert_source(textwrap.dedent(source), config)
    return [f.message for f in result.changes + result.findings if f.code == "NJ506"]


def test_a_loop_carrying_arrays_runs_as_one_compiled_fori_loop():
    """The converted loop is a real XLA loop (a `scan` or `while` in the jaxpr), not unrolled, and
    computes what the NumPy loop computed."""
    import importlib.util

    import jax
    import numpy as np

    case = FIXTURES / "loop-carrying-state" / "two_carried_arrays.out.py"
    assert "jax.lax.fori_loop" in case.read_text()
    spec = importlib.util.spec_from_file_location("_fori_case", case)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.linspace(0.0, 1.0, 60).reshape(20, 3)
    jaxpr = str(jax.make_jaxpr(module.running.__wrapped__, static_argnums=1)(x, 20))
    assert ("scan" in jaxpr or "while" in jaxpr) and jaxpr.count("dynamic_slice") < 10
    expected = run_main(FIXTURES / "loop-carrying-state" / "two_carried_arrays.in.py")
    np.testing.assert_allclose(module.main()["out"], expected["out"], rtol=1e-5)


def test_a_literal_count_beyond_the_unroll_limit_compiles_as_a_fori_loop():
    source = """
        import numpy as np
        def main():
            u = np.zeros(8)
            for _ in range(20000):
                u[1:] += 1e-4
            return {"u": u}
        """
    result = convert_source(textwrap.dedent(source), JIT)
    assert "@jax.jit" in result.converted and "jax.lax.fori_loop(0, 20000," in result.converted
    refused = convert_source(textwrap.dedent(source), Config(jit=True, ignore=("NJ506",)))
    assert "jax.jit" not in refused.converted  # unrolled 20000 times: left eager


@pytest.mark.parametrize("body, reason", [
    (["u += 1.0", "if i > 3:", "    if i > 5:", "        continue"],
     "other than one `if <test>: break`"),
    (["u += 1.0", "if i > 3:", "    return u"], "`return` inside it"),
    (["w = u * 2", "u += w"], None),  # w: a temporary of each iteration
    (["u += i", "last = u.sum()"], "first bound inside it"),
    (["u = u[:2]"], "is not elementwise in `u`"),
    (["u = u @ np.eye(4)"], "is not elementwise in `u`"),
    (["u = np.sin(u) * 0.5"], None),
    (["u[:i] = 0.0"], "counter `i` traced"),
])
def test_loop_refusals_name_the_reason(body, reason):
    tail = "return u, last" if "last = u.sum()" in body else "return u"
    body = "\n                ".join(body)
    messages = _loop_verdicts(f"""
        import numpy as np
        def f(n):
            u = np.ones(4)
            for i in range(n):
                {body}
            {tail}
        def main():
            return {{"u": f(30)}}
        """)
    assert len(messages) == 1
    if reason is None:
        assert "becomes `jax.lax.fori_loop`, carrying `u`" in messages[0]
    else:
        assert "stays a Python loop" in messages[0] and reason in messages[0]


def test_nested_and_stepped_loops():
    messages = _loop_verdicts("""
        import numpy as np
        def f(n):
            u = np.ones(4)
            for i in range(0, n, 2):
                u += 1.0
            for j in range(n):
                for k in range(n):
                    u *= 0.5
            return u
        def main():
            return {"u": f(30)}
        """)
    assert any("has a step" in m for m in messages)
    assert any("`for j in range(n)`" in m and "fori_loop`, carrying `u`" in m for m in messages)
    assert not any("for k" in m for m in messages)  # nested: stays Python, no finding


def test_a_widening_update_keeps_the_python_loop_in_64_bit_mode():
    """float32 `u += x` of float64 `x`: NumPy's `u` stays float32, JAX's `u + x` is float64,
    which fori_loop refuses; JAX's 32-bit defaults never widen."""
    source = """
        import numpy as np
        def f(x, n):
            u = np.zeros(3, dtype=np.float32)
            for _ in range(n):
                u += x
            return u
        def main():
            return {"u": f(np.ones(3), 30)}
        """
    assert "64-bit types an update `x += y`" in _loop_verdicts(source)[0]
    assert "fori_loop" in _loop_verdicts(source, Config(jit=True, x64=False))[0]


def test_an_update_whose_dtypes_keep_the_carried_one_compiles_in_64_bit_mode():
    """float64 += float64 (np.zeros and np.ones, followed through the call): no widening."""
    source = """
        import numpy as np
        def f(x, n):
            u = np.zeros(3)
            for _ in range(n):
                u += x
            return u
        def main():
            return {"u": f(np.ones(3), 30)}
        """
    assert "fori_loop" in _loop_verdicts(source)[0]


def test_a_while_on_an_array_test_becomes_a_while_loop_and_agrees():
    import importlib.util

    import jax
    import numpy as np

    case = FIXTURES / "array-while-loop" / "halve_until_small.out.py"
    spec = importlib.util.spec_from_file_location("_while_case", case)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    jaxpr = str(jax.make_jaxpr(module.shrink.__wrapped__, static_argnums=1)(np.arange(6.0), 1.0))
    assert "while" in jaxpr
    expected = run_main(FIXTURES / "array-while-loop" / "halve_until_small.in.py")
    for key, value in module.main().items():
        np.testing.assert_allclose(value, expected[key], rtol=1e-6)


@pytest.mark.parametrize("loop, reason", [
    ("while y.sum() > 1.0:\n                y = y * 0.5", "rebinds the carried `y`"),
    ("while y.sum() > 1.0:\n                y *= 0.5\n                z = y.sum()", "`z` is first bound inside it"),
    ("while err > 1.0:\n                y *= 0.5", "not provably one value"),
])
def test_while_refusals_keep_the_function_eager_with_the_reason(loop, reason):
    tail = "return y, z" if "z = " in loop else "return y"
    verdicts = _verdicts(f"""
        import numpy as np
        def f(x):
            y = x * 1.0
            err = y.sum()
            {loop}
            {tail}
        def main():
            return {{"y": f(np.arange(4.0))}}
        """)
    assert verdicts["f"] != "compiled" and reason in verdicts["f"]


def test_a_widening_while_update_keeps_the_function_eager_in_64_bit_mode():
    source = """
        import numpy as np
        def f(x, g):
            y = x.astype(np.float32)
            while y.sum() > 1.0:
                y -= g
            return y
        def main():
            return {"y": f(np.arange(4.0), np.ones(4))}
        """
    assert "jax.lax.while_loop" in convert_source(textwrap.dedent(source), Config(jit=True, x64=False)).converted
    widened = convert_source(textwrap.dedent(source), JIT)
    assert "while_loop" not in widened.converted and "@jax.jit\ndef f" not in widened.converted
    same = convert_source(textwrap.dedent(source).replace("x.astype(np.float32)", "x * 1.0"), JIT)
    assert "jax.lax.while_loop" in same.converted  # float64 -= float64 keeps the dtype


def _static_of(source: str) -> dict:
    """function name -> its static_argnames (None: not compiled), with --jit."""
    converted = convert_source(textwrap.dedent(source), JIT).converted
    found, decorator = {}, None
    for line in converted.splitlines():
        if line.startswith("@"):
            decorator = line
        elif line.startswith("def "):
            name = line[4:line.index("(")]
            if decorator is None:
                found[name] = None
            elif "static_argnames" in decorator:
                found[name] = tuple(re.findall(r'"(\w+)"', decorator))
            else:
                found[name] = ()
            decorator = None
    return found


def test_own_body_static_arguments_are_the_parameters_used_whole():
    """No call in the file: a parameter is static where the body uses it whole as a shape,
    a bound, an axis or a dtype; one used only through len(), a subscript or a method is
    data (traced), and an index alone does not say int or array (the function stays eager,
    the parameter named)."""
    source = """
        import numpy as np

        def lengths(x):
            return np.zeros(len(x)) + np.asarray(x)

        def first(x):
            v = np.asarray(x)
            return v * v[0]

        def window(x, n, axis=0):
            return np.sum(np.asarray(x)[:n], axis=axis)

        def typed(x, dtype=None):
            return np.asarray(x, dtype=dtype) * 2

        def pick(x, i):
            return np.asarray(x)[i] * 2.0
        """
    static = _static_of(source)
    assert static["lengths"] == ()
    assert static["first"] == ()
    assert static["window"] == ("n", "axis")
    assert static["typed"] == ("dtype",)
    assert static["pick"] is None
    assert "whether `i` can be static depends on its callers" in _verdicts(source)["pick"]
