"""The Python API; the CLI is a thin layer over it.

    from np2jax import Config, convert_source
    result = convert_source("import numpy as np\\nx = np.sum([1, 2])\\n")
    result.converted, result.findings, result.changes
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from np2jax.config import Config
from np2jax.files import InputFile, SourceError, discover, is_notebook, read_source, write_atomic
from np2jax.findings import Finding
from np2jax.pipeline import FileResult, process
from np2jax.tree import ModuleContext, Tree

__all__ = ["Config", "FileResult", "RunResult", "convert_source", "check_source",
           "convert_paths", "check_paths"]


def convert_source(text: str, config: Config | None = None, path: str = "<string>") -> FileResult:
    """Convert one source text (a notebook's JSON when `path` ends in .ipynb). Raises
    SourceError when it does not parse."""
    return _process_text(text, config or Config(), path)


def check_source(text: str, config: Config | None = None, path: str = "<string>") -> list[Finding]:
    """What JAX cannot run as written in one source text: the findings convert would leave
    to you, and the problems it would fix (`fixable`); plain renames (severity info) are not
    problems."""
    return problems(_process_text(text, config or Config(), path, rewrite=False))


def _process_text(text: str, config: Config, path: str, rewrite: bool = True,
                  context: ModuleContext | None = None) -> FileResult:
    if is_notebook(path):
        from np2jax.notebooks import process_notebook

        return process_notebook(text, config, path, rewrite, context)
    return process(text, config, path, rewrite, context or ModuleContext())


def problems(result: FileResult) -> list[Finding]:
    return sorted(result.findings + [c for c in result.changes if c.severity != "info"])


# Called after each file is processed, with its path and the number of files in the run
# (for a progress bar).
OnFile = Callable[[Path, int], None] | None


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


def _process_files(files: list[InputFile], config: Config, run: RunResult, rewrite: bool = True,
                   on_file: OnFile = None):
    """Process the files as one tree: functions rewritten to return their argument (NJ209)
    and their calls in other modules are rewritten together, or not at all."""
    sources = {}
    for item in files:
        try:
            sources[item.path] = read_source(item.path)
        except SourceError as exc:
            run.errors.append(exc)
    tree = Tree.of(files, sources)
    failed: set[Path] = set()
    accepted = _cross_module_mutators(files, sources, tree, config, failed)
    while True:
        results = {}
        for item in files:
            if item.path in sources and item.path not in failed:
                result = _process_one(item, sources[item.path], config, rewrite,
                                      tree.context(item.path, accepted), run, failed)
                if result is not None:
                    results[item.path] = result
                if on_file is not None:
                    on_file(item.path, len(files))
        unsettled = tree.unsettled(accepted, results, failed)
        if not unsettled:
            break
        accepted = {q: p for q, p in accepted.items() if q not in unsettled}
    for item in files:
        if item.path in results:
            run.files.append(results[item.path])
            yield item, sources[item.path], results[item.path]


_TOP_LEVEL_DEF = re.compile(r"^def\s+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)


def _cross_module_mutators(files, sources, tree: Tree, config: Config, failed: set) -> dict:
    """Functions that change an argument and are used by other files of the tree, which
    could be rewritten if all their calls there can be: qualified name -> (position, name)."""
    found = {}
    for item in files:
        if item.path not in sources or len(tree.names) < 2 or is_notebook(item.path):
            continue  # a notebook is no module: nothing imports its functions
        context = tree.context(item.path, {})
        defined = set(_TOP_LEVEL_DEF.findall(sources[item.path].text))
        if not defined & context.external_names:
            continue  # no function another file could call: nothing to discover here
        context = replace(context, exported_mutators=context.external_names)
        try:
            result = process(sources[item.path].text, config, str(item.path), False, context)
        except Exception:  # reported when the file is processed for real
            continue
        for name, parameter in result.mutators.items():
            if name in context.external_names:
                found[f"{tree.names[item.path]}.{name}"] = parameter
    return found


def _process_one(item, source, config, rewrite, context, run, failed):
    try:
        return _process_text(source.text, config, str(item.path), rewrite, context)
    except SourceError as exc:
        run.errors.append(exc)
    except Exception as exc:  # a bug in np2jax must not cost the rest of the batch
        run.errors.append(SourceError(
            str(item.path), f"internal error ({type(exc).__name__}: {exc}); the file was "
            "left untouched; please report it with this file"))
    failed.add(item.path)
    return None


def check_paths(paths: list[Path], config: Config, on_file: OnFile = None) -> RunResult:
    files, errors = discover(paths, config)
    run = RunResult(errors=errors)
    for _ in _process_files(files, config, run, rewrite=False, on_file=on_file):
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
                  in_place: bool = False, copy_other: bool = False,
                  on_file: OnFile = None) -> RunResult:
    """Convert files and trees. With `out`, the converted tree is written under it with the
    same relative paths (every Python file, changed or not); with `in_place`, changed
    sources are rewritten; with neither, nothing is written (for --diff). `on_file(path,
    total)` is called after each file is processed."""
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
    for item, source, result in _process_files(files, config, run, on_file=on_file):
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
            if (path.is_file() and path.suffix != ".py" and not is_notebook(path)
                    and not config.excluded(relative)):
                (out / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, out / relative)
