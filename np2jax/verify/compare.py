"""Compare two result trees (dicts, lists, tuples, scalars, arrays) with dtype-aware tolerances."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

# (rtol, atol) by the less precise of the two dtypes being compared.
TOLERANCES = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-2, 1e-2),
    "float32": (2e-5, 1e-6),
    "float64": (1e-12, 1e-14),
}


def _as_array(value):
    try:
        return np.asarray(value)
    except Exception:  # noqa: BLE001 - objects NumPy cannot take are compared by equality
        return None


def _tolerance(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    def precision(dtype) -> str:
        if dtype.kind == "c":
            return "float32" if dtype.itemsize <= 8 else "float64"
        if dtype.kind == "f":
            return str(dtype) if str(dtype) in TOLERANCES else "float64"
        return "float64"

    names = [precision(a.dtype), precision(b.dtype)]
    return max((TOLERANCES[n] for n in names), key=lambda t: t[0])


def compare_values(name: str, ref, got) -> str | None:
    """None when equal within tolerance, else one line saying how they differ."""
    if dataclasses.is_dataclass(ref) and not isinstance(ref, type):
        ref = dataclasses.asdict(ref)
        got = dataclasses.asdict(got) if dataclasses.is_dataclass(got) else got
    if isinstance(ref, Mapping):
        if not isinstance(got, Mapping) or set(ref) != set(got):
            return f"{name}: keys differ"
        for key in ref:
            problem = compare_values(f"{name}[{key!r}]", ref[key], got[key])
            if problem:
                return problem
        return None
    if isinstance(ref, (str, bytes)) or ref is None:
        return None if ref == got else f"{name}: {ref!r} != {got!r}"
    a, b = _as_array(ref), _as_array(got)
    if a is None or b is None or a.dtype.kind not in "biufc" or b.dtype.kind not in "biufc":
        if isinstance(ref, (list, tuple)) and isinstance(got, (list, tuple)) and len(ref) == len(got):
            for index, (x, y) in enumerate(zip(ref, got)):
                problem = compare_values(f"{name}[{index}]", x, y)
                if problem:
                    return problem
            return None
        return None if ref == got else f"{name}: {ref!r} != {got!r}"
    if a.shape != b.shape:
        return f"{name}: shape {a.shape} != {b.shape}"
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        return None if np.array_equal(a, b) else f"{name}: values differ"
    rtol, atol = _tolerance(a, b)
    a, b = a.astype(np.complex128), b.astype(np.complex128)
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return f"{name}: NaN positions differ"
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
        return None
    err = np.nanmax(np.abs(a - b))
    return f"{name}: max abs error {err:.3g} beyond rtol={rtol:g}, atol={atol:g}"
