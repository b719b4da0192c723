"""The engine under np2jax.api: a run's files, read, processed as one tree and written.

    find (np2jax.files.discover) -> read -> the tree passes (np2jax.pipeline on each file:
    from the cache, in this process or in worker processes) -> write (convert)

Layering: cli -> api -> engine -> pipeline. Nothing here imports np2jax.api or np2jax.cli,
and np2jax.pipeline (with libcst) loads only when a file needs processing. Each phase that
takes time tells a Progress (np2jax.report.text.RunProgress draws it on a terminal).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from np2jax.config import Config
from np2jax.files import (
    InputFile,
    SourceError,
    SourceText,
    discover,
    is_notebook,
    read_source,
    write_atomic,
)
from np2jax.findings import FileResult
from np2jax.tree import ModuleContext, Tree, from_imports, module_names

# Called after each file is processed, with its path and the number of files in the run.
OnFile = Callable[[Path, int], None] | None
# A file's outcome, in the order of the run's files: processed, or an error.
Outcome = FileResult | SourceError


class Progress:
    """What a run tells about its progress: one phase after another (finding the files,
    reading them, each pass over the tree, writing), each with its number of steps (files)
    when it is known, and for the passes over the tree the size of the work (characters of
    source: a big file takes longer, and the biggest go first). This one shows nothing;
    np2jax.report.text.RunProgress draws a bar."""

    def phase(self, description: str, total: int | None = None, size: int | None = None) -> None:
        """A new phase begins: `total` steps (None: not known in advance) weighing `size`
        in all (None: each step the same)."""

    def advance(self, steps: int = 1, size: int = 0) -> None:
        """Steps of the current phase are done, weighing `size`."""

    def tick(self) -> None:
        """Nothing done yet, but time passes (called while waiting for workers)."""


SILENT = Progress()


def process_text(text: str, config: Config, path: str, rewrite: bool = True,
                 context: ModuleContext | None = None, edits: bool = False) -> FileResult:
    """One source text (a notebook's JSON when `path` ends in .ipynb) through the pipeline;
    `edits`: check gives each fix its edit (np2jax.edits). Raises SourceError when it
    cannot be processed."""
    if is_notebook(path):
        from np2jax.notebooks import process_notebook

        return process_notebook(text, config, path, rewrite, context, edits)
    from np2jax.pipeline import process  # libcst loads only when a file needs processing

    return process(text, config, path, rewrite, context or ModuleContext(), edits)


# Below this much source text in a batch, worker processes cost more than they save (each
# loads libcst, about 0.25 s of CPU): a pre-commit run over a few files stays in-process.
PARALLEL_MIN_CHARS = 50_000
WAIT_S = 0.1  # how often a progress bar is told that time passes while workers run


class Engine:
    """Runs np2jax.pipeline.process over batches of files: from the cache when it has the
    result, else in this process (jobs=1) or in a pool of worker processes. A file's result
    depends only on its text, the configuration and its ModuleContext, so it is computed
    once per run (the tree's fixed point asks again for files whose context did not change)."""

    def __init__(self, config: Config, rewrite: bool, jobs: int | None,
                 progress: Progress = SILENT, edits: bool = False) -> None:
        self.config, self.rewrite, self.edits = config, rewrite, edits
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.progress = progress
        self.cache = None
        if config.cache:
            from np2jax.cache import ResultCache, size_limit

            size_limit()  # a bad $NP2JAX_CACHE_MAX_MB stops the run before it starts
            self.cache = ResultCache()
        self.memo: dict[tuple, object] = {}
        self.internal_errors = False  # a bug in np2jax made a file fail: store no whole run
        self.pool = None
        self.on_done: Callable[[Path], None] | None = None  # after each file's outcome

    def _done(self, path, size: int) -> None:
        self.progress.advance(1, size)
        if self.on_done is not None:
            self.on_done(Path(path))

    def run(self, batch: list[tuple[Path, str, ModuleContext]], rewrite: bool | None = None,
            description: str | None = None):
        """{path: FileResult or SourceError} for (path, text, context) jobs. `description`
        names the phase for the progress bar; its steps are the files not memoised."""
        rewrite = self.rewrite if rewrite is None else rewrite
        outcomes, fresh = {}, []
        for path, text, context in batch:
            memo_key = (text, rewrite, context)
            if memo_key in self.memo:
                outcomes[path] = _at_path(self.memo[memo_key], str(path), text)
                if self.on_done is not None:
                    self.on_done(Path(path))
            else:
                fresh.append((path, text, context, memo_key))
        if description is not None:
            self.progress.phase(description, len(fresh), sum(len(f[1]) for f in fresh))
        missing = []
        for path, text, context, memo_key in fresh:
            cached = None
            if self.cache is not None:
                from np2jax.cache import result_key

                key = result_key(text, self.config, rewrite, context, self.edits)
                cached = self.cache.get(key, str(path), text)
            else:
                key = None
            if cached is not None:
                outcomes[path] = self.memo[memo_key] = cached
                self._done(path, len(text))
            else:
                missing.append((path, text, context, key, memo_key))
        jobs = [(str(p), t, self.config, rewrite, c, self.edits) for p, t, c, _, _ in missing]
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
                outcomes.append(process_job(job))
                self._done(job[0], len(job[1]))
        else:
            outcomes = self._in_workers(jobs)
        return [("done", SourceError(*value)) if kind == "error" else (kind, value)
                for kind, value in outcomes]

    def _in_workers(self, jobs: list[tuple]) -> list[tuple[str, object]]:
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        if self.pool is None:
            self.pool = ProcessPoolExecutor(max_workers=min(self.jobs, len(jobs)),
                                            mp_context=worker_context())
        # the biggest files first, so that no worker is left with one at the end
        order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i][1]))
        futures = {}
        try:
            for i in order:
                futures[self.pool.submit(process_job, jobs[i])] = i
        except BrokenProcessPool:
            pass  # the files not submitted are reported below
        outcomes: list = [None] * len(jobs)
        lost = sorted(set(range(len(jobs))) - set(futures.values()))
        pending = set(futures)
        while pending:  # in the order they finish: the progress bar moves with the workers
            done, pending = wait(pending, timeout=WAIT_S, return_when=FIRST_COMPLETED)
            for future in done:
                i = futures[future]
                try:
                    outcomes[i] = future.result()
                except BrokenProcessPool:
                    lost.append(i)
                    continue
                self._done(jobs[i][0], len(jobs[i][1]))
            self.progress.tick()
        if lost:
            # A worker died (a crash in native code) and took the pool's pending files with
            # it: each of those runs again alone, so only the file that crashes fails.
            self.close()
            self.pool = None
            for i in sorted(lost):
                with ProcessPoolExecutor(max_workers=1, mp_context=worker_context()) as alone:
                    try:
                        outcomes[i] = alone.submit(process_job, jobs[i]).result()
                    except BrokenProcessPool as exc:
                        outcomes[i] = ("internal", _internal_error(
                            exc, "the worker process processing it died"))
                self._done(jobs[i][0], len(jobs[i][1]))
        return outcomes

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def worker_context():
    """fork where this process runs no other thread (the CLI): workers start at once with
    what is loaded; spawn otherwise (the API called from a program that runs JAX, say),
    since a fork of a multithreaded process can deadlock."""
    import multiprocessing

    if thread_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def thread_count() -> int:
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


