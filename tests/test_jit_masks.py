"""Boolean masks: `x[m] = v` becomes jnp.where only when m provably has x's shape
(np2jax.shapes), and under --jit the selections whose use does not depend on their size
(reductions, counts that are divided or compared) compile; the others stay eager, with the
reason. Every case is run both ways (more cases: fixtures/eager-mask-update, mask-reduction)."""

from __future__ import annotations

import textwrap

import pytest

from helpers import FIXTURES, run_main
from np2jax.api import convert_source
from np2jax.config import Config
from np2jax.verify.compare import compare_values

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
