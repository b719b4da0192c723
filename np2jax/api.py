"""The Python API, np2jax's public face; the CLI is a thin layer over it.

    from np2jax import Config, convert_source
    result = convert_source("import numpy as np\\nx = np.sum([1, 2])\\n")
    result.converted, result.findings, result.changes

The machinery (the worker pool, the cache, the passes over a tree) is np2jax.engine.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from np2jax.config import Config
from np2jax.engine import (
    SILENT,
    OnFile,
    Progress,
    copy_other_files,
    find_files,
    process_files,
    process_text,
    write_results,
)
from np2jax.files import InputFile, SourceError, SourceText, decode_source
from np2jax.findings import Coverage, FileResult, Finding

__all__ = ["Config", "Coverage", "FileResult", "Finding", "Progress", "RunResult", "SourceError",
           "convert_source", "check_source", "convert_paths", "check_paths", "convert_stdin",
           "check_stdin"]

STDIN = "-"  # the path that stands for standard input on the command line


def convert_source(text: str, config: Config | None = None, path: str = "<string>") -> FileResult:
    """Convert one source text (a notebook's JSON when `path` ends in .ipynb). Raises
    SourceError when it does not parse."""
    return process_text(text, config or Config(), path)


def check_source(text: str, config: Config | None = None, path: str = "<string>", *,
                 fix_edits: bool = False) -> list[Finding]:
    """What JAX cannot run as written in one source text: the findings convert would leave
    to you, and the problems it would fix (`fixable`); plain renames (severity info) are not
    problems. `fix_edits`: each fixable finding's `fix` holds the edit convert makes."""
    return problems(process_text(text, config or Config(), path, rewrite=False,
                                 edits=fix_edits))


def problems(result: FileResult) -> list[Finding]:
    return sorted(result.findings + [c for c in result.changes if c.severity != "info"],
                  key=Finding.order)


@dataclass
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    errors: list[SourceError] = field(default_factory=list)  # files that could not be processed
    written: list[Path] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.files for f in r.findings]

    @property
    def changes(self) -> list[Finding]:
        return [c for r in self.files for c in r.changes]

    @property
    def problems(self) -> list[Finding]:
        """What JAX cannot run as written, fixable or not (check reports these)."""
        return [p for r in self.files for p in problems(r)]

    def counts(self) -> dict[str, int]:
        return {"converted": sum(r.changed for r in self.files),
                "unchanged": sum(not r.changed for r in self.files),
                "failed": len(self.errors)}

    def coverage(self) -> Coverage:
        """How much of the run's NumPy moved to JAX, all files together (each file's is
        FileResult.coverage; check: what convert would move)."""
        return sum((r.coverage for r in self.files), Coverage())

    def unmatched_kept(self, config: Config) -> list[str]:
        """The configuration's keep-numpy entries that named no function of the files
        processed (a typo, a renamed function, a file not in the run)."""
        matched = {e for r in self.files for e in r.kept_entries}
        return [e for e in config.keep_numpy if e not in matched]

    def findings_by_code(self) -> Counter:
        return Counter(f.code for f in self.findings)

    def changes_by_code(self) -> Counter:
        return Counter(c.code for c in self.changes)


def check_paths(paths: list[Path], config: Config, *, jobs: int | None = None,
                on_file: OnFile = None, progress: Progress | None = None,
                fix_edits: bool = False) -> RunResult:
    """Check files and trees. `jobs`: worker processes (default: one per core; 1 runs in
    this process); `on_file(path, total)` is called after each file is processed;
    `progress` is told of every phase of the run (np2jax.engine.Progress); `fix_edits`:
    each fixable finding's `fix` holds the edit convert makes (np2jax.edits)."""
    progress = progress or SILENT
    files, errors = find_files(paths, config, progress)
    processed, read_errors = process_files(files, config, rewrite=False, jobs=jobs,
                                           on_file=on_file, progress=progress,
                                           edits=fix_edits)
    results, failed, _ = write_results(processed, None, False)
    return RunResult(results, errors + read_errors + failed)


def _out_inside_inputs(out: Path, paths: list[Path]) -> Path | None:
    out = out.resolve()
    for root in paths:
        root = root.resolve()
        if root.is_dir() and (out == root or root in out.parents):
            return root
    return None


def convert_paths(paths: list[Path], config: Config, *, out: Path | None = None,
                  in_place: bool = False, copy_other: bool = False,
                  jobs: int | None = None, on_file: OnFile = None,
                  progress: Progress | None = None) -> RunResult:
    """Convert files and trees. With `out`, the converted tree is written under it with the
    same relative paths (every Python file, changed or not); with `in_place`, changed
    sources are rewritten; with neither, nothing is written (for --diff). `on_file(path,
    total)` is called after each file is processed; `progress` is told of every phase."""
    if out is not None and in_place:
        raise ValueError("choose either an output folder or in-place conversion, not both")
    if out is not None:
        inside = _out_inside_inputs(out, paths)
        if inside is not None:
            raise ValueError(f"--out {out} is inside the input tree {inside}")
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {out} exists and is not a folder")
    progress = progress or SILENT
    files, errors = find_files(paths, config, progress)
    processed, read_errors = process_files(files, config, jobs=jobs, on_file=on_file,
                                           progress=progress)
    results, failed, written = write_results(processed, out, in_place, progress)
    run = RunResult(results, errors + read_errors + failed, written)
    if out is not None and copy_other:
        copy_other_files(paths, out, config, progress)
    return run


def _stdin_run(data: bytes, config: Config, filename: str, rewrite: bool,
               edits: bool = False) -> RunResult:
    path = Path(filename)

    def read(_: Path) -> SourceText:
        return decode_source(data, filename)

    processed, errors = process_files([InputFile(path, Path(path.name))],
                                      replace(config, cache=False), rewrite=rewrite, jobs=1,
                                      read=read, edits=edits)
    results, failed, _ = write_results(processed, None, False)
    return RunResult(results, errors + failed)


def check_stdin(data: bytes, config: Config, filename: str = STDIN, *,
                fix_edits: bool = False) -> RunResult:
    """Check one source given as bytes (standard input), reported under `filename`."""
    return _stdin_run(data, config, filename, rewrite=False, edits=fix_edits)


def convert_stdin(data: bytes, config: Config, filename: str = STDIN) -> RunResult:
    """Convert one source given as bytes (standard input): the result's `converted` text is
    the output; nothing is written."""
    return _stdin_run(data, config, filename, rewrite=True)
