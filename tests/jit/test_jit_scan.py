"""--jit: loops collecting a history in a list become lax.scan (NJ510), or say why not."""

from __future__ import annotations

import textwrap

import libcst as cst
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from np2jax.api import convert_source
from np2jax.config import Config
from np2jax.jit.loop_rewrites import recorded_slice as _slice
from np2jax.jit.scan import History

JIT = Config(jit=True)


def _convert(source: str):
    result = convert_source(textwrap.dedent(source), JIT)
    messages = {f.code: [] for f in result.findings + result.changes}
    for finding in result.findings + result.changes:
        messages[finding.code].append(finding.message)
    return result, messages


HEAT = """
import numpy as np

EVERY = 5

def main():
    u = np.zeros(16)
    u[0] = 1.0
    history = []
    for step in range(40):
        u[1:-1] += 0.25 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        if step % EVERY == 0:
            history.append(u.sum())
    return {"u": u, "history": np.array(history)}
"""


def test_a_history_loop_becomes_scan_and_the_function_is_compiled():
    result, messages = _convert(HEAT)
    assert "NJ510" in messages and "becomes `jax.lax.scan`, carrying `u`" in messages["NJ510"][0]
    assert any("`main` is compiled" in m for m in messages["NJ501"])
    assert "jax.lax.scan(loop_body, u, jnp.arange(40))" in result.converted
    assert "history = history[::abs(EVERY)]" in result.converted
    assert "jax.lax.cond(step % EVERY == 0" in result.converted
    assert ".append(" not in result.converted


def test_the_converted_history_loop_gives_numpys_results(tmp_path):
    from helpers import run_main
    from np2jax.verify.compare import compare_values

    source = tmp_path / "heat.py"
    source.write_text(textwrap.dedent(HEAT))
    converted = tmp_path / "heat_jax.py"
    converted.write_text(_convert(HEAT)[0].converted)
    reference, got = run_main(source), run_main(converted)
    assert got["history"].shape == (8,)
    assert compare_values("main()", reference, got) is None


def _function(body: str) -> str:
    return "import numpy as np\n\ndef simulate(n):\n    u = np.ones(3)\n" + textwrap.indent(
        textwrap.dedent(body), "    ") + "\ndef main():\n    return {'r': simulate(30)}\n"


@pytest.mark.parametrize("body, reason", [
    ("""
     history = []
     for _ in range(n):
         u *= 0.5
         history.append(u)
     return np.array(history)
     """, "is also reachable through"),
    ("""
     history = []
     for _ in range(n):
         u *= 0.5
         history.append(u.T)
     return np.array(history)
     """, "is also reachable through"),
    ("""
     history = [u]
     for _ in range(n):
         u *= 0.5
         history.append(u.sum() * np.ones(3))
     return np.array(history)
     """, "is also reachable through"),
    ("""
     history = []
     for _ in range(n):
         u *= 0.5
         history.append(u.sum())
     return np.array([h * 2 for h in history])
     """, "used other than as a whole"),
    ("""
     history = []
     for _ in range(n):
         u *= 0.5
         history.append(u.sum())
     return history[-1] * u
     """, "used other than as a whole"),
    ("""
     history = []
     for _ in range(n):
         u *= 0.5
         history.append(u.sum())
     history.append(u.sum())
     return np.array(history)
     """, "used other than as a whole"),
    ("""
     history = []
     for step in range(n):
         u *= 0.5
         if step > 3:
             history.append(u.sum())
     return np.array(history)
     """, "only under `if step > 3:`"),
    ("""
     history = []
     for step in range(n):
         u *= 0.5
         if step % 0 == 0:
             history.append(u.sum())
     return np.array(history)
     """, "modulo by 0"),
    ("""
     history = []
     for _ in range(n):
         u *= 0.5
         history.append(u.sum())
         history.append(u.max())
     return np.array(history)
     """, "more than once"),
    ("""
     history = []
     for _ in range(n):
         for _ in range(2):
             u *= 0.5
             history.append(u.sum())
     return np.array(history)
     """, "inside another statement"),
    ("""
     history = []
     if n > 2:
         for _ in range(n):
             u *= 0.5
             history.append(u.sum())
     return np.array(history)
     """, "nested in another statement"),
    ("""
     history = [u.sum()]
     history = history * 2
     for _ in range(n):
         u *= 0.5
         history.append(u.sum())
     return np.array(history)
     """, "not made by"),
])
def test_lists_that_are_not_histories_keep_the_function_eager_with_the_reason(body, reason):
    # `u *= 0.5` of an array a list also holds: the update NumPy makes in place reaches the
    # list, which the analysis says (NJ203's reason) before the scan planner is asked
    result, messages = _convert(_function(body))
    refusal = [m for m in messages.get("NJ502", []) if "`simulate`" in m]
    assert refusal and reason in refusal[0], messages
    assert "lax.scan" not in result.converted


@pytest.mark.parametrize("body, reason", [
    ("""
     history = []
     for _ in range(n):
         u = u @ np.eye(3)
         history.append(u.sum())
     return np.array(history)
     """, "not elementwise"),
    ("""
     history = []
     for step in range(n):
         u *= 0.5
         if step == 20:
             break
         history.append(u.sum())
     return np.array(history)
     """, "`break`"),
    ("""
     history = []
     for step in range(0, n, 2):
         u *= 0.5
         history.append(u.sum())
     return np.array(history)
     """, "step"),
])
def test_history_loops_refused_for_the_loops_reasons_stay_python_in_a_compiled_function(
        body, reason):
    result, messages = _convert(_function(body))
    assert any("`simulate` is compiled" in m for m in messages.get("NJ501", [])), messages
    assert reason in messages["NJ510"][0] and "stays a Python loop" in messages["NJ510"][0]
    assert "lax.scan" not in result.converted and ".append(" in result.converted


