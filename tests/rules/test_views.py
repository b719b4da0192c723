"""Writes through views (np2jax.analysis.views): each refusal is one line naming the view
and why, and a carried write gives NumPy's results, the base's and every view's."""

from __future__ import annotations

import pytest

from np2jax.api import convert_source

REFUSED = [
    ("b = np.arange(12.0)[::2]\n    r = b.reshape(2, 3)\n    r[0, 0] = 5.0",
     "`r = b.reshape(2, 3)` is a view only if `b` is C-contiguous"),
    ("b = np.zeros(6)\n    r = b.reshape(2, 3, order=\"F\")\n    r[0, 0] = 5.0",
     "passes `order=\"F\"`, which may make a copy"),
    ("b = np.zeros(6)\n    if b[0] > 1:\n        r = b[1:]\n    else:\n        r = b[:2]\n"
     "    r[0] = 5.0", "`r` is a view of `b` on some paths only"),
    ("b = np.zeros(6)\n    r = b[1:]\n    kept = [r]\n    r[0] = 5.0",
     "`r = b[1:]` is also reachable through `[r]`"),
    ("b = np.zeros(6)\n    k = 1\n    r = b[k:]\n    k += 1\n    r[0] = 5.0",
     "`k` may be bound again after `r = b[k:]`"),
    ("b = np.zeros(6)\n    r = b[1:]\n    b = np.ones(6)\n    r[0] = 5.0",
     "`b` may be bound again after `r = b[1:]`"),
    ("b = np.zeros(6)\n    r = b[1:]\n    s = b\n    r[0] = 5.0",
     "`r` shares memory with `b`, and `b` is also reachable through `s = b`"),
]


@pytest.mark.parametrize("body, reason", REFUSED)
def test_a_refused_write_names_the_view_and_why(body, reason):
    source = f"import numpy as np\n\n\ndef main():\n    {body}\n    return b\n"
    result = convert_source(source)
    messages = [f.message for f in result.findings if f.code == "NJ201"]
    assert len(messages) == 1 and reason in messages[0], messages
    assert "\n" not in messages[0]
    assert "r[0" in result.converted  # the write is left as it was


def test_a_carried_write_updates_the_base_and_every_view_read_later():
    source = (
        "import numpy as np\n\n\ndef main():\n"
        "    a = np.arange(12.0)\n"
        "    grid = a.reshape(3, 4)\n"
        "    col = grid[:, 1]\n"
        "    evens = a[::2]\n"
        "    col[0] = -1.0\n"
        "    evens += 100.0\n"
        "    a[3] = 7.0\n"
        "    return {'a': a, 'grid': grid, 'col': col, 'evens': evens}\n")
    result = convert_source(source)
    assert not result.findings, result.findings
    assert "col = col.at[0].set(-1.0)\n    grid = grid.at[:, 1].set(col)\n" \
        "    a = grid.reshape(a.shape)\n    evens = a[::2]\n" in result.converted
    namespace: dict = {}
    exec(compile(source, "<numpy>", "exec"), namespace)
    expected = namespace["main"]()
    exec(compile(result.converted, "<jax>", "exec"), namespace)
    got = namespace["main"]()
    import numpy as np

    for key, value in expected.items():
        np.testing.assert_array_equal(np.asarray(got[key]), value, err_msg=key)
