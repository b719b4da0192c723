"""The recorder of `np2jax prove`: a pytest plugin that records, for each function of a package,
the arguments of its first distinct calls, what it returned (or raised) and the arguments'
state after the call.

Not imported by np2jax: `prove` copies this file into its work folder as
`np2jax_prove_recorder.py` and runs the project's suite with `-p np2jax_prove_recorder`. It
imports nothing of np2jax and is configured by the environment:

    NP2JAX_PROVE_PACKAGE  the package's folder (or module file): its functions are recorded
    NP2JAX_PROVE_TREE     the tree the suite runs in (keys are paths relative to it)
    NP2JAX_PROVE_OUT      the folder the records go to
    NP2JAX_PROVE_MAX_CALLS, NP2JAX_PROVE_MAX_BYTES  distinct calls kept a function, bytes a call

How: `sys.settrace` while each test runs (setup, call, teardown) and while pytest collects the
tests (calls made by test modules at import: recorded with no test), filtered by code object: a
call of a function whose code lies in the package (tests and conftest files excluded) is looked
at, every other Python call costs one dictionary lookup, and C calls nothing. Arguments are
pickled at the call (the copy: NumPy arrays by value, objects of the package's classes by
their state), a call whose arguments are the same bytes as one already kept is counted and not
kept again (after 10 times the limit of calls looked at, or 200, the function's further
calls are only counted); at the return the result (or the exception) and the arguments' state after the
call are pickled. What cannot be pickled, or is larger than the limit, is counted as a note.
Every call, recorded or not, adds its test's node id to the function's set of callers (no
limit: `convert --prove` keeps what a newly failing test calls, and a function whose records
were all taken by earlier tests is still one of those).

Each record is one pickle file, `calls/<pid>-<n>.pkl`: {"key", "args", "after", "outcome",
"test", "seconds"}, written at once (a crash of the suite keeps what was recorded); at the end
of the session `meta-<pid>.json` gives each function's module, qualname, call count, kept
calls, notes and the node ids of the tests that called it, and the suite's sys.path (the replays import as the tests did).
"""

import dis
import hashlib
import json
import os
import pickle
import sys
import time

_PACKAGE = os.path.realpath(os.environ.get("NP2JAX_PROVE_PACKAGE", os.curdir))
_TREE = os.path.realpath(os.environ.get("NP2JAX_PROVE_TREE", os.curdir))
_OUT = os.environ.get("NP2JAX_PROVE_OUT", os.curdir)
_MAX_CALLS = int(os.environ.get("NP2JAX_PROVE_MAX_CALLS", "20"))
_MAX_BYTES = int(os.environ.get("NP2JAX_PROVE_MAX_BYTES", str(2 << 20)))
_MAX_TOTAL = int(os.environ.get("NP2JAX_PROVE_MAX_TOTAL", str(1 << 30)))
# calls looked at a function (pickled, to find the distinct ones): a function called many times
# with the same arguments costs the suite this many pickles, not one a call
_MAX_TRIES = max(200, 10 * _MAX_CALLS)
_RETURNS = {dis.opmap[name] for name in ("RETURN_VALUE", "RETURN_CONST") if name in dis.opmap}
_NOT_RECORDED = 0x20 | 0x80 | 0x200  # generators, coroutines, async generators
_FUNCTION = 0x01 | 0x02  # CO_OPTIMIZED | CO_NEWLOCALS: a function's code, not a class body's
_TEST_PARTS = ("tests", "test", "testing")

_entries = {}  # code object -> _Entry, or None: not the package's
_state = {"test": None, "written": 0, "bytes": 0, "started": None}


def _is_test_file(path):
    parts = os.path.relpath(path, _TREE).replace(os.sep, "/").split("/")
    name = parts[-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(part in _TEST_PARTS for part in parts[:-1]))


def _in_package(path):
    if path == _PACKAGE:
        return True
    return path.startswith(_PACKAGE + os.sep)


class _Entry:
    __slots__ = ("key", "module", "qualname", "params", "varargs", "varkw", "kwonly", "calls",
                 "kept", "seen", "notes", "first_line", "tries", "tests")

    def __init__(self, key, module, qualname, code):
        self.key, self.module, self.qualname = key, module, qualname
        count, kwonly = code.co_argcount, code.co_kwonlyargcount
        names = code.co_varnames
        self.params = names[:count]
        self.kwonly = names[count:count + kwonly]
        at = count + kwonly
        self.varargs = names[at] if code.co_flags & 0x04 else None
        at += 1 if self.varargs else 0
        self.varkw = names[at] if code.co_flags & 0x08 else None
        self.calls = self.kept = self.tries = 0
        self.seen = set()
        self.tests = set()  # node ids of the tests that called it
        self.notes = {}
        self.first_line = code.co_firstlineno

    def note(self, text):
        self.notes[text] = self.notes.get(text, 0) + 1

    def as_dict(self):
        return {"key": self.key, "module": self.module, "qualname": self.qualname,
                "calls": self.calls, "kept": self.kept, "notes": self.notes,
                "params": list(self.params), "line": self.first_line,
                "tests": sorted(self.tests)}


