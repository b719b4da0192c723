"""Configuration: [tool.np2jax] in the nearest pyproject.toml, overridden by CLI flags."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, fields, replace
from pathlib import Path

from np2jax.catalog import tomllib


# Config.interface: what the converted functions return to callers outside the tree
INTERFACES = ("jax", "numpy")


class ConfigError(Exception):
    """The configuration is invalid; the message names the file and the key."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()  # codes or prefixes; empty selects every rule
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()  # glob patterns matched against paths and file names
    # NumPy's 64-bit dtypes: converted modules enable jax_enable_x64. False (--x32): JAX's
    # 32-bit defaults, and NJ401 reports every place where that may change a result.
    x64: bool = True
    jit: bool = False  # compile the functions that can be compiled (the NJ5xx rules)
    cache: bool = True  # reuse results stored by earlier runs (np2jax.cache)
    # functions kept on NumPy as written: `PATH::QUALNAME` or `PATH::QUALNAME=REASON`
    # (PATH a posix suffix of the file's path, QUALNAME `func` or `Class.method`);
    # `keep-numpy` in pyproject.toml, --keep-numpy on the command line (keep_spec)
    keep_numpy: tuple[str, ...] = ()
    # what the converted tree's public functions return to callers outside it: "jax" (its
    # JAX arrays, the default) or "numpy" (NumPy's results: writable NumPy arrays, NumPy
    # scalars for 0-d results; NJ105); `interface` in pyproject.toml, --interface
    interface: str = "jax"

    def enabled(self, code: str) -> bool:
        selected = not self.select or any(code.startswith(p) for p in self.select)
        return selected and not any(code.startswith(p) for p in self.ignore)

    def excluded(self, path: Path) -> bool:
        text = path.as_posix()
        return any(fnmatch.fnmatch(text, pat) or fnmatch.fnmatch(path.name, pat)
                   or any(fnmatch.fnmatch(part, pat) for part in path.parts)
                   for pat in self.exclude)

    def with_overrides(self, **overrides) -> "Config":
        """Flags given on the command line win over the file; None means 'not given'."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def kept_in(self, path: str) -> tuple[tuple[str, str, str], ...]:
        """The keep-numpy entries naming a function of the file at `path`: (entry,
        qualified name, reason) each."""
        found = []
        for entry in self.keep_numpy:
            file, qualname, reason = keep_spec(entry)
            if path_matches(path, file):
                found.append((entry, qualname, reason))
        return tuple(found)


def keep_spec(entry: str) -> tuple[str, str, str]:
    """`PATH::QUALNAME[=REASON]` -> (PATH, QUALNAME, REASON, "" when none); ValueError when
    the entry is not of that form."""
    file, sep, rest = entry.partition("::")
    qualname, _, reason = rest.partition("=")
    qualname = qualname.strip()
    parts = qualname.split(".")
    if not sep or not file.strip() or not qualname or not all(p.isidentifier() for p in parts):
        raise ValueError(f"keep-numpy entry {entry!r} is not PATH::QUALNAME or "
                         "PATH::QUALNAME=REASON (e.g. pkg/mod.py::Class.method)")
    return file.strip(), qualname, reason.strip()


def path_matches(path: str, suffix: str) -> bool:
    """Whether `suffix` (posix, `mod.py` or `pkg/mod.py`) is the end of `path`, part by part
    (a part may be a glob: `*::f` names `f` of every file)."""
    parts = [p for p in Path(path).as_posix().split("/") if p not in ("", ".")]
    wanted = [p for p in suffix.replace("\\", "/").split("/") if p not in ("", ".")]
    return bool(wanted) and len(parts) >= len(wanted) and all(
        fnmatch.fnmatchcase(part, pattern) for part, pattern in zip(parts[-len(wanted):], wanted))


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` that has a [tool.np2jax] table."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else start.parents:
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and "np2jax" in _read_toml(candidate).get("tool", {}):
            return candidate
    return None


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None


def load_config(start: Path) -> Config:
    pyproject = find_pyproject(start)
    if pyproject is None:
        return Config()
    table = _read_toml(pyproject)["tool"]["np2jax"]
    # the file's keys are the fields' names in kebab-case (`keep-numpy`), as ruff spells its own
    known = {f.name.replace("_", "-"): f.name for f in fields(Config)}
    unknown = sorted(set(table) - set(known))
    if unknown:
        hints = [f"{k} (did you mean {k.replace('_', '-')}?)" if k.replace("_", "-") in known
                 else k for k in unknown]
        raise ConfigError(f"{pyproject}: unknown key(s) in [tool.np2jax]: {', '.join(hints)}")
    values = {}
    for name, value in table.items():
        key = known[name]
        if key in ("x64", "jit", "cache"):
            if not isinstance(value, bool):
                raise ConfigError(f"{pyproject}: [tool.np2jax] {name} must be true or false")
            values[key] = value
        elif key == "interface":
            if value not in INTERFACES:
                raise ConfigError(f"{pyproject}: [tool.np2jax] interface must be one of "
                                  f"{', '.join(repr(i) for i in INTERFACES)}")
            values[key] = value
        else:
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise ConfigError(f"{pyproject}: [tool.np2jax] {name} must be a list of strings")
            values[key] = tuple(value)
            if key == "keep_numpy":
                for entry in value:
                    try:
                        keep_spec(entry)
                    except ValueError as exc:
                        raise ConfigError(f"{pyproject}: [tool.np2jax] {exc}") from None
    return Config(**values)
