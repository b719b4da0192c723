"""--jit: `if`/`elif` on 0-d array values -> jax.lax.cond (NJ508) and jax.lax.switch (NJ509),
or the function left eager with the reason."""

from __future__ import annotations

import os
import textwrap

import numpy as np
import pytest

from helpers import FIXTURES, run_main
from np2jax.api import convert_source
from np2jax.config import Config
from np2jax.verify.compare import compare_values

JIT = Config(jit=True)


def _convert(source: str):
    return convert_source(textwrap.dedent(source), JIT)


def _codes(result) -> list:
    return sorted(f.code for f in result.changes + result.findings)


def _reason(result, function: str) -> str | None:
    for finding in result.findings:
        if finding.code == "NJ502" and finding.message.split("`")[1] == function:
            return finding.message
    return None


def _both_ways(tmp_path, source: str):
    """main() of the NumPy source and of its conversion."""
    source = textwrap.dedent(source)
    original, converted = tmp_path / "original.py", tmp_path / "converted.py"
    original.write_text(source)
    converted.write_text(convert_source(source, JIT).converted)
    return run_main(original), run_main(converted), converted.read_text()


SWITCH = """
import numpy as np

def by_count(x, t):
    k = (x > t).sum()
    if k == 1:
        y = x * 2.0
        y = y - 1.0
    elif k == 0:
        y = x / 4.0
    elif k == 2:
        y = x + 0.5
    else:
        y = x * -1.0
    return y

def main():
    x = np.array([0.1, 0.4, 0.7, 0.9])
    return {"k0": by_count(x, 1.0), "k1": by_count(x, 0.8), "k2": by_count(x, 0.5),
            "k3": by_count(x, 0.2), "k4": by_count(x, 0.0)}
"""


def test_switch_takes_the_branch_python_takes_for_every_index(tmp_path):
    """Counts 0, 1, 2 pick their branch whatever the order of the tests; 3 and 4 (beyond
    the tests, which lax.switch would clamp to the last branch) take the `else`."""
    expected, got, text = _both_ways(tmp_path, SWITCH)
    assert "jax.lax.switch(" in text and "if k ==" not in text
    assert compare_values("main()", expected, got) is None
    sums = {key: float(np.asarray(value).sum()) for key, value in got.items()}
    assert len({sums["k0"], sums["k1"], sums["k2"], sums["k3"]}) == 4
    assert sums["k3"] == sums["k4"] == pytest.approx(-2.1)  # the `else`: -x


