"""The command line: a thin layer over np2jax.api (typer for arguments, rich for output).

Exit codes: 0 clean; 1 findings remain (check) or something was left for you (convert);
2 usage errors, bad configuration, or files that could not be read, parsed or written.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

from np2jax import __version__
from np2jax.config import Config, ConfigError, keep_spec, load_config
from np2jax.findings import Finding

if TYPE_CHECKING:  # rich loads with the first console: --version and `rule --markdown` need none
    from rich.console import Console

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

app = typer.Typer(
    name="np2jax",
    help="Convert NumPy code to JAX, source to source, and report what could not be converted.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # -h on every command, as ruff
)


class VerifyFormat(str, Enum):
    """Formats of verify (check and convert have ReportFormat)."""
    text = "text"
    json = "json"


class ReportFormat(str, Enum):
    """Formats of check and convert (np2jax.report)."""
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


class Interface(str, Enum):
    """What converted functions return to callers outside the tree (Config.interface)."""
    jax = "jax"
    numpy = "numpy"


def _console(stderr: bool = False, width: int | None = None) -> Console:
    from rich.console import Console

    # Under NO_COLOR rich drops colours but keeps bold and underline; no escapes at all.
    plain = os.environ.get("NO_COLOR", "") != ""
    return Console(stderr=stderr, highlight=False, width=width,
                   color_system=None if plain else "auto")


def _fail(message: str) -> typer.Exit:
    """One unwrapped line on stderr, exit 2."""
    _console(stderr=True).print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_ERROR)


def _codes(values: Optional[List[str]]) -> Optional[tuple[str, ...]]:
    if values is None:
        return None
    return tuple(part.strip().upper() for value in values for part in value.split(",") if part.strip())


def _load_config(paths: list[Path], select, ignore, exclude, x64, jit=False,
                 no_cache=False, x32=False, keep_numpy=None, interface=None) -> Config:
    if x64 and x32:
        raise _fail("choose one of --x64 (the default) and --x32")
    start = paths[0] if paths else Path.cwd()
    # the nearest folder that exists: a --stdin-filename may name a file not on disk
    start = next((p for p in (start, *start.absolute().parents) if p.exists()), Path.cwd())
    try:
        base = load_config(start)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    for entry in keep_numpy or ():
        try:
            keep_spec(entry)
        except ValueError as exc:
            raise _fail(f"--keep-numpy: {exc}") from None
    return base.with_overrides(select=_codes(select), ignore=_codes(ignore),
                               # added to the file's entries (a run keeps both)
                               keep_numpy=tuple(dict.fromkeys((*base.keep_numpy, *keep_numpy)))
                               if keep_numpy else None,
                               exclude=tuple(exclude) if exclude else None,
                               x64=True if x64 else False if x32 else None,
                               jit=True if jit else None,
                               cache=False if no_cache else None,
                               interface=interface.value if interface is not None else None)


# Help texts are single strings (no line breaks: rich wraps them to the terminal), metavars
# short, so that the help column keeps its width on an 80-column terminal.
SelectOption = typer.Option(None, "--select", metavar="CODES",
                            help="Only these rule codes or prefixes (comma-separated).")
IgnoreOption = typer.Option(None, "--ignore", metavar="CODES",
                            help="Skip these rule codes or prefixes (comma-separated).")
ExcludeOption = typer.Option(None, "--exclude", metavar="GLOB",
                             help="Skip files matching this glob (repeatable).")
KeepNumpyOption = typer.Option(None, "--keep-numpy", metavar="SPEC",
                               help="Keep a function on NumPy as written: PATH::QUALNAME or "
                               "PATH::QUALNAME=REASON (PATH a suffix of the file's path, "
                               "QUALNAME f or Class.method); repeatable, added to keep-numpy "
                               "of pyproject.toml (NJ104).")
InterfaceOption = typer.Option(None, "--interface", metavar="KIND", show_default=False,
                               help="What the converted tree's public functions return to "
                               "callers outside it: jax (JAX arrays, the default) or numpy "
                               "(NumPy arrays and scalars, as before the conversion; NJ105).")
ReportFormatOption = typer.Option(ReportFormat.text, "--format", metavar="FORMAT",
                                  show_default=False, help="text (the default), json, sarif "
                                  "(SARIF 2.1.0) or github (workflow annotations).")
X64Option = typer.Option(False, "--x64", help="Compute in NumPy's 64-bit dtypes (the default): "
                         "converted modules enable jax_enable_x64.")
X32Option = typer.Option(False, "--x32", help="Compute in JAX's 32-bit defaults (faster, half the "
                         "memory); NJ401 reports where that may change a result.")
JitOption = typer.Option(False, "--jit", help="Compile with jax.jit every function the analysis "
                         "proves traceable; report why the others are left alone (NJ5xx).")
JobsOption = typer.Option(None, "--jobs", "-j", min=1, metavar="N", help="Files processed in "
                          "parallel (default: one per CPU core; 1: no worker processes).")
NoCacheOption = typer.Option(False, "--no-cache", help="Neither read nor store cached results "
                             "(see `cache` in the guide).")
ExitZeroOption = typer.Option(False, "--exit-zero", help="Exit 0 even when findings remain "
                              "(2 still means a file could not be processed).")
StdinFilenameOption = typer.Option(None, "--stdin-filename", metavar="PATH",
                                   help="The path to report for standard input (-), and to "
                                   "find the configuration from.")
STDIN = "-"


def _reads_stdin(paths: list[Path], stdin_filename: Optional[str]) -> bool:
    """`-` (or no path with --stdin-filename) reads the source from standard input."""
    if not paths:
        if stdin_filename is None:
            raise _fail("give the files or folders to process, or - for standard input")
        return True
    if any(str(path) == STDIN for path in paths):
        if len(paths) > 1:
            raise _fail("- (standard input) cannot be combined with other paths")
        return True
    if stdin_filename is not None:
        raise _fail("--stdin-filename names standard input: give - as the path")
    return False


def _read_stdin() -> bytes:
    return sys.stdin.buffer.read()


@app.command(help="Convert NumPy code to JAX: to --out DIR, --in-place, or as a --diff (which "
                  "can also accompany --out).")
def convert(
    paths: List[Path] = typer.Argument(None, help="Python files or folders to convert; - for "
                                       "standard input (the result goes to standard output).",
                                       show_default=False),
    out: Optional[Path] = typer.Option(None, "--out", "-o", metavar="DIR",
                                       help="Write the converted tree under this folder."),
    in_place: bool = typer.Option(False, "--in-place", help="Rewrite the source files."),
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff; alone, write nothing."),
    copy_other: bool = typer.Option(False, "--copy-other", help="With --out, also copy non-Python files."),
    output_format: ReportFormat = ReportFormatOption,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Text: print only the findings, the "
                               "errors and the diff asked for; no summary, no progress bar."),
    select: Optional[List[str]] = SelectOption,
    ignore: Optional[List[str]] = IgnoreOption,
    exclude: Optional[List[str]] = ExcludeOption,
    x64: bool = X64Option,
    x32: bool = X32Option,
    jit: bool = JitOption,
    jobs: Optional[int] = JobsOption,
    no_cache: bool = NoCacheOption,
    verify_: bool = typer.Option(False, "--verify", help="With --out, run each converted file "
                                 "that has main() and its original, and compare (np2jax verify)."),
    html: Optional[Path] = typer.Option(None, "--html", metavar="FILE", help="Also write the run "
                                        "as one self-contained HTML page (diffs, findings, "
                                        "verification)."),
    exit_zero: bool = ExitZeroOption,
    stdin_filename: Optional[str] = StdinFilenameOption,
    keep_numpy: Optional[List[str]] = KeepNumpyOption,
    interface: Optional[Interface] = InterfaceOption,
    prove_: bool = typer.Option(False, "--prove", help="From the project's root, with --out and "
                                "a package: prove each function on the tests' calls, keep those "
                                "that differ on NumPy, convert again (-- ARGS: pytest's)."),
    prove_timeout: float = typer.Option(60.0, "--prove-timeout", metavar="SECONDS",
                                        help="With --prove: seconds for one call's replay on one "
                                        "side; a converted function past it where the original "
                                        "finished is slow, and kept on NumPy."),
    prove_devices: str = typer.Option("all", "--prove-devices", metavar="DEVICES",
                                      help="With --prove: cpu,gpu,tpu or all (the available "
                                      "ones): the converted functions are replayed and timed on "
                                      "each; one that differs on any is kept on NumPy."),
) -> None:
    from np2jax.api import convert_paths  # the conversion machinery loads only when used
    from np2jax.report import RunReport, emit, run_progress, unified_diff

    if prove_:
        _convert_proved(paths, out, output_format, quiet, select, ignore, exclude, x64, jit,
                        no_cache, x32, keep_numpy, jobs, exit_zero, interface, prove_timeout,
                        prove_devices)

    if _reads_stdin(paths, stdin_filename):
        _convert_stdin(stdin_filename, diff, out, in_place, copy_other, verify_, html,
                       output_format, quiet, exit_zero,
                       lambda p: _load_config(p, select, ignore, exclude, x64, jit, True, x32,
                                              keep_numpy, interface))
    if sum(bool(x) for x in (out, in_place)) > 1 or not (out or in_place or diff):
        raise _fail("choose one of --out DIR or --in-place, or --diff alone (it writes nothing)")
    if diff and in_place:
        raise _fail("--diff with --in-place is not supported: --diff alone shows the change")
    if verify_ and out is None:
        raise _fail("--verify needs --out DIR (it runs the converted files written there)")
    config = _load_config(paths, select, ignore, exclude, x64, jit, no_cache, x32, keep_numpy,
                          interface)
    try:
        with run_progress(_console(stderr=True), not quiet) as progress:
            run = convert_paths(paths, config, out=out, in_place=in_place,
                                copy_other=copy_other, jobs=jobs, progress=progress)
    except (ValueError, ConfigError) as exc:
        raise _fail(str(exc)) from None
    _warn_if_nothing_found(run, paths, quiet)
    _warn_unmatched_kept(run, config, quiet)
    verified = _verify_converted(paths, config, out, run.written, x64=config.x64,
                                 quiet=quiet or output_format is not ReportFormat.text) \
        if verify_ else None
    html_written = html is not None and _write_html(html, run, verified)
    counts = run.counts()
    if verified is not None:
        counts.update({f"verified {verdict}": n for verdict, n in verified.counts().items()})
    diffs = [unified_diff(r.path, r.original, r.converted) for r in run.files if r.changed] \
        if diff else []
    emit(RunReport("convert", findings=run.findings, errors=run.errors, counts=counts,
                   fixes=run.changes_by_code(), left=run.findings_by_code(),
                   changes=run.changes, written=run.written, diffs=diffs, verify=verified,
                   out=out if run.written else None, **_coverage(run)),
         output_format.value, _wide_console(), _console(stderr=True), quiet)
    if html_written:
        _say_html_written(html, _console(stderr=output_format is not ReportFormat.text), quiet)
    failed = verified is not None and not verified.ok
    raise typer.Exit(EXIT_ERROR if run.errors else
                     (EXIT_FINDINGS if (run.findings and not exit_zero) or failed else EXIT_CLEAN))


def _convert_stdin(stdin_filename, diff: bool, out, in_place: bool, copy_other: bool,
                   verify_: bool, html, output_format, quiet: bool, exit_zero: bool,
                   load_config) -> None:
    """`np2jax convert -`: the source from standard input, the converted source (or with
    --diff, the diff) on standard output, the report on standard error. A source that cannot
    be converted is written back as it came (a filter never loses its input), exit 2."""
    from np2jax.api import convert_stdin
    from np2jax.files import SourceError, decode_source
    from np2jax.report import RunReport, emit, unified_diff

    if out is not None or in_place or copy_other or verify_:
        raise _fail("with - (standard input) the converted source goes to standard output: "
                    "--out, --in-place, --copy-other and --verify do not apply")
    name = stdin_filename or STDIN
    config = load_config([Path(name)] if stdin_filename else [])
    data = _read_stdin()
    run = convert_stdin(data, config, name)
    html_written = html is not None and _write_html(html, run, None)
    stdout = sys.stdout.buffer
    if diff:
        stdout.write("".join(unified_diff(r.path, r.original, r.converted)
                             for r in run.files if r.changed).encode("utf-8", "surrogateescape"))
    elif run.files:
        try:
            encoding = decode_source(data, name).encoding
        except SourceError:  # pragma: no cover - decoded once already
            encoding = "utf-8"
        stdout.write(run.files[0].converted.encode(encoding))
    else:
        stdout.write(data)
    stdout.flush()
    err = _wide_console(stderr=True)
    emit(RunReport("convert", findings=run.findings, errors=run.errors, counts=run.counts(),
                   fixes=run.changes_by_code(), left=run.findings_by_code(),
                   changes=run.changes, **_coverage(run)),
         output_format.value, err, _console(stderr=True), quiet)
    if html_written:
        _say_html_written(html, _console(stderr=True), quiet)
    raise typer.Exit(EXIT_ERROR if run.errors else
                     (EXIT_FINDINGS if run.findings and not exit_zero else EXIT_CLEAN))


def _coverage(run) -> dict:
    """RunReport's coverage fields: the run's total and each processed file's."""
    return {"coverage": run.coverage(),
            "file_coverage": [(r.path, r.coverage) for r in run.files]}


