"""Prove a converted package function by function, on the calls its own tests make.

    from np2jax.verify.prove import ProveOptions, prove_functions
    result = prove_functions(Path("orig"), Path("conv"), "pkg", ["tests"], ProveOptions(jobs=2))
    [(f.key, f.verdict, f.first_difference) for f in result.functions]
    result.keep_numpy()  # ["pkg/mod.py::f=differs: ...", ...], for Config.keep_numpy

1. Record: the project's pytest suite runs on the original tree with the recorder plugin
   (_prove_recorder.py, `-p np2jax_prove_recorder`): for each function of the package, the
   first distinct calls' arguments, result (or exception) and the arguments' state after
   the call, pickled under a work folder (bounded in calls a function and bytes a call).
2. Replay: child processes (_replay.py, with the verifier's time and memory limits, `jobs`
   at a time) call each function of the original tree and of the converted tree on the
   recorded arguments (NumPy arrays, as the tests gave them; fresh copies each call), and
   time the first call and the repeats of the first record.
3. Compare, with the verifier's tolerances (compare.py): the converted function's result and
   its arguments after the call against the original's replay. The original's replay must
   give its recorded result again (else the call depends on state the recording does not hold,
   such as a global random generator, and is not compared).

Verdicts: equal (on every compared call), differs (the first difference: which call, which
output, where, the two values), error (the converted function raised where the original
returned, could not be imported, crashed or ran past the memory limit), slow (the converted
function ran past the time limit on a call the original finished: which call, the limit,
the original's time on it; the calls compared before it were equal), not-exercised (the
tests never call it), unreplayable (called, but no call could be kept or replayed: the notes
say why). `convert --prove` keeps the functions that differ, err or are slow on NumPy.

A function that wrote its argument and that np2jax rewrote to return it (`p = normalize(p)`,
`total, p = f(p)`) is equal when what it returns is what the original left in the argument.

Keys are `PATH::QUALNAME`, PATH relative to the original tree (`pkg/mod.py::Class.method`),
which matches the file as a path suffix wherever the tree is converted from.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from np2jax.verify.compare import Leaf, OutputComparison, Tolerance, compare_trees, decode
from np2jax.verify.core import VerifyUsageError, resolve_devices
from np2jax.verify.runner import (_crash_message, _kill_group, _rss_bytes,
                                  default_memory_bytes)
from np2jax.verify.testsuite import SuiteRun, run_suite

RECORDER = Path(__file__).with_name("_prove_recorder.py")
REPLAY = Path(__file__).with_name("_replay.py")
PLUGIN = "np2jax_prove_recorder"
SELECT = Path(__file__).with_name("_select_tests.py")
SELECT_PLUGIN = "np2jax_select_tests"
PROVE_VERDICTS = ("equal", "differs", "error", "slow", "unreplayable", "not-exercised")
# what `convert --prove` keeps on NumPy
KEPT_VERDICTS = ("differs", "error", "slow")
_TEST_PARTS = ("tests", "test", "testing")
_POLL_S = 0.05


@dataclass
class ProveOptions:
    max_calls: int = 20  # distinct calls kept a function
    max_call_bytes: int = 2 << 20  # pickled arguments of one call
    jobs: int | None = None  # replay children at a time; None: one per core
    timeout_s: float = 60.0  # one call's replay (the import with the first), per side
    suite_timeout_s: float = 3600.0
    memory_bytes: int | None = None  # None: half the machine's memory, shared by the jobs
    repeat: int = 3  # timed calls of the first record, after the first call
    rtol: float | None = None
    atol: float | None = None
    # the devices the converted side is replayed on (cpu, gpu, tpu; None: every one JAX has
    # here); the original always runs on the CPU. A function is equal when it is on each.
    devices: tuple[str, ...] | None = None
    baseline: bool = False  # also run the suite without the recorder (its overhead)
    work: Path | None = None  # keep the records there (default: a temporary folder)
    # replay the records an earlier run left in `work` instead of running the suite again
    # (convert --prove's later rounds: the original tree has not changed)
    reuse_records: bool = False


@dataclass
class SideTiming:
    first_call_s: float | None = None
    steady_s: float | None = None  # the median of the repeats of the first record
    runs: int = 0

    def as_dict(self) -> dict:
        return {"first_call_s": self.first_call_s, "steady_s": self.steady_s, "runs": self.runs}

    @classmethod
    def of(cls, payload: dict | None) -> SideTiming | None:
        if not payload or payload.get("first_call_s") is None:
            return None
        times = payload.get("times_s") or []
        return cls(payload["first_call_s"], statistics.median(times) if times else payload["first_call_s"],
                   len(times))


@dataclass
class FunctionProof:
    key: str  # PATH::QUALNAME
    verdict: str
    calls: int = 0  # calls made by the suite
    recorded: int = 0  # distinct calls kept
    compared: int = 0  # calls compared (equal or not)
    first_difference: str | None = None  # one line: the first call that differs, errs or is slow
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    numpy: SideTiming | None = None
    jax: SideTiming | None = None  # on the first device
    jax_by_device: dict = field(default_factory=dict)  # device -> SideTiming, each device
    uses_jax: bool | None = None
    notes: list = field(default_factory=list)
    # verdict slow: {"call", "test", "timeout_s", "numpy_s"}: the call the converted side did
    # not finish in timeout_s seconds, and the original's time on it
    slow: dict | None = None

    @property
    def path(self) -> str:
        return self.key.partition("::")[0]

    @property
    def qualname(self) -> str:
        return self.key.partition("::")[2]

    def as_dict(self) -> dict:
        return {"key": self.key, "path": self.path, "qualname": self.qualname,
                "verdict": self.verdict, "calls": self.calls, "recorded": self.recorded,
                "compared": self.compared, "first_difference": self.first_difference,
                "max_abs_err": _finite(self.max_abs_err), "max_rel_err": _finite(self.max_rel_err),
                "numpy": self.numpy.as_dict() if self.numpy else None,
                "jax": self.jax.as_dict() if self.jax else None,
                "jax_by_device": {device: timing.as_dict() if timing else None
                                  for device, timing in self.jax_by_device.items()},
                "uses_jax": self.uses_jax,
                "notes": self.notes, "slow": self.slow}


@dataclass
class ProveResult:
    functions: list[FunctionProof] = field(default_factory=list)
    devices: list[str] = field(default_factory=lambda: ["cpu"])  # the converted side's
    suite: SuiteRun | None = None  # the recording run
    baseline: SuiteRun | None = None  # the same suite without the recorder
    replay_s: float = 0.0
    work: str | None = None
    error: str | None = None  # the recording failed: nothing was proven

    @property
    def ok(self) -> bool:
        return self.error is None and not any(f.verdict in KEPT_VERDICTS for f in self.functions)

    def counts(self) -> dict[str, int]:
        found = {verdict: 0 for verdict in PROVE_VERDICTS}
        for proof in self.functions:
            found[proof.verdict] += 1
        return found

    def totals(self) -> dict:
        """proven (equal), kept on NumPy (differs, error or slow: what `convert --prove` keeps;
        `slow` alone too), not exercised, unreplayable; and the share of the suite's calls of the package's functions
        that went to a function proven equal."""
        counts = self.counts()
        calls = sum(f.calls for f in self.functions)
        proven_calls = sum(f.calls for f in self.functions if f.verdict == "equal")
        return {"functions": len(self.functions), "proven": counts["equal"],
                "kept_on_numpy": sum(counts[verdict] for verdict in KEPT_VERDICTS),
                "slow": counts["slow"],
                "not_exercised": counts["not-exercised"], "unreplayable": counts["unreplayable"],
                "calls": calls, "calls_proven": proven_calls,
                "calls_proven_share": proven_calls / calls if calls else None}

    def overhead(self) -> float | None:
        """The recording run's time over the plain run's (baseline=True)."""
        if self.suite is None or self.baseline is None or not self.baseline.wall_s:
            return None
        return self.suite.wall_s / self.baseline.wall_s

    def keep_numpy(self) -> list[str]:
        """`PATH::QUALNAME=REASON` for each function that differs, errs or is slow
        (Config.keep_numpy)."""
        return [f"{f.key}={f.verdict}: {f.first_difference or 'see np2jax prove'}"
                for f in self.functions if f.verdict in KEPT_VERDICTS]

    def as_dict(self) -> dict:
        return {"functions": [f.as_dict() for f in self.functions], "totals": self.totals(),
                "suite": self.suite.as_dict() if self.suite else None,
                "baseline": self.baseline.as_dict() if self.baseline else None,
                "overhead": self.overhead(), "replay_s": self.replay_s, "work": self.work,
                "devices": self.devices,
                "error": self.error, "keep_numpy": self.keep_numpy()}


def _finite(value):
    return None if value is None or value != value or value in (float("inf"), float("-inf")) \
        else float(value)


# -- which functions ---------------------------------------------------------------------------

def _is_test_file(relative: Path) -> bool:
    name = relative.name
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(part in _TEST_PARTS for part in relative.parts[:-1]))


def package_files(tree: Path, package: str | None) -> list[Path]:
    """The package's Python files (tests, conftest and setup files left out), relative to tree."""
    base = tree / package if package else tree
    if package and not base.exists() and (tree / f"{package}.py").is_file():
        return [Path(f"{package}.py")]
    if not base.is_dir():
        raise VerifyUsageError(f"--package: {base} is not a folder of the tree")
    found = []
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                relative = (Path(folder) / name).relative_to(tree)
                if not _is_test_file(relative) and relative.name != "setup.py":
                    found.append(relative)
    return found


