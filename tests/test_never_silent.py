"""The promise: a conversion computes the same result, or a finding says why not.

Each expression is a common NumPy call with lists, tuples, shapes or axes as arguments. It
is converted inside a tiny program, both versions run, and the converted one must give
equal results or carry a finding. A silent difference fails the test.
"""

from __future__ import annotations

import pytest

from np2jax.api import convert_source
from np2jax.verify.compare import compare_values

EXPRESSIONS = [
    'np.roll(x, shift=(1, 2), axis=(0, 1))',
    'np.split(x, [1, 2])',
    'np.histogram(x.ravel(), bins=[0, 1, 2, 3])',
    'np.histogram(x.ravel(), range=(0, 3))',
    'np.select([x > 1, x > 0], [x, -x])',
    'np.interp([0.5, 1.5], [0, 1, 2], [0, 10, 20])',
    'np.percentile(x, [25, 75])',
    'np.pad(x, ((1, 1), (2, 2)))',
    'np.tile(x, (2, 1))',
    'np.transpose(x, (1, 0))',
    'np.reshape(x, [3, 3])',
    'np.full((2, 2), 3.0)',
    'np.broadcast_to(np.ones(3), (2, 3))',
    'np.linalg.norm(x, ord=2)',
    'np.einsum("ij,jk->ik", x, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])',
    'np.where(x > 1, [1.0, 2.0, 3.0], 0.0)',
    'np.clip(x, [0, 1, 2], 5)',
    'np.isin(x, [1, 2])',
    'np.searchsorted([1, 2, 3], 2)',
    'np.convolve([1, 2, 3], [0, 1, 0.5])',
    'np.polyval([1, 0, -2], x)',
    'np.cross([1, 0, 0], [0, 1, 0])',
    'np.outer([1, 2], [3, 4])',
    'np.diag([1, 2, 3])',
    'np.mean(x, axis=(0, 1))',
    'np.sum(x, axis=(0,))',
    'np.max([x.min(), x.max()])',
    'np.linspace([0, 1], [1, 2], 3)',
    'np.meshgrid([1, 2], [3, 4, 5])',
    'np.unravel_index(5, (3, 3))',
    'np.ravel_multi_index(([0, 1], [1, 2]), (3, 3))',
    'np.take(x, [0, 2])',
    'np.take_along_axis(x, np.array([[0], [1], [2]]), axis=1)',
    'np.delete(x, [0], axis=0)',
    'np.insert(np.arange(4.0), 1, [9.0, 8.0])',
    'np.append(x.ravel(), [1, 2])',
    'np.array_equal([1, 2], [1, 2])',
    'np.allclose(x, x + 1e-9)',
    'np.bincount([0, 1, 1, 3])',
    'np.digitize([0.5, 1.5], [0, 1, 2])',
    'np.cumsum([1, 2, 3])',
    'np.prod((2, 3))',
    'np.any([True, False])',
    'np.argsort([3, 1, 2])',
    'np.lexsort(([1, 2, 1], [3, 3, 1]))',
    'np.vstack([x, x])',
    'np.column_stack(([1, 2], [3, 4]))',
    'np.dot([[1, 2], [3, 4]], [1, 1])',
    'np.matmul([[1.0, 2.0]], [[1.0], [2.0]])',
    'np.linalg.solve([[2.0, 0.0], [0.0, 4.0]], [2.0, 4.0])',
    'np.fft.fft([1.0, 0.0, 0.0, 0.0])',
    'np.unique([3, 1, 1, 2])',
    'np.count_nonzero([0, 1, 2])',
    'np.std([1.0, 2.0, 4.0], ddof=1)',
    'np.round([1.234, 2.345], 2)',
    'np.kron([1, 2], [1, 1])',
    'np.ones_like([1.0, 2.0])',
    'np.zeros_like([[1, 2]])',
    'np.flip([1, 2, 3])',
    'np.sort([3, 1, 2])[::-1]',
    'np.triu([[1, 2], [3, 4]])',
    'np.trace([[1, 2], [3, 4]])',
    'np.vander([1, 2, 3])',
    'np.correlate([1, 2, 3], [0, 1])',
    'np.nanmean([1.0, np.nan, 3.0])',
    'np.gradient([1.0, 4.0, 9.0])',
    'np.diff([1, 4, 9], n=1)',
    'np.hypot([3.0], [4.0])',
    'np.maximum([1, 5], [3, 2])',
    'np.logical_and([True, False], [True, True])',
    'np.argmax([[1, 5], [7, 2]], axis=1)',
]


def _run(source: str):
    namespace: dict = {}
    exec(compile(source, "<case>", "exec"), namespace)
    return namespace["main"]()


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_equal_or_flagged(expression):
    source = ("import numpy as np\n\ndef main():\n    x = np.arange(9.0).reshape(3, 3)\n"
              f"    return {{'r': {expression}}}\n")
    result = convert_source(source)
    reference = _run(source)
    try:
        problem = compare_values("r", reference, _run(result.converted))
    except Exception as exc:  # noqa: BLE001 - a crash is a difference too
        problem = f"{type(exc).__name__}: {exc}"
    assert problem is None or result.findings, f"silent difference: {problem}\n{result.converted}"