def _write_html(path: Path, run, verified) -> bool:
    """--html: a write that fails is reported like any file that could not be written."""
    from np2jax.files import SourceError, write_atomic
    from np2jax.html_report import render_html

    try:
        write_atomic(path, render_html(run, verified))
    except (OSError, UnicodeEncodeError) as exc:
        run.errors.append(SourceError(str(path), f"cannot write the HTML report: {exc}"))
        return False
    return True


def _say_html_written(path: Path, console: Console, quiet: bool) -> None:
    """Where --html went, after the report: on `console` (stdout for a text report, stderr
    when stdout carries JSON, SARIF, annotations or a converted source)."""
    if not quiet:
        console.print(f"HTML report written to {path}", markup=False, highlight=False,
                      soft_wrap=True)


def _warn_if_nothing_found(run, paths: list[Path], quiet: bool) -> None:
    """A run that found no file to process says so (exit 0, as ruff does): a typo in a
    folder's name, or every file excluded, should not pass for a clean tree."""
    if not run.files and not run.errors and not quiet:
        shown = ", ".join(str(p) for p in paths)
        _console(stderr=True).print(f"warning: no Python files found in {shown}", style="yellow",
                                    markup=False, highlight=False, soft_wrap=True)


def _warn_unmatched_kept(run, config: Config, quiet: bool) -> None:
    """A keep-numpy entry that named no function of the processed files: one line each,
    naming it, so that a typo does not pass for a function kept on NumPy."""
    if quiet or not (run.files or run.errors):
        return
    for entry in run.unmatched_kept(config):
        _console(stderr=True).print(f"warning: keep-numpy entry {entry!r} names no function of "
                                    "the files processed", style="yellow", markup=False,
                                    highlight=False, soft_wrap=True)