def process_job(job: tuple) -> tuple[str, object]:
    """One file, in this process or a worker: ("done", FileResult), ("error", the
    SourceError's arguments) or ("internal", message) for a bug in np2jax (never cached).
    Plain values: they cross the process boundary."""
    path, text, config, rewrite, context, edits = job
    try:
        return "done", process_text(text, config, path, rewrite, context, edits)
    except SourceError as exc:
        return "error", (exc.path, exc.problem, exc.line, exc.cell)
    except Exception as exc:  # noqa: BLE001 - a bug in np2jax must not cost the rest of the batch
        return "internal", _internal_error(exc)


def find_files(paths: list[Path], config: Config,
               progress: Progress = SILENT) -> tuple[list[InputFile], list[SourceError]]:
    """np2jax.files.discover, telling the progress bar of each file found."""
    progress.phase("finding files")
    return discover(paths, config, on_found=progress.advance)


def process_files(files: list[InputFile], config: Config, rewrite: bool = True,
                  jobs: int | None = None, on_file: OnFile = None, progress: Progress = SILENT,
                  read: Callable[[Path], SourceText] | None = None, edits: bool = False,
                  ) -> tuple[list[tuple[InputFile, SourceText, Outcome]], list[SourceError]]:
    """Process the files as one tree: (file, source, outcome) for each file that could be
    read, in the files' order, and the errors of those that could not. A check of a tree
    whose files are all as in a stored run takes that run's outcome (np2jax.cache.StoredRun).
    `read`: how a file is read (np2jax.files.read_source); `edits`: check gives each fix
    its edit."""
    read = read or read_source
    sources, errors = {}, []
    progress.phase("reading", len(files))
    for item in files:
        try:
            sources[item.path] = read(item.path)
        except SourceError as exc:
            errors.append(exc)
        progress.advance()
    readable = [item for item in files if item.path in sources]
    stored = outcomes = None
    if config.cache and not rewrite:  # convert's outcomes carry converted sources: per file
        from np2jax.cache import StoredRun

        names = module_names((item.path, item.relative) for item in readable)
        stored = StoredRun([(str(item.path), names[item.path], sources[item.path].text)
                            for item in readable], config, rewrite, edits=edits)
        outcomes = stored.load()
    if outcomes is None:
        engine = Engine(config, rewrite, jobs, progress, edits)
        try:
            by_path = process_tree(readable, sources, engine, on_file)
        finally:
            engine.close()
        outcomes = [by_path[item.path] for item in readable]
        if stored is not None and not engine.internal_errors:
            progress.phase("storing the results")
            stored.save(outcomes)
        if engine.cache is not None and (engine.cache.stored or stored is not None):
            from np2jax.cache import prune

            prune(engine.cache.folder)
    return [(item, sources[item.path], outcome) for item, outcome in zip(readable, outcomes)], errors


