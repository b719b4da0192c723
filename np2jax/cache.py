"""The result cache: one JSON file a processed file, keyed by everything its result depends on.

The key is a hash of the file's text, the np2jax version and a fingerprint of its own code
and rule catalog, the configuration, whether it is converted or checked, and the file's view
of the tree (np2jax.tree.ModuleContext: its module name, the identifiers other files use,
the functions of other modules rewritten to return their argument). A change to any of
them is a different key, so a stale entry is never read; entries are written atomically,
and one that cannot be read is ignored (and rewritten).

Location: $NP2JAX_CACHE_DIR, else $XDG_CACHE_HOME/np2jax, else ~/.cache/np2jax.
`--no-cache` or `cache = false` in [tool.np2jax] turn it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from dataclasses import asdict
from functools import cache
from pathlib import Path

from np2jax import __version__
from np2jax.config import Config
from np2jax.files import SourceError, write_atomic
from np2jax.findings import FileResult
from np2jax.tree import ModuleContext

FORMAT = 2  # bump when the entry layout changes


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
    """A hash of np2jax's own sources and rule catalog: an edited engine (an editable
    install, a development checkout) never reads results of the old one."""
    from np2jax.catalog import _rules_dir

    package = Path(__file__).parent
    digest = hashlib.sha256(f"{__version__} {sys.version_info[:2]}".encode())
    for root in (package, Path(str(_rules_dir()))):
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".toml", ".json") and "__pycache__" not in path.parts:
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def result_key(text: str, config: Config, rewrite: bool, context: ModuleContext) -> str:
    settings = {k: v for k, v in asdict(config).items() if k != "cache"}
    facts = [FORMAT, engine_fingerprint(), rewrite, settings, context.name, context.is_package,
             sorted(context.external_names), [list(m) for m in context.external_mutators],
             sorted(context.exported_mutators),
             hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()]
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=list).encode()).hexdigest()


class ResultCache:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or cache_dir()

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, path: str, text: str) -> FileResult | SourceError | None:
        """The stored outcome, or None when there is none or it cannot be read."""
        try:
            data = json.loads(self._entry(key).read_text(encoding="utf-8"))
            if "error" in data:
                error = data["error"]
                return SourceError(path, error["problem"], error["line"], error["cell"])
            return FileResult.from_json(data["result"], path, text)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put(self, key: str, outcome: FileResult | SourceError) -> None:
        if isinstance(outcome, SourceError):
            data = {"error": {"problem": outcome.problem, "line": outcome.line,
                              "cell": outcome.cell}}
        else:
            data = {"result": outcome.to_json()}
        try:
            write_atomic(self._entry(key), json.dumps(data))
        except OSError:
            pass  # a cache that cannot be written only costs time
