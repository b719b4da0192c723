"""The child process of the verifier: runs one program once (plus timed repeats) and writes
its results as a pickle of plain Python and NumPy values.

Run as a script, `python _child.py SPEC.json`, with the working directory set to a fresh
temporary folder. It imports nothing from np2jax (its own folder is taken off sys.path, so
that a user's module named like one of ours cannot be shadowed), and nothing the program does
not import itself: JAX is imported only if the program imported it.

The spec (JSON): path, mode ("call" or "script"), call (a function name), repeat, timeout_s,
memory_bytes, sys_path (folders put first on the import path), result (the pickle to write).

The pickle: {"ok": True, "tree": ENCODED, "stochastic": {...}, "timings": {...}, "jax": bool,
"x64": bool, "platforms": [...], "warnings": ["FutureWarning: ...", ...]} or {"ok": False, "stage": "import|call|encode",
"error": "Type: one line", "memory": bool}. ENCODED is a tagged tuple tree (see _encode).
"""

import json
import os
import pickle
import sys
import time
import warnings

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

_NUMBER_TYPES = (bool, int, float, complex)
_MEMORY_MARKERS = ("RESOURCE_EXHAUSTED", "Out of memory", "out of memory", "Unable to allocate",
                   "std::bad_alloc", "Cannot allocate memory")


def _limit(memory_bytes, cpu_seconds):
    """RLIMIT_DATA (private writable memory, what arrays use) rather than RLIMIT_AS: JAX and
    the CUDA driver reserve tens of GB of address space they never touch, and an address-space
    limit would stop JAX from starting. RLIMIT_CPU is a backstop if the parent goes away."""
    try:
        import resource
    except ImportError:  # not POSIX: the parent's wall-clock and RSS watch still apply
        return
    for which, value in ((getattr(resource, "RLIMIT_DATA", None), memory_bytes),
                         (resource.RLIMIT_CPU, cpu_seconds)):
        if which is None or not value:
            continue
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        try:
            resource.setrlimit(which, (value, hard))
        except (ValueError, OSError):
            pass


def _one_line(exc):
    text = str(exc).strip()
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    name = type(exc).__name__
    if len(first) > 300:
        first = first[:297] + "..."
    return f"{name}: {first}" if first else name


def _is_memory_error(exc):
    if isinstance(exc, MemoryError):
        return True
    text = str(exc)
    return any(marker in text for marker in _MEMORY_MARKERS)


def _jax_module():
    return sys.modules.get("jax")


def _is_jax_array(value):
    jax = _jax_module()
    if jax is None:
        return False
    array_type = getattr(jax, "Array", None)
    return array_type is not None and isinstance(value, array_type)


def _block(tree):
    """Wait for every JAX array in the tree: dispatch is asynchronous, and a clock read
    before the work is done would flatter JAX."""
    pending = []

    def walk(value, depth=0):
        if depth > 50:
            return
        if hasattr(value, "block_until_ready") and not isinstance(value, type):
            pending.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item, depth + 1)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item, depth + 1)
        elif hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
            for name in value.__dataclass_fields__:
                walk(getattr(value, name, None), depth + 1)

    walk(tree)
    for value in pending:
        try:
            value.block_until_ready()
        except Exception:  # noqa: BLE001 - a deleted or donated buffer: nothing to wait for
            pass


def _plain_dtype(array):
    """NumPy cannot hold ml_dtypes (bfloat16, float8, int4...) in a parent without ml_dtypes:
    send them as float32 / int32 and keep the dtype's name. None: not a numeric array."""
    import numpy as np

    name = str(array.dtype)
    if array.dtype.kind == "V" and array.dtype.fields is None:
        target = np.int32 if "int" in name else np.float32
        try:
            return array.astype(target), name
        except (TypeError, ValueError):
            return None, name
    if array.dtype.kind not in "biufcUSmM":
        return None, name
    return array, name