def process_tree(files: list[InputFile], sources: dict, engine: Engine,
                 on_file: OnFile) -> dict[Path, Outcome]:
    """Each file's outcome, the files processed as one tree: functions rewritten to return
    their argument (NJ209) and their calls in other modules are rewritten together, or not
    at all. The first pass assumes no such rewrite; if it finds functions refused only
    because other files use them, those are assumed rewritable and the files whose view of
    the tree changes run again (the others are memoised), until every rewrite assumed
    happened everywhere (Tree.unsettled)."""
    tree = Tree.of(files, sources, marked=engine.config.interface == "numpy")
    if on_file is not None:
        reported: set[Path] = set()

        def report(path: Path) -> None:  # once a file, however many passes it takes
            if path not in reported:
                reported.add(path)
                on_file(path, len(files))

        engine.on_done = report
    failed: dict[Path, SourceError] = {}
    accepted: dict[str, tuple] = {}
    effects: dict[Path, dict] = {}  # what the functions other files use do (tree_effects)
    numpy_params: dict = {}  # parameters of functions kept on NumPy (tree_numpy_params)
    decorators = tree_jit_decorators(tree) if engine.config.jit else {}
    array_arguments: dict = {}  # with --jit: tree_array_arguments
    compiled: dict = {}  # with --jit: tree_compiled
    given_objects: dict = {}  # tree_object_arguments
    verb = "converting" if engine.rewrite else "checking"
    passes = 0
    while True:
        passes += 1
        batch = [(item.path, sources[item.path].text, tree.context(item.path, accepted, effects,
                                                                  numpy_params, decorators,
                                                                  array_arguments, compiled,
                                                                  given_objects))
                 for item in files if item.path not in failed]
        description = verb if passes == 1 else f"{verb} again (cross-module rewrites, pass {passes})"
        results = {}
        for path, outcome in engine.run(batch, description=description).items():
            if isinstance(outcome, SourceError):
                failed[path] = outcome
            else:
                results[path] = outcome
        if passes == 1:
            accepted = exportable_mutators(results, sources, tree)
            # taken from the first pass, which knew nothing of the other files: the most
            # cautious summaries, never revised (a later pass could only find more)
            effects = tree_effects(results, tree)
            numpy_params = tree_numpy_params(results, tree)
            array_arguments = tree_array_arguments(results, tree)
            compiled = tree_compiled(results, tree)
            given_objects = tree_object_arguments(results, tree)
            if accepted or effects or numpy_params or array_arguments or compiled or given_objects:
                continue
        elif passes < 6:
            # a function compiled once its callees of other modules were known to be: its
            # own callers in other modules learn it on the next pass (a chain of modules)
            now = tree_compiled(results, tree)
            if now != compiled:
                compiled = now
                continue
        unsettled = tree.unsettled(accepted, results, set(failed))
        if not unsettled:
            return {**results, **failed}
        accepted = {q: p for q, p in accepted.items() if q not in unsettled}


