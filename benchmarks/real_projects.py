"""Convert real pure-NumPy packages from PyPI and run their own test suites against the
converted code (docs/real-projects.md shows the table and traces every changed outcome).

Not part of the test suite: it downloads pinned sdists (network) and runs whole test suites
(minutes). For each project it

1. downloads the sdist (`pip download --no-binary :all: --no-deps NAME==VERSION`) and unpacks
   it twice: `original/` and `converted/`;
2. converts the library code only (`np2jax convert PKG --out ... --exclude TESTS`), and copies
   the converted files over `converted/`, so the package's unconverted tests import the
   converted library;
3. runs `np2jax verify original converted --tests -- PYTEST_ARGS`, which reports every test
   whose outcome changed;
4. traces each test that passed before and fails after: reruns its test file on the
   converted tree (native tracebacks), takes the deepest frame in the converted library,
   maps it back to the original line, and names the findings np2jax reported there
   ("test code" when no library frame is involved, "UNTRACED" when no finding is there);
5. prints one table row and the traces (and writes the JSON reports under the work folder);
   the row has the coverage figure of the conversion (`moved to JAX`: the library's NumPy
   call sites that became JAX code, np2jax.findings.Coverage) and the share of the tests
   passing on NumPy that still pass on JAX.

With `--jit` the library is converted with `--jit` too (every function proven traceable
compiled with jax.jit), and the row adds how many functions were compiled (NJ501) and left
eager (NJ502).

With `--interface numpy` the library is converted with `--interface numpy` (NJ105): its public
functions return NumPy arrays and scalars to the test suite, as before the conversion.

With `--prove` each project is instead converted by the proving loop, from the unpacked
sdist's root: `np2jax convert PKG --out DST --prove --x64 --exclude TESTS ... --format json
-- --continue-on-collection-errors PYTEST_ARGS` (np2jax.proving: record the suite's calls,
replay each converted function on them, keep on NumPy those that differ, err or are slow,
convert again; then the suite on the original and on the result). Its row: the rounds, the
functions on JAX (proven equal and not kept), kept on NumPy (by verdict), not exercised and
unreplayable, the share of the suite's calls of the package that went to functions on JAX,
the tests passing before and after, the wall time; then each kept function with its reason
and each test still failing traced as above (on stderr; prove.json under the work folder).

Usage: python benchmarks/real_projects.py [--work DIR] [--only NAME ...] [--float32] [--jit]
                                          [--interface numpy]
       python benchmarks/real_projects.py --prove [--prove-timeout S] [--interface numpy]
                                          [--work DIR] [--only ...]
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from xml.etree import ElementTree

NP2JAX = [sys.executable, "-m", "np2jax"]


@dataclass
class Project:
    name: str
    version: str
    package: str  # the library folder inside the sdist
    pytest_args: list[str]
    # the tests stay NumPy-free of conversion: they must test the converted library
    exclude: list[str] = field(default_factory=lambda: ["tests", "test_*.py", "conftest.py"])
    x64: bool = True  # the suites compare floats at float64 precision
    # pytest options of every run of the suite, the failures' rerun too (`-c pyproject.toml`)
    pytest_options: list[str] = field(default_factory=list)


PROJECTS = [
    Project("transforms3d", "0.4.2", "transforms3d", ["transforms3d"]),
    Project("nolds", "0.2.1", "nolds", ["nolds/test_measures.py"]),
    Project("pyrr", "0.10.3", "pyrr", ["tests"]),
    # finance: loan and cash-flow functions (npv, irr, pmt, ...); no dependency but NumPy
    Project("numpy-financial", "1.0.0", "numpy_financial", ["numpy_financial"]),
    # statistics: proper scoring rules of probabilistic forecasts (CRPS, Brier); NumPy and
    # SciPy; numba is optional (without it, the NumPy code paths run: numba is not installed)
    Project("properscoring", "0.1", "properscoring", ["properscoring"]),
    # geodesy: coordinate conversions (geodetic, ECEF, ENU, AER), Vincenty distances, rhumb
    # lines; NumPy where it is installed, else `math` (its functions take Python floats and
    # arrays alike, which makes it a test of Python numbers meeting JAX arrays)
    Project("pymap3d", "3.1.0", "src/pymap3d", ["src/pymap3d/tests"]),
    # state estimation: Kalman filters (linear, extended, unscented, ensemble, information,
    # square-root), smoothers, IMM; classes holding their state in arrays they update in
    # place (`self.x`, `self.P`). Its tests plot with matplotlib (installed beside it).
    Project("filterpy", "1.4.5", "filterpy", ["filterpy"]),
    # numerical differentiation: finite differences with Richardson extrapolation
    # (Derivative, Gradient, Jacobian, Hessian), Fornberg weights, limits; NumPy and SciPy
    # (its statsmodels-backed tests fail on either side: statsmodels is not installed)
    # (its tests/pytest.ini is not valid ini: the run reads pyproject.toml instead)
    Project("numdifftools", "0.11.2", "src/numdifftools",
            ["src/numdifftools/tests"], pytest_options=["-c", "pyproject.toml"]),
    # fuzzy logic: membership functions, defuzzification, fuzzy c-means, fuzzy control
    # systems (networkx, installed aside on PYTHONPATH); its pyproject's addopts
    # (--maxfail=1 --failed-first) are cleared
    Project("scikit-fuzzy", "0.5.0", "skfuzzy", ["skfuzzy"], pytest_options=["-o", "addopts="]),
    # attitude and heading estimation: quaternions, rotation matrices, AHRS filters
    # (Madgwick, Mahony, EKF, ...), WGS84 and magnetic models; NumPy only
    Project("ahrs", "0.4.0", "ahrs", ["tests"]),
    # design of experiments: factorial, composite, Box-Behnken, Latin-hypercube, Sobol,
    # Halton and optimal designs (integer and float matrices built by indexing); NumPy and SciPy
    Project("pyDOE3", "1.6.2", "pyDOE3", ["tests"]),
    # finite differences: derivative operators of any order on uniform and non-uniform grids
    # (sparse matrices), stencils, PDE solvers; NumPy, SciPy and SymPy (installed aside on
    # PYTHONPATH: `pip install --target DIR sympy`)
    Project("findiff", "0.16.0", "findiff", ["tests"]),
    # emcee 3.1.6 ("src/emcee", ["src/emcee/tests"]) converts, but its suite did not finish on
    # the shared 2-core machine in the session's time: not in docs/real-projects.md.
]


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    print("$", " ".join(command), file=sys.stderr, flush=True)
    return subprocess.run(command, check=False, text=True, capture_output=True, **kwargs)


def fetch(project: Project, sdists: Path) -> Path:
    spec = f"{project.name}=={project.version}"
    # newer sdists spell the name normalized (scikit_fuzzy-0.5.0.tar.gz)
    # (and lower-cased: pydoe3-1.6.2.tar.gz for pyDOE3)
    names = {project.name, project.name.replace("-", "_"), project.name.lower()}
    existing = [p for n in sorted(names) for p in sdists.glob(f"{n}-{project.version}.*")]
    if not existing:
        # pip prepares the sdist's metadata in an isolated build environment (some
        # sdists need build tools, such as versioneer, that this venv lacks)
        done = run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:",
                    "--no-deps", spec, "-d", str(sdists)])
        existing = [p for n in sorted(names) for p in sdists.glob(f"{n}-{project.version}.*")]
        if not existing:
            raise SystemExit(f"{spec}: download failed: {done.stderr.strip()[-300:]}")
    return existing[0]


def unpack(archive: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    staging = target.with_name(target.name + ".unpack")
    shutil.rmtree(staging, ignore_errors=True)
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(staging)
    else:
        with tarfile.open(archive) as bundle:
            bundle.extractall(staging, filter="data")
    (top,) = staging.iterdir()  # an sdist holds one NAME-VERSION folder
    top.rename(target)
    staging.rmdir()


def library_files(package: Path, exclude: list[str]) -> list[Path]:
    """The files convert takes (np2jax's --exclude matches the path, its name or any part)."""
    return [p for p in sorted(package.rglob("*.py"))
            if not any(fnmatch(part, pattern) for pattern in exclude
                       for part in p.relative_to(package).parts)]


def convert_command(project: Project, package: Path, out: Path, x64: bool, jit: bool,
                    interface: str = "jax") -> list[str]:
    """`np2jax convert` of the library at `package` (its tests excluded) into `out`, as JSON."""
    command = [*NP2JAX, "convert", str(package), "--out", str(out), "--format", "json"]
    for pattern in project.exclude:
        command += ["--exclude", pattern]
    if x64:
        command.append("--x64")
    if jit:
        command.append("--jit")
    if interface != "jax":
        command += ["--interface", interface]
    return command


def convert_project(project: Project, work: Path, x64: bool, jit: bool = False,
                    interface: str = "jax") -> dict:
    archive = fetch(project, work / "sdists")
    base = work / project.name
    original, converted, out = base / "original", base / "converted", base / "converted-pkg"
    unpack(archive, original)
    shutil.rmtree(converted, ignore_errors=True)
    shutil.copytree(original, converted)
    shutil.rmtree(out, ignore_errors=True)
    exclude = project.exclude
    done = run(convert_command(project, original / project.package, out, x64, jit, interface))
    (base / "convert.json").write_text(done.stdout)
    report = json.loads(done.stdout)
    for path in out.rglob("*.py"):
        shutil.copy2(path, converted / project.package / path.relative_to(out))
    files = library_files(original / project.package, exclude)
    return {"report": report, "files": len(files),
            "lines": sum(len(p.read_text("utf-8").splitlines()) for p in files),
            "original": original, "converted": converted}


def verify_project(project: Project, converted: dict, x64: bool, timeout: int = 3600) -> dict:
    command = [*NP2JAX, "verify", str(converted["original"]), str(converted["converted"]),
               "--tests", "--devices", "cpu", "--format", "json", "--timeout", str(timeout)]
    if x64:
        command.append("--x64")
    # a test module whose import fails stays one error instead of stopping the whole run
    done = run([*command, "--", "--continue-on-collection-errors", *project.pytest_options,
                               *project.pytest_args])
    base = Path(converted["original"]).parent
    (base / "verify.json").write_text(done.stdout)
    if not done.stdout.strip():
        raise SystemExit(f"{project.name}: verify printed nothing: {done.stderr[-500:]}")
    return json.loads(done.stdout)


def test_file(tree: Path, classname: str) -> Path | None:
    """JUnit's classname (`tests.objects.test_vector3.test_object_vector3`) -> its file."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        candidate = tree.joinpath(*parts[:end]).with_suffix(".py")
        if candidate.is_file():
            return candidate
    return None


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def failure_frames(tree: Path, files: list[Path], x64: bool,
                   options: list[str]) -> dict[str, list[tuple[str, int]]]:
    """test id -> the (file, line) frames of its failure, from a rerun of `files` on `tree`."""
    report = tree.parent / "trace-junit.xml"
    # the tree first, then the caller's path (a test dependency installed aside, as verify does)
    path = os.pathsep.join([str(tree), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])
    env = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1",
           "JAX_PLATFORMS": "cpu", **({"JAX_ENABLE_X64": "1"} if x64 else {})}
    run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=native",
         f"--junitxml={report}", "-o", "junit_family=xunit2", "--continue-on-collection-errors",
         *options, *map(str, files)], cwd=tree, env=env, timeout=3600)
    frames = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name')}" if case.get("classname") else case.get("name")
        for child in case:
            if child.tag in ("failure", "error"):
                frames[test] = [(f, int(n)) for f, n in _FRAME.findall(child.text or "")]
    return frames


def original_line(original: Path, converted: Path, line: int) -> int | None:
    """The line of `original` that line `line` of `converted` came from (None: added)."""
    old = original.read_text("utf-8").splitlines()
    new = converted.read_text("utf-8").splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if j1 <= line - 1 < j2:
            if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
                return i1 + (line - 1 - j1) + 1
            return i1 + 1 if tag == "replace" else None
    return None


def trace(project: Project, converted: dict, verified: dict, x64: bool) -> list[tuple[str, str]]:
    """(test, cause) for every test that passed on NumPy and does not on JAX."""
    broken = [c for c in verified["changed"] if c["original"] == "passed"]
    if not broken:
        return []
    original_tree, converted_tree = Path(converted["original"]), Path(converted["converted"])
    files = sorted({f for c in broken if (f := test_file(converted_tree, c["test"].split("::")[0]))})
    frames = failure_frames(converted_tree, files, x64, project.pytest_options)
    package = (converted_tree / project.package).resolve()
    findings = defaultdict(list)
    for finding in converted["report"]["findings"]:
        relative = Path(finding["path"]).resolve().relative_to((original_tree / project.package).resolve())
        findings[(str(relative), finding["line"])].append(finding["code"])
    traces = []
    for change in broken:
        test = change["test"]
        module_test = test.split("::")[0]
        stack = frames.get(test) or frames.get(module_test) or []
        library = [(Path(f).resolve(), n) for f, n in stack
                   if Path(f).resolve().is_relative_to(package)
                   and not any(fnmatch(part, pattern) for pattern in project.exclude
                               for part in Path(f).resolve().relative_to(package).parts)]
        absent = change["converted"] == "absent"
        if absent and not library:
            cause = "not collected: its module failed to import"
        elif not library:
            cause = "test code: " + (change["message"] or "")[:90]
        else:  # a test module that fails to import is traced through its import's frames
            path, line = library[-1]
            relative = path.relative_to(package)
            old_line = original_line(original_tree / project.package / relative, path, line)
            codes = findings.get((str(relative), old_line), [])
            where = f"{relative}:{old_line}"
            if codes:
                cause = f"{where} flagged {','.join(sorted(set(codes)))}"
            else:
                earlier = findings_before(original_tree / project.package / relative, old_line,
                                          str(relative), findings)
                cause = f"{where} UNTRACED" + (f" (earlier in its function: {earlier})"
                                               if earlier else "")
            cause += f": {(change['message'] or '')[:90]}"
            if absent:
                cause = "its module failed to import at " + cause
        traces.append((test, cause))
    return traces


def findings_before(path: Path, line: int | None, relative: str, findings: dict) -> str:
    """The findings on the lines of the function holding `line` before it (`NJ102 at :34`):
    a hint for the reader, never counted as a trace (the failing line itself has none)."""
    if line is None:
        return ""
    try:
        tree = ast.parse(path.read_text("utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return ""
    functions = [node for node in ast.walk(tree)
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.lineno <= line <= (node.end_lineno or node.lineno)]
    if not functions:
        return ""
    start = max(f.lineno for f in functions)  # the innermost
    return ", ".join(f"{','.join(sorted(set(findings[(relative, n)])))} at :{n}"
                     for n in range(start, line) if findings.get((relative, n)))


def counts_cell(counts: dict) -> str:
    passed = counts.get("passed", 0)
    failed = counts.get("failed", 0) + counts.get("error", 0)
    skipped = counts.get("skipped", 0)
    return f"{passed} / {failed}" + (f" ({skipped} skipped)" if skipped else "")


def coverage_cell(coverage: dict | None) -> str:
    """`moved of call sites (percent)`: the library's NumPy call sites now JAX code."""
    if not coverage or not coverage["call_sites"]:
        return "-"
    from np2jax.findings import format_percent

    percent = format_percent(100 * coverage["moved"] / coverage["call_sites"])
    return f"{coverage['moved']} of {coverage['call_sites']} ({percent})"


def still_passing_cell(before: dict, newly_failing: int, error: str | None = None) -> str:
    """Of the tests that passed on NumPy, how many still pass on JAX (the goal: 90%); a
    run that did not finish (a timeout) says so, never a figure."""
    if error:
        return f"not measured ({error.split(':')[0]})"
    passed = before.get("passed", 0)
    if not passed:
        return "-"
    kept = passed - newly_failing
    return f"{kept} of {passed} ({100 * kept / passed:.0f}%)"


def cause_kind(cause: str) -> str:
    """A trace's cause (trace()) as a column: flagged, test code or untraced (no finding on
    the failing line, or a test module that no longer imports)."""
    if cause.startswith("test code"):
        return "test code"
    if " flagged " in cause.split(": ", 1)[0]:
        return "flagged"
    return "untraced"


PROVE_HEADER = ("| package | version | rounds | functions | on JAX | kept on NumPy | not exercised "
                "| unreplayable | calls on JAX | tests passing: original / result | newly failing "
                "| wall |")


def prove_project(project: Project, work: Path, x64: bool, prove_timeout: float,
                  timeout: int, interface: str = "jax") -> dict:
    """`np2jax convert PKG --out DST --prove ...` from the unpacked sdist's root; its JSON
    report (with "prove"), the command, the trees and the wall time."""
    archive = fetch(project, work / "sdists")
    base = work / project.name / "prove"
    root, out = base / "src", base / "out" / project.package
    unpack(archive, root)
    shutil.rmtree(base / "out", ignore_errors=True)
    command = [*NP2JAX, "convert", project.package, "--out", str(out), "--prove",
               "--format", "json", "--prove-timeout", f"{prove_timeout:g}"]
    for pattern in project.exclude:
        command += ["--exclude", pattern]
    command.append("--x64" if x64 else "--x32")
    if interface != "jax":
        command += ["--interface", interface]
    command += ["--", "--continue-on-collection-errors", *project.pytest_options, *project.pytest_args]
    started = time.monotonic()
    done = run(command, cwd=root, timeout=timeout)
    wall = time.monotonic() - started
    (base / "prove.json").write_text(done.stdout)
    (base / "prove.stderr").write_text(done.stderr)
    if not done.stdout.strip():
        raise SystemExit(f"{project.name}: convert --prove printed nothing: {done.stderr[-800:]}")
    report = json.loads(done.stdout)
    for finding in report["findings"]:  # relative to the sdist's root, where it ran
        finding["path"] = str(root / finding["path"])
    return {"report": report, "command": command, "root": root, "out": out, "wall_s": wall,
            "mirror": out.parent / f".{out.name}-prove" / "project", "returncode": done.returncode}


def kept_verdict(entry: str) -> str:
    """A keep-numpy entry the loop added (`PATH::QUALNAME=VERDICT: first difference`) -> its
    verdict."""
    return entry.partition("=")[2].partition(":")[0] or "?"


def prove_row(project: Project, proved: dict) -> str:
    prove = proved["report"]["prove"]
    functions = prove["functions"]
    kept = Counter(kept_verdict(entry) for entry in prove["kept_on_numpy"])
    kept_names = {entry.partition("=")[0] for entry in prove["kept_on_numpy"]}
    on_jax = prove["calls_on_jax"] or {}
    share = on_jax.get("share")
    tests = prove["tests"] or {}
    kept_cell = f"{sum(kept.values())}" + (
        f" ({', '.join(f'{v} {n}' for v, n in sorted(kept.items()))})" if kept else "")
    count = Counter(f["verdict"] for f in functions)
    return (f"| {project.name} | {project.version} | {prove['rounds']} | {len(functions)} "
            f"| {on_jax.get('functions_on_jax', sum(1 for f in functions if f['verdict'] == 'equal' and f['key'] not in kept_names))} "
            f"| {kept_cell} | {count['not-exercised']} | {count['unreplayable']} "
            f"| {on_jax.get('calls_on_jax', '-')} of {on_jax.get('calls', '-')}"
            + (f" ({100 * share:.0f}%)" if share is not None else "")
            + f" | {tests.get('passed_before', '-')} / {tests.get('passed_after', '-')}"
            + (f" ({tests['error']})" if tests.get("error") else "")
            + f" | {len(prove['newly_failing'])} | {proved['wall_s']:.0f} s |")


def prove_main(args, projects: list[Project]) -> int:
    print(PROVE_HEADER)
    print("|" + "---|" * 12)
    for project in projects:
        x64 = project.x64 and not args.float32
        proved = prove_project(project, args.work, x64, args.prove_timeout, args.timeout,
                               args.interface)
        report, prove = proved["report"], proved["report"]["prove"]
        print(prove_row(project, proved), flush=True)
        print(f"  {project.name}: $ (cd {proved['root']} && "
              f"{' '.join(proved['command'][2:])})", file=sys.stderr)
        for entry in prove["kept_on_numpy"]:
            print(f"  {project.name}: kept on NumPy: {entry}", file=sys.stderr)
        for f in prove["functions"]:
            if f["verdict"] in ("unreplayable", "differs", "error", "slow"):
                print(f"  {project.name}: {f['key']}: {f['verdict']}: "
                      f"{f['first_difference'] or '; '.join(f['notes'])}", file=sys.stderr)
        messages = prove.get("newly_failing_messages") or {}
        changed = [{"test": test, "original": "passed", "converted": "failed",
                    "message": messages.get(test) or ""} for test in prove["newly_failing"]]
        traces = trace(project, {"report": report, "original": proved["root"],
                                 "converted": proved["mirror"]}, {"changed": changed}, x64) \
            if changed else []
        (args.work / project.name / "prove" / "traces.json").write_text(json.dumps(traces, indent=1))
        for test, cause in traces:
            print(f"  {project.name}: still failing: {test}: {cause}", file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/np2jax-real-projects"))
    parser.add_argument("--only", nargs="*", help="project names (default: all)")
    parser.add_argument("--timeout", type=int, default=3600,
                        help="seconds each test suite may run (eager JAX on tiny arrays is slow)")
    parser.add_argument("--jit", action="store_true",
                        help="convert with --jit (compile every function proven traceable)")
    parser.add_argument("--float32", action="store_true",
                        help="convert and run without --x64 (JAX's default 32-bit floats)")
    parser.add_argument("--interface", choices=("jax", "numpy"), default="jax",
                        help="what the converted library returns to its callers outside it, "
                        "the test suite (numpy: NumPy arrays and scalars, NJ105)")
    parser.add_argument("--prove", action="store_true",
                        help="convert with `convert --prove` from the sdist's root instead")
    parser.add_argument("--prove-timeout", type=float, default=60.0,
                        help="with --prove: seconds for one replayed call on one side")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "sdists").mkdir(exist_ok=True)
    if args.prove:
        return prove_main(args, [p for p in PROJECTS if not args.only or p.name in args.only])
    print("| package | version | files | lines | rewrites | findings | moved to JAX | x64 "
          "| NumPy: pass / fail | JAX: pass / fail | still passing | changed | newly failing "
          "| traced to a finding | test code | untraced |")
    print("|" + "---|" * 16)
    for project in PROJECTS:
        if args.only and project.name not in args.only:
            continue
        x64 = project.x64 and not args.float32
        converted = convert_project(project, args.work, x64, args.jit, args.interface)
        report = converted["report"]
        findings = Counter(f["code"] for f in report["findings"])
        verified = verify_project(project, converted, x64, args.timeout)["tests"]
        after = next(iter(verified["converted"].values()), {})
        changed = verified["changed"]
        traces = trace(project, converted, verified, x64)
        causes = Counter(cause_kind(cause) for _, cause in traces)
        print(f"| {project.name} | {project.version} | {converted['files']} "
              f"| {converted['lines']} | {len(report['changes'])} "
              f"| {sum(findings.values())} ({', '.join(f'{c} {n}' for c, n in sorted(findings.items()))}) "
              f"| {coverage_cell(report.get('coverage'))} "
              f"| {'yes' if x64 else 'no'} | {counts_cell(verified['original']['counts'])} "
              f"| {counts_cell(after.get('counts', {}))} "
              f"| {still_passing_cell(verified['original']['counts'], len(traces), after.get('error') or verified['original'].get('error'))} "
              f"| {len(changed)} | {len(traces)} | {causes['flagged']} | {causes['test code']} "
              f"| {causes['untraced']} |"
              + (f" compiled {len([c for c in report['changes'] if c['code'] == 'NJ501'])},"
                 f" eager {findings.get('NJ502', 0)} |" if args.jit else ""), flush=True)
        (args.work / project.name / "traces.json").write_text(json.dumps(traces, indent=1))
        for test, cause in traces:
            print(f"  {project.name}: {test}: {cause}", file=sys.stderr)
        for change in changed:
            if change["original"] != "passed":
                print(f"  {project.name}: {change['test']}: {change['original']} -> "
                      f"{change['converted']}", file=sys.stderr)
        for run_ in (verified["original"], after):
            if run_.get("error"):
                print(f"{project.name}: {run_['tree']}: {run_['error']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