def defined_functions(tree: Path, files: list[Path]) -> dict[str, bool]:
    """PATH::QUALNAME -> is a generator (which the recorder does not record), for the functions
    of module and class bodies (nested functions are parts of their function)."""
    found: dict[str, bool] = {}

    def generator(node) -> bool:
        stack = list(node.body)
        while stack:
            item = stack.pop()
            if isinstance(item, (ast.Yield, ast.YieldFrom)):
                return True
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            stack.extend(ast.iter_child_nodes(item))
        return isinstance(node, ast.AsyncFunctionDef)

    def visit(body, prefix: str, path: str):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.setdefault(f"{path}::{prefix}{node.name}", generator(node))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.", path)
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body, prefix, path)
                visit(node.orelse, prefix, path)

    for relative in files:
        try:
            module = ast.parse((tree / relative).read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        visit(module.body, "", relative.as_posix())
    return found


def package_callees(tree: Path, key: str, defined: dict[str, bool]) -> list[str]:
    """The functions of the package (`defined`'s keys) that the function `key` calls by name
    in its body: `f(...)` of a function of its module, `self.m(...)`/`cls.m(...)` of a method
    of its class (calls through other modules' names are not followed)."""
    path, _, qualname = key.partition("::")
    try:
        module = ast.parse((tree / path).read_bytes())
    except (SyntaxError, ValueError, OSError):
        return []
    node, body = None, module.body
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                            ast.ClassDef)) and n.name == part), None)
        if node is None:
            return []
        body = node.body
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    owner = qualname.rpartition(".")[0]
    found: list[str] = []
    calls = sorted((n for n in ast.walk(node) if isinstance(n, ast.Call)),
                   key=lambda n: (n.lineno, n.col_offset))  # in the order of the text
    for call in calls:
        target = None
        if isinstance(call.func, ast.Name):
            target = f"{path}::{call.func.id}"
        elif isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
                and call.func.value.id in ("self", "cls") and owner:
            target = f"{path}::{owner}.{call.func.attr}"
        if target is not None and target != key and target in defined and target not in found:
            found.append(target)
    return found