_NESTED_DEF = re.compile(r"\n[ \t]+def ")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def tree_jit_decorators(tree: Tree) -> dict[str, str]:
    """Qualified name -> kind of the tree's transparent decorators that may sit above
    jax.jit (np2jax.analysis.decorators.tree_jit_decorators). Such a decorator is a
    module-level `def` with a `def` in its body: only the modules whose ast (Tree.syntax,
    the tree's one parse of each file) shows one are parsed with libcst for the analysis;
    what the modules re-export is read from the same ast, of those with a nested `def`
    and those that name what the others define."""
    import libcst as cst

    from np2jax.analysis.decorators import tree_jit_decorators as found_in

    imports: dict = {}  # module name -> its from_imports, for the re-exports
    modules: dict = {}  # module name -> its libcst module, for the decorators

    def read(path: Path, decorators: bool) -> None:
        name = tree.names.get(path)
        if not name or name in imports or is_notebook(path):
            return
        syntax = tree.syntax(path)
        if syntax is None:
            return  # its own conversion reports the syntax error
        if decorators and any(isinstance(s, _DEFS) and any(isinstance(b, _DEFS) for b in s.body)
                              for s in syntax.body):
            try:
                modules[name] = cst.parse_module(tree.texts[path])
            except Exception:  # noqa: BLE001 - its own conversion reports the syntax error
                return
        imports[name] = from_imports(syntax, name, path.name == "__init__.py")

    for path, text in tree.texts.items():
        if _NESTED_DEF.search(text):
            read(path, decorators=True)
    found = found_in(modules, imports)
    if not found:
        return {}
    names = {q.rsplit(".", 1)[1] for q in found}
    for path in tree.texts:
        if names & tree.words.get(path, set()):
            read(path, decorators=False)  # no nested def: it defines no decorator
    return found_in(modules, imports)


def tree_effects(results: dict[Path, FileResult], tree: Tree) -> dict:
    """Path -> {qualified name: (every return a fresh JAX array, the parameters it only
    reads)} of the functions of other files of the tree that the file's analysis asked about
    (np2jax.analysis.effects): only a file that asked gets a second pass."""
    by_module = {tree.names[path]: result for path, result in results.items() if tree.names.get(path)}
    known = {f"{module}.{name}": (fresh, read_only)
             for module, result in by_module.items()
             for name, (fresh, read_only, needs) in result.effects.items()
             if all(_transparent_decorator(by_module, q) == kind for q, kind in needs)}
    found = {}
    for path, result in results.items():
        wanted = {q: known[q] for q in result.wanted_effects if q in known}
        if wanted:
            found[path] = wanted
    return found


def _transparent_decorator(by_module: dict[str, FileResult], qualname: str) -> str | None:
    """The kind of transparent decorator (np2jax.analysis.decorators) the tree's function
    `qualname` is, following `from M import f` through the modules of the tree; None when
    it is not one, or not the tree's."""
    for _hop in range(8):  # a chain of re-exports, never a cycle
        module, _, name = qualname.rpartition(".")
        result = by_module.get(module)
        if result is None:
            return None
        if name in result.transparent_decorators:
            return result.transparent_decorators[name]
        qualname = result.from_imports.get(name)
        if qualname is None:
            return None
    return None