def _digest(encoded) -> str:
    """A fingerprint of an encoded result: equal results give equal fingerprints."""
    import hashlib

    try:
        return hashlib.sha256(pickle.dumps(encoded, protocol=4)).hexdigest()
    except Exception:  # noqa: BLE001 - an unpicklable leaf: no fingerprint, never unsteady
        return ""


def _encode(value, depth=0):
    """Plain tagged tuples that the parent can unpickle without the user's classes."""
    if depth > 50:
        return ("object", type(value).__name__, "<nested too deep>")
    if value is None:
        return ("none",)
    if isinstance(value, (str, bytes)):
        return ("str", value)
    np = sys.modules.get("numpy")
    if isinstance(value, _NUMBER_TYPES) and not (np is not None and isinstance(value, np.generic)):
        return ("scalar", "python", type(value).__name__, value)
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            if not isinstance(key, (str, bytes, int, float, bool, tuple)) and key is not None:
                key = repr(key)
            items.append((key, _encode(item, depth + 1)))
        return ("dict", items)
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        fields = [(name, _encode(getattr(value, name, None), depth + 1))
                  for name in value.__dataclass_fields__]
        return ("dataclass", type(value).__name__, fields)
    if isinstance(value, (list, tuple)):
        return ("list" if isinstance(value, list) else "tuple",
                [_encode(item, depth + 1) for item in value])
    if _is_jax_array(value):
        import numpy as np

        try:
            host = np.asarray(value)
        except Exception as exc:  # noqa: BLE001 - e.g. a PRNG key array
            return ("object", type(value).__name__, f"{value!r}"[:500] + f" ({_one_line(exc)})")
        host, dtype = _plain_dtype(host)
        if host is None:
            return ("object", type(value).__name__, repr(value)[:500])
        return ("array", "jax", dtype, host, False)
    if np is not None and isinstance(value, (np.ndarray, np.generic)):
        host = np.asarray(value)
        if host.dtype.kind == "O":
            return ("list", [_encode(item, depth + 1) for item in host.tolist()]) if host.ndim else \
                _encode(host.item(), depth + 1)
        host, dtype = _plain_dtype(host)
        if host is None:
            return ("object", type(value).__name__, repr(value)[:500])
        return ("array", "numpy", dtype, host, isinstance(value, np.generic))
    return ("object", type(value).__name__, repr(value)[:500])


def _is_output_global(name, value):
    """Script mode compares a module's global arrays and numbers."""
    if name.startswith("_") or name == "STOCHASTIC":
        return False
    if isinstance(value, _NUMBER_TYPES) or _is_jax_array(value):
        return True
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind != "O"


def _keep_32_bits():
    """The verifier's precision trial: the program computes in JAX's 32-bit defaults, its
    `jax.config.update("jax_enable_x64", True)` ignored (JAX is imported for that, so this
    runs only for programs that use JAX)."""
    try:
        import jax
    except ImportError:
        return
    update = jax.config.update

    def update_but_x64(name, value, *args, **kwargs):
        if name != "jax_enable_x64":
            return update(name, value, *args, **kwargs)
        return None

    jax.config.update = update_but_x64


_FUTURE_BREAKS = (FutureWarning, DeprecationWarning)  # what a later release turns into errors
_MAX_WARNINGS = 10


class _Warnings:
    """The deprecation and future warnings the import and the first call raise, each once
    ("Category: first line of the message"), while the program's own filters still apply to
    every other warning."""

    def __init__(self):
        self.found = []
        self._context = warnings.catch_warnings(record=True)

    def __enter__(self):
        self._caught = self._context.__enter__()
        for category in _FUTURE_BREAKS:
            warnings.simplefilter("always", category)
        return self

    def __exit__(self, *exc_info):
        self._context.__exit__(*exc_info)
        for caught in self._caught:
            if issubclass(caught.category, _FUTURE_BREAKS):
                text = f"{caught.category.__name__}: {str(caught.message).strip().splitlines()[0][:300]}"
                if text not in self.found and len(self.found) < _MAX_WARNINGS:
                    self.found.append(text)
            else:  # not ours to keep: shown as the program's filters say
                warnings.showwarning(caught.message, caught.category, caught.filename, caught.lineno)
        return False


