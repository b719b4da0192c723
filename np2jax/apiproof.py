"""Generate rules/api/proven.json: which calls of the API table JAX computes as NumPy/SciPy
does, proven by running both side by side.

Developer tool, never imported by the converter at run time:

    python -m np2jax.apiproof [--out PATH] [--jobs N] [--only PATTERN ...] [--part PART]

(`--only` into an existing table proves those callables again and merges them in.)

For every callable of rules/api/numpy_jax.json with a JAX counterpart, a base call is made
from the signatures (and rules/api/proof_grid.toml where they cannot say what an argument
is), then varied: its data arguments cast to each dtype of the grid and given edge values
(NaN, inf, empty, 0-d, another ndim, ties, -0.0), and every parameter JAX's version has
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
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import hashlib
import importlib
import inspect
import json
import math
import os
import platform
import signal
import sys
import time
import warnings
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
TABLE_PATH = ROOT / "rules" / "api" / "numpy_jax.json"
GRID_PATH = ROOT / "rules" / "api" / "proof_grid.toml"
DEFAULT_OUT = ROOT / "rules" / "api" / "proven.json"

SAME, RAISES, DIFFERS = "same", "raises", "differs"
# JAX returns where NumPy raises: no NumPy program that runs gets there, unless it catches
# the error (np2jax keeps a call inside `try` on NumPy for these).
NUMPY_RAISES = "numpy raises"
OMITTED = "<omitted>"
CALL_TIMEOUT_S = 60  # one NumPy call (a signal interrupts Python code only)
CALLABLE_TIMEOUT_S = 900  # all the runs of one callable, enforced by killing its process
TASKS_PER_WORKER = 40
# (rtol, atol) by the precision of NumPy's result; atol scales with the result's magnitude.
TOLERANCES = {"float64": (1e-9, 1e-12), "float32": (2e-5, 1e-6), "float16": (2e-3, 1e-3)}
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
_NO_VALUE_REPRS = ("<no value>",)
_MISSING = object()


class Timeout(Exception):
    pass


# --- values of the grid -----------------------------------------------------------------------


def resolve(dotted: str) -> Any:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def _made(kind: str, shape: tuple, np):
    n = int(np.prod(shape)) if shape else 1
    base = ((np.arange(n) * 0.6180339887 + 0.1) % 1.0)
    if kind == "mixed":
        values = base * 4.0 - 1.3
    elif kind == "unit":
        values = base * 0.9 + 0.05
    elif kind == "positive":
        values = base * 3.0 + 0.2
    elif kind == "big":
        values = base * 3.0 + 1.2
    elif kind == "sorted":
        values = np.sort(base * 4.0 - 1.3)
    elif kind == "increasing":
        values = np.cumsum(base + 0.3)
    elif kind == "counts":
        return np.floor(base * 5).astype(np.int64).reshape(shape)
    elif kind == "ints":
        return (np.floor(base * 9) - 4).astype(np.int64).reshape(shape)
    elif kind == "bits":
        return np.floor(base * 256).astype(np.uint8).reshape(shape)
    elif kind in ("mask", "mask_not"):
        mask = (base * 4.0 - 1.3 > 0.5).reshape(shape)
        return ~mask if kind == "mask_not" else mask
    elif kind == "simplex":
        values = (base + 0.2).reshape(shape)
        return values / values.sum(axis=-1, keepdims=True)
    elif kind == "signal":
        t = np.arange(n)
        values = np.sin(t * 0.37) + 0.5 * np.cos(t * 1.3) + 0.1 * t / n
    elif kind == "complex":
        values = (base * 4.0 - 1.3) + 1j * (base[::-1] * 2.0 - 0.7)
    elif kind in ("spd", "sym", "lower"):
        m = (base * 4.0 - 1.3).reshape(shape)
        if kind == "spd":
            return m @ m.T + shape[0] * np.eye(shape[0])
        if kind == "sym":
            return m + m.T
        return np.tril(m) + shape[0] * np.eye(shape[0])
    else:
        raise ValueError(f"unknown sample kind {kind!r}")
    return np.asarray(values).reshape(shape)


class Samples:
    def __init__(self, grid: dict, np):
        self.np = np
        self.arrays: dict[str, Any] = {}
        self.data: set[str] = set()
        for name, spec in grid["samples"].items():
            if "value" in spec:
                self.arrays[name] = np.asarray(spec["value"], dtype=spec.get("dtype"))
                if spec.get("data", False):
                    self.data.add(name)
            else:
                self.arrays[name] = _made(spec["kind"], tuple(spec["shape"]), np)
                if spec.get("data", True):
                    self.data.add(name)


def variant(array, dtype: str | None, edge: str | None, np):
    """`array` (a data sample) cast to `dtype` or given the edge value `edge`."""
    a = np.array(array, copy=True)
    if dtype is not None:
        real = np.nan_to_num(a.real.astype(np.float64)) if a.dtype.kind in "fc" else a.astype(np.float64)
        if dtype in ("float64", "float32", "float16"):
            return a.real.astype(dtype) if a.dtype.kind == "c" else a.astype(dtype)
        if dtype in ("int64", "int32", "int16", "int8"):
            return np.round(real).astype(dtype)
        if dtype in ("uint8", "uint16", "uint32", "uint64"):
            return np.abs(np.round(real * 3)).astype(dtype)
        if dtype == "complex64":
            return (a.astype(np.complex128) + 0.25j * np.flip(real)).astype(np.complex64)
        if dtype == "bool":
            return real > 0.5
        if dtype == "complex128":
            return a.astype(np.complex128) + 0.25j * np.flip(real)
        if dtype == "object":
            return a.astype(object)
        if dtype == "str":
            return a.astype(str)
        if dtype == "datetime64":
            return np.round(real * 10).astype(np.int64).astype("datetime64[D]")
        if dtype == "structured":
            out = np.zeros(a.shape, dtype=[("a", "f8"), ("b", "i8")])
            out["a"] = real
            out["b"] = np.round(real)
            return out
        raise ValueError(dtype)
    if edge is None:
        return a
    if edge in ("nan", "inf", "negative-zero") and a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    flat = a.reshape(-1)
    if edge == "nan":
        flat[min(1, flat.size - 1)] = np.nan
    elif edge == "inf":
        flat[0] = np.inf
        flat[-1] = -np.inf
    elif edge == "negative-zero":
        flat[0] = -0.0
        flat[min(1, flat.size - 1)] = 0.0
    elif edge == "ties":
        return np.round(a) if a.dtype.kind in "fc" else a // 2
    elif edge == "empty":
        return a[:0] if a.ndim else None
    elif edge == "0-d":
        return np.asarray(flat[0]) if a.ndim else None
    elif edge == "ndim":
        return np.stack([a, a * 0.5 + 0.25 if a.dtype.kind in "fc" else a]) if a.dtype != bool else np.stack([a, ~a])
    return a


_LIKE_KINDS = {"like": "mixed", "pos_like": "positive", "mask_like": "mask",
               "increasing_like": "increasing", "int_like": "ints"}


class Context:
    """How the samples of one run are made: a dtype, an edge, the shape of the first data
    argument (for @like)."""

    def __init__(self, samples: Samples, dtype=None, edge=None):
        self.samples, self.dtype, self.edge = samples, dtype, edge
        self.first_shape = None  # as varied: what @like arrays take
        self.first_sample_shape = None  # as made: which other data arguments vary with it
        self.failed = False  # an edge that does not apply (0-d of a 0-d sample)

    def value(self, spec):
        np = self.samples.np
        if isinstance(spec, list):
            return tuple(self.value(item) for item in spec)
        if isinstance(spec, dict):
            return {key: self.value(item) for key, item in spec.items()}
        if not (isinstance(spec, str) and spec.startswith("@")):
            return spec
        name = spec[1:]
        constants = {"None": None, "inf": math.inf, "-inf": -math.inf}
        if name in constants:
            return constants[name]
        if name in _LIKE_KINDS:
            shape = self.first_shape if self.first_shape is not None else (3, 4)
            kind = _LIKE_KINDS[name]
            if kind == "increasing" and len(shape) != 1:
                shape = (shape[-1],) if shape else (1,)
            return _made(kind, tuple(shape), np)
        if name == "add_indices":
            return lambda i, j: i + 2 * j
        if name == "range5":
            return range(5)
        if name == "bytes16":
            return np.array([1.5, -2.0]).tobytes()
        if name.startswith("numpy."):  # a NumPy object: @numpy.floating
            return getattr(np, name.split(".", 1)[1])
        if name.startswith("dtype:"):  # @dtype:float32
            return np.dtype(name.split(":", 1)[1])
        if name.startswith("cast:"):  # @cast:int64:pos_like: that sample cast to int64
            _, dtype, inner = name.split(":", 2)
            return variant(self.value("@" + inner), dtype, None, np)
        if name.startswith("list:"):  # @list:M,pos: a list of samples (np.block wants a list)
            return [self.value("@" + item) for item in name.split(":", 1)[1].split(",")]
        array = self.samples.arrays[name]
        if name in self.samples.data:
            if self.first_sample_shape is None:
                self.first_sample_shape = array.shape
                changed = variant(array, self.dtype, self.edge, np)
                if changed is not None:
                    self.first_shape = changed.shape
            elif array.shape == self.first_sample_shape and self.edge in ("empty", "0-d", "ndim"):
                changed = variant(array, self.dtype, self.edge, np)
            else:
                changed = variant(array, self.dtype, None, np)
            if changed is None:
                self.failed = True
                return array
            return changed
        return np.array(array, copy=True)


def key_of(value) -> str:
    """How a parameter value is named in the table: its repr, lists as tuples; samples by
    their @name."""
    if isinstance(value, str) and value.startswith("@"):
        return "None" if value == "@None" else ("inf" if value == "@inf" else (
            "-inf" if value == "@-inf" else value))
    if isinstance(value, list):
        return repr(_as_tuple(value))
    return repr(value)


def _as_tuple(value):
    if isinstance(value, list):
        return tuple(_as_tuple(v) for v in value)
    return value


# --- running and comparing ---------------------------------------------------------------------


def _alarm(_signum, _frame):
    raise Timeout()


def _timed(fn, *args, **kwargs):
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CALL_TIMEOUT_S)
    try:
        return fn(*args, **kwargs)
    finally:
        signal.alarm(0)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = text if len(text) <= 110 else text[:107] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _snapshot(value, np):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (tuple, list)):
        return type(value)(_snapshot(v, np) for v in value)
    return value


def _unchanged(before, after, np) -> bool:
    if isinstance(before, np.ndarray):
        if before.dtype.kind in "fc":
            return np.array_equal(before, after, equal_nan=True)
        return np.array_equal(before, after)
    if isinstance(before, (tuple, list)):
        return all(_unchanged(b, a, np) for b, a in zip(before, after))
    return True


def run_both(np_fn, jax_fn, np_args, np_kwargs, jax_args, jax_kwargs, then, env,
             values: bool = True, weak: bool = False) -> str:
    """One verdict: same, raises (both), numpy raises: what (JAX returns), or differs: why.
    weak: a weakly typed JAX result differs too (NumPy's results never are)."""
    np, jax = env["np"], env["jax"]
    before = _snapshot((np_args, np_kwargs), np)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = _timed(np_fn, *np_args, **np_kwargs)
            if then is not None:
                expected = _timed(expected, *then[0])
            expected = _host(expected, np)
        numpy_error = None
    except Timeout:
        return f"{DIFFERS}: NumPy timed out"
    except BaseException as exc:  # noqa: BLE001 - any failure of NumPy is a verdict
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        numpy_error = exc
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # no alarm here: an exception raised inside JAX's compilation can leave a lock
            # held; a JAX call that hangs is caught by the worker's deadline instead
            got = jax_fn(*jax_args, **jax_kwargs)
            if then is not None:
                got = got(*then[1])
            got = jax.block_until_ready(got) if _has_arrays(got) else got
            weakly_typed = bool(getattr(got, "weak_type", False))
            got = _host(got, np)
        jax_error = None
    except BaseException as exc:  # noqa: BLE001
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        jax_error = exc
    if numpy_error is not None:
        if jax_error is not None:
            return RAISES
        return f"{NUMPY_RAISES}: {_short(numpy_error)}"
    if jax_error is not None:
        return f"{DIFFERS}: JAX raises {_short(jax_error)}"
    if not _unchanged(before, (np_args, np_kwargs), np):
        return f"{DIFFERS}: NumPy writes into its argument"
    try:
        problem = compare(expected, got, np, values=values)
    except Exception as exc:  # noqa: BLE001
        problem = f"cannot compare: {_short(exc)}"
    if problem is None and weak and weakly_typed:
        problem = WEAKLY_TYPED
    return SAME if problem is None else f"{DIFFERS}: {problem}"


def _has_arrays(value) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_has_arrays(v) for v in value)
    return hasattr(value, "block_until_ready")