def _wide_console(stderr: bool = False) -> Console:
    """Tables of the verifier are wide: do not squeeze them to 80 columns when not a terminal."""
    console = _console(stderr)
    if not console.is_terminal:
        console = _console(stderr, width=220)
    return console


def _progress(quiet: bool):
    """One line a file on stderr while verifying, only on a terminal."""
    err = _console(stderr=True)
    if quiet or not err.is_terminal:
        return None
    return lambda result: err.print(f"  {result.label}: {result.verdict}", markup=False,
                                    highlight=False)


def _verify_converted(paths: list[Path], config: Config, out: Path, written: list[Path],
                      x64: bool, quiet: bool):
    """convert --verify: each written file that has main() against its original."""
    from np2jax.files import discover, is_notebook
    from np2jax.verify import Pair, VerifyOptions, VerifyUsageError, verify_pairs

    targets = {Path(p).resolve() for p in written}
    files, _ = discover(paths, config)
    pairs = []
    for item in files:
        target = out / item.relative
        if target.resolve() not in targets:
            continue
        if is_notebook(item.path):
            if not quiet:
                _console(stderr=True).print(f"note: {item.path}: notebooks are not verified "
                                            "(--verify runs Python files)", markup=False,
                                            highlight=False, soft_wrap=True)
        else:
            root = item.path.parents[len(item.relative.parts) - 1]
            pairs.append(Pair(item.path, target, root, out, item.relative.as_posix()))
    try:
        return verify_pairs(pairs, VerifyOptions(x64=x64), in_tree=True, entry_points_only=True,
                            progress=_progress(quiet))
    except VerifyUsageError as exc:
        raise _fail(str(exc)) from None


