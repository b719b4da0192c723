"""The result cache: one JSON file a processed file, keyed by everything its result depends on.

The key is a hash of the file's text, the np2jax version and a fingerprint of its own code
and rule catalog, the configuration, whether it is converted or checked, and the file's view
of the tree (np2jax.tree.ModuleContext: its module name, the identifiers other files use,
the functions of other modules rewritten to return their argument). A change to any of
them is a different key, so a stale entry is never read; entries are written atomically,
and one that cannot be read is ignored (and rewritten).

A check run also stores its whole outcome (StoredRun), keyed by every file's path, module
name and text: a re-check of an unchanged tree reads that one entry and skips the tree's
analysis; any change falls back on the entries of the files.

Location: $NP2JAX_CACHE_DIR, else $XDG_CACHE_HOME/np2jax, else ~/.cache/np2jax.
`--no-cache` or `cache = false` in [tool.np2jax] turn it off. Size: at most
$NP2JAX_CACHE_MAX_MB megabytes (default 512): a run that stores entries and finds the cache
bigger deletes the least recently used ones (an entry read is touched) down to 3/4 of it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from dataclasses import asdict
from functools import cache
from pathlib import Path

from np2jax._version import __version__
from np2jax.config import Config, ConfigError
from np2jax.files import SourceError, write_atomic
from np2jax.findings import FileResult
from np2jax.tree import ModuleContext

FORMAT = 7  # bump when the entry layout changes
DEFAULT_MAX_MB = 512
MAX_MB_VARIABLE = "NP2JAX_CACHE_MAX_MB"


class CacheSettingError(ConfigError):
    """$NP2JAX_CACHE_MAX_MB is not a size."""


def size_limit() -> int:
    """The most bytes the cache may hold ($NP2JAX_CACHE_MAX_MB megabytes)."""
    value = os.environ.get(MAX_MB_VARIABLE, "").strip()
    if not value:
        return DEFAULT_MAX_MB * 1024 * 1024
    try:
        megabytes = float(value)
    except ValueError:
        megabytes = -1.0
    if not megabytes >= 0:  # also NaN
        raise CacheSettingError(f"{MAX_MB_VARIABLE}={value!r}: expected a number of megabytes "
                                f"(default {DEFAULT_MAX_MB})")
    return int(megabytes * 1024 * 1024)


def prune(folder: Path | None = None, limit: int | None = None) -> int:
    """When the cache holds more than `limit` bytes, delete its least recently used entries
    (oldest modification time: reads touch them) until it holds 3/4 of it; the bytes freed."""
    folder = folder or cache_dir()
    limit = size_limit() if limit is None else limit
    entries = []
    try:
        for entry in folder.glob("*/*.json"):
            try:
                stat = entry.stat()
            except OSError:
                continue  # removed meanwhile (another run pruning)
            entries.append((stat.st_mtime, stat.st_size, entry))
    except OSError:
        return 0
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return 0
    freed = 0
    for _, size, entry in sorted(entries, key=lambda e: e[0]):
        if total - freed <= limit * 3 // 4:
            break
        try:
            entry.unlink()
            freed += size
        except OSError:
            pass
    return freed


def _touch(entry: Path) -> None:
    try:
        os.utime(entry)
    except OSError:
        pass  # recency only orders pruning


def cache_dir() -> Path:
    explicit = os.environ.get("NP2JAX_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = Path.home() / ".cache"
        except RuntimeError:  # no home folder to be found: a cache next to the temporary files
            base = Path(tempfile.gettempdir())
    return Path(base) / "np2jax"


@cache
def engine_fingerprint() -> str:
    """A hash of np2jax's own sources and rule catalog, and of the libcst release that
    parses (its trees and scopes are what the analysis reads): an edited engine (an
    editable install, a development checkout) or another libcst never reads results of
    the old one."""
    from np2jax.catalog import catalog_dir

    package = Path(__file__).parent
    digest = hashlib.sha256(f"{__version__} {sys.version_info[:2]} {_libcst_release()}".encode())
    for root in (package, Path(str(catalog_dir()))):
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".toml", ".json") and "__pycache__" not in path.parts:
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def _libcst_release() -> str:
    """Which libcst is installed, read from its files: importing libcst, or
    importlib.metadata, costs more than a whole warm check."""
    spec = importlib.util.find_spec("libcst")
    if spec is None or not spec.submodule_search_locations:
        return "libcst missing"
    folder = Path(list(spec.submodule_search_locations)[0])
    version = folder / "_version.py"  # libcst's own `__version__ = ...`
    if version.is_file():
        return version.read_text(encoding="utf-8")
    return " ".join(sorted(p.name for p in folder.parent.glob("libcst-*.dist-info")))


def _settings(config: Config) -> dict:
    return {k: v for k, v in asdict(config).items() if k != "cache"}


def _text_digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def result_key(text: str, config: Config, rewrite: bool, context: ModuleContext,
               edits: bool = False) -> str:
    facts = [FORMAT, engine_fingerprint(), rewrite, edits, _settings(config), context.name,
             context.is_package, sorted(context.external_names), sorted(context.external_attributes),
             sorted(context.imported_names),
             [list(m) for m in context.external_mutators], sorted(context.exported_mutators),
             [list(e) for e in context.external_effects],
             [[q, [list(p) for p in params]] for q, params in context.external_numpy_params],
             [list(d) for d in context.jit_decorators],
             [[n, [list(a) for a in found]] for n, found in context.array_arguments],
             [[q, signature, list(static)] for q, signature, static in context.compiled],
             context.tree, sorted(context.external_attribute_writes),
             [list(g) for g in context.given_objects], _text_digest(text).hex()]
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=list).encode()).hexdigest()


def _encode(outcome: FileResult | SourceError) -> dict:
    if isinstance(outcome, SourceError):
        return {"error": {"problem": outcome.problem, "line": outcome.line, "cell": outcome.cell}}
    return {"result": outcome.to_json()}


def _decode(data: dict, path: str, text: str) -> FileResult | SourceError:
    if "error" in data:
        error = data["error"]
        return SourceError(path, error["problem"], error["line"], error["cell"])
    return FileResult.from_json(data["result"], path, text)


# What a stored entry that is damaged (truncated, edited, of another layout) raises when read.
_UNREADABLE = (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError)


class ResultCache:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or cache_dir()
        self.stored = False  # whether this run added entries (then it prunes)

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, path: str, text: str) -> FileResult | SourceError | None:
        """The stored outcome, or None when there is none or it cannot be read."""
        entry = self._entry(key)
        try:
            outcome = _decode(json.loads(entry.read_text(encoding="utf-8")), path, text)
        except _UNREADABLE:
            return None
        _touch(entry)
        return outcome

    def put(self, key: str, outcome: FileResult | SourceError) -> None:
        _store(self._entry(key), _encode(outcome))
        self.stored = True


def _store(entry: Path, data) -> None:
    try:
        write_atomic(entry, json.dumps(data))
    except (OSError, ValueError):
        pass  # a cache that cannot be written only costs time


class StoredRun:
    """The outcome of every file of one check run, in one entry.

    The entry is named after the run's settings and the files' paths, so a tree has one entry
    per configuration, overwritten when anything changes; inside, `key` covers the engine
    (engine_fingerprint) and every file's module name and text, so an entry written for other
    contents is never used. A file's result depends on nothing else (its ModuleContext is
    computed from the others' texts and names)."""

    def __init__(self, files: list[tuple[str, str, str]], config: Config, rewrite: bool,
                 folder: Path | None = None, edits: bool = False) -> None:
        """`files`: (path, module name, text) of every file of the run, in order."""
        self.paths = [(path, text) for path, _, text in files]
        identity = json.dumps([FORMAT, rewrite, edits, _settings(config),
                               [[path, name] for path, name, _ in files]],
                              sort_keys=True, default=list)
        self.entry = (folder or cache_dir()) / "runs" / \
            f"{hashlib.sha256(identity.encode()).hexdigest()}.json"
        digest = hashlib.sha256(f"{identity} {engine_fingerprint()}".encode())
        for _, _, text in files:
            digest.update(_text_digest(text))
        self.key = digest.hexdigest()

    def load(self) -> list[FileResult | SourceError] | None:
        """The outcome of each file, in order; None when none is stored for exactly these
        files, or the entry cannot be read."""
        try:
            data = json.loads(self.entry.read_text(encoding="utf-8"))
            if data["key"] != self.key or len(data["outcomes"]) != len(self.paths):
                return None
            outcomes = [_decode(stored, path, text)
                        for stored, (path, text) in zip(data["outcomes"], self.paths)]
        except _UNREADABLE:
            return None
        _touch(self.entry)
        return outcomes

    def save(self, outcomes: list[FileResult | SourceError]) -> None:
        _store(self.entry, {"key": self.key, "outcomes": [_encode(o) for o in outcomes]})