# -- recording ---------------------------------------------------------------------------------

def record(original: Path, package: str | None, pytest_args: list[str], work: Path,
           options: ProveOptions) -> SuiteRun:
    plugin_dir = work / "plugin"
    plugin_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(RECORDER, plugin_dir / f"{PLUGIN}.py")
    target = original / package if package else original
    if package and not target.exists():
        target = original / f"{package}.py"
    existing = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {"PYTHONPATH": os.pathsep.join([str(original.resolve()), str(plugin_dir), *existing]),
           "JAX_PLATFORMS": "cpu", "NP2JAX_PROVE_PACKAGE": str(target.resolve()),
           "NP2JAX_PROVE_TREE": str(original.resolve()), "NP2JAX_PROVE_OUT": str(work / "records"),
           "NP2JAX_PROVE_MAX_CALLS": str(options.max_calls),
           "NP2JAX_PROVE_MAX_BYTES": str(options.max_call_bytes)}
    (work / "records" / "calls").mkdir(parents=True, exist_ok=True)
    return run_suite(original, ["-p", PLUGIN, *pytest_args], env, options.suite_timeout_s, None)


def tests_of_calls(work: Path) -> dict[str, set[str]]:
    """key -> the node ids of the tests that called the function while the suite was
    recorded (`pkg/tests/test_m.py::C::test_f[1]`): every call, recorded or not (the meta
    files), and the tests of the records (the records of a run before callers were kept)."""
    import pickle

    found: dict[str, set[str]] = {}
    for meta_path in (work / "records").glob("meta-*.json"):
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for item in meta.get("functions", []):
            found.setdefault(item["key"], set()).update(item.get("tests") or ())
    for path in (work / "records" / "calls").glob("*.pkl"):
        try:
            with open(path, "rb") as handle:
                record = pickle.load(handle)
        except Exception:  # noqa: BLE001 - a record torn by a crash of the suite
            continue
        test = record.get("test") if isinstance(record, dict) else None
        if test:
            found.setdefault(record["key"], set()).add(test)
    return found