class HostArray:
    """A JAX array brought to the host, remembering it was one."""

    def __init__(self, array):
        self.array = array


def _host(value, np):
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_host(v, np) for v in value)) if _is_np_namedtuple(value) else \
            _Named(value._fields, [_host(v, np) for v in value])
    if isinstance(value, (tuple, list)):
        return type(value)(_host(v, np) for v in value)
    module = type(value).__module__ or ""
    if module.startswith(("jax", "jaxlib")) and hasattr(value, "__array__") and hasattr(value, "dtype"):
        return HostArray(np.asarray(value))
    return value


def _is_np_namedtuple(value) -> bool:
    return (type(value).__module__ or "").startswith(("numpy", "scipy"))


class _Named(tuple):
    def __new__(cls, fields, items):
        obj = super().__new__(cls, items)
        obj._fields = tuple(fields)
        return obj


def _kind(value) -> str:
    if isinstance(value, HostArray):
        return "array"
    if isinstance(value, tuple):
        return "tuple"
    if isinstance(value, list):
        return "list"
    return type(value).__name__


def compare(expected, got, np, where: str = "", values: bool = True) -> str | None:
    """None when `got` (JAX's result, its arrays brought to the host) is NumPy's `expected`;
    `values=False` compares dtypes, shapes and structure only (np.empty's values are
    whatever memory held)."""
    at = f" (item {where})" if where else ""
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)):
            return f"a {_kind(got)} where NumPy gives a {_kind(expected)}{at}"
        if len(expected) != len(got):
            return f"{len(got)} items where NumPy gives {len(expected)}{at}"
        fields = getattr(expected, "_fields", None)
        if fields and tuple(getattr(got, "_fields", ())) != tuple(fields):
            return f"fields {getattr(got, '_fields', None)} where NumPy has {tuple(fields)}{at}"
        for index, (e, g) in enumerate(zip(expected, got)):
            problem = compare(e, g, np, f"{where}.{index}" if where else str(index), values)
            if problem is not None:
                return problem
        return None
    if expected is None or got is None:
        return None if expected is got else f"{_kind(got)} where NumPy gives {_kind(expected)}{at}"
    numeric = (np.ndarray, np.generic, int, float, complex, bool)
    if isinstance(expected, numeric) and not isinstance(expected, str):
        if isinstance(got, (tuple, list)):
            return f"a {_kind(got)} where NumPy gives an array{at}"
        g = got.array if isinstance(got, HostArray) else got
        if not isinstance(g, numeric):
            return f"a {_kind(got)} where NumPy gives an array{at}"
        return _compare_arrays(np.asarray(expected), np.asarray(g), np, at, values)
    if isinstance(got, HostArray):
        return f"an array where NumPy gives a {_kind(expected)}{at}"
    if isinstance(expected, (str, bytes, np.dtype, type)):
        return None if expected == got else f"{got!r} where NumPy gives {expected!r}{at}"
    return _compare_objects(expected, got, np, at)