@app.command(help="Report code that JAX cannot run as written; the fixable findings are "
                  "those np2jax convert rewrites.")
def check(
    paths: List[Path] = typer.Argument(None, help="Python files or folders to check; - for "
                                       "standard input.", show_default=False),
    output_format: ReportFormat = ReportFormatOption,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Text: print only the findings and "
                               "the errors; no summary, no progress bar."),
    show_fixes: bool = typer.Option(False, "--show-fixes", help="Also list the renames convert would make."),
    statistics: bool = typer.Option(False, "--statistics", help="Print how many findings each "
                                    "rule has, one line a rule, instead of the findings (text "
                                    "or json)."),
    exit_zero: bool = ExitZeroOption,
    stdin_filename: Optional[str] = StdinFilenameOption,
    select: Optional[List[str]] = SelectOption,
    ignore: Optional[List[str]] = IgnoreOption,
    exclude: Optional[List[str]] = ExcludeOption,
    x64: bool = X64Option,
    x32: bool = X32Option,
    jit: bool = JitOption,
    jobs: Optional[int] = JobsOption,
    no_cache: bool = NoCacheOption,
    keep_numpy: Optional[List[str]] = KeepNumpyOption,
    interface: Optional[Interface] = InterfaceOption,
) -> None:
    from np2jax.api import check_paths, check_stdin
    from np2jax.report import RunReport, emit, emit_statistics, run_progress

    if statistics and output_format not in (ReportFormat.text, ReportFormat.json):
        raise _fail("--statistics prints text or json")
    # the JSON report gives each fixable finding its edit, which costs about a rewrite
    json_fixes = output_format is ReportFormat.json and not statistics
    if _reads_stdin(paths, stdin_filename):
        name = stdin_filename or STDIN
        config = _load_config([Path(name)] if stdin_filename else [], select, ignore, exclude,
                              x64, jit, True, x32, keep_numpy, interface)
        run = check_stdin(_read_stdin(), config, name, fix_edits=json_fixes)
    else:
        config = _load_config(paths, select, ignore, exclude, x64, jit, no_cache, x32, keep_numpy,
                              interface)
        try:
            with run_progress(_console(stderr=True), not quiet) as progress:
                run = check_paths(paths, config, jobs=jobs, progress=progress,
                                  fix_edits=json_fixes)
        except ConfigError as exc:  # $NP2JAX_CACHE_MAX_MB
            raise _fail(str(exc)) from None
        _warn_if_nothing_found(run, paths, quiet)
    _warn_unmatched_kept(run, config, quiet)
    problems = run.problems  # computed (sorted, file by file) on each access
    renames = [c for c in run.changes if c.severity == "info"]
    findings = sorted(problems + (renames if show_fixes else []), key=Finding.order)
    if statistics:
        emit_statistics(findings, run.errors, output_format.value, _wide_console(),
                        _console(stderr=True), quiet)
    else:
        counts = {"checked": len(run.files), "failed": len(run.errors)}
        fixable = Counter(p.code for p in problems if p.fixable)
        emit(RunReport("check", findings=findings, errors=run.errors, counts=counts,
                       fixes=fixable, left=run.findings_by_code(), fixes_label="convert fixes",
                       **_coverage(run)),
             output_format.value, _wide_console(), _console(stderr=True), quiet)
    raise typer.Exit(EXIT_ERROR if run.errors else
                     (EXIT_FINDINGS if problems and not exit_zero else EXIT_CLEAN))


