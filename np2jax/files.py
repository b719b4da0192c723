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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from np2jax.config import Config

NOTEBOOK_SUFFIX = ".ipynb"
# Cheap text pre-filter: a file that never mentions these cannot use NumPy or SciPy.
_MODULE_WORDS = (b"numpy", b"scipy")


class SourceError(Exception):
    """A file that cannot be processed; str() is one line naming the file and the problem."""

    def __init__(self, path: str, problem: str, line: int | None = None,
                 cell: int | None = None):
        self.path, self.problem, self.line, self.cell = path, problem, line, cell
        where = f"{path}:cell {cell}" if cell is not None else path
        where = f"{where}:{line}" if line else where
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


TEMPORARY_SUFFIX = ".np2jax-tmp"
_swept_folders: set[Path] = set()


def write_atomic(path: Path, text: str, encoding: str = "utf-8", like: Path | None = None) -> None:
    """Write `text` to `path` so that a crash leaves either the old or the new file.

    `like` names the file whose permissions the result keeps (the original, for --in-place
    or for a converted copy). The data goes to an unnamed file first (O_TMPFILE, where the
    file system has it), so a kill while writing leaves nothing behind; it gets a name
    (`.NAME.PID.XXXX.np2jax-tmp`) only for the instant before the rename. Names a killed
    run left in a folder are removed the next time np2jax writes there.
    """
    data = text.encode(encoding)
    path.parent.mkdir(parents=True, exist_ok=True)
    _sweep_stale_temporaries(path.parent)
    source = like if like is not None and like.exists() else (path if path.exists() else None)
    mode = source.stat().st_mode & 0o7777 if source is not None else None
    tmp = None
    try:
        fd = _unnamed_file(path.parent)
        if fd is None:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.",
                                       suffix=TEMPORARY_SUFFIX, dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            else:  # unnamed and mkstemp files start at 0600; give it what open() would
                os.fchmod(handle.fileno(), 0o666 & ~_umask())
            os.fsync(handle.fileno())
            if tmp is None:
                tmp = _name_unnamed_file(handle.fileno(), path)
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        raise


def _unnamed_file(folder: Path) -> int | None:
    if not hasattr(os, "O_TMPFILE") or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o600)
    except OSError:  # the file system does not support it (EOPNOTSUPP, EISDIR on old kernels)
        return None


def _name_unnamed_file(fd: int, path: Path) -> str:
    # linkat(AT_SYMLINK_FOLLOW) on /proc/self/fd/N: os.link calls link(), which would link
    # the /proc entry itself.
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, at_symlink_follow = -100, 0x400
    for _ in range(100):
        tmp = str(path.parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}{TEMPORARY_SUFFIX}")
        if libc.linkat(at_fdcwd, f"/proc/self/fd/{fd}".encode(), at_fdcwd, os.fsencode(tmp),
                       at_symlink_follow) == 0:
            return tmp
        errno = ctypes.get_errno()
        if errno != 17:  # EEXIST: try another name
            raise OSError(errno, os.strerror(errno), tmp)
    raise FileExistsError(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _sweep_stale_temporaries(folder: Path) -> None:
    """Remove temporaries of np2jax runs that died (their PID no longer runs), once per
    folder and process."""
    if folder in _swept_folders:
        return
    _swept_folders.add(folder)
    try:
        names = [entry.name for entry in os.scandir(folder)
                 if entry.name.endswith(TEMPORARY_SUFFIX) and entry.name.startswith(".")]
    except OSError:
        return
    for name in names:
        parts = name.split(".")
        pid = int(parts[-3]) if len(parts) >= 4 and parts[-3].isdigit() else None
        if pid is None or pid == os.getpid() or _process_exists(pid):
            continue
        try:
            os.unlink(folder / name)
        except OSError:
            pass


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


@dataclass(frozen=True)
class InputFile:
    path: Path  # as found on disk
    relative: Path  # under the root the user named, for --out trees


def discover(paths: list[Path], config: Config, on_found: Callable[[], None] | None = None,
             ) -> tuple[list[InputFile], list[SourceError]]:
    """Python files and Jupyter notebooks under `paths` (files given by name are taken
    whatever their suffix), minus excluded ones, each once, in a stable order. `on_found()`
    is called for each file found (a progress bar counts them)."""
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
            if resolved not in found:
                found[resolved] = InputFile(path, relative)
                if on_found is not None:
                    on_found()
    return sorted(found.values(), key=lambda f: str(f.path)), errors


def _walk_python_files(root: Path, errors: list[SourceError]):
    def on_error(exc: OSError):
        errors.append(SourceError(exc.filename or str(root), f"cannot list: {exc.strerror}"))

    # followlinks=False: a symlinked folder can loop or leave the tree. Hidden folders are
    # skipped, Jupyter's .ipynb_checkpoints among them.
    for folder, dirs, files in os.walk(root, onerror=on_error):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", NOTEBOOK_SUFFIX)):
                yield Path(folder) / name


def is_notebook(path: str | Path) -> bool:
    return str(path).endswith(NOTEBOOK_SUFFIX)
