"""Running one call under NumPy/SciPy and under JAX, and comparing what they give (values
within a dtype-aware tolerance, dtypes, shapes, structure, and arguments left alone)."""

from __future__ import annotations

import signal
import warnings

from np2jax.apiproof.verdicts import (
    CALL_TIMEOUT_S, DIFFERS, MISSING, NUMPY_RAISES, RAISES, SAME, SIGNED_ZEROS, TOLERANCES,
    UNSIGNED_ZEROS, WEAKLY_TYPED, Timeout,
)


def _alarm(_signum, _frame):
    raise Timeout()


def timed(fn, *args, **kwargs):
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CALL_TIMEOUT_S)
    try:
        return fn(*args, **kwargs)
    finally:
        signal.alarm(0)


def short(exc: BaseException) -> str:
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
             values: bool = True, weak: bool = False, floor: float = 1.0) -> str:
    """One verdict: same, raises (both), numpy raises: what (JAX returns), or differs: why.
    weak: a weakly typed JAX result differs too (NumPy's results never are); floor: the
    least magnitude the absolute tolerance scales with (TINY for data near zero)."""
    np, jax = env["np"], env["jax"]
    before = _snapshot((np_args, np_kwargs), np)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = timed(np_fn, *np_args, **np_kwargs)
            if then is not None:
                expected = timed(expected, *then[0])
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
        return f"{NUMPY_RAISES}: {short(numpy_error)}"
    if jax_error is not None:
        return f"{DIFFERS}: JAX raises {short(jax_error)}"
    if not _unchanged(before, (np_args, np_kwargs), np):
        return f"{DIFFERS}: NumPy writes into its argument"
    try:
        problem = compare(expected, got, np, values=values, floor=floor)
    except Exception as exc:  # noqa: BLE001
        problem = f"cannot compare: {short(exc)}"
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


def compare(expected, got, np, where: str = "", values: bool = True,
            floor: float = 1.0) -> str | None:
    """None when `got` (JAX's result, its arrays brought to the host) is NumPy's `expected`;
    `values=False` compares dtypes, shapes and structure only (np.empty's values are
    whatever memory held); the absolute tolerance scales with the result's magnitude, not
    below `floor`."""
    at = f" (item {where})" if where else ""
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)):
            return f"a {_kind(got)} where NumPy gives a {_kind(expected)}{at}"
        if len(expected) != len(got):
            return f"{len(got)} items where NumPy gives {len(expected)}{at}"
        fields = getattr(expected, "_fields", None)
        if fields and tuple(getattr(got, "_fields", ())) != tuple(fields):
            return f"fields {getattr(got, '_fields', None)} where NumPy has {tuple(fields)}{at}"
        problems = [compare(e, g, np, f"{where}.{index}" if where else str(index), values, floor)
                    for index, (e, g) in enumerate(zip(expected, got))]
        # a difference in the sign of zeros only after every item's values are compared
        problems.sort(key=lambda problem: problem is not None and problem.startswith(
            (UNSIGNED_ZEROS, SIGNED_ZEROS)))
        return next((problem for problem in problems if problem is not None), None)
    if expected is None or got is None:
        return None if expected is got else f"{_kind(got)} where NumPy gives {_kind(expected)}{at}"
    numeric = (np.ndarray, np.generic, int, float, complex, bool)
    if isinstance(expected, numeric) and not isinstance(expected, str):
        if isinstance(got, (tuple, list)):
            return f"a {_kind(got)} where NumPy gives an array{at}"
        g = got.array if isinstance(got, HostArray) else got
        if not isinstance(g, numeric):
            return f"a {_kind(got)} where NumPy gives an array{at}"
        return _compare_arrays(np.asarray(expected), np.asarray(g), np, at, values, floor)
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
        other = getattr(got, name, MISSING)
        if other is MISSING:
            return f"no attribute `{name}`{at}"
        problem = compare(value, _host(other, np), np)
        if problem is not None:
            return f"`{name}`: {problem}{at}"
        compared += 1
    return None if compared else f"cannot compare a {type(expected).__name__}{at}"


def _compare_arrays(a, b, np, at, values: bool = True, floor: float = 1.0) -> str | None:
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
        scale = max(floor, float(np.max(np.abs(x[finite]))))
        err = np.abs(x[finite] - y[finite])
        if np.any(err > atol * scale + rtol * np.abs(x[finite])):
            rel = float(np.max(err / np.maximum(np.abs(x[finite]), 1e-300)))
            return f"values differ (max abs error {float(np.max(err)):.3g}, max rel error {rel:.3g}){at}"
    return _compare_zero_signs(parts, np, at)


def _compare_zero_signs(parts, np, at) -> str | None:
    """Which of NumPy's zeros JAX gives with the other sign, once the values compare equal."""
    numpy_negative = jax_flipped = False
    for x, y in ((parts[0], parts[2]), (parts[1], parts[3])):
        if x is None:
            continue
        zeros = (x == 0) & (y == 0)
        numpy_negative |= bool(np.signbit(x[x == 0]).any())
        jax_flipped |= bool((np.signbit(x[zeros]) != np.signbit(y[zeros])).any())
    if not jax_flipped:
        return None
    return f"{SIGNED_ZEROS if numpy_negative else UNSIGNED_ZEROS}{at}"