def run_selected(tree: Path, pytest_args: list[str], tests: list[str], work: Path, *,
                 timeout_s: float, x64: bool = False, platform: str = "cpu") -> SuiteRun:
    """The suite run on `tree` as `pytest_args` say, with only the tests whose node ids are
    in `tests` kept after collection (the selecting plugin, _select_tests.py): the trials
    of convert --prove's last step, which rerun the newly failing tests alone."""
    plugin_dir = work / "plugin"
    plugin_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SELECT, plugin_dir / f"{SELECT_PLUGIN}.py")
    wanted = work / "selected-tests.txt"
    wanted.write_text("\n".join(tests) + "\n", encoding="utf-8")
    existing = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {"PYTHONPATH": os.pathsep.join([str(tree.resolve()), str(plugin_dir), *existing]),
           "JAX_PLATFORMS": platform, "NP2JAX_SELECT_TESTS": str(wanted)}
    if x64:
        env["JAX_ENABLE_X64"] = "1"
    return run_suite(tree, ["-p", SELECT_PLUGIN, *pytest_args], env, timeout_s, platform)


def junit_id(nodeid: str) -> str:
    """pytest's node id `pkg/tests/test_m.py::C::test_f[1]` as its JUnit report names the
    test: `pkg.tests.test_m.C::test_f[1]`."""
    file, *rest = nodeid.split("::")
    module = file[:-3] if file.endswith(".py") else file
    module = module.replace("/", ".").replace("\\", ".")
    if not rest:
        return module
    return ".".join([module, *rest[:-1]]) + "::" + rest[-1]


