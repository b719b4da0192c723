"""The Python API; the CLI is a thin layer over it.

    from np2jax import Config, convert_source
    result = convert_source("import numpy as np\\nx = np.sum([1, 2])\\n")
    result.converted, result.findings, result.changes
"""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from np2jax.config import Config
from np2jax.files import InputFile, SourceError, discover, is_notebook, read_source, write_atomic
from np2jax.findings import FileResult, Finding
from np2jax.tree import ModuleContext, Tree, module_names

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
    from np2jax.pipeline import process  # libcst loads only when a file needs processing

    return process(text, config, path, rewrite, context or ModuleContext())


def problems(result: FileResult) -> list[Finding]:
    return sorted(result.findings + [c for c in result.changes if c.severity != "info"],
                  key=Finding.order)


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


# Below this much source text in a batch, worker processes cost more than they save (each
# loads libcst, about 0.25 s of CPU): a pre-commit run over a few files stays in-process.
PARALLEL_MIN_CHARS = 50_000


class _Engine:
    """Runs np2jax.pipeline.process over batches of files: from the cache when it has the
    result, else in this process (jobs=1) or in a pool of worker processes. A file's result
    depends only on its text, the configuration and its ModuleContext, so it is computed
    once per run (the tree's fixed point asks again for files whose context did not change)."""

    def __init__(self, config: Config, rewrite: bool, jobs: int | None) -> None:
        self.config, self.rewrite = config, rewrite
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.cache = None
        if config.cache:
            from np2jax.cache import ResultCache, size_limit

            size_limit()  # a bad $NP2JAX_CACHE_MAX_MB stops the run before it starts
            self.cache = ResultCache()
        self.memo: dict[tuple, object] = {}
        self.internal_errors = False  # a bug in np2jax made a file fail: store no whole run
        self.pool = None
        self.on_done: Callable[[Path], None] | None = None  # after each file's outcome

    def _done(self, path) -> None:
        if self.on_done is not None:
            self.on_done(Path(path))

    def run(self, batch: list[tuple[Path, str, ModuleContext]], rewrite: bool | None = None):
        """{path: FileResult or SourceError} for (path, text, context) jobs."""
        rewrite = self.rewrite if rewrite is None else rewrite
        outcomes, missing = {}, []
        for path, text, context in batch:
            memo_key = (text, rewrite, context)
            if memo_key in self.memo:
                outcomes[path] = _at_path(self.memo[memo_key], str(path), text)
                self._done(path)
                continue
            cached = None
            if self.cache is not None:
                from np2jax.cache import result_key

                key = result_key(text, self.config, rewrite, context)
                cached = self.cache.get(key, str(path), text)
            else:
                key = None
            if cached is not None:
                outcomes[path] = self.memo[memo_key] = cached
                self._done(path)
            else:
                missing.append((path, text, context, key, memo_key))
        jobs = [(str(p), t, self.config, rewrite, c) for p, t, c, _, _ in missing]
        for (path, _, _, key, memo_key), (kind, value) in zip(missing, self._compute(jobs)):
            if kind == "internal":
                outcomes[path] = SourceError(str(path), value)
                self.internal_errors = True
                continue
            outcomes[path] = self.memo[memo_key] = value
            if key is not None:
                self.cache.put(key, value)
        return {path: outcomes[path] for path, _, _ in batch}

    def _compute(self, jobs: list[tuple]) -> list[tuple[str, object]]:
        if self.jobs == 1 or len(jobs) < 2 or sum(len(j[1]) for j in jobs) < PARALLEL_MIN_CHARS:
            outcomes = []
            for job in jobs:
                outcomes.append(_process_job(job))
                self._done(job[0])
        else:
            outcomes = self._in_workers(jobs)
        return [("done", SourceError(*value)) if kind == "error" else (kind, value)
                for kind, value in outcomes]

    def _in_workers(self, jobs: list[tuple]) -> list[tuple[str, object]]:
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        if self.pool is None:
            self.pool = ProcessPoolExecutor(max_workers=min(self.jobs, len(jobs)),
                                            mp_context=_worker_context())
        # the biggest files first, so that no worker is left with one at the end
        order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i][1]))
        futures = {}
        outcomes = []
        try:
            for i in order:
                futures[i] = self.pool.submit(_process_job, jobs[i])
        except BrokenProcessPool:
            pass  # the files not submitted are reported below
        lost = []
        for i in range(len(jobs)):
            try:
                outcomes.append(futures[i].result())
                self._done(jobs[i][0])
            except (BrokenProcessPool, KeyError):
                lost.append(i)
                outcomes.append(None)
        if lost:
            # A worker died (a crash in native code) and took the pool's pending files with
            # it: each of those runs again alone, so only the file that crashes fails.
            self.close()
            self.pool = None
            for i in lost:
                with ProcessPoolExecutor(max_workers=1, mp_context=_worker_context()) as alone:
                    try:
                        outcomes[i] = alone.submit(_process_job, jobs[i]).result()
                    except BrokenProcessPool as exc:
                        outcomes[i] = ("internal", _internal_error(
                            exc, "the worker process processing it died"))
        return outcomes

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def _worker_context():
    """fork where this process runs no other thread (the CLI): workers start at once with
    what is loaded; spawn otherwise (the API called from a program that runs JAX, say),
    since a fork of a multithreaded process can deadlock."""
    import multiprocessing

    if _thread_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _thread_count() -> int:
    """The threads of this process, native ones included where the system lists them
    (Linux: JAX's and BLAS's threads, which Python's `threading` does not see)."""
    import threading

    try:
        native = len(os.listdir("/proc/self/task"))
    except OSError:
        native = 1
    return max(native, threading.active_count())


