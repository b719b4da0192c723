"""Boolean masks: `x[m] = v` becomes jnp.where only when m provably has x's shape
(np2jax.shapes), and under --jit the selections whose use does not depend on their size
(reductions, counts that are divided or compared) compile; the others stay eager, with the
reason. Every case is run both ways (more cases: fixtures/eager-mask-update, mask-reduction)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from helpers import FIXTURES, run_main
from np2jax.api import convert_source
from np2jax.config import Config
from np2jax.verify.compare import Tolerance, compare_values

JIT = Config(jit=True)


def _converted_and_run(tmp_path, source: str, config: Config = Config()):
    """The converted text, after checking that NumPy's and JAX's main() give equal results."""
    source = textwrap.dedent(source)
    result = convert_source(source, config)
    original, converted = tmp_path / "original.py", tmp_path / "converted.py"
    original.write_text(source)
    converted.write_text(result.converted)
    assert compare_values("main()", run_main(original), run_main(converted)) is None
    return result


WHERE = {
    "mask of the array itself": """
        x = np.linspace(-1.0, 1.0, 7)
        x[x < 0] = 0.0
        return x
    """,
    "mask from zeros_like and in-place updates in a loop": """
        board = (np.arange(25).reshape(5, 5) % 3 == 0).astype(np.int8)
        for _ in range(3):
            count = np.zeros_like(board)
            for shift in (-1, 1):
                count += np.roll(board, shift, axis=1)
            born = (board == 0) & (count == 1)
            board[born] = 1
        return board
    """,
    "mask from an elementwise expression of another name of the same root": """
        heat = np.linspace(-2.0, 2.0, 6)
        scaled = np.abs(heat) * 2.0 - 1.0
        counts = np.zeros_like(heat).astype(np.int32)
        counts[scaled > 0] = 2.7
        counts[np.isfinite(scaled) & (heat < 1)] += 3
        return counts
    """,
    "masks through shape-keeping functions with an integer axis": """
        x = np.array([[3.0, -1.0], [2.0, 5.0]])
        x[np.cumsum(x, axis=1) > 2] = 0.0
        x[np.sort(x) < 0] = 9.0
        return x
    """,
    "values elementwise in selections of arrays of the same root, by the same mask": """
        x = np.linspace(-2.0, 2.0, 8)
        y = np.roll(x, 3) * 0.5
        x[x > 0] = np.sqrt(y[x > 0] + 2.0) - x[x > 0]
        x[x < -1] += y[x < -1]
        return x
    """,
}

AT = {
    "a row mask of a matrix": """
        m = np.arange(12.0).reshape(4, 3)
        m[m[:, 0] > 4.0] = -1.0
        return m
    """,
    "an array of the same length but no provable relation": """
        a = np.arange(5.0)
        b = np.linspace(0.0, 1.0, 5)
        a[b > 0.5] = -1.0
        return a
    """,
    "values selected by another mask": """
        x = np.linspace(-2.0, 2.0, 8)
        y = np.roll(x, 3)
        x[x > 0] = y[y > 0]
        return x
    """,
    "values selected from an array of another shape (a row mask of it)": """
        x = np.linspace(-2.0, 2.0, 4)
        y = np.arange(8.0).reshape(4, 2)
        x[x > 0] = y[x > 0][:, 0]
        return x
    """,
    "a mask of a flattening cumsum (axis=None): a row mask of the column": """
        x = np.array([[1.0], [2.0]])
        m = np.cumsum(x, axis=None) > 1
        x[m] = 0.0
        y = np.array([[1.0], [2.0]])
        y[np.sort(y, None) > 1] = 0.0
        return x, y
    """,
    "a mask of a matrix product": """
        w = np.arange(6.0).reshape(2, 3)
        h = np.ones((3, 2)) @ w
        g = np.cos(h)
        g[w.T @ w > 10] = 0.0
        return g
    """,
    "an array reshaped in place after the mask was made": """
        y = np.arange(6.0)
        keep = y > 2
        z = np.zeros(3)
        sel = z == 0
        z.resize((3, 2), refcheck=False)
        z[sel] = 7.0
        return y[keep], z
    """,
}


def _main(body: str) -> str:
    return "import numpy as np\n\n\ndef main():\n" + textwrap.indent(textwrap.dedent(body), "    ")


@pytest.mark.parametrize("body", WHERE.values(), ids=WHERE.keys())
def test_masks_of_the_arrays_own_shape_become_where(tmp_path, body):
    result = _converted_and_run(tmp_path, _main(body))
    assert "jnp.where(" in result.converted and ".at[" not in result.converted
    assert "NJ208" not in [f.code for f in result.findings]


@pytest.mark.parametrize("body", AT.values(), ids=AT.keys())
def test_masks_not_proven_of_the_arrays_shape_stay_at_and_are_reported(tmp_path, body):
    result = _converted_and_run(tmp_path, _main(body))
    assert "jnp.where(" not in result.converted
    assert "NJ208" in [f.code for f in result.findings] or "NJ205" in [
        f.code for f in result.findings + result.changes]


def _verdicts(result) -> dict:
    verdicts = {}
    for finding in result.changes + result.findings:
        if finding.code in ("NJ501", "NJ502"):
            verdicts[finding.message.split("`")[1]] = (
                "compiled" if finding.code == "NJ501" else finding.message)
    return verdicts


def test_a_mask_update_of_the_arrays_own_shape_compiles(tmp_path):
    result = _converted_and_run(tmp_path, """
        import numpy as np


        def relu_grad(h):
            grad = np.cos(h) * 2.0
            grad[h <= 0] = 0.0
            return grad


        def main():
            return relu_grad(np.linspace(-1.0, 1.0, 9))
    """, JIT)
    assert _verdicts(result)["relu_grad"] == "compiled"
    assert "grad = jnp.where(h <= 0, 0.0, grad).astype(grad.dtype)" in result.converted


def test_a_mask_update_with_selections_of_same_shape_arrays_compiles(tmp_path):
    result = _converted_and_run(tmp_path, """
        import numpy as np


        def clamp_to_neighbour(x):
            out = x.copy()
            y = np.roll(x, 1)
            out[out > 0.5] = y[out > 0.5] * 0.5
            out[out < -0.5] += np.abs(y[out < -0.5])
            return out


        def main():
            return clamp_to_neighbour(np.sin(np.arange(12.0)))
    """, JIT)
    assert _verdicts(result)["clamp_to_neighbour"] == "compiled"
    assert "out = jnp.where(out > 0.5, y * 0.5, out).astype(out.dtype)" in result.converted


def test_a_row_mask_update_leaves_the_function_eager_and_says_why(tmp_path):
    case = FIXTURES / "eager-mask-update" / "row_mask_under_jit_stays_eager.in.py"
    result = _converted_and_run(tmp_path, case.read_text(), JIT)
    reason = _verdicts(result)["highlight"]
    assert "not provably of `out`'s own shape" in reason and "jax.jit cannot compile" in reason


@pytest.mark.parametrize("expression", ["len(x[x > 0]) / x.size", "x[x > 0].size / len(x)",
                                        "np.where(len(x[x > 0]) > 2, x, -x)",
                                        "x[x > 0].sum() / len(x[x > 0])"])
def test_counts_of_a_selection_that_are_divided_or_compared_compile(tmp_path, expression):
    result = _converted_and_run(tmp_path, f"""
        import numpy as np


        def f(x):
            return {expression}


        def main():
            return f(np.sin(np.arange(10.0)))
    """, JIT)
    assert _verdicts(result)["f"] == "compiled"
    assert "jnp.count_nonzero(x > 0)" in result.converted
    assert "NJ504" in [c.code for c in result.changes]


@pytest.mark.parametrize("expression, why", [
    ("codes + len(x[x > 0])", "boolean mask, and the selection is kept"),  # int8 + int32
    ("len(x[y > 0]) / x.size", "boolean mask, and the selection is kept"),  # not x's mask
    # a Python number divided by 0 raises ZeroDivisionError, an array gives inf
    ("1.0 / len(x[x > 0])", "boolean mask, and the selection is kept"),
    ("x[x > 0]", "boolean mask, and the selection is kept"),
    ("np.unique(x)", "static `size=`"),
    ("np.nonzero(x > 0)[0]", "static `size=`"),
])
def test_selections_whose_size_matters_stay_eager_with_the_reason(tmp_path, expression, why):
    result = _converted_and_run(tmp_path, f"""
        import numpy as np


        def f(x, y, codes):
            return {expression}


        def main():
            x = np.sin(np.arange(6.0))
            return f(x, np.cos(np.arange(6.0)), np.arange(6, dtype=np.int8))
    """, JIT)
    assert why in _verdicts(result)["f"]
    assert "count_nonzero" not in result.converted


# --- reductions of a row selection along the selected axis ---------------------------------

def test_a_row_mask_mean_along_axis_0_compiles_for_any_rank(tmp_path):
    result = _converted_and_run(tmp_path, """
        import numpy as np


        def centroid(x, labels, j):
            return x[labels == j].mean(axis=0)


        def main():
            x = np.sin(np.arange(24.0)).reshape(4, 3, 2)
            return centroid(x, np.array([0, 1, 1, 0]), 1), centroid(x[:, 0], np.arange(4) % 2, 0)
    """, JIT)
    assert _verdicts(result)["centroid"] == "compiled"
    assert ("jnp.mean(x, axis=tuple(range((labels == j).ndim)), where=jnp.expand_dims("
            "labels == j, tuple(range((labels == j).ndim, x.ndim))))") in result.converted


def test_a_mask_of_the_arrays_own_shape_along_axis_0_is_the_whole_reduction(tmp_path):
    result = _converted_and_run(tmp_path, """
        import numpy as np


        def positive_mean(x):
            return x[x > 0].mean(axis=0)


        def main():
            return positive_mean(np.sin(np.arange(12.0)).reshape(3, 4))
    """, JIT)
    assert "return jnp.mean(x, where=x > 0)" in result.converted


@pytest.mark.parametrize("call", ["sum(axis=1)", "mean(axis=0, keepdims=True)",
                                  "sum(axis=-1)", "mean(axis=(0,))", "sum(0, dtype=float)"])
def test_other_reductions_of_a_row_selection_stay_eager(call):
    source = textwrap.dedent(f"""
        import numpy as np


        def f(x, labels):
            return x[labels == 0].{call}


        def main():
            return f(np.arange(12.0).reshape(4, 3), np.array([0, 1, 0, 0]))
    """)
    result = convert_source(source, JIT)
    assert "selection is kept" in _verdicts(result)["f"]


_ROW_PROGRAM = """
import numpy as np