@app.command(help="Run the original (NumPy) and the converted (JAX, once per device) program "
                  "and compare results and timings. Exit 0 when everything is equal, 1 when "
                  "anything differs or fails.")
def verify(
    paths: List[str] = typer.Argument(..., metavar="ORIGINAL CONVERTED [-- PYTEST_ARGS]",
                                      help="Two files, or two trees (files paired by relative path)."),
    tests: bool = typer.Option(False, "--tests", help="Run the project's pytest suite against "
                               "both trees and report every test whose outcome changed; "
                               "arguments after -- go to pytest."),
    call: Optional[str] = typer.Option(None, "--call", help="The function to call and compare "
                                       "(default: main when defined, else run the module as a "
                                       "script and compare its global arrays and numbers)."),
    devices: str = typer.Option("all", "--devices", help="cpu,gpu,tpu or all (the available ones)."),
    repeat: int = typer.Option(5, "--repeat", help="Timed calls after the first one."),
    x32_trial: bool = typer.Option(False, "--x32-trial", help="Also run each converted program "
                                   "in JAX's 32-bit defaults and say whether 32 bits are "
                                   "enough for these inputs, and how much faster they are."),
    x64: bool = typer.Option(False, "--x64", help="Run the converted side with jax_enable_x64 "
                             "and judge floats by the original's precision."),
    rtol: Optional[float] = typer.Option(None, "--rtol", help="Relative tolerance for floats "
                                         "(default: by dtype)."),
    atol: Optional[float] = typer.Option(None, "--atol", help="Absolute tolerance for floats "
                                         "(default: by dtype)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds for each child "
                                            "process (default 60; 600 with --tests)."),
    memory: Optional[int] = typer.Option(None, "--memory", help="MiB of memory for each child "
                                         "(default: half the machine's)."),
    stochastic: Optional[List[str]] = typer.Option(None, "--stochastic", help="NAME=TOL: compare "
                                                   "this random output by statistics (repeatable)."),
    output_format: VerifyFormat = typer.Option(VerifyFormat.text, "--format", help="Output format."),
) -> None:
    import json

    from np2jax.verify import (VerifyOptions, VerifyUsageError, parse_devices, parse_stochastic,
                               verify_paths, verify_tests)
    from np2jax.verify.report import print_tests, print_verify

    if len(paths) < 2:
        raise _fail("verify needs two paths: ORIGINAL CONVERTED")
    if len(paths) > 2 and not tests:
        raise _fail(f"unexpected argument {paths[2]!r}: verify takes two paths (arguments after "
                    "-- are for pytest, with --tests)")
    original, converted, extra = Path(paths[0]), Path(paths[1]), paths[2:]
    console = _wide_console()
    try:
        chosen = parse_devices(devices)
        if tests:
            result = verify_tests(original, converted, extra, devices=chosen,
                                  timeout_s=timeout or 600.0, x64=x64)
            if output_format is VerifyFormat.json:
                console.file.write(json.dumps(result.as_dict(), indent=2) + "\n")
            else:
                print_tests(console, result)
            raise typer.Exit(EXIT_CLEAN if result.ok else EXIT_FINDINGS)
        options = VerifyOptions(call=call, devices=chosen, repeat=repeat, x64=x64,
                                x32_trial=x32_trial, rtol=rtol,
                                atol=atol, timeout_s=timeout or 60.0,
                                memory_bytes=memory * 2**20 if memory else None,
                                stochastic=parse_stochastic(stochastic))
        if memory is not None and memory <= 0:
            raise VerifyUsageError("--memory must be a positive number of MiB")
        run = verify_paths(original, converted, options,
                           progress=_progress(output_format is VerifyFormat.json))
    except VerifyUsageError as exc:
        raise _fail(str(exc)) from None
    if output_format is VerifyFormat.json:
        console.file.write(json.dumps(run.as_dict(), indent=2) + "\n")
    else:
        print_verify(console, run)
    raise typer.Exit(EXIT_CLEAN if run.ok else EXIT_FINDINGS)


