"""Configuration: [tool.np2jax] in the nearest pyproject.toml, overridden by CLI flags."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, fields, replace
from pathlib import Path

from np2jax.catalog import tomllib


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
    known = {f.name for f in fields(Config)}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"{pyproject}: unknown key(s) in [tool.np2jax]: {', '.join(unknown)}")
    values = {}
    for key, value in table.items():
        if key in ("x64", "jit", "cache"):
            if not isinstance(value, bool):
                raise ConfigError(f"{pyproject}: [tool.np2jax] {key} must be true or false")
            values[key] = value
        else:
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise ConfigError(f"{pyproject}: [tool.np2jax] {key} must be a list of strings")
            values[key] = tuple(value)
    return Config(**values)