def _at_path(outcome, path: str, text: str):
    """A memoised outcome for an identical file elsewhere in the tree, with its path."""
    if isinstance(outcome, SourceError):
        return SourceError(path, outcome.problem, outcome.line, outcome.cell)
    if outcome.path == path:
        return outcome
    return FileResult.from_json(outcome.to_json(), path, text)


def _internal_error(exc: BaseException, what: str | None = None) -> str:
    return (f"internal error ({what or f'{type(exc).__name__}: {exc}'}); the file was left "
            "untouched; please report it with this file")


def _process_job(job: tuple) -> tuple[str, object]:
    """One file, in this process or a worker: ("done", FileResult), ("error", the
    SourceError's arguments) or ("internal", message) for a bug in np2jax (never cached).
    Plain values: they cross the process boundary."""
    path, text, config, rewrite, context = job
    try:
        return "done", _process_text(text, config, path, rewrite, context)
    except SourceError as exc:
        return "error", (exc.path, exc.problem, exc.line, exc.cell)
    except Exception as exc:  # noqa: BLE001 - a bug in np2jax must not cost the rest of the batch
        return "internal", _internal_error(exc)


def _process_files(files: list[InputFile], config: Config, run: RunResult, rewrite: bool = True,
                   jobs: int | None = None, on_file: OnFile = None):
    """Process the files as one tree; yields (file, source, FileResult) for each file
    processed, after all of them (errors go to run.errors). A check of a tree whose files
    are all as in a stored run takes that run's outcome (np2jax.cache.StoredRun)."""
    sources = {}
    for item in files:
        try:
            sources[item.path] = read_source(item.path)
        except SourceError as exc:
            run.errors.append(exc)
    readable = [item for item in files if item.path in sources]
    stored = outcomes = None
    if config.cache and not rewrite:  # convert's outcomes carry converted sources: per file
        from np2jax.cache import StoredRun

        names = module_names((item.path, item.relative) for item in readable)
        stored = StoredRun([(str(item.path), names[item.path], sources[item.path].text)
                            for item in readable], config, rewrite)
        outcomes = stored.load()
    if outcomes is None:
        engine = _Engine(config, rewrite, jobs)
        try:
            by_path = _process_tree(readable, sources, engine, on_file)
        finally:
            engine.close()
        outcomes = [by_path[item.path] for item in readable]
        if stored is not None and not engine.internal_errors:
            stored.save(outcomes)
        if engine.cache is not None and (engine.cache.stored or stored is not None):
            from np2jax.cache import prune

            prune(engine.cache.folder)
    for item, outcome in zip(readable, outcomes):
        if isinstance(outcome, SourceError):
            run.errors.append(outcome)
        else:
            run.files.append(outcome)
            yield item, sources[item.path], outcome


def _process_tree(files: list[InputFile], sources: dict, engine: _Engine,
                  on_file: OnFile) -> dict[Path, FileResult | SourceError]:
    """Each file's outcome, the files processed as one tree: functions rewritten to return
    their argument (NJ209) and their calls in other modules are rewritten together, or not
    at all. The first pass assumes no such rewrite; if it finds functions refused only
    because other files use them, those are assumed rewritable and the files whose view of
    the tree changes run again (the others are memoised), until every rewrite assumed
    happened everywhere (Tree.unsettled)."""
    tree = Tree.of(files, sources)
    if on_file is not None:
        reported: set[Path] = set()

        def report(path: Path) -> None:  # once a file, however many passes it takes
            if path not in reported:
                reported.add(path)
                on_file(path, len(files))

        engine.on_done = report
    failed: dict[Path, SourceError] = {}
    accepted: dict[str, tuple] = {}
    first = True
    while True:
        batch = [(item.path, sources[item.path].text, tree.context(item.path, accepted))
                 for item in files if item.path not in failed]
        results = {}
        for path, outcome in engine.run(batch).items():
            if isinstance(outcome, SourceError):
                failed[path] = outcome
            else:
                results[path] = outcome
        if first:
            first = False
            accepted = _exportable_mutators(results, sources, tree)
            if accepted:
                continue
        unsettled = tree.unsettled(accepted, results, set(failed))
        if not unsettled:
            return {**results, **failed}
        accepted = {q: p for q, p in accepted.items() if q not in unsettled}


_TOP_LEVEL_DEF = re.compile(r"^def\s+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)


def _exportable_mutators(results: dict[Path, FileResult], sources, tree: Tree) -> dict:
    """The functions that change an argument and are used by other files of the tree, which
    could be rewritten if all their calls there can be: qualified name -> (position, name).
    Only from a file where a `def` at the start of a line (after a newline: not a lone CR,
    nor a form feed) defines a function other files use: the files np2jax has always taken
    these from; taking more would change the outcome of some trees."""
    found = {}
    for path, result in results.items():
        if not result.exportable_mutators:
            continue
        defined = set(_TOP_LEVEL_DEF.findall(sources[path].text))
        if not defined & tree.context(path, {}).external_names:
            continue
        for name, parameter in result.exportable_mutators.items():
            found[f"{tree.names[path]}.{name}"] = parameter
    return found


def check_paths(paths: list[Path], config: Config, *, jobs: int | None = None,
                on_file: OnFile = None) -> RunResult:
    """`jobs`: worker processes (default: one per core; 1 runs in this process)."""
    files, errors = discover(paths, config)
    run = RunResult(errors=errors)
    for _ in _process_files(files, config, run, rewrite=False, jobs=jobs, on_file=on_file):
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
                  jobs: int | None = None, on_file: OnFile = None) -> RunResult:
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
    for item, source, result in _process_files(files, config, run, jobs=jobs, on_file=on_file):
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
