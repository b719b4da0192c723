"""Reading and writing user files without losing anything.

Decoding follows PEP 263 (coding cookie, BOM) and keeps line endings as they are; writes
go to a temporary file in the same folder, then replace the original atomically, keeping
its permissions.
"""

from __future__ import annotations

import io
import os
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path

from np2jax.config import Config

# Cheap text pre-filter: a file that never mentions these cannot use NumPy or SciPy.
_MODULE_WORDS = (b"numpy", b"scipy")


class SourceError(Exception):
    """A file that cannot be processed; str() is one line naming the file and the problem."""

    def __init__(self, path: str, problem: str, line: int | None = None):
        self.path, self.problem, self.line = path, problem, line
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class SourceText:
    text: str
    encoding: str  # "utf-8-sig" when the file starts with a BOM, so writing restores it


def decode_source(data: bytes, path: str) -> SourceText:
    if b"\0" in data:
        raise SourceError(path, "binary file (contains NUL bytes), not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError(path, f"invalid encoding declaration: {exc.msg}") from None
    try:
        return SourceText(data.decode(encoding), encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SourceError(path, f"cannot decode as {encoding}: byte {data[exc.start]:#04x}", line) from None


def read_source(path: Path) -> SourceText:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(str(path), f"cannot read: {exc.strerror or exc}") from None
    return decode_source(data, str(path))


def may_use_numpy(text: str) -> bool:
    encoded = text.encode("utf-8", "surrogatepass")
    return any(word in encoded for word in _MODULE_WORDS)


def write_atomic(path: Path, text: str, encoding: str = "utf-8", like: Path | None = None) -> None:
    """Write `text` to `path` so that a crash leaves either the old or the new file.

    `like` names the file whose permissions the result keeps (the original, for --in-place
    or for a converted copy).
    """
    data = text.encode(encoding)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".np2jax-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        source = like if like is not None and like.exists() else (path if path.exists() else None)
        # mkstemp makes the file private (0600); a new file gets what open() would give it
        os.chmod(tmp, source.stat().st_mode & 0o7777 if source is not None
                 else 0o666 & ~_current_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _current_umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it: put it straight back
    os.umask(mask)
    return mask


@dataclass(frozen=True)
class InputFile:
    path: Path  # as found on disk
    relative: Path  # under the root the user named, for --out trees


def discover(paths: list[Path], config: Config) -> tuple[list[InputFile], list[SourceError]]:
    """Python files under `paths` (files given by name are taken whatever their suffix),
    minus excluded ones, each once, in a stable order."""
    found: dict[Path, InputFile] = {}
    errors: list[SourceError] = []
    for root in paths:
        if not root.exists():
            problem = "broken symbolic link, or a link loop" if root.is_symlink() \
                else "no such file or directory"
            errors.append(SourceError(str(root), problem))
            continue
        if root.is_file():
            candidates = [(root, Path(root.name))]
        else:
            candidates = [(p, p.relative_to(root)) for p in _walk_python_files(root, errors)]
        for path, relative in candidates:
            if config.excluded(relative) or config.excluded(path):
                continue
            try:
                resolved = path.resolve(strict=True)
            except (OSError, RuntimeError):  # a link loop or a dangling link inside the tree
                errors.append(SourceError(str(path), "broken symbolic link, or a link loop"))
                continue
            found.setdefault(resolved, InputFile(path, relative))
    return sorted(found.values(), key=lambda f: str(f.path)), errors


def _walk_python_files(root: Path, errors: list[SourceError]):
    def on_error(exc: OSError):
        errors.append(SourceError(exc.filename or str(root), f"cannot list: {exc.strerror}"))

    # followlinks=False: a symlinked folder can loop or leave the tree.
    for folder, dirs, files in os.walk(root, onerror=on_error):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                yield Path(folder) / name
