"""convert --prove: convert a package, prove every converted function on the calls the
project's own tests make (np2jax.verify.prove), keep each function that differs or errs on
NumPy (Config.keep_numpy, NJ104), convert again, until no new function is kept; then run
the suite once on the original and once on the result.

The project is the folder the tests run from (the current one for the command line): the
package must be inside it. The converted project the proof and the last run of the suite
need is a copy of it with the package's folder replaced by the converted package (version
control, virtual environments and caches are not copied). The suite is recorded once; each
later round replays the same records on the new conversion.
"""

from __future__ import annotations

import ast
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from np2jax.api import RunResult, convert_paths
from np2jax.config import Config, keep_spec, path_matches
from np2jax.verify.prove import (KEPT_VERDICTS, ProveOptions, ProveResult, defined_functions,
                                 junit_id, package_callees, package_files, prove_functions,
                                 run_selected, tests_of_calls)
from np2jax.verify.testsuite import TestsResult, verify_tests

# not part of the copy of the project: they are large and never imported by its tests
_NOT_COPIED = shutil.ignore_patterns(".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox",
                                     "__pycache__", ".pytest_cache", ".mypy_cache",
                                     ".ruff_cache", "node_modules", "*.egg-info", ".np2jax*")
# reruns of the newly failing tests the last step may make to find what they need on NumPy
MAX_BLAME_TRIALS = 16


class ProveUsageError(ValueError):
    """convert --prove cannot start: the message says why, in one line."""


@dataclass
class ProvedConversion:
    run: RunResult  # the last round's conversion, the one written
    config: Config | None = None  # the configuration given (its own keep-numpy entries)
    rounds: list[ProveResult] = field(default_factory=list)  # each round's proof
    kept: list[str] = field(default_factory=list)  # keep-numpy entries the rounds added
    tests: TestsResult | None = None  # the suite on the original and on the result
    # the last step, when tests newly failed: {"tests", "candidates", "kept", "trials", "passed"}
    blame: dict | None = None
    wall_s: float = 0.0
    project: Path | None = None  # the folder the tests run from: the proof's paths are under it

    @property
    def proof(self) -> ProveResult | None:
        return self.rounds[-1] if self.rounds else None

    @property
    def ok(self) -> bool:
        """The last round proved every function it replayed, or kept it on NumPy, and no
        test that passed on the original fails on the result."""
        proof = self.proof
        return proof is not None and proof.error is None and not self.newly_failing()

    def newly_failing(self) -> list[str]:
        return list(self.newly_failing_messages())

    def newly_failing_messages(self) -> dict[str, str | None]:
        """test -> its failure's message on the result, for each test that passed on the
        original and does not on the result."""
        if self.tests is None:
            return {}
        return {c.test: c.message for c in self.tests.changes
                if c.original == "passed" and c.converted != "passed"}

    def kept_on_numpy(self, key: str) -> bool:
        """Whether the function PATH::QUALNAME is kept on NumPy in the result: by a round of
        the proof or by the configuration's own entries."""
        path, _, qualname = key.partition("::")
        entries = [*self.kept, *(self.config.keep_numpy if self.config else ())]
        for entry in entries:
            try:
                file, name, _ = keep_spec(entry)
            except ValueError:
                continue
            if name == qualname and path_matches(path, file):
                return True
        return False

    def paths_on_jax(self) -> set[str]:
        """The package's files (as the proof names them, relative to the project) whose
        converted module uses JAX: it imports jax. A module np2jax left on NumPy (nothing
        converted in it, or only what keeps it NumPy) runs NumPy however equal its functions."""
        found = set()
        for result in self.run.files:
            path = Path(result.path)
            if self.project is not None:
                try:
                    path = path.resolve().relative_to(self.project)
                except ValueError:
                    continue
            if _imports_jax(result.converted):
                found.add(path.as_posix())
        return found

    def calls_on_jax(self) -> dict | None:
        """Of the suite's calls of the package's functions, those that went to a function
        proven equal in the last round, not kept on NumPy, in a module the conversion moved to
        JAX (paths_on_jax): the share of the work the result does with JAX (a kept function,
        or one of a module left on NumPy, replays as NumPy against NumPy, equal, and is not
        counted; functions_left_on_numpy counts those of the second kind)."""
        proof = self.proof
        if proof is None or proof.error:
            return None
        on_jax_paths = self.paths_on_jax()
        calls = sum(f.calls for f in proof.functions)
        equal = [f for f in proof.functions if f.verdict == "equal" and not self.kept_on_numpy(f.key)]
        functions = [f for f in equal if f.path in on_jax_paths]
        on_jax = sum(f.calls for f in functions)
        return {"calls": calls, "calls_on_jax": on_jax,
                "share": on_jax / calls if calls else None, "functions_on_jax": len(functions),
                "functions_left_on_numpy": len(equal) - len(functions)}

    def tests_summary(self) -> dict | None:
        """Tests passing on the original, and of those, passing on the result."""
        if self.tests is None:
            return None
        reference = self.tests.original
        passed = {t for t, (outcome, _) in reference.outcomes.items() if outcome == "passed"}
        converted = next(iter(self.tests.converted.values()), None)
        still = {t for t in passed if converted is not None
                 and converted.outcomes.get(t, ("absent", None))[0] == "passed"}
        return {"passed_before": len(passed), "passed_after": len(still),
                "error": reference.error or (converted.error if converted else "not run")}

    def as_dict(self) -> dict:
        return {"rounds": len(self.rounds), "kept_on_numpy": self.kept,
                "functions": self.proof.as_dict()["functions"] if self.proof else [],
                "totals": self.proof.totals() if self.proof else None,
                "tests": self.tests_summary(), "newly_failing": self.newly_failing(),
                "newly_failing_messages": self.newly_failing_messages(),
                "calls_on_jax": self.calls_on_jax(), "blame": self.blame, "wall_s": self.wall_s}


def convert_proved(package: Path, out: Path, config: Config, *, project: Path,
                   pytest_args: list[str] | None = None, options: ProveOptions | None = None,
                   max_rounds: int = 5, jobs: int | None = None, work: Path | None = None,
                   progress=None) -> ProvedConversion:
    """Convert `package` (a folder inside `project`) into `out`, proving and keeping on
    NumPy until nothing new differs (at most `max_rounds` conversions); `progress(text)` is
    told of each stage."""
    started = time.monotonic()
    project, package = Path(project).resolve(), Path(package).resolve()
    try:
        relative = package.relative_to(project)
    except ValueError:
        raise ProveUsageError(f"--prove: {package} is not inside the project {project} (the "
                              "folder the tests run from)") from None
    if not package.is_dir() or relative == Path("."):
        raise ProveUsageError(f"--prove: {package} is not a package folder inside {project}")
    out = Path(out).resolve()
    if out == package or package in out.parents or project in out.parents:
        raise ProveUsageError(f"--prove: --out {out} must be outside the project {project} "
                              "(the project is copied, with the package replaced)")
    work = Path(work).resolve() if work is not None else out.parent / f".{out.name}-prove"
    mirror = work / "project"
    options = replace(options or ProveOptions(), work=work / "records")
    result = None
    kept: list[str] = []

    def convert(entries: list[str]) -> RunResult:
        """The package converted into `out` with `entries` kept on NumPy too, and mirrored."""
        run = convert_paths([package], replace(config, keep_numpy=(
            *config.keep_numpy, *entries)), out=out, copy_other=True, jobs=jobs)
        _mirror(project, relative, out, mirror)
        if result is not None:
            result.run = run
        return run

    for number in range(1, max_rounds + 1):
        _say(progress, f"round {number}: converting {relative}")
        run = convert(kept)
        _say(progress, f"round {number}: proving the converted functions on the suite's calls")
        proof = prove_functions(project, mirror, relative.as_posix(), pytest_args,
                                replace(options, reuse_records=number > 1), progress=progress)
        result = result or ProvedConversion(run, config=config, project=project)
        result.run = run
        result.rounds.append(proof)
        if proof.error:
            break
        named = {keep_spec(entry)[:2] for entry in kept}
        new = [entry for entry in proof.keep_numpy() if keep_spec(entry)[:2] not in named]
        new += _callees_to_keep(project, relative, proof, named,
                                named | {keep_spec(entry)[:2] for entry in new})
        if not new:
            break
        kept.extend(new)
        result.kept = list(kept)
        if number == max_rounds:  # the last conversion must include what the last proof found
            _say(progress, "converting once more with every function found to differ kept")
            convert(kept)
    _say(progress, "running the suite on the original and on the result")
    result.tests = verify_tests(project, mirror, pytest_args, devices=("cpu",),
                                timeout_s=options.suite_timeout_s, x64=config.x64)
    if result.proof and not result.proof.error and result.newly_failing():
        # proven equal call by call, and still a test fails (a result handed to test code
        # that needs NumPy, a last-bit difference the test amplifies): of the functions those
        # tests call, the fewest that must stay NumPy for them to pass are kept
        blame = _blame_failing_tests(result, options, kept, convert, mirror, pytest_args,
                                     config.x64, progress)
        result.blame = blame
        if blame["kept"]:
            kept.extend(blame["kept"])
            result.kept = list(kept)
        if blame["trials"]:  # the trials wrote other conversions: the result is this one
            convert(kept)
        if blame["kept"]:
            _say(progress, "running the suite again on the result")
            result.tests = verify_tests(project, mirror, pytest_args, devices=("cpu",),
                                        timeout_s=options.suite_timeout_s, x64=config.x64,
                                        reference=result.tests.original)
    result.wall_s = time.monotonic() - started
    return result


def _blame_failing_tests(result: ProvedConversion, options: ProveOptions, kept: list[str],
                         convert, mirror: Path, pytest_args: list[str] | None, x64: bool,
                         progress) -> dict:
    """The last step: the package's functions (not kept yet) that the newly failing tests
    called while the suite was recorded are the candidates; the failing tests are rerun
    alone on conversions keeping some of them (`convert(entries)` writes one into `mirror`)
    until the fewest that make every one of them pass are found (delta debugging, at most
    `MAX_BLAME_TRIALS` reruns). Nothing is kept when keeping every candidate does not help.
    {"tests", "candidates", "kept" (keep-numpy entries), "trials", "passed": whether keeping
    them made the failing tests pass}."""
    failing = result.newly_failing_messages()
    named = {keep_spec(entry)[:2] for entry in kept}
    callers = tests_of_calls(options.work)
    nodeids = sorted({test for tests in callers.values() for test in tests
                      if junit_id(test) in failing})
    candidates = []
    for key, tests in sorted(callers.items()):
        path, _, qualname = key.partition("::")
        if (path, qualname) in named or result.kept_on_numpy(key):
            continue
        if any(junit_id(test) in failing for test in tests):
            candidates.append(key)
    # the most called first: the reduction tries dropping them first, so that what stays
    # NumPy takes the fewest calls off JAX (transforms3d: normalized_vector, called 140000
    # times, was the one kept where lighter ones would do)
    calls = {f.key: f.calls for f in result.proof.functions}
    candidates.sort(key=lambda key: (-calls.get(key, 0), key))
    blame = {"tests": sorted(failing), "candidates": candidates, "kept": [], "trials": 0,
             "passed": False}
    if not candidates or not nodeids:
        return blame
    trial_work = options.work.parent / "blame"

    def passes(keys: list[str]) -> bool:
        blame["trials"] += 1
        convert([*kept, *keys])
        run = run_selected(mirror, list(pytest_args or []), nodeids, trial_work,
                           timeout_s=options.suite_timeout_s, x64=x64)
        return not run.error and bool(run.outcomes) and all(
            run.outcomes.get(junit_id(test), ("absent", None))[0] == "passed" for test in nodeids)

    _say(progress, f"{len(failing)} test(s) newly failing although every call was proven "
                   f"equal: rerunning them with the {len(candidates)} function(s) they call "
                   "kept on NumPy")
    if not passes(candidates):
        return blame
    blame["passed"] = True
    needed = _fewest(candidates, passes, MAX_BLAME_TRIALS - 1)
    _say(progress, f"{len(needed)} of the {len(candidates)} function(s) must stay NumPy for "
                   f"them to pass ({blame['trials']} reruns)")
    for key in needed:
        test = junit_id(min(t for t in callers[key] if junit_id(t) in failing))
        message = (failing.get(test) or "").strip().splitlines()
        blame["kept"].append(
            f"{key}=called by the test {test}, which passes on the original and fails on the "
            f"result" + (f" ({message[0][:160]})" if message else "") + f"; it passes with "
            f"these {len(needed)} of the {len(candidates)} functions the failing tests call "
            "kept on NumPy")
    return blame


def _fewest(candidates: list[str], passes, budget: int) -> list[str]:
    """A smaller list of `candidates` for which `passes` still holds (it holds for all of
    them): chunks are dropped while the rest passes, halving the chunks when none can go
    (the reduction of Zeller's delta debugging), at most `budget` calls of `passes`."""
    needed = list(candidates)
    parts = 2
    while len(needed) > 1 and budget > 0:
        size = -(-len(needed) // parts)
        chunks = [needed[at:at + size] for at in range(0, len(needed), size)]
        for chunk in chunks:
            if budget <= 0:
                break
            rest = [key for key in needed if key not in chunk]
            budget -= 1
            if passes(rest):
                needed, parts = rest, max(parts - 1, 2)
                break
        else:
            if parts >= len(needed):
                break
            parts = min(len(needed), parts * 2)
    return needed


def _callees_to_keep(project: Path, package: Path, proof: ProveResult, kept: set,
                     named: set) -> list[str]:
    """A function kept on NumPy (`kept`: (PATH, QUALNAME) of the entries so far) that still
    differs, errs or is slow runs JAX only through the package's functions it calls (its own
    body is NumPy): keep-numpy entries for those not named yet. Such as nolds' hurst_rs,
    kept for its time, still past the limit because it calls the converted `rs` ninety
    times, eagerly, on arrays of as many shapes."""
    files = package_files(project, package.as_posix())
    defined = defined_functions(project, files)
    found: list[str] = []
    for function in proof.functions:
        if function.verdict not in KEPT_VERDICTS or (function.path, function.qualname) not in kept:
            continue
        for callee in package_callees(project, function.key, defined):
            path, _, qualname = callee.partition("::")
            if (path, qualname) in named or defined.get(callee):
                continue
            named = named | {(path, qualname)}
            found.append(f"{callee}=called by {function.qualname}, kept on NumPy and still "
                         f"{function.verdict} with it on JAX: {function.first_difference}")
    return found


def _mirror(project: Path, relative: Path, converted: Path, mirror: Path) -> None:
    """`mirror`: the project as it is, with the converted package's files over the package
    folder `relative` (files the conversion excluded, such as tests inside the package, stay
    as they are)."""
    if mirror.exists():
        shutil.rmtree(mirror)
    shutil.copytree(project, mirror, ignore=_NOT_COPIED, symlinks=True)
    shutil.copytree(converted, mirror / relative, ignore=shutil.ignore_patterns("__pycache__"),
                    dirs_exist_ok=True)


def _imports_jax(text: str) -> bool:
    """Whether a module's text imports jax (or a module under it)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any((isinstance(node, ast.Import) and any(a.name.split(".")[0] == "jax" for a in node.names))
               or (isinstance(node, ast.ImportFrom) and not node.level
                   and (node.module or "").split(".")[0] == "jax")
               for node in ast.walk(tree))


def _say(progress, text: str) -> None:
    if progress is not None:
        progress(text)
