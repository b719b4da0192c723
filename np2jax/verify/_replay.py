"""The replay child of `np2jax prove`: calls functions of one tree (the original or the
converted) on the arguments the project's tests gave them, as `np2jax_prove_recorder` recorded
them, and writes what each call returned and left in its arguments.

Run as a script, `python _replay.py SPEC.json`, in the tree's folder. Like the verifier's child
(_child.py, loaded from beside this file for its encoding, limits and blocking), it imports
nothing of np2jax.

The spec (JSON): sys_path (the import path, as the suite had it), functions ([{"key",
"module", "qualname", "params", "calls": [record files]}]), repeat (timed calls of the first
record after the first call), out (a folder), memory_bytes, cpu_seconds, original (bool: also
send the recorded values, and which arguments the call changed).

For function i it writes `i.start` before calling it, `i.partial` after each call (the
parent's time limit runs from the latest of the two; what a child killed at the limit
leaves) and `i.pkl` at the end: {"key", "error" (it
could not be imported or found), "calls": [{"test", "replayed", "recorded", "changed",
"error"}], "first_call_s", "times_s", "jax"}. "replayed" and "recorded" are encoded trees
{"result": value} or {"raises": "TypeName"}, plus "arg NAME": the argument after the call.
"""

import importlib
import importlib.util
import json
import os
import pickle
import sys
import time
import types

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]


def _load_child():
    spec = importlib.util.spec_from_file_location("_np2jax_verify_child",
                                                  os.path.join(_HERE, "_child.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_child = _load_child()
_plain_encode = _child._encode
_SIMPLE = (type(None), bool, int, float, complex, str, bytes, dict, list, tuple)


def _is_object(value):
    """An instance of a user class: compared by its attributes, not by its repr."""
    if isinstance(value, _SIMPLE) or isinstance(value, type) or callable(value):
        return False
    if hasattr(value, "__dataclass_fields__") or _child._is_jax_array(value):
        return False
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic)):
        return False
    if type(value).__module__ in ("builtins", "types"):
        return False
    return hasattr(value, "__dict__") or hasattr(type(value), "__slots__")


def _state_of(value):
    state = dict(getattr(value, "__dict__", {}))
    for cls in type(value).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if isinstance(name, str) and name not in state and hasattr(value, name):
                state[name] = getattr(value, name)
    return state


_FUNCTION_TYPES = (types.FunctionType, types.MethodType, types.BuiltinFunctionType,
                   types.BuiltinMethodType)


def _callable_name(value):
    """A function or a bound method by its name (its repr holds an address, which differs
    in every process); a bound method's object is not compared."""
    owner = getattr(value, "__self__", None)
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", "?")
    if owner is not None and not isinstance(owner, types.ModuleType):
        owner_type = owner if isinstance(owner, type) else type(owner)
        return f"<bound {owner_type.__qualname__}.{getattr(value, '__name__', name)}>"
    return f"<function {getattr(value, '__module__', None) or ''}.{name}>"


def _encode(value, depth=0):
    if isinstance(value, _FUNCTION_TYPES):
        return ("object", "callable", _callable_name(value))
    if depth <= 50 and _is_object(value):
        try:
            state = _state_of(value)
        except Exception:  # noqa: BLE001
            return _plain_encode(value, depth)
        return ("dataclass", type(value).__name__,
                [(name, _encode(item, depth + 1)) for name, item in sorted(state.items())])
    return _plain_encode(value, depth)


_child._encode = _encode  # the child's recursion goes through this one


def _resolve(module_name, qualname, positional):
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        holder = obj
        obj = vars(holder).get(part, None) if isinstance(holder, type) else getattr(holder, part, None)
        if obj is None:
            raise AttributeError(f"{module_name} has no {qualname}")
    if isinstance(obj, (staticmethod, classmethod)):
        return obj.__func__
    if isinstance(obj, property):
        accessor = obj.fset if len(positional) == 2 and obj.fset is not None else obj.fget
        if accessor is None:
            raise AttributeError(f"{qualname} is a property without a getter")
        return accessor
    inner = getattr(obj, "func", None)  # functools.cached_property
    if not callable(obj) and callable(inner):
        return inner
    if isinstance(holder, type) and not isinstance(obj, types.FunctionType) \
            and hasattr(type(obj), "__get__") and positional:
        # a method made by another descriptor (multipledispatch's @dispatch in pyrr's classes:
        # one dispatcher for the overloads of `__add__`, each recorded under that name): bound
        # to the object it is called on, as `obj.method(...)` does, so that it dispatches
        return _bound(obj)
    if not callable(obj):
        raise AttributeError(f"{module_name}.{qualname} is not callable")
    return obj


def _bound(descriptor):
    def call(self, *args, **kwargs):
        return descriptor.__get__(self, type(self))(*args, **kwargs)
    return call


