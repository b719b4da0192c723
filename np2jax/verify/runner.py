"""Running one side of a verification in a child process, with a time and a memory limit.

The child (np2jax/verify/_child.py, run by path so that it imports nothing of np2jax) runs
in a fresh temporary working directory and its own session (so that a timeout kills
everything it started). Limits: wall clock (here), RLIMIT_DATA and RLIMIT_CPU (set by the
child), and the child's resident memory (watched here, for memory RLIMIT_DATA does not see).
Whatever happens, the answer is a `RunOutcome`, never an exception.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

CHILD = Path(__file__).with_name("_child.py")
POLL_S = 0.02


def default_memory_bytes() -> int:
    """Half the machine's memory, at least 1 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        total = 8 << 30
    return max(1 << 30, total // 2)


@dataclass
class RunOutcome:
    ok: bool
    error: str | None = None  # one line: "timeout after 2 s", "memory: MemoryError: ...", "ZeroDivisionError: ..."
    kind: str | None = None  # "timeout", "memory", "exception", "crash"
    tree: object = None  # the encoded result tree (decode with compare.decode)
    stochastic: dict = field(default_factory=dict)
    first_call_s: float | None = None
    times_s: list = field(default_factory=list)
    import_s: float | None = None
    uses_jax: bool = False
    x64: bool = False
    platforms: list = field(default_factory=list)
    wall_s: float = 0.0
    stdout_tail: str = ""
    warnings: list = field(default_factory=list)  # "FutureWarning: ...": what a later release breaks
    unsteady_run: int | None = None  # the first timed repeat whose results differ from the first call's


def _rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError, OSError):
        try:
            process.kill()
        except OSError:
            pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _tail(path: Path, limit: int = 4000) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _last_error_line(text: str) -> str | None:
    """The exception line at the end of a traceback or an abort message."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith("Fatal Python error:")]
    if fatal:
        return fatal[-1][:300]
    for line in reversed(lines):
        if line.startswith(("Current thread", "Thread 0x", "Extension modules:")):
            continue
        if line.startswith(("File ", "Traceback", "^", "~")) or line.startswith("-" * 5):
            continue
        return line[:300]
    return None


def run_side(path: Path, *, mode: str, call: str | None, sys_path: list[Path], env: dict,
             repeat: int, timeout_s: float, memory_bytes: int) -> RunOutcome:
    """Run `path` once in a child and return its results and timings (see _child.py)."""
    workdir = Path(tempfile.mkdtemp(prefix="np2jax-verify-"))
    try:
        return _run_in(workdir, path, mode, call, sys_path, env, repeat, timeout_s, memory_bytes)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run_in(workdir, path, mode, call, sys_path, env, repeat, timeout_s, memory_bytes) -> RunOutcome:
    result_path = workdir / ".np2jax-result.pkl"
    spec_path = workdir / ".np2jax-spec.json"
    cpus = os.cpu_count() or 1
    spec = {"path": str(Path(path).resolve()), "mode": mode, "call": call, "repeat": repeat,
            "timeout_s": timeout_s, "memory_bytes": memory_bytes,
            "cpu_seconds": int(timeout_s * cpus + 30),
            "sys_path": [str(Path(p).resolve()) for p in sys_path], "result": str(result_path)}
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    stdout_path, stderr_path = workdir / ".np2jax-stdout", workdir / ".np2jax-stderr"
    child_env = dict(os.environ)
    child_env.pop("PYTHONSTARTUP", None)
    child_env.update({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
                      "PYTHONFAULTHANDLER": "1", "TF_CPP_MIN_LOG_LEVEL": "2"})
    child_env.update(env)
    started = time.monotonic()
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        try:
            process = subprocess.Popen([sys.executable, str(CHILD), str(spec_path)], cwd=workdir,
                                       env=child_env, stdin=subprocess.DEVNULL, stdout=out,
                                       stderr=err, start_new_session=True)
        except OSError as exc:
            return RunOutcome(False, f"cannot start Python: {exc}", "crash")
        killed = None
        try:
            while True:
                try:
                    process.wait(timeout=POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    pass
                elapsed = time.monotonic() - started
                if elapsed > timeout_s:
                    killed = ("timeout", f"timeout: no result after {timeout_s:g} s")
                    break
                rss = _rss_bytes(process.pid)
                if rss is not None and rss > memory_bytes:
                    killed = ("memory", f"memory: resident memory passed the limit of "
                                        f"{memory_bytes / 2**20:.0f} MiB")
                    break
        finally:
            if process.poll() is None:
                _kill_group(process)
    wall = time.monotonic() - started
    stderr_tail = _tail(stderr_path)
    stdout_tail = _tail(stdout_path, 2000)
    payload = None
    if result_path.exists():
        try:
            with open(result_path, "rb") as handle:
                payload = pickle.load(handle)
        except Exception as exc:  # noqa: BLE001 - a torn write by a killed child
            payload = None if killed else {"ok": False, "error": f"unreadable results: {exc}",
                                           "stage": "encode"}
    if payload is not None and payload.get("ok"):
        # The first call finished; a timeout or memory kill during the timed repeats only
        # costs repeats (the child stops repeating before the limit, so this is rare).
        timings = payload.get("timings", {})
        return RunOutcome(True, tree=payload["tree"], stochastic=payload.get("stochastic", {}),
                          first_call_s=timings.get("first_call_s"),
                          times_s=list(timings.get("times_s", [])),
                          import_s=payload.get("import_s"), uses_jax=payload.get("jax", False),
                          x64=payload.get("x64", False), platforms=payload.get("platforms", []),
                          wall_s=wall, stdout_tail=stdout_tail, warnings=payload.get("warnings", []),
                          unsteady_run=timings.get("unsteady_run"))
    if killed:
        return RunOutcome(False, killed[1], killed[0], wall_s=wall, stdout_tail=stdout_tail)
    if payload is not None:
        error = payload.get("error") or "failed"
        if payload.get("memory"):
            return RunOutcome(False, f"memory: {error}", "memory", wall_s=wall, stdout_tail=stdout_tail)
        return RunOutcome(False, error, "exception", wall_s=wall, stdout_tail=stdout_tail)
    return RunOutcome(False, _crash_message(process.returncode, stderr_tail), _crash_kind(process.returncode, stderr_tail),
                      wall_s=wall, stdout_tail=stdout_tail)


def _crash_kind(code: int | None, stderr: str) -> str:
    if code is not None and code < 0 and -code == getattr(signal, "SIGXCPU", -1):
        return "timeout"
    if "bad_alloc" in stderr or "out of memory" in stderr.lower() or "MemoryError" in stderr:
        return "memory"
    return "crash"


def _crash_message(code: int | None, stderr: str) -> str:
    last = _last_error_line(stderr)
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if name == "SIGXCPU":
            return "timeout: the CPU time limit was reached"
        what = f"killed by {name}"
        if name in ("SIGKILL", "SIGABRT", "SIGSEGV", "SIGBUS") and _crash_kind(code, stderr) == "memory":
            what = f"memory: {what}"
        return f"{what}" + (f" ({last})" if last else "")
    return f"exited with status {code} before reporting results" + (f": {last}" if last else "")


PROBE = r"""
import json, sys
found = []
try:
    import jax
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
    sys.exit(0)