@app.command(help="Record the calls the project's tests make of each package function, "
                  "replay them on both trees and compare. Exit 1 if a function differs or errs.")
def prove(
    paths: List[str] = typer.Argument(..., metavar="ORIGINAL CONVERTED [-- PYTEST_ARGS]",
                                      help="The original tree (where the tests run) and the "
                                           "converted one; arguments after -- go to pytest."),
    package: Optional[str] = typer.Option(None, "--package", help="The package's folder (or "
                                          "module) inside ORIGINAL whose functions are proven "
                                          "(default: every non-test file of the tree)."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", help="Replay children at a time "
                                       "(default: one per core)."),
    max_calls: int = typer.Option(20, "--max-calls", help="Distinct calls kept a function."),
    max_call_bytes: int = typer.Option(2 << 20, "--max-call-bytes", help="Largest pickled "
                                       "arguments of a kept call, in bytes."),
    repeat: int = typer.Option(3, "--repeat", help="Timed calls of each function's first "
                               "record after its first call."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds for one call's replay on "
                                  "one side (a function stopped there keeps the calls done)."),
    suite_timeout: float = typer.Option(3600.0, "--suite-timeout", help="Seconds for the "
                                        "recording run of the suite."),
    memory: Optional[int] = typer.Option(None, "--memory", help="MiB of memory for each replay "
                                         "child (default: half the machine's, shared by the jobs)."),
    rtol: Optional[float] = typer.Option(None, "--rtol", help="Relative tolerance for floats "
                                         "(default: by dtype)."),
    atol: Optional[float] = typer.Option(None, "--atol", help="Absolute tolerance for floats "
                                         "(default: by dtype)."),
    baseline: bool = typer.Option(False, "--baseline", help="Also run the suite without the "
                                  "recorder and report the recording's overhead."),
    work: Optional[Path] = typer.Option(None, "--work", help="Keep the records in this folder "
                                        "(default: a temporary one, removed at the end)."),
    devices: str = typer.Option("all", "--devices", help="cpu,gpu,tpu or all (the available "
                                "ones): the converted tree is replayed and timed on each."),
    html: Optional[Path] = typer.Option(None, "--html", help="Also write the report as one HTML page."),
    output_format: VerifyFormat = typer.Option(VerifyFormat.text, "--format", help="Output format."),
) -> None:
    import json

    from np2jax.verify import VerifyUsageError, parse_devices
    from np2jax.verify.prove import ProveOptions, prove_functions
    from np2jax.verify.report import print_prove

    if len(paths) < 2:
        raise _fail("prove needs two folders: ORIGINAL CONVERTED")
    if memory is not None and memory <= 0:
        raise _fail("--memory must be a positive number of MiB")
    err = _console(stderr=True)
    say = (lambda text: err.print(f"  {text}", markup=False, highlight=False)) \
        if err.is_terminal and output_format is VerifyFormat.text else None
    try:
        options = ProveOptions(max_calls=max_calls, max_call_bytes=max_call_bytes, jobs=jobs,
                               timeout_s=timeout, suite_timeout_s=suite_timeout,
                               memory_bytes=memory * 2**20 if memory else None, repeat=repeat,
                               rtol=rtol, atol=atol, baseline=baseline, work=work,
                               devices=parse_devices(devices))
        result = prove_functions(Path(paths[0]), Path(paths[1]), package, paths[2:], options,
                                 progress=say)
    except VerifyUsageError as exc:
        raise _fail(str(exc)) from None
    console = _wide_console()
    if output_format is VerifyFormat.json:
        console.file.write(json.dumps(result.as_dict(), indent=2) + "\n")
    else:
        print_prove(console, result)
    if html is not None:
        from np2jax.html_report import render_prove_html

        try:
            html.write_text(render_prove_html(result), encoding="utf-8")
        except OSError as exc:
            raise _fail(f"--html {html}: {exc}") from None
    if result.error:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_CLEAN if result.ok else EXIT_FINDINGS)