def _tree(outcome, positional, keywords, params):
    tree = {}
    if outcome[0] == "return":
        tree["result"] = outcome[1]
    else:
        tree["raises"] = outcome[1]
    names = list(params) + [f"*{i}" for i in range(len(params), len(positional))]
    for name, value in zip(names, positional):
        tree[f"arg {name}"] = value
    for name, value in keywords.items():
        tree[f"arg {name}"] = value
    return tree


def _changed(before, positional, keywords, params):
    """The arguments whose pickled state changed in the call."""
    names = list(params) + [f"*{i}" for i in range(len(params), len(positional))]
    found = []
    after = dict(zip(names, positional), **keywords)
    for name, blob in before.items():
        try:
            if pickle.dumps(after[name], protocol=4) != blob:
                found.append(name)
        except Exception:  # noqa: BLE001
            found.append(name)
    return found


def _pickled_each(positional, keywords, params):
    names = list(params) + [f"*{i}" for i in range(len(params), len(positional))]
    found = {}
    for name, value in list(zip(names, positional)) + list(keywords.items()):
        try:
            found[name] = pickle.dumps(value, protocol=4)
        except Exception:  # noqa: BLE001
            pass
    return found


def _run(function, positional, keywords):
    started = time.perf_counter()
    try:
        result = function(*positional, **keywords)
        _child._block(result)
        outcome = ("return", result)
    except Exception as exc:  # noqa: BLE001 - the function's own exception is its outcome
        outcome = ("raise", type(exc).__name__, _child._one_line(exc))
    return outcome, time.perf_counter() - started


def _write(path, payload):
    temporary = path + ".part"
    with open(temporary, "wb") as handle:
        pickle.dump(payload, handle, protocol=4)
    os.replace(temporary, path)


def replay_function(index, item, spec):
    out = spec["out"]
    with open(os.path.join(out, f"{index}.start"), "w") as handle:
        handle.write(str(time.time()))
    params = item.get("params", [])
    payload = {"key": item["key"], "error": None, "calls": [], "first_call_s": None,
               "times_s": []}
    records = []
    for path in item["calls"]:
        with open(path, "rb") as handle:
            records.append(pickle.load(handle))
    try:
        first_args = pickle.loads(records[0]["args"])[0] if records else []
        function = _resolve(item["module"], item["qualname"], first_args)
    except BaseException as exc:  # noqa: BLE001 - an import may raise anything
        payload["error"] = f"cannot import it: {_child._one_line(exc)}"
        _write(os.path.join(out, f"{index}.pkl"), payload)
        return
    _write(os.path.join(out, f"{index}.partial"), payload)  # imported: each call's limit from here
    for number, record in enumerate(records):
        call = {"test": record.get("test"), "error": None, "changed": [], "recorded": None,
                "replayed": None, "seconds": None, "raised": None, "before": None}
        try:
            positional, keywords = pickle.loads(record["args"])
        except BaseException as exc:  # noqa: BLE001
            call["error"] = f"cannot load the recorded arguments: {_child._one_line(exc)}"
            payload["calls"].append(call)
            continue
        before = _pickled_each(positional, keywords, params) if spec.get("original") else {}
        with _child._Warnings():
            outcome, seconds = _run(function, positional, keywords)
        call["seconds"] = seconds
        if outcome[0] == "raise":
            call["raised"] = outcome[2]
        if number == 0:
            payload["first_call_s"] = seconds
        try:
            call["replayed"] = _encode(_tree(outcome, positional, keywords, params))
            if spec.get("original"):
                call["changed"] = _changed(before, positional, keywords, params)
                if call["changed"]:
                    call["before"] = _encode({f"arg {name}": pickle.loads(before[name])
                                              for name in call["changed"] if name in before})
                recorded = pickle.loads(record["outcome"])
                after = pickle.loads(record["after"] or record["args"])
                call["recorded"] = _encode(_tree(recorded, after[0], after[1], params))
        except BaseException as exc:  # noqa: BLE001
            call["error"] = f"cannot encode the result: {_child._one_line(exc)}"
        payload["calls"].append(call)
        _write(os.path.join(out, f"{index}.partial"), payload)  # what a timeout leaves
    if records:
        deadline = time.monotonic() + spec.get("repeat_budget_s", 10.0)
        for _ in range(int(spec.get("repeat", 0))):
            if time.monotonic() > deadline:
                break
            positional, keywords = pickle.loads(records[0]["args"])
            with _child._Warnings():
                _, seconds = _run(function, positional, keywords)
            payload["times_s"].append(seconds)
    jax = sys.modules.get("jax")
    payload["jax"] = jax is not None
    try:
        payload["x64"] = bool(jax.config.jax_enable_x64) if jax is not None else False
    except Exception:  # noqa: BLE001
        payload["x64"] = False
    _write(os.path.join(out, f"{index}.pkl"), payload)


def main(spec_path):
    with open(spec_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    _child._limit(spec.get("memory_bytes"), spec.get("cpu_seconds"))
    sys.path[:] = [p for p in spec["sys_path"]] + [p for p in sys.path if p not in spec["sys_path"]]
    sys.argv = ["np2jax-prove-replay"]
    for index, item in spec["functions"]:
        replay_function(index, item, spec)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