def _compare_objects(expected, got, np, at) -> str | None:
    """finfo, iinfo and the like: their public attributes of plain values."""
    names = [n for n in dir(expected) if not n.startswith("_")]
    compared = 0
    for name in names:
        try:
            value = getattr(expected, name)
        except Exception:  # noqa: BLE001
            continue
        if callable(value) or not isinstance(value, (int, float, str, np.generic, np.dtype)):
            continue
        other = getattr(got, name, _MISSING)
        if other is _MISSING:
            return f"no attribute `{name}`{at}"
        problem = compare(value, _host(other, np), np)
        if problem is not None:
            return f"`{name}`: {problem}{at}"
        compared += 1
    return None if compared else f"cannot compare a {type(expected).__name__}{at}"


def _compare_arrays(a, b, np, at, values: bool = True) -> str | None:
    if a.dtype != b.dtype:
        return f"dtype {b.dtype} where NumPy gives {a.dtype}{at}"
    if a.shape != b.shape:
        return f"shape {b.shape} where NumPy gives {a.shape}{at}"
    if not values:
        return None
    if a.dtype.kind not in "fc":
        if a.dtype.kind in "biu":
            return None if np.array_equal(a, b) else f"values differ{at}"
        try:
            return None if np.array_equal(a, b) else f"values differ{at}"
        except Exception:  # noqa: BLE001
            return None if (a == b).all() else f"values differ{at}"
    if a.size == 0:
        return None
    precision = {"complex128": "float64", "complex64": "float32"}.get(a.dtype.name, a.dtype.name)
    rtol, atol = TOLERANCES.get(precision, TOLERANCES["float64"])
    parts = (a.real, a.imag, b.real, b.imag) if a.dtype.kind == "c" else (a, None, b, None)
    for x, y in ((parts[0], parts[2]), (parts[1], parts[3])):
        if x is None:
            continue
        x, y = x.astype(np.float64), y.astype(np.float64)
        if not np.array_equal(np.isnan(x), np.isnan(y)):
            return f"NaN where NumPy has none, or the reverse{at}"
        infinite = np.isinf(x) | np.isinf(y)
        if not np.array_equal(x[infinite], y[infinite]):
            return f"infinities differ{at}"
        finite = np.isfinite(x) & np.isfinite(y)
        if not finite.any():
            continue
        scale = max(1.0, float(np.max(np.abs(x[finite]))))
        err = np.abs(x[finite] - y[finite])
        if np.any(err > atol * scale + rtol * np.abs(x[finite])):
            rel = float(np.max(err / np.maximum(np.abs(x[finite]), 1e-300)))
            return f"values differ (max abs error {float(np.max(err)):.3g}, max rel error {rel:.3g}){at}"
    return None


# --- the calls of one callable -----------------------------------------------------------------


def signature(obj) -> inspect.Signature | None:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def spec_for(name: str, grid: dict) -> dict:
    spec: dict = {}
    for pattern, family in grid["families"].items():
        if fnmatch.fnmatchcase(name, pattern):
            spec.update(family)
            break
    spec.update(grid["functions"].get(name, {}))
    return spec


def _simple(value) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value) not in _NO_VALUE_REPRS and not isinstance(value, type)
    if isinstance(value, tuple):
        return all(_simple(v) for v in value)
    return False


def _spec_of_default(value):
    if value is None:
        return "@None"
    if isinstance(value, float) and math.isinf(value):
        return "@inf" if value > 0 else "@-inf"
    if isinstance(value, tuple):
        return [_spec_of_default(v) for v in value]
    return value