def _convert_proved(paths, out, output_format, quiet, select, ignore, exclude, x64, jit,
                    no_cache, x32, keep_numpy, jobs, exit_zero, interface=None,
                    prove_timeout=60.0, prove_devices="all") -> None:
    """convert PKG --out DST --prove [-- PYTEST_ARGS], run from the project's root."""
    from np2jax.proving import ProveUsageError, convert_proved
    from np2jax.report import RunReport, emit
    from np2jax.verify import VerifyUsageError, parse_devices
    from np2jax.verify.prove import ProveOptions
    from np2jax.verify.report import print_prove

    if out is None or not paths:
        raise _fail("--prove needs one package folder and --out DIR (np2jax convert PKG --out "
                    "DST --prove [-- PYTEST_ARGS])")
    if prove_timeout <= 0:
        raise _fail("--prove-timeout must be a positive number of seconds")
    package, pytest_args = Path(paths[0]), [str(p) for p in paths[1:]]
    config = _load_config([package], select, ignore, exclude, x64, jit, no_cache, x32, keep_numpy,
                          interface)
    err = _console(stderr=True)
    say = (lambda text: err.print(f"  {text}", markup=False, highlight=False)) \
        if not quiet and output_format is ReportFormat.text else None
    try:
        proved = convert_proved(package, out, config, project=Path.cwd(),
                                pytest_args=pytest_args, jobs=jobs, progress=say,
                                options=ProveOptions(timeout_s=prove_timeout,
                                                     devices=parse_devices(prove_devices)))
    except (ProveUsageError, VerifyUsageError, ValueError, ConfigError) as exc:
        raise _fail(str(exc)) from None
    run = proved.run
    emit(RunReport("convert", findings=run.findings, errors=run.errors, counts=run.counts(),
                   fixes=run.changes_by_code(), left=run.findings_by_code(),
                   changes=run.changes, written=run.written, prove=proved,
                   out=out if run.written else None, **_coverage(run)),
         output_format.value, _wide_console(), err, quiet)
    if output_format is ReportFormat.text and proved.proof is not None:
        console = _wide_console()
        print_prove(console, proved.proof, quiet)
        for entry in proved.kept:
            console.print(f"kept on NumPy: {entry}", markup=False, soft_wrap=True)
        tests = proved.tests_summary()
        if tests is not None:
            console.print(f"tests: {tests['passed_after']} of the {tests['passed_before']} "
                          "passing on the original pass on the result"
                          + (f" ({tests['error']})" if tests["error"] else ""),
                          markup=False, soft_wrap=True)
        for test, message in proved.newly_failing_messages().items():
            console.print(f"fails converted: {test}" + (f": {message}" if message else ""),
                          markup=False, soft_wrap=True)
        blame = proved.blame
        if blame and blame["candidates"]:
            console.print(
                f"last step: the newly failing test(s) rerun with the {len(blame['candidates'])} "
                "package function(s) they call kept on NumPy: " + (
                    f"{len(blame['kept'])} of them needed ({blame['trials']} reruns)"
                    if blame["passed"] else "they still fail, nothing kept"),
                markup=False, soft_wrap=True)
        share = proved.calls_on_jax()
        if share and share["calls"]:
            left = share["functions_left_on_numpy"]
            console.print(f"on JAX: {share['calls_on_jax']} of the suite's {share['calls']} calls "
                          f"of the package's functions ({100 * share['share']:.0f}%), to "
                          f"{share['functions_on_jax']} function(s) proven equal, not kept "
                          "on NumPy, in modules the conversion moved to JAX"
                          + (f" ({left} more proven equal in modules left on NumPy)" if left else ""),
                          markup=False, soft_wrap=True)
        console.print(f"prove: {len(proved.rounds)} round(s), {len(proved.kept)} function(s) "
                      f"kept on NumPy, {proved.wall_s:.1f} s in all", markup=False)
    failed = not proved.ok
    raise typer.Exit(EXIT_ERROR if run.errors or (proved.proof and proved.proof.error) else
                     (EXIT_FINDINGS if (run.findings and not exit_zero) or failed else EXIT_CLEAN))


