"""Generate rules/api/proven.json: which calls of the API table JAX computes as NumPy/SciPy
does, proven by running both side by side.

Developer tool, never imported by the converter at run time:

    python -m np2jax.apiproof [--out PATH] [--jobs N] [--only PATTERN ...] [--part PART]

(`--only` into an existing table proves those callables again and merges them in.)

For every callable of rules/api/numpy_jax.json with a JAX counterpart, a base call is made
from the signatures (and rules/api/proof_grid.toml where they cannot say what an argument
is), then varied: its data arguments cast to each dtype of the grid and given edge values
(NaN, inf, empty, 0-d, another ndim, ties, -0.0, values near zero: TINY), and every
parameter JAX's version has
given each value of the grid, the signatures' defaults included. Each variant runs under
NumPy/SciPy and under JAX (64-bit on: the converted code keeps NumPy's dtypes), and gets a
verdict: `same` (same values within a dtype-aware tolerance, same dtype, shape and
structure, and NumPy left its arguments alone), `raises` (both raise), or `differs: why`.
Each data argument, and each number option of the base call, is also given as a Python
number beside narrow data (`python_numbers`: NumPy makes np.append's 300 an int64 array where
JAX wraps it into uint8; np.full_like's fill value 300 for uint8 data raises OverflowError in
NumPy, JAX wraps it), and every option is tried again with the data cast to int64 (`int64_params`:
np.round's decimals=-1 raises in JAX for integers). `--part python-numbers` (or `dtypes`, or
`int64-params`) runs that part alone and merges it into the table.

The table is committed; the converter reads it (np2jax.analysis.references) and converts a
call only within what was proven the same. Regenerate it after upgrading NumPy, SciPy or JAX.

The modules, in the order they build on each other: verdicts (what a run can say, the cases'
names, where the tables live), grid (the values calls are made of), running (one call under
both libraries, compared), prover (every call of one callable), table (the whole table and
the command line).
"""

from np2jax.apiproof.verdicts import *  # noqa: F401,F403 - the names the table records
from np2jax.apiproof.grid import resolve, variant  # noqa: F401
from np2jax.apiproof.running import compare, run_both  # noqa: F401
from np2jax.apiproof.prover import Prover, method_entries  # noqa: F401
from np2jax.apiproof.table import (  # noqa: F401
    build, callables, describe, dump, main, merge_callables, merge_part, prove_one, summarize,
    _init_worker,
)