def load_records(work: Path, max_calls: int) -> tuple[dict, dict[str, list[Path]], list[str]]:
    """(functions: key -> merged meta, calls: key -> record files, sys_path of the suite)."""
    import pickle

    functions: dict[str, dict] = {}
    sys_path: list[str] = []
    for meta_path in sorted((work / "records").glob("meta-*.json")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        sys_path = sys_path or meta.get("sys_path", [])
        for item in meta.get("functions", []):
            known = functions.setdefault(item["key"], {**item, "calls": 0, "kept": 0, "notes": {}})
            known["calls"] += item["calls"]
            known["kept"] += item["kept"]
            for note, n in item.get("notes", {}).items():
                known["notes"][note] = known["notes"].get(note, 0) + n

    def order(path: Path):
        pid, _, number = path.stem.partition("-")
        return (int(pid) if pid.isdigit() else 0, int(number) if number.isdigit() else 0)

    calls: dict[str, list[Path]] = {}
    for path in sorted((work / "records" / "calls").glob("*.pkl"), key=order):
        try:
            with open(path, "rb") as handle:
                key = pickle.load(handle)["key"]  # str, bytes and floats only: no user class
        except Exception:  # noqa: BLE001 - a record torn by a crash of the suite
            continue
        if len(calls.setdefault(key, [])) < max_calls:
            calls[key].append(path)
    return functions, calls, sys_path


# -- replaying ---------------------------------------------------------------------------------

def _mapped_path(sys_path: list[str], original: Path, converted: Path, work: Path) -> list[str]:
    """The suite's import path with the original tree's folders moved to the converted tree."""
    root, target = str(original.resolve()), str(converted.resolve())
    found = [target]
    for entry in sys_path:
        if entry.startswith(str(work.resolve())):
            continue
        if entry == root or entry.startswith(root + os.sep):
            entry = target + entry[len(root):]
        if entry not in found:
            found.append(entry)
    return found


def run_replays(items: list[tuple[int, dict]], *, sys_path: list[str], cwd: Path, env: dict,
                original: bool, options: ProveOptions, memory_bytes: int) -> dict[int, dict]:
    """Replay `items` ((index, function spec)) in children, one function after the other; a
    function that runs past the limit (or crashes its child) gets an error and the next child
    goes on with the rest. index -> the child's payload (or {"error": ...})."""
    results: dict[int, dict] = {}
    remaining = list(items)
    cpus = os.cpu_count() or 1
    while remaining:
        scratch = Path(tempfile.mkdtemp(prefix="np2jax-prove-"))
        try:
            spec = {"sys_path": sys_path, "functions": remaining, "repeat": options.repeat,
                    "out": str(scratch), "memory_bytes": memory_bytes, "original": original,
                    "cpu_seconds": int(options.timeout_s * len(remaining) * cpus + 30),
                    "repeat_budget_s": max(1.0, options.timeout_s / 4)}
            spec_path = scratch / "spec.json"
            spec_path.write_text(json.dumps(spec), encoding="utf-8")
            child_env = dict(os.environ)
            child_env.update({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
                              "PYTHONFAULTHANDLER": "1", "TF_CPP_MIN_LOG_LEVEL": "2"})
            child_env.update(env)
            killed = None
            with open(scratch / "stdout", "wb") as out, open(scratch / "stderr", "wb") as err:
                process = subprocess.Popen([sys.executable, str(REPLAY), str(spec_path)],
                                           cwd=cwd, env=child_env, stdin=subprocess.DEVNULL,
                                           stdout=out, stderr=err, start_new_session=True)
                started = time.monotonic()
                try:
                    while process.poll() is None:
                        time.sleep(_POLL_S)
                        current = _in_progress(scratch, remaining)
                        since = started if current is None else current[1]
                        if time.time() - since > options.timeout_s and current is not None:
                            killed = f"timeout: a call ran past {options.timeout_s:g} s"
                            break
                        if current is None and time.monotonic() - started > options.timeout_s:
                            killed = f"timeout: the replay did not start in {options.timeout_s:g} s"
                            break
                        rss = _rss_bytes(process.pid)
                        if rss is not None and rss > memory_bytes:
                            killed = (f"memory: resident memory passed the limit of "
                                      f"{memory_bytes / 2**20:.0f} MiB")
                            break
                finally:
                    if process.poll() is None:
                        _kill_group(process)
            done = _collect(scratch, remaining)
            results.update(done)
            current = _in_progress(scratch, remaining)
            stderr = (scratch / "stderr").read_text("utf-8", "replace")[-4000:]
            reason = killed or _crash_message(process.returncode, stderr)
            if current is not None:
                results[current[0]] = _partial(scratch, current[0], reason)
            elif not done:  # nothing started: the child itself failed
                for index, _ in remaining:
                    results[index] = {"error": reason}
            remaining = [(index, item) for index, item in remaining if index not in results]
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return results


def _in_progress(scratch: Path, items) -> tuple[int, float] | None:
    """(index, when its last call started) of the function a child is replaying."""
    for index, _ in reversed(items):
        start = scratch / f"{index}.start"
        if start.exists() and not (scratch / f"{index}.pkl").exists():
            times = []
            for path in (start, scratch / f"{index}.partial"):
                try:
                    times.append(path.stat().st_mtime)
                except OSError:
                    pass
            return index, max(times, default=time.time())
    return None


def _partial(scratch: Path, index: int, reason: str) -> dict:
    """The calls a killed child finished, with why it stopped; or the error alone."""
    import pickle

    try:
        with open(scratch / f"{index}.partial", "rb") as handle:
            payload = pickle.load(handle)
    except Exception:  # noqa: BLE001 - none, or torn by the kill
        return {"error": reason}
    payload["stopped"] = reason
    return payload


def _collect(scratch: Path, items) -> dict[int, dict]:
    import pickle

    found = {}
    for index, _ in items:
        path = scratch / f"{index}.pkl"
        if path.exists():
            try:
                with open(path, "rb") as handle:
                    found[index] = pickle.load(handle)
            except Exception as exc:  # noqa: BLE001
                found[index] = {"error": f"unreadable replay: {exc}"}
    return found


# -- comparing ---------------------------------------------------------------------------------

def _navigate(tree, name: str):
    """The value a comparison's name points at: "result", "result[0]", "arg x['k']"."""
    head, bracket, rest = name.partition("[")
    node = tree.get(head) if isinstance(tree, dict) else None
    rest = bracket + rest
    while rest.startswith("["):
        depth, end = 0, None
        for i, ch in enumerate(rest):
            depth += ch == "["
            depth -= ch == "]"
            if depth == 0:
                end = i
                break
        if end is None:
            return None
        try:
            key = ast.literal_eval(rest[1:end])
        except (ValueError, SyntaxError):
            return None
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return None
        rest = rest[end + 1:]
    return node


def _value_at(node, index) -> str | None:
    if isinstance(node, Leaf):
        value = node.value
        try:
            if index is not None and getattr(value, "ndim", 0):
                value = value[tuple(index)]
            return repr(value.item() if hasattr(value, "item") else value)[:40]
        except (IndexError, TypeError, ValueError):
            return None
    return None


def describe(output: OutputComparison, ref, got) -> str:
    """One line: which output, where, the two values, and how far apart."""
    text = output.problem() or output.name
    a, b = _value_at(_navigate(ref, output.name), output.worst_index), \
        _value_at(_navigate(got, output.name), output.worst_index)
    if a is not None and b is not None and a != b:
        text += f" (numpy {a}, jax {b})"
    return text


def _convention(ref: dict, got: dict, before, changed: list[str]) -> dict | None:
    """The original's results as np2jax's rewrite of a function writing its arguments returns
    them: the written arguments (alone, or after the original result; the arguments
    themselves are not compared, since the callers rebind them)."""
    if not changed or before is None:
        return None
    written = [ref.get(f"arg {name}") for name in changed]
    if "result" not in ref:
        return None
    expected = {key: value for key, value in ref.items() if key not in before}
    if ref["result"] is None:
        expected["result"] = written[0] if len(written) == 1 else tuple(written)
    else:
        expected["result"] = (ref["result"], *written)
    return expected


def compare_function(key: str, meta: dict | None, original: dict | None, converted: dict | None,
                     options: ProveOptions, generator: bool = False) -> FunctionProof:
    proof = FunctionProof(key, "not-exercised")
    meta = meta or {}
    proof.calls, proof.recorded = meta.get("calls", 0), meta.get("kept", 0)
    proof.notes = [f"{note} ({n} call{'s' if n != 1 else ''})"
                   for note, n in sorted((meta.get("notes") or {}).items())]
    if generator:
        proof.verdict = "unreplayable"
        proof.notes.append("a generator (or async) function: its calls are not recorded")
        return proof
    if not proof.calls:
        return proof
    if original is None or converted is None:
        proof.verdict = "unreplayable"
        if not proof.notes:
            proof.notes.append("no call was kept")
        return proof
    proof.numpy, proof.jax = SideTiming.of(original), SideTiming.of(converted)
    proof.uses_jax = converted.get("jax")
    if original.get("error"):
        proof.verdict = "unreplayable"
        proof.notes.append(f"the original: {original['error']}")
        return proof
    if converted.get("error"):
        proof.verdict, proof.first_difference = "error", f"the converted: {converted['error']}"
        return proof
    # by the original's precision when the converted side ran in 64 bits (np2jax's modules
    # ask for it) or never imported JAX (NumPy against NumPy); else never tighter than float32
    x64 = bool(converted.get("x64")) or not converted.get("jax")
    tolerance = Tolerance(rtol=options.rtol, atol=options.atol, x64=x64, floor32=not x64)
    first_error = first_differs = None
    errors: list[float] = []
    rel: list[float] = []
    unstable = 0
    conventions = 0
    for number, (o, c) in enumerate(zip(original.get("calls", []), converted.get("calls", [])), 1):
        where = f"call {number}" + (f" ({o.get('test')})" if o.get("test") else "")
        if o.get("error") or o.get("replayed") is None:
            proof.notes.append(f"{where}: the original: {o.get('error') or 'no result'}")
            continue
        ref = decode(o["replayed"])
        if o.get("recorded") is not None:
            again = compare_trees(decode(o["recorded"]), ref, tolerance=Tolerance(x64=True))
            if any(not out.equal for out in again):
                unstable += 1
                if unstable == 1:
                    bad = next(out for out in again if not out.equal)
                    proof.notes.append(f"{where}: the original does not give its recorded result "
                                       f"again (random numbers or state the recording does not "
                                       f"hold): {bad.problem()}")
                continue
        proof.compared += 1
        if c.get("error") or c.get("replayed") is None:
            first_error = first_error or f"{where}: {c.get('error') or 'no result'}"
            continue
        got = decode(c["replayed"])
        if "result" in ref and "raises" in got:
            first_error = first_error or f"{where}: raises {c.get('raised') or got['raises']}"
            continue
        compared = compare_trees(ref, got, tolerance=tolerance)
        if any(not out.equal for out in compared):
            alternative = _convention(ref, got, decode(o["before"]) if o.get("before") else None,
                                      o.get("changed") or [])
            if alternative is not None:  # the callers rebind what it returns: the
                # arguments it was given are not compared
                other = compare_trees(alternative, {key: value for key, value in got.items()
                                                    if key in alternative}, tolerance=tolerance)
                if all(out.equal for out in other):
                    conventions += 1
                    compared = other
        for out in compared:
            if out.max_abs_err is not None:
                errors.append(out.max_abs_err)
            if out.max_rel_err is not None:
                rel.append(out.max_rel_err)
        bad = next((out for out in compared if not out.equal), None)
        if bad is not None and first_differs is None:
            first_differs = f"{where}: {describe(bad, ref, got)}"
    replayed = min(len(original.get("calls", [])), len(converted.get("calls", [])))
    for side, payload in (("the original", original), ("the converted", converted)):
        if payload.get("stopped"):
            proof.notes.append(f"{side} stopped after {len(payload.get('calls', []))} of "
                               f"{proof.recorded} call(s): {payload['stopped']}")
    proof.slow = _slow_call(original, converted, options.timeout_s)
    if converted.get("stopped") and not first_error and not first_differs and not proof.compared \
            and proof.slow is None:
        first_error = f"call {replayed + 1}: the converted: {converted['stopped']}"
    proof.max_abs_err = max(errors, default=None)
    proof.max_rel_err = max(rel, default=None)
    if conventions:
        proof.notes.append(f"returns the arguments it writes, as np2jax rewrote it "
                           f"({conventions} call{'s' if conventions != 1 else ''})")
    if first_error:
        proof.slow = None
        proof.verdict, proof.first_difference = "error", first_error
    elif first_differs:
        proof.verdict, proof.first_difference = "differs", first_differs
    elif proof.slow is not None:
        proof.verdict, proof.first_difference = "slow", _slow_text(proof.slow)
    elif proof.compared:
        proof.verdict = "equal"
    else:
        proof.verdict = "unreplayable"
    if proof.verdict != "slow":
        proof.slow = None
    return proof


_TIMEOUT = "timeout: a call ran past"  # run_replays' reason for a call past the time limit


def _slow_call(original: dict, converted: dict, timeout_s: float) -> dict | None:
    """The call the converted side was stopped on at the time limit, when the original
    finished that same call (its time): slowness, not an error of the conversion."""
    if not str(converted.get("stopped") or "").startswith(_TIMEOUT):
        return None
    done = len(converted.get("calls", []))
    calls = original.get("calls", [])
    if done >= len(calls) or calls[done].get("seconds") is None:
        return None  # the original did not get through that call either
    return {"call": done + 1, "test": calls[done].get("test"), "timeout_s": timeout_s,
            "numpy_s": calls[done]["seconds"]}


def _slow_text(slow: dict) -> str:
    where = f"call {slow['call']}" + (f" ({slow['test']})" if slow.get("test") else "")
    return (f"{where}: the converted did not finish in {slow['timeout_s']:g} s; the original "
            f"took {_seconds(slow['numpy_s'])} on the same call")


def _seconds(value: float) -> str:
    if value < 1e-3:
        return f"{value * 1e6:.0f} us"
    return f"{value * 1e3:.3g} ms" if value < 1 else f"{value:.3g} s"


# -- the whole proof ---------------------------------------------------------------------------

def prove_functions(original_root: Path, converted_root: Path, package: str | None = None,
                    pytest_args: list[str] | None = None, options: ProveOptions | None = None,
                    progress=None) -> ProveResult:
    """Record the suite on the original tree, replay every recorded function on both trees
    and compare. `progress(text)` is called at each stage."""
    options = options or ProveOptions()
    original_root, converted_root = Path(original_root).resolve(), Path(converted_root).resolve()
    for tree in (original_root, converted_root):
        if not tree.is_dir():
            raise VerifyUsageError(f"prove needs two folders; {tree} is not one")
    if options.max_calls < 1 or options.max_call_bytes < 1:
        raise VerifyUsageError("--max-calls and --max-call-bytes must be at least 1")
    if options.jobs is not None and options.jobs < 1:
        raise VerifyUsageError("-j must be 1 or more")
    files = package_files(original_root, package)
    defined = defined_functions(original_root, files)
    devices = resolve_devices(options.devices)
    keep = options.work is not None
    work = Path(options.work).resolve() if keep else Path(tempfile.mkdtemp(prefix="np2jax-prove-"))
    reuse = keep and options.reuse_records and any((work / "records").glob("meta-*.json"))
    if keep and not reuse:
        shutil.rmtree(work / "records", ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    result = ProveResult(work=str(work) if keep else None, devices=[d for d, _ in devices])
    try:
        args = list(pytest_args or [])
        if options.baseline:
            _say(progress, "running the suite without the recorder (baseline)")
            result.baseline = run_suite(original_root, args, {"JAX_PLATFORMS": "cpu"},
                                        options.suite_timeout_s, None)
        if not reuse:
            _say(progress, "recording the suite's calls")
            result.suite = record(original_root, package, args, work, options)
        functions, calls, sys_path = load_records(work, options.max_calls)
        if result.suite is not None and result.suite.error and not functions:
            result.error = f"recording: {result.suite.error}"
            return result
        keys = list(dict.fromkeys([*defined, *functions]))
        items = []
        for index, key in enumerate(keys):
            meta = functions.get(key)
            if meta and calls.get(key) and not defined.get(key, False):
                items.append((index, {"key": key, "module": meta["module"],
                                      "qualname": meta["qualname"], "params": meta["params"],
                                      "calls": [str(p) for p in calls[key]]}))
        started = time.monotonic()
        _say(progress, f"replaying {len(items)} function(s) on both trees"
             + (f" (the converted on {', '.join(result.devices)})" if len(devices) > 1 else ""))
        replays = _replay_both(items, sys_path, original_root, converted_root, work, options,
                               devices)
        result.replay_s = time.monotonic() - started
        for index, key in enumerate(keys):
            original, converted = replays.get(index, (None, {}))
            proofs = {device: compare_function(key, functions.get(key), original,
                                               converted.get(device), options,
                                               defined.get(key, False))
                      for device, _ in devices}
            result.functions.append(_over_devices(proofs))
        return result
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def _say(progress, text: str) -> None:
    if progress is not None:
        progress(text)


def _over_devices(proofs: dict[str, FunctionProof]) -> FunctionProof:
    """One function's proof from its proofs on each device (the converted side replayed
    there, against the same original): the first device's, unless another device is not
    equal where it is (then that device's, its first difference naming the device); the
    converted side's times on each device, the largest errors of all."""
    devices = list(proofs)
    proof = proofs[devices[0]]
    for device in devices[1:]:
        other = proofs[device]
        if proof.verdict == "equal" and other.verdict in KEPT_VERDICTS:
            other.first_difference = f"on {device}: {other.first_difference}"
            other.jax = proof.jax
            proof = other
            break
    proof.jax_by_device = {device: proofs[device].jax for device in devices}
    proof.max_abs_err = max((p.max_abs_err for p in proofs.values() if p.max_abs_err is not None),
                            default=None)
    proof.max_rel_err = max((p.max_rel_err for p in proofs.values() if p.max_rel_err is not None),
                            default=None)
    return proof


def _replay_both(items, sys_path, original_root: Path, converted_root: Path, work: Path,
                 options: ProveOptions, devices: list[tuple[str, str]]
                 ) -> dict[int, tuple[dict, dict[str, dict]]]:
    """index -> (original's payload, {device: converted's payload}). Functions are grouped
    by module (one import a group), the groups shared among `jobs` workers, each running its
    children one after the other."""
    jobs = options.jobs or os.cpu_count() or 1
    memory = options.memory_bytes or max(1 << 30, default_memory_bytes() // max(1, jobs))
    by_module: dict[str, list] = {}
    for index, item in items:
        by_module.setdefault(item["module"], []).append((index, item))
    groups = sorted(by_module.values(), key=len, reverse=True)
    chunks: list[list] = [[] for _ in range(min(jobs, len(groups)) or 1)]
    for group in groups:  # the biggest groups first, each to the emptiest chunk
        min(chunks, key=len).extend(group)
    original_path = [p for p in sys_path if not p.startswith(str(work))] or [str(original_root)]
    if str(original_root) not in original_path:
        original_path.insert(0, str(original_root))
    converted_path = _mapped_path(sys_path, original_root, converted_root, work)

    def side(chunk, platform: str | None):  # None: the original
        return run_replays(chunk, sys_path=original_path if platform is None else converted_path,
                           cwd=original_root if platform is None else converted_root,
                           env={"JAX_PLATFORMS": platform or "cpu"},
                           original=platform is None, options=options, memory_bytes=memory)

    sides = [(None, None), *devices]
    tasks = [(chunk, side_) for chunk in chunks if chunk for side_ in sides]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        done = list(pool.map(lambda task: side(task[0], task[1][1]), tasks))
    originals: dict[int, dict] = {}
    converteds: dict[str, dict[int, dict]] = {device: {} for device, _ in devices}
    for (_, (device, platform)), payloads in zip(tasks, done):
        (originals if platform is None else converteds[device]).update(payloads)
    return {index: (originals.get(index), {device: found.get(index) for device, found
                                          in converteds.items() if found.get(index) is not None})
            for index, _ in items}
