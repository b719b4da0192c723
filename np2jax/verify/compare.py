"""Compare two result trees (dicts, lists, tuples, dataclasses, scalars, arrays) with
dtype-aware tolerances.

`compare_trees` returns one `OutputComparison` a compared leaf: its shape, both dtypes, the
largest absolute and relative error, the index where it is worst and whether it is equal.
`compare_values` is the one-line form (None when equal) that the tests of the converter use
in-process.

Leaves may be values from this process (NumPy or JAX arrays, numbers, strings) or `Leaf` and
`Opaque` values decoded from a verifier child (see `decode`), which keep where an array came
from (NumPy or JAX) and its dtype's name (bfloat16 travels as float32).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from np2jax.verify.stats import KS_ALPHA, ks_2samp, moments

# (rtol, atol) by precision. Integers and booleans are compared exactly. float64's leaves room
# for XLA's reordered sums and fused operations (a few thousand ulps, seen at 1e-12 on a
# phase folded from 2.46e6-day dates) while float32's error (1e-7) still fails it.
TOLERANCES = {
    "float8": (1.25e-1, 1e-1),
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-2, 1e-2),
    "float32": (2e-5, 1e-6),
    "float64": (1e-9, 1e-12),
}
_ORDER = ["float64", "float32", "float16", "bfloat16", "float8"]  # most precise first


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """How floats are judged. By default by the less precise of the two dtypes.

    floor32: never tighter than float32 (the verifier without --x64: JAX computes in float32,
    also where it hands back a Python float or where the converted program kept a float64
    NumPy array fed by JAX results). x64: by the original's precision, so that a float32
    result where NumPy had float64 fails. rtol/atol: fixed values, overriding the table."""

    rtol: float | None = None
    atol: float | None = None
    x64: bool = False
    floor32: bool = False

    def pick(self, dtype_original: str, dtype_converted: str) -> tuple[float, float]:
        if self.x64:
            name = _precision(dtype_original) if _is_inexact(dtype_original) else "float64"
        else:
            name = max((_precision(dtype_original), _precision(dtype_converted)), key=_ORDER.index)
            if self.floor32:
                name = max((name, "float32"), key=_ORDER.index)
        rtol, atol = TOLERANCES[name]
        return (rtol if self.rtol is None else self.rtol, atol if self.atol is None else self.atol)


def _is_inexact(dtype: str) -> bool:
    return dtype.startswith(("float", "complex", "bfloat")) or dtype == "longdouble"


def _precision(dtype: str) -> str:
    if dtype.startswith("complex"):
        bits = int("".join(ch for ch in dtype if ch.isdigit()) or 128)
        return "float32" if bits <= 64 else "float64"
    if dtype.startswith(("float8_", "float6_", "float4_")):
        return "float8"
    if dtype in TOLERANCES:
        return dtype
    return "float64"  # float (Python), longdouble, integers, booleans


@dataclasses.dataclass
class Leaf:
    """An array or number decoded from a child: `value` is a NumPy array (0-d for scalars) or a
    Python number; `origin` is "numpy", "jax" or "python"; `dtype` the original dtype's name."""

    value: Any
    origin: str
    dtype: str
    scalar: bool = False


@dataclasses.dataclass(frozen=True)
class Opaque:
    """An object the child could only describe: compared by its type and repr."""

    type_name: str
    text: str


