"""Parse: source text to a libcst module, or one clear error naming the file and line."""

from __future__ import annotations

import libcst as cst

from np2jax.files import SourceError


def parse(text: str, path: str) -> cst.Module:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        message = str(exc.message).strip().splitlines()[0] if exc.message else "syntax error"
        raise SourceError(path, f"syntax error at column {exc.raw_column + 1}: {message}",
                          exc.raw_line) from None
    except RecursionError:
        raise SourceError(path, "expression nested too deeply to parse") from None