class Prover:
    def __init__(self, name: str, entry: dict, grid: dict, samples: Samples, env: dict):
        self.name, self.entry, self.grid, self.samples, self.env = name, entry, grid, samples, env
        self.spec = spec_for(name, grid)
        self.np_fn = resolve(name)
        self.jax_fn = resolve(entry["jax"])
        self.np_sig = signature(self.np_fn)
        self.jax_sig = signature(self.jax_fn)
        self.renames = {jax_name: np_name for np_name, jax_name in
                        grid.get("keyword_renames", {}).get(name, {}).items()}

    # the base call
    def _jax_params(self) -> list[inspect.Parameter]:
        if self.jax_sig is None:
            return []
        return [p for p in self.jax_sig.parameters.values() if not p.name.startswith("_")]

    def _np_param(self, name: str):
        if self.np_sig is None:
            return None
        return self.np_sig.parameters.get(self.renames.get(name, name))

    def _np_takes_keywords(self) -> bool:
        return self.np_sig is not None and any(
            p.kind is p.VAR_KEYWORD for p in self.np_sig.parameters.values())

    def base_candidates(self) -> list[tuple[list, dict]]:
        kwargs = dict(self.spec.get("kwargs", {}))
        if "args" in self.spec:
            return [(list(self.spec["args"]), kwargs)]
        required = []
        nin = self.entry.get("nin")
        for p in self._jax_params():
            if p.kind in (p.VAR_KEYWORD, p.KEYWORD_ONLY) or p.default is not p.empty:
                continue
            if p.kind is p.VAR_POSITIONAL:
                if nin is not None:
                    required.extend([None] * (nin - len(required)))
                continue
            np_param = self._np_param(p.name)
            if np_param is not None and np_param.default is not np_param.empty:
                continue  # JAX requires what NumPy defaults: see jax_requires
            required.append(p.name)
        if not required and nin:
            required = [None] * nin
        fixed = {name: self.grid["required"][name][0] for name in required
                 if name in self.grid["required"]}
        candidates = []
        for data in self.grid["data_candidates"]:
            args = [fixed.get(name, data) if name is not None else data for name in required]
            candidates.append((args, dict(kwargs)))
            if all(name in fixed for name in required if name is not None) and None not in required:
                break
        return candidates

    def jax_requires(self) -> list[str]:
        """Parameters JAX requires where NumPy has a default (map_coordinates' `order`)."""
        out = []
        for p in self._jax_params():
            if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY,
                                                    p.POSITIONAL_ONLY):
                np_param = self._np_param(p.name)
                if np_param is not None and np_param.default is not np_param.empty:
                    out.append(p.name)
        return out

    def run(self, args: list, kwargs: dict, dtype=None, edge=None, jax_args=None,
            jax_float64: bool = False, weak: bool = False) -> str:
        """One verdict; `jax_args`: what JAX is given instead of `args` (made alike);
        `jax_float64`: JAX is given the `dtype` data cast to float64 (DTYPE_AS_FLOAT64)."""
        ctx_np = Context(self.samples, dtype, edge)
        np_args = [ctx_np.value(a) for a in args]
        np_kwargs = {self.renames.get(k, k): ctx_np.value(v) for k, v in kwargs.items()}
        if ctx_np.failed:
            return "n/a"
        ctx_jax = Context(self.samples, dtype, edge)
        jax_args = [ctx_jax.value(a) for a in (args if jax_args is None else jax_args)]
        jax_kwargs = {**self.spec.get("jax_kwargs", {}), **{k: ctx_jax.value(v) for k, v in kwargs.items()}}
        if jax_float64:
            np = self.samples.np

            def widened(value):
                if isinstance(value, np.ndarray) and value.dtype == np.dtype(dtype):
                    return value.astype(np.float64)
                return tuple(widened(v) for v in value) if isinstance(value, tuple) else value

            jax_args = [widened(a) for a in jax_args]
            jax_kwargs = {k: widened(v) for k, v in jax_kwargs.items()}
        then = None
        if "then" in self.spec:
            then = ([ctx_np.value(a) for a in self.spec["then"]],
                    [ctx_jax.value(a) for a in self.spec["then"]])
        return run_both(self.np_fn, self.jax_fn, np_args, np_kwargs, jax_args, jax_kwargs, then,
                        self.env, values=self.spec.get("compare") != "shape", weak=weak)

    def numpy_runs(self, args, kwargs) -> str | None:
        ctx = Context(self.samples)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _timed(self.np_fn, *[ctx.value(a) for a in args],
                       **{self.renames.get(k, k): ctx.value(v) for k, v in kwargs.items()})
        except Timeout:
            return "NumPy timed out"
        except Exception as exc:  # noqa: BLE001
            return _short(exc)
        return None

    def prove(self) -> dict:
        out: dict[str, Any] = {"jax": self.entry["jax"]}
        if self.spec.get("jax_kwargs"):  # JAX-only options every JAX run is given
            out["jax_kwargs"] = dict(self.spec["jax_kwargs"])
        base = self._base(out)
        if base is None:
            return out
        args, kwargs, required_by_jax = base
        out["call"] = self._describe(args, kwargs)
        if self.alternates:
            out["data_alternates"] = [self._describe(self._with(args, index, value), kwargs)
                                      for index, value in self.alternates]
        out["verdict"] = self.run_all(args, kwargs)
        dtypes = self.prove_dtypes(args, kwargs)
        if dtypes:
            out["dtypes"] = dtypes
            out["edges"] = {edge: self.run(args, kwargs, edge=edge) for edge in self.grid["edges"]}
        out["params"] = self.prove_params(args, kwargs, required_by_jax)
        integer_params = self.prove_integer_params(args, kwargs, required_by_jax)
        if integer_params:
            out[INTEGER_PARAMS] = integer_params
        option_dtypes = self.prove_option_dtypes(args, kwargs)
        if option_dtypes:
            out[OPTION_DTYPES] = option_dtypes
        numbers = self.prove_python_numbers(args, kwargs)
        if numbers:
            out["python_numbers"] = numbers
        out["positional"] = [p.name for p in self._jax_params()
                             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return out

    def _base(self, out: dict) -> tuple[list, dict, list] | None:
        """The base call (args, kwargs, the parameters JAX requires), or None with the
        reason in `out` (skipped, or a verdict for a callable JAX takes from NumPy)."""
        if "skip" in self.spec:
            out["skipped"] = self.spec["skip"]
            return None
        if self.np_fn is self.jax_fn:
            out["verdict"] = SAME
            out["identical"] = True
            return None
        errors = []
        base = None
        for args, kwargs in self.base_candidates():
            problem = self.numpy_runs(args, kwargs)
            if problem is None:
                base = (args, kwargs)
                break
            errors.append(problem)
        if base is None:
            out["skipped"] = f"no base call: NumPy raises {errors[-1] if errors else '?'}"
            return None
        args, kwargs = base
        required_by_jax = []
        for name in self.jax_requires():
            if name in kwargs:
                continue
            for value in self._values_for(name, required=False):
                if value != "@None" and self.run(args, {**kwargs, name: value}) == SAME:
                    kwargs[name] = value
                    break
            required_by_jax.append(name)
        self.alternates = self._alternates(args)
        if not _fine(self.run_all(args, kwargs)):
            kwargs = self._same_base(args, kwargs)
        return args, kwargs, required_by_jax

    def _int64(self, spec: str):
        """The data sample `spec` ("@v") as an int64 array, made as the dtype grid makes it."""
        np = self.samples.np
        return np.asarray(variant(self.samples.arrays[spec[1:]], "int64", None, np))

    def prove_part(self, part: str) -> dict:
        """{part: ...} of the base call alone (--part): "python_numbers" or "dtypes"."""
        out: dict[str, Any] = {}
        base = self._base(out)
        if base is None:
            return {"skipped": out["skipped"]} if "skipped" in out else {}
        args, kwargs, _ = base
        if part == "dtypes":
            found = self.prove_dtypes(args, kwargs)
        elif part == INTEGER_PARAMS:
            found = self.prove_integer_params(args, kwargs, base[2])
        elif part == OPTION_DTYPES:
            found = self.prove_option_dtypes(args, kwargs)
        else:
            found = self.prove_python_numbers(args, kwargs)
        return {part: found} if found else {}

    def prove_integer_params(self, args: list, kwargs: dict, required_by_jax: list) -> dict:
        """{parameter: {value: verdict}}: the options again, with the data cast to int64
        (np.round's decimals=-1 raises in JAX for integers; a quantile's method="lower"
        gives NumPy's integer, JAX's float); none where the call has no data."""
        if not self.prove_dtypes(args, kwargs, ("int64",)):
            return {}
        return {name: record["values"] for name, record in
                self.prove_params(args, kwargs, required_by_jax, dtype="int64").items()
                if record.get("values") and not record.get("data")}

    def prove_option_dtypes(self, args: list, kwargs: dict) -> dict:
        """{option: {dtype: verdict}}: each option that takes an array (bincount's weights,
        percentile's q) given its first array sample cast to int64, float32 and bool (NumPy
        casts bincount's weights to float64; JAX keeps int64 weights, and refuses bool ones)."""
        out: dict[str, dict] = {}
        jax_params = self._jax_params()
        positional = [p for p in jax_params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        for index, p in enumerate(positional + [p for p in jax_params if p.kind is p.KEYWORD_ONLY]):
            if p.name == "out" or (self._np_param(p.name) is None and not self._np_takes_keywords()):
                continue
            in_args = p.kind is not p.KEYWORD_ONLY and index < len(args) and p.name not in kwargs
            if not in_args and (p.kind is p.POSITIONAL_ONLY or index < len(args)):
                continue
            values = ([args[index]] if in_args else []) + self._values_for(p.name, required=in_args, defaults=False)
            sample = next((v for v in values if isinstance(v, str) and v.startswith("@")
                           and (v[1:] in self.samples.arrays or v[1:] in _LIKE_KINDS)
                           and v[1:] not in self.samples.data), None)
            if sample is None:
                continue
            verdicts = {}
            for dtype in OPTION_DTYPE_CASES:
                spec = f"@cast:{dtype}:{sample[1:]}"
                verdicts[dtype] = self.run_all(self._with(args, index, spec), kwargs) if in_args \
                    else self.run_all(args, {**kwargs, p.name: spec})
            out[p.name] = verdicts
        return out

    def prove_dtypes(self, args: list, kwargs: dict, dtypes=None) -> dict:
        """{dtype: verdict}: the base call with its data cast to each dtype of the grid
        (none where it has no data)."""
        if not any(isinstance(a, str) and a.startswith("@") and a[1:] in self.samples.data
                   for a in _flat(args)):
            return {}
        verdicts = {}
        for dtype in dtypes or self.grid["dtypes"]:
            verdict = self.run(args, kwargs, dtype=dtype)
            if verdict.startswith(DIFFERS) and dtype in WIDENED_DTYPES and self.run(
                    args, kwargs, dtype=dtype, jax_float64=True) == SAME:
                verdict = DTYPE_AS_FLOAT64  # np.cov of float32: NumPy computes in float64
            verdicts[dtype] = verdict
        return verdicts

    def prove_python_numbers(self, args: list, kwargs: dict) -> dict:
        """{parameter: {case: verdict}}: each positional data argument given as a Python
        number (an item of it, for a sequence of arrays, beside a 1-D and a 0-d array, and
        for the constructors whose grid entry says `python_numbers = "items"`, beside a 0-d
        array), and each positional number option of the base call given another number,
        the other data cast to a narrow dtype (PYTHON_NUMBERS). NumPy converts some
        of them to a 64-bit array (np.append's `values`: uint8 with 300 is int64, float32
        with 0.1 float64) where JAX keeps the number weakly typed (uint8, wrapping 300;
        float32); others it takes as weak too (np.add, np.where). Where the number as given
        differs, JAX is run again with the number as NumPy's 64-bit array (AS_ARRAY when
        that gives NumPy's result) and, for an integer, as a float64 one (AS_FLOAT_ARRAY)."""
        params = self._jax_params()
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        rest = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
        if rest is not None:  # a ufunc's `*args`: its positions' verdicts combined
            positional += [rest] * (len(args) - len(positional))
        np = self.samples.np
        out: dict[str, dict] = {}
        items = self.spec.get("python_numbers") == "items"  # np.array([x32[0], 0.1])
        for index, spec in enumerate(args[:len(positional)]):
            integers = None  # the int64 arrays given in its place (INT_ARRAY_CASE)
            if self._is_data(spec) and spec[1:] in self.samples.data and items:
                def places(number, index=index):
                    return [self._with(args, index, ["@s", number])]
                integers = [self._with(args, index, ["@s", self._int64("@s")])]
            elif self._is_data(spec) and spec[1:] in self.samples.data:
                def places(number, index=index):
                    return [self._with(args, index, number)]
                integers = [self._with(args, index, self._int64(spec))]
            elif isinstance(spec, (list, tuple)) and spec and all(
                    self._is_data(item) and item[1:] in self.samples.data for item in spec):
                def places(number, index=index):
                    return [self._with(args, index, [item, number]) for item in ("@v", "@s")]
                integers = [self._with(args, index, [item, self._int64(item)]) for item in ("@v", "@s")]
            elif type(spec) in (int, float) and any(
                    self._is_data(a) and a[1:] in self.samples.data for a in args):
                # a number option beside the data (full_like's fill_value, insert's index):
                # NumPy raises OverflowError for 300 into uint8 data, JAX wraps it
                def places(number, index=index):
                    return [self._with(args, index, number)]
            else:
                continue
            cases = {}
            if integers is not None:
                # an int64 array beside float32 data: NumPy computes in float64, JAX in float32
                verdict = worst([self.run(given, kwargs, dtype="float32") for given in integers])
                if not _fine(verdict) and verdict != RAISES:
                    as_float = [[a.astype(np.float64) if isinstance(a, np.ndarray) else
                                 [i.astype(np.float64) if isinstance(i, np.ndarray) else i for i in a]
                                 if isinstance(a, list) else a for a in given] for given in integers]
                    if worst([self.run(given, kwargs, dtype="float32", jax_args=jax_given)
                              for given, jax_given in zip(integers, as_float)]) == SAME:
                        verdict = AS_FLOAT_ARRAY
                cases[INT_ARRAY_CASE] = verdict
            for number, dtype in PYTHON_NUMBERS:
                verdict = worst([self.run(given, kwargs, dtype=dtype) for given in places(number)])
                if not _fine(verdict) and verdict != RAISES:
                    wraps = [(AS_ARRAY, np.asarray(number))]
                    if isinstance(number, int):
                        wraps.append((AS_FLOAT_ARRAY, np.asarray(float(number))))
                    for name, array in wraps:
                        if worst([self.run(given, kwargs, dtype=dtype, jax_args=jax_given)
                                  for given, jax_given in zip(places(number), places(array))]) == SAME:
                            verdict = name
                            break
                cases[f"{number!r} beside {dtype}"] = verdict
            name = positional[index]
            out[name] = {case: _combined(out[name].get(case, verdict), verdict)
                         for case, verdict in cases.items()} if name in out else cases
        data = [i for i, spec in enumerate(args) if self._is_data(spec) and spec[1:] in self.samples.data]
        if data:  # `np.sqrt(2.5)`: NumPy's float64 scalar, JAX's weakly typed one
            alone = [2.5 if i in data else a for i, a in enumerate(args)]
            verdict = self.run(alone, kwargs, weak=True)
            if verdict == f"{DIFFERS}: {WEAKLY_TYPED}":
                as_array = [np.asarray(2.5) if i in data else a for i, a in enumerate(args)]
                if self.run(alone, kwargs, jax_args=as_array, weak=True) == SAME:
                    verdict = AS_ARRAY
            out[NUMBERS_ALONE] = {ALONE_CASE: verdict}
        return out

    def _same_base(self, args: list, kwargs: dict) -> dict:
        """Where the call with NumPy's defaults differs (map_coordinates' mode='constant' on
        points outside the grid), a base that does not, so that each parameter is proven on
        its own: the first value of each option that makes the call the same is kept."""
        positional = [p.name for p in self._jax_params()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:len(args)]
        for p in self._jax_params():
            if p.name in positional or p.name in kwargs or p.name == "out" or \
                    p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is p.empty:
                continue
            np_param = self._np_param(p.name)
            if np_param is None or np_param.kind is np_param.POSITIONAL_ONLY:
                continue
            for value in self._values_for(p.name, required=False):
                if self.run_all(args, {**kwargs, p.name: value}) == SAME:
                    return {**kwargs, p.name: value}
        return kwargs

    def _is_data(self, value) -> bool:
        return isinstance(value, str) and value.startswith("@") and value[1:] in self.samples.arrays

    def _alternates(self, args: list) -> list[tuple[int, Any]]:
        """The base call with other data in a positional argument (indices past the end,
        coordinates outside the grid): data the program chooses at run time, so every
        other verdict covers them too."""
        alternates = []
        positional = [p for p in self._jax_params()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        for index, p in enumerate(positional[:len(args)]):
            values = self._values_for(p.name, required=True, defaults=False)
            if len(values) > 1 and all(self._is_data(v) for v in values) and self._is_data(args[index]):
                alternates.extend((index, value) for value in values
                                  if key_of(value) != key_of(args[index]))
        return alternates

    def run_all(self, args: list, kwargs: dict, dtype=None) -> str:
        """The verdict of a call and of its data alternates together: the worst."""
        verdicts = [self.run(args, kwargs, dtype=dtype)]
        for index, value in self.alternates:
            if index < len(args) and self._is_data(args[index]):
                verdicts.append(self.run(self._with(args, index, value), kwargs, dtype=dtype))
        return worst(verdicts)

    def _describe(self, args, kwargs) -> str:
        parts = [key_of(a) for a in args] + [f"{k}={key_of(v)}" for k, v in kwargs.items()]
        return f"{self.name.rsplit('.', 1)[-1]}({', '.join(parts)})"

    def _values_for(self, name: str, required: bool, defaults: bool = True) -> list:
        own = self.spec.get("params", {})
        if name in own:
            values = list(own[name])
        elif required and name in self.grid["required"]:
            values = list(self.grid["required"][name])
        elif required:
            values = []
        else:
            values = list(self.grid["values"].get(name, []))
        # NumPy's default (JAX's may be a value NumPy does not take: where=None)
        p = self._np_param(name)
        if defaults and p is not None and p.default is not p.empty and _simple(p.default):
            values.append(_spec_of_default(p.default))
            if isinstance(p.default, bool):
                values.append(not p.default)
        seen, unique = set(), []
        for value in values:
            key = key_of(value)
            if key not in seen:
                seen.add(key)
                unique.append(value)
        return unique

    def prove_params(self, args: list, kwargs: dict, required_by_jax: list, dtype=None) -> dict:
        """{parameter: record}: each parameter JAX's version has given each value of the
        grid (its "values"), with the base call's data, or that data cast to `dtype`."""
        params: dict[str, dict] = {}
        jax_params = self._jax_params()
        positional = [p for p in jax_params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        np_keywords = self._np_takes_keywords()
        for index, p in enumerate(positional + [p for p in jax_params if p.kind is p.KEYWORD_ONLY]):
            if p.name == "out":
                continue
            np_param = self._np_param(p.name)
            if np_param is None and not np_keywords:
                continue  # NumPy has no such parameter: nobody passes it
            record: dict[str, Any] = {}
            in_args = p.kind is not p.KEYWORD_ONLY and index < len(args) and p.name not in kwargs
            if in_args and self._is_data(args[index]):
                # data: proven by the dtypes, edges and alternates of the base call
                record["data"] = True
                values = self._values_for(p.name, required=True, defaults=False)
                if len(values) > 1:
                    record["values"] = {key_of(v): self.run(self._with(args, index, v), kwargs)
                                        for v in values}
                params[p.name] = record
                continue
            values = self._values_for(p.name, required=in_args)
            if in_args and key_of(args[index]) not in {key_of(v) for v in values}:
                values.insert(0, args[index])  # the base call's own value
            results = {}
            positional_only = (p.kind is p.POSITIONAL_ONLY or
                               (np_param is not None and np_param.kind is np_param.POSITIONAL_ONLY))
            for value in values:
                if in_args:
                    results[key_of(value)] = self.run_all(self._with(args, index, value), kwargs, dtype)
                elif positional_only:
                    if index == len(args):
                        results[key_of(value)] = self.run_all(list(args) + [value], kwargs, dtype)
                else:
                    results[key_of(value)] = self.run_all(args, {**kwargs, p.name: value}, dtype)
            if not in_args and p.name in kwargs:
                results[OMITTED] = self.run_all(args, {k: v for k, v in kwargs.items() if k != p.name}, dtype)
                if p.name in required_by_jax:
                    record["required_by_jax"] = True
            if in_args:
                record["required"] = True
            if np_param is not None and np_param.default is not np_param.empty and \
                    _simple(np_param.default):
                record["numpy_default"] = key_of(_spec_of_default(np_param.default))
            record["values"] = results
            params[p.name] = record
        for p in jax_params:  # *varargs: gradient's spacings
            if p.kind is p.VAR_POSITIONAL and self.entry.get("nin") is None:
                values = self._values_for(p.name, required=False, defaults=False)
                if values:
                    params[p.name] = {"var_positional": True, "values": {
                        key_of(v): self.run_all(list(args) + [v], kwargs, dtype) for v in values}}
        # options both take through **kwargs, named by the grid (np.pad's constant_values)
        for name, values in self.spec.get("keywords", {}).items():
            params[name] = {"keyword": True, "values": {
                key_of(v): self.run_all(args, {**kwargs, name: v}, dtype) for v in values}}
        return params

    @staticmethod
    def _with(args: list, index: int, value) -> list:
        new = list(args)
        new[index] = value
        return new


def _fine(verdict: str) -> bool:
    return verdict == SAME or verdict.startswith(NUMPY_RAISES)


def _combined(first: str, second: str) -> str:
    """One verdict for a Python number given at either of two positions of `*args`: a
    wrapping (AS_ARRAY) proven at one position only proves nothing for the other."""
    if first == second or first.startswith(DIFFERS):
        return first
    if second.startswith(DIFFERS):
        return second
    return f"{DIFFERS}: by position, {first}; {second}"


def worst(verdicts: list[str]) -> str:
    for prefix in (DIFFERS, NUMPY_RAISES, SAME):
        for verdict in verdicts:
            if verdict.startswith(prefix):
                return verdict
    return verdicts[0]


def _flat(values):
    for value in values:
        if isinstance(value, list):
            yield from _flat(value)
        else:
            yield value


# --- ufunc methods -------------------------------------------------------------------------------


def method_entries(table: dict) -> dict[str, dict]:
    """numpy.add.reduce & co.: the methods JAX's ufunc has too."""
    out = {}
    for name, entry in table.items():
        if entry.get("kind") == "ufunc" and entry.get("jax"):
            for method in entry.get("jax_methods", ()):
                if method in UFUNC_METHODS and entry.get("nin") == 2:
                    out[f"{name}.{method}"] = {"jax": f"{entry['jax']}.{method}", "kind": "method",
                                               "method": method}
    return out


# --- the whole table -----------------------------------------------------------------------------


def _environment(cache: str | None = None):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    warnings.simplefilter("ignore")
    import jax
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    if cache:  # XLA's compilations are most of the run: a second run reads them from disk
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    np.seterr(all="ignore")
    return {"np": np, "jax": jax}


_WORKER: dict = {}


def _init_worker(grid: dict, cache: str | None = None) -> None:
    env = _environment(cache)
    _WORKER.update(env=env, grid=grid, samples=Samples(grid, env["np"]))


def prove_one(name: str, entry: dict) -> tuple[str, dict, float]:
    start = time.perf_counter()
    grid, env, samples = _WORKER["grid"], _WORKER["env"], _WORKER["samples"]
    if entry.get("kind") == "method":
        grid = dict(grid, functions={**grid["functions"], name: _method_spec(entry["method"])})
    try:
        prover = Prover(name, entry, grid, samples, env)
        result = prover.prove_part(grid["part"]) if grid.get("part") else prover.prove()
    except Exception as exc:  # noqa: BLE001 - a bug of the grid for one callable
        result = {"jax": entry["jax"], "skipped": f"the generator failed: {_short(exc)}"}
    return name, result, time.perf_counter() - start


def _method_spec(method: str) -> dict:
    return {"outer": {"args": ["@v3", "@v4"]},
            "reduceat": {"args": ["@v", "@segments"], "params": {"indices": ["@segments"]}}
            }.get(method, {"args": ["@M"]})


def callables(table: dict) -> dict[str, dict]:
    chosen = {name: entry for name, entry in table.items()
              if entry.get("jax") and entry.get("kind") in ("function", "ufunc", "class", "dtype")}
    chosen.update(method_entries(table))
    return chosen


_NO_COUNTS = {SAME: 0, DIFFERS: 0, RAISES: 0, NUMPY_RAISES: 0}  # a table older than a part


def _bucket(verdict: str) -> str | None:
    """same, differs, raises (both) or numpy raises (JAX returns where NumPy raises)."""
    if verdict in (SAME, RAISES, AS_ARRAY, AS_FLOAT_ARRAY, DTYPE_AS_FLOAT64):
        return verdict
    if verdict.startswith(NUMPY_RAISES):
        return NUMPY_RAISES
    return DIFFERS if verdict.startswith(DIFFERS) else None


def summarize(results: dict) -> dict:
    """The counts a run proved: callables (proven, or skipped with the reason why), their
    base calls' verdicts, parameters (same for every value tried, for some, for none), and
    the verdicts of parameter values, dtypes and edge values."""
    def buckets():
        return {SAME: 0, DIFFERS: 0, RAISES: 0, NUMPY_RAISES: 0}

    counts = {"callables": len(results), "proven": 0, "skipped": 0,
              "verdicts": buckets(),
              "parameters": {SAME: 0, DIFFERS: 0, "partly": 0},
              "parameter_values": buckets(), "dtypes": dict(buckets(), **{DTYPE_AS_FLOAT64: 0}),
              "edges": buckets(),
              INTEGER_PARAMS: buckets(), OPTION_DTYPES: buckets(),
              "python_numbers": dict(buckets(), **{AS_ARRAY: 0, AS_FLOAT_ARRAY: 0})}
    for result in results.values():
        if "skipped" in result:
            counts["skipped"] += 1
            continue
        counts["proven"] += 1
        counts["verdicts"][_bucket(result["verdict"]) or DIFFERS] += 1
        for cases in result.get("python_numbers", {}).values():
            for verdict in cases.values():
                if _bucket(verdict):
                    counts["python_numbers"][_bucket(verdict)] += 1
        for part in ("dtypes", "edges"):
            for verdict in result.get(part, {}).values():
                if _bucket(verdict):
                    counts[part][_bucket(verdict)] += 1
        for part in (INTEGER_PARAMS, OPTION_DTYPES):
            for values in result.get(part, {}).values():
                for verdict in values.values():
                    if _bucket(verdict):
                        counts[part][_bucket(verdict)] += 1
        for record in result.get("params", {}).values():
            verdicts = [_bucket(v) for v in record.get("values", {}).values() if _bucket(v)]
            for verdict in verdicts:
                counts["parameter_values"][verdict] += 1
            if record.get("data") or not verdicts:
                continue
            if DIFFERS not in verdicts:
                counts["parameters"][SAME] += 1
            elif any(v != DIFFERS for v in verdicts):
                counts["parameters"]["partly"] += 1
            else:
                counts["parameters"][DIFFERS] += 1
    return counts


def describe(provenance: dict) -> str:
    """The run time and the counts of a table's provenance, as lines to print."""
    summary = provenance["summary"]

    def line(label, counts):
        return f"  {label:<18} same {counts[SAME]}, different {counts[DIFFERS]}, both raise " \
               f"{counts[RAISES]}, only NumPy raises {counts[NUMPY_RAISES]}"

    parameters = summary["parameters"]
    return "\n".join([
        f"ran {summary['callables']} callables in {provenance['run_seconds']} s "
        f"({provenance['jobs']} jobs, {provenance['cpu_seconds']} CPU s): "
        f"{summary['proven']} proven, {summary['skipped']} skipped",
        line("base calls:", summary["verdicts"]),
        f"  {'parameters:':<18} {sum(parameters.values())} options: same for every value "
        f"{parameters[SAME]}, for some {parameters['partly']}, for none {parameters[DIFFERS]}",
        line("option values:", summary["parameter_values"]),
        line("dtypes:", summary["dtypes"])
        + f", same as float64 data {summary['dtypes'].get(DTYPE_AS_FLOAT64, 0)}",
        line("edge values:", summary["edges"]),
        line("options, int64:", summary.get(INTEGER_PARAMS, _NO_COUNTS)),
        line("array options:", summary.get(OPTION_DTYPES, _NO_COUNTS)),
        line("Python numbers:", summary["python_numbers"])
        + f", same as a 64-bit array {summary['python_numbers'][AS_ARRAY]}, as a float64 "
          f"array {summary['python_numbers'][AS_FLOAT_ARRAY]}",
    ] + [f"  ({PART_NAMES[part]} run apart in {provenance[part]['run_seconds']} s, "
         f"{provenance[part]['date']}: --part {part.replace('_', '-')})"
         for part in PARTS if part in provenance])


def build(jobs: int, only: list[str] | None = None, log=print, cache: str | None = None,
          partial: Path | None = None, part: str | None = None) -> dict:
    start = time.perf_counter()
    grid_text = GRID_PATH.read_text(encoding="utf-8")
    grid = tomllib.loads(grid_text)
    grid["part"] = part
    policy = tomllib.loads((ROOT / "rules" / "api" / "policy.toml").read_text(encoding="utf-8"))
    grid["keyword_renames"] = policy.get("keyword_renames", {})
    table = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
    todo = callables(table["entries"])
    if only:
        todo = {k: v for k, v in todo.items() if any(fnmatch.fnmatchcase(k, p) for p in only)}
    results: dict[str, dict] = {}
    timings: dict[str, float] = {}
    if partial is not None and partial.exists():  # --resume: what an interrupted run proved
        for line in partial.read_text(encoding="utf-8").splitlines():
            name, result, seconds = json.loads(line)
            if name in todo:
                results[name], timings[name] = result, seconds
        log(f"resuming: {len(results)} callables already proven")
    pending = [(name, entry) for name, entry in todo.items() if name not in results]
    with open(partial, "a", encoding="utf-8") if partial is not None else _NoFile() as sink:
        for name, result, seconds in _run_pool(pending, jobs, grid, cache, log, len(todo), start,
                                               done=len(results)):
            results[name], timings[name] = result, seconds
            sink.write(json.dumps([name, result, seconds]) + "\n")
            sink.flush()
    import jax
    import jaxlib
    import numpy
    import scipy

    seconds = time.perf_counter() - start
    slowest = sorted(timings.items(), key=lambda item: -item[1])[:10]
    return {
        "provenance": {
            "generated_by": "python -m np2jax.apiproof",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "versions": {"numpy": numpy.__version__, "scipy": scipy.__version__,
                         "jax": jax.__version__, "jaxlib": jaxlib.__version__,
                         "python": platform.python_version()},
            "platform": f"{platform.system()} {platform.machine()}, JAX on CPU, jax_enable_x64",
            "run_seconds": round(seconds, 1),
            "cpu_seconds": round(_cpu_seconds(), 1),
            "jobs": jobs,
            "compilation_cache": bool(cache),
            "slowest": {name: round(s, 1) for name, s in slowest},
            "grid": {"file": "rules/api/proof_grid.toml",
                     "sha256": hashlib.sha256(grid_text.encode()).hexdigest(),
                     "dtypes": grid["dtypes"], "edges": grid["edges"],
                     "python_numbers": [f"{n!r} beside {d}" for n, d in PYTHON_NUMBERS]
                     + [INT_ARRAY_CASE], INTEGER_PARAMS: ["int64"],
                     OPTION_DTYPES: list(OPTION_DTYPE_CASES)},
            "tolerances": {k: {"rtol": r, "atol": a} for k, (r, a) in TOLERANCES.items()},
            "verdicts": "same: equal values, dtype, shape and structure; raises: both raise; "
                        "differs: why. Parameter values are keyed by their repr ('wrap', 2, None, "
                        "(0, 1)); <omitted>: the call without it.",
            "only": only or None,
            "summary": None if part else summarize(results),
        },
        "callables": dict(sorted(results.items())),
    }


def merge_part(table: dict, run: dict, part: str) -> dict:
    """`table` with the `part` verdicts ("python_numbers", "dtypes") of `run` (a --part
    build) in place of its own, the run's time and versions recorded beside the table's
    provenance."""
    callables_ = table["callables"]
    for name, result in run["callables"].items():
        entry = callables_.get(name)
        if entry is None or "skipped" in entry:
            continue
        entry.pop(part, None)
        if result.get(part):
            entry[part] = result[part]
    provenance = table["provenance"]
    provenance[part] = {
        key: run["provenance"][key] for key in ("date", "versions", "run_seconds", "cpu_seconds",
                                                "jobs", "only")}
    provenance[part]["generated_by"] = f"python -m np2jax.apiproof --part {part.replace('_', '-')}"
    provenance[part]["grid_sha256"] = run["provenance"]["grid"]["sha256"]
    provenance["grid"][part] = run["provenance"]["grid"][part]
    provenance["summary"] = summarize(callables_)
    return table


def merge_callables(table: dict, run: dict) -> dict:
    """`table` with the callables of `run` (an --only build) proven again in place of its
    own; the run is recorded in the provenance's `merged` list, the summary recounted."""
    table["callables"].update(run["callables"])
    table["callables"] = dict(sorted(table["callables"].items()))
    provenance = table["provenance"]
    provenance.setdefault("merged", []).append({
        key: run["provenance"][key] for key in ("date", "versions", "run_seconds", "only")}
        | {"grid_sha256": run["provenance"]["grid"]["sha256"]})
    provenance["summary"] = summarize(table["callables"])
    return table


class _NoFile:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def write(self, _text):
        pass

    def flush(self):
        pass


def _worker_main(connection, grid: dict, cache: str | None) -> None:
    _init_worker(grid, cache)
    while True:
        task = connection.recv()
        if task is None:
            return
        connection.send(prove_one(*task))


def _run_pool(pending: list, jobs: int, grid: dict, cache, log, total: int, start: float, done: int):
    """Each callable in one of `jobs` worker processes; a worker that takes longer than
    CALLABLE_TIMEOUT_S over one callable (a hang in compiled code, which no signal can
    interrupt) is killed and replaced, and the callable recorded as timed out. A worker is
    replaced after TASKS_PER_WORKER callables too: JAX's caches grow with each."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    queue = list(reversed(pending))
    workers: list[dict] = []

    def start_worker():
        parent, child = context.Pipe()
        process = context.Process(target=_worker_main, args=(child, grid, cache), daemon=True)
        process.start()
        return {"process": process, "pipe": parent, "task": None, "since": 0.0, "count": 0}

    def assign(worker):
        if queue:
            worker["task"] = queue.pop()
            worker["since"] = time.perf_counter()
            worker["pipe"].send(worker["task"])
            return True
        return False

    for _ in range(min(jobs, len(queue))):
        worker = start_worker()
        workers.append(worker)
        assign(worker)
    while any(w["task"] is not None for w in workers):
        ready = multiprocessing.connection.wait([w["pipe"] for w in workers if w["task"] is not None],
                                                timeout=5)
        for worker in list(workers):
            if worker["task"] is None:
                continue
            name, entry = worker["task"]
            failed = None
            if worker["pipe"] in ready:
                try:
                    yield worker["pipe"].recv()
                except EOFError:
                    failed = "the process crashed"
            elif not worker["process"].is_alive():
                failed = "the process crashed"
            elif time.perf_counter() - worker["since"] > CALLABLE_TIMEOUT_S:
                failed = f"timed out after {CALLABLE_TIMEOUT_S} s"
            else:
                continue
            done += 1
            if done % 50 == 0:
                log(f"{done}/{total} ({time.perf_counter() - start:.0f} s)")
            worker["task"] = None
            worker["count"] += 1
            if failed is not None:
                yield name, {"jax": entry["jax"], "skipped": failed}, time.perf_counter() - worker["since"]
            if failed is not None or worker["count"] >= TASKS_PER_WORKER:
                _stop(worker)
                workers[workers.index(worker)] = worker = start_worker()
            if not assign(worker):
                _stop(worker)
    for worker in workers:
        _stop(worker)


def _stop(worker: dict) -> None:
    process = worker["process"]
    if process.is_alive():
        try:
            worker["pipe"].send(None)
        except (BrokenPipeError, OSError):
            pass
        process.join(2)
    if process.is_alive():
        process.kill()
        process.join()


def _cpu_seconds() -> float:
    """This process's and its finished workers' CPU time."""
    import resource

    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def dump(table: dict) -> str:
    return json.dumps(table, sort_keys=True, indent=0, separators=(",", ":")) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", nargs="*", help="fnmatch patterns of the callables to run "
                        "(merged into the table at --out when there is one)")
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "np2jax-apiproof"),
                        help="JAX's persistent compilation cache ('' for none): most of a run "
                             "is XLA compiling, which a second run reads from there")
    parser.add_argument("--resume", action="store_true",
                        help="keep what the interrupted run into the same --out proved")
    parser.add_argument("--part", choices=[p.replace("_", "-") for p in PARTS],
                        help="prove only this part (Python numbers given for data arguments, "
                             "the data cast to each dtype of the grid, or the options again on "
                             "int64 data) and merge the verdicts into the table at --out (a "
                             "fraction of a full run)")
    args = parser.parse_args(argv)
    part = args.part.replace("-", "_") if args.part else None
    partial = args.out.with_name(args.out.name + ".partial")
    if not args.resume and partial.exists():
        partial.unlink()
    table = build(args.jobs, args.only, log=lambda m: print(m, file=sys.stderr, flush=True),
                  cache=args.cache or None, partial=partial,
                  part=part)
    if part:
        table = merge_part(json.loads(args.out.read_text(encoding="utf-8")), table, part)
    elif args.only and args.out.exists():
        table = merge_callables(json.loads(args.out.read_text(encoding="utf-8")), table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dump(table))
    partial.unlink(missing_ok=True)
    print(f"wrote {args.out}")
    print(describe(table["provenance"]))


if __name__ == "__main__":
    main()