def test_the_converted_branches_are_one_compiled_cond(tmp_path):
    """The rewritten function traces to a single `cond` and agrees with NumPy on both sides
    of the test, for float and integer input."""
    import importlib.util

    source = textwrap.dedent("""
        import numpy as np

        def split_step(x, y):
            if x.sum() > 0:
                y = x * 2.0
                z = y + 1.0
            else:
                y = x / 3.0
                z = x - 1.0
            return y * z

        def main():
            return {"pos": split_step(np.arange(4.0), np.ones(4)),
                    "neg": split_step(-np.arange(4.0), np.ones(4)),
                    "int": split_step(np.arange(3), np.arange(3))}
    """)
    expected, got, text = _both_ways(tmp_path, source)
    assert compare_values("main()", expected, got) is None
    spec = importlib.util.spec_from_file_location("_cond_case", tmp_path / "converted.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import jax

    jaxpr = str(jax.make_jaxpr(module.split_step)(np.arange(4.0), np.ones(4)))
    assert jaxpr.count("cond[") == 1


@pytest.mark.parametrize("body, reason", [
    ("""
     if x.sum() > 0:
         y = x[:2]
         y = y * 2.0
     else:
         y = x * 2.0
     return y
     """, "may leave `y` with different shapes or dtypes"),
    ("""
     if x.sum() > 0:
         y = x * 0.5
         y = y + 1.0
     else:
         y = x
     return y
     """, "may leave `y` with different shapes or dtypes"),
    ("""
     if x.sum() > 0:
         print("positive")
         y = x * 2.0
     else:
         y = x * 0.5
     return y
     """, "a branch prints"),
    ("""
     if x.sum() > 0:
         raise ValueError("positive")
     else:
         y = x * 0.5
         y = y * 2.0
     return y
     """, "a branch raises an exception"),
    ("""
     y = x * 1.0
     for _ in range(3):
         if y.sum() > 0:
             y = y * 0.5
             break
     return y
     """, "leaves the enclosing loop (`break`)"),
    ("""
     if x.max() > 2.0:
         y = x / 2.0
         return y * 1.0
     else:
         x = x * 1.0
     return x
     """, "only some branches end in `return`"),
    ("""
     if x.max() > 2.0:
         y = x / 2.0
         return y * 1.0
     return x / 1.0
     """, "it returns and has no `else`"),
    ("""
     scale = 1.0
     if x.sum() > 0:
         scale = 2.0
         y = x * 2.0
     else:
         y = x * 3.0
     return y * scale
     """, "rebinds `scale`, a Python value"),
    ("""
     if x.sum() > 0:
         y = x * 2.0
         z = y * 2.0
     else:
         y = x * 3.0
     return y + z
     """, "`z` is read after it but bound in only some branches"),
    ("""
     if x[0] > 0:
         y = x * 2.0
         y = y * 2.0
     else:
         y = x * 3.0
     return y
     """, "the test `x[0] > 0` is not provably one value"),
    ("""
     if x.sum() > 0:
         for _ in range(2):
             x = x * 2.0
         y = x * 1.0
     else:
         y = x * 2.0
     return y
     """, "may leave `y` with different shapes or dtypes"),
    # `t` is bound before the `if` by both arms of a Python `if`: not certainly, so it
    # cannot be passed in, and the branch function would read an unbound local
    ("""
     if flag:
         t = x * 1.0
     else:
         t = x * 2.0
     if x.sum() > 0:
         t = t * 2.0
         y = t + 1.0
     else:
         y = x * 3.0
     return y
     """, "reads `t` before assigning it"),
    ("""
     if flag:
         y = x * 2.0
     elif x.sum() > 0:
         y = x * 3.0
         y = y + 1.0
     else:
         y = x * 4.0
     return y
     """, "`elif` of a test on a Python value"),
])
def test_refused_branches_keep_the_function_eager_with_the_reason(body, reason):
    """`flag`, a Python bool at every call, is a static argument."""
    source = "import numpy as np\n\ndef f(x, flag):\n" \
        + textwrap.indent(textwrap.dedent(body), "    ") + "\ndef main():\n" \
        + "    return {'a': f(np.arange(4.0), True), 'b': f(-np.arange(4.0), False)}\n"
    result = _convert(source)
    message = _reason(result, "f")
    assert message is not None and reason in message, message
    assert "jax.lax" not in result.converted
    assert not {"NJ508", "NJ509"} & set(_codes(result))


def test_a_static_index_chain_stays_python():
    result = _convert("""
        import numpy as np
        def mode(x, k):
            if k == 0:
                y = x * 2.0
            elif k == 1:
                y = x / 2.0
            else:
                y = x[:1]
            return y
        def main():
            return {"a": mode(np.arange(3.0), 0), "c": mode(np.arange(3.0), 2)}
    """)
    assert "NJ501" in _codes(result) and "jax.lax" not in result.converted
    assert 'static_argnames=("k",)' in result.converted


def test_generated_names_do_not_shadow_the_functions_own():
    result = _convert("""
        import numpy as np
        def f(x):
            if_true = x * 1.0
            if x.sum() > 0:
                y = if_true * 2.0
                y = y + 1.0
            else:
                y = if_true / 2.0
            return y
        def main():
            return {"a": f(np.arange(3.0))}
    """)
    assert "def if_true_2(" in result.converted
    assert "jax.lax.cond(x.sum() > 0, if_true_2, if_false, y)" not in result.converted
    assert "if_true_2, if_false)" in result.converted


def test_suppressing_the_cond_keeps_the_function_eager():
    source = """
        import numpy as np
        def f(x):
            if x.sum() > 0:  # np2jax: ignore[NJ508]
                y = x * 2.0
                y = y + 1.0
            else:
                y = x / 2.0
            return y
        def main():
            return {"a": f(np.arange(3.0))}
    """
    result = _convert(source)
    assert "jax.lax.cond" not in result.converted
    assert "def f(x):\n    if x.sum() > 0:" in result.converted  # not decorated


def test_without_jit_nothing_becomes_cond():
    result = convert_source(SWITCH)
    assert "jax.lax" not in result.converted
    assert not {"NJ508", "NJ509"} & set(_codes(result))


# --- generated branches: converted only when the results agree --------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

INPUTS = ["np.arange(5)", "np.arange(5.0)", "np.linspace(-1.0, 2.0, 4)", "np.arange(4.0) - 3.0"]
TESTS = ["x.sum() > 3", "x.max() > 2.0", "x.mean() < 0.5", "x.min() < 0", "x.any()"]
# float expressions of x (provably alike), and (drawn one time in six) statements that
# change the shape or the dtype, or bind names only in some branches
ALIKE = ["y = x * 2.0", "y = y + 1.0", "y = x / 3.0", "y = np.exp(y)", "y = y / y.sum()",
         "y = -(y * 1.0)", "y = x + 0.0", "y, z = x * 2.0, x / 2.0"]
UNALIKE = ["x = x / 2.0", "z = y - 1.0", "y = x", "y = x[:2]", "y = x * 2", "y, z = z, y"]


@st.composite
def branchy_programs(draw):
    """A function with an `if`, `if/else`, `if/elif/else` or index chain on array values,
    whose branches draw from statements that keep or change shapes and dtypes."""
    lines = []
    if draw(st.booleans()):
        lines.append("x = x * 1.0")
    lines.append("y = x * 1.0" if draw(st.booleans()) else "y = x")
    form = draw(st.sampled_from(["if", "if-else", "elif", "switch", "switch"]))
    if form == "switch":
        lines.append(draw(st.sampled_from(["k = x.argmax()", "k = (x > 1.0).sum()"])))
        count = draw(st.integers(2, 3))
        tests = [f"k == {i}" for i in draw(st.permutations(range(count)))]
    else:
        tests = [draw(st.sampled_from(TESTS)) for _ in range(2 if form == "elif" else 1)]
    blocks = len(tests) + (form != "if")
    for index in range(blocks):
        keyword = "if" if index == 0 else ("elif" if index < len(tests) else "else")
        lines.append(f"{keyword} {tests[index]}:" if keyword != "else" else "else:")
        for _ in range(draw(st.integers(1, 3))):
            pool = UNALIKE if draw(st.integers(0, 5)) == 5 else ALIKE
            lines.append(f"    {draw(st.sampled_from(pool))}")
    lines.append("return y")
    body = textwrap.indent("\n".join(lines), "    ")
    data = draw(st.lists(st.sampled_from(INPUTS), min_size=1, max_size=3, unique=True))
    calls = ", ".join(f'"r{i}": f({value})' for i, value in enumerate(data))
    return f"import numpy as np\n\n\ndef f(x):\n{body}\n\n\ndef main():\n    return {{{calls}}}\n"


@settings(max_examples=int(os.environ.get("NP2JAX_EXAMPLES") or 60), deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(branchy_programs())
def test_generated_branches_convert_only_when_the_results_agree(tmp_path_factory, source):
    """Every lax.cond / lax.switch np2jax writes computes what NumPy computed; every other
    array `if` keeps `f` eager with a reason (never a silent difference)."""
    folder = tmp_path_factory.mktemp("branches")
    original = folder / "original.py"
    original.write_text(source)
    try:
        expected = run_main(original)
    except (NameError, UnboundLocalError, IndexError, ValueError, TypeError):
        return  # the NumPy program itself fails (a name bound in one branch only, ...)
    result = convert_source(source, JIT)
    codes = _codes(result)
    if not {"NJ508", "NJ509"} & set(codes):
        assert "jax.lax" not in result.converted
        assert _reason(result, "f") is not None or "NJ505" in codes or "NJ501" not in codes, source
        return
    converted = folder / "converted.py"
    converted.write_text(result.converted)
    assert compare_values("main()", expected, run_main(converted)) is None, source


CONVERTED = sorted(p for folder in ("if-statement-on-array-value", "if-elif-chain-on-index")
                   for p in (FIXTURES / folder).glob("*.out.py") if "jax.lax." in p.read_text())


@pytest.mark.parametrize("case", CONVERTED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_branches_run_inside_compiled_functions(case):
    """Each converted fixture's lax.cond / lax.switch sits in a jax.jit function, and main()
    (compiled too, tracing it inline) ran compiled."""
    import importlib.util
    import re
    import sys

    text = case.read_text()
    first = re.search(r"^ +(return |[\w, ]+ = )jax\.lax\.", text, re.MULTILINE).start()
    holder = re.findall(r"^def (\w+)\(", text[:first], re.MULTILINE)[-1]
    spec = importlib.util.spec_from_file_location(f"_cond_fixture_{case.stem}", case)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        module.main()
        assert hasattr(getattr(module, holder), "lower"), f"{holder} is not compiled"
        assert module.main._cache_size() >= 1
    finally:
        sys.modules.pop(spec.name, None)