@dataclasses.dataclass
class OutputComparison:
    name: str
    equal: bool
    shape: tuple | None = None
    dtype_original: str | None = None
    dtype_converted: str | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    worst_index: tuple | None = None
    note: str | None = None
    stochastic: bool = False
    converted_origin: str | None = None
    device: str | None = None

    def problem(self) -> str | None:
        """None when equal, else one line."""
        if self.equal:
            return None
        parts = [self.note] if self.note else []
        if self.max_abs_err is not None and not self.stochastic:
            where = f" at {list(self.worst_index)}" if self.worst_index else ""
            parts.append(f"max abs error {self.max_abs_err:.3g}{where}, "
                         f"max rel error {_fmt(self.max_rel_err)}")
        return f"{self.name}: " + ("; ".join(parts) or "differs")

    def as_dict(self) -> dict:
        return {"name": self.name, "shape": list(self.shape) if self.shape is not None else None,
                "dtype_original": self.dtype_original, "dtype_converted": self.dtype_converted,
                "max_abs_err": _finite(self.max_abs_err), "max_rel_err": _finite(self.max_rel_err),
                "worst_index": list(self.worst_index) if self.worst_index is not None else None,
                "equal": self.equal, "stochastic": self.stochastic, "note": self.note,
                "converted_origin": self.converted_origin, "device": self.device}


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _finite(value):
    """JSON has no inf or NaN: those become null (the note says why)."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


# -- decoding what a child sent ------------------------------------------------------------

def decode(node):
    """The tagged tuples written by the child (see _child._encode) as a plain tree."""
    tag = node[0]
    if tag == "none":
        return None
    if tag == "str":
        return node[1]
    if tag == "scalar":
        _, origin, dtype, value = node
        return Leaf(value, origin, dtype, scalar=True)
    if tag == "array":
        _, origin, dtype, value, scalar = node
        return Leaf(value, origin, dtype, scalar=scalar)
    if tag == "dict":
        return {key: decode(item) for key, item in node[1]}
    if tag == "dataclass":
        return {name: decode(item) for name, item in node[2]}
    if tag in ("list", "tuple"):
        items = [decode(item) for item in node[1]]
        return items if tag == "list" else tuple(items)
    if tag == "object":
        return Opaque(node[1], node[2])
    raise ValueError(f"unknown node {tag!r}")


# -- leaves --------------------------------------------------------------------------------

def _is_jax_array(value) -> bool:
    module = type(value).__module__ or ""
    return (module.startswith(("jax", "jaxlib")) and hasattr(value, "shape")
            and hasattr(value, "dtype") and hasattr(value, "__array__"))


def _plain(value):
    if isinstance(value, Leaf):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _leaves_of(value):
    if isinstance(value, Leaf):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves_of(item)


def _array_info(value):
    """(array, origin, dtype name) when `value` is numeric or a string array, else None."""
    if isinstance(value, Leaf):
        array = np.asarray(value.value)
        return array, value.origin, value.dtype
    if isinstance(value, (str, bytes, Mapping, Opaque)) or value is None:
        return None
    if isinstance(value, (np.ndarray, np.generic)):  # before Python numbers: np.float64 is a float
        array = np.asarray(value)
        return (array, "numpy", str(array.dtype)) if array.dtype.kind in "biufcUS" else None
    if isinstance(value, (bool, int, float, complex)):
        return np.asarray(value), "python", type(value).__name__
    if _is_jax_array(value):
        try:
            array = np.asarray(value)
        except Exception:  # noqa: BLE001 - e.g. PRNG keys
            return None
        name = str(getattr(value, "dtype", array.dtype))
        if array.dtype.kind == "V":
            array = array.astype(np.float32)
        return array, "jax", name
    if isinstance(value, (list, tuple)):
        if not value or any(isinstance(x, (str, bytes, Mapping, Opaque)) or x is None
                            for x in value):
            return None
        try:
            array = np.asarray(_plain(value))
        except Exception:  # noqa: BLE001 - ragged, or objects NumPy cannot take
            return None
        if array.dtype.kind not in "biufc":
            return None
        leaves = list(_leaves_of(value))
        names = {leaf.dtype for leaf in leaves}
        origin = "jax" if any(leaf.origin == "jax" for leaf in leaves) else (
            leaves[0].origin if leaves else "python")
        dtype = names.pop() if len(names) == 1 and len(leaves) == array.size else str(array.dtype)
        if _is_any_jax(value):
            origin = "jax"
        return array, origin, dtype
    return None


def _is_any_jax(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_is_any_jax(item) for item in value)
    return _is_jax_array(value)


# -- the comparison ------------------------------------------------------------------------

def _child_name(parent: str, key) -> str:
    if parent == "":
        return key if isinstance(key, str) else repr(key)
    return f"{parent}[{key!r}]"


def _as_mapping(value):
    if isinstance(value, (Leaf, Opaque)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return value


class _Walker:
    def __init__(self, tolerance: Tolerance, stochastic: Mapping[str, float] | None,
                 ignore_extra_root_keys: bool):
        self.tolerance = tolerance
        self.stochastic = dict(stochastic or {})
        self.ignore_extra_root_keys = ignore_extra_root_keys
        self.out: list[OutputComparison] = []

    def add(self, **fields) -> None:
        self.out.append(OutputComparison(**fields))

    def walk(self, name: str, ref, got, depth: int = 0) -> None:
        ref, got = _as_mapping(ref), _as_mapping(got)
        if name == "" and not isinstance(ref, Mapping):
            name = "result"  # main() returned one value
        if name in self.stochastic:
            self.out.append(compare_stochastic(name, ref, got, self.stochastic[name]))
            return
        if isinstance(ref, Mapping):
            if not isinstance(got, Mapping):
                self.add(name=name or "result", equal=False,
                         note=f"the original is a dict, the converted a {type(got).__name__}")
                return
            for key in ref:
                child = _child_name(name, key)
                if key not in got:
                    self.add(name=child, equal=False, note="missing from the converted results",
                             **_describe(ref[key], "original"))
                else:
                    self.walk(child, ref[key], got[key], depth + 1)
            if not (self.ignore_extra_root_keys and depth == 0):
                for key in got:
                    if key not in ref:
                        self.add(name=_child_name(name, key), equal=False,
                                 note="only in the converted results",
                                 **_describe(got[key], "converted"))
            return
        name = name or "result"
        if isinstance(ref, (str, bytes)) or ref is None:
            self._equality(name, ref, got)
            return
        a, b = _array_info(ref), _array_info(got)
        if a is not None and b is not None:
            self.out.append(compare_arrays(name, a, b, self.tolerance))
            return
        if isinstance(ref, (list, tuple)) and isinstance(got, (list, tuple)):
            if len(ref) != len(got):
                self.add(name=name, equal=False, note=f"length {len(ref)} != {len(got)}")
                return
            for index, (x, y) in enumerate(zip(ref, got)):
                self.walk(f"{name}[{index}]", x, y, depth + 1)
            return
        self._equality(name, ref, got)

    def _equality(self, name, ref, got) -> None:
        try:
            same = bool(ref == got)
        except Exception:  # noqa: BLE001 - ambiguous truth values and the like
            same = False
        note = None if same else f"{_short(ref)} != {_short(got)}"
        self.add(name=name, equal=same, note=note, dtype_original=type(ref).__name__,
                 dtype_converted=type(got).__name__)


def _short(value) -> str:
    text = repr(value.text if isinstance(value, Opaque) else value)
    return text if len(text) <= 80 else text[:77] + "..."


def _describe(value, side: str) -> dict:
    info = _array_info(_as_mapping(value))
    if info is None:
        return {}
    return {"shape": info[0].shape, f"dtype_{side}": info[2]}


def compare_arrays(name: str, a_info, b_info, tolerance: Tolerance) -> OutputComparison:
    (a, _, dtype_a), (b, origin_b, dtype_b) = a_info, b_info
    result = OutputComparison(name=name, equal=True, shape=a.shape, dtype_original=dtype_a,
                              dtype_converted=dtype_b, converted_origin=origin_b)
    notes = []
    if dtype_a != dtype_b and not ({dtype_a, dtype_b} <= {"float", "float64"}
                                   or {dtype_a, dtype_b} <= {"int", "int64"}
                                   or {dtype_a, dtype_b} <= {"bool"}):
        notes.append(f"dtype {dtype_a} -> {dtype_b}")
    if a.shape != b.shape:
        result.equal = False
        result.note = "; ".join([f"shape {a.shape} != {b.shape}", *notes])
        return result
    if a.dtype.kind in "USV" or b.dtype.kind in "USV":
        result.equal = bool(a.dtype.kind == b.dtype.kind and np.array_equal(a, b))
        if not result.equal:
            mismatch = np.argwhere(a != b) if a.dtype.kind == b.dtype.kind else []
            result.worst_index = tuple(int(i) for i in mismatch[0]) if len(mismatch) and a.ndim else None
            notes.append("values differ")
        result.note = "; ".join(notes) or None
        return result
    if a.size == 0:
        result.max_abs_err = result.max_rel_err = 0.0
        result.note = "; ".join(notes) or None
        return result
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        x, y = a.astype(np.float64), b.astype(np.float64)
        if max(np.abs(x).max(), np.abs(y).max()) < 2 ** 53:
            error = np.abs(x - y)
        else:  # exact for big int64 values too
            error = np.where(a.astype(object) == b.astype(object), 0.0, np.abs(x - y) + 1.0)
        bad = a != b
        result.max_abs_err = float(error.max())
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = np.where(x != 0, error / np.abs(x), 0.0)
        result.max_rel_err = float(relative.max())
        if bad.any():
            result.equal = False
            result.worst_index = _index(np.argmax(np.where(bad, error + 1, 0)), a.shape)
        result.note = "; ".join(notes) or None
        return result
    rtol, atol = tolerance.pick(dtype_a, dtype_b)
    complex_ = a.dtype.kind == "c" or b.dtype.kind == "c"
    target = np.complex128 if complex_ else np.float64
    x, y = a.astype(target), b.astype(target)
    nan_x, nan_y = np.isnan(x), np.isnan(y)
    finite = np.isfinite(x) & np.isfinite(y)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        nan_mismatch = nan_x != nan_y
        inf_mismatch = ~finite & ~(nan_x | nan_y) & (x != y)
        error = np.where(finite, np.abs(x - y), 0.0)
        magnitude = np.abs(x)
        relative = np.where(finite & (magnitude > 0), error / np.where(magnitude > 0, magnitude, 1), 0.0)
        excess = error / (atol + rtol * magnitude)
    bad = (excess > 1) | nan_mismatch | inf_mismatch
    result.max_abs_err = math.inf if inf_mismatch.any() else float(error.max())
    result.max_rel_err = math.inf if inf_mismatch.any() else float(relative.max())
    if nan_mismatch.any():
        notes.append(f"NaN positions differ ({int(nan_mismatch.sum())} of {a.size})")
    if inf_mismatch.any():
        notes.append(f"infinities differ ({int(inf_mismatch.sum())} of {a.size})")
    if bad.any():
        result.equal = False
        special = nan_mismatch | inf_mismatch
        flat = int(np.argmax(special)) if special.any() else int(np.argmax(np.where(bad, excess, -1.0)))
        result.worst_index = _index(flat, a.shape)
        notes.append(f"beyond rtol={rtol:g}, atol={atol:g} at {int(bad.sum())} of {a.size}")
    result.note = "; ".join(notes) or None
    return result


def _index(flat: int, shape: tuple) -> tuple | None:
    if not shape:
        return None
    return tuple(int(i) for i in np.unravel_index(int(flat), shape))


def compare_stochastic(name: str, ref, got, tol: float) -> OutputComparison:
    """Values drawn from random numbers: scalars within `tol`; arrays of draws by their mean
    and standard deviation (each within `tol`) and a two-sample Kolmogorov-Smirnov test."""
    a, b = _array_info(_as_mapping(ref)), _array_info(_as_mapping(got))
    result = OutputComparison(name=name, equal=False, stochastic=True)
    if a is None or b is None or a[0].dtype.kind not in "biufc" or b[0].dtype.kind not in "biufc":
        result.note = "stochastic: not numeric on both sides"
        return result
    x, y = a[0], b[0]
    result.shape, result.dtype_original, result.dtype_converted = x.shape, a[2], b[2]
    result.converted_origin = b[1]
    if x.dtype.kind == "c" or y.dtype.kind == "c":
        x, y = np.abs(x), np.abs(y)
    if x.size == 1 and y.size == 1:
        difference = abs(float(x.ravel()[0]) - float(y.ravel()[0]))
        result.max_abs_err = difference
        result.max_rel_err = difference / abs(float(x.ravel()[0])) if float(x.ravel()[0]) else None
        result.equal = bool(difference <= tol)
        result.note = f"stochastic: |difference| {difference:.3g} {'<=' if result.equal else '>'} {tol:g}"
        return result
    if x.shape != y.shape:
        result.note = f"stochastic: shape {x.shape} != {y.shape}"
        return result
    x = x.astype(np.float64).ravel()
    y = y.astype(np.float64).ravel()
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    (mean_x, std_x), (mean_y, std_y) = moments(x), moments(y)
    d_mean, d_std = abs(mean_x - mean_y), abs(std_x - std_y)
    statistic, p_value = ks_2samp(x, y)
    result.max_abs_err = max(d_mean, d_std)
    result.equal = bool(d_mean <= tol and d_std <= tol and p_value >= KS_ALPHA
                        and x.size == y.size)
    result.note = (f"stochastic: mean {mean_x:.4g} vs {mean_y:.4g}, std {std_x:.4g} vs "
                   f"{std_y:.4g} (tol {tol:g}); KS D={statistic:.3g} p={p_value:.3g}")
    return result


def compare_trees(ref, got, *, tolerance: Tolerance | None = None,
                  stochastic: Mapping[str, float] | None = None, root: str = "",
                  ignore_extra_root_keys: bool = False) -> list[OutputComparison]:
    """One OutputComparison a compared leaf. Names: a top-level key as is (root ""), nested
    keys as name['key'], items as name[0]. Outputs named in `stochastic` (name -> absolute
    tolerance) are compared by statistics."""
    walker = _Walker(tolerance or Tolerance(), stochastic, ignore_extra_root_keys)
    walker.walk(root, ref, got)
    return walker.out


def compare_values(name: str, ref, got, tolerance: Tolerance | None = None) -> str | None:
    """None when equal within tolerance, else one line saying how they differ (the first
    output that differs)."""
    for output in compare_trees(ref, got, tolerance=tolerance, root=name):
        if not output.equal:
            return output.problem()
    return None
