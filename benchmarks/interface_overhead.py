"""Per-call cost of `--interface numpy` (NJ105): the decorator np2jax writes into a converted
module, timed on a call from inside the converted tree and from outside it (docs/guide.md,
"A NumPy interface for a library's callers").

Usage: python benchmarks/interface_overhead.py
"""

from __future__ import annotations

import sys
import tempfile
import timeit
from pathlib import Path

from np2jax.api import Config, convert_source

LIBRARY = """
import numpy as np


def total(x):
    return np.sum(x)
"""


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="np2jax-interface-"))
    (folder / "interface_lib.py").write_text(
        convert_source(LIBRARY, Config(interface="numpy")).converted)
    sys.path.insert(0, str(folder))
    import jax.numpy as jnp
    import numpy as np

    import interface_lib as lib

    x, big = jnp.arange(3.0), jnp.arange(1_000_000.0)
    bare = lambda v: v  # noqa: E731
    wrapped = lib._np2jax_numpy_interface(bare)
    inside = {"_NP2JAX_TREE": lib._NP2JAX_TREE, "f": wrapped, "x": x}  # a module of the tree

    def best(stmt: str, names: dict, number: int) -> float:
        return min(timeit.repeat(stmt, globals=names, number=number, repeat=5)) / number

    rows = [
        ("bare call of an identity", best("f(x)", {"f": bare, "x": x}, 200_000)),
        ("decorated, caller inside the tree", best("f(x)", inside, 200_000)),
        ("decorated, outside, a float", best("f(1.0)", {"f": wrapped}, 200_000)),
        ("decorated, outside, a 3-element array", best("f(x)", {"f": wrapped, "x": x}, 50_000)),
        ("np.asarray of a 3-element JAX array", best("np.asarray(x)", {"np": np, "x": x}, 50_000)),
        ("decorated, outside, 1e6 float64", best("f(b)", {"f": wrapped, "b": big}, 200)),
        ("jnp.sum of 3 elements, bare", best("f(x)", {"f": lib.total.__wrapped__, "x": x}, 5_000)),
        ("jnp.sum of 3 elements, from outside", best("f(x)", {"f": lib.total, "x": x}, 5_000)),
    ]
    for name, seconds in rows:
        print(f"{name:40} {seconds * 1e6:10.2f} µs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