def _load_module(path):
    import importlib.util

    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else "__np2jax_target__"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _write(path, payload):
    temporary = path + ".part"
    with open(temporary, "wb") as handle:
        pickle.dump(payload, handle, protocol=4)
    os.replace(temporary, path)


def main(spec_path):
    with open(spec_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    started = time.monotonic()
    _limit(spec.get("memory_bytes"), spec.get("cpu_seconds"))
    for folder in reversed(spec.get("sys_path", [])):
        sys.path.insert(0, folder)
    result_path = spec["result"]
    path, mode, call = spec["path"], spec["mode"], spec.get("call") or "main"
    repeat, timeout = int(spec.get("repeat", 0)), float(spec.get("timeout_s", 60))
    sys.argv = [path]
    if os.environ.get("NP2JAX_VERIFY_X32") == "1":
        _keep_32_bits()

    def fail(stage, exc):
        _write(result_path, {"ok": False, "stage": stage, "error": _one_line(exc),
                             "memory": _is_memory_error(exc)})
        return 0

    import runpy

    stochastic = {}
    seen = _Warnings()
    if mode == "script":
        def run_once():
            namespace = runpy.run_path(path, run_name="__main__")
            outputs = {k: v for k, v in namespace.items() if _is_output_global(k, v)}
            stochastic.update(namespace.get("STOCHASTIC") or {})
            return outputs
        import_s = 0.0
    else:
        before = time.perf_counter()
        try:
            with seen:
                module = _load_module(path)
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt included
            return fail("import", exc)
        import_s = time.perf_counter() - before
        function = getattr(module, call, None)
        if not callable(function):
            return fail("import", AttributeError(f"module has no callable {call!r}"))
        if isinstance(getattr(module, "STOCHASTIC", None), dict):
            stochastic.update(module.STOCHASTIC)

        def run_once():
            return function()

    times = []
    try:
        before = time.perf_counter()
        with _Warnings() as first_call:
            result = run_once()
            _block(result)
        first = time.perf_counter() - before
    except BaseException as exc:  # noqa: BLE001
        return fail("call", exc)
    try:
        encoded = _encode(result)
    except BaseException as exc:  # noqa: BLE001
        return fail("encode", exc)
    jax = _jax_module()
    payload = {"ok": True, "tree": encoded, "import_s": import_s,
               "stochastic": {str(k): float(v) for k, v in stochastic.items()
                              if isinstance(v, (int, float))},
               "jax": jax is not None, "x64": False, "platforms": [],
               "warnings": seen.found + [w for w in first_call.found if w not in seen.found]}
    if jax is not None:
        try:
            payload["x64"] = bool(jax.config.jax_enable_x64)
            payload["platforms"] = sorted({d.platform for d in jax.devices()})
        except Exception:  # noqa: BLE001
            pass
    payload["timings"] = {"first_call_s": first, "times_s": times, "stopped_early": False}
    _write(result_path, payload)  # the results are safe even if a repeat goes wrong
    del result
    first_digest = _digest(encoded)
    del encoded
    # Timed repeats, while they fit in the time limit (the parent kills at timeout_s).
    for _ in range(repeat):
        last = times[-1] if times else first
        if time.monotonic() - started + 1.5 * last > 0.8 * timeout:
            payload["timings"]["stopped_early"] = True
            break
        try:
            before = time.perf_counter()
            again = run_once()
            _block(again)
            times.append(time.perf_counter() - before)
            # results that change from run to run: a race (JAX reads a NumPy array's memory
            # when its computation runs, after later writes) or state kept between calls
            if "unsteady_run" not in payload["timings"] and _digest(_encode(again)) != first_digest:
                payload["timings"]["unsteady_run"] = len(times) + 1
            del again
        except BaseException as exc:  # noqa: BLE001 - the first call worked; report, keep results
            payload["timings"]["repeat_error"] = _one_line(exc)
            break
    _write(result_path, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