for platform in ("cpu", "cuda", "rocm", "tpu"):
    try:
        if jax.devices(platform):
            found.append(platform)
    except Exception:
        pass
print(json.dumps({"platforms": found}))
"""


def probe_platforms(timeout_s: float = 120) -> tuple[list[str], str | None]:
    """The JAX platforms this machine has ("cpu", "cuda", "rocm", "tpu"), found by a child
    that asks JAX (this process never imports JAX). (platforms, error)."""
    env = dict(os.environ)
    for key in ("JAX_PLATFORMS", "JAX_PLATFORM_NAME"):
        env.pop(key, None)
    env.update({"XLA_PYTHON_CLIENT_PREALLOCATE": "false", "TF_CPP_MIN_LOG_LEVEL": "3"})
    with tempfile.TemporaryDirectory(prefix="np2jax-probe-") as workdir:
        try:
            done = subprocess.run([sys.executable, "-c", PROBE], cwd=workdir, env=env,
                                  capture_output=True, text=True, timeout=timeout_s,
                                  stdin=subprocess.DEVNULL)
        except (subprocess.TimeoutExpired, OSError) as exc:
            return [], f"cannot ask JAX for its devices: {exc}"
    for line in reversed(done.stdout.splitlines()):
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if "error" in answer:
            return [], f"JAX is not usable: {answer['error']}"
        return answer.get("platforms", []), None
    return [], f"cannot ask JAX for its devices: {_last_error_line(done.stderr) or 'no answer'}"
