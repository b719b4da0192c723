"""What a proof run can say and the cases it runs: the verdicts, the cases' names as the
table records them, the limits of a run, and where the tables live."""

from __future__ import annotations

from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
TABLE_PATH = ROOT / "rules" / "api" / "numpy_jax.json"
GRID_PATH = ROOT / "rules" / "api" / "proof_grid.toml"
DEFAULT_OUT = ROOT / "rules" / "api" / "proven.json"

SAME, RAISES, DIFFERS = "same", "raises", "differs"
# JAX returns where NumPy raises: no NumPy program that runs gets there, unless it catches
# the error (np2jax keeps a call inside `try` on NumPy for these).
NUMPY_RAISES = "numpy raises"
OMITTED = "<omitted>"
# Results equal as numbers whose zeros differ in sign (-0.0 == 0.0, but they print, divide
# and `copysign` apart). UNSIGNED_ZEROS: every zero of NumPy's result is 0.0 and JAX's has
# -0.0 (np.sign): `jnp.where(r == 0, 0, r)` gives NumPy's result, which np2jax writes.
# SIGNED_ZEROS: NumPy has -0.0 where JAX has 0.0 (np.cumsum, np.clip), which nothing mends.
UNSIGNED_ZEROS = "-0.0 where every zero of NumPy's result is 0.0"
SIGNED_ZEROS = "zeros whose sign differs from NumPy's"
CALL_TIMEOUT_S = 60  # one NumPy call (a signal interrupts Python code only)
CALLABLE_TIMEOUT_S = 900  # all the runs of one callable, enforced by killing its process
TASKS_PER_WORKER = 40
# (rtol, atol) by the precision of NumPy's result; atol scales with the result's magnitude.
TOLERANCES = {"float64": (1e-9, 1e-12), "float32": (2e-5, 1e-6), "float16": (2e-3, 1e-3)}
# The "tiny" edge: the data scaled by TINY (values near zero, normal numbers, not subnormal
# ones), its results compared by their own magnitude (atol scales with it below 1 too):
# JAX's complex sinh and cosh lose relative accuracy there (sinh(1e-10+1e-10j)), which
# complex-step derivatives divide out. Complex dtypes are run at that scale too.
TINY = 1e-9
TINY_EDGE = "tiny"
NEAR_ZERO = "for values near zero (|x| about 1e-9)"
# A Python number given for a data argument, and the narrow dtype of the data beside it
# (Prover.prove_python_numbers). AS_ARRAY: the verdict where JAX gives NumPy's result once
# the number is the 64-bit array NumPy makes of it (jnp.asarray(300, dtype=int));
# AS_FLOAT_ARRAY: once an integer is a float64 array (beside float32 data NumPy's int64
# array promotes the result to float64, JAX's int64 to float32).
PYTHON_NUMBERS = ((300, "uint8"), (5, "int32"), (5, "float32"), (0.1, "float32"))
AS_ARRAY = "same as a 64-bit array"
AS_FLOAT_ARRAY = "same as a float64 array"
# every data argument given as the Python number 2.5 alone (`np.sqrt(2.5)`): NumPy's result
# is a 64-bit scalar or array, JAX's may be weakly typed (float32 beside float32 data later);
# recorded under NUMBERS_ALONE in place of a parameter's name
NUMBERS_ALONE, ALONE_CASE = "*", "2.5 alone"
WEAKLY_TYPED = "weakly typed"
# An option value JAX spells otherwise, with which it gives NumPy's result: the verdict is
# this and JAX's spelling (`kind="stable"`: "same as JAX's stable=True"), which NJ101 writes.
AS_SPELLED = "same as JAX's"
# A dtype whose verdict differs where JAX, given the data cast to float64, gives NumPy's
# result (np.cov, np.interp of float32 data: NumPy computes in float64).
DTYPE_AS_FLOAT64 = "same as float64 data"
WIDENED_DTYPES = ("float32", "float16", "int64", "int32", "int16", "int8", "uint8", "uint16",
                  "uint32", "uint64", "bool")
# and an int64 array given for a data argument beside float32 data (NumPy: float64)
INT_ARRAY_CASE = "int64 array beside float32"
UFUNC_METHODS = ("reduce", "accumulate", "outer", "reduceat")
# the parts of a table a run can prove alone and merge (--part), as its summary names them
INTEGER_PARAMS = "int64_params"  # the options proven again with int64 data
OPTION_DTYPES = "option_dtypes"  # the options taking arrays, given arrays of other dtypes
OPTION_DTYPE_CASES = ("int64", "float32", "bool")
PARTS = ("python_numbers", "dtypes", INTEGER_PARAMS, OPTION_DTYPES)
PART_NAMES = {"python_numbers": "Python numbers", "dtypes": "dtypes",
              INTEGER_PARAMS: "options on int64 data", OPTION_DTYPES: "array options' dtypes"}
NO_VALUE_REPRS = ("<no value>",)
MISSING = object()


class Timeout(Exception):
    pass
