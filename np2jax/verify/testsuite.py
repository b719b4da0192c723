"""Test-suite mode: run a project's own pytest suite against the original tree and against
the converted tree (once per JAX device) and report every test whose outcome changed.

Each run is a child `python -m pytest` with the tree as its working directory and first on
the import path, and reads pytest's JUnit XML (--junitxml). No cache or bytecode is written
into the trees.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

from np2jax.verify.core import VerifyUsageError, resolve_devices

# pytest's exit codes that still come with a report: tests ran (0, 1) or none were found (5)
_REPORTED = (0, 1, 5)


@dataclass
class SuiteRun:
    tree: str
    device: str | None  # None for the original
    outcomes: dict = field(default_factory=dict)  # test id -> (outcome, message)
    returncode: int | None = None
    error: str | None = None
    wall_s: float = 0.0

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for outcome, _ in self.outcomes.values():
            found[outcome] = found.get(outcome, 0) + 1
        return found

    def as_dict(self) -> dict:
        return {"tree": self.tree, "device": self.device, "counts": self.counts(),
                "returncode": self.returncode, "error": self.error, "wall_s": self.wall_s}


@dataclass
class TestChange:
    test: str
    device: str
    original: str
    converted: str
    message: str | None = None

    def as_dict(self) -> dict:
        return {"test": self.test, "device": self.device, "original": self.original,
                "converted": self.converted, "message": self.message}


@dataclass
class TestsResult:
    original: SuiteRun
    converted: dict = field(default_factory=dict)  # device -> SuiteRun
    changes: list[TestChange] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        runs = [self.original, *self.converted.values()]
        if any(r.error for r in runs):
            return "error"
        return "differs" if self.changes else "equal"

    @property
    def ok(self) -> bool:
        return self.verdict == "equal"

    def as_dict(self) -> dict:
        return {"tests": {"verdict": self.verdict, "original": self.original.as_dict(),
                          "converted": {d: r.as_dict() for d, r in self.converted.items()},
                          "changed": [c.as_dict() for c in self.changes]}}


def parse_junit(path: Path) -> dict[str, tuple[str, str | None]]:
    """test id (classname::name) -> (passed|failed|error|skipped, one-line message)."""
    outcomes = {}
    root = ElementTree.parse(path).getroot()
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        test = f"{classname}::{name}" if classname else name
        outcome, message = "passed", None
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                text = child.get("message") or (child.text or "")
                message = next((line.strip() for line in text.splitlines() if line.strip()), None)
                if outcome != "skipped":
                    break
        outcomes[test] = (outcome, message[:300] if message else None)
    return outcomes


def run_suite(tree: Path, pytest_args: list[str], env: dict, timeout_s: float,
              device: str | None) -> SuiteRun:
    tree = tree.resolve()
    run = SuiteRun(str(tree), device)
    with tempfile.TemporaryDirectory(prefix="np2jax-tests-") as scratch:
        report = Path(scratch) / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   f"--junitxml={report}", "-o", "junit_family=xunit2", *pytest_args]
        child_env = dict(os.environ)
        child_env["PYTHONPATH"] = os.pathsep.join(
            [str(tree), *[p for p in child_env.get("PYTHONPATH", "").split(os.pathsep) if p]])
        child_env.update({"PYTHONDONTWRITEBYTECODE": "1", "TF_CPP_MIN_LOG_LEVEL": "2"})
        child_env.update(env)
        log = Path(scratch) / "log"
        started = time.monotonic()
        with open(log, "wb") as out:
            process = subprocess.Popen(command, cwd=tree, env=child_env, stdout=out,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
            try:
                run.returncode = process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                run.error = f"timeout: pytest did not finish in {timeout_s:g} s"
            finally:  # a timeout, or Ctrl-C here: the suite's own session goes too
                if process.poll() is None:
                    try:
                        os.killpg(process.pid, signal.SIGKILL)
                    except OSError:
                        process.kill()
                    process.wait()
        run.wall_s = time.monotonic() - started
        if run.error:
            return run
        if report.exists():
            try:
                run.outcomes = parse_junit(report)
            except ElementTree.ParseError as exc:
                run.error = f"unreadable JUnit XML: {exc}"
        if run.returncode not in _REPORTED or not report.exists():
            tail = [line for line in log.read_text("utf-8", "replace").splitlines() if line.strip()]
            run.error = (f"pytest exited with status {run.returncode}"
                         + (f": {tail[-1].strip()[:300]}" if tail else ""))
    return run


def verify_tests(original: Path, converted: Path, pytest_args: list[str] | None = None, *,
                 devices: tuple[str, ...] | None = None, timeout_s: float = 600,
                 x64: bool = False, reference: SuiteRun | None = None) -> TestsResult:
    """The suite on `original` (or `reference`, its run already made) and on `converted`
    on each device; the tests whose outcome changed."""
    original, converted = Path(original), Path(converted)
    for tree in (original, converted):
        if not tree.is_dir():
            raise VerifyUsageError(f"--tests needs two folders; {tree} is not one")
    args = list(pytest_args or [])
    if reference is None:
        reference = run_suite(original, args, {"JAX_PLATFORMS": "cpu"}, timeout_s, None)
    result = TestsResult(reference)
    for device, platform in resolve_devices(devices):
        env = {"JAX_PLATFORMS": platform}
        if x64:
            env["JAX_ENABLE_X64"] = "1"
        got = run_suite(converted, args, env, timeout_s, device)
        result.converted[device] = got
        if reference.error or got.error:
            continue
        for test in sorted(set(reference.outcomes) | set(got.outcomes)):
            before = reference.outcomes.get(test, ("absent", None))
            after = got.outcomes.get(test, ("absent", None))
            if before[0] != after[0]:
                result.changes.append(TestChange(test, device, before[0], after[0],
                                                 after[1] or before[1]))
    return result