def test_small_literal_counts_stay_python_loops_without_a_finding():
    result, messages = _convert(_function("""
        history = []
        for _ in range(4):
            u *= 0.5
            history.append(u.sum())
        return np.array(history)
        """))
    assert "NJ510" not in messages and any("`simulate` is compiled" in m
                                           for m in messages["NJ501"])
    assert ".append(" in result.converted


def test_without_jit_a_history_loop_is_left_alone():
    result = convert_source(_function("""
        history = []
        for _ in range(n):
            u *= 0.5
            history.append(u.sum())
        return np.array(history)
        """))
    assert "lax.scan" not in result.converted
    assert not [f for f in result.findings + result.changes if f.code == "NJ510"]


def test_a_carried_value_rebound_to_another_expression_than_its_initializer_is_peeled():
    """`acc = f(pos)` before and `acc = g(pos)` in the loop: not the same expression, so the
    NJ506 rules for rebinding apply (here: not elementwise, refused)."""
    _, messages = _convert("""
        import numpy as np
        def f(pos):
            return pos * 2.0
        def leapfrog(p0, steps):
            pos = p0 * 1.0
            acc = f(pos)
            for _ in range(steps):
                pos += 0.1 * acc
                acc = f(pos[::-1])
            return pos
        def main():
            return {"pos": leapfrog(np.ones(3), 40)}
        """)
    assert "not elementwise" in messages["NJ506"][0]


def _node(value):
    return None if value is None else cst.parse_expression(str(value))


@settings(max_examples=300, deadline=None)
@given(a=st.integers(-6, 6), count=st.integers(0, 40), c=st.integers(-9, 9) | st.none(),
       k=st.integers(-7, 7).filter(bool), literal=st.booleans())
def test_the_slice_keeps_exactly_the_iterations_the_recording_test_selects(a, count, c, k,
                                                                           literal):
    """`[first::stride]` of the per-iteration outputs of `range(a, a + count)` holds the
    iterations where `(step + c) % k == 0`, for literal and named k, c and start."""
    names = {"A": a, "C": c, "K": k}
    history = History("h", None, None, 0, None, step=_node(k if literal else "K"),
                      offset=_node(None if c is None else (c if literal else "C")))
    start = _node(a if literal else "A") if a else None
    steps = list(range(a, a + count))
    kept = eval(f"steps[{_slice(history, start)}]", {"steps": steps, "abs": abs, **names})
    assert kept == [s for s in steps if (s + (c or 0)) % k == 0]


BREAK = """
import numpy as np

def settle(x0, n, tol):
    x = x0 * 1.0
    for _ in range(n):
        x[1:] += 0.5 * (x[:-1] - x[1:])
        if np.abs(x[1:] - x[:-1]).max() < tol:
            break
        x *= 0.99
    return x

def main():
    return {"early": settle(np.linspace(0.0, 1.0, 6), 500, 1e-3),
            "late": settle(np.linspace(0.0, 1.0, 6), 25, 1e-6)}
"""


def test_break_on_an_array_test_becomes_a_while_loop_that_stops_where_numpy_stops(tmp_path):
    from helpers import run_main
    from np2jax.verify.compare import compare_values

    result, messages = _convert(BREAK)
    assert "becomes `jax.lax.while_loop`" in messages["NJ506"][0]
    assert "done = jnp.abs(x[1:] - x[:-1]).max() < tol" in result.converted
    assert "break" not in result.converted
    (tmp_path / "a.py").write_text(textwrap.dedent(BREAK))
    (tmp_path / "b.py").write_text(result.converted)
    reference, got = run_main(tmp_path / "a.py"), run_main(tmp_path / "b.py")
    assert compare_values("main()", reference, got) is None
    # the early run stopped before its 500 steps: its values differ from the late one's
    assert not np.allclose(reference["early"], reference["late"])


@pytest.mark.parametrize("loop, reason", [
    ("""
     for i in range(n):
         if i > 3:
             total += x
         else:
             continue
     """, "other than one `if <test>: break`"),
    ("""
     for i in range(n):
         if i == 3:
             continue
         total += x
         if i == 30:
             break
     """, "other than one `if <test>: break`"),
    ("""
     for i in range(n):
         total = total * 0.5 + x
         if i == 30:
             break
     """, "has a `break`"),
    ("""
     for i in range(n):
         total += x
         if i == 30:
             return total
     """, "`return` inside it"),
])
def test_other_exits_leave_a_python_loop_with_the_reason(loop, reason):
    source = ("import numpy as np\n\ndef accumulate(x, n):\n    total = np.zeros(3)\n"
              + textwrap.indent(textwrap.dedent(loop), "    ")
              + "    return total\n\ndef main():\n    return {'t': accumulate(np.arange(3.0), 50)}\n")
    result, messages = _convert(source)
    assert reason in messages["NJ506"][0] and "stays a Python loop" in messages["NJ506"][0]
    assert "while_loop" not in result.converted and "fori_loop" not in result.converted


def test_a_break_in_a_nested_python_loop_is_that_loops_own():
    _, messages = _convert("""
        import numpy as np
        def f(x, n):
            total = np.zeros(3)
            for _ in range(n):
                for j in range(3):
                    if j == 2:
                        break
                    total += x
            return total
        def main():
            return {"t": f(np.arange(3.0), 40)}
        """)
    assert "becomes `jax.lax.fori_loop`" in messages["NJ506"][0]
