"""NumPy islands (issue 17, item 4): a write np2jax leaves on NumPy still runs.

A hypothesis strategy writes small programs in which a write np2jax must refuse (a ufunc
`.at` JAX has no counterpart for, a write inside `try/except IndexError`, a write into a
parameter of a public function, a write into an attribute of another object) is reached
from the array's producer through calls, views, aliases and attributes, with conversions
around it (a write that would convert alone, reads, `a op= <JAX value>`). The converted
program must run and give NumPy's results; the refused write is reported, and its finding
says what stayed on NumPy. A few hand-written cases pin each shape's text.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from np2jax.api import convert_source
from np2jax.verify.compare import compare_values

EXAMPLES = int(os.environ.get("NP2JAX_EXAMPLES") or (2000 if os.environ.get("NP2JAX_LONG") else 60))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

WRITE_CODES = {"NJ201", "NJ202", "NJ203", "NJ204", "NJ205", "NJ206", "NJ207", "NJ209"}

HELPERS = {
    "make": "def make(n):\n    return np.arange(n) * 1.5 + 2.0\n",
    "tail": "def tail(m):\n    return m[1:]\n",
    "Box": "class Box:\n    def __init__(self, w):\n        self.w = w\n\n"
           "    def total(self):\n        return np.sum(self.w)\n",
    "poke": "def poke(v, i):\n    v[i] = 7.0\n",
}
SOURCES = ["np.zeros({n})", "np.arange({n}) * 1.0", "np.ones({n}) + 2.0", "make({n})",
           "np.linspace(0.0, 1.0, {n})", "np.full({n}, 3.0)"]
STEPS = ["same", "slice", "reshape", "asarray", "tail", "box", "transpose"]
WRITES = ["ufunc_at", "index_error", "public", "attribute"]


@st.composite
def island_programs(draw):
    """A module whose main() makes an array, reaches it through 0-3 steps (aliases, views,
    helper calls, an object's attribute) and writes it where np2jax must refuse."""
    n = draw(st.integers(5, 7))
    used = set()
    body = []
    source = draw(st.sampled_from(SOURCES)).format(n=n)
    if source.startswith("make"):
        used.add("make")
    body.append(f"    a0 = {source}")
    names = ["a0"]
    if draw(st.booleans()):
        body.append("    a0[0] = 5.0")  # converts alone; the island must undo it
    holder = None
    for k in range(draw(st.integers(0, 3))):
        step = draw(st.sampled_from(STEPS))
        x, y = names[-1], f"a{k + 1}"
        holder = None
        if step == "same":
            body.append(f"    {y} = {x}")
        elif step == "slice":
            body.append(f"    {y} = {x}[1:]")
        elif step == "reshape":
            body.append(f"    {y} = {x}.reshape(-1)")
        elif step == "transpose":
            body.append(f"    {y} = {x}.T")
        elif step == "asarray":
            body.append(f"    {y} = np.asarray({x})")
        elif step == "tail":
            used.add("tail")
            body.append(f"    {y} = tail({x})")
        else:
            used.add("Box")
            holder = f"box{k}"
            body.append(f"    {holder} = Box({x})")
            body.append(f"    {y} = {holder}.w")
        names.append(y)
    target = names[-1]
    kind = draw(st.sampled_from(WRITES if holder else WRITES[:3]))
    if kind == "ufunc_at":
        body.append(f"    np.logaddexp.at({target}, [0, 1, 1], 0.5)")
    elif kind == "index_error":
        body.append("    for i in (1, 99):")
        body.append("        try:")
        body.append(f"            {target}[i] = -1.0")
        body.append("        except IndexError:")
        body.append("            pass")
    elif kind == "public":
        used.add("poke")
        body.append(f"    poke({target}, 1)")
    else:
        body.append(f"    {holder}.w[1] = 4.0")
    if draw(st.booleans()):  # `a op= v` with a value that is JAX once converted
        body.append(f"    {names[0]} += np.mean({target})")
    results = [f'"{name}": {name}' for name in names]
    results.append(f'"sum": np.sum({names[0]})')
    if holder is not None:
        results.append(f'"total": {holder}.total()')
    body.append(f"    return {{{', '.join(results)}}}")
    header = "import numpy as np\n\n"
    if "poke" in used:
        header += '__all__ = ["poke"]\n\n'
    helpers = [HELPERS[h] for h in ("make", "tail", "Box", "poke") if h in used]
    return header + "\n\n".join([*helpers, "def main():\n" + "\n".join(body) + "\n"])


def _run(source: str):
    namespace: dict = {"__name__": "_island"}
    exec(compile(source, "<island>", "exec"), namespace)
    return namespace["main"]()


def _converted_runs_equal(source: str):
    result = convert_source(source)
    reference = _run(source)
    try:
        got = _run(result.converted)
    except Exception as exc:  # noqa: BLE001 - the point: no crash
        raise AssertionError(f"the converted program crashes: {type(exc).__name__}: {exc}\n"
                             f"--- original\n{source}\n--- converted\n{result.converted}") from None
    problem = compare_values("main()", reference, got)
    assert problem is None, f"{problem}\n--- original\n{source}\n--- converted\n{result.converted}"
    return result


@SETTINGS
@given(island_programs())
def test_refused_write_reached_through_calls_views_and_attributes_runs(source):
    result = _converted_runs_equal(source)
    writes = [f for f in result.findings if f.code in WRITE_CODES]
    assert writes, f"the write must be refused and reported:\n{source}"
    assert any("stay NumPy" in f.message or "stays NumPy" in f.message for f in writes), \
        [f.message for f in writes]
    assert all("\n" not in f.message for f in result.findings)
    assert convert_source(result.converted).converted == result.converted  # idempotent


def test_boundary_copy_of_a_fresh_result():
    """A function returning a new array: copied with np.array where the write needs it,
    and the function itself converts."""
    source = ("import numpy as np\n\n\ndef make(n):\n    return np.arange(n) * 2.0\n\n\n"
              "def main():\n    c = make(4)\n    np.logaddexp.at(c, [0, 0], 1.0)\n"
              "    return {\"c\": c}\n")
    result = _converted_runs_equal(source)
    assert "    return jnp.arange(n) * 2.0\n" in result.converted
    assert "    c = np.array(make(4))\n" in result.converted
    (finding,) = result.findings
    assert finding.message.endswith("`c` stays NumPy so that it runs (`make(4)` copied by `np.array`).")


def test_function_returning_a_view_stays_numpy_to_its_result():
    """A function returning a view of its argument cannot be copied at the call (the write
    must reach the caller's array): the caller's array stays NumPy, the function as is."""
    source = ("import numpy as np\n\n\ndef head(m):\n    return m[:2]\n\n\n"
              "def main():\n    m = np.zeros(4)\n    h = head(m)\n"
              "    np.logaddexp.at(h, [0], 1.0)\n    return {\"m\": m, \"s\": np.sum(m)}\n")
    result = _converted_runs_equal(source)
    assert "    m = np.zeros(4)\n" in result.converted
    assert "np.array(head(m))" not in result.converted
    # a read converts, JAX given a copy: it reads the array's memory when it computes,
    # possibly after the next write into it
    assert "jnp.sum(np.array(m))" in result.converted


def test_callers_of_a_written_parameter_pass_numpy_arrays():
    """A write into a parameter np2jax refuses (a public function): the arguments of its
    calls in the module stay NumPy, and the finding names the callers it cannot see."""
    source = ("import numpy as np\n\n__all__ = [\"bump\"]\n\n\ndef bump(v):\n    v[0] = 1.0\n\n\n"
              "def main():\n    x = np.zeros(3)\n    bump(x)\n    return {\"x\": x}\n")
    result = _converted_runs_equal(source)
    assert "    x = np.zeros(3)\n" in result.converted
    write = next(f for f in result.findings if f.code == "NJ201")
    assert "`x` stay NumPy" in write.message or "and `x` stay NumPy" in write.message
    assert "callers of `bump` in other modules must pass NumPy arrays" in write.message


def test_converted_write_into_the_island_is_undone():
    """`a[0] = 1.0` converts alone; once `a` must stay NumPy it stays an in-place write,
    and its finding says why."""
    source = ("import numpy as np\n\n\ndef main():\n    a = np.zeros(3)\n    a[0] = 1.0\n"
              "    b = a\n    b[1] = 2.0\n    return {\"a\": a}\n")
    result = _converted_runs_equal(source)
    assert "    a[0] = 1.0\n" in result.converted and ".at[" not in result.converted
    first = next(f for f in result.findings if f.line == 6)
    assert "the array stays on NumPy for a write np2jax leaves in place" in first.message


def test_aug_assign_operand_is_read_as_numpy():
    """`t -= <JAX value>` into a NumPy array would be JAX's `__rsub__` (a new JAX array):
    the operand is read as a NumPy array, and the alias sees the change."""
    source = ("import numpy as np\n\n\ndef main():\n    x = np.array([1.0, 2.0, 6.0])\n"
              "    t = x\n    t -= np.mean(t)\n    return {\"x\": x}\n")
    result = _converted_runs_equal(source)
    assert "    t -= np.asarray(jnp.mean(t))\n" in result.converted


def test_nothing_numpy_inside_a_compiled_function():
    """With --jit, a write the jit plan traces as a rebinding is not made an island: no
    np.array of a traced value."""
    from np2jax.config import Config

    source = ("import numpy as np\n\n\ndef accelerate(p):\n    return -p * 2.0\n\n\n"
              "def run(p0, steps):\n    p = p0 * 1.0\n    for _ in range(steps):\n"
              "        p += 0.1 * accelerate(p)\n    return p\n\n\n"
              "def main():\n    return {\"p\": run(np.ones(3), 5)}\n")
    result = convert_source(source, Config(jit=True))
    assert "np.array(" not in result.converted
    got = _run(result.converted)
    assert compare_values("main()", _run(source), got) is None


def test_a_write_into_draws_of_a_state_left_on_numpy_stays_numpy():
    """`# np2jax: ignore` on a random state keeps its draws NumPy arrays: a write into one
    (`self.vel[hit] *= -1`) must stay a NumPy write, not become `.at[]` on a NumPy array."""
    source = (
        "import numpy as np\n\n\nclass Particles:\n    def __init__(self, n):\n"
        "        rng = np.random.default_rng(0)  # np2jax: ignore\n"
        "        self.pos = rng.uniform(0, 1, size=(n, 2))\n"
        "        self.vel = rng.normal(0, 0.1, size=(n, 2))\n\n"
        "    def step(self):\n        self.pos += self.vel\n"
        "        hit = (self.pos < 0) | (self.pos > 1)\n        self.vel[hit] *= -1\n\n\n"
        "def main():\n    p = Particles(5)\n    for _ in range(10):\n        p.step()\n"
        "    return {'pos': p.pos, 'vel': p.vel}\n")
    converted = convert_source(source).converted
    assert ".at[" not in converted
    reference, namespace = {}, {}
    exec(source, reference)
    exec(compile(converted, "<converted>", "exec"), namespace)
    assert compare_values("main()", reference["main"](), namespace["main"]()) is None