def _qualname(code, frame):
    name = getattr(code, "co_qualname", None)  # Python 3.11+
    if name is not None:
        return name
    # Python 3.10: a module-level function, or a method of a module-level class
    for value in list(frame.f_globals.values()):
        if getattr(value, "__code__", None) is code:
            return getattr(value, "__qualname__", code.co_name)
        if isinstance(value, type):
            for attr in vars(value).values():
                inner = getattr(attr, "__func__", attr)
                inner = getattr(inner, "fget", inner)
                if getattr(inner, "__code__", None) is code:
                    return f"{value.__qualname__}.{code.co_name}"
    return code.co_name


def _classify(code, frame):
    entry = None
    path = os.path.realpath(code.co_filename) if code.co_filename else ""
    if path and _in_package(path) and not _is_test_file(path):
        qualname = _qualname(code, frame)
        if "<" not in qualname and not code.co_flags & _NOT_RECORDED \
                and code.co_flags & _FUNCTION == _FUNCTION:
            key = os.path.relpath(path, _TREE).replace(os.sep, "/") + "::" + qualname
            module = frame.f_globals.get("__name__", "")
            entry = _Entry(key, module, qualname, code)
            _all[key] = entry
    _entries[code] = entry
    return entry


_all = {}  # key -> _Entry (also the ones never called: filled by pytest_sessionfinish)


def _arguments(frame, entry):
    values = frame.f_locals
    positional = [values[name] for name in entry.params]
    if entry.varargs:
        positional.extend(values[entry.varargs])
    keywords = {name: values[name] for name in entry.kwonly}
    if entry.varkw:
        keywords.update(values[entry.varkw])
    return (positional, keywords)


def _first_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else ""


def _write(record):
    _state["written"] += 1
    path = os.path.join(_OUT, "calls", f"{os.getpid()}-{_state['written']}.pkl")
    with open(path, "wb") as handle:
        handle.write(record)


def _tracer(frame, event, arg):
    code = frame.f_code
    try:
        entry = _entries[code]
    except KeyError:
        entry = _classify(code, frame)
    if entry is None:
        return None
    entry.calls += 1
    if _state["test"] is not None:
        entry.tests.add(_state["test"])
    if entry.kept >= _MAX_CALLS or entry.tries >= _MAX_TRIES or _state["bytes"] >= _MAX_TOTAL:
        return None
    entry.tries += 1
    try:
        arguments = _arguments(frame, entry)
        blob = pickle.dumps(arguments, protocol=4)
    except Exception as exc:  # noqa: BLE001 - anything a __reduce__ may raise
        entry.note(f"arguments cannot be copied ({type(exc).__name__}: {_first_line(exc)[:80]})")
        return None
    if len(blob) > _MAX_BYTES:
        entry.note(f"arguments larger than {_MAX_BYTES} bytes")
        return None
    digest = hashlib.blake2b(blob, digest_size=16).digest()
    if digest in entry.seen:
        return None
    entry.seen.add(digest)
    entry.kept += 1  # reserved now: recursive calls count against the limit too
    started = time.perf_counter()
    raised = []

    def local(frame, event, arg):
        if event == "exception":
            raised[:] = [arg[1]]
        elif event == "return":
            _finish(entry, frame, arg, raised, arguments, blob, started)
        return local

    frame.f_trace_lines = False
    return local


def _finish(entry, frame, value, raised, arguments, blob, started):
    seconds = time.perf_counter() - started
    code = frame.f_code
    normal = code.co_code[frame.f_lasti] in _RETURNS if frame.f_lasti >= 0 else True
    try:
        if normal or not raised:
            outcome = ("return", value)
        else:
            exc = raised[0]
            outcome = ("raise", type(exc).__name__, _first_line(exc))
        after = pickle.dumps(arguments, protocol=4)
        record = pickle.dumps({"key": entry.key, "args": blob,
                               "after": None if after == blob else after,
                               "outcome": pickle.dumps(outcome, protocol=4),
                               "test": _state["test"], "seconds": seconds}, protocol=4)
    except Exception as exc:  # noqa: BLE001
        entry.kept -= 1
        entry.note(f"result cannot be copied ({type(exc).__name__}: {_first_line(exc)[:80]})")
        return
    if len(record) > 3 * _MAX_BYTES:
        entry.kept -= 1
        entry.note(f"result larger than {_MAX_BYTES} bytes")
        return
    _state["bytes"] += len(record)
    _write(record)


def pytest_configure(config):
    os.makedirs(os.path.join(_OUT, "calls"), exist_ok=True)
    _state["started"] = time.perf_counter()


try:
    import pytest
except ImportError:  # imported outside pytest
    pytest = None

def _traced(test):
    """A hook wrapper's body: the tracer on while pytest does what the hook wraps, calls
    counted for `test` (a node id; None while collecting)."""
    _state["test"] = test
    previous = sys.gettrace()
    sys.settrace(_tracer)
    try:
        yield
    finally:
        sys.settrace(previous)
        _state["test"] = None


if pytest is not None:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection(session):
        yield from _traced(None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        yield from _traced(item.nodeid)


def pytest_sessionfinish(session, exitstatus):
    sys.settrace(None)
    meta = {"pid": os.getpid(), "sys_path": [os.path.realpath(p or os.curdir) for p in sys.path],
            "functions": [entry.as_dict() for entry in _all.values()],
            "session_s": time.perf_counter() - (_state["started"] or time.perf_counter()),
            "records": _state["written"], "bytes": _state["bytes"]}
    with open(os.path.join(_OUT, f"meta-{os.getpid()}.json"), "w", encoding="utf-8") as handle:
        json.dump(meta, handle)