def reduce_rows(x, keys):
    m = keys > 0.5
    return (x[m].sum(axis=0), x[m].mean(axis=0), x[m].prod(axis=0), x[m].any(axis=0),
            x[m].all(axis=0))


def extremes(x, keys):
    m = keys > 0.5
    return x[m].max(axis=0), x[m].min(0)


def main():
    x = np.arange(12.0).reshape(4, 3)
    return reduce_rows(x, np.ones(4)), extremes(x, np.ones(4))
"""
_ROW_MODULES: dict = {}


def _row_modules(tmp_path_factory):
    if not _ROW_MODULES:
        import importlib.util

        folder = tmp_path_factory.mktemp("rows")
        converted = convert_source(_ROW_PROGRAM, JIT).converted
        assert converted.count("@jax.jit") == 3 and "x[m]" not in converted
        for name, text in (("numpy", _ROW_PROGRAM), ("jit", converted)):
            path = folder / f"rows_{name}.py"
            path.write_text(text)
            spec = importlib.util.spec_from_file_location(path.stem, path)
            _ROW_MODULES[name] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(_ROW_MODULES[name])
    return _ROW_MODULES


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), mask_ndim=st.integers(1, 3),
       data=st.data())
def test_row_selection_reductions_under_jit_equal_numpy(tmp_path_factory, shape, mask_ndim, data):
    """Random arrays (NaN, inf and -0.0 included, float32 or int32), masks of any leading
    shape, empty selections included: the compiled reduction equals NumPy's, except max/min
    of an empty selection, where NumPy raises (documented)."""
    import warnings

    import jax.numpy as jnp

    modules = _row_modules(tmp_path_factory)
    mask_ndim = min(mask_ndim, len(shape))
    integer = data.draw(st.booleans())
    # (no subnormal floats: XLA on the CPU flushes them to zero, eagerly as under jit)
    elements = st.integers(-3, 3) if integer else st.floats(
        -4, 4, width=32, allow_subnormal=False) | st.sampled_from([np.nan, np.inf, -np.inf, -0.0])
    x = data.draw(arrays(np.int32 if integer else np.float32, tuple(shape), elements=elements))
    keys = data.draw(arrays(np.float32, tuple(shape[:mask_ndim]), elements=st.sampled_from(
        [0.0, 1.0])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = modules["numpy"].reduce_rows(x, keys)
    got = modules["jit"].reduce_rows(jnp.asarray(x), jnp.asarray(keys))
    # (an int32 array's mean is float64 in NumPy, float32 in JAX: judged at float32)
    assert compare_values("reduce_rows", expected, got, Tolerance(floor32=True)) is None
    if (keys > 0.5).any():
        assert compare_values("extremes", modules["numpy"].extremes(x, keys),
                              modules["jit"].extremes(jnp.asarray(x), jnp.asarray(keys))) is None


# --- masks whose shape is known as numbers (np2jax.shapes.static_shape) --------------------

def test_a_relu_mask_through_matrix_products_and_a_helper_becomes_where(tmp_path):
    for config in (Config(), JIT):
        result = _converted_and_run(tmp_path, """
            import numpy as np

            N = 6
            H = 4


            def forward(x, w):
                return np.maximum(x @ w + np.zeros(H), 0.0)


            def main():
                x = np.sin(np.arange(N * 3)).reshape(N, 3)
                w = np.cos(np.arange(3 * H)).reshape(3, -1)
                h = forward(x, w)
                dh = np.ones((N, 2)) @ (np.arange(2 * H) * 1.0).reshape(2, H)
                dh[h <= 0] = 0.0
                return dh
        """, config)
        assert "dh = jnp.where(h <= 0, 0.0, dh).astype(dh.dtype)" in result.converted


def _shapes_of(source: str, *names: str) -> dict:
    """The static shape of each name where it is passed to a call (its last such read)."""
    import libcst as cst

    from np2jax.analysis import analyze
    from np2jax.syntax.walk import walk
    from np2jax.analysis.shapes import static_shape

    analysis = analyze(cst.parse_module(textwrap.dedent(source)))
    found = {}
    for node in walk(analysis.module):
        if isinstance(node, cst.Name) and node.value in names \
                and isinstance(analysis.parents.get(node), cst.Arg):
            found[node.value] = static_shape(analysis.dataflow, node)
    return found


@pytest.mark.parametrize("body, expected", [
    ("a = np.zeros((N, 3))\nuse(a)", (5, 3)),
    ("a = np.arange(N * 4).reshape(2, -1).T\nuse(a)", (10, 2)),
    ("a = np.ones((N, 3)).sum(axis=1, keepdims=True)\nuse(a)", (5, 1)),
    ("a = np.ones((N, 3)).max(axis=-1)\nuse(a)", (5,)),
    ("a = np.ones((4, N)) @ np.ones(N)\nuse(a)", (4,)),
    ("a = np.outer(np.arange(N), np.arange(1, 3)) + np.arange(2)\nuse(a)", (5, 2)),
    ("a = np.ones(3)\nfor i in range(2):\n    use(a)\n    b = np.ones(4)", (3,)),
    ("a = np.ones((N, 1)) * np.ones(3)\nuse(a)", (5, 3)),
    ("A, B = 2, 3\na = np.zeros((A, B))\nuse(a)", (2, 3)),  # names unpacked from a tuple
    # not known: a parameter, broadcasting that fails, a loop that rebinds, a second
    # binding on the line, a name unpacked from a call or rebound through `global`
    ("use(p)", None),
    ("a = np.ones((N, 2)) + np.ones(3)\nuse(a)", None),
    ("a = np.ones(3)\nfor i in range(2):\n    use(a)\n    a = np.ones(4)", None),
    ("a = np.ones(3); a = np.ones(4)\nuse(a)", None),
    ("A, B = dims()\na = np.zeros((A, B))\nuse(a)", None),
    ("a = np.zeros(G)\nuse(a)", None),
    ("n = 2\nn += 1\na = np.zeros(n)\nuse(a)", None),
])
def test_static_shapes(body, expected):
    source = "import numpy as np\nN = 5\nG = 2\n\ndef rebind():\n    global G\n    G = 3\n\n" \
             "def use(a):\n    return a\n\ndef f(p):\n" + textwrap.indent(body, "    ") + "\n"
    name = "p" if "use(p)" in body else "a"
    assert _shapes_of(source, name)[name] == expected


def test_shape_proofs_follow_each_name_once(monkeypatch):
    """A chain of names each read twice by the next: followed once each (remembered), not
    2 ** length times; the mask at its end is proven of the array's shape."""
    from np2jax.analysis.values import Values

    lines = ["import numpy as np", "", "", "def f():", "    a0 = np.zeros((3, 4))"]
    lines += [f"    a{i} = a{i - 1} + a{i - 1} * 2" for i in range(1, 40)]
    lines += ["    a39[a39 > 0] = 0", "    return a39"]
    calls = []
    original = Values.jax_typed
    monkeypatch.setattr(Values, "jax_typed",
                        lambda self, *args, **kw: calls.append(1) or original(self, *args, **kw))
    result = convert_source("\n".join(lines) + "\n", Config())
    assert "a39 = jnp.where(a39 > 0, 0, a39).astype(a39.dtype)" in result.converted
    assert len(calls) < 400