def rules_reference() -> str:
    """docs/rules.md: every rule's doc, generated from the catalog."""
    from np2jax.catalog import rule_docs

    docs = rule_docs().values()
    index = [f"| [{d.code}](#{d.code.lower()}-{d.name}) | `{d.name}` | {d.severity} | {d.fix} | {d.summary} |"
             for d in docs]
    return "\n".join([
        "# Rule reference", "",
        "Generated from the catalog in rules/ by `np2jax rule --markdown`; do not edit by hand.", "",
        "| code | name | severity | fix | summary |", "|---|---|---|---|---|", *index, "",
        *(d.render_markdown() for d in docs),
    ])


@app.command()
def rule(code: Optional[str] = typer.Argument(None, help="A rule code (NJ201) or name."),
         markdown: bool = typer.Option(False, "--markdown", help="Print every rule's doc as Markdown (docs/rules.md).")) -> None:
    """List the rules, or print one rule's documentation."""
    from np2jax.catalog import find_rule, rule_docs

    if markdown:
        sys.stdout.write(rules_reference())
        return
    console = _console()
    if code is None:
        for doc in rule_docs().values():
            console.print(f"{doc.code}  {doc.name:32} {doc.summary}", markup=False, soft_wrap=True)
        return
    doc = find_rule(code)
    if doc is None:
        raise _fail(f"no rule {code!r}; `np2jax rule` lists them")
    if console.is_terminal:
        from rich.markdown import Markdown

        console.print(Markdown(doc.render_markdown(), code_theme="ansi_dark"))
    else:
        console.file.write(doc.render_markdown())


def _version(value: bool) -> None:
    if value:
        print(f"np2jax {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    pass


def main() -> None:
    """Console entry point. An internal error becomes one line that says how to report it."""
    try:
        app(standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        print(f"np2jax: internal error: {type(exc).__name__}: {exc}. Please report it with the "
              "command and the file that caused it.", file=sys.stderr)
        sys.exit(EXIT_ERROR)