def tree_array_arguments(results: dict[Path, FileResult], tree: Tree) -> dict:
    """With --jit: qualified name of a function of the tree (where it is defined, re-exports
    followed) -> {(position or None, keyword or None)} of the arguments other files pass it
    that are not Python values (FileResult.array_arguments): the defining file makes none of
    those parameters static."""
    by_module = {tree.names[path]: result for path, result in results.items() if tree.names.get(path)}
    found: dict = {}
    for result in results.values():
        for qualname, arguments in result.array_arguments.items():
            for _hop in range(8):  # `from pkg import f` where pkg re-exports pkg.ops.f
                module, _, name = qualname.rpartition(".")
                defining = by_module.get(module)
                if defining is None or name not in defining.from_imports:
                    break
                qualname = defining.from_imports[name]
            if qualname.rpartition(".")[0] in by_module:
                found.setdefault(qualname, set()).update(tuple(a) for a in arguments)
    return found


def tree_object_arguments(results: dict[Path, FileResult], tree: Tree) -> dict:
    """Qualified name of a function of the tree (where it is defined, re-exports followed)
    -> the code of a string or object array another file passes it, and that module
    (FileResult.object_arguments): the defining file keeps the function on NumPy."""
    found: dict = {}
    for path, result in sorted(results.items()):
        for qualname, shown in result.object_arguments.items():
            defined = tree.defined_at(qualname)
            if defined is not None:
                found.setdefault(defined, f"{shown} in {tree.names.get(path, path.name)}")
    return found


def tree_compiled(results: dict[Path, FileResult], tree: Tree) -> dict:
    """With --jit: qualified name -> (signature, static argument names) of every function of
    the tree compiled with jax.jit (FileResult.compiled): compiled functions of other
    modules may call them."""
    return {f"{tree.names[path]}.{name}": (signature, tuple(static))
            for path, result in results.items() if tree.names.get(path)
            for name, (signature, static) in result.compiled.items()}


def tree_numpy_params(results: dict[Path, FileResult], tree: Tree) -> dict:
    """Qualified name -> the parameters ((position or None, name), ...) of each function
    of the tree kept on NumPy (NJ104) that writes, returns or keeps what is passed for
    them (FileResult.numpy_params): calls in other files pass NumPy arrays for those."""
    return {f"{tree.names[path]}.{name}": params for path, result in results.items()
            for name, params in result.numpy_params.items() if tree.names.get(path)}


_TOP_LEVEL_DEF = re.compile(r"^def\s+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)


def exportable_mutators(results: dict[Path, FileResult], sources, tree: Tree) -> dict:
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


def write_results(processed, out: Path | None, in_place: bool,
                  progress: Progress = SILENT) -> tuple[list[FileResult], list[SourceError], list[Path]]:
    """convert's outcomes, in order: the results, the errors (a file that failed, or that
    could not be written, in the files' order) and the paths written. With `out`, every
    result is written under it at its relative path; with `in_place`, the changed ones over
    their sources; with neither, nothing."""
    results, errors, written = [], [], []
    targets: dict[Path, Path] = {}
    to_write = sum(1 for _, _, o in processed if not isinstance(o, SourceError)
                   and (out is not None or (in_place and o.changed)))
    if to_write:
        progress.phase("writing", to_write)
    for item, source, outcome in processed:
        if isinstance(outcome, SourceError):
            errors.append(outcome)
            continue
        results.append(outcome)
        target = out / item.relative if out is not None else (item.path if in_place else None)
        if target is None or (in_place and not outcome.changed):
            continue
        progress.advance()
        if in_place and item.path.is_symlink():
            errors.append(SourceError(str(item.path), "is a symbolic link; not rewritten in "
                                      "place (convert its target, or use --out)"))
            continue
        if target in targets:
            errors.append(SourceError(str(item.path), f"would overwrite {target}, already "
                                      f"written from {targets[target]}; not written"))
            continue
        targets[target] = item.path
        try:
            write_atomic(target, outcome.converted, source.encoding, like=item.path)
        except (OSError, UnicodeEncodeError) as exc:
            errors.append(SourceError(str(target), f"cannot write: {exc}"))
            continue
        written.append(target)
    return results, errors, written


def copy_other_files(paths: list[Path], out: Path, config: Config,
                     progress: Progress = SILENT) -> None:
    """--copy-other: the files of the trees that are neither Python nor notebooks."""
    progress.phase("copying other files")
    for root in paths:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if (path.is_file() and path.suffix != ".py" and not is_notebook(path)
                    and not config.excluded(relative)):
                (out / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, out / relative)
                progress.advance()
