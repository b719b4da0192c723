"""The Python API; the CLI is a thin layer over it.

    from np2jax import Config, convert_source
    result = convert_source("import numpy as np\\nx = np.sum([1, 2])\\n")
    result.converted, result.findings, result.changes
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from np2jax.config import Config
from np2jax.files import InputFile, SourceError, discover, read_source, write_atomic
from np2jax.findings import Finding
from np2jax.pipeline import FileResult, process

__all__ = ["Config", "FileResult", "RunResult", "convert_source", "check_source",
           "convert_paths", "check_paths"]


def convert_source(text: str, config: Config | None = None, path: str = "<string>") -> FileResult:
    """Convert one source text. Raises SourceError when it does not parse."""
    return process(text, config or Config(), path)


def check_source(text: str, config: Config | None = None, path: str = "<string>") -> list[Finding]:
    """What JAX cannot run as written in one source text: the findings convert would leave
    to you, and the problems it would fix (`fixable`); plain renames (severity info) are not
    problems."""
    return problems(process(text, config or Config(), path, rewrite=False))


def problems(result: FileResult) -> list[Finding]:
    return sorted(result.findings + [c for c in result.changes if c.severity != "info"])


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

    def findings_by_code(self) -> Counter:
        return Counter(f.code for f in self.findings)

    def changes_by_code(self) -> Counter:
        return Counter(c.code for c in self.changes)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _process_files(files: list[InputFile], config: Config, run: RunResult, rewrite: bool = True):
    sources = {}
    for item in files:
        try:
            sources[item.path] = read_source(item.path)
        except SourceError as exc:
            run.errors.append(exc)
    # A name another file of the tree also uses may be a function called from there, whose
    # calls this file's conversion cannot rewrite (NJ209 checks it).
    words = {path: set(_IDENTIFIER.findall(source.text)) for path, source in sources.items()}
    files_using = Counter(word for found in words.values() for word in found)
    for item in files:
        if item.path not in sources:
            continue
        source = sources[item.path]
        external = frozenset(w for w in words[item.path] if files_using[w] > 1)
        try:
            result = process(source.text, config, str(item.path), rewrite, external)
        except SourceError as exc:
            run.errors.append(exc)
            continue
        except Exception as exc:  # a bug in np2jax must not cost the rest of the batch
            run.errors.append(SourceError(
                str(item.path), f"internal error ({type(exc).__name__}: {exc}); the file was "
                "left untouched; please report it with this file"))
            continue
        run.files.append(result)
        yield item, source, result


def check_paths(paths: list[Path], config: Config) -> RunResult:
    files, errors = discover(paths, config)
    run = RunResult(errors=errors)
    for _ in _process_files(files, config, run, rewrite=False):
        pass
    return run


def _out_inside_inputs(out: Path, paths: list[Path]) -> Path | None:
    out = out.resolve()
    for root in paths:
        root = root.resolve()
        if root.is_dir() and (out == root or root in out.parents):
            return root
    return None


def convert_paths(paths: list[Path], config: Config, *, out: Path | None = None,
                  in_place: bool = False, copy_other: bool = False) -> RunResult:
    """Convert files and trees. With `out`, the converted tree is written under it with the
    same relative paths (every Python file, changed or not); with `in_place`, changed
    sources are rewritten; with neither, nothing is written (for --diff)."""
    if out is not None and in_place:
        raise ValueError("choose either an output folder or in-place conversion, not both")
    if out is not None:
        inside = _out_inside_inputs(out, paths)
        if inside is not None:
            raise ValueError(f"--out {out} is inside the input tree {inside}")
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {out} exists and is not a folder")
    files, errors = discover(paths, config)
    run = RunResult(errors=errors)
    targets: dict[Path, Path] = {}
    for item, source, result in _process_files(files, config, run):
        target = out / item.relative if out is not None else (item.path if in_place else None)
        if target is None or (in_place and not result.changed):
            continue
        if in_place and item.path.is_symlink():
            run.errors.append(SourceError(str(item.path), "is a symbolic link; not rewritten in "
                                          "place (convert its target, or use --out)"))
            continue
        if target in targets:
            run.errors.append(SourceError(str(item.path), f"would overwrite {target}, already "
                                          f"written from {targets[target]}; not written"))
            continue
        targets[target] = item.path
        try:
            write_atomic(target, result.converted, source.encoding, like=item.path)
        except (OSError, UnicodeEncodeError) as exc:
            run.errors.append(SourceError(str(target), f"cannot write: {exc}"))
            continue
        run.written.append(target)
    if out is not None and copy_other:
        _copy_other_files(paths, out, config, run)
    return run


def _copy_other_files(paths: list[Path], out: Path, config: Config, run: RunResult) -> None:
    for root in paths:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and path.suffix != ".py" and not config.excluded(relative):
                (out / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, out / relative)
