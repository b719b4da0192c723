"""A pytest plugin that runs only the tests named in the file NP2JAX_SELECT_TESTS (node ids,
one a line), whatever else the suite's arguments collect: `np2jax.verify.prove.run_selected`
copies it into a work folder as `np2jax_select_tests.py` and runs pytest with
`-p np2jax_select_tests`. Not imported by np2jax; imports nothing of it."""

import os


def pytest_collection_modifyitems(session, config, items):
    path = os.environ.get("NP2JAX_SELECT_TESTS")
    if not path:
        return
    with open(path, encoding="utf-8") as handle:
        wanted = {line.strip() for line in handle if line.strip()}
    kept = [item for item in items if item.nodeid in wanted]
    dropped = [item for item in items if item.nodeid not in wanted]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept
