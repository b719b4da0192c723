"""Verify a conversion: run the original under NumPy and the converted program under JAX (once
per device), each in its own child process, and compare results and timings.

    from np2jax.verify import VerifyOptions, verify_paths
    run = verify_paths(Path("model.py"), Path("converted/model.py"), VerifyOptions())
    run.ok, run.results[0].verdict, run.as_dict()

Verdicts: equal, stochastic-equal (random outputs agree by statistics), unclean (outputs
agree, but the converted program raises a FutureWarning or DeprecationWarning the original
does not: code a later JAX release refuses), unsteady (the first call's outputs agree, but a
timed repeat of the converted program gives other results where the original's repeats do
not: a race between NumPy writes and JAX's asynchronous reads, or state kept between
calls), differs, error (a crash, a timeout or a memory
blow-up on either side, with a one-line reason), skipped (nothing to run or to compare). Importing this needs neither libcst nor JAX.
"""

from __future__ import annotations

import ast
import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from np2jax.verify.compare import OutputComparison, Tolerance, compare_trees, decode
from np2jax.verify.runner import RunOutcome, default_memory_bytes, probe_platforms, run_side

VERDICTS = ("equal", "stochastic-equal", "unclean", "unsteady", "differs", "error", "skipped")
PASSING = ("equal", "stochastic-equal", "skipped")
DEVICE_NAMES = ("cpu", "gpu", "tpu")
_PLATFORMS = {"cpu": ("cpu",), "gpu": ("cuda", "rocm"), "tpu": ("tpu",)}
_NOT_PROGRAMS = ("setup.py", "conftest.py", "__init__.py")


class VerifyUsageError(ValueError):
    """Bad arguments: the CLI exits 2 with this message."""


@dataclass
class VerifyOptions:
    call: str | None = None  # None: main() when the module defines it, else script mode
    devices: tuple[str, ...] | None = None  # "cpu", "gpu", "tpu"; None: every available one
    repeat: int = 5
    x64: bool = False  # run the converted side with JAX_ENABLE_X64=1 (a port that does not)
    x32_trial: bool = False  # also run it in JAX's 32-bit defaults: are 32 bits enough?
    rtol: float | None = None
    atol: float | None = None
    timeout_s: float = 60.0
    memory_bytes: int | None = None  # None: half the machine's memory
    stochastic: dict = field(default_factory=dict)  # output name -> absolute tolerance

    def tolerance(self, x64: bool | None = None) -> Tolerance:
        """By the precision the converted side ran in (`x64`, from its child), if known."""
        x64 = self.x64 if x64 is None else x64
        return Tolerance(rtol=self.rtol, atol=self.atol, x64=x64, floor32=not x64)


@dataclass
class Timing:
    first_call_s: float | None
    median_s: float | None
    runs: int
    times_s: list = field(default_factory=list)

    @classmethod
    def of(cls, outcome: RunOutcome) -> "Timing":
        times = list(outcome.times_s)
        return cls(outcome.first_call_s, statistics.median(times) if times else None, len(times), times)

    @property
    def steady_s(self) -> float | None:
        """The median of the repeats; the first call when there were none."""
        return self.median_s if self.median_s is not None else self.first_call_s

    def as_dict(self) -> dict:
        return {"first_call_s": self.first_call_s, "median_s": self.median_s, "runs": self.runs,
                "times_s": self.times_s}


@dataclass
class VerifyResult:
    original: str
    converted: str
    verdict: str
    outputs: list[OutputComparison] = field(default_factory=list)
    numpy: Timing | None = None
    jax: dict = field(default_factory=dict)  # device -> Timing
    error: str | None = None
    mode: str | None = None  # "main()" style call, or "script"
    uses_jax: bool | None = None
    label: str = ""  # the path shown in tables (relative inside trees)
    x32: dict = field(default_factory=dict)  # device -> PrecisionTrial (VerifyOptions.x32_trial)
    warnings: list = field(default_factory=list)  # what the converted side warns, not the original
    unsteady: dict = field(default_factory=dict)  # device -> the repeat whose results changed

    @property
    def ok(self) -> bool:
        return self.verdict in PASSING

    def problems(self) -> list[str]:
        return [p for p in (o.problem() for o in self.outputs) if p]

    def as_dict(self) -> dict:
        return {"original": self.original, "converted": self.converted, "verdict": self.verdict,
                "mode": self.mode, "uses_jax": self.uses_jax,
                "outputs": [o.as_dict() for o in self.outputs],
                "timings": {"numpy": self.numpy.as_dict() if self.numpy else None,
                            "jax": {device: t.as_dict() for device, t in self.jax.items()}},
                "error": self.error, "warnings": self.warnings, "unsteady": self.unsteady,
                "x32": {device: trial.as_dict() for device, trial in self.x32.items()}}


@dataclass
class PrecisionTrial:
    """The converted program run again in JAX's 32-bit defaults (its
    `jax.config.update("jax_enable_x64", True)` ignored), compared with NumPy at float32's
    tolerance: whether 32 bits are enough for these inputs, and what they save."""

    enough: bool
    problem: str | None = None  # the first output that differs, or the error
    timing: Timing | None = None

    def as_dict(self) -> dict:
        return {"enough": self.enough, "problem": self.problem,
                "timing": self.timing.as_dict() if self.timing else None}


@dataclass
class VerifyRun:
    results: list[VerifyResult] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    def counts(self) -> dict[str, int]:
        found = {verdict: 0 for verdict in VERDICTS}
        for result in self.results:
            found[result.verdict] += 1
        return {verdict: n for verdict, n in found.items() if n}

    def as_dict(self) -> dict:
        return {"results": [r.as_dict() for r in self.results], "devices": self.devices,
                "summary": self.counts()}


# -- devices -------------------------------------------------------------------------------

def parse_devices(text: str | None) -> tuple[str, ...] | None:
    """"cpu,gpu" -> ("cpu", "gpu"); "all" or None -> None (every available device)."""
    if text is None:
        return None
    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not names or "all" in names:
        if len(names) > 1:
            raise VerifyUsageError("--devices: 'all' cannot be combined with device names")
        return None
    unknown = [n for n in names if n not in DEVICE_NAMES]
    if unknown:
        raise VerifyUsageError(f"--devices: unknown device {unknown[0]!r}; choose from cpu, gpu, tpu or all")
    return tuple(dict.fromkeys(names))


def resolve_devices(requested: tuple[str, ...] | None) -> list[tuple[str, str]]:
    """[(device name, JAX_PLATFORMS value)]. Only `--devices all` (the default) asks JAX,
    in a child, which devices there are; CPU needs no asking."""
    if requested == ("cpu",):
        return [("cpu", "cpu")]
    platforms, problem = probe_platforms()
    if requested is None and not platforms:
        return [("cpu", "cpu")]  # JAX missing: the converted side reports it as its error
    chosen = []
    for name in requested or DEVICE_NAMES:
        platform = next((p for p in _PLATFORMS[name] if p in platforms), None)
        if platform is None:
            if requested is not None and name != "cpu":
                have = ", ".join(sorted(platforms)) or "none"
                raise VerifyUsageError(f"--devices: no {name} here (JAX platforms found: {have}"
                                       f"{'; ' + problem if problem else ''})")
            if name == "cpu":
                chosen.append(("cpu", "cpu"))
            continue
        chosen.append((name, platform))
    return chosen


# -- which files, and how to run them --------------------------------------------------------

def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()

    def visit(body):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Name):
                            names.add(sub.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    names.add((alias.asname or alias.name).split(".")[0])
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                visit(node.body)
                for extra in ("orelse", "finalbody"):
                    visit(getattr(node, extra, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return names


def plan(path: Path, options: VerifyOptions, in_tree: bool, entry_points_only: bool = False):
    """("call", name) | ("script", None) | ("skip", reason), decided from the original's source
    (parsed with ast, not run)."""
    wanted = options.call or "main"
    try:
        names = _top_level_names(ast.parse(path.read_bytes(), filename=str(path)))
    except (SyntaxError, ValueError, OSError):
        names = None  # the child reports the real error
    if names is None or wanted in names:
        return ("call", wanted)
    if entry_points_only:
        return ("skip", f"defines no {wanted}()")
    if options.call is not None:
        if in_tree:
            return ("skip", f"defines no {wanted}()")
        return ("call", wanted)  # the child says the module has no such function
    name = path.name
    if in_tree and (name in _NOT_PROGRAMS or name.startswith("test_") or name.endswith("_test.py")):
        return ("skip", "a test, conftest, setup or package file, without main()")
    return ("script", None)


def _walk(root: Path) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        found.extend(Path(folder) / name for name in sorted(files) if name.endswith(".py"))
    return found


@dataclass(frozen=True)
class Pair:
    original: Path
    converted: Path
    original_root: Path | None = None  # tree roots go on the import path after the folder
    converted_root: Path | None = None
    label: str = ""


def pairs_for(original: Path, converted: Path) -> list[Pair]:
    """Two files; a file and a folder (the file of the same name in it); or two trees (files
    paired by relative path)."""
    if not original.exists():
        raise VerifyUsageError(f"{original}: no such file or directory")
    if not converted.exists():
        raise VerifyUsageError(f"{converted}: no such file or directory")
    if original.is_file():
        if converted.is_dir():
            converted = converted / original.name
        return [Pair(original, converted, label=original.name)]
    if not converted.is_dir():
        raise VerifyUsageError(f"{original} is a folder, so {converted} must be one too")
    return [Pair(path, converted / path.relative_to(original), original, converted,
                 path.relative_to(original).as_posix()) for path in _walk(original)]


# -- verification ----------------------------------------------------------------------------

def _sys_path(path: Path, root: Path | None) -> list[Path]:
    folders = [path.resolve().parent]
    if root is not None and root.resolve() not in folders:
        folders.append(root.resolve())
    return folders


def verify_pair(pair: Pair, options: VerifyOptions, devices: list[tuple[str, str]],
                in_tree: bool = False, entry_points_only: bool = False) -> VerifyResult:
    result = VerifyResult(str(pair.original), str(pair.converted), "skipped",
                          label=pair.label or pair.original.name)
    if not pair.converted.is_file():
        result.verdict, result.error = "error", f"no converted file {pair.converted}"
        return result
    how, detail = plan(pair.original, options, in_tree, entry_points_only)
    if how == "skip":
        result.error = detail
        return result
    result.mode = "script" if how == "script" else f"{detail}()"
    memory = options.memory_bytes or default_memory_bytes()
    common = dict(mode=how, call=detail, repeat=options.repeat, timeout_s=options.timeout_s,
                  memory_bytes=memory)
    reference = run_side(pair.original, sys_path=_sys_path(pair.original, pair.original_root),
                         env={"JAX_PLATFORMS": "cpu"}, **common)
    if not reference.ok:
        result.verdict, result.error = "error", f"original: {reference.error}"
        return result
    result.numpy = Timing.of(reference)
    ref_tree = decode(reference.tree)
    stochastic = {**reference.stochastic, **options.stochastic}
    errors, outputs = [], []
    for device, platform in devices:
        env = {"JAX_PLATFORMS": platform}
        if options.x64:
            env["JAX_ENABLE_X64"] = "1"
        got = run_side(pair.converted, sys_path=_sys_path(pair.converted, pair.converted_root),
                       env=env, **common)
        if not got.ok:
            errors.append(f"converted on {device}: {got.error}")
            continue
        result.jax[device] = Timing.of(got)
        result.warnings += [w for w in got.warnings
                            if w not in reference.warnings and w not in result.warnings]
        result.uses_jax = bool(result.uses_jax) or got.uses_jax
        if got.unsteady_run is not None and reference.unsteady_run is None:
            result.unsteady[device] = got.unsteady_run
        compared = compare_trees(ref_tree, decode(got.tree), tolerance=options.tolerance(got.x64),
                                 stochastic=stochastic, ignore_extra_root_keys=how == "script")
        for output in compared:
            output.device = device
        outputs.extend(compared)
        if not got.uses_jax:
            break  # a program that never imports JAX runs the same on every device
        if options.x32_trial and got.x64:
            result.x32[device] = _precision_trial(pair, env, common, ref_tree, stochastic, how,
                                                  options)
    result.outputs = outputs
    if errors:
        result.verdict, result.error = "error", "; ".join(errors)
    elif how == "script" and not outputs:
        result.verdict = "skipped"
        result.error = "no main() and no module-level arrays or numbers to compare"
    elif any(not o.equal for o in outputs):
        result.verdict = "differs"
    elif result.unsteady:
        result.verdict = "unsteady"
    elif result.warnings:
        result.verdict = "unclean"
    elif any(o.stochastic for o in outputs):
        result.verdict = "stochastic-equal"
    else:
        result.verdict = "equal"
    return result


def _precision_trial(pair: Pair, env: dict, common: dict, ref_tree, stochastic: dict, how: str,
                     options: VerifyOptions) -> PrecisionTrial:
    trial = run_side(pair.converted, sys_path=_sys_path(pair.converted, pair.converted_root),
                     env={**env, "JAX_ENABLE_X64": "0", "NP2JAX_VERIFY_X32": "1"}, **common)
    if not trial.ok:
        return PrecisionTrial(False, trial.error)
    compared = compare_trees(ref_tree, decode(trial.tree),
                             tolerance=Tolerance(rtol=options.rtol, atol=options.atol, floor32=True),
                             stochastic=stochastic, ignore_extra_root_keys=how == "script")
    problem = next((p for p in (o.problem() for o in compared) if p), None)
    return PrecisionTrial(problem is None, problem, Timing.of(trial))


def _check(options: VerifyOptions) -> None:
    if options.repeat < 0:
        raise VerifyUsageError("--repeat must be 0 or more")
    if options.timeout_s <= 0:
        raise VerifyUsageError("--timeout must be more than 0 seconds")
    for name in ("rtol", "atol"):
        value = getattr(options, name)
        if value is not None and value < 0:
            raise VerifyUsageError(f"--{name} must not be negative")


def verify_pairs(pairs: list[Pair], options: VerifyOptions, *, in_tree: bool = False,
                 entry_points_only: bool = False, progress=None) -> VerifyRun:
    """Verify each pair, one child at a time (timings of children running side by side
    would disturb each other). `progress(result)` is called after each."""
    _check(options)
    devices = resolve_devices(options.devices)
    run = VerifyRun(devices=[device for device, _ in devices])
    for pair in pairs:
        result = verify_pair(pair, options, devices, in_tree, entry_points_only)
        run.results.append(result)
        if progress is not None:
            progress(result)
    return run


def verify_paths(original: Path, converted: Path, options: VerifyOptions | None = None,
                 progress=None) -> VerifyRun:
    """Verify two files, or two trees (files paired by relative path)."""
    original, converted = Path(original), Path(converted)
    pairs = pairs_for(original, converted)
    return verify_pairs(pairs, options or VerifyOptions(), in_tree=original.is_dir(),
                        progress=progress)


def parse_stochastic(values) -> dict[str, float]:
    """["pi=0.05", "mean=0.1"] -> {"pi": 0.05, "mean": 0.1}."""
    found = {}
    for value in values or ():
        name, sep, tol = value.rpartition("=")
        try:
            number = float(tol)
        except ValueError:
            number = -1.0
        if not sep or not name or number < 0:
            raise VerifyUsageError(f"--stochastic {value!r}: expected NAME=TOLERANCE, e.g. pi=0.05")
        found[name] = number
    return found
