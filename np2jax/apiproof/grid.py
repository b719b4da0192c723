"""The values of the grid: resolving dotted names, the sample arrays of rules/api/proof_grid.toml
and their variants (dtypes, edge values), and the context a call's arguments are made in."""

from __future__ import annotations

import importlib
import math
from typing import Any

from np2jax.apiproof.verdicts import MISSING, TINY, TINY_EDGE


def resolve(dotted: str) -> Any:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, MISSING)
            if obj is MISSING:
                return MISSING
        return obj
    return MISSING


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
    """`array` (a data sample) cast to `dtype` or given the edge value `edge`; both for
    the tiny edge (TINY_EDGE: complex data near zero)."""
    a = np.array(array, copy=True)
    if dtype is not None and edge == TINY_EDGE:
        cast = variant(a, dtype, None, np)
        return cast * TINY if cast.dtype.kind in "fc" else cast
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
    if edge in ("nan", "inf", "negative-zero", TINY_EDGE) and a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    if edge == TINY_EDGE:
        return a * TINY
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


LIKE_KINDS = {"like": "mixed", "pos_like": "positive", "mask_like": "mask",
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
        if name in LIKE_KINDS:
            shape = self.first_shape if self.first_shape is not None else (3, 4)
            kind = LIKE_KINDS[name]
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
            else:  # near zero, every data argument is (the other edges mark the first)
                changed = variant(array, self.dtype, self.edge if self.edge == TINY_EDGE else None, np)
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
